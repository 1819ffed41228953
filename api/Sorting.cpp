// Sorting (sorting.hpp): one graph::NodeKind::Sort node each, run by the runtime (runtime/Sorting.h).
#include <lazyfuse/creation.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/manipulation.hpp>
#include <lazyfuse/sorting.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Sort.h"

#include <cmath>
#include <string>
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

} // namespace lazyfuse
