// Launch shapes on the GPU (codegen::launch_shape with the device's capabilities): the edges of the row cache, where
// the kernel's static shared memory and the row cache together reach the per-block limit, and split launches, each
// checked against a host reference. Every test skips without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1.
#include <lazyfuse/lazyfuse.hpp>

#include "tests/gpu_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace lazyfuse;

namespace {

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(-3, 3);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

} // namespace

// Rows whose row cache needs 48 KiB or just under it: with the kernel's static shared memory that is more than a
// block gets without opting in, so the launch must give no cache (the kernel then reads its input again) rather
// than fail. Softmax reads each row three times, so it has a row cache.
TEST(CudaSchedule, SoftmaxRowsAtTheSharedMemoryLimitLaunchAndAreRight) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  for (std::int64_t cols : {11000, 12000, 12160, 12280, 12288, 12289, 16384}) {
    const std::int64_t rows = 300;
    auto h = random_values(std::size_t(rows * cols), std::uint64_t(cols));
    auto m = asarray(h, {rows, cols});
    auto e = exp(m - max(m, 1, true));
    auto got = (e / sum(e, 1, true)).get<float>();
    double worst = 0;
    for (std::int64_t r = 0; r < rows; r += 37) {
      double mx = -INFINITY, total = 0;
      for (std::int64_t c = 0; c < cols; ++c) mx = std::max(mx, double(h[std::size_t(r * cols + c)]));
      for (std::int64_t c = 0; c < cols; ++c) total += std::exp(double(h[std::size_t(r * cols + c)]) - mx);
      for (std::int64_t c = 0; c < cols; ++c) {
        const double want = std::exp(double(h[std::size_t(r * cols + c)]) - mx) / total;
        worst = std::max(worst, std::abs(got[std::size_t(r * cols + c)] - want) / want);
      }
    }
    EXPECT_LT(worst, 1e-4) << cols << " columns";
  }
}

// Split launches (one long row, few rows, tall columns): their scratch, tickets and split count come from
// launch_shape and reach the kernel through the ABI's last three parameters.
// Split kernels take their tickets from a zeroed buffer kept per stream and leave them zero (no memset per launch):
// many of them back to back, with group counts that grow the buffer, on two streams and on a stream made after
// another was destroyed, all give the sums of the host.
TEST(CudaSchedule, SplitTicketsStayZeroAcrossLaunchesAndStreams) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  // Sums over `axis` of a rows x cols matrix: axis 1 splits rows (Split, fewer than 256 of them), axis 0 splits
  // tiles of 256 columns (ColumnSplit: more than 1024 tiles grow the first buffer of 4 KB).
  auto check = [](std::int64_t rows, std::int64_t cols, int axis, std::uint64_t seed) {
    const auto h = random_values(std::size_t(rows * cols), seed);
    const auto got = sum(asarray(h, {rows, cols}).astype(DType::Float64), axis).get<double>();
    const std::int64_t outer = axis == 1 ? rows : cols, reduced = axis == 1 ? cols : rows;
    ASSERT_EQ(std::int64_t(got.size()), outer);
    for (std::int64_t o = 0; o < outer; ++o) {
      double want = 0;
      for (std::int64_t k = 0; k < reduced; ++k)
        want += double(h[std::size_t(axis == 1 ? o * cols + k : k * cols + o)]);
      ASSERT_NEAR(got[std::size_t(o)], want, 1e-9 * std::max(1.0, std::abs(want)) * std::sqrt(double(reduced)))
          << rows << " x " << cols << " axis " << axis << " at " << o;
    }
  };
  for (int round = 0; round < 3; ++round) {
    for (std::int64_t rows : {1, 3, 40, 255}) check(rows, 1 << 16, 1, std::uint64_t(rows + round));
    check(64, 300000, 0, std::uint64_t(round));
    {
      Stream s;
      StreamGuard on(s);
      check(64, 300000, 0, std::uint64_t(10 + round));
      for (std::int64_t rows : {255, 1, 40}) check(rows, 1 << 16, 1, std::uint64_t(7 * rows + round));
    }
  }
}

TEST(CudaSchedule, SplitReductionsAreRight) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  struct Case {
    std::int64_t rows, cols;
    int axis;
  };
  for (auto c : {Case{1, 1 << 22, 1}, Case{7, 300001, 1}, Case{100000, 40, 0}, Case{8192, 300, 0}}) {
    auto h = random_values(std::size_t(c.rows * c.cols), std::uint64_t(c.rows));
    auto m = asarray(h, {c.rows, c.cols});
    auto got = sum(m.astype(DType::Float64), c.axis).get<double>();
    const std::int64_t outer = c.axis == 1 ? c.rows : c.cols;
    ASSERT_EQ(std::int64_t(got.size()), outer);
    for (std::int64_t o = 0; o < outer; ++o) {
      double want = 0;
      const std::int64_t reduced = c.axis == 1 ? c.cols : c.rows;
      for (std::int64_t k = 0; k < reduced; ++k)
        want += double(h[std::size_t(c.axis == 1 ? o * c.cols + k : k * c.cols + o)]);
      EXPECT_NEAR(got[std::size_t(o)], want, 1e-9 * std::max(1.0, std::abs(want)) * std::sqrt(double(reduced)))
          << c.rows << " x " << c.cols << " axis " << c.axis << " at " << o;
    }
  }
}
