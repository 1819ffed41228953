#include "codegen/Nvrtc.h"

#include <lazyfuse/error.hpp>

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <sstream>
#include <string_view>

namespace lazyfuse::codegen {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ' ';
    out += p;
  }
  return out;
}

// Owns an nvrtcProgram so that it is destroyed on every path out of compile_cuda, exceptions included.
class Program {
public:
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (prog_) nvrtcDestroyProgram(&prog_);
  }
  nvrtcProgram* out() { return &prog_; }
  nvrtcProgram get() const { return prog_; }

private:
  nvrtcProgram prog_ = nullptr;
};

[[noreturn]] void throw_api_error(nvrtcResult rc, std::string_view call, const std::string& program_name,
                                  const std::string& options, std::string log = {}) {
  std::ostringstream msg;
  msg << "NVRTC: " << call << " failed for program '" << program_name << "': " << nvrtcGetErrorString(rc)
      << " (options: " << options << ")";
  if (!log.empty()) msg << ":\n" << log;
  throw CompileError(msg.str(), std::move(log), options, {});
}

std::string program_log(nvrtcProgram prog) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
  // The size counts the terminating NUL, and NVRTC ends the log with a newline that adds nothing.
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

} // namespace

int nvrtc_version() {
  // A function-local static: NVRTC cannot change under a running process, and the cache key asks often.
  static const int version = [] {
    int major = 0, minor = 0;
    nvrtcResult rc = nvrtcVersion(&major, &minor);
    if (rc != NVRTC_SUCCESS)
      throw CompileError(std::string("NVRTC: nvrtcVersion failed: ") + nvrtcGetErrorString(rc), {}, {}, {});
    return major * 1000 + minor * 10;
  }();
  return version;
}

std::vector<std::string> nvrtc_options(const CompileOptions& opt) {
  std::vector<std::string> out;
  out.emplace_back("--std=c++17");
  out.push_back((opt.ptx ? "-arch=compute_" : "-arch=sm_") + std::to_string(opt.arch));
  // The numerics policy (docs/semantics.md, "Numerics"): no contraction of a * b + c into a fused multiply-add,
  // and IEEE-rounded division and square root with subnormals kept, so that + - * / and sqrt, and every
  // composition of them, give the bits the CPU backend (and NumPy, whose ufuncs each round) gives. The three
  // after --fmad are NVRTC's defaults, stated so that the cache key records them even if a default ever changes.
  out.emplace_back("--fmad=false");
  out.emplace_back("--prec-div=true");
  out.emplace_back("--prec-sqrt=true");
  out.emplace_back("--ftz=false");
  // The op prelude (graph/OpMath.inc) is shared with the CPU backend, so its functions carry no __device__.
  out.emplace_back("-default-device");
  if (opt.debug) {
    out.emplace_back("-G");
    out.emplace_back("-lineinfo");
  }
  if (opt.pch && nvrtc_version() >= 12080) out.emplace_back("--pch");
  return out;
}

std::string numbered_source(const std::string& source) {
  // A trailing newline ends the last line; it does not open an empty one.
  std::size_t lines = 0;
  for (std::size_t i = 0; i < source.size(); ++i) lines += source[i] == '\n' || i + 1 == source.size();
  const int width = std::max<int>(4, static_cast<int>(std::to_string(std::max<std::size_t>(lines, 1)).size()));

  std::string out;
  out.reserve(source.size() + (lines + 1) * (width + 3));
  std::size_t start = 0, number = 1;
  do {
    std::size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    const std::string num = std::to_string(number++);
    out.append(static_cast<std::size_t>(width) - num.size(), ' ');
    out += num;
    out += "| ";
    out.append(source, start, end - start);
    out += '\n';
    start = end + 1;
  } while (start < source.size());
  return out;
}

CompiledKernel compile_cuda(const std::string& source, const std::string& program_name, const CompileOptions& opt) {
  const std::vector<std::string> options = nvrtc_options(opt);
  const std::string joined = join(options);
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const auto& o : options) argv.push_back(o.c_str());

  Program prog;
  nvrtcResult rc = nvrtcCreateProgram(prog.out(), source.c_str(), program_name.c_str(), 0, nullptr, nullptr);
  if (rc != NVRTC_SUCCESS) throw_api_error(rc, "nvrtcCreateProgram", program_name, joined);

  CompiledKernel result;
  result.is_ptx = opt.ptx;
  const auto t0 = std::chrono::steady_clock::now();
  rc = nvrtcCompileProgram(prog.get(), static_cast<int>(argv.size()), argv.data());
  result.log = program_log(prog.get());
  if (rc == NVRTC_ERROR_COMPILATION) {
    std::string numbered = opt.dump_source_on_error ? numbered_source(source) : std::string();
    std::ostringstream msg;
    msg << "NVRTC failed to compile program '" << program_name << "' (options: " << joined << "):\n"
        << (result.log.empty() ? std::string("(NVRTC gave no log)") : result.log) << '\n';
    if (opt.dump_source_on_error)
      msg << "Source of '" << program_name << "':\n" << numbered;
    else
      msg << "Set LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR=1 to see the numbered CUDA source.";
    throw CompileError(msg.str(), std::move(result.log), joined, std::move(numbered));
  }
  if (rc != NVRTC_SUCCESS) throw_api_error(rc, "nvrtcCompileProgram", program_name, joined, std::move(result.log));

  std::size_t size = 0;
  rc = opt.ptx ? nvrtcGetPTXSize(prog.get(), &size) : nvrtcGetCUBINSize(prog.get(), &size);
  if (rc != NVRTC_SUCCESS) throw_api_error(rc, opt.ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize", program_name, joined);
  result.image.resize(size);
  rc = opt.ptx ? nvrtcGetPTX(prog.get(), result.image.data()) : nvrtcGetCUBIN(prog.get(), result.image.data());
  if (rc != NVRTC_SUCCESS) throw_api_error(rc, opt.ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN", program_name, joined);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

} // namespace lazyfuse::codegen
