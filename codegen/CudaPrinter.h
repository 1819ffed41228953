// The CUDA C printer: kernel IR -> self-contained CUDA C source.
#pragma once

#include "codegen/KernelIR.h"

#include <cstdint>
#include <string>

namespace lazyfuse::codegen {

/// Elements each thread handles per loop trip; contiguous inputs and the outputs move in vectors of this many
/// elements (16 bytes for float32).
inline constexpr int kElementsPerThread = 4;
/// Vectors of kElementsPerThread elements each thread of an elementwise kernel loads before it computes any: its
/// block covers kBlockSize * kVectorsPerThread vectors per loop trip.
inline constexpr int kVectorsPerThread = 2;
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
/// exponentials, the output) keep it in dynamic shared memory (KernelIR::row_cache, codegen/RowCache.h): the first
/// loop that reads it stores it, the later ones read it back. The launch gives the kernel
/// ir.row_cache.bytes_per_element() times row_cache_elements(reduced) bytes of dynamic shared memory when that is
/// at most kMaxRowCacheBytes, and the kernel reads its inputs again where it gets less.
/// Elements per group of a row cache for rows of `reduced` elements (each group starts on a whole vector): the
/// launch's dynamic shared memory is ir.row_cache.bytes_per_element() * row_cache_elements(reduced).
inline std::int64_t row_cache_elements(std::int64_t reduced) {
  return (reduced + kElementsPerThread - 1) / kElementsPerThread * kElementsPerThread;
}
/// Most dynamic shared memory a launch gives a row cache (the default per-block limit, no opt-in needed).
inline constexpr std::int64_t kMaxRowCacheBytes = 48 * 1024;

/// Renders `ir` (lowered, so analyzed: codegen/Analyze.h) as CUDA C with no #include: the functions of the op prelude
/// (graph/OpMath.inc) and of the device library that the kernel uses (codegen/FunctionLibrary.h), and one
/// `extern "C"` kernel named ir.name, whose parameters are: inputs (const T* __restrict__), outputs (T*
/// __restrict__), n, then the IR's parameters in slot order (index parameters as the kernel's index type, scalars as
/// their dtype). The text depends only on the IR's structure: equal structures give equal source, byte for byte. Each
/// thread of an elementwise kernel runs a grid-stride loop over chunks of kBlockSize * kVectorsPerThread vectors of
/// kElementsPerThread elements: it loads its kVectorsPerThread vectors of every LoadLinear input (and of loads
/// whose address steps by one) before it computes, stores vectors, and falls back to scalar code at the end and
/// where a vector would cross a row of the output. Row-schedule loops that read inputs at (offset + r) for the reduced
/// index r read them in vectors too, when the row is aligned.
std::string render_cuda(const KernelIR& ir);

/// The C type the printer uses for `t` (e.g. "float", "lf_i64").
const char* cuda_type(DType t);

} // namespace lazyfuse::codegen
