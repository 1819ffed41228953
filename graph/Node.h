// Graph nodes: immutable, hash-consed, freed iteratively.
//
// A node is one operation over source nodes. Structurally equal nodes over the same sources are one node (the
// intern table), so common subexpressions are shared for free and equality is identity. A node's `hash` is
// structural (kind, type, shape, arguments and the sources' hashes): computed once in O(1), independent of
// pointer values and run order, and shared by nodes that differ only in which buffers they read — equality then
// also compares the sources' serial numbers and, for buffers, the storage's. This identity hash is not the kernel
// cache key: that one (codegen/) leaves out buffer identity, sizes and scalar values.
#pragma once

#include <lazyfuse/array.hpp>
#include <lazyfuse/detail/node_ptr.hpp>
#include <lazyfuse/dtype.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace lazyfuse::graph {

enum class NodeKind : std::uint8_t {
  Buffer,   // data in memory: storage + offset + strides (a leaf)
  Fill,     // one value everywhere (full, zeros, C++ scalars); fvalue/ivalue
  Iota,     // start + step * coordinate along `axis` (arange, linspace, eye)
  Unary,    // op = UnaryOp
  Binary,   // op = BinaryOp
  Where,    // srcs: cond, a, b (all of the node's shape)
  Cast,     // astype
  AxisMap,  // a strided view: permute, slice, flip, integer index, new axes, squeeze, broadcast
  Reshape,  // a C-order reshape of a source that is not a plain buffer
  Roll,     // shift with wrap-around along one axis
  SetSlice, // srcs: base, value; value (of the region's shape) replaces base in a strided region
  Reduce,   // op = ReduceOp over `reduce_axes` of the source; the reduced axes are dropped (keepdims is a view)
  Random,   // op = RandomDist (graph/Random.h); srcs: key, counter offset (uint64 fills); element i from i alone
  Matmul,   // srcs: a (batch..., m, k), b (batch..., k, n) of the node's type and batch shape (graph/Matmul.h)
  Gather,   // srcs: source, then one integer index array per advanced axis, all of one shape B (graph/Gather.h)
  Scan, // op = ReduceOp Sum or Prod: inclusive scan of the source (of the node's type and shape) along axis `ivalue`
  Sort, // op = SortResult (graph/Sort.h): the source sorted stably along axis `ivalue`, or the permutation (int64)
  BinCount, // the number of the source's elements (1-D integers) equal to each of 0 .. shape[0] - 1, int64; with a
            // second source (weights, 1-D, as long), the sum of the weights of those elements (graph/Count.h)
};

/// Nodes the runtime computes from their sources, materialized and contiguous, outside generated kernels: sorts
/// (runtime/Sorting.h) and counts (runtime/Counting.h).
constexpr bool runs_over_materialized_source(NodeKind k) {
  return k == NodeKind::Sort || k == NodeKind::BinCount;
}

/// Nodes that read their one source in another index frame (strided views, reshapes, rolls).
constexpr bool reads_through_a_view(NodeKind k) {
  return k == NodeKind::AxisMap || k == NodeKind::Reshape || k == NodeKind::Roll;
}

std::string_view kind_name(NodeKind k);

/// Memory a Buffer node reads. The runtime subclasses it (host memory, pooled device memory, wrapped
/// pointers); the graph only needs the address and that it is kept alive.
class Storage {
public:
  virtual ~Storage() = default;
  void* data = nullptr;
  std::size_t bytes = 0;
  bool on_device = false;
  /// Memory the user owns or may write (from_pointer, or any buffer once Array::data_ptr gave its address out), so
  /// its values may change behind lazyfuse's back: nothing is remembered about them. Every other storage holds a
  /// value that never changes.
  std::atomic<bool> external{false};
  /// Unique per storage, never reused; part of a Buffer node's identity.
  const std::uint64_t serial = next_serial();

private:
  static std::uint64_t next_serial();
};

/// How one axis of an AxisMap's *source* is indexed: coordinate `src_axis` of the view (or none: -1), scaled
/// and shifted: source_coord = start + step * view_coord[src_axis].
struct AxisEntry {
  std::int32_t view_axis = -1;
  std::int64_t start = 0;
  std::int64_t step = 1;
  bool operator==(const AxisEntry&) const = default;
};

/// Region of a SetSlice, per base axis: elements start + step*k for k in [0, count).
struct RegionAxis {
  std::int64_t start = 0, step = 1, count = 0;
  bool operator==(const RegionAxis&) const = default;
};

/// Where a materialized node's value lives.
struct BufferView {
  std::shared_ptr<Storage> storage;
  std::int64_t offset = 0;           // elements
  std::vector<std::int64_t> strides; // elements, one per axis
};

/// A node's sources, held inside the node: no node has more than kCapacity (a gather: its source and up to 7 index
/// arrays), and recording a node then allocates only the node and its shape (issue 19's host cost). Only the sources
/// it holds are constructed: a list is built, moved and destroyed several times per node recorded.
class SourceList {
public:
  static constexpr std::size_t kCapacity = 8;
  SourceList() noexcept {}
  SourceList(std::initializer_list<NodePtr> srcs);
  /// Two sources moved in (a braced list copies them: two reference counts up, then the caller's two down).
  SourceList(NodePtr&& first, NodePtr&& second) noexcept;
  SourceList(std::vector<NodePtr>&& srcs);
  SourceList(SourceList&& other) noexcept;
  SourceList& operator=(SourceList&& other) noexcept;
  SourceList(const SourceList&) = delete;
  SourceList& operator=(const SourceList&) = delete;
  ~SourceList() { clear(); }

  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  const NodePtr& operator[](std::size_t k) const { return begin()[k]; }
  const NodePtr* begin() const { return std::launder(reinterpret_cast<const NodePtr*>(storage_)); }
  const NodePtr* end() const { return begin() + count_; }
  std::span<const NodePtr> span() const { return {begin(), count_}; }
  void push_back(NodePtr n);
  /// Releases every source.
  void clear() noexcept;
  /// Moves each source to `sink` and leaves the list empty.
  template <class Sink> void drain(Sink&& sink) {
    NodePtr* items = mutable_begin();
    const std::size_t count = std::exchange(count_, std::uint8_t(0));
    for (std::size_t k = 0; k < count; ++k) {
      sink(std::move(items[k]));
      items[k].~NodePtr();
    }
  }

private:
  NodePtr* mutable_begin() { return std::launder(reinterpret_cast<NodePtr*>(storage_)); }
  void emplace(NodePtr&& n) { ::new (static_cast<void*>(storage_ + count_++ * sizeof(NodePtr))) NodePtr(std::move(n)); }

  alignas(NodePtr) std::byte storage_[kCapacity * sizeof(NodePtr)];
  std::uint8_t count_ = 0;
};

/// What a node computes, apart from its sources: the part that the intern table compares.
struct NodeSpec {
  NodeKind kind = NodeKind::Fill;
  DType dtype = DType::Float32;
  Shape shape;
  int op = 0;                            // UnaryOp / BinaryOp / RandomDist
  double fvalue = 0;                     // Fill value (float types; complex: the real part), Iota start, Random p0
  double fimag = 0;                      // Fill value's imaginary part (complex types)
  std::int64_t ivalue = 0;               // Fill value (integer types), Iota/Roll axis, Random's integer range
  double fstep = 0;                      // Iota step, Random p1
  std::int64_t shift = 0;                // Roll
  std::vector<AxisEntry> axes;           // AxisMap: one per source axis
  std::vector<RegionAxis> region;        // SetSlice: one per base axis
  std::vector<std::int32_t> reduce_axes; // Reduce: sorted axes of the source; Gather: the source axis of each index
};

class ReleaseBatch;

class Node : public NodeReferences, public NodeSpec {
public:
  /// The sources' serial numbers (no node has more than kMaxSources; unused entries are 0, never a serial).
  /// A gather has the most: its source and up to 7 index arrays.
  static constexpr std::size_t kMaxSources = SourceList::kCapacity;
  std::array<std::uint64_t, kMaxSources> src_serials{};
  std::uint64_t hash = 0;
  /// Kind, type, op, rank and source count in one word, with a bit for each optional field that is set (ivalue,
  /// fvalue, fstep, shift nonzero; axes, region, reduce_axes non-empty), set when the node is built: a plan-cache
  /// hit walks every node of its graph and starts each node's record with it (runtime/PlanCache.cpp).
  std::uint64_t summary = 0;
  enum SummaryFlag : std::uint64_t {
    kHasIvalue = std::uint64_t(1) << 48,
    kHasFvalue = std::uint64_t(1) << 49,
    kHasFstep = std::uint64_t(1) << 50,
    kHasShift = std::uint64_t(1) << 51,
    kHasAxes = std::uint64_t(1) << 52,
    kHasRegion = std::uint64_t(1) << 53,
    kHasReduceAxes = std::uint64_t(1) << 54,
  };
  std::uint64_t serial = 0;
  /// The longest path to a leaf or a stored value (what is still to compute); bounded laziness materializes past a
  /// budget. Exact when the node is built; values stored later can only shorten it, so it stays an upper bound, and
  /// a consumer built after them tightens it (graph/Node.cpp, depth_to_compute). Not part of the node's identity.
  mutable std::atomic<int> depth{0};
  /// How many values materializations had attached when `depth` was last computed: while none has been since, a
  /// recomputation would find the same.
  mutable std::atomic<std::uint64_t> depth_epoch{0};
  /// An estimate of the bytes of stored values (buffers, materialized nodes) that this node, unevaluated, keeps
  /// alive, past which bounded laziness materializes it (LAZYFUSE_MAX_PINNED_MIB; api/Array.cpp): the largest count
  /// among its lazy sources, plus what the others remember pinning and the stored sources, each value counted once
  /// among the last kPinnedLeaves remembered. A loop that reads a fresh array at every step grows it by that array
  /// each step; one that reads the same arrays again, or its state twice (x * x + x), does not. Set when the node
  /// is built; not part of its identity.
  static constexpr std::size_t kPinnedLeaves = 4;
  struct PinnedLeaf {
    std::uint64_t serial = 0; // of the stored node; 0: none
    std::int64_t bytes = 0;
  };
  std::int64_t pinned_bytes = 0;
  /// The largest stored value counted in pinned_bytes: a graph pinning a few values no larger than its inputs gains
  /// nothing from being stored early, so the bound asks for more than kPinnedLeaves of them (api/Array.cpp).
  std::int64_t pinned_largest = 0;
  /// The stored values counted in pinned_bytes most recently, most recent first.
  std::array<PinnedLeaf, kPinnedLeaves> pinned_leaves{};
  /// Scratch of a graph walk that numbers nodes (runtime/PlanCache.cpp): the walk's id for this node, valid while
  /// walk_epoch is that walk's. Only touched under the runtime's evaluation lock.
  mutable std::uint64_t walk_epoch = 0;
  mutable int walk_id = -1;
  /// Of a materialized integer value in storage that is not external: the smallest axis size that a gather's
  /// bounds check has found every element of it to index validly (NumPy's rule: in [-size, size)), so that a kernel
  /// checking it against an axis at least that long cannot fail and need not be waited for (runtime/Materialize.cpp).
  /// The largest int64: nothing known.
  std::atomic<std::int64_t> known_index_bound{std::numeric_limits<std::int64_t>::max()};

  std::int64_t size() const;
  std::int64_t ndim() const { return std::int64_t(shape.size()); }

  // ---- sources and materialization (guarded; see the notes in Node.cpp) ----
  /// The sources, empty once the node is materialized.
  std::vector<NodePtr> sources() const;
  /// The sources without a copy. Only for code that holds the runtime's evaluation lock (partitioning and
  /// lowering): set_buffer, the only writer, runs under that lock too.
  std::span<const NodePtr> sources_unlocked() const { return srcs_.span(); }
  /// The buffer holding the value, or null.
  std::shared_ptr<const BufferView> buffer() const;
  /// The same without a lock or a reference count, under the evaluation lock (see sources_unlocked).
  const BufferView* buffer_unlocked() const { return buffer_.get(); }
  /// Whether a buffer is attached. Lock-free: asked for every source of every node built.
  bool materialized() const { return materialized_.load(std::memory_order_acquire); }
  /// Attaches the value and drops the sources, so a loop `x = f(x); x.eval();` keeps no history alive.
  void set_buffer(std::shared_ptr<const BufferView> view);

  /// Only intern() builds nodes (the key is its own).
  class Key {
    friend NodePtr intern(NodeSpec&& spec, SourceList&& srcs, std::shared_ptr<const BufferView> buffer);
    Key() = default;
  };
  Node(Key, NodeSpec&& spec, SourceList&& srcs, std::shared_ptr<const BufferView>&& buffer) noexcept
      : NodeSpec(std::move(spec)), srcs_(std::move(srcs)), buffer_(std::move(buffer)),
        materialized_(buffer_ != nullptr) {}
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

private:
  friend NodePtr intern(NodeSpec&& spec, SourceList&& srcs, std::shared_ptr<const BufferView> buffer);
  friend class WeakNodePtr;
  friend class ReleaseBatch;
  /// Moves the sources to `sink`: a dead node's, while it waits in its release batch to leave the intern table.
  template <class Sink> void drain_sources(Sink&& sink) { srcs_.drain(std::forward<Sink>(sink)); }
  /// A new reference, unless the count already reached 0: the node is then dead and waits in its release batch to
  /// leave the intern table. Only under the table's lock, which keeps the node's memory valid.
  NodePtr try_reference() noexcept;
  mutable std::mutex mutex_;
  SourceList srcs_;
  std::shared_ptr<const BufferView> buffer_;
  std::atomic<bool> materialized_{false}; // buffer_ != nullptr, set after buffer_ under mutex_
  Node* next_dead_ = nullptr;             // the next dead node of its release batch (graph/Node.cpp)
};

/// Returns the node structurally equal to `spec` over `srcs` (and `buffer`, for Buffer nodes), creating it if
/// none is alive. Fills in hash, serial, depth and src_serials.
NodePtr intern(NodeSpec&& spec, SourceList&& srcs, std::shared_ptr<const BufferView> buffer = nullptr);

inline NodePtr::NodePtr(Node* node) noexcept : node_(node) {
  if (node_) node_->count_.fetch_add(1, std::memory_order_relaxed);
}
inline NodePtr NodePtr::adopt(Node* created) noexcept {
  NodePtr p;
  p.node_ = created;
  return p;
}
inline Node* NodePtr::get() const noexcept {
  return static_cast<Node*>(node_);
}

/// A reference to a node that does not keep it alive: lock() returns the node while something else holds it, and
/// null once it died (its address may hold another node by then; its serial never does).
class WeakNodePtr {
public:
  WeakNodePtr() = default;
  explicit WeakNodePtr(const Node& node) noexcept : node_(&node), hash_(node.hash), serial_(node.serial) {}
  /// The node if it is alive: looked up in the intern table (which a node leaves, under its lock, when it dies)
  /// by its hash and then its address and serial.
  NodePtr lock() const;

private:
  const Node* node_ = nullptr;
  std::uint64_t hash_ = 0, serial_ = 0;
};

/// A copy of `shape`, made in the storage of a shape this thread took from a node that died. Recording a chain and
/// dropping it allocates and frees one shape per node in bursts of thousands, which malloc serves slowly once its
/// per-thread cache (7 blocks a size) is spent. For the builders of the nodes recorded most (graph/Build.cpp).
Shape copy_shape(const Shape& shape);
/// An empty shape in the storage of one this thread took from a node that died (as copy_shape), for a builder that
/// computes its node's shape axis by axis (views, slice assignments).
Shape recycled_shape();

/// Number of live nodes (for tests of memory flatness).
std::size_t live_node_count();

/// Row-major strides (in elements) of a contiguous array of `shape`.
std::vector<std::int64_t> contiguous_strides(const Shape& shape);
/// Whether `view` holds an array of `shape` in C order without gaps: its strides are contiguous_strides(shape) on
/// every axis longer than 1 (a size-1 axis is never stepped along, so its stride does not matter). The offset may
/// be anything. Allocates nothing: lowering asks it for every buffer it reads.
bool is_contiguous(const BufferView& view, const Shape& shape);
std::int64_t shape_size(const Shape& shape);
/// "(3, 4)"
std::string format_shape(const Shape& shape);
/// "a (3, 4) float32" for error messages.
std::string describe(std::string_view name, const Node& n);

} // namespace lazyfuse::graph
