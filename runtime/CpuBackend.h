// The CPU backend: runs kernel IR on the host. It is what CI runs and what serves when there is no GPU.
#pragma once

#include "codegen/KernelIR.h"

namespace lazyfuse::runtime {

/// Evaluates `ir` for every index in [0, args.n), writing args.outputs. Splits large index ranges over
/// `threads` host threads (0: all hardware threads). Each element is computed independently, in the same
/// order of operations as the CUDA kernel, with the same op functions.
void run_on_cpu(const codegen::KernelIR& ir, const codegen::KernelArgs& args, int threads);

} // namespace lazyfuse::runtime
