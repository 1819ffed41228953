#include "graph/Scan.h"

#include "graph/Assert.h"
#include "graph/Build.h"

namespace lazyfuse::graph {

DType scan_result_type(DType t) {
  return reduce_result_type(ReduceOp::Sum, t);
}

NodePtr make_scan(ReduceOp op, const NodePtr& a, int axis, std::string_view op_name) {
  LAZYFUSE_ASSERT(op == ReduceOp::Sum || op == ReduceOp::Prod, "make_scan: a scan is a sum or a product");
  const int ax = normalize_axis(op_name, axis, a->ndim());
  if (a->shape[std::size_t(ax)] <= 1) return a;
  if (is_half(a->dtype)) return make_cast(make_scan(op, make_cast(a, DType::Float32), ax, op_name), a->dtype);
  NodeSpec n;
  n.kind = NodeKind::Scan;
  n.dtype = a->dtype;
  n.shape = a->shape;
  n.op = int(op);
  n.ivalue = ax;
  return intern(std::move(n), {a});
}

} // namespace lazyfuse::graph
