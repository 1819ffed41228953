#include "graph/Node.h"

#include "graph/Assert.h"
#include "graph/FlatTable.h"
#include "graph/Hash.h"
#include "graph/SpinLock.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <sstream>
#include <type_traits>
#include <utility>

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define LAZYFUSE_NODE_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAZYFUSE_NODE_POOL_ASAN 1
#endif
#endif

namespace lazyfuse::graph {

std::uint64_t Storage::next_serial() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

std::string_view kind_name(NodeKind k) {
  switch (k) {
  case NodeKind::Buffer: return "buffer";
  case NodeKind::Fill: return "fill";
  case NodeKind::Iota: return "iota";
  case NodeKind::Unary: return "unary";
  case NodeKind::Binary: return "binary";
  case NodeKind::Where: return "where";
  case NodeKind::Cast: return "cast";
  case NodeKind::AxisMap: return "axis_map";
  case NodeKind::Reshape: return "reshape";
  case NodeKind::Roll: return "roll";
  case NodeKind::SetSlice: return "set_slice";
  case NodeKind::Reduce: return "reduce";
  case NodeKind::Random: return "random";
  case NodeKind::Matmul: return "matmul";
  case NodeKind::Gather: return "gather";
  case NodeKind::Scan: return "scan";
  case NodeKind::Sort: return "sort";
  case NodeKind::BinCount: return "bincount";
  }
  return "?";
}

namespace {

// How many values materializations have attached to nodes (set_buffer). A node records the count it was built at:
// while no value has been attached since, its depth is still exact.
std::atomic<std::uint64_t> g_attached_values{0};

// The intern table: (hash, node) entries in a FlatTable, so interning allocates nothing but the node. Entries are raw
// pointers: a dead node's release batch removes it, under the same lock that lookups hold, before destroying it, so
// a pointer found here always refers to an object whose compared fields are intact (possibly one whose last
// reference went away: Node::try_reference fails for those and they are skipped).
// Every node is in the table while it lives, so its size is the live count; serial numbers are given under its lock.
struct InternTable {
  SpinLock lock;
  FlatTable<Node*> nodes;
  std::uint64_t last_serial = 0;
};

InternTable& table() {
  static auto* t = new InternTable; // never destroyed: nodes may outlive static destruction order
  return *t;
}

bool same_double(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool same_structure(const Node& a, const NodeSpec& b, const std::array<std::uint64_t, Node::kMaxSources>& b_src_serials,
                    const BufferView* buffer_b) {
  if (a.kind != b.kind || a.dtype != b.dtype || a.op != b.op || a.shape != b.shape) return false;
  if (!same_double(a.fvalue, b.fvalue) || !same_double(a.fimag, b.fimag) || a.ivalue != b.ivalue ||
      !same_double(a.fstep, b.fstep) || a.shift != b.shift)
    return false;
  if (a.axes != b.axes || a.region != b.region || a.reduce_axes != b.reduce_axes || a.src_serials != b_src_serials)
    return false;
  if (a.kind == NodeKind::Buffer) {
    auto ba = a.buffer();
    if (!ba || !buffer_b) return false;
    return ba->storage->serial == buffer_b->storage->serial && ba->offset == buffer_b->offset &&
           ba->strides == buffer_b->strides;
  }
  return true;
}

std::uint64_t structural_hash(const NodeSpec& n, std::span<const NodePtr> srcs, const BufferView* buffer) {
  // Runs for every node built; the intern table compares candidates in full.
  FastHasher h;
  h.add(std::uint64_t(n.kind) | std::uint64_t(n.dtype) << 8 | std::uint64_t(std::uint32_t(n.op)) << 16 |
        std::uint64_t(n.shape.size()) << 48);
  for (auto d : n.shape) h.add(std::uint64_t(d));
  h.add_double(n.fvalue);
  h.add_double(n.fimag);
  h.add(std::uint64_t(n.ivalue));
  h.add_double(n.fstep);
  h.add(std::uint64_t(n.shift));
  for (auto& a : n.axes) {
    h.add(std::uint64_t(std::int64_t(a.view_axis)));
    h.add(std::uint64_t(a.start));
    h.add(std::uint64_t(a.step));
  }
  for (auto& r : n.region) {
    h.add(std::uint64_t(r.start));
    h.add(std::uint64_t(r.step));
    h.add(std::uint64_t(r.count));
  }
  for (auto ax : n.reduce_axes) h.add(std::uint64_t(ax) + 0x1000);
  for (auto& s : srcs) h.add(s->hash);
  if (buffer) {
    h.add(std::uint64_t(buffer->offset));
    for (auto s : buffer->strides) h.add(std::uint64_t(s));
  }
  return h.value();
}

std::uint64_t summarize(const Node& n) {
  LAZYFUSE_ASSERT(n.op >= 0 && n.op < 0x10000 && n.shape.size() < 0x100 && n.sources_unlocked().size() < 0x100,
                  "a node's op, rank or source count outside its field of Node::summary");
  std::uint64_t s = std::uint64_t(n.kind) | std::uint64_t(n.dtype) << 8 | std::uint64_t(n.op) << 16 |
                    std::uint64_t(n.shape.size()) << 32 | std::uint64_t(n.sources_unlocked().size()) << 40;
  if (n.ivalue != 0) s |= Node::kHasIvalue;
  if (bits_of(n.fvalue) != 0) s |= Node::kHasFvalue;
  if (bits_of(n.fstep) != 0) s |= Node::kHasFstep;
  if (n.shift != 0) s |= Node::kHasShift;
  if (!n.axes.empty()) s |= Node::kHasAxes;
  if (!n.region.empty()) s |= Node::kHasRegion;
  if (!n.reduce_axes.empty()) s |= Node::kHasReduceAxes;
  return s;
}

struct FreeBlock {
  FreeBlock* next;
};

// What this thread keeps for recording and releasing nodes: its free node blocks (BlockPool), the shapes of dead
// nodes (copy_shape), its release in progress. One thread-local of a trivially destructible type, and functions
// that record or release take its address once: in a shared library every thread-local read is a call of
// __tls_get_addr, and with a variable each there were 17 a node recorded and released (8% of the instructions).
// TLS descriptors (-mtls-dialect=gnu2) would make each read cheap, but glibc before 2.39 clobbers vector registers
// in their slow path, taken by a library opened with dlopen (glibc bug 31372): a silent error in the caller. What
// needs freeing at the thread's end is freed by ThreadCacheOwner, after which the state says kGone, still readable (a
// static Array may die after its thread's thread-locals).
struct ThreadCache {
  FreeBlock* free_nodes = nullptr; // node blocks this thread freed, kept for its next nodes
  std::size_t kept_nodes = 0;
  std::vector<Shape>* shapes = nullptr; // dead nodes' shapes, for copy_shape; made at the first
  ReleaseBatch* release = nullptr;      // this thread's release in progress (release_in_batch)
  enum State : std::uint8_t { kNew, kOwned, kGone };
  State state = kNew; // kOwned once ThreadCacheOwner is constructed, kGone once it is destroyed
};
static_assert(std::is_trivially_destructible_v<ThreadCache>);
constinit thread_local ThreadCache t_cache;

ThreadCache* own_thread_cache(ThreadCache* cache);
// This thread's cache, or null once its thread-locals are being destroyed.
inline ThreadCache* thread_cache() {
  ThreadCache* cache = &t_cache;
  if (cache->state != ThreadCache::kOwned) [[unlikely]]
    return own_thread_cache(cache);
  return cache;
}

// Memory for nodes. Recording and dropping a chain allocates and frees thousands of these blocks in bursts; through
// malloc, freeing a burst gave the top of the heap back to the system and the next burst took it again (18,000 brk
// calls in bench_host's BM_RecordMany). Freed blocks are kept instead: up to 4 MiB in a list of the freeing thread,
// taken and filled without an atomic instruction (a lock's two cost as much as the rest of a block's way), and past
// that up to 16 MiB in a locked list that every thread shares (nodes are built and freed on any thread).
//
// New blocks are carved from slabs of 256 KiB, committed with their pages already mapped (MAP_POPULATE), in a region
// of 16 MiB reserved at the first node. A fresh process's first call records thousands of nodes (issue 19: a first
// call from the disk cache), and there recording 2,000 nodes took 3.5 times as long as in a warm process; blocks from
// malloc, one at a time, their pages faulted in one by one, were a quarter of that. Slab blocks are always kept when
// freed (the region bounds them); once it is used up, blocks come from operator new and go back to it past the
// 16 MiB kept.
template <std::size_t Bytes> class BlockPool {
public:
  // `local`: this thread's cache (null once it is gone), whose list holds blocks of this pool's size.
  static void* allocate(ThreadCache* local) {
    if (local)
      if (FreeBlock* b = local->free_nodes) {
        local->free_nodes = b->next;
        --local->kept_nodes;
        return b;
      }
    return Shared::instance().allocate();
  }
  static void deallocate(ThreadCache* local, void* p) {
    if constexpr (kMaxKept > 0) {
      if (local && local->kept_nodes < kMaxKeptLocally) {
        auto* b = static_cast<FreeBlock*>(p);
        b->next = local->free_nodes;
        local->free_nodes = b;
        ++local->kept_nodes;
        return;
      }
    }
    Shared::instance().deallocate(p);
  }
  // At a thread's end: its kept blocks go to the list every thread shares.
  static void give_back(ThreadCache& local) {
    while (FreeBlock* b = local.free_nodes) {
      local.free_nodes = b->next;
      Shared::instance().deallocate(b);
    }
    local.kept_nodes = 0;
  }

private:
  static_assert(Bytes >= sizeof(FreeBlock));
#ifdef LAZYFUSE_NODE_POOL_ASAN
  static constexpr std::size_t kMaxKept = 0; // every freed node goes to ASan, which catches a use after free
#else
  static constexpr std::size_t kMaxKept = (std::size_t(16) << 20) / Bytes;
#endif
  static constexpr std::size_t kMaxKeptLocally = (std::size_t(4) << 20) / Bytes;

  class Shared {
  public:
    static Shared& instance() {
      static auto* pool = new Shared; // never destroyed: nodes may die during static destruction
      return *pool;
    }
    void* allocate() {
      FreeBlock* b;
      {
        std::lock_guard lock(lock_);
        if (!free_) carve_slab();
        b = free_;
        if (b) {
          free_ = b->next;
          --kept_;
        }
      }
      return b ? b : ::operator new(Bytes);
    }
    void deallocate(void* p) {
      if constexpr (kMaxKept > 0) {
        std::lock_guard lock(lock_);
        if (kept_ < kMaxKept || in_region(p)) {
          auto* b = static_cast<FreeBlock*>(p);
          b->next = free_;
          free_ = b;
          ++kept_;
          return;
        }
      }
      ::operator delete(p);
    }

  private:
    static constexpr std::size_t kSlabBytes = std::size_t(256) << 10, kRegionBytes = std::size_t(16) << 20;
    // Blocks a whole number of cache lines apart, and an odd number of them: at a power-of-two stride (a 512-byte
    // node) the same field of every node would fall in the same few cache sets, and walks over thousands of nodes
    // (a plan-cache hit's signature, a release) would evict each other's lines.
    static constexpr std::size_t kLine = 64, kStride = ((Bytes + kLine - 1) / kLine | 1) * kLine;

    bool in_region(const void* p) const {
      const auto* c = static_cast<const char*>(p);
      return region_ && c >= region_ && c < region_ + kRegionBytes;
    }
    // Puts a new slab's blocks on the free list, while the region lasts (under lock_). Not in ASan builds, where
    // every block comes from operator new so that a use after free is caught.
    void carve_slab() {
      if constexpr (kMaxKept > 0) {
        if (!region_ && !region_failed_) {
          void* r = mmap(nullptr, kRegionBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
          region_failed_ = r == MAP_FAILED;
          if (!region_failed_) region_ = static_cast<char*>(r);
        }
        if (!region_ || committed_ + kSlabBytes > kRegionBytes) return;
        char* slab = region_ + committed_;
        if (mmap(slab, kSlabBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | kPopulate, -1,
                 0) == MAP_FAILED)
          return;
        committed_ += kSlabBytes;
        for (std::size_t k = kSlabBytes / kStride; k-- > 0;) {
          auto* b = reinterpret_cast<FreeBlock*>(slab + k * kStride);
          b->next = free_;
          free_ = b;
          ++kept_;
        }
      }
    }
#ifdef MAP_POPULATE
    static constexpr int kPopulate = MAP_POPULATE;
#else
    static constexpr int kPopulate = 0;
#endif

    SpinLock lock_;
    FreeBlock* free_ = nullptr;
    std::size_t kept_ = 0;
    char* region_ = nullptr; // the reserved slab region, its first committed_ bytes usable
    std::size_t committed_ = 0;
    bool region_failed_ = false;
  };
};

// At a thread's end: its node blocks go to the shared list and its shapes are freed; the cache is then gone.
struct ThreadCacheOwner {
  ~ThreadCacheOwner() {
    ThreadCache& cache = t_cache;
    cache.state = ThreadCache::kGone;
    BlockPool<sizeof(Node)>::give_back(cache);
    delete std::exchange(cache.shapes, nullptr);
  }
};
// thread_cache()'s first call on a thread, and its calls once the cache is gone. Out of line: the common path
// keeps the cache's address in a register.
[[gnu::noinline]] ThreadCache* own_thread_cache(ThreadCache* cache) {
  if (cache->state == ThreadCache::kGone) return nullptr;
  thread_local ThreadCacheOwner owner; // constructed here, once a thread; destroyed at the thread's end
  (void)owner;
  cache->shapes = new std::vector<Shape>;
  cache->state = ThreadCache::kOwned;
  return cache;
}

// The cache for a release: this thread's if it has one. A release never makes one (it may run while the thread's
// thread-locals are destroyed, where none may be made).
ThreadCache* releasing_cache() {
  ThreadCache* cache = &t_cache;
  return cache->state == ThreadCache::kOwned ? cache : nullptr;
}

// References being dropped by a release in progress: a node whose last reference goes parks its sources here, and
// the outermost release drops them in a loop, so a chain of a million nodes is freed without a million nested
// destructor calls. Last in, first out: a chain keeps only a few parked at a time, which stay inline; a wide tree
// spills into a vector.
class ReleaseStack {
public:
  void push(NodePtr n) {
    if (inline_count_ < inline_.size())
      inline_[inline_count_++] = std::move(n);
    else
      spill_.push_back(std::move(n));
  }
  NodePtr pop() {
    if (!spill_.empty()) {
      NodePtr n = std::move(spill_.back());
      spill_.pop_back();
      return n;
    }
    return inline_count_ ? std::move(inline_[--inline_count_]) : nullptr;
  }

private:
  std::array<NodePtr, 8> inline_;
  std::size_t inline_count_ = 0;
  std::vector<NodePtr> spill_;
};

} // namespace

// A release in progress on this thread: the references still to drop, and the nodes that died meanwhile. A dead
// node drops its sources at once (a lookup never reads them: it compares the sources' serial numbers) but keeps the
// fields that lookups compare, and stays in the intern table, where lookups skip it (Node::try_reference fails at a
// count of 0), until the batch leaves the table together under one lock and is then destroyed: a released chain
// of 2,000 nodes takes the lock 4 times, not 2,000 (issue 19: host cost). A thread finds its batch through
// ThreadCache::release, readable also once the cache is gone (a static Array may die after the thread's end).
class ReleaseBatch {
public:
  // Bounds how long other threads wait for the table's lock, and how long dead nodes' fields outlive them.
  static constexpr std::size_t kMaxDead = 512;

  void drop(NodePtr&& n) { pending_.push(std::move(n)); }
  void add_dead(Node* node) noexcept {
    node->drain_sources([this](NodePtr&& n) { drop(std::move(n)); });
    node->next_dead_ = dead_;
    dead_ = node;
    ++dead_count_;
  }
  // Drops every reference and frees every node that died of it.
  void run() noexcept {
    for (;;) {
      while (NodePtr n = pending_.pop()) {
        n.reset();
        if (dead_count_ >= kMaxDead) free_dead();
      }
      if (!dead_) return;
      free_dead();
    }
  }

private:
  void free_dead() noexcept;
  ReleaseStack pending_;
  Node* dead_ = nullptr;
  std::size_t dead_count_ = 0;
};
namespace {
// Runs `start` (which drops references into the batch) in this thread's release in progress, or in a new one that
// it then runs to the end. (t_cache.release is read also once the cache is gone.)
template <class Start> void release_in_batch(Start&& start) noexcept {
  ThreadCache& cache = t_cache;
  if (ReleaseBatch* outer = cache.release) {
    start(*outer);
    return;
  }
  ReleaseBatch batch;
  cache.release = &batch;
  start(batch);
  batch.run();
  cache.release = nullptr;
}

// Shapes of dead nodes, kept for copy_shape (up to 4,096 a thread, each of at most 8 axes' storage).
constexpr std::size_t kShapesKept = 4096, kShapeCapacityKept = 8;

void recycle_shape(ThreadCache* cache, Shape&& shape) {
  if (!cache || shape.capacity() == 0 || shape.capacity() > kShapeCapacityKept) return;
  auto& bin = *cache->shapes;
  if (bin.size() < kShapesKept) bin.push_back(std::move(shape));
}

void release_iteratively(SourceList&& sources) {
  if (sources.empty()) return;
  release_in_batch(
      [&sources](ReleaseBatch& batch) { sources.drain([&batch](NodePtr&& n) { batch.drop(std::move(n)); }); });
}

} // namespace

SourceList::SourceList(std::initializer_list<NodePtr> srcs) {
  LAZYFUSE_ASSERT_LE(srcs.size(), kCapacity, "a node with more sources than SourceList::kCapacity");
  for (const NodePtr& n : srcs) emplace(NodePtr(n));
}

SourceList::SourceList(NodePtr&& first, NodePtr&& second) noexcept {
  emplace(std::move(first));
  emplace(std::move(second));
}

SourceList::SourceList(std::vector<NodePtr>&& srcs) {
  LAZYFUSE_ASSERT_LE(srcs.size(), kCapacity, "a node with more sources than SourceList::kCapacity");
  for (NodePtr& n : srcs) emplace(std::move(n));
}

SourceList::SourceList(SourceList&& other) noexcept {
  other.drain([this](NodePtr&& n) { emplace(std::move(n)); });
}

SourceList& SourceList::operator=(SourceList&& other) noexcept {
  if (this == &other) return *this;
  clear();
  other.drain([this](NodePtr&& n) { emplace(std::move(n)); });
  return *this;
}

void SourceList::clear() noexcept {
  NodePtr* items = mutable_begin();
  for (std::size_t k = count_; k-- > 0;) items[k].~NodePtr();
  count_ = 0;
}

void SourceList::push_back(NodePtr n) {
  LAZYFUSE_ASSERT_LT(std::size_t(count_), kCapacity, "a node with more sources than SourceList::kCapacity");
  emplace(std::move(n));
}

std::int64_t Node::size() const {
  return shape_size(shape);
}

std::vector<NodePtr> Node::sources() const {
  std::lock_guard lock(mutex_);
  return {srcs_.begin(), srcs_.end()};
}

std::shared_ptr<const BufferView> Node::buffer() const {
  std::lock_guard lock(mutex_);
  return buffer_;
}

void Node::set_buffer(std::shared_ptr<const BufferView> view) {
  SourceList dropped;
  {
    std::lock_guard lock(mutex_);
    buffer_ = std::move(view);
    materialized_.store(buffer_ != nullptr, std::memory_order_release);
    dropped = std::move(srcs_);
  }
  g_attached_values.fetch_add(1, std::memory_order_acq_rel);
  release_iteratively(std::move(dropped));
}

NodePtr Node::try_reference() noexcept {
  std::uint32_t count = count_.load(std::memory_order_relaxed);
  while (count != 0)
    if (count_.compare_exchange_weak(count, count + 1, std::memory_order_relaxed)) return NodePtr::adopt(this);
  return nullptr;
}

NodePtr WeakNodePtr::lock() const {
  if (!node_) return nullptr;
  auto& t = table();
  std::lock_guard guard(t.lock);
  NodePtr alive;
  t.nodes.find(hash_, [&](Node* candidate) {
    if (candidate != node_ || candidate->serial != serial_) return false;
    alive = candidate->try_reference();
    return true;
  });
  return alive;
}

void destroy_node(NodeReferences* references) noexcept {
  Node* node = static_cast<Node*>(references);
  release_in_batch([node](ReleaseBatch& batch) { batch.add_dead(node); });
}

void ReleaseBatch::free_dead() noexcept {
  Node* dead = std::exchange(dead_, nullptr);
  dead_count_ = 0;
  {
    auto& t = table();
    std::lock_guard guard(t.lock);
    for (Node* n = dead; n; n = n->next_dead_) {
      [[maybe_unused]] const bool erased = t.nodes.erase(n->hash, [n](const Node* entry) { return entry == n; });
      LAZYFUSE_ASSERT(erased, "a dead node missing from the intern table");
    }
  }
  ThreadCache* cache = releasing_cache();
  while (Node* n = dead) {
    dead = n->next_dead_;
    recycle_shape(cache, std::move(n->shape));
    n->~Node();
    BlockPool<sizeof(Node)>::deallocate(cache, n);
  }
}

Node::~Node() {
  LAZYFUSE_ASSERT(srcs_.empty(), "a node destroyed outside a release batch");
}

namespace {
// The depth a consumer counts for its source `s`: laziness is bounded by what is still to compute, so a materialized
// source is a leaf (0). A depth recorded before some values were attached may count nodes that are stored now: a
// check inside a time loop evaluates a norm of the state, stores the steps before it, and the step it computed
// inside the norm keeps the depth it was built with; counting that depth would cut the loop again a few steps later.
// So a stale depth is recomputed from the sources, visiting at most `budget` nodes (beyond it, the recorded depth,
// which is never less than the true one, stands), and remembered on the node, so that its other consumers built
// before the next materialization read it at once. Any bound once computed stays valid, so racing writers are fine.
int recompute_depth(const Node& s, std::uint64_t attached, int& budget, int recorded);
inline int depth_to_compute(const Node& s, std::uint64_t attached, int& budget) {
  if (s.materialized()) return 0;
  const int recorded = s.depth.load(std::memory_order_relaxed);
  if (recorded <= 1 || s.depth_epoch.load(std::memory_order_acquire) == attached || budget <= 0) return recorded;
  return recompute_depth(s, attached, budget, recorded);
}
// depth_to_compute's walk, out of line: interning a node asks for its sources' depths, nearly always exact.
int recompute_depth(const Node& s, std::uint64_t attached, int& budget, int recorded) {
  --budget;
  int depth = 0;
  for (const NodePtr& src : s.sources()) depth = std::max(depth, depth_to_compute(*src, attached, budget) + 1);
  depth = std::min(depth, recorded);
  // Stamped even when the budget cut the walk short: the bound stays valid, and the next materialization makes it
  // worth another walk.
  s.depth.store(depth, std::memory_order_relaxed);
  s.depth_epoch.store(attached, std::memory_order_release);
  return depth;
}
constexpr int kDepthRecomputeBudget = 64;

struct PinnedEstimate {
  std::int64_t bytes = 0, largest = 0;
  std::array<Node::PinnedLeaf, Node::kPinnedLeaves> leaves{};

  // Counts a stored value unless it is remembered as counted (saturating).
  void add(const Node::PinnedLeaf& leaf) {
    largest = std::max(largest, leaf.bytes);
    for (const auto& l : leaves)
      if (l.serial == leaf.serial) return;
    bytes = leaf.bytes > std::numeric_limits<std::int64_t>::max() - bytes ? std::numeric_limits<std::int64_t>::max()
                                                                          : bytes + leaf.bytes;
    std::copy_backward(leaves.begin(), leaves.end() - 1, leaves.end());
    leaves.front() = leaf;
  }
};
// Node::pinned_bytes of a node over `srcs`.
PinnedEstimate estimate_pinned(const SourceList& srcs) {
  PinnedEstimate e;
  const Node* largest = nullptr;
  for (const NodePtr& s : srcs)
    if (!s->materialized() && s->pinned_bytes > e.bytes) {
      e.bytes = s->pinned_bytes;
      e.leaves = s->pinned_leaves;
      largest = s.get();
    }
  for (const NodePtr& s : srcs) {
    if (s.get() == largest) {
      e.largest = std::max(e.largest, s->pinned_largest);
      continue;
    }
    if (s->materialized()) {
      e.add({s->serial, s->size() * std::int64_t(itemsize(s->dtype))});
      continue;
    }
    if (s->pinned_bytes == 0) continue; // pins nothing (a fill, a lazy view of one)
    e.largest = std::max(e.largest, s->pinned_largest);
    for (const auto& l : s->pinned_leaves)
      if (l.serial != 0) e.add(l);
  }
  return e;
}
} // namespace

NodePtr intern(NodeSpec&& spec, SourceList&& srcs, std::shared_ptr<const BufferView> buffer) {
  std::array<std::uint64_t, Node::kMaxSources> src_serials{};
  int depth = 0, budget = kDepthRecomputeBudget;
  const std::uint64_t attached = g_attached_values.load(std::memory_order_acquire);
  for (std::size_t k = 0; k < srcs.size(); ++k) {
    const NodePtr& s = srcs[k];
    LAZYFUSE_ASSERT(s != nullptr, "null source node");
    src_serials[k] = s->serial;
    depth = std::max(depth, depth_to_compute(*s, attached, budget) + 1);
  }
  const std::uint64_t hash = structural_hash(spec, srcs.span(), buffer.get());
  const PinnedEstimate pinned = estimate_pinned(srcs);

  ThreadCache* cache = thread_cache();
  auto& t = table();
  std::lock_guard guard(t.lock);
  NodePtr alive;
  t.nodes.find(hash, [&](Node* candidate) {
    if (!same_structure(*candidate, spec, src_serials, buffer.get())) return false;
    alive = candidate->try_reference();
    return alive != nullptr;
  });
  if (alive) {
    recycle_shape(cache, std::move(spec.shape));
    return alive;
  }
  static_assert(alignof(Node) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "node blocks come from plain operator new");
  void* block = BlockPool<sizeof(Node)>::allocate(cache);
  // The entry first: its growth may throw, and a node destroyed now would wait for the lock this thread holds.
  try {
    t.nodes.insert(hash, static_cast<Node*>(block));
  } catch (...) {
    BlockPool<sizeof(Node)>::deallocate(cache, block);
    throw;
  }
  NodePtr node = NodePtr::adopt(::new (block) Node(Node::Key(), std::move(spec), std::move(srcs), std::move(buffer)));
  node->src_serials = src_serials;
  node->hash = hash;
  node->summary = summarize(*node);
  // Not yet shared: plain stores (an assignment to an atomic is a sequentially consistent store, a locked
  // instruction).
  node->depth.store(depth, std::memory_order_relaxed);
  node->depth_epoch.store(attached, std::memory_order_relaxed);
  node->pinned_bytes = pinned.bytes;
  node->pinned_largest = pinned.largest;
  node->pinned_leaves = pinned.leaves;
  node->serial = ++t.last_serial;
  return node;
}

Shape recycled_shape() {
  ThreadCache* cache = thread_cache();
  if (!cache || cache->shapes->empty()) return {};
  Shape shape = std::move(cache->shapes->back());
  cache->shapes->pop_back();
  shape.clear();
  return shape;
}

Shape copy_shape(const Shape& shape) {
  Shape copy = recycled_shape();
  copy.assign(shape.begin(), shape.end());
  return copy;
}

std::size_t live_node_count() {
  auto& t = table();
  std::lock_guard guard(t.lock);
  return t.nodes.size();
}

std::vector<std::int64_t> contiguous_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

bool is_contiguous(const BufferView& view, const Shape& shape) {
  LAZYFUSE_ASSERT_EQ(view.strides.size(), shape.size(),
                     "is_contiguous: a view with one stride per axis of another shape");
  std::int64_t expect = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && view.strides[i] != expect) return false;
    expect *= std::max<std::int64_t>(shape[i], 1);
  }
  return true;
}

std::int64_t shape_size(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string format_shape(const Shape& shape) {
  std::ostringstream os;
  os << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) os << ", ";
    os << shape[i];
  }
  if (shape.size() == 1) os << ',';
  os << ')';
  return os.str();
}

std::string describe(std::string_view name, const Node& n) {
  std::string s(name);
  s += " ";
  s += format_shape(n.shape);
  s += " ";
  s += dtype_name(n.dtype);
  return s;
}

} // namespace lazyfuse::graph
