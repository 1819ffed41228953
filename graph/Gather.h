// Gathers: a read of a source array at positions that index arrays hold (NumPy's advanced indexing, take,
// take_along_axis). The node is elementwise in its own index space: lowering turns it into a load whose address is
// computed from the loaded index values (codegen/KernelIR.h, IrOp::CheckedIndex), so a gather fuses with the work
// before and after it like any elementwise node, and the gathered array is never stored on its own.
#pragma once

#include "graph/Node.h"

#include <vector>

namespace lazyfuse::graph {

/// The most index arrays one gather takes (Node::kMaxSources less the source).
inline constexpr std::size_t kMaxGatherIndices = Node::kMaxSources - 1;

/// `source` read at `indices[k]` on source axis `axes[k]` (NumPy's zipped advanced indexing): the index arrays
/// (integer dtypes) broadcast together to a shape B, and the result is the source's other axes in order with B's
/// axes inserted at `position` (0 ..= ndim - k). Negative indices count from the end of their axis; an index out of
/// range is an IndexError raised when the result is materialized (runtime/Materialize.cpp), as no kernel reads out
/// of bounds. Checks here: at least one and at most kMaxGatherIndices arrays, integer types (IndexError otherwise,
/// in NumPy's words), distinct axes in range, a broadcastable B (IndexError, as NumPy's "shape mismatch"), and a
/// source axis of size 0 indexed by a non-empty B or a 0-d array (IndexError now: every index is out of range). An
/// empty result is a fill, with no kernel: its index values are not checked (NumPy checks them).
NodePtr make_gather(const NodePtr& source, std::vector<NodePtr> indices, std::vector<int> axes, int position);

} // namespace lazyfuse::graph
