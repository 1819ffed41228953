// The reference evaluator of tests/test_random_graphs.cpp: NumPy 2's dtype rules and every op the generator uses,
// written out independently of the library, on host tensors of float64 values with a per-element absolute error
// bound (inf = uncertain). See the test's header comment for how the bounds are derived.
#pragma once

#include <lazyfuse/lazyfuse.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace random_graphs {

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::Shape;
using i64 = std::int64_t;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSafety = 1.0 + 1e-6;
// Ulps allowed per transcendental op: CUDA's float/double functions are within 2 ulps, glibc's within 1, NumPy's
// float32 SIMD functions within 4 (np.log 3.83, np.exp 2.52), and the NumPy oracle compares against NumPy with
// these same bounds.
constexpr double kTranscendentalUlps = 4;
// Magnitude cap for values: ops that could grow beyond it are not generated (keeps ints far from overflow and
// floats well conditioned).
constexpr double kMaxMagnitude = 1e6;
// Largest number of elements an intermediate may have.
constexpr i64 kMaxElements = 300000;

// ---------------------------------------------------------------------------------------------------------
// dtype rules of NumPy 2 (written out independently of the library)
// ---------------------------------------------------------------------------------------------------------

// The real floating types (float16 and bfloat16 round every op's result to the type, docs/semantics.md).
inline bool isf(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
// The complex types; a complex value is a pair of values of its part type, each part rounded on its own.
inline bool isc(DType t) {
  return t == DType::Complex64 || t == DType::Complex128;
}
inline DType part_of(DType t) {
  return t == DType::Complex64 ? DType::Float32 : (t == DType::Complex128 ? DType::Float64 : t);
}
// What abs (and real, imag) gives for t: the part type of a complex type, t itself otherwise.
inline DType real_of(DType t) {
  return part_of(t);
}
// Significand bits (the unit roundoff is 2^-precision) and the smallest subnormal's exponent of a float type
// (of its parts for a complex type).
inline int precision_of(DType t) {
  t = part_of(t);
  return t == DType::Float16 ? 11 : (t == DType::BFloat16 ? 8 : (t == DType::Float32 ? 24 : 53));
}
inline int min_exponent_of(DType t) {
  t = part_of(t);
  return t == DType::Float16 ? -24 : (t == DType::BFloat16 ? -133 : (t == DType::Float32 ? -149 : -1074));
}
inline bool isi(DType t) {
  return t == DType::Int32 || t == DType::Int64;
}

inline const char* dname(DType t) {
  switch (t) {
  case DType::Bool: return "bool";
  case DType::Int32: return "int32";
  case DType::Int64: return "int64";
  case DType::Float16: return "float16";
  case DType::BFloat16: return "bfloat16";
  case DType::Float32: return "float32";
  case DType::Float64: return "float64";
  case DType::Complex64: return "complex64";
  case DType::Complex128: return "complex128";
  default: break; // a type this test does not generate
  }
  return "?";
}
inline const char* dcpp(DType t) {
  switch (t) {
  case DType::Bool: return "lf::DType::Bool";
  case DType::Int32: return "lf::DType::Int32";
  case DType::Int64: return "lf::DType::Int64";
  case DType::Float16: return "lf::DType::Float16";
  case DType::BFloat16: return "lf::DType::BFloat16";
  case DType::Float32: return "lf::DType::Float32";
  case DType::Float64: return "lf::DType::Float64";
  case DType::Complex64: return "lf::DType::Complex64";
  case DType::Complex128: return "lf::DType::Complex128";
  default: break; // a type this test does not generate
  }
  return "?";
}

// np.result_type of two array dtypes (bfloat16: ml_dtypes'; the lattice of docs/semantics.md, written out).
inline DType promote(DType a, DType b) {
  static const DType types[] = {DType::Bool,    DType::Int32,   DType::Int64,     DType::Float16,   DType::BFloat16,
                                DType::Float32, DType::Float64, DType::Complex64, DType::Complex128};
  auto row = [&](DType t) {
    for (int k = 0; k < 9; ++k)
      if (types[k] == t) return k;
    throw std::logic_error("promote: a type these graphs do not generate");
  };
  constexpr DType b_ = DType::Bool, i32 = DType::Int32, i64_ = DType::Int64, f16 = DType::Float16,
                  bf16 = DType::BFloat16, f32 = DType::Float32, f64 = DType::Float64, c64 = DType::Complex64,
                  c128 = DType::Complex128;
  static const DType table[9][9] = {
      // bool  int32  int64  f16   bf16  f32   f64   c64   c128
      {b_, i32, i64_, f16, bf16, f32, f64, c64, c128},       // bool
      {i32, i32, i64_, f64, f64, f64, f64, c128, c128},      // int32
      {i64_, i64_, i64_, f64, f64, f64, f64, c128, c128},    // int64
      {f16, f64, f64, f16, f32, f32, f64, c64, c128},        // float16
      {bf16, f64, f64, f32, bf16, f32, f64, c64, c128},      // bfloat16
      {f32, f64, f64, f32, f32, f32, f64, c64, c128},        // float32
      {f64, f64, f64, f64, f64, f64, f64, c128, c128},       // float64
      {c64, c128, c128, c64, c64, c64, c128, c64, c128},     // complex64
      {c128, c128, c128, c128, c128, c128, c128, c128, c128} // complex128
  };
  return table[row(a)][row(b)];
}

// A weak C++ scalar (NEP 50): bool, integer or floating kind.
enum class Kind { Bool, Int, Float };
inline DType natural(Kind k) {
  return k == Kind::Bool ? DType::Bool : (k == Kind::Int ? DType::Int64 : DType::Float64);
}
inline DType promote_weak(DType t, Kind k) {
  switch (k) {
  case Kind::Bool: return t;
  case Kind::Int: return t == DType::Bool ? DType::Int64 : t;
  case Kind::Float: return isf(t) || isc(t) ? t : DType::Float64;
  }
  return t;
}

// Result of a float function (sqrt, exp, true_divide, ...) on an input type: float16 for bool inputs of unary
// float functions (NumPy's; true_divide of bools is float64).
inline DType float_of(DType t, bool unary) {
  if (isf(t) || isc(t)) return t;
  if (t == DType::Bool) return unary ? DType::Float16 : DType::Float64;
  return DType::Float64;
}

// ---------------------------------------------------------------------------------------------------------
// host tensors: C-order values (as doubles) and an absolute error bound per element (inf = uncertain)
// ---------------------------------------------------------------------------------------------------------

inline i64 numel(const Shape& s) {
  i64 n = 1;
  for (auto d : s) n *= d;
  return n;
}

inline std::vector<i64> cstrides(const Shape& s) {
  std::vector<i64> st(s.size(), 1);
  for (int k = int(s.size()) - 2; k >= 0; --k) st[std::size_t(k)] = st[std::size_t(k) + 1] * s[std::size_t(k) + 1];
  return st;
}

inline std::string shape_str(const Shape& s) {
  std::string out = "{";
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + "}";
}

// A complex tensor keeps its real parts in v and its imaginary parts in im (empty for the other types); its
// bound e is on the modulus of the error, |z_library - z_reference| <= e.
struct HT {
  DType dt = DType::Float64;
  Shape shape;
  std::vector<double> v, e, im;
  i64 size() const { return i64(v.size()); }
};

inline HT make_ht(DType dt, Shape shape) {
  HT r;
  r.dt = dt;
  r.shape = std::move(shape);
  auto n = std::size_t(numel(r.shape));
  r.v.assign(n, 0.0);
  r.e.assign(n, 0.0);
  if (isc(dt)) r.im.assign(n, 0.0);
  return r;
}
// Element i of `from` into element j of `to` (same complexness).
inline void copy_element(HT& to, std::size_t j, const HT& from, std::size_t i) {
  to.v[j] = from.v[i];
  to.e[j] = from.e[i];
  if (!to.im.empty()) to.im[j] = from.im[i];
}

inline double wrap32(double x) {
  return double(std::int32_t(std::uint32_t(std::uint64_t(i64(x)))));
}

// x as the dtype holds it.
inline double rnd(DType t, double x) {
  switch (t) {
  case DType::Bool: return x != 0 ? 1.0 : 0.0;
  case DType::Int32: return wrap32(x);
  case DType::Int64: return x;
  case DType::Float16: return double(float(lazyfuse::float16(x)));   // rounded once from double, as NumPy
  case DType::BFloat16: return double(float(lazyfuse::bfloat16(x))); // rounded once from double, as ml_dtypes
  case DType::Float32: return double(float(x));
  case DType::Float64: return x;
  case DType::Complex64: return double(float(x)); // a part
  case DType::Complex128: return x;
  default: break; // a type this test does not generate
  }
  return x;
}

// One unit in the last place at magnitude |x| (0 for exact types).
// For a complex type: of its part type at magnitude |x| (a bound on either part's ulp when |x| is the modulus).
inline double ulp(DType t, double x) {
  t = part_of(t);
  x = std::fabs(x);
  if (!std::isfinite(x)) return kInf;
  if (t == DType::Float16) {
    if (x > 65504) return kInf;
    return std::ldexp(1.0, std::max(std::ilogb(std::max(x, 0x1p-14)) - 10, -24));
  }
  if (t == DType::BFloat16) {
    if (x > 3.3895313892515355e38) return kInf;
    return std::ldexp(1.0, std::max(std::ilogb(std::max(x, 0x1p-126)) - 7, -133));
  }
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
inline double finish(DType c, double r, double prop, bool exact) {
  // IEEE arithmetic on exact operands gives NaN and infinities deterministically (no overflow happens here).
  if (prop == 0 && (exact || !std::isfinite(r))) return 0;
  if (!std::isfinite(prop)) return kInf;
  return prop * kSafety + ulp(c, std::fabs(r) + prop);
}
inline double finish_transcendental(DType c, double r, double prop) {
  if (!std::isfinite(prop)) return kInf;
  if (prop == 0 && !std::isfinite(r)) return 0;
  return prop * kSafety + kTranscendentalUlps * ulp(c, std::fabs(r) + prop);
}

// A strided view of a (offset and strides in a's C-order elements).
inline HT affine(const HT& a, const Shape& out, i64 offset, const std::vector<i64>& strides) {
  HT r = make_ht(a.dt, out);
  const i64 n = r.size();
  const int rank = int(out.size());
  std::vector<i64> idx(out.size(), 0);
  i64 src = offset;
  for (i64 i = 0; i < n; ++i) {
    copy_element(r, std::size_t(i), a, std::size_t(src));
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

inline std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b) {
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

inline HT ref_broadcast(const HT& a, const Shape& s) {
  if (a.shape == s) return a;
  auto st = cstrides(a.shape);
  std::vector<i64> strides(s.size(), 0);
  const std::size_t lead = s.size() - a.shape.size();
  for (std::size_t k = 0; k < a.shape.size(); ++k) strides[k + lead] = a.shape[k] == 1 ? 0 : st[k];
  return affine(a, s, 0, strides);
}

// |z| of element i (the absolute value of a real one).
inline double modulus(const HT& a, std::size_t i) {
  return a.im.empty() ? std::fabs(a.v[i]) : std::hypot(a.v[i], a.im[i]);
}

inline HT ref_cast(const HT& a, DType to) {
  if (a.dt == to) return a;
  HT r = a;
  r.dt = to;
  if (isc(to)) {
    // Each part rounded to the part type (a real value is x + 0j); the bound stays on the modulus.
    r.im = a.im.empty() ? std::vector<double>(a.v.size(), 0.0) : a.im;
    for (std::size_t i = 0; i < a.v.size(); ++i) {
      const double e = a.e[i];
      r.v[i] = rnd(part_of(to), a.v[i]);
      r.im[i] = rnd(part_of(to), r.im[i]);
      const bool same = r.v[i] == a.v[i] && r.im[i] == (a.im.empty() ? 0.0 : a.im[i]);
      r.e[i] = e == 0 && (same || !std::isfinite(modulus(r, i)))
                   ? 0
                   : (std::isfinite(e) ? e * kSafety + ulp(to, modulus(r, i) + e) : kInf);
    }
    return r;
  }
  r.im.clear();
  for (std::size_t i = 0; i < a.v.size(); ++i) {
    // complex -> real: its real part, then the real rule (docs/semantics.md); -> bool: z != 0.
    const double v = a.v[i], e = a.e[i];
    if (to == DType::Bool) {
      const double m = modulus(a, i);
      r.v[i] = (v != 0 || (!a.im.empty() && a.im[i] != 0)) ? 1 : 0;
      r.e[i] = (e > 0 && !(m > e * kSafety)) ? kInf : 0;
    } else if (isi(to)) {
      if (isf(a.dt) || isc(a.dt)) {
        // Truncation toward zero, saturating, NaN to 0 (docs/semantics.md; values here stay far from the limits).
        double lo = to == DType::Int32 ? -2147483648.0 : -9.2e18, hi = to == DType::Int32 ? 2147483647.0 : 9.2e18;
        r.v[i] = std::isnan(v) ? 0.0 : rnd(to, std::clamp(std::trunc(v), lo, hi));
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
inline std::optional<std::pair<DType, DType>> unary_types(U op, DType t) {
  switch (op) {
  case U::Neg:
    if (t == DType::Bool) return std::nullopt;
    return std::pair{t, t};
  case U::Abs: return std::pair{t, real_of(t)};
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

// ---- complex values: computed in long double and rounded per part; bounds on the modulus of the error ----

// Ulps of the part type at the result's modulus allowed for one complex op (library and reference together; a
// part's ulp at most the modulus's): + and - round each part once (0.71 ulp of the modulus each side);
// multiply rounds a product and the fused sum of each part (1.42); Smith's quotient (true_divide) rounds r,
// the denominator, its reciprocal and each part's numerator and product (under 8 u |q| a part; the long double
// reference's error is far below); exp calls exp, cos and sin
// of the part type (NumPy's and lazyfuse's within 2 ulps a part, docs/semantics.md "Complex numbers"; CUDA's a
// few more), so 8.
constexpr double kComplexAddUlps = 2, kComplexMulUlps = 3, kComplexDivUlps = 12, kComplexExpUlps = 8;

inline bool finite_parts(const HT& a, std::size_t i) {
  return std::isfinite(a.v[i]) && std::isfinite(a.im[i]);
}
inline bool has_nan(const HT& a, std::size_t i) {
  return std::isnan(a.v[i]) || (!a.im.empty() && std::isnan(a.im[i]));
}

// a * b + c * d when double holds it exactly (then `out` is it and the result is true).
inline bool exact_dot(double a, double b, double c, double d, double& out) {
  const double p = a * b, q = c * d;
  if (std::fma(a, b, -p) != 0 || std::fma(c, d, -q) != 0) return false;
  const double s = p + q, bb = s - p;
  if ((p - (s - bb)) + (q - bb) != 0) return false;
  out = s;
  return std::isfinite(s);
}

// The complex unary ops the generator makes: negative, abs, square, exp (and logical_not, through bool).
inline HT ref_complex_unary(U op, const HT& x, DType result) {
  HT r = make_ht(result, x.shape);
  const DType c = x.dt;
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const long double re = x.v[i], im = x.im[i];
    const double e = x.e[i], m = modulus(x, i);
    const bool finite = finite_parts(x, i);
    switch (op) {
    case U::Neg:
      r.v[i] = -x.v[i];
      r.im[i] = -x.im[i];
      r.e[i] = e;
      break;
    case U::Abs: {
      // hypot, within 1 ulp (the reference's own rounding adds half of one): |abs(z) - abs(z')| <= |z - z'|;
      // exact for a real or imaginary z.
      r.v[i] = rnd(result, double(std::hypot(re, im)));
      const bool exact = x.v[i] == 0 || x.im[i] == 0;
      r.e[i] = e == 0 && (exact || !std::isfinite(r.v[i]))
                   ? 0
                   : (std::isfinite(e) ? e * kSafety + 2 * ulp(result, r.v[i] + e) : kInf);
      break;
    }
    case U::Square: {
      r.v[i] = rnd(c, double(re * re - im * im));
      r.im[i] = rnd(c, double(2 * re * im));
      double pr = 0, pi = 0;
      const bool exact = finite && exact_dot(x.v[i], x.v[i], -x.im[i], x.im[i], pr) &&
                         exact_dot(x.v[i], x.im[i], x.im[i], x.v[i], pi) && rnd(c, pr) == pr && rnd(c, pi) == pi;
      if (!finite || exact) {
        r.e[i] = e == 0 ? 0 : kInf;
      } else if (std::isfinite(e)) {
        const double prop = (2 * m + e) * e;
        r.e[i] = prop * kSafety + kComplexMulUlps * ulp(c, m * m + prop);
      } else {
        r.e[i] = kInf;
      }
      break;
    }
    case U::Exp: {
      // |exp(z) - exp(z')| <= |exp(z)| expm1(|z - z'|).
      const long double w = std::exp(re);
      r.v[i] = rnd(c, double(w * std::cos(im)));
      r.im[i] = rnd(c, double(w * std::sin(im)));
      const double mw = double(w);
      if (!finite)
        r.e[i] = kInf;
      else if (x.v[i] == 0 && x.im[i] == 0 && e == 0)
        r.e[i] = 0; // exp(0) = 1 + 0j everywhere
      else if (std::isfinite(e))
        r.e[i] = mw * std::expm1(e) * kSafety + kComplexExpUlps * ulp(c, mw * std::exp(e));
      else
        r.e[i] = kInf;
      break;
    }
    default: throw std::logic_error("ref_unary: a complex op the generator does not make");
    }
  }
  return r;
}

inline HT ref_unary(U op, const HT& x0) {
  auto types = unary_types(op, x0.dt);
  if (!types) throw std::logic_error("ref_unary: invalid dtype");
  const DType c = types->first;
  HT x = ref_cast(x0, c);
  if (isc(c)) return ref_complex_unary(op, x, types->second);
  HT r = make_ht(types->second, x.shape);
  for (std::size_t i = 0; i < x.v.size(); ++i) {
    const double v = x.v[i], e = x.e[i];
    double out = 0, err = 0;
    auto transcendental = [&](double exact, double prop) {
      out = rnd(c, exact);
      err = finish_transcendental(c, out, e == 0 ? 0 : prop);
    };
    // sin, tanh and erf are odd: every implementation returns an exact zero for an exact zero. Their results and
    // cos's lie in [-1, 1], so a finite input error propagates as at most 2; an uncertain input stays uncertain.
    auto bounded = [&](double exact, double lipschitz, bool odd) {
      if (odd && v == 0 && e == 0) {
        out = 0;
        err = 0;
        return;
      }
      transcendental(exact, std::isfinite(e) ? std::min(lipschitz * e, 2.0) : kInf);
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
        bool exact = c != DType::Float64 ? out == p : std::fma(v, v, -p) == 0;
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
    case U::Sin: bounded(std::sin(v), 1, true); break;
    case U::Cos: bounded(std::cos(v), 1, false); break;
    case U::Tanh: bounded(std::tanh(v), 1, true); break;
    case U::Erf: bounded(std::erf(v), 1.1284, true); break;
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

// real, imag and conj: exact (a real array is its own real part and conjugate; its imaginary part is 0).
inline HT ref_real(const HT& x) {
  if (!isc(x.dt)) return x;
  HT r = make_ht(real_of(x.dt), x.shape);
  r.v = x.v;
  r.e = x.e;
  return r;
}
inline HT ref_imag(const HT& x) {
  HT r = make_ht(real_of(x.dt), x.shape);
  if (isc(x.dt)) {
    r.v = x.im;
    r.e = x.e;
  }
  return r;
}
inline HT ref_conj(const HT& x) {
  HT r = x;
  for (auto& y : r.im) y = -y;
  return r;
}

// ---- binary ops ----

enum class B { Add, Sub, Mul, Div, Min, Max, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Xor, FloorDiv, Rem };
inline const char* bname(B op) {
  static const char* names[] = {"add",         "subtract",   "multiply",    "true_divide",  "minimum",  "maximum",
                                "equal",       "not_equal",  "less",        "less_equal",   "greater",  "greater_equal",
                                "logical_and", "logical_or", "logical_xor", "floor_divide", "remainder"};
  return names[int(op)];
}
inline bool is_compare(B op) {
  return op >= B::Eq && op <= B::Ge;
}
inline bool is_logical(B op) {
  return op >= B::And && op <= B::Xor;
}

inline std::optional<std::pair<DType, DType>> binary_types(B op, DType t) {
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
inline void bool_logic(B op, double a, double ea, double b, double eb, double& out, double& err) {
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

// z < w lexicographically (real parts first), false when a part is NaN (NumPy's array loops).
inline bool lex_less(double ar, double ai, double br, double bi) {
  if (std::isnan(ar) || std::isnan(ai) || std::isnan(br) || std::isnan(bi)) return false;
  return ar < br || (ar == br && ai < bi);
}

// Element i of a complex op (operands converted to the complex type c): value (re, im) and bound.
inline void complex_binary(B op, DType c, const HT& a, const HT& b, std::size_t i, double& re, double& im,
                           double& err) {
  const double xr = a.v[i], xi = a.im[i], yr = b.v[i], yi = b.im[i], ex = a.e[i], ey = b.e[i];
  const double mx = modulus(a, i), my = modulus(b, i);
  const bool exact_in = ex == 0 && ey == 0, finite = finite_parts(a, i) && finite_parts(b, i);
  const double tol = ex + ey;
  re = im = 0;
  err = 0;
  if (is_compare(op)) {
    const double dist = std::hypot(xr - yr, xi - yi);
    switch (op) {
    case B::Eq:
    case B::Ne:
      re = (xr == yr && xi == yi) == (op == B::Eq);
      err = tol == 0 ? 0 : (!(dist > tol * kSafety) ? kInf : 0);
      return;
    case B::Lt: re = lex_less(xr, xi, yr, yi); break;
    case B::Gt: re = lex_less(yr, yi, xr, xi); break;
    case B::Le: re = !has_nan(a, i) && !has_nan(b, i) && !lex_less(yr, yi, xr, xi); break;
    default: re = !has_nan(a, i) && !has_nan(b, i) && !lex_less(xr, xi, yr, yi); break;
    }
    // Decided by the real parts alone, unless the bounds let them meet.
    err = tol == 0 ? 0 : (!(std::fabs(xr - yr) > tol * kSafety) ? kInf : 0);
    return;
  }
  const DType p = part_of(c);
  switch (op) {
  case B::Add:
  case B::Sub: {
    const double s = op == B::Add ? 1 : -1;
    const double sr = xr + s * yr, si = xi + s * yi;
    re = rnd(p, sr);
    im = rnd(p, si);
    // Exact when double holds both sums and the part type holds them.
    const double br = sr - xr, bi = si - xi;
    const bool exact =
        (xr - (sr - br)) + (s * yr - br) == 0 && (xi - (si - bi)) + (s * yi - bi) == 0 && re == sr && im == si;
    if (exact_in && (exact || !finite)) return;
    err = !finite || !std::isfinite(tol) ? kInf : tol * kSafety + kComplexAddUlps * ulp(c, std::hypot(sr, si) + tol);
    return;
  }
  case B::Mul: {
    const long double Xr = xr, Xi = xi, Yr = yr, Yi = yi;
    re = rnd(p, double(Xr * Yr - Xi * Yi));
    im = rnd(p, double(Xr * Yi + Xi * Yr));
    double pr = 0, pi = 0;
    const bool exact = finite && exact_dot(xr, yr, -xi, yi, pr) && exact_dot(xr, yi, xi, yr, pi) && rnd(p, pr) == pr &&
                       rnd(p, pi) == pi;
    if (exact_in && (exact || !finite)) return;
    const double prop = exact_in ? 0 : mx * ey + my * ex + ex * ey;
    err = !finite || !std::isfinite(prop) ? kInf : prop * kSafety + kComplexMulUlps * ulp(c, mx * my + prop);
    return;
  }
  case B::Div: {
    // Smith's algorithm, as the library and NumPy, in long double.
    const long double Xr = xr, Xi = xi, Yr = yr, Yi = yi;
    long double qr, qi;
    if (std::fabs(Yr) >= std::fabs(Yi)) {
      const long double rr = Yi / Yr, den = Yr + Yi * rr;
      qr = (Xr + Xi * rr) / den;
      qi = (Xi - Xr * rr) / den;
    } else {
      const long double rr = Yr / Yi, den = Yi + Yr * rr;
      qr = (Xr * rr + Xi) / den;
      qi = (Xi * rr - Xr) / den;
    }
    re = rnd(p, double(qr));
    im = rnd(p, double(qi));
    // The library (and NumPy's loop) multiplies by the rounded 1 / denominator: with a real divisor, exact when
    // that reciprocal is (a power of two) and so are both products.
    const double scale = yr != 0 ? rnd(p, 1 / yr) : 0;
    const bool exact = finite && yi == 0 && yr != 0 && std::fma(scale, yr, -1) == 0 &&
                       rnd(p, xr * scale) == xr * scale && rnd(p, xi * scale) == xi * scale;
    if (exact_in && (exact || !finite)) return;
    const double mq = std::hypot(double(qr), double(qi));
    double prop = 0;
    if (!exact_in) prop = my > ey * kSafety ? (ex + mq * ey) / (my - ey * kSafety) : kInf;
    err = !finite || !std::isfinite(prop) ? kInf : prop * kSafety + kComplexDivUlps * ulp(c, mq + prop);
    return;
  }
  case B::Min:
  case B::Max: {
    // Lexicographic; an operand with a NaN part propagates, the first one's first.
    const bool pick_b = has_nan(a, i)   ? false
                        : has_nan(b, i) ? true
                                        : (op == B::Max ? lex_less(xr, xi, yr, yi) : lex_less(yr, yi, xr, xi));
    re = pick_b ? yr : xr;
    im = pick_b ? yi : xi;
    if (exact_in) return;
    if (has_nan(a, i) || has_nan(b, i) || !std::isfinite(tol)) {
      err = kInf;
      return;
    }
    // Decided by the real parts, the library picks the same operand; otherwise either one.
    err = std::fabs(xr - yr) > tol * kSafety ? (pick_b ? ey : ex)
                                             : std::max(ex, ey) + std::hypot(xr - yr, xi - yi) * kSafety;
    return;
  }
  default: throw std::logic_error("ref_binary: a complex op the generator does not make");
  }
}

// The op on operands already promoted to `t` (array-array: promote(a, b); array-scalar: promote_weak).
inline HT ref_binary_t(B op, const HT& a0, const HT& b0, DType t) {
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
    if (isc(c)) {
      double out_im = 0;
      complex_binary(op, c, a, b, i, out, out_im, err);
      r.v[i] = out;
      r.e[i] = err;
      if (!r.im.empty()) r.im[i] = out_im;
      continue;
    }
    if (is_compare(op)) {
      switch (op) {
      case B::Eq: out = x == y; break;
      case B::Ne: out = x != y; break;
      case B::Lt: out = x < y; break;
      case B::Le: out = x <= y; break;
      case B::Gt: out = x > y; break;
      default: out = x >= y; break;
      }
      // Certain unless the operands' intervals can reach each other (NaN distances: uncertain operands at infinity).
      const double tol = ex + ey;
      err = tol == 0 ? 0 : (!(std::fabs(x - y) > tol * kSafety) ? kInf : 0);
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
        const bool exact = c != DType::Float64 ? out == p : std::fma(x, y, -p) == 0;
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
      case B::Max: // NaN-propagating, as NumPy's minimum and maximum
        out = std::isnan(x) || std::isnan(y) ? std::numeric_limits<double>::quiet_NaN()
                                             : (op == B::Min ? std::min(x, y) : std::max(x, y));
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

inline HT ref_binary(B op, const HT& a, const HT& b) {
  return ref_binary_t(op, a, b, promote(a.dt, b.dt));
}

inline HT ref_where_t(const HT& c0, const HT& a0, const HT& b0, DType t) {
  auto s1 = broadcast_shape(a0.shape, b0.shape);
  auto s = s1 ? broadcast_shape(c0.shape, *s1) : std::nullopt;
  if (!s) throw std::logic_error("ref_where: shapes do not broadcast");
  HT c = ref_broadcast(ref_cast(c0, DType::Bool), *s);
  HT a = ref_broadcast(ref_cast(a0, t), *s), b = ref_broadcast(ref_cast(b0, t), *s);
  HT r = make_ht(t, *s);
  for (std::size_t i = 0; i < r.v.size(); ++i) {
    if (c.e[i] == 0) {
      copy_element(r, i, c.v[i] != 0 ? a : b, i);
    } else {
      copy_element(r, i, a, i);
      const bool same = a.v[i] == b.v[i] && (a.im.empty() || a.im[i] == b.im[i]);
      r.e[i] = (same && a.e[i] == 0 && b.e[i] == 0) ? 0 : kInf;
    }
  }
  return r;
}

// ---- views and copies ----

inline HT ref_reshape(const HT& a, Shape s) {
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

inline HT ref_transpose(const HT& a, std::vector<int> perm) {
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
inline void py_slice(i64 n, const lf::Slice& s, i64& start, i64& count) {
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

inline HT ref_index(const HT& a, const std::vector<lf::Index>& idx) {
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

inline HT iota_like(const Shape& s) {
  HT r = make_ht(DType::Int64, s);
  std::iota(r.v.begin(), r.v.end(), 0.0);
  return r;
}

// base with base[idx] = value (broadcast to the region, cast to base's dtype).
inline HT ref_set(const HT& base, const std::vector<lf::Index>& idx, const HT& value) {
  HT pos = ref_index(iota_like(base.shape), idx);
  HT v = ref_broadcast(ref_cast(value, base.dt), pos.shape);
  HT r = base;
  for (std::size_t i = 0; i < pos.v.size(); ++i) {
    copy_element(r, std::size_t(pos.v[i]), v, i);
  }
  return r;
}

inline HT ref_flip(const HT& a, std::optional<int> axis) {
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

inline HT ref_roll(const HT& a, i64 shift, std::optional<int> axis) {
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
        copy_element(r, d, a, s);
      }
    }
  return r;
}

inline HT ref_concat(const std::vector<HT>& xs, int axis) {
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
        copy_element(r, d, x, s);
      }
    off += len;
  }
  return r;
}

inline HT ref_stack(const std::vector<HT>& xs, int axis) {
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
        copy_element(r, d, x, s);
      }
  }
  return r;
}

// A constant converted to a dtype as NumPy's full(..., dtype) does for the values used here.
inline double constant_as(DType t, double c) {
  if (t == DType::Bool) return c != 0;
  if (isi(t)) return rnd(t, std::trunc(c));
  return rnd(t, c);
}

inline HT ref_pad(const HT& a, const std::vector<std::pair<i64, i64>>& w, double value) {
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

// The largest and smallest magnitude (modulus for complex values).
inline double maxabs(const HT& a) {
  double m = 0;
  for (std::size_t i = 0; i < a.v.size(); ++i) m = std::max(m, modulus(a, i));
  return m;
}
inline double minabs(const HT& a) {
  double m = kInf;
  for (std::size_t i = 0; i < a.v.size(); ++i) m = std::min(m, modulus(a, i));
  return m;
}

// ---------------------------------------------------------------------------------------------------------
// reductions
// ---------------------------------------------------------------------------------------------------------

enum class R { Sum, Prod, Min, Max, Mean, Var, Std, ArgMin, ArgMax, Any, All, CountNonzero };

inline const char* rname(R op) {
  static const char* names[] = {"sum", "prod",   "min",    "max", "mean", "var",
                                "std", "argmin", "argmax", "any", "all",  "count_nonzero"};
  return names[int(op)];
}
inline bool is_arg(R op) {
  return op == R::ArgMin || op == R::ArgMax;
}
inline bool needs_elements(R op) { // no identity: reducing nothing is an error
  return op == R::Min || op == R::Max || is_arg(op);
}

// Result dtypes as NumPy 2 gives them on 64-bit Linux (docs/semantics.md, "Result types").
inline DType reduce_type(R op, DType t) {
  switch (op) {
  case R::Sum:
  case R::Prod: return isf(t) || isc(t) ? t : DType::Int64;
  case R::Min:
  case R::Max: return t;
  case R::Mean:
  case R::Var:
  case R::Std: return isf(t) || isc(t) ? t : DType::Float64; // var and std of complex are not generated
  case R::ArgMin:
  case R::ArgMax:
  case R::CountNonzero: return DType::Int64;
  case R::Any:
  case R::All: return DType::Bool;
  }
  return t;
}

// The reduced axes, normalized and sorted (nullopt: all of them).
inline std::vector<int> reduced_axes(const Shape& s, const std::optional<std::vector<int>>& axes) {
  const int n = int(s.size());
  std::vector<int> out;
  if (!axes) {
    for (int k = 0; k < n; ++k) out.push_back(k);
    return out;
  }
  for (int a : *axes) out.push_back(a < 0 ? a + n : a);
  std::sort(out.begin(), out.end());
  return out;
}

inline Shape reduce_shape(const Shape& s, const std::vector<int>& ax, bool keepdims) {
  Shape out;
  for (int k = 0; k < int(s.size()); ++k) {
    const bool reduced = std::find(ax.begin(), ax.end(), k) != ax.end();
    if (!reduced)
      out.push_back(s[std::size_t(k)]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

// For each result element (C order), the flat input indices it combines, in C order of the reduced axes (which is
// the order argmin/argmax count in: along the axis, or in the flattened array).
inline std::vector<std::vector<i64>> reduce_groups(const Shape& s, const std::vector<int>& ax) {
  Shape kept;
  std::vector<bool> reduced(s.size(), false);
  for (int a : ax) reduced[std::size_t(a)] = true;
  for (std::size_t k = 0; k < s.size(); ++k)
    if (!reduced[k]) kept.push_back(s[k]);
  std::vector<std::vector<i64>> groups(std::size_t(numel(kept)));
  const auto kst = cstrides(kept);
  std::vector<i64> idx(s.size(), 0);
  const i64 n = numel(s);
  for (i64 i = 0; i < n; ++i) {
    i64 out = 0;
    for (std::size_t k = 0, j = 0; k < s.size(); ++k)
      if (!reduced[k]) out += idx[k] * kst[j++];
    groups[std::size_t(out)].push_back(i);
    for (int k = int(s.size()) - 1; k >= 0; --k) {
      if (++idx[std::size_t(k)] < s[std::size_t(k)]) break;
      idx[std::size_t(k)] = 0;
    }
  }
  return groups;
}

// The longest chain of roundings an element of an n-term float sum can go through, over the orders the library
// uses (a sum's error is at most gamma(depth) * sum |x_i|, whatever the tree):
//  * CPU backend (runtime/CpuBackend.cpp, Pairwise): a halving tree inside each chunk of 256 elements (depth
//    <= 8), then a binary counter of chunk partials (depth <= the number of levels) and the sequential combine of
//    the levels at the end (as many again);
//  * CUDA kernels (codegen/CudaPrinter.cpp, ReductionPrinter): each thread folds a strided share into one of
//    kUnroll (rows) or 2 * kUnroll = 8 (columns) accumulators, so a column kernel's thread adds up to n / 8
//    elements in sequence; then the accumulators in order (7), two warp-shuffle trees (5 + 5), and the split
//    partials in order (<= kMaxColumnSplits = 64 per column thread, <= 4 per thread plus a block tree for rows);
//    CUB (materialized sums) gives each thread a smaller share than n / 8.
// Any tree over n terms has depth <= n - 1, which bounds small sums better.
inline i64 sum_depth(i64 n) {
  if (n <= 1) return 0;
  auto clog2 = [](i64 m) {
    i64 d = 0;
    while ((i64(1) << d) < m) ++d;
    return d;
  };
  const i64 chunks = (n + 255) / 256;
  const i64 cpu = clog2(std::min<i64>(n, 256)) + 2 * (clog2(chunks + 1) + 1);
  const i64 gpu = (n + 7) / 8 + 100;
  return std::min(n - 1, std::max(cpu, gpu));
}

// gamma(d) = d u / (1 - d u), u the unit roundoff of t (no bound once d u reaches 1).
inline double gamma_of(DType t, i64 d) {
  const double u = std::ldexp(1.0, -precision_of(t));
  const double du = double(d) * u;
  return du >= 1 ? kInf : du / (1 - du);
}
// The type a sum or product of t accumulates in: float32 for the half types (which round once, at the end).
inline DType accumulator_of(DType t) {
  return is_half(t) ? DType::Float32 : t;
}

// x = m * 2^e with m an odd integer (x != 0, finite): e, and |m| as a double.
inline void odd_part(double x, int& e, double& m) {
  int ex = 0;
  double f = std::frexp(std::fabs(x), &ex); // |x| = f 2^ex, f in [0.5, 1)
  double mm = std::ldexp(f, 53);            // an integer below 2^53
  int shift = 53;
  while (std::fmod(mm, 2.0) == 0) {
    mm /= 2;
    --shift;
  }
  m = mm;
  e = ex - shift;
}

// True when every partial sum of these exact terms, in any order, is exactly representable in t: all are
// multiples of the smallest term's last bit 2^k, and sum |x| / 2^k stays below 2^precision.
inline bool sum_is_exact(DType t, const std::vector<double>& xs) {
  int k = std::numeric_limits<int>::max();
  double total = 0;
  for (double x : xs) {
    if (x == 0) continue;
    int e;
    double m;
    odd_part(x, e, m);
    k = std::min(k, e);
    total += std::fabs(x);
  }
  if (total == 0) return true;
  const int p = precision_of(t);
  return std::ldexp(total, -k) < std::ldexp(1.0, p) && k > min_exponent_of(t);
}

// A sum or product with a NaN or an infinity among its terms: NaN, or an infinity, whatever the order (inf - inf
// and 0 * inf are NaN in any order); certain when every term is. False when all terms are finite.
inline bool ref_nonfinite(bool product, DType t, const std::vector<double>& x, const std::vector<double>& e,
                          double& out, double& err) {
  bool finite = true, certain = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    finite &= std::isfinite(x[i]);
    certain &= e[i] == 0;
  }
  if (finite) return false;
  double acc = product ? 1 : 0;
  for (double v : x) acc = product ? acc * v : acc + v;
  out = rnd(t, acc);
  err = certain ? 0 : kInf;
  return true;
}

// Float sum (values already in the accumulator type t): the reference value and its bound.
inline void ref_fsum(DType t, const std::vector<double>& x, const std::vector<double>& e, double& out, double& err) {
  if (ref_nonfinite(false, t, x, e, out, err)) return;
  // Neumaier's compensated sum: the reference's own error is far below one ulp of the result.
  double s = 0, c = 0, abs_sum = 0, in_err = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double tt = s + v;
    c += std::fabs(s) >= std::fabs(v) ? (s - tt) + v : (v - tt) + s;
    s = tt;
    abs_sum += std::fabs(v);
    in_err += e[i];
  }
  s += c;
  if (!std::isfinite(in_err)) {
    out = rnd(t, s);
    err = kInf;
    return;
  }
  out = rnd(t, s);
  if (in_err == 0 && (x.size() <= 1 || sum_is_exact(t, x))) {
    err = 0;
    return;
  }
  const double bound =
      in_err * kSafety + gamma_of(accumulator_of(t), sum_depth(i64(x.size()))) * (abs_sum + in_err) * kSafety;
  err = bound + ulp(t, std::fabs(s) + bound);
}

// Float product: |prod (x_i + d_i) - prod x_i| <= prod (|x_i| + e_i) - prod |x_i|, and n - 1 roundings of at most
// gamma(n - 1) of the largest possible magnitude, plus an underflow term per multiplication.
inline void ref_fprod(DType t, const std::vector<double>& x, const std::vector<double>& e, double& out, double& err) {
  if (ref_nonfinite(true, t, x, e, out, err)) return;
  double p = 1, hi = 1, lo = 1;
  bool certain_zero = false, exact_in = true;
  double odd = 1;
  int oddbits_ok = 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    p *= x[i];
    hi *= std::fabs(x[i]) + e[i];
    lo *= std::fabs(x[i]);
    if (x[i] == 0 && e[i] == 0) certain_zero = true;
    if (e[i] != 0) exact_in = false;
    if (x[i] != 0) {
      int ex;
      double m;
      odd_part(x[i], ex, m);
      odd *= m;
      if (ex < (t == DType::Float16 ? -10 : (t == DType::Float32 ? -100 : -900))) oddbits_ok = 0;
    }
  }
  out = rnd(t, p);
  if (certain_zero) {
    out = 0;
    err = 0;
    return;
  }
  if (!std::isfinite(hi)) {
    err = kInf;
    return;
  }
  const int prec = precision_of(t);
  if (exact_in && (x.size() <= 1 || (oddbits_ok && odd < std::ldexp(1.0, prec)))) {
    err = 0;
    return;
  }
  const double tiny = std::ldexp(1.0, min_exponent_of(t));
  const double bound = (hi - lo) * kSafety + gamma_of(accumulator_of(t), i64(x.size())) * hi * kSafety +
                       double(x.size()) * tiny * std::max(1.0, hi);
  err = bound + ulp(t, std::fabs(p) + bound);
}

// Truthiness of an element: 1 certain true, 0 certain false, -1 unknown.
inline int truth(double v, double e) {
  if (std::isnan(v)) return e == 0 ? 1 : -1;
  if (e == 0) return v != 0 ? 1 : 0;
  if (!std::isfinite(e)) return -1;
  return std::fabs(v) > e * kSafety ? 1 : -1;
}

// argmin/argmax of a group: the first extreme index (the first NaN when there is one); uncertain when another
// element could be the extreme within the bounds, unless all such candidates are exact.
inline void ref_arg(bool is_max, const std::vector<double>& x, const std::vector<double>& e, double& out, double& err) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(e[i])) {
      out = 0;
      err = kInf;
      return;
    }
    if (std::isnan(x[i])) {
      out = double(i);
      err = 0;
      return;
    }
  }
  // Flip signs for argmin: then the first maximum of y = +-x.
  auto y = [&](std::size_t i) { return is_max ? x[i] : -x[i]; };
  std::size_t best = 0;
  double low = -kInf; // the largest certain lower bound of any element
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (y(i) > y(best)) best = i;
    low = std::max(low, y(i) - e[i] * kSafety);
  }
  out = double(best);
  err = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i == best) continue;
    // i could be chosen if it could reach the best's lower value (ties go to the lower index).
    if (y(i) + e[i] * kSafety >= low && (e[i] > 0 || e[best] > 0)) err = kInf;
  }
}

struct ReduceSpec {
  R op = R::Sum;
  std::optional<std::vector<int>> axes; // nullopt: all axes (argmin/argmax: the flattened array)
  bool keepdims = false;
  int ddof = 0; // var, std
};

inline HT ref_reduce(const ReduceSpec& spec, const HT& x0);

// mean, var, std: composed from the reference's own ops, as the library and NumPy compute them.
// Those of float16 and bfloat16 compute in float32 and round once, at the end (so also a count above the half
// type's range divides as the library divides).
inline HT ref_moment(const ReduceSpec& spec, const HT& x0) {
  const DType result = reduce_type(R::Mean, x0.dt), t = accumulator_of(result);
  const HT x = ref_cast(x0, t);
  const auto ax = reduced_axes(x.shape, spec.axes);
  i64 n = 1;
  for (int a : ax) n *= x.shape[std::size_t(a)];
  auto divide = [&](const HT& s, double d) {
    HT r = s;
    for (std::size_t i = 0; i < r.v.size(); ++i) {
      const double v = s.v[i], ev = s.e[i];
      if (d == 0 || std::isnan(d)) {
        // 0 / 0 and x / nan are NaN, x / 0 is +-inf: certain only when the numerator is certain.
        const int tv = truth(v, ev);
        r.v[i] = std::isnan(d) || std::isnan(v) || tv == 0 ? std::numeric_limits<double>::quiet_NaN()
                                                           : (v < 0 ? -kInf : kInf);
        r.e[i] = std::isnan(d) || tv >= 0 ? 0 : kInf;
        if (!r.im.empty()) r.im[i] = std::numeric_limits<double>::quiet_NaN(); // not generated: no empty complex mean
        continue;
      }
      HT a = make_ht(t, {}), b = make_ht(t, {});
      copy_element(a, 0, s, i);
      b.v[0] = rnd(part_of(t), d);
      HT q = ref_binary_t(B::Div, a, b, t);
      copy_element(r, i, q, 0);
    }
    return r;
  };
  ReduceSpec sum{R::Sum, spec.axes, true, 0};
  HT mean = divide(ref_reduce(sum, x), n > 0 ? double(n) : std::numeric_limits<double>::quiet_NaN());
  HT out;
  if (spec.op == R::Mean) {
    out = mean;
  } else {
    HT sq = ref_unary(U::Square, ref_binary_t(B::Sub, x, mean, t));
    out = divide(ref_reduce(sum, sq), double(std::max<i64>(n - spec.ddof, 0)));
    if (spec.op == R::Std) {
      HT s = out;
      for (std::size_t i = 0; i < s.v.size(); ++i)
        if (!std::isfinite(s.v[i])) s.v[i] = 0; // sqrt below sees finite values; non-finite ones are set after
      HT root = ref_unary(U::Sqrt, s);
      for (std::size_t i = 0; i < s.v.size(); ++i)
        if (!std::isfinite(out.v[i])) root.v[i] = std::sqrt(out.v[i]), root.e[i] = out.e[i];
      out = root;
    }
  }
  if (!spec.keepdims) out.shape = reduce_shape(x.shape, ax, false);
  if (result != t) out = ref_cast(out, result);
  return out;
}

// A complex sum, product, min, max, argmin or argmax of the elements `group` of x (complex).
inline void ref_complex_group(R op, DType t, const HT& x, const std::vector<i64>& group, double& re, double& im,
                              double& err) {
  const DType p = part_of(t);
  bool exact_in = true, finite = true;
  for (i64 k : group) {
    exact_in &= x.e[std::size_t(k)] == 0;
    finite &= finite_parts(x, std::size_t(k));
  }
  re = im = 0;
  err = 0;
  if (op == R::Sum || op == R::Prod) {
    // Sum: each addition rounds each part by at most u |partial sum|, so the real bound (gamma(depth) times the
    // sum of the moduli) holds for the modulus. Product: a complex multiplication's rounding is under 3 u of the
    // product's modulus (see kComplexMulUlps), so gamma(3 n) of the largest possible product.
    long double sr = 0, si = 0, pr = 1, pi = 0;
    double abs_sum = 0, in_err = 0, hi = 1, lo = 1;
    std::vector<double> res, ims;
    bool real_only = true, certain_zero = false;
    for (i64 k : group) {
      const auto K = std::size_t(k);
      const long double a = x.v[K], b = x.im[K];
      sr += a;
      si += b;
      const long double nr = pr * a - pi * b, ni = pr * b + pi * a;
      pr = nr;
      pi = ni;
      abs_sum += modulus(x, K);
      in_err += x.e[K];
      hi *= modulus(x, K) + x.e[K];
      lo *= modulus(x, K);
      res.push_back(x.v[K]);
      ims.push_back(x.im[K]);
      real_only &= x.im[K] == 0;
      certain_zero |= x.v[K] == 0 && x.im[K] == 0 && x.e[K] == 0;
    }
    const bool sum = op == R::Sum;
    re = rnd(p, double(sum ? sr : pr));
    im = rnd(p, double(sum ? si : pi));
    if (!finite) {
      err = exact_in ? 0 : kInf;
      // A NaN or an infinity decides only the part it is in: a part whose terms are all finite is an ordinary sum,
      // rounded in the library's order (NaN - 4.7258566355841403j against the reference's ...412j).
      if (sum && exact_in) {
        double finite_abs = 0;
        for (const std::vector<double>* part : {&res, &ims}) {
          if (!std::all_of(part->begin(), part->end(), [](double v) { return std::isfinite(v); })) continue;
          if (group.size() <= 1 || sum_is_exact(p, *part)) continue;
          for (double v : *part) finite_abs += std::fabs(v);
        }
        if (finite_abs > 0) {
          const double bound = gamma_of(p, sum_depth(i64(group.size()))) * finite_abs * kSafety;
          err = bound + kComplexAddUlps * ulp(p, finite_abs + bound);
        }
      }
      return;
    }
    if (sum) {
      if (exact_in && (group.size() <= 1 || (sum_is_exact(p, res) && sum_is_exact(p, ims)))) return;
      if (!std::isfinite(in_err)) {
        err = kInf;
        return;
      }
      const double bound = in_err * kSafety + gamma_of(p, sum_depth(i64(group.size()))) * (abs_sum + in_err) * kSafety;
      err = bound + kComplexAddUlps * ulp(p, std::hypot(re, im) + bound);
      return;
    }
    if (certain_zero && finite) {
      re = im = 0;
      return;
    }
    if (exact_in && real_only) { // the real product's rule: exact when every partial product is
      double out = 0, e0 = 0;
      ref_fprod(p, res, std::vector<double>(res.size(), 0.0), out, e0);
      if (e0 == 0) return;
    }
    if (!std::isfinite(hi)) {
      err = kInf;
      return;
    }
    const double tiny = std::ldexp(1.0, min_exponent_of(p));
    const double bound = (hi - lo) * kSafety + gamma_of(p, 3 * i64(group.size())) * hi * kSafety +
                         2 * double(group.size()) * tiny * std::max(1.0, hi);
    err = bound + kComplexMulUlps * ulp(p, lo + bound);
    return;
  }
  // min, max, argmin, argmax: lexicographic; the first element with a NaN part wins.
  const bool is_max = op == R::Max || op == R::ArgMax;
  std::size_t best = 0;
  for (std::size_t j = 0; j < group.size(); ++j) {
    const auto J = std::size_t(group[j]), Bb = std::size_t(group[best]);
    if (has_nan(x, Bb)) break;
    if (has_nan(x, J) ||
        (is_max ? lex_less(x.v[Bb], x.im[Bb], x.v[J], x.im[J]) : lex_less(x.v[J], x.im[J], x.v[Bb], x.im[Bb])))
      best = j;
  }
  const auto Bb = std::size_t(group[best]);
  const bool arg = op == R::ArgMin || op == R::ArgMax;
  if (arg)
    re = double(best);
  else
    re = x.v[Bb], im = x.im[Bb];
  if (exact_in) return;
  bool any_nan = false;
  for (i64 k : group) any_nan |= has_nan(x, std::size_t(k)) || !std::isfinite(x.e[std::size_t(k)]);
  if (any_nan) {
    err = kInf;
    return;
  }
  // Candidates: elements whose real part could reach the best's within the bounds.
  err = x.e[Bb];
  for (std::size_t j = 0; j < group.size(); ++j) {
    const auto J = std::size_t(group[j]);
    if (j == best || (x.e[J] == 0 && x.e[Bb] == 0) || !(std::fabs(x.v[J] - x.v[Bb]) <= (x.e[J] + x.e[Bb]) * kSafety))
      continue;
    if (arg) {
      err = kInf;
      return;
    }
    err = std::max(err, x.e[J] + std::hypot(x.v[J] - x.v[Bb], x.im[J] - x.im[Bb]) * kSafety);
  }
  if (arg) err = 0;
}

inline HT ref_reduce(const ReduceSpec& spec, const HT& x0) {
  if (spec.op == R::Mean || spec.op == R::Var || spec.op == R::Std) return ref_moment(spec, x0);
  const R op = spec.op;
  const DType rt = reduce_type(op, x0.dt);
  // Sums and products accumulate in their result type; the others look at the input's values (any, all and
  // count_nonzero at their truth: a complex value is true when it is not 0).
  const bool truth_op = op == R::Any || op == R::All || op == R::CountNonzero;
  const HT x =
      (op == R::Sum || op == R::Prod) ? ref_cast(x0, rt) : (truth_op && isc(x0.dt) ? ref_cast(x0, DType::Bool) : x0);
  if (isc(x.dt)) {
    const auto ax = reduced_axes(x.shape, spec.axes);
    const auto groups = reduce_groups(x.shape, ax);
    HT r = make_ht(rt, reduce_shape(x.shape, ax, spec.keepdims));
    for (std::size_t g = 0; g < groups.size(); ++g) {
      double re = 0, im = 0, err = 0;
      ref_complex_group(op, x.dt, x, groups[g], re, im, err);
      r.v[g] = re;
      r.e[g] = err;
      if (!r.im.empty()) r.im[g] = im;
    }
    return r;
  }
  const auto ax = reduced_axes(x.shape, spec.axes);
  const auto groups = reduce_groups(x.shape, ax);
  HT r = make_ht(rt, reduce_shape(x.shape, ax, spec.keepdims));
  std::vector<double> v, e;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    v.clear();
    e.clear();
    for (i64 i : groups[g]) {
      v.push_back(x.v[std::size_t(i)]);
      e.push_back(x.e[std::size_t(i)]);
    }
    double out = 0, err = 0;
    bool any_uncertain = false;
    for (double ei : e) any_uncertain |= !std::isfinite(ei);
    switch (op) {
    case R::Sum:
    case R::Prod:
      if (isf(rt)) {
        if (op == R::Sum)
          ref_fsum(rt, v, e, out, err);
        else
          ref_fprod(rt, v, e, out, err);
      } else { // int64, wrapping (the generator keeps magnitudes far from it)
        i64 acc = op == R::Sum ? 0 : 1;
        for (double xi : v)
          acc = op == R::Sum ? i64(std::uint64_t(acc) + std::uint64_t(i64(xi)))
                             : i64(std::uint64_t(acc) * std::uint64_t(i64(xi)));
        out = double(acc);
        err = any_uncertain ? kInf : 0;
      }
      break;
    case R::Min:
    case R::Max: {
      if (rt == DType::Bool) { // min is all, max is any
        int certain_true = 0, certain_false = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
          const int tv = truth(v[i], e[i]);
          certain_true += tv == 1;
          certain_false += tv == 0;
        }
        const bool is_max = op == R::Max;
        bool val = is_max ? false : true;
        for (double xi : v) val = is_max ? (val || xi != 0) : (val && xi != 0);
        out = val;
        const bool decided = is_max ? (certain_true > 0 || certain_false == int(v.size()))
                                    : (certain_false > 0 || certain_true == int(v.size()));
        err = decided ? 0 : kInf;
        break;
      }
      out = v[0];
      err = 0;
      bool nan = false;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::isnan(v[i])) nan = true;
        out = op == R::Min ? std::min(out, v[i]) : std::max(out, v[i]);
        err = std::max(err, e[i]);
      }
      if (nan) out = std::numeric_limits<double>::quiet_NaN();
      break;
    }
    case R::ArgMin:
    case R::ArgMax: ref_arg(op == R::ArgMax, v, e, out, err); break;
    case R::Any:
    case R::All:
    case R::CountNonzero: {
      int t1 = 0, t0 = 0, unknown = 0, count = 0;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const int tv = truth(v[i], e[i]);
        t1 += tv == 1;
        t0 += tv == 0;
        unknown += tv < 0;
        count += v[i] != 0;
      }
      if (op == R::CountNonzero) {
        out = count;
        err = unknown ? kInf : 0;
      } else if (op == R::Any) {
        out = count > 0;
        err = t1 > 0 || unknown == 0 ? 0 : kInf;
      } else {
        out = count == int(v.size());
        err = t0 > 0 || unknown == 0 ? 0 : kInf;
      }
      break;
    }
    default: break;
    }
    r.v[g] = out;
    r.e[g] = err;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// weak C++ scalars
// ---------------------------------------------------------------------------------------------------------

// A double as a Python float literal that reads back as the same double.
inline std::string py_float(double x) {
  if (std::isnan(x)) return "float('nan')";
  if (std::isinf(x)) return x > 0 ? "float('inf')" : "-float('inf')";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

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
  // The same weak scalar as a Python literal (NumPy 2 treats Python scalars as weak, NEP 50).
  std::string py() const {
    if (cpp == 0) return b ? "True" : "False";
    if (cpp <= 2) return std::to_string(i);
    return py_float(value());
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
inline HT scalar_ht(const Sc& s, DType t) {
  HT r = make_ht(natural(s.kind()), {});
  r.v[0] = s.value();
  return ref_cast(r, t);
}

// ---------------------------------------------------------------------------------------------------------
// gathers and index writes (NumPy's advanced indexing, take, take_along_axis, ufunc.at for add)
// ---------------------------------------------------------------------------------------------------------

// A component of an advanced index: an integer, a slice, or an integer index array (a mask is given as the index
// arrays of its true positions, ref_nonzero).
struct AdvComp {
  enum Kind { Int, Sl, Arr } kind = Sl;
  i64 i = 0;
  lf::Slice s;
  HT arr;
};

// The C-order coordinates of the true elements of a (certain) bool array: one int64 array per axis.
inline std::vector<HT> ref_nonzero(const HT& mask) {
  std::vector<i64> hits;
  for (std::size_t i = 0; i < mask.v.size(); ++i)
    if (mask.v[i] != 0) hits.push_back(i64(i));
  const auto st = cstrides(mask.shape);
  std::vector<HT> out;
  for (std::size_t d = 0; d < mask.shape.size(); ++d) {
    HT h = make_ht(DType::Int64, {i64(hits.size())});
    for (std::size_t k = 0; k < hits.size(); ++k) h.v[k] = double((hits[k] / st[d]) % mask.shape[d]);
    out.push_back(std::move(h));
  }
  return out;
}

// a[comps] with NumPy's rules: the index arrays (integers count as 0-d ones) broadcast to B; B's axes replace the
// advanced components when they are adjacent and go first otherwise; axes past the components are taken whole.
// An index with a nonzero bound makes its elements uncertain (the library reads some valid element there).
inline HT ref_advanced(const HT& a, const std::vector<AdvComp>& comps) {
  const std::size_t n = a.shape.size();
  std::vector<AdvComp> c = comps;
  while (c.size() < n) c.push_back(AdvComp{});
  Shape b;
  std::vector<std::size_t> adv;
  for (std::size_t k = 0; k < n; ++k) {
    if (c[k].kind == AdvComp::Sl) continue;
    if (c[k].kind == AdvComp::Int) {
      c[k].arr = make_ht(DType::Int64, {});
      c[k].arr.v[0] = double(c[k].i);
    }
    adv.push_back(k);
    auto bs = broadcast_shape(b, c[k].arr.shape);
    if (!bs) throw std::logic_error("ref_advanced: index arrays do not broadcast");
    b = *bs;
  }
  if (adv.empty()) throw std::logic_error("ref_advanced: no index array");
  const bool adjacent = adv.back() - adv.front() + 1 == adv.size();
  for (auto k : adv) c[k].arr = ref_broadcast(c[k].arr, b);
  // The output's axes: ('s', axis) for a slice, ('b', j) for B's axis j.
  std::vector<std::pair<char, std::size_t>> axes;
  auto put_b = [&] {
    for (std::size_t j = 0; j < b.size(); ++j) axes.push_back({'b', j});
  };
  if (!adjacent) put_b();
  for (std::size_t k = 0; k < n; ++k) {
    if (c[k].kind == AdvComp::Sl)
      axes.push_back({'s', k});
    else if (adjacent && k == adv.front())
      put_b();
  }
  Shape out;
  std::vector<i64> start(n, 0), count(n, 0);
  for (std::size_t k = 0; k < n; ++k)
    if (c[k].kind == AdvComp::Sl) py_slice(a.shape[k], c[k].s, start[k], count[k]);
  for (auto [what, k] : axes) out.push_back(what == 'b' ? b[k] : count[k]);
  HT r = make_ht(a.dt, out);
  const auto ast = cstrides(a.shape), bst = cstrides(b);
  std::vector<i64> o(out.size(), 0);
  for (std::size_t i = 0; i < r.v.size(); ++i) {
    i64 bflat = 0, src = 0;
    for (std::size_t d = 0; d < axes.size(); ++d)
      if (axes[d].first == 'b') bflat += o[d] * bst[axes[d].second];
    bool certain = true;
    for (std::size_t d = 0; d < axes.size(); ++d)
      if (axes[d].first == 's') {
        const std::size_t k = axes[d].second;
        src += (start[k] + o[d] * c[k].s.step) * ast[k];
      }
    for (auto k : adv) {
      const i64 len = a.shape[k];
      i64 j = i64(c[k].arr.v[std::size_t(bflat)]);
      certain &= c[k].arr.e[std::size_t(bflat)] == 0;
      if (j < 0) j += len;
      src += std::clamp<i64>(j, 0, len - 1) * ast[k];
    }
    copy_element(r, i, a, std::size_t(src));
    if (!certain) r.e[i] = kInf;
    for (int d = int(out.size()) - 1; d >= 0; --d) {
      if (++o[std::size_t(d)] < out[std::size_t(d)]) break;
      o[std::size_t(d)] = 0;
    }
  }
  return r;
}

// np.take(a, idx, axis) (axis nullopt: of the flattened a).
inline HT ref_take(const HT& a, const HT& idx, std::optional<int> axis) {
  AdvComp ic;
  ic.kind = AdvComp::Arr;
  ic.arr = idx;
  if (!axis) return ref_advanced(ref_reshape(a, {a.size()}), {ic});
  const int n = int(a.shape.size());
  std::vector<AdvComp> comps(std::size_t(*axis < 0 ? *axis + n : *axis));
  comps.push_back(ic);
  return ref_advanced(a, comps);
}

// np.take_along_axis(a, idx, axis): idx has a's rank; the other axes broadcast (axis nullopt: flattened a, 1-D idx).
inline HT ref_take_along(const HT& a0, const HT& idx, std::optional<int> axis) {
  const HT a = axis ? a0 : ref_reshape(a0, {a0.size()});
  const int n = int(a.shape.size());
  const std::size_t ax = std::size_t(axis ? (*axis < 0 ? *axis + n : *axis) : 0);
  Shape out(static_cast<std::size_t>(n));
  for (std::size_t d = 0; d < std::size_t(n); ++d)
    out[d] = d == ax ? idx.shape[d] : (a.shape[d] == 1 ? idx.shape[d] : a.shape[d]);
  HT r = make_ht(a.dt, out);
  const auto ast = cstrides(a.shape), ist = cstrides(idx.shape);
  std::vector<i64> o(out.size(), 0);
  for (std::size_t i = 0; i < r.v.size(); ++i) {
    i64 src = 0, isrc = 0;
    for (std::size_t d = 0; d < out.size(); ++d) {
      isrc += (idx.shape[d] == 1 ? 0 : o[d]) * ist[d];
      if (d != ax) src += (a.shape[d] == 1 ? 0 : o[d]) * ast[d];
    }
    const i64 len = a.shape[ax];
    i64 j = i64(idx.v[std::size_t(isrc)]);
    if (j < 0) j += len;
    src += std::clamp<i64>(j, 0, len - 1) * ast[ax];
    copy_element(r, i, a, std::size_t(src));
    if (idx.e[std::size_t(isrc)] != 0) r.e[i] = kInf;
    for (int d = int(out.size()) - 1; d >= 0; --d) {
      if (++o[std::size_t(d)] < out[std::size_t(d)]) break;
      o[std::size_t(d)] = 0;
    }
  }
  return r;
}

// x.at(comps).add(v), NumPy's np.add.at as docs/semantics.md has it: the values meeting at one element summed first
// (a sum in the type p of v promoted with x's: any order, so gamma of the count), then added to x once and converted
// to x's type. Real types only.
inline HT ref_add_at(const HT& x, const std::vector<AdvComp>& comps, const HT& v) {
  const DType p = promote(x.dt, v.dt);
  const HT pos = ref_advanced(iota_like(x.shape), comps);
  const HT vals = ref_broadcast(ref_cast(v, p), pos.shape);
  std::vector<std::vector<std::size_t>> at(x.v.size());
  for (std::size_t i = 0; i < pos.v.size(); ++i) at[std::size_t(pos.v[i])].push_back(i);
  HT s = make_ht(p, x.shape);
  std::vector<bool> touched(x.v.size(), false);
  std::vector<double> tv, te;
  for (std::size_t t = 0; t < at.size(); ++t) {
    if (at[t].empty()) continue;
    touched[t] = true;
    tv.clear();
    te.clear();
    for (auto i : at[t]) {
      tv.push_back(vals.v[i]);
      te.push_back(vals.e[i]);
    }
    if (isf(p)) {
      ref_fsum(p, tv, te, s.v[t], s.e[t]);
    } else { // integers wrap (int32 sums are int32's), exact
      i64 acc = 0;
      bool certain = true;
      for (std::size_t k = 0; k < tv.size(); ++k) {
        acc = i64(std::uint64_t(acc) + std::uint64_t(i64(tv[k])));
        certain &= te[k] == 0;
      }
      s.v[t] = rnd(p, double(acc));
      s.e[t] = certain ? 0 : kInf;
    }
  }
  const HT sum = ref_cast(ref_binary_t(B::Add, ref_cast(x, p), s, p), x.dt);
  HT r = x;
  for (std::size_t t = 0; t < x.v.size(); ++t)
    if (touched[t]) copy_element(r, t, sum, t);
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// scans and sorts
// ---------------------------------------------------------------------------------------------------------

// Calls fn(line) for each line of `shape` along `axis`: the flat positions of its elements, in order.
template <class F> void for_each_line(const Shape& shape, std::size_t axis, F&& fn) {
  i64 outer = 1, inner = 1;
  for (std::size_t k = 0; k < axis; ++k) outer *= shape[k];
  for (std::size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
  const i64 len = shape[axis];
  std::vector<std::size_t> line(static_cast<std::size_t>(len));
  for (i64 o = 0; o < outer; ++o)
    for (i64 in = 0; in < inner; ++in) {
      for (i64 j = 0; j < len; ++j) line[std::size_t(j)] = std::size_t((o * len + j) * inner + in);
      fn(line);
    }
}

// The array and axis a scan or sort works on: the flattened array for axis nullopt.
inline HT line_view(const HT& x, std::optional<int> axis, std::size_t& ax) {
  if (!axis) {
    ax = 0;
    return ref_reshape(x, {x.size()});
  }
  const int n = int(x.shape.size());
  ax = std::size_t(*axis < 0 ? *axis + n : *axis);
  return x;
}

// The result type of cumsum and cumprod (NumPy's: bool and the integers int64, floats themselves).
inline DType scan_type(DType t) {
  return isf(t) ? t : DType::Int64;
}

// cumsum / cumprod (nancumsum: NaN taken as 0) of real values. Element k of a line combines the k + 1 terms of its
// prefix along some tree (the library's order, codegen/Schedule.h, is one; the bound holds for any), so its depth
// is at most k: a sum's error is within gamma(k) times the sum of the magnitudes of the prefix, plus the terms'
// bounds; a product's as ref_fprod's. A prefix of exact terms whose partial sums are representable in any order
// (sum_is_exact's test, kept incrementally) is exact, and so is a product whose odd parts fit (ref_fprod's).
// float16 and bfloat16 accumulate in float32 and round each result once.
inline HT ref_scan(bool product, bool nan_as_identity, const HT& x0, std::optional<int> axis) {
  const DType rt = scan_type(x0.dt), acc_t = accumulator_of(rt);
  std::size_t ax = 0;
  const HT x = line_view(ref_cast(x0, rt), axis, ax);
  HT r = make_ht(rt, x.shape);
  const int prec = precision_of(acc_t);
  for_each_line(x.shape, ax, [&](const std::vector<std::size_t>& line) {
    long double s = product ? 1 : 0, comp = 0; // Neumaier's compensated sum in long double
    double abs_sum = 0, in_err = 0, hi = 1, lo = 1, odd = 1, naive = product ? 1 : 0;
    int min_exp = std::numeric_limits<int>::max();
    bool finite = true, certain = true, certain_zero = false, odd_ok = true;
    i64 iacc = product ? 1 : 0;
    for (std::size_t k = 0; k < line.size(); ++k) {
      const std::size_t i = line[k];
      double v = x.v[i];
      const double e = x.e[i];
      if (nan_as_identity && std::isnan(v) && e == 0) v = product ? 1 : 0;
      certain &= e == 0;
      double out = 0, err = 0;
      if (!isf(rt)) {
        iacc = product ? i64(std::uint64_t(iacc) * std::uint64_t(i64(v)))
                       : i64(std::uint64_t(iacc) + std::uint64_t(i64(v)));
        out = double(iacc);
        err = certain ? 0 : kInf;
      } else {
        finite &= std::isfinite(v);
        naive = product ? naive * v : naive + v;
        if (!finite) { // NaN or an infinity, whatever the order; certain when every term is
          out = rnd(rt, naive);
          err = certain ? 0 : kInf;
        } else if (!product) {
          const long double t = s + v;
          comp += std::fabs(double(s)) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
          s = t;
          abs_sum += std::fabs(v);
          in_err += e;
          if (v != 0) {
            int ex;
            double m;
            odd_part(v, ex, m);
            min_exp = std::min(min_exp, ex);
          }
          const double exact = double(s + comp);
          out = rnd(rt, exact);
          const bool representable = abs_sum == 0 || (std::ldexp(abs_sum, -min_exp) < std::ldexp(1.0, prec) &&
                                                      min_exp > min_exponent_of(acc_t));
          if (!std::isfinite(in_err)) {
            err = kInf;
          } else if (in_err == 0 && (k == 0 || representable) && out == exact) {
            err = 0;
          } else {
            const double bound = in_err * kSafety + gamma_of(acc_t, i64(k)) * (abs_sum + in_err) * kSafety;
            err = bound + ulp(rt, std::fabs(exact) + bound);
          }
        } else {
          s *= v;
          hi *= std::fabs(v) + e;
          lo *= std::fabs(v);
          certain_zero |= v == 0 && e == 0;
          if (v != 0) {
            int ex;
            double m;
            odd_part(v, ex, m);
            odd *= m;
            if (ex < (acc_t == DType::Float32 ? -100 : -900)) odd_ok = false;
          }
          out = rnd(rt, double(s));
          if (certain_zero) {
            out = 0;
            err = 0;
          } else if (!std::isfinite(hi)) {
            err = kInf;
          } else if (certain && (k == 0 || (odd_ok && odd < std::ldexp(1.0, prec))) && out == double(s)) {
            err = 0;
          } else {
            const double tiny = std::ldexp(1.0, min_exponent_of(acc_t));
            const double bound = (hi - lo) * kSafety + gamma_of(acc_t, i64(k) + 1) * hi * kSafety +
                                 double(k + 1) * tiny * std::max(1.0, hi);
            err = bound + ulp(rt, std::fabs(double(s)) + bound);
          }
        }
      }
      r.v[i] = out;
      r.e[i] = err;
    }
  });
  return r;
}

// NumPy's sort order: NaNs last (equal among themselves), then by value.
inline bool sort_less(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}
inline bool sort_equal(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

// The stable order of each line: positions along the line, and whether each element's rank is certain (its interval
// [x - e, x + e] meets no other element's, except exact equal elements, whose stable order is certain). An element
// with an infinite bound makes the whole line uncertain.
inline void sort_line(const HT& x, const std::vector<std::size_t>& line, std::vector<std::size_t>& order,
                      std::vector<bool>& certain_rank) {
  const std::size_t n = line.size();
  order.resize(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t p, std::size_t q) { return sort_less(x.v[line[p]], x.v[line[q]]); });
  certain_rank.assign(n, true);
  bool any_uncertain = false;
  for (auto i : line) any_uncertain |= !std::isfinite(x.e[i]);
  if (any_uncertain) {
    certain_rank.assign(n, false);
    return;
  }
  // Runs of equal values; below each run, the largest upper end of the values before it, and above it, the smallest
  // lower end of the values after it (NaNs are exact: their bound is 0 or infinite).
  auto lo = [&](std::size_t k) { return x.v[line[order[k]]] - x.e[line[order[k]]] * kSafety; };
  auto hi = [&](std::size_t k) { return x.v[line[order[k]]] + x.e[line[order[k]]] * kSafety; };
  std::vector<double> max_hi_before(n + 1, -kInf), min_lo_after(n + 1, kInf);
  for (std::size_t k = 0; k < n; ++k)
    max_hi_before[k + 1] = std::max(max_hi_before[k], std::isnan(hi(k)) ? kInf : hi(k));
  for (std::size_t k = n; k-- > 0;) min_lo_after[k] = std::min(min_lo_after[k + 1], std::isnan(lo(k)) ? kInf : lo(k));
  for (std::size_t a = 0; a < n;) {
    std::size_t b = a;
    bool run_exact = true;
    while (b < n && sort_equal(x.v[line[order[b]]], x.v[line[order[a]]])) run_exact &= x.e[line[order[b++]]] == 0;
    const bool nan = std::isnan(x.v[line[order[a]]]);
    for (std::size_t k = a; k < b; ++k) {
      const bool alone = run_exact || b - a == 1;
      const bool below = nan || max_hi_before[a] < lo(k);
      const bool above = nan ? b == n : min_lo_after[b] > hi(k);
      certain_rank[k] = alone && below && above;
    }
    a = b;
  }
}

// sort along an axis: each output within the largest bound of its line (a sort is 1-Lipschitz in the max norm);
// NaNs are certain (a finite bound never hides one), so their count and places are too.
inline HT ref_sort(const HT& x0, std::optional<int> axis) {
  std::size_t ax = 0;
  const HT x = line_view(x0, axis, ax);
  HT r = make_ht(x.dt, x.shape);
  std::vector<std::size_t> order;
  std::vector<bool> certain;
  for_each_line(x.shape, ax, [&](const std::vector<std::size_t>& line) {
    sort_line(x, line, order, certain);
    double worst = 0;
    for (auto i : line) worst = std::max(worst, x.e[i]);
    for (std::size_t k = 0; k < line.size(); ++k) {
      r.v[line[k]] = x.v[line[order[k]]];
      r.e[line[k]] = worst;
    }
  });
  return r;
}

// argsort along an axis (int64): certain where the element of that rank is certain (sort_line).
inline HT ref_argsort(const HT& x0, std::optional<int> axis) {
  std::size_t ax = 0;
  const HT x = line_view(x0, axis, ax);
  HT r = make_ht(DType::Int64, x.shape);
  std::vector<std::size_t> order;
  std::vector<bool> certain;
  for_each_line(x.shape, ax, [&](const std::vector<std::size_t>& line) {
    sort_line(x, line, order, certain);
    for (std::size_t k = 0; k < line.size(); ++k) {
      r.v[line[k]] = double(order[k]);
      r.e[line[k]] = certain[k] ? 0 : kInf;
    }
  });
  return r;
}

} // namespace random_graphs
