// Divisions of values by a kernel-wide scalar (codegen/ValueDivisors.h): which kernels take multiply-shift constants,
// that their text compiles, and that the kernel's arithmetic (mirrored here on the host with the host's constants)
// gives NumPy's floor division and remainder for every sign and edge value. The GPU runs the kernels themselves in
// tests/test_cuda_numerics.cpp.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/KernelAbi.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"
#include "fusion/Partition.h"
#include "tests/gpu_test.h"

#include <gtest/gtest.h>

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
  const auto udiv = [](U n, T divisor) -> U {
    if constexpr (sizeof(T) == 8) {
      const codegen::FastDivisor64 d = codegen::fast_value_divisor64(divisor);
      return U((U((unsigned __int128)n * d.mul >> 64) + n) >> d.shift);
    } else {
      const codegen::FastDivisor32 d = codegen::fast_value_divisor32(divisor);
      return U((U(std::uint64_t(n) * d.mul >> 32) + n) >> d.shift);
    }
  };
  if (a >= 0 && b > 0) {
    const U q = udiv(U(a), b);
    return {T(q), T(U(U(a) - q * U(b)))};
  }
  if (b == 0) return {0, 0};
  const U ua = a < 0 ? U(0) - U(a) : U(a), ub = b < 0 ? U(0) - U(b) : U(b);
  const U q = udiv(ua, b);
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

} // namespace
