// The backends behind materialization: where buffers live and how a lowered kernel runs.
#pragma once

#include "codegen/Lower.h"
#include "graph/Node.h"

#include <lazyfuse/runtime.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace lazyfuse::runtime {

/// One launch of a plan cache replay (runtime/PlanCache.h): a bound kernel and its outputs' buffers.
struct ReplayLaunch {
  codegen::LoweredKernel* kernel = nullptr;
  std::vector<void*> outputs;
};

/// What a backend keeps between replays of one recorded plan (the CUDA backend: its instantiated graphs). Owned
/// by the plan cache's recipe and used under the evaluation lock.
class ReplayState {
public:
  virtual ~ReplayState() = default;
};

class Executor {
public:
  virtual ~Executor() = default;
  virtual Backend kind() const = 0;
  /// A buffer of `bytes` (contents undefined), usable by kernels queued on the current stream.
  virtual std::shared_ptr<graph::Storage> allocate(std::size_t bytes) = 0;
  /// A buffer holding a copy of `bytes` bytes at `host`; the caller may free `host` when this returns.
  virtual std::shared_ptr<graph::Storage> upload(const void* host, std::size_t bytes) = 0;
  /// Copies `bytes` bytes at `byte_offset` of `storage` to `host`, waiting only for the work that writes them.
  virtual void download(const graph::Storage& storage, std::size_t byte_offset, void* host, std::size_t bytes) = 0;
  /// Runs `kernel` writing `outputs` (one buffer of n elements per IR output), queued on the current stream.
  virtual void run(const codegen::LoweredKernel& kernel, const std::vector<void*>& outputs) = 0;
  /// Runs a kernel with bounds checks (codegen::has_bounds_checks) as run() does, with a zeroed error word
  /// (KernelArgs::error_word, null again on return), and waits for it: returns the word, the bits of its failed
  /// checks. This one uploads a zero word and downloads it after the kernel.
  virtual std::uint32_t run_checked(codegen::LoweredKernel& kernel, const std::vector<void*>& outputs);
  /// Runs a kernel whose bounds checks cannot fail (every index it checks is already known to be in range) as run()
  /// does, with an error word that nobody reads, and does not wait for it.
  virtual void run_passing_checks(codegen::LoweredKernel& kernel, const std::vector<void*>& outputs);
  /// Runs `launches` in order, as run() would run each. Their kernels have no bounds checks, grids of at least
  /// one element, and inputs that are materialized or outputs of an earlier launch in the list. `state` belongs to
  /// the recipe replayed (null at first): the CUDA backend keeps graphs of the chain there and launches one instead
  /// of the kernels (LAZYFUSE_CUDA_GRAPH_KERNELS); the default runs them one by one.
  virtual void run_replay(std::span<ReplayLaunch> launches, std::unique_ptr<ReplayState>& state);
  /// Device memory of at least `bytes` for a kernel queued next on the current stream that tags every word it writes
  /// there with `epoch` (tiled scans, runtime/DeviceSelect.h): each word is zero or was written by an earlier launch,
  /// with a smaller epoch. Epochs run from 1 to `epoch_limit` (at least 1); then the buffer is zeroed and they start
  /// again. One buffer per device and stream. The CUDA backend's; the others have no such kernels.
  struct Tickets {
    unsigned char* data = nullptr;
    std::uint32_t epoch = 0;
  };
  virtual Tickets tagged_tickets(std::size_t bytes, std::uint32_t epoch_limit);
  /// Waits for everything queued on the device.
  virtual void synchronize() = 0;
  /// Forgets the kernels seen in this process (the disk cache stays).
  virtual void forget_kernels() = 0;

protected:
  /// run() with `word` as the kernel's error word (KernelArgs::error_word), null again on return or throw.
  void run_with_error_word(codegen::LoweredKernel& kernel, const std::vector<void*>& outputs, void* word);
};

/// The executor of the backend in use (decided once; see lazyfuse::backend()). Defined in runtime/Executor.cpp, as
/// are cpu_executor and counters.
Executor& executor();

/// The process' CPU executor (always available), made by make_cpu_executor on first use and never destroyed.
Executor& cpu_executor();

/// Counters shared by all executors.
struct Counters {
  std::atomic<std::uint64_t> memory_hits{0}, disk_hits{0}, misses{0}, kernels_launched{0}, plan_hits{0},
      library_calls{0}, graph_launches{0};
  std::atomic<std::uint64_t> compile_nanoseconds{0};
};
Counters& counters();

} // namespace lazyfuse::runtime

namespace lazyfuse::runtime {
/// The CUDA executor (runtime/CudaExecutor.cpp), or null with `reason` set when no usable device is present.
std::unique_ptr<Executor> make_cuda_executor(std::string& reason);
/// A CPU executor (runtime/CpuExecutor.cpp): host buffers, kernels run by runtime/CpuBackend.h. Always succeeds.
std::unique_ptr<Executor> make_cpu_executor();
/// Makes work queued next on the current stream wait for the stream that produced `storage`, when that is another
/// stream, and keeps the block from reuse until this stream is done with it. Nothing for other storage (CPU).
/// Executor::run does this for a kernel's inputs; code that launches on its own (runtime/Accelerators.cpp) calls it.
void use_on_current_stream(const graph::Storage& storage);
/// Throws Error when the `bytes` bytes at `data` are memory that kernels of the backend in use must not read
/// (cuda::check_wrappable: host memory on the CUDA backend, device memory on the CPU backend, a span past its
/// allocation); BackendError when the CUDA context is lost. `what` starts the message.
void check_wrappable(const void* data, std::size_t bytes, const char* what);
} // namespace lazyfuse::runtime
