// Lowering: a kernel plan becomes kernel IR plus the arguments of one launch.
#pragma once

#include "codegen/KernelIR.h"
#include "fusion/Partition.h"

namespace lazyfuse::codegen {

struct LoweredKernel {
  KernelIR ir;
  KernelArgs args;                         // inputs, params and n; outputs are for the runtime to fill
  std::vector<graph::NodePtr> input_nodes; // keep the read buffers alive until the kernel has run
  // Where the launch's varying values come from, so that a kernel can be re-run over an equal graph with other
  // buffers and scalars (runtime/PlanCache.h). Valid while the graph is: per input slot, the node whose buffer it
  // reads; per parameter slot, the Fill node of a scalar parameter (null for the rest, which are functions of
  // the graph's structure).
  std::vector<const graph::Node*> input_sources;
  std::vector<const graph::Node*> scalar_sources;
};

/// Lowers `plan`. Every node reachable from its outputs that is not materialized is inlined, so the plans of
/// fusion::partition must run in their order (earlier plans materialize what later ones read). Runs views as
/// index arithmetic over coordinates; sizes, strides and scalars become parameters. Deterministic.
LoweredKernel lower(const fusion::KernelPlan& plan);

} // namespace lazyfuse::codegen
