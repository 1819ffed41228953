// Views and shape changes (manipulation.hpp): each a graph node; graph/Build.cpp checks the shapes and axes.
#include <lazyfuse/manipulation.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"

namespace lazyfuse {

using detail::node_of;
using detail::wrap_node;
using graph::NodePtr;

namespace {
std::vector<NodePtr> nodes_of(const std::vector<Array>& arrays, const char* op) {
  std::vector<NodePtr> v;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (!arrays[i].valid()) [[unlikely]]
      detail::require_valid(arrays[i], op, ("array " + std::to_string(i)).c_str());
    v.push_back(detail::graph_node(arrays[i]));
  }
  return v;
}
} // namespace

Array reshape(const Array& a, Shape shape) {
  return a.reshape(std::move(shape));
}
Array transpose(const Array& a) {
  return a.transpose();
}
Array transpose(const Array& a, std::vector<int> axes) {
  return a.transpose(std::move(axes));
}
Array permute(const Array& a, std::vector<int> axes) {
  return wrap_node(graph::transpose(node_of(a, "permute"), std::move(axes)));
}
Array expand_dims(const Array& a, int axis) {
  return wrap_node(graph::expand_dims(node_of(a, "expand_dims"), axis));
}
Array squeeze(const Array& a, std::optional<std::vector<int>> axes) {
  return wrap_node(graph::squeeze(node_of(a, "squeeze"), std::move(axes)));
}
Array broadcast_to(const Array& a, Shape shape) {
  return wrap_node(graph::broadcast_to(node_of(a, "broadcast_to"), shape));
}
Array ascontiguousarray(const Array& a) {
  return wrap_node(graph::make_contiguous(node_of(a, "ascontiguousarray")));
}
Array flip(const Array& a, std::optional<int> axis) {
  return wrap_node(graph::flip(node_of(a, "flip"), axis));
}
Array roll(const Array& a, std::int64_t shift, std::optional<int> axis) {
  return wrap_node(graph::roll(node_of(a, "roll"), shift, axis));
}
Array concatenate(const std::vector<Array>& arrays, int axis) {
  return wrap_node(graph::concatenate(nodes_of(arrays, "concatenate"), axis));
}
Array stack(const std::vector<Array>& arrays, int axis) {
  return wrap_node(graph::stack(nodes_of(arrays, "stack"), axis));
}
Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& widths, double value) {
  return wrap_node(graph::pad(node_of(a, "pad"), widths, value));
}

} // namespace lazyfuse
