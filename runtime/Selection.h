// Boolean-mask selection (NumPy's x[mask], nonzero, flatnonzero, argwhere, compress, extract): the positions of a
// mask's true elements. Their number decides the result's shape, so listing them is the one synchronization of these
// operations (docs/semantics.md); on the CUDA backend it reads only the 8-byte count, never the mask.
#pragma once

#include "graph/Node.h"

namespace lazyfuse::runtime {

/// The flat positions (C order, ascending) of the true elements of `mask`, a bool node of any shape, materialized
/// here: a Buffer node of int64 and shape (count,) on the backend in use, which api/ feeds to gathers as any index
/// array. An empty mask or no true element gives shape (0,).
///
/// CUDA backend: cub::DeviceReduce counts the true elements, the count is copied to the host (the synchronization),
/// then cub::DeviceSelect::Flagged writes the positions into a buffer of exactly that size (runtime/CubSelection.h).
/// Their kernels count in kernel_cache_stats().kernels_launched; the `launch` log channel names the calls. On a
/// device the CUB kernels have no code for, the mask is copied to the host and listed there (below). CPU backend:
/// listed on the host, in the mask's own buffer. Takes the evaluation lock.
graph::NodePtr true_positions(const graph::NodePtr& mask);

} // namespace lazyfuse::runtime
