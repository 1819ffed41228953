#include "runtime/Materialize.h"

#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "runtime/Accelerators.h"
#include "runtime/CpuBackend.h"
#include "runtime/Executor.h"
#include "runtime/PlanCache.h"

#include <lazyfuse/error.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>
#include <unordered_set>

namespace lazyfuse::runtime {

namespace {

class HostStorage : public graph::Storage {
public:
  explicit HostStorage(std::size_t n) {
    // 64-byte alignment keeps the CPU backend's columns and the vector-load rule of the IR honest.
    bytes = n;
    data = std::aligned_alloc(64, std::max<std::size_t>(64, (n + 63) / 64 * 64));
    if (!data) throw OutOfMemoryError("out of host memory: asked for " + std::to_string(n) + " bytes");
  }
  ~HostStorage() override { std::free(data); }
};

class CpuExecutor final : public Executor {
public:
  Backend kind() const override { return Backend::Cpu; }
  std::shared_ptr<graph::Storage> allocate(std::size_t bytes) override { return std::make_shared<HostStorage>(bytes); }
  std::shared_ptr<graph::Storage> upload(const void* host, std::size_t bytes) override {
    auto s = std::make_shared<HostStorage>(bytes);
    if (bytes) std::memcpy(s->data, host, bytes);
    return s;
  }
  void download(const graph::Storage& s, std::size_t off, void* host, std::size_t bytes) override {
    if (bytes) std::memcpy(host, static_cast<const char*>(s.data) + off, bytes);
  }
  void run(const codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    // The CPU backend has nothing to compile; it still counts structures, so tests of the kernel cache's
    // behaviour (how many distinct kernels a loop needs) run in CI.
    {
      std::lock_guard lock(mutex_);
      if (seen_.insert(k.ir.hash).second)
        counters().misses++;
      else
        counters().memory_hits++;
    }
    codegen::KernelArgs args = k.args;
    args.outputs = outputs;
    run_on_cpu(k.ir, args, config::snapshot().cpu_threads);
    counters().kernels_launched++;
  }
  void synchronize() override {}
  void forget_kernels() override {
    std::lock_guard lock(mutex_);
    seen_.clear();
  }

private:
  std::mutex mutex_;
  std::unordered_set<std::uint64_t> seen_;
};

struct Selected {
  Executor* executor = nullptr;
  std::unique_ptr<Executor> owned;
};

Selected select_backend() {
  Selected s;
  const std::string& want = config::snapshot().backend;
  if (want != "cpu") {
    std::string reason;
    s.owned = make_cuda_executor(reason);
    if (s.owned) {
      s.executor = s.owned.get();
      return s;
    }
    if (want == "cuda") throw BackendError("LAZYFUSE_BACKEND=cuda, but CUDA is not usable: " + reason);
    std::fprintf(stderr, "lazyfuse: no usable CUDA device (%s); running on the CPU backend\n", reason.c_str());
  }
  s.executor = &cpu_executor();
  return s;
}

} // namespace

Counters& counters() {
  static Counters c;
  return c;
}

Executor& cpu_executor() {
  static auto* e = new CpuExecutor; // outlives every array's storage
  return *e;
}

Executor& executor() {
  static Selected s = select_backend();
  return *s.executor;
}

std::recursive_mutex& evaluation_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}

namespace {

// Runs a lowered kernel computing `outputs` (nodes of `shape`) and returns their buffers (without attaching them).
std::vector<std::shared_ptr<graph::BufferView>> run_kernel(const codegen::LoweredKernel& k, const Shape& shape,
                                                           std::span<graph::Node* const> outputs) {
  Executor& ex = executor();
  std::vector<std::shared_ptr<graph::BufferView>> views;
  std::vector<void*> buffers;
  for (const graph::Node* o : outputs) {
    auto v = std::make_shared<graph::BufferView>();
    v->storage = ex.allocate(std::size_t(graph::shape_size(shape)) * itemsize(o->dtype));
    v->strides = graph::contiguous_strides(shape);
    buffers.push_back(v->storage->data);
    views.push_back(std::move(v));
  }
  if (k.args.n > 0) ex.run(k, buffers);
  return views;
}

std::vector<std::shared_ptr<graph::BufferView>> run_plan(const fusion::KernelPlan& plan,
                                                         const codegen::LoweredKernel& k) {
  std::vector<graph::Node*> outputs;
  for (auto& o : plan.outputs) outputs.push_back(o.get());
  return run_kernel(k, plan.shape, outputs);
}

// Re-runs the kernels recorded for a graph equal to the one `sig` describes.
void replay(Recipe& recipe, const GraphSignature& sig) {
  std::vector<graph::Node*> outputs;
  for (auto& rk : recipe.kernels) {
    // The cache must not keep this graph alive, also when the launch throws (out of memory).
    struct Unbind {
      codegen::LoweredKernel& k;
      ~Unbind() { k.input_nodes.clear(); }
    } unbind{rk.kernel};
    bind(rk, sig);
    outputs.clear();
    for (int id : rk.output_ids) outputs.push_back(sig.nodes[std::size_t(id)]);
    auto views = run_kernel(rk.kernel, rk.shape, outputs);
    for (std::size_t k = 0; k < views.size(); ++k) outputs[k]->set_buffer(std::move(views[k]));
  }
}

} // namespace

void materialize(const std::vector<graph::NodePtr>& roots) {
  std::lock_guard lock(evaluation_mutex());
  fusion::PartitionOptions opt;
  const auto& cfg = config::snapshot();
  opt.eager = cfg.eager;
  opt.max_nodes = cfg.max_kernel_nodes;
  opt.max_inputs = cfg.max_kernel_inputs;
  // Reused between calls (materialization does not nest: it holds the lock and calls nothing that materializes).
  static GraphSignature sig;
  compute_signature(roots, opt, sig);
  auto& cache = plan_cache();
  if (Recipe* recipe = cache.find(sig)) {
    counters().plan_hits++;
    if (config::log_enabled("fusion"))
      config::log("fusion", "plan cache hit: " + std::to_string(recipe->kernels.size()) +
                                " kernel(s) of an equal graph, rebound to this one's buffers and scalars");
    replay(*recipe, sig);
    return;
  }
  Recipe recipe;
  bool cacheable = true;
  for (auto& plan : fusion::partition(roots, opt)) {
    // Library kernels (runtime/Accelerators.h). A graph with a plan they could serve is not recorded: the setting and
    // the size limits decide anew on every call.
    std::vector<std::shared_ptr<graph::BufferView>> served;
    const Accelerated accelerated = try_accelerated(plan, served);
    cacheable = cacheable && accelerated == Accelerated::NotApplicable;
    if (accelerated == Accelerated::Served) {
      for (std::size_t k = 0; k < served.size(); ++k) plan.outputs[k]->set_buffer(std::move(served[k]));
      continue;
    }
    codegen::LoweredKernel k = codegen::lower(plan);
    cacheable = cacheable && record(sig, plan, k, recipe);
    auto views = run_plan(plan, k);
    for (std::size_t k = 0; k < views.size(); ++k) plan.outputs[k]->set_buffer(std::move(views[k]));
  }
  if (cacheable) cache.insert(sig, std::move(recipe));
}

std::shared_ptr<const graph::BufferView> contiguous_buffer(const graph::NodePtr& node, bool attach) {
  std::lock_guard lock(evaluation_mutex());
  materialize({node});
  auto buf = node->buffer();
  LAZYFUSE_ASSERT(buf != nullptr, "materialized node without a buffer");
  auto expect = graph::contiguous_strides(node->shape);
  bool contiguous = true;
  for (std::size_t k = 0; k < node->shape.size(); ++k)
    if (node->shape[k] != 1 && buf->strides[k] != expect[k]) contiguous = false;
  if (contiguous) return buf;
  const fusion::KernelPlan plan{{node}, node->shape, "contiguous copy"};
  std::shared_ptr<const graph::BufferView> copy = run_plan(plan, codegen::lower(plan))[0];
  if (attach) node->set_buffer(copy);
  return copy;
}

void download(const graph::NodePtr& node, DType as, void* out) {
  graph::NodePtr src = node->dtype == as ? node : graph::make_cast(node, as);
  auto buf = contiguous_buffer(src);
  const std::size_t bytes = std::size_t(src->size()) * itemsize(as);
  executor().download(*buf->storage, std::size_t(buf->offset) * itemsize(as), out, bytes);
}

} // namespace lazyfuse::runtime

namespace lazyfuse {

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
  s.compile_seconds = double(c.compile_nanoseconds.load()) * 1e-9;
  return s;
}

} // namespace lazyfuse
