// NumPy 2's type promotion for lazyfuse's five dtypes: promote_types (the documented table) and promote_weak (NEP 50
// weak C++ scalars), checked as functions and through the result dtypes (and values) of real array ops.
#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::ScalarKind;

namespace {

constexpr DType kTypes[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
constexpr DType B = DType::Bool, I32 = DType::Int32, I64 = DType::Int64, F32 = DType::Float32, F64 = DType::Float64;

// numpy.promote_types over bool, int32, int64, float32, float64 (NumPy 2 docs; symmetric).
constexpr DType kPromote[5][5] = {
    /*            bool  int32 int64 float32 float64 */
    /* bool    */ {B, I32, I64, F32, F64},
    /* int32   */ {I32, I32, I64, F64, F64},
    /* int64   */ {I64, I64, I64, F64, F64},
    /* float32 */ {F32, F64, F64, F32, F64},
    /* float64 */ {F64, F64, F64, F64, F64},
};
DType promoted(DType a, DType b) {
  return kPromote[int(a)][int(b)];
}

// NEP 50: an array of type t with a Python bool / int / float scalar (lazyfuse: C++ bool / integer / floating).
constexpr ScalarKind kKinds[] = {ScalarKind::Bool, ScalarKind::Int, ScalarKind::Float};
constexpr DType kWeak[5][3] = {
    /*            bool  int  float */
    /* bool    */ {B, I64, F64},
    /* int32   */ {I32, I32, F64},
    /* int64   */ {I64, I64, F64},
    /* float32 */ {F32, F32, F32},
    /* float64 */ {F64, F64, F64},
};
DType weak(DType t, ScalarKind k) {
  return kWeak[int(t)][int(k)];
}

std::string name(DType t) {
  return std::string(lf::dtype_name(t));
}

struct Seed {
  std::uint64_t value;
  std::mt19937_64 rng;
  Seed() : value(pick()), rng(value) {}
  static std::uint64_t pick() {
    if (const char* s = std::getenv("LAZYFUSE_TEST_SEED")) return std::strtoull(s, nullptr, 10);
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ std::uint64_t(rd());
  }
  std::string trace() const {
    return "seed " + std::to_string(value) + " (replay: LAZYFUSE_TEST_SEED=" + std::to_string(value) + ")";
  }
};

/// Random nonzero multiples of 1/8 in [-100, 100] (integers for integer types, 0/1 for bool): exact in every type,
/// so sums and products of two of them are exact in the promoted type.
std::vector<double> random_values(DType t, std::size_t n, std::mt19937_64& rng) {
  std::vector<double> v(n);
  for (auto& x : v) {
    if (t == DType::Bool) {
      x = double(rng() & 1);
      continue;
    }
    do {
      std::int64_t k = std::int64_t(rng() % 1601) - 800; // [-800, 800]
      x = (t == DType::Int32 || t == DType::Int64) ? double(k / 8) : double(k) / 8;
    } while (x == 0);
  }
  return v;
}

template <class T> Array make_typed(const std::vector<double>& v) {
  std::unique_ptr<T[]> buf(new T[v.size()]);
  for (std::size_t k = 0; k < v.size(); ++k) buf[k] = T(v[k]);
  return lf::asarray<T>(std::span<const T>(buf.get(), v.size()), lf::Shape{std::int64_t(v.size())});
}
Array make(DType t, const std::vector<double>& v) {
  switch (t) {
  case DType::Bool: return make_typed<bool>(v);
  case DType::Int32: return make_typed<std::int32_t>(v);
  case DType::Int64: return make_typed<std::int64_t>(v);
  case DType::Float32: return make_typed<float>(v);
  case DType::Float64: return make_typed<double>(v);
  default: break; // a type this test does not generate
  }
  return {};
}

/// The values of an array read in its own dtype, as doubles (exact for the small values used here).
template <class T> std::vector<double> read_typed(const Array& a) {
  auto h = a.get<T>();
  return std::vector<double>(h.begin(), h.end());
}
std::vector<double> read(const Array& a) {
  switch (a.dtype()) {
  case DType::Bool: return read_typed<bool>(a);
  case DType::Int32: return read_typed<std::int32_t>(a);
  case DType::Int64: return read_typed<std::int64_t>(a);
  case DType::Float32: return read_typed<float>(a);
  case DType::Float64: return read_typed<double>(a);
  default: break; // a type this test does not generate
  }
  return {};
}

// ---- promote_types ----------------------------------------------------------------------------------------

TEST(PromoteTypes, MatchesNumPyTable) {
  for (DType a : kTypes)
    for (DType b : kTypes) {
      EXPECT_EQ(name(lf::promote_types(a, b)), name(promoted(a, b))) << name(a) << " with " << name(b);
      EXPECT_EQ(lf::promote_types(a, b), lf::promote_types(b, a)) << "not symmetric: " << name(a) << ", " << name(b);
    }
  // The cases NumPy users trip over.
  EXPECT_EQ(lf::promote_types(I32, F32), F64);
  EXPECT_EQ(lf::promote_types(I64, F32), F64);
  EXPECT_EQ(lf::promote_types(B, I32), I32);
  EXPECT_EQ(lf::promote_types(B, F32), F32);
  EXPECT_EQ(lf::promote_types(I32, I64), I64);
}

TEST(PromoteTypes, IsAssociativeAndIdempotent) {
  for (DType a : kTypes) {
    EXPECT_EQ(lf::promote_types(a, a), a);
    for (DType b : kTypes)
      for (DType c : kTypes)
        EXPECT_EQ(lf::promote_types(lf::promote_types(a, b), c), lf::promote_types(a, lf::promote_types(b, c)))
            << name(a) << ", " << name(b) << ", " << name(c);
  }
}

TEST(PromoteTypes, ThroughArrayOps) {
  Seed seed;
  SCOPED_TRACE(seed.trace());
  const std::size_t n = 257;
  std::vector<double> cond(n);
  for (auto& c : cond) c = double(seed.rng() & 1);
  Array c = make(B, cond);
  for (DType ta : kTypes) {
    for (DType tb : kTypes) {
      SCOPED_TRACE(name(ta) + " with " + name(tb));
      const DType t = promoted(ta, tb);
      auto va = random_values(ta, n, seed.rng), vb = random_values(tb, n, seed.rng);
      Array a = make(ta, va), b = make(tb, vb);
      // Ops that return the promoted type.
      EXPECT_EQ(name((a + b).dtype()), name(t));
      EXPECT_EQ(name((a * b).dtype()), name(t));
      EXPECT_EQ(name(lf::minimum(a, b).dtype()), name(t));
      EXPECT_EQ(name(lf::maximum(a, b).dtype()), name(t));
      EXPECT_EQ(name(lf::where(c, a, b).dtype()), name(t));
      EXPECT_EQ(name(lf::concatenate({a, b}).dtype()), name(t));
      EXPECT_EQ(name(lf::stack({a, b}).dtype()), name(t));
      // Ops whose result type follows from the promoted type.
      const DType div = (t == B || t == I32 || t == I64) ? F64 : t;
      EXPECT_EQ(name((a / b).dtype()), name(div));
      // atan2 of booleans is NumPy's float16.
      EXPECT_EQ(name(lf::atan2(a, b).dtype()), name(t == B ? DType::Float16 : div));
      EXPECT_EQ(name(lf::floor_divide(a, b).dtype()), name(t == B ? DType::Int8 : t));
      EXPECT_EQ(name(lf::power(a, b).dtype()), name(t == B ? DType::Int8 : t));
      EXPECT_EQ(name((a < b).dtype()), "bool");
      EXPECT_EQ(name((a == b).dtype()), "bool");
      EXPECT_EQ(name(lf::logical_xor(a, b).dtype()), "bool");
      if (t == B)
        EXPECT_THROW(a - b, lf::DTypeError);
      else
        EXPECT_EQ(name((a - b).dtype()), name(t));

      // The values are computed in the promoted type (all exact here).
      auto sum = read(a + b), prod = read(a * b), w = read(lf::where(c, a, b)), cat = read(lf::concatenate({a, b}));
      ASSERT_EQ(sum.size(), n);
      ASSERT_EQ(cat.size(), 2 * n);
      for (std::size_t k = 0; k < n; ++k) {
        const double s = t == B ? double(va[k] != 0 || vb[k] != 0) : va[k] + vb[k];
        const double p = va[k] * vb[k];
        EXPECT_EQ(sum[k], s) << "add at " << k << ": " << va[k] << " + " << vb[k];
        EXPECT_EQ(prod[k], p) << "multiply at " << k << ": " << va[k] << " * " << vb[k];
        EXPECT_EQ(w[k], cond[k] != 0 ? va[k] : vb[k]) << "where at " << k;
        EXPECT_EQ(cat[k], va[k]) << "concatenate at " << k;
        EXPECT_EQ(cat[n + k], vb[k]) << "concatenate at " << n + k;
      }
    }
  }
}

TEST(PromoteTypes, MixedIntegerAndFloatUsesFloat64Values) {
  // int32 + float32 is float64 in NumPy: the float32 operand is widened, so no float32 rounding happens.
  Array i = lf::asarray<std::int32_t>({16777217}), f = lf::asarray({0.5f});
  auto s = (i + f);
  ASSERT_EQ(s.dtype(), F64);
  EXPECT_EQ(s.get<double>()[0], 16777217.5);
  // int64 + int32 keeps all 64 bits.
  Array big = lf::asarray<std::int64_t>({std::int64_t(1) << 40}), small = lf::asarray<std::int32_t>({3});
  EXPECT_EQ((big * small).get<std::int64_t>()[0], std::int64_t(3) << 40);
  // bool + float32 stays float32.
  auto bf = lf::asarray({true}) + lf::asarray({0.1f});
  ASSERT_EQ(bf.dtype(), F32);
  EXPECT_EQ(bf.get<float>()[0], 1.0f + 0.1f);
}

// ---- promote_weak -----------------------------------------------------------------------------------------

TEST(PromoteWeak, MatchesNEP50Table) {
  for (DType t : kTypes)
    for (ScalarKind k : kKinds)
      EXPECT_EQ(name(lf::promote_weak(t, k)), name(weak(t, k))) << name(t) << " with scalar kind " << int(k);
}

/// The result type of `array op scalar` and `scalar op array` for several ops, against the NEP 50 table.
template <class S> void check_weak_scalar(DType t, S s, ScalarKind kind, const char* what) {
  SCOPED_TRACE(name(t) + " array with " + what);
  std::mt19937_64 rng(1);
  Array a = make(t, random_values(t, 5, rng));
  Array c = lf::asarray({true, false, true, false, true});
  const DType w = weak(t, kind);
  EXPECT_EQ(name((a + s).dtype()), name(w));
  EXPECT_EQ(name((s + a).dtype()), name(w));
  EXPECT_EQ(name((a * s).dtype()), name(w));
  EXPECT_EQ(name((s * a).dtype()), name(w));
  EXPECT_EQ(name(lf::maximum(a, s).dtype()), name(w));
  EXPECT_EQ(name(lf::minimum(s, a).dtype()), name(w));
  EXPECT_EQ(name(lf::where(c, a, s).dtype()), name(w));
  EXPECT_EQ(name(lf::where(c, s, a).dtype()), name(w));
  EXPECT_EQ(name((a < s).dtype()), "bool");
  const DType div = (w == B || w == I32 || w == I64) ? F64 : w;
  EXPECT_EQ(name((a / s).dtype()), name(div));
  if (w == B)
    EXPECT_THROW(a - s, lf::DTypeError);
  else
    EXPECT_EQ(name((a - s).dtype()), name(w));
}

TEST(PromoteWeak, ThroughArrayOpsForEveryCxxScalarType) {
  for (DType t : kTypes) {
    check_weak_scalar(t, true, ScalarKind::Bool, "bool");
    check_weak_scalar(t, false, ScalarKind::Bool, "bool false");
    check_weak_scalar(t, 3, ScalarKind::Int, "int");
    check_weak_scalar(t, short(3), ScalarKind::Int, "short");
    check_weak_scalar(t, std::int8_t(3), ScalarKind::Int, "int8_t");
    check_weak_scalar(t, 3u, ScalarKind::Int, "unsigned");
    check_weak_scalar(t, 3LL, ScalarKind::Int, "long long");
    check_weak_scalar(t, std::uint64_t(3), ScalarKind::Int, "uint64_t");
    check_weak_scalar(t, 2.5, ScalarKind::Float, "double");
    check_weak_scalar(t, 2.5f, ScalarKind::Float, "float");
    check_weak_scalar(t, 2.5L, ScalarKind::Float, "long double");
  }
}

TEST(PromoteWeak, ScalarValuesTakeTheResultType) {
  // float32 * 2.0 stays float32; the scalar is rounded to float32 first (NumPy 2: x + 0.1 adds float32(0.1)).
  Array f = lf::asarray({1.0f, 3.0f});
  auto y = (f + 0.1).get<float>();
  EXPECT_EQ(y[0], 1.0f + 0.1f);
  EXPECT_EQ(y[1], 3.0f + 0.1f);
  // An integer scalar with a float32 array becomes float32 (16777217 rounds to 16777216).
  auto z = (lf::asarray({0.0f}) + 16777217).get<float>();
  EXPECT_EQ(z[0], 16777216.0f);
  // int32 + 2.5 -> float64 2.5 exactly; int32 + 5 wraps in int32.
  Array i = lf::asarray<std::int32_t>({1, 2147483647});
  auto d = (i + 2.5).get<double>();
  EXPECT_EQ(d[0], 3.5);
  EXPECT_EQ(d[1], 2147483649.5);
  auto w = (i + 5).get<std::int32_t>();
  EXPECT_EQ(w[0], 6);
  EXPECT_EQ(w[1], -2147483644);
  // bool + 1 -> int64; bool + true -> bool (logical or); bool * 2.5 -> float64.
  Array b = lf::asarray({true, false});
  auto bi = (b + 1).get<std::int64_t>();
  EXPECT_EQ(bi[0], 2);
  EXPECT_EQ(bi[1], 1);
  auto bb = (b + true).get<bool>();
  EXPECT_TRUE(bb[0] && bb[1]);
  auto bf = (b * 2.5).get<double>();
  EXPECT_EQ(bf[0], 2.5);
  EXPECT_EQ(bf[1], 0.0);
  // int64 with an integer beyond int32.
  auto l = (lf::asarray<std::int64_t>({1}) + (std::int64_t(1) << 40)).get<std::int64_t>();
  EXPECT_EQ(l[0], (std::int64_t(1) << 40) + 1);
}

TEST(PromoteWeak, TwoScalarsInWherePromoteBetweenThemselves) {
  Array c = lf::asarray({true, false});
  EXPECT_EQ(name(lf::where(c, 1, 2).dtype()), "int64");
  EXPECT_EQ(name(lf::where(c, 1, 2.5).dtype()), "float64");
  EXPECT_EQ(name(lf::where(c, 1.0f, 2.0f).dtype()), "float64");
  EXPECT_EQ(name(lf::where(c, true, 2).dtype()), "int64");
  EXPECT_EQ(name(lf::where(c, true, false).dtype()), "bool");
  auto v = lf::where(c, 1, 2.5).get<double>();
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], 2.5);
}

TEST(PromoteWeak, IntegerScalarOutOfRangeThrows) {
  Array i32 = lf::asarray<std::int32_t>({1, 2});
  EXPECT_THROW(i32 + (1LL << 40), lf::DTypeError);
  EXPECT_THROW(i32 + 2147483648LL, lf::DTypeError);
  EXPECT_THROW(i32 - (-2147483649LL), lf::DTypeError);
  EXPECT_THROW(lf::where(lf::asarray({true, false}), i32, 1LL << 40), lf::DTypeError);
  EXPECT_NO_THROW(i32 + 2147483647);
  EXPECT_NO_THROW(i32 + (-2147483647 - 1));
  // Still int32 with an in-range scalar of a wider C++ type.
  EXPECT_EQ((i32 + 7LL).dtype(), I32);
}

// A C++ unsigned scalar whose value does not fit int64 must not be reinterpreted as a negative number: NumPy 2
// raises OverflowError for int64 arrays (and for bool arrays, which promote to int64), and converts the value to
// the array's float type for float arrays.
TEST(PromoteWeak, UnsignedScalarBeyondInt64) {
  const std::uint64_t big = std::numeric_limits<std::uint64_t>::max(); // 18446744073709551615
  const std::uint64_t two63 = std::uint64_t(1) << 63;
  Array i64 = lf::asarray<std::int64_t>({1, 2}), b = lf::asarray({true, false});
  EXPECT_THROW(i64 + big, lf::DTypeError) << "int64 + 2^64-1 computed silently (as int64 + -1?)";
  EXPECT_THROW(i64 + two63, lf::DTypeError) << "int64 + 2^63 computed silently";
  EXPECT_THROW(b + big, lf::DTypeError) << "bool + 2^64-1 computed silently";
  Array f32 = lf::asarray({1.0f, 2.0f});
  auto y = (f32 + big).get<float>();
  EXPECT_EQ(y[0], 18446744073709551616.0f) << "float32 + 2^64-1";
  auto z = (lf::asarray({1.0}) * two63).get<double>();
  EXPECT_EQ(z[0], 9223372036854775808.0) << "float64 * 2^63";
}

} // namespace
