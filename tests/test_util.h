// Helpers shared by the test programs: the run's random seed and uniform random fills. (Running this program again
// in a child process: tests/child_process.h; skipping without a GPU: tests/gpu_test.h.)
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace lazyfuse_test {

/// The seed of this run's random inputs: LAZYFUSE_TEST_SEED when set (to replay a failure), else a random one,
/// chosen once per process. Tests print it with seed_note() in their failure messages.
inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    if (const char* v = std::getenv("LAZYFUSE_TEST_SEED"); v && *v) return std::uint64_t(std::strtoull(v, nullptr, 10));
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ std::uint64_t(rd());
  }();
  return s;
}

/// "seed N (replay: LAZYFUSE_TEST_SEED=N)", for failure messages.
inline std::string seed_note() {
  return "seed " + std::to_string(seed()) + " (replay: LAZYFUSE_TEST_SEED=" + std::to_string(seed()) + ")";
}

/// `n` values drawn uniformly from [lo, hi) (floating point) or [lo, hi] (integers).
template <class T> std::vector<T> uniform_values(std::mt19937_64& rng, std::size_t n, T lo, T hi) {
  using Distribution = std::conditional_t<std::is_floating_point_v<T>, std::uniform_real_distribution<T>,
                                          std::uniform_int_distribution<T>>;
  Distribution d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

} // namespace lazyfuse_test
