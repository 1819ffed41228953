#include "runtime/HostPool.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "runtime/MemoryPool.h" // format_bytes, shared with the device pool's messages

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <string>

#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define LAZYFUSE_HOST_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAZYFUSE_HOST_POOL_ASAN 1
#endif
#endif

#ifdef LAZYFUSE_HOST_POOL_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace lazyfuse::runtime {

namespace {

void poison(void* p, std::size_t bytes) {
#ifdef LAZYFUSE_HOST_POOL_ASAN
  ASAN_POISON_MEMORY_REGION(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

void unpoison(void* p, std::size_t bytes) {
#ifdef LAZYFUSE_HOST_POOL_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#else
  (void)p, (void)bytes;
#endif
}

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

std::size_t default_cache_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t physical = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
  return std::max<std::size_t>(physical / 8, std::size_t{256} << 20);
}

// The largest request size_class can round without overflow.
constexpr std::size_t kMaxRequest = std::numeric_limits<std::size_t>::max() / 2;

} // namespace

HostPool& HostPool::instance() {
  static HostPool* pool = new HostPool(config::snapshot().pool_enabled, default_cache_limit());
  return *pool;
}

HostPool::HostPool(bool caching, std::size_t cache_limit) : caching_(caching), cache_limit_(cache_limit) {}

HostPool::~HostPool() {
  free_all_blocks();
}

std::size_t HostPool::size_class(std::size_t bytes) {
  const std::size_t b = std::max<std::size_t>(bytes, 1);
  if (b <= 4096) return round_up(b, kAlignment);
  // Quarters of the power of two below b: 5 KiB, 6 KiB, 7 KiB, 8 KiB, 10 KiB, ...
  const std::size_t quarter = (std::bit_floor(b - 1)) / 4;
  return round_up(b, quarter);
}

void* HostPool::system_alloc(std::size_t size) {
  void* p = std::aligned_alloc(kAlignment, size);
  if (p) ++stats_.system_allocs;
  return p;
}

void HostPool::system_free(void* ptr, std::size_t size) {
  unpoison(ptr, size);
  std::free(ptr);
  ++stats_.system_frees;
  stats_.total_bytes -= size;
}

void HostPool::note_used(std::size_t size) {
  ++stats_.allocations;
  stats_.used_bytes += size;
  stats_.peak_used_bytes = std::max(stats_.peak_used_bytes, stats_.used_bytes);
  stats_.peak_total_bytes = std::max(stats_.peak_total_bytes, stats_.total_bytes);
}

void* HostPool::allocate(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (bytes > kMaxRequest) throw_out_of_memory(bytes);
  const std::size_t size = caching_ ? size_class(bytes) : round_up(std::max<std::size_t>(bytes, 1), kAlignment);
  void* p = nullptr;
  if (caching_) {
    if (auto it = cached_.find(size); it != cached_.end() && !it->second.empty()) {
      p = it->second.back().ptr;
      it->second.pop_back();
      ++stats_.cache_hits;
    }
  }
  if (!p) {
    p = system_alloc(size);
    if (!p && caching_) {
      trim_cache(0);
      p = system_alloc(size);
    }
    if (!p) throw_out_of_memory(bytes);
    stats_.total_bytes += size;
  }
  live_.emplace(p, size);
  note_used(size);
  unpoison(p, bytes);
  if (size > bytes) poison(static_cast<char*>(p) + bytes, size - bytes);
  return p;
}

void HostPool::deallocate(void* ptr) noexcept {
  if (!ptr) return;
  std::lock_guard lock(mutex_);
  const auto it = live_.find(ptr);
  LAZYFUSE_ASSERT(it != live_.end(), "HostPool::deallocate of a pointer this pool did not hand out");
  const std::size_t size = it->second;
  live_.erase(it);
  stats_.used_bytes -= size;
  if (!caching_ || size > cache_limit_) {
    system_free(ptr, size);
    return;
  }
  poison(ptr, size);
  cached_[size].push_back({ptr, free_sequence_++});
  trim_cache(cache_limit_);
}

void HostPool::trim_cache(std::size_t limit) {
  // Called with mutex_ held. Gives back the blocks freed longest ago until the cache fits the limit.
  while (stats_.total_bytes - stats_.used_bytes > limit) {
    std::vector<Cached>* oldest = nullptr;
    std::size_t oldest_size = 0;
    for (auto& [size, blocks] : cached_)
      if (!blocks.empty() && (!oldest || blocks.front().freed_at < oldest->front().freed_at)) {
        oldest = &blocks;
        oldest_size = size;
      }
    LAZYFUSE_ASSERT(oldest, "host pool: cached bytes counted but no cached block");
    system_free(oldest->front().ptr, oldest_size);
    oldest->erase(oldest->begin());
  }
}

void HostPool::free_all_blocks() {
  std::lock_guard lock(mutex_);
  trim_cache(0);
}

HostPoolStats HostPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void HostPool::throw_out_of_memory(std::size_t requested) {
  ++stats_.out_of_memory;
  throw OutOfMemoryError("out of host memory: asked for " + format_bytes(requested) + " (" + std::to_string(requested) +
                         " bytes); host pool: " + format_bytes(stats_.used_bytes) + " used, " +
                         format_bytes(stats_.total_bytes - stats_.used_bytes) +
                         " cached. Free arrays you no longer need.");
}

} // namespace lazyfuse::runtime
