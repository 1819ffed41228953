// Divisions a kernel does faster than its plain instruction, with the same results.
//
// Values divided by a kernel-wide scalar (codegen/ValueDivisors.h): which kernels take multiply-shift constants,
// that their text compiles, and that the kernel's arithmetic (mirrored here on the host with the host's constants)
// gives NumPy's floor division and remainder for every sign and edge value. The GPU runs the kernels themselves in
// tests/test_cuda_numerics.cpp.
//
// Float divisions inside a loop by a value from before it (codegen/LoopInvariantDivisors.h): which kernels divide by
// a reciprocal, that their text compiles, that the kernel's arithmetic (mirrored on the host) is the IEEE quotient,
// and, on the GPU, that the kernels give it for every kind of dividend and divisor.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/KernelAbi.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"
#include "fusion/Partition.h"
#include "tests/gpu_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace lazyfuse;
using lazyfuse::detail::graph_node;

namespace {

codegen::LoweredKernel lower_one(const Array& result) {
  const auto plans = fusion::partition({graph_node(result)}, {});
  EXPECT_EQ(plans.size(), 1u);
  return codegen::lower(plans.at(0));
}

TEST(ValueDivisors, ScalarDivisorsOfSignedIntegersGetConstantsAndCompile) {
  const Array i64 = arange(1000), i32 = arange(1000).astype(DType::Int32);
  struct Case {
    const char* name;
    Array result;
    std::size_t divisors;
  };
  const std::vector<Case> cases = {
      {"int64 remainder by a scalar", (i64 * std::int64_t(1103515245)) % std::int64_t(1000003), 1},
      {"int32 floor division by a scalar", floor_divide(i32, 7), 1},
      {"three divisions by scalars", floor_divide(i64, 9) + i64 % 9 + i64 % 11, 3},
      {"int64 remainder by an array", i64 % (i64 + 1), 0},
      {"uint64 remainder by a scalar", i64.astype(DType::UInt64) % 7, 0},
      {"float32 remainder by a scalar", i64.astype(DType::Float32) % 7.5f, 0},
      {"int16 remainder by a scalar", i64.astype(DType::Int16) % 7, 0},
  };
  codegen::CompileOptions opt;
  opt.arch = 90;
  opt.dump_source_on_error = true;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const codegen::LoweredKernel k = lower_one(c.result);
    EXPECT_EQ(k.ir.value_divisors.size(), c.divisors);
    const std::string text = codegen::render_cuda(k.ir);
    EXPECT_EQ(text.find("_by<") != std::string::npos, c.divisors > 0);
    EXPECT_NO_THROW(codegen::compile_cuda(text, k.ir.name, opt));
  }
}

// NumPy's floor division and remainder of signed integers (0 for a divisor of 0; MIN // -1 wraps to MIN).
template <class T> std::pair<T, T> numpy_divmod(T a, T b) {
  if (b == 0) return {0, 0};
  const __int128 wa = a, wb = b;
  __int128 q = wa / wb, r = wa % wb;
  if (r != 0 && ((r < 0) != (wb < 0))) {
    q -= 1;
    r += wb;
  }
  return {T(static_cast<std::make_unsigned_t<T>>(q)), T(r)}; // the quotient wraps as the kernel's does
}

// The kernel's lf_floor_divide_by and lf_remainder_by (codegen/CudaPrinter.cpp), with the host's constants.
template <class T> std::pair<T, T> kernel_divmod(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (b == 0) return {0, 0};
  const U ua = a < 0 ? U(0) - U(a) : U(a), ub = b < 0 ? U(0) - U(b) : U(b);
  U q;
  if constexpr (sizeof(T) == 8) {
    const codegen::FastDivisor64 d = codegen::fast_value_divisor64(b);
    q = U((U((unsigned __int128)ua * d.mul >> 64) + ua) >> d.shift);
  } else {
    const codegen::FastDivisor32 d = codegen::fast_value_divisor32(b);
    q = U((U(std::uint64_t(ua) * d.mul >> 32) + ua) >> d.shift);
  }
  const U r = U(ua - q * ub);
  const bool negative = (a < 0) != (b < 0);
  const T quotient = negative ? T(U(U(0) - q - U(ua != U(q * ub)))) : T(q);
  const U m = r != 0 && negative ? U(ub - r) : r;
  return {quotient, b < 0 ? T(U(U(0) - m)) : T(m)};
}

template <class T> void check_every_sign_and_edge(std::uint64_t seed) {
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<T> values = {lo, T(lo + 1), T(lo / 2), T(-1000003), -7,      -3,        -2,        -1, 0,
                           1,  2,         3,         7,           1000003, T(hi / 2), T(hi - 1), hi};
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<T> any(lo, hi);
  std::uniform_int_distribution<T> small(-100000, 100000);
  for (int k = 0; k < 200; ++k) values.push_back(any(g));
  for (int k = 0; k < 50; ++k) values.push_back(small(g));
  for (T a : values)
    for (T b : values) {
      const auto want = numpy_divmod(a, b), got = kernel_divmod(a, b);
      ASSERT_EQ(got.first, want.first) << a << " // " << b;
      ASSERT_EQ(got.second, want.second) << a << " % " << b;
    }
}

TEST(ValueDivisors, KernelArithmeticIsNumPysForEverySignAndEdge) {
  check_every_sign_and_edge<std::int64_t>(1);
  check_every_sign_and_edge<std::int32_t>(2);
}

template <class T> void check_on_the_device(std::uint64_t seed) {
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<T> values = {lo, T(lo + 1), T(-1000003), -7, -1, 0, 1, 7, 1000003, T(hi - 1), hi};
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<T> any(lo, hi);
  std::uniform_int_distribution<T> small(-100000, 100000);
  for (int k = 0; k < 3000; ++k) values.push_back(k % 2 ? any(g) : small(g));
  const DType type = sizeof(T) == 8 ? DType::Int64 : DType::Int32;
  const Array x = asarray(values, {std::int64_t(values.size())}).eval();
  ASSERT_EQ(x.dtype(), type);
  const std::vector<T> divisors = {lo, T(lo + 1), T(-1000003), -7, -2, -1, 0, 1, 2, 3, 7, 1000003, any(g), hi};
  for (T b : divisors) {
    Array q = floor_divide(x, b), r = x % b;
    ASSERT_EQ(q.dtype(), type);
    ASSERT_EQ(r.dtype(), type);
    eval(q, r);
    const auto hq = q.get<T>(), hr = r.get<T>();
    for (std::size_t k = 0; k < values.size(); ++k) {
      const auto want = numpy_divmod(values[k], b);
      ASSERT_EQ(hq[k], want.first) << values[k] << " // " << b;
      ASSERT_EQ(hr[k], want.second) << values[k] << " % " << b;
    }
  }
}

TEST(ValueDivisors, KernelsOnTheDeviceGiveNumPysFloorDivisionAndRemainder) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  check_on_the_device<std::int64_t>(3);
  check_on_the_device<std::int32_t>(4);
}

TEST(LoopInvariantDivisors, DivisionsByARowsValueGetItsReciprocalAndCompile) {
  const Array x = random::uniform(-1, 1, {300, 256}, DType::Float32).eval();
  const Array y = random::uniform(1, 2, {300, 256}, DType::Float32).eval();
  const Array x64 = x.astype(DType::Float64).eval(), xh = x.astype(DType::Float16).eval();
  const Array column = random::uniform(1, 2, {300}, DType::Float32).eval();
  struct Case {
    const char* name;
    Array result;
    std::size_t divisions; // marked divisions
  };
  const std::vector<Case> cases = {
      {"layer norm", (x - mean(x, 1, true)) / sqrt(var(x, 1, 0, true) + 1e-5f), 1},
      {"softmax", exp(x - max(x, 1, true)) / sum(exp(x - max(x, 1, true)), 1, true), 1},
      {"x over its row sum", x / sum(y, 1, true), 1},
      {"x over its row max", x / max(y, 1, true), 1},
      {"float64 layer norm", (x64 - mean(x64, 1, true)) / sqrt(var(x64, 1, 0, true) + 1e-5), 1},
      {"x over its column sum (a column kernel)", x / sum(y, 0, true), 0},
      {"sum of x over a scalar", sum(x / 3.0f, 1), 1},
      {"float16 over its row sum (computed in float32, rounded per op)", xh / sum(xh, 1, true), 0},
      {"sum of x over y (the divisor varies)", sum(x / y, 1), 0},
      {"x over y, elementwise", x / y, 0},
      {"x over a row vector, elementwise", x / column.reshape({300, 1}), 0},
  };
  codegen::CompileOptions opt;
  opt.arch = 90;
  opt.dump_source_on_error = true;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const codegen::LoweredKernel k = lower_one(c.result);
    const auto& marked = k.ir.loop_invariant_divisions;
    EXPECT_EQ(std::size_t(std::count(marked.begin(), marked.end(), true)), c.divisions) << codegen::to_string(k.ir);
    const std::string text = codegen::render_cuda(k.ir);
    EXPECT_EQ(text.find("lf_div_by_reciprocal(") != std::string::npos, c.divisions > 0) << text;
    EXPECT_NO_THROW(codegen::compile_cuda(text, k.ir.name, opt));
  }
}

// The kernel's lf_div_reciprocal and lf_div_by_reciprocal (codegen/CudaPrinter.cpp). The project compiles with
// -ffp-contract=off, so each product and sum rounds as the kernel's does.
template <class T> constexpr T kBandLow = sizeof(T) == 4 ? T(0x1p-100) : T(0x1p-900);
template <class T> constexpr T kBandHigh = sizeof(T) == 4 ? T(0x1p100) : T(0x1p900);
template <class T> T kernel_reciprocal(T d) {
  const T r = T(1) / d, a = std::fabs(r);
  return a >= kBandLow<T> && a <= kBandHigh<T> ? r : std::numeric_limits<T>::quiet_NaN();
}
template <class T> T kernel_quotient(T x, T d, T r) {
  const T q0 = x * r;
  const T q1 = std::fma(std::fma(-q0, d, x), r, q0);
  const T q2 = std::fma(std::fma(-q1, d, x), r, q1);
  const T ax = std::fabs(x), aq = std::fabs(q0);
  return ax >= kBandLow<T> && ax <= kBandHigh<T> && aq >= kBandLow<T> && aq <= kBandHigh<T> ? q2 : x / d;
}

template <class T> using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// Dividends and divisors of every kind: any bit pattern, significands of every kind at exponents across the band and
// past its ends, the significands next to 1 and 2, and the specials.
template <class T> std::vector<T> division_operands(std::mt19937_64& g, std::size_t count) {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0),
                      -T(0),
                      L::denorm_min(),
                      L::min(),
                      L::max(),
                      L::infinity(),
                      -L::infinity(),
                      L::quiet_NaN(),
                      T(1),
                      std::nextafter(T(1), T(2)),
                      std::nextafter(T(2), T(1)),
                      T(3),
                      T(0.1),
                      kBandLow<T>,
                      kBandHigh<T>,
                      std::nextafter(kBandLow<T>, T(0)),
                      std::nextafter(kBandHigh<T>, L::max())};
  const int span = sizeof(T) == 4 ? 130 : 1030;
  std::uniform_int_distribution<int> exponent(-span, span);
  while (v.size() < count) {
    const Bits<T> bits = Bits<T>(g());
    if (v.size() % 2) {
      v.push_back(std::bit_cast<T>(bits));
    } else {
      const T significand = std::bit_cast<T>(Bits<T>((bits >> 12) | std::bit_cast<Bits<T>>(T(1))));
      v.push_back((g() & 1 ? -1 : 1) * std::ldexp(significand, exponent(g)));
    }
  }
  return v;
}

template <class T> bool same_quotient(T got, T want) {
  return std::isnan(want) ? std::isnan(got) : std::bit_cast<Bits<T>>(got) == std::bit_cast<Bits<T>>(want);
}

template <class T> void check_quotients(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  const std::vector<T> operands = division_operands<T>(g, 1500);
  for (T d : operands) {
    const T r = kernel_reciprocal(d);
    for (T x : operands) ASSERT_TRUE(same_quotient(kernel_quotient(x, d, r), x / d)) << x << " / " << d;
  }
  // Every significand step of 2^-12 for divisors next to 1 and 2, where the reciprocal's rounding is tightest.
  for (T d : {T(1), std::nextafter(T(1), T(2)), std::nextafter(T(2), T(1)), T(1.5), T(1.9999)}) {
    const T r = kernel_reciprocal(d);
    for (int k = 0; k < (1 << 12); ++k) {
      const T x = T(1) + T(k) / T(1 << 12) + std::numeric_limits<T>::epsilon() * T(k % 7);
      ASSERT_TRUE(same_quotient(kernel_quotient(x, d, r), x / d)) << x << " / " << d;
    }
  }
}

TEST(LoopInvariantDivisors, KernelArithmeticIsTheIeeeQuotient) {
  check_quotients<float>(5);
  check_quotients<double>(6);
}

// x / max(d, axis 1): every row of d holds its divisor, so each row of x is divided by one value from the row's
// reduction, in the loop after it: the divided-by-reciprocal path on the device.
template <class T> void check_rows_on_the_device(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  const std::vector<T> divisors = division_operands<T>(g, 300); // rows enough for one kernel (kSplitBelowOuter)
  const std::int64_t rows = std::int64_t(divisors.size()), columns = 1024;
  const std::vector<T> dividends = division_operands<T>(g, std::size_t(rows * columns));
  std::vector<T> d(std::size_t(rows * columns));
  for (std::int64_t k = 0; k < rows * columns; ++k) d[std::size_t(k)] = divisors[std::size_t(k / columns)];
  const Array x = asarray(dividends, {rows, columns}).eval(), dd = asarray(d, {rows, columns}).eval();
  const Array q = x / max(dd, 1, true);
  const codegen::LoweredKernel k = lower_one(q);
  ASSERT_EQ(std::count(k.ir.loop_invariant_divisions.begin(), k.ir.loop_invariant_divisions.end(), true), 1);
  const auto got = q.get<T>();
  for (std::int64_t k = 0; k < rows * columns; ++k) {
    const T x_k = dividends[std::size_t(k)], d_k = divisors[std::size_t(k / columns)];
    ASSERT_TRUE(same_quotient(got[std::size_t(k)], x_k / d_k))
        << x_k << " / " << d_k << " gave " << got[std::size_t(k)];
  }
}

TEST(LoopInvariantDivisors, KernelsOnTheDeviceGiveTheIeeeQuotient) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  check_rows_on_the_device<float>(7);
  check_rows_on_the_device<double>(8);
}

} // namespace
