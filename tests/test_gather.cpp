// Gathers (graph/Gather.h): advanced indexing, take and take_along_axis against host references, their fusion
// (kernel counts), NumPy's placement rule, negative indices, and the IndexError of an index out of range.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "graph/Node.h"
#include "runtime/FixedPointSum.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace lazyfuse;

namespace {

std::uint64_t launched() {
  return kernel_cache_stats().kernels_launched;
}

// docs/semantics.md's float32 sum of at().add's values meeting at one element, written with the C library: each value
// v as the integer nearest v 2^(F - e) (ties to even), 2^e the smallest power of two above every |value| of the
// element, F = 62 - bit_width(the number of values of the whole at().add); those integers summed exactly; the sum
// times 2^(e - F) rounded once to float32. Zeros alone sum to -0.0 if every one is -0.0, else to +0.0. For finite
// values.
float fixed_point_sum(const std::vector<float>& values, std::int64_t total) {
  if (values.empty()) return -0.0f;
  int scale = std::numeric_limits<int>::min();
  for (const float v : values)
    if (v != 0) {
      int e = 0;
      std::frexp(v, &e);
      scale = std::max(scale, e);
    }
  if (scale == std::numeric_limits<int>::min())
    return std::all_of(values.begin(), values.end(), [](float v) { return std::signbit(v); }) ? -0.0f : 0.0f;
  const int fraction = 62 - std::bit_width(std::uint64_t(total));
  std::int64_t sum = 0;
  for (const float v : values) sum += std::llrint(std::ldexp(double(v), fraction - scale));
  static_assert(std::numeric_limits<long double>::digits >= 64, "an exact long double of an int64");
  return float(std::ldexp(static_cast<long double>(sum), scale - fraction));
}

std::vector<float> values_of(const Array& a) {
  const HostArray<float> h = a.get<float>();
  return std::vector<float>(h.data(), h.data() + h.size());
}

// A materialized float32 array 0, 1, ..., n-1 scaled by 0.5 (exact), of `shape`.
Array ramp(Shape shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::vector<float> v(std::size_t(n), 0.0f);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = 0.5f * float(k);
  return asarray(v, std::move(shape));
}

std::string error_of(const Array& a) {
  try {
    a.eval();
    (void)a.get<float>();
  } catch (const IndexError& e) {
    return e.what();
  }
  return "no IndexError";
}

TEST(Gather, FusesWithTheElementwiseWorkAroundIt) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t n = 1000, m = 3000;
  Array x = ramp({n});
  std::vector<std::int64_t> idx(m);
  for (auto& i : idx) i = std::int64_t(rng() % (2 * n)) - n; // negative ones count from the end
  Array i = asarray(idx);
  x.eval();
  i.eval();
  const auto before = launched();
  Array y = x(i) * 3.0f - 1.0f;
  const std::vector<float> got = values_of(y);
  EXPECT_EQ(launched() - before, 1u) << "gather, multiply and subtract are one kernel";
  ASSERT_EQ(got.size(), std::size_t(m));
  for (std::size_t k = 0; k < got.size(); ++k) {
    const std::int64_t j = idx[k] < 0 ? idx[k] + n : idx[k];
    ASSERT_EQ(got[k], 0.5f * float(j) * 3.0f - 1.0f) << "element " << k << ", " << lazyfuse_test::seed_note();
  }
}

TEST(Gather, ComputesALazyIndexArrayInsideTheKernel) {
  const std::int64_t n = 97, m = 500;
  Array x = ramp({n});
  x.eval();
  const auto before = launched();
  Array y = take(x, arange(m) * 3 % n) + 1.0f;
  const std::vector<float> got = values_of(y);
  EXPECT_EQ(launched() - before, 1u) << "the index array is computed in the gather's kernel";
  for (std::int64_t k = 0; k < m; ++k) ASSERT_EQ(got[std::size_t(k)], 0.5f * float(k * 3 % n) + 1.0f);
}

TEST(Gather, RowsOfAMatrixFuseWithTheirConsumer) {
  Array table = ramp({50, 8});
  Array rows = asarray<std::int64_t>({3, 49, 0, -1, 3});
  table.eval();
  rows.eval();
  const auto before = launched();
  Array y = table(rows) * 2.0f;
  const std::vector<float> got = values_of(y);
  EXPECT_EQ(launched() - before, 1u);
  ASSERT_EQ(y.shape(), (Shape{5, 8}));
  const std::int64_t r[] = {3, 49, 0, 49, 3};
  for (std::int64_t k = 0; k < 5; ++k)
    for (std::int64_t c = 0; c < 8; ++c) ASSERT_EQ(got[std::size_t(k * 8 + c)], 0.5f * float(r[k] * 8 + c) * 2.0f);
}

TEST(Gather, ReadsInsideAReduction) {
  Array x = ramp({64});
  Array i = asarray<std::int32_t>({1, 1, 5, 63, -64});
  EXPECT_EQ(sum(x(i)).item<float>(), 0.5f * float(1 + 1 + 5 + 63 + 0));
  // Rows of a matrix gathered, then summed along the rows: one reduction kernel reads the gathered rows.
  Array m = ramp({10, 6});
  Array r = sum(m(asarray<std::int64_t>({9, 2})), 1);
  const std::vector<float> got = values_of(r);
  float want9 = 0, want2 = 0;
  for (int c = 0; c < 6; ++c) {
    want9 += 0.5f * float(9 * 6 + c);
    want2 += 0.5f * float(2 * 6 + c);
  }
  EXPECT_EQ(got, (std::vector<float>{want9, want2}));
}

TEST(Gather, PlacesTheIndexShapeAsNumPyDoes) {
  // x[0, :, [0, 1]] on shape (3, 4, 5, 6): the scalar is advanced too, the two are separated: (2, 4, 6).
  Array x = ramp({3, 4, 5, 6});
  Array i = asarray<std::int64_t>({0, 1});
  Array sep = x(0, all_of, i);
  EXPECT_EQ(sep.shape(), (Shape{2, 4, 6}));
  // Adjacent advanced indices keep their place: x[:, [0, 1], 2] has shape (3, 2, 6).
  Array adj = x(all_of, i, 2);
  EXPECT_EQ(adj.shape(), (Shape{3, 2, 6}));
  const std::vector<float> s = values_of(sep), a = values_of(adj);
  for (std::int64_t k = 0; k < 2; ++k)
    for (std::int64_t b = 0; b < 4; ++b)
      for (std::int64_t d = 0; d < 6; ++d) // x[0, b, k, d]
        ASSERT_EQ(s[std::size_t((k * 4 + b) * 6 + d)], 0.5f * float(((0 * 4 + b) * 5 + k) * 6 + d));
  for (std::int64_t c = 0; c < 3; ++c)
    for (std::int64_t k = 0; k < 2; ++k)
      for (std::int64_t d = 0; d < 6; ++d) // x[c, k, 2, d]
        ASSERT_EQ(a[std::size_t((c * 2 + k) * 6 + d)], 0.5f * float(((c * 4 + k) * 5 + 2) * 6 + d));
  // Broadcast index arrays, a slice and a new axis: x[[[0], [2]], 1:3, [1, 4, 0]] -> (2, 3, 2, 6)... separated by
  // the slice, the broadcast shape (2, 3) goes first.
  Array rows = asarray<std::int64_t>({{0}, {2}});
  Array cols = asarray<std::int64_t>({1, 4, 0});
  Array z = x(rows, slice(1, 3), cols);
  EXPECT_EQ(z.shape(), (Shape{2, 3, 2, 6}));
  EXPECT_EQ(x(newaxis, rows, cols, ellipsis).shape(), (Shape{1, 2, 3, 5, 6}));
  EXPECT_EQ(x(ellipsis, cols).shape(), (Shape{3, 4, 5, 3}));
  // An ellipsis separates the arrays around it even when it stands for no axis, as a new axis does.
  Array y = ramp({2, 3, 4});
  Array zero = asarray<std::int64_t>({0}), one = asarray<std::int64_t>({1});
  EXPECT_EQ(y(all_of, zero, ellipsis, one).shape(), (Shape{1, 2}));
  EXPECT_EQ(y(all_of, zero, newaxis, one).shape(), (Shape{1, 2, 1}));
  EXPECT_EQ(y(all_of, asarray<std::int64_t>({{0}}), one, ellipsis).shape(), (Shape{2, 1, 1}));
}

TEST(Gather, TakeAndTakeAlongAxis) {
  Array x = ramp({4, 5});
  Array i = asarray<std::int64_t>({4, 0, -1});
  EXPECT_EQ(values_of(take(x, i)), (std::vector<float>{2.0f, 0.0f, 9.5f}));
  const std::vector<float> cols = values_of(take(x, i, 1));
  ASSERT_EQ(take(x, i, 1).shape(), (Shape{4, 3}));
  for (std::int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(cols[std::size_t(r * 3 + 0)], 0.5f * float(r * 5 + 4));
    EXPECT_EQ(cols[std::size_t(r * 3 + 1)], 0.5f * float(r * 5 + 0));
    EXPECT_EQ(cols[std::size_t(r * 3 + 2)], 0.5f * float(r * 5 + 4));
  }
  // take_along_axis with the argsort-like use: per row, its own column order; indices broadcast over rows.
  Array per_row = asarray<std::int64_t>({{1, 0}, {4, 4}, {-1, 2}, {0, 3}});
  const std::vector<float> along = values_of(take_along_axis(x, per_row, 1));
  const std::int64_t want_cols[4][2] = {{1, 0}, {4, 4}, {4, 2}, {0, 3}};
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t k = 0; k < 2; ++k)
      EXPECT_EQ(along[std::size_t(r * 2 + k)], 0.5f * float(r * 5 + want_cols[r][k]));
  Array shared = asarray<std::int64_t>({{2, 3}}); // (1, 2): the same columns for every row
  EXPECT_EQ(take_along_axis(x, shared, 1).shape(), (Shape{4, 2}));
  EXPECT_EQ(values_of(take_along_axis(x, shared, 1))[6], 0.5f * float(3 * 5 + 2));
  EXPECT_EQ(values_of(take_along_axis(x, asarray<std::int64_t>({19, 0}), std::nullopt)),
            (std::vector<float>{9.5f, 0.0f}));
  EXPECT_THROW(take_along_axis(x, i, 1), ValueError);
}

// NumPy's take_along_axis of arrays of any rank (row-major, broadcasting every axis but `axis`), for a reference.
std::vector<float> take_along_reference(const std::vector<float>& a, const Shape& a_shape,
                                        const std::vector<std::int64_t>& idx, const Shape& idx_shape, int axis,
                                        Shape& out_shape) {
  const std::size_t n = a_shape.size();
  out_shape = idx_shape;
  for (std::size_t d = 0; d < n; ++d)
    if (int(d) != axis) out_shape[d] = a_shape[d] == 1 ? idx_shape[d] : a_shape[d];
  std::int64_t total = 1;
  for (auto d : out_shape) total *= d;
  std::vector<float> out;
  std::vector<std::int64_t> coord(n, 0);
  for (std::int64_t e = 0; e < total; ++e) {
    std::int64_t rest = e, a_flat = 0, i_flat = 0;
    for (std::size_t d = n; d-- > 0;) {
      coord[d] = rest % out_shape[d];
      rest /= out_shape[d];
    }
    for (std::size_t d = 0; d < n; ++d) i_flat = i_flat * idx_shape[d] + (idx_shape[d] == 1 ? 0 : coord[d]);
    std::int64_t k = idx[std::size_t(i_flat)];
    if (k < 0) k += a_shape[std::size_t(axis)];
    for (std::size_t d = 0; d < n; ++d)
      a_flat = a_flat * a_shape[d] + (int(d) == axis ? k : (a_shape[d] == 1 ? 0 : coord[d]));
    out.push_back(a[std::size_t(a_flat)]);
  }
  return out;
}

// A gather indexes at most kMaxGatherIndices axes one by one; take_along_axis of more dimensions merges the axes
// around `axis` (found by the randomized differential test: an 8-d take_along_axis used to raise).
TEST(Gather, TakeAlongAxisOfEightAndNineDimensions) {
  std::mt19937_64 rng(20261203);
  struct Case {
    Shape a_shape, idx_shape;
    int axis;
  };
  const std::vector<Case> cases = {
      {{4, 1, 5, 2, 6, 2, 1, 2}, {4, 1, 5, 1, 6, 1, 5, 2}, 6},
      {{2, 3, 1, 2, 4, 1, 2, 3}, {1, 3, 2, 2, 3, 2, 1, 1}, 4},
      {{2, 1, 3, 2, 2, 1, 2, 2, 3}, {2, 2, 1, 1, 2, 3, 2, 1, 4}, -1},
      {{3, 2, 2, 1, 2, 2, 1, 2}, {5, 2, 1, 3, 2, 1, 2, 2}, 0},
      {{2, 1, 3, 1, 2, 2, 1, 2}, {2, 0, 2, 3, 1, 2, 2, 1}, 2}, // an axis of 0 broadcast against 1
  };
  for (const Case& c : cases) {
    const int n = int(c.a_shape.size()), axis = c.axis < 0 ? c.axis + n : c.axis;
    std::int64_t a_size = 1, i_size = 1;
    for (auto d : c.a_shape) a_size *= d;
    for (auto d : c.idx_shape) i_size *= d;
    std::vector<float> a(std::size_t(a_size), 0.0f);
    for (auto& v : a) v = float(std::int64_t(rng() % 2001) - 1000) / 8.0f;
    const std::int64_t length = c.a_shape[std::size_t(axis)];
    std::vector<std::int64_t> idx(std::size_t(i_size), 0);
    for (auto& k : idx) k = std::int64_t(rng() % std::uint64_t(2 * length)) - length; // negative ones too
    Shape want_shape;
    const std::vector<float> want = take_along_reference(a, c.a_shape, idx, c.idx_shape, axis, want_shape);
    const Array got = take_along_axis(asarray(a, c.a_shape), asarray(idx, c.idx_shape), c.axis);
    EXPECT_EQ(got.shape(), want_shape);
    EXPECT_EQ(values_of(got), want);
    // A view as the source: the transpose of the transposed data.
    Shape reversed(c.a_shape.rbegin(), c.a_shape.rend());
    const Array a_view = asarray(values_of(asarray(a, c.a_shape).T()), reversed).T();
    EXPECT_EQ(values_of(take_along_axis(a_view, asarray(idx, c.idx_shape), c.axis)), want);
  }
  // Axes other than `axis` that do not broadcast: NumPy's IndexError, naming both shapes.
  const Array a = ramp({2, 3, 1, 2, 2, 1, 2, 2});
  // An index out of range: axis 1 of the merged view, with the axis' size (docs/semantics.md).
  std::vector<std::int64_t> far(2 * 3 * 2 * 2 * 2, 0);
  far[5] = 3;
  EXPECT_EQ(error_of(take_along_axis(a, asarray(far, {2, 3, 1, 2, 2, 1, 2, 1}), 7)),
            "index 3 is out of bounds for axis 1 with size 2");
  const Array bad = asarray(std::vector<std::int64_t>(4 * 3 * 2, 0), {4, 3, 1, 1, 2, 1, 1, 1});
  try {
    (void)take_along_axis(a, bad, 7);
    ADD_FAILURE() << "no error";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("(2, 3, 1, 2, 2, 1, 2, 2)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(4, 3, 1, 1, 2, 1, 1, 1)"), std::string::npos) << e.what();
  }
}

TEST(Gather, OutOfRangeIsAnIndexErrorWhenMaterialized) {
  Array x = ramp({5});
  Array bad = asarray<std::int64_t>({0, 1, 5, 2});
  Array y = x(bad) + 1.0f; // building it does not throw: the indices are data
  EXPECT_EQ(error_of(y), "index 5 is out of bounds for axis 0 with size 5");
  EXPECT_FALSE(y.is_materialized());
  EXPECT_EQ(error_of(y), "index 5 is out of bounds for axis 0 with size 5") << "raised again, not a stale buffer";
  EXPECT_EQ(error_of(take(x, asarray<std::int64_t>({-6}))), "index -6 is out of bounds for axis 0 with size 5");
  // The axis named is the one indexed, and the first bad index in C order.
  Array m = ramp({3, 4});
  EXPECT_EQ(error_of(take(m, asarray<std::int64_t>({1, 9, 4}), 1)), "index 9 is out of bounds for axis 1 with size 4");
  // A lazy index array out of range, inside a fused kernel and a reduction.
  EXPECT_EQ(error_of(sum(take(x, arange(7)))), "index 5 is out of bounds for axis 0 with size 5");
  // An integer beside an array is checked at once, as NumPy checks it.
  EXPECT_THROW(m(3, asarray<std::int64_t>({0})), IndexError);
  // A good gather after a failed one still works.
  EXPECT_EQ(values_of(x(asarray<std::int64_t>({4}))), (std::vector<float>{2.0f}));
}

TEST(Gather, BadIndexArraysAreErrorsWhenBuilt) {
  Array x = ramp({4, 5});
  EXPECT_THROW(x(asarray({0.0, 1.0})), IndexError) << "float indices";
  EXPECT_THROW(x(x(all_of, 0) > 1.0f, asarray<std::int64_t>({0}), 0), IndexError) << "too many indices";
  EXPECT_THROW(x(asarray(std::vector<bool>{true, false}, {2})), IndexError) << "a mask of the wrong length";
  EXPECT_THROW(x(full({}, 1.0).astype(DType::Bool)), IndexError) << "a 0-d mask";
  EXPECT_THROW(x(asarray<std::int64_t>({0, 1}), asarray<std::int64_t>({0, 1, 2})), IndexError) << "shape mismatch";
  EXPECT_THROW(x(asarray<std::int64_t>({0}), 1, 2), IndexError) << "too many indices";
  EXPECT_THROW(take(zeros({0}), asarray<std::int64_t>({0})), IndexError) << "an empty axis";
  EXPECT_EQ(take(zeros({0}), zeros({0}, DType::Int64)).shape(), (Shape{0})) << "nothing to read: no error";
  EXPECT_EQ(x(zeros({2, 0}, DType::Int32)).shape(), (Shape{2, 0, 5}));
}

TEST(Gather, MasksSelectAndTheGatherStaysLazy) {
  Array x = ramp({4, 5});
  Array mask = x(all_of, 0) > 3.0f; // rows 2 and 3 (first elements 5.0 and 7.5)
  Array rows = x(mask);             // the mask is read now; the gather is not run
  EXPECT_FALSE(rows.is_materialized());
  EXPECT_EQ(rows.shape(), (Shape{2, 5}));
  x.eval();
  const auto before = launched();
  const std::vector<float> got = values_of(rows * 2.0f + 1.0f);
  EXPECT_EQ(launched() - before, 1u) << "the gather through the positions fuses with its consumer";
  for (std::int64_t r = 0; r < 2; ++r)
    for (std::int64_t c = 0; c < 5; ++c)
      EXPECT_EQ(got[std::size_t(r * 5 + c)], 0.5f * float((r + 2) * 5 + c) * 2.0f + 1.0f);
  EXPECT_EQ(values_of(x(x > 8.5f)), (std::vector<float>{9.0f, 9.5f}));
  EXPECT_EQ(argwhere(x > 8.5f).shape(), (Shape{2, 2}));
  EXPECT_EQ(flatnonzero(x > 8.5f).get<std::int64_t>()[1], 19);
}

// x[mask] over a materialized x of the mask's shape copies the selected elements out (runtime::masked_values, by
// their width: 1, 2, 4, 8 and 16 bytes) instead of gathering at their positions: the same elements as the gather at
// flatnonzero(mask), for every element type, with values that fill their bytes (no zeros: a byte copied from the
// wrong place shows).
TEST(Gather, AMaskOverAMaterializedArrayCopiesEveryTypesElements) {
  const DType types[] = {
#define LAZYFUSE_DTYPE(Enum, ...) DType::Enum,
#include <lazyfuse/dtypes.def>
#undef LAZYFUSE_DTYPE
  };
  const Shape shape{37, 53};
  const Array mask = (random::uniform(0, 1, shape) < 0.4).eval();
  const std::int64_t count = sum(mask.astype(DType::Int64)).item<std::int64_t>();
  ASSERT_GT(count, 0);
  for (DType t : types) {
    const std::string what(dtype_name(t));
    Array u = random::uniform(1, 100, shape);
    Array x = (is_complex(t) ? (u * std::complex<double>(0.6, 0.8) + 0.25).astype(t) : u.astype(t)).eval();
    const Array got = x(mask);
    EXPECT_TRUE(got.is_materialized()) << what << ": copied when indexed";
    ASSERT_EQ(got.shape(), (Shape{count})) << what;
    ASSERT_EQ(got.dtype(), t) << what;
    const Array want = take(x.ravel(), flatnonzero(mask));
    EXPECT_TRUE(array_equal(got, want)) << what;
  }
  const Array x = ramp(shape);
  EXPECT_EQ(x(mask > 2.0f).shape(), (Shape{0})) << "nothing selected";
  EXPECT_EQ(values_of(x(mask >= 0.0f)), values_of(x.ravel())) << "everything";
}

// A mask over 2 or more axes reads those axes merged, at its flat positions: over a lazy source, a transposed view,
// trailing axes, beside an index array and before a slice, each against the host's reading of NumPy's x[mask].
TEST(Gather, MultiAxisMasksSelectNumPysElements) {
  Array x = ramp({4, 3, 5}); // x[i, j, k] = 0.5 * (15 i + 5 j + k)
  auto at = [](std::int64_t i, std::int64_t j, std::int64_t k) { return 0.5f * float(15 * i + 5 * j + k); };
  std::vector<bool> m01(12), m12(15), m10(15);
  for (std::size_t e = 0; e < m01.size(); ++e) m01[e] = e % 3 != 1;
  for (std::size_t e = 0; e < m12.size(); ++e) m12[e] = e % 4 == 1;
  for (std::size_t e = 0; e < m10.size(); ++e) m10[e] = e % 2 == 0;
  const Array mask01 = asarray(m01, {4, 3}), mask12 = asarray(m12, {3, 5}), mask10 = asarray(m10, {5, 3});

  std::vector<float> want;
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      if (m01[std::size_t(i * 3 + j)])
        for (std::int64_t k = 0; k < 5; ++k) want.push_back(2.0f * at(i, j, k) + 1.0f);
  Array lazy = (x * 2.0f + 1.0f)(mask01);
  EXPECT_EQ(lazy.shape(), (Shape{8, 5}));
  EXPECT_EQ(values_of(lazy), want) << "a lazy source";

  want.clear();
  for (std::int64_t k = 0; k < 5; ++k)
    for (std::int64_t j = 0; j < 3; ++j)
      if (m10[std::size_t(k * 3 + j)])
        for (std::int64_t i = 0; i < 4; ++i) want.push_back(at(i, j, k));
  Array transposed = x.transpose()(mask10);
  EXPECT_EQ(transposed.shape(), (Shape{8, 4}));
  EXPECT_EQ(values_of(transposed), want) << "a transposed view";

  want.clear();
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t e = 0; e < 15; ++e)
      if (m12[std::size_t(e)]) want.push_back(at(i, e / 5, e % 5));
  Array trailing = x(all_of, mask12);
  EXPECT_EQ(trailing.shape(), (Shape{4, 4}));
  EXPECT_EQ(values_of(trailing), want) << "the trailing axes";

  want.clear();
  for (std::int64_t e = 0; e < 15; ++e)
    if (m12[std::size_t(e)]) want.push_back(at(2, e / 5, e % 5));
  EXPECT_EQ(values_of(x(asarray<std::int64_t>({2}), mask12)), want) << "beside an index array, broadcast";

  want.clear();
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 3; ++j)
      if (m01[std::size_t(i * 3 + j)])
        for (std::int64_t k = 1; k < 5; ++k) want.push_back(at(i, j, k));
  EXPECT_EQ(values_of(x(mask01, slice(1, none))), want) << "before a slice";

  EXPECT_EQ(x(asarray(std::vector<bool>(12, false), {4, 3})).shape(), (Shape{0, 5})) << "nothing selected";
  EXPECT_EQ(values_of(x(asarray(std::vector<bool>(60, true), {4, 3, 5}))), values_of(x.ravel())) << "everything";
}

TEST(Gather, WritesThroughIndexArrays) {
  Array x = ramp({6});
  // Duplicates: the last write wins, in C order of the index.
  const std::vector<float> set =
      values_of(x.at(asarray<std::int64_t>({1, 4, 1, -1})).set(asarray({10.0f, 20.0f, 30.0f, 40.0f})));
  EXPECT_EQ(set, (std::vector<float>{0.0f, 30.0f, 1.0f, 1.5f, 20.0f, 40.0f}));
  EXPECT_EQ(values_of(x), (std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f})) << "x is unchanged";
  // add is ufunc.at: every duplicate counts.
  const std::vector<float> added =
      values_of(x.at(asarray<std::int64_t>({1, 4, 1, 1})).add(asarray({1.0f, 2.0f, 3.0f, 4.0f})));
  EXPECT_EQ(added, (std::vector<float>{0.0f, 8.5f, 1.0f, 1.5f, 4.0f, 2.5f}));
  // A mask, a scalar value, a basic index.
  EXPECT_EQ(values_of(x.at(x > 1.2f).set(-1.0)), (std::vector<float>{0.0f, 0.5f, 1.0f, -1.0f, -1.0f, -1.0f}));
  EXPECT_EQ(values_of(x.at(slice(0, 2)).add(1.0)), (std::vector<float>{1.0f, 1.5f, 1.0f, 1.5f, 2.0f, 2.5f}));
  // Integer bins: a histogram by add.
  Array bins = zeros({3}, DType::Int32);
  const HostArray<std::int32_t> h = bins.at(asarray<std::int64_t>({0, 2, 2, 2, 1, 0})).add(1).get<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(h.data(), h.data() + 3), (std::vector<std::int32_t>{2, 1, 3}));
  // Out of range is an IndexError here: the positions are read when the write is built.
  EXPECT_THROW(x.at(asarray<std::int64_t>({6})).set(0.0), IndexError);
}

// at().add with integer arrays records a weighted bincount: nothing is read on the host when it is built (a lazy
// index stays lazy), an index out of range raises when the result is materialized, every evaluation gives the same
// bits, integer sums wrap as NumPy's in-place adds do, and an element no index names keeps its bits (-0.0).
TEST(Gather, AddThroughIndexArraysStaysLazy) {
  const std::int64_t n = 1000, writes = 20000;
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> base(static_cast<std::size_t>(n)), value(static_cast<std::size_t>(writes));
  for (auto& b : base) b = uniform(rng);
  for (auto& v : value) v = uniform(rng);
  base[998] = -0.0;
  const Array x = asarray(base, {n}).astype(DType::Float32), v = asarray(value, {writes}).astype(DType::Float32);
  // Targets 14 (k + 1) mod 997: every element below 997, most of them about 20 times; 997 to 999 never.
  const Array index = (arange(writes) * 2 + 2) * 7 % 997;
  const Array added = x.at(index).add(v);
  EXPECT_FALSE(detail::graph_node(index)->materialized()) << "the index is read by the kernels, not on the host";
  std::vector<double> reference = base;
  for (std::int64_t k = 0; k < writes; ++k)
    reference[std::size_t((2 * k + 2) * 7 % 997)] += double(float(value[std::size_t(k)]));
  const std::vector<float> first = values_of(added), again = values_of(x.at(index).add(v));
  EXPECT_EQ(first, again) << "the same bits on every evaluation";
  double error = 0, norm = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    const double r = double(float(base[std::size_t(k)])) + (reference[std::size_t(k)] - base[std::size_t(k)]);
    error += (first[std::size_t(k)] - r) * (first[std::size_t(k)] - r);
    norm += r * r;
  }
  EXPECT_LT(std::sqrt(error / norm), 1e-6);
  EXPECT_TRUE(std::signbit(first[998]) && first[998] == 0.0f) << "an element no index names keeps -0.0";

  // docs/semantics.md: each element's values summed in fixed point, rounded once, then added to x once; the same bits
  // on every backend.
  std::vector<std::vector<float>> meeting(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < writes; ++k)
    meeting[std::size_t((2 * k + 2) * 7 % 997)].push_back(float(value[std::size_t(k)]));
  for (std::int64_t k = 0; k < n; ++k)
    ASSERT_EQ(first[std::size_t(k)], float(base[std::size_t(k)]) + fixed_point_sum(meeting[std::size_t(k)], writes))
        << "element " << k;

  EXPECT_THROW((void)x.at(asarray<std::int64_t>({3, n})).add(1.0f).get<float>(), IndexError);

  const Array small = asarray<std::int8_t>({100, 5}, {2});
  const HostArray<std::int8_t> wrapped = small.at(asarray<std::int64_t>({0, 0, 0, 1}))
                                             .add(asarray<std::int8_t>({100, 100, 100, 1}, {4}))
                                             .get<std::int8_t>();
  EXPECT_EQ(int(wrapped.data()[0]), -112) << "100 + 3 * 100 wraps in int8 as NumPy's add.at does";
  EXPECT_EQ(int(wrapped.data()[1]), 6);

  // Float values into int64: the sums go through float64, where an element no index names would lose its low bits.
  const std::int64_t big = (std::int64_t(1) << 60) + 1;
  const HostArray<std::int64_t> exact =
      asarray<std::int64_t>({big, 5}, {2}).at(asarray<std::int64_t>({1})).add(asarray({2.5})).get<std::int64_t>();
  EXPECT_EQ(exact.data()[0], big) << "unwritten: exact";
  EXPECT_EQ(exact.data()[1], 7) << "5 + 2.5 converted to int64";
}

// at().add's weighted bincount for every type it sums (float16, bfloat16, float32, float64; integers in int64 or
// uint64, wrapped): against a float64 reference of the same values (exact for integers), and the same bits on a
// second evaluation. On the GPU this runs CUB's sort and reduce-by-key (runtime/DeviceCount.h).
TEST(Gather, AddThroughIndexArraysSumsEveryTypeItSums) {
  const std::int64_t n = 3000, writes = 50000;
  std::mt19937_64 rng(29);
  std::vector<std::int64_t> index(static_cast<std::size_t>(writes));
  for (auto& i : index) i = std::int64_t(rng() % std::uint64_t(n));
  std::vector<double> base(static_cast<std::size_t>(n)), value(static_cast<std::size_t>(writes));
  for (auto& b : base) b = double(std::int64_t(rng() % 2001) - 1000) / 64.0;
  for (auto& v : value) v = double(std::int64_t(rng() % 2001) - 1000) / 64.0;
  const Array at = asarray(index, {writes});
  struct Case {
    DType type;
    double tolerance; // relative L2 error against the float64 sums of the values as the type holds them
  };
  for (const Case c : {Case{DType::Float16, 2e-2}, Case{DType::BFloat16, 1e-1}, Case{DType::Float32, 1e-6},
                       Case{DType::Float64, 1e-14}, Case{DType::Int16, 0}, Case{DType::UInt8, 0}}) {
    SCOPED_TRACE(std::string(dtype_name(c.type)));
    const Array x = asarray(base, {n}).astype(c.type), v = asarray(value, {writes}).astype(c.type);
    const HostArray<double> xs = x.astype(DType::Float64).get<double>(), vs = v.astype(DType::Float64).get<double>();
    std::vector<double> reference(xs.data(), xs.data() + n);
    for (std::int64_t k = 0; k < writes; ++k) reference[std::size_t(index[std::size_t(k)])] += vs.data()[k];
    const Array added = x.at(at).add(v);
    const HostArray<double> got = added.astype(DType::Float64).get<double>();
    const HostArray<double> again = x.at(at).add(v).astype(DType::Float64).get<double>();
    EXPECT_TRUE(std::equal(got.data(), got.data() + n, again.data())) << "the same bits on every evaluation";
    if (c.tolerance == 0) { // integers: the sum wrapped to the type, exactly
      for (std::int64_t k = 0; k < n; ++k) {
        const double bits = c.type == DType::Int16 ? double(std::int16_t(std::int64_t(reference[std::size_t(k)])))
                                                   : double(std::uint8_t(std::int64_t(reference[std::size_t(k)])));
        ASSERT_EQ(got.data()[k], bits) << "element " << k;
      }
      continue;
    }
    double error = 0, norm = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const double d = got.data()[k] - reference[std::size_t(k)];
      error += d * d;
      norm += reference[std::size_t(k)] * reference[std::size_t(k)];
    }
    EXPECT_LT(std::sqrt(error / norm), c.tolerance);
  }
}

// What the fixed-point sums of float16, bfloat16 and float32 promise (docs/semantics.md): the order of the writes does
// not change a bit; each element's sum is scaled by its own values (elements of 1e-30 and of 1e30 side by side keep
// float32's precision); infinities, NaN, -0.0, subnormal sums and an overflow come out as IEEE addition gives them.
TEST(Gather, AddThroughIndexArraysSumsInFixedPoint) {
  const std::int64_t n = 600, writes = 30000;
  std::mt19937_64 rng(31);
  std::vector<std::int64_t> index(static_cast<std::size_t>(writes));
  std::vector<float> value(static_cast<std::size_t>(writes)), unit(static_cast<std::size_t>(writes));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const float magnitudes[] = {1e-30f, 1.0f, 3e30f, 1e-42f}; // the last: subnormal values and sums
  for (std::int64_t k = 0; k < writes; ++k) {
    index[std::size_t(k)] = std::int64_t(rng() % std::uint64_t(n));
    unit[std::size_t(k)] = uniform(rng);
    value[std::size_t(k)] = unit[std::size_t(k)] * magnitudes[index[std::size_t(k)] % 4];
  }
  const auto added = [&](const std::vector<std::int64_t>& at, const std::vector<float>& v) {
    return values_of(zeros({n}, DType::Float32).at(asarray(at, {writes})).add(asarray(v, {writes})));
  };
  const std::vector<float> got = added(index, value);
  std::vector<std::vector<float>> meeting(static_cast<std::size_t>(n));
  std::vector<double> exact(static_cast<std::size_t>(n), 0.0), largest(static_cast<std::size_t>(n), 0.0);
  for (std::int64_t k = 0; k < writes; ++k) {
    const auto t = std::size_t(index[std::size_t(k)]);
    meeting[t].push_back(value[std::size_t(k)]);
    exact[t] += double(value[std::size_t(k)]); // exact enough: 50 values of one magnitude, 53 digits
    largest[t] = std::max(largest[t], double(std::fabs(value[std::size_t(k)])));
  }
  for (std::int64_t k = 0; k < n; ++k) {
    const auto t = std::size_t(k);
    ASSERT_EQ(got[t], 0.0f + fixed_point_sum(meeting[t], writes)) << "element " << k;
    // Within half a float32 step of the exact sum, plus each value's rounding to 2^(e - F), F = 62 - 15 = 47.
    const double step = k % 4 == 3 ? std::ldexp(1.0, -149) : std::ldexp(std::fabs(double(got[t])), -24);
    EXPECT_LE(std::fabs(got[t] - exact[t]), step + double(meeting[t].size()) * std::ldexp(largest[t], -47))
        << "element " << k << ": " << got[t] << " against " << exact[t];
  }
  // The writes in another order: the same bits.
  std::vector<std::size_t> order(static_cast<std::size_t>(writes));
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> shuffled_index(order.size());
  std::vector<float> shuffled_value(order.size()), shuffled_unit(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    shuffled_index[k] = index[order[k]];
    shuffled_value[k] = value[order[k]];
    shuffled_unit[k] = unit[order[k]];
  }
  const std::vector<float> reordered = added(shuffled_index, shuffled_value);
  for (std::int64_t k = 0; k < n; ++k)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(reordered[std::size_t(k)]),
              std::bit_cast<std::uint32_t>(got[std::size_t(k)]))
        << "element " << k;
  for (const DType t : {DType::Float16, DType::BFloat16}) { // the same for the half types, in their own rounding
    SCOPED_TRACE(std::string(dtype_name(t)));
    const auto sums = [&](const std::vector<std::int64_t>& at, const std::vector<float>& v) {
      return zeros({n}, t).at(asarray(at, {writes})).add(asarray(v, {writes}).astype(t)).astype(DType::Float32);
    };
    EXPECT_EQ(values_of(sums(index, unit)), values_of(sums(shuffled_index, shuffled_unit)));
  }

  // Special values, one element each; x = -0.0 everywhere.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN(),
              big = std::numeric_limits<float>::max();
  const std::vector<std::int64_t> at{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 7, 8, 8};
  const std::vector<float> v{1.0f, inf,   -inf,  2.0f,  inf,   -inf,   nan,    1.0f,  big,
                             big,  -0.0f, -0.0f, 1e30f, 1e30f, -1e30f, 1e-45f, 1e-45f};
  const std::vector<float> special = values_of(full({10}, -0.0, DType::Float32)
                                                   .at(asarray(at, {std::int64_t(at.size())}))
                                                   .add(asarray(v, {std::int64_t(v.size())})));
  EXPECT_EQ(special[0], inf);
  EXPECT_EQ(special[1], -inf);
  EXPECT_TRUE(std::isnan(special[2])) << "inf + -inf";
  EXPECT_TRUE(std::isnan(special[3]));
  EXPECT_EQ(special[4], inf) << "max + max overflows";
  EXPECT_TRUE(special[5] == 0.0f && std::signbit(special[5])) << "-0.0 + -0.0 + -0.0";
  EXPECT_EQ(special[6], 1e30f);
  EXPECT_TRUE(special[7] == 0.0f && !std::signbit(special[7])) << "1e30 - 1e30 is +0.0";
  EXPECT_EQ(special[8], 2 * 1e-45f) << "two of the smallest subnormal";
  EXPECT_TRUE(special[9] == 0.0f && std::signbit(special[9])) << "no write keeps x's -0.0";
}

// The same promise over a million elements with skewed writes: on the GPU, more than 2^18 elements take the bucketed
// path (runtime/DeviceCount.cu: a radix pass groups the writes by bucket, a block sums a bucket in shared memory), and
// a bucket written far more than the average (a range of 2,000 elements taking a tenth of the writes, one element a
// twentieth) goes to the global atomics. Every element's bits against the C library's fixed-point sum, special values
// in short and long buckets, the last, partial bucket, int32 and int64 indices; the half types in any order of writes.
TEST(Gather, AddIntoMillionsOfElementsSumsInFixedPointWhateverTheSpread) {
  const std::int64_t n = 1000003, writes = std::int64_t(1) << 21;
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const float magnitudes[] = {1e-30f, 1.0f, 3e30f, 1e-42f};
  std::vector<std::int64_t> index(static_cast<std::size_t>(writes));
  std::vector<float> value(index.size()), unit(index.size());
  for (std::size_t k = 0; k < index.size(); ++k) {
    const std::uint64_t pick = rng() % 100;
    index[k] = pick < 10   ? 500000 + std::int64_t(rng() % 2000)
               : pick < 15 ? 777777
               : pick < 16 ? n - 1 - std::int64_t(rng() % 500)
                           : 16 + std::int64_t(rng() % std::uint64_t(n - 16));
    unit[k] = uniform(rng);
    value[k] = unit[k] * magnitudes[index[k] % 4];
  }
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Elements 0 to 15 get only these (short buckets), 500001 and 777777 (long ones) also an infinity and a NaN.
  const std::vector<std::pair<std::int64_t, float>> specials{{5, inf},      {6, nan},      {9, inf},   {9, -inf},
                                                             {13, -0.0f},   {13, -0.0f},   {14, 2.5f}, {500001, inf},
                                                             {777777, nan}, {777777, 1.0f}};
  for (std::size_t s = 0; s < specials.size(); ++s) {
    index[s] = specials[s].first;
    value[s] = unit[s] = specials[s].second;
  }
  std::vector<std::vector<float>> meeting(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < index.size(); ++k) meeting[std::size_t(index[k])].push_back(value[k]);
  for (const DType index_type : {DType::Int64, DType::Int32}) {
    SCOPED_TRACE(std::string(dtype_name(index_type)) + " indices, " + lazyfuse_test::seed_note());
    const Array at = asarray(index, {writes}).astype(index_type);
    const std::vector<float> got = values_of(zeros({n}, DType::Float32).at(at).add(asarray(value, {writes})));
    EXPECT_EQ(got[5], inf);
    EXPECT_TRUE(std::isnan(got[6]));
    EXPECT_TRUE(std::isnan(got[9])) << "inf + -inf";
    EXPECT_TRUE(got[13] == 0.0f && !std::signbit(got[13])) << "0.0 + -0.0 + -0.0";
    EXPECT_EQ(got[14], 2.5f);
    EXPECT_EQ(got[500001], inf);
    EXPECT_TRUE(std::isnan(got[777777]));
    for (std::int64_t k = 16; k < n; ++k) {
      if (k == 500001 || k == 777777) continue;
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[std::size_t(k)]),
                std::bit_cast<std::uint32_t>(0.0f + fixed_point_sum(meeting[std::size_t(k)], writes)))
          << "element " << k << " of " << meeting[std::size_t(k)].size() << " writes";
    }
  }
  // The half types: the same bits whatever the order of the writes, and near the float64 sums.
  std::vector<std::size_t> order(index.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> shuffled_index(order.size());
  std::vector<float> shuffled_unit(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    shuffled_index[k] = index[order[k]];
    shuffled_unit[k] = unit[order[k]];
  }
  for (const DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const auto sums = [&](const std::vector<std::int64_t>& at, const std::vector<float>& v) {
      return values_of(
          zeros({n}, t).at(asarray(at, {writes})).add(asarray(v, {writes}).astype(t)).astype(DType::Float32));
    };
    const std::vector<float> got = sums(index, unit), reordered = sums(shuffled_index, shuffled_unit);
    for (std::size_t k = 0; k < got.size(); ++k) // bits: the NaNs too
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[k]), std::bit_cast<std::uint32_t>(reordered[k])) << "element " << k;
    const HostArray<double> halves = asarray(unit, {writes}).astype(t).astype(DType::Float64).get<double>();
    std::vector<double> exact(static_cast<std::size_t>(n), 0.0);
    for (std::size_t k = 0; k < index.size(); ++k) exact[std::size_t(index[k])] += halves.data()[k];
    double error = 0, norm = 0;
    for (std::int64_t k = 16; k < n; ++k) {
      if (k == 500001 || k == 777777) continue;
      error += (got[std::size_t(k)] - exact[std::size_t(k)]) * (got[std::size_t(k)] - exact[std::size_t(k)]);
      norm += exact[std::size_t(k)] * exact[std::size_t(k)];
    }
    EXPECT_LT(std::sqrt(error / norm), t == DType::Float16 ? 1e-3 : 1e-2);
  }
}

// fixed_sum::finish against rounding written with long double: the exact value sum 2^(e - F) (exact in 64 digits),
// divided by its type's step at that magnitude (2^(exponent - digits), or the subnormal step below the normal range),
// rounded by nearbyintl (to nearest, ties to even) and multiplied back; past the largest finite number, infinity.
// Random integer sums of every width, scales over the whole float32 range, and ties made on purpose.
TEST(FixedPointSum, RoundsOnceToEachFormat) {
  namespace fs = lazyfuse::runtime::fixed_sum;
  struct Case {
    fs::Format format;
    int max_exponent; // the largest finite number is below 2^max_exponent
  };
  std::mt19937_64 rng(41);
  for (const Case c : {Case{fs::kFloat32, 128}, Case{fs::kFloat16, 16}, Case{fs::kBFloat16, 128}}) {
    SCOPED_TRACE("digits " + std::to_string(c.format.digits));
    const auto reference = [&](std::int64_t sum, int scale_exponent, int fraction) -> long double {
      const long double exact = std::ldexp(static_cast<long double>(sum), scale_exponent - fraction);
      int exponent = 0;
      std::frexp(exact, &exponent); // |exact| in [2^(exponent - 1), 2^exponent)
      const int step = std::max(exponent, c.format.min_exponent + 1) - c.format.digits;
      const long double rounded = std::ldexp(std::nearbyint(std::ldexp(exact, -step)), step);
      const long double largest = std::ldexp(1.0L - std::ldexp(1.0L, -c.format.digits), c.max_exponent);
      // Past the largest number by half a step or more: infinity (the tie rounds to the even, 2^max_exponent).
      if (std::fabs(rounded) > largest) return std::copysign(std::numeric_limits<long double>::infinity(), exact);
      return rounded;
    };
    for (int k = 0; k < 200000; ++k) {
      const int width = 1 + int(rng() % 62), fraction = 22 + int(rng() % 40);
      std::int64_t sum = std::int64_t(rng() >> (64 - width)) * (rng() % 2 ? 1 : -1);
      if (k % 4 == 0) sum = ((sum >> 8) | 1) * (std::int64_t(1) << (rng() % 8)); // an odd number shifted: ties
      if (sum == 0) continue;
      const int scale_exponent = -148 + int(rng() % 277);
      const std::uint32_t word = std::uint32_t(scale_exponent + fs::kExponentBias);
      const long double want = reference(sum, scale_exponent, fraction);
      // What the type's conversion from float makes of finish's float: float16's range ends inside float's.
      long double got = fs::finish(sum, word, fraction, c.format);
      if (std::isfinite(got) && std::fabs(got) >= std::ldexp(1.0L, c.max_exponent))
        got = std::copysign(std::numeric_limits<long double>::infinity(), got);
      ASSERT_EQ(got, want) << "sum " << sum << ", scale 2^" << scale_exponent << ", fraction " << fraction;
      if (want == 0) {
        ASSERT_EQ(std::signbit(got), sum < 0) << "an underflow keeps the sum's sign";
      }
    }
  }
}

// Half of the writes land on one element, the rest on elements of their own: padding every element's writes to the
// longest list would need 2^15 x 2^15 cells; the blocks of reduce_groups keep it linear. The values are small integers
// (and +-1 for the product), so every order of combination gives the exact result the host computes.
TEST(Gather, SkewedDuplicateWritesCombineInLinearMemory) {
  const std::int64_t writes = std::int64_t(1) << 16, n = writes / 2 + 1;
  const auto count = static_cast<std::size_t>(writes);
  std::vector<std::int64_t> index(count);
  std::vector<double> value(count), sign(count);
  std::mt19937_64 rng(17);
  for (std::int64_t k = 0; k < writes; ++k) {
    index[std::size_t(k)] = k % 2 ? 0 : 1 + k / 2;
    value[std::size_t(k)] = double(std::int64_t(rng() % 201) - 100);
    sign[std::size_t(k)] = rng() % 2 ? 1.0 : -1.0;
  }
  std::vector<double> base(static_cast<std::size_t>(n));
  for (auto& b : base) b = double(std::int64_t(rng() % 201) - 100);
  std::vector<double> added = base, multiplied = base, smallest = base, largest = base;
  for (std::size_t k = 0; k < index.size(); ++k) {
    const auto t = std::size_t(index[k]);
    added[t] += value[k];
    multiplied[t] *= sign[k];
    smallest[t] = std::min(smallest[t], value[k]);
    largest[t] = std::max(largest[t], value[k]);
  }
  const Array x = asarray(base, {n}), at = asarray(index, {writes}), v = asarray(value, {writes});
  const auto values = [](const Array& a) {
    const HostArray<double> h = a.get<double>();
    return std::vector<double>(h.data(), h.data() + h.size());
  };
  EXPECT_EQ(values(x.at(at).add(v)), added);
  EXPECT_EQ(values(x.at(at).multiply(asarray(sign, {writes}))), multiplied);
  EXPECT_EQ(values(x.at(at).min(v)), smallest);
  EXPECT_EQ(values(x.at(at).max(v)), largest);
  const HostArray<std::int64_t> counts = bincount(at).get<std::int64_t>();
  EXPECT_EQ(counts.data()[0], writes / 2);
  EXPECT_EQ(counts.data()[n - 1], 1);
}

TEST(Gather, ChooseRaisesForEntriesOutOfRange) {
  Array a = ramp({3});
  EXPECT_EQ(error_of(choose(asarray<std::int64_t>({0, 2, 1}), {a, a + 1.0f})),
            "index 2 is out of bounds for axis 0 with size 2");
  EXPECT_EQ(error_of(choose(asarray<std::int64_t>({0, -1, 1}), {a, a + 1.0f})),
            "index 2 is out of bounds for axis 0 with size 2")
      << "a negative entry is invalid too (NumPy: ValueError), named as the count of choices";
}

} // namespace

namespace {

TEST(Gather, PutSearchAndCountReportBadInput) {
  const Array x = ramp({2, 3});
  EXPECT_THROW(put(x, asarray<std::int64_t>({0}), asarray({1.0}), "bogus"), ValueError);
  EXPECT_THROW(put(x, asarray({0.5}), asarray({1.0})), IndexError) << "float indices";
  EXPECT_THROW(put(zeros({0}), asarray<std::int64_t>({0}), asarray({1.0})), IndexError) << "an empty array";
  EXPECT_EQ(put(x, asarray<std::int64_t>({0}), zeros({0})).shape(), x.shape()) << "no values: nothing written";
  EXPECT_THROW((void)put(x, asarray<std::int64_t>({6}), asarray({1.0})).get<float>(), IndexError);
  EXPECT_THROW(put_along_axis(x, asarray<std::int64_t>({0}), asarray({1.0}), 1), ValueError) << "1-D indices, 2-D arr";
  EXPECT_THROW(searchsorted(x, asarray({1.0})), ValueError) << "a 2-D a";
  EXPECT_THROW(searchsorted(x.ravel(), asarray({1.0}), "middle"), ValueError);
  EXPECT_THROW(digitize(asarray({1.0}), asarray({1.0, 3.0, 2.0})), ValueError) << "bins not monotonic";
  EXPECT_THROW(bincount(asarray<std::int64_t>({1, -1})), ValueError) << "a negative value";
  EXPECT_THROW(bincount(asarray({1.0})), DTypeError) << "floats";
  EXPECT_THROW(bincount(asarray<std::int64_t>({1, 2}), asarray({1.0})), ValueError) << "weights of another length";
  EXPECT_THROW(partition(x, 3, 1), ValueError) << "kth out of bounds";
  try {
    (void)bincount(asarray<std::int64_t>({1, 2}), asarray({1.0}));
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("weights"), std::string::npos) << e.what();
  }
}

// A launch that checked every element of a materialized index array remembers the axis size they are valid for, so
// that later gathers through it against an axis at least that long need not wait for their check. A gather that
// reads only some indices, one that fails, and the user's own memory (which may change) remember nothing; a shorter
// axis is checked again and still raises.
TEST(Gather, AnIndexArrayCheckedWholeIsNotCheckedAgain) {
  auto bound = [](const Array& a) { return lazyfuse::detail::graph_node(a)->known_index_bound.load(); };
  const std::int64_t none = std::numeric_limits<std::int64_t>::max();
  Array x = ramp({1000});
  std::vector<std::int64_t> values(300);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = std::int64_t(k * 37 % 1400) - 700; // -700 .. 699
  Array idx = asarray(values).eval();
  Array idx2 = asarray(values).eval();
  EXPECT_EQ(bound(idx), none);
  (void)values_of(x(idx2)(slice(0, 10)) + 1.0f); // reads ten of them
  EXPECT_EQ(bound(idx2), none);
  const std::vector<float> first = values_of(x(idx) * 2.0f);
  EXPECT_EQ(bound(idx), 1000);
  const std::vector<float> again = values_of(x(idx) * 2.0f);
  EXPECT_EQ(again, first) << "the unchecked launch computes the same";
  for (std::size_t k = 0; k < values.size(); ++k)
    ASSERT_EQ(again[k], 0.5f * float(values[k] < 0 ? values[k] + 1000 : values[k]) * 2.0f) << k;
  (void)values_of(ramp({5000})(idx));
  EXPECT_EQ(bound(idx), 1000) << "the smallest axis size found valid";
  EXPECT_EQ(error_of(ramp({600})(idx)), "index -700 is out of bounds for axis 0 with size 600");
  EXPECT_EQ(bound(idx), 1000);
  (void)values_of(ramp({700})(idx));
  EXPECT_EQ(bound(idx), 700);

  // A buffer whose address was given out may be written through it.
  Array idx3 = asarray(values).eval();
  (void)values_of(x(idx3));
  EXPECT_EQ(bound(idx3), 1000);
  (void)idx3.data_ptr();           // the address is out: the bound no longer counts
  if (backend() == Backend::Cpu) { // a host address
    static_cast<std::int64_t*>(idx3.data_ptr())[7] = -4000;
    EXPECT_EQ(error_of(x(idx3)), "index -4000 is out of bounds for axis 0 with size 1000");
  }

  // The user's memory: its values may change between launches.
  std::vector<std::int64_t> host(values.begin(), values.end());
  if (backend() == Backend::Cpu) {
    Array wrapped = from_pointer(host.data(), {std::int64_t(host.size())}, DType::Int64);
    (void)values_of(x(wrapped));
    EXPECT_EQ(bound(wrapped), none);
    host[3] = 5000;
    EXPECT_EQ(error_of(x(wrapped)), "index 5000 is out of bounds for axis 0 with size 1000");
  }
}

} // namespace
