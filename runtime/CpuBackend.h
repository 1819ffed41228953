// The CPU backend: runs kernel IR on the host. It is what CI runs and what serves when there is no GPU.
#pragma once

#include "codegen/KernelIR.h"

namespace lazyfuse::runtime {

/// Evaluates `ir` for every index in [0, args.n), writing args.outputs, on up to `threads` threads of
/// ThreadPool::instance() (0: all hardware threads; the caller is one of them). Each element is computed
/// independently, in the same order of operations as the CUDA kernel, with the same op functions; reductions follow
/// one tree fixed by their length (docs/design.md, "The CPU backend's order"), so no result depends on `threads`.
/// Thread-safe: several threads may run kernels at once. A compiled CPU code generator would take this function's
/// place in CpuExecutor::run and must give the same bits.
void run_on_cpu(const codegen::KernelIR& ir, const codegen::KernelArgs& args, int threads);

} // namespace lazyfuse::runtime
