// Changing an array's shape: views (index arithmetic of their consumer's kernel, never a copy) and the lazy copies
// that join or pad arrays.
#pragma once

#include <lazyfuse/array.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace lazyfuse {

/// NumPy reshape; one dimension may be -1 (a.reshape(shape)).
Array reshape(const Array& a, Shape shape);
/// Reverses the axes.
Array transpose(const Array& a);
/// Permutes the axes; negative axes count from the end.
Array transpose(const Array& a, std::vector<int> axes);
/// transpose(a, axes) under PyTorch's name.
Array permute(const Array& a, std::vector<int> axes);
/// Inserts a size-1 axis at `axis`.
Array expand_dims(const Array& a, int axis);
/// Removes all size-1 axes, or the given ones (which must have size 1).
Array squeeze(const Array& a, std::optional<std::vector<int>> axes = std::nullopt);
/// A view of `a` repeated along new or size-1 axes to `shape` (NumPy's broadcasting rules).
Array broadcast_to(const Array& a, Shape shape);
/// NumPy ascontiguousarray (PyTorch's `contiguous()`): `a` itself where its value is a C-contiguous buffer (an
/// evaluated computation), else a lazy copy into one, fused with the work that produces it (a transposed copy reads
/// and writes through tiles of shared memory on the GPU). The only way to materialize a view's elements in a new
/// layout: `eval()` of a view evaluates its source and keeps the view.
Array ascontiguousarray(const Array& a);
/// Reverses the order along one axis, or all axes.
Array flip(const Array& a, std::optional<int> axis = std::nullopt);
/// NumPy roll: shifts along an axis (or the flattened array) with wrap-around.
Array roll(const Array& a, std::int64_t shift, std::optional<int> axis = std::nullopt);
/// Joins arrays along an existing axis; their types promote.
Array concatenate(const std::vector<Array>& arrays, int axis = 0);
/// Joins arrays of one shape along a new axis; their types promote.
Array stack(const std::vector<Array>& arrays, int axis = 0);
/// Constant padding: `pad_width[d] = {before, after}` per axis (or one pair for all axes).
Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pad_width,
          double constant_value = 0);

} // namespace lazyfuse
