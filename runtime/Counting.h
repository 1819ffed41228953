// Counts (graph::NodeKind::BinCount, a library plan of fusion::partition): NumPy's bincount, with or without weights.
#pragma once

#include "graph/Node.h"

#include <memory>
#include <string>

namespace lazyfuse::runtime {

/// The value of `count` (a BinCount node, graph/Count.h) from `input` and `weights` (null for a count), its sources'
/// values as C-contiguous buffers: a new buffer on the backend in use (the `launch` log channel says how it ran).
///  - A count: int64, exact and equal on both backends. The CUDA backend counts with a kernel of runtime/DeviceCount.h
///    (counted in KernelCacheStats::kernels_launched), the CPU backend on the threads of ThreadPool::instance(), each
///    with counters of its own when they are few beside the elements, else on the calling thread.
///  - Sums of weights, in the weights' type, the same bits on every run. Float16, bfloat16, float32: fixed-point sums
///    (runtime/FixedPointSum.h), which no order changes, equal on both backends. Integers: exact (wrapping), equal on
///    both. Float64: the CPU backend adds a bin's weights one by one in the order of x (as NumPy's add.at does), the
///    CUDA backend sorts them stably by bin and combines each bin's with cub::DeviceReduce::ReduceByKey
///    (runtime/DeviceCount.h); these may differ in their last bits.
/// Call under the evaluation lock (runtime/Materialize.h).
std::shared_ptr<graph::BufferView> run_bincount(const graph::Node& count, const graph::BufferView& input,
                                                const graph::BufferView* weights);

/// NumPy's bincount in one pass over `x` when its values turn out to be below `bins` (api/Sorting.cpp): the counts
/// of x's elements in [0, bins) and x's smallest and largest element, found in the same pass. x is 1-D, of bool or an
/// integer type, with at least one element; uint64 elements above 2^63 - 1 wrap to negative numbers in the range.
/// `counts` is a Buffer node of int64 and shape {bins} on the backend in use, materialized here, as run_bincount
/// would give; reading the range (16 bytes) is the one synchronization. Takes the evaluation lock.
struct CountsAndRange {
  graph::NodePtr counts;
  std::int64_t smallest = 0;
  std::int64_t largest = 0;
};
CountsAndRange count_with_range(const graph::NodePtr& x, std::int64_t bins);

/// What runs counts on each backend, for lazyfuse-info: one line.
std::string bincount_paths();

} // namespace lazyfuse::runtime
