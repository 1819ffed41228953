#include "graph/Config.h"

#include <lazyfuse/error.hpp>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace lazyfuse::config {

namespace {

struct Definition {
  const char* name;
  const char* default_value;
  const char* description;
};

// Every setting, in the order `lazyfuse-info` and docs/configuration.md list them.
constexpr Definition kDefinitions[] = {
    {"LAZYFUSE_BACKEND", "auto", "auto | cpu | cuda: where materializations run; cuda fails loudly without a GPU"},
    {"LAZYFUSE_MODE", "lazy", "lazy | eager: eager runs every op as its own kernel (the baseline, a debugging aid)"},
    {"LAZYFUSE_LOG", "",
     "comma-separated channels to log to stderr: fusion, lower, codegen, cache, launch, accelerator, all"},
    {"LAZYFUSE_MAX_DEPTH", "100", "graph depth past which an array is materialized as it is built (bounded laziness)"},
    {"LAZYFUSE_MAX_KERNEL_NODES", "256", "most graph nodes fused into one kernel; larger plans are split"},
    {"LAZYFUSE_MAX_KERNEL_INPUTS", "48", "most input buffers of one kernel; larger plans are split"},
    {"LAZYFUSE_CACHE_DIR", "", "kernel cache directory (default $XDG_CACHE_HOME/lazyfuse/kernels or ~/.cache/...)"},
    {"LAZYFUSE_CACHE_IN_MEMORY", "0", "1: keep compiled kernels in memory only, never touch the disk cache"},
    {"LAZYFUSE_CACHE_SAVE_CUDA_SOURCE", "0", "1: save each kernel's .cu beside its cache entry"},
    {"LAZYFUSE_COMPILE_WITH_PTX", "0", "1: compile to PTX and let the driver finish, instead of a cubin"},
    {"LAZYFUSE_COMPILE_WITH_DEBUG", "0", "1: compile kernels with -G -lineinfo"},
    {"LAZYFUSE_NVRTC_USE_PCH", "0", "1: let NVRTC use a precompiled header (lives only as long as the process)"},
    {"LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR", "0", "1: a CompileError carries the numbered source"},
    {"LAZYFUSE_GPU_MEMORY_LIMIT", "", "most bytes the memory pool may hold: bytes (8589934592) or percent (90%)"},
    {"LAZYFUSE_POOL", "pool", "pool | none: none allocates every buffer separately (for compute-sanitizer)"},
    {"LAZYFUSE_PER_THREAD_DEFAULT_STREAM", "0", "1: the default stream is per thread (cudaStreamPerThread)"},
    {"LAZYFUSE_CPU_THREADS", "0", "threads of the CPU backend; 0: all hardware threads"},
    {"LAZYFUSE_ACCELERATORS", "cub",
     "cub | (empty): CUB's ahead-of-time kernels serve plain reductions of buffers (CUDA)"},
};

void validate(const Definition& d, const std::string& v);

struct State {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> overrides;
  std::map<std::string, std::string, std::less<>> environment;
  std::atomic<const Snapshot*> current{nullptr};
  // Every snapshot ever built: readers may still hold a reference to an older one, so none is freed.
  std::vector<std::unique_ptr<const Snapshot>> history;
  std::uint64_t generation = 0;
};

State& state() {
  static auto* s = [] {
    auto* st = new State;
    for (auto& d : kDefinitions)
      if (const char* v = std::getenv(d.name)) {
        try {
          validate(d, v);
          st->environment[d.name] = v;
        } catch (const Error& e) {
          std::fprintf(stderr, "lazyfuse: ignoring the environment's %s; using the default '%s'\n", e.what(),
                       d.default_value);
        }
      }
    return st;
  }();
  return *s;
}

const Definition* find(std::string_view name) {
  for (auto& d : kDefinitions)
    if (name == d.name) return &d;
  return nullptr;
}

std::pair<std::string, Source> value_locked(State& s, const Definition& d) {
  if (auto it = s.overrides.find(d.name); it != s.overrides.end()) return {it->second, Source::Cpp};
  if (auto it = s.environment.find(d.name); it != s.environment.end()) return {it->second, Source::Environment};
  return {d.default_value, Source::Default};
}

std::string lower(std::string v) {
  for (auto& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
  return v;
}
bool truthy(const std::string& v) {
  const std::string l = lower(v);
  return l == "1" || l == "true" || l == "yes" || l == "on";
}
bool boolean_text(const std::string& v) {
  const std::string l = lower(v);
  return l.empty() || l == "0" || l == "1" || l == "true" || l == "false" || l == "yes" || l == "no" || l == "on" ||
         l == "off";
}

// Channels of LAZYFUSE_LOG as bits, parsed once per settings change (logging is checked on hot paths).
constexpr const char* kLogChannels[] = {"fusion", "lower", "codegen", "cache", "launch", "accelerator"};
std::uint32_t parse_log(const std::string& log) {
  std::uint32_t mask = 0;
  std::size_t start = 0;
  while (start <= log.size()) {
    std::size_t end = log.find(',', start);
    if (end == std::string::npos) end = log.size();
    std::string item = log.substr(start, end - start);
    if (item == "all") mask = ~0u;
    for (std::size_t k = 0; k < std::size(kLogChannels); ++k)
      if (item == kLogChannels[k]) mask |= 1u << k;
    start = end + 1;
  }
  return mask;
}

int to_int(const std::string& name, const std::string& v) {
  try {
    std::size_t used = 0;
    int x = std::stoi(v, &used);
    if (used == v.size() && x >= 0) return x;
  } catch (const std::exception&) {
  }
  throw Error(name + ": expected a non-negative integer, got '" + v + "'");
}

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/lazyfuse/kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/lazyfuse/kernels";
  return "";
}

void validate(const Definition& d, const std::string& v) {
  std::string_view n = d.name;
  auto one_of = [&](std::initializer_list<const char*> options) {
    for (auto* o : options)
      if (v == o) return;
    std::string valid;
    for (auto* o : options) valid += std::string(valid.empty() ? "" : ", ") + o;
    throw Error(std::string(n) + ": invalid value '" + v + "'; valid: " + valid);
  };
  if (n == "LAZYFUSE_BACKEND") one_of({"auto", "cpu", "cuda"});
  if (n == "LAZYFUSE_MODE") one_of({"lazy", "eager"});
  if (n == "LAZYFUSE_POOL") one_of({"pool", "none"});
  if (n == "LAZYFUSE_ACCELERATORS" && !v.empty() && v != "cub")
    throw Error(std::string(n) + ": invalid value '" + v + "'; valid: cub, or empty for none");
  if (n == "LAZYFUSE_GPU_MEMORY_LIMIT" && !v.empty()) {
    std::size_t used = 0;
    bool ok = false;
    try {
      double x = std::stod(v, &used);
      ok = x >= 0 && (used == v.size() || (used + 1 == v.size() && v.back() == '%'));
    } catch (const std::exception&) {
    }
    if (!ok) throw Error(std::string(n) + ": invalid value '" + v + "'; valid: a number of bytes or a percent (90%)");
  }
  for (auto* b : {"LAZYFUSE_CACHE_IN_MEMORY", "LAZYFUSE_CACHE_SAVE_CUDA_SOURCE", "LAZYFUSE_COMPILE_WITH_PTX",
                  "LAZYFUSE_COMPILE_WITH_DEBUG", "LAZYFUSE_NVRTC_USE_PCH", "LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR",
                  "LAZYFUSE_PER_THREAD_DEFAULT_STREAM"})
    if (n == b && !boolean_text(v)) throw Error(std::string(n) + ": invalid value '" + v + "'; valid: 0 or 1");
  if (n == "LAZYFUSE_MAX_DEPTH" || n == "LAZYFUSE_MAX_KERNEL_NODES" || n == "LAZYFUSE_MAX_KERNEL_INPUTS" ||
      n == "LAZYFUSE_CPU_THREADS")
    to_int(d.name, v);
}

const Snapshot* build_locked(State& s) {
  auto owned = std::make_unique<Snapshot>();
  Snapshot* snap = owned.get();
  s.history.push_back(std::move(owned)); // kept: readers may hold a reference across a later `set`
  auto get = [&](const char* name) { return value_locked(s, *find(name)).first; };
  snap->generation = ++s.generation;
  snap->backend = get("LAZYFUSE_BACKEND");
  snap->eager = lower(get("LAZYFUSE_MODE")) == "eager";
  snap->log = get("LAZYFUSE_LOG");
  snap->log_mask = parse_log(snap->log);
  auto clamp_int = [&](const char* name, int lo) {
    try {
      return std::max(lo, to_int(name, get(name)));
    } catch (const Error& e) {
      std::fprintf(stderr, "lazyfuse: %s; using the default\n", e.what());
      return std::max(lo, std::atoi(find(name)->default_value));
    }
  };
  snap->max_depth = clamp_int("LAZYFUSE_MAX_DEPTH", 2);
  snap->max_kernel_nodes = clamp_int("LAZYFUSE_MAX_KERNEL_NODES", 8);
  snap->max_kernel_inputs = clamp_int("LAZYFUSE_MAX_KERNEL_INPUTS", 4);
  snap->cpu_threads = clamp_int("LAZYFUSE_CPU_THREADS", 0);
  snap->cache_dir = get("LAZYFUSE_CACHE_DIR");
  if (snap->cache_dir.empty()) snap->cache_dir = default_cache_dir();
  snap->cache_in_memory = truthy(get("LAZYFUSE_CACHE_IN_MEMORY"));
  snap->cache_save_source = truthy(get("LAZYFUSE_CACHE_SAVE_CUDA_SOURCE"));
  snap->compile_ptx = truthy(get("LAZYFUSE_COMPILE_WITH_PTX"));
  snap->compile_debug = truthy(get("LAZYFUSE_COMPILE_WITH_DEBUG"));
  snap->nvrtc_pch = truthy(get("LAZYFUSE_NVRTC_USE_PCH"));
  snap->dump_source_on_error = truthy(get("LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR"));
  snap->gpu_memory_limit = get("LAZYFUSE_GPU_MEMORY_LIMIT");
  snap->pool_enabled = lower(get("LAZYFUSE_POOL")) != "none";
  snap->per_thread_default_stream = truthy(get("LAZYFUSE_PER_THREAD_DEFAULT_STREAM"));
  snap->accelerators = get("LAZYFUSE_ACCELERATORS");
  snap->accelerator_cub = snap->accelerators == "cub";
  return snap;
}

} // namespace

const Snapshot& snapshot() {
  auto& s = state();
  if (auto* p = s.current.load(std::memory_order_acquire)) return *p;
  std::lock_guard lock(s.mutex);
  if (auto* p = s.current.load(std::memory_order_relaxed)) return *p;
  auto* p = build_locked(s);
  s.current.store(p, std::memory_order_release);
  return *p;
}

std::string get(std::string_view name) {
  auto* d = find(name);
  if (!d) throw Error("config::get: unknown setting '" + std::string(name) + "'");
  auto& s = state();
  std::lock_guard lock(s.mutex);
  return value_locked(s, *d).first;
}

void set(std::string_view name, std::string_view value) {
  auto* d = find(name);
  if (!d) throw Error("config::set: unknown setting '" + std::string(name) + "'");
  std::string v(value);
  validate(*d, v);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.overrides[d->name] = v;
  s.current.store(build_locked(s), std::memory_order_release);
}

void reset(std::string_view name) {
  auto* d = find(name);
  if (!d) throw Error("config::reset: unknown setting '" + std::string(name) + "'");
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.overrides.erase(std::string(name));
  s.current.store(build_locked(s), std::memory_order_release);
}

std::vector<Setting> all() {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  std::vector<Setting> out;
  for (auto& d : kDefinitions) {
    auto [v, src] = value_locked(s, d);
    out.push_back({d.name, v, src, d.description});
  }
  return out;
}

void set_eager(bool eager) {
  set("LAZYFUSE_MODE", eager ? "eager" : "lazy");
}
bool eager() {
  return snapshot().eager;
}

bool log_enabled(std::string_view channel) {
  const std::uint32_t mask = snapshot().log_mask;
  if (!mask) return false;
  for (std::size_t k = 0; k < std::size(kLogChannels); ++k)
    if (channel == kLogChannels[k]) return mask & (1u << k);
  return false;
}

void log(std::string_view channel, const std::string& message) {
  if (!log_enabled(channel)) return;
  std::fprintf(stderr, "[lazyfuse:%.*s] %s\n", int(channel.size()), channel.data(), message.c_str());
}

} // namespace lazyfuse::config
