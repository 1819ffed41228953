// The kernel cache: IR structure -> loaded CUDA function, in memory (shared by all threads) and on disk.
#pragma once

#include "codegen/KernelIR.h"
#include "codegen/Schedule.h"
#include "runtime/CudaApi.h"

#include <memory>
#include <string>

namespace lazyfuse::runtime {

struct LoadedKernel {
  cuda::Module module;
  CUfunction function = nullptr;
  // What codegen::launch_shape needs: the device's capabilities with this function's occupancy, and the facts of
  // the IR, found once per kernel rather than at every launch.
  codegen::DeviceCaps caps;
  codegen::KernelLaunchFacts facts;
};

/// The loaded kernel for `ir` on `device`. The in-memory map (keyed by the IR's structural hash, with the IR
/// compared on a hit, so a hash collision can never run the wrong kernel) is checked before any source is rendered.
/// On a miss: render CUDA C, look up the disk cache (key: source, options, NVRTC version, architecture, lazyfuse
/// version), else compile with NVRTC and store; then load the module. Thread-safe; each structure is compiled once
/// per process even when several threads ask at once.
std::shared_ptr<const LoadedKernel> get_kernel(const codegen::KernelIR& ir, int device);

/// The capabilities of `device` (from cuda::device_info) for a kernel of which `resident_blocks_per_sm` blocks of
/// codegen::kBlockSize threads fit on an SM and which uses `static_shared_bytes` of static shared memory.
codegen::DeviceCaps device_caps(int device, int resident_blocks_per_sm, std::int64_t static_shared_bytes);

/// Empties the in-memory map (the disk cache stays).
void clear_memory_cache();

} // namespace lazyfuse::runtime
