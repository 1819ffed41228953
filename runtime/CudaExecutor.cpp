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
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

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

// The tickets of split reductions (codegen/Schedule.h): one zeroed buffer per device and stream, kept between
// launches. The last block of every split kernel sets its tickets back to zero (the CUDA printer's split_combine),
// so the buffer stays zeroed and a launch needs no memset before it: that memset cost a float16 sum of 2^26
// elements about 1.5 us of its 37. Kernels on one stream run in order, so they never share tickets at once.
class TicketBuffers {
public:
  unsigned char* get(std::size_t bytes) {
    const int device = current_device();
    const cudaStream_t stream = current_stream();
    const StreamTag tag = tag_of(stream);
    std::lock_guard lock(mutex_);
    // Buffers of destroyed streams go back to the pool (their work is complete).
    std::erase_if(entries_, [](const Entry& e) { return !is_live(e.tag); });
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
      return e.device == device && e.tag.stream == tag.stream && e.tag.generation == tag.generation;
    });
    if (it != entries_.end() && it->buffer->bytes >= bytes) return static_cast<unsigned char*>(it->buffer->data);
    // A larger buffer, zeroed once; the old one goes back to the pool after the kernels already queued here.
    auto buffer = std::make_shared<DeviceStorage>(std::max<std::size_t>(bytes, 4096), stream);
    LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(buffer->data, 0, buffer->bytes, stream));
    auto* data = static_cast<unsigned char*>(buffer->data);
    if (it != entries_.end())
      it->buffer = std::move(buffer);
    else
      entries_.push_back({device, tag, std::move(buffer)});
    return data;
  }

private:
  struct Entry {
    int device = 0;
    StreamTag tag;
    std::shared_ptr<DeviceStorage> buffer;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

// The error words of kernels with bounds checks, in pinned host memory that every device maps: a kernel ors its
// failed checks straight into host memory (one atomic per thread that failed, codegen/CudaPrinter.cpp), so a launch
// needs neither a copy that zeroes its word nor one that reads it back, only the wait for its stream. Measured on
// the H200 against the two copies: see docs/performance.md (gathers). A word is taken for one launch and given back
// after the wait; the pages live as long as the executor.
class ErrorWords {
public:
  ErrorWords() = default;
  ErrorWords(const ErrorWords&) = delete;
  ErrorWords& operator=(const ErrorWords&) = delete;
  ~ErrorWords() {
    // The runtime may already be shutting down at exit: nothing to report then.
    for (void* page : pages_) (void)cudaFreeHost(page);
  }

  std::uint32_t* take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      void* page = nullptr;
      LAZYFUSE_CUDA_CHECK(cudaHostAlloc(&page, kPageBytes, cudaHostAllocMapped | cudaHostAllocPortable));
      pages_.push_back(page);
      for (std::size_t k = 0; k < kPageBytes / sizeof(std::uint32_t); ++k)
        free_.push_back(static_cast<std::uint32_t*>(page) + k);
    }
    std::uint32_t* word = free_.back();
    free_.pop_back();
    return word;
  }
  void give_back(std::uint32_t* word) {
    std::lock_guard lock(mutex_);
    free_.push_back(word);
  }

private:
  static constexpr std::size_t kPageBytes = 4096;
  std::mutex mutex_;
  std::vector<void*> pages_;
  std::vector<std::uint32_t*> free_;
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
    if (codegen::has_block_scratch(k.ir.schedule)) {
      scratch = allocate(std::size_t(shape.partial_bytes));
      split = {static_cast<unsigned char*>(scratch->data), tickets_.get(std::size_t(shape.ticket_bytes)), shape.splits};
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

  std::uint32_t run_checked(codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    cuda::require_context("running a kernel");
    std::uint32_t* word = error_words_.take();
    struct Lease {
      ErrorWords& words;
      std::uint32_t* word;
      ~Lease() { words.give_back(word); }
    } lease{error_words_, word};
    std::atomic_ref<std::uint32_t>(*word).store(0, std::memory_order_release);
    // 64-bit CUDA maps pinned memory at the same address on every device (unified addressing).
    run_with_error_word(k, outputs, word);
    LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(current_stream()));
    return std::atomic_ref<std::uint32_t>(*word).load(std::memory_order_acquire);
  }

  void run_passing_checks(codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    cuda::require_context("running a kernel");
    // One word for every such launch, never read: no check of theirs can fail, so none writes it.
    std::call_once(unread_word_once_, [&] { unread_word_ = error_words_.take(); });
    run_with_error_word(k, outputs, unread_word_);
  }

  void synchronize() override {
    cuda::require_context("synchronizing the device");
    LAZYFUSE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void forget_kernels() override { clear_memory_cache(); }

private:
  TicketBuffers tickets_;
  ErrorWords error_words_;
  std::once_flag unread_word_once_;
  std::uint32_t* unread_word_ = nullptr;
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
