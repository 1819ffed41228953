// Reductions, as NumPy's: over all axes (the default), one axis or several, with keepdims.
//
// The reductions that are rows of the op table (lazyfuse/ops.def: sum ... nanmax) are declared here by hand and
// defined from the table in api/Reductions.cpp, whose definitions do not compile for a row without its declaration
// here. The others are built from them and from elementwise ops.
//
// Result types as NumPy's: sums and products of bool and signed integers give int64, of unsigned integers uint64,
// of floats the same float type; min/max keep the type; any/all give bool; arg reductions an int64 index; mean,
// var and their kin give float64 for bool and integer inputs. Float sums add in a tree order (error ~1e-7 log n in
// float32). Reductions without an identity (min, max, argmin, argmax, nanmin, nanmax) of an empty selection are an
// Error, as in NumPy. `keepdims` keeps reduced axes as size 1.
#pragma once

#include <lazyfuse/array.hpp>

#include <initializer_list>
#include <optional>
#include <vector>

namespace lazyfuse {

/// The axes of a reduction: all of them (the default), one (`1`, `-1`) or several (`{0, 2}`).
struct Axes {
  Axes() = default;
  Axes(int axis) : list(std::vector<int>{axis}) {}
  Axes(std::initializer_list<int> axes) : list(std::vector<int>(axes)) {}
  Axes(std::vector<int> axes) : list(std::move(axes)) {}
  std::optional<std::vector<int>> list; ///< nullopt: every axis
};

// ---- the op table's reductions --------------------------------------------------------------------------------
/// The sum (integers wrap on overflow in their result type).
Array sum(const Array& a, Axes axes = {}, bool keepdims = false);
/// The product.
Array prod(const Array& a, Axes axes = {}, bool keepdims = false);
/// The smallest element; NaN when any is NaN.
Array min(const Array& a, Axes axes = {}, bool keepdims = false);
/// The largest element; NaN when any is NaN.
Array max(const Array& a, Axes axes = {}, bool keepdims = false);
/// The index of the first smallest element along `axis`, or in the flattened array; the first NaN wins.
Array argmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
/// The index of the first largest element along `axis`, or in the flattened array; the first NaN wins.
Array argmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
/// True when any element is nonzero.
Array any(const Array& a, Axes axes = {}, bool keepdims = false);
/// True when every element is nonzero.
Array all(const Array& a, Axes axes = {}, bool keepdims = false);
/// The smallest non-NaN element; NaN for an all-NaN selection (NumPy also warns).
Array nanmin(const Array& a, Axes axes = {}, bool keepdims = false);
/// The largest non-NaN element; NaN for an all-NaN selection (NumPy also warns).
Array nanmax(const Array& a, Axes axes = {}, bool keepdims = false);

// ---- built from them ------------------------------------------------------------------------------------------
/// min(a, axes, keepdims).
Array amin(const Array& a, Axes axes = {}, bool keepdims = false);
/// max(a, axes, keepdims).
Array amax(const Array& a, Axes axes = {}, bool keepdims = false);
/// The number of nonzero elements (int64).
Array count_nonzero(const Array& a, Axes axes = {}, bool keepdims = false);
/// The arithmetic mean; NaN for an empty selection.
Array mean(const Array& a, Axes axes = {}, bool keepdims = false);
/// Variance with `ddof` delta degrees of freedom, as the mean of squared deviations from the mean (two passes).
Array var(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
/// NumPy's `std` (a C++ function cannot be called std inside namespace lazyfuse): sqrt(var(a, axes, ddof)).
Array stddev(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
/// log(sum(exp(a))) computed stably: max + log(sum(exp(a - max))).
Array logsumexp(const Array& a, Axes axes = {}, bool keepdims = false);

// NumPy's NaN-ignoring reductions; on bool and integer arrays (which hold no NaN) they are sum, prod, mean, var and
// stddev. nanmean, nanvar and nanstd reduce the non-NaN elements and are NaN where there is none (nanvar and nanstd
// also where count - ddof <= 0). Result types: those of sum, prod, mean, var and stddev.
/// The sum with NaN taken as 0.
Array nansum(const Array& a, Axes axes = {}, bool keepdims = false);
/// The product with NaN taken as 1.
Array nanprod(const Array& a, Axes axes = {}, bool keepdims = false);
/// The mean of the non-NaN elements.
Array nanmean(const Array& a, Axes axes = {}, bool keepdims = false);
/// The variance of the non-NaN elements.
Array nanvar(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
/// NumPy's nanstd: sqrt(nanvar(a, axes, ddof)).
Array nanstd(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);

// ---- comparing whole arrays -----------------------------------------------------------------------------------
/// |a - b| <= atol + rtol * |b| elementwise (infinities equal when of the same sign; NaN equal only with equal_nan).
Array isclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// all(isclose(a, b)), materialized.
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// Same shape and all elements equal, materialized.
bool array_equal(const Array& a, const Array& b);

} // namespace lazyfuse
