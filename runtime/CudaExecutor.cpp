// The CUDA backend: pooled device buffers, kernels from the kernel cache, launches on the current stream.
#include "graph/Assert.h"
#include "runtime/CudaApi.h"
#include "runtime/Executor.h"
#include "runtime/KernelCache.h"
#include "runtime/MemoryPool.h"
#include "runtime/Streams.h"

#include "codegen/CudaPrinter.h"

#include <algorithm>
#include <cstring>

namespace lazyfuse::runtime {

namespace {

class DeviceStorage : public graph::Storage {
public:
  DeviceStorage(std::size_t n, cudaStream_t stream)
      : allocation_(MemoryPool::for_device(current_device()), std::max<std::size_t>(n, 1), stream) {
    data = allocation_.get();
    bytes = n;
    on_device = true;
  }

private:
  // Returned to the pool on the stream it was used on: reusable there at once, elsewhere after an event.
  DeviceAllocation allocation_;
};

// Kernel arguments laid out as cuLaunchKernel wants them: one pointer per argument into a byte buffer.
class ArgBuffer {
public:
  template <class T> void push(T value) {
    std::size_t at = (bytes_.size() + alignof(T) - 1) / alignof(T) * alignof(T);
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    offsets_.push_back(at);
  }
  std::vector<void*> pointers() {
    std::vector<void*> p;
    for (auto off : offsets_) p.push_back(bytes_.data() + off);
    return p;
  }

private:
  std::vector<unsigned char> bytes_;
  std::vector<std::size_t> offsets_;
};

class CudaExecutor final : public Executor {
public:
  Backend kind() const override { return Backend::Cuda; }

  std::shared_ptr<graph::Storage> allocate(std::size_t bytes) override {
    return std::make_shared<DeviceStorage>(bytes, current_stream());
  }

  std::shared_ptr<graph::Storage> upload(const void* host, std::size_t bytes) override {
    cudaStream_t s = current_stream();
    auto st = std::make_shared<DeviceStorage>(bytes, s);
    // From pageable memory cudaMemcpyAsync returns once the data is staged, so the caller may free `host`.
    if (bytes) LAZYFUSE_CUDA_CHECK(cudaMemcpyAsync(st->data, host, bytes, cudaMemcpyHostToDevice, s));
    return st;
  }

  void download(const graph::Storage& storage, std::size_t off, void* host, std::size_t bytes) override {
    if (!bytes) return;
    cudaStream_t s = current_stream();
    LAZYFUSE_CUDA_CHECK(
        cudaMemcpyAsync(host, static_cast<const char*>(storage.data) + off, bytes, cudaMemcpyDeviceToHost, s));
    LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void run(const codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    const int device = current_device();
    auto kernel = get_kernel(k.ir, device);
    ArgBuffer args;
    for (auto* p : k.args.inputs) args.push(p);
    for (auto* p : outputs) args.push(p);
    auto push_index = [&](std::int64_t v) {
      if (k.ir.index32)
        args.push(std::int32_t(v));
      else
        args.push(static_cast<long long>(v));
    };
    push_index(k.args.n);
    for (std::size_t s = 0; s < k.ir.params.size(); ++s) {
      const auto& slot = k.ir.params[s];
      const auto& pv = k.args.params[s];
      if (slot.is_index) {
        push_index(pv.i);
        continue;
      }
      switch (slot.dtype) {
      case DType::Bool: args.push(bool(pv.i != 0)); break;
      case DType::Int32: args.push(std::int32_t(pv.i)); break;
      case DType::Int64: args.push(static_cast<long long>(pv.i)); break;
      case DType::Float32: args.push(float(pv.f)); break;
      case DType::Float64: args.push(double(pv.f)); break;
      }
    }
    auto pointers = args.pointers();
    const std::int64_t per_block = std::int64_t(codegen::kBlockSize) * codegen::kElementsPerThread;
    const std::int64_t blocks = std::min<std::int64_t>((k.args.n + per_block - 1) / per_block, kernel->grid_limit);
    cuda::launch(kernel->function, unsigned(std::max<std::int64_t>(blocks, 1)), codegen::kBlockSize, 0,
                 current_stream(), pointers.data());
    counters().kernels_launched++;
  }

  void synchronize() override { LAZYFUSE_CUDA_CHECK(cudaDeviceSynchronize()); }
  void forget_kernels() override { clear_memory_cache(); }
};

} // namespace

std::unique_ptr<Executor> make_cuda_executor(std::string& reason) {
  const auto& a = cuda::availability();
  if (!a.ok) {
    reason = a.reason;
    return nullptr;
  }
  return std::make_unique<CudaExecutor>();
}

} // namespace lazyfuse::runtime
