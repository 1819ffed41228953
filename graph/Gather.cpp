#include "graph/Gather.h"

#include "graph/Assert.h"
#include "graph/Build.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <string>

namespace lazyfuse::graph {

NodePtr make_gather(const NodePtr& source, std::vector<NodePtr> indices, std::vector<int> axes, int position) {
  LAZYFUSE_ASSERT_EQ(indices.size(), axes.size(), "make_gather: one axis per index array");
  if (indices.empty()) throw IndexError("gather: no index arrays");
  if (indices.size() > kMaxGatherIndices)
    throw IndexError("gather: at most " + std::to_string(kMaxGatherIndices) + " index arrays in one index, got " +
                     std::to_string(indices.size()));
  for (auto& i : indices)
    if (!is_integer(i->dtype))
      throw IndexError("arrays used as indices must be of integer type: " + describe("index", *i) +
                       (i->dtype == DType::Bool ? " (a boolean mask indexes through x(mask))" : ""));
  for (std::size_t k = 0; k < axes.size(); ++k) {
    axes[k] = normalize_axis("gather", axes[k], source->ndim());
    for (std::size_t j = 0; j < k; ++j)
      if (axes[j] == axes[k]) throw IndexError("gather: axis " + std::to_string(axes[k]) + " indexed twice");
  }
  // NumPy broadcasts the index arrays together ("shape mismatch: indexing arrays could not be broadcast together").
  Shape b = indices[0]->shape;
  for (std::size_t k = 1; k < indices.size(); ++k) {
    const Shape& s = indices[k]->shape;
    Shape out(std::max(b.size(), s.size()), 1);
    for (std::size_t d = 0; d < out.size(); ++d) {
      const std::int64_t x = d + b.size() >= out.size() ? b[d + b.size() - out.size()] : 1;
      const std::int64_t y = d + s.size() >= out.size() ? s[d + s.size() - out.size()] : 1;
      if (x != y && x != 1 && y != 1) {
        std::string shapes;
        for (auto& i : indices) shapes += (shapes.empty() ? "" : " ") + format_shape(i->shape);
        throw IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes " + shapes);
      }
      out[d] = x == 1 ? y : x;
    }
    b = std::move(out);
  }
  const int rest = int(source->ndim()) - int(axes.size());
  LAZYFUSE_ASSERT(position >= 0 && position <= rest, "make_gather: B's position outside the result");
  Shape shape;
  std::vector<int> kept;
  for (int d = 0; d < int(source->ndim()); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(d);
  for (int k = 0; k < position; ++k) shape.push_back(source->shape[std::size_t(kept[std::size_t(k)])]);
  shape.insert(shape.end(), b.begin(), b.end());
  for (int k = position; k < rest; ++k) shape.push_back(source->shape[std::size_t(kept[std::size_t(k)])]);
  // Every index into an empty axis is out of range (NumPy: "index 0 is out of bounds for axis 0 with size 0"; the
  // value is data, not known here) when the broadcast is not empty, and for a 0-d array, which NumPy reads as an
  // integer and checks at once. Other indices of an empty result are not checked: no kernel reads them.
  for (std::size_t k = 0; k < axes.size(); ++k)
    if (source->shape[std::size_t(axes[k])] == 0 && (shape_size(b) > 0 || indices[k]->ndim() == 0))
      throw IndexError("index is out of bounds for axis " + std::to_string(axes[k]) + " with size 0");
  if (shape_size(shape) == 0) return make_fill(std::move(shape), source->dtype, 0, 0);
  NodeSpec n;
  n.kind = NodeKind::Gather;
  n.dtype = source->dtype;
  n.shape = std::move(shape);
  n.ivalue = position;
  n.reduce_axes.assign(axes.begin(), axes.end());
  SourceList srcs{source};
  for (auto& i : indices) srcs.push_back(broadcast_to(i, b, "index"));
  return intern(std::move(n), std::move(srcs));
}

} // namespace lazyfuse::graph
