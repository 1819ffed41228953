// Lowering: a kernel plan becomes kernel IR plus the arguments of one launch.
#pragma once

#include "codegen/KernelIR.h"
#include "fusion/Partition.h"

#include <cstdint>

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
  /// Per bounds check (IrOp::CheckedIndex's slot): the index array it checks (broadcast to the gather's index
  /// shape), the source axis and that axis' size, so that the runtime can name the index that failed.
  struct BoundsCheck {
    graph::NodePtr index;
    int axis = 0;
    std::int64_t size = 0;
    /// Every launch checks every element of `index` (the gather is at the output's own elements, under no
    /// predicate): a launch whose checks all pass shows every index valid.
    bool covers_all = false;
  };
  std::vector<BoundsCheck> checks;
};

/// How lowering reads a contiguous input at the kernel's linear index: in vectors of kElementsPerThread elements
/// (IrOp::LoadLinear) when its first element is aligned to a whole vector, else element by element (IrOp::Load).
/// Part of the kernel's structure, so the plan cache keys on it (runtime/PlanCache.h).
enum class AlignmentClass : std::uint8_t {
  Unaligned,
  Vector,
};
/// The alignment class of an input whose first element is at `first` and has type `t`.
AlignmentClass alignment_class(const void* first, DType t);

/// Kernels index with 32-bit integers when every index value they compute stays below this: half the int32 range,
/// so that the sum of two in-range values (an offset plus a step, an index plus the grid's stride) cannot overflow.
inline constexpr std::int64_t kIndex32Limit = 2147483647 / 2;
/// Whether a kernel whose largest index-like value (output elements, elements of an input's allocation, the
/// magnitude of an index parameter) is `largest` indexes with 32 bits (KernelIR::index32).
inline bool fits_index32(std::int64_t largest) {
  return largest < kIndex32Limit;
}

/// Lowers `plan`. Every node reachable from its outputs that is not materialized is inlined, so the plans of
/// fusion::partition must run in their order (earlier plans materialize what later ones read). Runs views as
/// index arithmetic over coordinates; sizes, strides and scalars become parameters. Deterministic.
LoweredKernel lower(const fusion::KernelPlan& plan);

} // namespace lazyfuse::codegen
