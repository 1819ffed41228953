// How a C++ number in an expression is carried to the graph: its value and kind, NumPy 2's "weak" scalar. A user
// never names these; lazyfuse::Operand (array.hpp) builds one from a number, and the graph's type rules read it.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace lazyfuse::detail {

/// A weak scalar: its value plus its C++ kind; the array operand decides the result type.
struct WeakScalar {
  double f = 0;       // the value (exact for floats; rounded for huge integers); complex: the real part
  std::int64_t i = 0; // the value of a bool or integer that fits int64
  ScalarKind kind = ScalarKind::Float;
  bool beyond_int64 = false; // an unsigned integer above INT64_MAX: no integer array type holds it
  double im = 0;             // a complex number's imaginary part
};

/// std::complex<float> or std::complex<double>.
template <class S> inline constexpr bool is_std_complex = false;
template <class R> inline constexpr bool is_std_complex<std::complex<R>> = std::is_floating_point_v<R>;

template <class S>
requires is_std_complex<S> WeakScalar weak(S s) {
  return {double(s.real()), std::int64_t(0), ScalarKind::Complex, false, double(s.imag())};
}

template <class S>
requires std::is_arithmetic_v<S> WeakScalar weak(S s) {
  if constexpr (std::is_same_v<S, bool>)
    return {double(s), std::int64_t(s), ScalarKind::Bool, false};
  else if constexpr (std::is_integral_v<S> && std::is_unsigned_v<S>)
    return {double(s), std::int64_t(s), ScalarKind::Int, std::uint64_t(s) > std::uint64_t(INT64_MAX)};
  else if constexpr (std::is_integral_v<S>)
    return {double(s), std::int64_t(s), ScalarKind::Int, false};
  else
    return {double(s), std::int64_t(0), ScalarKind::Float, false};
}

} // namespace lazyfuse::detail
