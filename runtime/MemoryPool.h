// A caching, stream-ordered device allocator (like CuPy's MemoryPool and PyTorch's caching allocator), one per
// device. cudaMalloc and cudaFree are slow and cudaFree synchronizes the device, so freed blocks are kept and
// handed out again; lazyfuse::memory (include/lazyfuse/runtime.hpp) is the user's view of it.
//
// Stream semantics: `deallocate(p, s)` says that the last use of `p` was queued on stream `s`. The block is at
// once reusable by allocations on `s` (stream order makes that safe), and by other streams only after an event
// recorded on `s` has completed. So whoever frees a buffer used on several streams must first make `s` wait for
// the others (Event::wait_on), or free it on the stream of its last use. Streams that blocks were freed on must
// outlive those blocks' reuse: lazyfuse::Stream tells the pool when it destroys its stream; a wrapped user stream
// must stay alive while the pool caches blocks freed on it (call free_all_blocks before destroying it).
//
// Thread-safe: one mutex per device's pool. Do not call it from CUDA host callbacks (cudaLaunchHostFunc).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lazyfuse::runtime {

/// Counters of one pool. Sizes are of blocks as handed out (rounded up to 512 bytes, or a whole cached block
/// when splitting it would leave a useless sliver), not of the requests.
struct PoolStats {
  std::size_t used_bytes = 0;       ///< in blocks handed out to live buffers
  std::size_t total_bytes = 0;      ///< held from the device: used plus cached
  std::size_t peak_used_bytes = 0;  ///< highest used_bytes so far
  std::size_t peak_total_bytes = 0; ///< highest total_bytes so far
  std::uint64_t allocations = 0;    ///< allocate calls that succeeded
  std::uint64_t cache_hits = 0;     ///< allocations served from cached blocks, without cudaMalloc
  std::uint64_t device_mallocs = 0; ///< successful cudaMalloc calls
  std::uint64_t device_frees = 0;   ///< cudaFree calls
  std::uint64_t out_of_memory = 0;  ///< OutOfMemoryError thrown
};

/// Caching: the allocator described above. PassThrough (LAZYFUSE_POOL=none or off): one cudaMalloc and one cudaFree
/// per buffer, of exactly the requested size, so compute-sanitizer sees every buffer's bounds; slow.
enum class PoolMode { Caching, PassThrough };

struct PoolOptions {
  PoolMode mode = PoolMode::Caching;
  std::size_t limit = 0; ///< bytes the pool may hold from the device; 0: no limit

  /// LAZYFUSE_POOL (none, or a switch's off value: PassThrough) and LAZYFUSE_GPU_MEMORY_LIMIT for `device`.
  /// Throws lazyfuse::Error for an invalid limit, which the environment may have set (it is not dropped).
  static PoolOptions from_settings(int device);
};

/// Parses a LAZYFUSE_GPU_MEMORY_LIMIT value (config::parse_memory_limit) into bytes: a byte count, or a percent of
/// `device_total` ("90%", "12.5%"); "" and "0" mean no limit. Throws lazyfuse::Error naming the setting and the
/// valid forms.
std::size_t parse_memory_limit(std::string_view text, std::size_t device_total);

/// "1.50 GiB", "512.00 MiB", "300 bytes": how OutOfMemoryError messages write sizes.
std::string format_bytes(std::size_t bytes);

class MemoryPool;

/// One buffer from a pool (RAII, move-only): returned to the pool on destruction or reset(), ordered after the
/// work on stream(). Point stream() at the stream of the buffer's last use with set_stream.
class DeviceAllocation {
public:
  DeviceAllocation() noexcept = default;
  /// Allocates `bytes` from `pool` for use on `stream`. Throws OutOfMemoryError.
  DeviceAllocation(MemoryPool& pool, std::size_t bytes, cudaStream_t stream);
  ~DeviceAllocation() { reset(); }
  DeviceAllocation(DeviceAllocation&& other) noexcept;
  DeviceAllocation& operator=(DeviceAllocation&& other) noexcept;
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;

  void* get() const noexcept { return ptr_; }
  /// The requested size.
  std::size_t size() const noexcept { return bytes_; }
  cudaStream_t stream() const noexcept { return stream_; }
  /// Records that the last use of the buffer is queued on `stream`; freeing is ordered after it.
  void set_stream(cudaStream_t stream) noexcept { stream_ = stream; }
  /// Returns the buffer to the pool now.
  void reset() noexcept;
  explicit operator bool() const noexcept { return ptr_ != nullptr; }

private:
  MemoryPool* pool_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

class MemoryPool {
public:
  /// Requests up to this size are "small": rounded to kRound-byte classes and carved from kSmallSegment
  /// segments, apart from the large blocks so that they do not fragment them.
  static constexpr std::size_t kSmallLimit = std::size_t{1} << 20;
  static constexpr std::size_t kRound = 512;
  static constexpr std::size_t kSmallSegment = std::size_t{2} << 20;
  /// Large requests below kMidLimit share kMidSegment segments; bigger ones get their own (rounded to 2 MiB).
  static constexpr std::size_t kMidLimit = std::size_t{10} << 20;
  static constexpr std::size_t kMidSegment = std::size_t{20} << 20;
  static constexpr std::size_t kLargeRound = std::size_t{2} << 20;
  /// Every pointer handed out is aligned to this.
  static constexpr std::size_t kAlignment = 256;

  /// The process-wide pool of device `ordinal`, created on first use with PoolOptions::from_settings and kept
  /// for the life of the process. Throws BackendError without CUDA or for a device that does not exist.
  static MemoryPool& for_device(int ordinal);
  /// Called by lazyfuse::Stream just before it destroys `stream`: blocks cached for `stream` become reusable by
  /// other streams once its queued work is done, and are never matched to a later stream that gets the same
  /// handle value.
  static void stream_destroyed(cudaStream_t stream) noexcept;

  /// A separate pool (tests; one with other options). It must be destroyed after every buffer it handed out is
  /// returned: its destructor frees the cached segments and leaves the rest to the process' end.
  MemoryPool(int device, PoolOptions options);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  /// A buffer of at least `bytes` (0 counts as 1) for use on `stream`, aligned to kAlignment. When the limit is
  /// reached or cudaMalloc fails, frees all cached blocks and retries once, then throws OutOfMemoryError naming
  /// the request, the pool's usage, the limit and the device's memory. Makes the pool's device current only
  /// while it needs to.
  void* allocate(std::size_t bytes, cudaStream_t stream);
  /// Returns `ptr` (from allocate of this pool; nullptr is ignored), whose last use is queued on `stream`. Never
  /// waits for the device in Caching mode.
  void deallocate(void* ptr, cudaStream_t stream) noexcept;
  /// allocate, wrapped in RAII.
  DeviceAllocation allocate_buffer(std::size_t bytes, cudaStream_t stream) {
    return DeviceAllocation(*this, bytes, stream);
  }

  /// Waits for the device, then returns every cached block to it (total_bytes drops to used_bytes, except for
  /// segments partly in use).
  void free_all_blocks();
  /// The most bytes the pool may hold from the device; 0: no limit. Takes effect for later allocations.
  void set_limit(std::size_t bytes);
  std::size_t limit() const;

  PoolStats stats() const;
  std::size_t used_bytes() const;
  std::size_t total_bytes() const;
  int device() const noexcept { return device_; }
  PoolMode mode() const noexcept { return mode_; }

private:
  struct Block;
  struct Key;
  struct BlockLess {
    using is_transparent = void;
    bool operator()(const Block* a, const Block* b) const noexcept;
    bool operator()(const Block* a, const Key& b) const noexcept;
    bool operator()(const Key& a, const Block* b) const noexcept;
  };
  using FreeSet = std::set<Block*, BlockLess>;

  void* allocate_cached(std::size_t bytes, cudaStream_t stream);
  void* allocate_pass_through(std::size_t bytes);
  Block* take_free(FreeSet& set, cudaStream_t stream, std::size_t size);
  Block* take_from_other_streams(bool small, std::size_t size, cudaStream_t stream);
  void collect_ready_blocks();
  void retire_stream(cudaStream_t stream) noexcept;
  Block* new_segment(bool small, std::size_t size, std::string& why);
  void* device_malloc(std::size_t bytes, std::string& why);
  void release_cached_blocks();
  void insert_free(Block* b);
  void erase_free(Block* b);
  Block* merge_with_neighbours(Block* b);
  FreeSet& free_set(const Block* b);
  [[noreturn]] void throw_out_of_memory(std::size_t requested, const std::string& why);
  void note_used(std::size_t bytes);

  const int device_;
  const PoolMode mode_;
  mutable std::mutex mutex_;
  std::size_t limit_ = 0;
  PoolStats stats_;
  FreeSet small_free_;
  FreeSet large_free_;
  std::unordered_map<void*, Block*> live_;                   // Caching: blocks handed out, by pointer
  std::vector<Block*> segments_;                             // Caching: first block of each cudaMalloc'ed segment
  std::vector<Block*> pending_;                              // Caching: freed blocks waiting for an event
  std::unordered_map<void*, std::size_t> pass_through_live_; // PassThrough: pointer -> requested bytes
};

} // namespace lazyfuse::runtime
