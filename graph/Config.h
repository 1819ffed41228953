// Typed, fast access to the settings of include/lazyfuse/config.hpp for the library's own layers.
#pragma once

#include <lazyfuse/config.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace lazyfuse::config {

/// Settings as the library reads them on hot paths. A snapshot is rebuilt only when a setting changes
/// (the generation counter), so reading costs one atomic load.
struct Snapshot {
  std::uint64_t generation = 0;
  bool eager = false;
  int max_depth = 4096;
  std::int64_t max_pinned_bytes = std::int64_t(4096) << 20; // LAZYFUSE_MAX_PINNED_MIB
  int max_kernel_nodes = 256;
  int max_kernel_inputs = 48;
  std::string backend;        // "auto", "cpu", "cuda"
  std::string log;            // comma-separated channel names
  std::uint32_t log_mask = 0; // the channels as bits (see log_enabled)
  std::string cache_dir;      // resolved directory
  bool cache_in_memory = false;
  bool cache_save_source = false;
  bool compile_ptx = false;
  bool compile_debug = false;
  bool nvrtc_pch = false;
  bool dump_source_on_error = false;
  std::string gpu_memory_limit; // as set, possibly invalid (from the environment): the pool then refuses to start
  bool pool_enabled = true;     // LAZYFUSE_POOL: pool (or a switch's on) rather than none (or off)
  bool per_thread_default_stream = false;
  int cuda_graph_kernels = 2;  // replays of at least this many kernels launch a CUDA graph; 0: never
  int cpu_threads = 0;         // 0: hardware concurrency
  std::string cpu_codegen;     // "auto", "interpreter", "llvm" (LAZYFUSE_CPU_CODEGEN)
  std::string accelerators;    // "cub" or "" (LAZYFUSE_ACCELERATORS)
  bool accelerator_cub = true; // CUB's kernels serve the plain reductions they win (runtime/Accelerators.h)
  bool tf32 = false;           // float32 products on the GPU use TF32 tensor cores (LAZYFUSE_TF32)
  std::string seed;            // LAZYFUSE_SEED as set (checked where the default generator is made)
};

/// The current settings. The reference stays valid until the next `set`/`reset`.
const Snapshot& snapshot();

/// A LAZYFUSE_GPU_MEMORY_LIMIT value, parsed.
struct MemoryLimit {
  std::uint64_t bytes = 0; ///< the limit in bytes when `percent` is 0; 0 with `percent` 0: no limit
  double percent = 0;      ///< in (0, 100]: the limit is this percent of the device's memory
};
/// Parses a LAZYFUSE_GPU_MEMORY_LIMIT value: bytes ("8589934592") or a percent ("90%", "12.5%"), surrounding
/// spaces ignored; "" and "0" mean no limit. Throws lazyfuse::Error naming the setting and the valid forms. The
/// one parser of the setting: config::set and the environment check with it, the memory pool reads with it.
MemoryLimit parse_memory_limit(std::string_view text);

/// Writes "[lazyfuse] warning: <text>" to stderr and records it for config::warnings(). Callers warn once per
/// cause (a name, a directory), never per operation.
void warn(const std::string& text);

/// True when LAZYFUSE_LOG names `channel` (or "all").
bool log_enabled(std::string_view channel);
/// Writes one line "[lazyfuse:channel] message" to stderr when the channel is enabled.
void log(std::string_view channel, const std::string& message);

} // namespace lazyfuse::config
