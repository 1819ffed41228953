// Counting in the graph: the BinCount node (NumPy's bincount, with or without weights), which the runtime computes
// from its materialized sources (runtime/Counting.h).
#pragma once

#include "graph/Node.h"

#include <cstdint>

namespace lazyfuse::graph {

/// A BinCount node: element b of its int64 result, of shape {bins}, is the number of elements of `x` (1-D, of bool or
/// an integer type) equal to b. Elements outside [0, bins) are not counted (negative ones included). Needs bins >= 1
/// and x of at least one element. Called when an expression is built.
NodePtr make_bincount(const NodePtr& x, std::int64_t bins);

/// A weighted BinCount node: element b of its result, of shape {bins} and of `weights`' type, is the sum of the
/// weights[i] whose x[i] equals b, the same bits on every run: float16, bfloat16 and float32 in fixed point, whatever
/// the order (the same bits on every backend too), integers exactly, float64 in an order the input fixes
/// (docs/semantics.md, at().add; runtime/Counting.cpp and runtime/DeviceCount.h compute them). Where
/// none does it holds the additive identity: 0 for integers, -0.0 for floats (y + -0.0 is y for every y, -0.0
/// included, where y + 0.0 turns -0.0 into 0.0), so that adding the sums into an array leaves its other elements as
/// they were, bit for bit. `weights` is 1-D, as long as x, of a type weighted_bincount_type accepts. Called when an
/// expression is built.
NodePtr make_weighted_bincount(const NodePtr& x, std::int64_t bins, const NodePtr& weights);

/// Whether weights of type t are summed by a weighted BinCount: the floating-point types and int64 and uint64 (a sum
/// in a narrower integer type is the same sum in these, wrapped).
bool weighted_bincount_type(DType t);

} // namespace lazyfuse::graph
