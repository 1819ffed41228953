#include "runtime/KernelCache.h"

#include "codegen/CudaPrinter.h"
#include "codegen/Nvrtc.h"
#include "graph/Config.h"
#include "runtime/DiskCache.h"
#include "runtime/Executor.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#ifndef LAZYFUSE_VERSION
#define LAZYFUSE_VERSION "dev"
#endif

namespace lazyfuse::runtime {

namespace {

struct Entry {
  codegen::KernelIR ir;
  std::shared_ptr<const LoadedKernel> kernel;
};

struct Cache {
  std::shared_mutex mutex;
  std::unordered_map<std::uint64_t, std::vector<Entry>> map; // key: hash ^ device
  std::mutex compile_mutex;                                  // one compile at a time: no duplicate work
};

Cache& cache() {
  static auto* c = new Cache;
  return *c;
}

bool same_structure(const codegen::KernelIR& a, const codegen::KernelIR& b) {
  return a.schedule == b.schedule && a.code == b.code && a.inputs == b.inputs && a.outputs == b.outputs &&
         a.params == b.params && a.unravels == b.unravels && a.index32 == b.index32 &&
         a.register_row_vectors == b.register_row_vectors && a.register_row_partial == b.register_row_partial &&
         a.transpose_tiles_wide == b.transpose_tiles_wide;
}

std::shared_ptr<const LoadedKernel> find(std::uint64_t key, const codegen::KernelIR& ir) {
  auto& c = cache();
  std::shared_lock lock(c.mutex);
  auto it = c.map.find(key);
  if (it == c.map.end()) return nullptr;
  for (auto& e : it->second)
    if (same_structure(e.ir, ir)) return e.kernel;
  return nullptr;
}

std::shared_ptr<const LoadedKernel> build(const codegen::KernelIR& ir, int device) {
  const auto& cfg = config::snapshot();
  const auto& info = cuda::device_info(device);
  codegen::CompileOptions opt;
  opt.arch = info.cc_major * 10 + info.cc_minor;
  opt.ptx = cfg.compile_ptx;
  opt.debug = cfg.compile_debug;
  opt.pch = cfg.nvrtc_pch;
  opt.dump_source_on_error = cfg.dump_source_on_error;

  const std::string source = codegen::render_cuda(ir);
  config::log("codegen", "rendered " + ir.name + ":\n" + source);
  const auto options = codegen::nvrtc_options(opt);
  const std::string key = kernel_cache_key(source, options, codegen::nvrtc_version(), opt.arch, LAZYFUSE_VERSION);

  std::optional<DiskCache> disk;
  if (!cfg.cache_in_memory) disk.emplace(cfg.cache_dir);
  std::vector<char> image;
  if (disk && disk->enabled()) {
    if (auto hit = disk->load(key)) {
      image = std::move(*hit);
      counters().disk_hits++;
      config::log("cache", "disk hit " + ir.name + " (" + key + ")");
    }
  }
  if (image.empty()) {
    auto compiled = codegen::compile_cuda(source, ir.name, opt);
    counters().misses++;
    counters().compile_nanoseconds += std::uint64_t(compiled.seconds * 1e9);
    config::log("cache", "compiled " + ir.name + " in " + std::to_string(compiled.seconds * 1e3) + " ms");
    image = std::move(compiled.image);
    if (disk && disk->enabled())
      disk->store(key, image, cfg.cache_save_source ? std::string_view(source) : std::string_view());
  }
  auto k = std::make_shared<LoadedKernel>();
  k->module = cuda::Module::load(image.data());
  k->function = k->module.function(ir.name.c_str());
  k->caps = device_caps(device, cuda::max_active_blocks_per_sm(k->function, codegen::kBlockSize, 0),
                        cuda::function_attribute(k->function, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
  k->facts = codegen::launch_facts(ir);
  return k;
}

} // namespace

codegen::DeviceCaps device_caps(int device, int resident_blocks_per_sm, std::int64_t static_shared_bytes) {
  const auto& info = cuda::device_info(device);
  codegen::DeviceCaps c;
  c.warp_size = info.warp_size;
  c.max_threads_per_block = info.max_threads_per_block;
  c.sm_count = info.sm_count;
  c.resident_blocks_per_sm = std::max(1, resident_blocks_per_sm);
  c.static_shared_bytes = static_shared_bytes;
  c.max_grid_blocks = info.max_grid_blocks;
  c.shared_bytes_per_block = std::int64_t(info.shared_bytes_per_block);
  c.shared_bytes_per_block_optin = std::int64_t(info.shared_bytes_per_block_optin);
  return c;
}

std::shared_ptr<const LoadedKernel> get_kernel(const codegen::KernelIR& ir, int device) {
  const std::uint64_t key = ir.hash ^ (std::uint64_t(device) * 0x9e3779b97f4a7c15ULL);
  if (auto k = find(key, ir)) {
    counters().memory_hits++;
    return k;
  }
  auto& c = cache();
  std::lock_guard compile_lock(c.compile_mutex);
  if (auto k = find(key, ir)) {
    counters().memory_hits++;
    return k;
  }
  auto k = build(ir, device);
  std::unique_lock lock(c.mutex);
  c.map[key].push_back({ir, k});
  return k;
}

void clear_memory_cache() {
  auto& c = cache();
  std::unique_lock lock(c.mutex);
  c.map.clear();
}

} // namespace lazyfuse::runtime
