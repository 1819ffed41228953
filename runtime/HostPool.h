// The CPU backend's caching host allocator. A large malloc is a fresh mmap whose pages fault in on first touch,
// which for a 64 MB kernel output costs about as much as the kernel; so freed blocks are kept in size classes and
// handed out again, their pages already mapped. The counterpart of the device pool (runtime/MemoryPool.h), without
// streams: host buffers are used only while a kernel call runs.
//
// Thread-safe: one mutex. Under AddressSanitizer the pool poisons cached blocks and the unused tail of every block,
// so a use after free, or a read past the requested size, is still reported (as use-after-poison).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace lazyfuse::runtime {

/// Counters of the host pool. Sizes are of blocks as handed out (their size class), not of the requests.
struct HostPoolStats {
  std::size_t used_bytes = 0;       ///< in blocks handed out to live buffers
  std::size_t total_bytes = 0;      ///< held from the system: used plus cached
  std::size_t peak_used_bytes = 0;  ///< highest used_bytes so far
  std::size_t peak_total_bytes = 0; ///< highest total_bytes so far
  std::uint64_t allocations = 0;    ///< allocate calls that succeeded
  std::uint64_t cache_hits = 0;     ///< allocations served from cached blocks
  std::uint64_t system_allocs = 0;  ///< successful aligned_alloc calls
  std::uint64_t system_frees = 0;   ///< blocks given back to the system
  std::uint64_t out_of_memory = 0;  ///< OutOfMemoryError thrown
};

class HostPool {
public:
  /// Every pointer handed out is aligned to this (the CPU backend's columns and the IR's vector loads rely on it).
  static constexpr std::size_t kAlignment = 64;

  /// The process' pool, created on first use with LAZYFUSE_POOL (none, or a switch's off value: every buffer its
  /// own aligned_alloc, freed at once) and kept for the life of the process (host buffers may be freed by static
  /// destructors after everything else). The cache limit is an eighth of the physical memory, at least 256 MiB.
  static HostPool& instance();

  /// A separate pool (tests). `caching` false: pass-through. `cache_limit`: the most bytes of freed blocks kept;
  /// beyond it the blocks freed longest ago go back to the system. Destroy it after its last buffer is returned.
  HostPool(bool caching, std::size_t cache_limit);
  ~HostPool();
  HostPool(const HostPool&) = delete;
  HostPool& operator=(const HostPool&) = delete;

  /// The size class a request of `bytes` is served from: multiples of 64 bytes up to 4 KiB, then four classes per
  /// power of two (at most 25% over the request). Pass-through blocks are the request rounded to 64 bytes.
  static std::size_t size_class(std::size_t bytes);

  /// A buffer of at least `bytes` (0 counts as 1), aligned to kAlignment, contents undefined. When the system
  /// refuses, gives the cached blocks back and retries once, then throws OutOfMemoryError naming the request and
  /// the pool's usage.
  void* allocate(std::size_t bytes);
  /// Returns `ptr` (from allocate of this pool; nullptr is ignored) for reuse.
  void deallocate(void* ptr) noexcept;
  /// Gives every cached block back to the system.
  void free_all_blocks();

  HostPoolStats stats() const;
  bool caching() const noexcept { return caching_; }
  std::size_t cache_limit() const noexcept { return cache_limit_; }

private:
  struct Cached {
    void* ptr;
    std::uint64_t freed_at; // deallocation sequence number: the smallest is given back first
  };

  void* system_alloc(std::size_t size);
  void system_free(void* ptr, std::size_t size);
  void trim_cache(std::size_t limit);
  void note_used(std::size_t size);
  [[noreturn]] void throw_out_of_memory(std::size_t requested);

  const bool caching_;
  const std::size_t cache_limit_;
  mutable std::mutex mutex_;
  HostPoolStats stats_;
  std::uint64_t free_sequence_ = 0;
  std::unordered_map<void*, std::size_t> live_;                 // pointer -> size class (block size)
  std::unordered_map<std::size_t, std::vector<Cached>> cached_; // size class -> blocks, most recently freed last
};

} // namespace lazyfuse::runtime
