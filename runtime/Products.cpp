#include "runtime/Products.h"

#include "codegen/Lower.h"
#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/Matmul.h"
#include "runtime/CpuGemm.h"
#include "runtime/CublasLt.h"
#include "runtime/Executor.h"
#include "runtime/Streams.h"

#include <lazyfuse/config.hpp>

namespace lazyfuse::runtime {

namespace {

using graph::BufferView;
using graph::Node;
using graph::NodeKind;
using graph::NodePtr;

// Runs the plans of a small graph built here (a copy, the fallback product) and attaches their buffers.
void run_plans(const std::vector<fusion::KernelPlan>& plans) {
  Executor& ex = executor();
  for (const fusion::KernelPlan& plan : plans) {
    LAZYFUSE_ASSERT(!plan.library, "a product inside a product's fallback");
    const codegen::LoweredKernel k = codegen::lower(plan);
    std::vector<std::shared_ptr<BufferView>> views;
    std::vector<void*> buffers;
    for (const NodePtr& o : plan.outputs) {
      auto v = std::make_shared<BufferView>();
      v->storage = ex.allocate(std::size_t(graph::shape_size(plan.shape)) * itemsize(o->dtype));
      v->strides = graph::contiguous_strides(plan.shape);
      buffers.push_back(v->storage->data);
      views.push_back(std::move(v));
    }
    if (k.args.n > 0) ex.run(k, buffers);
    for (std::size_t j = 0; j < views.size(); ++j) plan.outputs[j]->set_buffer(std::move(views[j]));
  }
}

// One operand as the GEMM reads it. `keep` holds the memory for as long as the call needs it.
struct Operand {
  std::shared_ptr<graph::Storage> keep;
  const char* data = nullptr;
  graph::GemmLayout layout;
};

Operand resolve(const NodePtr& src) {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  if (graph::operand_strides(*src, false, strides, offset)) {
    const BufferView* buf = src->buffer_unlocked();
    if (!buf) buf = src->sources_unlocked()[0]->buffer_unlocked();
    if (auto layout = graph::gemm_layout(src->shape, strides)) {
      Operand o;
      o.keep = buf->storage;
      o.data = static_cast<const char*>(buf->storage->data) + offset * std::int64_t(itemsize(src->dtype));
      o.layout = *layout;
      return o;
    }
  }
  // A view no GEMM reads: one kernel writes it contiguously (this node's own buffer only for the call).
  fusion::KernelPlan plan{{src}, src->shape, "contiguous operand of a matrix product"};
  Executor& ex = executor();
  const codegen::LoweredKernel k = codegen::lower(plan);
  auto storage = ex.allocate(std::size_t(src->size()) * itemsize(src->dtype));
  std::vector<void*> out{storage->data};
  ex.run(k, out);
  Operand o;
  o.keep = storage;
  o.data = static_cast<const char*>(storage->data);
  o.layout = *graph::gemm_layout(src->shape, graph::contiguous_strides(src->shape));
  if (config::log_enabled("accelerator"))
    config::log("accelerator", "matmul operand " + graph::describe("", *src) + " copied: no GEMM layout reads it");
  return o;
}

// The product as a generated reduction kernel over the operand nodes: element (batch, i, j) reduces
// a[batch, i, l] * b[batch, l, j] over l, the innermost axis of the (batch..., m, n, k) domain.
std::shared_ptr<const BufferView> fallback(const Node& product, const std::string& why) {
  const NodePtr& a = product.sources_unlocked()[0];
  const NodePtr& b = product.sources_unlocked()[1];
  const std::size_t nb = product.shape.size() - 2;
  const std::int64_t k = a->shape.back();
  Shape domain = product.shape;
  domain.push_back(k);
  std::vector<graph::AxisEntry> ea, eb;
  for (std::size_t d = 0; d < nb; ++d) {
    ea.push_back({int(d), 0, 1});
    eb.push_back({int(d), 0, 1});
  }
  ea.push_back({int(nb), 0, 1});     // a's rows: i
  ea.push_back({int(nb + 2), 0, 1}); // a's columns: l
  eb.push_back({int(nb + 2), 0, 1}); // b's rows: l
  eb.push_back({int(nb + 1), 0, 1}); // b's columns: j
  NodePtr x = graph::make_axis_map(a, domain, ea), y = graph::make_axis_map(b, domain, eb);
  const std::vector<int> last{int(nb + 2)};
  NodePtr result;
  if (product.dtype == DType::Bool) {
    result =
        graph::make_reduce(graph::ReduceOp::Any, graph::make_binary(graph::BinaryOp::LogicalAnd, x, y), last, false);
  } else {
    if (is_half(product.dtype)) {
      x = graph::make_cast(x, DType::Float32);
      y = graph::make_cast(y, DType::Float32);
    }
    result = graph::make_cast(
        graph::make_reduce(graph::ReduceOp::Sum, graph::make_binary(graph::BinaryOp::Multiply, x, y), last, false),
        product.dtype);
  }
  if (config::log_enabled("accelerator"))
    config::log("accelerator", "matmul " + graph::describe("", product) + ": generated kernel (" + why + ")");
  fusion::PartitionOptions opt;
  run_plans(fusion::partition({result}, opt));
  auto buf = result->buffer();
  LAZYFUSE_ASSERT(buf && graph::is_contiguous(*buf, product.shape), "the fallback product is not contiguous");
  return buf;
}

} // namespace

std::shared_ptr<const BufferView> run_product(const fusion::KernelPlan& plan) {
  LAZYFUSE_ASSERT(plan.library && plan.outputs.size() == 1 && plan.outputs[0]->kind == NodeKind::Matmul,
                  "run_product: not a product plan");
  const Node& p = *plan.outputs[0];
  Executor& ex = executor();
  const bool cuda = ex.kind() == Backend::Cuda;
  if (cuda) {
    std::string why;
    if (!cublaslt::supports(p.dtype))
      return fallback(p, "cuBLASLt has no " + std::string(dtype_name(p.dtype)) + " products");
    if (!cublaslt::available(&why)) return fallback(p, "cuBLASLt not loadable: " + why);
  }
  const auto& srcs = p.sources_unlocked();
  const Operand a = resolve(srcs[0]), b = resolve(srcs[1]);
  Gemm g;
  g.type = p.dtype;
  g.m = p.shape[p.shape.size() - 2];
  g.n = p.shape.back();
  g.k = srcs[0]->shape.back();
  g.batch = graph::shape_size(p.shape) / (g.m * g.n);
  g.a = a.data;
  g.la = a.layout;
  g.b = b.data;
  g.lb = b.layout;
  auto view = std::make_shared<BufferView>();
  view->storage = ex.allocate(std::size_t(graph::shape_size(p.shape)) * itemsize(p.dtype));
  view->strides = graph::contiguous_strides(p.shape);
  g.c = view->storage->data;
  if (cuda) {
    use_on_current_stream(*a.keep);
    use_on_current_stream(*b.keep);
    // Stream order keeps the workspace for cuBLASLt once it is back in the pool, as CUB's scratch.
    const auto workspace = ex.allocate(cublaslt::kWorkspaceBytes);
    if (!cublaslt::run(g, workspace->data, current_stream()))
      return fallback(p, "cuBLASLt has no algorithm for this problem");
  } else {
    cpu_gemm::run(g);
  }
  counters().library_calls++;
  if (config::log_enabled("launch"))
    config::log("launch", std::string(cuda ? "cublasLtMatmul " : "cpu gemm ") + std::string(dtype_name(p.dtype)) +
                              " batch=" + std::to_string(g.batch) + " m=" + std::to_string(g.m) +
                              " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
                              (g.la.transposed ? " a:T" : "") + (g.lb.transposed ? " b:T" : ""));
  return view;
}

std::string product_libraries() {
  return "matrix products: CUDA: " + cublaslt::description() +
         " (float32, float64, float16, bfloat16, complex; generated kernel for integers and bool); CPU: " +
         cpu_gemm::description();
}

} // namespace lazyfuse::runtime
