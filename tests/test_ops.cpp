// Every elementwise op of lazyfuse/ops.def, plus where, clip and astype, checked against references written here
// (loops in long double over std:: functions; nothing from graph/OpMath.inc or the op table), for every operand
// dtype, on fresh random data. The seed is printed on failure; LAZYFUSE_TEST_SEED=<n> replays it.
//
// Backend-agnostic: the same binary runs on the CPU backend and on CUDA, so float tolerances cover CUDA's math
// functions (a few ulp; powf up to 8 ulp).
#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
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
using i128 = __int128;
using ld = long double;

// Every value of our five dtypes is exact in a long double with a 64-bit (or wider) mantissa, so host copies of
// arrays and reference inputs are long doubles.
static_assert(std::numeric_limits<ld>::digits >= 64);

constexpr DType kTypes[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
constexpr ld kNaN = std::numeric_limits<ld>::quiet_NaN();
constexpr ld kInf = std::numeric_limits<ld>::infinity();
constexpr i64 kI32Min = std::numeric_limits<std::int32_t>::min(), kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr i64 kI64Min = std::numeric_limits<i64>::min(), kI64Max = std::numeric_limits<i64>::max();

std::string name(DType t) {
  return std::string(lf::dtype_name(t));
}
bool is_float(DType t) {
  return t == DType::Float16 || t == DType::Float32 || t == DType::Float64;
}
/// x rounded to float16 (float functions of bool compute in float16, as NumPy's).
ld to_float16(ld x) {
  return ld(float(lf::float16(double(x))));
}
bool is_int(DType t) {
  return lf::is_integer(t);
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

// ---- host data ------------------------------------------------------------------------------------------

/// A dtype-tagged host copy of an array (row-major).
struct Host {
  DType dtype = DType::Float64;
  std::vector<ld> v;
  std::size_t size() const { return v.size(); }
};

template <class T> Array make_typed(const std::vector<ld>& v, const Shape& shape) {
  std::unique_ptr<T[]> buf(new T[v.size()]);
  for (std::size_t k = 0; k < v.size(); ++k) {
    if constexpr (std::is_same_v<T, bool>)
      buf[k] = v[k] != 0;
    else
      buf[k] = T(v[k]);
  }
  return lf::asarray<T>(std::span<const T>(buf.get(), v.size()), shape);
}

Array to_array(const Host& h, const Shape& shape) {
  switch (h.dtype) {
  case DType::Bool: return make_typed<bool>(h.v, shape);
  case DType::Int32: return make_typed<std::int32_t>(h.v, shape);
  case DType::Int64: return make_typed<i64>(h.v, shape);
  case DType::Float32: return make_typed<float>(h.v, shape);
  case DType::Float64: return make_typed<double>(h.v, shape);
  default: break; // a type this test does not generate
  }
  return {};
}
Array to_array(const Host& h) {
  return to_array(h, Shape{i64(h.size())});
}

template <class T> std::vector<ld> read_typed(const Array& a) {
  auto h = a.get<T>();
  std::vector<ld> out(h.size());
  for (std::size_t k = 0; k < h.size(); ++k) out[k] = ld(h[k]);
  return out;
}

Host read(const Array& a) {
  Host h;
  h.dtype = a.dtype();
  switch (a.dtype()) {
  case DType::Bool: h.v = read_typed<bool>(a); break;
  case DType::Int32: h.v = read_typed<std::int32_t>(a); break;
  case DType::Int64: h.v = read_typed<i64>(a); break;
  case DType::Int8: h.v = read_typed<std::int8_t>(a); break;    // bool operands of BoolToInt ops compute in int8
  case DType::Float16: h.v = read_typed<lf::float16>(a); break; // float functions of bool
  case DType::Float32: h.v = read_typed<float>(a); break;
  case DType::Float64: h.v = read_typed<double>(a); break;
  default: break; // a type this test does not generate
  }
  return h;
}

// ---- random inputs --------------------------------------------------------------------------------------

/// Where an op's inputs are drawn from. Zeros are redrawn unless zero_frac > 0 (then that fraction is zero).
struct Domain {
  ld flo = -100, fhi = 100;   // floats: uniform in [flo, fhi]
  ld ilo = -1000, ihi = 1000; // integers: uniform in [ilo, ihi], clamped to the dtype's range
  bool log_uniform = false;   // floats: log-uniform in [flo, fhi] (both > 0), all exponents equally likely
  bool halves = false;        // floats: multiples of 0.5 (ties for comparisons)
  ld min_abs = 0;             // floats: |x| >= min_abs
  double zero_frac = 0;       // fraction of exact zeros (logical ops, casts to bool)
  double special_frac = 0;    // floats: fraction of NaN / +inf / -inf
};
constexpr ld kWide = 1e30L; // an integer range this wide is the dtype's whole range

Host random_host(DType t, std::size_t n, const Domain& d, std::mt19937_64& rng) {
  Host h{t, std::vector<ld>(n)};
  std::uniform_real_distribution<double> unit(0, 1);
  for (auto& x : h.v) {
    if (t == DType::Bool) {
      x = (rng() & 1) ? 1 : 0;
      continue;
    }
    if (d.zero_frac > 0 && unit(rng) < d.zero_frac) {
      x = 0;
      continue;
    }
    if (is_float(t) && d.special_frac > 0 && unit(rng) < d.special_frac) {
      const ld s[] = {kNaN, kInf, -kInf};
      x = s[rng() % 3];
      continue;
    }
    do {
      if (is_int(t)) {
        ld lo = t == DType::Int32 ? ld(kI32Min) : ld(kI64Min), hi = t == DType::Int32 ? ld(kI32Max) : ld(kI64Max);
        i64 a = i64(std::max(d.ilo, lo)), b = i64(std::min(d.ihi, hi));
        x = ld(std::uniform_int_distribution<i64>(a, b)(rng));
      } else {
        double r;
        if (d.log_uniform)
          r = std::exp(std::uniform_real_distribution<double>(std::log(double(d.flo)), std::log(double(d.fhi)))(rng));
        else
          r = std::uniform_real_distribution<double>(double(d.flo), double(d.fhi))(rng);
        if (d.halves) r = std::round(r * 2) / 2;
        x = t == DType::Float32 ? ld(float(r)) : ld(r);
        if (std::fabs(x) < d.min_abs) x = 0;
      }
    } while (x == 0 && d.zero_frac == 0);
  }
  return h;
}

// ---- the dtype rules, as NumPy 2 documents them (written out here, not taken from the library) -------------

DType promote(DType a, DType b) {
  // NumPy's promotion table restricted to bool, int32, int64, float32, float64.
  static const DType table[5][5] = {
      /* bool    */ {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64},
      /* int32   */ {DType::Int32, DType::Int32, DType::Int64, DType::Float64, DType::Float64},
      /* int64   */ {DType::Int64, DType::Int64, DType::Int64, DType::Float64, DType::Float64},
      /* float32 */ {DType::Float32, DType::Float64, DType::Float64, DType::Float32, DType::Float64},
      /* float64 */ {DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64},
  };
  return table[int(a)][int(b)];
}

/// How an op's compute and result types follow from its (promoted) operand type.
enum class Rule {
  Arith,     // computes and returns t
  NoBool,    // as Arith; bool operands are a DTypeError
  BoolToInt, // as Arith; bool computes in int8, as in NumPy
  Float,     // float types as they are; integers -> float64; bool -> float16 (NumPy's)
  Divide,    // true_divide: float types as they are; bool and integers -> float64
  Rounding,  // floor, ceil, trunc: every type unchanged (NumPy >= 2.1 keeps integers and bools)
  Predicate, // computes in t, returns bool
  Logical,   // computes and returns bool
};

struct Types {
  DType compute, result;
};
std::optional<Types> expected_types(Rule r, DType t) {
  switch (r) {
  case Rule::Arith: return Types{t, t};
  case Rule::NoBool:
    if (t == DType::Bool) return std::nullopt;
    return Types{t, t};
  case Rule::BoolToInt: return t == DType::Bool ? Types{DType::Int8, DType::Int8} : Types{t, t};
  case Rule::Float:
    if (t == DType::Bool) return Types{DType::Float16, DType::Float16};
    if (is_int(t)) return Types{DType::Float64, DType::Float64};
    return Types{t, t};
  case Rule::Divide:
    if (t == DType::Bool || is_int(t)) return Types{DType::Float64, DType::Float64};
    return Types{t, t};
  case Rule::Rounding: return Types{t, t};
  case Rule::Predicate: return Types{t, DType::Bool};
  case Rule::Logical: return Types{DType::Bool, DType::Bool};
  }
  return std::nullopt;
}

/// A value of any dtype converted to compute type c (NumPy's astype; only safe conversions happen here).
ld to_compute(ld x, DType c) {
  switch (c) {
  case DType::Bool: return x != 0 ? 1 : 0;
  case DType::Int8:
  case DType::Int32:
  case DType::Int64: return x;
  case DType::Float16: return to_float16(x);
  case DType::Float32: return ld(float(x));
  case DType::Float64: return ld(double(x));
  default: break; // a type this test does not generate
  }
  return x;
}

int bits(DType t) {
  return lf::dtype_bits(t);
}
/// Two's complement wraparound to the integer type's width.
i64 wrap(u64 v, int nbits) {
  return nbits == 64 ? i64(v) : i64(v << (64 - nbits)) >> (64 - nbits);
}

// ---- comparison -----------------------------------------------------------------------------------------

enum class Tol {
  Exact,  // bit-for-bit (modulo -0.0 == 0.0): integers, bools, rounding, comparisons
  Ulp,    // correctly rounded IEEE operations (+ - * / sqrt): within 1 ulp of the exact value
  Approx, // transcendental functions: a few ulp (CUDA: <= 2-4 ulp; powf <= 8 ulp)
};

ld max_rel(DType t, Tol tol) {
  // float16: within one unit in its last place (2^-10 relative) for every op, which computes in float32 and rounds.
  if (t == DType::Float16) return ld(0x1p-10);
  if (tol == Tol::Ulp) return t == DType::Float32 ? ld(1.2e-7) : ld(2.3e-16);
  return t == DType::Float32 ? ld(4e-6) : ld(1e-14);
}
ld max_l2(DType t, Tol tol) {
  if (t == DType::Float16) return ld(0x1p-11);
  if (tol == Tol::Ulp) return t == DType::Float32 ? ld(1e-7) : ld(2e-16);
  return t == DType::Float32 ? ld(1e-6) : ld(1e-15);
}

std::string fmt(ld x) {
  std::ostringstream os;
  os.precision(std::numeric_limits<ld>::max_digits10);
  os << x;
  return os.str();
}

/// The reference rounded to the result type (what an exactly computed result of that type holds).
ld round_to(DType t, ld x) {
  switch (t) {
  case DType::Bool: return x != 0 ? 1 : 0;
  case DType::Float16: return to_float16(x);
  case DType::Float32: return ld(float(x));
  case DType::Float64: return ld(double(x));
  default: return x;
  }
}

/// Compares a result against a reference computed in long double. Float results within `tol`; everything else
/// exactly. `inputs(k)` describes element k's inputs for the failure message.
testing::AssertionResult matches(const Host& out, const std::vector<ld>& ref, Tol tol,
                                 const std::function<std::string(std::size_t)>& inputs) {
  if (out.size() != ref.size())
    return testing::AssertionFailure() << "size " << out.size() << ", expected " << ref.size();
  const DType t = out.dtype;
  const bool exact = !is_float(t) || tol == Tol::Exact;
  const ld rtol = exact ? 0 : max_rel(t, tol);
  const ld tiny = t == DType::Float16   ? ld(0x1p-14)
                  : t == DType::Float32 ? ld(std::numeric_limits<float>::min())
                                        : ld(std::numeric_limits<double>::min());
  std::size_t bad = 0;
  ld worst = 0, err2 = 0, ref2 = 0;
  std::ostringstream msg;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    const ld o = out.v[k], r = round_to(t, ref[k]);
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(o);
    else if (std::isinf(r) || exact)
      ok = o == r;
    else {
      ok = !std::isnan(o) && !std::isinf(o);
      if (ok) {
        const ld e = std::fabs(o - ref[k]), rel = e / std::max(std::fabs(ref[k]), tiny);
        worst = std::max(worst, rel);
        ok = rel <= rtol;
        err2 += e * e;
        ref2 += ref[k] * ref[k];
      }
    }
    if (!ok && bad++ < 6)
      msg << "\n  [" << k << "] inputs " << inputs(k) << ": got " << fmt(o) << ", expected " << fmt(r)
          << (exact ? "" : " (exact " + fmt(ref[k]) + ")");
  }
  const ld l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : 0;
  const bool l2_bad = !exact && l2 > max_l2(t, tol);
  if (bad || l2_bad)
    return testing::AssertionFailure() << bad << " of " << ref.size() << " elements differ (" << name(t)
                                       << ", max relative error " << fmt(worst) << ", tolerance " << fmt(rtol)
                                       << "; relative L2 error " << fmt(l2) << ", tolerance "
                                       << fmt(exact ? 0 : max_l2(t, tol)) << ")" << msg.str();
  return testing::AssertionSuccess();
}

/// Materializes several results together (one multi-output kernel where the shapes agree: fewer GPU compiles).
void eval_all(const std::vector<Array>& arrays) {
  std::vector<const Array*> ptrs;
  for (auto& a : arrays) ptrs.push_back(&a);
  if (!ptrs.empty()) lf::eval_arrays(std::span<const Array* const>(ptrs.data(), ptrs.size()));
}

const std::vector<Shape> kShapes = {{1}, {7}, {40, 25}, {70000}}; // 70000: over the CPU backend's threading threshold
std::size_t numel(const Shape& s) {
  std::size_t n = 1;
  for (auto d : s) n *= std::size_t(d);
  return n;
}
std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// ---- integer references ---------------------------------------------------------------------------------

i128 floor_div128(i128 a, i128 b) {
  i128 q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
i64 int_floor_divide(i64 a, i64 b, int nb) {
  return b == 0 ? 0 : wrap(u64(floor_div128(a, b)), nb);
}
i64 int_remainder(i64 a, i64 b, int nb) {
  return b == 0 ? 0 : wrap(u64(i128(a) - floor_div128(a, b) * b), nb);
}
// Negative exponents (an error in NumPy) give 0 unless the base is +-1 (lazyfuse's documented choice).
i64 int_power(i64 a, i64 b, int nb) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
  u64 r = 1, base = u64(a);
  for (u64 e = u64(b); e; e >>= 1, base *= base)
    if (e & 1) r *= base;
  return wrap(r, nb);
}

// ---- float references -----------------------------------------------------------------------------------

ld nan_min(ld a, ld b) {
  return std::isnan(a) ? a : std::isnan(b) ? b : std::min(a, b);
}
ld nan_max(ld a, ld b) {
  return std::isnan(a) ? a : std::isnan(b) ? b : std::max(a, b);
}
// Python's float divmod: the remainder has the divisor's sign; the quotient is floor(a / b) exactly.
ld py_mod(ld a, ld b) {
  ld m = std::fmod(a, b);
  if (b == 0) return m;
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
ld py_floordiv(ld a, ld b) {
  if (b == 0) return a / b;
  ld m = std::fmod(a, b);
  ld n = std::nearbyint((a - m) / b); // (a - m) / b is an integer; nearbyint removes rounding noise
  if (m != 0 && ((b < 0) != (m < 0))) n -= 1;
  return n;
}

// ---- the op tables --------------------------------------------------------------------------------------

struct UnaryCase {
  const char* name;
  Array (*fn)(const Array&);
  Rule rule;
  Tol tol; // for float results
  Domain dom;
  ld (*fref)(ld);        // float and bool compute types (bool: on 0/1, result != 0)
  i64 (*iref)(i64, int); // integer compute types (bit width given)
};

i64 identity(i64 x, int) {
  return x;
}

const std::vector<UnaryCase>& unary_cases() {
  const Domain any{};
  Domain wide = any;
  wide.ilo = -kWide, wide.ihi = kWide;
  Domain positive = any;
  positive.flo = 1e-3, positive.fhi = 1e4, positive.log_uniform = true, positive.ilo = 1, positive.ihi = 1000000;
  Domain nonzero = any;
  nonzero.min_abs = 1e-3;
  Domain small = any;
  small.flo = -5, small.fhi = 5, small.ilo = -5, small.ihi = 5;
  Domain exp2d = any;
  exp2d.flo = -30, exp2d.fhi = 30, exp2d.ilo = -30, exp2d.ihi = 30;
  Domain expd = any;
  expd.flo = -20, expd.fhi = 20, expd.ilo = -20, expd.ihi = 20;
  Domain log1pd = positive;
  log1pd.log_uniform = false, log1pd.flo = -0.9, log1pd.fhi = 100;
  Domain trig = any;
  trig.flo = -10, trig.fhi = 10, trig.ilo = -100, trig.ihi = 100;
  Domain tand = any;
  tand.flo = -1.5, tand.fhi = 1.5, tand.ilo = -100, tand.ihi = 100;
  Domain unit = any;
  unit.flo = -1, unit.fhi = 1, unit.ilo = -1, unit.ihi = 1;
  Domain hyper = any;
  hyper.flo = -10, hyper.fhi = 10, hyper.ilo = -10, hyper.ihi = 10;
  Domain erfd = any;
  erfd.flo = -3, erfd.fhi = 3, erfd.ilo = -3, erfd.ihi = 3;
  Domain pred = wide;
  pred.special_frac = 0.2;
  Domain logical = small;
  logical.zero_frac = 0.3;

  static const std::vector<UnaryCase> cases = {
      {"negative", [](const Array& a) { return lf::negative(a); }, Rule::NoBool, Tol::Exact, wide,
       [](ld x) { return -x; }, [](i64 x, int nb) { return wrap(0 - u64(x), nb); }},
      {"abs", [](const Array& a) { return lf::abs(a); }, Rule::Arith, Tol::Exact, wide,
       [](ld x) { return std::fabs(x); }, [](i64 x, int nb) { return x < 0 ? wrap(0 - u64(x), nb) : x; }},
      {"sign", [](const Array& a) { return lf::sign(a); }, Rule::NoBool, Tol::Exact, wide,
       [](ld x) { return x > 0 ? ld(1) : (x < 0 ? ld(-1) : x); }, [](i64 x, int) { return i64((x > 0) - (x < 0)); }},
      {"square", [](const Array& a) { return lf::square(a); }, Rule::BoolToInt, Tol::Ulp, wide,
       [](ld x) { return x * x; }, [](i64 x, int nb) { return wrap(u64(x) * u64(x), nb); }},
      {"sqrt", [](const Array& a) { return lf::sqrt(a); }, Rule::Float, Tol::Ulp, positive,
       [](ld x) { return std::sqrt(x); }, nullptr},
      {"rsqrt", [](const Array& a) { return lf::rsqrt(a); }, Rule::Float, Tol::Approx, positive,
       [](ld x) { return 1 / std::sqrt(x); }, nullptr},
      {"reciprocal", [](const Array& a) { return lf::reciprocal(a); }, Rule::Float, Tol::Ulp, nonzero,
       [](ld x) { return 1 / x; }, nullptr},
      {"exp", [](const Array& a) { return lf::exp(a); }, Rule::Float, Tol::Approx, expd,
       [](ld x) { return std::exp(x); }, nullptr},
      {"exp2", [](const Array& a) { return lf::exp2(a); }, Rule::Float, Tol::Approx, exp2d,
       [](ld x) { return std::exp2(x); }, nullptr},
      {"expm1", [](const Array& a) { return lf::expm1(a); }, Rule::Float, Tol::Approx, small,
       [](ld x) { return std::expm1(x); }, nullptr},
      {"log", [](const Array& a) { return lf::log(a); }, Rule::Float, Tol::Approx, positive,
       [](ld x) { return std::log(x); }, nullptr},
      {"log2", [](const Array& a) { return lf::log2(a); }, Rule::Float, Tol::Approx, positive,
       [](ld x) { return std::log2(x); }, nullptr},
      {"log10", [](const Array& a) { return lf::log10(a); }, Rule::Float, Tol::Approx, positive,
       [](ld x) { return std::log10(x); }, nullptr},
      {"log1p", [](const Array& a) { return lf::log1p(a); }, Rule::Float, Tol::Approx, log1pd,
       [](ld x) { return std::log1p(x); }, nullptr},
      {"sin", [](const Array& a) { return lf::sin(a); }, Rule::Float, Tol::Approx, trig,
       [](ld x) { return std::sin(x); }, nullptr},
      {"cos", [](const Array& a) { return lf::cos(a); }, Rule::Float, Tol::Approx, trig,
       [](ld x) { return std::cos(x); }, nullptr},
      {"tan", [](const Array& a) { return lf::tan(a); }, Rule::Float, Tol::Approx, tand,
       [](ld x) { return std::tan(x); }, nullptr},
      {"asin", [](const Array& a) { return lf::asin(a); }, Rule::Float, Tol::Approx, unit,
       [](ld x) { return std::asin(x); }, nullptr},
      {"acos", [](const Array& a) { return lf::acos(a); }, Rule::Float, Tol::Approx, unit,
       [](ld x) { return std::acos(x); }, nullptr},
      {"atan", [](const Array& a) { return lf::atan(a); }, Rule::Float, Tol::Approx, any,
       [](ld x) { return std::atan(x); }, nullptr},
      {"sinh", [](const Array& a) { return lf::sinh(a); }, Rule::Float, Tol::Approx, hyper,
       [](ld x) { return std::sinh(x); }, nullptr},
      {"cosh", [](const Array& a) { return lf::cosh(a); }, Rule::Float, Tol::Approx, hyper,
       [](ld x) { return std::cosh(x); }, nullptr},
      {"tanh", [](const Array& a) { return lf::tanh(a); }, Rule::Float, Tol::Approx, small,
       [](ld x) { return std::tanh(x); }, nullptr},
      {"erf", [](const Array& a) { return lf::erf(a); }, Rule::Float, Tol::Approx, erfd,
       [](ld x) { return std::erf(x); }, nullptr},
      {"gelu", [](const Array& a) { return lf::gelu(a); }, Rule::Float, Tol::Approx, hyper,
       [](ld x) { return x / 2 * std::erfc(-x / std::sqrt(ld(2))); }, nullptr},
      {"gelu_tanh", [](const Array& a) { return lf::gelu_tanh(a); }, Rule::Float, Tol::Approx, hyper,
       [](ld x) { return x / (1 + std::exp(-2 * std::sqrt(2 / std::acos(ld(-1))) * (x + 0.044715L * x * x * x))); },
       nullptr},
      {"floor", [](const Array& a) { return lf::floor(a); }, Rule::Rounding, Tol::Exact, wide,
       [](ld x) { return std::floor(x); }, identity},
      {"ceil", [](const Array& a) { return lf::ceil(a); }, Rule::Rounding, Tol::Exact, wide,
       [](ld x) { return std::ceil(x); }, identity},
      {"rint", [](const Array& a) { return lf::rint(a); }, Rule::Float, Tol::Exact, wide,
       [](ld x) { return std::nearbyint(x); }, identity},
      {"trunc", [](const Array& a) { return lf::trunc(a); }, Rule::Rounding, Tol::Exact, wide,
       [](ld x) { return std::trunc(x); }, identity},
      {"isnan", [](const Array& a) { return lf::isnan(a); }, Rule::Predicate, Tol::Exact, pred,
       [](ld x) { return ld(std::isnan(x)); }, [](i64, int) { return i64(0); }},
      {"isinf", [](const Array& a) { return lf::isinf(a); }, Rule::Predicate, Tol::Exact, pred,
       [](ld x) { return ld(std::isinf(x)); }, [](i64, int) { return i64(0); }},
      {"isfinite", [](const Array& a) { return lf::isfinite(a); }, Rule::Predicate, Tol::Exact, pred,
       [](ld x) { return ld(std::isfinite(x)); }, [](i64, int) { return i64(1); }},
      {"logical_not", [](const Array& a) { return lf::logical_not(a); }, Rule::Logical, Tol::Exact, logical,
       [](ld x) { return ld(x == 0); }, nullptr},
  };
  return cases;
}

struct BinaryCase {
  const char* name;
  Array (*fn)(const Array&, const Array&);
  Rule rule;
  Tol tol;
  Domain da, db;
  ld (*fref)(ld, ld);         // float and bool compute types (bool: on 0/1, result != 0)
  i64 (*iref)(i64, i64, int); // integer compute types
};

const std::vector<BinaryCase>& binary_cases() {
  Domain wide{};
  wide.ilo = -kWide, wide.ihi = kWide;
  Domain any{};
  Domain nonzero{};
  nonzero.min_abs = 1e-3;
  Domain numer{};
  numer.ilo = -1000000, numer.ihi = 1000000;
  Domain denom{};
  denom.flo = -10, denom.fhi = 10, denom.min_abs = 0.01, denom.ilo = -100, denom.ihi = 100;
  Domain base{};
  base.flo = 0.1, base.fhi = 10, base.log_uniform = true, base.ilo = -10, base.ihi = 10;
  Domain expo{};
  expo.flo = -4, expo.fhi = 4, expo.ilo = -3, expo.ihi = 20;
  Domain ties{}; // many equal values across types: multiples of 0.5 in [-3, 3]
  ties.flo = -3, ties.fhi = 3, ties.halves = true, ties.ilo = -3, ties.ihi = 3;
  Domain logical = ties;
  logical.zero_frac = 0.3;

  static const std::vector<BinaryCase> cases = {
      {"add", [](const Array& a, const Array& b) { return lf::add(a, b); }, Rule::Arith, Tol::Ulp, wide, wide,
       [](ld a, ld b) { return a + b; }, [](i64 a, i64 b, int nb) { return wrap(u64(a) + u64(b), nb); }},
      {"subtract", [](const Array& a, const Array& b) { return lf::subtract(a, b); }, Rule::NoBool, Tol::Ulp, wide,
       wide, [](ld a, ld b) { return a - b; }, [](i64 a, i64 b, int nb) { return wrap(u64(a) - u64(b), nb); }},
      {"multiply", [](const Array& a, const Array& b) { return lf::multiply(a, b); }, Rule::Arith, Tol::Ulp, wide, wide,
       [](ld a, ld b) { return a * b; }, [](i64 a, i64 b, int nb) { return wrap(u64(a) * u64(b), nb); }},
      {"true_divide", [](const Array& a, const Array& b) { return lf::true_divide(a, b); }, Rule::Divide, Tol::Ulp, any,
       nonzero, [](ld a, ld b) { return a / b; }, nullptr},
      {"floor_divide", [](const Array& a, const Array& b) { return lf::floor_divide(a, b); }, Rule::BoolToInt,
       Tol::Exact, numer, denom, py_floordiv, int_floor_divide},
      {"remainder", [](const Array& a, const Array& b) { return lf::remainder(a, b); }, Rule::BoolToInt, Tol::Ulp,
       numer, denom, py_mod, int_remainder},
      {"power", [](const Array& a, const Array& b) { return lf::power(a, b); }, Rule::BoolToInt, Tol::Approx, base,
       expo, [](ld a, ld b) { return std::pow(a, b); }, int_power},
      {"minimum", [](const Array& a, const Array& b) { return lf::minimum(a, b); }, Rule::Arith, Tol::Exact, wide, wide,
       nan_min, [](i64 a, i64 b, int) { return std::min(a, b); }},
      {"maximum", [](const Array& a, const Array& b) { return lf::maximum(a, b); }, Rule::Arith, Tol::Exact, wide, wide,
       nan_max, [](i64 a, i64 b, int) { return std::max(a, b); }},
      {"atan2", [](const Array& a, const Array& b) { return lf::atan2(a, b); }, Rule::Float, Tol::Approx, any, any,
       [](ld a, ld b) { return std::atan2(a, b); }, nullptr},
      {"equal", [](const Array& a, const Array& b) { return lf::equal(a, b); }, Rule::Predicate, Tol::Exact, ties, ties,
       [](ld a, ld b) { return ld(a == b); }, [](i64 a, i64 b, int) { return i64(a == b); }},
      {"not_equal", [](const Array& a, const Array& b) { return lf::not_equal(a, b); }, Rule::Predicate, Tol::Exact,
       ties, ties, [](ld a, ld b) { return ld(a != b); }, [](i64 a, i64 b, int) { return i64(a != b); }},
      {"less", [](const Array& a, const Array& b) { return lf::less(a, b); }, Rule::Predicate, Tol::Exact, ties, ties,
       [](ld a, ld b) { return ld(a < b); }, [](i64 a, i64 b, int) { return i64(a < b); }},
      {"less_equal", [](const Array& a, const Array& b) { return lf::less_equal(a, b); }, Rule::Predicate, Tol::Exact,
       ties, ties, [](ld a, ld b) { return ld(a <= b); }, [](i64 a, i64 b, int) { return i64(a <= b); }},
      {"greater", [](const Array& a, const Array& b) { return lf::greater(a, b); }, Rule::Predicate, Tol::Exact, ties,
       ties, [](ld a, ld b) { return ld(a > b); }, [](i64 a, i64 b, int) { return i64(a > b); }},
      {"greater_equal", [](const Array& a, const Array& b) { return lf::greater_equal(a, b); }, Rule::Predicate,
       Tol::Exact, ties, ties, [](ld a, ld b) { return ld(a >= b); }, [](i64 a, i64 b, int) { return i64(a >= b); }},
      {"logical_and", [](const Array& a, const Array& b) { return lf::logical_and(a, b); }, Rule::Logical, Tol::Exact,
       logical, logical, [](ld a, ld b) { return ld(a != 0 && b != 0); }, nullptr},
      {"logical_or", [](const Array& a, const Array& b) { return lf::logical_or(a, b); }, Rule::Logical, Tol::Exact,
       logical, logical, [](ld a, ld b) { return ld(a != 0 || b != 0); }, nullptr},
      {"logical_xor", [](const Array& a, const Array& b) { return lf::logical_xor(a, b); }, Rule::Logical, Tol::Exact,
       logical, logical, [](ld a, ld b) { return ld((a != 0) != (b != 0)); }, nullptr},
  };
  return cases;
}

ld ref_unary(const UnaryCase& c, Types t, ld x) {
  x = to_compute(x, t.compute);
  if (is_int(t.compute)) return ld(c.iref(i64(x), bits(t.compute)));
  return c.fref(x);
}
ld ref_binary(const BinaryCase& c, Types t, ld a, ld b) {
  a = to_compute(a, t.compute), b = to_compute(b, t.compute);
  if (is_int(t.compute)) return ld(c.iref(i64(a), i64(b), bits(t.compute)));
  return c.fref(a, b);
}

// ---- unary ops ------------------------------------------------------------------------------------------

TEST(UnaryOps, EveryOpEveryDTypeMatchesReference) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  for (DType t : kTypes) {
    for (const Shape& shape : kShapes) {
      // One input per op (each op has its own domain); all results of a dtype and shape evaluated together.
      std::vector<Host> inputs;
      std::vector<Array> outs;
      std::vector<const UnaryCase*> cases;
      for (const auto& c : unary_cases()) {
        SCOPED_TRACE(std::string(c.name) + "(" + name(t) + " " + shape_text(shape) + ")");
        auto types = expected_types(c.rule, t);
        Host in = random_host(t, numel(shape), c.dom, seed.rng);
        Array x = to_array(in, shape);
        if (!types) {
          EXPECT_THROW(c.fn(x), lf::DTypeError);
          continue;
        }
        Array y = c.fn(x);
        EXPECT_EQ(name(y.dtype()), name(types->result));
        EXPECT_EQ(y.shape(), shape);
        if (y.dtype() != types->result || y.shape() != shape) continue;
        inputs.push_back(std::move(in));
        outs.push_back(y);
        cases.push_back(&c);
      }
      eval_all(outs);
      for (std::size_t k = 0; k < outs.size(); ++k) {
        const UnaryCase& c = *cases[k];
        SCOPED_TRACE(std::string(c.name) + "(" + name(t) + " " + shape_text(shape) + ")");
        auto types = *expected_types(c.rule, t);
        const Host& in = inputs[k];
        std::vector<ld> ref(in.size());
        for (std::size_t e = 0; e < in.size(); ++e) ref[e] = ref_unary(c, types, in.v[e]);
        EXPECT_TRUE(matches(read(outs[k]), ref, c.tol, [&](std::size_t e) { return fmt(in.v[e]); }));
      }
    }
  }
}

TEST(UnaryOps, ResultDTypes) {
  Array i32 = lf::asarray<std::int32_t>({4, 9}), b = lf::asarray({true, false}), f32 = lf::asarray({4.0f, 9.0f});
  EXPECT_EQ(lf::sqrt(i32).dtype(), DType::Float64);
  EXPECT_EQ(lf::sqrt(b).dtype(), DType::Float16); // NumPy's float16 for bool, int8 and uint8
  EXPECT_EQ(lf::sqrt(f32).dtype(), DType::Float32);
  EXPECT_EQ(lf::floor(i32).dtype(), DType::Int32);
  EXPECT_EQ(lf::floor(b).dtype(), DType::Bool);
  EXPECT_EQ(lf::rint(i32).dtype(), DType::Float64);
  EXPECT_EQ(lf::square(b).dtype(), DType::Int8);
  EXPECT_EQ(lf::abs(b).dtype(), DType::Bool);
  EXPECT_EQ(lf::isnan(i32).dtype(), DType::Bool);
  EXPECT_EQ(lf::logical_not(f32).dtype(), DType::Bool);
  auto s = lf::sqrt(i32).get<double>();
  EXPECT_EQ(s[0], 2.0);
  EXPECT_EQ(s[1], 3.0);
}

// Special values, checked one by one (each row: input, expected). NaN expected matches NaN.
struct Special {
  ld in, out;
};

void check_specials(const char* what, Array (*fn)(const Array&), DType t, const std::vector<Special>& rows,
                    bool check_sign = false) {
  SCOPED_TRACE(std::string(what) + " on " + name(t));
  Host in{t, {}};
  for (auto& r : rows) in.v.push_back(r.in);
  Array y = fn(to_array(in));
  Host out = read(y);
  ASSERT_EQ(out.size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    ld want = round_to(out.dtype, rows[k].out), got = out.v[k];
    bool ok = std::isnan(want) ? std::isnan(got) : got == want;
    if (ok && check_sign && !std::isnan(want)) ok = std::signbit(got) == std::signbit(want);
    EXPECT_TRUE(ok) << what << "(" << fmt(rows[k].in) << ") = " << fmt(got) << ", expected " << fmt(want);
  }
}

TEST(UnaryOps, SpecialValues) {
  for (DType t : {DType::Float32, DType::Float64}) {
    // NaN propagates through every float function.
    for (const auto& c : unary_cases()) {
      if (c.rule != Rule::Float && c.rule != Rule::Rounding) continue;
      check_specials(c.name, c.fn, t, {{kNaN, kNaN}});
    }
    check_specials(
        "negative", [](const Array& a) { return lf::negative(a); }, t,
        {{0.0L, -0.0L}, {-0.0L, 0.0L}, {kInf, -kInf}, {kNaN, kNaN}}, true);
    check_specials(
        "abs", [](const Array& a) { return lf::abs(a); }, t, {{-0.0L, 0.0L}, {-kInf, kInf}, {kNaN, kNaN}}, true);
    check_specials("sign", [](const Array& a) { return lf::sign(a); }, t,
                   {{-kInf, -1}, {kInf, 1}, {0.0L, 0}, {kNaN, kNaN}, {-1e-30L, -1}});
    check_specials(
        "sqrt", [](const Array& a) { return lf::sqrt(a); }, t,
        {{-1, kNaN}, {kInf, kInf}, {-0.0L, -0.0L}, {0.0L, 0.0L}, {-kInf, kNaN}}, true);
    check_specials(
        "rsqrt", [](const Array& a) { return lf::rsqrt(a); }, t, {{0.0L, kInf}, {kInf, 0}, {-1, kNaN}}, true);
    check_specials(
        "reciprocal", [](const Array& a) { return lf::reciprocal(a); }, t,
        {{0.0L, kInf}, {-0.0L, -kInf}, {kInf, 0.0L}, {-kInf, -0.0L}}, true);
    check_specials("exp", [](const Array& a) { return lf::exp(a); }, t,
                   {{kInf, kInf}, {-kInf, 0}, {1000, kInf}, {0, 1}});
    check_specials("exp2", [](const Array& a) { return lf::exp2(a); }, t, {{kInf, kInf}, {-kInf, 0}, {0, 1}});
    check_specials(
        "expm1", [](const Array& a) { return lf::expm1(a); }, t, {{kInf, kInf}, {-kInf, -1}, {-0.0L, -0.0L}}, true);
    check_specials("log", [](const Array& a) { return lf::log(a); }, t,
                   {{0.0L, -kInf}, {-0.0L, -kInf}, {-1, kNaN}, {kInf, kInf}, {1, 0}});
    check_specials("log2", [](const Array& a) { return lf::log2(a); }, t, {{0.0L, -kInf}, {-1, kNaN}, {1, 0}});
    check_specials("log10", [](const Array& a) { return lf::log10(a); }, t, {{0.0L, -kInf}, {-1, kNaN}, {1, 0}});
    check_specials(
        "log1p", [](const Array& a) { return lf::log1p(a); }, t,
        {{-1, -kInf}, {-2, kNaN}, {kInf, kInf}, {-0.0L, -0.0L}}, true);
    check_specials(
        "sin", [](const Array& a) { return lf::sin(a); }, t, {{kInf, kNaN}, {-kInf, kNaN}, {-0.0L, -0.0L}}, true);
    check_specials("cos", [](const Array& a) { return lf::cos(a); }, t, {{kInf, kNaN}, {0, 1}});
    check_specials(
        "tan", [](const Array& a) { return lf::tan(a); }, t, {{kInf, kNaN}, {-0.0L, -0.0L}}, true);
    check_specials("asin", [](const Array& a) { return lf::asin(a); }, t, {{2, kNaN}, {-1.5, kNaN}, {0, 0}});
    check_specials("acos", [](const Array& a) { return lf::acos(a); }, t, {{2, kNaN}, {1, 0}});
    check_specials(
        "atan", [](const Array& a) { return lf::atan(a); }, t, {{-0.0L, -0.0L}, {kNaN, kNaN}}, true);
    check_specials(
        "sinh", [](const Array& a) { return lf::sinh(a); }, t, {{kInf, kInf}, {-kInf, -kInf}, {-0.0L, -0.0L}}, true);
    check_specials("cosh", [](const Array& a) { return lf::cosh(a); }, t, {{kInf, kInf}, {-kInf, kInf}, {0, 1}});
    check_specials(
        "tanh", [](const Array& a) { return lf::tanh(a); }, t, {{kInf, 1}, {-kInf, -1}, {-0.0L, -0.0L}}, true);
    check_specials(
        "erf", [](const Array& a) { return lf::erf(a); }, t, {{kInf, 1}, {-kInf, -1}, {-0.0L, -0.0L}}, true);
    // GELU's limits: x at +inf, -0 at -inf (not -inf * 0) and where it underflows, the sign of zero kept.
    check_specials(
        "gelu", [](const Array& a) { return lf::gelu(a); }, t, {{kInf, kInf}, {-kInf, -0.0L}, {-0.0L, -0.0L}}, true);
    check_specials(
        "gelu_tanh", [](const Array& a) { return lf::gelu(a, lf::GeluApproximate::Tanh); }, t,
        {{kInf, kInf}, {-kInf, -0.0L}, {-0.0L, -0.0L}, {kNaN, kNaN}, {-2408448, -0.0L}, {-3774873600.0L, -0.0L}}, true);
    // Rounding: -0.0 results, infinities, and rint's ties to even.
    check_specials(
        "floor", [](const Array& a) { return lf::floor(a); }, t,
        {{-0.5, -1}, {0.5, 0}, {-0.0L, -0.0L}, {kInf, kInf}, {-kInf, -kInf}, {-2.5, -3}}, true);
    check_specials(
        "ceil", [](const Array& a) { return lf::ceil(a); }, t,
        {{-0.5, -0.0L}, {0.5, 1}, {kInf, kInf}, {-kInf, -kInf}, {2.5, 3}}, true);
    check_specials(
        "trunc", [](const Array& a) { return lf::trunc(a); }, t, {{-0.5, -0.0L}, {-1.7, -1}, {1.7, 1}, {kInf, kInf}},
        true);
    check_specials(
        "rint", [](const Array& a) { return lf::rint(a); }, t,
        {{0.5, 0}, {1.5, 2}, {2.5, 2}, {-2.5, -2}, {-0.5, -0.0L}, {3.5, 4}, {kInf, kInf}, {-kInf, -kInf}}, true);
    check_specials("isnan", [](const Array& a) { return lf::isnan(a); }, t,
                   {{kNaN, 1}, {kInf, 0}, {-kInf, 0}, {0, 0}, {1e-40L, 0}});
    check_specials("isinf", [](const Array& a) { return lf::isinf(a); }, t,
                   {{kNaN, 0}, {kInf, 1}, {-kInf, 1}, {0, 0}, {3e38L, 0}});
    check_specials("isfinite", [](const Array& a) { return lf::isfinite(a); }, t,
                   {{kNaN, 0}, {kInf, 0}, {-kInf, 0}, {-0.0L, 1}, {3e38L, 1}});
    check_specials("logical_not", [](const Array& a) { return lf::logical_not(a); }, t,
                   {{kNaN, 0}, {-0.0L, 1}, {0, 1}, {kInf, 0}, {1e-40L, 0}});
  }
  // Integer extremes wrap (two's complement), as NumPy's do.
  for (DType t : {DType::Int32, DType::Int64}) {
    const ld lo = t == DType::Int32 ? ld(kI32Min) : ld(kI64Min), hi = t == DType::Int32 ? ld(kI32Max) : ld(kI64Max);
    check_specials("negative", [](const Array& a) { return lf::negative(a); }, t, {{lo, lo}, {hi, -hi}, {0, 0}});
    check_specials("abs", [](const Array& a) { return lf::abs(a); }, t, {{lo, lo}, {hi, hi}, {-1, 1}});
    check_specials("sign", [](const Array& a) { return lf::sign(a); }, t, {{lo, -1}, {hi, 1}, {0, 0}});
    check_specials("square", [](const Array& a) { return lf::square(a); }, t,
                   {{lo, 0}, {hi, 1}, {t == DType::Int32 ? 65536 : 4294967296.0L, 0}, {-3, 9}});
    for (const char* n : {"floor", "ceil", "rint", "trunc"}) {
      for (const auto& c : unary_cases())
        if (std::string(c.name) == n) check_specials(n, c.fn, t, {{lo, lo}, {hi, hi}, {-7, -7}});
    }
    check_specials("isnan", [](const Array& a) { return lf::isnan(a); }, t, {{lo, 0}, {hi, 0}});
    check_specials("isfinite", [](const Array& a) { return lf::isfinite(a); }, t, {{lo, 1}, {hi, 1}});
    check_specials("logical_not", [](const Array& a) { return lf::logical_not(a); }, t, {{lo, 0}, {0, 1}});
    // The Float rule: integers compute in float64.
    check_specials("sqrt", [](const Array& a) { return lf::sqrt(a); }, t,
                   {{hi, ld(std::sqrt(double(hi)))}, {-4, kNaN}, {16, 4}});
    check_specials("reciprocal", [](const Array& a) { return lf::reciprocal(a); }, t, {{0, kInf}, {-4, -0.25}});
  }
}

// ---- binary ops -----------------------------------------------------------------------------------------

TEST(BinaryOps, EveryOpEveryDTypePairMatchesReference) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  for (DType ta : kTypes) {
    for (DType tb : kTypes) {
      // Mixed pairs at two sizes; same-type pairs at every size.
      std::vector<Shape> shapes = kShapes;
      if (ta != tb) shapes = {{7}, {70000}};
      for (const Shape& shape : shapes) {
        std::vector<std::pair<Host, Host>> inputs;
        std::vector<Array> outs;
        std::vector<const BinaryCase*> cases;
        const DType t = promote(ta, tb);
        for (const auto& c : binary_cases()) {
          SCOPED_TRACE(std::string(c.name) + "(" + name(ta) + ", " + name(tb) + ") " + shape_text(shape));
          auto types = expected_types(c.rule, t);
          Host a = random_host(ta, numel(shape), c.da, seed.rng), b = random_host(tb, numel(shape), c.db, seed.rng);
          Array x = to_array(a, shape), y = to_array(b, shape);
          if (!types) {
            EXPECT_THROW(c.fn(x, y), lf::DTypeError);
            continue;
          }
          Array z = c.fn(x, y);
          EXPECT_EQ(name(z.dtype()), name(types->result));
          EXPECT_EQ(z.shape(), shape);
          if (z.dtype() != types->result || z.shape() != shape) continue;
          inputs.emplace_back(std::move(a), std::move(b));
          outs.push_back(z);
          cases.push_back(&c);
        }
        eval_all(outs);
        for (std::size_t k = 0; k < outs.size(); ++k) {
          const BinaryCase& c = *cases[k];
          SCOPED_TRACE(std::string(c.name) + "(" + name(ta) + ", " + name(tb) + ") " + shape_text(shape));
          auto types = *expected_types(c.rule, t);
          const auto& [a, b] = inputs[k];
          std::vector<ld> ref(a.size());
          for (std::size_t e = 0; e < a.size(); ++e) ref[e] = ref_binary(c, types, a.v[e], b.v[e]);
          EXPECT_TRUE(matches(read(outs[k]), ref, c.tol,
                              [&](std::size_t e) { return "(" + fmt(a.v[e]) + ", " + fmt(b.v[e]) + ")"; }));
        }
      }
    }
  }
}

// Special rows for a binary op on one dtype: (a, b, expected).
struct Special2 {
  ld a, b, out;
};
void check_specials2(const char* what, Array (*fn)(const Array&, const Array&), DType t,
                     const std::vector<Special2>& rows, bool check_sign = false) {
  SCOPED_TRACE(std::string(what) + " on " + name(t));
  Host a{t, {}}, b{t, {}};
  for (auto& r : rows) a.v.push_back(r.a), b.v.push_back(r.b);
  Host out = read(fn(to_array(a), to_array(b)));
  ASSERT_EQ(out.size(), rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    ld want = round_to(out.dtype, rows[k].out), got = out.v[k];
    bool ok = std::isnan(want) ? std::isnan(got) : got == want;
    if (ok && check_sign && !std::isnan(want)) ok = std::signbit(got) == std::signbit(want);
    EXPECT_TRUE(ok) << what << "(" << fmt(rows[k].a) << ", " << fmt(rows[k].b) << ") = " << fmt(got) << ", expected "
                    << fmt(want);
  }
}

#define LF_FN2(f) [](const Array& a, const Array& b) { return lf::f(a, b); }

TEST(BinaryOps, SpecialValuesFloat) {
  const ld pi = std::acos(ld(-1));
  for (DType t : {DType::Float32, DType::Float64}) {
    check_specials2("add", LF_FN2(add), t,
                    {{kInf, -kInf, kNaN}, {kNaN, 1, kNaN}, {-0.0L, -0.0L, -0.0L}, {-0.0L, 0.0L, 0.0L}}, true);
    check_specials2("subtract", LF_FN2(subtract), t, {{kInf, kInf, kNaN}, {0.0L, 0.0L, 0.0L}, {-0.0L, 0.0L, -0.0L}},
                    true);
    check_specials2("multiply", LF_FN2(multiply), t, {{kInf, 0, kNaN}, {-0.0L, 5, -0.0L}, {-kInf, -2, kInf}}, true);
    check_specials2(
        "true_divide", LF_FN2(true_divide), t,
        {{1, 0.0L, kInf}, {-1, 0.0L, -kInf}, {1, -0.0L, -kInf}, {0, 0, kNaN}, {kInf, kInf, kNaN}, {1, kInf, 0}}, true);
    // Python semantics: the remainder takes the divisor's sign; x % 0 is NaN; x // 0 is +-inf (NaN for 0 // 0).
    check_specials2("floor_divide", LF_FN2(floor_divide), t,
                    {{7, 2, 3},
                     {-7, 2, -4},
                     {7, -2, -4},
                     {-7, -2, 3},
                     {1, 0.0L, kInf},
                     {-1, 0.0L, -kInf},
                     {0, 0, kNaN},
                     {6, 3, 2},
                     {-6, 3, -2},
                     {0.5, 0.25, 2},
                     {kNaN, 1, kNaN}},
                    false);
    check_specials2("remainder", LF_FN2(remainder), t,
                    {{7, 2, 1},
                     {-7, 2, 1},
                     {7, -2, -1},
                     {-7, -2, -1},
                     {5, 0.0L, kNaN},
                     {-0.0L, 3, 0.0L},
                     {6, -3, -0.0L},
                     {5.5, 2, 1.5},
                     {kInf, 2, kNaN},
                     {5, kInf, 5},
                     {-5, kInf, kInf},
                     {kNaN, 2, kNaN}},
                    true);
    check_specials2("power", LF_FN2(power), t,
                    {{0, -1, kInf},
                     {-8, 1.0L / 3, kNaN},
                     {kNaN, 0, 1},
                     {1, kNaN, 1},
                     {0, 0, 1},
                     {kInf, -1, 0},
                     {kInf, 2, kInf},
                     {0, 3, 0}});
    check_specials2("minimum", LF_FN2(minimum), t,
                    {{kNaN, 1, kNaN}, {1, kNaN, kNaN}, {-kInf, 1, -kInf}, {kInf, 1, 1}, {kNaN, kNaN, kNaN}});
    check_specials2("maximum", LF_FN2(maximum), t,
                    {{kNaN, 1, kNaN}, {1, kNaN, kNaN}, {-kInf, 1, 1}, {kInf, 1, kInf}, {kNaN, -kInf, kNaN}});
    check_specials2("atan2", LF_FN2(atan2), t,
                    {{0.0L, -0.0L, pi},
                     {-0.0L, -0.0L, -pi},
                     {0.0L, 0.0L, 0.0L},
                     {-0.0L, 0.0L, -0.0L},
                     {kNaN, 1, kNaN},
                     {1, 0, pi / 2}},
                    true);
    check_specials2("equal", LF_FN2(equal), t, {{kNaN, kNaN, 0}, {-0.0L, 0.0L, 1}, {kInf, kInf, 1}});
    check_specials2("not_equal", LF_FN2(not_equal), t, {{kNaN, kNaN, 1}, {-0.0L, 0.0L, 0}, {1, kNaN, 1}});
    check_specials2("less", LF_FN2(less), t, {{kNaN, 1, 0}, {1, kNaN, 0}, {-kInf, kInf, 1}, {-0.0L, 0.0L, 0}});
    check_specials2("less_equal", LF_FN2(less_equal), t, {{kNaN, kNaN, 0}, {-0.0L, 0.0L, 1}});
    check_specials2("greater", LF_FN2(greater), t, {{kNaN, 1, 0}, {kInf, 1e30L, 1}});
    check_specials2("greater_equal", LF_FN2(greater_equal), t, {{kNaN, 1, 0}, {1, 1, 1}});
    check_specials2("logical_and", LF_FN2(logical_and), t, {{kNaN, 1, 1}, {-0.0L, 1, 0}, {kInf, 2, 1}});
    check_specials2("logical_or", LF_FN2(logical_or), t, {{kNaN, 0, 1}, {-0.0L, 0, 0}});
    check_specials2("logical_xor", LF_FN2(logical_xor), t, {{kNaN, kNaN, 0}, {-0.0L, kNaN, 1}});
  }
  // Overflow to inf in float32 (the op computes in float32, not wider).
  check_specials2("multiply", LF_FN2(multiply), DType::Float32, {{3e38L, 10, kInf}, {-3e38L, 10, -kInf}});
  check_specials2("add", LF_FN2(add), DType::Float32, {{3e38L, 3e38L, kInf}});
}

TEST(BinaryOps, SpecialValuesInteger) {
  for (DType t : {DType::Int32, DType::Int64}) {
    const ld lo = t == DType::Int32 ? ld(kI32Min) : ld(kI64Min), hi = t == DType::Int32 ? ld(kI32Max) : ld(kI64Max);
    check_specials2("add", LF_FN2(add), t, {{hi, 1, lo}, {lo, -1, hi}, {hi, hi, -2}});
    check_specials2("subtract", LF_FN2(subtract), t, {{lo, 1, hi}, {hi, -1, lo}, {0, lo, lo}});
    check_specials2("multiply", LF_FN2(multiply), t, {{hi, 2, -2}, {lo, -1, lo}, {lo, 2, 0}});
    // Floor division and modulo round toward -inf; division by zero gives 0; MIN // -1 wraps to MIN.
    check_specials2("floor_divide", LF_FN2(floor_divide), t,
                    {{7, 2, 3},
                     {-7, 2, -4},
                     {7, -2, -4},
                     {-7, -2, 3},
                     {5, 0, 0},
                     {0, 0, 0},
                     {lo, -1, lo},
                     {lo, 1, lo},
                     {hi, -1, -hi},
                     {-1, hi, -1}});
    check_specials2(
        "remainder", LF_FN2(remainder), t,
        {{7, 2, 1}, {-7, 2, 1}, {7, -2, -1}, {-7, -2, -1}, {5, 0, 0}, {lo, -1, 0}, {lo, hi, hi - 1}, {-1, hi, hi - 1}});
    // Integer powers wrap; negative exponents give 0 unless the base is +-1.
    check_specials2("power", LF_FN2(power), t,
                    {{2, -1, 0},
                     {1, -5, 1},
                     {-1, -3, -1},
                     {-1, -4, 1},
                     {0, 0, 1},
                     {0, 5, 0},
                     {-2, 3, -8},
                     {3, 0, 1},
                     {2, ld(t == DType::Int32 ? 31 : 63), lo},
                     {2, ld(t == DType::Int32 ? 32 : 64), 0},
                     {-1, 1000001, -1},
                     {0, -1, 0}});
    check_specials2("minimum", LF_FN2(minimum), t, {{lo, hi, lo}, {hi, lo, lo}});
    check_specials2("maximum", LF_FN2(maximum), t, {{lo, hi, hi}, {hi, lo, hi}});
    check_specials2("less", LF_FN2(less), t, {{lo, hi, 1}, {hi, lo, 0}});
    check_specials2("true_divide", LF_FN2(true_divide), t, {{1, 0, kInf}, {-1, 0, -kInf}, {0, 0, kNaN}, {1, 4, 0.25}});
  }
  // int64 compared with float64: both convert to float64 (NumPy's promotion), so 2^53 + 1 == 2^53.
  Array i = lf::asarray<i64>({(i64(1) << 53) + 1}), f = lf::asarray({9007199254740992.0});
  EXPECT_EQ(lf::equal(i, f).dtype(), DType::Bool);
  EXPECT_TRUE(lf::equal(i, f).get<bool>()[0]);
  // int32 + int64 -> int64, no wrap at 32 bits.
  Array a32 = lf::asarray<std::int32_t>({std::int32_t(kI32Max)}), a64 = lf::asarray<i64>({1});
  auto sum = lf::add(a32, a64);
  EXPECT_EQ(sum.dtype(), DType::Int64);
  EXPECT_EQ(sum.get<i64>()[0], kI32Max + 1);
}

TEST(BinaryOps, SpecialValuesBool) {
  // bool add is logical or, multiply logical and; floor_divide/remainder/power compute in int8.
  check_specials2("add", LF_FN2(add), DType::Bool, {{1, 1, 1}, {1, 0, 1}, {0, 0, 0}});
  check_specials2("multiply", LF_FN2(multiply), DType::Bool, {{1, 1, 1}, {1, 0, 0}, {0, 0, 0}});
  check_specials2("floor_divide", LF_FN2(floor_divide), DType::Bool, {{1, 1, 1}, {1, 0, 0}, {0, 1, 0}});
  check_specials2("power", LF_FN2(power), DType::Bool, {{0, 0, 1}, {0, 1, 0}, {1, 0, 1}});
  check_specials2("true_divide", LF_FN2(true_divide), DType::Bool, {{1, 0, kInf}, {0, 0, kNaN}, {1, 1, 1}});
}

TEST(BinaryOps, ResultDTypes) {
  Array i32 = lf::asarray<std::int32_t>({6, 7}), i64a = lf::asarray<i64>({2, 4}), f32 = lf::asarray({1.5f, 2.f}),
        b = lf::asarray({true, false});
  EXPECT_EQ(lf::true_divide(i32, i32).dtype(), DType::Float64);
  EXPECT_EQ((i32 / i32).get<double>()[1], 1.0);
  EXPECT_EQ((i32 + f32).dtype(), DType::Float64);
  EXPECT_EQ((i32 + i64a).dtype(), DType::Int64);
  EXPECT_EQ((b + i32).dtype(), DType::Int32);
  EXPECT_EQ((b + b).dtype(), DType::Bool);
  EXPECT_EQ((b / b).dtype(), DType::Float64);
  EXPECT_EQ(lf::floor_divide(b, b).dtype(), DType::Int8);
  EXPECT_EQ(lf::atan2(b, b).dtype(), DType::Float16);
  EXPECT_EQ(lf::atan2(i32, i32).dtype(), DType::Float64);
  EXPECT_EQ(lf::atan2(f32, b).dtype(), DType::Float32);
  for (auto z : {i32 < f32, i32 == i32, b != b, f32 >= i64a}) EXPECT_EQ(z.dtype(), DType::Bool);
  EXPECT_EQ(lf::logical_and(f32, i32).dtype(), DType::Bool);
  EXPECT_EQ((i32 % i32).get<std::int32_t>()[0], 0);
}

TEST(BinaryOps, Broadcasting) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  Domain d{};
  Host a = random_host(DType::Float32, 12, d, seed.rng), row = random_host(DType::Float32, 4, d, seed.rng),
       col = random_host(DType::Int32, 3, d, seed.rng), s = random_host(DType::Float64, 1, d, seed.rng);
  Array A = to_array(a, {3, 4}), R = to_array(row, {4}), C = to_array(col, {3, 1}), S = to_array(s, Shape{});
  struct Case {
    Array out;
    std::function<ld(std::size_t, std::size_t)> ref;
    DType type;
  };
  std::vector<Case> cases = {
      {A + R, [&](std::size_t i, std::size_t j) { return a.v[i * 4 + j] + row.v[j]; }, DType::Float32},
      {A * C, [&](std::size_t i, std::size_t j) { return ld(double(a.v[i * 4 + j]) * double(col.v[i])); },
       DType::Float64},
      {C - R, [&](std::size_t i, std::size_t j) { return ld(double(col.v[i]) - double(row.v[j])); }, DType::Float64},
      {lf::maximum(R, C), [&](std::size_t i, std::size_t j) { return nan_max(row.v[j], col.v[i]); }, DType::Float64},
      {lf::less(A, S), [&](std::size_t i, std::size_t j) { return ld(a.v[i * 4 + j] < s.v[0]); }, DType::Bool},
      {A / S, [&](std::size_t i, std::size_t j) { return ld(double(a.v[i * 4 + j]) / double(s.v[0])); },
       DType::Float64},
  };
  for (auto& c : cases) {
    EXPECT_EQ(c.out.shape(), (Shape{3, 4}));
    EXPECT_EQ(name(c.out.dtype()), name(c.type));
    Host h = read(c.out);
    ASSERT_EQ(h.size(), 12u);
    std::vector<ld> ref(12);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 4; ++j) ref[i * 4 + j] = c.ref(i, j);
    EXPECT_TRUE(matches(h, ref, Tol::Ulp, [](std::size_t e) { return "element " + std::to_string(e); }));
  }
}

// ---- weak C++ scalars -----------------------------------------------------------------------------------

TEST(WeakScalars, KeepTheArrayTypeAndValues) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  Domain d{};
  const std::size_t n = 1000;
  Host f32 = random_host(DType::Float32, n, d, seed.rng), f64 = random_host(DType::Float64, n, d, seed.rng),
       i32 = random_host(DType::Int32, n, d, seed.rng), i64h = random_host(DType::Int64, n, d, seed.rng),
       bh = random_host(DType::Bool, n, d, seed.rng);
  Array F32 = to_array(f32), F64 = to_array(f64), I32 = to_array(i32), I64 = to_array(i64h), B = to_array(bh);
  struct Case {
    const char* what;
    Array out;
    DType type;
    std::function<ld(std::size_t)> ref;
    Tol tol;
  };
  const float c01 = 0.1f; // 0.1 as float32: what `x_f32 + 0.1` adds (the scalar takes the array's type)
  std::vector<Case> cases = {
      {"f32 * 2.0", F32 * 2.0, DType::Float32, [&](std::size_t k) { return f32.v[k] * 2; }, Tol::Ulp},
      {"f32 + 0.1", F32 + 0.1, DType::Float32, [&](std::size_t k) { return f32.v[k] + ld(c01); }, Tol::Ulp},
      {"1.5 - f32", 1.5 - F32, DType::Float32, [&](std::size_t k) { return 1.5L - f32.v[k]; }, Tol::Ulp},
      {"f32 * 3", F32 * 3, DType::Float32, [&](std::size_t k) { return f32.v[k] * 3; }, Tol::Ulp},
      {"f32 / 2.5f", F32 / 2.5f, DType::Float32, [&](std::size_t k) { return f32.v[k] / 2.5L; }, Tol::Ulp},
      {"f64 - 0.1", F64 - 0.1, DType::Float64, [&](std::size_t k) { return f64.v[k] - ld(0.1); }, Tol::Ulp},
      {"i32 + 2.5", I32 + 2.5, DType::Float64, [&](std::size_t k) { return i32.v[k] + 2.5L; }, Tol::Ulp},
      {"i32 * 0.5f", I32 * 0.5f, DType::Float64, [&](std::size_t k) { return i32.v[k] * 0.5L; }, Tol::Ulp},
      {"i32 + 5", I32 + 5, DType::Int32, [&](std::size_t k) { return i32.v[k] + 5; }, Tol::Exact},
      {"i32 + 2147483647", I32 + 2147483647, DType::Int32,
       [&](std::size_t k) { return ld(wrap(u64(i64(i32.v[k])) + 2147483647u, 32)); }, Tol::Exact},
      {"7 - i32", 7 - I32, DType::Int32, [&](std::size_t k) { return 7 - i32.v[k]; }, Tol::Exact},
      {"i32 * true", I32 * true, DType::Int32, [&](std::size_t k) { return i32.v[k]; }, Tol::Exact},
      {"i64 + (1 << 40)", I64 + (i64(1) << 40), DType::Int64,
       [&](std::size_t k) { return i64h.v[k] + ld(i64(1) << 40); }, Tol::Exact},
      {"i64 * 2.0", I64 * 2.0, DType::Float64, [&](std::size_t k) { return i64h.v[k] * 2; }, Tol::Ulp},
      {"bool + 1", B + 1, DType::Int64, [&](std::size_t k) { return bh.v[k] + 1; }, Tol::Exact},
      {"bool * 2.5", B * 2.5, DType::Float64, [&](std::size_t k) { return bh.v[k] * 2.5L; }, Tol::Ulp},
      {"bool + true", B + true, DType::Bool, [](std::size_t) { return ld(1); }, Tol::Exact},
      {"bool * false", B * false, DType::Bool, [](std::size_t) { return ld(0); }, Tol::Exact},
      {"i32 < 2.5", I32 < 2.5, DType::Bool, [&](std::size_t k) { return ld(i32.v[k] < 2.5L); }, Tol::Exact},
      {"f32 > 0", F32 > 0, DType::Bool, [&](std::size_t k) { return ld(f32.v[k] > 0); }, Tol::Exact},
      {"f32 == 0.1", F32 == 0.1, DType::Bool, [&](std::size_t k) { return ld(f32.v[k] == ld(c01)); }, Tol::Exact},
      {"i32 // 7", lf::floor_divide(I32, 7), DType::Int32,
       [&](std::size_t k) { return ld(int_floor_divide(i64(i32.v[k]), 7, 32)); }, Tol::Exact},
      {"100 % i32", 100 % I32, DType::Int32, [&](std::size_t k) { return ld(int_remainder(100, i64(i32.v[k]), 32)); },
       Tol::Exact},
      {"pow(f32, 2)", lf::power(F32, 2), DType::Float32, [&](std::size_t k) { return f32.v[k] * f32.v[k]; },
       Tol::Approx},
      {"maximum(i32, 0)", lf::maximum(I32, 0), DType::Int32, [&](std::size_t k) { return std::max(i32.v[k], ld(0)); },
       Tol::Exact},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(name(c.out.dtype()), name(c.type));
    if (c.out.dtype() != c.type) continue;
    std::vector<ld> ref(n);
    for (std::size_t k = 0; k < n; ++k) ref[k] = c.ref(k);
    EXPECT_TRUE(matches(read(c.out), ref, c.tol, [](std::size_t e) { return "element " + std::to_string(e); }));
  }
  // Compound assignment follows the same rules.
  Array x = F32;
  x *= 2.0;
  EXPECT_EQ(x.dtype(), DType::Float32);
  Array y = I32;
  y += 1.5;
  EXPECT_EQ(y.dtype(), DType::Float64);
}

TEST(WeakScalars, OutOfRangeIntegerThrows) {
  Array i32 = lf::asarray<std::int32_t>({1, 2, 3});
  EXPECT_THROW(i32 + (1LL << 40), lf::DTypeError);
  EXPECT_THROW(i32 * 2147483648LL, lf::DTypeError);
  EXPECT_THROW((-2147483649LL) - i32, lf::DTypeError);
  EXPECT_NO_THROW(i32 + (-2147483647LL - 1));
  try {
    (void)(i32 + (1LL << 40));
  } catch (const lf::DTypeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("add"), std::string::npos) << m;
    EXPECT_NE(m.find("1099511627776"), std::string::npos) << m;
    EXPECT_NE(m.find("int32"), std::string::npos) << m;
  }
}

// ---- where, clip, astype --------------------------------------------------------------------------------

TEST(Where, EveryDTypePair) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  Domain d{};
  d.ilo = -kWide, d.ihi = kWide;
  Domain cd{};
  cd.zero_frac = 0.5;
  for (DType tc : {DType::Bool, DType::Int32, DType::Float32}) {
    for (DType ta : kTypes) {
      for (DType tb : kTypes) {
        for (const Shape& shape : {Shape{7}, Shape{70000}}) {
          SCOPED_TRACE("where(" + name(tc) + ", " + name(ta) + ", " + name(tb) + ") " + shape_text(shape));
          const std::size_t n = numel(shape);
          Host c = random_host(tc, n, cd, seed.rng), a = random_host(ta, n, d, seed.rng),
               b = random_host(tb, n, d, seed.rng);
          Array w = lf::where(to_array(c, shape), to_array(a, shape), to_array(b, shape));
          const DType t = promote(ta, tb);
          EXPECT_EQ(name(w.dtype()), name(t));
          EXPECT_EQ(w.shape(), shape);
          if (w.dtype() != t) continue;
          std::vector<ld> ref(n);
          for (std::size_t k = 0; k < n; ++k) ref[k] = to_compute(c.v[k] != 0 ? a.v[k] : b.v[k], t);
          EXPECT_TRUE(matches(read(w), ref, Tol::Exact, [&](std::size_t k) {
            return "(" + fmt(c.v[k]) + ", " + fmt(a.v[k]) + ", " + fmt(b.v[k]) + ")";
          }));
        }
      }
    }
  }
}

TEST(Where, BroadcastsAndWeakScalars) {
  Array cond = lf::asarray({{true}, {false}, {true}}); // (3, 1)
  Array a = lf::asarray<std::int32_t>({1, 2, 3, 4});   // (4,)
  Array b = lf::asarray({{-1.5f, -2.5f, -3.5f, -4.5f}, {5.f, 6.f, 7.f, 8.f}, {9.f, 10.f, 11.f, 12.f}});
  Array w = lf::where(cond, a, b);
  EXPECT_EQ(w.shape(), (Shape{3, 4}));
  EXPECT_EQ(w.dtype(), DType::Float64); // int32 with float32 -> float64
  auto h = w.get<double>();
  EXPECT_EQ(h(0, 1), 2.0);
  EXPECT_EQ(h(1, 2), 7.0);
  EXPECT_EQ(h(2, 3), 4.0);

  Array f32 = lf::asarray({1.0f, -2.0f}), i32 = lf::asarray<std::int32_t>({3, 4}), c = lf::asarray({true, false});
  EXPECT_EQ(lf::where(c, f32, 0.5).dtype(), DType::Float32);
  EXPECT_EQ(lf::where(c, 0.5, f32).dtype(), DType::Float32);
  EXPECT_EQ(lf::where(c, i32, 2.5).dtype(), DType::Float64);
  EXPECT_EQ(lf::where(c, i32, 7).dtype(), DType::Int32);
  EXPECT_EQ(lf::where(c, 1, 2.5).dtype(), DType::Float64);
  EXPECT_EQ(lf::where(c, 1, 2).dtype(), DType::Int64);
  EXPECT_EQ(lf::where(c, true, false).dtype(), DType::Bool);
  auto v = lf::where(c, i32, 2.5).get<double>();
  EXPECT_EQ(v[0], 3.0);
  EXPECT_EQ(v[1], 2.5);
  auto u = lf::where(c, 0.1, f32).get<float>();
  EXPECT_EQ(u[0], 0.1f);
  EXPECT_EQ(u[1], -2.0f);
  EXPECT_THROW(lf::where(c, i32, 1LL << 40), lf::DTypeError);
  // Special values pass through unchanged.
  Array s = lf::asarray({-0.0, std::numeric_limits<double>::quiet_NaN()});
  auto sv = lf::where(c, s, 1.0).get<double>();
  EXPECT_TRUE(std::signbit(sv[0]));
  EXPECT_EQ(sv[1], 1.0);
  auto sn = lf::where(c, 0.0, s).get<double>(); // cond true -> the scalar, false -> s
  EXPECT_EQ(sn[0], 0.0);
  EXPECT_FALSE(std::signbit(sn[0]));
  EXPECT_TRUE(std::isnan(sn[1]));
}

TEST(Clip, ArraysAndScalars) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  for (DType t : kTypes) {
    for (const Shape& shape : kShapes) {
      SCOPED_TRACE("clip " + name(t) + " " + shape_text(shape));
      const std::size_t n = numel(shape);
      Domain d{};
      Domain lo_d{}, span{};
      lo_d.flo = -50, lo_d.fhi = 0, lo_d.ilo = -50, lo_d.ihi = -1;
      span.flo = 1, span.fhi = 60, span.ilo = 1, span.ihi = 60;
      Host x = random_host(t, n, d, seed.rng), lo = random_host(t, n, lo_d, seed.rng),
           w = random_host(t, n, span, seed.rng);
      Host hi{t, std::vector<ld>(n)};
      for (std::size_t k = 0; k < n; ++k) hi.v[k] = t == DType::Bool ? 1 : round_to(t, lo.v[k] + w.v[k]);
      Array y = lf::clip(to_array(x, shape), to_array(lo, shape), to_array(hi, shape));
      EXPECT_EQ(name(y.dtype()), name(t));
      std::vector<ld> ref(n);
      for (std::size_t k = 0; k < n; ++k) ref[k] = nan_min(nan_max(x.v[k], lo.v[k]), hi.v[k]);
      EXPECT_TRUE(matches(read(y), ref, Tol::Exact, [&](std::size_t k) {
        return "(" + fmt(x.v[k]) + ", " + fmt(lo.v[k]) + ", " + fmt(hi.v[k]) + ")";
      }));
      if (t == DType::Bool) continue;
      // Scalar bounds are weak: integers keep the array type, floats keep float arrays' type.
      Array z = lf::clip(to_array(x, shape), -10, 20);
      EXPECT_EQ(name(z.dtype()), name(t));
      for (std::size_t k = 0; k < n; ++k) ref[k] = std::min(std::max(x.v[k], ld(-10)), ld(20));
      EXPECT_TRUE(matches(read(z), ref, Tol::Exact, [&](std::size_t k) { return fmt(x.v[k]); }));
      Array f = lf::clip(to_array(x, shape), -0.5, 0.25);
      EXPECT_EQ(name(f.dtype()), name(is_float(t) ? t : DType::Float64));
      for (std::size_t k = 0; k < n; ++k) ref[k] = std::min(std::max(x.v[k], ld(-0.5)), ld(0.25));
      EXPECT_TRUE(matches(read(f), ref, Tol::Exact, [&](std::size_t k) { return fmt(x.v[k]); }));
    }
  }
  // NaN propagates; clip of mixed types promotes.
  Array nan = lf::asarray({std::numeric_limits<float>::quiet_NaN(), 5.0f, -5.0f});
  auto h = lf::clip(nan, 0.0, 1.0).get<float>();
  EXPECT_TRUE(std::isnan(h[0]));
  EXPECT_EQ(h[1], 1.0f);
  EXPECT_EQ(h[2], 0.0f);
  auto hn = lf::clip(lf::asarray({1.0f, 2.0f}), lf::asarray({std::numeric_limits<float>::quiet_NaN(), 0.f}),
                     lf::asarray({3.0f, 1.0f}))
                .get<float>();
  EXPECT_TRUE(std::isnan(hn[0]));
  EXPECT_EQ(hn[1], 1.0f);
  EXPECT_EQ(lf::clip(lf::asarray<std::int32_t>({1}), lf::asarray({0.f}), lf::asarray<i64>({2})).dtype(),
            DType::Float64);
}

/// NumPy's astype (C casts), with float -> int saturating and NaN -> 0 (lazyfuse's documented choice).
ld cast_ref(ld x, DType to) {
  switch (to) {
  case DType::Bool: return x != 0 ? 1 : 0; // NaN is nonzero: true
  case DType::Int32:
  case DType::Int64: {
    const ld lo = to == DType::Int32 ? ld(kI32Min) : ld(kI64Min), hi = to == DType::Int32 ? ld(kI32Max) : ld(kI64Max);
    if (std::isnan(x)) return 0;
    if (x != std::trunc(x)) x = std::trunc(x);
    if (x <= lo) return lo;
    if (x >= hi) return hi;
    return to == DType::Int32 ? ld(wrap(u64(i64(x)), 32)) : x;
  }
  case DType::Float32: return ld(float(x));
  case DType::Float64: return ld(double(x));
  default: break; // a type this test does not generate
  }
  return x;
}

TEST(Astype, EveryDTypePair) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  for (DType from : kTypes) {
    for (DType to : kTypes) {
      for (const Shape& shape : kShapes) {
        SCOPED_TRACE("astype " + name(from) + " -> " + name(to) + " " + shape_text(shape));
        const std::size_t n = numel(shape);
        Domain d{};
        d.zero_frac = 0.1; // casts to bool need zeros
        d.ilo = -kWide, d.ihi = kWide;
        // Floats that fit the integer target (saturation is checked below); wide ones for float64 -> float32.
        d.flo = is_int(to) ? (to == DType::Int32 ? -2e9L : -9e18L) : -1e6L;
        d.fhi = -d.flo;
        Host x = random_host(from, n, d, seed.rng);
        Array y = to_array(x, shape).astype(to);
        EXPECT_EQ(name(y.dtype()), name(to));
        EXPECT_EQ(y.shape(), shape);
        if (y.dtype() != to) continue;
        std::vector<ld> ref(n);
        // An int64 that wraps into int32 is a C++ conversion (modular since C++20), as NumPy's.
        for (std::size_t k = 0; k < n; ++k)
          ref[k] = (is_int(from) && to == DType::Int32) ? ld(wrap(u64(i64(x.v[k])), 32)) : cast_ref(x.v[k], to);
        EXPECT_TRUE(matches(read(y), ref, Tol::Exact, [&](std::size_t k) { return fmt(x.v[k]); }));
        EXPECT_EQ(name(lf::astype(to_array(x, shape), to).dtype()), name(to));
      }
    }
  }
}

TEST(Astype, SpecialValues) {
  const ld nan = kNaN;
  for (DType from : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(name(from));
    Host x{from, {nan, kInf, -kInf, -0.0L, 0.5L, -0.99L, 1e20L, -1e20L, 3e9L, -3e9L, 2147483520.0L, 1e-30L}};
    for (DType to : kTypes) {
      SCOPED_TRACE("-> " + name(to));
      Host y = read(to_array(x).astype(to));
      ASSERT_EQ(y.size(), x.size());
      for (std::size_t k = 0; k < x.size(); ++k) {
        ld want = cast_ref(round_to(from, x.v[k]), to);
        bool ok = std::isnan(want) ? std::isnan(y.v[k]) : y.v[k] == want;
        EXPECT_TRUE(ok) << "astype(" << fmt(x.v[k]) << ") = " << fmt(y.v[k]) << ", expected " << fmt(want);
      }
    }
  }
  // Explicit rows for the saturating conversions.
  auto i32 = lf::asarray({std::numeric_limits<double>::quiet_NaN(), 1e300, -1e300, 2147483647.9, -2147483648.9})
                 .astype(DType::Int32)
                 .get<std::int32_t>();
  EXPECT_EQ(i32[0], 0);
  EXPECT_EQ(i32[1], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(i32[2], std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(i32[3], std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(i32[4], std::numeric_limits<std::int32_t>::min());
  auto i64s = lf::asarray({std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 9.3e18f})
                  .astype(DType::Int64)
                  .get<i64>();
  EXPECT_EQ(i64s[0], kI64Max);
  EXPECT_EQ(i64s[1], kI64Min);
  EXPECT_EQ(i64s[2], kI64Max);
  // Integer extremes to the other types.
  auto big = lf::asarray<i64>({kI64Max, kI64Min, (i64(1) << 32) + 5, -1});
  auto to32 = big.astype(DType::Int32).get<std::int32_t>();
  EXPECT_EQ(to32[0], -1);
  EXPECT_EQ(to32[1], 0);
  EXPECT_EQ(to32[2], 5);
  EXPECT_EQ(to32[3], -1);
  auto tof = big.astype(DType::Float32).get<float>();
  EXPECT_EQ(tof[0], 9223372036854775808.0f);
  EXPECT_EQ(tof[1], -9223372036854775808.0f);
  auto tob = big.astype(DType::Bool).get<bool>();
  EXPECT_TRUE(tob[0] && tob[1] && tob[2] && tob[3]);
  auto f64 = lf::asarray({1e300, -1e300, 1e-300, std::numeric_limits<double>::quiet_NaN()})
                 .astype(DType::Float32)
                 .get<float>();
  EXPECT_EQ(f64[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f64[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f64[2], 0.0f);
  EXPECT_TRUE(std::isnan(f64[3]));
}

// A constant array (lf::full) converts like any other: the same saturating float -> int rules, NaN -> 0.
TEST(Astype, ConstantArraysConvertLikeDataArrays) {
  const double values[] = {3e9,
                           -3e9,
                           1e19,
                           -1e19,
                           9.3e18,
                           2.7,
                           -2.7,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -0.0,
                           2147483647.5};
  for (DType from : {DType::Float32, DType::Float64}) {
    for (DType to : kTypes) {
      for (double v : values) {
        SCOPED_TRACE("full(" + fmt(v) + ", " + name(from) + ").astype(" + name(to) + ")");
        Host data{from, {ld(v), ld(v)}};
        Host a = read(lf::full({2}, v, from).astype(to)), b = read(to_array(data).astype(to));
        const ld want = cast_ref(round_to(from, ld(v)), to);
        for (const Host* h : {&a, &b}) {
          ASSERT_EQ(h->size(), 2u);
          for (ld got : h->v) {
            bool ok = std::isnan(want) ? std::isnan(got) : got == want;
            EXPECT_TRUE(ok) << (h == &a ? "constant" : "data") << " array: got " << fmt(got) << ", expected "
                            << fmt(want);
          }
        }
      }
    }
  }
}

// ---- errors ---------------------------------------------------------------------------------------------

template <class E, class F> void expect_error(F&& f, std::vector<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    std::string m = e.what();
    for (auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "message lacks \"" << p << "\": " << m;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

TEST(Errors, BoolArithmetic) {
  Array b34 = lf::asarray(std::vector<bool>(12, true), {3, 4}), b4 = lf::asarray(std::vector<bool>(4, false), {4});
  expect_error<lf::DTypeError>([&] { (void)lf::negative(b34); }, {"negative", "(3, 4)", "bool"});
  expect_error<lf::DTypeError>([&] { (void)(-b34); }, {"negative", "(3, 4)", "bool"});
  expect_error<lf::DTypeError>([&] { (void)lf::sign(b4); }, {"sign", "(4,)", "bool"});
  expect_error<lf::DTypeError>([&] { (void)lf::subtract(b34, b4); }, {"subtract", "(3, 4)", "(4,)", "bool"});
  expect_error<lf::DTypeError>([&] { (void)(b34 - b4); }, {"subtract", "(3, 4)", "(4,)", "bool"});
  expect_error<lf::DTypeError>([&] { (void)(b34 - true); }, {"subtract", "(3, 4)", "bool"});
  // The error comes when the op is recorded, not when it would run.
  Array x = lf::asarray({1.0f});
  EXPECT_NO_THROW((void)(b34 - x)); // bool with float32 promotes to float32: fine
}

// & | ^ ~ are NumPy's bitwise ops (bitwise on integers, logical on bool, an error on floats); && || ! stay logical.
TEST(Operators, BitwiseOnIntegersLogicalOnBool) {
  Array i = lf::asarray<std::int32_t>({12, -1, 0, 5}), j = lf::asarray<std::int32_t>({10, 6, 7, 5});
  Array b = lf::asarray({true, true, false, false}), c = lf::asarray({true, false, true, false});
  auto ints = [](const Array& a) {
    auto h = a.get<std::int32_t>();
    return std::vector<std::int32_t>(h.begin(), h.end());
  };
  auto bools = [](const Array& a) {
    auto h = a.get<bool>();
    return std::vector<bool>(h.begin(), h.end());
  };
  EXPECT_EQ((i & j).dtype(), DType::Int32);
  EXPECT_EQ(ints(i & j), (std::vector<std::int32_t>{8, 6, 0, 5}));
  EXPECT_EQ(ints(i | j), (std::vector<std::int32_t>{14, -1, 7, 5}));
  EXPECT_EQ(ints(i ^ j), (std::vector<std::int32_t>{6, -7, 7, 0}));
  EXPECT_EQ(ints(~i), (std::vector<std::int32_t>{-13, 0, -1, -6}));
  EXPECT_EQ(ints(i & 6), (std::vector<std::int32_t>{4, 6, 0, 4}));
  EXPECT_EQ(ints(3 ^ i), (std::vector<std::int32_t>{15, -4, 3, 6}));
  // bool: logical, and bool.
  EXPECT_EQ((b & c).dtype(), DType::Bool);
  EXPECT_EQ(bools(b & c), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(bools(b | c), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(bools(b ^ c), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(bools(~b), (std::vector<bool>{false, false, true, true}));
  // bool with an integer promotes to the integer.
  EXPECT_EQ((b & i).dtype(), DType::Int32);
  EXPECT_EQ(ints(b | j), (std::vector<std::int32_t>{11, 7, 7, 5}));
  // && || ! stay logical on integers: bool results.
  EXPECT_EQ((i && j).dtype(), DType::Bool);
  EXPECT_EQ(bools(i && j), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(bools(!i), (std::vector<bool>{false, false, true, false}));
  // Floats: a DTypeError naming the op and the types, as NumPy's TypeError.
  Array f = lf::asarray({1.5f, 2.0f});
  expect_error<lf::DTypeError>([&] { (void)(f & f); }, {"bitwise_and", "float32"});
  expect_error<lf::DTypeError>([&] { (void)(f | i(lf::slice(0, 2))); }, {"bitwise_or", "float32", "int32"});
  expect_error<lf::DTypeError>([&] { (void)(~f); }, {"invert", "float32"});
  expect_error<lf::DTypeError>([&] { (void)(i ^ 1.5); }, {"bitwise_xor", "int32"});
}

// Counts below 0 or from the width on (undefined in C++): NumPy's answers, 0 for left shifts and the sign for right
// shifts (values from NumPy 2.4; tests/test_numpy_types.cpp compares every pair of types with NumPy itself).
TEST(Operators, ShiftEdges) {
  auto i8 = [](std::vector<std::int8_t> v) { return lf::asarray(v); };
  auto u8 = [](std::vector<std::uint8_t> v) { return lf::asarray(v); };
  auto values = []<class T>(const Array& a, T) {
    auto h = a.get<T>();
    return std::vector<T>(h.begin(), h.end());
  };
  EXPECT_EQ(values(lf::left_shift(i8({1, 1, 1, -1, 5}), i8({7, 8, 100, -1, -1})), std::int8_t()),
            (std::vector<std::int8_t>{-128, 0, 0, 0, 0}));
  EXPECT_EQ(values(lf::right_shift(i8({-128, -1, 64, -5, 5}), i8({7, 8, 100, -1, -1})), std::int8_t()),
            (std::vector<std::int8_t>{-1, -1, 0, -1, 0}));
  EXPECT_EQ(values(lf::left_shift(u8({1, 1, 1}), u8({7, 8, 255})), std::uint8_t()),
            (std::vector<std::uint8_t>{128, 0, 0}));
  EXPECT_EQ(values(lf::right_shift(u8({255, 255}), u8({7, 8})), std::uint8_t()), (std::vector<std::uint8_t>{1, 0}));
  Array one = lf::asarray<std::int64_t>({1}), minus9 = lf::asarray<std::int64_t>({-9});
  EXPECT_EQ(lf::left_shift(one, 64).item<std::int64_t>(), 0);
  EXPECT_EQ(lf::right_shift(minus9, 64).item<std::int64_t>(), -1);
  EXPECT_EQ(lf::left_shift(lf::asarray({true}), true).dtype(), DType::Int8); // bool shifts compute in int8
  expect_error<lf::DTypeError>([&] { (void)lf::left_shift(lf::asarray({1.0}), 1); }, {"left_shift", "float64"});
}

TEST(Errors, BroadcastMismatch) {
  Array a = lf::zeros({3, 4}, DType::Float32) + 1, b = lf::ones({5}, DType::Float32);
  expect_error<lf::ShapeError>([&] { (void)(a + b); }, {"add", "(3, 4)", "(5,)"});
  expect_error<lf::ShapeError>([&] { (void)lf::less(a, b); }, {"less", "(3, 4)", "(5,)"});
  expect_error<lf::ShapeError>([&] { (void)lf::power(b, a); }, {"power", "(3, 4)", "(5,)"});
  expect_error<lf::ShapeError>([&] { (void)lf::where(a > 0, a, b); }, {"where", "(3, 4)", "(5,)"});
  expect_error<lf::ShapeError>([&] { (void)lf::clip(a, b, 2.0f * b); }, {"(3, 4)", "(5,)"});
  Array c = lf::ones({2, 1, 3}, DType::Int32), d = lf::ones({4, 2}, DType::Int64);
  expect_error<lf::ShapeError>([&] { (void)(c * d); }, {"multiply", "(2, 1, 3)", "(4, 2)"});
  EXPECT_EQ((c * lf::ones({4, 3}, DType::Int64)).shape(), (Shape{2, 4, 3}));
}

} // namespace
