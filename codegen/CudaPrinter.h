// The CUDA C printer: kernel IR -> self-contained CUDA C source.
#pragma once

#include "codegen/KernelIR.h"

#include <cstdint>
#include <string>

namespace lazyfuse::codegen {

/// Elements each thread handles per loop trip; contiguous inputs and the outputs move in vectors of this many
/// elements (16 bytes for float32).
inline constexpr int kElementsPerThread = 4;
/// Threads per block the printed kernels are written for (__launch_bounds__).
inline constexpr int kBlockSize = 256;
/// Reduction loops run this many iterations per trip (column kernels twice as many), with as many independent
/// accumulators.
inline constexpr int kUnroll = 4;
/// Most blocks one outer element's reduction is split over (Split schedule).
inline constexpr int kMaxSplits = 1024;
/// Most blocks a column tile's reductions are split over (ColumnSplit): one thread of the last block folds each
/// column's partials.
inline constexpr int kMaxColumnSplits = 64;

/// Row-schedule kernels whose loops read the same row of an input more than once (softmax: the max, the sum of
/// exponentials, the output) keep it in dynamic shared memory: the first loop that reads it stores it, the later
/// ones read it back. Returns the cache's bytes per reduced element (0: the kernel has no such cache); the launch
/// gives the kernel that times row_cache_elements(reduced) bytes of dynamic shared memory when that is at most
/// kMaxRowCacheBytes, and the kernel reads its inputs again where it gets less.
std::int64_t row_cache_bytes_per_element(const KernelIR& ir);
/// Elements per group of a row cache for rows of `reduced` elements (each group starts on a whole vector): the
/// launch's dynamic shared memory is row_cache_bytes_per_element(ir) * row_cache_elements(reduced).
inline std::int64_t row_cache_elements(std::int64_t reduced) {
  return (reduced + kElementsPerThread - 1) / kElementsPerThread * kElementsPerThread;
}
/// Most dynamic shared memory a launch gives a row cache (the default per-block limit, no opt-in needed).
inline constexpr std::int64_t kMaxRowCacheBytes = 48 * 1024;
/// Strip path of elementwise kernels (see has_strip_path): rows of its column each thread computes per tile.
inline constexpr int kStripRows = 8;
/// Narrowest rows (W) the strip path is taken for: below it, most of a block's kBlockSize columns would be idle.
inline constexpr int kStripMinWidth = 128;

/// Renders `ir` as CUDA C with no #include: the op prelude (graph/OpMath.inc) and one `extern "C"` kernel named
/// ir.name, whose parameters are: inputs (const T* __restrict__), outputs (T* __restrict__), n, then the IR's
/// parameters in slot order (index parameters as the kernel's index type, scalars as their dtype). The text
/// depends only on the IR's structure: equal structures give equal source, byte for byte. Each thread runs a
/// grid-stride loop over groups of kElementsPerThread elements, with vector loads of LoadLinear inputs and vector
/// stores of outputs, and a scalar tail. Kernels with a strip path (has_strip_path) take it instead when its W is
/// wide enough. Row-schedule loops that read inputs at (offset + r) for the reduced index r read them in vectors
/// too, when the row is aligned.
std::string render_cuda(const KernelIR& ir);

/// True when the elementwise kernel of `ir` has a strip path besides the vector path: its output's linear index is
/// unravelled in a shape of at least two dimensions, and it reads some input through index arithmetic (Load: a
/// view or a broadcast). Such loads, done element by element, are strided by kElementsPerThread elements across
/// a warp in the vector path, which wastes most of each load's L1 transactions. The strip path views the output
/// as H x W, W being that shape's last dimension, and gives a block's kBlockSize threads consecutive columns
/// (coalesced) and each thread kStripRows consecutive rows of its column, with the coordinates unravelled once
/// per thread and tile, then stepped. The kernel takes it when W >= kStripMinWidth, W being parameter
/// strip_width_slot(ir); the launch must then cover ceil(W / kBlockSize) x ceil(H / kStripRows) tiles (grid-stride:
/// fewer blocks are fine).
bool has_strip_path(const KernelIR& ir);

/// The parameter slot holding the strip path's W (see has_strip_path), or -1 when the kernel has no strip path.
int strip_width_slot(const KernelIR& ir);

/// The C type the printer uses for `t` (e.g. "float", "lf_i64").
const char* cuda_type(DType t);

} // namespace lazyfuse::codegen
