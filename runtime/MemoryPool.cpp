#include "runtime/MemoryPool.h"

#include "graph/Config.h"

#include "graph/Assert.h"
#include "runtime/CudaApi.h"
#include "runtime/Streams.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>
#include <utility>

namespace lazyfuse::runtime {
namespace {

namespace cu = cuda;

// Stream keys that no real stream handle can have. kAnyStream: free and idle, reusable by every stream (fresh
// memory, or blocks whose event completed). kPendingStream: freed on a stream whose work may still use it,
// waiting for an event; such blocks are in no free set and never merge.
const cudaStream_t kAnyStream = reinterpret_cast<cudaStream_t>(~std::uintptr_t{0});
const cudaStream_t kPendingStream = reinterpret_cast<cudaStream_t>(~std::uintptr_t{1});

std::uintptr_t as_int(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p);
}

constexpr std::size_t round_up(std::size_t n, std::size_t to) noexcept {
  return (n + to - 1) / to * to;
}

// The process-wide pools, created on first use and never destroyed: CUDA may already be torn down when static
// destructors run, and buffers in other static objects may still point into them.
struct Registry {
  explicit Registry(int n) : count(n), pools(new std::atomic<MemoryPool*>[n]) {
    for (int i = 0; i < n; ++i) pools[i].store(nullptr, std::memory_order_relaxed);
  }
  const int count;
  std::unique_ptr<std::atomic<MemoryPool*>[]> pools;
  std::mutex create_mutex;
};

Registry& registry() {
  static Registry* r = new Registry(cu::availability().device_count);
  return *r;
}

} // namespace

struct MemoryPool::Block {
  char* ptr = nullptr;
  std::size_t size = 0;
  // The free-set key: the stream the block was last freed on, kAnyStream or kPendingStream; while allocated,
  // the stream it was allocated for (informational).
  cudaStream_t stream = nullptr;
  bool small = false;
  bool allocated = false;
  // Neighbours in the same cudaMalloc'ed segment, by address. The first block of a segment (prev == nullptr)
  // always starts at the segment's base: splits keep the front and merges keep the lower block.
  Block* prev = nullptr;
  Block* next = nullptr;
  // While pending: completes when the work queued before the block's free is done. Shared by the blocks
  // retired together.
  std::shared_ptr<Event> ready;
};

struct MemoryPool::Key {
  std::uintptr_t stream;
  std::size_t size;
  std::uintptr_t ptr;
};

namespace {
// Free sets order blocks by (stream, size, address): lower_bound of (stream, n, 0) is then the best fit for n
// among that stream's blocks, and the lowest address among equals keeps reuse deterministic.
template <typename B> auto key_of(const B* b) noexcept {
  return std::tuple(as_int(b->stream), b->size, as_int(b->ptr));
}
template <typename K> auto key_tuple(const K& k) noexcept {
  return std::tuple(k.stream, k.size, k.ptr);
}
} // namespace

bool MemoryPool::BlockLess::operator()(const Block* a, const Block* b) const noexcept {
  return key_of(a) < key_of(b);
}
bool MemoryPool::BlockLess::operator()(const Block* a, const Key& b) const noexcept {
  return key_of(a) < key_tuple(b);
}
bool MemoryPool::BlockLess::operator()(const Key& a, const Block* b) const noexcept {
  return key_tuple(a) < key_of(b);
}

// ---- settings and formatting ------------------------------------------------------------------------------

std::size_t parse_memory_limit(std::string_view text, std::size_t device_total) {
  const config::MemoryLimit l = config::parse_memory_limit(text);
  if (l.percent > 0) return static_cast<std::size_t>(static_cast<long double>(device_total) * l.percent / 100.0L);
  if (l.bytes > std::numeric_limits<std::size_t>::max())
    throw Error("LAZYFUSE_GPU_MEMORY_LIMIT: '" + std::string(text) + "' is more bytes than this host can address");
  return static_cast<std::size_t>(l.bytes);
}

std::string format_bytes(std::size_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024.0;
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

PoolOptions PoolOptions::from_settings(int device) {
  const auto& cfg = config::snapshot();
  PoolOptions o;
  if (!cfg.pool_enabled) o.mode = PoolMode::PassThrough;
  // An invalid value from the environment is still here (fail closed): parsing it throws, so the pool is never
  // created without the limit the user asked for. Only a percent needs the device's size, hence a device.
  const config::MemoryLimit limit = config::parse_memory_limit(cfg.gpu_memory_limit);
  o.limit = parse_memory_limit(cfg.gpu_memory_limit, limit.percent > 0 ? cu::device_info(device).total_memory : 0);
  return o;
}

// ---- DeviceAllocation -------------------------------------------------------------------------------------

DeviceAllocation::DeviceAllocation(MemoryPool& pool, std::size_t bytes, cudaStream_t stream)
    : pool_(&pool), ptr_(pool.allocate(bytes, stream)), bytes_(bytes), stream_(stream) {}

DeviceAllocation::DeviceAllocation(DeviceAllocation&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)), stream_(std::exchange(other.stream_, nullptr)) {}

DeviceAllocation& DeviceAllocation::operator=(DeviceAllocation&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = std::exchange(other.pool_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void DeviceAllocation::reset() noexcept {
  if (ptr_) pool_->deallocate(ptr_, stream_);
  ptr_ = nullptr;
  bytes_ = 0;
}

// ---- MemoryPool: process-wide instances -------------------------------------------------------------------

MemoryPool& MemoryPool::for_device(int ordinal) {
  cu::require_available("memory pool");
  Registry& r = registry();
  if (ordinal < 0 || ordinal >= r.count)
    throw BackendError("memory pool: device " + std::to_string(ordinal) + " does not exist (" +
                       std::to_string(r.count) + " visible)");
  if (MemoryPool* p = r.pools[ordinal].load(std::memory_order_acquire)) return *p;
  std::lock_guard lock(r.create_mutex);
  if (MemoryPool* p = r.pools[ordinal].load(std::memory_order_relaxed)) return *p;
  auto* p = new MemoryPool(ordinal, PoolOptions::from_settings(ordinal));
  r.pools[ordinal].store(p, std::memory_order_release);
  return *p;
}

void MemoryPool::stream_destroyed(cudaStream_t stream) noexcept {
  if (!cu::availability().ok) return;
  Registry& r = registry();
  for (int i = 0; i < r.count; ++i)
    if (MemoryPool* p = r.pools[i].load(std::memory_order_acquire)) p->retire_stream(stream);
}

MemoryPool::MemoryPool(int device, PoolOptions options) : device_(device), mode_(options.mode) {
  limit_ = options.limit;
}

MemoryPool::~MemoryPool() {
  // Only whole free segments go back; a segment with a live block is left to the process' end rather than
  // pulled from under a buffer that someone still uses. cudaFree waits for the device, so pending blocks are
  // idle by then.
  {
    const cu::DeviceScope on(device_, std::nothrow);
    for (Block* head : segments_) {
      bool all_free = true;
      for (Block* b = head; b; b = b->next) all_free = all_free && !b->allocated;
      if (all_free) (void)cudaFree(head->ptr);
      for (Block* b = head; b;) delete std::exchange(b, b->next);
    }
  }
  (void)cudaGetLastError();
}

// ---- MemoryPool: allocation -------------------------------------------------------------------------------

void* MemoryPool::allocate(std::size_t bytes, cudaStream_t stream) {
  std::lock_guard lock(mutex_);
  return mode_ == PoolMode::Caching ? allocate_cached(bytes, stream) : allocate_pass_through(bytes);
}

void* MemoryPool::allocate_pass_through(std::size_t bytes) {
  const std::size_t n = std::max<std::size_t>(bytes, 1);
  std::string why;
  void* p = device_malloc(n, why);
  if (!p) throw_out_of_memory(bytes, why);
  pass_through_live_.emplace(p, n);
  note_used(n);
  ++stats_.allocations;
  return p;
}

void* MemoryPool::allocate_cached(std::size_t bytes, cudaStream_t stream) {
  if (bytes > std::numeric_limits<std::size_t>::max() - kLargeRound)
    throw_out_of_memory(bytes, "the request exceeds any device's memory");
  const std::size_t size = round_up(std::max<std::size_t>(bytes, 1), kRound);
  const bool small = size <= kSmallLimit;
  FreeSet& set = small ? small_free_ : large_free_;

  Block* b = take_free(set, stream, size);
  if (!b && !pending_.empty()) {
    collect_ready_blocks();
  }
  if (!b) b = take_free(set, kAnyStream, size);
  if (!b) b = take_from_other_streams(small, size, stream);
  const bool hit = b != nullptr;
  if (!b) {
    std::string why;
    b = new_segment(small, size, why);
    if (!b) {
      // Cached blocks of other streams, or half-empty segments of the other size class, may be all that stands
      // between us and the limit.
      release_cached_blocks();
      b = take_free(set, kAnyStream, size);
      if (!b) b = new_segment(small, size, why);
      if (!b) throw_out_of_memory(bytes, why);
    }
  }

  // Split off the tail when it is worth keeping: any whole size class in the small pool; in the large pool
  // only more than a small request, so that large blocks are not whittled into slivers.
  const std::size_t rest = b->size - size;
  if (small ? rest >= kRound : rest > kSmallLimit) {
    auto* tail = new Block;
    tail->ptr = b->ptr + size;
    tail->size = rest;
    tail->stream = b->stream; // still free in the same bucket as the block it came from
    tail->small = b->small;
    tail->prev = b;
    tail->next = b->next;
    if (b->next) b->next->prev = tail;
    b->next = tail;
    b->size = size;
    insert_free(tail);
  }
  b->allocated = true;
  b->stream = stream;
  LAZYFUSE_ASSERT_EQ(as_int(b->ptr) % kAlignment, 0, "pool block is not 256-byte aligned");
  live_.emplace(b->ptr, b);
  note_used(b->size);
  ++stats_.allocations;
  if (hit) ++stats_.cache_hits;
  return b->ptr;
}

MemoryPool::Block* MemoryPool::take_free(FreeSet& set, cudaStream_t stream, std::size_t size) {
  const auto it = set.lower_bound(Key{as_int(stream), size, 0});
  if (it == set.end() || (*it)->stream != stream) return nullptr;
  Block* b = *it;
  set.erase(it);
  return b;
}

MemoryPool::Block* MemoryPool::take_from_other_streams(bool small, std::size_t size, cudaStream_t stream) {
  // For each other stream holding a block that fits, retire that block behind an event recorded on its stream
  // now. The event comes later than the free, so it is conservative; recording it at every free would cost
  // every deallocate a CUDA call. Whether it is done already is checked at once and at later misses.
  FreeSet& set = small ? small_free_ : large_free_;
  const auto end_of_stream = [](cudaStream_t s) {
    return Key{as_int(s), std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::uintptr_t>::max()};
  };
  bool retired = false;
  for (auto it = set.begin(); it != set.end();) {
    const cudaStream_t s = (*it)->stream;
    if (s != stream && s != kAnyStream) {
      const auto fit = set.lower_bound(Key{as_int(s), size, 0});
      if (fit != set.end() && (*fit)->stream == s) {
        try {
          cu::DeviceScope on(device_);
          auto ready = std::make_shared<Event>();
          ready->record(s);
          Block* b = *fit;
          set.erase(fit);
          b->stream = kPendingStream;
          b->ready = std::move(ready);
          pending_.push_back(b);
          retired = true;
        } catch (const BackendError&) {
          // A stream we cannot record on (e.g. one of another device): its blocks stay where they are.
        }
      }
    }
    it = set.upper_bound(end_of_stream(s));
  }
  if (!retired) return nullptr;
  collect_ready_blocks();
  return take_free(set, kAnyStream, size);
}

void MemoryPool::collect_ready_blocks() {
  std::vector<Block*> still_pending;
  std::vector<Block*> ready;
  for (Block* b : pending_) {
    bool done = false;
    try {
      done = b->ready->query();
    } catch (const BackendError&) {
      // A failed query means a broken context; the error resurfaces in the caller's next CUDA call, and the
      // block stays pending until free_all_blocks synchronizes.
    }
    (done ? ready : still_pending).push_back(b);
  }
  pending_ = std::move(still_pending);
  for (Block* b : ready) {
    b->ready.reset();
    b->stream = kAnyStream;
    insert_free(merge_with_neighbours(b));
  }
}

void MemoryPool::retire_stream(cudaStream_t stream) noexcept {
  std::lock_guard lock(mutex_);
  if (mode_ != PoolMode::Caching) return;
  std::vector<Block*> blocks;
  for (FreeSet* set : {&small_free_, &large_free_}) {
    auto it = set->lower_bound(Key{as_int(stream), 0, 0});
    while (it != set->end() && (*it)->stream == stream) {
      blocks.push_back(*it);
      it = set->erase(it);
    }
  }
  if (blocks.empty()) return;
  try {
    cu::DeviceScope on(device_);
    auto ready = std::make_shared<Event>();
    ready->record(stream);
    for (Block* b : blocks) {
      b->stream = kPendingStream;
      b->ready = ready;
      pending_.push_back(b);
    }
    return;
  } catch (...) {
  }
  // No event (e.g. a stream of another device): wait for the stream instead; its blocks are idle afterwards.
  (void)cudaStreamSynchronize(stream);
  (void)cudaGetLastError();
  for (Block* b : blocks) {
    b->stream = kAnyStream;
    insert_free(merge_with_neighbours(b));
  }
}

MemoryPool::Block* MemoryPool::new_segment(bool small, std::size_t size, std::string& why) {
  // Segments larger than the request serve later ones without cudaMalloc; under a tight limit, fall back to
  // exactly the request.
  const std::size_t segment = small ? kSmallSegment : (size < kMidLimit ? kMidSegment : round_up(size, kLargeRound));
  std::size_t got = segment;
  void* p = device_malloc(segment, why);
  if (!p && segment > size) {
    got = size;
    p = device_malloc(size, why);
  }
  if (!p) return nullptr;
  auto* b = new Block;
  b->ptr = static_cast<char*>(p);
  b->size = got;
  b->stream = kAnyStream; // fresh memory: no stream has queued work on it
  b->small = small;
  segments_.push_back(b);
  return b;
}

void* MemoryPool::device_malloc(std::size_t bytes, std::string& why) {
  if (limit_ != 0 && (stats_.total_bytes >= limit_ || bytes > limit_ - stats_.total_bytes)) {
    why = "the pool's limit would be exceeded";
    return nullptr;
  }
  cu::DeviceScope on(device_);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    why = "cudaMalloc failed: the device is out of memory";
    return nullptr;
  }
  LAZYFUSE_CUDA_CHECK(e);
  LAZYFUSE_ASSERT_EQ(as_int(p) % kAlignment, 0, "cudaMalloc returned a pointer that is not 256-byte aligned");
  stats_.total_bytes += bytes;
  stats_.peak_total_bytes = std::max(stats_.peak_total_bytes, stats_.total_bytes);
  ++stats_.device_mallocs;
  return p;
}

void MemoryPool::note_used(std::size_t bytes) {
  stats_.used_bytes += bytes;
  stats_.peak_used_bytes = std::max(stats_.peak_used_bytes, stats_.used_bytes);
}

void MemoryPool::throw_out_of_memory(std::size_t requested, const std::string& why) {
  ++stats_.out_of_memory;
  std::string msg = "out of memory: asked for " + format_bytes(requested) + " (" + std::to_string(requested) +
                    " bytes) on device " + std::to_string(device_) + "; pool: " + format_bytes(stats_.used_bytes) +
                    " used, " + format_bytes(stats_.total_bytes - stats_.used_bytes) + " cached, " +
                    (limit_ ? "limit " + format_bytes(limit_) : std::string("no limit"));
  std::size_t free_bytes = 0, total = 0;
  if (const cu::DeviceScope on(device_, std::nothrow); on.active()) {
    if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess)
      msg += "; device: " + format_bytes(free_bytes) + " free of " + format_bytes(total);
  }
  (void)cudaGetLastError();
  if (!why.empty()) msg += " (" + why + ")";
  msg += ". Free arrays you no longer need, or raise the limit (LAZYFUSE_GPU_MEMORY_LIMIT, "
         "lazyfuse::memory::set_limit).";
  throw OutOfMemoryError(msg);
}

// ---- MemoryPool: freeing ----------------------------------------------------------------------------------

void MemoryPool::deallocate(void* ptr, cudaStream_t stream) noexcept {
  if (!ptr) return;
  std::lock_guard lock(mutex_);
  if (mode_ == PoolMode::PassThrough) {
    const auto it = pass_through_live_.find(ptr);
    LAZYFUSE_ASSERT(it != pass_through_live_.end(), "MemoryPool::deallocate of a pointer this pool did not hand out");
    // cudaFree waits for the whole device, so the stream needs no event. Its errors are sticky ones of earlier
    // work, which the next checked call reports.
    {
      const cu::DeviceScope on(device_, std::nothrow);
      (void)cudaFree(ptr);
    }
    (void)cudaGetLastError();
    stats_.used_bytes -= it->second;
    stats_.total_bytes -= it->second;
    ++stats_.device_frees;
    pass_through_live_.erase(it);
    return;
  }
  const auto it = live_.find(ptr);
  LAZYFUSE_ASSERT(it != live_.end(), "MemoryPool::deallocate of a pointer this pool did not hand out");
  Block* b = it->second;
  live_.erase(it);
  stats_.used_bytes -= b->size;
  b->allocated = false;
  b->stream = stream;
  insert_free(merge_with_neighbours(b));
}

MemoryPool::FreeSet& MemoryPool::free_set(const Block* b) {
  return b->small ? small_free_ : large_free_;
}

void MemoryPool::insert_free(Block* b) {
  LAZYFUSE_ASSERT(!b->allocated && b->stream != kPendingStream, "only free, ready blocks go into a free set");
  free_set(b).insert(b);
}

void MemoryPool::erase_free(Block* b) {
  const std::size_t erased = free_set(b).erase(b);
  LAZYFUSE_ASSERT_EQ(erased, 1, "a free neighbour is missing from its free set");
}

MemoryPool::Block* MemoryPool::merge_with_neighbours(Block* b) {
  // Only neighbours freed on the same stream (or both idle) merge: a merged block must be safe to reuse on
  // one stream as a whole. Neighbours are erased from their set before their key changes.
  if (Block* p = b->prev; p && !p->allocated && p->stream == b->stream) {
    erase_free(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (Block* n = b->next; n && !n->allocated && n->stream == b->stream) {
    erase_free(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  return b;
}

void MemoryPool::free_all_blocks() {
  std::lock_guard lock(mutex_);
  if (mode_ == PoolMode::Caching) release_cached_blocks();
}

void MemoryPool::release_cached_blocks() {
  // After a device-wide synchronize no queued work uses any free block, whatever stream it was freed on: they
  // all become idle, merge across former stream boundaries, and whole free segments go back to the device.
  cu::DeviceScope on(device_);
  LAZYFUSE_CUDA_CHECK(cudaDeviceSynchronize());
  for (Block* b : pending_) {
    b->ready.reset();
    b->stream = kAnyStream;
  }
  pending_.clear();
  for (FreeSet* set : {&small_free_, &large_free_}) {
    const std::vector<Block*> blocks(set->begin(), set->end());
    set->clear(); // before the keys change under the set's ordering
    for (Block* b : blocks) b->stream = kAnyStream;
  }

  cudaError_t first_error = cudaSuccess;
  std::vector<Block*> kept;
  for (Block* head : segments_) {
    for (Block* b = head; b; b = b->next) {
      while (!b->allocated && b->next && !b->next->allocated) {
        Block* n = b->next;
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        delete n;
      }
    }
    if (!head->allocated && !head->next) {
      const cudaError_t e = cudaFree(head->ptr);
      if (e != cudaSuccess && first_error == cudaSuccess) first_error = e;
      stats_.total_bytes -= head->size;
      ++stats_.device_frees;
      delete head;
      continue;
    }
    kept.push_back(head);
    for (Block* b = head; b; b = b->next)
      if (!b->allocated) free_set(b).insert(b);
  }
  segments_ = std::move(kept);
  // Bookkeeping is consistent by now, so a failed cudaFree (only possible with a broken context) can throw.
  LAZYFUSE_CUDA_CHECK(first_error);
}

// ---- MemoryPool: limit and statistics ---------------------------------------------------------------------

void MemoryPool::set_limit(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  limit_ = bytes;
}

std::size_t MemoryPool::limit() const {
  std::lock_guard lock(mutex_);
  return limit_;
}

PoolStats MemoryPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::size_t MemoryPool::used_bytes() const {
  std::lock_guard lock(mutex_);
  return stats_.used_bytes;
}

std::size_t MemoryPool::total_bytes() const {
  std::lock_guard lock(mutex_);
  return stats_.total_bytes;
}

} // namespace lazyfuse::runtime
