// The steps of fusion::partition, in the order partition() runs them. Internal to the fusion layer: Partition.cpp
// and the steps' tests (tests/test_partition_steps.cpp) include it; the rest of lazyfuse calls partition().
//
// The steps share one Subgraph: the unmaterialized nodes below the roots with, per node, its consumers, its
// subtree cost and whether it is stored (computed by a kernel of its own, which later plans read as a buffer).
// Each step only ever stores more nodes, never fewer, so the steps after it see a graph cut at least as finely.
// Every step runs under the runtime's evaluation lock (sources are read without copies) and is deterministic.
#pragma once

#include "fusion/Partition.h"
#include "graph/FlatTable.h"

#include <optional>
#include <string>
#include <vector>

namespace lazyfuse::fusion::steps {

/// Work worth a store: a node read through views in several index frames is stored once rather than recomputed in
/// each when the repeated work, (frames - 1) x (subtree cost + subtree loads), reaches this (a transcendental op
/// costs 4, any other op 1: lazyfuse/ops.def; a load 1). Two frames of a 24-cost tree, or a 5-point stencil of a
/// 5-point stencil step (4 x (11 + 6)), are stored; a difference of a difference (1 x (3 + 2)) stays one kernel.
inline constexpr int kExpensiveCost = 24;

struct Info {
  const graph::Node* node = nullptr;
  int consumers = 0;      ///< consumers within the subgraph
  int view_consumers = 0; ///< of which views (they read it at shifted indices)
  int cost = 0;           ///< subtree cost down to stored or materialized nodes (store_shared_or_eager)
  int loads = 0;          ///< reads of stored or materialized nodes in the subtree, each path counted
  bool stored = false;    ///< computed by a plan of its own
  bool root = false;      ///< asked for by the caller: the output of one of the root groups' plans
  std::string reason;     ///< why it is stored (LAZYFUSE_LOG=fusion)
  /// A product's epilogue ends here: this node's plan is that library call (fold_product_epilogues).
  std::shared_ptr<const ProductEpilogue> epilogue;
  bool folded = false; ///< computed inside the library call of an epilogue above it (the product, the ops between)
};

/// A node of a Subgraph and its position in the subgraph's order (-1 while collect walks below it).
struct SubgraphPosition {
  const graph::Node* node = nullptr;
  int index = -1;
  bool operator==(const SubgraphPosition&) const = default;
};

/// The unmaterialized subgraph below the roots, in post-order (sources before consumers).
struct Subgraph {
  std::vector<graph::NodePtr> order;
  std::vector<Info> info; ///< parallel to order
  /// node -> position, keyed by the node's structural hash (a first call partitions thousands of nodes, and
  /// std::unordered_map allocated a block for each).
  graph::FlatTable<SubgraphPosition> index;

  /// The position of `n` in order, or -1 (materialized, or not below the roots).
  int find(const graph::Node* n) const {
    const SubgraphPosition* p = index.find(n->hash, [n](const SubgraphPosition& e) { return e.node == n; });
    return p ? p->index : -1;
  }
};

/// What one plan inlines.
struct Region {
  int nodes = 0;
  int inputs = 0;           ///< distinct buffers read: materialized leaves and stored nodes
  std::vector<int> inlined; ///< positions in the subgraph's order, ascending
};

/// The outputs of several plans.
using PlanOutputs = std::vector<std::vector<graph::NodePtr>>;

/// Step 1. The unmaterialized roots without repeats, in the caller's order.
std::vector<graph::NodePtr> unique_roots(const std::vector<graph::NodePtr>& roots);

/// Step 2. The subgraph below `roots` (unique_roots' result), with consumer counts and the roots marked; nothing is
/// stored yet. Finds it without recursion.
Subgraph collect(const std::vector<graph::NodePtr>& roots);

/// Step 3. Computes every node's subtree cost. Stores, in eager mode, every node but the roots that computes
/// something (fills, axis maps and reshapes stay inlined: free views or scalars); otherwise every node read through
/// views in several index frames whose recomputation in each would repeat kExpensiveCost of work (a stencil of a
/// stencil, or an expensive tree). Roots are never stored here.
void store_shared_or_eager(Subgraph& g, const PartitionOptions& options);

/// Step 3b. Stores every matrix product (roots too: a product is never part of a kernel) and what its operands need
/// stored (fusion/Partition.h, "Matrix products"). After store_shared_or_eager, whose stored nodes it reads as
/// contiguous. Also stores every scan (graph::NodeKind::Scan; roots too): a scan is a kernel of its own, which inlines
/// its source (the prologue) and which consumers read as a buffer; and every sort and count
/// (graph::runs_over_materialized_source), a library plan, with its source (unless materialized).
void store_products(Subgraph& g);

/// Step 4. The roots grouped by shape, groups in order of first appearance: one multi-output plan per group.
PlanOutputs group_roots_by_shape(const std::vector<graph::NodePtr>& roots);

/// The nodes the text of a kernel inlining the whole subgraph holds: the nodes that compute (scalars are kernel
/// parameters, bounded by their bytes in whole_subgraph_fits), less all but one copy of the longest periodic stretch
/// of them in post-order (graph/Periodic.h) that codegen prints as a loop (codegen/Reroll.h: elementwise ops, casts
/// and selects repeated at least kMinRepeatedNodeSteps times, reading scalars of plain types). A 1,000-step loop
/// `x = x * a + b` holds two. Deterministic; one pass over the subgraph when nothing repeats.
int printed_node_count(const Subgraph& g);

/// The fewest copies printed_node_count counts as one (codegen/Reroll.h's kMinRepeatedSteps).
inline constexpr int kMinRepeatedNodeSteps = 8;
/// The most bytes of scalars (Fill nodes) a kernel whose steps are printed as a loop may read: CUDA takes 32,764
/// bytes of parameters since 12.1, and the rest is for buffers, sizes and divisors.
inline constexpr std::int64_t kMaxStepParamBytes = 16384;

/// Step 5. The node budget, unless whole_subgraph_fits: nodes are stored until no inlined path is longer than
/// max_nodes nodes (on a path too long, the node with the most consumers within a few nodes of its top: a loop's
/// state); while a plan then holds more than max_nodes distinct nodes, again from the start with paths shorter in
/// proportion. Cuts a chain of any length into full kernels in linear time, and a loop whose steps read their
/// state several times into kernels of many steps.
void cut_to_node_budget(Subgraph& g, int max_nodes, bool loops_for_repeated_steps = true);

/// Whether one kernel may inline the whole subgraph as far as the node budget goes: it has at most max_nodes nodes;
/// or, where the code generator prints repeated steps as a loop (PartitionOptions::loops_for_repeated_steps), its
/// printed_node_count is at most max_nodes and its scalars take at most kMaxStepParamBytes.
bool whole_subgraph_fits(const Subgraph& g, int max_nodes, bool loops_for_repeated_steps = true);

/// Step 6. After cut_to_node_budget: until every plan (each group, each stored node) inlines at most max_nodes
/// nodes and reads at most max_inputs buffers (measured, so shared nodes count once), stores the largest inlined
/// piece that fits a kernel on its own (the earliest in post-order on a tie). Ends: each round stores one more node;
/// a plan with nothing left to store runs over budget.
void enforce_budgets(Subgraph& g, const std::vector<graph::NodePtr>& roots, const PlanOutputs& groups,
                     const PartitionOptions& options);

/// Step 7. After the budgets: the reduction rules (fusion/Partition.h). Picks each plan's domain and stores the
/// reductions a plan cannot inline, and with few outer elements (fusion::prefers_split) the reductions that other
/// inlined reductions or full-shape outputs read, until nothing changes. Returns each plan's domain (nullopt: an
/// elementwise plan), in plan_outputs' order.
std::vector<std::optional<ReductionDomain>> settle_reductions(Subgraph& g, const PlanOutputs& groups);

/// Step 8. The plans, in run order: one per stored node (post-order, so producers first), then one per group of
/// roots; `domains` from settle_reductions.
std::vector<KernelPlan> make_plans(const Subgraph& g, const PlanOutputs& groups,
                                   const std::vector<std::optional<ReductionDomain>>& domains);

/// Step 9. Logs the plans (LAZYFUSE_LOG=fusion); nothing otherwise.
void log_plans(const Subgraph& g, const std::vector<KernelPlan>& plans);

/// What a plan with `outputs` inlines, stopping at materialized and stored nodes (used by the steps and the tests).
Region measure(const Subgraph& g, const std::vector<graph::NodePtr>& outputs);

/// The outputs of every plan: the stored nodes in post-order, then the groups of roots.
PlanOutputs plan_outputs(const Subgraph& g, const PlanOutputs& groups);

} // namespace lazyfuse::fusion::steps
