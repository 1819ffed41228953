// The library's own access to what the public API keeps private: an Array's graph node, an Operand's parts, and
// the one door every new Array passes through. For api/ and for tests and benchmarks that inspect graphs; never
// installed.
#pragma once

#include <lazyfuse/array.hpp>

#include "graph/Node.h"

namespace lazyfuse::detail {

/// The friend of Array and Operand (array.hpp).
struct ApiAccess {
  static const graph::NodePtr& node(const Array& a) noexcept { return a.node_; }
  /// An Array holding `n` as it is: for leaves (buffers, fills) that need neither bounded laziness nor eager mode.
  static Array adopt(graph::NodePtr n) { return Array(std::move(n)); }
  /// The Array of an operand, or null when it is a number.
  static const Array* array(const Operand& o) noexcept { return o.array_; }
  static const WeakScalar& scalar(const Operand& o) noexcept { return o.scalar_; }
  /// The node of an operand that holds an Array: taken from a temporary, which is left empty (Operand(Array&&)),
  /// else one more reference to it. Only for a function's last use of the operand.
  static graph::NodePtr take_node(const Operand& o) noexcept {
    return o.temporary_ ? std::move(const_cast<Array*>(o.array_)->node_) : o.array_->node_;
  }
};

/// The graph node an Array holds (null for an empty Array).
inline const graph::NodePtr& graph_node(const Array& a) noexcept {
  return ApiAccess::node(a);
}

/// Every new array of a computation passes here (api/Array.cpp). Bounded laziness: a graph deeper than
/// LAZYFUSE_MAX_DEPTH is materialized now, so a loop `x = x * 0.5 + 1` holds neither unbounded memory nor an
/// unbounded kernel, and its steady state reuses one kernel structure. In eager mode every op that computes
/// something runs at once, as its own kernel.
Array wrap_node(graph::NodePtr n);

/// Throws Error("<op>: <operand> is an empty (default-constructed) Array") when `a` holds no value. Every public
/// function that takes an Array calls it (or node_of) before touching the array's node.
void require_valid(const Array& a, const char* op, const char* operand = "the array");

/// a's node, after require_valid.
inline const graph::NodePtr& node_of(const Array& a, const char* op, const char* operand = "the array") {
  if (!a.valid()) [[unlikely]]
    require_valid(a, op, operand);
  return ApiAccess::node(a);
}

} // namespace lazyfuse::detail
