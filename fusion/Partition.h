// Partitioning: which nodes of a graph become which kernels.
#pragma once

#include "fusion/ScheduleRules.h"
#include "graph/Node.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lazyfuse::fusion {

/// One kernel to run: it computes `outputs` (all of one shape) from buffers, inlining every node between them
/// and the materialized leaves.
/// The index space of a reduction kernel: the reductions' input shape and the axes they reduce. The kernel runs
/// over the kept ("outer") coordinates, and for each over the reduced ones.
struct ReductionDomain {
  Shape in_shape;
  std::vector<std::int32_t> axes;
  bool operator==(const ReductionDomain&) const = default;
  Shape outer_shape() const;    // in_shape without the reduced axes
  Shape keepdims_shape() const; // in_shape with size 1 at the reduced axes
  std::int64_t outer_size() const;
  /// Whether a kernel over this domain can write an output of `shape`: the input shape (reduce-then-broadcast,
  /// as softmax), the outer shape or the keepdims shape. Lowering serves exactly these.
  bool admits_output(const Shape& shape) const;
  std::int64_t reduced_size() const;
};

/// What a GEMM library computes around a product (fusion/ProductEpilogues.h finds it): D = act(alpha * (a @ b) +
/// beta * c + bias), with D a new buffer (c is never overwritten). cuBLASLt's epilogues take the bias, ReLU and the
/// tanh GELU; the CPU backend applies them with the op table's functions (runtime/CpuGemm.h).
enum class ProductActivation : std::uint8_t { None, Relu, GeluTanh };
struct ProductEpilogue {
  graph::NodePtr product; ///< the Matmul node, computed inside the plan (no plan of its own)
  graph::NodePtr a, b;    ///< the operands read: the product's, or x where an operand x * s folded s into alpha
  /// Scalars folded in. Read from Fill nodes when partitioning: plans with products are never cached
  /// (runtime/Materialize.cpp), so a plan always carries the values of its own graph.
  double alpha = 1, beta = 0;
  graph::NodePtr c;    ///< of the product's shape and type, or null (beta is then 0)
  graph::NodePtr bias; ///< n values along the last axis, broadcast to the product's shape (all rows alike), or null
  ProductActivation activation = ProductActivation::None;
};

struct KernelPlan {
  std::vector<graph::NodePtr> outputs;
  Shape shape;
  std::string reason; // why this plan exists (for LAZYFUSE_LOG=fusion)
  /// Set for a reduction kernel: `reduction->admits_output(shape)` holds, and every reduction it inlines is over this
  /// domain, reached with its kept axes in place.
  std::optional<ReductionDomain> reduction;
  /// A matrix product (its one output is a graph::NodeKind::Matmul node): the runtime runs it in a library (GEMM),
  /// nothing is lowered. Or a sort or a count (graph::runs_over_materialized_source), whose source is
  /// materialized (runtime/Sorting.h, runtime/Counting.h). Its
  /// operands are materialized or are views of materialized nodes (graph::operand_strides).
  bool library = false;
  /// Set for a product with work folded around it (library is set too): the plan's one output is the epilogue's
  /// last node, whose value the library call writes.
  std::shared_ptr<const ProductEpilogue> epilogue;
};

struct PartitionOptions {
  bool eager = false;
  int max_nodes = 256;
  int max_inputs = 48;
  /// The code generator prints a time loop's repeated steps as a loop (the CUDA printer, codegen/Reroll.h), so the
  /// node budget counts them once. The CPU backends run the straight-line IR, where a kernel of a thousand steps
  /// compiles for a second in LLVM and runs slower than kernels of 256 nodes: for them, false.
  bool loops_for_repeated_steps = true;
};

/// Splits the work of materializing `roots` into kernel plans, in an order in which each plan's inputs are
/// produced by earlier plans or are already materialized. May run whenever the graph is not being mutated (the
/// runtime holds its evaluation lock). Deterministic: the same graph gives the same plans.
///
/// The rules:
///  - Roots of one shape share one multi-output kernel; roots of different shapes get one kernel each.
///  - Elementwise ops, casts, fills, iotas and every view (axis maps, reshapes, rolls, slice assignment,
///    concatenation, padding) are inlined into their consumers as index arithmetic.
///  - Recompute or store: a node used by several consumers is recomputed in each (inside one kernel the IR's CSE
///    computes it once per index frame) unless it is *expensive*, has at least two consumers and at least one of
///    them is a view (so it is read at shifted indices): then it is stored once by an earlier kernel. Expensive: a
///    subtree cost of at least 24, where a transcendental op costs 4 and any other op 1 (tinygrad stores a buffer read
///    by >3 consumers; Inductor inlines up to ~30 ops).
///  - Budgets: a plan inlines at most `max_nodes` nodes and reads at most `max_inputs` buffers, where a time loop's
///    repeated steps count once (steps::printed_node_count: the CUDA printer prints them as a loop). A subgraph over
///    budget is first cut into paths of at most max_nodes nodes (shorter where a plan still holds more), then, while a
///    plan is still over (the input budget), the
///    inlined node with the largest subtree that still fits `max_nodes` is stored first (the earliest on a tie), and
///    the plan is re-measured: a long chain becomes few, full kernels.
///  - Reductions. Invariant: a reduction is inlined into a plan only when the plan's output shape is the reduction
///    domain's input, outer or keepdims shape (ReductionDomain::admits_output) and every path from the outputs
///    reaches it through elementwise ops and axis maps that keep each kept axis in place (broadcasts back along its
///    reduced axes included), all over one domain (softmax, layer norm, mean and variance of the same rows: one
///    kernel). Any other use stores it first: a slice, reshape or join of a reduced array, another domain, and any
///    plan of another shape, even where a reduction over all axes (no kept axes) reaches it through a broadcast.
///    Of the reductions a plan reaches, the first whose domain admits the plan's shape chooses its domain. With fewer
///    than kSplitBelowOuter outer elements (fusion/ScheduleRules.h), reductions that depend on reductions and
///    full-shape outputs are split apart, so that each reduction kernel can spread its reduced axis over many blocks.
///  - Matrix products (graph::NodeKind::Matmul) are library calls: each is a plan of its own, roots included. An
///    operand that a GEMM reads in place (graph::gemm_layout of graph::operand_strides: a materialized buffer or a
///    view of one) stays as it is; a view of pending work that a GEMM can read becomes the work stored contiguously
///    (one kernel) with the view left for the GEMM; any other operand is stored itself, so that its pending work and
///    its view are one kernel writing a contiguous operand.
///  - Sorts (graph::NodeKind::Sort) are library plans of their own, roots included, over their source stored.
///  - Scans (graph::NodeKind::Scan) are kernels of their own, roots included: each inlines its source (cumsum(x * x)
///    is one kernel) and its consumers read the stored scan.
///  - Eager mode: every node that computes something is its own kernel; only fills, axis maps and reshapes (free
///    views, or scalars) are inlined.
std::vector<KernelPlan> partition(const std::vector<graph::NodePtr>& roots, const PartitionOptions& options);

} // namespace lazyfuse::fusion
