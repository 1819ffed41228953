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

/// The elements of `values` where the bool `mask`, of values' shape, is true, in C order (NumPy's values[mask]): a
/// Buffer node of values' dtype and shape (count,), materialized here, without listing the positions. CUDA backend:
/// the count as in true_positions (the one synchronization), then cub::DeviceSelect::Flagged copies the flagged
/// elements' bits. When the unevaluated mask compares `values` with a scalar of its type (x[x > t]: ==, !=, <, <=,
/// >, >= of float32, float64, int32 or int64), the mask is never written: one kernel of lazyfuse's own
/// (runtime/DeviceSelect.h) tests the elements in one pass into a buffer of the worst case's size, and the host polls
/// the count it writes last (a result under a quarter of that size gets a buffer of its own). CPU backend, or a device
/// the CUB kernels have no code for: copied on the host. Both nodes are materialized first (the mask but in that case),
/// so for a lazy `values` a gather at true_positions (which computes only the selected elements) moves fewer bytes.
/// Takes the evaluation lock.
graph::NodePtr masked_values(const graph::NodePtr& values, const graph::NodePtr& mask);

/// NumPy's unique of sorted values: the first element of each run of equal neighbours of `sorted` (1-D, of a real
/// type, at least one element), equal as values (the zeros' signs alike, every NaN one value: equal_nan), as a
/// Buffer node of its dtype and shape (count,), materialized here. CUDA backend: one pass of
/// cub::DeviceSelect::Unique (runtime/CubSelection.h) into a buffer of sorted's size, then the count read (the one
/// synchronization); a result under a quarter of that size is copied into a buffer of its own. CPU backend, or a device
/// the CUB kernels have no code for: on the host. Takes the evaluation lock.
graph::NodePtr unique_sorted(const graph::NodePtr& sorted);

} // namespace lazyfuse::runtime
