// lazyfuse-info: what this installation of lazyfuse sees and would do (like `cupy.show_config()`).
//
// Prints the version, the backend in use, the CUDA devices (when CUDA is usable), the NVRTC version, the memory
// pool, every LAZYFUSE_* setting with where its value came from (marking values of the environment that were
// rejected), the kernel cache (directory, entries, in-process counters) and the configuration warnings. Exits 0 on
// a machine without a GPU: "no CUDA" is a fact to report, not an error.
#include "codegen/Nvrtc.h"
#include "graph/Config.h"
#include "runtime/Counting.h"
#include "runtime/CpuGemm.h"
#include "runtime/CublasLt.h"
#include "runtime/CudaApi.h"
#include "runtime/DiskCache.h"
#include "runtime/LlvmCodegen.h"
#include "runtime/MemoryPool.h"
#include "runtime/Sorting.h"

#include <lazyfuse/config.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/runtime.hpp>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifndef LAZYFUSE_VERSION
#define LAZYFUSE_VERSION "unknown"
#endif

namespace {

namespace cu = lazyfuse::runtime::cuda;
namespace config = lazyfuse::config;
using lazyfuse::runtime::format_bytes;

constexpr int kKeyWidth = 22;

void usage(std::FILE* out) {
  std::fprintf(out, "usage: lazyfuse-info [-v | --verbose] [--version] [-h | --help]\n"
                    "\n"
                    "Prints the lazyfuse version, the backend in use, the CUDA devices, the NVRTC version, the memory\n"
                    "pool, every LAZYFUSE_* setting with its value and where it came from (default, environment or\n"
                    "C++; REJECTED marks an environment value that was not taken, and why), the kernel cache\n"
                    "(directory, entries, counters of this process) and every configuration warning.\n"
                    "\n"
                    "  -v, --verbose   also print a one-line description of each setting\n"
                    "      --version   print only the version\n"
                    "  -h, --help      print this help\n"
                    "\n"
                    "Settings are documented in docs/configuration.md. Exit status: 0, also without a GPU.\n");
}

void heading(std::string_view title) {
  std::cout << '\n' << title << '\n';
}

void row(std::string_view key, const std::string& value, int indent = 2) {
  std::string k(std::size_t(indent), ' ');
  k += key;
  std::cout << k;
  const int pad = kKeyWidth + 2 - int(k.size());
  std::cout << std::string(std::size_t(pad > 1 ? pad : 1), ' ') << value << '\n';
}

// 13000 -> "13.0", 12080 -> "12.8" (CUDA's and NVRTC's major*1000 + minor*10).
std::string cuda_version_text(int v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string bytes_text(std::size_t bytes) {
  if (bytes < 1024) return format_bytes(bytes);
  return format_bytes(bytes) + " (" + std::to_string(bytes) + " bytes)";
}

const char* source_name(config::Source s) {
  switch (s) {
  case config::Source::Default: return "default";
  case config::Source::Environment: return "environment";
  case config::Source::Cpp: return "C++";
  }
  return "?";
}

void print_backend() {
  heading("Backend");
  std::string text;
  try {
    // Prints one line on stderr when it falls back to the CPU backend.
    text = lazyfuse::backend() == lazyfuse::Backend::Cuda ? "cuda" : "cpu";
  } catch (const std::exception& e) { // LAZYFUSE_BACKEND=cuda without a usable device
    text = std::string("error: ") + e.what();
  }
  row("in use", text);
  row("requested", config::snapshot().backend + " (LAZYFUSE_BACKEND)");
  // How the CPU backend runs kernels: the LLVM code generator or the interpreter, and why (LAZYFUSE_CPU_CODEGEN).
  row("kernels on the host", lazyfuse::runtime::cpu_codegen_description());
}

void print_cuda() {
  heading("CUDA");
  const auto& a = cu::availability();
  if (!a.ok) {
    row("available", "no (" + a.reason + ")");
    return;
  }
  row("available", "yes");
  row("devices", std::to_string(a.device_count));
  bool versions_printed = false;
  for (int d = 0; d < a.device_count; ++d) {
    try {
      const auto& info = cu::device_info(d);
      if (!versions_printed) {
        row("driver version",
            cuda_version_text(info.driver_version) + " (" + std::to_string(info.driver_version) + ")");
        row("runtime version",
            cuda_version_text(info.runtime_version) + " (" + std::to_string(info.runtime_version) + ")");
        versions_printed = true;
      }
      row("device " + std::to_string(d), info.name);
      row("compute capability",
          std::to_string(info.cc_major) + "." + std::to_string(info.cc_minor) + " (sm_" +
              std::to_string(info.cc_major * 10 + info.cc_minor) + ")",
          4);
      row("SMs", std::to_string(info.sm_count), 4);
      row("memory", bytes_text(info.total_memory), 4);
      row("L2 cache", bytes_text(info.l2_bytes), 4);
      row("max threads / SM", std::to_string(info.max_threads_per_sm), 4);
    } catch (const std::exception& e) {
      row("device " + std::to_string(d), std::string("error: ") + e.what());
    }
  }
}

void print_nvrtc() {
  heading("NVRTC");
  try {
    const int v = lazyfuse::codegen::nvrtc_version();
    row("nvrtc version", cuda_version_text(v) + " (" + std::to_string(v) + ")");
  } catch (const std::exception& e) {
    row("nvrtc version", std::string("unavailable: ") + e.what());
  }
}

void print_products() {
  heading("Matrix products (linalg.hpp)");
  // cuBLASLt is loaded only where it could run: it is half a gigabyte.
  if (cu::availability().ok)
    row("GPU", lazyfuse::runtime::cublaslt::description() + "; generated kernel for integers and bool");
  else
    row("GPU", "not loaded: CUDA not available");
  row("GPU float32", config::snapshot().tf32 ? "TF32 tensor cores (LAZYFUSE_TF32=1)" : "full FP32 (LAZYFUSE_TF32=0)");
  row("CPU", lazyfuse::runtime::cpu_gemm::description());
}

void print_sorts() {
  heading("Sorts (sorting.hpp)");
  row("sort, argsort", lazyfuse::runtime::sort_paths());
  row("bincount", lazyfuse::runtime::bincount_paths());
}

void print_memory_pool() {
  heading("Memory pool" + (cu::availability().ok ? " (device " + std::to_string(lazyfuse::current_device()) + ")"
                                                 : std::string(" (no CUDA: all 0)")));
  try {
    const std::size_t limit = lazyfuse::memory::get_limit();
    row("used", bytes_text(lazyfuse::memory::used_bytes()));
    row("total", bytes_text(lazyfuse::memory::total_bytes()));
    row("limit", limit ? bytes_text(limit) : std::string("none"));
  } catch (const std::exception& e) {
    row("state", std::string("error: ") + e.what());
  }
}

void print_settings(bool verbose) {
  heading("Settings (value [source]; docs/configuration.md)");
  const auto settings = config::all();
  std::size_t name_width = 0, value_width = 0;
  auto shown = [](const std::string& v) { return v.empty() ? std::string("(empty)") : v; };
  for (const auto& s : settings) {
    name_width = std::max(name_width, s.name.size());
    value_width = std::max(value_width, shown(s.value).size());
  }
  for (const auto& s : settings) {
    const std::string v = shown(s.value);
    // A value the environment set and lazyfuse did not take is marked on its row, with the reason below it: the
    // row alone would show a default the user did not ask for, or a value that does not apply.
    std::cout << "  " << s.name << std::string(name_width - s.name.size() + 2, ' ') << v
              << std::string(value_width - v.size() + 2, ' ') << '[' << source_name(s.source) << ']'
              << (s.rejected.empty() ? "" : "  REJECTED (environment)") << '\n';
    if (!s.rejected.empty()) std::cout << "      ! " << s.rejected << '\n';
    if (verbose) std::cout << "      " << s.description << '\n';
  }
}

// Every configuration warning of this run (unknown LAZYFUSE_* variables and log channels, rejected values, a cache
// directory not used), also printed on stderr when it happened; last, so that the kernel cache's is included.
void print_warnings() {
  const auto warnings = config::warnings();
  heading("Configuration warnings (" + std::to_string(warnings.size()) + ")");
  for (const auto& w : warnings) std::cout << "  " << w << '\n';
}

void print_kernel_cache() {
  heading("Kernel cache");
  const auto& cfg = config::snapshot();
  if (cfg.cache_in_memory) {
    row("directory",
        "disabled: memory only (LAZYFUSE_CACHE_IN_MEMORY=" + config::get("LAZYFUSE_CACHE_IN_MEMORY") + ")");
  } else if (cfg.cache_dir.empty()) {
    row("directory", "disabled: memory only (no LAZYFUSE_CACHE_DIR, XDG_CACHE_HOME or HOME)");
  } else {
    row("directory", cfg.cache_dir);
    std::error_code ec;
    if (!std::filesystem::exists(cfg.cache_dir, ec)) {
      // Not created here: an info tool should not leave directories behind. The first compile creates it.
      row("entries", "0 (the directory does not exist yet)");
    } else {
      lazyfuse::runtime::DiskCache disk(cfg.cache_dir);
      if (!disk.enabled()) {
        row("entries", "not used: kernels are cached in memory only (" + disk.problem() + ")");
      } else {
        const auto info = disk.info();
        row("entries", std::to_string(info.entries) + " (" + bytes_text(info.bytes) + ")");
      }
    }
  }
  const auto st = lazyfuse::kernel_cache_stats();
  std::cout << "  counters of this process\n";
  row("memory hits", std::to_string(st.memory_hits), 4);
  row("disk hits", std::to_string(st.disk_hits), 4);
  row("misses", std::to_string(st.misses), 4);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f s", st.compile_seconds);
  row("compile time", seconds, 4);
  row("kernels launched", std::to_string(st.kernels_launched), 4);
  row("library calls", std::to_string(st.library_calls), 4);
  row("graph launches", std::to_string(st.graph_launches), 4);
}

} // namespace

int main(int argc, char** argv) {
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    }
    if (a == "--version") {
      std::cout << "lazyfuse " << LAZYFUSE_VERSION << '\n';
      return 0;
    }
    if (a == "-v" || a == "--verbose") {
      verbose = true;
      continue;
    }
    std::fprintf(stderr, "lazyfuse-info: unknown argument '%s'\n\n", argv[i]);
    usage(stderr);
    return 2;
  }

  std::cout << "lazyfuse " << LAZYFUSE_VERSION << '\n';
  print_backend();
  print_cuda();
  print_nvrtc();
  print_products();
  print_sorts();
  print_memory_pool();
  print_settings(verbose);
  print_kernel_cache();
  print_warnings();
  std::cout.flush();
  return 0;
}
