// The op semantics of graph/OpMath.inc compiled for the host: the CPU backend calls these, and the CUDA printer
// pastes the same text into every kernel.
#pragma once

#include "graph/DTypeVisit.h"

#include <lazyfuse/dtype.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <math.h>

// Outside namespace lazyfuse on purpose: unqualified sinf, floor, pow... must find the C library, not
// lazyfuse::floor(const Array&).
namespace lazyfuse_opmath {
#define LF_HD inline
#define LF_INF_F __builtin_huge_valf()
#define LF_INF_D __builtin_huge_val()
#define LF_F32_BITS(x) __builtin_bit_cast(unsigned int, (float)(x))
#define LF_F32_FROM_BITS(u) __builtin_bit_cast(float, (unsigned int)(u))
#define LF_F64_BITS(x) __builtin_bit_cast(unsigned long long, (double)(x))
#define LF_F64_FROM_BITS(u) __builtin_bit_cast(double, (unsigned long long)(u))
#include "graph/OpMathTypes.inc"
// (before the op semantics, which use these names)
#include "graph/OpMath.inc"
#undef LF_HD
#undef LF_INF_F
#undef LF_INF_D
#undef LF_F32_BITS
#undef LF_F32_FROM_BITS
#undef LF_F64_BITS
#undef LF_F64_FROM_BITS
} // namespace lazyfuse_opmath

namespace lazyfuse::graph {

/// The type graph/OpMath.inc computes an element of host type T in: T itself, except for the half and complex
/// types, whose op-semantics structs have the host type's layout (the CPU backend reads columns of one as the
/// other).
template <class T> struct OpMathType { using type = T; };
template <> struct OpMathType<float16> { using type = lazyfuse_opmath::lf_f16; };
template <> struct OpMathType<bfloat16> { using type = lazyfuse_opmath::lf_bf16; };
template <> struct OpMathType<std::complex<float>> { using type = lazyfuse_opmath::lf_c64; };
template <> struct OpMathType<std::complex<double>> { using type = lazyfuse_opmath::lf_c128; };
template <class T> using opmath_t = typename OpMathType<T>::type;

template <class T>
inline constexpr bool is_opmath_complex =
    std::is_same_v<T, lazyfuse_opmath::lf_c64> || std::is_same_v<T, lazyfuse_opmath::lf_c128>;

/// The DType of op-semantics type T (the inverse of opmath_t).
template <class T> constexpr DType opmath_dtype() {
  if constexpr (std::is_same_v<T, lazyfuse_opmath::lf_f16>)
    return DType::Float16;
  else if constexpr (std::is_same_v<T, lazyfuse_opmath::lf_bf16>)
    return DType::BFloat16;
  else if constexpr (std::is_same_v<T, lazyfuse_opmath::lf_c64>)
    return DType::Complex64;
  else if constexpr (std::is_same_v<T, lazyfuse_opmath::lf_c128>)
    return DType::Complex128;
  else
    return dtype_of<T>();
}

/// A scalar (a Fill's value, a kernel parameter) as op-semantics type T: `f + im i` for float and complex types
/// (converted as astype converts a double), `i` (wrapped to the width) for integer and bool types.
template <class T> T opmath_value(double f, std::int64_t i, double im) {
  if constexpr (is_opmath_complex<T>)
    return T{decltype(T::re)(f), decltype(T::re)(im)};
  else if constexpr (std::is_integral_v<T>)
    return T(i);
  else
    return lazyfuse_opmath::lf_cast<T, double>(f);
}

/// visit_dtype (graph/DTypeVisit.h) with the op-semantics type: calls `f.template operator()<T>()` with T =
/// opmath_t<host type of t>.
template <class F> decltype(auto) visit_opmath_type(DType t, F&& f) {
  return visit_dtype(t, [&]<class Host>() -> decltype(auto) {
    using T = opmath_t<Host>;
    // (Columns and buffers are allocated for T's alignment: the memory pools align to 256 bytes.)
    static_assert(sizeof(T) == sizeof(Host), "an op-semantics type must have its host type's layout");
    return f.template operator()<T>();
  });
}

} // namespace lazyfuse::graph
