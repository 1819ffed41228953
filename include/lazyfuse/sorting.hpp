// Sorting, as NumPy's sort and argsort with kind="stable".
//
// `axis`: the axis sorted along (negative counts from the end; the default is the last); none sorts the array
// flattened in C order, giving a 1-D result. NumPy's order: NaNs last whatever their sign bit, -0.0 equal to +0.0
// (equal elements keep their order: the sort is stable), complex numbers by real part, then imaginary part, a NaN part
// after every number without one. An axis out of range is an IndexError. The input is materialized first; the result is
// an array like any other (lazy consumers read it).
#pragma once

#include <lazyfuse/array.hpp>

#include <optional>

namespace lazyfuse {

/// The elements sorted along `axis` (none: of the flattened array), stably.
Array sort(const Array& a, std::optional<int> axis = -1);
/// The indices (int64) that sort `a` along `axis` stably: take_along_axis(a, argsort(a, axis), axis) == sort(a, axis).
Array argsort(const Array& a, std::optional<int> axis = -1);

/// The q-th quantile along `axis` (none: of the flattened array), NumPy's default "linear" method: with the line
/// sorted and v = q * (n - 1), the elements at floor(v) and the next one interpolated by the fraction g of v as NumPy's
/// _lerp does (a + (b - a) * g, or b - (b - a) * (1 - g) where g >= 0.5). NaN where the line holds a NaN, and for an
/// empty line. Result type: the input's for floating types, float64 for bool and integers; complex inputs are a
/// DTypeError, q outside [0, 1] a ValueError. `keepdims` keeps the axis as size 1. Built on sort.
Array quantile(const Array& a, double q, std::optional<int> axis = std::nullopt, bool keepdims = false);
/// quantile(a, q / 100, ...): q in [0, 100].
Array percentile(const Array& a, double q, std::optional<int> axis = std::nullopt, bool keepdims = false);
/// quantile(a, 0.5, ...).
Array median(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);

} // namespace lazyfuse
