// The handle an Array holds: a counted reference to a graph node, the count kept inside the node.
//
// Every array operation creates one node and copies and drops handles to several, so the handle's cost is paid
// per recorded node (issue 19: 100 ns a node). std::shared_ptr with enable_shared_from_this (which the intern table
// needs to hand out a live node) took three more atomic instructions a node than this count alone: a weak
// reference set and dropped, and the control block's weak count, whose second holder also kept libstdc++ off its
// path without atomics for a last release. Not part of the public API: users never see a node.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace lazyfuse::graph {

class Node;
class NodePtr;

/// The reference count of a node: the first base of graph::Node, defined here so that a handle copies with an
/// inline increment where Node is only declared (Array's header).
class NodeReferences {
protected:
  NodeReferences() noexcept = default;
  NodeReferences(const NodeReferences&) = delete;
  NodeReferences& operator=(const NodeReferences&) = delete;
  ~NodeReferences() = default;

private:
  friend class NodePtr;
  friend class Node;
  // Starts at 1: the reference NodePtr::adopt takes over. A node whose count reached 0 is being destroyed and is
  // never counted again (graph/Node.cpp, the intern table's lookups).
  std::atomic<std::uint32_t> count_{1};
};

/// Destroys a node whose last reference went away (graph/Node.cpp).
void destroy_node(NodeReferences* node) noexcept;

/// A counted reference to a graph node, or null. Copies count one more reference (relaxed: a holder's own
/// reference keeps the node alive while it copies); the last release destroys the node.
class NodePtr {
public:
  constexpr NodePtr() noexcept = default;
  constexpr NodePtr(std::nullptr_t) noexcept {}
  /// One more reference to `node`, which the caller knows is alive (it reaches it through a reference it holds).
  /// Defined in graph/Node.h, where Node is complete.
  explicit NodePtr(Node* node) noexcept;
  NodePtr(const NodePtr& other) noexcept : node_(other.node_) {
    if (node_) node_->count_.fetch_add(1, std::memory_order_relaxed);
  }
  NodePtr(NodePtr&& other) noexcept : node_(std::exchange(other.node_, nullptr)) {}
  NodePtr& operator=(const NodePtr& other) noexcept {
    NodePtr(other).swap(*this);
    return *this;
  }
  NodePtr& operator=(NodePtr&& other) noexcept {
    NodePtr(std::move(other)).swap(*this);
    return *this;
  }
  ~NodePtr() { release(); }

  /// Takes over the reference a node is created with (only graph::intern creates nodes).
  static NodePtr adopt(Node* created) noexcept;

  void reset() noexcept { NodePtr().swap(*this); }
  void swap(NodePtr& other) noexcept { std::swap(node_, other.node_); }

  // Defined in graph/Node.h.
  Node* get() const noexcept;
  Node& operator*() const noexcept { return *get(); }
  Node* operator->() const noexcept { return get(); }

  explicit operator bool() const noexcept { return node_ != nullptr; }
  friend bool operator==(const NodePtr& a, const NodePtr& b) noexcept { return a.node_ == b.node_; }
  friend bool operator==(const NodePtr& a, std::nullptr_t) noexcept { return a.node_ == nullptr; }

private:
  void release() noexcept {
    // acq_rel: the destroying thread sees every other holder's writes to the node.
    if (node_ && node_->count_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_node(node_);
  }
  NodeReferences* node_ = nullptr;
};

} // namespace lazyfuse::graph
