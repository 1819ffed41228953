#include "graph/Config.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include <unistd.h> // environ

namespace lazyfuse::config {

namespace {

// How a setting's text is checked and read. Every kind but Text and Channels treats an empty value as the
// default (an empty variable is how shells and CI files often "unset" one), except where "" is itself a choice.
enum class Kind {
  Choice,         // one of `choices`, exactly (case matters)
  ChoiceOrSwitch, // one of `choices` (first: on, second: off), or a switch word meaning the same
  Switch,         // on: 1 true yes on; off: 0 false no off (any case)
  Count,          // a non-negative int
  MemoryLimit,    // bytes or a percent (parse_memory_limit)
  Channels,       // comma-separated LAZYFUSE_LOG channels
  Text,           // anything (a path)
};

struct Definition {
  const char* name;
  const char* default_value;
  Kind kind;
  const char* choices; // Choice and ChoiceOrSwitch: the values, separated by '|'; "" may be one of them
  const char* description;
};

// THE settings table: every LAZYFUSE_* variable the library reads, in the order `lazyfuse-info` and
// docs/configuration.md list them (tests/test_config.cpp checks that page against it). A new setting is added
// here in the same commit that reads it; any other LAZYFUSE_* name in the environment draws a warning, except
// the LAZYFUSE_TEST_* and LAZYFUSE_CI_* names reserved for the test suite and CI.
constexpr Definition kDefinitions[] = {
    {"LAZYFUSE_BACKEND", "auto", Kind::Choice, "auto|cpu|cuda",
     "auto | cpu | cuda: where materializations run; cuda fails loudly without a GPU"},
    {"LAZYFUSE_MODE", "lazy", Kind::Choice, "lazy|eager",
     "lazy | eager: eager runs every op as its own kernel (the baseline, a debugging aid)"},
    {"LAZYFUSE_LOG", "", Kind::Channels, "",
     "comma-separated channels to log to stderr: fusion, lower, codegen, cache, launch, accelerator, all"},
    {"LAZYFUSE_MAX_DEPTH", "4096", Kind::Count, "",
     "graph depth past which an array is materialized as it is built (bounded laziness)"},
    {"LAZYFUSE_MAX_PINNED_MIB", "4096", Kind::Count, "",
     "MiB of stored values an unevaluated array may keep alive before it is materialized as it is built"},
    {"LAZYFUSE_MAX_KERNEL_NODES", "256", Kind::Count, "",
     "most graph nodes fused into one kernel; larger plans are split"},
    {"LAZYFUSE_MAX_KERNEL_INPUTS", "48", Kind::Count, "", "most input buffers of one kernel; larger plans are split"},
    {"LAZYFUSE_CACHE_DIR", "", Kind::Text, "",
     "kernel cache directory (default $XDG_CACHE_HOME/lazyfuse/kernels or ~/.cache/...); must be private"},
    {"LAZYFUSE_CACHE_IN_MEMORY", "0", Kind::Switch, "",
     "1: keep compiled kernels in memory only, never touch the disk cache"},
    {"LAZYFUSE_CACHE_SAVE_CUDA_SOURCE", "0", Kind::Switch, "", "1: save each kernel's .cu beside its cache entry"},
    {"LAZYFUSE_COMPILE_WITH_PTX", "0", Kind::Switch, "",
     "1: compile to PTX and let the driver finish, instead of a cubin"},
    {"LAZYFUSE_COMPILE_WITH_DEBUG", "0", Kind::Switch, "", "1: compile kernels with -G -lineinfo"},
    {"LAZYFUSE_NVRTC_USE_PCH", "0", Kind::Switch, "",
     "1: let NVRTC use a precompiled header (lives only as long as the process)"},
    {"LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR", "0", Kind::Switch, "", "1: a CompileError carries the numbered source"},
    {"LAZYFUSE_GPU_MEMORY_LIMIT", "", Kind::MemoryLimit, "",
     "most bytes the memory pool may hold: bytes (8589934592) or percent (90%)"},
    {"LAZYFUSE_POOL", "pool", Kind::ChoiceOrSwitch, "pool|none",
     "pool | none (or on | off): none allocates every buffer separately (for compute-sanitizer)"},
    {"LAZYFUSE_PER_THREAD_DEFAULT_STREAM", "0", Kind::Switch, "",
     "1: the default stream is per thread (cudaStreamPerThread)"},
    {"LAZYFUSE_CUDA_GRAPH_KERNELS", "2", Kind::Count, "",
     "plan cache replays of at least this many kernels launch as one CUDA graph; 0: never"},
    {"LAZYFUSE_CPU_THREADS", "0", Kind::Count, "", "threads of the CPU backend; 0: all hardware threads"},
    {"LAZYFUSE_CPU_CODEGEN", "auto", Kind::Choice, "auto|interpreter|llvm",
     "auto | interpreter | llvm: how the CPU backend runs kernels; llvm compiles every kernel it can"},
    {"LAZYFUSE_ACCELERATORS", "cub", Kind::Choice, "cub|",
     "cub | (empty): CUB's ahead-of-time kernels serve plain reductions of buffers (CUDA)"},
    {"LAZYFUSE_TF32", "0", Kind::Switch, "",
     "1: float32 matrix products on the GPU use TF32 tensor cores (10-bit mantissa inputs); 0: full FP32"},
    {"LAZYFUSE_SEED", "", Kind::Text, "",
     "seed (0 .. 2^64 - 1) of random::default_generator(); empty: from the operating system's entropy"},
};

// Channels of LAZYFUSE_LOG, as bits in this order (log_enabled); "all" sets every bit.
constexpr const char* kLogChannels[] = {"fusion", "lower", "codegen", "cache", "launch", "accelerator"};

// Names in the environment that are not settings but belong to someone: they draw no warning.
constexpr std::string_view kReservedPrefixes[] = {"LAZYFUSE_TEST_", "LAZYFUSE_CI_"};
constexpr std::string_view kPrefix = "LAZYFUSE_";
// Variables of the test suite that moved into LAZYFUSE_TEST_*: a CI file still setting an old name is told the new.
constexpr std::pair<std::string_view, std::string_view> kRenamed[] = {
    {"LAZYFUSE_REQUIRE_GPU", "LAZYFUSE_TEST_REQUIRE_GPU"},
    {"LAZYFUSE_RANDOM_GRAPHS", "LAZYFUSE_TEST_RANDOM_GRAPHS"},
    {"LAZYFUSE_RANDOM_SEED", "LAZYFUSE_TEST_RANDOM_SEED"},
    {"LAZYFUSE_RANDOM_CASE", "LAZYFUSE_TEST_RANDOM_CASE"},
    {"LAZYFUSE_RANDOM_VERBOSE", "LAZYFUSE_TEST_RANDOM_VERBOSE"},
    {"LAZYFUSE_THREAD_ITERS", "LAZYFUSE_TEST_THREAD_ITERS"},
    {"LAZYFUSE_THREAD_COUNT", "LAZYFUSE_TEST_THREAD_COUNT"},
};

constexpr std::size_t kMaxRecordedWarnings = 256;

// ---- text helpers ----------------------------------------------------------------------------------------

std::string lower(std::string_view v) {
  std::string out(v);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
std::string upper(std::string_view v) {
  std::string out(v);
  for (auto& c : out) c = char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}
std::string_view trim(std::string_view v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  return v;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// Optimal string alignment distance (Levenshtein plus swaps of neighbours, the commonest typo: MDOE for MODE).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

template <class Names> std::string closest(std::string_view word, const Names& names) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view candidate : names)
    if (const std::size_t dist = edit_distance(word, candidate); dist < best_distance) {
      best_distance = dist;
      best = candidate;
    }
  return best;
}

// ---- values of each kind -----------------------------------------------------------------------------------

std::optional<bool> switch_value(std::string_view v) {
  const std::string l = lower(trim(v));
  if (l == "1" || l == "true" || l == "yes" || l == "on") return true;
  if (l == "0" || l == "false" || l == "no" || l == "off") return false;
  return std::nullopt;
}

std::optional<int> count_value(std::string_view v) {
  const std::string_view t = trim(v);
  int x = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || x < 0) return std::nullopt;
  return x;
}

bool empty_is_a_choice(const Definition& d) {
  if (d.kind != Kind::Choice) return false;
  for (std::string_view c : split(d.choices, '|'))
    if (c.empty()) return true;
  return false;
}

// The value a setting's text stands for: the default when it is empty (and "" is no value of its own).
std::string_view effective(const Definition& d, std::string_view v) {
  if (trim(v).empty() && d.kind != Kind::Text && d.kind != Kind::Channels && !empty_is_a_choice(d))
    return d.default_value;
  return v;
}

std::string valid_forms(const Definition& d) {
  switch (d.kind) {
  case Kind::Choice:
  case Kind::ChoiceOrSwitch: {
    std::string out;
    for (std::string_view c : split(d.choices, '|'))
      out += (out.empty() ? "" : ", ") + (c.empty() ? std::string("(empty)") : std::string(c));
    if (d.kind == Kind::ChoiceOrSwitch) out += ", or a switch value (1, true, yes, on or 0, false, no, off)";
    return out;
  }
  case Kind::Switch: return "1, true, yes, on (on) or 0, false, no, off (off), in any case";
  case Kind::Count: return "a non-negative integer";
  case Kind::MemoryLimit: return "a number of bytes (8589934592) or a percent of the device's memory (90%)";
  case Kind::Channels: {
    std::string out;
    for (const char* c : kLogChannels) out += std::string(c) + ", ";
    return "comma-separated channels: " + out + "all";
  }
  case Kind::Text: return "any text";
  }
  return "";
}

std::vector<std::string> unknown_channels(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    if (item.empty() || item == "all") continue;
    if (std::find(std::begin(kLogChannels), std::end(kLogChannels), item) == std::end(kLogChannels))
      out.emplace_back(item);
  }
  return out;
}

std::string suggest_channel(const std::string& channel) {
  std::vector<std::string_view> names(std::begin(kLogChannels), std::end(kLogChannels));
  names.push_back("all");
  return closest(lower(channel), names);
}

// "" when `v` is a valid value of `d`, else why not, naming the setting and the valid values.
std::string problem(const Definition& d, std::string_view raw) {
  const std::string_view v = effective(d, raw);
  const std::string head = std::string(d.name) + ": invalid value '" + std::string(raw) + "'";
  const std::string tail = "; valid: " + valid_forms(d);
  switch (d.kind) {
  case Kind::Choice:
  case Kind::ChoiceOrSwitch: {
    // Choices are exact (`CUB` is no accelerator); the pool's also take the any-case spelling of switches.
    const std::string t = d.kind == Kind::Choice ? std::string(trim(v)) : lower(trim(v));
    for (std::string_view c : split(d.choices, '|'))
      if (t == c) return "";
    if (d.kind == Kind::ChoiceOrSwitch && switch_value(t)) return "";
    return head + tail;
  }
  case Kind::Switch: return switch_value(v) ? "" : head + tail;
  case Kind::Count: return count_value(v) ? "" : head + tail;
  case Kind::MemoryLimit:
    try {
      parse_memory_limit(v);
      return "";
    } catch (const Error&) {
      return head + tail;
    }
  case Kind::Channels: {
    const auto unknown = unknown_channels(v);
    if (unknown.empty()) return "";
    return std::string(d.name) + ": unknown channel '" + unknown[0] + "' (did you mean '" +
           suggest_channel(unknown[0]) + "'?)" + tail;
  }
  case Kind::Text: return "";
  }
  return "";
}

// ---- the state -------------------------------------------------------------------------------------------

struct State {
  std::mutex mutex;
  std::map<std::string, std::string, std::less<>> overrides;
  std::map<std::string, std::string, std::less<>> environment;
  std::map<std::string, std::string, std::less<>> rejected; // why the environment's value was not (all) taken
  std::atomic<const Snapshot*> current{nullptr};
  // Every snapshot ever built: readers may still hold a reference to an older one, so none is freed.
  std::vector<std::unique_ptr<const Snapshot>> history;
  std::uint64_t generation = 0;
};

struct Warnings {
  std::mutex mutex;
  std::vector<std::string> recorded;
};
Warnings& warnings_state() {
  static auto* w = new Warnings;
  return *w;
}

const Definition* find(std::string_view name) {
  for (auto& d : kDefinitions)
    if (name == d.name) return &d;
  return nullptr;
}

bool reserved(std::string_view name) {
  for (auto prefix : kReservedPrefixes)
    if (name.starts_with(prefix)) return true;
  return false;
}

// LAZYFUSE_* names in the environment that are no setting: a misspelled variable would otherwise be silently
// ignored. Names that differ from a setting only in case are caught too (getenv is case-sensitive).
void check_unknown_variables() {
  std::set<std::string> seen;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry = *e;
    const std::string name(entry.substr(0, entry.find('=')));
    const std::string up = upper(name);
    if (!up.starts_with(kPrefix) || (name == up && (find(name) || reserved(name))) || !seen.insert(name).second)
      continue;
    if (auto it = std::find_if(std::begin(kRenamed), std::end(kRenamed), [&](auto& r) { return r.first == up; });
        it != std::end(kRenamed)) {
      warn("ignoring " + name + ": the test suite's variable is now " + std::string(it->second));
      continue;
    }
    std::vector<std::string_view> names;
    for (auto& d : kDefinitions) names.push_back(d.name);
    warn("ignoring " + name + ", which is not a lazyfuse setting; did you mean " + closest(up, names) +
         "? (lazyfuse-info lists the settings)");
  }
}

State& state() {
  static auto* s = [] {
    auto* st = new State;
    for (auto& d : kDefinitions) {
      const char* v = std::getenv(d.name);
      if (!v) continue;
      const std::string why = problem(d, v);
      if (why.empty()) {
        st->environment[d.name] = v;
      } else if (d.kind == Kind::MemoryLimit) {
        // Fail closed: a limit the user set must not silently vanish, so the pool refuses to start instead.
        st->environment[d.name] = v;
        st->rejected[d.name] = why + "; the memory pool refuses to start (lazyfuse::Error) rather than run without it";
        warn(st->rejected[d.name]);
      } else if (d.kind == Kind::Channels) {
        st->environment[d.name] = v; // the valid channels still log
        std::string all;
        for (const auto& c : unknown_channels(v)) {
          warn(std::string(d.name) + ": ignoring the unknown channel '" + c + "'; did you mean '" + suggest_channel(c) +
               "'? (" + valid_forms(d) + ")");
          all += (all.empty() ? "" : ", ") + c;
        }
        st->rejected[d.name] = "unknown channels ignored: " + all;
      } else {
        st->rejected[d.name] = why;
        warn(why + "; using the default '" + d.default_value + "'");
      }
    }
    check_unknown_variables();
    return st;
  }();
  return *s;
}

std::pair<std::string, Source> value_locked(State& s, const Definition& d) {
  if (auto it = s.overrides.find(d.name); it != s.overrides.end()) return {it->second, Source::Cpp};
  if (auto it = s.environment.find(d.name); it != s.environment.end()) return {it->second, Source::Environment};
  return {d.default_value, Source::Default};
}

std::uint32_t parse_log(std::string_view log) {
  std::uint32_t mask = 0;
  for (std::string_view item : split(log, ',')) {
    item = trim(item);
    if (item == "all") mask = ~0u;
    for (std::size_t k = 0; k < std::size(kLogChannels); ++k)
      if (item == kLogChannels[k]) mask |= 1u << k;
  }
  return mask;
}

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/lazyfuse/kernels";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/lazyfuse/kernels";
  return "";
}

const Snapshot* build_locked(State& s) {
  auto owned = std::make_unique<Snapshot>();
  Snapshot* snap = owned.get();
  s.history.push_back(std::move(owned)); // kept: readers may hold a reference across a later `set`
  // Every stored value passed `problem` (set validates, the environment's invalid ones are dropped) except an
  // invalid memory limit, which is kept on purpose; so the parses below cannot fail.
  auto get = [&](const char* name) {
    const Definition& d = *find(name);
    return std::string(trim(effective(d, value_locked(s, d).first)));
  };
  auto on = [&](const char* name) { return switch_value(get(name)).value_or(false); };
  auto count = [&](const char* name, int lo) { return std::max(lo, count_value(get(name)).value_or(lo)); };
  snap->generation = ++s.generation;
  snap->backend = get("LAZYFUSE_BACKEND");
  snap->eager = get("LAZYFUSE_MODE") == "eager";
  snap->log = value_locked(s, *find("LAZYFUSE_LOG")).first;
  snap->log_mask = parse_log(snap->log);
  snap->max_depth = count("LAZYFUSE_MAX_DEPTH", 2);
  snap->max_pinned_bytes = std::int64_t(count("LAZYFUSE_MAX_PINNED_MIB", 1)) << 20;
  snap->max_kernel_nodes = count("LAZYFUSE_MAX_KERNEL_NODES", 8);
  snap->max_kernel_inputs = count("LAZYFUSE_MAX_KERNEL_INPUTS", 4);
  snap->cpu_threads = count("LAZYFUSE_CPU_THREADS", 0);
  snap->cuda_graph_kernels = count("LAZYFUSE_CUDA_GRAPH_KERNELS", 0);
  snap->cpu_codegen = get("LAZYFUSE_CPU_CODEGEN");
  snap->cache_dir = value_locked(s, *find("LAZYFUSE_CACHE_DIR")).first;
  if (snap->cache_dir.empty()) snap->cache_dir = default_cache_dir();
  snap->cache_in_memory = on("LAZYFUSE_CACHE_IN_MEMORY");
  snap->cache_save_source = on("LAZYFUSE_CACHE_SAVE_CUDA_SOURCE");
  snap->compile_ptx = on("LAZYFUSE_COMPILE_WITH_PTX");
  snap->compile_debug = on("LAZYFUSE_COMPILE_WITH_DEBUG");
  snap->nvrtc_pch = on("LAZYFUSE_NVRTC_USE_PCH");
  snap->dump_source_on_error = on("LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR");
  snap->gpu_memory_limit = value_locked(s, *find("LAZYFUSE_GPU_MEMORY_LIMIT")).first;
  const std::string pool = lower(get("LAZYFUSE_POOL"));
  snap->pool_enabled = pool == "pool" || (pool != "none" && switch_value(pool).value_or(true));
  snap->per_thread_default_stream = on("LAZYFUSE_PER_THREAD_DEFAULT_STREAM");
  snap->accelerators = get("LAZYFUSE_ACCELERATORS");
  snap->accelerator_cub = snap->accelerators == "cub";
  snap->seed = get("LAZYFUSE_SEED");
  snap->tf32 = on("LAZYFUSE_TF32");
  return snap;
}

} // namespace

MemoryLimit parse_memory_limit(std::string_view text) {
  const std::string_view t = trim(text);
  const auto invalid = [&] {
    return Error("LAZYFUSE_GPU_MEMORY_LIMIT: '" + std::string(text) +
                 "' is neither a byte count (e.g. 8589934592) nor a percent of the device's memory (e.g. 90%)");
  };
  MemoryLimit out;
  if (t.empty()) return out;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (t.back() == '%') {
    double percent = 0;
    const auto [end, ec] = std::from_chars(first, last - 1, percent, std::chars_format::fixed);
    if (ec != std::errc() || end != last - 1 || !std::isfinite(percent) || percent <= 0 || percent > 100)
      throw invalid();
    out.percent = percent;
    return out;
  }
  const auto [end, ec] = std::from_chars(first, last, out.bytes);
  if (ec != std::errc() || end != last) throw invalid();
  return out;
}

void warn(const std::string& text) {
  std::fprintf(stderr, "[lazyfuse] warning: %s\n", text.c_str());
  auto& w = warnings_state();
  std::lock_guard lock(w.mutex);
  if (w.recorded.size() < kMaxRecordedWarnings) w.recorded.push_back(text);
}

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
  if (std::string why = problem(*d, value); !why.empty()) throw Error(why);
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.overrides[d->name] = std::string(value);
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
    auto it = s.rejected.find(d.name);
    out.push_back({d.name, v, src, d.description, it == s.rejected.end() ? std::string() : it->second});
  }
  return out;
}

std::vector<std::string> warnings() {
  (void)state(); // the environment's warnings are issued when it is read
  auto& w = warnings_state();
  std::lock_guard lock(w.mutex);
  return w.recorded;
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
