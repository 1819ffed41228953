// The CPU backend's reduction order (docs/design.md, "The CPU backend's order"): one fixed tree whatever
// LAZYFUSE_CPU_THREADS is and however a reduction is split over threads (the full reduction split in blocks, row and
// column reductions parallel over their outer elements), and pairwise accuracy for float32 sums.
//
// The tests run on the CPU backend on every machine (LAZYFUSE_BACKEND=cpu is set before anything runs).
#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::Array;

const bool kOnCpu = (lf::config::set("LAZYFUSE_CPU_THREADS", "0"), lf::config::set("LAZYFUSE_BACKEND", "cpu"), true);

// Awkward sizes: empty, one element, less than a column, primes, blocks and a bit, 2^20 + 3.
const std::vector<std::int64_t> kSizes = {0, 1, 2, 255, 257, 16411, 65521, 1000003, (std::int64_t(1) << 20) + 3};

template <class T> std::vector<std::uint64_t> bits_of(const Array& a) {
  std::vector<std::uint64_t> out;
  for (T v : a.get<T>().to_vector()) {
    if constexpr (sizeof(T) == 4)
      out.push_back(std::bit_cast<std::uint32_t>(v));
    else
      out.push_back(std::bit_cast<std::uint64_t>(v));
  }
  return out;
}

// The bits of `compute()` with 1, 2 and 3 threads, which must all be equal.
void expect_same_bits_for_thread_counts(const std::function<std::vector<std::uint64_t>()>& compute,
                                        const std::string& what) {
  lf::config::set("LAZYFUSE_CPU_THREADS", "1");
  const auto one = compute();
  for (const char* threads : {"2", "3"}) {
    lf::config::set("LAZYFUSE_CPU_THREADS", threads);
    EXPECT_EQ(compute(), one) << what << " with " << threads << " threads; " << lazyfuse_test::seed_note();
  }
  lf::config::reset("LAZYFUSE_CPU_THREADS");
}

TEST(CpuReductionOrder, FullReductionsHaveTheSameBitsWithAnyThreadCount) {
  ASSERT_TRUE(kOnCpu);
  ASSERT_EQ(lf::backend(), lf::Backend::Cpu);
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (std::int64_t n : kSizes) {
    const auto v = lazyfuse_test::uniform_values<float>(rng, std::size_t(n), -1.0f, 1.0f);
    Array x = lf::asarray(v, {n});
    x.eval();
    const std::string what = "n = " + std::to_string(n);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::sum(x)); }, "sum, " + what);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::prod(x * 1e-3f + 1.0f)); }, "prod, " + what);
    if (n == 0) continue; // mean and var of nothing are NaN, min and argmax have no answer
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::mean(x)); }, "mean, " + what);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::var(x)); }, "var, " + what);
    expect_same_bits_for_thread_counts([&] { return bits_of<double>(lf::sum(x.astype(lf::DType::Float64))); },
                                       "float64 sum, " + what);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::min(x)); }, "min, " + what);
    expect_same_bits_for_thread_counts(
        [&] {
          auto r = lf::argmax(x).get<std::int64_t>().to_vector();
          return std::vector<std::uint64_t>(r.begin(), r.end());
        },
        "argmax, " + what);
  }
}

TEST(CpuReductionOrder, RowAndColumnReductionsHaveTheSameBitsWithAnyThreadCount) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  // Few long rows (each row's loop split in blocks), many short rows (rows over threads), and columns.
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{3, 100003}, {5, 1}, {4099, 67}, {1000, 1000}}) {
    const auto v = lazyfuse_test::uniform_values<float>(rng, std::size_t(rows * cols), -1.0f, 1.0f);
    Array m = lf::asarray(v, {rows, cols});
    m.eval();
    const std::string what = std::to_string(rows) + "x" + std::to_string(cols);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::sum(m, {1})); }, "row sums of " + what);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::sum(m, {0})); }, "column sums of " + what);
    expect_same_bits_for_thread_counts(
        [&] {
          Array e = lf::exp(m - lf::max(m, {1}, true));
          return bits_of<float>(e / lf::sum(e, {1}, true));
        },
        "row softmax of " + what);
    expect_same_bits_for_thread_counts([&] { return bits_of<float>(lf::var(m, {0})); }, "column var of " + what);
  }
}

// Row sums equal the full sums of each row alone: the order depends on the reduced elements only.
TEST(CpuReductionOrder, ARowSumsLikeTheSameValuesAlone) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t rows = 3, cols = 200003;
  const auto v = lazyfuse_test::uniform_values<float>(rng, std::size_t(rows * cols), -1.0f, 1.0f);
  Array m = lf::asarray(v, {rows, cols});
  const auto row_sums = bits_of<float>(lf::sum(m, {1}));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<float> row(v.begin() + r * cols, v.begin() + (r + 1) * cols);
    EXPECT_EQ(bits_of<float>(lf::sum(lf::asarray(row, {cols}))).at(0), row_sums.at(std::size_t(r))) << "row " << r;
  }
}

// Pairwise summation: the relative error of a float32 sum of positive values stays near 1e-7 * log2 n, where a
// sequential float32 loop drifts by orders of magnitude more at these sizes.
TEST(CpuReductionAccuracy, Float32SumsErrGrowsWithLogN) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (std::int64_t n : kSizes) {
    if (n < 2) continue;
    const auto v = lazyfuse_test::uniform_values<float>(rng, std::size_t(n), 0.0f, 1.0f);
    double exact = 0;
    for (float x : v) exact += double(x);
    for (const char* threads : {"1", "3"}) {
      lf::config::set("LAZYFUSE_CPU_THREADS", threads);
      const double got = double(lf::sum(lf::asarray(v, {n})).item<float>());
      const double bound = 1e-7 * std::log2(double(n));
      EXPECT_LE(std::abs(got - exact) / exact, bound) << "n = " << n << ", " << threads << " threads: " << got << " vs "
                                                      << exact << "; " << lazyfuse_test::seed_note();
    }
    lf::config::reset("LAZYFUSE_CPU_THREADS");
  }
}

} // namespace
