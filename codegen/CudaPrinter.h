// The CUDA C printer: kernel IR -> self-contained CUDA C source.
#pragma once

#include "codegen/KernelIR.h"
#include "codegen/Schedule.h" // the constants the kernels are written for

#include <cstdint>
#include <string>

namespace lazyfuse::codegen {

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
