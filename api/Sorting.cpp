// Sorting (sorting.hpp): one graph::NodeKind::Sort node each, run by the runtime (runtime/Sorting.h).
#include <lazyfuse/creation.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/indexing.hpp>
#include <lazyfuse/manipulation.hpp>
#include <lazyfuse/reductions.hpp>
#include <lazyfuse/scans.hpp>
#include <lazyfuse/sorting.hpp>

#include "api/ApiAccess.h"
#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Count.h"
#include "graph/Sort.h"
#include "runtime/Counting.h"
#include "runtime/Selection.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

namespace lazyfuse {

namespace {

Array sorted(graph::SortResult result, const char* name, const Array& a, std::optional<int> axis) {
  detail::require_valid(a, name);
  graph::NodePtr x = detail::graph_node(a);
  if (!axis) x = graph::reshape(x, {x->size()});
  return detail::wrap_node(graph::make_sort(x, axis.value_or(0), result, name));
}

} // namespace

Array sort(const Array& a, std::optional<int> axis) {
  return sorted(graph::SortResult::Values, "sort", a, axis);
}
Array argsort(const Array& a, std::optional<int> axis) {
  return sorted(graph::SortResult::Indices, "argsort", a, axis);
}

namespace {

Array quantile_of(const char* name, const Array& a, double q, std::optional<int> axis, bool keepdims) {
  detail::require_valid(a, name);
  if (is_complex(a.dtype()))
    throw DTypeError(std::string(name) + ": a complex array has no order of quantiles (got " +
                     std::string(dtype_name(a.dtype())) + ")");
  if (!(q >= 0 && q <= 1))
    throw ValueError(std::string(name) + ": quantiles must be in the range [0, 1] (percentiles in [0, 100]); got " +
                     std::to_string(q));
  const Array x = axis ? a : a.reshape({-1});
  const int ax = graph::normalize_axis(name, axis.value_or(0), x.ndim());
  const DType t = is_inexact(a.dtype()) ? a.dtype() : DType::Float64;
  const std::int64_t n = x.shape()[std::size_t(ax)];
  Shape out_shape = x.shape();
  out_shape.erase(out_shape.begin() + ax);
  Array r;
  if (n == 0) {
    r = full(out_shape, std::nan(""), t);
  } else {
    const Array s = sort(x, ax);
    auto at = [&](std::int64_t k) {
      std::vector<Index> index(std::size_t(ax), Index(slice(none, none)));
      index.push_back(Index(k));
      return s.index_with(index).astype(t);
    };
    const double v = q * double(n - 1);
    const std::int64_t lo = std::min<std::int64_t>(std::int64_t(std::floor(v)), n - 1);
    const std::int64_t hi = std::min<std::int64_t>(lo + 1, n - 1);
    const double g = v - double(lo);
    const Array below = at(lo), above = at(hi), diff = above - below;
    r = g >= 0.5 ? above - diff * (1 - g) : below + diff * g;
    if (is_inexact(a.dtype())) r = where(isnan(at(n - 1)), std::nan(""), r); // NaNs sort last
  }
  if (!axis) return keepdims ? r.reshape(Shape(std::size_t(a.ndim()), 1)) : r;
  return keepdims ? expand_dims(r, ax) : r;
}

} // namespace

Array quantile(const Array& a, double q, std::optional<int> axis, bool keepdims) {
  return quantile_of("quantile", a, q, axis, keepdims);
}
Array percentile(const Array& a, double q, std::optional<int> axis, bool keepdims) {
  return quantile_of("percentile", a, q / 100, axis, keepdims);
}
Array median(const Array& a, std::optional<int> axis, bool keepdims) {
  return quantile_of("median", a, 0.5, axis, keepdims);
}

// ---- searching, deduplication and counting --------------------------------------------------------------------

namespace {

std::string described(const char* name, const Array& a) {
  return graph::describe(name, *detail::graph_node(a));
}

} // namespace

Array searchsorted(const Array& a, const Array& v, const std::string& side) {
  detail::require_valid(a, "searchsorted");
  detail::require_valid(v, "searchsorted", "the values");
  if (a.ndim() != 1) throw ValueError("searchsorted: a must be 1-dimensional, got " + described("a", a));
  if (side != "left" && side != "right")
    throw ValueError("searchsorted: side must be 'left' or 'right', got '" + side + "'");
  const std::int64_t na = a.size(), nv = v.size();
  if (nv == 0 || na == 0) return zeros(v.shape(), DType::Int64);
  // One stable sort of a and v together: the values first for "left" (before equal elements of a), after a for
  // "right". An element of v lands after exactly the elements of a that go before it; counted by a running sum over
  // the sorted order, then written back to v's places through the permutation.
  const bool left = side == "left";
  const Array order = argsort(left ? concatenate({v.ravel(), a}) : concatenate({a, v.ravel()}), std::nullopt);
  const Array from_a = left ? order >= nv : order < na;
  const Array a_before = cumsum(from_a.astype(DType::Int64)) - from_a.astype(DType::Int64);
  const Array at_merged = put(zeros({na + nv}, DType::Int64), order, a_before);
  return (left ? at_merged(slice(0, nv)) : at_merged(slice(na, none))).reshape(v.shape());
}

Array digitize(const Array& x, const Array& bins, bool right) {
  detail::require_valid(x, "digitize");
  detail::require_valid(bins, "digitize", "the bins");
  if (bins.ndim() != 1) throw ValueError("digitize: bins must be 1-dimensional, got " + described("bins", bins));
  if (is_complex(x.dtype()) || is_complex(bins.dtype())) throw DTypeError("digitize: x may not be complex");
  const std::int64_t n = bins.size();
  bool increasing = true, decreasing = true;
  if (n > 1) {
    const Array steps = diff(bins.astype(DType::Float64));
    increasing = all(steps >= 0.0).item<bool>();
    decreasing = all(steps <= 0.0).item<bool>();
  }
  if (!increasing && !decreasing) throw ValueError("digitize: bins must be monotonically increasing or decreasing");
  const char* side = right ? "left" : "right";
  if (increasing) return searchsorted(bins, x, side);
  return n - searchsorted(bins(slice(none, none, -1)), x, side);
}

Array isin(const Array& element, const Array& test_elements, bool invert) {
  detail::require_valid(element, "isin");
  detail::require_valid(test_elements, "isin", "the test elements");
  const std::int64_t n = test_elements.size();
  if (n == 0 || element.size() == 0) return full(element.shape(), invert ? 1.0 : 0.0, DType::Bool);
  const Array s = sort(test_elements, std::nullopt);
  const Array at = searchsorted(s, element, "left");
  const Array found = logical_and(at < n, take(s, minimum(at, n - 1)) == element);
  return invert ? logical_not(found) : found;
}

namespace {

// Whether each element of the sorted 1-D `s` starts a value: it differs from the one before (a NaN from every value,
// itself included); with equal_nan, the NaNs (sorted last) are one value.
Array value_starts(const Array& s, bool equal_nan) {
  const Array later = s(slice(1, none)), earlier = s(slice(none, -1));
  const Array differs = equal_nan
                            ? logical_and(later != earlier, logical_not(logical_and(isnan(later), isnan(earlier))))
                            : later != earlier;
  return concatenate({full({1}, 1.0, DType::Bool), differs});
}

// NumPy's unique with return_index, return_inverse and return_counts: NaNs one value (`equal_nan`, unique's rule) or
// each its own (the unique_* functions, the array API's rule).
UniqueAll unique_of(const Array& a, bool equal_nan) {
  detail::require_valid(a, "unique");
  const Array flat = a.ravel();
  const std::int64_t n = flat.size();
  if (n == 0) {
    const Array none_found = zeros({0}, DType::Int64);
    return {flat, none_found, zeros(a.shape(), DType::Int64), none_found};
  }
  const Array order = argsort(flat, std::nullopt); // stable: the first of equal elements comes first
  const Array s = take(flat, order);
  const Array starts = value_starts(s, equal_nan);
  const Array first = flatnonzero(starts); // positions in the sorted order (read on the host)
  const Array group = cumsum(starts.astype(DType::Int64)) - 1;
  return {take(s, first), take(order, first), put(zeros({n}, DType::Int64), order, group).reshape(a.shape()),
          diff(first, 1, -1, std::nullopt, full({}, double(n), DType::Int64))};
}

} // namespace

UniqueAll unique_all(const Array& a) {
  return unique_of(a, false);
}
Array unique(const Array& a) {
  // The values alone need no positions: a sort (not the stable argsort and its gather), then the first element of
  // each run of equal values (runtime::unique_sorted; for complex numbers, copied out by the mask of the runs'
  // starts). The zeros' sign is the first's of the run, where NumPy's own unique keeps whichever its sort put first.
  detail::require_valid(a, "unique");
  const Array s = sort(a.ravel(), std::nullopt);
  if (s.size() == 0) return s;
  if (is_complex(s.dtype())) return s.eval()(value_starts(s, true));
  return detail::wrap_node(runtime::unique_sorted(detail::ApiAccess::node(s)));
}
UniqueCounts unique_counts(const Array& a) {
  UniqueAll u = unique_all(a);
  return {u.values, u.counts};
}
UniqueInverse unique_inverse(const Array& a) {
  UniqueAll u = unique_all(a);
  return {u.values, u.inverse_indices};
}

Array bincount(const Array& x, const std::optional<Array>& weights, std::int64_t minlength) {
  detail::require_valid(x, "bincount");
  if (x.ndim() != 1) throw ValueError("bincount: x must be 1-dimensional, got " + described("x", x));
  if (!is_integer(x.dtype()) && x.dtype() != DType::Bool)
    throw DTypeError(std::string("bincount: x must hold integers, got ") + std::string(dtype_name(x.dtype())));
  if (minlength < 0) throw ValueError("bincount: minlength must be non-negative");
  if (weights && weights->shape() != x.shape())
    throw ValueError("bincount: the weights and x must have the same shape: " + described("x", x) + ", " +
                     described("weights", *weights));
  if (x.size() == 0) return weights ? zeros({minlength}, DType::Float64) : zeros({minlength}, DType::Int64);
  // The result's size is the largest element's: one pass counts into kProvisionalBins counters (or minlength) and
  // finds the range, and a second counts again only when an element lies beyond them.
  constexpr std::int64_t kProvisionalBins = 16384;
  const std::int64_t provisional = std::max(minlength, kProvisionalBins);
  const runtime::CountsAndRange counted = runtime::count_with_range(detail::ApiAccess::node(x), provisional);
  if (counted.smallest < 0) throw ValueError("bincount: x must have no negative elements");
  const std::int64_t bins = std::max(minlength, counted.largest + 1);
  if (!weights)
    return bins <= provisional ? detail::wrap_node(counted.counts)(slice(0, bins)) : bincount_fixed(x, bins);
  return zeros({bins}, DType::Float64).at(x).add(weights->astype(DType::Float64));
}

Array bincount_fixed(const Array& x, std::int64_t length) {
  detail::require_valid(x, "bincount_fixed");
  if (x.ndim() != 1) throw ValueError("bincount_fixed: x must be 1-dimensional, got " + described("x", x));
  if (!is_integer(x.dtype()) && x.dtype() != DType::Bool)
    throw DTypeError(std::string("bincount_fixed: x must hold integers, got ") + std::string(dtype_name(x.dtype())));
  if (length < 0) throw ValueError("bincount_fixed: length must be non-negative, got " + std::to_string(length));
  if (x.size() == 0 || length == 0) return zeros({length}, DType::Int64);
  return detail::wrap_node(graph::make_bincount(detail::ApiAccess::node(x), length));
}

Array lexsort(const std::vector<Array>& keys, int axis) {
  if (keys.empty()) throw ValueError("lexsort: need sequence of keys with len > 0");
  for (const Array& k : keys) detail::require_valid(k, "lexsort", "a key");
  for (const Array& k : keys)
    if (k.shape() != keys[0].shape())
      throw ValueError("lexsort: all keys need to be the same shape: " + described("keys[0]", keys[0]) + ", " +
                       described("a key", k));
  if (keys[0].ndim() == 0) return zeros({}, DType::Int64); // NumPy: a 0-d key sorts to index 0
  // Stable sorts from the least significant key to the most: each keeps the order of the ones before among ties.
  Array order = argsort(keys[0], axis);
  for (std::size_t k = 1; k < keys.size(); ++k)
    order = take_along_axis(order, argsort(take_along_axis(keys[k], order, axis), axis), axis);
  return order;
}

namespace {

using Range = std::optional<std::pair<double, double>>;

void check_histogram_data(const Array& a, const std::optional<Array>& weights, const char* name) {
  detail::require_valid(a, name);
  if (is_complex(a.dtype())) throw DTypeError(std::string(name) + ": complex data is not supported");
  if (weights && weights->shape() != a.shape())
    throw ValueError(std::string(name) + ": weights should have the same shape as a: " + described("a", a) + ", " +
                     described("weights", *weights));
}

// NumPy's edges type: a's float type (integers and bools: float64).
DType edge_type_of(const Array& a) {
  return is_floating(a.dtype()) ? a.dtype() : DType::Float64;
}

// NumPy's _get_outer_edges: the range, or the data's minimum and maximum (read on the host); a point widens by 0.5
// each way.
std::pair<double, double> outer_edges(const Array& flat, const Range& range, const char* name) {
  double first = 0, last = 1;
  if (range) {
    std::tie(first, last) = *range;
    if (first > last) throw ValueError(std::string(name) + ": max must be larger than min in range parameter.");
    if (!std::isfinite(first) || !std::isfinite(last))
      throw ValueError(std::string(name) + ": supplied range of [" + std::to_string(first) + ", " +
                       std::to_string(last) + "] is not finite");
  } else if (flat.size() > 0) {
    first = min(flat).astype(DType::Float64).item<double>();
    last = max(flat).astype(DType::Float64).item<double>();
    if (!std::isfinite(first) || !std::isfinite(last))
      throw ValueError(std::string(name) + ": autodetected range of [" + std::to_string(first) + ", " +
                       std::to_string(last) + "] is not finite");
  }
  if (first == last) {
    first -= 0.5;
    last += 0.5;
  }
  return {first, last};
}

Array uniform_edges(std::int64_t bins, double first, double last, DType edge_type) {
  return linspace(first, last, bins + 1, true, DType::Float64).astype(edge_type);
}

// flat's values where `keep` holds, and their weights: the mask is read on the host, and skipped when it keeps all.
struct Kept {
  Array values;
  std::optional<Array> weights;
};
Kept kept_values(const Array& flat, const Array& keep, const std::optional<Array>& weights) {
  const bool all_kept = flat.size() == 0 || all(keep).item<bool>();
  Kept out{all_kept ? flat : flat(keep), std::nullopt};
  if (weights) out.weights = all_kept ? weights->ravel() : weights->ravel()(keep);
  return out;
}

// Counts (or float64 sums of weights) of flat's values in `bins` equal bins over [first, last], the outer edges of
// a given range (`from_range`) or of the data.
Array uniform_counts(const Array& flat, std::int64_t bins, double first, double last, bool from_range,
                     const std::optional<Array>& weights, const Array& edges) {
  const DType edge_type = edges.dtype();
  // The edges as the element type computes with them (NumPy subtracts the range's ends in that type).
  const Array lo = full({}, first).astype(edge_type), hi = full({}, last).astype(edge_type);
  const Array x = flat.astype(edge_type);
  const Array inside = logical_and(x >= lo, x <= hi);
  // Counts drop the values outside the range by a bin index out of range (no host read: the count stays lazy);
  // weighted sums select them first.
  const auto [kept, w] = weights ? kept_values(x, inside, weights) : Kept{where(inside, x, lo), std::nullopt};
  // The range's width: subtracted in the element type from data's own ends, in double from a given range (NumPy's
  // Python floats), then rounded to the element type.
  const Array width = from_range ? full({}, last - first).astype(edge_type) : hi - lo;
  Array index = ((kept - lo) / width * double(bins)).astype(DType::Int64);
  index = where(index == bins, index - 1, index);
  index = where(kept < take(edges, index), index - 1, index);
  index = where(logical_and(kept >= take(edges, index + 1), index != bins - 1), index + 1, index);
  return weights ? bincount(index, w, bins) : bincount_fixed(where(inside, index, bins), bins);
}

// NumPy's density: the counts divided by the bins' widths and the total.
Array density_of(const Array& counts, const Array& edges) {
  const Array n = counts.astype(DType::Float64);
  return n / diff(edges).astype(DType::Float64) / sum(n);
}

Histogram finish(const Array& counts, const Array& edges, const std::optional<Array>& weights, bool density) {
  if (density) return {density_of(counts, edges), edges};
  return {weights ? counts.astype(weights->dtype()) : counts, edges}; // NumPy: the weights' type
}

// The given edges, checked as NumPy checks them.
void check_edges(const Array& edges, const char* name) {
  detail::require_valid(edges, name);
  if (edges.ndim() != 1) throw ValueError(std::string(name) + ": `bins` must be 1d, when an array");
  if (is_complex(edges.dtype())) throw DTypeError(std::string(name) + ": complex bin edges are not supported");
  const std::int64_t n = edges.size();
  if (n > 1 && any(edges(slice(none, n - 1)) > edges(slice(1, none))).item<bool>())
    throw ValueError(std::string(name) + ": `bins` must increase monotonically, when an array");
}

double host_scalar(const Array& a) {
  return a.astype(DType::Float64).item<double>();
}

// The bin width NumPy's estimator `name` picks for x (non-empty, inside [first, last]); 0 when it has none.
// Computed in double (NumPy computes some steps in the data's float type: for float32 data the count of bins can
// differ by one where the range over the width lies within rounding of an integer).
double estimated_width(const std::string& name, const Array& x, double first, double last, bool from_range) {
  const double n = double(x.size());
  const Array xd = x.astype(DType::Float64);
  const double ptp = host_scalar(max(x)) - host_scalar(min(x));
  const auto sqrt_width = [&] { return ptp / std::sqrt(n); };
  const auto sturges_width = [&] { return ptp / (std::log2(n) + 1.0); };
  const auto fd_width = [&] {
    const double iqr = host_scalar(percentile(xd, 75)) - host_scalar(percentile(xd, 25));
    return 2.0 * iqr * std::pow(n, -1.0 / 3.0);
  };
  if (name == "sqrt") return sqrt_width();
  if (name == "sturges") return sturges_width();
  if (name == "rice") return ptp / (2.0 * std::pow(n, 1.0 / 3.0));
  if (name == "scott") return std::pow(24.0 * std::sqrt(std::numbers::pi) / n, 1.0 / 3.0) * host_scalar(stddev(xd));
  if (name == "fd") return fd_width();
  if (name == "auto") return std::min(std::max(fd_width(), sqrt_width() / 2), sturges_width());
  if (name == "doane") {
    if (n <= 2) return 0.0;
    const double sg1 = std::sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)));
    const double sigma = host_scalar(stddev(xd));
    if (!(sigma > 0.0)) return 0.0;
    const double g1 = host_scalar(mean(power((xd - mean(xd)) / sigma, 3.0)));
    return ptp / (1.0 + std::log2(n) + std::log2(1.0 + std::abs(g1) / sg1));
  }
  if (name == "stone") {
    // The bin count of 1 .. max(100, sqrt(n)) with the least estimated risk (the first, on ties).
    if (n <= 1 || ptp == 0) return 0.0;
    const std::int64_t upper = std::max<std::int64_t>(100, std::int64_t(std::sqrt(n)));
    const DType edge_type = edge_type_of(x);
    double best = 0, best_risk = 0;
    for (std::int64_t bins = 1; bins <= upper; ++bins) {
      const Array p =
          uniform_counts(x, bins, first, last, from_range, std::nullopt, uniform_edges(bins, first, last, edge_type))
              .astype(DType::Float64) /
          n;
      const double risk = (2 - (n + 1) * host_scalar(sum(p * p))) / (ptp / double(bins));
      if (bins == 1 || risk < best_risk) best = double(bins), best_risk = risk;
    }
    return ptp / best;
  }
  LAZYFUSE_ASSERT(false, "estimated_bins checks the estimator's name");
  return 0;
}

// NumPy's bin count for an estimator: the data inside the range, its width, ceil((last - first) / width) bins.
std::int64_t estimated_bins(const Array& flat, const std::string& name, const Range& range, double first, double last) {
  static const char* const known[] = {"auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"};
  if (std::find(std::begin(known), std::end(known), name) == std::end(known))
    throw ValueError("histogram: '" + name +
                     "' is not a valid estimator for `bins` (auto, fd, doane, scott, stone, rice, sturges or sqrt)");
  const Array x = range ? kept_values(flat, logical_and(flat >= first, flat <= last), std::nullopt).values : flat;
  if (x.size() == 0) return 1;
  double width = estimated_width(name, x, first, last, range.has_value());
  if (width == 0 || std::isnan(width)) return 1;
  if ((is_integer(flat.dtype()) || flat.dtype() == DType::Bool) && width < 1) width = 1;
  return std::int64_t(std::ceil((last - first) / width));
}

} // namespace

Histogram histogram(const Array& a, std::int64_t bins, Range range, const std::optional<Array>& weights, bool density) {
  check_histogram_data(a, weights, "histogram");
  if (bins < 1) throw ValueError("histogram: `bins` must be positive, when an integer");
  const Array flat = a.ravel();
  const auto [first, last] = outer_edges(flat, range, "histogram");
  const Array edges = uniform_edges(bins, first, last, edge_type_of(a));
  return finish(uniform_counts(flat, bins, first, last, range.has_value(), weights, edges), edges, weights, density);
}

Histogram histogram(const Array& a, const Array& bins, const std::optional<Array>& weights, bool density) {
  check_histogram_data(a, weights, "histogram");
  check_edges(bins, "histogram");
  const Array flat = a.ravel();
  const std::int64_t nbins = bins.size() - 1;
  if (nbins < 1) { // one edge: no bins (NumPy gives empty counts)
    return finish(zeros({0}, weights ? DType::Float64 : DType::Int64), bins, weights, density);
  }
  // A value's bin: the last edge at or below it, the last edge itself in the last bin (closed), values outside
  // [first edge, last edge] and NaNs left out. (NumPy counts through sorted data; the counts are the same.)
  const Array inside = logical_and(flat >= bins(0), flat <= bins(nbins));
  if (!weights) { // the values outside dropped by an index out of range, as for uniform bins
    const Array index = minimum(searchsorted(bins, flat, "right") - 1, nbins - 1);
    return finish(bincount_fixed(where(inside, index, nbins), nbins), bins, weights, density);
  }
  const auto [kept, w] = kept_values(flat, inside, weights);
  const Array index = minimum(searchsorted(bins, kept, "right") - 1, nbins - 1);
  return finish(bincount(index, w, nbins), bins, weights, density);
}

Histogram histogram(const Array& a, const std::string& bins, Range range, bool density) {
  check_histogram_data(a, std::nullopt, "histogram");
  const Array flat = a.ravel();
  const auto [first, last] = outer_edges(flat, range, "histogram");
  const std::int64_t nbins = estimated_bins(flat, bins, range, first, last);
  const Array edges = uniform_edges(nbins, first, last, edge_type_of(a));
  return finish(uniform_counts(flat, nbins, first, last, range.has_value(), std::nullopt, edges), edges, std::nullopt,
                density);
}

Array histogram_bin_edges(const Array& a, std::int64_t bins, Range range) {
  check_histogram_data(a, std::nullopt, "histogram_bin_edges");
  if (bins < 1) throw ValueError("histogram_bin_edges: `bins` must be positive, when an integer");
  const auto [first, last] = outer_edges(a.ravel(), range, "histogram_bin_edges");
  return uniform_edges(bins, first, last, edge_type_of(a));
}

Array histogram_bin_edges(const Array& a, const std::string& bins, Range range) {
  check_histogram_data(a, std::nullopt, "histogram_bin_edges");
  const Array flat = a.ravel();
  const auto [first, last] = outer_edges(flat, range, "histogram_bin_edges");
  return uniform_edges(estimated_bins(flat, bins, range, first, last), first, last, edge_type_of(a));
}

namespace {

Array partitioned(graph::SortResult result, const char* name, const Array& a, std::int64_t kth, int axis) {
  detail::require_valid(a, name);
  const int ax = graph::normalize_axis(name, axis, a.ndim());
  const std::int64_t n = a.shape()[std::size_t(ax)];
  if (a.size() > 0 && (kth < -n || kth >= n)) // NumPy checks kth only where there is something to partition
    throw ValueError(std::string(name) + ": kth(=" + std::to_string(kth) + ") out of bounds (" + std::to_string(n) +
                     ")");
  return sorted(result, name, a, ax);
}

} // namespace

Array partition(const Array& a, std::int64_t kth, int axis) {
  return partitioned(graph::SortResult::Values, "partition", a, kth, axis);
}
Array argpartition(const Array& a, std::int64_t kth, int axis) {
  return partitioned(graph::SortResult::Indices, "argpartition", a, kth, axis);
}

} // namespace lazyfuse
