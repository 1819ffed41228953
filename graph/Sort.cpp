#include "graph/Sort.h"

#include "graph/Build.h"

namespace lazyfuse::graph {

NodePtr make_sort(const NodePtr& a, int axis, SortResult result, std::string_view op_name) {
  const int ax = normalize_axis(op_name, axis, a->ndim());
  if (a->shape[std::size_t(ax)] <= 1) return result == SortResult::Values ? a : make_fill(a->shape, DType::Int64, 0, 0);
  NodeSpec n;
  n.kind = NodeKind::Sort;
  n.dtype = result == SortResult::Values ? a->dtype : DType::Int64;
  n.shape = a->shape;
  n.op = int(result);
  n.ivalue = ax;
  return intern(std::move(n), {a});
}

} // namespace lazyfuse::graph
