// The CUDA backend: pooled device buffers, kernels from the kernel cache, launches on the current stream.
#include "graph/Assert.h"
#include "graph/Config.h"
#include "runtime/CudaApi.h"
#include "runtime/Executor.h"
#include "runtime/KernelCache.h"
#include "runtime/MemoryPool.h"
#include "runtime/Streams.h"

#include "codegen/KernelAbi.h"
#include "codegen/Schedule.h"

#include <algorithm>
#include <mutex>

namespace lazyfuse::runtime {

namespace {

// A pooled device buffer that knows the stream its value was produced on. A reader on another stream waits for
// that stream (an event recorded when the reader appears: free in the common one-stream case), and the buffer
// goes back to the pool only after every reader's stream is done with it.
class DeviceStorage : public graph::Storage {
public:
  DeviceStorage(std::size_t n, cudaStream_t stream)
      : allocation_(MemoryPool::for_device(current_device()), std::max<std::size_t>(n, 1), stream),
        producer_(tag_of(stream)) {
    data = allocation_.get();
    bytes = n;
    on_device = true;
  }
  ~DeviceStorage() override {
    // After a fault no event can be recorded; the block goes back to the pool as it is (the allocation's own
    // destructor, which makes no checked CUDA call). Nothing reuses it: every later allocation fails.
    if (cuda::context_lost()) return;
    try {
      with_stream_state(producer_, [&](bool producer_live) {
        // The block goes back on a stream that exists; a destroyed producer's work is already complete.
        if (!producer_live) allocation_.set_stream(current_stream());
        for (const StreamTag& reader : readers_) {
          if (!is_live_locked(reader)) continue;
          Event done;
          done.record(reader.stream);
          done.wait_on(allocation_.stream());
        }
        allocation_.reset();
      });
    } catch (const std::exception&) {
      // Destructors must not throw; a failing CUDA call here means the context is already broken.
    }
  }

  /// Makes work queued next on `stream` wait for the producer of this buffer, when that is another stream.
  void use_on(cudaStream_t stream) {
    if (stream == producer_.stream) return;
    std::lock_guard lock(mutex_);
    for (auto& r : readers_)
      if (r.stream == stream && is_live(r)) return;
    with_stream_state(producer_, [&](bool live) {
      if (!live) return; // its work is complete
      Event produced;
      produced.record(producer_.stream);
      produced.wait_on(stream);
    });
    readers_.push_back(tag_of(stream));
  }

private:
  // Returned to the pool on the producing stream: reusable there at once, elsewhere after an event.
  DeviceAllocation allocation_;
  StreamTag producer_;
  std::mutex mutex_;
  std::vector<StreamTag> readers_;
};

class CudaExecutor final : public Executor {
public:
  Backend kind() const override { return Backend::Cuda; }

  std::shared_ptr<graph::Storage> allocate(std::size_t bytes) override {
    cuda::require_context("allocating device memory");
    return std::make_shared<DeviceStorage>(bytes, current_stream());
  }

  std::shared_ptr<graph::Storage> upload(const void* host, std::size_t bytes) override {
    cuda::require_context("copying host data to the device");
    cudaStream_t s = current_stream();
    auto st = std::make_shared<DeviceStorage>(bytes, s);
    // From pageable memory cudaMemcpyAsync returns once the data is staged, so the caller may free `host`.
    if (bytes) LAZYFUSE_CUDA_CHECK(cudaMemcpyAsync(st->data, host, bytes, cudaMemcpyHostToDevice, s));
    return st;
  }

  void download(const graph::Storage& storage, std::size_t off, void* host, std::size_t bytes) override {
    cuda::require_context("copying device data to the host");
    if (!bytes) return;
    use_on_current_stream(storage);
    cudaStream_t s = current_stream();
    LAZYFUSE_CUDA_CHECK(
        cudaMemcpyAsync(host, static_cast<const char*>(storage.data) + off, bytes, cudaMemcpyDeviceToHost, s));
    LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void run(const codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    cuda::require_context("running a kernel");
    const int device = current_device();
    auto kernel = get_kernel(k.ir, device);
    for (auto& node : k.input_nodes)
      if (auto buf = node->buffer()) use_on_current_stream(*buf->storage);
    const codegen::LaunchShape shape = codegen::launch_shape(k.ir, k.args, kernel->caps, kernel->facts);
    codegen::SplitArgs split;
    std::shared_ptr<graph::Storage> scratch; // freed (stream-ordered) once the launch is queued
    if (codegen::is_split(k.ir.schedule)) {
      scratch = allocate(std::size_t(shape.scratch_bytes()));
      auto* base = static_cast<unsigned char*>(scratch->data);
      LAZYFUSE_CUDA_CHECK(
          cudaMemsetAsync(base + shape.tickets_offset, 0, std::size_t(shape.ticket_bytes), current_stream()));
      split = {base, base + shape.tickets_offset, shape.splits};
    }
    codegen::PackedArgs args = codegen::pack_kernel_args(k.ir, k.args, outputs, &split);
    auto pointers = args.pointers();
    cuda::launch(kernel->function, unsigned(std::max<std::int64_t>(shape.grid, 1)), unsigned(shape.block),
                 shape.shared_bytes, current_stream(), pointers.data());
    if (config::log_enabled("launch"))
      config::log("launch", k.ir.name + " n=" + std::to_string(k.args.n) + " grid=" + std::to_string(shape.grid) + "x" +
                                std::to_string(shape.block));
    counters().kernels_launched++;
  }

  void synchronize() override {
    cuda::require_context("synchronizing the device");
    LAZYFUSE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void forget_kernels() override { clear_memory_cache(); }
};

} // namespace

void use_on_current_stream(const graph::Storage& storage) {
  if (auto* d = dynamic_cast<const DeviceStorage*>(&storage)) const_cast<DeviceStorage*>(d)->use_on(current_stream());
}

void check_wrappable(const void* data, std::size_t bytes, const char* what) {
  cuda::check_wrappable(data, bytes, executor().kind() == Backend::Cuda, what);
}

std::unique_ptr<Executor> make_cuda_executor(std::string& reason) {
  const auto& a = cuda::availability();
  if (!a.ok) {
    reason = a.reason;
    return nullptr;
  }
  return std::make_unique<CudaExecutor>();
}

} // namespace lazyfuse::runtime
