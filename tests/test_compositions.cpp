// Features that were built apart, used together as users combine them: gathers inside a scan's fused input and
// before a sort, a sort's permutation used as an index array, a scan's result indexed, on the backend in use,
// against host references (exact: every value here is a small integer or a half, so float32 sums are exact).
#include <lazyfuse/lazyfuse.hpp>

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace lazyfuse;

namespace {

std::vector<float> values_of(const Array& a) {
  const HostArray<float> h = a.get<float>();
  return std::vector<float>(h.data(), h.data() + h.size());
}

std::vector<std::int64_t> random_indices(std::size_t m, std::int64_t n, std::mt19937_64& rng) {
  std::vector<std::int64_t> idx(m);
  for (auto& i : idx) i = std::int64_t(rng() % std::uint64_t(2 * n)) - n; // negative ones count from the end
  return idx;
}

std::vector<float> random_halves(std::size_t n, std::mt19937_64& rng) {
  std::vector<float> v(n);
  for (auto& x : v) x = 0.5f * float(std::int64_t(rng() % 64) - 32);
  return v;
}

TEST(Compositions, ScanOfAGatherFusesTheGatherIntoTheScan) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t n = 777;
  const std::vector<float> xs = random_halves(std::size_t(n), rng);
  const std::vector<std::int64_t> idx = random_indices(5000, n, rng);
  Array x = asarray(xs);
  Array i = asarray(idx);
  x.eval();
  i.eval();
  const auto before = kernel_cache_stats().kernels_launched;
  const std::vector<float> got = values_of(cumsum(x(i) * 2.0f));
  EXPECT_EQ(kernel_cache_stats().kernels_launched - before, 1u) << "the gather and the product are the scan's input";
  ASSERT_EQ(got.size(), idx.size());
  float running = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    running += 2.0f * xs[std::size_t(idx[k] < 0 ? idx[k] + n : idx[k])];
    ASSERT_EQ(got[k], running) << "element " << k << ", " << lazyfuse_test::seed_note();
  }
}

TEST(Compositions, AnIndexOutOfRangeInsideAScanIsAnIndexError) {
  Array x = arange(10).astype(DType::Float32);
  Array y = cumsum(take(x, arange(12)), 0);
  try {
    (void)y.get<float>();
    ADD_FAILURE() << "no IndexError";
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "index 10 is out of bounds for axis 0 with size 10");
  }
  EXPECT_FALSE(y.is_materialized());
}

TEST(Compositions, SortOfAGatherAndGatherOfAnArgsort) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t rows = 40, cols = 33;
  const std::vector<float> xs = random_halves(std::size_t(rows * cols), rng);
  Array x = asarray(xs, {rows, cols});
  const std::vector<std::int64_t> pick = random_indices(25, rows, rng);
  // sort(x[pick] + 1, axis=1): the gathered rows sorted.
  const std::vector<float> sorted = values_of(sort(x(asarray(pick)) + 1.0f, 1));
  ASSERT_EQ(sorted.size(), pick.size() * std::size_t(cols));
  for (std::size_t r = 0; r < pick.size(); ++r) {
    const std::int64_t row = pick[r] < 0 ? pick[r] + rows : pick[r];
    std::vector<float> want(xs.begin() + row * cols, xs.begin() + (row + 1) * cols);
    for (float& w : want) w += 1.0f;
    std::sort(want.begin(), want.end());
    for (std::int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(sorted[r * std::size_t(cols) + std::size_t(c)], want[std::size_t(c)]) << "row " << r << " col " << c;
  }
  // take_along_axis(x, argsort(x, 1), 1) is sort(x, 1), as NumPy documents.
  EXPECT_EQ(values_of(take_along_axis(x, argsort(x, 1), 1)), values_of(sort(x, 1)));
  // x.ravel()[argsort(x, None)]: the flattened sort.
  std::vector<float> flat = xs;
  std::stable_sort(flat.begin(), flat.end());
  EXPECT_EQ(values_of(take(x, argsort(x, std::nullopt))), flat);
}

TEST(Compositions, AScanIndexedAndMaskedAndAReductionOfIt) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t n = 3000;
  const std::vector<float> xs = random_halves(std::size_t(n), rng);
  Array c = cumsum(asarray(xs));
  std::vector<float> want(xs.size());
  std::partial_sum(xs.begin(), xs.end(), want.begin());
  // Every third running total, then the ones above zero, then their sum.
  Array every_third = c(slice(0, none, 3));
  Array positive = every_third(every_third > 0.0f);
  std::vector<float> want_positive;
  for (std::size_t k = 0; k < want.size(); k += 3)
    if (want[k] > 0) want_positive.push_back(want[k]);
  EXPECT_EQ(values_of(positive), want_positive);
  const double want_sum = std::accumulate(want_positive.begin(), want_positive.end(), 0.0);
  EXPECT_NEAR(sum(positive).item<float>(), want_sum, 1e-6 * std::max(1.0, std::abs(want_sum)));
}

} // namespace
