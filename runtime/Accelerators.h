// Library kernels for unfused plans (LAZYFUSE_ACCELERATORS, like CuPy's CUPY_ACCELERATORS): CUB's device-wide
// reductions, compiled ahead of time into the library (runtime/CubReductions.cu), run the plain reductions of a
// materialized buffer where they measured faster than the generated kernel. docs/design.md ("Library kernels")
// lists the cases and the measurements.
#pragma once

#include "fusion/Partition.h"
#include "graph/Node.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace lazyfuse::runtime {

/// What try_accelerated did with a plan.
enum class Accelerated : std::uint8_t {
  NotApplicable, ///< no library kernel can run it (or not the CUDA backend): lower and run it as usual
  Declined,      ///< one could, but the fused kernel runs it (LAZYFUSE_ACCELERATORS empty, below the limits)
  Served,        ///< a library kernel ran it: `outputs` holds its buffer
};

/// Runs `plan` with a library kernel when it is one of the cases below and the setting and limits allow it, and then
/// returns Served with `outputs` holding the plan's output buffer (C-contiguous, not yet attached to the node).
/// Otherwise it does nothing and says whether the plan was a candidate (Declined) or not (NotApplicable). Whether a
/// candidate is served depends on LAZYFUSE_ACCELERATORS and the limits at the time of the call, so a cache of plans
/// must not replay candidates as fused kernels.
///
/// Preconditions: the caller holds the evaluation lock, and the plans before `plan` (fusion::partition's order) have
/// run. Applies only on the CUDA backend, with LAZYFUSE_ACCELERATORS=cub, on a device the CUB kernels have code for.
///
/// The cases: a plan whose single output is a `sum`, `prod`, `min` or `max` node (or its keepdims view) whose source
/// is a materialized, C-contiguous buffer of float32, float64, int64 or int32 (for int32 sums and products, the
/// int32 -> int64 cast that make_reduce puts in between is done by CUB), with nothing fused before or after it,
/// reducing
///  - every axis: cub::DeviceReduce;
///  - the innermost axes (contiguous rows): cub::DeviceSegmentedReduce;
/// within the AcceleratorLimits below.
/// Results keep NumPy's dtypes and the fused path's semantics (graph/OpMath.inc's combining functions). Every CUB
/// kernel counts in kernel_cache_stats().kernels_launched; the `accelerator` log channel tells which path a candidate
/// plan took and why, and the `launch` channel logs the CUB call.
Accelerated try_accelerated(const fusion::KernelPlan& plan, std::vector<std::shared_ptr<graph::BufferView>>& outputs);

/// When a candidate plan goes to CUB: where CUB measured faster than the fused kernel on an H200 (docs/design.md,
/// "Library kernels"; the sweep in tests/test_cuda_accelerators.cpp re-measures it). Tests and benchmarks may change
/// them through set_accelerator_limits.
struct AcceleratorLimits {
  /// Full reductions go to cub::DeviceReduce when it does them in one launch (the input fits its single-tile kernel,
  /// 4096 float32 on sm_90: no scratch to clear, unlike the fused split kernel), or when they have at least
  /// `full_min_elements` elements (two launches, but closer to the copy bandwidth). In between the fused kernel wins.
  bool full_single_tile = true;
  std::int64_t full_min_elements = std::int64_t(1) << 24;
  /// Row reductions go to cub::DeviceSegmentedReduce (one block per row) when the rows are long (at least
  /// `long_rows` elements), or few and small (at most `few_rows` rows and `few_rows_elements` elements in all, where
  /// its lower launch cost wins); many short rows are faster in the fused row kernel.
  std::int64_t long_rows = 4096;
  std::int64_t few_rows = 4096;
  std::int64_t few_rows_elements = std::int64_t(1) << 22;
};
AcceleratorLimits default_accelerator_limits();
AcceleratorLimits accelerator_limits();
/// Takes the evaluation lock, so it never changes a materialization half-way.
void set_accelerator_limits(const AcceleratorLimits& limits);

/// Plans served by library kernels in this process, and the kernels they launched.
struct AcceleratorStats {
  std::uint64_t plans = 0;
  std::uint64_t kernels = 0;
};
AcceleratorStats accelerator_stats();

} // namespace lazyfuse::runtime
