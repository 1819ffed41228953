// The LLVM CPU code generator: kernel IR (codegen/KernelIR.h) compiled to host machine code with LLVM's ORC JIT, in
// place of the interpreter of runtime/CpuBackend.h where LAZYFUSE_CPU_CODEGEN chooses it. The interpreter defines
// the CPU results; compiled code gives the same bits (the ops are the interpreter's own functions, compiled to
// bitcode by clang: runtime/LlvmOpLibrary.cc). Optional: a build without LLVM (LAZYFUSE_LLVM=OFF, the GPU machine)
// compiles runtime/LlvmCodegenUnavailable.cpp instead, and the interpreter runs every kernel.
#pragma once

#include "codegen/KernelIR.h"

#include <cstdint>
#include <string>
#include <vector>

namespace lazyfuse::runtime {

/// One kernel parameter as the compiled code reads it: an index (int64), or a scalar converted to the op-math type
/// of the ScalarParam instruction that reads it (graph::opmath_value), in the first bytes. Indexed by instruction.
struct alignas(16) CompiledParam {
  unsigned char bytes[16];
};

/// A compiled kernel: evaluates the IR for every linear index (elementwise) or outer index (reductions, each loop in
/// the interpreter's tree order) in [begin, end). Thread-safe: ranges may run at once on several threads.
using CompiledKernel = void (*)(const void* const* inputs, void* const* outputs, const CompiledParam* params,
                                std::int64_t begin, std::int64_t end);

/// True when this build has the LLVM code generator.
bool llvm_codegen_built();

/// Elements (output elements, or outer times reduced elements) below which LAZYFUSE_CPU_CODEGEN=auto interprets a
/// kernel that has no compiled code yet: a cold compile (~10-30 ms) costs what the interpreter spends on 2^18
/// elements of a short kernel several times over, and a kernel that stays this small never repays it.
constexpr std::int64_t kMinCompiledElements = std::int64_t(1) << 18;

/// The compiled code of `ir` (compiled on first use; then from the in-memory cache, keyed by the IR's structure),
/// or null when the generator does not handle the kernel: an IrOp it does not lower yet (random numbers, ops added
/// after it), or a failed compile (logged on channel `codegen`). Null without LLVM.
/// Thread-safe.
CompiledKernel llvm_compiled_kernel(const codegen::KernelIR& ir);

/// The compiled counterpart of the interpreter's split of a reduction loop over threads (runtime/CpuBackend.cpp: few
/// outer elements, long loops): the loop's columns in blocks of whole columns, each block folded into a fresh state
/// on any thread, the blocks absorbed into the total state in block order (the counter of runtime/ReduceTree.h, so
/// the bits are the unsplit loop's). For one outer element, loop by loop in order: `block` for every block, `absorb`
/// of each block's state into the total, then `finish`, which gives the loop's results (and after the last loop runs
/// the rest of the kernel: its stores). States are `state_bytes` bytes, 16-byte aligned and zeroed before use; a
/// block reads the earlier loops' results from the total. Thread-safe as CompiledKernel.
struct CompiledSplit {
  using Block = void (*)(const void* const* inputs, void* const* outputs, const CompiledParam* params,
                         std::int64_t outer, std::int64_t first_column, std::int64_t end_column, void* state,
                         const void* total);
  using Absorb = void (*)(void* total, const void* state);
  using Finish = void (*)(const void* const* inputs, void* const* outputs, const CompiledParam* params,
                          std::int64_t outer, void* total);
  struct Loop {
    Block block;
    Absorb absorb;
    Finish finish;
  };
  std::vector<Loop> loops; ///< by loop, in the IR's order; empty where the interpreter splits the kernel
  std::size_t state_bytes = 0;
};

/// The split of `ir`, whose compiled code llvm_compiled_kernel gave (compiled on first use, into the same cache
/// entry), or none (no loops): an arg reduction in the kernel, or a failed compile. Counted in CpuCodegenStats'
/// split or split_interpreted. Thread-safe.
CompiledSplit llvm_compiled_split(const codegen::KernelIR& ir);

/// True when llvm_compiled_kernel(ir) would return code without compiling (it is in the cache).
bool llvm_kernel_cached(const codegen::KernelIR& ir);

/// Empties the in-memory cache (lazyfuse::clear_kernel_cache): the next run of each kernel compiles again. Code
/// compiled before stays mapped until the process ends (a launch may still be running it).
void llvm_forget_kernels();

/// The parameters of one launch as CompiledKernel reads them.
void compiled_params(const codegen::KernelIR& ir, const codegen::KernelArgs& args, std::vector<CompiledParam>& out);

/// Counters of the LLVM code generator in this process (tests, benchmarks, lazyfuse-info).
struct CpuCodegenStats {
  std::uint64_t compiled = 0;    ///< kernels, and kernels' splits (CompiledSplit), compiled (cold)
  std::uint64_t disk_hits = 0;   ///< the same, their object code loaded from the disk cache instead
  std::uint64_t cache_hits = 0;  ///< launches that found compiled code
  std::uint64_t unsupported = 0; ///< launches interpreted because the generator does not handle the kernel
  std::uint64_t small = 0;       ///< launches interpreted under kMinCompiledElements (LAZYFUSE_CPU_CODEGEN=auto)
  std::uint64_t failures = 0;    ///< compiles that failed (the kernel is then interpreted)
  double compile_seconds = 0;    ///< total cold compile time, JIT setup excluded
  double disk_load_seconds = 0;  ///< total time of the compiles that loaded their object code from the disk cache
  double setup_seconds = 0;      ///< the one-time JIT setup (target, bitcode check), on the first compile

  /// Launches of compiled kernels whose long loops ran split over the threads: compiled (CompiledSplit), or in the
  /// interpreter (kernels with an arg reduction).
  std::uint64_t split = 0;
  std::uint64_t split_interpreted = 0;
};
CpuCodegenStats cpu_codegen_stats();
/// Counts a launch interpreted by size or by the generator's limits (runtime/CpuBackend.cpp's dispatch).
void count_interpreted(bool small);

/// The CPU code generator LAZYFUSE_CPU_CODEGEN selects in this build, and why (lazyfuse-info): e.g. "llvm (LLVM
/// 19.1.7, host cpu znver3; kernels under 262144 elements interpreted)" or "interpreter (built with
/// LAZYFUSE_LLVM=OFF)".
std::string cpu_codegen_description();

} // namespace lazyfuse::runtime
