// Counts (graph::NodeKind::BinCount, a library plan of fusion::partition): NumPy's bincount without weights.
#pragma once

#include "graph/Node.h"

#include <memory>
#include <string>

namespace lazyfuse::runtime {

/// The value of `count` (a BinCount node, graph/Count.h) from `input`, its source's value as a C-contiguous buffer: a
/// new buffer of int64 counts on the backend in use, exact and equal on both. The CUDA backend counts with a kernel of
/// runtime/DeviceCount.h (counted in KernelCacheStats::kernels_launched; the `launch` log channel says how), the CPU
/// backend on the threads of ThreadPool::instance(), each with counters of its own when they are few beside the
/// elements, else on the calling thread. Call under the evaluation lock (runtime/Materialize.h).
std::shared_ptr<graph::BufferView> run_bincount(const graph::Node& count, const graph::BufferView& input);

/// What runs counts on each backend, for lazyfuse-info: one line.
std::string bincount_paths();

} // namespace lazyfuse::runtime
