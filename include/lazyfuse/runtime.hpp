// Devices, streams, the memory pool and the kernel cache: the runtime a user can see and steer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace lazyfuse {

/// Where materializations run. Cuda when a driver and a device are present (unless LAZYFUSE_BACKEND=cpu),
/// else the CPU backend, which runs the same fused kernel IR.
enum class Backend { Cpu, Cuda };

/// The backend in use; the first call decides it (and prints one line on stderr when it falls back to the
/// CPU). Throws BackendError when LAZYFUSE_BACKEND=cuda was asked for and no device is usable.
Backend backend();

/// Number of visible CUDA devices (CUDA_VISIBLE_DEVICES applies); 0 without a driver.
int device_count();
/// Selects the device later materializations on this thread use (CuPy's `cupy.cuda.Device(i).use()`).
void set_device(int ordinal);
/// The device this thread uses.
int current_device();

/// Scoped `set_device`: restores the previous device when it goes out of scope.
class DeviceGuard {
public:
  explicit DeviceGuard(int ordinal);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
  int previous_;
};

/// A CUDA stream (RAII). Materialization launches on the thread's current stream (see StreamGuard). On the
/// CPU backend a Stream is a no-op handle and work completes before `eval` returns.
class Stream {
public:
  /// A new non-blocking stream on the current device.
  Stream();
  /// Wraps a stream the user owns (`cudaStream_t` or `CUstream`, passed as a pointer); lazyfuse never
  /// destroys it.
  static Stream wrap(void* native_stream);
  /// The legacy default stream (or the per-thread one with LAZYFUSE_PER_THREAD_DEFAULT_STREAM=1).
  static Stream null();
  ~Stream();
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Waits until all work queued on this stream is done.
  void synchronize() const;
  /// The native handle (`cudaStream_t`), or nullptr for the default stream and on the CPU backend.
  void* native() const noexcept { return native_; }

private:
  Stream(void* native, bool owned) noexcept : native_(native), owned_(owned) {}
  void* native_ = nullptr;
  bool owned_ = false;
};

/// The calling thread's current stream (the default stream unless a StreamGuard is active).
void* current_stream_native();

/// Makes `s` the calling thread's current stream for its scope (CuPy's `with stream:`).
class StreamGuard {
public:
  explicit StreamGuard(const Stream& s);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

private:
  void* previous_;
};

/// Waits for all work on the current device (CuPy's `cupy.cuda.Device().synchronize()`).
void sync();

/// The device memory pool (a caching allocator, like CuPy's MemoryPool).
namespace memory {
/// Bytes in blocks handed out to live buffers.
std::size_t used_bytes();
/// Bytes the pool holds from the device: used plus cached.
std::size_t total_bytes();
/// Returns every cached (unused) block to the device.
void free_all_blocks();
/// The most the pool may hold from the device, in bytes; 0 means no limit. Overrides
/// LAZYFUSE_GPU_MEMORY_LIMIT.
void set_limit(std::size_t bytes);
std::size_t get_limit();
} // namespace memory

/// Counters of the kernel cache, for tests, benchmarks and `lazyfuse-info`.
struct KernelCacheStats {
  std::uint64_t memory_hits = 0;      ///< structure seen before in this process: no source rendered
  std::uint64_t disk_hits = 0;        ///< binary loaded from LAZYFUSE_CACHE_DIR
  std::uint64_t misses = 0;           ///< compiled by NVRTC
  double compile_seconds = 0;         ///< total NVRTC time
  std::uint64_t kernels_launched = 0; ///< kernels run (GPU launches or CPU executions)
  /// Materializations of a graph equal to an earlier one (same structure; other buffers or scalar values) that
  /// reused its kernel plans and lowered kernels, skipping partitioning and lowering.
  std::uint64_t plan_hits = 0;
  /// Matrix products run by a library routine instead of a generated kernel: cuBLASLt calls (one each, however many
  /// kernels cuBLAS launches inside), BLAS calls and the CPU backend's blocked loop (linalg.hpp); and the CUDA
  /// backend's cub::DeviceRadixSort calls (sorting.hpp; one each, the small kernels around them count in
  /// kernels_launched).
  std::uint64_t library_calls = 0;
  /// Plan cache replays launched as one CUDA graph (LAZYFUSE_CUDA_GRAPH_KERNELS); their kernels count in
  /// kernels_launched too.
  std::uint64_t graph_launches = 0;
};
KernelCacheStats kernel_cache_stats();
/// Empties the in-process kernel cache (the disk cache stays), e.g. to measure a disk hit.
void clear_kernel_cache();

} // namespace lazyfuse
