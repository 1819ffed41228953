// runtime/LlvmCodegen.h in a build without LLVM (LAZYFUSE_LLVM=OFF, or LLVM 19 not found): the interpreter runs every
// kernel. Compiled instead of runtime/LlvmCodegen.cpp (runtime/CMakeLists.txt).
#include "runtime/LlvmCodegen.h"

#include "graph/Config.h"

#include <atomic>

namespace lazyfuse::runtime {

namespace {
std::atomic<std::uint64_t> g_small{0};
} // namespace

bool llvm_codegen_built() {
  return false;
}

CompiledKernel llvm_compiled_kernel(const codegen::KernelIR&) {
  return nullptr;
}

CompiledSplit llvm_compiled_split(const codegen::KernelIR&) {
  return {};
}

void llvm_forget_kernels() {}

bool llvm_kernel_cached(const codegen::KernelIR&) {
  return false;
}

void compiled_params(const codegen::KernelIR&, const codegen::KernelArgs&, std::vector<CompiledParam>& out) {
  out.clear();
}

CpuCodegenStats cpu_codegen_stats() {
  CpuCodegenStats s;
  s.small = g_small.load();
  return s;
}

void count_interpreted(bool small) {
  if (small) g_small++;
}

std::string cpu_codegen_description() {
  return std::string("interpreter (") + LAZYFUSE_CPU_CODEGEN_REASON + ")";
}

} // namespace lazyfuse::runtime
