// The kernel cache: IR structure -> loaded CUDA function, in memory (shared by all threads) and on disk.
#pragma once

#include "codegen/KernelIR.h"
#include "runtime/CudaApi.h"

#include <memory>
#include <string>

namespace lazyfuse::runtime {

struct LoadedKernel {
  cuda::Module module;
  CUfunction function = nullptr;
  int grid_limit = 0; // most useful blocks: SMs x resident blocks per SM
  // Facts of the IR the launch needs, found once per kernel rather than at every launch.
  // Elementwise: launch only the resident blocks (grid_limit), each striding over the chunks, instead of a block
  // per chunk. Set for kernels that read through index arithmetic (views, broadcasts).
  bool resident_grid = false;
};

/// The loaded kernel for `ir` on `device`. The in-memory map (keyed by the IR's structural hash, with the IR
/// compared on a hit, so a hash collision can never run the wrong kernel) is checked before any source is rendered.
/// On a miss: render CUDA C, look up the disk cache (key: source, options, NVRTC version, architecture, lazyfuse
/// version), else compile with NVRTC and store; then load the module. Thread-safe; each structure is compiled once
/// per process even when several threads ask at once.
std::shared_ptr<const LoadedKernel> get_kernel(const codegen::KernelIR& ir, int device);

/// Empties the in-memory map (the disk cache stays).
void clear_memory_cache();

} // namespace lazyfuse::runtime
