// Counting in the graph: the BinCount node (NumPy's bincount without weights), which the runtime computes from its
// materialized source (runtime/Counting.h).
#pragma once

#include "graph/Node.h"

#include <cstdint>

namespace lazyfuse::graph {

/// A BinCount node: element b of its int64 result, of shape {bins}, is the number of elements of `x` (1-D, of bool or
/// an integer type) equal to b. Elements outside [0, bins) are not counted (negative ones included). Needs bins >= 1
/// and x of at least one element. Called when an expression is built.
NodePtr make_bincount(const NodePtr& x, std::int64_t bins);

} // namespace lazyfuse::graph
