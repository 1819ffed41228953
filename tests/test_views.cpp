// Views, indexing, slice assignment, joining, creation, error messages and printing, checked against
// references written here: plain index loops over host copies of the inputs (never the library's own code).
// Backend-agnostic: the same tests run on the CPU backend and on a GPU.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace lf = lazyfuse;
using lazyfuse::detail::graph_node;
using lf::all_of;
using lf::Array;
using lf::DType;
using lf::ellipsis;
using lf::Index;
using lf::newaxis;
using lf::none;
using lf::Shape;
using lf::slice;

namespace {

// ---- host references ------------------------------------------------------------------------------------

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string shape_text(const Shape& s) {
  std::string t = "(";
  for (std::size_t k = 0; k < s.size(); ++k) t += (k ? ", " : "") + std::to_string(s[k]);
  return t + ")";
}

// A host array in row-major order; the values are doubles (exact for the small integers used here).
struct Ref {
  Shape shape;
  std::vector<double> v;
  double at(const std::vector<std::int64_t>& idx) const {
    std::int64_t off = 0;
    for (std::size_t k = 0; k < shape.size(); ++k) off = off * shape[k] + idx[k];
    return v[std::size_t(off)];
  }
};

// The array of `shape` whose element at multi-index i is f(i), built by walking the indices in C order.
Ref make_ref(const Shape& shape, const std::function<double(const std::vector<std::int64_t>&)>& f) {
  Ref r{shape, {}};
  const std::int64_t n = numel(shape);
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t lin = 0; lin < n; ++lin) {
    r.v.push_back(f(idx));
    for (std::size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return r;
}

// 0, 1, 2, ... (plus `start`) in C order.
Ref iota_ref(const Shape& shape, double start = 0) {
  Ref r{shape, {}};
  for (std::int64_t i = 0; i < numel(shape); ++i) r.v.push_back(start + double(i));
  return r;
}

Array to_array(const Ref& r) {
  return lf::asarray(r.v, r.shape);
}

// One component of a reference index, with every axis written out: an integer (drops the axis), an explicit
// list of the selected positions (keeps the axis), or a new axis of size 1.
struct Sel {
  enum Kind { Int, List, New } kind;
  std::int64_t k = 0;
  std::vector<std::int64_t> list;
};
Sel I(std::int64_t k) {
  return {Sel::Int, k, {}};
}
Sel L(std::vector<std::int64_t> list) {
  return {Sel::List, 0, std::move(list)};
}
Sel N() {
  return {Sel::New, 0, {}};
}
// `count` positions start, start + step, ... (written out by the test author: no slice arithmetic here).
std::vector<std::int64_t> seq(std::int64_t start, std::int64_t count, std::int64_t step = 1) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < count; ++i) v.push_back(start + i * step);
  return v;
}
Sel All(std::int64_t n) {
  return L(seq(0, n));
}

Ref select(const Ref& in, const std::vector<Sel>& sels) {
  Shape out;
  for (auto& s : sels) {
    if (s.kind == Sel::List) out.push_back(std::int64_t(s.list.size()));
    if (s.kind == Sel::New) out.push_back(1);
  }
  return make_ref(out, [&](const std::vector<std::int64_t>& o) {
    std::vector<std::int64_t> src;
    std::size_t ok = 0;
    for (auto& s : sels) {
      if (s.kind == Sel::Int) src.push_back(s.k);
      if (s.kind == Sel::List) src.push_back(s.list[std::size_t(o[ok++])]);
      if (s.kind == Sel::New) ++ok;
    }
    return in.at(src);
  });
}

// out[o] = in[src] with src[axes[k]] = o[k] (NumPy's transpose(axes), axes non-negative).
Ref transpose_ref(const Ref& in, const std::vector<int>& axes) {
  Shape out;
  for (int a : axes) out.push_back(in.shape[std::size_t(a)]);
  return make_ref(out, [&](const std::vector<std::int64_t>& o) {
    std::vector<std::int64_t> src(in.shape.size());
    for (std::size_t k = 0; k < axes.size(); ++k) src[std::size_t(axes[k])] = o[k];
    return in.at(src);
  });
}

::testing::AssertionResult Matches(const Array& a, const Ref& r, double tol = 0) {
  if (a.shape() != r.shape)
    return ::testing::AssertionFailure() << "shape " << shape_text(a.shape()) << ", expected " << shape_text(r.shape);
  auto h = a.get<double>();
  if (std::int64_t(h.size()) != numel(r.shape))
    return ::testing::AssertionFailure() << "get() returned " << h.size() << " values for shape "
                                         << shape_text(r.shape);
  for (std::size_t i = 0; i < h.size(); ++i) {
    bool same = tol == 0 ? h[i] == r.v[i] : std::fabs(h[i] - r.v[i]) <= tol;
    if (!same) {
      std::ostringstream got, want;
      for (std::size_t j = 0; j < h.size() && j < 64; ++j) got << (j ? " " : "") << h[j];
      for (std::size_t j = 0; j < r.v.size() && j < 64; ++j) want << (j ? " " : "") << r.v[j];
      return ::testing::AssertionFailure() << "element " << i << " is " << h[i] << ", expected " << r.v[i]
                                           << "\n  got:      " << got.str() << "\n  expected: " << want.str();
    }
  }
  return ::testing::AssertionSuccess();
}

Ref vec_ref(std::vector<double> v) {
  return Ref{{std::int64_t(v.size())}, std::move(v)};
}
Ref mat_ref(std::int64_t rows, std::int64_t cols, std::vector<double> v) {
  return Ref{{rows, cols}, std::move(v)};
}

// EXPECT_THROW, then the message must contain every given substring.
template <class E> void expect_message(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    for (auto& p : parts)
      EXPECT_NE(what.find(p), std::string::npos) << "message \"" << what << "\" lacks \"" << p << "\"";
    return;
  } catch (...) {
    return; // EXPECT_THROW already reported the wrong type
  }
}
#define EXPECT_ERROR(stmt, Type, ...)                                                                                  \
  do {                                                                                                                 \
    EXPECT_THROW((void)(stmt), Type);                                                                                  \
    expect_message<Type>([&] { (void)(stmt); }, {__VA_ARGS__});                                                        \
  } while (0)

// ---- reshape ----------------------------------------------------------------------------------------------

TEST(Reshape, ContiguousWithMinusOne) {
  Ref r = iota_ref({2, 3, 4});
  Array a = to_array(r);
  EXPECT_TRUE(Matches(a.reshape({4, -1}), Ref{{4, 6}, r.v}));
  EXPECT_TRUE(Matches(a.reshape({-1, 2}), Ref{{12, 2}, r.v}));
  EXPECT_TRUE(Matches(a.reshape({-1}), Ref{{24}, r.v}));
  EXPECT_TRUE(Matches(a.ravel(), Ref{{24}, r.v}));
  EXPECT_TRUE(Matches(lf::reshape(a, {1, 24, 1}), Ref{{1, 24, 1}, r.v}));
  EXPECT_TRUE(Matches(a.reshape({2, 3, 4}), r));
  // Reshape of a reshape.
  EXPECT_TRUE(Matches(a.reshape({6, 4}).reshape({3, 2, -1}), Ref{{3, 2, 4}, r.v}));
}

TEST(Reshape, OfTransposedViewIsCOrder) {
  Ref r = iota_ref({3, 4});
  Array a = to_array(r);
  Ref t = transpose_ref(r, {1, 0}); // (4, 3), C order of the transposed values
  EXPECT_TRUE(Matches(a.T().reshape({2, 6}), Ref{{2, 6}, t.v}));
  EXPECT_TRUE(Matches(a.T().reshape({-1}), Ref{{12}, t.v}));
  EXPECT_TRUE(Matches(a.T().ravel().reshape({3, 4}), Ref{{3, 4}, t.v}));

  // A strided slice, then reshape.
  Ref s = select(r, {All(3), L({0, 2})});
  EXPECT_TRUE(Matches(a(all_of, slice(none, none, 2)).reshape({-1}), Ref{{6}, s.v}));
  // A flipped view, then reshape.
  Ref f = select(r, {L({2, 1, 0}), L({3, 2, 1, 0})});
  EXPECT_TRUE(Matches(lf::flip(a).reshape({2, 6}), Ref{{2, 6}, f.v}));
  // 3-D permutation, then reshape to 2-D.
  Ref r3 = iota_ref({2, 3, 4});
  Ref p = transpose_ref(r3, {2, 0, 1});
  EXPECT_TRUE(Matches(to_array(r3).transpose({2, 0, 1}).reshape({8, 3}), Ref{{8, 3}, p.v}));
}

TEST(Reshape, OfLazyExpression) {
  Ref r = iota_ref({2, 3, 4});
  Array a = to_array(r);
  Ref plus1 = make_ref(r.shape, [&](auto& i) { return r.at(i) + 1; });
  EXPECT_TRUE(Matches((a + 1.0).reshape({6, 4}), Ref{{6, 4}, plus1.v}));
  // A transposed lazy expression, reshaped.
  Ref a2 = iota_ref({3, 4});
  Array b = to_array(a2);
  Ref t = transpose_ref(make_ref({3, 4}, [&](auto& i) { return a2.at(i) * 2; }), {1, 0});
  EXPECT_TRUE(Matches((b * 2.0).T().reshape({-1}), Ref{{12}, t.v}));
  EXPECT_TRUE(Matches((b * 2.0).T().reshape({6, 2}).reshape({2, 6}), Ref{{2, 6}, t.v}));
  // An expression over a reshape of an expression.
  Ref sum = make_ref({4, 3}, [&](auto& i) { return a2.v[std::size_t(i[0] * 3 + i[1])] + 1 + t.at(i); });
  EXPECT_TRUE(Matches((b + 1.0).reshape({4, 3}) + (b * 2.0).T(), sum));
  // Empty.
  EXPECT_TRUE(Matches(lf::zeros({0, 3}).reshape({-1, 3}), Ref{{0, 3}, {}}));
  EXPECT_TRUE(Matches(lf::zeros({0, 3}).reshape({3, 0, 5}), Ref{{3, 0, 5}, {}}));
}

// ---- transpose, expand_dims, squeeze, broadcast_to, flip, roll ------------------------------------------

TEST(Transpose, PermutationsAndNegativeAxes) {
  Ref r = iota_ref({2, 3, 4});
  Array a = to_array(r);
  EXPECT_TRUE(Matches(a.transpose({1, 2, 0}), transpose_ref(r, {1, 2, 0})));
  EXPECT_TRUE(Matches(a.transpose({-1, 0, -2}), transpose_ref(r, {2, 0, 1})));
  EXPECT_TRUE(Matches(lf::permute(a, {0, -1, 1}), transpose_ref(r, {0, 2, 1})));
  EXPECT_TRUE(Matches(lf::transpose(a, {0, 1, 2}), r));
  EXPECT_TRUE(Matches(a.T(), transpose_ref(r, {2, 1, 0})));
  EXPECT_TRUE(Matches(lf::transpose(a), transpose_ref(r, {2, 1, 0})));
  EXPECT_TRUE(Matches(a.T().T(), r));
  // Transpose of a permuted view, and of a lazy expression.
  EXPECT_TRUE(Matches(a.transpose({1, 2, 0}).transpose({2, 0, 1}), r));
  Ref neg = make_ref(r.shape, [&](auto& i) { return -r.at(i); });
  EXPECT_TRUE(Matches((-a).transpose({2, 0, 1}), transpose_ref(neg, {2, 0, 1})));
  // 1-D and 0-d transposes are the identity.
  EXPECT_TRUE(Matches(to_array(iota_ref({5})).T(), iota_ref({5})));
  EXPECT_TRUE(Matches(lf::full({}, 3.0).T(), Ref{{}, {3.0}}));
}

// ascontiguousarray: a C-order copy of a view (a permute, a broadcast, a slice, a fill) with the view's values, whose
// buffer is contiguous; an array whose value is (or will be) a contiguous buffer of its own comes back as it is.
TEST(AsContiguousArray, CopiesViewsIntoCOrderAndKeepsContiguousArrays) {
  Ref r = iota_ref({2, 3, 4});
  Array a = to_array(r);
  for (std::vector<int> axes : {std::vector<int>{1, 2, 0}, {2, 1, 0}, {0, 2, 1}, {1, 0, 2}}) {
    Array c = lf::ascontiguousarray(a.transpose(axes));
    EXPECT_FALSE(c.is_materialized());
    EXPECT_TRUE(Matches(c, transpose_ref(r, axes)));
    EXPECT_TRUE(c.is_materialized());
  }
  EXPECT_TRUE(Matches(lf::ascontiguousarray(a(slice(0, none), slice(2, 0, -1))), make_ref({2, 2, 4}, [&](auto& i) {
                        return r.at({i[0], 2 - i[1], i[2]});
                      })));
  EXPECT_TRUE(Matches(lf::ascontiguousarray(lf::broadcast_to(to_array(iota_ref({4})), {3, 4})),
                      make_ref({3, 4}, [&](auto& i) { return double(i[1]); })));
  EXPECT_TRUE(Matches(lf::ascontiguousarray(lf::full({2, 2}, 7.0)), Ref{{2, 2}, {7, 7, 7, 7}}));
  // Contiguous values: the same array (node), no copy.
  EXPECT_EQ(graph_node(lf::ascontiguousarray(a)), graph_node(a));
  Array lazy = a * 2.0;
  EXPECT_EQ(graph_node(lf::ascontiguousarray(lazy)), graph_node(lazy));
  Array evaluated_view = a.T();
  evaluated_view.eval();
  EXPECT_NE(graph_node(lf::ascontiguousarray(evaluated_view)), graph_node(evaluated_view));
  // Every element type, through the copy.
  for (int t = 0; t < lf::kNumDTypes; ++t) {
    const DType type = DType(t);
    Array copy = lf::ascontiguousarray(to_array(iota_ref({3, 5})).astype(type).eval().T());
    if (lf::is_complex(type)) copy = lf::real(copy);
    Ref want = make_ref({5, 3}, [&](auto& i) {
      const double v = double(i[1] * 5 + i[0]);
      return type == DType::Bool ? double(v != 0) : v;
    });
    EXPECT_TRUE(Matches(copy.astype(DType::Float64), want)) << lf::dtype_name(type);
  }
}

TEST(ExpandDims, AllPositions) {
  Ref r = iota_ref({2, 3});
  Array a = to_array(r);
  EXPECT_TRUE(Matches(lf::expand_dims(a, 0), Ref{{1, 2, 3}, r.v}));
  EXPECT_TRUE(Matches(lf::expand_dims(a, 1), Ref{{2, 1, 3}, r.v}));
  EXPECT_TRUE(Matches(lf::expand_dims(a, 2), Ref{{2, 3, 1}, r.v}));
  EXPECT_TRUE(Matches(lf::expand_dims(a, -1), Ref{{2, 3, 1}, r.v}));
  EXPECT_TRUE(Matches(lf::expand_dims(a, -3), Ref{{1, 2, 3}, r.v}));
  // Of a transposed view: the values stay the transposed ones.
  EXPECT_TRUE(Matches(lf::expand_dims(a.T(), 1), Ref{{3, 1, 2}, transpose_ref(r, {1, 0}).v}));
}

TEST(Squeeze, AllAndGivenAxes) {
  Ref r = iota_ref({1, 3, 1, 2});
  Array a = to_array(r);
  EXPECT_TRUE(Matches(lf::squeeze(a), Ref{{3, 2}, r.v}));
  EXPECT_TRUE(Matches(lf::squeeze(a, std::vector<int>{0}), Ref{{3, 1, 2}, r.v}));
  EXPECT_TRUE(Matches(lf::squeeze(a, std::vector<int>{-2}), Ref{{1, 3, 2}, r.v}));
  EXPECT_TRUE(Matches(lf::squeeze(a, std::vector<int>{0, 2}), Ref{{3, 2}, r.v}));
  EXPECT_TRUE(Matches(lf::squeeze(lf::full({1, 1}, 4.0)), Ref{{}, {4.0}}));
  // Squeeze of an expression.
  Ref twice = make_ref({3, 2}, [&](auto& i) { return 2 * r.v[std::size_t(i[0] * 2 + i[1])]; });
  EXPECT_TRUE(Matches(lf::squeeze(a * 2.0), twice));
}

TEST(BroadcastTo, Shapes) {
  Ref col = iota_ref({3, 1});
  EXPECT_TRUE(Matches(lf::broadcast_to(to_array(col), {2, 3, 4}), make_ref({2, 3, 4}, [&](auto& i) {
                        return col.at({i[1], 0});
                      })));
  Ref row = iota_ref({4}, 10);
  EXPECT_TRUE(
      Matches(lf::broadcast_to(to_array(row), {3, 4}), make_ref({3, 4}, [&](auto& i) { return row.at({i[1]}); })));
  EXPECT_TRUE(Matches(lf::broadcast_to(lf::full({}, 2.5), {2, 2}), Ref{{2, 2}, {2.5, 2.5, 2.5, 2.5}}));
  EXPECT_TRUE(Matches(lf::broadcast_to(to_array(row), {4}), row));
  // Of a lazy expression and of a transposed view.
  EXPECT_TRUE(Matches(lf::broadcast_to(to_array(row) + 1.0, {2, 4}),
                      make_ref({2, 4}, [&](auto& i) { return row.at({i[1]}) + 1; })));
  Ref r = iota_ref({1, 3});
  EXPECT_TRUE(Matches(lf::broadcast_to(to_array(r).T(), {3, 5}), make_ref({3, 5}, [&](auto& i) {
                        return r.at({0, i[0]});
                      })));
}

TEST(Flip, OneAxisAndAll) {
  Ref r = iota_ref({3, 4});
  Array a = to_array(r);
  EXPECT_TRUE(Matches(lf::flip(a, 0), select(r, {L({2, 1, 0}), All(4)})));
  EXPECT_TRUE(Matches(lf::flip(a, 1), select(r, {All(3), L({3, 2, 1, 0})})));
  EXPECT_TRUE(Matches(lf::flip(a, -1), select(r, {All(3), L({3, 2, 1, 0})})));
  EXPECT_TRUE(Matches(lf::flip(a), select(r, {L({2, 1, 0}), L({3, 2, 1, 0})})));
  EXPECT_TRUE(Matches(lf::flip(lf::flip(a)), r));
  Ref r3 = iota_ref({2, 3, 4});
  EXPECT_TRUE(Matches(lf::flip(to_array(r3), 1), select(r3, {All(2), L({2, 1, 0}), All(4)})));
  EXPECT_TRUE(Matches(lf::flip(to_array(r3)), select(r3, {L({1, 0}), L({2, 1, 0}), L({3, 2, 1, 0})})));
  // Of an expression.
  Ref sq = make_ref(r.shape, [&](auto& i) { return r.at(i) * r.at(i); });
  EXPECT_TRUE(Matches(lf::flip(a * a, 0), select(sq, {L({2, 1, 0}), All(4)})));
}

TEST(Roll, FlattenedOneDimensional) {
  Ref r = iota_ref({10});
  Array a = to_array(r);
  auto rolled = [&](std::int64_t shift) {
    return make_ref({10}, [&](auto& i) { return r.at({((i[0] - shift) % 10 + 10) % 10}); });
  };
  for (std::int64_t shift : {0, 1, 3, -2, 9, 10, 13, -13, 25, -101}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    EXPECT_TRUE(Matches(lf::roll(a, shift), rolled(shift)));
    EXPECT_TRUE(Matches(lf::roll(a, shift, 0), rolled(shift)));
  }
}

TEST(Roll, AlongAxisAndFlattened2D) {
  Ref r = iota_ref({3, 4});
  Array a = to_array(r);
  auto mod = [](std::int64_t x, std::int64_t n) { return ((x % n) + n) % n; };
  for (std::int64_t shift : {1, -1, 5, -7}) {
    SCOPED_TRACE("shift " + std::to_string(shift));
    EXPECT_TRUE(Matches(lf::roll(a, shift, 0), make_ref({3, 4}, [&](auto& i) {
                          return r.at({mod(i[0] - shift, 3), i[1]});
                        })));
    EXPECT_TRUE(Matches(lf::roll(a, shift, 1), make_ref({3, 4}, [&](auto& i) {
                          return r.at({i[0], mod(i[1] - shift, 4)});
                        })));
    EXPECT_TRUE(Matches(lf::roll(a, shift, -1), make_ref({3, 4}, [&](auto& i) {
                          return r.at({i[0], mod(i[1] - shift, 4)});
                        })));
    // Flattened: roll the C-order sequence, keep the shape.
    EXPECT_TRUE(Matches(lf::roll(a, shift),
                        make_ref({3, 4}, [&](auto& i) { return r.v[std::size_t(mod(i[0] * 4 + i[1] - shift, 12))]; })));
  }
  // Roll of a transposed view (flattened in the view's C order) and of an expression.
  Ref t = transpose_ref(r, {1, 0});
  EXPECT_TRUE(Matches(lf::roll(a.T(), 2),
                      make_ref({4, 3}, [&](auto& i) { return t.v[std::size_t(mod(i[0] * 3 + i[1] - 2, 12))]; })));
  EXPECT_TRUE(Matches(lf::roll(a + 1.0, 1, 0), make_ref({3, 4}, [&](auto& i) {
                        return r.at({mod(i[0] - 1, 3), i[1]}) + 1;
                      })));
}

// ---- indexing -------------------------------------------------------------------------------------------

TEST(Indexing, Integers) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x(1), select(r, {I(1), All(5)})));
  EXPECT_TRUE(Matches(x(-1), select(r, {I(3), All(5)})));
  EXPECT_TRUE(Matches(x(-4), select(r, {I(0), All(5)})));
  EXPECT_TRUE(Matches(x(1, 2), Ref{{}, {7}}));
  EXPECT_TRUE(Matches(x(-1, -1), Ref{{}, {19}}));
  EXPECT_TRUE(Matches(x(all_of, 3), select(r, {All(4), I(3)})));
  EXPECT_TRUE(Matches(x(all_of, -5), select(r, {All(4), I(0)})));
  EXPECT_EQ(x(2, 3).item<double>(), 13.0);
  EXPECT_EQ(x(2).ndim(), 1);
  EXPECT_EQ(x(2, 3).ndim(), 0);
}

TEST(Indexing, OneDimensionalSlices) {
  Ref r = iota_ref({10});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x(slice(none, none, -1)), select(r, {L({9, 8, 7, 6, 5, 4, 3, 2, 1, 0})}))); // x[::-1]
  EXPECT_TRUE(Matches(x(slice(1, none)), select(r, {L(seq(1, 9))})));                             // x[1:]
  EXPECT_TRUE(Matches(x(slice(none, -1)), select(r, {L(seq(0, 9))})));                            // x[:-1]
  EXPECT_TRUE(Matches(x(slice(5, 1, -2)), select(r, {L({5, 3})})));                               // x[5:1:-2]
  EXPECT_TRUE(Matches(x(slice(-3, none)), select(r, {L({7, 8, 9})})));                            // x[-3:]
  EXPECT_TRUE(Matches(x(slice(none, none, 3)), select(r, {L({0, 3, 6, 9})})));                    // x[::3]
  EXPECT_TRUE(Matches(x(slice(1, none, 4)), select(r, {L({1, 5, 9})})));                          // x[1::4]
  EXPECT_TRUE(Matches(x(slice(8, -12, -3)), select(r, {L({8, 5, 2})})));                          // x[8:-12:-3]
  EXPECT_TRUE(Matches(x(slice(none, -100, -1)), select(r, {L({9, 8, 7, 6, 5, 4, 3, 2, 1, 0})}))); // x[:-100:-1]
  EXPECT_TRUE(Matches(x(slice(-100, 100)), r));                                                   // x[-100:100]
  EXPECT_TRUE(Matches(x(slice(100, none, -1)), select(r, {L({9, 8, 7, 6, 5, 4, 3, 2, 1, 0})})));  // x[100::-1]
  EXPECT_TRUE(Matches(x(slice(-2, none, -4)), select(r, {L({8, 4, 0})})));                        // x[-2::-4]
  EXPECT_TRUE(Matches(x(slice(none, 3, -1)), select(r, {L({9, 8, 7, 6, 5, 4})})));                // x[:3:-1]
  EXPECT_TRUE(Matches(x(slice(3, 4)), select(r, {L({3})})));                                      // x[3:4]
  EXPECT_TRUE(Matches(x(all_of), r));                                                             // x[:]
}

TEST(Indexing, EmptyResults) {
  Ref r = iota_ref({10});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x(slice(3, 1)), Ref{{0}, {}}));       // x[3:1]
  EXPECT_TRUE(Matches(x(slice(2, 8, -1)), Ref{{0}, {}}));   // x[2:8:-1]
  EXPECT_TRUE(Matches(x(slice(10, none)), Ref{{0}, {}}));   // x[10:]
  EXPECT_TRUE(Matches(x(slice(0, 0)), Ref{{0}, {}}));       // x[0:0]
  EXPECT_TRUE(Matches(x(slice(-1, -1, -1)), Ref{{0}, {}})); // x[-1:-1:-1]
  Ref r2 = iota_ref({4, 5});
  Array y = to_array(r2);
  EXPECT_TRUE(Matches(y(slice(3, 1), all_of), Ref{{0, 5}, {}}));
  EXPECT_TRUE(Matches(y(all_of, slice(5, none)), Ref{{4, 0}, {}}));
  EXPECT_EQ(y(slice(3, 1)).size(), 0);
  // Views and expressions of empty arrays.
  EXPECT_TRUE(Matches((y + 1.0)(slice(3, 1)), Ref{{0, 5}, {}}));
  EXPECT_TRUE(Matches(y(slice(3, 1)).T() * 2.0, Ref{{5, 0}, {}}));
  EXPECT_TRUE(Matches(lf::zeros({0, 3}) + 1.0, Ref{{0, 3}, {}}));
}

TEST(Indexing, MultiAxisSlices) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x(slice(none, none, -1), slice(1, none, 2)), select(r, {L({3, 2, 1, 0}), L({1, 3})})));
  EXPECT_TRUE(Matches(x(slice(-2, none), slice(none, -1)), select(r, {L({2, 3}), L({0, 1, 2, 3})})));
  EXPECT_TRUE(Matches(x(all_of, slice(4, 0, -2)), select(r, {All(4), L({4, 2})})));
  EXPECT_TRUE(Matches(x(slice(1, 3), -2), select(r, {L({1, 2}), I(3)})));
  EXPECT_TRUE(Matches(x(2, slice(none, none, -2)), select(r, {I(2), L({4, 2, 0})})));
}

TEST(Indexing, NewAxisAndEllipsis) {
  Ref r = iota_ref({2, 3, 4});
  Array y = to_array(r);
  EXPECT_TRUE(Matches(y(1), select(r, {I(1), All(3), All(4)})));
  EXPECT_TRUE(Matches(y(all_of, 1), select(r, {All(2), I(1), All(4)})));
  EXPECT_TRUE(Matches(y(ellipsis, 2), select(r, {All(2), All(3), I(2)})));
  EXPECT_TRUE(Matches(y(0, ellipsis, -1), select(r, {I(0), All(3), I(3)})));
  EXPECT_TRUE(Matches(y(ellipsis), r));
  EXPECT_TRUE(Matches(y(0, 1, 2, ellipsis), Ref{{}, {r.at({0, 1, 2})}}));
  EXPECT_TRUE(Matches(y(newaxis), select(r, {N(), All(2), All(3), All(4)})));
  EXPECT_TRUE(Matches(y(none, 1), select(r, {N(), I(1), All(3), All(4)})));
  EXPECT_TRUE(Matches(y(all_of, newaxis, 1), select(r, {All(2), N(), I(1), All(4)})));
  EXPECT_TRUE(Matches(y(ellipsis, newaxis), select(r, {All(2), All(3), All(4), N()})));
  EXPECT_TRUE(Matches(y(1, newaxis, ellipsis, newaxis, 0), select(r, {I(1), N(), All(3), N(), I(0)})));
  EXPECT_TRUE(Matches(y(newaxis, ellipsis, slice(none, none, -1), newaxis),
                      select(r, {N(), All(2), All(3), L({3, 2, 1, 0}), N()})));
  EXPECT_TRUE(Matches(y(slice(none, none, -1), ellipsis, slice(1, 3)), select(r, {L({1, 0}), All(3), L({1, 2})})));
  EXPECT_TRUE(Matches(y(newaxis, newaxis, 1, 2, 3), Ref{{1, 1}, {r.at({1, 2, 3})}}));
  // The index as a vector.
  EXPECT_TRUE(Matches(y.index_with({Index(std::int64_t(-1)), Index(ellipsis), Index(newaxis)}),
                      select(r, {I(1), All(3), All(4), N()})));
  // A 0-d array indexed with newaxis / ellipsis.
  Array s = lf::full({}, 5.0);
  EXPECT_TRUE(Matches(s(newaxis), Ref{{1}, {5.0}}));
  EXPECT_TRUE(Matches(s(ellipsis), Ref{{}, {5.0}}));
}

TEST(Indexing, ViewsOfViews) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x(slice(1, none))(slice(none, none, -1), 2), select(r, {L({3, 2, 1}), I(2)})));
  EXPECT_TRUE(Matches(x.T()(1), select(r, {All(4), I(1)})));
  EXPECT_TRUE(Matches(x.T()(slice(none, none, 2))(slice(none, none, -1)),
                      transpose_ref(select(r, {All(4), L({4, 2, 0})}), {1, 0})));
  EXPECT_TRUE(Matches(lf::flip(x)(0), select(r, {I(3), L({4, 3, 2, 1, 0})})));
  EXPECT_TRUE(Matches(x(slice(none, none, 2))(slice(none, none, -1)), select(r, {L({2, 0}), All(5)})));
  EXPECT_TRUE(Matches(x(slice(1, none))(slice(1, none))(slice(1, none)), select(r, {L({3}), All(5)})));
  EXPECT_TRUE(Matches(x(slice(none, none, -1), slice(none, none, -1))(slice(1, none, 2), slice(none, none, -3)),
                      select(r, {L({2, 0}), L({0, 3})})));
  EXPECT_TRUE(
      Matches(x(newaxis)(0, ellipsis, newaxis)(slice(none, none, -1), 1), select(r, {L({3, 2, 1, 0}), I(1), N()})));
  EXPECT_TRUE(Matches(lf::roll(x, 1, 1)(slice(1, 3)), make_ref({2, 5}, [&](auto& i) {
                        return r.at({i[0] + 1, (i[1] + 4) % 5});
                      })));
  EXPECT_TRUE(
      Matches(x.reshape({5, 4})(slice(none, none, -2)), Ref{{3, 4}, {16, 17, 18, 19, 8, 9, 10, 11, 0, 1, 2, 3}}));
}

TEST(Indexing, ViewsOfLazyExpressions) {
  Ref ra = iota_ref({4, 5});
  Ref rb = iota_ref({4, 5}, 100);
  Array a = to_array(ra), b = to_array(rb);
  Ref sum = make_ref({4, 5}, [&](auto& i) { return ra.at(i) + rb.at(i); });
  EXPECT_TRUE(Matches((a + b)(slice(none, none, -1)), select(sum, {L({3, 2, 1, 0}), All(5)})));
  EXPECT_TRUE(Matches((a + b)(1, slice(none, none, -2)), select(sum, {I(1), L({4, 2, 0})})));
  EXPECT_TRUE(Matches((a + b).T()(0), select(sum, {All(4), I(0)})));
  EXPECT_TRUE(Matches((a + b)(newaxis, ellipsis, 3), select(sum, {N(), All(4), I(3)})));
  // An expression over views of an expression.
  Ref mixed = make_ref({4, 5}, [&](auto& i) { return sum.at({3 - i[0], i[1]}) * ra.at({i[0], 4 - i[1]}); });
  EXPECT_TRUE(Matches((a + b)(slice(none, none, -1)) * a(all_of, slice(none, none, -1)), mixed));
  // A view of an expression whose result also is used whole.
  Array s = a + b;
  Array v = s(slice(1, 3));
  lf::eval(s, v);
  EXPECT_TRUE(Matches(s, sum));
  EXPECT_TRUE(Matches(v, select(sum, {L({1, 2}), All(5)})));
}

TEST(Indexing, ViewsOfMaterializedArrays) {
  Ref ra = iota_ref({4, 5});
  Array a = to_array(ra);
  Array c = a * 3.0;
  c.eval();
  EXPECT_TRUE(c.is_materialized());
  Ref tri = make_ref({4, 5}, [&](auto& i) { return ra.at(i) * 3; });
  EXPECT_TRUE(Matches(c(slice(none, none, -1), slice(1, none, 2)), select(tri, {L({3, 2, 1, 0}), L({1, 3})})));
  EXPECT_TRUE(Matches(c.T()(slice(1, 3)), transpose_ref(select(tri, {All(4), L({1, 2})}), {1, 0})));
  EXPECT_TRUE(Matches(c(-1, newaxis), select(tri, {I(3), N(), All(5)})));
  // A materialized view, viewed again.
  Array v = c(slice(none, none, -1));
  v.eval();
  EXPECT_TRUE(Matches(v(slice(none, none, 2), 0), select(tri, {L({3, 1}), I(0)})));
  EXPECT_TRUE(Matches(v.reshape({-1}), Ref{{20}, select(tri, {L({3, 2, 1, 0}), All(5)}).v}));
}

// ---- slice assignment --------------------------------------------------------------------------------------

TEST(SetSlice, ValueSemanticsScalar) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r);
  Array y = x;          // another handle to the same value
  Array row = x(1);     // a view of it
  Array lazy = x + 0.0; // an expression over it
  Array z = x.at(1, slice(1, 4)).set(100.0);
  Ref want = r;
  for (int j = 1; j < 4; ++j) want.v[std::size_t(5 + j)] = 100;
  EXPECT_TRUE(Matches(z, want));
  EXPECT_TRUE(Matches(x, r));
  EXPECT_TRUE(Matches(y, r));
  EXPECT_TRUE(Matches(row, select(r, {I(1), All(5)})));
  EXPECT_TRUE(Matches(lazy, r));
  EXPECT_EQ(graph_node(x), graph_node(y));
  EXPECT_NE(graph_node(z), graph_node(x));
  // The same after x is materialized and z evaluated: z never writes into x's buffer.
  z.eval();
  EXPECT_TRUE(Matches(x, r));
  EXPECT_TRUE(Matches(z, want));
}

TEST(SetSlice, ValueSemanticsOfMaterializedBase) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r) * 1.0;
  x.eval();
  Array y = x;
  Array z = x.at(all_of, 0).set(-1.0);
  z.eval();
  Ref want = make_ref({4, 5}, [&](auto& i) { return i[1] == 0 ? -1.0 : r.at(i); });
  EXPECT_TRUE(Matches(z, want));
  EXPECT_TRUE(Matches(x, r));
  EXPECT_TRUE(Matches(y, r));
  // Chained sets keep every earlier version.
  Array z2 = z.at(0).set(7.0);
  Ref want2 = make_ref({4, 5}, [&](auto& i) { return i[0] == 0 ? 7.0 : want.at(i); });
  EXPECT_TRUE(Matches(z2, want2));
  EXPECT_TRUE(Matches(z, want));
  EXPECT_TRUE(Matches(x, r));
}

TEST(SetSlice, BroadcastingValue) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r);
  // A row broadcast over rows.
  Array z = x.at(all_of, slice(1, 3)).set(lf::asarray({10.0, 20.0}));
  EXPECT_TRUE(Matches(z, make_ref({4, 5}, [&](auto& i) { return i[1] == 1 ? 10.0 : i[1] == 2 ? 20.0 : r.at(i); })));
  // A column broadcast over columns.
  Array col = lf::asarray(std::vector<double>{-1, -2, -3, -4}, {4, 1});
  Array z2 = x.at(all_of, slice(none, 2)).set(col);
  EXPECT_TRUE(Matches(z2, make_ref({4, 5}, [&](auto& i) { return i[1] < 2 ? -1.0 - double(i[0]) : r.at(i); })));
  // A 0-d array.
  Array z3 = x.at(slice(2, none)).set(lf::full({}, 9.0));
  EXPECT_TRUE(Matches(z3, make_ref({4, 5}, [&](auto& i) { return i[0] >= 2 ? 9.0 : r.at(i); })));
  // A value with new axes in the index: the region x[1, newaxis, :] has shape (1, 5).
  Array z4 = x.at(1, newaxis, all_of).set(lf::asarray(std::vector<double>{5, 6, 7, 8, 9}, {1, 5}));
  EXPECT_TRUE(Matches(z4, make_ref({4, 5}, [&](auto& i) { return i[0] == 1 ? 5.0 + double(i[1]) : r.at(i); })));
  EXPECT_TRUE(Matches(x, r));
}

TEST(SetSlice, NegativeStepAndStridedRegions) {
  Ref r = iota_ref({10});
  Array x = to_array(r);
  // x[::-2] = [100, 101, 102, 103, 104]: positions 9, 7, 5, 3, 1 in that order.
  Array z = x.at(slice(none, none, -2)).set(lf::asarray({100.0, 101.0, 102.0, 103.0, 104.0}));
  EXPECT_TRUE(Matches(z, vec_ref({0, 104, 2, 103, 4, 102, 6, 101, 8, 100})));
  // x[7:2:-3] = [50, 60]: positions 7, 4.
  EXPECT_TRUE(Matches(x.at(slice(7, 2, -3)).set(lf::asarray({50.0, 60.0})), vec_ref({0, 1, 2, 3, 60, 5, 6, 50, 8, 9})));
  // x[1::3] = 0.
  EXPECT_TRUE(Matches(x.at(slice(1, none, 3)).set(0.0), vec_ref({0, 0, 2, 3, 0, 5, 6, 0, 8, 9})));
  EXPECT_TRUE(Matches(x, r));

  Ref r2 = iota_ref({4, 5});
  Array y = to_array(r2);
  // y[::2, 1::2] = -1: rows 0, 2; columns 1, 3.
  EXPECT_TRUE(Matches(y.at(slice(none, none, 2), slice(1, none, 2)).set(-1.0),
                      make_ref({4, 5}, [&](auto& i) { return (i[0] % 2 == 0 && i[1] % 2 == 1) ? -1.0 : r2.at(i); })));
  // y[::-1, 4:0:-2] = v (4, 2): v[i][j] lands in row 3 - i, column 4 - 2j.
  Ref v = iota_ref({4, 2}, 1000);
  Array zz = y.at(slice(none, none, -1), slice(4, 0, -2)).set(to_array(v));
  EXPECT_TRUE(Matches(zz, make_ref({4, 5}, [&](auto& i) {
                        if (i[1] == 4 || i[1] == 2) return v.at({3 - i[0], (4 - i[1]) / 2});
                        return r2.at(i);
                      })));
  // A negative-step region whose value is a broadcast row, reversed in the region's order.
  EXPECT_TRUE(
      Matches(y.at(slice(none, none, -3), slice(none, none, -1)).set(lf::asarray({1.0, 2.0, 3.0, 4.0, 5.0})),
              make_ref({4, 5}, [&](auto& i) { return (i[0] == 3 || i[0] == 0) ? 5.0 - double(i[1]) : r2.at(i); })));
  EXPECT_TRUE(Matches(y, r2));
}

TEST(SetSlice, IntegerIndices) {
  Ref r = iota_ref({4, 5});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x.at(2, 3).set(7.5),
                      make_ref({4, 5}, [&](auto& i) { return (i[0] == 2 && i[1] == 3) ? 7.5 : r.at(i); })));
  EXPECT_TRUE(Matches(x.at(-1, -1).set(-9.0),
                      make_ref({4, 5}, [&](auto& i) { return (i[0] == 3 && i[1] == 4) ? -9.0 : r.at(i); })));
  EXPECT_TRUE(Matches(x.at(-1).set(lf::asarray({1.0, 2.0, 3.0, 4.0, 5.0})),
                      make_ref({4, 5}, [&](auto& i) { return i[0] == 3 ? 1.0 + double(i[1]) : r.at(i); })));
  EXPECT_TRUE(Matches(x.at(ellipsis, 0).set(lf::asarray({-1.0, -2.0, -3.0, -4.0})),
                      make_ref({4, 5}, [&](auto& i) { return i[1] == 0 ? -1.0 - double(i[0]) : r.at(i); })));
  EXPECT_TRUE(Matches(x.at(0).set(5.0), make_ref({4, 5}, [&](auto& i) { return i[0] == 0 ? 5.0 : r.at(i); })));
  // A value computed from the base itself: x[1] = x[2] * 10.
  EXPECT_TRUE(Matches(x.at(1).set(x(2) * 10.0), make_ref({4, 5}, [&](auto& i) {
                        return i[0] == 1 ? 10 * r.at({2, i[1]}) : r.at(i);
                      })));
  // A lazy base.
  EXPECT_TRUE(
      Matches((x + 1.0).at(0).set(0.0), make_ref({4, 5}, [&](auto& i) { return i[0] == 0 ? 0.0 : r.at(i) + 1; })));
  // Chained.
  EXPECT_TRUE(Matches(x.at(0).set(1.0).at(3, 1).set(2.0), make_ref({4, 5}, [&](auto& i) {
                        return i[0] == 0 ? 1.0 : (i[0] == 3 && i[1] == 1) ? 2.0 : r.at(i);
                      })));
  // An empty region leaves the array as it is.
  EXPECT_TRUE(Matches(x.at(slice(3, 1)).set(5.0), r));
  EXPECT_TRUE(Matches(x, r));
}

TEST(SetSlice, DTypes) {
  Array xi = lf::arange(6).reshape({2, 3});
  ASSERT_EQ(xi.dtype(), DType::Int64);
  Array z = xi.at(1).set(9);
  EXPECT_EQ(z.dtype(), DType::Int64);
  EXPECT_EQ(z.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{0, 1, 2, 9, 9, 9}));
  // A float value is converted to the base's type (NumPy truncates: a[0] = 2.7 stores 2).
  Array z2 = xi.at(0, 0).set(2.7);
  EXPECT_EQ(z2.dtype(), DType::Int64);
  EXPECT_EQ(z2.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{2, 1, 2, 3, 4, 5}));
  Array xf = lf::zeros({3}, DType::Float32);
  Array z3 = xf.at(slice(1, none)).set(lf::asarray({1.5, 2.5}));
  EXPECT_EQ(z3.dtype(), DType::Float32);
  EXPECT_EQ(z3.get<float>().to_vector(), (std::vector<float>{0, 1.5f, 2.5f}));
  Array xb = lf::zeros({4}, DType::Bool);
  EXPECT_EQ(xb.at(slice(none, none, 2)).set(true).get<bool>().to_vector(),
            (std::vector<bool>{true, false, true, false}));
}

TEST(SetSlice, SetAtRebindsOnlyThatHandle) {
  Ref r = iota_ref({3, 4});
  Array x = to_array(r);
  Array y = x;
  auto old_node = graph_node(x);
  Array& ret = x.set_at({std::int64_t(0), slice(1, 3)}, lf::asarray({50.0, 60.0}));
  EXPECT_EQ(&ret, &x);
  EXPECT_NE(graph_node(x), old_node);
  EXPECT_EQ(graph_node(y), old_node);
  Ref want = make_ref({3, 4}, [&](auto& i) {
    return (i[0] == 0 && i[1] == 1) ? 50.0 : (i[0] == 0 && i[1] == 2) ? 60.0 : r.at(i);
  });
  EXPECT_TRUE(Matches(x, want));
  EXPECT_TRUE(Matches(y, r));
  // A second set_at on the new version; y still sees the original.
  x.set_at({Index(ellipsis), Index(std::int64_t(-1))}, lf::full({}, -5.0));
  EXPECT_TRUE(Matches(x, make_ref({3, 4}, [&](auto& i) { return i[1] == 3 ? -5.0 : want.at(i); })));
  EXPECT_TRUE(Matches(y, r));
}

TEST(SetSlice, OverlappingValueFromTheBase) {
  // x[1:] = x[:-1] shifts by one; the value is read from the old version.
  Ref r = iota_ref({6}, 1);
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x.at(slice(1, none)).set(x(slice(none, -1))), vec_ref({1, 1, 2, 3, 4, 5})));
  EXPECT_TRUE(Matches(x.at(slice(none, none, -1)).set(x), vec_ref({6, 5, 4, 3, 2, 1})));
  Array y = x * 1.0;
  y.eval();
  y.set_at({slice(none, -1)}, y(slice(1, none)));
  EXPECT_TRUE(Matches(y, vec_ref({2, 3, 4, 5, 6, 6})));
  EXPECT_TRUE(Matches(x, r));
}

TEST(SetSlice, BaseIsABroadcastView) {
  // A materialized broadcast has stride 0: setting one row must not change the others.
  Array row = lf::asarray({1.0, 2.0, 3.0});
  Array b = lf::broadcast_to(row, {3, 3});
  Array z = b.at(0).set(9.0);
  EXPECT_TRUE(Matches(z, mat_ref(3, 3, {9, 9, 9, 1, 2, 3, 1, 2, 3})));
  EXPECT_TRUE(Matches(b, mat_ref(3, 3, {1, 2, 3, 1, 2, 3, 1, 2, 3})));
  EXPECT_TRUE(Matches(row, vec_ref({1, 2, 3})));
  Array t = b.T().at(all_of, 1).set(lf::asarray({-1.0, -2.0, -3.0}));
  EXPECT_TRUE(Matches(t, mat_ref(3, 3, {1, -1, 1, 2, -2, 2, 3, -3, 3})));
}

TEST(Views, DTypesArePreserved) {
  Array i32 = lf::asarray({{1, 2, 3}, {4, 5, 6}});
  Array t = i32.T()(slice(none, none, -1));
  EXPECT_EQ(t.dtype(), DType::Int32);
  EXPECT_EQ(t.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{3, 6, 2, 5, 1, 4}));
  Array b = lf::asarray({{true, false, false}, {false, true, true}});
  Array fb = lf::flip(b, 1).reshape({-1});
  EXPECT_EQ(fb.dtype(), DType::Bool);
  EXPECT_EQ(fb.get<bool>().to_vector(), (std::vector<bool>{false, false, true, true, true, false}));
  Array rb = lf::roll(b.T(), 1);
  EXPECT_EQ(rb.dtype(), DType::Bool);
  EXPECT_EQ(rb.get<bool>().to_vector(), (std::vector<bool>{true, true, false, false, true, false}));
  Array f32 = lf::asarray({1.5f, 2.5f, 3.5f});
  EXPECT_EQ(f32(slice(none, none, -2)).get<float>().to_vector(), (std::vector<float>{3.5f, 1.5f}));
  EXPECT_EQ(lf::pad(b, {{0, 1}}).get<bool>().to_vector(),
            (std::vector<bool>{true, false, false, false, false, true, true, false, false, false, false, false}));
}

TEST(Views, ZeroSizeAxes) {
  Array e = lf::zeros({0, 3});
  EXPECT_EQ(e(all_of, 1).shape(), (Shape{0}));
  EXPECT_EQ(e(slice(none, none, -1)).shape(), (Shape{0, 3}));
  EXPECT_EQ(lf::flip(e).shape(), (Shape{0, 3}));
  EXPECT_EQ(lf::roll(e, 2, 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(lf::roll(e, 2).shape(), (Shape{0, 3}));
  EXPECT_EQ(e.T().shape(), (Shape{3, 0}));
  EXPECT_EQ(lf::pad(e, {{1, 0}, {0, 0}}).get<double>().to_vector(), (std::vector<double>{0, 0, 0}));
  EXPECT_ERROR(e(0), lf::IndexError, "index 0 is out of bounds for axis 0 with size 0");
  Array v = lf::asarray({1.0, 2.0})(slice(2, none)); // a 0-size view of a buffer
  EXPECT_EQ(v.size(), 0);
  EXPECT_EQ((v + 1.0).get<double>().size(), 0u);
}

TEST(Views, MoreOnBuffersAndExpressions) {
  Ref r = iota_ref({4, 6});
  Array x = to_array(r);
  // A contiguous slice with an offset, reshaped.
  EXPECT_TRUE(Matches(x(slice(1, 3)).reshape({3, 4}), Ref{{3, 4}, iota_ref({12}, 6).v}));
  // Non-contiguous rows, reshaped.
  EXPECT_TRUE(Matches(x(all_of, slice(1, 3)).reshape({-1}), Ref{{8}, select(r, {All(4), L({1, 2})}).v}));
  // Rolling a view along its middle axis; rolling a roll.
  Ref r3 = iota_ref({2, 3, 4});
  Array y = to_array(r3);
  EXPECT_TRUE(Matches(lf::roll(lf::flip(y, 2), 1, 1), make_ref({2, 3, 4}, [&](auto& i) {
                        return r3.at({i[0], (i[1] + 2) % 3, 3 - i[2]});
                      })));
  EXPECT_TRUE(Matches(lf::roll(lf::roll(y, 1, 2), -3, 2), make_ref({2, 3, 4}, [&](auto& i) {
                        return r3.at({i[0], i[1], (i[2] + 2) % 4});
                      })));
  EXPECT_TRUE(Matches(lf::roll(lf::roll(y, 5), 1, 0), make_ref({2, 3, 4}, [&](auto& i) {
                        std::int64_t flat = (((i[0] + 1) % 2) * 12 + i[1] * 4 + i[2] - 5 + 24) % 24;
                        return r3.v[std::size_t(flat)];
                      })));
  // Integer index into a view of an expression, and an item of it.
  EXPECT_EQ((y + 1.0)(slice(none, none, -1))(0, 2, -1).item<double>(), r3.at({1, 2, 3}) + 1);
  EXPECT_EQ(lf::broadcast_to(y(0, 1), {5, 4})(3, 2).item<double>(), r3.at({0, 1, 2}));
  // Views on several operands of one expression, evaluated together.
  Array p = y(0) + y(1)(slice(none, none, -1));
  Array q = lf::squeeze(y(all_of, 2, newaxis)) * 2.0;
  lf::eval(p, q);
  EXPECT_TRUE(Matches(p, make_ref({3, 4}, [&](auto& i) {
                        return r3.at({0, i[0], i[1]}) + r3.at({1, 2 - i[0], i[1]});
                      })));
  EXPECT_TRUE(Matches(q, make_ref({2, 4}, [&](auto& i) { return 2 * r3.at({i[0], 2, i[1]}); })));
}

TEST(Views, LargerArrays) {
  // Big enough for the CPU backend's threads and the GPU's blocks to split the work.
  const std::int64_t R = 301, C = 517;
  Ref r = iota_ref({R, C});
  Array x = to_array(r);
  EXPECT_TRUE(Matches(x.T(), transpose_ref(r, {1, 0})));
  EXPECT_TRUE(Matches(lf::flip(x), make_ref({R, C}, [&](auto& i) { return r.at({R - 1 - i[0], C - 1 - i[1]}); })));
  EXPECT_TRUE(
      Matches(x(slice(none, none, -3), slice(1, none, 7)), make_ref({(R + 2) / 3, (C - 1 + 6) / 7}, [&](auto& i) {
                return r.at({R - 1 - 3 * i[0], 1 + 7 * i[1]});
              })));
  EXPECT_TRUE(Matches(lf::roll(x.T(), 1000), make_ref({C, R}, [&](auto& i) {
                        std::int64_t flat = ((i[0] * R + i[1] - 1000) % (R * C) + R * C) % (R * C);
                        return r.at({flat % R, flat / R});
                      })));
  EXPECT_TRUE(Matches(x.at(slice(none, none, 2), slice(none, none, -2)).set(-1.0), make_ref({R, C}, [&](auto& i) {
                        return (i[0] % 2 == 0 && (C - 1 - i[1]) % 2 == 0) ? -1.0 : r.at(i);
                      })));
}

// Windows of one buffer shifted by 0 to 5 elements, as a stencil reads them: on a GPU each thread reads a
// window's four values at once (one vector where aligned, else one by one). The last window ends at the buffer's
// last element; the 2-D case has rows whose length is not a multiple of four, so alignments vary from row to row.
TEST(Views, ShiftedWindowsOfOneBuffer) {
  for (DType type : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    SCOPED_TRACE(lf::dtype_name(type));
    const std::int64_t n = 4099, m = n - 5;
    Ref r = iota_ref({n}, 1);
    Array x = to_array(r).astype(type);
    for (std::int64_t s = 0; s <= 5; ++s) {
      SCOPED_TRACE("shift " + std::to_string(s));
      Array w = x(slice(s, s + m)) + x(slice(5 - s, n - s)) * 3 + x(slice(5, none));
      EXPECT_TRUE(Matches(w, make_ref({m}, [&](auto& i) {
                            return r.v[std::size_t(s + i[0])] + 3 * r.v[std::size_t(5 - s + i[0])] +
                                   r.v[std::size_t(5 + i[0])];
                          })));
    }
    for (std::int64_t cols : {64, 67}) {
      SCOPED_TRACE("columns " + std::to_string(cols));
      const std::int64_t rows = 37;
      Ref u = iota_ref({rows, cols}, 1);
      Array a = to_array(u).astype(type);
      auto in = slice(1, -1);
      Array step = a(slice(0, -2), in) + a(slice(2, none), in) + a(in, slice(2, none)) * 2 + a(in, slice(0, -2)) * 3 -
                   a(in, in) * 4;
      EXPECT_TRUE(Matches(
          a.at(in, in).set(step), make_ref({rows, cols}, [&](auto& i) {
            const std::int64_t y = i[0], z = i[1];
            if (y == 0 || y == rows - 1 || z == 0 || z == cols - 1) return u.at({y, z});
            return u.at({y - 1, z}) + u.at({y + 1, z}) + 2 * u.at({y, z + 1}) + 3 * u.at({y, z - 1}) - 4 * u.at({y, z});
          })));
    }
  }
}

// ---- concatenate, stack, pad --------------------------------------------------------------------------------

TEST(Concatenate, Axes) {
  Ref ra = iota_ref({2, 3});
  Ref rb = iota_ref({4, 3}, 100);
  Ref rc = iota_ref({2, 2}, 200);
  Array a = to_array(ra), b = to_array(rb), c = to_array(rc);
  EXPECT_TRUE(Matches(lf::concatenate({a, b}), make_ref({6, 3}, [&](auto& i) {
                        return i[0] < 2 ? ra.at(i) : rb.at({i[0] - 2, i[1]});
                      })));
  EXPECT_TRUE(Matches(lf::concatenate({a, b}, 0), make_ref({6, 3}, [&](auto& i) {
                        return i[0] < 2 ? ra.at(i) : rb.at({i[0] - 2, i[1]});
                      })));
  Ref ac = make_ref({2, 5}, [&](auto& i) { return i[1] < 3 ? ra.at(i) : rc.at({i[0], i[1] - 3}); });
  EXPECT_TRUE(Matches(lf::concatenate({a, c}, 1), ac));
  EXPECT_TRUE(Matches(lf::concatenate({a, c}, -1), ac));
  // Three pieces.
  Ref r1 = vec_ref({1, 2}), r2 = vec_ref({3}), r3 = vec_ref({4, 5, 6});
  EXPECT_TRUE(Matches(lf::concatenate({to_array(r1), to_array(r2), to_array(r3)}), vec_ref({1, 2, 3, 4, 5, 6})));
  EXPECT_TRUE(Matches(lf::concatenate({c, a, c}, 1), make_ref({2, 7}, [&](auto& i) {
                        return i[1] < 2 ? rc.at(i) : i[1] < 5 ? ra.at({i[0], i[1] - 2}) : rc.at({i[0], i[1] - 5});
                      })));
  // One piece, and pieces that are views and expressions.
  EXPECT_TRUE(Matches(lf::concatenate({a}), ra));
  Ref t = transpose_ref(rb, {1, 0}); // (3, 4)
  EXPECT_TRUE(Matches(lf::concatenate({b.T(), a.T() + 1.0}, 1), make_ref({3, 6}, [&](auto& i) {
                        return i[1] < 4 ? t.at(i) : ra.at({i[1] - 4, i[0]}) + 1;
                      })));
  // An empty piece.
  EXPECT_TRUE(Matches(lf::concatenate({a, lf::zeros({0, 3}), a}), make_ref({4, 3}, [&](auto& i) {
                        return ra.at({i[0] % 2, i[1]});
                      })));
}

TEST(Concatenate, MixedDTypesPromote) {
  Array i32 = lf::asarray(std::vector<std::int32_t>{1, 2});
  Array i64 = lf::asarray(std::vector<std::int64_t>{3});
  Array f32 = lf::asarray(std::vector<float>{0.5f});
  Array f64 = lf::asarray(std::vector<double>{0.25});
  Array b = lf::asarray(std::vector<bool>{true, false}, {2});
  Array c1 = lf::concatenate({i32, i64});
  EXPECT_EQ(c1.dtype(), DType::Int64);
  EXPECT_EQ(c1.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{1, 2, 3}));
  Array c2 = lf::concatenate({i32, f32}); // NumPy 2: int32 + float32 -> float64
  EXPECT_EQ(c2.dtype(), DType::Float64);
  EXPECT_EQ(c2.get<double>().to_vector(), (std::vector<double>{1, 2, 0.5}));
  Array c3 = lf::concatenate({f32, f32, f32});
  EXPECT_EQ(c3.dtype(), DType::Float32);
  Array c4 = lf::concatenate({b, i32});
  EXPECT_EQ(c4.dtype(), DType::Int32);
  EXPECT_EQ(c4.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{1, 0, 1, 2}));
  Array c5 = lf::concatenate({i64, f32, f64, b});
  EXPECT_EQ(c5.dtype(), DType::Float64);
  EXPECT_EQ(c5.get<double>().to_vector(), (std::vector<double>{3, 0.5, 0.25, 1, 0}));
}

TEST(Stack, NewAxisAtStartAndEnd) {
  Ref r0 = iota_ref({2, 3}), r1 = iota_ref({2, 3}, 10), r2 = iota_ref({2, 3}, 20);
  std::vector<Array> arrays{to_array(r0), to_array(r1), to_array(r2)};
  auto pick = [&](std::int64_t k, std::int64_t i, std::int64_t j) {
    return (k == 0 ? r0 : k == 1 ? r1 : r2).at({i, j});
  };
  EXPECT_TRUE(Matches(lf::stack(arrays), make_ref({3, 2, 3}, [&](auto& i) { return pick(i[0], i[1], i[2]); })));
  EXPECT_TRUE(Matches(lf::stack(arrays, 0), make_ref({3, 2, 3}, [&](auto& i) { return pick(i[0], i[1], i[2]); })));
  EXPECT_TRUE(Matches(lf::stack(arrays, 1), make_ref({2, 3, 3}, [&](auto& i) { return pick(i[1], i[0], i[2]); })));
  EXPECT_TRUE(Matches(lf::stack(arrays, 2), make_ref({2, 3, 3}, [&](auto& i) { return pick(i[2], i[0], i[1]); })));
  EXPECT_TRUE(Matches(lf::stack(arrays, -1), make_ref({2, 3, 3}, [&](auto& i) { return pick(i[2], i[0], i[1]); })));
  // 1-D pieces, and lazy pieces.
  EXPECT_TRUE(
      Matches(lf::stack({lf::asarray({1.0, 2.0}), lf::asarray({3.0, 4.0}) * 2.0}, -1), mat_ref(2, 2, {1, 6, 2, 8})));
  // Stacking 0-d arrays gives a 1-D array.
  EXPECT_TRUE(Matches(lf::stack({lf::full({}, 1.0), lf::full({}, 2.0)}), vec_ref({1, 2})));
}

TEST(Pad, WidthsAndValues) {
  Ref r = iota_ref({2, 3}, 1);
  Array a = to_array(r);
  // Per-axis widths.
  EXPECT_TRUE(Matches(lf::pad(a, {{1, 2}, {0, 1}}), make_ref({5, 4}, [&](auto& i) {
                        std::int64_t y = i[0] - 1, x = i[1];
                        return (y >= 0 && y < 2 && x < 3) ? r.at({y, x}) : 0.0;
                      })));
  // One pair for every axis, with a constant.
  EXPECT_TRUE(Matches(lf::pad(a, {{1, 1}}, 7.5), make_ref({4, 5}, [&](auto& i) {
                        std::int64_t y = i[0] - 1, x = i[1] - 1;
                        return (y >= 0 && y < 2 && x >= 0 && x < 3) ? r.at({y, x}) : 7.5;
                      })));
  // Zero widths; 1-D; a lazy input; an int array keeps its type.
  EXPECT_TRUE(Matches(lf::pad(a, {{0, 0}, {0, 0}}), r));
  EXPECT_TRUE(Matches(lf::pad(lf::asarray({1.0, 2.0}), {{2, 1}}, -1), vec_ref({-1, -1, 1, 2, -1})));
  EXPECT_TRUE(Matches(lf::pad(a.T() * 2.0, {{0, 1}, {1, 0}}), make_ref({4, 3}, [&](auto& i) {
                        return (i[0] < 3 && i[1] >= 1) ? 2 * r.at({i[1] - 1, i[0]}) : 0.0;
                      })));
  Array pi = lf::pad(lf::arange(3), {{1, 1}}, 9);
  EXPECT_EQ(pi.dtype(), DType::Int64);
  EXPECT_EQ(pi.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{9, 0, 1, 2, 9}));
}

// ---- creation ----------------------------------------------------------------------------------------------

TEST(Creation, ZerosOnesFullEmpty) {
  Array z = lf::zeros({2, 3});
  EXPECT_EQ(z.dtype(), DType::Float64);
  EXPECT_TRUE(Matches(z, Ref{{2, 3}, std::vector<double>(6, 0.0)}));
  Array o = lf::ones({3}, DType::Int32);
  EXPECT_EQ(o.dtype(), DType::Int32);
  EXPECT_EQ(o.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{1, 1, 1}));
  Array f = lf::full({2, 2}, 2.5, DType::Float32);
  EXPECT_EQ(f.dtype(), DType::Float32);
  EXPECT_EQ(f.get<float>().to_vector(), (std::vector<float>{2.5f, 2.5f, 2.5f, 2.5f}));
  Array fi = lf::full({2}, 3.9, DType::Int64); // NumPy: np.full(2, 3.9, dtype=np.int64) -> [3, 3]
  EXPECT_EQ(fi.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{3, 3}));
  Array fb = lf::ones({2}, DType::Bool);
  EXPECT_EQ(fb.dtype(), DType::Bool);
  EXPECT_EQ(fb.get<bool>().to_vector(), (std::vector<bool>{true, true}));
  Array e = lf::empty({2, 3, 4}, DType::Int32);
  EXPECT_EQ(e.dtype(), DType::Int32);
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(e.size(), 24);
  EXPECT_EQ(e.get<std::int32_t>().size(), 24u);
  Array s = lf::zeros({});
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.item<double>(), 0.0);
  Array n = lf::ones({0, 4});
  EXPECT_EQ(n.size(), 0);
  EXPECT_EQ(n.shape(), (Shape{0, 4}));
  EXPECT_EQ(n.get<double>().size(), 0u);
}

TEST(Creation, Arange) {
  Array a = lf::arange(5);
  EXPECT_EQ(a.dtype(), DType::Int64);
  EXPECT_EQ(a.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  Array b = lf::arange(2, 8, 3);
  EXPECT_EQ(b.dtype(), DType::Int64);
  EXPECT_EQ(b.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{2, 5}));
  Array c = lf::arange(10, 0, -3);
  EXPECT_EQ(c.dtype(), DType::Int64);
  EXPECT_EQ(c.get<std::int64_t>().to_vector(), (std::vector<std::int64_t>{10, 7, 4, 1}));
  Array d = lf::arange(0.5, 3.0, 0.5);
  EXPECT_EQ(d.dtype(), DType::Float64);
  EXPECT_TRUE(Matches(d, vec_ref({0.5, 1.0, 1.5, 2.0, 2.5})));
  Array e = lf::arange(1.0, 0.0, -0.25);
  EXPECT_EQ(e.dtype(), DType::Float64);
  EXPECT_TRUE(Matches(e, vec_ref({1.0, 0.75, 0.5, 0.25})));
  Array f = lf::arange(0, 1, 0.1); // NumPy: 10 elements
  EXPECT_EQ(f.shape(), (Shape{10}));
  EXPECT_TRUE(Matches(f, vec_ref({0, .1, .2, .3, .4, .5, .6, .7, .8, .9}), 1e-12));
  Array g = lf::arange(0, 4, 1, DType::Float32);
  EXPECT_EQ(g.dtype(), DType::Float32);
  EXPECT_EQ(g.get<float>().to_vector(), (std::vector<float>{0, 1, 2, 3}));
  Array h = lf::arange(0, 3, 1, DType::Int32);
  EXPECT_EQ(h.dtype(), DType::Int32);
  EXPECT_EQ(h.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{0, 1, 2}));
  // Empty.
  EXPECT_EQ(lf::arange(0).shape(), (Shape{0}));
  EXPECT_EQ(lf::arange(5, 1).shape(), (Shape{0}));
  EXPECT_EQ(lf::arange(3, 3).shape(), (Shape{0}));
  EXPECT_EQ(lf::arange(1, 5, -1).shape(), (Shape{0}));
  EXPECT_EQ(lf::arange(-3).size(), 0);
  EXPECT_EQ(lf::arange(-3, 0.0).get<double>().size(), 3u);
}

TEST(Creation, Linspace) {
  Array a = lf::linspace(0, 1, 5);
  EXPECT_EQ(a.dtype(), DType::Float64);
  EXPECT_TRUE(Matches(a, vec_ref({0, 0.25, 0.5, 0.75, 1.0})));
  EXPECT_TRUE(Matches(lf::linspace(0, 1, 4, false), vec_ref({0, 0.25, 0.5, 0.75})));
  EXPECT_TRUE(Matches(lf::linspace(2, 3, 1), vec_ref({2})));
  EXPECT_TRUE(Matches(lf::linspace(2, 3, 1, false), vec_ref({2})));
  EXPECT_EQ(lf::linspace(2, 3, 0).shape(), (Shape{0}));
  EXPECT_EQ(lf::linspace(0, 1).shape(), (Shape{50}));
  // The last point is exactly `stop` with endpoint=true.
  auto h = lf::linspace(0, 0.3, 4).get<double>();
  EXPECT_EQ(h[3], 0.3);
  EXPECT_NEAR(h[1], 0.1, 1e-15);
  EXPECT_TRUE(Matches(lf::linspace(5, -5, 3), vec_ref({5, 0, -5})));
  Array f = lf::linspace(0, 1, 3, true, DType::Float32);
  EXPECT_EQ(f.dtype(), DType::Float32);
  EXPECT_EQ(f.get<float>().to_vector(), (std::vector<float>{0, 0.5f, 1}));
}

TEST(Creation, Eye) {
  auto eye_ref = [](std::int64_t n, std::int64_t m, std::int64_t k) {
    return make_ref({n, m}, [&](auto& i) { return i[1] - i[0] == k ? 1.0 : 0.0; });
  };
  EXPECT_TRUE(Matches(lf::eye(3), eye_ref(3, 3, 0)));
  EXPECT_EQ(lf::eye(3).dtype(), DType::Float64);
  EXPECT_TRUE(Matches(lf::eye(2, 4), eye_ref(2, 4, 0)));
  EXPECT_TRUE(Matches(lf::eye(4, 2), eye_ref(4, 2, 0)));
  EXPECT_TRUE(Matches(lf::eye(3, 3, 1), eye_ref(3, 3, 1)));
  EXPECT_TRUE(Matches(lf::eye(3, 4, -1), eye_ref(3, 4, -1)));
  EXPECT_TRUE(Matches(lf::eye(4, 3, 2), eye_ref(4, 3, 2)));
  EXPECT_TRUE(Matches(lf::eye(2, std::nullopt, 5), eye_ref(2, 2, 5)));
  Array ei = lf::eye(2, 2, 0, DType::Int32);
  EXPECT_EQ(ei.dtype(), DType::Int32);
  EXPECT_EQ(ei.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{1, 0, 0, 1}));
  Array eb = lf::eye(2, 3, 0, DType::Bool);
  EXPECT_EQ(eb.dtype(), DType::Bool);
  EXPECT_EQ(eb.get<bool>().to_vector(), (std::vector<bool>{true, false, false, false, true, false}));
  EXPECT_EQ(lf::eye(0).shape(), (Shape{0, 0}));
}

TEST(Creation, Like) {
  Array base = lf::asarray(std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Array z = lf::zeros_like(base), o = lf::ones_like(base), f = lf::full_like(base, 7.9), e = lf::empty_like(base);
  for (const Array* a : {&z, &o, &f, &e}) {
    EXPECT_EQ(a->dtype(), DType::Int32);
    EXPECT_EQ(a->shape(), (Shape{2, 3}));
  }
  EXPECT_EQ(z.get<std::int32_t>().to_vector(), std::vector<std::int32_t>(6, 0));
  EXPECT_EQ(o.get<std::int32_t>().to_vector(), std::vector<std::int32_t>(6, 1));
  EXPECT_EQ(f.get<std::int32_t>().to_vector(), std::vector<std::int32_t>(6, 7));
  Array ff = lf::full_like(lf::zeros({3}, DType::Float32), 2.5);
  EXPECT_EQ(ff.dtype(), DType::Float32);
  EXPECT_EQ(ff.get<float>().to_vector(), std::vector<float>(3, 2.5f));
  // Of a view and of an expression: shape and type of the result, not of the source.
  Array zl = lf::zeros_like(base.T()(slice(1, none)) * 1.5);
  EXPECT_EQ(zl.dtype(), DType::Float64);
  EXPECT_EQ(zl.shape(), (Shape{2, 2}));
}

TEST(Creation, Asarray) {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  Array s = lf::asarray(std::span<const float>(data), {3, 2});
  EXPECT_EQ(s.dtype(), DType::Float32);
  EXPECT_EQ(s.shape(), (Shape{3, 2}));
  data[0] = 100; // copied before returning
  EXPECT_EQ(s.get<float>().to_vector(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  Array v = lf::asarray(std::vector<std::int64_t>{5, 6, 7});
  EXPECT_EQ(v.dtype(), DType::Int64);
  EXPECT_EQ(v.shape(), (Shape{3}));
  Array vs = lf::asarray(std::vector<std::int32_t>{1, 2, 3, 4}, {2, 1, 2});
  EXPECT_EQ(vs.dtype(), DType::Int32);
  EXPECT_EQ(vs.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(vs.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{1, 2, 3, 4}));
  Array l1 = lf::asarray({1.5, 2.5});
  EXPECT_EQ(l1.dtype(), DType::Float64);
  EXPECT_EQ(l1.shape(), (Shape{2}));
  Array l2 = lf::asarray({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(l2.dtype(), DType::Int32);
  EXPECT_EQ(l2.shape(), (Shape{2, 3}));
  EXPECT_EQ(l2.get<std::int32_t>().to_vector(), (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6}));
  Array l3 = lf::asarray({{{1.0f, 2.0f}, {3.0f, 4.0f}, {5.0f, 6.0f}}, {{7.0f, 8.0f}, {9.0f, 10.0f}, {11.0f, 12.0f}}});
  EXPECT_EQ(l3.dtype(), DType::Float32);
  EXPECT_EQ(l3.shape(), (Shape{2, 3, 2}));
  EXPECT_TRUE(Matches(l3, iota_ref({2, 3, 2}, 1)));
  Array lb = lf::asarray({{true, false}, {false, true}});
  EXPECT_EQ(lb.dtype(), DType::Bool);
  EXPECT_EQ(lb.get<bool>().to_vector(), (std::vector<bool>{true, false, false, true}));
  Array lb3 = lf::asarray({{{true}, {false}}, {{false}, {true}}});
  EXPECT_EQ(lb3.dtype(), DType::Bool);
  EXPECT_EQ(lb3.shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(lb3.get<bool>().to_vector(), (std::vector<bool>{true, false, false, true}));
  Array vb = lf::asarray(std::vector<bool>{true, true, false}, {3});
  EXPECT_EQ(vb.dtype(), DType::Bool);
  EXPECT_EQ(vb.get<bool>().to_vector(), (std::vector<bool>{true, true, false}));
  std::vector<double> one{4.0};
  Array scalar = lf::asarray(std::span<const double>(one), {});
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.item<double>(), 4.0);
  EXPECT_TRUE(lf::asarray({1.0}).is_materialized());
}

TEST(Creation, AsarrayErrors) {
  EXPECT_ERROR(lf::asarray({{1, 2}, {3}}), lf::ShapeError, "asarray", "ragged");
  EXPECT_ERROR(lf::asarray({{{1, 2}, {3, 4}}, {{5, 6}}}), lf::ShapeError, "ragged");
  EXPECT_ERROR(lf::asarray({{{1, 2}, {3, 4}}, {{5, 6}, {7}}}), lf::ShapeError, "ragged");
  EXPECT_ERROR(lf::asarray(std::vector<double>{1, 2, 3}, {2, 2}), lf::ShapeError, "3 values", "(2, 2)");
}

// ---- errors -------------------------------------------------------------------------------------------------

TEST(Errors, Indexing) {
  Array x = lf::zeros({3, 4});
  EXPECT_ERROR(x(0, 0, 0), lf::IndexError, "too many indices", "2-dimensional", "3 were indexed");
  EXPECT_ERROR(x(0, newaxis, 1, slice(none, 2)), lf::IndexError, "too many indices");
  EXPECT_ERROR(x(3), lf::IndexError, "index 3 is out of bounds for axis 0 with size 3");
  EXPECT_ERROR(x(-4), lf::IndexError, "index -4 is out of bounds for axis 0 with size 3");
  EXPECT_ERROR(x(0, 4), lf::IndexError, "index 4 is out of bounds for axis 1 with size 4");
  EXPECT_ERROR(x(all_of, -5), lf::IndexError, "index -5 is out of bounds for axis 1 with size 4");
  EXPECT_ERROR(x(ellipsis, 7), lf::IndexError, "out of bounds for axis 1 with size 4");
  EXPECT_ERROR(x(slice(none, none, 0)), lf::IndexError, "slice step cannot be zero");
  EXPECT_ERROR(x(ellipsis, ellipsis), lf::IndexError, "single ellipsis");
  EXPECT_ERROR(lf::full({}, 1.0)(0), lf::IndexError, "too many indices", "0-dimensional");
  // The same checks in slice assignment.
  EXPECT_ERROR(x.at(3).set(1.0), lf::IndexError, "index 3 is out of bounds for axis 0 with size 3");
  EXPECT_ERROR(x.at(0, 0, 0).set(1.0), lf::IndexError, "too many indices");
  EXPECT_ERROR(x.at(slice(1, 2, 0)).set(1.0), lf::IndexError, "slice step cannot be zero");
  EXPECT_ERROR(x.at(all_of, slice(0, 2)).set(lf::zeros({3})), lf::ShapeError, "cannot broadcast", "(3,)", "(3, 2)");
}

TEST(Errors, ShapeOps) {
  Array a = lf::zeros({3, 4});
  EXPECT_ERROR(a.reshape({5, 3}), lf::ShapeError, "cannot reshape", "size 12", "(5, 3)", "size 15");
  EXPECT_ERROR(a.reshape({5, -1}), lf::ShapeError, "cannot reshape", "size 12", "(5, -1)");
  EXPECT_ERROR(a.reshape({-1, -1}), lf::ShapeError, "one unknown dimension");
  EXPECT_ERROR(a.reshape({-2, 6}), lf::ShapeError, "negative dimension");
  EXPECT_ERROR(a.transpose({0}), lf::ShapeError, "axes don't match", "1 axes for 2 dimensions");
  EXPECT_ERROR(a.transpose({0, 0}), lf::ShapeError, "repeated axis 0");
  EXPECT_ERROR(a.transpose({0, 2}), lf::IndexError, "axis 2 is out of bounds");
  EXPECT_ERROR(lf::squeeze(lf::zeros({1, 3}), std::vector<int>{1}), lf::ShapeError,
               "cannot select an axis to squeeze out", "axis 1");
  EXPECT_ERROR(lf::squeeze(lf::zeros({1, 3}), std::vector<int>{2}), lf::IndexError, "out of bounds");
  EXPECT_ERROR(lf::expand_dims(a, 3), lf::IndexError, "axis 3 is out of bounds");
  EXPECT_ERROR(lf::flip(a, 2), lf::IndexError, "axis 2 is out of bounds");
  EXPECT_ERROR(lf::roll(a, 1, -3), lf::IndexError, "axis -3 is out of bounds");
  EXPECT_ERROR(lf::broadcast_to(lf::zeros({3}), {4}), lf::ShapeError, "cannot broadcast", "(3,)", "(4,)");
  EXPECT_ERROR(lf::broadcast_to(a, {2, 4}), lf::ShapeError, "cannot broadcast", "(3, 4)", "(2, 4)");
  EXPECT_ERROR(lf::broadcast_to(a, {4}), lf::ShapeError, "cannot broadcast", "(3, 4)", "(4,)");
  EXPECT_ERROR(lf::broadcast_to(a + 1.0, {3, 5}), lf::ShapeError, "cannot broadcast");
}

TEST(Errors, JoiningAndPadding) {
  Array a = lf::zeros({2, 3}), b = lf::zeros({2, 4}, DType::Int32);
  EXPECT_ERROR(lf::concatenate({a, b}), lf::ShapeError, "concatenate", "array 0 (2, 3) float64",
               "array 1 (2, 4) int32");
  EXPECT_ERROR(lf::concatenate({a, a, lf::zeros({2, 3, 1})}), lf::ShapeError, "array 0 (2, 3)", "array 2 (2, 3, 1)");
  EXPECT_ERROR(lf::concatenate({a, b}, 2), lf::IndexError, "axis 2 is out of bounds");
  EXPECT_ERROR(lf::concatenate({}), lf::ShapeError, "need at least one array");
  EXPECT_ERROR(lf::concatenate({lf::full({}, 1.0), lf::full({}, 2.0)}), lf::ShapeError, "zero-dimensional");
  EXPECT_ERROR(lf::stack({a, lf::zeros({3, 2})}), lf::ShapeError, "same shape", "array 0 (2, 3)", "array 1 (3, 2)");
  EXPECT_ERROR(lf::stack({a, a}, 3), lf::IndexError, "axis 3 is out of bounds");
  EXPECT_ERROR(lf::stack({}), lf::ShapeError, "need at least one array");
  EXPECT_ERROR(lf::pad(a, {{1, -1}, {0, 0}}), lf::ShapeError, "negative pad widths");
  EXPECT_ERROR(lf::pad(a, {{-1, 0}}), lf::ShapeError, "negative pad widths");
  EXPECT_ERROR(lf::pad(a, {{1, 1}, {1, 1}, {1, 1}}), lf::ShapeError, "pad_width has 3 entries");
}

TEST(Errors, Creation) {
  EXPECT_ERROR(lf::zeros({2, -1}), lf::ShapeError, "negative dimensions");
  EXPECT_ERROR(lf::arange(0, 5, 0), lf::Error, "step must not be zero");
  EXPECT_ERROR(lf::linspace(0, 1, -1), lf::Error, "must be non-negative");
  EXPECT_ERROR(lf::eye(-1), lf::ShapeError, "negative dimensions");
  EXPECT_ERROR(Array().reshape({1}), lf::Error, "empty");
}

// ---- printing ----------------------------------------------------------------------------------------------

TEST(Printing, SmallArraysLikeNumpy) {
  // np.array2string(x, separator=', ') for each of these.
  EXPECT_EQ(lf::to_string(lf::arange(4).reshape({2, 2})), "[[0, 1],\n [2, 3]]");
  EXPECT_EQ(lf::to_string(lf::arange(3)), "[0, 1, 2]");
  EXPECT_EQ(lf::to_string(lf::arange(3).astype(DType::Int32)), "[0, 1, 2]");
  EXPECT_EQ(lf::to_string(lf::asarray({1.5, 2.5})), "[1.5, 2.5]");
  EXPECT_EQ(lf::to_string(lf::asarray({0.0, 1.0, 2.0})), "[0., 1., 2.]");
  EXPECT_EQ(lf::to_string(lf::asarray({0.1f, 0.2f})), "[0.1, 0.2]");
  EXPECT_EQ(lf::to_string(lf::ones({2, 2})), "[[1., 1.],\n [1., 1.]]");
  EXPECT_EQ(lf::to_string(lf::asarray({false, false})), "[False, False]");
  EXPECT_EQ(lf::to_string(lf::full({}, 3.0)), "3.");
  EXPECT_EQ(lf::to_string(lf::full({}, 7, DType::Int64)), "7");
  EXPECT_EQ(lf::to_string(lf::zeros({0})), "[]");
  EXPECT_EQ(lf::to_string(lf::asarray({std::nan(""), -std::numeric_limits<double>::infinity()})), "[ nan, -inf]");
  // A view prints its own values, in its own order.
  EXPECT_EQ(lf::to_string(lf::arange(4).reshape({2, 2}).T()), "[[0, 2],\n [1, 3]]");
  // operator<< prints the same text.
  std::ostringstream os;
  os << lf::arange(4).reshape({2, 2});
  EXPECT_EQ(os.str(), "[[0, 1],\n [2, 3]]");
}

// NumPy right-aligns elements to a common width (and pads bools and signs); check that it is honoured.
TEST(Printing, ColumnsAlignedLikeNumpy) {
  EXPECT_EQ(lf::to_string(lf::asarray({{1, 10}, {100, 2}})), "[[  1,  10],\n [100,   2]]");
  EXPECT_EQ(lf::to_string(lf::asarray({-1, 2})), "[-1,  2]");
  EXPECT_EQ(lf::to_string(lf::asarray({true, false})), "[ True, False]");
  EXPECT_EQ(lf::to_string(lf::asarray({0.5, 1.0, 2.25})), "[0.5 , 1.  , 2.25]");
  EXPECT_EQ(lf::to_string(lf::asarray({std::nan(""), 1.0})), "[nan,  1.]");
}

// NumPy separates the 2-D blocks of a 3-D array with a blank line.
TEST(Printing, ThreeDimensionalLikeNumpy) {
  EXPECT_EQ(lf::to_string(lf::arange(8).reshape({2, 2, 2})), "[[[0, 1],\n  [2, 3]],\n\n [[4, 5],\n  [6, 7]]]");
}

TEST(Printing, LargeArraysAreSummarized) {
  std::string small = lf::to_string(lf::arange(1000));
  EXPECT_EQ(small.find("..."), std::string::npos); // NumPy's threshold: more than 1000 elements
  std::string big = lf::to_string(lf::arange(2000));
  EXPECT_NE(big.find("..."), std::string::npos);
  EXPECT_LT(big.size(), 100u);
  EXPECT_EQ(big.front(), '[');
  EXPECT_NE(big.find("0,"), std::string::npos);
  EXPECT_NE(big.find("1999]"), std::string::npos);
  EXPECT_EQ(big.find("1000"), std::string::npos);
  std::string big2 = lf::to_string(lf::arange(10000).reshape({100, 100}));
  EXPECT_NE(big2.find("..."), std::string::npos);
  EXPECT_LT(big2.size(), 400u);
  EXPECT_NE(big2.find("9999]]"), std::string::npos);
  EXPECT_EQ(big2.find("5050"), std::string::npos);
}

} // namespace

// Stencils, transposes and broadcasts of matrices of several widths and heights (rows that do and do not split
// evenly into a thread's vector of elements): every element against plain loops.
TEST(Views, StencilsTransposesAndBroadcastsOfLargerMatrices) {
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{37, 300}, {9, 129}, {300, 7}, {8, 128}, {150, 260}}) {
    std::vector<float> h(std::size_t(rows * cols));
    for (std::size_t k = 0; k < h.size(); ++k) h[k] = float(std::sin(0.37 * double(k)) + 0.001 * double(k % 97));
    auto u = lf::asarray(h, {rows, cols}).eval();
    auto at = [&](std::int64_t r, std::int64_t c) { return double(h[std::size_t(r * cols + c)]); };
    // 5-point stencil into the interior, border kept.
    auto in = slice(1, -1);
    auto c = u(in, in);
    auto step = c + 0.25f * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(2, none)) + u(in, slice(0, -2)) -
                             4.0f * c);
    auto got = u.at(in, in).set(step).get<float>();
    double worst = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < cols; ++k) {
        double want = at(r, k);
        if (r > 0 && r + 1 < rows && k > 0 && k + 1 < cols)
          want = at(r, k) + 0.25 * (at(r - 1, k) + at(r + 1, k) + at(r, k + 1) + at(r, k - 1) - 4.0 * at(r, k));
        worst = std::max(worst, std::abs(double(got.data()[std::size_t(r * cols + k)]) - want));
      }
    EXPECT_LT(worst, 1e-5) << rows << "x" << cols << " stencil";
    // A transposed copy plus a broadcast row and column.
    auto row = u(0, lf::all_of), col = u(lf::all_of, 0);
    auto mixed = (u.T() * 2.0f + col(newaxis, lf::all_of) - row(lf::all_of, newaxis)).get<float>();
    worst = 0;
    for (std::int64_t k = 0; k < cols; ++k)
      for (std::int64_t r = 0; r < rows; ++r) {
        const double want = at(r, k) * 2.0 + at(r, 0) - at(0, k);
        worst = std::max(worst, std::abs(double(mixed.data()[std::size_t(k * rows + r)]) - want));
      }
    EXPECT_LT(worst, 1e-5) << rows << "x" << cols << " transpose and broadcasts";
  }
}
