// Reductions (sum, prod, min, max, argmax, argmin, any, all, mean, var, std, count_nonzero, logsumexp, norms,
// isclose/allclose/array_equal) checked against references written here: loops in long double (or exact integer
// arithmetic) over host copies of the inputs; nothing from the library's own code. Fresh random data each run; the
// seed is printed on failure and LAZYFUSE_TEST_SEED=<n> replays it.
//
// Backend-agnostic: the same binary runs on the CPU backend and on CUDA, whose float sums combine in another tree
// order. Float tolerances are therefore bounds valid for any summation order of a pairwise/tree kind: relative to
// the sum's condition scale sum(|x|), 1e-12 for float64 and 1e-5 for float32 at these sizes.
#include "graph/Node.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::Shape;

namespace {

using i64 = std::int64_t;
using u64 = std::uint64_t;
using ld = long double;

// Every value of the five dtypes (int64 included) is exact in a long double with a 64-bit mantissa.
static_assert(std::numeric_limits<ld>::digits >= 64);

constexpr DType kTypes[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
constexpr ld kNaN = std::numeric_limits<ld>::quiet_NaN();
constexpr ld kInf = std::numeric_limits<ld>::infinity();
constexpr double dNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double dInf = std::numeric_limits<double>::infinity();

std::string name(DType t) {
  return std::string(lf::dtype_name(t));
}
bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}
double tol_of(DType t) {
  return t == DType::Float32 ? 1e-5 : 1e-12;
}

std::string str(const Shape& s) {
  return lazyfuse::graph::format_shape(s);
}

i64 numel(const Shape& s) {
  i64 n = 1;
  for (auto d : s) n *= d;
  return n;
}

// ---- random seeds -----------------------------------------------------------------------------------------

struct Seed {
  u64 value;
  std::mt19937_64 rng;
  Seed() : value(pick()), rng(value) {}
  static u64 pick() {
    if (const char* s = std::getenv("LAZYFUSE_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    std::random_device rd;
    return (u64(rd()) << 32) ^ u64(rd());
  }
  std::string trace() const {
    return "seed " + std::to_string(value) + " (replay: LAZYFUSE_TEST_SEED=" + std::to_string(value) + ")";
  }
};
#define SEEDED(s)                                                                                                      \
  Seed s;                                                                                                              \
  SCOPED_TRACE(s.trace())

// ---- host data ------------------------------------------------------------------------------------------

/// A host copy of an array: dtype, shape and row-major values (exact in long double).
struct Host {
  DType dtype = DType::Float64;
  Shape shape;
  std::vector<ld> v;
};

Array to_array(const Host& h) {
  std::vector<double> d(h.v.begin(), h.v.end()); // exact: every value was generated as a value of h.dtype
  // int64 values used here are below 2^53 in magnitude, so double carries them exactly too.
  return lf::asarray_as(h.dtype, std::span<const double>(d.data(), d.size()), h.shape);
}

template <class T> std::vector<ld> read_typed(const Array& a) {
  auto h = a.get<T>();
  std::vector<ld> out(h.size());
  for (std::size_t k = 0; k < h.size(); ++k) out[k] = ld(h[k]);
  return out;
}

std::vector<ld> read(const Array& a) {
  switch (a.dtype()) {
  case DType::Bool: return read_typed<bool>(a);
  case DType::Int32: return read_typed<std::int32_t>(a);
  case DType::Int64: return read_typed<i64>(a);
  case DType::Float32: return read_typed<float>(a);
  case DType::Float64: return read_typed<double>(a);
  default: break; // a type this test does not generate
  }
  return {};
}

ld round_to(DType t, ld x) {
  if (t == DType::Float32) return ld(float(x));
  if (t == DType::Float64) return ld(double(x));
  return x;
}

/// General data: mixed signs, some exact zeros (any/all/count_nonzero see both), never all zeros. int32 values are
/// large enough that their sums overflow int32 (the sum must accumulate in int64); int64 sums stay below 2^62.
Host random_general(DType t, Shape shape, std::mt19937_64& rng) {
  Host h{t, shape, std::vector<ld>(std::size_t(numel(shape)))};
  std::uniform_real_distribution<double> unit(0, 1);
  for (auto& x : h.v) {
    const double u = unit(rng);
    switch (t) {
    case DType::Bool: x = u < 0.7 ? 1 : 0; break;
    case DType::Int32: x = u < 0.2 ? 0 : ld(std::uniform_int_distribution<i64>(-1000000000, 1000000000)(rng)); break;
    case DType::Int64:
      x = u < 0.2 ? 0 : ld(std::uniform_int_distribution<i64>(-100000000000000, 100000000000000)(rng));
      break;
    default: x = u < 0.15 ? 0 : round_to(t, ld(std::uniform_real_distribution<double>(-1, 2)(rng))); break;
    }
  }
  if (!h.v.empty() && std::all_of(h.v.begin(), h.v.end(), [](ld x) { return x == 0; })) h.v[0] = 1;
  return h;
}

/// Data for products: factors near 1 (floats) or small odd numbers with a few 2s and 0s (integers; products wrap
/// modulo 2^64 as in NumPy, which the reference reproduces exactly).
Host random_prod(DType t, Shape shape, std::mt19937_64& rng) {
  Host h{t, shape, std::vector<ld>(std::size_t(numel(shape)))};
  std::uniform_real_distribution<double> unit(0, 1);
  static constexpr int kFactors[] = {-3, -1, 1, 3, 1, -1, 5, 2};
  for (auto& x : h.v) {
    const double u = unit(rng);
    switch (t) {
    case DType::Bool: x = u < 0.97 ? 1 : 0; break;
    case DType::Int32:
    case DType::Int64: x = u < 0.02 ? 0 : kFactors[rng() % 8]; break;
    default: x = round_to(t, 1 + ld(std::uniform_real_distribution<double>(-0.05, 0.05)(rng))); break;
    }
  }
  return h;
}

// ---- reference reductions -------------------------------------------------------------------------------

using AxesList = std::optional<std::vector<int>>; // nullopt: every axis (the default)

std::string str(const AxesList& a) {
  if (!a) return "all (default)";
  std::ostringstream os;
  os << "{";
  for (std::size_t k = 0; k < a->size(); ++k) os << (k ? ", " : "") << (*a)[k];
  os << "}";
  return os.str();
}

/// The groups of values a reduction combines, in row-major order of the reduced axes, and the result shape.
struct Groups {
  Shape shape;                    // result shape (keepdims applied)
  std::vector<std::vector<ld>> g; // one per result element, row-major
};

Groups group(const Host& h, const AxesList& axes, bool keepdims) {
  const int nd = int(h.shape.size());
  std::vector<bool> red(std::size_t(nd), !axes.has_value());
  if (axes)
    for (int a : *axes) red[std::size_t(a < 0 ? a + nd : a)] = true;
  Groups out;
  Shape kept;
  for (int d = 0; d < nd; ++d) {
    if (!red[std::size_t(d)]) kept.push_back(h.shape[std::size_t(d)]);
    if (!red[std::size_t(d)] || keepdims) out.shape.push_back(red[std::size_t(d)] ? 1 : h.shape[std::size_t(d)]);
  }
  out.g.resize(std::size_t(numel(kept)));
  std::vector<i64> coord(std::size_t(nd), 0);
  for (std::size_t i = 0; i < h.v.size(); ++i) {
    i64 o = 0;
    for (int d = 0; d < nd; ++d)
      if (!red[std::size_t(d)]) o = o * h.shape[std::size_t(d)] + coord[std::size_t(d)];
    out.g[std::size_t(o)].push_back(h.v[i]);
    for (int d = nd - 1; d >= 0; --d) {
      if (++coord[std::size_t(d)] < h.shape[std::size_t(d)]) break;
      coord[std::size_t(d)] = 0;
    }
  }
  return out;
}

ld ref_sum(const std::vector<ld>& g) {
  ld s = 0;
  for (ld x : g) s += x;
  return s;
}
ld ref_abs_sum(const std::vector<ld>& g) {
  ld s = 0;
  for (ld x : g) s += std::fabs(x);
  return s;
}
ld ref_var(const std::vector<ld>& g, int ddof) {
  const ld n = ld(g.size());
  const ld m = ref_sum(g) / n;
  ld ssd = 0;
  for (ld x : g) ssd += (x - m) * (x - m);
  // NumPy: divide by max(n - ddof, 0).
  return ssd / std::max<ld>(n - ddof, 0);
}
ld ref_logsumexp(const std::vector<ld>& g) {
  ld mx = -kInf;
  for (ld x : g) mx = std::max(mx, x);
  if (std::isinf(mx)) return mx;
  ld s = 0;
  for (ld x : g) s += std::exp(x - mx);
  return mx + std::log(s);
}

enum class R { Sum, Prod, Min, Max, ArgMax, ArgMin, Any, All, Mean, Var, Std, CountNonzero, LogSumExp };

struct OpCase {
  const char* name;
  R r;
  int ddof = 0;
};

const OpCase kOps[] = {
    {"sum", R::Sum},
    {"prod", R::Prod},
    {"min", R::Min},
    {"max", R::Max},
    {"argmax", R::ArgMax},
    {"argmin", R::ArgMin},
    {"any", R::Any},
    {"all", R::All},
    {"mean", R::Mean},
    {"var", R::Var, 0},
    {"var(ddof=1)", R::Var, 1},
    {"std", R::Std, 0},
    {"std(ddof=1)", R::Std, 1},
    {"count_nonzero", R::CountNonzero},
    {"logsumexp", R::LogSumExp},
};

bool is_arg(R r) {
  return r == R::ArgMax || r == R::ArgMin;
}

DType result_type(R r, DType t) {
  switch (r) {
  case R::Sum:
  case R::Prod: return is_float(t) ? t : DType::Int64;
  case R::Min:
  case R::Max: return t;
  case R::ArgMax:
  case R::ArgMin:
  case R::CountNonzero: return DType::Int64;
  case R::Any:
  case R::All: return DType::Bool;
  case R::Mean:
  case R::Var:
  case R::Std:
  case R::LogSumExp: return is_float(t) ? t : DType::Float64;
  }
  return t;
}

Array call(const OpCase& op, const Array& a, const AxesList& axes, bool keepdims) {
  const lf::Axes ax = axes ? lf::Axes(*axes) : lf::Axes();
  switch (op.r) {
  case R::Sum: return axes || keepdims ? lf::sum(a, ax, keepdims) : lf::sum(a);
  case R::Prod: return lf::prod(a, ax, keepdims);
  case R::Min: return lf::min(a, ax, keepdims);
  case R::Max: return axes || keepdims ? lf::max(a, ax, keepdims) : lf::max(a);
  case R::ArgMax: return lf::argmax(a, axes ? std::optional<int>((*axes)[0]) : std::nullopt, keepdims);
  case R::ArgMin: return lf::argmin(a, axes ? std::optional<int>((*axes)[0]) : std::nullopt, keepdims);
  case R::Any: return lf::any(a, ax, keepdims);
  case R::All: return lf::all(a, ax, keepdims);
  case R::Mean: return lf::mean(a, ax, keepdims);
  case R::Var: return lf::var(a, ax, op.ddof, keepdims);
  case R::Std: return lf::stddev(a, ax, op.ddof, keepdims);
  case R::CountNonzero: return lf::count_nonzero(a, ax, keepdims);
  case R::LogSumExp: return lf::logsumexp(a, ax, keepdims);
  }
  return {};
}

/// Expected value of one group, and the absolute error allowed (0: exact).
std::pair<ld, ld> reference(const OpCase& op, DType t, const std::vector<ld>& g) {
  const ld n = ld(g.size());
  const DType rt = result_type(op.r, t);
  const double tol = tol_of(rt);
  switch (op.r) {
  case R::Sum:
    if (!is_float(t)) return {ref_sum(g), 0}; // exact in long double (|sum| < 2^63)
    return {ref_sum(g), tol * ref_abs_sum(g)};
  case R::Prod: {
    if (t == DType::Bool) return {ld(std::all_of(g.begin(), g.end(), [](ld x) { return x != 0; })), 0};
    if (!is_float(t)) {
      u64 p = 1; // NumPy's integer products wrap modulo 2^64
      for (ld x : g) p *= u64(i64(x));
      return {ld(i64(p)), 0};
    }
    ld p = 1;
    for (ld x : g) p *= x;
    // Any multiplication order: relative error within ~sqrt(n) roundings (8 sigma), at least the base tolerance.
    const ld u = t == DType::Float32 ? 0x1p-24L : 0x1p-53L;
    return {p, std::max<ld>(tol, 8 * std::sqrt(n) * u) * std::fabs(p)};
  }
  case R::Min: return {*std::min_element(g.begin(), g.end()), 0};
  case R::Max: return {*std::max_element(g.begin(), g.end()), 0};
  case R::ArgMax: return {ld(std::max_element(g.begin(), g.end()) - g.begin()), 0}; // first of equal maxima
  case R::ArgMin: return {ld(std::min_element(g.begin(), g.end()) - g.begin()), 0};
  case R::Any: return {ld(std::any_of(g.begin(), g.end(), [](ld x) { return x != 0; })), 0};
  case R::All: return {ld(std::all_of(g.begin(), g.end(), [](ld x) { return x != 0; })), 0};
  case R::CountNonzero: return {ld(std::count_if(g.begin(), g.end(), [](ld x) { return x != 0; })), 0};
  case R::Mean: return {ref_sum(g) / n, tol * ref_abs_sum(g) / n};
  // The mean is rounded before the deviations are taken: an error of about tol * a in each deviation, so
  // tol * s * a in the variance and tol * a in its square root. When the values are nearly equal (s << a) that
  // term dominates; NumPy's float32 var has the same conditioning.
  case R::Var: {
    const ld v = ref_var(g, op.ddof), a = ref_abs_sum(g) / n;
    return {v, tol * (std::fabs(v) + 2 * std::sqrt(std::fabs(v)) * a + tol * a * a)};
  }
  case R::Std: {
    const ld s = std::sqrt(ref_var(g, op.ddof)), a = ref_abs_sum(g) / n;
    return {s, tol * (std::fabs(s) + a)};
  }
  case R::LogSumExp: {
    const ld l = ref_logsumexp(g);
    return {l, tol * (std::fabs(l) + 1)};
  }
  }
  return {0, 0};
}

/// Compares one result element; NaN matches NaN, infinities must be equal.
bool matches(ld got, ld want, ld abs_tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  if (std::isnan(got)) return false;
  return std::fabs(got - want) <= abs_tol;
}

/// Checks `got` (shape, dtype and values) against the reference of `op` over `h`.
void check_reduction(const OpCase& op, const Host& h, const AxesList& axes, bool keepdims) {
  const std::string ctx = std::string(op.name) + "(" + name(h.dtype) + " " + str(h.shape) + ", axes " + str(axes) +
                          ", keepdims " + (keepdims ? "true" : "false") + ")";
  Array a = to_array(h);
  Array r;
  try {
    r = call(op, a, axes, keepdims);
  } catch (const std::exception& e) {
    ADD_FAILURE() << ctx << " threw: " << e.what();
    return;
  }
  const Groups gr = group(h, axes, keepdims);
  const DType want_type = result_type(op.r, h.dtype);
  EXPECT_EQ(r.dtype(), want_type) << ctx << ": dtype " << name(r.dtype()) << ", NumPy gives " << name(want_type);
  EXPECT_EQ(r.shape(), gr.shape) << ctx << ": shape " << str(r.shape()) << ", expected " << str(gr.shape);
  if (r.shape() != gr.shape) return;
  std::vector<ld> got;
  try {
    got = read(r);
  } catch (const std::exception& e) {
    ADD_FAILURE() << ctx << " threw when materialized: " << e.what();
    return;
  }
  ASSERT_EQ(got.size(), gr.g.size()) << ctx;
  int failures = 0;
  for (std::size_t k = 0; k < got.size() && failures < 3; ++k) {
    auto [want, tol] = reference(op, h.dtype, gr.g[k]);
    if (r.dtype() == DType::Float32 && tol == 0) want = ld(float(want));
    if (!matches(got[k], want, tol)) {
      ++failures;
      ADD_FAILURE() << ctx << ": element " << k << " is " << double(got[k]) << ", expected " << double(want)
                    << " (allowed error " << double(tol) << ", group of " << gr.g[k].size() << ")";
    }
  }
}

/// Axis choices for an array of rank nd: all (default), none ({}), each axis (also negative), pairs, all listed.
std::vector<AxesList> axis_choices(int nd, bool single_only) {
  std::vector<AxesList> out;
  out.push_back(std::nullopt);
  for (int d = 0; d < nd; ++d) {
    out.push_back(std::vector<int>{d});
    out.push_back(std::vector<int>{d - nd});
  }
  if (single_only) return out;
  out.push_back(std::vector<int>{});
  if (nd == 2) out.push_back(std::vector<int>{1, 0});
  if (nd == 3) {
    out.push_back(std::vector<int>{0, 2});
    out.push_back(std::vector<int>{0, 1});
    out.push_back(std::vector<int>{-1, 1});
    out.push_back(std::vector<int>{2, 0, -2});
  }
  return out;
}

const Shape kShapes[] = {{7}, {5, 9}, {3, 4, 6}, {300, 17}, {17, 300}, {2, 5000}};

void sweep(const OpCase& op) {
  SEEDED(seed);
  for (DType t : kTypes)
    for (const Shape& shape : kShapes) {
      const Host h = op.r == R::Prod ? random_prod(t, shape, seed.rng) : random_general(t, shape, seed.rng);
      for (const AxesList& axes : axis_choices(int(shape.size()), is_arg(op.r)))
        for (bool keepdims : {false, true}) check_reduction(op, h, axes, keepdims);
    }
}

// ---- helpers for the hand-written tests -----------------------------------------------------------------

Array f64(const std::vector<double>& v, Shape shape) {
  return lf::asarray_as(DType::Float64, v, std::move(shape));
}
Array typed(DType t, const std::vector<double>& v, Shape shape) {
  return lf::asarray_as(t, v, std::move(shape));
}

std::vector<double> uniform(std::size_t n, double lo, double hi, std::mt19937_64& rng, DType t = DType::Float64) {
  std::vector<double> v(n);
  std::uniform_real_distribution<double> d(lo, hi);
  for (auto& x : v) x = t == DType::Float32 ? double(float(d(rng))) : d(rng);
  return v;
}

/// Elementwise closeness of a result (read as long double) with per-element allowed errors.
void expect_values(const Array& r, const std::vector<ld>& want, const std::vector<ld>& tol, const std::string& ctx) {
  const auto got = read(r);
  ASSERT_EQ(got.size(), want.size()) << ctx;
  int failures = 0;
  for (std::size_t k = 0; k < got.size() && failures < 5; ++k)
    if (!matches(got[k], want[k], tol[k])) {
      ++failures;
      ADD_FAILURE() << ctx << ": element " << k << " is " << double(got[k]) << ", expected " << double(want[k])
                    << " (allowed error " << double(tol[k]) << ")";
    }
}

template <class F> std::string thrown_message(F&& f) {
  try {
    Array r = f();
    r.eval();
    (void)read(r);
  } catch (const lf::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a lazyfuse::Error> ") + e.what();
  }
  return "<nothing thrown>";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

// ---- every reduction x every dtype x axes x keepdims ------------------------------------------------------

TEST(ReductionSweep, Sum) {
  sweep(kOps[0]);
}
TEST(ReductionSweep, Prod) {
  sweep(kOps[1]);
}
TEST(ReductionSweep, Min) {
  sweep(kOps[2]);
}
TEST(ReductionSweep, Max) {
  sweep(kOps[3]);
}
TEST(ReductionSweep, ArgMax) {
  sweep(kOps[4]);
}
TEST(ReductionSweep, ArgMin) {
  sweep(kOps[5]);
}
TEST(ReductionSweep, Any) {
  sweep(kOps[6]);
}
TEST(ReductionSweep, All) {
  sweep(kOps[7]);
}
TEST(ReductionSweep, Mean) {
  sweep(kOps[8]);
}
TEST(ReductionSweep, VarDdof0) {
  sweep(kOps[9]);
}
TEST(ReductionSweep, VarDdof1) {
  sweep(kOps[10]);
}
TEST(ReductionSweep, StdDdof0) {
  sweep(kOps[11]);
}
TEST(ReductionSweep, StdDdof1) {
  sweep(kOps[12]);
}
TEST(ReductionSweep, CountNonzero) {
  sweep(kOps[13]);
}
TEST(ReductionSweep, LogSumExp) {
  sweep(kOps[14]);
}

TEST(ReductionSweep, AminAmaxAreMinMax) {
  SEEDED(seed);
  for (DType t : kTypes) {
    const Host h = random_general(t, {5, 9}, seed.rng);
    const Array a = to_array(h);
    for (const AxesList& axes : axis_choices(2, false))
      for (bool kd : {false, true}) {
        const lf::Axes ax = axes ? lf::Axes(*axes) : lf::Axes();
        EXPECT_TRUE(lf::array_equal(lf::amin(a, ax, kd), lf::min(a, ax, kd))) << name(t) << " " << str(axes);
        EXPECT_TRUE(lf::array_equal(lf::amax(a, ax, kd), lf::max(a, ax, kd))) << name(t) << " " << str(axes);
        EXPECT_EQ(lf::amax(a, ax, kd).dtype(), t);
      }
  }
}

// ---- fused forms ------------------------------------------------------------------------------------------

TEST(ReductionFused, SoftmaxOverRows) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64})
    for (Shape shape : {Shape{300, 64}, Shape{3, 1000}}) {
      const i64 rows = shape[0], cols = shape[1];
      auto v = uniform(std::size_t(rows * cols), -5, 5, seed.rng, t);
      // One row far from 0: without the max shift exp would overflow (float32 at 89, float64 at 710).
      for (i64 j = 0; j < cols; ++j) v[std::size_t(j)] += t == DType::Float32 ? 100 : 1000;
      const Array m = typed(t, v, shape);
      Array e = lf::exp(m - lf::max(m, 1, true));
      Array s = e / lf::sum(e, 1, true);
      ASSERT_EQ(s.shape(), shape);
      ASSERT_EQ(s.dtype(), t);
      std::vector<ld> want(v.size()), tol(v.size());
      for (i64 i = 0; i < rows; ++i) {
        ld mx = -kInf, sum = 0;
        for (i64 j = 0; j < cols; ++j) mx = std::max<ld>(mx, v[std::size_t(i * cols + j)]);
        for (i64 j = 0; j < cols; ++j) sum += std::exp(ld(v[std::size_t(i * cols + j)]) - mx);
        for (i64 j = 0; j < cols; ++j) {
          const std::size_t k = std::size_t(i * cols + j);
          want[k] = std::exp(ld(v[k]) - mx) / sum;
          tol[k] = tol_of(t) * want[k] + 1e-30L;
        }
      }
      expect_values(s, want, tol, "softmax " + name(t) + " " + str(shape));
      // Rows sum to 1.
      const auto rs = read(lf::sum(s, 1));
      for (i64 i = 0; i < rows; ++i) EXPECT_NEAR(double(rs[std::size_t(i)]), 1.0, tol_of(t)) << "row " << i;
    }
}

TEST(ReductionFused, LayerNorm) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64}) {
    const i64 rows = 300, cols = 64;
    const auto v = uniform(std::size_t(rows * cols), -1, 2, seed.rng, t);
    const auto gv = uniform(std::size_t(cols), 0.5, 1.5, seed.rng, t);
    const auto bv = uniform(std::size_t(cols), -1, 1, seed.rng, t);
    const Array m = typed(t, v, {rows, cols}), gamma = typed(t, gv, {cols}), beta = typed(t, bv, {cols});
    Array y = (m - lf::mean(m, 1, true)) / lf::sqrt(lf::var(m, 1, 0, true) + 1e-5) * gamma + beta;
    ASSERT_EQ(y.shape(), (Shape{rows, cols}));
    ASSERT_EQ(y.dtype(), t);
    std::vector<ld> want(v.size()), tol(v.size());
    for (i64 i = 0; i < rows; ++i) {
      std::vector<ld> row(v.begin() + i * cols, v.begin() + (i + 1) * cols);
      const ld mu = ref_sum(row) / cols, var = ref_var(row, 0);
      for (i64 j = 0; j < cols; ++j) {
        const std::size_t k = std::size_t(i * cols + j);
        want[k] = (ld(v[k]) - mu) / std::sqrt(var + 1e-5L) * gv[std::size_t(j)] + bv[std::size_t(j)];
        tol[k] = tol_of(t) * (1 + std::fabs(want[k]));
      }
    }
    expect_values(y, want, tol, "layer norm " + name(t));
  }
}

// Rows that the CUDA printer reads in vectors, aligned or not, with the row in registers, in its shared-memory row
// cache or in neither: rows of a multiple of 4 elements (vectors, softmax cached), of 4097 (only even rows aligned:
// vectors and a scalar tail, or scalar), the register path's longest rows (8192 float32, 4096 float64) and just past
// them (8193, 10000 float32 and 4100 float64: the shared-memory cache), rows ending inside the register path's last
// trip (8, 1000, 7680 float32, 1000 and 3000 float64), of 13000 float32 and 7000 float64 (more than the cache's 48
// KiB: read again), short rows, and views starting one element into each row. Every row kernel here has at least
// 256 rows (the Row schedule).
TEST(ReductionFused, RowKernelsInVectorsWithAndWithoutTheRowCache) {
  SEEDED(seed);
  struct Case {
    DType t;
    Shape shape;
    bool shifted; // read m[:, 1:] instead of m
  };
  const Case cases[] = {{DType::Float32, {300, 4096}, false},  {DType::Float32, {260, 4097}, false},
                        {DType::Float32, {256, 13000}, false}, {DType::Float64, {256, 7000}, false},
                        {DType::Float64, {300, 1000}, false},  {DType::Float32, {300, 6}, false},
                        {DType::Float32, {300, 1025}, true},   {DType::Float32, {256, 8192}, false},
                        {DType::Float32, {256, 8193}, true},   {DType::Float32, {256, 8193}, false},
                        {DType::Float32, {256, 10000}, false}, {DType::Float64, {256, 4096}, false},
                        {DType::Float64, {256, 4100}, false},  {DType::Float32, {300, 8}, false},
                        {DType::Float32, {300, 1000}, false},  {DType::Float32, {256, 7680}, false},
                        {DType::Float64, {256, 3000}, false}};
  for (const Case& c : cases) {
    const i64 rows = c.shape[0], all_cols = c.shape[1], skip = c.shifted ? 1 : 0, cols = all_cols - skip;
    const auto v = uniform(std::size_t(rows * all_cols), -4, 4, seed.rng, c.t);
    const auto gv = uniform(std::size_t(cols), 0.5, 1.5, seed.rng, c.t);
    Array m = typed(c.t, v, c.shape);
    if (c.shifted) m = m(lf::slice(lf::none, lf::none), lf::slice(1, lf::none));
    const Array gamma = typed(c.t, gv, {cols});
    const std::string ctx = name(c.t) + " " + str(c.shape) + (c.shifted ? " [:, 1:]" : "");
    auto at = [&](i64 i, i64 j) { return ld(v[std::size_t(i * all_cols + j + skip)]); };

    Array e = lf::exp(m - lf::max(m, 1, true));
    Array softmax = e / lf::sum(e, 1, true);
    Array norm = (m - lf::mean(m, 1, true)) / lf::sqrt(lf::var(m, 1, 0, true) + 1e-5) * gamma;
    Array rowvar = lf::mean(m * m, 1) - lf::square(lf::mean(m, 1));
    Array best = lf::argmax(m, 1);
    std::vector<ld> want_s(std::size_t(rows * cols)), tol_s(want_s.size()), want_n(want_s.size()), tol_n(want_s.size());
    std::vector<ld> want_v(static_cast<std::size_t>(rows)), tol_v(want_v.size()), want_a(want_v.size()),
        zero(want_v.size(), 0);
    for (i64 i = 0; i < rows; ++i) {
      std::vector<ld> row(static_cast<std::size_t>(cols));
      for (i64 j = 0; j < cols; ++j) row[std::size_t(j)] = at(i, j);
      const ld mx = *std::max_element(row.begin(), row.end());
      ld sum = 0;
      for (ld x : row) sum += std::exp(x - mx);
      const ld mu = ref_sum(row) / ld(cols), var = ref_var(row, 0);
      std::vector<ld> sq(row.size());
      for (std::size_t j = 0; j < row.size(); ++j) sq[j] = row[j] * row[j];
      want_v[std::size_t(i)] = var;
      tol_v[std::size_t(i)] = tol_of(c.t) * 4 * (ref_sum(sq) / ld(cols) + 1);
      want_a[std::size_t(i)] = ld(std::max_element(row.begin(), row.end()) - row.begin());
      for (i64 j = 0; j < cols; ++j) {
        const std::size_t k = std::size_t(i * cols + j);
        want_s[k] = std::exp(row[std::size_t(j)] - mx) / sum;
        tol_s[k] = tol_of(c.t) * want_s[k] + 1e-30L;
        want_n[k] = (row[std::size_t(j)] - mu) / std::sqrt(var + 1e-5L) * gv[std::size_t(j)];
        tol_n[k] = tol_of(c.t) * (1 + std::fabs(want_n[k]));
      }
    }
    expect_values(softmax, want_s, tol_s, "softmax " + ctx);
    expect_values(norm, want_n, tol_n, "layer norm " + ctx);
    expect_values(rowvar, want_v, tol_v, "rowvar " + ctx);
    expect_values(best, want_a, zero, "argmax " + ctx);
  }
}

// The same rows, aligned (the CUDA printer's vector paths: the row in registers up to 8192 float32 and 4096 float64
// elements, 5000 with a partial last trip, else in shared memory) and starting one element later (odd rows unaligned:
// element by element), give the same bits: every path sums in the one order.
TEST(ReductionDeterminism, RowKernelBitsDoNotDependOnWhereTheRowsStart) {
  SEEDED(seed);
  const std::pair<DType, i64> cases[] = {
      {DType::Float32, 8192}, {DType::Float32, 5000}, {DType::Float32, 9000}, {DType::Float64, 4096}};
  for (const auto& [t, cols] : cases) {
    const i64 rows = 300;
    const auto v = uniform(std::size_t(rows * cols), -3, 3, seed.rng, t);
    std::vector<double> padded(std::size_t(rows * (cols + 1)), 1e3); // column 0 is never read
    for (i64 i = 0; i < rows; ++i)
      for (i64 j = 0; j < cols; ++j) padded[std::size_t(i * (cols + 1) + j + 1)] = v[std::size_t(i * cols + j)];
    const Array aligned = typed(t, v, {rows, cols});
    const Array shifted = typed(t, padded, {rows, cols + 1})(lf::slice(lf::none, lf::none), lf::slice(1, lf::none));
    auto bits = [&](const Array& m) {
      Array e = lf::exp(m - lf::max(m, 1, true));
      Array softmax = e / lf::sum(e, 1, true);
      Array norm = (m - lf::mean(m, 1, true)) / lf::sqrt(lf::var(m, 1, 0, true) + 1e-5);
      lf::eval(softmax, norm);
      const std::size_t bytes = std::size_t(rows * cols) * lf::itemsize(t);
      std::vector<unsigned char> out(2 * bytes);
      if (t == DType::Float32) {
        std::memcpy(out.data(), softmax.get<float>().data(), bytes);
        std::memcpy(out.data() + bytes, norm.get<float>().data(), bytes);
      } else {
        std::memcpy(out.data(), softmax.get<double>().data(), bytes);
        std::memcpy(out.data() + bytes, norm.get<double>().data(), bytes);
      }
      return out;
    };
    EXPECT_TRUE(bits(aligned) == bits(shifted)) << name(t) << " rows of " << cols;
  }
}

TEST(ReductionFused, VarianceFromMeans) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64}) {
    const i64 rows = 300, cols = 64;
    const auto v = uniform(std::size_t(rows * cols), -1, 2, seed.rng, t);
    const Array m = typed(t, v, {rows, cols});
    Array r = lf::mean(m * m, 1) - lf::square(lf::mean(m, 1));
    ASSERT_EQ(r.shape(), (Shape{rows}));
    ASSERT_EQ(r.dtype(), t);
    std::vector<ld> want(static_cast<std::size_t>(rows)), tol(static_cast<std::size_t>(rows));
    for (i64 i = 0; i < rows; ++i) {
      ld s = 0, s2 = 0;
      for (i64 j = 0; j < cols; ++j) {
        const ld x = v[std::size_t(i * cols + j)];
        s += x, s2 += x * x;
      }
      const ld mu = s / cols;
      want[std::size_t(i)] = s2 / cols - mu * mu;
      tol[std::size_t(i)] = tol_of(t) * (s2 / cols + mu * mu); // cancellation: scale of the two terms
    }
    expect_values(r, want, tol, "mean(m*m) - square(mean(m)) " + name(t));
  }
}

TEST(ReductionFused, SumOfSquaredDifferences) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64}) {
    const auto xv = uniform(300 * 64, -1, 1, seed.rng, t), yv = uniform(300 * 64, -1, 1, seed.rng, t);
    const Array x = typed(t, xv, {300, 64}), y = typed(t, yv, {300, 64});
    Array r = lf::sum(lf::square(x - y));
    ASSERT_EQ(r.shape(), Shape{});
    ASSERT_EQ(r.dtype(), t);
    ld want = 0;
    for (std::size_t k = 0; k < xv.size(); ++k) {
      // x - y is rounded to t first, as the library computes it in t.
      const ld d = round_to(t, ld(xv[k]) - ld(yv[k]));
      want += d * d;
    }
    expect_values(r, {want}, {tol_of(t) * want}, "sum(square(x - y)) " + name(t));
  }
}

TEST(ReductionFused, ColumnSumOfTallMatrix) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    const Host h = random_general(t, {1000, 64}, seed.rng);
    check_reduction(kOps[0], h, std::vector<int>{0}, false);
    check_reduction(kOps[0], h, std::vector<int>{0}, true);
  }
}

TEST(ReductionFused, ReductionsOfViews) {
  SEEDED(seed);
  const i64 rows = 300, cols = 17;
  const auto v = uniform(std::size_t(rows * cols), -1, 1, seed.rng);
  const Array m = f64(v, {rows, cols});
  auto at = [&](i64 i, i64 j) { return ld(v[std::size_t(i * cols + j)]); };
  {
    Array r = lf::sum(m.T(), 1); // column sums
    ASSERT_EQ(r.shape(), (Shape{cols}));
    std::vector<ld> want(static_cast<std::size_t>(cols), 0), tol(static_cast<std::size_t>(cols), 0);
    for (i64 j = 0; j < cols; ++j) {
      for (i64 i = 0; i < rows; ++i) want[std::size_t(j)] += at(i, j), tol[std::size_t(j)] += std::fabs(at(i, j));
      tol[std::size_t(j)] *= 1e-12L;
    }
    expect_values(r, want, tol, "sum(m.T(), 1)");
  }
  {
    const Array rev = m(lf::slice(lf::none, lf::none, -1));
    Array r = lf::max(rev, 0);
    Array ai = lf::argmax(rev, 0);
    Array ni = lf::argmin(rev, 0);
    ASSERT_EQ(r.shape(), (Shape{cols}));
    std::vector<ld> want(static_cast<std::size_t>(cols)), wa(static_cast<std::size_t>(cols)),
        wn(static_cast<std::size_t>(cols)), zero(static_cast<std::size_t>(cols), 0);
    for (i64 j = 0; j < cols; ++j) {
      ld mx = -kInf, mn = kInf;
      i64 amx = 0, amn = 0;
      for (i64 k = 0; k < rows; ++k) { // k: index in the reversed view
        const ld x = at(rows - 1 - k, j);
        if (x > mx) mx = x, amx = k;
        if (x < mn) mn = x, amn = k;
      }
      want[std::size_t(j)] = mx, wa[std::size_t(j)] = ld(amx), wn[std::size_t(j)] = ld(amn);
    }
    expect_values(r, want, zero, "max(m[::-1], 0)");
    expect_values(ai, wa, zero, "argmax(m[::-1], 0)");
    expect_values(ni, wn, zero, "argmin(m[::-1], 0)");
  }
  {
    // A strided, offset view: m[1::3, ::2].sum(axis=0) and its mean over both axes.
    const Array s = m(lf::slice(1, lf::none, 3), lf::slice(lf::none, lf::none, 2));
    const i64 r0 = (rows - 1 + 2) / 3, c0 = (cols + 1) / 2;
    ASSERT_EQ(s.shape(), (Shape{r0, c0}));
    std::vector<ld> want(static_cast<std::size_t>(c0), 0), tol(static_cast<std::size_t>(c0), 0);
    ld all = 0, all_abs = 0;
    for (i64 j = 0; j < c0; ++j) {
      for (i64 i = 0; i < r0; ++i) {
        const ld x = at(1 + 3 * i, 2 * j);
        want[std::size_t(j)] += x, tol[std::size_t(j)] += std::fabs(x), all += x, all_abs += std::fabs(x);
      }
      tol[std::size_t(j)] *= 1e-12L;
    }
    expect_values(lf::sum(s, 0), want, tol, "sum(m[1::3, ::2], 0)");
    expect_values(lf::mean(s, {0, 1}), {all / ld(r0 * c0)}, {1e-12L * all_abs / ld(r0 * c0)}, "mean(m[1::3, ::2])");
  }
}

TEST(ReductionFused, LazyBroadcastInputs) {
  SEEDED(seed);
  const i64 n = 300, k = 64;
  const auto av = uniform(std::size_t(n), -1, 1, seed.rng), bv = uniform(std::size_t(k), -1, 1, seed.rng);
  const Array a = f64(av, {n, 1}), b = f64(bv, {k});
  {
    Array r = lf::sum(a * b + 1.0, 1); // (300, 64) never exists in memory
    ASSERT_EQ(r.shape(), (Shape{n}));
    std::vector<ld> want(static_cast<std::size_t>(n), 0), tol(static_cast<std::size_t>(n), 0);
    for (i64 i = 0; i < n; ++i) {
      for (i64 j = 0; j < k; ++j) {
        const ld x = ld(av[std::size_t(i)]) * bv[std::size_t(j)] + 1;
        want[std::size_t(i)] += x, tol[std::size_t(i)] += std::fabs(x);
      }
      tol[std::size_t(i)] *= 1e-12L;
    }
    expect_values(r, want, tol, "sum(a * b + 1, 1)");
  }
  {
    Array r = lf::max(a - b, 0, true);
    ASSERT_EQ(r.shape(), (Shape{1, k}));
    std::vector<ld> want(static_cast<std::size_t>(k), -kInf), zero(static_cast<std::size_t>(k), 0);
    for (i64 j = 0; j < k; ++j)
      for (i64 i = 0; i < n; ++i)
        want[std::size_t(j)] = std::max<ld>(want[std::size_t(j)], ld(double(av[std::size_t(i)] - bv[std::size_t(j)])));
    expect_values(r, want, zero, "max(a - b, 0, keepdims)");
  }
  {
    Array r = lf::argmin(lf::abs(a - b), 1); // nearest b to each a
    ASSERT_EQ(r.shape(), (Shape{n}));
    ASSERT_EQ(r.dtype(), DType::Int64);
    std::vector<ld> want(static_cast<std::size_t>(n)), zero(static_cast<std::size_t>(n), 0);
    for (i64 i = 0; i < n; ++i) {
      double best = dInf;
      i64 bi = 0;
      for (i64 j = 0; j < k; ++j) {
        const double d = std::fabs(av[std::size_t(i)] - bv[std::size_t(j)]);
        if (d < best) best = d, bi = j;
      }
      want[std::size_t(i)] = ld(bi);
    }
    expect_values(r, want, zero, "argmin(abs(a - b), 1)");
  }
  {
    // A reduction feeding arithmetic feeding another reduction.
    Array r = lf::sum(lf::exp(a - lf::max(a)) * lf::mean(b));
    ld mx = -kInf, s = 0, mb = 0;
    for (double x : av) mx = std::max<ld>(mx, x);
    for (double x : bv) mb += x;
    mb /= k;
    ld sabs = 0;
    for (double x : av) s += std::exp(ld(x) - mx) * mb, sabs += std::fabs(std::exp(ld(x) - mx) * mb);
    expect_values(r, {s}, {1e-12L * sabs}, "sum(exp(a - max(a)) * mean(b))");
  }
}

// ---- NaN and infinities ---------------------------------------------------------------------------------------

TEST(ReductionNaN, PropagationAndFirstNaNIndex) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(name(t));
    // Rows: no NaN; NaN at 3; NaNs at 2 and 5 with +inf before; NaN at 0 then -inf; zeros and one NaN.
    const std::vector<double> v = {
        1,    5,     2,     5,    -1, 0,    3,     //
        1,    2,     3,     dNaN, 9,  -9,   4,     //
        dInf, 1,     dNaN,  2,    3,  dNaN, -dInf, //
        dNaN, -dInf, -dInf, 1,    1,  1,    1,     //
        0,    0,     0,     0,    0,  dNaN, 0,     //
    };
    const Array x = typed(t, v, {5, 7});
    const auto nan_rows = std::vector<bool>{false, true, true, true, true};
    const auto s = read(lf::sum(x, 1)), m = read(lf::mean(x, 1)), mx = read(lf::max(x, 1)), mn = read(lf::min(x, 1));
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(std::isnan(s[i]), nan_rows[i]) << "sum row " << i << " = " << double(s[i]);
      EXPECT_EQ(std::isnan(m[i]), nan_rows[i]) << "mean row " << i << " = " << double(m[i]);
      EXPECT_EQ(std::isnan(mx[i]), nan_rows[i]) << "max row " << i << " = " << double(mx[i]);
      EXPECT_EQ(std::isnan(mn[i]), nan_rows[i]) << "min row " << i << " = " << double(mn[i]);
    }
    EXPECT_EQ(double(s[0]), 15.0);
    EXPECT_EQ(double(mx[0]), 5.0);
    EXPECT_EQ(double(mn[0]), -1.0);
    EXPECT_EQ(read(lf::argmax(x, 1)), (std::vector<ld>{1, 3, 2, 0, 5}));
    EXPECT_EQ(read(lf::argmin(x, 1)), (std::vector<ld>{4, 3, 2, 0, 5}));
    EXPECT_EQ(lf::argmax(x).item<i64>(), 10); // first NaN in the flattened array
    EXPECT_EQ(lf::argmin(x).item<i64>(), 10);
    EXPECT_TRUE(std::isnan(lf::sum(x).item<double>()));
    EXPECT_TRUE(std::isnan(lf::max(x).item<double>()));
    EXPECT_TRUE(std::isnan(lf::min(x).item<double>()));
    EXPECT_TRUE(std::isnan(lf::mean(x).item<double>()));
    EXPECT_TRUE(std::isnan(lf::prod(x).item<double>()));
    EXPECT_TRUE(std::isnan(lf::var(x).item<double>()));
    // Columns: max over axis 0 propagates per column.
    const auto cmax = read(lf::max(x, 0));
    for (std::size_t j = 0; j < 7; ++j) {
      const bool has_nan =
          std::isnan(v[7 + j]) || std::isnan(v[14 + j]) || std::isnan(v[21 + j]) || std::isnan(v[28 + j]);
      EXPECT_EQ(std::isnan(cmax[j]), has_nan) << "max column " << j;
    }
    // any/all: NaN is true.
    EXPECT_EQ(read(lf::any(x, 1)), (std::vector<ld>{1, 1, 1, 1, 1}));
    EXPECT_EQ(read(lf::all(x, 1)), (std::vector<ld>{0, 1, 1, 1, 0}));
    EXPECT_EQ(read(lf::count_nonzero(x, 1)), (std::vector<ld>{6, 7, 7, 7, 1}));
    const Array only_nan = typed(t, {dNaN, dNaN}, {2});
    EXPECT_TRUE(lf::all(only_nan).item<bool>());
    EXPECT_TRUE(lf::any(only_nan).item<bool>());
  }
}

TEST(ReductionNaN, FirstNaNInLongRows) {
  // Long rows go through the split schedule; the first NaN must still win over later NaNs and over +inf.
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(name(t));
    SEEDED(seed);
    auto v = uniform(2 * 5000, -1, 1, seed.rng, t);
    v[10] = dInf;
    v[4000] = dNaN;
    v[4999] = dNaN;
    v[5000 + 4999] = dNaN;
    v[5000 + 2500] = dNaN;
    v[5000 + 2501] = dNaN;
    const Array x = typed(t, v, {2, 5000});
    EXPECT_EQ(read(lf::argmax(x, 1)), (std::vector<ld>{4000, 2500}));
    EXPECT_EQ(read(lf::argmin(x, -1)), (std::vector<ld>{4000, 2500}));
    EXPECT_EQ(lf::argmax(x).item<i64>(), 4000);
    EXPECT_EQ(lf::argmin(x.ravel()(lf::slice(5000, lf::none))).item<i64>(), 2500);
    const auto m = read(lf::max(x, 1));
    EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
    const auto s = read(lf::sum(x, 1));
    EXPECT_TRUE(std::isnan(s[0]) && std::isnan(s[1]));
  }
}

// NaN-ignoring reductions over long rows (the split schedule, whose partials start from the identities) and long
// columns, against a host reference: an all-NaN row, a row with a single number, a row with scattered NaN.
TEST(ReductionNaN, NanReductionsOfLongRowsAndColumns) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(name(t));
    SEEDED(seed);
    const std::size_t n = 5000;
    auto v = uniform(3 * n, -1, 1, seed.rng, t);
    for (std::size_t k = 0; k < n; ++k) v[k] = dNaN;     // row 0: all NaN
    for (std::size_t k = n; k < 2 * n; ++k) v[k] = dNaN; // row 1: one number
    v[n + 1234] = 0.75;
    for (std::size_t k = 2 * n; k < 3 * n; k += 7) v[k] = dNaN; // row 2: every 7th NaN
    double lo = dInf, hi = -dInf, total = 0;
    std::size_t count = 0;
    for (std::size_t k = 2 * n; k < 3 * n; ++k)
      if (!std::isnan(v[k])) lo = std::min(lo, v[k]), hi = std::max(hi, v[k]), total += v[k], ++count;
    const Array rows = typed(t, v, {3, std::int64_t(n)});
    // The rows, and the rows read backwards through a view.
    for (const Array& x : {rows, rows(lf::all_of, lf::slice(lf::none, lf::none, -1))}) {
      const auto mx = read(lf::nanmax(x, 1)), mn = read(lf::nanmin(x, 1)), s = read(lf::nansum(x, 1)),
                 m = read(lf::nanmean(x, 1)), var1 = read(lf::nanvar(x, 1, 1));
      EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mn[0]) && std::isnan(m[0]) && std::isnan(var1[0]));
      EXPECT_EQ(double(s[0]), 0.0);
      EXPECT_EQ(double(mx[1]), 0.75);
      EXPECT_EQ(double(mn[1]), 0.75);
      EXPECT_EQ(double(m[1]), 0.75);
      EXPECT_TRUE(std::isnan(var1[1])) << "one number, ddof 1: no degree of freedom";
      EXPECT_EQ(double(mx[2]), hi);
      EXPECT_EQ(double(mn[2]), lo);
      const double tol = t == DType::Float32 ? 1e-4 : 1e-11;
      EXPECT_NEAR(double(s[2]), total, tol * double(count));
      EXPECT_NEAR(double(m[2]), total / double(count), tol);
    }
    // Columns: the same data transposed, reduced over axis 0.
    const Array c = typed(t, v, {3, std::int64_t(n)}).T();
    const auto cmx = read(lf::nanmax(c, 0)), cmn = read(lf::nanmin(c, 0, true).reshape({-1}));
    EXPECT_TRUE(std::isnan(cmx[0]) && std::isnan(cmn[0]));
    EXPECT_EQ(double(cmx[2]), hi);
    EXPECT_EQ(double(cmn[1]), 0.75);
    // keepdims keeps the reduced axis; an empty nanmax has no identity.
    EXPECT_EQ(lf::nanmean(c, 0, true).shape(), (Shape{1, 3}));
    EXPECT_EQ(lf::nanvar(c, 0, 0, true).shape(), (Shape{1, 3}));
    EXPECT_THROW(lf::nanmax(lf::zeros({0, 3}, t), 0), lf::Error);
  }
}

TEST(ReductionNaN, InfinitiesInSumsAndExtremes) {
  const Array x = f64({1, dInf, 2, -dInf, 5, 1, dInf, dInf, -5, -dInf, 0, 1}, {4, 3});
  EXPECT_EQ(read(lf::sum(x, 1)), (std::vector<ld>{kInf, -kInf, kInf, -kInf}));
  EXPECT_TRUE(std::isnan(lf::sum(x).item<double>())); // inf + -inf
  EXPECT_TRUE(std::isnan(read(lf::sum(x, 0))[0]));
  EXPECT_EQ(read(lf::max(x, 1)), (std::vector<ld>{kInf, 5, kInf, 1}));
  EXPECT_EQ(read(lf::min(x, 1)), (std::vector<ld>{1, -kInf, -5, -kInf}));
  EXPECT_EQ(read(lf::argmax(x, 1)), (std::vector<ld>{1, 1, 0, 2}));
  EXPECT_EQ(read(lf::argmin(x, 1)), (std::vector<ld>{0, 0, 2, 0}));
  // All -inf: max is -inf and argmax the first.
  const Array ninf = f64({-dInf, -dInf, -dInf}, {3});
  EXPECT_EQ(lf::max(ninf).item<double>(), -dInf);
  EXPECT_EQ(lf::argmax(ninf).item<i64>(), 0);
  EXPECT_EQ(lf::argmin(f64({dInf, dInf}, {2})).item<i64>(), 0);
}

TEST(ReductionLogSumExp, Infinities) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(name(t));
    const Array x = typed(t,
                          {
                              1,     2,     3,     4,     // finite
                              1,     dInf,  3,     4,     // +inf -> +inf
                              -dInf, -dInf, -dInf, -dInf, // all -inf -> -inf
                              -dInf, 0,     -dInf, 0,     // -inf terms vanish: log 2
                              dInf,  -dInf, 0,     1,     // +inf wins over -inf
                              1000,  1000,  -dInf, 999,   // large: no overflow
                          },
                          {6, 4});
    Array r = lf::logsumexp(x, 1);
    ASSERT_EQ(r.dtype(), t);
    ASSERT_EQ(r.shape(), (Shape{6}));
    const ld big = 1000 + std::log(2 + std::exp(-1.0L));
    const ld finite = std::log(std::exp(1.0L) + std::exp(2.0L) + std::exp(3.0L) + std::exp(4.0L));
    const double tol = tol_of(t);
    expect_values(r, {finite, kInf, -kInf, std::log(2.0L), kInf, big}, {tol * finite, 0, 0, tol, 0, tol * big},
                  "logsumexp rows");
    Array k = lf::logsumexp(x, 1, true);
    EXPECT_EQ(k.shape(), (Shape{6, 1}));
    EXPECT_EQ(lf::logsumexp(x).item<double>(), dInf) << "a +inf anywhere gives +inf";
    EXPECT_EQ(lf::logsumexp(x(2)).item<double>(), -dInf);
    // Columns containing +inf (column 0 and 1) are +inf; column 2 has only -inf, 3, 0.
    const auto c = read(lf::logsumexp(x, 0));
    EXPECT_EQ(c[0], kInf);
    EXPECT_EQ(c[1], kInf);
  }
}

// ---- empty and single-element reductions ----------------------------------------------------------------

TEST(ReductionEmpty, SumAndProdGiveIdentity) {
  for (DType t : kTypes) {
    SCOPED_TRACE(name(t));
    const DType rt = is_float(t) ? t : DType::Int64;
    const Array e = lf::zeros({0}, t);
    Array s = lf::sum(e), p = lf::prod(e);
    EXPECT_EQ(s.dtype(), rt);
    EXPECT_EQ(p.dtype(), rt);
    EXPECT_EQ(s.shape(), Shape{});
    EXPECT_EQ(read(s), (std::vector<ld>{0}));
    EXPECT_EQ(read(p), (std::vector<ld>{1}));
    const Array e2 = lf::zeros({3, 0}, t);
    Array s1 = lf::sum(e2, 1), p1 = lf::prod(e2, 1), s1k = lf::sum(e2, -1, true);
    EXPECT_EQ(s1.shape(), (Shape{3}));
    EXPECT_EQ(s1.dtype(), rt);
    EXPECT_EQ(s1k.shape(), (Shape{3, 1}));
    EXPECT_EQ(read(s1), (std::vector<ld>{0, 0, 0}));
    EXPECT_EQ(read(p1), (std::vector<ld>{1, 1, 1}));
    EXPECT_EQ(read(s1k), (std::vector<ld>{0, 0, 0}));
    Array s0 = lf::sum(e2, 0);
    EXPECT_EQ(s0.shape(), (Shape{0}));
    EXPECT_EQ(read(s0).size(), 0u);
    EXPECT_EQ(read(lf::sum(e2)), (std::vector<ld>{0}));
    EXPECT_EQ(lf::any(e2).item<bool>(), false);
    EXPECT_EQ(lf::all(e2).item<bool>(), true);
    EXPECT_EQ(read(lf::any(e2, 1)), (std::vector<ld>{0, 0, 0}));
    EXPECT_EQ(read(lf::all(e2, 1)), (std::vector<ld>{1, 1, 1}));
    EXPECT_EQ(read(lf::count_nonzero(e2, 1)), (std::vector<ld>{0, 0, 0}));
    EXPECT_EQ(lf::count_nonzero(e2).item<i64>(), 0);
  }
}

// A reduction over no axes combines each element with the identity, as NumPy's does: sum(-0.0) is +0.0 and
// prod(nan + 0j) is nan + nanj ((1 + 0j) * (nan + 0j)); min and max give the element itself, -0.0 included.
TEST(ReductionEmpty, SumAndProdOverNoAxesCombineWithTheIdentity) {
  const std::vector<int> none;
  const Array x = lf::asarray(std::vector<double>{-0.0, 2.5, std::nan("")});
  const auto sum = lf::sum(x, none).get<double>().to_vector();
  EXPECT_FALSE(std::signbit(sum[0])) << "0 + -0.0 is +0.0";
  EXPECT_EQ(sum[1], 2.5);
  EXPECT_TRUE(std::isnan(sum[2]));
  const auto prod = lf::prod(x, none).get<double>().to_vector();
  EXPECT_TRUE(std::signbit(prod[0])) << "1 * -0.0 is -0.0";
  EXPECT_TRUE(std::signbit(lf::max(x, none).get<double>().to_vector()[0]));
  const Array z = lf::asarray(std::vector<std::complex<double>>{{std::nan(""), 0.0}, {1.0, -0.0}});
  const auto zp = lf::prod(z, none).get<std::complex<double>>().to_vector();
  EXPECT_TRUE(std::isnan(zp[0].real()) && std::isnan(zp[0].imag())) << zp[0];
  EXPECT_EQ(zp[1], std::complex<double>(1.0, 0.0));
  EXPECT_FALSE(std::signbit(zp[1].imag())) << "(1 + 0j) * (1 - 0j) has imaginary part +0.0";
  const auto zs = lf::sum(z, none).get<std::complex<double>>().to_vector();
  EXPECT_FALSE(std::signbit(zs[1].imag())) << "(0 + 0j) + (1 - 0j) has imaginary part +0.0";
}

TEST(ReductionEmpty, MaxMinArgOfEmptyThrow) {
  for (DType t : kTypes) {
    SCOPED_TRACE(name(t));
    const Array e = lf::zeros({0}, t), e2 = lf::zeros({3, 0}, t);
    struct Case {
      const char* op;
      std::function<Array()> f;
    };
    const std::vector<Case> cases = {
        {"max", [&] { return lf::max(e); }},
        {"max", [&] { return lf::max(e2, 1); }},
        {"max", [&] { return lf::amax(e2); }},
        {"min", [&] { return lf::min(e); }},
        {"min", [&] { return lf::min(e2, -1, true); }},
        {"argmax", [&] { return lf::argmax(e); }},
        {"argmax", [&] { return lf::argmax(e2, 1); }},
        {"argmin", [&] { return lf::argmin(e2); }},
        {"argmin", [&] { return lf::argmin(e2, 1); }},
    };
    for (const auto& c : cases) {
      const std::string msg = thrown_message(c.f);
      EXPECT_TRUE(contains(msg, c.op) && contains(msg, "zero-size")) << c.op << ": message \"" << msg << "\"";
      EXPECT_FALSE(contains(msg, "<not a lazyfuse::Error>") || contains(msg, "<nothing thrown>"))
          << c.op << ": " << msg;
    }
    // Reducing a non-empty axis of an empty array is fine (NumPy: np.max(np.zeros((3, 0)), axis=0) -> shape (0,)).
    Array m0 = lf::max(e2, 0);
    EXPECT_EQ(m0.shape(), (Shape{0}));
    EXPECT_EQ(m0.dtype(), t);
    EXPECT_EQ(read(m0).size(), 0u);
    Array a0 = lf::argmax(e2, 0);
    EXPECT_EQ(a0.shape(), (Shape{0}));
    EXPECT_EQ(read(a0).size(), 0u);
  }
}

TEST(ReductionEmpty, MeanAndVarOfEmptyAreNaN) {
  for (DType t : kTypes) {
    SCOPED_TRACE(name(t));
    const DType mt = is_float(t) ? t : DType::Float64;
    Array m = lf::mean(lf::zeros({0}, t));
    EXPECT_EQ(m.dtype(), mt);
    EXPECT_EQ(m.shape(), Shape{});
    EXPECT_TRUE(std::isnan(read(m)[0]));
    const auto m1 = read(lf::mean(lf::zeros({3, 0}, t), 1));
    ASSERT_EQ(m1.size(), 3u);
    for (ld x : m1) EXPECT_TRUE(std::isnan(x));
    EXPECT_TRUE(std::isnan(read(lf::var(lf::zeros({0}, t)))[0]));
    EXPECT_TRUE(std::isnan(read(lf::stddev(lf::zeros({0}, t)))[0]));
  }
}

TEST(ReductionEmpty, SingleElement) {
  for (DType t : kTypes) {
    SCOPED_TRACE(name(t));
    const double v = t == DType::Bool ? 1 : 3;
    const Array x = typed(t, {v}, {1}), x2 = typed(t, {v}, {1, 1});
    EXPECT_EQ(read(lf::sum(x)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::prod(x2, 0)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::max(x)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::min(x2, {0, 1}, true)), (std::vector<ld>{v}));
    EXPECT_EQ(lf::min(x2, {0, 1}, true).shape(), (Shape{1, 1}));
    EXPECT_EQ(lf::argmax(x).item<i64>(), 0);
    EXPECT_EQ(lf::argmin(x2, 1).item<i64>(), 0);
    EXPECT_EQ(read(lf::mean(x)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::var(x)), (std::vector<ld>{0}));
    EXPECT_EQ(read(lf::stddev(x2, 1)), (std::vector<ld>{0}));
    EXPECT_TRUE(std::isnan(read(lf::var(x, {}, 1))[0])) << "var(ddof=1) of one element is nan (0/0)";
    EXPECT_TRUE(std::isnan(read(lf::stddev(x, {}, 1))[0]));
    EXPECT_EQ(lf::any(x).item<bool>(), true);
    EXPECT_EQ(lf::all(x).item<bool>(), true);
    EXPECT_EQ(lf::count_nonzero(x).item<i64>(), 1);
    EXPECT_NEAR(double(read(lf::logsumexp(x))[0]), v, 1e-6 * v);
  }
}

TEST(ReductionEmpty, VarWithDdofAtLeastNIsNumPys) {
  // NumPy divides the squared deviations by max(n - ddof, 0): 0/0 = nan, positive/0 = inf.
  const Array x = f64({1, 2}, {2});
  EXPECT_TRUE(std::isnan(lf::var(f64({4, 4}, {2}), {}, 2).item<double>()));
  EXPECT_EQ(lf::var(x, {}, 2).item<double>(), dInf) << "np.var([1., 2.], ddof=2) is inf";
  EXPECT_EQ(lf::var(x, {}, 3).item<double>(), dInf) << "np.var([1., 2.], ddof=3) is inf";
}

// ---- axis errors ------------------------------------------------------------------------------------------

TEST(ReductionErrors, AxisOutOfRange) {
  const Array x = lf::zeros({2, 3, 4});
  struct Case {
    const char* op;
    const char* axis;
    std::function<Array()> f;
  };
  const std::vector<Case> cases = {
      {"sum", "3", [&] { return lf::sum(x, 3); }},         {"sum", "-4", [&] { return lf::sum(x, -4); }},
      {"max", "5", [&] { return lf::max(x, {0, 5}); }},    {"argmax", "3", [&] { return lf::argmax(x, 3); }},
      {"argmin", "-4", [&] { return lf::argmin(x, -4); }}, {"prod", "7", [&] { return lf::prod(x, 7, true); }},
      {"any", "3", [&] { return lf::any(x, 3); }},         {"all", "3", [&] { return lf::all(x, 3); }},
      {"", "3", [&] { return lf::mean(x, 3); }},           {"", "-5", [&] { return lf::var(x, -5); }},
      {"", "4", [&] { return lf::stddev(x, {1, 4}); }},    {"", "3", [&] { return lf::logsumexp(x, 3); }},
      {"", "3", [&] { return lf::count_nonzero(x, 3); }},
  };
  for (const auto& c : cases) {
    std::string msg;
    try {
      Array r = c.f();
      (void)read(r);
      msg = "<nothing thrown>";
    } catch (const lf::IndexError& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.op << " axis " << c.axis << ": threw something other than IndexError: " << e.what();
      continue;
    }
    EXPECT_TRUE(contains(msg, std::string("axis ") + c.axis))
        << "message should name the axis " << c.axis << ": " << msg;
    EXPECT_TRUE(contains(msg, "3")) << "message should name ndim 3: " << msg;
    EXPECT_TRUE(contains(msg, c.op)) << "message should name " << c.op << ": " << msg;
  }
}

TEST(ReductionErrors, DuplicateAxes) {
  const Array x = lf::zeros({2, 3, 4});
  const std::vector<std::function<Array()>> cases = {
      [&] { return lf::sum(x, {0, 0}); },      [&] { return lf::max(x, {1, -2}); },
      [&] { return lf::mean(x, {2, 0, -1}); }, [&] { return lf::var(x, {0, -3}); },
      [&] { return lf::any(x, {1, 1}); },      [&] { return lf::logsumexp(x, {2, 2}); },
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const std::string msg = thrown_message(cases[k]);
    EXPECT_TRUE(contains(msg, "duplicate") && !contains(msg, "<not a lazyfuse::Error>")) << "case " << k << ": " << msg;
  }
}

// ---- accuracy and determinism ----------------------------------------------------------------------------

TEST(ReductionAccuracy, Float32SumOf2To24Values) {
  SEEDED(seed);
  const std::size_t n = std::size_t(1) << 24;
  const double bound = 1e-7 * std::log2(double(n)) * 10; // 2.4e-5
  std::vector<float> v(n);
  auto exact = [&] {
    ld s = 0;
    for (float x : v) s += x;
    return s;
  };
  auto sequential_error = [&](ld ref) {
    float s = 0;
    for (float x : v) s += x;
    return double(std::fabs(ld(s) - ref) / ref);
  };
  std::uniform_real_distribution<float> u01(0.0f, 1.0f);
  for (auto& x : v) x = u01(seed.rng);
  ld ref = exact();
  double seq = sequential_error(ref);
  const char* data = "uniform [0, 1)";
  if (seq <= bound) {
    data = "1 + uniform [0, 0.25)";
    // Uniform data happened to round evenly: 1 + small noise makes a sequential float sum stagnate (above 2^23 every
    // addend rounds to 1), so the test stays meaningful.
    std::uniform_real_distribution<float> noise(0.0f, 0.25f);
    for (auto& x : v) x = 1.0f + noise(seed.rng);
    ref = exact();
    seq = sequential_error(ref);
  }
  ASSERT_GT(seq, bound) << "a sequential float32 sum must fail this bound for the test to mean anything";
  const auto t0 = std::chrono::steady_clock::now();
  float got;
  {
    const Array x = lf::asarray<float>(std::span<const float>(v.data(), v.size()), {i64(n)});
    got = lf::sum(x).item<float>();
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double rel = double(std::fabs(ld(got) - ref) / ref);
  EXPECT_LE(rel, bound) << "sum " << got << " vs reference " << double(ref) << "; sequential float error " << seq;
  std::printf("[          ] float32 sum of 2^24 values (%s): relative error %.3g (sequential float loop: %.3g, "
              "bound %.3g); upload + sum + download %.3f s\n",
              data, rel, seq, bound, secs);
  RecordProperty("sum_2_24_seconds", std::to_string(secs));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_LT(secs, 10.0) << "summing 2^24 floats should take well under 10 s";
#endif
}

TEST(ReductionDeterminism, SameInputSameBits) {
  SEEDED(seed);
  struct Case {
    Shape shape;
    std::function<Array(const Array&)> f;
    const char* what;
  };
  const std::vector<Case> cases = {
      {{2, 5000}, [](const Array& m) { return lf::sum(m, 1); }, "sum(2x5000, 1)"},
      {{1000, 64}, [](const Array& m) { return lf::sum(m, 0); }, "sum(1000x64, 0)"},
      {{300, 17}, [](const Array& m) { return lf::mean(m, 1); }, "mean(300x17, 1)"},
      {{17, 300}, [](const Array& m) { return lf::var(m, 1); }, "var(17x300, 1)"},
      {{1 << 20}, [](const Array& m) { return lf::sum(m); }, "sum(2^20)"},
      {{3, 1000}, [](const Array& m) { return lf::logsumexp(m, 1); }, "logsumexp(3x1000, 1)"},
  };
  for (DType t : {DType::Float32, DType::Float64})
    for (const auto& c : cases) {
      const auto v = uniform(std::size_t(numel(c.shape)), -1, 2, seed.rng, t);
      const Array m = typed(t, v, c.shape);
      std::vector<unsigned char> first;
      for (int rep = 0; rep < 3; ++rep) {
        std::vector<unsigned char> bytes;
        {
          Array r = c.f(m);
          EXPECT_FALSE(r.is_materialized()) << c.what << ": the previous result is dropped, so this is recomputed";
          r.eval();
          bytes.resize(std::size_t(r.size()) * lf::itemsize(t));
          if (t == DType::Float32) {
            auto h = r.get<float>();
            std::memcpy(bytes.data(), h.data(), bytes.size());
          } else {
            auto h = r.get<double>();
            std::memcpy(bytes.data(), h.data(), bytes.size());
          }
        } // r dropped here
        if (rep == 0)
          first = bytes;
        else
          EXPECT_TRUE(bytes == first) << c.what << " " << name(t) << ": evaluation " << rep << " differs bitwise";
      }
    }
}

// ---- argmax/argmin ties ---------------------------------------------------------------------------------------

TEST(ReductionTies, FirstIndexWins) {
  for (DType t : kTypes) {
    SCOPED_TRACE(name(t));
    const double hi = t == DType::Bool ? 1 : 3, lo = 0, mid = t == DType::Bool ? 0 : 1;
    const Array x = typed(t, {mid, hi, hi, lo, hi, lo}, {6});
    EXPECT_EQ(lf::argmax(x).item<i64>(), 1);
    EXPECT_EQ(lf::argmin(x).item<i64>(), t == DType::Bool ? 0 : 3);
    const Array c = typed(t, std::vector<double>(12, hi), {3, 4});
    EXPECT_EQ(read(lf::argmax(c, 1)), (std::vector<ld>{0, 0, 0}));
    EXPECT_EQ(read(lf::argmin(c, 0)), (std::vector<ld>{0, 0, 0, 0}));
    EXPECT_EQ(lf::argmax(c).item<i64>(), 0);
    // Long rows (split schedule) and many rows (row schedule): equal extremes far apart.
    for (Shape shape : {Shape{2, 5000}, Shape{300, 17}, Shape{17, 300}}) {
      const i64 rows = shape[0], cols = shape[1];
      std::vector<double> v(std::size_t(rows * cols), t == DType::Bool ? 0.0 : 1.0);
      for (i64 i = 0; i < rows; ++i) {
        const i64 a = (i * 7 + 3) % cols, b = cols - 1 - (i % 3);       // both hold the maximum
        const i64 c1 = (i * 5 + 1) % cols, c2 = (c1 + cols / 2) % cols; // both hold the minimum (not bool)
        v[std::size_t(i * cols + b)] = hi;
        v[std::size_t(i * cols + a)] = hi;
        if (t != DType::Bool && c1 != a && c1 != b && c2 != a && c2 != b) {
          v[std::size_t(i * cols + c1)] = -5;
          v[std::size_t(i * cols + c2)] = -5;
        }
      }
      const Array m = typed(t, v, shape);
      const auto gmax = read(lf::argmax(m, 1)), gmin = read(lf::argmin(m, 1));
      for (i64 i = 0; i < rows; ++i) {
        const std::vector<double> row(v.begin() + i * cols, v.begin() + (i + 1) * cols);
        // std::max_element/min_element return the first of equal extremes.
        EXPECT_EQ(gmax[std::size_t(i)], ld(std::max_element(row.begin(), row.end()) - row.begin()))
            << str(shape) << " row " << i;
        EXPECT_EQ(gmin[std::size_t(i)], ld(std::min_element(row.begin(), row.end()) - row.begin()))
            << str(shape) << " row " << i;
      }
      // Along axis 0 as well.
      const auto g0 = read(lf::argmax(m, 0));
      for (i64 j = 0; j < cols; ++j) {
        i64 best = 0;
        for (i64 i = 1; i < rows; ++i)
          if (v[std::size_t(i * cols + j)] > v[std::size_t(best * cols + j)]) best = i;
        EXPECT_EQ(g0[std::size_t(j)], ld(best)) << str(shape) << " column " << j;
      }
    }
  }
}

// ---- norms ------------------------------------------------------------------------------------------------

TEST(ReductionNorm, VectorNorms) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    SCOPED_TRACE(name(t));
    const DType rt = is_float(t) ? t : DType::Float64;
    const double tol = tol_of(rt);
    const Host h = random_general(t, {5, 40}, seed.rng);
    const Array m = to_array(h);
    auto norm_ref = [](const std::vector<ld>& g, double ord) -> ld {
      if (std::isinf(ord)) {
        ld r = ord > 0 ? 0 : kInf;
        for (ld x : g) r = ord > 0 ? std::max(r, std::fabs(x)) : std::min(r, std::fabs(x));
        return r;
      }
      if (ord == 0) return ld(std::count_if(g.begin(), g.end(), [](ld x) { return x != 0; }));
      ld s = 0;
      for (ld x : g) s += std::pow(std::fabs(x), ld(ord));
      return std::pow(s, 1 / ld(ord));
    };
    for (double ord : {1.0, 2.0, dInf, -dInf, 0.0, 3.0})
      for (int axis : {0, 1, -1})
        for (bool kd : {false, true}) {
          const std::string ctx =
              "norm ord " + std::to_string(ord) + " axis " + std::to_string(axis) + (kd ? " keepdims" : "");
          Array r = lf::linalg::norm(m, ord, axis, kd);
          const Groups gr = group(h, std::vector<int>{axis}, kd);
          EXPECT_EQ(r.dtype(), rt) << ctx;
          ASSERT_EQ(r.shape(), gr.shape) << ctx;
          std::vector<ld> want, tl;
          for (const auto& g : gr.g) {
            want.push_back(norm_ref(g, ord));
            tl.push_back(tol * want.back());
          }
          expect_values(r, want, tl, ctx);
        }
    // Flattened array (a vector): all ords; default ord is 2.
    const Array flat = m.ravel();
    for (double ord : {1.0, 2.0, dInf, -dInf, 0.0, 3.0}) {
      const ld want = norm_ref(h.v, ord);
      expect_values(lf::linalg::norm(flat, ord), {want}, {tol * want}, "norm of flattened, ord " + std::to_string(ord));
    }
    const ld two = norm_ref(h.v, 2);
    expect_values(lf::linalg::norm(flat), {two}, {tol * two}, "norm(flat)");
    expect_values(lf::linalg::norm(m), {two}, {tol * two}, "norm(matrix) default = Frobenius");
    Array fk = lf::linalg::norm(flat, std::nullopt, {}, true);
    EXPECT_EQ(fk.shape(), (Shape{1}));
  }
}

TEST(ReductionNorm, Frobenius) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64, DType::Int64}) {
    SCOPED_TRACE(name(t));
    const DType rt = is_float(t) ? t : DType::Float64;
    const double tol = tol_of(rt);
    const Host h = random_general(t, {6, 50}, seed.rng);
    const Array m = to_array(h);
    ld s = 0;
    for (ld x : h.v) s += x * x;
    const ld want = std::sqrt(s);
    Array a = lf::linalg::norm(m, std::nullopt, {0, 1});
    Array b = lf::linalg::norm(m, "fro");
    Array c = lf::linalg::norm(m, "fro", {0, 1}, true);
    EXPECT_EQ(a.dtype(), rt);
    EXPECT_EQ(a.shape(), Shape{});
    EXPECT_EQ(b.shape(), Shape{});
    EXPECT_EQ(c.shape(), (Shape{1, 1}));
    expect_values(a, {want}, {tol * want}, "norm(m, axes {0, 1})");
    expect_values(b, {want}, {tol * want}, "norm(m, 'fro')");
    expect_values(c, {want}, {tol * want}, "norm(m, 'fro', {0, 1}, keepdims)");
    // Batched: Frobenius over the last two axes of a rank-3 array.
    const Host h3 = random_general(t, {3, 4, 5}, seed.rng);
    Array r3 = lf::linalg::norm(to_array(h3), "fro", {1, 2});
    ASSERT_EQ(r3.shape(), (Shape{3}));
    std::vector<ld> w3, t3;
    for (int i = 0; i < 3; ++i) {
      ld q = 0;
      for (int k = 0; k < 20; ++k) q += h3.v[std::size_t(i * 20 + k)] * h3.v[std::size_t(i * 20 + k)];
      w3.push_back(std::sqrt(q));
      t3.push_back(tol * w3.back());
    }
    expect_values(r3, w3, t3, "batched Frobenius");
  }
}

// ---- isclose / allclose / array_equal -----------------------------------------------------------------------

TEST(ReductionCompare, IsClose) {
  const Array a = f64({1, 1 + 1e-6, dInf, -dInf, dInf, dNaN, dNaN, 0, 1e-9, 1, 5}, {11});
  const Array b = f64({1, 1, dInf, -dInf, -dInf, dNaN, 1, 1e-9, 0, 1.1, dInf}, {11});
  Array c = lf::isclose(a, b);
  EXPECT_EQ(c.dtype(), DType::Bool);
  EXPECT_EQ(c.shape(), (Shape{11}));
  EXPECT_EQ(read(c), (std::vector<ld>{1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(read(lf::isclose(a, b, 1e-5, 1e-8, true)), (std::vector<ld>{1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0}));
  EXPECT_EQ(read(lf::isclose(a, b, 0.2, 0)), (std::vector<ld>{1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(read(lf::isclose(a, b, 0, 0)), (std::vector<ld>{1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
  // Integer inputs and broadcasting (3, 1) with (4,).
  const Array i = lf::asarray_as(DType::Int32, std::vector<double>{1, 2, 3}, {3, 1});
  const Array j = lf::asarray_as(DType::Int64, std::vector<double>{1, 2, 3, 4}, {4});
  Array ij = lf::isclose(i, j);
  EXPECT_EQ(ij.shape(), (Shape{3, 4}));
  EXPECT_EQ(read(ij), (std::vector<ld>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  // Random data against NumPy's formula |a - b| <= atol + rtol * |b|, in double.
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Float64}) {
    const auto x = uniform(1000, -1, 1, seed.rng, t);
    std::vector<double> y(x.size());
    std::uniform_real_distribution<double> rel(-3e-5, 3e-5);
    for (std::size_t k = 0; k < x.size(); ++k)
      y[k] = t == DType::Float32 ? double(float(x[k] * (1 + rel(seed.rng)))) : x[k] * (1 + rel(seed.rng));
    const auto got = read(lf::isclose(typed(t, x, {1000}), typed(t, y, {1000})));
    int bad = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
      const double d = std::fabs(x[k] - y[k]), lim = 1e-8 + 1e-5 * std::fabs(y[k]);
      if (std::fabs(d - lim) < 1e-12 * lim) continue; // on the boundary: rounding decides
      if (got[k] != ld(d <= lim) && bad++ < 5)
        ADD_FAILURE() << name(t) << " isclose(" << x[k] << ", " << y[k] << ") = " << double(got[k]);
    }
  }
}

TEST(ReductionCompare, AllCloseAndArrayEqual) {
  const Array a = f64({1, 2, 3}, {3});
  EXPECT_TRUE(lf::allclose(a, f64({1, 2, 3 + 1e-7}, {3})));
  EXPECT_FALSE(lf::allclose(a, f64({1, 2, 3.1}, {3})));
  EXPECT_TRUE(lf::allclose(a, f64({1, 2, 3.1}, {3}), 0.1));
  EXPECT_TRUE(lf::allclose(f64({2, 2}, {2}), f64({2}, {1}))) << "allclose broadcasts like NumPy";
  const Array n1 = f64({1, dNaN, dInf}, {3}), n2 = f64({1, dNaN, dInf}, {3});
  EXPECT_FALSE(lf::allclose(n1, n2));
  EXPECT_TRUE(lf::allclose(n1, n2, 1e-5, 1e-8, true));
  EXPECT_FALSE(lf::allclose(f64({dInf}, {1}), f64({-dInf}, {1})));

  EXPECT_TRUE(lf::array_equal(a, f64({1, 2, 3}, {3})));
  EXPECT_FALSE(lf::array_equal(a, f64({1, 2, 4}, {3})));
  EXPECT_TRUE(lf::array_equal(a, lf::asarray_as(DType::Int32, std::vector<double>{1, 2, 3}, {3})))
      << "values compare across dtypes";
  EXPECT_FALSE(lf::array_equal(a, f64({1, 2, 3}, {1, 3}))) << "different shapes";
  EXPECT_FALSE(lf::array_equal(lf::zeros({2, 3}), lf::zeros({3, 2}))) << "different shapes";
  EXPECT_FALSE(lf::array_equal(lf::zeros({3}), lf::zeros({1}))) << "broadcastable but different shapes";
  EXPECT_FALSE(lf::array_equal(lf::zeros({2, 3}), lf::zeros({3}))) << "broadcastable but different shapes";
  EXPECT_FALSE(lf::array_equal(n1, n2)) << "NaN != NaN";
  EXPECT_TRUE(lf::array_equal(lf::zeros({0}), lf::zeros({0})));
  // Large equal arrays with one difference far in.
  SEEDED(seed);
  auto v = uniform(100000, -1, 1, seed.rng);
  const Array big = f64(v, {100, 1000});
  EXPECT_TRUE(lf::array_equal(big, f64(v, {100, 1000})));
  v[77777] += 1;
  EXPECT_FALSE(lf::array_equal(big, f64(v, {100, 1000})));
  EXPECT_FALSE(lf::allclose(big, f64(v, {100, 1000})));
}

// ---- more shapes of inputs ------------------------------------------------------------------------------------

TEST(ReductionViews, SweepOverTransposedInputs) {
  // Every reduction of a non-contiguous (permuted) view, against the reference on the permuted host data.
  SEEDED(seed);
  struct Case {
    Shape base;
    std::vector<int> perm;
  };
  const std::vector<Case> cases = {{{3, 4, 6}, {2, 0, 1}}, {{17, 300}, {1, 0}}, {{5000, 2}, {1, 0}}};
  for (DType t : kTypes)
    for (const auto& c : cases) {
      const Host base = random_general(t, c.base, seed.rng);
      Host h{t, {}, std::vector<ld>(base.v.size())};
      for (int p : c.perm) h.shape.push_back(c.base[std::size_t(p)]);
      const int nd = int(c.base.size());
      // h[idx] = base[idx permuted back]
      std::vector<i64> idx(static_cast<std::size_t>(nd), 0);
      for (std::size_t k = 0; k < h.v.size(); ++k) {
        std::vector<i64> bidx(static_cast<std::size_t>(nd));
        for (int d = 0; d < nd; ++d) bidx[std::size_t(c.perm[std::size_t(d)])] = idx[std::size_t(d)];
        i64 off = 0;
        for (int d = 0; d < nd; ++d) off = off * c.base[std::size_t(d)] + bidx[std::size_t(d)];
        h.v[k] = base.v[std::size_t(off)];
        for (int d = nd - 1; d >= 0; --d) {
          if (++idx[std::size_t(d)] < h.shape[std::size_t(d)]) break;
          idx[std::size_t(d)] = 0;
        }
      }
      const Array view = to_array(base).transpose(c.perm);
      ASSERT_EQ(view.shape(), h.shape);
      for (const OpCase& op : kOps) {
        if (op.r == R::Prod) continue; // general data makes products overflow/zero; products are swept above
        for (const AxesList& axes : axis_choices(nd, is_arg(op.r))) {
          const bool keepdims = (axes && axes->size() == 1);
          const std::string ctx =
              std::string(op.name) + " of transposed " + name(t) + " " + str(h.shape) + " axes " + str(axes);
          Array r = call(op, view, axes, keepdims);
          const Groups gr = group(h, axes, keepdims);
          ASSERT_EQ(r.shape(), gr.shape) << ctx;
          EXPECT_EQ(r.dtype(), result_type(op.r, t)) << ctx;
          std::vector<ld> want, tol;
          for (const auto& g : gr.g) {
            auto [w, e] = reference(op, t, g);
            if (r.dtype() == DType::Float32 && e == 0) w = ld(float(w));
            want.push_back(w), tol.push_back(e);
          }
          expect_values(r, want, tol, ctx);
        }
      }
    }
}

TEST(ReductionViews, ZeroDimensional) {
  for (DType t : kTypes) {
    SCOPED_TRACE(name(t));
    const double v = t == DType::Bool ? 1 : 5;
    const Array x = typed(t, {v}, {});
    EXPECT_EQ(lf::sum(x).shape(), Shape{});
    EXPECT_EQ(read(lf::sum(x)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::max(x)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::prod(x, {}, true)), (std::vector<ld>{v}));
    EXPECT_EQ(lf::argmax(x).item<i64>(), 0);
    EXPECT_EQ(read(lf::mean(x)), (std::vector<ld>{v}));
    EXPECT_EQ(read(lf::var(x)), (std::vector<ld>{0}));
    EXPECT_TRUE(lf::all(x).item<bool>());
    EXPECT_THROW((void)lf::sum(x, 0), lf::IndexError);
    EXPECT_THROW((void)lf::argmax(x, 0), lf::IndexError);
  }
}

TEST(ReductionViews, ExtremeAspectRatios) {
  SEEDED(seed);
  for (DType t : {DType::Float32, DType::Int64})
    for (Shape shape : {Shape{100000, 3}, Shape{3, 100000}}) {
      const Host h = random_general(t, shape, seed.rng);
      for (const OpCase& op : {kOps[0], kOps[3], kOps[4], kOps[8]})
        for (int axis : {0, 1}) check_reduction(op, h, std::vector<int>{axis}, false);
      check_reduction(kOps[0], h, std::nullopt, false);
    }
}

TEST(ReductionFused, SeveralReductionsEvaluatedTogether) {
  SEEDED(seed);
  const i64 rows = 300, cols = 64;
  const auto v = uniform(std::size_t(rows * cols), -1, 2, seed.rng);
  const Array m = f64(v, {rows, cols});
  Array s = lf::sum(m, 1), mx = lf::max(m, 1), am = lf::argmax(m, 1), mu = lf::mean(m, 1), c = lf::sum(m, 0);
  Array centered = m - lf::mean(m, 0);                            // broadcast of a column reduction against its input
  Array nested = lf::sum(lf::max(m.reshape({rows, 8, 8}), 2), 0); // a reduction of a reduction
  lf::eval(s, mx, am, mu, c, centered, nested);
  std::vector<ld> ws, wmx, wam, wmu, ts, zero(static_cast<std::size_t>(rows), 0), wc(static_cast<std::size_t>(cols), 0),
      tc(static_cast<std::size_t>(cols), 0);
  for (i64 i = 0; i < rows; ++i) {
    ld sum = 0, abs = 0, best = -kInf;
    i64 bi = 0;
    for (i64 j = 0; j < cols; ++j) {
      const ld x = v[std::size_t(i * cols + j)];
      sum += x, abs += std::fabs(x);
      if (x > best) best = x, bi = j;
      wc[std::size_t(j)] += x, tc[std::size_t(j)] += 1e-12L * std::fabs(x);
    }
    ws.push_back(sum), ts.push_back(1e-12L * abs), wmx.push_back(best), wam.push_back(ld(bi)),
        wmu.push_back(sum / cols);
  }
  expect_values(s, ws, ts, "sum(m, 1)");
  expect_values(mx, wmx, zero, "max(m, 1)");
  expect_values(am, wam, zero, "argmax(m, 1)");
  std::vector<ld> tmu;
  for (ld e : ts) tmu.push_back(e / cols);
  expect_values(mu, wmu, tmu, "mean(m, 1)");
  expect_values(c, wc, tc, "sum(m, 0)");
  std::vector<ld> wcen, tcen, wn(8, 0), tn(8, 0);
  for (i64 i = 0; i < rows; ++i)
    for (i64 j = 0; j < cols; ++j) {
      wcen.push_back(ld(v[std::size_t(i * cols + j)]) - wc[std::size_t(j)] / rows);
      tcen.push_back(1e-12L * (std::fabs(v[std::size_t(i * cols + j)]) + tc[std::size_t(j)] * 1e12L / rows));
    }
  expect_values(centered, wcen, tcen, "m - mean(m, 0)");
  for (i64 i = 0; i < rows; ++i)
    for (i64 a = 0; a < 8; ++a) {
      ld best = -kInf;
      for (i64 b = 0; b < 8; ++b) best = std::max<ld>(best, v[std::size_t(i * cols + a * 8 + b)]);
      wn[std::size_t(a)] += best, tn[std::size_t(a)] += 1e-12L * std::fabs(best);
    }
  expect_values(nested, wn, tn, "sum(max(m.reshape(300, 8, 8), 2), 0)");
}
