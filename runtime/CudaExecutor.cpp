// The CUDA backend: pooled device buffers, kernels from the kernel cache, launches on the current stream.
#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"
#include "runtime/CudaApi.h"
#include "runtime/Executor.h"
#include "runtime/KernelCache.h"
#include "runtime/MemoryPool.h"
#include "runtime/Streams.h"

#include "codegen/CudaPrinter.h"

#include <algorithm>
#include <cstring>
#include <limits>
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

// Kernel arguments laid out as cuLaunchKernel wants them: one pointer per argument into a byte buffer.
class ArgBuffer {
public:
  // Room for `count` arguments of up to 8 bytes, so that pushing them does not reallocate (a launch is on the host
  // path of every materialization).
  explicit ArgBuffer(std::size_t count) {
    bytes_.reserve(count * 8);
    offsets_.reserve(count);
  }
  template <class T> void push(T value) {
    std::size_t at = (bytes_.size() + alignof(T) - 1) / alignof(T) * alignof(T);
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    offsets_.push_back(at);
  }
  std::vector<void*> pointers() {
    std::vector<void*> p;
    p.reserve(offsets_.size());
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
    ArgBuffer args(k.args.inputs.size() + outputs.size() + 1 + k.ir.params.size() + 3); // + a split's three
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
      // The kernel's parameter has the layout of the type's host type (bool: != 0; integers: the low bits).
      graph::visit_dtype(slot.dtype, [&]<class T>() { args.push(is_floating(slot.dtype) ? T(pv.f) : T(pv.i)); });
    }
    std::int64_t blocks = 0;
    unsigned shared_bytes = 0;
    std::shared_ptr<graph::Storage> scratch;
    switch (k.ir.schedule) {
    case codegen::Schedule::Elementwise: {
      // Measured on the H200 (2026-11-30, median of 3): contiguous kernels run faster with a block per chunk
      // (chain 2^26 0.198 vs 0.217 ms, blackscholes 2^25 0.182 vs 0.196 ms with the resident blocks only), kernels
      // reading views faster with the resident blocks striding over the chunks (heat2d 8192^2 0.155 vs 0.170 ms).
      const std::int64_t per_block =
          std::int64_t(codegen::kBlockSize) * codegen::kElementsPerThread * codegen::kVectorsPerThread;
      blocks = std::min<std::int64_t>((k.args.n + per_block - 1) / per_block,
                                      kernel->resident_grid ? kernel->grid_limit : std::numeric_limits<int>::max());
      break;
    }
    case codegen::Schedule::Row: {
      // A block per row (the kernel's loop over rows strides by the grid): measured on the H200 against a grid of
      // resident blocks only, softmax of 16384 x 4096 took 0.145 instead of 0.155 ms, rowvar 0.063 instead of 0.064.
      blocks = std::min<std::int64_t>(k.args.n, std::numeric_limits<int>::max());
      const std::int64_t cache = k.ir.row_cache.bytes_per_element() * codegen::row_cache_elements(k.args.reduced);
      if (cache <= codegen::kMaxRowCacheBytes) shared_bytes = unsigned(cache);
      break;
    }
    case codegen::Schedule::Column: blocks = (k.args.n + codegen::kBlockSize - 1) / codegen::kBlockSize; break;
    case codegen::Schedule::ColumnSplit:
    case codegen::Schedule::Split: {
      // Enough blocks for two waves, each reading at least a few thousand elements; at most one partial per thread
      // of the combining block.
      const bool column = k.ir.schedule == codegen::Schedule::ColumnSplit;
      // Rows: blocks per outer element. Columns: blocks per tile of kBlockSize outer elements.
      const std::int64_t groups = column ? (k.args.n + codegen::kBlockSize - 1) / codegen::kBlockSize : k.args.n;
      const std::int64_t waves = column ? 2 : 4;
      const std::int64_t want =
          std::max<std::int64_t>(1, waves * kernel->grid_limit / std::max<std::int64_t>(1, groups));
      const std::int64_t per_part = column ? 16 : codegen::kBlockSize * 8; // elements each thread should read
      const std::int64_t useful = std::max<std::int64_t>(1, k.args.reduced / per_part);
      // Column partials are folded by one thread each (keep them few), row partials by a whole block.
      const std::int64_t cap = column ? codegen::kMaxColumnSplits : codegen::kMaxSplits;
      const std::int64_t splits = std::min<std::int64_t>({want, useful, cap});
      std::int64_t loops = 0;
      for (auto& in : k.ir.code) loops += in.op == codegen::IrOp::Accumulate; // one partial per accumulator
      const std::size_t partial_bytes = std::size_t(loops * k.args.n * splits * 16);
      const std::size_t ticket_bytes = std::size_t(groups) * sizeof(unsigned);
      scratch = allocate(partial_bytes + ticket_bytes + 256);
      auto* base = static_cast<unsigned char*>(scratch->data);
      auto* tickets = base + (partial_bytes + 255) / 256 * 256;
      LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(tickets, 0, ticket_bytes, current_stream()));
      args.push(static_cast<void*>(base));
      args.push(static_cast<void*>(tickets));
      push_index(splits);
      blocks = groups * splits;
      break;
    }
    }
    auto pointers = args.pointers();
    cuda::launch(kernel->function, unsigned(std::max<std::int64_t>(blocks, 1)), codegen::kBlockSize, shared_bytes,
                 current_stream(), pointers.data());
    if (config::log_enabled("launch"))
      config::log("launch", k.ir.name + " n=" + std::to_string(k.args.n) + " grid=" + std::to_string(blocks) + "x" +
                                std::to_string(codegen::kBlockSize));
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
