// NumPy's numpy.linalg functions.
#pragma once

#include <lazyfuse/reductions.hpp>

#include <optional>

namespace lazyfuse::linalg {

/// NumPy's linalg.norm: with no axes, the 2-norm of the flattened array. With one axis (or a vector): ord 1, 2,
/// inf, -inf, 0 or any p. With two axes: the Frobenius norm (ord nullopt or "fro"). keepdims as in reductions.
Array norm(const Array& a, std::optional<double> ord = std::nullopt, Axes axes = {}, bool keepdims = false);
/// The Frobenius norm for ord "fro"; any other string is an Error.
Array norm(const Array& a, const char* ord, Axes axes = {}, bool keepdims = false);
/// `norm(x, 1)`, `norm(x, 0)`: a number is an order, never the string overload's null pointer.
template <Scalar S> Array norm(const Array& a, S ord, Axes axes = {}, bool keepdims = false) {
  return norm(a, std::optional<double>(double(ord)), std::move(axes), keepdims);
}

} // namespace lazyfuse::linalg
