// The reduction-schedule rules that partitioning must know as well as lowering. Partitioning sits below codegen
// and may not include it, so these live here; codegen/Schedule.h owns every other schedule rule and builds its
// choice (codegen::choose_reduction_schedule) from these.
//
// Both are fixed numbers, not read from the device: partitioning and lowering are cached across materializations
// (runtime/PlanCache.h) and run the same for every backend, so their decisions may depend on the graph alone. What
// depends on the device is the launch shape (codegen::launch_shape).
#pragma once

#include <cstdint>

namespace lazyfuse::fusion {

/// Below this many outer (kept) elements a reduction kernel splits each reduction across blocks, which needs its
/// reductions to be independent and its outputs reduced: dependent reductions are then stored first. A Row kernel
/// runs one block per outer element; 256 blocks are about two per SM of a current data-center GPU (132 SMs on the
/// H200, which keeps 8 blocks of 256 threads resident per SM), so with fewer outer elements most of the GPU would
/// idle while each block walks a long row alone.
inline constexpr std::int64_t kSplitBelowOuter = 256;

/// A reduction that keeps its innermost (contiguous) axis runs a thread per outer element, the threads of a warp
/// reading 32 neighbouring elements at once (Column schedules), when it has at least this many outer elements: one
/// warp's worth (32 threads on every NVIDIA GPU). With fewer, a warp would run partly empty and each thread would
/// walk the whole reduced range alone; a block per outer element (Row or Split) is then faster even though its
/// loads are strided.
inline constexpr std::int64_t kMinColumnOuter = 32;

/// Whether a reduction over `outer` outer elements would rather split each reduction over blocks (when its kernel
/// allows: independent reductions, reduced outputs only). Partitioning stores dependent reductions apart when this
/// holds, so that each of their kernels can split.
inline bool prefers_split(std::int64_t outer) {
  return outer < kSplitBelowOuter;
}

/// Whether a reduction keeping its innermost axis (`inner_kept`) over `outer` outer elements walks columns.
inline bool walks_columns(bool inner_kept, std::int64_t outer) {
  return inner_kept && outer >= kMinColumnOuter;
}

} // namespace lazyfuse::fusion
