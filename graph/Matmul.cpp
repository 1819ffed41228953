#include "graph/Matmul.h"

#include "graph/Assert.h"
#include "graph/Build.h"

#include <lazyfuse/error.hpp>

#include <algorithm>

namespace lazyfuse::graph {

namespace {

std::string operand_text(const Node& a, const Node& b) {
  return describe("a", a) + " and " + describe("b", b);
}

} // namespace

NodePtr matmul(const NodePtr& a_in, const NodePtr& b_in, std::string_view op) {
  const std::string name(op);
  if (a_in->ndim() == 0 || b_in->ndim() == 0)
    throw ShapeError(name + ": operands must be at least 1-D (NumPy's matmul does not take scalars; multiply does): " +
                     operand_text(*a_in, *b_in));
  const DType t = promote_types(a_in->dtype, b_in->dtype);
  const bool a_vector = a_in->ndim() == 1, b_vector = b_in->ndim() == 1;
  NodePtr a = a_vector ? expand_dims(a_in, 0) : a_in;
  NodePtr b = b_vector ? expand_dims(b_in, 1) : b_in;
  const std::size_t ra = a->shape.size(), rb = b->shape.size();
  const std::int64_t m = a->shape[ra - 2], k = a->shape[ra - 1], kb = b->shape[rb - 2], n = b->shape[rb - 1];
  if (k != kb)
    throw ShapeError(name + ": contraction dimensions differ: axis " + std::to_string(a_in->ndim() - 1) + " of " +
                     describe("a", *a_in) + " has " + std::to_string(k) + " elements, axis " +
                     std::to_string(b_vector ? 0 : b_in->ndim() - 2) + " of " + describe("b", *b_in) + " has " +
                     std::to_string(kb) + " (a's last axis is contracted with b's second-to-last)");
  // Batch dimensions broadcast as in elementwise ops.
  const Shape a_batch(a->shape.begin(), a->shape.end() - 2), b_batch(b->shape.begin(), b->shape.end() - 2);
  const std::size_t nb = std::max(a_batch.size(), b_batch.size());
  Shape batch(nb, 1);
  for (std::size_t d = 0; d < nb; ++d) {
    const std::int64_t da = d + a_batch.size() >= nb ? a_batch[d + a_batch.size() - nb] : 1;
    const std::int64_t db = d + b_batch.size() >= nb ? b_batch[d + b_batch.size() - nb] : 1;
    if (da != db && da != 1 && db != 1)
      throw ShapeError(name + ": batch dimensions could not be broadcast together: " + operand_text(*a_in, *b_in) +
                       " (all axes but the last two broadcast)");
    batch[d] = da == 1 ? db : da;
  }
  Shape out = batch;
  out.push_back(m);
  out.push_back(n);
  // NumPy's result shape drops the axes that 1-D promotion added.
  Shape result = batch;
  if (!a_vector) result.push_back(m);
  if (!b_vector) result.push_back(n);
  if (shape_size(out) == 0 || k == 0) return make_fill(result, t, 0, 0);

  auto operand = [&](const NodePtr& x, std::int64_t rows, std::int64_t cols) {
    Shape s = batch;
    s.push_back(rows);
    s.push_back(cols);
    return broadcast_to(make_cast(x, t), s, op);
  };
  NodeSpec spec;
  spec.kind = NodeKind::Matmul;
  spec.dtype = t;
  spec.shape = out;
  NodePtr product = intern(std::move(spec), {operand(a, m, k), operand(b, k, n)});
  return result == out ? product : reshape(product, result);
}

std::optional<GemmLayout> gemm_layout(const Shape& shape, std::span<const std::int64_t> strides) {
  LAZYFUSE_ASSERT(shape.size() >= 2 && strides.size() == shape.size(), "gemm_layout: needs a matrix or a batch");
  const std::size_t r = shape.size();
  const std::int64_t rows = shape[r - 2], cols = shape[r - 1];
  // A size-1 axis is never stepped along: any stride will do, so it takes the one that makes the layout valid.
  const std::int64_t sr = strides[r - 2], sc = strides[r - 1];
  GemmLayout l;
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= std::max<std::int64_t>(cols, 1))) {
    l.transposed = false;
    l.ld = rows == 1 ? std::max<std::int64_t>(cols, 1) : sr;
  } else if ((rows == 1 || sr == 1) && (cols == 1 || sc >= std::max<std::int64_t>(rows, 1))) {
    l.transposed = true;
    l.ld = cols == 1 ? std::max<std::int64_t>(rows, 1) : sc;
  } else {
    return std::nullopt;
  }
  // The batch axes, innermost first, must step through the matrices with one stride: each axis' stride is the next
  // inner one's times that axis' length, or all of them are 0 (a broadcast operand).
  std::int64_t stride = -1, span = 0; // stride of the flattened batch; elements it covers so far
  for (std::size_t d = r - 2; d-- > 0;) {
    if (shape[d] == 1) continue;
    if (stride < 0) {
      if (strides[d] < 0) return std::nullopt;
      stride = strides[d];
      span = stride * shape[d];
    } else {
      if (strides[d] != span) return std::nullopt;
      span *= shape[d];
    }
  }
  l.batch_stride = stride < 0 ? 0 : stride;
  return l;
}

bool operand_strides(const Node& operand, bool assume_contiguous_source, std::vector<std::int64_t>& strides,
                     std::int64_t& offset) {
  if (const BufferView* buf = operand.buffer_unlocked()) {
    strides = buf->strides;
    offset = buf->offset;
    return true;
  }
  if (operand.kind != NodeKind::AxisMap && operand.kind != NodeKind::Reshape) return false;
  const Node& src = *operand.sources_unlocked()[0];
  if (operand.kind == NodeKind::Reshape) { // free only over a contiguous source
    const BufferView* buf = src.buffer_unlocked();
    if (buf ? !is_contiguous(*buf, src.shape) : !assume_contiguous_source) return false;
    strides = contiguous_strides(operand.shape);
    offset = buf ? buf->offset : 0;
    return true;
  }
  std::vector<std::int64_t> src_strides;
  std::int64_t src_offset = 0;
  if (const BufferView* buf = src.buffer_unlocked()) {
    src_strides = buf->strides;
    src_offset = buf->offset;
  } else if (assume_contiguous_source) {
    src_strides = contiguous_strides(src.shape);
  } else {
    return false;
  }
  // make_axis_map's folding of a view into a buffer's strides.
  offset = src_offset;
  strides.assign(operand.shape.size(), 0);
  for (std::size_t d = 0; d < operand.axes.size(); ++d) {
    const AxisEntry& e = operand.axes[d];
    offset += e.start * src_strides[d];
    if (e.view_axis >= 0) strides[std::size_t(e.view_axis)] += e.step * src_strides[d];
  }
  return true;
}

} // namespace lazyfuse::graph
