// The functions of include/lazyfuse/runtime.hpp other than streams (runtime/Streams.cpp): the backend, devices,
// synchronization, the kernel cache's counters and the current device's memory pool. Each forwards to the internal
// owner of what it reports or changes.
#include "runtime/CudaApi.h"
#include "runtime/Executor.h"
#include "runtime/Materialize.h"
#include "runtime/MemoryPool.h"
#include "runtime/PlanCache.h"

#include <lazyfuse/error.hpp>
#include <lazyfuse/runtime.hpp>

#include <mutex>
#include <string>

namespace lazyfuse {
namespace {

namespace cu = runtime::cuda;

bool cuda_ok() {
  return cu::availability().ok;
}

} // namespace

Backend backend() {
  return runtime::executor().kind();
}

void sync() {
  runtime::executor().synchronize();
}

void clear_kernel_cache() {
  std::lock_guard lock(runtime::evaluation_mutex());
  runtime::plan_cache().clear();
  runtime::executor().forget_kernels();
}

KernelCacheStats kernel_cache_stats() {
  auto& c = runtime::counters();
  KernelCacheStats s;
  s.memory_hits = c.memory_hits.load();
  s.disk_hits = c.disk_hits.load();
  s.misses = c.misses.load();
  s.kernels_launched = c.kernels_launched.load();
  s.plan_hits = c.plan_hits.load();
  s.library_calls = c.library_calls.load();
  s.graph_launches = c.graph_launches.load();
  s.compile_seconds = double(c.compile_nanoseconds.load()) * 1e-9;
  return s;
}

// ---- devices ------------------------------------------------------------------------------------------------

int device_count() {
  return cu::availability().device_count;
}

void set_device(int ordinal) {
  if (!cuda_ok()) {
    // Device 0 stands for "the CPU" then, so code written for one device runs unchanged without CUDA.
    if (ordinal == 0) return;
    throw BackendError("set_device(" + std::to_string(ordinal) + "): " + cu::unavailable_message());
  }
  cu::require_context("set_device");
  const int n = cu::availability().device_count;
  if (ordinal < 0 || ordinal >= n)
    throw BackendError("set_device(" + std::to_string(ordinal) + "): no such device; " + std::to_string(n) +
                       " visible (devices 0.." + std::to_string(n - 1) + ", CUDA_VISIBLE_DEVICES applies)");
  LAZYFUSE_CUDA_CHECK(cudaSetDevice(ordinal));
}

int current_device() {
  if (!cuda_ok()) return 0;
  int d = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

DeviceGuard::DeviceGuard(int ordinal) : previous_(current_device()) {
  set_device(ordinal);
}

DeviceGuard::~DeviceGuard() {
  // previous_ was current a moment ago, so this cannot fail for a reason a destructor could handle.
  if (cuda_ok()) {
    (void)cudaSetDevice(previous_);
    (void)cudaGetLastError();
  }
}

// ---- memory: the current device's pool --------------------------------------------------------------------

namespace memory {
namespace {
runtime::MemoryPool* current_pool() {
  if (!cuda_ok()) return nullptr;
  return &runtime::MemoryPool::for_device(current_device());
}
} // namespace

std::size_t used_bytes() {
  runtime::MemoryPool* p = current_pool();
  return p ? p->used_bytes() : 0;
}

std::size_t total_bytes() {
  runtime::MemoryPool* p = current_pool();
  return p ? p->total_bytes() : 0;
}

void free_all_blocks() {
  if (runtime::MemoryPool* p = current_pool()) {
    cu::require_context("memory::free_all_blocks");
    p->free_all_blocks();
  }
}

void set_limit(std::size_t bytes) {
  if (runtime::MemoryPool* p = current_pool()) p->set_limit(bytes);
}

std::size_t get_limit() {
  runtime::MemoryPool* p = current_pool();
  return p ? p->limit() : 0;
}

} // namespace memory
} // namespace lazyfuse
