#include "runtime/Accelerators.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/Ops.h"
#include "runtime/CubReductions.h"
#include "runtime/Executor.h"
#include "runtime/Materialize.h"
#include "runtime/Streams.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <string>

namespace lazyfuse::runtime {

namespace {

using graph::Node;
using graph::NodeKind;
using graph::ReduceOp;

// A plan that CUB could run: the reduction, and the materialized node it reads.
struct Candidate {
  ReduceOp op = ReduceOp::Sum;
  cub_kernels::Reduction reduction;
  const Node* input = nullptr;
  std::shared_ptr<const graph::BufferView> buffer;
};

std::optional<cub_kernels::Op> op_of(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return cub_kernels::Op::Sum;
  case ReduceOp::Prod: return cub_kernels::Op::Prod;
  case ReduceOp::Min: return cub_kernels::Op::Min;
  case ReduceOp::Max: return cub_kernels::Op::Max;
  default: return std::nullopt;
  }
}

// keepdims' view of a reduction: the reduction's axes in order, size-1 axes between them. It reads the same elements
// in the same order, so the reduction's buffer is the view's buffer.
bool is_keepdims_view(const Node& view, const Node& reduce) {
  if (view.kind != NodeKind::AxisMap || view.size() != reduce.size() || view.axes.size() != reduce.shape.size())
    return false;
  std::vector<bool> mapped(view.shape.size(), false);
  std::int32_t last = -1;
  for (std::size_t k = 0; k < view.axes.size(); ++k) {
    const graph::AxisEntry& e = view.axes[k];
    if (e.view_axis <= last || e.start != 0 || e.step != 1 || view.shape[std::size_t(e.view_axis)] != reduce.shape[k])
      return false;
    mapped[std::size_t(e.view_axis)] = true;
    last = e.view_axis;
  }
  for (std::size_t d = 0; d < view.shape.size(); ++d)
    if (!mapped[d] && view.shape[d] != 1) return false;
  return true;
}

// The plan as one CUB call, or nothing: see try_accelerated in the header for the shapes accepted.
std::optional<Candidate> candidate(const fusion::KernelPlan& plan) {
  if (!plan.reduction || plan.outputs.size() != 1) return std::nullopt;
  const Node* out = plan.outputs[0].get();
  const Node* reduce = out;
  if (out->kind == NodeKind::AxisMap) {
    const auto& srcs = out->sources_unlocked();
    if (srcs.size() != 1 || srcs[0]->kind != NodeKind::Reduce || srcs[0]->materialized() ||
        !is_keepdims_view(*out, *srcs[0]))
      return std::nullopt;
    reduce = srcs[0].get();
  }
  if (reduce->kind != NodeKind::Reduce) return std::nullopt;
  const auto op = op_of(ReduceOp(reduce->op));
  if (!op) return std::nullopt;
  const fusion::ReductionDomain& domain = *plan.reduction;
  if (domain.axes != reduce->reduce_axes) return std::nullopt;

  // Its source: a materialized node, or int32 -> int64 (sum, prod) of one, a cast that CUB does on the fly.
  const auto& rsrcs = reduce->sources_unlocked();
  if (rsrcs.size() != 1) return std::nullopt;
  const Node* input = rsrcs[0].get();
  auto buffer = input->buffer();
  if (!buffer && input->kind == NodeKind::Cast && input->dtype == DType::Int64 &&
      (*op == cub_kernels::Op::Sum || *op == cub_kernels::Op::Prod)) {
    const auto& csrcs = input->sources_unlocked();
    if (csrcs.size() == 1 && csrcs[0]->dtype == DType::Int32) {
      input = csrcs[0].get();
      buffer = input->buffer();
    }
  }
  if (!buffer || !buffer->storage || !buffer->storage->on_device || input->shape != domain.in_shape ||
      !graph::is_contiguous(*buffer, input->shape))
    return std::nullopt;

  // The reduced axes must be the innermost ones (size-1 axes aside), so that the reduction reads contiguous rows.
  bool in_reduced = false;
  for (std::size_t d = 0; d < domain.in_shape.size(); ++d) {
    if (domain.in_shape[d] == 1) continue;
    const bool reduced = std::binary_search(domain.axes.begin(), domain.axes.end(), std::int32_t(d));
    if (reduced)
      in_reduced = true;
    else if (in_reduced)
      return std::nullopt;
  }

  Candidate c;
  c.op = ReduceOp(reduce->op);
  c.input = input;
  c.buffer = std::move(buffer);
  c.reduction.op = *op;
  c.reduction.in_type = input->dtype;
  c.reduction.out_type = out->dtype;
  c.reduction.rows = domain.outer_size();
  c.reduction.row_size = domain.reduced_size();
  c.reduction.in =
      static_cast<const char*>(c.buffer->storage->data) + c.buffer->offset * std::int64_t(itemsize(input->dtype));
  if (!cub_kernels::supported(c.reduction.op, c.reduction.in_type, c.reduction.out_type)) return std::nullopt;
  // Empty reductions and empty results stay with the fused path (identities; nothing to launch).
  if (c.reduction.rows < 1 || c.reduction.row_size < 1) return std::nullopt;
  return c;
}

std::string describe(const Candidate& c) {
  const auto& r = c.reduction;
  std::string s = std::string(graph::name_of(c.op)) + " " + std::string(dtype_name(r.in_type));
  if (r.out_type != r.in_type) s += "->" + std::string(dtype_name(r.out_type));
  if (r.rows == 1) return s + " of " + std::to_string(r.row_size) + " elements";
  return s + " of " + std::to_string(r.rows) + " rows of " + std::to_string(r.row_size);
}

std::mutex& limits_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
AcceleratorLimits& limits_locked() {
  static AcceleratorLimits l = default_accelerator_limits();
  return l;
}

std::atomic<std::uint64_t> g_plans{0}, g_kernels{0};

} // namespace

AcceleratorLimits default_accelerator_limits() {
  return AcceleratorLimits{};
}

AcceleratorLimits accelerator_limits() {
  std::lock_guard lock(limits_mutex());
  return limits_locked();
}

void set_accelerator_limits(const AcceleratorLimits& limits) {
  std::lock_guard eval(evaluation_mutex());
  std::lock_guard lock(limits_mutex());
  limits_locked() = limits;
}

AcceleratorStats accelerator_stats() {
  return {g_plans.load(), g_kernels.load()};
}

Accelerated try_accelerated(const fusion::KernelPlan& plan, std::vector<std::shared_ptr<graph::BufferView>>& outputs) {
  if (!plan.reduction || plan.outputs.size() != 1) return Accelerated::NotApplicable;
  Executor& ex = executor();
  if (ex.kind() != Backend::Cuda) return Accelerated::NotApplicable;
  auto c = candidate(plan);
  if (!c) return Accelerated::NotApplicable;
  cub_kernels::Reduction& r = c->reduction;
  const bool logging = config::log_enabled("accelerator");
  auto decline = [&](const std::string& why) {
    if (logging) config::log("accelerator", describe(*c) + ": fused kernel (" + why + ")");
    return Accelerated::Declined;
  };
  if (!config::snapshot().accelerator_cub) return decline("LAZYFUSE_ACCELERATORS is empty");
  if (!cub_kernels::usable_on_current_device()) return decline("CUB has no code for this device");
  const AcceleratorLimits limits = accelerator_limits();
  if (r.rows == 1) {
    if (r.row_size < limits.full_min_elements &&
        !(limits.full_single_tile && r.row_size <= cub_kernels::single_tile_elements(r.op, r.in_type, r.out_type)))
      return decline("cub::DeviceReduce would need 2 kernels, and there are fewer than " +
                     std::to_string(limits.full_min_elements) + " elements");
  } else if (r.row_size < limits.long_rows &&
             (r.rows > limits.few_rows || r.rows * r.row_size > limits.few_rows_elements)) {
    return decline("cub::DeviceSegmentedReduce only for rows of at least " + std::to_string(limits.long_rows) +
                   " elements, or at most " + std::to_string(limits.few_rows) + " rows of " +
                   std::to_string(limits.few_rows_elements) + " elements in all");
  }

  const cub_kernels::Requirements need = cub_kernels::requirements(r);
  auto view = std::make_shared<graph::BufferView>();
  view->storage = ex.allocate(std::size_t(graph::shape_size(plan.shape)) * itemsize(r.out_type));
  view->strides = graph::contiguous_strides(plan.shape);
  r.out = view->storage->data;
  use_on_current_stream(*c->buffer->storage);
  // Scratch goes back to the pool on this stream as soon as it is released: stream order keeps it for CUB.
  const auto temp = ex.allocate(need.temp_bytes);
  cub_kernels::run(r, temp->data, need.temp_bytes, current_stream());
  counters().kernels_launched += std::uint64_t(need.kernels);
  g_plans++;
  g_kernels += std::uint64_t(need.kernels);
  if (logging)
    config::log("accelerator", describe(*c) + ": " + cub_kernels::function_name(r) + ", " +
                                   std::to_string(need.kernels) + (need.kernels == 1 ? " kernel" : " kernels"));
  if (config::log_enabled("launch"))
    config::log("launch", std::string(cub_kernels::function_name(r)) + " n=" + std::to_string(r.rows * r.row_size) +
                              " rows=" + std::to_string(r.rows) + " kernels=" + std::to_string(need.kernels));
  outputs.clear();
  outputs.push_back(std::move(view));
  return Accelerated::Served;
}

} // namespace lazyfuse::runtime
