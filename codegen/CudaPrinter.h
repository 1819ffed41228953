// The CUDA C printer: kernel IR -> self-contained CUDA C source.
#pragma once

#include "codegen/KernelIR.h"

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

/// Renders `ir` as CUDA C with no #include: the op prelude (graph/OpMath.inc) and one `extern "C"` kernel named
/// ir.name, whose parameters are: inputs (const T* __restrict__), outputs (T* __restrict__), n, then the IR's
/// parameters in slot order (index parameters as the kernel's index type, scalars as their dtype). The text
/// depends only on the IR's structure: equal structures give equal source, byte for byte. Each thread runs a
/// grid-stride loop over groups of kElementsPerThread elements, with vector loads of LoadLinear inputs and vector
/// stores of outputs, and a scalar tail.
std::string render_cuda(const KernelIR& ir);

/// The C type the printer uses for `t` (e.g. "float", "lf_i64").
const char* cuda_type(DType t);

} // namespace lazyfuse::codegen
