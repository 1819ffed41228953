// The CUDA C printer: kernel IR -> self-contained CUDA C source.
#pragma once

#include "codegen/KernelIR.h"
#include "codegen/Schedule.h" // the constants the kernels are written for

#include <cstdint>
#include <string>

namespace lazyfuse::codegen {

/// Row-schedule kernels whose loops read the same row of an input more than once (softmax: the max, the sum of
/// exponentials, the output) keep it in dynamic shared memory: the first loop that reads it stores it, the later
/// ones read it back. Returns the cache's bytes per reduced element (0: the kernel has no such cache); the launch
/// gives the kernel that times row_cache_elements(reduced) bytes of dynamic shared memory when that is at most
/// kMaxRowCacheBytes, and the kernel reads its inputs again where it gets less.
std::int64_t row_cache_bytes_per_element(const KernelIR& ir);

/// Renders `ir` as CUDA C with no #include: the op prelude (graph/OpMath.inc) and one `extern "C"` kernel named
/// ir.name, whose parameters are: inputs (const T* __restrict__), outputs (T* __restrict__), n, then the IR's
/// parameters in slot order (index parameters as the kernel's index type, scalars as their dtype). The text
/// depends only on the IR's structure: equal structures give equal source, byte for byte. Each thread of an
/// elementwise kernel runs a grid-stride loop over chunks of kBlockSize * kVectorsPerThread vectors of
/// kElementsPerThread elements: it loads its kVectorsPerThread vectors of every LoadLinear input (and of loads
/// whose address steps by one) before it computes, stores vectors, and falls back to scalar code at the end and
/// where a vector would cross a row of the output. Row-schedule loops that read inputs at (offset + r) for the reduced
/// index r read them in vectors too, when the row is aligned.
std::string render_cuda(const KernelIR& ir);

/// The C type the printer uses for `t` (e.g. "float", "lf_i64").
const char* cuda_type(DType t);

} // namespace lazyfuse::codegen
