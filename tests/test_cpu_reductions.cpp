// The CPU backend's reduction order (docs/design.md, "The CPU backend's order"): one fixed tree whatever
// LAZYFUSE_CPU_THREADS is and however a reduction is split over threads (the full reduction split in blocks, row and
// column reductions parallel over their outer elements), and pairwise accuracy for float32 sums.
//
// The tests run on the CPU backend on every machine (LAZYFUSE_BACKEND=cpu is set before anything runs).
#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
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

// The documented order, written out here on its own (docs/design.md, "The CPU backend's order"): columns of 256 each
// folded by a halving tree (element e takes e + half, halves rounded up), the column partials carried into a binary
// counter, whose levels are combined from the lowest, starting from 0. A float32 sum is that order's bits whether the
// interpreter or compiled code (LLVM, whose column folds are built for the CPU's vector unit) runs it, with 1 or 3
// threads; fresh random values of both signs, so a different order would round differently.
float documented_order_sum(const std::vector<float>& v) {
  constexpr std::size_t kColumn = 256;
  float levels[64];
  bool used[64] = {};
  for (std::size_t c = 0; c < v.size(); c += kColumn) {
    std::vector<float> s(v.begin() + std::ptrdiff_t(c), v.begin() + std::ptrdiff_t(std::min(v.size(), c + kColumn)));
    for (std::size_t m = s.size(); m > 1;) {
      const std::size_t half = (m + 1) / 2;
      for (std::size_t e = 0; e + half < m; ++e) s[e] = s[e] + s[e + half];
      m = half;
    }
    float partial = s[0];
    int level = 0;
    for (; used[level]; ++level) {
      partial = levels[level] + partial;
      used[level] = false;
    }
    levels[level] = partial;
    used[level] = true;
  }
  float result = 0.0f;
  for (int level = 0; level < 64; ++level)
    if (used[level]) result = levels[level] + result;
  return result;
}

TEST(CpuReductionOrder, Float32SumsHaveTheDocumentedOrdersBits) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (std::int64_t n : kSizes) {
    const auto v = lazyfuse_test::uniform_values<float>(rng, std::size_t(n), -1.0f, 1.0f);
    const std::uint32_t expected = std::bit_cast<std::uint32_t>(documented_order_sum(v));
    Array x = lf::asarray(v, {n});
    x.eval();
    for (const char* codegen : {"interpreter", "auto"}) {
      lf::config::set("LAZYFUSE_CPU_CODEGEN", codegen);
      for (const char* threads : {"1", "3"}) {
        lf::config::set("LAZYFUSE_CPU_THREADS", threads);
        EXPECT_EQ(bits_of<float>(lf::sum(x)).at(0), expected)
            << "n = " << n << ", " << codegen << ", " << threads << " threads; " << lazyfuse_test::seed_note();
        // A row of a matrix, and a column of its transpose, fold in the same order.
        if (n > 0) {
          Array rows = lf::reshape(lf::concatenate({x, x}), {2, n});
          EXPECT_EQ(bits_of<float>(lf::sum(rows, {1})).at(1), expected) << "row sums, n = " << n << ", " << codegen;
          EXPECT_EQ(bits_of<float>(lf::sum(lf::transpose(rows), {0})).at(1), expected)
              << "column sums, n = " << n << ", " << codegen;
        }
      }
    }
    lf::config::reset("LAZYFUSE_CPU_THREADS");
    lf::config::reset("LAZYFUSE_CPU_CODEGEN");
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
