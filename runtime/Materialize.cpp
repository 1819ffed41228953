// Materialization: partition, lower, run through the executor of the backend in use (runtime/Executor.h), attach
// the buffers; and the plan cache's replay of an equal graph.
#include "runtime/Materialize.h"

#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "runtime/Accelerators.h"
#include "runtime/Counting.h"
#include "runtime/Executor.h"
#include "runtime/PlanCache.h"
#include "runtime/Products.h"
#include "runtime/Sorting.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

namespace lazyfuse::runtime {

std::recursive_mutex& evaluation_mutex() {
  static auto* m = new std::recursive_mutex;
  return *m;
}

namespace {

// The IndexError of a kernel whose error word is `word`: the first failed check (in the kernel's order) names the
// first out-of-range index of its array in C order, as NumPy does. Reading the index array materializes it; the
// caller throws right after, so that the materialization in progress ends here.
IndexError bounds_error(const codegen::LoweredKernel& k, std::uint32_t word) {
  for (std::size_t c = 0; c < k.checks.size(); ++c) {
    if (!(word & (std::uint32_t(1) << (c % 32)))) continue;
    const auto& check = k.checks[c];
    std::vector<std::int64_t> values(std::size_t(check.index->size()));
    download(check.index, DType::Int64, values.data());
    for (std::int64_t v : values)
      if (v < -check.size || v >= check.size)
        return IndexError("index " + std::to_string(v) + " is out of bounds for axis " + std::to_string(check.axis) +
                          " with size " + std::to_string(check.size));
  }
  LAZYFUSE_ASSERT(false, "a kernel reported an out-of-range index that its index arrays do not hold");
  return IndexError("index out of bounds");
}

// The index array of `check` when it is a value that never changes (materialized, in storage that is not the
// user's), else null.
graph::Node* immutable_index(const codegen::LoweredKernel::BoundsCheck& check) {
  graph::Node* index = check.index.get();
  if (!index->materialized()) return nullptr;
  const graph::BufferView* buf = index->buffer_unlocked();
  return buf->storage->external ? nullptr : index;
}

// Whether no check of `k` can fail: each one's index array is a value whose every element an earlier launch found
// valid for an axis no longer than this check's (graph::Node::known_index_bound). Then the launch is not waited
// for: a loop that gathers through the same indices again and again runs without a synchronization per call.
bool checks_known_to_pass(const codegen::LoweredKernel& k) {
  for (const auto& check : k.checks) {
    const graph::Node* index = immutable_index(check);
    if (!index || index->known_index_bound.load(std::memory_order_relaxed) > check.size) return false;
  }
  return true;
}

// After a launch whose checks all passed: the index arrays it checked whole are valid for their axes' sizes.
void remember_valid_indices(const codegen::LoweredKernel& k) {
  for (const auto& check : k.checks) {
    graph::Node* index = check.covers_all ? immutable_index(check) : nullptr;
    if (!index) continue;
    std::int64_t known = index->known_index_bound.load(std::memory_order_relaxed);
    while (check.size < known && !index->known_index_bound.compare_exchange_weak(known, check.size)) {
    }
  }
}

// A buffer for an output of `shape` and `dtype`, C-contiguous, not attached.
std::shared_ptr<graph::BufferView> allocate_output(Executor& ex, const Shape& shape, DType dtype) {
  auto v = std::make_shared<graph::BufferView>();
  v->storage = ex.allocate(std::size_t(graph::shape_size(shape)) * itemsize(dtype));
  v->strides = graph::contiguous_strides(shape);
  return v;
}

// Runs a lowered kernel computing `outputs` (nodes of `shape`) and returns their buffers (without attaching them).
// A kernel with bounds checks gets a zeroed error word, read after it runs (a synchronization): a failed check
// throws IndexError before the outputs are attached, so that every later use of them fails the same way.
std::vector<std::shared_ptr<graph::BufferView>> run_kernel(codegen::LoweredKernel& k, const Shape& shape,
                                                           std::span<graph::Node* const> outputs) {
  Executor& ex = executor();
  std::vector<std::shared_ptr<graph::BufferView>> views;
  std::vector<void*> buffers;
  for (const graph::Node* o : outputs) {
    views.push_back(allocate_output(ex, shape, o->dtype));
    buffers.push_back(views.back()->storage->data);
  }
  if (k.args.n <= 0) return views;
  if (!codegen::has_bounds_checks(k.ir)) {
    ex.run(k, buffers);
    return views;
  }
  if (checks_known_to_pass(k)) {
    ex.run_passing_checks(k, buffers);
    return views;
  }
  const std::uint32_t word = ex.run_checked(k, buffers);
  if (word != 0) throw bounds_error(k, word);
  remember_valid_indices(k);
  return views;
}

std::vector<std::shared_ptr<graph::BufferView>> run_plan(const fusion::KernelPlan& plan, codegen::LoweredKernel& k) {
  std::vector<graph::Node*> outputs;
  for (auto& o : plan.outputs) outputs.push_back(o.get());
  return run_kernel(k, plan.shape, outputs);
}

// The cache must not keep a replayed graph alive, also when a launch throws (out of memory).
struct Unbind {
  Recipe& recipe;
  ~Unbind() {
    for (auto& rk : recipe.kernels) {
      rk.kernel.input_nodes.clear();
      for (auto& check : rk.kernel.checks) check.index = nullptr;
    }
  }
};

// Re-runs the kernels recorded for a graph equal to the one `sig` describes, one at a time: a kernel with bounds
// checks may have to be waited for, and its IndexError must leave the outputs of the kernels after it unattached.
void replay_checked(Recipe& recipe, const GraphSignature& sig) {
  const Unbind unbind{recipe};
  std::vector<graph::Node*> outputs;
  for (auto& rk : recipe.kernels) {
    bind(rk, sig);
    outputs.clear();
    for (int id : rk.output_ids) outputs.push_back(sig.nodes[std::size_t(id)]);
    auto views = run_kernel(rk.kernel, rk.shape, outputs);
    for (std::size_t k = 0; k < views.size(); ++k) outputs[k]->set_buffer(std::move(views[k]));
  }
}

// Re-runs the kernels recorded for a graph equal to the one `sig` describes as one chain (Executor::run_replay: on
// the GPU one CUDA graph when it is long enough). Every output is allocated before the first launch and attached
// after the last; a kernel reading an earlier one's output binds to its pending buffer.
void replay(Recipe& recipe, const GraphSignature& sig) {
  if (recipe.bounds_checked) return replay_checked(recipe, sig);
  const Unbind unbind{recipe};
  Executor& ex = executor();
  static std::vector<const graph::BufferView*> pending; // by signature id; used under the evaluation lock
  pending.assign(sig.nodes.size(), nullptr);
  std::vector<std::shared_ptr<graph::BufferView>> views; // every output, in the recipe's order
  std::vector<ReplayLaunch> launches;
  launches.reserve(recipe.kernels.size());
  for (auto& rk : recipe.kernels) {
    bind(rk, sig, pending);
    ReplayLaunch launch{&rk.kernel, {}};
    for (int id : rk.output_ids) {
      views.push_back(allocate_output(ex, rk.shape, sig.nodes[std::size_t(id)]->dtype));
      pending[std::size_t(id)] = views.back().get();
      launch.outputs.push_back(views.back()->storage->data);
    }
    if (rk.kernel.args.n > 0) launches.push_back(std::move(launch));
  }
  ex.run_replay(launches, recipe.replay_state);
  std::size_t v = 0;
  for (auto& rk : recipe.kernels)
    for (int id : rk.output_ids) sig.nodes[std::size_t(id)]->set_buffer(std::move(views[v++]));
}

} // namespace

// The smallest node budget a plan too long to compile well is split down to (LAZYFUSE_MAX_KERNEL_NODES' minimum).
constexpr int kMinSplitNodes = 8;

void materialize(const std::vector<graph::NodePtr>& roots) {
  std::lock_guard lock(evaluation_mutex());
  fusion::PartitionOptions opt;
  const auto& cfg = config::snapshot();
  opt.eager = cfg.eager;
  opt.max_nodes = cfg.max_kernel_nodes;
  opt.max_inputs = cfg.max_kernel_inputs;
  opt.loops_for_repeated_steps = executor().kind() == Backend::Cuda;
  // Reused between calls (materialization does not nest: it holds the lock and calls nothing that materializes).
  static GraphSignature sig;
  compute_signature(roots, opt, sig);
  auto& cache = plan_cache();
  if (const std::shared_ptr<Recipe> recipe = cache.find(sig)) {
    counters().plan_hits++;
    if (config::log_enabled("fusion"))
      config::log("fusion", "plan cache hit: " + std::to_string(recipe->kernels.size()) +
                                " kernel(s) of an equal graph, rebound to this one's buffers and scalars");
    replay(*recipe, sig);
    return;
  }
  Recipe recipe;
  bool cacheable = true;
  std::vector<fusion::KernelPlan> plans = fusion::partition(roots, opt);
  for (std::size_t next = 0; next < plans.size();) {
    // Each plan is dropped once it has run, so an intermediate's buffer lives only while something still reads it (a
    // later plan's node through its sources, a user's handle) and goes back to the pool for the plans after it:
    // the vector would otherwise hold every intermediate of the materialization until its end.
    fusion::KernelPlan plan = std::move(plans[next++]);
    // Library kernels (runtime/Accelerators.h). A graph with a plan they could serve is not recorded: the setting and
    // the size limits decide anew on every call.
    // Sorts and counts (runtime/Sorting.h, runtime/Counting.h) over their contiguous sources; not recorded either.
    if (plan.library && graph::runs_over_materialized_source(plan.outputs[0]->kind)) {
      std::vector<std::shared_ptr<const graph::BufferView>> in;
      for (const graph::NodePtr& src : plan.outputs[0]->sources_unlocked()) {
        in.push_back(src->buffer());
        if (!graph::is_contiguous(*in.back(), src->shape)) {
          const fusion::KernelPlan copy{{src}, src->shape, "contiguous copy"};
          codegen::LoweredKernel lowered = codegen::lower(copy);
          in.back() = run_plan(copy, lowered)[0];
        }
      }
      auto& node = *plan.outputs[0];
      node.set_buffer(node.kind == graph::NodeKind::Sort
                          ? run_sort(node, *in[0])
                          : run_bincount(node, *in[0], in.size() > 1 ? in[1].get() : nullptr));
      cacheable = false;
      continue;
    }
    if (plan.library) { // a matrix product (runtime/Products.h); not recorded by the plan cache
      plan.outputs[0]->set_buffer(run_product(plan));
      cacheable = false;
      continue;
    }
    std::vector<std::shared_ptr<graph::BufferView>> served;
    const Accelerated accelerated = try_accelerated(plan, served);
    cacheable = cacheable && accelerated == Accelerated::NotApplicable;
    if (accelerated == Accelerated::Served) {
      for (std::size_t k = 0; k < served.size(); ++k) plan.outputs[k]->set_buffer(std::move(served[k]));
      continue;
    }
    codegen::LoweredKernel k = codegen::lower(plan);
    // A kernel too long to compile well (codegen::kMaxPrintedInstructions): what is still to compute is partitioned
    // again with half the node budget. The plans that ran are stored, so they are leaves now. Deterministic: the
    // graph alone decides, and the plan cache records the kernels that ran.
    if (const int printed = codegen::printed_instruction_count(k.ir);
        printed > codegen::kMaxPrintedInstructions && !opt.eager && opt.max_nodes > kMinSplitNodes) {
      opt.max_nodes = std::max(kMinSplitNodes, opt.max_nodes / 2);
      if (config::log_enabled("fusion"))
        config::log("fusion", "a kernel of " + std::to_string(printed) + " instructions (over " +
                                  std::to_string(codegen::kMaxPrintedInstructions) +
                                  "): partitioning the rest again with a node budget of " +
                                  std::to_string(opt.max_nodes));
      plans = fusion::partition(roots, opt);
      next = 0;
      continue;
    }
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
  if (graph::is_contiguous(*buf, node->shape)) return buf;
  const fusion::KernelPlan plan{{node}, node->shape, "contiguous copy"};
  codegen::LoweredKernel k = codegen::lower(plan);
  std::shared_ptr<const graph::BufferView> copy = run_plan(plan, k)[0];
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
