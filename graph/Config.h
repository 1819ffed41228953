// Typed, fast access to the settings of include/lazyfuse/config.hpp for the library's own layers.
#pragma once

#include <lazyfuse/config.hpp>

#include <cstdint>
#include <string>

namespace lazyfuse::config {

/// Settings as the library reads them on hot paths. A snapshot is rebuilt only when a setting changes
/// (the generation counter), so reading costs one atomic load.
struct Snapshot {
  std::uint64_t generation = 0;
  bool eager = false;
  int max_depth = 100;
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
  std::string gpu_memory_limit; // bytes or percent, "" for none
  bool pool_enabled = true;
  bool per_thread_default_stream = false;
  int cpu_threads = 0;         // 0: hardware concurrency
  std::string accelerators;    // "cub" or "" (LAZYFUSE_ACCELERATORS)
  bool accelerator_cub = true; // CUB's kernels serve the plain reductions they win (runtime/Accelerators.h)
};

/// The current settings. The reference stays valid until the next `set`/`reset`.
const Snapshot& snapshot();

/// True when LAZYFUSE_LOG names `channel` (or "all").
bool log_enabled(std::string_view channel);
/// Writes one line "[lazyfuse:channel] message" to stderr when the channel is enabled.
void log(std::string_view channel, const std::string& message);

} // namespace lazyfuse::config
