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
#include <utility>
#include <vector>

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

// ---- searching, deduplication and counting --------------------------------------------------------------------
// Built on the stable sort above (so, on the GPU, on its host sort for now) and on the index writes of indexing.hpp
// (whose positions are read on the host): NumPy's results, with NumPy's orders (NaNs last, -0.0 equal to +0.0).

/// NumPy's searchsorted: for each element of v, the index in the sorted 1-D `a` where it would be inserted to keep
/// a sorted: before equal elements (`side` "left") or after them ("right"). int64, of v's shape. `a` is not checked
/// for order (as in NumPy). ValueError for an `a` that is not 1-D or another side.
Array searchsorted(const Array& a, const Array& v, const std::string& side = "left");
/// NumPy's digitize: the index of the bin each element of x falls in, for monotonically increasing or decreasing
/// `bins` (read on the host to tell which; ValueError otherwise); `right` says which side of a bin is closed.
Array digitize(const Array& x, const Array& bins, bool right = false);
/// NumPy's isin: whether each element of `element` equals some element of `test_elements` (a NaN never does), of
/// element's shape; `invert` negates the result.
Array isin(const Array& element, const Array& test_elements, bool invert = false);

/// NumPy 2's unique_all: the sorted distinct elements of the flattened array (each NaN distinct, last, as NumPy's
/// unique_all and the array API have it), the index of each one's first occurrence, for every element of the input
/// the index of its value (of the input's shape), and how often each value occurs.
struct UniqueAll {
  Array values, indices, inverse_indices, counts;
};
UniqueAll unique_all(const Array& a);
/// NumPy's unique(a): the sorted distinct elements of the flattened array, the NaNs collapsed into one (last).
Array unique(const Array& a);
/// unique_all's values and counts (NumPy's unique_counts).
struct UniqueCounts {
  Array values, counts;
};
UniqueCounts unique_counts(const Array& a);
/// unique_all's values and inverse indices (NumPy's unique_inverse).
struct UniqueInverse {
  Array values, inverse_indices;
};
UniqueInverse unique_inverse(const Array& a);

/// NumPy's bincount: for the non-negative integers of the 1-D x, how often each value occurs (int64), or the sum of
/// their `weights` (float64; duplicates summed in at().add's fixed order), over max(x) + 1 bins and at least
/// `minlength`. ValueError for a negative value, an x that is not 1-D or weights of another length.
Array bincount(const Array& x, const std::optional<Array>& weights = std::nullopt, std::int64_t minlength = 0);
/// bincount over a number of bins fixed in advance, and lazy: element b of the int64 result of shape {length} is the
/// number of elements of the 1-D bool or integer x equal to b. Elements outside [0, length) are not counted
/// (TensorFlow's `maxlength`; JAX's `length`, without its clipping of negatives to 0), so no value of x is read on
/// the host and the count stays in the graph: NumPy's bincount reads x's min and max first. On the GPU a count of its
/// own (runtime/Counting.h), exact and the same on every run. ValueError for an x that is not 1-D or a negative length.
Array bincount_fixed(const Array& x, std::int64_t length);

/// NumPy's lexsort: the indices (int64) that sort along `axis` by the last key, ties broken by the one before it, and
/// so on (keys[0] decides last); stable. The keys share one shape. ValueError for no keys or shapes that differ.
Array lexsort(const std::vector<Array>& keys, int axis = -1);

/// NumPy's histogram with `bins` equal bins over [range.first, range.second] (default: the data's minimum and
/// maximum, read on the host; a point range widens by 0.5 each way): the counts (int64; sums of `weights` in their
/// type when given; with `density`, float64 counts divided by the bins' widths and the total) and the bins + 1
/// edges (linspace in the type NumPy picks: float32 data keeps float32 edges, integers take float64). A value goes
/// to the bin NumPy's own computation picks ((x - first) / (last - first) * bins, then corrected against the edges;
/// the last bin is closed); values outside the range are left out. ValueError for bins < 1, a range with first >
/// last, or data whose range is not finite; DTypeError for complex data.
struct Histogram {
  Array hist, bin_edges;
};
Histogram histogram(const Array& a, std::int64_t bins = 10,
                    std::optional<std::pair<double, double>> range = std::nullopt,
                    const std::optional<Array>& weights = std::nullopt, bool density = false);
/// NumPy's histogram over the given edges `bins` (1-D, non-decreasing; returned as bin_edges): bin k holds
/// bins[k] <= x < bins[k + 1], the last bin also its right edge; values outside and NaNs are left out. ValueError
/// for edges that are not 1-D or decrease.
Histogram histogram(const Array& a, const Array& bins, const std::optional<Array>& weights = std::nullopt,
                    bool density = false);
/// NumPy's histogram with equal bins whose count NumPy's estimator `bins` picks from the data inside the range:
/// "auto", "fd", "doane", "scott", "stone", "rice", "sturges" or "sqrt" (widths computed in double; NumPy computes
/// some steps in float32 for float32 data, so there the count can differ by one where the range over the width is
/// within rounding of an integer). No weights (NumPy refuses them here). ValueError for another name.
Histogram histogram(const Array& a, const std::string& bins,
                    std::optional<std::pair<double, double>> range = std::nullopt, bool density = false);
/// NumPy's histogram_bin_edges: the edges the matching histogram overload uses.
Array histogram_bin_edges(const Array& a, std::int64_t bins = 10,
                          std::optional<std::pair<double, double>> range = std::nullopt);
Array histogram_bin_edges(const Array& a, const std::string& bins,
                          std::optional<std::pair<double, double>> range = std::nullopt);

/// NumPy's partition / argpartition: the kth element of each line along `axis` in its sorted place, the smaller ones
/// before it and the others after. Here the whole line is sorted (a stable sort satisfies that contract; NumPy's
/// order inside the parts is unspecified). ValueError for a kth outside [-n, n) of a non-empty array.
Array partition(const Array& a, std::int64_t kth, int axis = -1);
Array argpartition(const Array& a, std::int64_t kth, int axis = -1);

} // namespace lazyfuse
