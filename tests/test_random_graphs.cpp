// Randomized differential test: random expression graphs built through the public API, checked against an
// independent reference evaluator written here from scratch (float64 values with a per-element forward error
// bound; integers and booleans exact). Nothing here calls the library's op table, interpreter or dtype rules.
//
// Each case makes 1-4 random leaves (float32, float64, int32, int64, bool; rank 0-4; sometimes large so the CPU
// backend's chunking and threading run), applies 3-25 random operations (elementwise ops with broadcasting and
// weak C++ scalars, astype, views, concatenate / stack / pad / at().set, eval() of intermediates), evaluates one
// to three results (sometimes together with lazyfuse::eval) and compares dtype, shape and values.
//
// Tolerances. The reference rounds to float32 after every op that the library computes in float32 (the library
// computes each op in its promoted dtype). Each element carries an absolute error bound, propagated op by op:
//  * correctly rounded ops (+ - * / sqrt, casts) whose result is exact on exact inputs stay exact (error 0);
//    otherwise they add 1 ulp of the result (covers GPU fma contraction and the reference's double rounding);
//  * exp, log, sin, cos, tanh, erf add 3 ulps (CUDA's are within 2 ulps, glibc's within 1);
//  * errors of the inputs propagate through each op's Lipschitz bound on the interval [x - e, x + e].
// Discrete ops (floor, ceil, trunc, comparisons, float->int/bool casts, where's condition) give an exact result
// when the interval of their input cannot cross a discontinuity, and otherwise mark the element "uncertain"
// (error = inf): uncertain elements are skipped, and their share is reported, and a run fails when over 10% of its
// cases are "blind" (mostly uncertain). So integer/bool results are compared exactly, float results within a bound that
// is a few ulps per op.
//
// Environment: LAZYFUSE_RANDOM_GRAPHS = number of cases (default 300), LAZYFUSE_RANDOM_SEED = base seed
// (default: random, printed), LAZYFUSE_RANDOM_CASE = run only that case number (to reproduce one failure),
// LAZYFUSE_RANDOM_VERBOSE=1 prints every case's program.
#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iomanip>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::Shape;
using i64 = std::int64_t;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSafety = 1.0 + 1e-6;
// Ulps allowed per transcendental op (CUDA float/double functions: <= 2 ulps; glibc: <= 1 ulp).
constexpr double kTranscendentalUlps = 3;
// Magnitude cap for values: ops that could grow beyond it are not generated (keeps ints far from overflow and
// floats well conditioned).
constexpr double kMaxMagnitude = 1e6;
// Largest number of elements an intermediate may have.
constexpr i64 kMaxElements = 300000;

// ---------------------------------------------------------------------------------------------------------
// dtype rules of NumPy 2 (written out independently of the library)
// ---------------------------------------------------------------------------------------------------------

bool isf(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}
bool isi(DType t) {
  return t == DType::Int32 || t == DType::Int64;
}

const char* dname(DType t) {
  switch (t) {
  case DType::Bool: return "bool";
  case DType::Int32: return "int32";
  case DType::Int64: return "int64";
  case DType::Float32: return "float32";
  case DType::Float64: return "float64";
  default: break; // a type this test does not generate
  }
  return "?";
}
const char* dcpp(DType t) {
  switch (t) {
  case DType::Bool: return "lf::DType::Bool";
  case DType::Int32: return "lf::DType::Int32";
  case DType::Int64: return "lf::DType::Int64";
  case DType::Float32: return "lf::DType::Float32";
  case DType::Float64: return "lf::DType::Float64";
  default: break; // a type this test does not generate
  }
  return "?";
}

// np.result_type of two array dtypes.
DType promote(DType a, DType b) {
  // rows/cols: bool, int32, int64, float32, float64
  static const DType table[5][5] = {
      {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64},
      {DType::Int32, DType::Int32, DType::Int64, DType::Float64, DType::Float64},
      {DType::Int64, DType::Int64, DType::Int64, DType::Float64, DType::Float64},
      {DType::Float32, DType::Float64, DType::Float64, DType::Float32, DType::Float64},
      {DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64},
  };
  return table[int(a)][int(b)];
}

// A weak C++ scalar (NEP 50): bool, integer or floating kind.
enum class Kind { Bool, Int, Float };
DType natural(Kind k) {
  return k == Kind::Bool ? DType::Bool : (k == Kind::Int ? DType::Int64 : DType::Float64);
}
DType promote_weak(DType t, Kind k) {
  switch (k) {
  case Kind::Bool: return t;
  case Kind::Int: return t == DType::Bool ? DType::Int64 : t;
  case Kind::Float: return isf(t) ? t : DType::Float64;
  }
  return t;
}

// Result of a float function (sqrt, exp, true_divide, ...) on an input type. NumPy gives float16 for bool inputs
// of unary float functions; lazyfuse has no float16 and documents float32 there (the smallest float it has).
DType float_of(DType t, bool unary) {
  if (isf(t)) return t;
  if (t == DType::Bool) return unary ? DType::Float32 : DType::Float64;
  return DType::Float64;
}

// ---------------------------------------------------------------------------------------------------------
// host tensors: C-order values (as doubles) and an absolute error bound per element (inf = uncertain)
// ---------------------------------------------------------------------------------------------------------

i64 numel(const Shape& s) {
  i64 n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<i64> cstrides(const Shape& s) {
  std::vector<i64> st(s.size(), 1);
  for (int k = int(s.size()) - 2; k >= 0; --k) st[std::size_t(k)] = st[std::size_t(k) + 1] * s[std::size_t(k) + 1];
  return st;
}

std::string shape_str(const Shape& s) {
  std::string out = "{";
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "}";
}

struct HT {
  DType dt = DType::Float64;
  Shape shape;
  std::vector<double> v, e;
  i64 size() const { return i64(v.size()); }
};

HT make_ht(DType dt, Shape shape) {
  HT r;
  r.dt = dt;
  r.shape = std::move(shape);
  auto n = std::size_t(numel(r.shape));
  r.v.assign(n, 0.0);
  r.e.assign(n, 0.0);
  return r;
}

double wrap32(double x) {
  return double(std::int32_t(std::uint32_t(std::uint64_t(i64(x)))));
}

// x as the dtype holds it.
double rnd(DType t, double x) {
  switch (t) {
  case DType::Bool: return x != 0 ? 1.0 : 0.0;
  case DType::Int32: return wrap32(x);
  case DType::Int64: return x;
  case DType::Float32: return double(float(x));
  case DType::Float64: return x;
  default: break; // a type this test does not generate
  }
  return x;
}

// One unit in the last place at magnitude |x| (0 for exact types).
double ulp(DType t, double x) {
  x = std::fabs(x);
  if (!std::isfinite(x)) return kInf;
  if (t == DType::Float32) {
    float f = float(x);
    if (!std::isfinite(f)) return kInf;
    float up = std::nextafter(f, std::numeric_limits<float>::infinity());
    return std::max(double(up) - double(f), double(std::numeric_limits<float>::denorm_min()));
  }
  if (t == DType::Float64) return std::nextafter(x, kInf) - x;
  return 0;
}

// The error of a correctly rounded float op: `prop` propagated from the inputs; exact ops on exact inputs are
// exact everywhere, anything else may differ by one more ulp (rounding, fma contraction).
double finish(DType c, double r, double prop, bool exact) {
  if (prop == 0 && exact) return 0;
  if (!std::isfinite(prop)) return kInf;
  return prop * kSafety + ulp(c, std::fabs(r) + prop);
}
double finish_transcendental(DType c, double r, double prop) {
  if (!std::isfinite(prop)) return kInf;
  return prop * kSafety + kTranscendentalUlps * ulp(c, std::fabs(r) + prop);
}

// A strided view of a (offset and strides in a's C-order elements).
HT affine(const HT& a, const Shape& out, i64 offset, const std::vector<i64>& strides) {
  HT r = make_ht(a.dt, out);
  const i64 n = r.size();
  const int rank = int(out.size());
  std::vector<i64> idx(out.size(), 0);
  i64 src = offset;
  for (i64 i = 0; i < n; ++i) {
    r.v[std::size_t(i)] = a.v[std::size_t(src)];
    r.e[std::size_t(i)] = a.e[std::size_t(src)];
    for (int k = rank - 1; k >= 0; --k) {
      auto K = std::size_t(k);
      ++idx[K];
      src += strides[K];
      if (idx[K] < out[K]) break;
      src -= strides[K] * out[K];
      idx[K] = 0;
    }
  }
  return r;
}

std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t k = 0; k < n; ++k) {
    i64 da = k + a.size() >= n ? a[k + a.size() - n] : 1;
    i64 db = k + b.size() >= n ? b[k + b.size() - n] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

HT ref_broadcast(const HT& a, const Shape& s) {
  if (a.shape == s) return a;
  auto st = cstrides(a.shape);
  std::vector<i64> strides(s.size(), 0);
  const std::size_t lead = s.size() - a.shape.size();
  for (std::size_t k = 0; k < a.shape.size(); ++k) strides[k + lead] = a.shape[k] == 1 ? 0 : st[k];
  return affine(a, s, 0, strides);
}

HT ref_cast(const HT& a, DType to) {
  if (a.dt == to) return a;
  HT r = a;
  r.dt = to;
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    const double v = a.v[i], e = a.e[i];
    if (to == DType::Bool) {
      r.v[i] = v != 0 ? 1 : 0;
      r.e[i] = (e > 0 && std::fabs(v) <= e * kSafety) ? kInf : 0;
    } else if (isi(to)) {
      if (isf(a.dt)) {
        // Truncation toward zero, saturating (values here stay far from the limits).
        double lo = to == DType::Int32 ? -2147483648.0 : -9.2e18, hi = to == DType::Int32 ? 2147483647.0 : 9.2e18;
        r.v[i] = rnd(to, std::clamp(std::trunc(v), lo, hi));
        r.e[i] = (e > 0 && std::trunc(v - e * kSafety) != std::trunc(v + e * kSafety)) ? kInf : 0;
      } else {
        r.v[i] = rnd(to, v);
        r.e[i] = e > 0 ? kInf : 0;
      }
    } else {
      const double x = rnd(to, v);
      r.v[i] = x;
      r.e[i] = e == 0 ? 0 : (std::isfinite(e) ? e * kSafety + ulp(to, std::fabs(x) + e) : kInf);
    }
  }
  return r;
}

// ---- unary ops ----

enum class U { Neg, Abs, Square, Sqrt, Exp, Log, Sin, Cos, Tanh, Erf, Floor, Ceil, Trunc, Not };

// (compute dtype, result dtype), or nullopt where NumPy raises.
std::optional<std::pair<DType, DType>> unary_types(U op, DType t) {
  switch (op) {
  case U::Neg:
    if (t == DType::Bool) return std::nullopt;
    return std::pair{t, t};
  case U::Abs: return std::pair{t, t};
  case U::Square:
    // int8 for bool, as in NumPy (not generated: int8 is not one of the types these graphs model).
    if (t == DType::Bool) return std::pair{DType::Int8, DType::Int8};
    return std::pair{t, t};
  case U::Sqrt:
  case U::Exp:
  case U::Log:
  case U::Sin:
  case U::Cos:
  case U::Tanh:
  case U::Erf: return std::pair{float_of(t, true), float_of(t, true)};
  case U::Floor:
  case U::Ceil:
  case U::Trunc:
    // Integers and bools keep their type (NumPy >= 2.1 / array API).
    return std::pair{t, t};
  case U::Not: return std::pair{DType::Bool, DType::Bool};
  }
  return std::nullopt;
}

HT ref_unary(U op, const HT& x0) {
  auto types = unary_types(op, x0.dt);
  if (!types) throw std::logic_error("ref_unary: invalid dtype");
  const DType c = types->first;
  HT x = ref_cast(x0, c);
  HT r = make_ht(types->second, x.shape);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const double v = x.v[i], e = x.e[i];
    double out = 0, err = 0;
    auto transcendental = [&](double exact, double prop) {
      out = rnd(c, exact);
      err = finish_transcendental(c, out, e == 0 ? 0 : prop);
    };
    auto discrete = [&](double (*f)(double)) {
      out = isf(c) ? f(v) : v;
      if (!isf(c))
        err = e;
      else
        err = (e > 0 && f(v - e * kSafety) != f(v + e * kSafety)) ? kInf : 0;
    };
    switch (op) {
    case U::Neg:
      out = c == DType::Int32 ? wrap32(-v) : -v;
      err = e;
      break;
    case U::Abs:
      out = std::fabs(v);
      err = e;
      break;
    case U::Square:
      if (!isf(c)) {
        out = rnd(c, v * v);
        err = e;
      } else {
        double p = v * v;
        out = rnd(c, p);
        bool exact = c == DType::Float32 ? out == p : std::fma(v, v, -p) == 0;
        err = finish(c, out, e == 0 ? 0 : (2 * std::fabs(v) + e) * e, exact);
      }
      break;
    case U::Sqrt: {
      out = rnd(c, std::sqrt(v));
      bool exact = std::fma(out, out, -v) == 0;
      double prop = 0;
      if (e > 0) {
        prop = std::sqrt(e);
        if (v - e > 0) prop = std::min(prop, e / (std::sqrt(v - e) + std::sqrt(v)));
      }
      err = finish(c, out, prop, exact);
      break;
    }
    case U::Exp: transcendental(std::exp(v), std::exp(v) * std::expm1(e)); break;
    case U::Log: transcendental(std::log(v), v - e > 0 ? e / (v - e) : kInf); break;
    case U::Sin: transcendental(std::sin(v), std::min(e, 2.0)); break;
    case U::Cos: transcendental(std::cos(v), std::min(e, 2.0)); break;
    case U::Tanh: transcendental(std::tanh(v), std::min(e, 2.0)); break;
    case U::Erf: transcendental(std::erf(v), std::min(1.1284 * e, 2.0)); break;
    case U::Floor: discrete(static_cast<double (*)(double)>(std::floor)); break;
    case U::Ceil: discrete(static_cast<double (*)(double)>(std::ceil)); break;
    case U::Trunc: discrete(static_cast<double (*)(double)>(std::trunc)); break;
    case U::Not:
      out = v != 0 ? 0 : 1;
      err = e;
      break;
    }
    r.v[i] = out;
    r.e[i] = err;
  }
  return r;
}

// ---- binary ops ----

enum class B { Add, Sub, Mul, Div, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Xor, FloorDiv, Rem };
const char* bname(B op) {
  static const char* names[] = {"add",         "subtract",   "multiply",    "true_divide",  "minimum",  "maximum",
                                "equal",       "not_equal",  "less",        "less_equal",   "greater",  "greater_equal",
                                "logical_and", "logical_or", "logical_xor", "floor_divide", "remainder"};
  return names[int(op)];
}
bool is_compare(B op) {
  return op >= B::Eq && op <= B::Ge;
}
bool is_logical(B op) {
  return op >= B::And && op <= B::Xor;
}

std::optional<std::pair<DType, DType>> binary_types(B op, DType t) {
  switch (op) {
  case B::Add:
  case B::Mul:
  case B::Min:
  case B::Max: return std::pair{t, t};
  case B::Sub:
    if (t == DType::Bool) return std::nullopt;
    return std::pair{t, t};
  case B::Div: return std::pair{float_of(t, false), float_of(t, false)};
  case B::FloorDiv:
  case B::Rem:
    // int8 for bool, as in NumPy (not generated: only integer operands are divided).
    if (t == DType::Bool) return std::pair{DType::Int8, DType::Int8};
    return std::pair{t, t};
  case B::And:
  case B::Or:
  case B::Xor: return std::pair{DType::Bool, DType::Bool};
  default: return std::pair{t, DType::Bool};
  }
}

// Boolean AND/OR/XOR with certainty: a certain false decides an AND, a certain true decides an OR.
void bool_logic(B op, double a, double ea, double b, double eb, double& out, double& err) {
  const bool A = a != 0, Bv = b != 0, ca = ea == 0, cb = eb == 0;
  if (op == B::And) {
    out = A && Bv;
    err = (ca && cb) || (ca && !A) || (cb && !Bv) ? 0 : kInf;
  } else if (op == B::Or) {
    out = A || Bv;
    err = (ca && cb) || (ca && A) || (cb && Bv) ? 0 : kInf;
  } else {
    out = A != Bv;
    err = ca && cb ? 0 : kInf;
  }
}

// The op on operands already promoted to `t` (array-array: promote(a, b); array-scalar: promote_weak).
HT ref_binary_t(B op, const HT& a0, const HT& b0, DType t) {
  auto types = binary_types(op, t);
  if (!types) throw std::logic_error("ref_binary: invalid dtype");
  const DType c = types->first;
  auto shape = broadcast_shape(a0.shape, b0.shape);
  if (!shape) throw std::logic_error("ref_binary: shapes do not broadcast");
  HT a = ref_broadcast(ref_cast(a0, c), *shape), b = ref_broadcast(ref_cast(b0, c), *shape);
  HT r = make_ht(types->second, *shape);
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    const double x = a.v[i], ex = a.e[i], y = b.v[i], ey = b.e[i];
    double out = 0, err = 0;
    if (is_compare(op)) {
      switch (op) {
      case B::Eq: out = x == y; break;
      case B::Ne: out = x != y; break;
      case B::Lt: out = x < y; break;
      case B::Le: out = x <= y; break;
      case B::Gt: out = x > y; break;
      default: out = x >= y; break;
      }
      const double tol = ex + ey;
      err = tol == 0 ? 0 : (std::fabs(x - y) <= tol * kSafety ? kInf : 0);
    } else if (is_logical(op)) {
      bool_logic(op, x, ex, y, ey, out, err);
    } else if (c == DType::Bool) {
      if (op == B::Add)
        bool_logic(B::Or, x, ex, y, ey, out, err);
      else if (op == B::Mul)
        bool_logic(B::And, x, ex, y, ey, out, err);
      else if (op == B::Min || op == B::Max) {
        out = op == B::Min ? std::min(x, y) : std::max(x, y);
        err = std::max(ex, ey);
      } else {
        throw std::logic_error("ref_binary: bool op");
      }
    } else if (isi(c)) {
      const i64 X = i64(x), Y = i64(y);
      i64 q = 0;
      switch (op) {
      case B::Add: out = double(X + Y); break;
      case B::Sub: out = double(X - Y); break;
      case B::Mul: out = double(X * Y); break;
      case B::Min: out = double(std::min(X, Y)); break;
      case B::Max: out = double(std::max(X, Y)); break;
      case B::FloorDiv:
      case B::Rem:
        if (Y == 0) throw std::logic_error("ref_binary: integer division by zero");
        q = X / Y;
        if ((X % Y != 0) && ((X < 0) != (Y < 0))) --q;
        out = double(op == B::FloorDiv ? q : X - q * Y);
        break;
      default: throw std::logic_error("ref_binary: int op");
      }
      out = rnd(c, out);
      err = ex + ey;
    } else {
      const bool exact_in = ex == 0 && ey == 0;
      switch (op) {
      case B::Add:
      case B::Sub: {
        const double y2 = op == B::Add ? y : -y;
        const double s = x + y2;
        // TwoSum: the exact rounding error of the double sum.
        const double bb = s - x;
        const double terr = (x - (s - bb)) + (y2 - bb);
        out = rnd(c, s);
        err = finish(c, out, exact_in ? 0 : ex + ey, terr == 0 && out == s);
        break;
      }
      case B::Mul: {
        const double p = x * y;
        out = rnd(c, p);
        const bool exact = c == DType::Float32 ? out == p : std::fma(x, y, -p) == 0;
        err = finish(c, out, exact_in ? 0 : std::fabs(x) * ey + std::fabs(y) * ex + ex * ey, exact);
        break;
      }
      case B::Div: {
        const double q = x / y;
        out = rnd(c, q);
        const bool exact = std::fma(out, y, -x) == 0;
        double prop = 0;
        if (!exact_in)
          prop = std::fabs(y) > ey * kSafety ? (ex + std::fabs(q) * ey) / (std::fabs(y) - ey * kSafety) : kInf;
        err = finish(c, out, prop, exact);
        break;
      }
      case B::Min:
      case B::Max:
        out = op == B::Min ? std::min(x, y) : std::max(x, y);
        err = std::max(ex, ey);
        break;
      default: throw std::logic_error("ref_binary: float op");
      }
    }
    r.v[i] = out;
    r.e[i] = err;
  }
  return r;
}

HT ref_binary(B op, const HT& a, const HT& b) {
  return ref_binary_t(op, a, b, promote(a.dt, b.dt));
}

HT ref_where_t(const HT& c0, const HT& a0, const HT& b0, DType t) {
  auto s1 = broadcast_shape(a0.shape, b0.shape);
  auto s = s1 ? broadcast_shape(c0.shape, *s1) : std::nullopt;
  if (!s) throw std::logic_error("ref_where: shapes do not broadcast");
  HT c = ref_broadcast(ref_cast(c0, DType::Bool), *s);
  HT a = ref_broadcast(ref_cast(a0, t), *s), b = ref_broadcast(ref_cast(b0, t), *s);
  HT r = make_ht(t, *s);
  for (std::size_t i = 0; i < r.v.size(); ++i) {
    if (c.e[i] == 0) {
      r.v[i] = c.v[i] != 0 ? a.v[i] : b.v[i];
      r.e[i] = c.v[i] != 0 ? a.e[i] : b.e[i];
    } else {
      r.v[i] = a.v[i];
      r.e[i] = (a.v[i] == b.v[i] && a.e[i] == 0 && b.e[i] == 0) ? 0 : kInf;
    }
  }
  return r;
}

// ---- views and copies ----

HT ref_reshape(const HT& a, Shape s) {
  i64 known = 1;
  int unknown = -1;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (s[k] == -1)
      unknown = int(k);
    else
      known *= s[k];
  }
  if (unknown >= 0) s[std::size_t(unknown)] = a.size() / known;
  HT r = a;
  r.shape = s;
  return r;
}

HT ref_transpose(const HT& a, std::vector<int> perm) {
  const int n = int(a.shape.size());
  if (perm.empty())
    for (int k = n - 1; k >= 0; --k) perm.push_back(k);
  auto st = cstrides(a.shape);
  Shape out;
  std::vector<i64> strides;
  for (int p : perm) {
    int ax = p < 0 ? p + n : p;
    out.push_back(a.shape[std::size_t(ax)]);
    strides.push_back(st[std::size_t(ax)]);
  }
  return affine(a, out, 0, strides);
}

// Python's slice.indices(n) and the number of elements it selects.
void py_slice(i64 n, const lf::Slice& s, i64& start, i64& count) {
  const i64 step = s.step;
  i64 stop;
  if (step > 0) {
    start = s.start ? *s.start : 0;
    stop = s.stop ? *s.stop : n;
    if (start < 0) start = std::max<i64>(start + n, 0);
    if (stop < 0) stop = std::max<i64>(stop + n, 0);
    start = std::min(start, n);
    stop = std::min(stop, n);
    count = stop > start ? (stop - start + step - 1) / step : 0;
  } else {
    start = s.start ? *s.start : n - 1;
    stop = s.stop ? *s.stop : -1;
    if (s.start && start < 0) start = std::max<i64>(start + n, -1);
    if (s.stop && stop < 0) stop = std::max<i64>(stop + n, -1);
    start = std::min(start, n - 1);
    stop = std::min(stop, n - 1);
    count = start > stop ? (start - stop - step - 1) / (-step) : 0;
  }
}

HT ref_index(const HT& a, const std::vector<lf::Index>& idx) {
  const i64 ndim = i64(a.shape.size());
  i64 consumed = 0;
  for (auto& c : idx)
    if (std::holds_alternative<i64>(c) || std::holds_alternative<lf::Slice>(c)) ++consumed;
  auto st = cstrides(a.shape);
  Shape out;
  std::vector<i64> strides;
  i64 offset = 0, axis = 0;
  auto whole = [&] {
    out.push_back(a.shape[std::size_t(axis)]);
    strides.push_back(st[std::size_t(axis)]);
    ++axis;
  };
  for (auto& c : idx) {
    if (auto* k = std::get_if<i64>(&c)) {
      i64 n = a.shape[std::size_t(axis)], j = *k < 0 ? *k + n : *k;
      offset += j * st[std::size_t(axis)];
      ++axis;
    } else if (auto* s = std::get_if<lf::Slice>(&c)) {
      i64 start, count;
      py_slice(a.shape[std::size_t(axis)], *s, start, count);
      if (count > 0) offset += start * st[std::size_t(axis)];
      out.push_back(count);
      strides.push_back(s->step * st[std::size_t(axis)]);
      ++axis;
    } else if (std::holds_alternative<lf::NewAxis>(c)) {
      out.push_back(1);
      strides.push_back(0);
    } else {
      for (i64 k = 0; k < ndim - consumed; ++k) whole();
    }
  }
  while (axis < ndim) whole();
  return affine(a, out, offset, strides);
}

HT iota_like(const Shape& s) {
  HT r = make_ht(DType::Int64, s);
  std::iota(r.v.begin(), r.v.end(), 0.0);
  return r;
}

// base with base[idx] = value (broadcast to the region, cast to base's dtype).
HT ref_set(const HT& base, const std::vector<lf::Index>& idx, const HT& value) {
  HT pos = ref_index(iota_like(base.shape), idx);
  HT v = ref_broadcast(ref_cast(value, base.dt), pos.shape);
  HT r = base;
  for (std::size_t i = 0; i < pos.v.size(); ++i) {
    r.v[std::size_t(pos.v[i])] = v.v[i];
    r.e[std::size_t(pos.v[i])] = v.e[i];
  }
  return r;
}

HT ref_flip(const HT& a, std::optional<int> axis) {
  auto st = cstrides(a.shape);
  std::vector<i64> strides = st;
  i64 offset = 0;
  const int n = int(a.shape.size());
  for (int k = 0; k < n; ++k) {
    if (axis && (*axis < 0 ? *axis + n : *axis) != k) continue;
    auto K = std::size_t(k);
    offset += (a.shape[K] - 1) * st[K];
    strides[K] = -st[K];
  }
  return affine(a, a.shape, offset, strides);
}

HT ref_roll(const HT& a, i64 shift, std::optional<int> axis) {
  if (!axis) {
    HT flat = ref_reshape(a, {a.size()});
    HT r = ref_roll(flat, shift, 0);
    r.shape = a.shape;
    return r;
  }
  const int n = int(a.shape.size());
  const auto ax = std::size_t(*axis < 0 ? *axis + n : *axis);
  HT r = make_ht(a.dt, a.shape);
  const i64 len = a.shape[ax];
  i64 inner = 1, outer = 1;
  for (std::size_t k = ax + 1; k < a.shape.size(); ++k) inner *= a.shape[k];
  for (std::size_t k = 0; k < ax; ++k) outer *= a.shape[k];
  for (i64 o = 0; o < outer; ++o)
    for (i64 j = 0; j < len; ++j) {
      i64 src = (((j - shift) % len) + len) % len;
      for (i64 in = 0; in < inner; ++in) {
        auto d = std::size_t((o * len + j) * inner + in), s = std::size_t((o * len + src) * inner + in);
        r.v[d] = a.v[s];
        r.e[d] = a.e[s];
      }
    }
  return r;
}

HT ref_concat(const std::vector<HT>& xs, int axis) {
  const int n = int(xs[0].shape.size());
  const auto ax = std::size_t(axis < 0 ? axis + n : axis);
  DType t = xs[0].dt;
  for (auto& x : xs) t = promote(t, x.dt);
  Shape out = xs[0].shape;
  out[ax] = 0;
  for (auto& x : xs) out[ax] += x.shape[ax];
  HT r = make_ht(t, out);
  i64 outer = 1, inner = 1;
  for (std::size_t k = 0; k < ax; ++k) outer *= out[k];
  for (std::size_t k = ax + 1; k < out.size(); ++k) inner *= out[k];
  i64 off = 0;
  for (auto& x0 : xs) {
    HT x = ref_cast(x0, t);
    const i64 len = x.shape[ax];
    for (i64 o = 0; o < outer; ++o)
      for (i64 j = 0; j < len * inner; ++j) {
        auto d = std::size_t((o * out[ax] + off) * inner + j), s = std::size_t(o * len * inner + j);
        r.v[d] = x.v[s];
        r.e[d] = x.e[s];
      }
    off += len;
  }
  return r;
}

HT ref_stack(const std::vector<HT>& xs, int axis) {
  const int n = int(xs[0].shape.size()) + 1;
  const auto ax = std::size_t(axis < 0 ? axis + n : axis);
  DType t = xs[0].dt;
  for (auto& x : xs) t = promote(t, x.dt);
  Shape out = xs[0].shape;
  out.insert(out.begin() + std::ptrdiff_t(ax), i64(xs.size()));
  HT r = make_ht(t, out);
  i64 outer = 1, inner = 1;
  for (std::size_t k = 0; k < ax; ++k) outer *= out[k];
  for (std::size_t k = ax + 1; k < out.size(); ++k) inner *= out[k];
  for (std::size_t m = 0; m < xs.size(); ++m) {
    HT x = ref_cast(xs[m], t);
    for (i64 o = 0; o < outer; ++o)
      for (i64 j = 0; j < inner; ++j) {
        auto d = std::size_t((o * i64(xs.size()) + i64(m)) * inner + j), s = std::size_t(o * inner + j);
        r.v[d] = x.v[s];
        r.e[d] = x.e[s];
      }
  }
  return r;
}

// A constant converted to a dtype as NumPy's full(..., dtype) does for the values used here.
double constant_as(DType t, double c) {
  if (t == DType::Bool) return c != 0;
  if (isi(t)) return rnd(t, std::trunc(c));
  return rnd(t, c);
}

HT ref_pad(const HT& a, const std::vector<std::pair<i64, i64>>& w, double value) {
  Shape out = a.shape;
  std::vector<lf::Index> idx;
  for (std::size_t d = 0; d < out.size(); ++d) {
    auto [lo, hi] = w.size() == 1 ? w[0] : w[d];
    out[d] += lo + hi;
    idx.push_back(lf::Slice{lo, lo + a.shape[d], 1});
  }
  HT base = make_ht(a.dt, out);
  std::fill(base.v.begin(), base.v.end(), constant_as(a.dt, value));
  return ref_set(base, idx, a);
}

double maxabs(const HT& a) {
  double m = 0;
  for (double x : a.v) m = std::max(m, std::fabs(x));
  return m;
}
double minabs(const HT& a) {
  double m = kInf;
  for (double x : a.v) m = std::min(m, std::fabs(x));
  return m;
}

// ---------------------------------------------------------------------------------------------------------
// weak C++ scalars
// ---------------------------------------------------------------------------------------------------------

struct Sc {
  int cpp = 0; // 0 bool, 1 int, 2 long long, 3 double, 4 float
  bool b = false;
  int i = 0;
  double f = 0;
  Kind kind() const { return cpp == 0 ? Kind::Bool : (cpp <= 2 ? Kind::Int : Kind::Float); }
  double value() const { return cpp == 0 ? double(b) : (cpp <= 2 ? double(i) : (cpp == 3 ? f : double(float(f)))); }
  std::string text() const {
    char buf[64];
    switch (cpp) {
    case 0: return b ? "true" : "false";
    case 1: return std::to_string(i);
    case 2: return std::to_string(i) + "LL";
    case 3: std::snprintf(buf, sizeof buf, "%.17g", f); break;
    default: std::snprintf(buf, sizeof buf, "%.9gf", double(float(f))); break;
    }
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s.insert(s.size() - (cpp == 4 ? 1 : 0), ".0");
    return s;
  }
  template <class F> Array apply(F&& fn) const {
    switch (cpp) {
    case 0: return fn(b);
    case 1: return fn(i);
    case 2: return fn(static_cast<long long>(i));
    case 3: return fn(f);
    default: return fn(float(f));
    }
  }
};

// The scalar as a 0-d host tensor of the type the array operand gives it.
HT scalar_ht(const Sc& s, DType t) {
  HT r = make_ht(natural(s.kind()), {});
  r.v[0] = s.value();
  return ref_cast(r, t);
}

// ---------------------------------------------------------------------------------------------------------
// the generator
// ---------------------------------------------------------------------------------------------------------

// x.at(i0, i1, ...) for a run-time list of index components.
Array::At at_of(const Array& x, const std::vector<lf::Index>& i) {
  switch (i.size()) {
  case 0: return x.at();
  case 1: return x.at(i[0]);
  case 2: return x.at(i[0], i[1]);
  case 3: return x.at(i[0], i[1], i[2]);
  case 4: return x.at(i[0], i[1], i[2], i[3]);
  case 5: return x.at(i[0], i[1], i[2], i[3], i[4]);
  case 6: return x.at(i[0], i[1], i[2], i[3], i[4], i[5]);
  case 7: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6]);
  case 8: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7]);
  case 9: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7], i[8]);
  default: return x.at(i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7], i[8], i[9]);
  }
}

struct Val {
  Array a;
  HT r;
  std::string name;
};

struct Stats {
  i64 cases = 0, blind_cases = 0, ops = 0, checked = 0, uncertain = 0, float32_checked = 0, exact_checked = 0;
  double worst_ratio = 0; // largest |library - reference| / tolerance seen
};

class Case {
public:
  Case(std::uint64_t seed, Stats& stats) : rng_(seed), stats_(stats) {}

  void run();
  std::string program() const { return prog_.str(); }

private:
  std::mt19937_64 rng_;
  Stats& stats_;
  std::vector<Val> pool_;
  std::ostringstream prog_;
  int counter_ = 0;

  i64 uni(i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng_); }
  double unif(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T> const T& pick(const std::vector<T>& v) { return v[std::size_t(uni(0, i64(v.size()) - 1))]; }

  DType rand_dtype() {
    static const DType all[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool};
    static const int weights[] = {30, 25, 17, 14, 14};
    int w = int(uni(0, 99));
    for (int k = 0; k < 5; ++k) {
      if (w < weights[k]) return all[k];
      w -= weights[k];
    }
    return DType::Float32;
  }

  Shape rand_shape() {
    if (chance(0.06)) {
      // Large: several CPU chunks (256), sometimes several threads (32768 elements per thread).
      i64 total = chance(0.08) ? uni(66000, 80000) : uni(300, 4000);
      int rank = int(uni(1, 3));
      if (rank == 1) return {total};
      i64 a = uni(2, 40);
      if (rank == 2) return {a, std::max<i64>(1, total / a)};
      i64 b = uni(2, 9);
      return {a, b, std::max<i64>(1, total / (a * b))};
    }
    static const int rank_w[] = {8, 22, 30, 22, 18};
    int w = int(uni(0, 99)), rank = 0;
    while (w >= rank_w[rank]) w -= rank_w[rank++];
    Shape s;
    for (int k = 0; k < rank; ++k) s.push_back(chance(0.2) ? 1 : uni(1, 7));
    return s;
  }

  std::string fresh() { return "v" + std::to_string(counter_++); }

  Val& add(Array a, HT r, const std::string& expr) {
    Val v{std::move(a), std::move(r), fresh()};
    prog_ << "  auto " << v.name << " = " << expr << ";  // " << dname(v.r.dt) << " " << shape_str(v.r.shape) << "\n";
    ++stats_.ops;
    pool_.push_back(std::move(v));
    return pool_.back();
  }

  double rand_value(DType t, bool wide) {
    if (t == DType::Bool) return chance(0.5) ? 1 : 0;
    if (isi(t)) {
      i64 m = wide ? 500 : 9, x = 0;
      while (x == 0) x = uni(-m, m);
      return double(x);
    }
    double mag = wide ? unif(0.5, 100) : unif(0.1, 4);
    return rnd(t, chance(0.5) ? mag : -mag);
  }

  std::string values_text(const HT& h) {
    if (h.size() > 48) return "/* " + std::to_string(h.size()) + " values */";
    std::ostringstream os;
    os.precision(17);
    for (i64 i = 0; i < h.size(); ++i) {
      double x = h.v[std::size_t(i)];
      os << (i ? ", " : "");
      if (h.dt == DType::Bool)
        os << (x != 0 ? "true" : "false");
      else if (h.dt == DType::Float32)
        os << float(x) << "f";
      else
        os << x;
    }
    return os.str();
  }

  Val& leaf(Shape shape, DType t) {
    const i64 n = numel(shape);
    HT h = make_ht(t, shape);
    const int kind = int(uni(0, 99));
    if (kind < 8 && n > 0) {
      // full(): a fill node (views and casts of fills fold at build time).
      double c = rand_value(t, chance(0.3));
      std::fill(h.v.begin(), h.v.end(), c);
      std::ostringstream os;
      os.precision(17);
      os << "lf::full(" << shape_str(shape) << ", " << c << ", " << dcpp(t) << ")";
      return add(lf::full(shape, c, t), h, os.str());
    }
    if (kind < 15 && t != DType::Bool) {
      // arange(...).reshape(shape): an iota node.
      const double step = isf(t) ? 0.25 : 1,
                   start = isf(t) ? -0.375 * double(std::min<i64>(n, 16)) : double(uni(-5, 5));
      for (i64 i = 0; i < n; ++i) h.v[std::size_t(i)] = rnd(t, start + double(i) * step);
      std::ostringstream os;
      os.precision(17);
      os << "lf::arange(" << start << ", " << start + double(n) * step << ", " << step << ", " << dcpp(t)
         << ").reshape(" << shape_str(shape) << ")";
      return add(lf::arange(start, start + double(n) * step, step, t).reshape(shape), h, os.str());
    }
    const bool wide = chance(0.3);
    for (auto& x : h.v) x = rand_value(t, wide);
    Array a;
    std::string text = values_text(h);
    std::string expr;
    switch (t) {
    case DType::Bool: {
      std::vector<bool> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<bool>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Int32: {
      std::vector<std::int32_t> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<std::int32_t>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Int64: {
      std::vector<std::int64_t> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<std::int64_t>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Float32: {
      std::vector<float> d(h.v.begin(), h.v.end());
      a = lf::asarray(d, shape);
      expr = "lf::asarray(std::vector<float>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    case DType::Float64: {
      a = lf::asarray(h.v, shape);
      expr = "lf::asarray(std::vector<double>{" + text + "}, " + shape_str(shape) + ")";
      break;
    }
    default: break; // a type this test does not generate
    }
    return add(a, h, expr);
  }

  // A shape that broadcasts against s (drops leading axes, sets some to 1, sometimes adds a leading axis).
  Shape compatible_shape(const Shape& s, bool grow = true) {
    Shape out(s.begin() + std::ptrdiff_t(uni(0, i64(s.size()))), s.end());
    if (chance(0.25)) out = s;
    for (auto& d : out)
      if (chance(0.3)) d = 1;
    if (grow && out.size() == s.size() && out.size() < 4 && chance(0.2) && numel(s) * 3 <= kMaxElements)
      out.insert(out.begin(), uni(1, 3));
    return out;
  }

  Sc rand_scalar(bool nonzero = true, bool small = false) {
    Sc s;
    s.cpp = int(uni(0, 9));
    s.cpp = s.cpp <= 1 ? 0 : (s.cpp <= 4 ? 1 : (s.cpp == 5 ? 2 : (s.cpp <= 8 ? 3 : 4)));
    s.b = nonzero ? true : chance(0.5);
    do s.i = int(uni(-5, 5));
    while (nonzero && s.i == 0);
    s.f = unif(0.25, small ? 2.0 : 4.0) * (chance(0.5) ? 1 : -1);
    if (chance(0.3)) s.f = std::round(s.f * 4) / 4 + (s.f > 0 ? 0.25 : -0.25); // exactly representable
    return s;
  }

  // Index of a random pool value, biased to the newest.
  std::size_t pick_val() {
    if (chance(0.55)) return pool_.size() - 1;
    return std::size_t(uni(0, i64(pool_.size()) - 1));
  }

  // A pool value (or a new leaf) whose shape broadcasts with s within the size limit.
  std::size_t partner(const Shape& s) {
    if (chance(0.6)) {
      std::vector<std::size_t> ok;
      for (std::size_t k = 0; k < pool_.size(); ++k) {
        auto b = broadcast_shape(s, pool_[k].r.shape);
        if (b && numel(*b) <= kMaxElements) ok.push_back(k);
      }
      if (!ok.empty()) return chance(0.5) ? ok.back() : pick(ok);
    }
    leaf(compatible_shape(s), rand_dtype());
    return pool_.size() - 1;
  }

  std::vector<lf::Index> rand_index(const Shape& s, bool allow_empty, bool allow_newaxis) {
    std::vector<lf::Index> idx;
    const int n = int(s.size());
    int axis = 0;
    bool ellipsis = false;
    int stop_at = chance(0.3) ? int(uni(0, n)) : n; // leave trailing axes implicit
    while (axis < stop_at) {
      if (allow_newaxis && chance(0.1)) idx.push_back(lf::NewAxis{});
      if (!ellipsis && chance(0.08)) {
        // The ellipsis stands for some middle axes; the rest are indexed after it.
        ellipsis = true;
        idx.push_back(lf::Ellipsis{});
        stop_at = n;
        int rest = int(uni(0, n - axis));
        axis = n - rest;
        continue;
      }
      const i64 len = s[std::size_t(axis)];
      int kind = int(uni(0, 9));
      if (kind <= 1 && len > 0) {
        idx.push_back(i64(uni(-len, len - 1)));
      } else if (kind == 2) {
        idx.push_back(lf::all_of);
      } else {
        for (int tries = 0;; ++tries) {
          lf::Slice sl;
          sl.step = chance(0.5) ? 1 : uni(-3, 3);
          if (sl.step == 0) sl.step = -1;
          if (chance(0.6)) sl.start = uni(-len - 2, len + 2);
          if (chance(0.6)) sl.stop = uni(-len - 2, len + 2);
          i64 st, count;
          py_slice(len, sl, st, count);
          if (count > 0 || (allow_empty && chance(0.3)) || tries > 20) {
            if (count == 0 && !allow_empty) sl = lf::all_of;
            idx.push_back(sl);
            break;
          }
        }
      }
      ++axis;
    }
    if (allow_newaxis && chance(0.1)) idx.push_back(lf::NewAxis{});
    return idx;
  }

  static std::string index_text(const std::vector<lf::Index>& idx) {
    std::string out;
    for (std::size_t k = 0; k < idx.size(); ++k) {
      if (k) out += ", ";
      if (auto* i = std::get_if<i64>(&idx[k]))
        out += std::to_string(*i);
      else if (auto* s = std::get_if<lf::Slice>(&idx[k])) {
        auto o = [](const std::optional<i64>& v) { return v ? std::to_string(*v) : std::string("lf::none"); };
        if (!s->start && !s->stop && s->step == 1)
          out += "lf::all_of";
        else
          out += "lf::slice(" + o(s->start) + ", " + o(s->stop) + ", " + std::to_string(s->step) + ")";
      } else if (std::holds_alternative<lf::NewAxis>(idx[k]))
        out += "lf::newaxis";
      else
        out += "lf::ellipsis";
    }
    return out;
  }

  // ---- op generators; each returns false when its preconditions do not hold ----
  bool op_unary(std::size_t xi);
  bool op_binary(std::size_t xi);
  bool op_scalar(std::size_t xi);
  bool op_where(std::size_t xi);
  bool op_astype(std::size_t xi);
  bool op_view(std::size_t xi);
  bool op_combine(std::size_t xi);
  void tame(std::size_t xi);

  void check(const Val& v, const std::string& how);
};

// Every op below builds the library expression and the reference side by side.

bool Case::op_unary(std::size_t xi) {
  const Val x = pool_[xi];
  const double m = maxabs(x.r);
  const int k = int(uni(0, 15));
  const DType t = x.r.dt;
  switch (k) {
  case 0:
    if (t == DType::Bool) {
      add(lf::logical_not(x.a), ref_unary(U::Not, x.r), "lf::logical_not(" + x.name + ")");
      return true;
    }
    add(lf::negative(x.a), ref_unary(U::Neg, x.r), "lf::negative(" + x.name + ")");
    return true;
  case 1: add(lf::abs(x.a), ref_unary(U::Abs, x.r), "lf::abs(" + x.name + ")"); return true;
  case 2:
    // square of bool is int8 (as in NumPy), a type these graphs do not model.
    if (m > 1000 || t == DType::Bool) return false;
    add(lf::square(x.a), ref_unary(U::Square, x.r), "lf::square(" + x.name + ")");
    return true;
  case 3: { // sqrt(abs(x) + 1)
    HT r = ref_unary(U::Sqrt, ref_binary_t(B::Add, ref_unary(U::Abs, x.r),
                                           scalar_ht(Sc{1, false, 1, 0}, promote_weak(t, Kind::Int)),
                                           promote_weak(t, Kind::Int)));
    add(lf::sqrt(lf::abs(x.a) + 1), r, "lf::sqrt(lf::abs(" + x.name + ") + 1)");
    return true;
  }
  case 4: { // exp(clip(x, -8.0, 8.0))
    const DType w = promote_weak(t, Kind::Float);
    HT c = ref_binary_t(B::Max, x.r, scalar_ht(Sc{3, false, 0, -8.0}, w), w);
    c = ref_binary_t(B::Min, c, scalar_ht(Sc{3, false, 0, 8.0}, w), w);
    add(lf::exp(lf::clip(x.a, -8.0, 8.0)), ref_unary(U::Exp, c), "lf::exp(lf::clip(" + x.name + ", -8.0, 8.0))");
    return true;
  }
  case 5: { // log(abs(x) + 1.5)
    const DType w = promote_weak(t, Kind::Float);
    HT r = ref_unary(U::Log, ref_binary_t(B::Add, ref_unary(U::Abs, x.r), scalar_ht(Sc{3, false, 0, 1.5}, w), w));
    add(lf::log(lf::abs(x.a) + 1.5), r, "lf::log(lf::abs(" + x.name + ") + 1.5)");
    return true;
  }
  case 6:
    if (m > 1e4) return false;
    add(lf::sin(x.a), ref_unary(U::Sin, x.r), "lf::sin(" + x.name + ")");
    return true;
  case 7:
    if (m > 1e4) return false;
    add(lf::cos(x.a), ref_unary(U::Cos, x.r), "lf::cos(" + x.name + ")");
    return true;
  case 8: add(lf::tanh(x.a), ref_unary(U::Tanh, x.r), "lf::tanh(" + x.name + ")"); return true;
  case 9: add(lf::erf(x.a), ref_unary(U::Erf, x.r), "lf::erf(" + x.name + ")"); return true;
  case 10: add(lf::floor(x.a), ref_unary(U::Floor, x.r), "lf::floor(" + x.name + ")"); return true;
  case 11: add(lf::ceil(x.a), ref_unary(U::Ceil, x.r), "lf::ceil(" + x.name + ")"); return true;
  case 12: add(lf::trunc(x.a), ref_unary(U::Trunc, x.r), "lf::trunc(" + x.name + ")"); return true;
  case 13: add(lf::logical_not(x.a), ref_unary(U::Not, x.r), "lf::logical_not(" + x.name + ")"); return true;
  case 14: { // the operators
    if (t == DType::Bool) {
      add(!x.a, ref_unary(U::Not, x.r), "!" + x.name);
      return true;
    }
    add(-x.a, ref_unary(U::Neg, x.r), "-" + x.name);
    return true;
  }
  default: { // sqrt of a value known to be >= 1 in a float type directly
    if (!isf(t) || minabs(x.r) < 0.5) return false;
    HT sq = ref_unary(U::Square, x.r);
    if (maxabs(sq) > kMaxMagnitude) return false;
    add(lf::sqrt(lf::square(x.a)), ref_unary(U::Sqrt, sq), "lf::sqrt(lf::square(" + x.name + "))");
    return true;
  }
  }
}

bool Case::op_binary(std::size_t xi) {
  const Val x = pool_[xi];
  const Val y = pool_[partner(x.r.shape)];
  const bool swap = chance(0.3);
  const Val& a = swap ? y : x;
  const Val& b = swap ? x : y;
  const DType t = promote(a.r.dt, b.r.dt);
  const double ma = maxabs(a.r), mb = maxabs(b.r);
  const std::string an = a.name, bn = b.name;
  const int k = int(uni(0, 17));
  switch (k) {
  case 0:
  case 1:
    if (ma + mb > kMaxMagnitude) return false;
    if (chance(0.5))
      add(a.a + b.a, ref_binary(B::Add, a.r, b.r), an + " + " + bn);
    else
      add(lf::add(a.a, b.a), ref_binary(B::Add, a.r, b.r), "lf::add(" + an + ", " + bn + ")");
    return true;
  case 2:
  case 3:
    if (ma + mb > kMaxMagnitude || t == DType::Bool) return false;
    add(lf::subtract(a.a, b.a), ref_binary(B::Sub, a.r, b.r), "lf::subtract(" + an + ", " + bn + ")");
    return true;
  case 4:
  case 5:
    if (ma * mb > kMaxMagnitude) return false;
    add(a.a * b.a, ref_binary(B::Mul, a.r, b.r), an + " * " + bn);
    return true;
  case 6:
  case 7: { // a / (abs(b) + 1), or a / b when b is bounded away from zero
    if (isf(b.r.dt) && minabs(b.r) >= 0.5 && chance(0.5)) {
      if (ma / minabs(b.r) > kMaxMagnitude) return false;
      add(lf::true_divide(a.a, b.a), ref_binary(B::Div, a.r, b.r), "lf::true_divide(" + an + ", " + bn + ")");
      return true;
    }
    const DType w = promote_weak(b.r.dt, Kind::Int);
    HT d = ref_binary_t(B::Add, ref_unary(U::Abs, b.r), scalar_ht(Sc{1, false, 1, 0}, w), w);
    add(a.a / (lf::abs(b.a) + 1), ref_binary(B::Div, a.r, d), an + " / (lf::abs(" + bn + ") + 1)");
    return true;
  }
  case 8: add(lf::minimum(a.a, b.a), ref_binary(B::Min, a.r, b.r), "lf::minimum(" + an + ", " + bn + ")"); return true;
  case 9: add(lf::maximum(a.a, b.a), ref_binary(B::Max, a.r, b.r), "lf::maximum(" + an + ", " + bn + ")"); return true;
  case 10: add(a.a < b.a, ref_binary(B::Lt, a.r, b.r), an + " < " + bn); return true;
  case 11:
    add(lf::less_equal(a.a, b.a), ref_binary(B::Le, a.r, b.r), "lf::less_equal(" + an + ", " + bn + ")");
    return true;
  case 12: add(a.a > b.a, ref_binary(B::Gt, a.r, b.r), an + " > " + bn); return true;
  case 13: add(a.a >= b.a, ref_binary(B::Ge, a.r, b.r), an + " >= " + bn); return true;
  case 14:
    if (chance(0.5))
      add(a.a == b.a, ref_binary(B::Eq, a.r, b.r), an + " == " + bn);
    else
      add(a.a != b.a, ref_binary(B::Ne, a.r, b.r), an + " != " + bn);
    return true;
  case 15: {
    int which = int(uni(0, 2));
    B op = which == 0 ? B::And : (which == 1 ? B::Or : B::Xor);
    add(which == 0 ? lf::logical_and(a.a, b.a) : (which == 1 ? lf::logical_or(a.a, b.a) : lf::logical_xor(a.a, b.a)),
        ref_binary(op, a.r, b.r), std::string("lf::") + bname(op) + "(" + an + ", " + bn + ")");
    return true;
  }
  default: { // integer floor_divide / remainder by abs(b) + 1
    if (!isi(a.r.dt) || !isi(b.r.dt)) return false;
    const DType w = promote_weak(b.r.dt, Kind::Int);
    HT d = ref_binary_t(B::Add, ref_unary(U::Abs, b.r), scalar_ht(Sc{1, false, 1, 0}, w), w);
    if (chance(0.5))
      add(lf::floor_divide(a.a, lf::abs(b.a) + 1), ref_binary(B::FloorDiv, a.r, d),
          "lf::floor_divide(" + an + ", lf::abs(" + bn + ") + 1)");
    else
      add(a.a % (lf::abs(b.a) + 1), ref_binary(B::Rem, a.r, d), an + " % (lf::abs(" + bn + ") + 1)");
    return true;
  }
  }
}

bool Case::op_scalar(std::size_t xi) {
  const Val x = pool_[xi];
  const Sc s = rand_scalar(true);
  const DType t = promote_weak(x.r.dt, s.kind());
  const HT sh = scalar_ht(s, t);
  const double m = maxabs(x.r), sv = std::fabs(s.value());
  const std::string xn = x.name, st = s.text();
  const bool left = chance(0.35);
  auto bin = [&](B op, auto fn, const char* name) {
    Array out = s.apply([&](auto c) { return left ? fn(c, x.a) : fn(x.a, c); });
    HT r = left ? ref_binary_t(op, sh, x.r, t) : ref_binary_t(op, x.r, sh, t);
    add(out, r, std::string("lf::") + name + "(" + (left ? st + ", " + xn : xn + ", " + st) + ")");
    return true;
  };
  switch (int(uni(0, 10))) {
  case 0:
  case 1:
    if (m + sv > kMaxMagnitude) return false;
    return bin(
        B::Add, [](auto p, auto q) { return lf::add(p, q); }, "add");
  case 2:
    if (m + sv > kMaxMagnitude || t == DType::Bool) return false;
    return bin(
        B::Sub, [](auto p, auto q) { return lf::subtract(p, q); }, "subtract");
  case 3:
  case 4:
    if (m * sv > kMaxMagnitude) return false;
    return bin(
        B::Mul, [](auto p, auto q) { return lf::multiply(p, q); }, "multiply");
  case 5: {
    if (!left) {
      if (m / sv > kMaxMagnitude) return false;
      Array out = s.apply([&](auto c) { return x.a / c; });
      add(out, ref_binary_t(B::Div, x.r, sh, t), xn + " / " + st);
      return true;
    }
    // s / (abs(x) + 0.5)
    const DType w = promote_weak(x.r.dt, Kind::Float);
    HT d = ref_binary_t(B::Add, ref_unary(U::Abs, x.r), scalar_ht(Sc{3, false, 0, 0.5}, w), w);
    const DType t2 = promote_weak(d.dt, s.kind());
    Array out = s.apply([&](auto c) { return c / (lf::abs(x.a) + 0.5); });
    add(out, ref_binary_t(B::Div, scalar_ht(s, t2), d, t2), st + " / (lf::abs(" + xn + ") + 0.5)");
    return true;
  }
  case 6:
    return bin(
        B::Min, [](auto p, auto q) { return lf::minimum(p, q); }, "minimum");
  case 7:
    return bin(
        B::Max, [](auto p, auto q) { return lf::maximum(p, q); }, "maximum");
  case 8: {
    static const B cmp[] = {B::Eq, B::Ne, B::Lt, B::Le, B::Gt, B::Ge};
    B op = cmp[uni(0, 5)];
    switch (op) {
    case B::Eq:
      return bin(
          op, [](auto p, auto q) { return lf::equal(p, q); }, "equal");
    case B::Ne:
      return bin(
          op, [](auto p, auto q) { return lf::not_equal(p, q); }, "not_equal");
    case B::Lt:
      return bin(
          op, [](auto p, auto q) { return lf::less(p, q); }, "less");
    case B::Le:
      return bin(
          op, [](auto p, auto q) { return lf::less_equal(p, q); }, "less_equal");
    case B::Gt:
      return bin(
          op, [](auto p, auto q) { return lf::greater(p, q); }, "greater");
    default:
      return bin(
          op, [](auto p, auto q) { return lf::greater_equal(p, q); }, "greater_equal");
    }
  }
  case 9: { // clip(x, lo, hi) with two scalars of possibly different kinds
    Sc lo = rand_scalar(false, true), hi = rand_scalar(false, true);
    if (lo.kind() == Kind::Bool || hi.kind() == Kind::Bool) return false;
    if (lo.value() > hi.value()) std::swap(lo, hi);
    const DType t1 = promote_weak(x.r.dt, lo.kind());
    HT c = ref_binary_t(B::Max, x.r, scalar_ht(lo, t1), t1);
    const DType t2 = promote_weak(c.dt, hi.kind());
    c = ref_binary_t(B::Min, c, scalar_ht(hi, t2), t2);
    Array out = lo.apply([&](auto l) { return hi.apply([&](auto h) { return lf::clip(x.a, l, h); }); });
    add(out, c, "lf::clip(" + xn + ", " + lo.text() + ", " + hi.text() + ")");
    return true;
  }
  default: { // compound assignment
    if (m * sv > kMaxMagnitude || m + sv > kMaxMagnitude) return false;
    Array acc = x.a;
    if (chance(0.5)) {
      s.apply([&](auto c) { return acc += c; });
      add(acc, ref_binary_t(B::Add, x.r, sh, t), "(copy of " + xn + ") += " + st);
    } else {
      s.apply([&](auto c) { return acc *= c; });
      add(acc, ref_binary_t(B::Mul, x.r, sh, t), "(copy of " + xn + ") *= " + st);
    }
    return true;
  }
  }
}

bool Case::op_where(std::size_t xi) {
  const Val c = pool_[xi];
  const int kind = int(uni(0, 3));
  if (kind == 0) { // two arrays
    const Val a = pool_[partner(c.r.shape)];
    auto s = broadcast_shape(c.r.shape, a.r.shape);
    const Val b = pool_[partner(*s)];
    auto s2 = broadcast_shape(*s, b.r.shape);
    if (!s2 || numel(*s2) > kMaxElements) return false;
    add(lf::where(c.a, a.a, b.a), ref_where_t(c.r, a.r, b.r, promote(a.r.dt, b.r.dt)),
        "lf::where(" + c.name + ", " + a.name + ", " + b.name + ")");
    return true;
  }
  if (kind == 1) { // array and scalar
    const Val a = pool_[partner(c.r.shape)];
    const Sc s = rand_scalar(false);
    const DType t = promote_weak(a.r.dt, s.kind());
    const bool left = chance(0.5);
    Array out = s.apply([&](auto v) { return left ? lf::where(c.a, v, a.a) : lf::where(c.a, a.a, v); });
    HT r = left ? ref_where_t(c.r, scalar_ht(s, t), a.r, promote(t, a.r.dt))
                : ref_where_t(c.r, a.r, scalar_ht(s, t), promote(a.r.dt, t));
    add(out, r, "lf::where(" + c.name + ", " + (left ? s.text() + ", " + a.name : a.name + ", " + s.text()) + ")");
    return true;
  }
  // two scalars: they promote between themselves
  const Sc p = rand_scalar(false), q = rand_scalar(false);
  const DType t = promote(natural(p.kind()), natural(q.kind()));
  Array out = p.apply([&](auto u) { return q.apply([&](auto v) { return lf::where(c.a, u, v); }); });
  add(out, ref_where_t(c.r, scalar_ht(p, t), scalar_ht(q, t), t),
      "lf::where(" + c.name + ", " + p.text() + ", " + q.text() + ")");
  return true;
}

bool Case::op_astype(std::size_t xi) {
  const Val x = pool_[xi];
  const DType to = rand_dtype();
  if (isi(to) && maxabs(x.r) > 1e9) return false;
  if (chance(0.5))
    add(x.a.astype(to), ref_cast(x.r, to), x.name + ".astype(" + std::string(dcpp(to)) + ")");
  else
    add(lf::astype(x.a, to), ref_cast(x.r, to), "lf::astype(" + x.name + ", " + std::string(dcpp(to)) + ")");
  return true;
}

bool Case::op_view(std::size_t xi) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  switch (int(uni(0, 10))) {
  case 0: add(x.a.T(), ref_transpose(x.r, {}), x.name + ".T()"); return true;
  case 1: {
    std::vector<int> perm(std::size_t(n), 0);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    std::string text;
    for (auto& p : perm) {
      if (chance(0.3)) p -= n;
      text += (text.empty() ? "" : ", ") + std::to_string(p);
    }
    add(lf::permute(x.a, perm), ref_transpose(x.r, perm), "lf::permute(" + x.name + ", {" + text + "})");
    return true;
  }
  case 2:
  case 3: {
    auto idx = rand_index(s, chance(0.03), true);
    add(x.a.index_with(idx), ref_index(x.r, idx), x.name + "(" + index_text(idx) + ")");
    return true;
  }
  case 4: { // broadcast_to a larger shape
    Shape to = s;
    for (auto& d : to)
      if (d == 1 && chance(0.6)) d = uni(1, 5);
    while (to.size() < 5 && chance(0.4)) to.insert(to.begin(), uni(1, 4));
    if (numel(to) > kMaxElements) return false;
    add(lf::broadcast_to(x.a, to), ref_broadcast(x.r, to), "lf::broadcast_to(" + x.name + ", " + shape_str(to) + ")");
    return true;
  }
  case 5: { // reshape into a random factorization (possibly with -1)
    i64 rest = x.r.size();
    if (rest == 0) return false;
    Shape to;
    int rank = int(uni(0, 4));
    for (int k = 0; k + 1 < rank; ++k) {
      std::vector<i64> divs;
      for (i64 d = 1; d <= std::min<i64>(rest, 64); ++d)
        if (rest % d == 0) divs.push_back(d);
      i64 d = pick(divs);
      to.push_back(d);
      rest /= d;
    }
    if (rank > 0)
      to.push_back(rest);
    else if (rest != 1)
      to = {rest};
    std::shuffle(to.begin(), to.end(), rng_);
    Shape call = to;
    if (!call.empty() && chance(0.4)) call[std::size_t(uni(0, i64(call.size()) - 1))] = -1;
    add(x.a.reshape(call), ref_reshape(x.r, to), x.name + ".reshape(" + shape_str(call) + ")");
    return true;
  }
  case 6: {
    if (n == 0 || chance(0.3)) {
      add(lf::flip(x.a), ref_flip(x.r, std::nullopt), "lf::flip(" + x.name + ")");
      return true;
    }
    int ax = int(uni(-n, n - 1));
    add(lf::flip(x.a, ax), ref_flip(x.r, ax), "lf::flip(" + x.name + ", " + std::to_string(ax) + ")");
    return true;
  }
  case 7: {
    i64 shift = uni(-9, 9);
    if (n == 0 || chance(0.3)) {
      add(lf::roll(x.a, shift), ref_roll(x.r, shift, std::nullopt),
          "lf::roll(" + x.name + ", " + std::to_string(shift) + ")");
      return true;
    }
    int ax = int(uni(-n, n - 1));
    add(lf::roll(x.a, shift, ax), ref_roll(x.r, shift, ax),
        "lf::roll(" + x.name + ", " + std::to_string(shift) + ", " + std::to_string(ax) + ")");
    return true;
  }
  case 8: {
    if (n >= 5) return false;
    int ax = int(uni(-n - 1, n));
    int pos = ax < 0 ? ax + n + 1 : ax;
    Shape to = s;
    to.insert(to.begin() + pos, 1);
    add(lf::expand_dims(x.a, ax), ref_reshape(x.r, to), "lf::expand_dims(" + x.name + ", " + std::to_string(ax) + ")");
    return true;
  }
  case 9: {
    std::vector<int> ones;
    for (int k = 0; k < n; ++k)
      if (s[std::size_t(k)] == 1) ones.push_back(k);
    Shape to;
    if (chance(0.5) || ones.empty()) {
      for (auto d : s)
        if (d != 1) to.push_back(d);
      add(lf::squeeze(x.a), ref_reshape(x.r, to), "lf::squeeze(" + x.name + ")");
      return true;
    }
    std::vector<int> axes;
    std::string text;
    for (int k : ones)
      if (chance(0.5)) {
        int ax = chance(0.3) ? k - n : k;
        axes.push_back(ax);
        text += (text.empty() ? "" : ", ") + std::to_string(ax);
      }
    for (int k = 0; k < n; ++k)
      if (std::find(ones.begin(), ones.end(), k) == ones.end() ||
          (std::find(axes.begin(), axes.end(), k) == axes.end() &&
           std::find(axes.begin(), axes.end(), k - n) == axes.end()))
        to.push_back(s[std::size_t(k)]);
    add(lf::squeeze(x.a, axes), ref_reshape(x.r, to), "lf::squeeze(" + x.name + ", std::vector<int>{" + text + "})");
    return true;
  }
  default: { // ravel
    add(x.a.ravel(), ref_reshape(x.r, {x.r.size()}), x.name + ".ravel()");
    return true;
  }
  }
}

bool Case::op_combine(std::size_t xi) {
  const Val x = pool_[xi];
  const Shape& s = x.r.shape;
  const int n = int(s.size());
  switch (int(uni(0, 4))) {
  case 0: { // concatenate with 1-2 arrays that differ along the axis
    if (n == 0) return false;
    int ax = int(uni(-n, n - 1));
    const auto A = std::size_t(ax < 0 ? ax + n : ax);
    std::vector<Val> parts{x};
    int more = int(uni(1, 2));
    for (int k = 0; k < more; ++k) {
      int how = int(uni(0, 2));
      if (how == 0) {
        parts.push_back(x);
      } else if (how == 1) {
        parts.push_back(pool_[std::size_t(uni(0, i64(pool_.size()) - 1))]);
        Shape want = s;
        want[A] = parts.back().r.shape.size() == s.size() ? parts.back().r.shape[A] : 0;
        if (parts.back().r.shape != want) {
          parts.pop_back();
          --k;
          continue;
        }
      } else {
        Shape t = s;
        t[A] = uni(1, 4);
        parts.push_back(leaf(t, rand_dtype()));
      }
    }
    i64 total = 0;
    for (auto& p : parts) total += p.r.size();
    if (total > kMaxElements) return false;
    std::vector<Array> arrays;
    std::vector<HT> refs;
    std::string text;
    for (auto& p : parts) {
      arrays.push_back(p.a);
      refs.push_back(p.r);
      text += (text.empty() ? "" : ", ") + p.name;
    }
    add(lf::concatenate(arrays, ax), ref_concat(refs, ax),
        "lf::concatenate({" + text + "}, " + std::to_string(ax) + ")");
    return true;
  }
  case 1: { // stack x with a transformed x and/or a new leaf of the same shape
    if (n >= 4 || x.r.size() * 3 > kMaxElements) return false;
    std::vector<Val> parts{x};
    parts.push_back(chance(0.5) ? leaf(s, rand_dtype()) : x);
    if (chance(0.4)) parts.push_back(leaf(s, rand_dtype()));
    int ax = int(uni(-n - 1, n));
    std::vector<Array> arrays;
    std::vector<HT> refs;
    std::string text;
    for (auto& p : parts) {
      arrays.push_back(p.a);
      refs.push_back(p.r);
      text += (text.empty() ? "" : ", ") + p.name;
    }
    add(lf::stack(arrays, ax), ref_stack(refs, ax), "lf::stack({" + text + "}, " + std::to_string(ax) + ")");
    return true;
  }
  case 2: { // pad
    if (n == 0) return false;
    std::vector<std::pair<i64, i64>> w;
    Shape out = s;
    std::string text;
    int pairs = chance(0.3) ? 1 : n;
    for (int k = 0; k < pairs; ++k) {
      w.push_back({uni(0, 2), uni(0, 2)});
      text +=
          (text.empty() ? "{" : ", {") + std::to_string(w.back().first) + ", " + std::to_string(w.back().second) + "}";
    }
    for (int k = 0; k < n; ++k) {
      auto [lo, hi] = pairs == 1 ? w[0] : w[std::size_t(k)];
      out[std::size_t(k)] += lo + hi;
    }
    if (numel(out) > kMaxElements) return false;
    double c = chance(0.5) ? double(uni(-3, 3)) : (chance(0.5) ? 2.5 : -1.75);
    std::ostringstream os;
    os << "lf::pad(" << x.name << ", {" << text << "}, " << c << ")";
    add(lf::pad(x.a, w, c), ref_pad(x.r, w, c), os.str());
    return true;
  }
  default: { // at().set / set_at
    auto idx = rand_index(s, chance(0.03), chance(0.5));
    HT region = ref_index(iota_like(s), idx);
    const bool scalar = chance(0.35);
    if (scalar) {
      Sc sc = rand_scalar(false);
      // An integer base takes a float scalar truncated toward zero, a bool base takes "nonzero".
      HT sv = make_ht(x.r.dt, {});
      sv.v[0] = constant_as(x.r.dt, sc.value());
      Array out = sc.apply([&](auto v) { return at_of(x.a, idx).set(v); });
      add(out, ref_set(x.r, idx, sv), x.name + ".at(" + index_text(idx) + ").set(" + sc.text() + ")");
      return true;
    }
    // An array value broadcastable to the region.
    Shape vs = compatible_shape(region.shape, false);
    const Val v = leaf(vs, rand_dtype());
    Array out;
    if (chance(0.5)) {
      out = x.a;
      out.set_at(idx, v.a);
    } else {
      out = at_of(x.a, idx).set(v.a);
    }
    add(out, ref_set(x.r, idx, v.r), x.name + ".at(" + index_text(idx) + ").set(" + v.name + ")");
    return true;
  }
  }
}

// Brings a value's magnitude down (used when the op generators keep refusing).
void Case::tame(std::size_t xi) {
  const Val x = pool_[xi];
  add(lf::tanh(x.a), ref_unary(U::Tanh, x.r), "lf::tanh(" + x.name + ")");
}

void Case::check(const Val& v, const std::string& how) {
  SCOPED_TRACE("checking " + v.name + " (" + how + ")");
  const Array& a = v.a;
  ASSERT_EQ(std::string(dname(a.dtype())), std::string(dname(v.r.dt))) << "dtype of " << v.name;
  ASSERT_EQ(shape_str(a.shape()), shape_str(v.r.shape)) << "shape of " << v.name;
  std::vector<double> got(v.r.v.size());
  switch (v.r.dt) {
  case DType::Bool: {
    auto h = a.get<bool>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = h[i] ? 1 : 0;
    break;
  }
  case DType::Int32: {
    auto h = a.get<std::int32_t>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i]);
    break;
  }
  case DType::Int64: {
    auto h = a.get<std::int64_t>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i]);
    break;
  }
  case DType::Float32: {
    auto h = a.get<float>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = double(h[i]);
    break;
  }
  case DType::Float64: {
    auto h = a.get<double>();
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = h[i];
    break;
  }
  default: break; // a type this test does not generate
  }
  // The float64 view of the same value must be the exact conversion.
  if (chance(0.3)) {
    auto h = a.astype(DType::Float64).get<double>();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(h[i] == got[i] || (std::isnan(h[i]) && std::isnan(got[i])))) {
        ADD_FAILURE() << v.name << ".astype(Float64) differs from " << v.name << " at flat index " << i << ": " << h[i]
                      << " vs " << got[i];
        break;
      }
  }
  int failures = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double ref = v.r.v[i], err = v.r.e[i], out = got[i];
    if (std::isinf(err)) {
      ++stats_.uncertain;
      continue;
    }
    ++stats_.checked;
    if (v.r.dt == DType::Float32) ++stats_.float32_checked;
    if (err == 0) ++stats_.exact_checked;
    const double diff = std::fabs(out - ref);
    if (err > 0) stats_.worst_ratio = std::max(stats_.worst_ratio, diff / err);
    if (!(diff <= err)) {
      if (++failures <= 8) {
        std::vector<i64> idx(v.r.shape.size());
        i64 rem = i64(i);
        for (int k = int(idx.size()) - 1; k >= 0; --k) {
          idx[std::size_t(k)] = rem % v.r.shape[std::size_t(k)];
          rem /= v.r.shape[std::size_t(k)];
        }
        ADD_FAILURE() << std::setprecision(17) << v.name << "[" << shape_str(idx) << "] (" << dname(v.r.dt)
                      << "): library " << out << ", reference " << ref << ", |diff| " << diff << " > tolerance " << err;
      }
    }
  }
  if (failures > 8) ADD_FAILURE() << v.name << ": " << failures << " mismatching elements in all";
}

void Case::run() {
  ++stats_.cases;
  prog_ << "  namespace lf = lazyfuse;\n";
  const int leaves = int(uni(1, 4));
  for (int k = 0; k < leaves; ++k) leaf(rand_shape(), rand_dtype());
  const int ops = int(uni(3, 25));
  for (int k = 0; k < ops; ++k) {
    bool done = false;
    for (int tries = 0; tries < 12 && !done; ++tries) {
      const std::size_t xi = pick_val();
      const int cat = int(uni(0, 99));
      if (cat < 24)
        done = op_unary(xi);
      else if (cat < 44)
        done = op_binary(xi);
      else if (cat < 56)
        done = op_scalar(xi);
      else if (cat < 61)
        done = op_where(xi);
      else if (cat < 67)
        done = op_astype(xi);
      else if (cat < 88)
        done = op_view(xi);
      else if (cat < 96)
        done = op_combine(xi);
      else {
        pool_[xi].a.eval();
        prog_ << "  " << pool_[xi].name << ".eval();\n";
        done = true;
      }
    }
    if (!done) tame(pool_.size() - 1);
  }
  // Results: the newest value and up to two others.
  std::vector<std::size_t> roots{pool_.size() - 1};
  const int extra = int(uni(0, 2));
  for (int k = 0; k < extra; ++k) {
    std::size_t r = std::size_t(uni(0, i64(pool_.size()) - 1));
    if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  }
  std::string how = "get";
  if (roots.size() > 1 && chance(0.5)) {
    how = "evaluated together with lf::eval";
    std::string names;
    for (auto r : roots) names += (names.empty() ? "" : ", ") + pool_[r].name;
    prog_ << "  lf::eval(" << names << ");\n";
    if (roots.size() == 2)
      lf::eval(pool_[roots[0]].a, pool_[roots[1]].a);
    else
      lf::eval(pool_[roots[0]].a, pool_[roots[1]].a, pool_[roots[2]].a);
  } else if (chance(0.2)) {
    how = "eval() then get";
    pool_[roots[0]].a.eval();
  }
  const i64 checked0 = stats_.checked, uncertain0 = stats_.uncertain;
  for (auto r : roots) {
    prog_ << "  // check " << pool_[r].name << "\n";
    check(pool_[r], how);
  }
  const i64 checked = stats_.checked - checked0, uncertain = stats_.uncertain - uncertain0;
  if (uncertain > checked) ++stats_.blind_cases;
}

// ---------------------------------------------------------------------------------------------------------

std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  return std::strtoull(s, nullptr, 10);
}

std::uint64_t mix(std::uint64_t x) { // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void run_cases(std::uint64_t base_seed, i64 count, const char* label) {
  Stats stats;
  const auto plan_hits_before = lazyfuse::kernel_cache_stats().plan_hits;
  const bool verbose = env_u64("LAZYFUSE_RANDOM_VERBOSE", 0) != 0;
  const char* only = std::getenv("LAZYFUSE_RANDOM_CASE");
  const auto t0 = std::chrono::steady_clock::now();
  i64 failed = 0;
  for (i64 c = 0; c < count; ++c) {
    if (only && *only && i64(std::strtoll(only, nullptr, 10)) != c) continue;
    const std::uint64_t seed = mix(mix(base_seed) + std::uint64_t(c));
    SCOPED_TRACE("LAZYFUSE_RANDOM_SEED=" + std::to_string(base_seed) + " LAZYFUSE_RANDOM_CASE=" + std::to_string(c) +
                 " (" + label + ")");
    // Each case runs twice: the second run builds equal graphs over new buffers, so its materializations replay
    // the first run's kernels from the plan cache (runtime/PlanCache.h) instead of partitioning and lowering.
    Case k(seed, stats), again(seed, stats);
    const int before = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
    for (Case* run : {&k, &again}) {
      try {
        run->run();
      } catch (const std::exception& e) {
        ADD_FAILURE() << (run == &k ? "exception: " : "exception (second run, replayed plans): ") << e.what();
      }
    }
    const int after = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
    if (after != before) {
      ++failed;
      ADD_FAILURE() << "case " << c << " program:\n" << k.program();
      if (failed >= 5) {
        ADD_FAILURE() << "stopping after 5 failing cases";
        break;
      }
    } else if (verbose) {
      std::printf("case %lld:\n%s", static_cast<long long>(c), k.program().c_str());
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[%s] seed %llu: %lld cases, %lld ops, %lld elements checked (%lld exact, %lld float32), %lld "
              "uncertain skipped (%.3f%%; %lld blind cases), largest error / tolerance %.3f, %.2f s\n",
              label, static_cast<unsigned long long>(base_seed), static_cast<long long>(stats.cases),
              static_cast<long long>(stats.ops), static_cast<long long>(stats.checked),
              static_cast<long long>(stats.exact_checked), static_cast<long long>(stats.float32_checked),
              static_cast<long long>(stats.uncertain),
              100.0 * double(stats.uncertain) / double(std::max<i64>(1, stats.checked + stats.uncertain)),
              static_cast<long long>(stats.blind_cases), stats.worst_ratio, secs);
  // The second runs must have replayed plans (most cases materialize something the plan cache records).
  if (stats.cases >= 20) {
    EXPECT_GT(lazyfuse::kernel_cache_stats().plan_hits, plan_hits_before) << "no second run replayed a plan";
  }
  // The test must keep its power: uncertain elements (near a discontinuity) must stay rare.
  // (A case is "blind" when most of its result elements are uncertain.)
  if (stats.cases >= 50) {
    EXPECT_LT(double(stats.blind_cases), 0.1 * double(stats.cases)) << "too many cases with mostly uncertain results";
  }
}

TEST(RandomGraphs, Differential) {
  const i64 count = i64(env_u64("LAZYFUSE_RANDOM_GRAPHS", 300));
  const std::uint64_t seed = env_u64("LAZYFUSE_RANDOM_SEED", std::random_device{}());
  std::printf("RandomGraphs.Differential: LAZYFUSE_RANDOM_SEED=%llu LAZYFUSE_RANDOM_GRAPHS=%lld\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(count));
  run_cases(seed, count, "random seed");
}

// A fixed seed: a regression this catches always reproduces.
TEST(RandomGraphs, FixedSeed) {
  run_cases(20240601, 150, "fixed seed");
}

} // namespace
