// Materialization: turning graph nodes into buffers. The entry point of the whole pipeline.
#pragma once

#include "graph/Node.h"

#include <lazyfuse/dtype.hpp>

#include <mutex>
#include <vector>

namespace lazyfuse::runtime {

/// Computes every root that is not materialized yet and attaches its buffer:
/// fusion::partition -> for each plan: codegen::lower -> kernel cache -> executor run -> set_buffer.
/// Thread-safe: materializations are serialized by one lock (launches are asynchronous, so this costs little).
void materialize(const std::vector<graph::NodePtr>& roots);

/// A node's value as a C-contiguous buffer (materializing it, and copying a strided view into a new buffer).
/// With `attach`, a copy becomes the node's own buffer, so it lives as long as the node (checked and attached under
/// the evaluation lock: concurrent callers get the same buffer).
std::shared_ptr<const graph::BufferView> contiguous_buffer(const graph::NodePtr& node, bool attach = false);

/// Copies the node's value to `out` (node's shape, C order) converted to `as`.
void download(const graph::NodePtr& node, DType as, void* out);

/// The lock that serializes materializations (and partitioning, which reads the sources of nodes).
std::recursive_mutex& evaluation_mutex();

} // namespace lazyfuse::runtime
