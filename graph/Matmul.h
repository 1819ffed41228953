// Matrix products in the graph: NumPy's matmul shape and type rules, the Matmul node, and how a GEMM library reads
// an operand in place (the layout test the partitioner and the runtime share, so that both decide alike).
#pragma once

#include "graph/Node.h"

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace lazyfuse::graph {

/// NumPy's matmul(a, b): 1-D operands promoted (a to a row, b to a column; the added axis removed again from the
/// result), batch dimensions broadcast, the result type promote_types(a, b). Every floating and complex product
/// is one Matmul node over operands cast to the result type and broadcast to the result's batch shape; bool and
/// integer products too (the runtime computes them exactly). Empty results and k = 0 are fills (zeros), never a
/// product. Throws ShapeError for 0-d operands and mismatched contraction dimensions (naming `op`, both shapes and
/// the axes), DTypeError for a type with no product. Called when an expression is built.
NodePtr matmul(const NodePtr& a, const NodePtr& b, std::string_view op = "matmul");

/// How a GEMM library reads one operand of shape (batch..., rows, cols) in place: row-major (each row contiguous,
/// rows `ld` elements apart) or, with `transposed`, column-major (each column contiguous, columns `ld` apart), and
/// one stride between the matrices of the flattened batch (0: every batch entry reads the same matrix).
struct GemmLayout {
  bool transposed = false;
  std::int64_t ld = 1;
  std::int64_t batch_stride = 0;
  bool operator==(const GemmLayout&) const = default;
};

/// The layout of an operand of `shape` (at least 2-D) stored with `strides` (elements), or nullopt when no
/// (transpose flag, leading dimension, batch stride) describes it: negative or zero strides along a matrix axis of
/// more than one element, neither axis contiguous, a leading dimension below the contiguous axis' length, or batch
/// axes that do not flatten into one stride. Size-1 axes never disqualify.
std::optional<GemmLayout> gemm_layout(const Shape& shape, std::span<const std::int64_t> strides);

/// Strides and offset (elements) at which an operand is read: its buffer's when it is materialized, else, when it is
/// an axis map or a reshape over a node that is materialized (or will be written contiguously:
/// `assume_contiguous_source`; a reshape needs a contiguous source), those of the composed view. Returns false for
/// anything else (a pending node that is not such a view).
bool operand_strides(const Node& operand, bool assume_contiguous_source, std::vector<std::int64_t>& strides,
                     std::int64_t& offset);

} // namespace lazyfuse::graph
