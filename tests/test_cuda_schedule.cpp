// Launch shapes on the GPU (codegen::launch_shape with the device's capabilities): the edges of the row cache, where
// the kernel's static shared memory and the row cache together reach the per-block limit, and split launches, each
// checked against a host reference. Every test skips without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1.
#include <lazyfuse/lazyfuse.hpp>

#include "graph/Node.h"
#include "tests/gpu_test.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

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

namespace {

// Checks every element of `got` (any real dtype) against want(coordinates), exactly: the kernels compute the same
// IEEE operations as the host.
void expect_elements(const Array& got, const std::function<double(const std::vector<std::int64_t>&)>& want,
                     const std::string& what) {
  const auto values = got.astype(DType::Float64).get<double>();
  const Shape& shape = got.shape();
  std::vector<std::int64_t> c(shape.size(), 0);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double w = want(c);
    if (!(values[i] == w) && ++wrong <= 3)
      ADD_FAILURE() << what << ": element " << i << " is " << values[i] << ", want " << w;
    for (std::size_t k = c.size(); k-- > 0;) {
      if (++c[k] < shape[k]) break;
      c[k] = 0;
    }
  }
  EXPECT_EQ(wrong, 0u) << what;
}

// A rows x cols matrix of small integers (exact in every type) from `seed`, as float64 on the host.
std::vector<double> small_integers(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<int> d(-60, 60);
  std::vector<double> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = d(g);
  return v;
}

} // namespace

// Elementwise kernels with a transposed operand stage it through tiles of shared memory (codegen/TransposeTiles.h):
// edges of partial tiles, shapes too narrow for tiles (the untiled path), square planes (pairs of tiles), wide tiles
// (output rows off 32-byte sectors: 1001, 255, 301, 70 int8 and 16-bit elements ...), x + x.T
// (both tiles of a pair from one buffer), 3-d permutes, every width of staged element, staged loads under a
// predicate (a join) and sliced transposed views. Fresh values, exact comparison.
TEST(CudaSchedule, TransposedOperandsThroughTilesAreExact) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  using C = std::vector<std::int64_t>;
  std::uint64_t seed = 100;
  for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 48},
                                                                              {1000, 1001},
                                                                              {33, 17},
                                                                              {15, 100},
                                                                              {100, 15},
                                                                              {4096, 31},
                                                                              {31, 4096},
                                                                              {97, 97},
                                                                              {1, 500},
                                                                              {500, 1},
                                                                              {300, 1001},
                                                                              {2000, 255}}) {
    const auto ha = random_values(std::size_t(rows * cols), ++seed),
               hb = random_values(std::size_t(rows * cols), ++seed);
    auto a = asarray(ha, {rows, cols}), b = asarray(hb, {cols, rows});
    expect_elements(
        a + b.T() * 2.0f,
        [&](const C& c) {
          return double(ha[std::size_t(c[0] * cols + c[1])] + hb[std::size_t(c[1] * rows + c[0])] * 2.0f);
        },
        "a + b.T * 2 of " + std::to_string(rows) + " x " + std::to_string(cols));
  }
  for (std::int64_t side : {257, 1024}) {
    const auto hx = random_values(std::size_t(side * side), ++seed);
    auto x = asarray(hx, {side, side});
    expect_elements(
        x + x.T(),
        [&](const C& c) { return double(hx[std::size_t(c[0] * side + c[1])] + hx[std::size_t(c[1] * side + c[0])]); },
        "x + x.T of side " + std::to_string(side));
  }
  for (Shape shape : {Shape{5, 67, 45}, Shape{3, 40, 33}, Shape{2, 16, 300}, Shape{255, 7, 301}}) {
    const auto hx = small_integers(shape[0] * shape[1] * shape[2], ++seed);
    auto x = asarray(hx, shape);
    auto at = [&](std::int64_t i, std::int64_t j, std::int64_t k) {
      return hx[std::size_t((i * shape[1] + j) * shape[2] + k)];
    };
    expect_elements(
        ascontiguousarray(x.transpose({0, 2, 1})), [&](const C& c) { return at(c[0], c[2], c[1]); },
        "permute (0, 2, 1)");
    expect_elements(
        ascontiguousarray(x.transpose({2, 1, 0})), [&](const C& c) { return at(c[2], c[1], c[0]); },
        "permute (2, 1, 0)");
    expect_elements(
        ascontiguousarray(x.transpose({1, 0, 2})), [&](const C& c) { return at(c[1], c[0], c[2]); },
        "permute (1, 0, 2)");
    expect_elements(
        ascontiguousarray(x.transpose({1, 2, 0})), [&](const C& c) { return at(c[2], c[0], c[1]); },
        "permute (1, 2, 0)");
  }
  {
    // Every width of staged element: 1, 2, 4, 8 and 16 bytes.
    const std::int64_t rows = 70, cols = 45;
    const auto hm = small_integers(rows * cols, ++seed);
    auto m = asarray(hm, {rows, cols});
    auto transposed = [&](const C& c) { return hm[std::size_t(c[1] * cols + c[0])]; };
    for (DType t : {DType::Int8, DType::Float16, DType::BFloat16, DType::Int32, DType::Float64})
      expect_elements(ascontiguousarray(m.astype(t).eval().T()), transposed,
                      "copy of m.T in " + std::string(dtype_name(t)));
    auto z = ascontiguousarray(m.astype(DType::Complex128).eval().T()) * 1.0;
    expect_elements(real(z), transposed, "copy of m.T in complex128");
  }
  {
    // A join of transposed views: each staged load reads where its part's predicate holds.
    const auto hp = random_values(40 * 50, ++seed), hq = random_values(30 * 50, ++seed);
    auto p = asarray(hp, {40, 50}), q = asarray(hq, {30, 50});
    expect_elements(
        concatenate({p.T(), q.T() * 3.0f}, 1) + 1.0f,
        [&](const C& c) {
          return c[1] < 40 ? double(hp[std::size_t(c[1] * 50 + c[0])] + 1.0f)
                           : double(hq[std::size_t((c[1] - 40) * 50 + c[0])] * 3.0f + 1.0f);
        },
        "concatenate of transposed views");
  }
  {
    // A sliced transposed view: an offset, and a stride of three rows along the last axis.
    const std::int64_t rows = 90, cols = 200;
    const auto hb = random_values(std::size_t(rows * cols), ++seed);
    auto b = asarray(hb, {rows, cols});
    auto view = b.T()(slice(3, none), slice(2, none, 3)); // (197, 30)
    expect_elements(
        view * 0.5f, [&](const C& c) { return double(hb[std::size_t((2 + 3 * c[1]) * cols + 3 + c[0])] * 0.5f); },
        "b.T[3:, 2::3] * 0.5");
  }
}

// Unravelling divides the output's index by dimensions through constants the host computes (codegen/KernelAbi.h:
// FastDivisor32, FastDivisor64). Broadcast row and column operands read at the coordinates, for dimensions whose
// constants differ in kind (1, powers of two and their neighbours, primes, a large prime), with 32-bit indices and,
// past 2^31 elements, 64-bit ones.
TEST(CudaSchedule, BroadcastOperandsUnravelRightAtBothIndexWidths) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  using C = std::vector<std::int64_t>;
  std::uint64_t seed = 300;
  for (Shape shape :
       {Shape{7, 641, 3}, Shape{3, 1, 6700417}, Shape{65, 64, 63}, Shape{2, 3, 5, 7}, Shape{1023, 1025}}) {
    const auto hx = small_integers(graph::shape_size(shape), ++seed);
    const auto hrow = small_integers(shape.back(), ++seed), hcol = small_integers(shape[0], ++seed);
    Shape column_shape(shape.size(), 1);
    column_shape[0] = shape[0];
    auto x = asarray(hx, shape), row = asarray(hrow, {shape.back()}), col = asarray(hcol, column_shape);
    expect_elements(
        x * col + row,
        [&](const C& c) {
          std::int64_t linear = 0;
          for (std::size_t k = 0; k < c.size(); ++k) linear = linear * shape[k] + c[k];
          return hx[std::size_t(linear)] * hcol[std::size_t(c[0])] + hrow[std::size_t(c.back())];
        },
        "x * column + row of " + graph::format_shape(shape));
  }
  // 32769 x 65537 > 2^31 elements of int8: the kernel indexes in 64 bits and divides by 65537 through __umul64hi.
  const std::int64_t rows = 32769, cols = 65537;
  auto row = arange(cols).astype(DType::Int8).eval(), col = arange(rows).astype(DType::Int8).reshape({rows, 1}).eval();
  const auto got = (col + row).get<std::int8_t>();
  ASSERT_EQ(std::int64_t(got.size()), rows * cols);
  std::int64_t wrong = 0, first_wrong = -1;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const auto want = std::int8_t(std::int8_t(i) + std::int8_t(j)); // int8 arithmetic wraps, as NumPy's does
      if (got[std::size_t(i * cols + j)] != want && wrong++ == 0) first_wrong = i * cols + j;
    }
  EXPECT_EQ(wrong, 0) << "column + row of " << rows << " x " << cols << " int8: first wrong element " << first_wrong;
}
