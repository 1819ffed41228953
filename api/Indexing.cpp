// Advanced indexing (Array::index_arrays, behind x(...) with Arrays), take and take_along_axis: each is one gather
// node (graph/Gather.h) over a basic-index view of the array.
#include <lazyfuse/indexing.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Gather.h"

#include <lazyfuse/error.hpp>

#include <string>

namespace lazyfuse {

using detail::node_of;
using detail::wrap_node;
using graph::NodePtr;

Array Array::index_arrays(const std::vector<std::variant<Index, Array>>& index) const {
  const NodePtr& base = node_of(*this, "index");
  const std::int64_t ndim = base->ndim();
  std::int64_t consumed = 0, ellipses = 0;
  bool any_array = false;
  for (auto& c : index) {
    if (const Index* i = std::get_if<Index>(&c)) {
      if (std::holds_alternative<std::int64_t>(*i) || std::holds_alternative<Slice>(*i)) ++consumed;
      if (std::holds_alternative<Ellipsis>(*i)) ++ellipses;
    } else {
      node_of(std::get<Array>(c), "index", "an index array");
      any_array = true;
      ++consumed;
    }
  }
  if (ellipses > 1) throw IndexError("index: an index can only have a single ellipsis");
  if (consumed > ndim)
    throw IndexError("index: too many indices for " + graph::describe("array", *base) + ": it is " +
                     std::to_string(ndim) + "-dimensional, but " + std::to_string(consumed) + " were indexed");
  if (!any_array) {
    std::vector<Index> basic;
    for (auto& c : index) basic.push_back(std::get<Index>(c));
    return index_with(basic);
  }
  // The basic part first (a view V in which every advanced component keeps its axis whole); then one gather over
  // V's advanced axes. An integer among arrays is a 0-d index array, checked now as NumPy checks it.
  std::vector<Index> basic;
  std::vector<NodePtr> arrays;
  std::vector<int> view_axes, positions; // per advanced component: its axis in V, its place in the index
  int view_axis = 0, source_axis = 0, place = 0;
  auto advanced = [&](NodePtr node) {
    basic.push_back(all_of);
    arrays.push_back(std::move(node));
    view_axes.push_back(view_axis++);
    positions.push_back(place);
    ++source_axis;
  };
  for (auto& c : index) {
    if (const Array* a = std::get_if<Array>(&c)) {
      advanced(detail::ApiAccess::node(*a));
    } else if (const auto* i = std::get_if<std::int64_t>(&std::get<Index>(c))) {
      const std::int64_t size = base->shape[std::size_t(source_axis)];
      if (*i < -size || *i >= size)
        throw IndexError("index " + std::to_string(*i) + " is out of bounds for axis " + std::to_string(source_axis) +
                         " with size " + std::to_string(size));
      advanced(graph::make_fill({}, DType::Int64, 0, *i < 0 ? *i + size : *i));
    } else if (std::holds_alternative<Ellipsis>(std::get<Index>(c))) {
      const std::int64_t whole = ndim - consumed;
      for (std::int64_t k = 0; k < whole; ++k) basic.push_back(all_of);
      view_axis += int(whole);
      source_axis += int(whole);
      // An ellipsis separates the advanced components around it, even when it stands for no axis (as in NumPy).
      ++place;
    } else {
      basic.push_back(std::get<Index>(c));
      ++view_axis;
      if (std::holds_alternative<Slice>(std::get<Index>(c))) ++source_axis;
    }
    ++place;
  }
  bool adjacent = true;
  for (std::size_t k = 1; k < positions.size(); ++k) adjacent = adjacent && positions[k] == positions[k - 1] + 1;
  const NodePtr view = graph::index(base, basic);
  return wrap_node(graph::make_gather(view, std::move(arrays), view_axes, adjacent ? view_axes[0] : 0));
}

Array take(const Array& a, const Array& indices, std::optional<int> axis) {
  const NodePtr& source = node_of(a, "take");
  const NodePtr& idx = node_of(indices, "take", "the indices");
  if (!axis) return wrap_node(graph::make_gather(graph::reshape(source, {-1}), {idx}, {0}, 0));
  const int ax = graph::normalize_axis("take", *axis, source->ndim());
  return wrap_node(graph::make_gather(source, {idx}, {ax}, ax));
}

Array take_along_axis(const Array& a, const Array& indices, std::optional<int> axis) {
  const NodePtr& source = node_of(a, "take_along_axis");
  const NodePtr& idx = node_of(indices, "take_along_axis", "the indices");
  if (!axis) {
    if (idx->ndim() != 1)
      throw ValueError("take_along_axis: with axis None, indices must be 1-dimensional, got " +
                       graph::describe("indices", *idx));
    return wrap_node(graph::make_gather(graph::reshape(source, {-1}), {idx}, {0}, 0));
  }
  if (idx->ndim() != source->ndim())
    throw ValueError("take_along_axis: indices and arr must have the same number of dimensions: " +
                     graph::describe("arr", *source) + ", " + graph::describe("indices", *idx));
  const int ax = graph::normalize_axis("take_along_axis", *axis, source->ndim());
  if (source->ndim() > std::int64_t(graph::kMaxGatherIndices))
    throw IndexError("take_along_axis: at most " + std::to_string(graph::kMaxGatherIndices) + " dimensions, got " +
                     graph::describe("arr", *source));
  // Every axis is indexed: the selecting one by `indices`, each other one by its own coordinate (an iota of size 1
  // where a's axis is 1 and broadcasts), so that a's other axes and indices' broadcast together, as in NumPy.
  std::vector<NodePtr> arrays;
  std::vector<int> axes;
  for (int d = 0; d < int(source->ndim()); ++d) {
    axes.push_back(d);
    if (d == ax) {
      arrays.push_back(idx);
      continue;
    }
    Shape shape(std::size_t(source->ndim()), 1);
    shape[std::size_t(d)] = source->shape[std::size_t(d)];
    arrays.push_back(graph::make_iota(std::move(shape), DType::Int64, d, 0, 1));
  }
  return wrap_node(graph::make_gather(source, std::move(arrays), std::move(axes), 0));
}

} // namespace lazyfuse
