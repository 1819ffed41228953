// How a C++ number in an expression is carried to the graph: its value and kind, NumPy 2's "weak" scalar. A user
// never names these; lazyfuse::Operand (array.hpp) builds one from a number, and the graph's type rules read it.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <cstdint>
#include <type_traits>

namespace lazyfuse::detail {

/// A weak scalar: its value plus its C++ kind; the array operand decides the result type.
struct WeakScalar {
  double f = 0;       // the value (exact for floats; rounded for huge integers)
  std::int64_t i = 0; // the value of a bool or integer that fits int64
  ScalarKind kind = ScalarKind::Float;
  bool beyond_int64 = false; // an unsigned integer above INT64_MAX: no integer array type holds it
};

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
