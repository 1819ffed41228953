// Scans in the graph: the Scan node (inclusive cumulative sums and products along one axis) and NumPy's result
// types for them.
#pragma once

#include "graph/Node.h"
#include "graph/Ops.h"

#include <optional>
#include <string_view>

namespace lazyfuse::graph {

/// The type NumPy's cumsum and cumprod accumulate `t` in when no dtype is given: bool and signed integers int64,
/// unsigned integers uint64, floating and complex types themselves (float16 and bfloat16 too; make_scan then
/// accumulates them in float32).
DType scan_result_type(DType t);

/// The inclusive scan of `a` along `axis` (NumPy's numbering, negative from the end) with `op` (ReduceOp::Sum:
/// cumsum, ReduceOp::Prod: cumprod), in a's type: element k along the axis combines elements 0..k. A Scan node over
/// `a`, except where the scan changes nothing (an axis of at most one element: `a` itself). float16 and bfloat16
/// accumulate in float32 and round each result once (NumPy rounds after every step). Throws IndexError for an axis
/// out of range (0-d arrays have none), naming `op_name`. Called when an expression is built.
NodePtr make_scan(ReduceOp op, const NodePtr& a, int axis, std::string_view op_name);

} // namespace lazyfuse::graph
