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

// `row_major`: only a layout that is not transposed will do (cuBLASLt's C).
Operand resolve(const NodePtr& src, bool row_major = false) {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  if (graph::operand_strides(*src, false, strides, offset)) {
    const BufferView* buf = src->buffer_unlocked();
    if (!buf) buf = src->sources_unlocked()[0]->buffer_unlocked();
    if (auto layout = graph::gemm_layout(src->shape, strides); layout && !(row_major && layout->transposed)) {
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

// The bias (a row broadcast to the product's shape) as n contiguous values: in place where its last axis has unit
// stride and every other stride is 0, else its first row copied by one kernel.
Operand resolve_bias(const NodePtr& bias) {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  const std::size_t last = bias->shape.size() - 1;
  if (graph::operand_strides(*bias, false, strides, offset)) {
    bool unit = strides[last] == 1;
    for (std::size_t d = 0; d < last; ++d) unit = unit && (bias->shape[d] == 1 || strides[d] == 0);
    if (unit) {
      const BufferView* buf = bias->buffer_unlocked();
      if (!buf) buf = bias->sources_unlocked()[0]->buffer_unlocked();
      Operand o;
      o.keep = buf->storage;
      o.data = static_cast<const char*>(buf->storage->data) + offset * std::int64_t(itemsize(bias->dtype));
      return o;
    }
  }
  std::vector<graph::AxisEntry> first_row(bias->shape.size(), graph::AxisEntry{-1, 0, 1});
  first_row[last] = {1, 0, 1};
  return resolve(graph::make_axis_map(bias, Shape{1, bias->shape.back()}, first_row));
}

// The epilogue's work as the unfused graph would do it: the product alone (a library call or the generated
// kernel), attached to its node, then the ops above it as kernels over that buffer. Used where the library call
// cannot take the epilogue. Returns the buffer of the plan's output, not attached.
std::shared_ptr<const BufferView> unfused(const fusion::KernelPlan& plan, const std::string& why);

// The plain product of `p` (no epilogue), as run_product computes it.
std::shared_ptr<const BufferView> product_alone(const Node& p);

} // namespace

std::shared_ptr<const BufferView> run_product(const fusion::KernelPlan& plan) {
  LAZYFUSE_ASSERT(plan.library && plan.outputs.size() == 1 &&
                      (plan.epilogue || plan.outputs[0]->kind == NodeKind::Matmul),
                  "run_product: not a product plan");
  const fusion::ProductEpilogue* e = plan.epilogue.get();
  if (!e) return product_alone(*plan.outputs[0]);
  const Node& p = *e->product;
  Executor& ex = executor();
  const bool cuda = ex.kind() == Backend::Cuda;
  if (p.materialized()) return unfused(plan, "the product was computed apart");
  if (cuda && (!cublaslt::supports(p.dtype) || !cublaslt::available()))
    return unfused(plan, "cuBLASLt cannot run the product");
  const Operand a = resolve(e->a), b = resolve(e->b);
  Operand c, bias;
  if (e->c) c = resolve(e->c, true);
  if (e->bias) bias = resolve_bias(e->bias);
  Gemm g;
  g.type = p.dtype;
  g.m = p.shape[p.shape.size() - 2];
  g.n = p.shape.back();
  g.k = e->a->shape.back();
  g.batch = graph::shape_size(p.shape) / (g.m * g.n);
  g.a = a.data;
  g.la = a.layout;
  g.b = b.data;
  g.lb = b.layout;
  g.alpha = e->alpha;
  if (e->c) {
    g.c_in = c.data;
    g.lc = c.layout;
    g.beta = e->beta;
  }
  g.bias = e->bias ? bias.data : nullptr;
  switch (e->activation) {
  case fusion::ProductActivation::None: g.activation = GemmActivation::None; break;
  case fusion::ProductActivation::Relu: g.activation = GemmActivation::Relu; break;
  case fusion::ProductActivation::GeluTanh: g.activation = GemmActivation::GeluTanh; break;
  }
  auto view = std::make_shared<BufferView>();
  view->storage = ex.allocate(std::size_t(graph::shape_size(p.shape)) * itemsize(p.dtype));
  view->strides = graph::contiguous_strides(p.shape);
  g.c = view->storage->data;
  if (cuda) {
    for (const Operand* o : std::initializer_list<const Operand*>{&a, &b, &c, &bias})
      if (o->keep) use_on_current_stream(*o->keep);
    const auto workspace = ex.allocate(cublaslt::kWorkspaceBytes);
    if (!cublaslt::run(g, workspace->data, current_stream()))
      return unfused(plan, "cuBLASLt has no algorithm for this epilogue");
  } else {
    cpu_gemm::run(g);
  }
  counters().library_calls++;
  if (config::log_enabled("launch"))
    config::log("launch", std::string(cuda ? "cublas gemm " : "cpu gemm ") + std::string(dtype_name(p.dtype)) +
                              " batch=" + std::to_string(g.batch) + " m=" + std::to_string(g.m) + " n=" +
                              std::to_string(g.n) + " k=" + std::to_string(g.k) + (g.la.transposed ? " a:T" : "") +
                              (g.lb.transposed ? " b:T" : "") + " alpha=" + std::to_string(g.alpha) +
                              (g.c_in ? " beta=" + std::to_string(g.beta) : "") + (g.bias ? " bias" : "") +
                              (g.activation == GemmActivation::Relu       ? " relu"
                               : g.activation == GemmActivation::GeluTanh ? " gelu_tanh"
                                                                          : ""));
  return view;
}

namespace {

std::shared_ptr<const BufferView> unfused(const fusion::KernelPlan& plan, const std::string& why) {
  const NodePtr& out = plan.outputs[0];
  const NodePtr& product = plan.epilogue->product;
  if (config::log_enabled("accelerator"))
    config::log("accelerator", "matmul " + graph::describe("", *product) + ": epilogue as kernels (" + why + ")");
  if (!product->materialized()) product->set_buffer(product_alone(*product));
  if (out == product) return product->buffer();
  // The plans of the ops above the product; the last computes the output, whose buffer goes back to the caller.
  fusion::PartitionOptions opt;
  std::vector<fusion::KernelPlan> plans = fusion::partition({out}, opt);
  Executor& ex = executor();
  std::shared_ptr<const BufferView> result;
  for (const fusion::KernelPlan& p : plans) {
    LAZYFUSE_ASSERT(!p.library, "a product above a computed product");
    const codegen::LoweredKernel k = codegen::lower(p);
    std::vector<std::shared_ptr<BufferView>> views;
    std::vector<void*> buffers;
    for (const NodePtr& o : p.outputs) {
      auto v = std::make_shared<BufferView>();
      v->storage = ex.allocate(std::size_t(graph::shape_size(p.shape)) * itemsize(o->dtype));
      v->strides = graph::contiguous_strides(p.shape);
      buffers.push_back(v->storage->data);
      views.push_back(std::move(v));
    }
    if (k.args.n > 0) ex.run(k, buffers);
    for (std::size_t j = 0; j < views.size(); ++j) {
      if (p.outputs[j] == out)
        result = std::move(views[j]);
      else
        p.outputs[j]->set_buffer(std::move(views[j]));
    }
  }
  LAZYFUSE_ASSERT(result != nullptr, "the epilogue's plans did not compute its output");
  return result;
}

std::shared_ptr<const BufferView> product_alone(const Node& p) {
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
    config::log("launch", std::string(cuda ? "cublas gemm " : "cpu gemm ") + std::string(dtype_name(p.dtype)) +
                              " batch=" + std::to_string(g.batch) + " m=" + std::to_string(g.m) +
                              " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
                              (g.la.transposed ? " a:T" : "") + (g.lb.transposed ? " b:T" : ""));
  return view;
}

} // namespace

std::string product_libraries() {
  return "matrix products: CUDA: " + cublaslt::description() +
         " (float32, float64, float16, bfloat16, complex; generated kernel for integers and bool); CPU: " +
         cpu_gemm::description();
}

} // namespace lazyfuse::runtime
