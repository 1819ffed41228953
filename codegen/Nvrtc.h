// The one place that talks to NVRTC: generated CUDA C in, a cubin (or PTX) out, failures as CompileError.
// Settings are taken as arguments, never read from the configuration here, so that the caller decides (and
// can put into the cache key) exactly what a kernel was compiled with.
#pragma once

#include <string>
#include <vector>

namespace lazyfuse::codegen {

/// How to compile one generated kernel.
struct CompileOptions {
  int arch = 90;                     ///< compute capability as major*10+minor; cubin for exactly sm_<arch>
  bool ptx = false;                  ///< produce PTX (compute_<arch>) instead of cubin
  bool debug = false;                ///< add -G -lineinfo
  bool pch = false;                  ///< add --pch (NVRTC >= 12.8); the PCH lives only as long as the process
  bool dump_source_on_error = false; ///< put the numbered source into CompileError::source() and its message
};

/// The result of a successful compile.
struct CompiledKernel {
  std::vector<char> image; ///< cubin, or PTX text (with its terminating NUL) when ptx
  bool is_ptx = false;
  std::string log;    ///< NVRTC's log (may be empty)
  double seconds = 0; ///< wall time of nvrtcCompileProgram + getting the image
};

/// Options passed to NVRTC for `opt`, in a fixed order: "--std=c++17", "-arch=sm_90" (or compute_90 for PTX),
/// "--fmad=false", "--prec-div=true", "--prec-sqrt=true", "--ftz=false", "-default-device", then "-G" "-lineinfo"
/// when debug and "--pch" when pch (dropped when the loaded NVRTC is older than 12.8, which does not know it).
/// No contraction into fused multiply-adds and no --use_fast_math, ever: + - * / and sqrt in generated kernels
/// must give the bits the CPU backend gives (docs/semantics.md, "Numerics").
std::vector<std::string> nvrtc_options(const CompileOptions& opt);

/// Compiles self-contained CUDA C source (it has no #include); `program_name` names it in NVRTC's log and in
/// errors. Throws lazyfuse::CompileError on failure, whose message names the program and says how to see the
/// source, whose log() is NVRTC's whole log, options() the options joined by spaces, and source() the source
/// with line numbers ("   1| ...") when dump_source_on_error (empty otherwise). Any other NVRTC API failure is
/// also a CompileError, with nvrtcGetErrorString's text in the message. Thread-safe.
CompiledKernel compile_cuda(const std::string& source, const std::string& program_name, const CompileOptions& opt);

/// NVRTC's version as major*1000 + minor*10 (e.g. 13000). Throws lazyfuse::CompileError if NVRTC cannot say.
int nvrtc_version();

/// `source` with each line prefixed by its 1-based number, right-aligned to at least four columns ("   1| ").
std::string numbered_source(const std::string& source);

} // namespace lazyfuse::codegen
