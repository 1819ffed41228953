// Helpers shared by the test programs: the run's random seed, uniform random fills, and the skip of tests whose
// NumPy oracle cannot answer. (Running this program again
// in a child process: tests/child_process.h; skipping without a GPU: tests/gpu_test.h.)
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

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

/// Why a NumPy oracle cannot run here: "" when LAZYFUSE_TEST_PYTHON names the interpreter (oracle_python()).
inline std::string python_missing() {
  const char* python = std::getenv("LAZYFUSE_TEST_PYTHON");
  return python && *python
             ? ""
             : "LAZYFUSE_TEST_PYTHON is not set (the Python interpreter with NumPy 2 that answers for NumPy)";
}
inline const char* oracle_python() {
  return std::getenv("LAZYFUSE_TEST_PYTHON");
}

/// An empty scratch folder "<name>_oracle_<pid>" in the working directory, for one oracle run's files.
inline std::string fresh_oracle_dir(const std::string& name) {
  const std::string dir = name + "_oracle_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// Writes `script` to dir/oracle.py and runs it with the Python interpreter `python` and the arguments `args` (each
/// quoted). Returns "" when it exited 0 and printed "ok" (the scripts' last word), else why not: the command, its
/// status and the first 3,000 characters of what it printed.
inline std::string run_oracle_script(const char* python, const std::string& dir, const char* script,
                                     const std::vector<std::string>& args) {
  std::ofstream(dir + "/oracle.py") << script;
  std::string cmd = std::string("'") + python + "' '" + dir + "/oracle.py'";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  std::string all;
  char buf[4096];
  for (std::size_t n; pipe && (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) all.append(buf, n);
  const int status = pipe ? pclose(pipe) : -1;
  if (status == 0 && all.find("ok") != std::string::npos) return "";
  return cmd + " failed (status " + std::to_string(status) + "): " + all.substr(0, 3000);
}

} // namespace lazyfuse_test

/// Skips the test when its NumPy oracle cannot answer (`why` says why; empty: it can), and fails it instead under
/// CI=true, where the oracle must be there (.ci/run installs it).
#define LAZYFUSE_NEED_NUMPY(why)                                                                                       \
  do {                                                                                                                 \
    const std::string lf_why = (why);                                                                                  \
    if (!lf_why.empty()) {                                                                                             \
      const char* lf_ci = std::getenv("CI");                                                                           \
      if (lf_ci && std::string(lf_ci) == "true") FAIL() << "CI=true and NumPy cannot answer: " << lf_why;              \
      GTEST_SKIP() << lf_why;                                                                                          \
    }                                                                                                                  \
  } while (0)
