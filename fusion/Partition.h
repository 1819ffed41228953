// Partitioning: which nodes of a graph become which kernels.
#pragma once

#include "graph/Node.h"

#include <string>
#include <vector>

namespace lazyfuse::fusion {

/// One kernel to run: it computes `outputs` (all of one shape) from buffers, inlining every node between them
/// and the materialized leaves.
struct KernelPlan {
  std::vector<graph::NodePtr> outputs;
  Shape shape;
  std::string reason; // why this plan exists (for LAZYFUSE_LOG=fusion)
};

struct PartitionOptions {
  bool eager = false;
  int max_nodes = 256;
  int max_inputs = 48;
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
///    computes it once per index frame) unless it is *expensive* and reached through at least two different
///    views: then it is stored once by an earlier kernel. Expensive: a subtree cost of at least 24, where a
///    transcendental op costs 4 and any other op 1 (tinygrad stores a buffer read by >3 consumers; Inductor
///    inlines up to ~30 ops).
///  - Budgets: a plan inlines at most `max_nodes` nodes and reads at most `max_inputs` buffers; past that, the
///    deepest inlined node with the largest subtree is stored first, and the plan is re-measured.
///  - Eager mode: every node that computes something (not a view, not a fill) is its own kernel.
std::vector<KernelPlan> partition(const std::vector<graph::NodePtr>& roots, const PartitionOptions& options);

} // namespace lazyfuse::fusion
