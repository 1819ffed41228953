// lazyfuse-info, run as a separate program (LAZYFUSE_INFO_PATH, set by tests/CMakeLists.txt): it must exit 0
// everywhere, GPU or not, list every setting with its value and where the value came from, mark the values it
// rejected, and say when the kernel cache directory is not used.
#include <lazyfuse/config.hpp>
#include <lazyfuse/runtime.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef LAZYFUSE_INFO_PATH
#error "LAZYFUSE_INFO_PATH must name the lazyfuse-info executable (tests/CMakeLists.txt sets it)"
#endif

namespace {

namespace fs = std::filesystem;

struct InfoRun {
  int status = -1; // exit status, or -1 when it did not exit normally
  std::string out; // stdout
};

// Every LAZYFUSE_* variable of this process is cleared for the child unless `env` sets it, so that the
// caller's environment cannot change what the tests see.
InfoRun run_info(const std::string& env = "", const std::string& args = "") {
  std::string cmd = "env";
  for (const auto& s : lazyfuse::config::all()) cmd += " -u " + s.name;
  cmd += " " + env + " '" + std::string(LAZYFUSE_INFO_PATH) + "' " + args + " 2>/dev/null";
  InfoRun r;
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The lines of `text` that start (after indentation) with `key`.
std::vector<std::string> lines_starting_with(const std::string& text, const std::string& key) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, key.size(), key) == 0) out.push_back(line);
  }
  return out;
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

TEST(LazyfuseInfo, ExitsZeroAndListsEverySetting) {
  const InfoRun r = run_info();
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(r.out.starts_with("lazyfuse ")) << r.out;
  EXPECT_FALSE(r.out.starts_with("lazyfuse unknown")) << "no version compiled in";
  for (const auto& s : lazyfuse::config::all()) {
    const auto lines = lines_starting_with(r.out, s.name + " ");
    ASSERT_FALSE(lines.empty()) << s.name << " missing from\n" << r.out;
    EXPECT_TRUE(contains(lines[0], "[default]")) << lines[0];
  }
  EXPECT_TRUE(contains(r.out, "nvrtc")) << r.out;
  EXPECT_TRUE(contains(r.out, "Kernel cache")) << r.out;
  EXPECT_TRUE(contains(r.out, "misses")) << r.out;
  // What runs matrix products on the CPU: BLAS when the build found one, else the blocked loop.
  const auto cpu = lines_starting_with(r.out, "CPU ");
  ASSERT_EQ(cpu.size(), 1u) << r.out;
  EXPECT_TRUE(contains(cpu[0], "BLAS") || contains(cpu[0], "blocked loop")) << cpu[0];
  // What runs sorts on each backend.
  const auto sorts = lines_starting_with(r.out, "sort, argsort");
  ASSERT_EQ(sorts.size(), 1u) << r.out;
  EXPECT_TRUE(contains(sorts[0], "cub::DeviceRadixSort") && contains(sorts[0], "std::stable_sort")) << sorts[0];
}

// The CPU code generator in use and why: "llvm (LLVM 19...)" or "interpreter (reason)".
TEST(LazyfuseInfo, ShowsTheCpuCodeGenerator) {
  const InfoRun r = run_info();
  ASSERT_EQ(r.status, 0) << r.out;
  const auto lines = lines_starting_with(r.out, "kernels on the host");
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_TRUE(contains(lines[0], "llvm (LLVM ") || contains(lines[0], "interpreter (")) << lines[0];
}

TEST(LazyfuseInfo, ShowsTheBackendInUse) {
  const std::string expected = lazyfuse::backend() == lazyfuse::Backend::Cuda ? "cuda" : "cpu";
  const InfoRun r = run_info();
  ASSERT_EQ(r.status, 0) << r.out;
  const auto lines = lines_starting_with(r.out, "in use");
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_TRUE(lines[0].ends_with(" " + expected)) << lines[0];
  if (expected == "cuda") {
    EXPECT_TRUE(contains(r.out, "compute capability")) << r.out;
    EXPECT_TRUE(contains(r.out, "(sm_")) << r.out;
    EXPECT_TRUE(contains(r.out, "driver version")) << r.out;
  } else {
    const auto available = lines_starting_with(r.out, "available");
    ASSERT_EQ(available.size(), 1u) << r.out;
    EXPECT_TRUE(contains(available[0], " no (")) << available[0];
  }
}

TEST(LazyfuseInfo, EnvironmentValueAndSourceAreShown) {
  const InfoRun r = run_info("LAZYFUSE_MODE=eager");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto lines = lines_starting_with(r.out, "LAZYFUSE_MODE ");
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_TRUE(contains(lines[0], " eager ")) << lines[0];
  EXPECT_TRUE(contains(lines[0], "[environment]")) << lines[0];
  // The others stay defaults.
  const auto backend = lines_starting_with(r.out, "LAZYFUSE_BACKEND ");
  ASSERT_EQ(backend.size(), 1u);
  EXPECT_TRUE(contains(backend[0], "[default]")) << backend[0];
}

TEST(LazyfuseInfo, CacheDirectoryEntriesAreCounted) {
  std::string tmpl = "/tmp/lazyfuse_info_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  for (const char* name : {"0123456789abcdef0123456789abcdef.lfk", "fedcba9876543210fedcba9876543210.lfk"})
    std::ofstream(dir / name) << std::string(100, 'x');
  std::ofstream(dir / "fedcba9876543210fedcba9876543210.cu") << "// not an entry";
  const InfoRun r = run_info("LAZYFUSE_CACHE_DIR=" + dir.string());
  std::error_code ec;
  fs::remove_all(dir, ec);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto d = lines_starting_with(r.out, "directory");
  ASSERT_EQ(d.size(), 1u) << r.out;
  EXPECT_TRUE(contains(d[0], dir.string())) << d[0];
  const auto e = lines_starting_with(r.out, "entries");
  ASSERT_EQ(e.size(), 1u) << r.out;
  EXPECT_TRUE(contains(e[0], " 2 (200 bytes)")) << e[0];
  const auto s = lines_starting_with(r.out, "LAZYFUSE_CACHE_DIR ");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(contains(s[0], "[environment]")) << s[0];
}

TEST(LazyfuseInfo, InMemoryCacheIsShownAsMemoryOnly) {
  const InfoRun r = run_info("LAZYFUSE_CACHE_IN_MEMORY=1");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto d = lines_starting_with(r.out, "directory");
  ASSERT_EQ(d.size(), 1u) << r.out;
  EXPECT_TRUE(contains(d[0], "memory only")) << d[0];
}

// "lazyfuse-info marks rejected values": the row of a setting whose environment value was not taken says so, the
// reason follows it, and the unknown variables are listed among the warnings with the closest setting.
TEST(LazyfuseInfo, RejectedValuesAndUnknownVariablesAreMarked) {
  const InfoRun r = run_info("LAZYFUSE_POOL=offf LAZYFUSE_GPU_MEMORY_LIMIT=12GB LAZYFUSE_MODE=eager LAZYFUSE_MDOE=1");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const std::string name : {"LAZYFUSE_POOL", "LAZYFUSE_GPU_MEMORY_LIMIT"}) {
    const auto lines = lines_starting_with(r.out, name + " ");
    ASSERT_EQ(lines.size(), 1u) << r.out;
    EXPECT_TRUE(contains(lines[0], "REJECTED")) << lines[0];
    const auto why = r.out.find('\n', r.out.find(lines[0])) + 1;
    EXPECT_TRUE(r.out.compare(why, 8, "      ! ") == 0 && r.out.find(name, why) == why + 8)
        << "the reason follows the row:\n"
        << r.out;
  }
  EXPECT_TRUE(contains(lines_starting_with(r.out, "LAZYFUSE_POOL ")[0], " pool ")) << "the default applies";
  EXPECT_TRUE(contains(lines_starting_with(r.out, "LAZYFUSE_GPU_MEMORY_LIMIT ")[0], " 12GB "))
      << "the limit is kept: the pool refuses to start";
  EXPECT_TRUE(contains(r.out, "refuses to start")) << r.out;
  const auto mode = lines_starting_with(r.out, "LAZYFUSE_MODE ");
  ASSERT_EQ(mode.size(), 1u);
  EXPECT_FALSE(contains(mode[0], "REJECTED")) << mode[0];
  const auto warnings = r.out.substr(r.out.find("Configuration warnings"));
  EXPECT_TRUE(contains(warnings, "LAZYFUSE_MDOE") && contains(warnings, "did you mean LAZYFUSE_MODE?")) << warnings;
  EXPECT_TRUE(contains(warnings, "'offf'")) << warnings;
}

TEST(LazyfuseInfo, CacheDirectoryWritableByOthersIsShownAsNotUsed) {
  std::string tmpl = "/tmp/lazyfuse_info_XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  std::ofstream(dir / "0123456789abcdef0123456789abcdef.lfk") << std::string(100, 'x');
  const InfoRun r = run_info("LAZYFUSE_CACHE_DIR=" + dir.string());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::error_code ec;
  fs::remove_all(dir, ec);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto e = lines_starting_with(r.out, "entries");
  ASSERT_EQ(e.size(), 1u) << r.out;
  EXPECT_TRUE(contains(e[0], "not used: kernels are cached in memory only")) << e[0];
  EXPECT_TRUE(contains(e[0], "writable by other users (mode 0777)")) << e[0];
  EXPECT_EQ(names, std::vector<std::string>{"0123456789abcdef0123456789abcdef.lfk"}) << "nothing written there";
  const auto warnings = r.out.substr(r.out.find("Configuration warnings"));
  EXPECT_TRUE(contains(warnings, dir.string())) << warnings;
}

TEST(LazyfuseInfo, HelpAndBadArguments) {
  const InfoRun help = run_info("", "--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(contains(help.out, "usage: lazyfuse-info")) << help.out;
  const InfoRun version = run_info("", "--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(version.out.starts_with("lazyfuse ")) << version.out;
  EXPECT_EQ(run_info("", "--no-such-option").status, 2);
}

} // namespace
