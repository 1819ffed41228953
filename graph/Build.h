// Constructors of graph nodes: every check of shapes, types and indices happens here, when the expression is
// built, so a bad expression throws at the line that wrote it, not at get().
#pragma once

#include "graph/Node.h"
#include "graph/Ops.h"
#include "graph/Random.h"

#include <lazyfuse/array.hpp>

namespace lazyfuse::graph {

NodePtr make_buffer(std::shared_ptr<Storage> storage, DType type, Shape shape, std::int64_t offset,
                    std::vector<std::int64_t> strides);
/// `value` as the type's C++ value: f for float types, f + imag i for complex types, i for integer and bool types.
NodePtr make_fill(const Shape& shape, DType type, double f, std::int64_t i, double imag = 0);
/// A fill of `fill`'s value (a Fill node) at another shape.
NodePtr make_fill_as(const Shape& shape, const Node& fill);
NodePtr make_fill_like(const Shape& shape, DType type, double value);
/// value = start + step * coordinate[axis], computed in `type`.
NodePtr make_iota(Shape shape, DType type, int axis, double start, double step);
/// Draw `dist` (graph/Random.h) of `shape` with Philox key `key` from counter `counter`: element i reads the
/// counter counter + i. `type` is float32 or float64 for the float distributions, else integer_result(dist).
/// `p0`, `p1`: the real parameters; `range`: Integers' inclusive range (its bits as uint64).
NodePtr make_random(Shape shape, DType type, RandomDist dist, std::uint64_t key, std::uint64_t counter, double p0,
                    double p1, std::uint64_t range);

NodePtr make_unary(UnaryOp op, const NodePtr& a);
NodePtr make_binary(BinaryOp op, NodePtr a, NodePtr b);
NodePtr make_binary_weak(BinaryOp op, NodePtr a, const detail::WeakScalar& s, bool scalar_on_left);
/// A weak scalar as a fill of `shape`, of the type an array `t` gives it (int32 + 1 -> int32 fill).
NodePtr make_weak_fill(const detail::WeakScalar& s, DType t, std::string_view op_name, const Shape& shape = {});
NodePtr make_where(const NodePtr& cond, const NodePtr& a, const NodePtr& b);
NodePtr make_cast(const NodePtr& a, DType type);
/// `a` where its value is (or will be, once evaluated) a C-contiguous buffer of its own; else (a view, a fill) a copy
/// of it that evaluates into one: a cast to its own type.
NodePtr make_contiguous(const NodePtr& a);

/// Shape both operands broadcast to; ShapeError naming both when they do not.
Shape broadcast_shapes(std::string_view op, const Node& a, const Node& b);
NodePtr broadcast_to(const NodePtr& a, const Shape& shape, std::string_view op = "broadcast_to");
NodePtr make_axis_map(const NodePtr& a, Shape view_shape, std::vector<AxisEntry> entries);
NodePtr reshape(const NodePtr& a, Shape shape);
NodePtr transpose(const NodePtr& a, std::vector<int> axes);
NodePtr expand_dims(const NodePtr& a, int axis);
NodePtr squeeze(const NodePtr& a, std::optional<std::vector<int>> axes);
NodePtr flip(const NodePtr& a, std::optional<int> axis);
NodePtr roll(const NodePtr& a, std::int64_t shift, std::optional<int> axis);
NodePtr index(const NodePtr& a, const std::vector<Index>& index);
NodePtr set_slice(const NodePtr& base, const std::vector<Index>& index, const NodePtr& value);
NodePtr concatenate(const std::vector<NodePtr>& arrays, int axis);
NodePtr stack(const std::vector<NodePtr>& arrays, int axis);
NodePtr pad(const NodePtr& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& widths, double value);

/// A reduction over `axes` (all when nullopt), with NumPy's result type and empty-reduction errors; keepdims gives
/// a view of the reduced node with size-1 axes in place of the reduced ones.
NodePtr make_reduce(ReduceOp op, const NodePtr& a, const std::optional<std::vector<int>>& axes, bool keepdims);
/// The sorted, validated axes of a reduction of an array of `ndim` dimensions.
std::vector<std::int32_t> reduction_axes(std::string_view op, const std::optional<std::vector<int>>& axes,
                                         std::int64_t ndim);

/// Normalizes a possibly negative axis; IndexError naming the op when out of range.
int normalize_axis(std::string_view op, std::int64_t axis, std::int64_t ndim);

} // namespace lazyfuse::graph
