// Sorts (graph::NodeKind::Sort, a library plan of fusion::partition): stable, in NumPy's order (graph/Sort.h).
#pragma once

#include "graph/Node.h"

#include <memory>

namespace lazyfuse::runtime {

/// The value of `sort` (a Sort node) from `input`, its source's value as a C-contiguous buffer: a new C-contiguous
/// buffer on the backend in use. Each line along the sort axis is sorted with std::stable_sort by NumPy's order, on
/// the threads of ThreadPool::instance(); on the CUDA backend the input is copied to the host and the result back (no
/// device sort yet). Call under the evaluation lock (runtime/Materialize.h).
std::shared_ptr<graph::BufferView> run_sort(const graph::Node& sort, const graph::BufferView& input);

} // namespace lazyfuse::runtime
