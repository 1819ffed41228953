// The settings (graph/Config.cpp, include/lazyfuse/config.hpp) held to docs/configuration.md: a test for each
// claim of that page that needs no GPU (tests/test_cuda_config.cpp has the pool's, which do).
//
// The environment is read once per process, so every environment is tried in a child: this binary again
// (tests/child_process.h), running only ConfigChild.Report with LAZYFUSE_TEST_CONFIG_CHILD naming what to report.
// The child starts from this process' environment without any LAZYFUSE_* variable (LAZYFUSE_TEST_* and
// LAZYFUSE_CI_* stay), plus the ones a test gives it, and prints "@@key=value" lines; its warnings are the lines
// "[lazyfuse] warning: ..." of its output.
#include "graph/Config.h"
#include "runtime/MemoryPool.h"
#include "tests/child_process.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace config = lazyfuse::config;
using lazyfuse::runtime::PoolMode;
using lazyfuse::runtime::PoolOptions;

constexpr const char* kChildVariable = "LAZYFUSE_TEST_CONFIG_CHILD";

const std::vector<std::string> kSwitches = {
    "LAZYFUSE_CACHE_IN_MEMORY",          "LAZYFUSE_CACHE_SAVE_CUDA_SOURCE", "LAZYFUSE_COMPILE_WITH_PTX",
    "LAZYFUSE_COMPILE_WITH_DEBUG",       "LAZYFUSE_NVRTC_USE_PCH",          "LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR",
    "LAZYFUSE_PER_THREAD_DEFAULT_STREAM"};

// ---- the child ---------------------------------------------------------------------------------------------------

const char* source_name(config::Source s) {
  switch (s) {
  case config::Source::Default: return "default";
  case config::Source::Environment: return "environment";
  case config::Source::Cpp: return "cpp";
  }
  return "?";
}

// One line per value, flushed at once: the parent reads stdout and stderr through one pipe.
void put(const std::string& key, const std::string& value) {
  std::cout << "@@" << key << '=' << value << std::endl;
}

void report_settings(const std::string& prefix = "") {
  for (const auto& s : config::all()) {
    put(prefix + s.name + ".value", s.value);
    put(prefix + s.name + ".source", source_name(s.source));
    put(prefix + s.name + ".rejected", s.rejected);
  }
}

void report_snapshot() {
  const auto& c = config::snapshot();
  put("backend", c.backend);
  put("eager", std::to_string(c.eager));
  put("max_depth", std::to_string(c.max_depth));
  put("max_pinned_bytes", std::to_string(c.max_pinned_bytes));
  put("max_kernel_nodes", std::to_string(c.max_kernel_nodes));
  put("max_kernel_inputs", std::to_string(c.max_kernel_inputs));
  put("cpu_threads", std::to_string(c.cpu_threads));
  put("pool_enabled", std::to_string(c.pool_enabled));
  put("accelerator_cub", std::to_string(c.accelerator_cub));
  put("LAZYFUSE_CACHE_IN_MEMORY.on", std::to_string(c.cache_in_memory));
  put("LAZYFUSE_CACHE_SAVE_CUDA_SOURCE.on", std::to_string(c.cache_save_source));
  put("LAZYFUSE_COMPILE_WITH_PTX.on", std::to_string(c.compile_ptx));
  put("LAZYFUSE_COMPILE_WITH_DEBUG.on", std::to_string(c.compile_debug));
  put("LAZYFUSE_NVRTC_USE_PCH.on", std::to_string(c.nvrtc_pch));
  put("LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR.on", std::to_string(c.dump_source_on_error));
  put("LAZYFUSE_PER_THREAD_DEFAULT_STREAM.on", std::to_string(c.per_thread_default_stream));
  for (const char* channel : {"fusion", "lower", "codegen", "cache", "launch", "accelerator"})
    put(std::string("log.") + channel, std::to_string(config::log_enabled(channel)));
  // The pool's options as its creation would read them; a percent needs a device, so is not asked for here.
  try {
    const PoolOptions o = PoolOptions::from_settings(0);
    put("pool.mode", o.mode == PoolMode::Caching ? "caching" : "pass-through");
    put("pool.limit", std::to_string(o.limit));
  } catch (const std::exception& e) {
    put("pool.error", e.what());
  }
  put("warnings", std::to_string(config::warnings().size()));
}

TEST(ConfigChild, Report) {
  const char* what = std::getenv(kChildVariable);
  if (!what) GTEST_SKIP() << "helper process of the other tests of this file";
  const std::string action = what;
  if (action == "report") {
    report_settings();
    report_snapshot();
  } else if (action == "precedence") {
    // C++ > environment > default; reset forgets the C++ value; the environment is read only once.
    report_settings("before.");
    config::set("LAZYFUSE_MODE", "lazy");
    put("set.eager", std::to_string(config::eager()));
    report_settings("set.");
    config::reset("LAZYFUSE_MODE");
    put("reset.eager", std::to_string(config::eager()));
    report_settings("reset.");
    ::setenv("LAZYFUSE_MODE", "lazy", 1);
    ::setenv("LAZYFUSE_MAX_DEPTH", "7", 1);
    config::reset("LAZYFUSE_MODE"); // rebuilds the settings: still not from the changed environment
    report_settings("setenv.");
    put("setenv.eager", std::to_string(config::eager()));
  } else if (action == "backend") {
    // Read once: the first backend() decides, a later set changes nothing.
    std::string first;
    try {
      first = lazyfuse::backend() == lazyfuse::Backend::Cuda ? "cuda" : "cpu";
    } catch (const lazyfuse::BackendError& e) {
      first = std::string("BackendError: ") + e.what();
    }
    put("backend.first", first);
    config::set("LAZYFUSE_BACKEND", first == "cpu" ? "cuda" : "cpu");
    put("backend.after_set", lazyfuse::backend() == lazyfuse::Backend::Cuda ? "cuda" : "cpu");
  } else if (action == "compute") {
    const lazyfuse::Array x = lazyfuse::arange(0.0, 1000.0);
    put("sum", std::to_string(lazyfuse::sum(x * 2.0 + 1.0).item<double>()));
  } else {
    FAIL() << "unknown action " << action;
  }
}

// ---- the parent --------------------------------------------------------------------------------------------------

bool reserved(std::string_view name) {
  return name.starts_with("LAZYFUSE_TEST_") || name.starts_with("LAZYFUSE_CI_");
}

struct Child {
  lazyfuse_test::ChildResult run;
  std::map<std::string, std::string> values; // the "@@key=value" lines
  std::vector<std::string> warnings;         // the "[lazyfuse] warning: " lines, without that prefix

  // The value of `key`; a test fails when the child did not report it.
  std::string operator[](const std::string& key) const {
    auto it = values.find(key);
    if (it != values.end()) return it->second;
    ADD_FAILURE() << "the child reported no '" << key << "'; " << run.describe();
    return "<missing>";
  }
  // The warnings that contain every one of `words`.
  std::vector<std::string> warnings_with(std::initializer_list<std::string> words) const {
    std::vector<std::string> out;
    for (const auto& w : warnings)
      if (std::all_of(words.begin(), words.end(), [&](const std::string& x) { return w.find(x) != w.npos; }))
        out.push_back(w);
    return out;
  }
  std::string all_warnings() const {
    std::string out;
    for (const auto& w : warnings) out += "  " + w + "\n";
    return out.empty() ? "  (none)\n" : out;
  }
};

// Runs ConfigChild.Report with `action` in an environment of exactly the given LAZYFUSE_* variables.
Child run_child(const std::string& action, const std::vector<std::string>& env) {
  std::vector<std::string> add = env;
  add.push_back(std::string(kChildVariable) + "=" + action);
  Child c;
  c.run = lazyfuse_test::run_self("ConfigChild.Report", add, lazyfuse_test::lazyfuse_settings(), 60);
  std::istringstream in(c.run.output);
  const std::string warning = "[lazyfuse] warning: ";
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("@@")) {
      const auto eq = line.find('=');
      c.values[line.substr(2, eq - 2)] = eq == std::string::npos ? "" : line.substr(eq + 1);
    } else if (line.starts_with(warning)) {
      c.warnings.push_back(line.substr(warning.size()));
    }
  }
  EXPECT_TRUE(c.run.ok()) << c.run.describe();
  return c;
}

Child report(const std::vector<std::string>& env) {
  return run_child("report", env);
}

// The defaults, as a child with no LAZYFUSE_* variable sees them.
const Child& defaults() {
  static const Child c = report({});
  return c;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path source_dir() {
  return fs::path(LAZYFUSE_TEST_SOURCE_DIR).parent_path();
}

// The message of the lazyfuse::Error that `f` throws ("" and a failure when it throws none).
template <class F> std::string error_of(F&& f) {
  try {
    f();
  } catch (const lazyfuse::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no lazyfuse::Error";
  return "";
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// ---- the settings table and the documentation --------------------------------------------------------------------

// "The settings are defined in one table, graph/Config.cpp; this page lists exactly those settings, in the same
// order", with their defaults, and a section for each.
TEST(ConfigDocs, ListExactlyTheSettingsInOrderWithTheirDefaults) {
  const std::string doc = read_file(source_dir() / "docs" / "configuration.md");
  ASSERT_FALSE(doc.empty());
  std::vector<std::string> rows, defaults_column, sections;
  const std::regex row(R"(^\| `(LAZYFUSE_[A-Z0-9_]+)` \| ([^|]*) \|)");
  const std::regex section(R"(^### `(LAZYFUSE_[A-Z0-9_]+)`)");
  bool in_settings = false;
  std::istringstream in(doc);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("## ")) in_settings = line == "## Settings";
    std::smatch m;
    if (in_settings && std::regex_search(line, m, row)) {
      rows.push_back(m[1]);
      defaults_column.push_back(m[2]);
    }
    if (in_settings && std::regex_search(line, m, section)) sections.push_back(m[1]);
  }
  std::vector<std::string> names;
  for (const auto& s : config::all()) names.push_back(s.name);
  EXPECT_EQ(rows, names) << "the table of docs/configuration.md";
  EXPECT_EQ(sections, names) << "the ### sections of docs/configuration.md";
  for (std::size_t i = 0; i < rows.size() && i < names.size(); ++i) {
    const std::string shown = defaults_column[i];
    const std::string actual = defaults()[rows[i] + ".value"];
    if (shown.starts_with("(empty"))
      EXPECT_EQ(actual, "") << rows[i] << ": documented as " << shown;
    else
      EXPECT_EQ("`" + actual + "`", shown) << rows[i];
  }
}

// "Every LAZYFUSE_* variable the library reads is in the one table": the library's getenv calls name settings
// only, and the LAZYFUSE_* variables of the tests, benchmarks, examples, scripts and test presets are settings or
// reserved LAZYFUSE_TEST_* / LAZYFUSE_CI_* names (others would draw the unknown-variable warning). Left out: this
// file and test_info.cpp, which set unknown names on purpose, and graph/Config.cpp's table of renamed variables
// (not a getenv).
TEST(ConfigDocs, EveryVariableInTheSourcesIsASettingOrReserved) {
  std::set<std::string> settings;
  for (const auto& s : config::all()) settings.insert(s.name);
  const fs::path root = source_dir();
  const std::regex getenv_call(R"re(getenv\(\s*"(LAZYFUSE_[A-Z0-9_]*[A-Z0-9])")re");
  const std::regex literal(R"re("(LAZYFUSE_[A-Z0-9_]*[A-Z0-9])[="])re");
  const std::regex shell(R"re((?:^|[^A-Za-z0-9_])(LAZYFUSE_[A-Z0-9_]*[A-Z0-9])(?:=|:-|\}))re");
  std::vector<std::string> bad;
  auto scan = [&](const fs::path& file, const std::regex& pattern) {
    const std::string text = read_file(file);
    for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
      const std::string name = (*it)[1];
      if (!settings.count(name) && !reserved(name)) bad.push_back(fs::relative(file, root).string() + ": " + name);
    }
  };
  for (const char* dir : {"graph", "fusion", "codegen", "runtime", "api", "include"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.is_regular_file()) scan(e.path(), getenv_call);
  for (const char* dir : {"tests", "bench", "examples", "tools"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = e.path().extension();
      const auto name = e.path().filename();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".h") && name != "test_config.cpp" && name != "test_info.cpp")
        scan(e.path(), literal);
    }
  for (const auto& e : fs::directory_iterator(root / "scripts"))
    if (e.path().extension() == ".sh") scan(e.path(), shell);
  scan(root / ".ci" / "run", shell);
  // The test presets' environments (the configure presets' LAZYFUSE_* are CMake options, not variables).
  const std::string presets = read_file(root / "CMakePresets.json");
  const std::string tests = presets.substr(std::min(presets.find("\"testPresets\""), presets.size()));
  const std::regex key(R"re("(LAZYFUSE_[A-Z0-9_]*[A-Z0-9])"\s*:)re");
  for (std::sregex_iterator it(tests.begin(), tests.end(), key), end; it != end; ++it)
    if (!settings.count((*it)[1]) && !reserved((*it)[1].str())) bad.push_back("CMakePresets.json: " + (*it)[1].str());
  EXPECT_TRUE(bad.empty()) << "LAZYFUSE_* variables that are neither settings (graph/Config.cpp) nor "
                              "LAZYFUSE_TEST_* / LAZYFUSE_CI_*:\n"
                           << ::testing::PrintToString(bad);
}

// ---- how values are found ------------------------------------------------------------------------------------------

TEST(Config, UnsetEnvironmentGivesTheDefaultsWithoutWarnings) {
  const Child& c = defaults();
  for (const auto& s : config::all()) {
    EXPECT_EQ(c[s.name + ".source"], "default") << s.name;
    EXPECT_EQ(c[s.name + ".rejected"], "") << s.name;
  }
  EXPECT_EQ(c["warnings"], "0");
  EXPECT_TRUE(c.warnings.empty()) << c.all_warnings();
  EXPECT_EQ(c["backend"], "auto");
  EXPECT_EQ(c["eager"], "0");
  EXPECT_EQ(c["pool_enabled"], "1");
  EXPECT_EQ(c["pool.mode"], "caching");
  EXPECT_EQ(c["pool.limit"], "0");
}

// "Precedence: C++ > environment > default", "reset forgets the C++ value", "The environment is read once".
TEST(Config, CppBeatsEnvironmentBeatsDefaultAndTheEnvironmentIsReadOnce) {
  const Child c = run_child("precedence", {"LAZYFUSE_MODE=eager"});
  EXPECT_EQ(c["before.LAZYFUSE_MODE.value"], "eager");
  EXPECT_EQ(c["before.LAZYFUSE_MODE.source"], "environment");
  EXPECT_EQ(c["before.LAZYFUSE_MAX_DEPTH.source"], "default");
  EXPECT_EQ(c["set.LAZYFUSE_MODE.value"], "lazy");
  EXPECT_EQ(c["set.LAZYFUSE_MODE.source"], "cpp");
  EXPECT_EQ(c["set.eager"], "0");
  EXPECT_EQ(c["reset.LAZYFUSE_MODE.value"], "eager");
  EXPECT_EQ(c["reset.LAZYFUSE_MODE.source"], "environment");
  EXPECT_EQ(c["reset.eager"], "1");
  EXPECT_EQ(c["setenv.LAZYFUSE_MODE.value"], "eager") << "setenv after the first use has no effect";
  EXPECT_EQ(c["setenv.LAZYFUSE_MAX_DEPTH.value"], "4096");
  EXPECT_EQ(c["setenv.LAZYFUSE_MAX_DEPTH.source"], "default");
  EXPECT_EQ(c["setenv.eager"], "1");
}

// "config::get, set and reset throw lazyfuse::Error for an unknown name".
TEST(Config, UnknownNamesThrow) {
  for (auto f : {+[] { (void)config::get("LAZYFUSE_MDOE"); }, +[] { config::set("LAZYFUSE_MDOE", "eager"); },
                 +[] { config::reset("LAZYFUSE_MDOE"); }})
    EXPECT_TRUE(contains(error_of(f), "LAZYFUSE_MDOE"));
}

TEST(Config, AllListsEverySettingWithADescription) {
  const auto settings = config::all();
  EXPECT_EQ(settings.size(), 23u);
  std::set<std::string> names;
  for (const auto& s : settings) {
    EXPECT_TRUE(s.name.starts_with("LAZYFUSE_")) << s.name;
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_EQ(config::get(s.name), s.value) << s.name;
    names.insert(s.name);
  }
  EXPECT_EQ(names.size(), settings.size()) << "no name twice";
}

// An empty variable is the default (an empty LAZYFUSE_ACCELERATORS is its own value: no library kernels).
TEST(Config, EmptyValuesAreTheDefaults) {
  std::vector<std::string> env;
  for (const auto& s : config::all()) env.push_back(s.name + "=");
  const Child c = report(env);
  EXPECT_TRUE(c.warnings.empty()) << c.all_warnings();
  EXPECT_EQ(c["backend"], "auto");
  EXPECT_EQ(c["eager"], "0");
  EXPECT_EQ(c["max_depth"], "4096");
  EXPECT_EQ(c["max_pinned_bytes"], std::to_string(std::int64_t(4096) << 20));
  EXPECT_EQ(c["max_kernel_nodes"], "256");
  EXPECT_EQ(c["max_kernel_inputs"], "48");
  EXPECT_EQ(c["cpu_threads"], "0");
  EXPECT_EQ(c["pool_enabled"], "1");
  EXPECT_EQ(c["pool.limit"], "0");
  for (const auto& name : kSwitches) EXPECT_EQ(c[name + ".on"], "0") << name;
  EXPECT_EQ(c["accelerator_cub"], "0") << "LAZYFUSE_ACCELERATORS= turns CUB off";
  EXPECT_EQ(c["log.fusion"], "0");
}

// ---- switches ------------------------------------------------------------------------------------------------------

// "Switches are on for 1, true, yes or on and off for 0, false, no or off, in any case; anything else is rejected".
TEST(ConfigSwitches, OnAndOffWordsFromTheEnvironment) {
  for (const auto& [word, on] : std::vector<std::pair<std::string, bool>>{{"1", true},
                                                                          {"true", true},
                                                                          {"YES", true},
                                                                          {"On", true},
                                                                          {"0", false},
                                                                          {"false", false},
                                                                          {"No", false},
                                                                          {"OFF", false}}) {
    std::vector<std::string> env;
    for (const auto& name : kSwitches) env.push_back(name + "=" + word);
    const Child c = report(env);
    EXPECT_TRUE(c.warnings.empty()) << word << "\n" << c.all_warnings();
    for (const auto& name : kSwitches) {
      EXPECT_EQ(c[name + ".on"], on ? "1" : "0") << name << "=" << word;
      EXPECT_EQ(c[name + ".source"], "environment") << name;
    }
  }
}

TEST(ConfigSwitches, OtherWordsFromTheEnvironmentAreRejectedWithAWarning) {
  std::vector<std::string> env;
  for (const auto& name : kSwitches) env.push_back(name + "=ture");
  const Child c = report(env);
  EXPECT_EQ(c.warnings.size(), kSwitches.size()) << c.all_warnings();
  for (const auto& name : kSwitches) {
    EXPECT_EQ(c[name + ".on"], "0") << name;
    EXPECT_EQ(c[name + ".source"], "default") << name;
    EXPECT_TRUE(contains(c[name + ".rejected"], "'ture'")) << c[name + ".rejected"];
    EXPECT_EQ(c.warnings_with({name, "'ture'", "using the default '0'"}).size(), 1u) << c.all_warnings();
  }
}

TEST(ConfigSwitches, SetAcceptsTheWordsAndThrowsForOthers) {
  for (const auto& name : kSwitches) {
    config::set(name, "YES");
    EXPECT_EQ(config::get(name), "YES");
    config::set(name, "off");
    for (const char* bad : {"2", "ture", "enabled"}) {
      const std::string m = error_of([&] { config::set(name, bad); });
      EXPECT_TRUE(contains(m, name) && contains(m, bad) && contains(m, "valid: 1, true, yes, on")) << m;
    }
    EXPECT_EQ(config::get(name), "off") << "a rejected set leaves the value";
    config::reset(name);
  }
  config::set("LAZYFUSE_CACHE_IN_MEMORY", "True");
  EXPECT_TRUE(config::snapshot().cache_in_memory);
  config::set("LAZYFUSE_CACHE_IN_MEMORY", "no");
  EXPECT_FALSE(config::snapshot().cache_in_memory);
  config::reset("LAZYFUSE_CACHE_IN_MEMORY");
}

// ---- LAZYFUSE_POOL -------------------------------------------------------------------------------------------------

// "`none` (or a switch's off: `off`, `0`, `false`, `no`) turns the pool off", from the environment as from C++.
TEST(ConfigPool, OffValuesFromTheEnvironmentTurnThePoolOff) {
  for (const char* v : {"none", "off", "0", "false", "no", "OFF", "None"}) {
    const Child c = report({std::string("LAZYFUSE_POOL=") + v});
    EXPECT_EQ(c["pool_enabled"], "0") << v;
    EXPECT_EQ(c["pool.mode"], "pass-through") << v;
    EXPECT_EQ(c["LAZYFUSE_POOL.value"], v);
    EXPECT_EQ(c["LAZYFUSE_POOL.source"], "environment") << v;
    EXPECT_TRUE(c.warnings.empty()) << v << "\n" << c.all_warnings();
  }
  for (const char* v : {"pool", "on", "1", "true", "yes"}) {
    const Child c = report({std::string("LAZYFUSE_POOL=") + v});
    EXPECT_EQ(c["pool_enabled"], "1") << v;
    EXPECT_EQ(c["pool.mode"], "caching") << v;
    EXPECT_TRUE(c.warnings.empty()) << v << "\n" << c.all_warnings();
  }
}

TEST(ConfigPool, InvalidValueFromTheEnvironmentIsRejectedWithAWarning) {
  const Child c = report({"LAZYFUSE_POOL=offf"});
  EXPECT_EQ(c["pool_enabled"], "1");
  EXPECT_EQ(c["LAZYFUSE_POOL.value"], "pool");
  EXPECT_EQ(c["LAZYFUSE_POOL.source"], "default");
  EXPECT_TRUE(contains(c["LAZYFUSE_POOL.rejected"], "'offf'"));
  ASSERT_EQ(c.warnings.size(), 1u) << c.all_warnings();
  EXPECT_EQ(c.warnings_with({"LAZYFUSE_POOL", "'offf'", "valid: pool, none", "using the default 'pool'"}).size(), 1u)
      << c.all_warnings();
}

TEST(ConfigPool, SetAcceptsTheSameValues) {
  for (const char* v : {"none", "off", "0", "false"}) {
    config::set("LAZYFUSE_POOL", v);
    EXPECT_FALSE(config::snapshot().pool_enabled) << v;
    EXPECT_EQ(PoolOptions::from_settings(0).mode, PoolMode::PassThrough) << v;
  }
  for (const char* v : {"pool", "on", "1"}) {
    config::set("LAZYFUSE_POOL", v);
    EXPECT_TRUE(config::snapshot().pool_enabled) << v;
  }
  const std::string m = error_of([] { config::set("LAZYFUSE_POOL", "offf"); });
  EXPECT_TRUE(contains(m, "LAZYFUSE_POOL") && contains(m, "'offf'") && contains(m, "none")) << m;
  config::reset("LAZYFUSE_POOL");
}

// ---- LAZYFUSE_GPU_MEMORY_LIMIT --------------------------------------------------------------------------------------

// "An invalid value makes the pool's creation throw lazyfuse::Error naming the setting": from the environment it
// is kept (not dropped for "no limit"), shown as rejected and warned about.
TEST(ConfigMemoryLimit, InvalidValueFromTheEnvironmentFailsClosed) {
  for (const char* v : {"12GB", "150%", "-5", "1e9", "lots"}) {
    const Child c = report({std::string("LAZYFUSE_GPU_MEMORY_LIMIT=") + v});
    EXPECT_EQ(c["LAZYFUSE_GPU_MEMORY_LIMIT.value"], v);
    EXPECT_EQ(c["LAZYFUSE_GPU_MEMORY_LIMIT.source"], "environment");
    EXPECT_TRUE(contains(c["LAZYFUSE_GPU_MEMORY_LIMIT.rejected"], v)) << c["LAZYFUSE_GPU_MEMORY_LIMIT.rejected"];
    EXPECT_TRUE(contains(c["pool.error"], "LAZYFUSE_GPU_MEMORY_LIMIT")) << v << ": " << c["pool.error"];
    EXPECT_EQ(c.values.count("pool.limit"), 0u) << v << ": no pool options without the limit";
    EXPECT_EQ(c.warnings_with({"LAZYFUSE_GPU_MEMORY_LIMIT", v, "refuses to start"}).size(), 1u) << c.all_warnings();
    EXPECT_EQ(c.warnings.size(), 1u) << c.all_warnings();
  }
}

TEST(ConfigMemoryLimit, BytesFromTheEnvironment) {
  for (const auto& [v, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"8589934592", "8589934592"}, {" 4096 ", "4096"}, {"0", "0"}, {"", "0"}}) {
    const Child c = report({"LAZYFUSE_GPU_MEMORY_LIMIT=" + v});
    EXPECT_EQ(c["pool.limit"], bytes) << "'" << v << "'";
    EXPECT_TRUE(c.warnings.empty()) << c.all_warnings();
  }
}

// One parser: config::set accepts exactly what the pool can read (the checks used to differ: "150%" and "1e9"
// passed the setting and then failed the pool).
TEST(ConfigMemoryLimit, SetAcceptsExactlyWhatThePoolReads) {
  for (const char* v : {"", "0", "8589934592", " 4096 ", "90%", "12.5%", "100%", "abc", "-5", "12GB", "0%", "120%",
                        "150%", "%", "1e9", "1e1%", "inf%", "99999999999999999999999"}) {
    bool parses = true;
    try {
      (void)config::parse_memory_limit(v);
    } catch (const lazyfuse::Error& e) {
      parses = false;
      EXPECT_TRUE(contains(e.what(), "LAZYFUSE_GPU_MEMORY_LIMIT")) << e.what();
    }
    bool set_ok = true;
    try {
      config::set("LAZYFUSE_GPU_MEMORY_LIMIT", v);
    } catch (const lazyfuse::Error&) {
      set_ok = false;
    }
    EXPECT_EQ(set_ok, parses) << "'" << v << "'";
    bool pool_ok = true;
    try {
      (void)lazyfuse::runtime::parse_memory_limit(v, 1000);
    } catch (const lazyfuse::Error&) {
      pool_ok = false;
    }
    EXPECT_EQ(pool_ok, parses) << "'" << v << "'";
  }
  config::reset("LAZYFUSE_GPU_MEMORY_LIMIT");
  EXPECT_EQ(config::parse_memory_limit("12.5%").percent, 12.5);
  EXPECT_EQ(config::parse_memory_limit("8589934592").bytes, 8589934592u);
}

// ---- the other settings with fixed values --------------------------------------------------------------------------

// "Any other value is an error naming the setting and the valid values (from the environment: reported on stderr,
// and the default applies)".
TEST(ConfigChoices, InvalidValuesFromTheEnvironmentAreRejected) {
  const Child c =
      report({"LAZYFUSE_BACKEND=gpu", "LAZYFUSE_MODE=Eager", "LAZYFUSE_ACCELERATORS=cutensor", "LAZYFUSE_MAX_DEPTH=ten",
              "LAZYFUSE_MAX_KERNEL_NODES=-3", "LAZYFUSE_MAX_KERNEL_INPUTS=1.5", "LAZYFUSE_CPU_THREADS=99999999999"});
  EXPECT_EQ(c.warnings.size(), 7u) << c.all_warnings();
  for (const auto& [name, bad, valid, fallback] :
       std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"LAZYFUSE_BACKEND", "gpu", "valid: auto, cpu, cuda", "auto"},
           {"LAZYFUSE_MODE", "Eager", "valid: lazy, eager", "lazy"},
           {"LAZYFUSE_ACCELERATORS", "cutensor", "valid: cub, (empty)", "cub"},
           {"LAZYFUSE_MAX_DEPTH", "ten", "a non-negative integer", "4096"},
           {"LAZYFUSE_MAX_KERNEL_NODES", "-3", "a non-negative integer", "256"},
           {"LAZYFUSE_MAX_KERNEL_INPUTS", "1.5", "a non-negative integer", "48"},
           {"LAZYFUSE_CPU_THREADS", "99999999999", "a non-negative integer", "0"}}) {
    EXPECT_EQ(c[name + ".value"], fallback) << name;
    EXPECT_EQ(c[name + ".source"], "default") << name;
    EXPECT_FALSE(c[name + ".rejected"].empty()) << name;
    EXPECT_EQ(c.warnings_with({name, "'" + bad + "'", valid, "using the default '" + fallback + "'"}).size(), 1u)
        << name << "\n"
        << c.all_warnings();
  }
  EXPECT_EQ(c["backend"], "auto");
  EXPECT_EQ(c["eager"], "0");
  EXPECT_EQ(c["accelerator_cub"], "1");
  EXPECT_EQ(c["max_depth"], "4096");
}

TEST(ConfigChoices, ValidValuesFromTheEnvironment) {
  const Child c =
      report({"LAZYFUSE_BACKEND=cpu", "LAZYFUSE_MODE=eager", "LAZYFUSE_ACCELERATORS=", "LAZYFUSE_MAX_DEPTH=50",
              "LAZYFUSE_MAX_PINNED_MIB=3", "LAZYFUSE_MAX_KERNEL_NODES=128", "LAZYFUSE_MAX_KERNEL_INPUTS=32",
              "LAZYFUSE_CPU_THREADS=3", "LAZYFUSE_CACHE_DIR=/x/kernels"});
  EXPECT_TRUE(c.warnings.empty()) << c.all_warnings();
  EXPECT_EQ(c["backend"], "cpu");
  EXPECT_EQ(c["eager"], "1");
  EXPECT_EQ(c["accelerator_cub"], "0");
  EXPECT_EQ(c["LAZYFUSE_ACCELERATORS.source"], "environment");
  EXPECT_EQ(c["max_depth"], "50");
  EXPECT_EQ(c["max_pinned_bytes"], std::to_string(std::int64_t(3) << 20));
  EXPECT_EQ(c["max_kernel_nodes"], "128");
  EXPECT_EQ(c["max_kernel_inputs"], "32");
  EXPECT_EQ(c["cpu_threads"], "3");
  EXPECT_EQ(c["LAZYFUSE_CACHE_DIR.value"], "/x/kernels");
}

TEST(ConfigChoices, SetThrowsNamingTheSettingAndTheValidValues) {
  for (const auto& [name, bad, valid] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"LAZYFUSE_BACKEND", "gpu", "auto, cpu, cuda"},
           {"LAZYFUSE_MODE", "EAGER", "lazy, eager"},
           {"LAZYFUSE_ACCELERATORS", "CUB", "cub"},
           {"LAZYFUSE_MAX_DEPTH", "-1", "non-negative integer"},
           {"LAZYFUSE_MAX_KERNEL_NODES", "many", "non-negative integer"},
           {"LAZYFUSE_MAX_KERNEL_INPUTS", "4x", "non-negative integer"},
           {"LAZYFUSE_CPU_THREADS", "2.5", "non-negative integer"}}) {
    const std::string before = config::get(name);
    const std::string m = error_of([&] { config::set(name, bad); });
    EXPECT_TRUE(contains(m, name) && contains(m, "'" + bad + "'") && contains(m, valid)) << m;
    EXPECT_EQ(config::get(name), before);
  }
}

// "smallest effective value: 2" (MAX_DEPTH), 8 (MAX_KERNEL_NODES), 4 (MAX_KERNEL_INPUTS), 1 (MAX_PINNED_MIB);
// CPU_THREADS 0: all.
TEST(ConfigChoices, CountsHaveTheirSmallestEffectiveValues) {
  for (const auto& [name, smallest] : std::vector<std::pair<std::string, int>>{
           {"LAZYFUSE_MAX_DEPTH", 2}, {"LAZYFUSE_MAX_KERNEL_NODES", 8}, {"LAZYFUSE_MAX_KERNEL_INPUTS", 4}}) {
    config::set(name, "0");
    const auto& c = config::snapshot();
    const int actual = name == "LAZYFUSE_MAX_DEPTH"          ? c.max_depth
                       : name == "LAZYFUSE_MAX_KERNEL_NODES" ? c.max_kernel_nodes
                                                             : c.max_kernel_inputs;
    EXPECT_EQ(actual, smallest) << name;
    config::reset(name);
  }
  config::set("LAZYFUSE_MAX_PINNED_MIB", "0");
  EXPECT_EQ(config::snapshot().max_pinned_bytes, std::int64_t(1) << 20) << "LAZYFUSE_MAX_PINNED_MIB: 1 MiB";
  config::reset("LAZYFUSE_MAX_PINNED_MIB");
  config::set("LAZYFUSE_CPU_THREADS", "0");
  EXPECT_EQ(config::snapshot().cpu_threads, 0);
  config::reset("LAZYFUSE_CPU_THREADS");
}

// "LAZYFUSE_BACKEND ... read once: the first call of lazyfuse::backend() or the first materialization decides";
// "cpu: always the CPU backend"; "cuda: without a usable device ... throws BackendError".
TEST(ConfigBackend, IsReadOnceAndCpuAndCudaAreObeyed) {
  const Child plain = run_child("backend", {});
  const std::string first = plain["backend.first"];
  ASSERT_TRUE(first == "cpu" || first == "cuda") << first;
  EXPECT_EQ(plain["backend.after_set"], first) << "a later set changes nothing";

  const Child cpu = run_child("backend", {"LAZYFUSE_BACKEND=cpu"});
  EXPECT_EQ(cpu["backend.first"], "cpu");
  EXPECT_EQ(cpu["backend.after_set"], "cpu");

  const Child cuda = run_child("backend", {"LAZYFUSE_BACKEND=cuda"});
  if (first == "cuda")
    EXPECT_EQ(cuda["backend.first"], "cuda");
  else
    EXPECT_TRUE(contains(cuda["backend.first"], "BackendError: LAZYFUSE_BACKEND=cuda")) << cuda["backend.first"];
}

// ---- misspelled variables and channels -----------------------------------------------------------------------------

// "A LAZYFUSE_* variable that is not a setting draws one warning naming the closest setting; LAZYFUSE_TEST_* and
// LAZYFUSE_CI_* are reserved for the test suite and CI and draw none".
TEST(ConfigUnknown, MisspelledVariablesAreNamedOnceWithTheClosestSetting) {
  const Child c = run_child("precedence", {"LAZYFUSE_MDOE=eager", "LAZYFUSE_CAHCE_DIR=/x", "lazyfuse_pool=none",
                                           "LAZYFUSE_TEST_ANYTHING=1", "LAZYFUSE_CI_ANYTHING=1"});
  EXPECT_EQ(c.warnings.size(), 3u) << c.all_warnings();
  EXPECT_EQ(c.warnings_with({"LAZYFUSE_MDOE", "did you mean LAZYFUSE_MODE?"}).size(), 1u) << c.all_warnings();
  EXPECT_EQ(c.warnings_with({"LAZYFUSE_CAHCE_DIR", "did you mean LAZYFUSE_CACHE_DIR?"}).size(), 1u) << c.all_warnings();
  EXPECT_EQ(c.warnings_with({"lazyfuse_pool", "did you mean LAZYFUSE_POOL?"}).size(), 1u) << c.all_warnings();
  EXPECT_TRUE(c.warnings_with({"ANYTHING"}).empty()) << c.all_warnings();
  EXPECT_EQ(c["before.LAZYFUSE_MODE.value"], "lazy") << "a misspelled variable does nothing";
}

TEST(ConfigUnknown, RenamedTestVariablesNameTheirNewName) {
  const Child c = report({"LAZYFUSE_REQUIRE_GPU=1"});
  EXPECT_EQ(c.warnings_with({"LAZYFUSE_REQUIRE_GPU", "now LAZYFUSE_TEST_REQUIRE_GPU"}).size(), 1u) << c.all_warnings();
}

// "An unknown LAZYFUSE_LOG channel draws one warning naming the closest channel; the others still log".
TEST(ConfigUnknown, MisspelledLogChannelsAreNamedAndTheOthersLog) {
  const Child c = report({"LAZYFUSE_LOG=fusoin, cache,Lower"});
  EXPECT_EQ(c.warnings.size(), 2u) << c.all_warnings();
  EXPECT_EQ(c.warnings_with({"LAZYFUSE_LOG", "'fusoin'", "did you mean 'fusion'?"}).size(), 1u) << c.all_warnings();
  EXPECT_EQ(c.warnings_with({"LAZYFUSE_LOG", "'Lower'", "did you mean 'lower'?"}).size(), 1u) << c.all_warnings();
  EXPECT_EQ(c["log.cache"], "1");
  EXPECT_EQ(c["log.fusion"], "0");
  EXPECT_EQ(c["log.lower"], "0");
  EXPECT_EQ(c["LAZYFUSE_LOG.source"], "environment");
  EXPECT_TRUE(contains(c["LAZYFUSE_LOG.rejected"], "fusoin")) << c["LAZYFUSE_LOG.rejected"];

  const std::string m = error_of([] { config::set("LAZYFUSE_LOG", "fusion,lanuch"); });
  EXPECT_TRUE(contains(m, "'lanuch'") && contains(m, "did you mean 'launch'?")) << m;
}

// "each enabled channel writes lines [lazyfuse:<channel>] ... to stderr. all enables every channel".
TEST(ConfigLog, ChannelsWriteTheirLinesAndAllEnablesEvery) {
  const Child fusion = run_child("compute", {"LAZYFUSE_LOG=fusion", "LAZYFUSE_BACKEND=cpu"});
  EXPECT_EQ(fusion["sum"], "1000000.000000");
  EXPECT_TRUE(contains(fusion.run.output, "[lazyfuse:fusion] ")) << fusion.run.output;
  EXPECT_FALSE(contains(fusion.run.output, "[lazyfuse:lower] ")) << fusion.run.output;
  const Child all = run_child("compute", {"LAZYFUSE_LOG=all", "LAZYFUSE_BACKEND=cpu"});
  EXPECT_TRUE(contains(all.run.output, "[lazyfuse:fusion] ")) << all.run.output;
  EXPECT_TRUE(contains(all.run.output, "[lazyfuse:lower] ")) << all.run.output;
  const Child none = run_child("compute", {"LAZYFUSE_BACKEND=cpu"});
  EXPECT_FALSE(contains(none.run.output, "[lazyfuse:")) << none.run.output;
  const Child every = report({"LAZYFUSE_LOG=all"});
  for (const char* channel : {"fusion", "lower", "codegen", "cache", "launch", "accelerator"})
    EXPECT_EQ(every[std::string("log.") + channel], "1") << channel;
}

} // namespace
