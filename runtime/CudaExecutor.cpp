// The CUDA backend: pooled device buffers, kernels from the kernel cache, launches on the current stream.
#include "graph/Assert.h"
#include "graph/Config.h"
#include "runtime/CudaApi.h"
#include "runtime/Executor.h"
#include "runtime/HostSlots.h"
#include "runtime/KernelCache.h"
#include "runtime/MemoryPool.h"
#include "runtime/Streams.h"

#include "codegen/KernelAbi.h"
#include "codegen/Schedule.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
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

// Device memory that kernels leave ready for the next launch on their stream: one buffer per device and stream,
// kept between launches, zeroed when it is made. Kernels on one stream run in order, so they never share one at once.
// Two instances serve two kinds of kernels:
//  - zeroed tickets (split reductions: codegen/Schedule.h): the last block of every such kernel sets its tickets back
//    to zero (the CUDA printer's split_combine), so a launch needs no memset before it: that memset cost a float16
//    sum of 2^26 elements about 1.5 us of its 37;
//  - tagged statuses (tiled scans, runtime/DeviceSelect.h): each launch tags the words it writes with its epoch, one
//    more than the last launch's on the stream, so words of earlier launches read as unwritten and nothing is
//    cleared; when the epochs run out the buffer is zeroed and they start again at 1.
class TicketBuffers {
public:
  /// `bytes` of the current stream's buffer and the epoch of the launch that takes it (the number of takes since
  /// the buffer was zeroed, at most `epoch_limit`).
  Executor::Tickets get(std::size_t bytes, std::uint32_t epoch_limit) {
    const int device = current_device();
    const cudaStream_t stream = current_stream();
    if (epoch_limit > 0) refuse_capture(stream);
    const StreamTag tag = tag_of(stream);
    std::lock_guard lock(mutex_);
    // Buffers of destroyed streams go back to the pool (their work is complete).
    std::erase_if(entries_, [](const Entry& e) { return !is_live(e.tag); });
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) {
      return e.device == device && e.tag.stream == tag.stream && e.tag.generation == tag.generation;
    });
    if (it == entries_.end() || it->buffer->bytes < bytes) {
      // A larger buffer, zeroed; the old one goes back to the pool after the kernels already queued here.
      auto buffer = std::make_shared<DeviceStorage>(std::max<std::size_t>(bytes, 4096), stream);
      LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(buffer->data, 0, buffer->bytes, stream));
      if (it == entries_.end()) {
        entries_.push_back(Entry{device, tag, nullptr, 0});
        it = std::prev(entries_.end());
      }
      it->buffer = std::move(buffer);
      it->epoch = 0;
    } else if (epoch_limit > 0 && it->epoch == epoch_limit) {
      LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(it->buffer->data, 0, it->buffer->bytes, stream));
      it->epoch = 0;
    }
    if (epoch_limit > 0) ++it->epoch;
    return {static_cast<unsigned char*>(it->buffer->data), it->epoch};
  }

private:
  // A graph the user captures would replay the one epoch this launch takes, and each replay would read the
  // statuses of the replay before as its own: wrong sums, no error. So a launch with tagged statuses refuses capture.
  static void refuse_capture(cudaStream_t stream) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    LAZYFUSE_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    if (capture != cudaStreamCaptureStatusNone)
      throw BackendError("a scan or an x[x op s] selection cannot be launched on a stream being captured into a "
                         "CUDA graph: its tiles' statuses are tagged with the launch's epoch, which a replayed graph "
                         "would repeat; evaluate it before cudaStreamBeginCapture or after cudaStreamEndCapture "
                         "(lazyfuse replays its own plans as CUDA graphs, LAZYFUSE_CUDA_GRAPH_KERNELS)");
  }

  struct Entry {
    int device = 0;
    StreamTag tag;
    std::shared_ptr<DeviceStorage> buffer;
    std::uint32_t epoch = 0;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

// A kernel launch ready to queue: the loaded kernel, its launch shape and its packed arguments, and the scratch of
// a split schedule, which must stay allocated until the launch is queued.
struct PreparedLaunch {
  std::shared_ptr<const LoadedKernel> kernel;
  codegen::LaunchShape shape;
  std::shared_ptr<graph::Storage> scratch;
  codegen::PackedArgs args;
};

unsigned grid_of(const codegen::LaunchShape& shape) {
  return unsigned(std::max<std::int64_t>(shape.grid, 1)); // an empty index space still launches one block
}

// The graphs of one recorded plan (runtime/PlanCache.h), per device: a replay launches the instance whose nodes
// already hold its arguments, else builds one, else resets the least recently launched one's differing nodes. A
// loop that alternates between a few sets of buffers (the result of the last call is still alive while the next
// is computed) so finds its arguments in place and changes only the scalars that changed, if any.
class ReplayGraphs final : public ReplayState {
public:
  struct OnDevice {
    int device = 0;
    std::vector<std::shared_ptr<const LoadedKernel>> kernels; // keep their modules loaded while a graph names them
    struct Instance {
      cuda::KernelGraph graph;
      std::vector<std::vector<unsigned char>> args; // per node, as last set
      std::vector<codegen::LaunchShape> shapes;
      std::uint64_t last_launch = 0;
    };
    std::vector<Instance> instances;
    std::uint64_t launches = 0;

    // Launches the chain `prepared` (in the order of `kernels`) on `stream`; returns how many nodes were set.
    std::size_t launch(std::vector<PreparedLaunch>& prepared, cudaStream_t stream) {
      std::vector<std::vector<void*>> pointers;
      std::vector<cuda::KernelLaunch> nodes;
      pointers.reserve(prepared.size());
      nodes.reserve(prepared.size());
      for (std::size_t k = 0; k < prepared.size(); ++k) {
        PreparedLaunch& p = prepared[k];
        pointers.push_back(p.args.pointers());
        nodes.push_back({p.kernel->function, grid_of(p.shape), unsigned(p.shape.block), p.shape.shared_bytes,
                         pointers.back().data()});
      }
      const auto same_node = [&](const Instance& g, std::size_t k) {
        return g.shapes[k] == prepared[k].shape && g.args[k] == prepared[k].args.bytes();
      };
      Instance* chosen = nullptr;
      std::size_t set = 0;
      for (Instance& g : instances) {
        bool same = true;
        for (std::size_t k = 0; k < prepared.size() && same; ++k) same = same_node(g, k);
        if (same) {
          chosen = &g;
          break;
        }
      }
      if (!chosen && instances.size() < kMaxInstances) {
        Instance g;
        g.graph = cuda::KernelGraph::build(nodes.data(), nodes.size());
        for (const PreparedLaunch& p : prepared) {
          g.args.push_back(p.args.bytes());
          g.shapes.push_back(p.shape);
        }
        instances.push_back(std::move(g));
        chosen = &instances.back();
        set = prepared.size();
      }
      if (!chosen) {
        chosen = &*std::min_element(instances.begin(), instances.end(),
                                    [](const Instance& a, const Instance& b) { return a.last_launch < b.last_launch; });
        for (std::size_t k = 0; k < prepared.size(); ++k) {
          if (same_node(*chosen, k)) continue;
          // Forgotten first: should the update fail, the node's state is unknown and must not match later.
          chosen->args[k].clear();
          chosen->graph.set(k, nodes[k]);
          chosen->args[k] = prepared[k].args.bytes();
          chosen->shapes[k] = prepared[k].shape;
          ++set;
        }
      }
      chosen->last_launch = ++launches;
      chosen->graph.launch(stream);
      return set;
    }
  };

  OnDevice& on(int device, std::span<const ReplayLaunch> launches) {
    for (OnDevice& d : devices_)
      if (d.device == device) return d;
    OnDevice d;
    d.device = device;
    for (const ReplayLaunch& l : launches) d.kernels.push_back(get_kernel(l.kernel->ir, device));
    devices_.push_back(std::move(d));
    return devices_.back();
  }

private:
  // Instances per device: enough for a loop whose calls cycle through a few sets of buffers.
  static constexpr std::size_t kMaxInstances = 4;
  std::vector<OnDevice> devices_;
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
    const void* from = static_cast<const char*>(storage.data) + off;
    if (bytes <= HostSlot::kBytes) { // a scalar's item(), a count: a copy into pinned memory, no staging
      const HostSlot slot;
      LAZYFUSE_CUDA_CHECK(cudaMemcpyAsync(slot.data(), from, bytes, cudaMemcpyDeviceToHost, s));
      LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
      std::memcpy(host, slot.data(), bytes);
      return;
    }
    LAZYFUSE_CUDA_CHECK(cudaMemcpyAsync(host, from, bytes, cudaMemcpyDeviceToHost, s));
    LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void run(const codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    cuda::require_context("running a kernel");
    PreparedLaunch p = prepare(k, outputs, get_kernel(k.ir, current_device()));
    auto pointers = p.args.pointers();
    cuda::launch(p.kernel->function, grid_of(p.shape), unsigned(p.shape.block), p.shape.shared_bytes, current_stream(),
                 pointers.data());
    if (config::log_enabled("launch"))
      config::log("launch", k.ir.name + " n=" + std::to_string(k.args.n) + " grid=" + std::to_string(p.shape.grid) +
                                "x" + std::to_string(p.shape.block));
    counters().kernels_launched++;
  }

  void run_replay(std::span<ReplayLaunch> launches, std::unique_ptr<ReplayState>& state) override {
    const int graph_kernels = config::snapshot().cuda_graph_kernels;
    if (graph_kernels == 0 || launches.size() < std::size_t(graph_kernels))
      return Executor::run_replay(launches, state);
    cuda::require_context("replaying kernels");
    if (!state) state = std::make_unique<ReplayGraphs>();
    LAZYFUSE_ASSERT(dynamic_cast<ReplayGraphs*>(state.get()) != nullptr, "a replay state of another backend");
    ReplayGraphs::OnDevice& on = static_cast<ReplayGraphs&>(*state).on(current_device(), launches);
    std::vector<PreparedLaunch> prepared;
    prepared.reserve(launches.size());
    for (std::size_t k = 0; k < launches.size(); ++k)
      prepared.push_back(prepare(*launches[k].kernel, launches[k].outputs, on.kernels[k]));
    const std::size_t updated = on.launch(prepared, current_stream());
    if (config::log_enabled("launch"))
      config::log("launch", "graph of " + std::to_string(prepared.size()) + " kernels, " + std::to_string(updated) +
                                " node(s) set");
    counters().kernels_launched += launches.size();
    counters().graph_launches++;
  }

  std::uint32_t run_checked(codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    cuda::require_context("running a kernel");
    // The kernel ors its failed checks straight into host memory (one atomic per thread that failed,
    // codegen/CudaPrinter.cpp): no copy zeroes the word or reads it back, only the wait for the stream.
    const HostSlot slot;
    std::uint32_t* word = slot.as<std::uint32_t>();
    std::atomic_ref<std::uint32_t>(*word).store(0, std::memory_order_release);
    run_with_error_word(k, outputs, word);
    LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(current_stream()));
    return std::atomic_ref<std::uint32_t>(*word).load(std::memory_order_acquire);
  }

  void run_passing_checks(codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    cuda::require_context("running a kernel");
    // One word for every such launch, never read: no check of theirs can fail, so none writes it.
    std::call_once(unread_word_once_, [&] { unread_word_.emplace(); });
    run_with_error_word(k, outputs, unread_word_->as<std::uint32_t>());
  }

  Tickets tagged_tickets(std::size_t bytes, std::uint32_t epoch_limit) override {
    LAZYFUSE_ASSERT(epoch_limit > 0, "tagged tickets need at least one epoch");
    return tagged_.get(bytes, epoch_limit);
  }

  void synchronize() override {
    cuda::require_context("synchronizing the device");
    LAZYFUSE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  void forget_kernels() override { clear_memory_cache(); }

private:
  PreparedLaunch prepare(const codegen::LoweredKernel& k, const std::vector<void*>& outputs,
                         std::shared_ptr<const LoadedKernel> kernel) {
    PreparedLaunch p;
    p.kernel = std::move(kernel);
    for (auto& node : k.input_nodes)
      if (auto buf = node->buffer()) use_on_current_stream(*buf->storage);
    p.shape = codegen::launch_shape(k.ir, k.args, p.kernel->caps, p.kernel->facts);
    codegen::SplitArgs split;
    if (codegen::has_block_scratch(k.ir.schedule)) {
      p.scratch = allocate(std::size_t(p.shape.partial_bytes));
      // Scans tag their statuses with the launch's epoch; split reductions leave their tickets zero.
      const bool scan = k.ir.schedule == codegen::Schedule::Scan;
      const Tickets tickets =
          (scan ? tagged_ : tickets_).get(std::size_t(p.shape.ticket_bytes), scan ? codegen::kScanEpochLimit : 0);
      split = {static_cast<unsigned char*>(p.scratch->data), tickets.data, p.shape.splits, tickets.epoch};
    }
    p.args = codegen::pack_kernel_args(k.ir, k.args, outputs, &split);
    return p;
  }

  TicketBuffers tickets_, tagged_;
  std::once_flag unread_word_once_;
  std::optional<HostSlot> unread_word_;
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
