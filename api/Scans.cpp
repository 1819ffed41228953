// Scans (scans.hpp): one graph::NodeKind::Scan node each, over the input cast to the accumulation type.
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/manipulation.hpp>
#include <lazyfuse/scans.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Scan.h"

namespace lazyfuse {

namespace {

Array scan(graph::ReduceOp op, const char* name, const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  detail::require_valid(a, name);
  const DType t = dtype ? *dtype : graph::scan_result_type(a.dtype());
  graph::NodePtr x = graph::make_cast(detail::graph_node(a), t);
  int ax = axis.value_or(0);
  if (!axis) x = graph::reshape(x, {x->size()});
  return detail::wrap_node(graph::make_scan(op, x, ax, name));
}

// NaN elements of a float array replaced by `value` (NumPy's nancumsum/nancumprod); others unchanged.
Array nan_to(const Array& a, double value) {
  return is_inexact(a.dtype()) ? where(isnan(a), value, a) : a;
}

} // namespace

Array cumsum(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  return scan(graph::ReduceOp::Sum, "cumsum", a, axis, dtype);
}
Array cumprod(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  return scan(graph::ReduceOp::Prod, "cumprod", a, axis, dtype);
}
Array nancumsum(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  detail::require_valid(a, "nancumsum");
  return scan(graph::ReduceOp::Sum, "nancumsum", nan_to(a, 0), axis, dtype);
}
Array nancumprod(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  detail::require_valid(a, "nancumprod");
  return scan(graph::ReduceOp::Prod, "nancumprod", nan_to(a, 1), axis, dtype);
}

} // namespace lazyfuse
