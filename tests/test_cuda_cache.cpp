// The kernel cache end to end on a GPU: memory cache, disk cache (LAZYFUSE_CACHE_DIR), sharing a directory
// between processes, corrupt entries, and the settings that change what is cached (IN_MEMORY, SAVE_CUDA_SOURCE,
// COMPILE_WITH_PTX). Every result is compared with a double reference computed here, on fresh random inputs.
//
// Without a CUDA backend every test skips, unless LAZYFUSE_TEST_REQUIRE_GPU=1, which makes that a failure. Other
// processes are this binary run again (fork + exec, never a bare fork after CUDA is initialized) with
// --gtest_filter=CudaCacheChild.Run and LAZYFUSE_TEST_CACHE_CHILD set; CudaCacheChild.Run skips otherwise.
#include "tests/cache_structures.h"
#include "tests/child_process.h"
#include "tests/gpu_test.h"

#include "codegen/Nvrtc.h"
#include "runtime/DiskCache.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace config = lazyfuse::config;
using lazyfuse::Array;

// ---- expressions and references -----------------------------------------------------------------------------

using lazyfuse_test::build_structure;
using lazyfuse_test::structure_reference;

// Builds structure `id` on fresh random inputs of n elements, materializes it and compares every element with
// the double reference. Returns the number of wrong elements (the first few are reported).
int run_and_check(int id, std::int64_t n, double k) {
  static std::mt19937 rng(12345);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> x(static_cast<std::size_t>(n)), y(x.size());
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);
  const auto h = build_structure(id, lazyfuse::asarray(x), lazyfuse::asarray(y), k).get<double>();
  int wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = structure_reference(id, x[i], y[i], k);
    if (!(std::fabs(h[i] - want) <= 1e-12 * (1 + std::fabs(want)))) {
      if (wrong < 5) ADD_FAILURE() << "structure " << id << " element " << i << ": got " << h[i] << ", want " << want;
      ++wrong;
    }
  }
  return wrong;
}

struct Delta {
  std::int64_t memory_hits, disk_hits, misses;
};
Delta operator-(const lazyfuse::KernelCacheStats& a, const lazyfuse::KernelCacheStats& b) {
  return {std::int64_t(a.memory_hits - b.memory_hits), std::int64_t(a.disk_hits - b.disk_hits),
          std::int64_t(a.misses - b.misses)};
}

std::vector<std::string> files_ending(const fs::path& dir, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.ends_with(suffix)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> all_files(const fs::path& dir) {
  return files_ending(dir, "");
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every .lfk in `dir` loads (header, size and checksum are right) and no temporary file is left.
void expect_only_valid_entries(const fs::path& dir) {
  lazyfuse::runtime::DiskCache disk(dir.string());
  ASSERT_TRUE(disk.enabled());
  for (const auto& name : all_files(dir)) {
    EXPECT_FALSE(name.starts_with(".")) << "temporary file left: " << name;
    if (!name.ends_with(".lfk")) continue;
    const std::string key = name.substr(0, name.size() - 4);
    auto payload = disk.load(key);
    EXPECT_TRUE(payload.has_value()) << "invalid entry " << name;
    if (payload) {
      EXPECT_FALSE(payload->empty()) << name;
    }
  }
}

// ---- other processes ----------------------------------------------------------------------------------------

// Starts this binary again, running only CudaCacheChild.Run with `mode`, the cache in `dir`, and its counters
// written to `out`.
lazyfuse_test::RunningChild spawn_child(const std::string& mode, const fs::path& dir, const fs::path& out) {
  // The child's settings are exactly the ones below.
  const auto drop = lazyfuse_test::variables_where([](std::string_view name) {
    return name.starts_with("LAZYFUSE_CACHE_") || name.starts_with("LAZYFUSE_COMPILE_") ||
           name.starts_with("LAZYFUSE_TEST_CACHE_");
  });
  return lazyfuse_test::start_self("CudaCacheChild.Run",
                                   {"LAZYFUSE_TEST_CACHE_CHILD=" + mode, "LAZYFUSE_CACHE_DIR=" + dir.string(),
                                    "LAZYFUSE_TEST_CACHE_OUT=" + out.string()},
                                   drop);
}

struct ChildResult {
  lazyfuse_test::ChildResult run;
  Delta delta{-1, -1, -1};
  bool ok() const { return run.ok(); }
};

ChildResult wait_child(lazyfuse_test::RunningChild child, const fs::path& out) {
  ChildResult r;
  r.run = lazyfuse_test::finish(child, 600);
  std::ifstream in(out);
  in >> r.delta.memory_hits >> r.delta.disk_hits >> r.delta.misses;
  return r;
}

// The ids a child of `mode` materializes: "reuse" 0..5, "fill0" 0..11 forwards, "fill1" 15..4 backwards.
std::vector<int> ids_of(const std::string& mode) {
  std::vector<int> ids;
  if (mode == "reuse")
    for (int i = 0; i < 6; ++i) ids.push_back(i);
  if (mode == "fill0")
    for (int i = 0; i < 12; ++i) ids.push_back(i);
  if (mode == "fill1")
    for (int i = 15; i >= 4; --i) ids.push_back(i);
  return ids;
}

// The other side of spawn_child.
TEST(CudaCacheChild, Run) {
  const char* mode = std::getenv("LAZYFUSE_TEST_CACHE_CHILD");
  if (!mode) GTEST_SKIP() << "helper process of the other tests of this file";
  ASSERT_EQ(lazyfuse_test::why_no_gpu(), "");
  const auto ids = ids_of(mode);
  ASSERT_FALSE(ids.empty()) << mode;
  const auto s0 = lazyfuse::kernel_cache_stats();
  int k = 0;
  for (int id : ids) EXPECT_EQ(run_and_check(id, 2000 + 37 * id, 0.5 + k++), 0) << id;
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  std::ofstream(std::getenv("LAZYFUSE_TEST_CACHE_OUT"))
      << d.memory_hits << ' ' << d.disk_hits << ' ' << d.misses << '\n';
}

// ---- the tests ------------------------------------------------------------------------------------------------

// A fresh cache directory per test, set through config::set; the settings a test changes are reset after it.
class CudaCache : public ::testing::Test {
protected:
  void SetUp() override {
    LAZYFUSE_SKIP_WITHOUT_GPU();
    std::string tmpl = (fs::temp_directory_path() / "lazyfuse_cuda_cache_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ / "kernels";
    config::set("LAZYFUSE_CACHE_DIR", dir_.string());
    lazyfuse::clear_kernel_cache();
  }
  void TearDown() override {
    if (root_.empty()) return; // skipped
    for (const char* name : {"LAZYFUSE_CACHE_DIR", "LAZYFUSE_CACHE_IN_MEMORY", "LAZYFUSE_CACHE_SAVE_CUDA_SOURCE",
                             "LAZYFUSE_COMPILE_WITH_PTX"})
      config::reset(name);
    lazyfuse::clear_kernel_cache();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  fs::path root_, dir_;
};

TEST_F(CudaCache, MissThenDiskHitThenMemoryHit) {
  const auto s0 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(5, 4096, 1.5), 0);
  const Delta first = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(first.misses, 1);
  EXPECT_EQ(first.disk_hits, 0);
  const auto entries = files_ending(dir_, ".lfk");
  EXPECT_EQ(entries.size(), 1u);

  lazyfuse::clear_kernel_cache();
  const auto s1 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(5, 4096, 1.5), 0);
  const Delta second = lazyfuse::kernel_cache_stats() - s1;
  EXPECT_EQ(second.disk_hits, 1);
  EXPECT_EQ(second.misses, 0);
  EXPECT_EQ(files_ending(dir_, ".lfk"), entries) << "a disk hit must not add or replace an entry";

  const auto s2 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(5, 3001, -0.25), 0); // new length and new scalar: same kernel
  const Delta third = lazyfuse::kernel_cache_stats() - s2;
  EXPECT_EQ(third.misses, 0);
  EXPECT_EQ(third.disk_hits, 0);
  EXPECT_EQ(third.memory_hits, 1);
  EXPECT_EQ(files_ending(dir_, ".lfk"), entries);
  expect_only_valid_entries(dir_);
}

TEST_F(CudaCache, SecondProcessReusesTheDirectory) {
  const auto ids = ids_of("reuse");
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id : ids) EXPECT_EQ(run_and_check(id, 1000, 2.0), 0);
  EXPECT_EQ((lazyfuse::kernel_cache_stats() - s0).misses, std::int64_t(ids.size()));
  const auto entries = files_ending(dir_, ".lfk");
  ASSERT_EQ(entries.size(), ids.size());

  for (int run = 0; run < 2; ++run) { // the second identical run must add no file either
    const fs::path out = root_ / ("child" + std::to_string(run) + ".txt");
    const ChildResult r = wait_child(spawn_child("reuse", dir_, out), out);
    EXPECT_TRUE(r.ok()) << "child run " << run << " failed (wrong values or no GPU): " << r.run.describe();
    EXPECT_EQ(r.delta.disk_hits, std::int64_t(ids.size())) << run;
    EXPECT_EQ(r.delta.misses, 0) << run;
    EXPECT_EQ(files_ending(dir_, ".lfk"), entries) << run;
  }
  expect_only_valid_entries(dir_);
}

TEST_F(CudaCache, TwoProcessesFillingOneDirectoryLeaveOnlyValidEntries) {
  const fs::path out0 = root_ / "fill0.txt", out1 = root_ / "fill1.txt";
  auto a = spawn_child("fill0", dir_, out0);
  auto b = spawn_child("fill1", dir_, out1);
  const ChildResult ra = wait_child(a, out0), rb = wait_child(b, out1);
  EXPECT_TRUE(ra.ok()) << ra.run.describe();
  EXPECT_TRUE(rb.ok()) << rb.run.describe();
  // Each structure is compiled by one child or both (a race is allowed), or loaded from the other's entry.
  EXPECT_EQ(ra.delta.misses + ra.delta.disk_hits, 12);
  EXPECT_EQ(rb.delta.misses + rb.delta.disk_hits, 12);
  EXPECT_EQ(files_ending(dir_, ".lfk").size(), 16u);
  expect_only_valid_entries(dir_);

  // And they are usable: this process finds all 16 on disk.
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id = 0; id < 16; ++id) EXPECT_EQ(run_and_check(id, 777, -1.25), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(d.disk_hits, 16);
  EXPECT_EQ(d.misses, 0);
}

TEST_F(CudaCache, CorruptEntriesAreRecompiledAndRewritten) {
  for (int id : {1, 2}) EXPECT_EQ(run_and_check(id, 1000, 3.0), 0);
  auto entries = files_ending(dir_, ".lfk");
  ASSERT_EQ(entries.size(), 2u);
  const fs::path flipped = dir_ / entries[0], truncated = dir_ / entries[1];
  {
    std::string bytes = read_text(flipped);
    ASSERT_GT(bytes.size(), 64u);
    bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x5a); // in the payload: the checksum catches it
    std::ofstream(flipped, std::ios::binary | std::ios::trunc) << bytes;
  }
  fs::resize_file(truncated, fs::file_size(truncated) / 2);

  lazyfuse::clear_kernel_cache();
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id : {1, 2}) EXPECT_EQ(run_and_check(id, 1500, -2.0), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(d.misses, 2);
  EXPECT_EQ(d.disk_hits, 0);
  EXPECT_EQ(files_ending(dir_, ".lfk"), entries) << "the same keys are rewritten";
  expect_only_valid_entries(dir_);

  lazyfuse::clear_kernel_cache();
  const auto s1 = lazyfuse::kernel_cache_stats();
  for (int id : {1, 2}) EXPECT_EQ(run_and_check(id, 10, 0.125), 0);
  const Delta again = lazyfuse::kernel_cache_stats() - s1;
  EXPECT_EQ(again.disk_hits, 2) << "the rewritten entries load";
  EXPECT_EQ(again.misses, 0);
}

TEST_F(CudaCache, InMemoryWritesNothingToTheDirectory) {
  config::set("LAZYFUSE_CACHE_IN_MEMORY", "1");
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id : {3, 6, 12}) EXPECT_EQ(run_and_check(id, 2048, 0.75), 0);
  EXPECT_EQ((lazyfuse::kernel_cache_stats() - s0).misses, 3);
  EXPECT_TRUE(all_files(dir_).empty()) << all_files(dir_).size() << " files written";

  lazyfuse::clear_kernel_cache();
  const auto s1 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(3, 100, 1.0), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s1;
  EXPECT_EQ(d.misses, 1);
  EXPECT_EQ(d.disk_hits, 0);
  EXPECT_TRUE(all_files(dir_).empty());
}

TEST_F(CudaCache, SavedCudaSourceCompilesOnItsOwn) {
  config::set("LAZYFUSE_CACHE_SAVE_CUDA_SOURCE", "1");
  for (int id : {0, 7, 10}) EXPECT_EQ(run_and_check(id, 1000, 1.0), 0);
  const auto entries = files_ending(dir_, ".lfk");
  const auto sources = files_ending(dir_, ".cu");
  ASSERT_EQ(entries.size(), 3u);
  ASSERT_EQ(sources.size(), 3u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string stem = entries[i].substr(0, entries[i].size() - 4);
    EXPECT_EQ(sources[i], stem + ".cu") << "a .cu beside each entry";
    const std::string source = read_text(dir_ / sources[i]);
    EXPECT_EQ(source.find("#include"), std::string::npos) << sources[i] << " includes a header";
    lazyfuse::codegen::CompileOptions opt;
    opt.arch = 90;
    try {
      const auto compiled = lazyfuse::codegen::compile_cuda(source, "saved_" + stem, opt);
      EXPECT_FALSE(compiled.image.empty()) << sources[i];
    } catch (const lazyfuse::CompileError& e) {
      ADD_FAILURE() << sources[i] << " does not compile on its own: " << e.what() << "\n" << e.log();
    }
  }
}

TEST_F(CudaCache, CompileWithPtxGivesCorrectResults) {
  config::set("LAZYFUSE_COMPILE_WITH_PTX", "1");
  lazyfuse::clear_kernel_cache();
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id : {4, 9, 15}) EXPECT_EQ(run_and_check(id, 5000, -0.5), 0);
  EXPECT_EQ((lazyfuse::kernel_cache_stats() - s0).misses, 3);
  EXPECT_EQ(files_ending(dir_, ".lfk").size(), 3u);

  lazyfuse::clear_kernel_cache(); // the PTX entries load from disk (the driver finishes them)
  const auto s1 = lazyfuse::kernel_cache_stats();
  for (int id : {4, 9, 15}) EXPECT_EQ(run_and_check(id, 333, 2.5), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s1;
  EXPECT_EQ(d.disk_hits, 3);
  EXPECT_EQ(d.misses, 0);
}

TEST_F(CudaCache, UnwritableDirectoryStillGivesCorrectResults) {
  const fs::path file = root_ / "a_file";
  std::ofstream(file) << "not a directory";
  config::set("LAZYFUSE_CACHE_DIR", (file / "kernels").string());
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id : {8, 11}) EXPECT_EQ(run_and_check(id, 4000, 1.75), 0);
  lazyfuse::clear_kernel_cache();
  for (int id : {8, 11}) EXPECT_EQ(run_and_check(id, 4000, -1.75), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(d.misses, 4) << "memory only: compiled again after the clear";
  EXPECT_EQ(d.disk_hits, 0);
  EXPECT_TRUE(fs::is_regular_file(file));
}

} // namespace
