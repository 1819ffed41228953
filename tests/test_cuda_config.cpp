// The settings' claims that need a GPU (docs/configuration.md): LAZYFUSE_POOL's off values make the memory pool
// allocate every buffer separately, an invalid LAZYFUSE_GPU_MEMORY_LIMIT stops the pool instead of vanishing, a
// percent is of the device's memory, a limit from the environment is enforced, and a kernel cache directory that
// others may write to is used for neither loads nor stores on the CUDA path. The parsing of every value is tested
// without a GPU in tests/test_config.cpp.
//
// Every test skips without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1, which makes that a failure. The
// pool reads its settings once per process, so each environment is tried in a child (tests/child_process.h):
// this binary again, running only CudaConfigChild.Report, which prints "@@key=value" lines.
#include "tests/child_process.h"
#include "tests/gpu_test.h"

#include "runtime/CudaApi.h"
#include "runtime/MemoryPool.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace config = lazyfuse::config;
using lazyfuse::Array;
using lazyfuse::runtime::MemoryPool;
using lazyfuse::runtime::PoolMode;

constexpr const char* kChildVariable = "LAZYFUSE_TEST_CUDA_CONFIG_CHILD";
constexpr std::size_t kMiB = std::size_t{1} << 20;

void put(const std::string& key, const std::string& value) {
  std::cout << "@@" << key << '=' << value << std::endl;
}

// The other side of run_child: the process-wide pool of device 0 as the environment made it.
TEST(CudaConfigChild, Report) {
  if (!std::getenv(kChildVariable)) GTEST_SKIP() << "helper process of the other tests of this file";
  LAZYFUSE_SKIP_WITHOUT_GPU();
  lazyfuse::set_device(0);
  put("device_memory", std::to_string(lazyfuse::runtime::cuda::device_info(0).total_memory));
  try {
    MemoryPool& pool = MemoryPool::for_device(0);
    put("pool.mode", pool.mode() == PoolMode::Caching ? "caching" : "pass-through");
    put("pool.limit", std::to_string(pool.limit()));
    const auto before = pool.stats();
    for (int i = 0; i < 2; ++i) {
      auto buffer = pool.allocate_buffer(kMiB, nullptr); // returned at the end of each iteration
      EXPECT_NE(buffer.get(), nullptr);
    }
    LAZYFUSE_CUDA_CHECK(cudaDeviceSynchronize());
    const auto after = pool.stats();
    put("pool.device_mallocs", std::to_string(after.device_mallocs - before.device_mallocs));
    put("pool.device_frees", std::to_string(after.device_frees - before.device_frees));
    if (pool.limit() != 0 && pool.limit() < 64 * kMiB) {
      try {
        auto big = pool.allocate_buffer(64 * kMiB, nullptr);
        put("oom", "none");
      } catch (const lazyfuse::OutOfMemoryError& e) {
        put("oom", e.what());
      }
    }
  } catch (const lazyfuse::Error& e) {
    put("pool.error", e.what());
  }
  try {
    const Array x = lazyfuse::arange(0.0, 1000.0);
    put("sum", std::to_string(lazyfuse::sum(x * 2.0 + 1.0).item<double>()));
  } catch (const lazyfuse::Error& e) {
    put("compute.error", e.what());
  }
}

struct Child {
  lazyfuse_test::ChildResult run;
  std::map<std::string, std::string> values;

  std::string operator[](const std::string& key) const {
    auto it = values.find(key);
    if (it != values.end()) return it->second;
    ADD_FAILURE() << "the child reported no '" << key << "'; " << run.describe();
    return "<missing>";
  }
};

// CudaConfigChild.Report with exactly the given LAZYFUSE_* settings (LAZYFUSE_TEST_* and LAZYFUSE_CI_* stay).
Child run_child(const std::vector<std::string>& env) {
  std::vector<std::string> add = env;
  add.push_back(std::string(kChildVariable) + "=1");
  add.push_back("LAZYFUSE_TEST_REQUIRE_GPU=1"); // the parent has a GPU: the child must use it
  Child c;
  c.run = lazyfuse_test::run_self("CudaConfigChild.Report", add, lazyfuse_test::lazyfuse_settings(), 120);
  std::istringstream in(c.run.output);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("@@")) {
      const auto eq = line.find('=');
      c.values[line.substr(2, eq - 2)] = line.substr(eq + 1);
    }
  EXPECT_TRUE(c.run.ok()) << c.run.describe();
  return c;
}

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

// "none: every buffer is a separate cudaMalloc of exactly its size, freed at once"; off, 0 and false are none.
TEST(CudaConfig, PoolOffValuesFromTheEnvironmentAllocateEveryBufferSeparately) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  for (const char* v : {"none", "off", "0", "false"}) {
    const Child c = run_child({std::string("LAZYFUSE_POOL=") + v});
    EXPECT_EQ(c["pool.mode"], "pass-through") << v;
    EXPECT_EQ(c["pool.device_mallocs"], "2") << v;
    EXPECT_EQ(c["pool.device_frees"], "2") << v;
    EXPECT_EQ(c["sum"], "1000000.000000") << v;
  }
  const Child pooled = run_child({"LAZYFUSE_POOL=pool"});
  EXPECT_EQ(pooled["pool.mode"], "caching");
  EXPECT_EQ(pooled["pool.device_mallocs"], "1") << "the second buffer reuses the first's block";
  EXPECT_EQ(pooled["pool.device_frees"], "0");
}

// "An invalid value makes the pool's creation throw lazyfuse::Error naming the setting", from the environment too:
// the pool does not run without the limit the user set.
TEST(CudaConfig, InvalidMemoryLimitFromTheEnvironmentStopsThePool) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const Child c = run_child({"LAZYFUSE_GPU_MEMORY_LIMIT=12GB"});
  EXPECT_TRUE(contains(c["pool.error"], "LAZYFUSE_GPU_MEMORY_LIMIT: '12GB'")) << c["pool.error"];
  EXPECT_TRUE(contains(c["compute.error"], "LAZYFUSE_GPU_MEMORY_LIMIT")) << c["compute.error"];
  EXPECT_EQ(c.values.count("sum"), 0u);
  EXPECT_TRUE(contains(c.run.output, "[lazyfuse] warning: LAZYFUSE_GPU_MEMORY_LIMIT: invalid value '12GB'"))
      << c.run.output;
}

// "a percent of the device's memory (90%, 12.5%)".
TEST(CudaConfig, PercentLimitIsOfTheDevicesMemory) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const Child c = run_child({"LAZYFUSE_GPU_MEMORY_LIMIT=12.5%"});
  const auto total = std::stoull(c["device_memory"]);
  EXPECT_EQ(c["pool.limit"], std::to_string(static_cast<std::size_t>(static_cast<long double>(total) * 0.125L)));
  EXPECT_EQ(c["sum"], "1000000.000000");
}

// "When the limit is reached the pool frees its cached blocks and retries once, then throws OutOfMemoryError".
TEST(CudaConfig, ByteLimitFromTheEnvironmentIsEnforced) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const Child c = run_child({"LAZYFUSE_GPU_MEMORY_LIMIT=33554432"});
  EXPECT_EQ(c["pool.limit"], "33554432");
  EXPECT_TRUE(contains(c["oom"], "limit 32.00 MiB")) << c["oom"];
  EXPECT_EQ(c["sum"], "1000000.000000") << "work within the limit runs";
}

// "A directory that is not owned by the user or is writable by other users is used for neither loads nor stores
// (one warning naming the directory and its mode); the kernel cache runs in memory only and says so".
TEST(CudaConfig, CacheDirectoryWritableByOthersIsNeitherReadNorWritten) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::string tmpl = (fs::temp_directory_path() / "lazyfuse_cuda_config_XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path root = tmpl, own = root / "kernels", shared = root / "shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  // A structure no other test builds, so the kernel is not in memory already.
  const auto run = [] {
    const Array x = lazyfuse::linspace(-3.0, 3.0, 5000);
    return lazyfuse::sum(lazyfuse::tanh(x * 1.75) * lazyfuse::cos(x) - 0.25).item<double>();
  };
  double want = 0;
  for (int i = 0; i < 5000; ++i) {
    const double x = -3.0 + 6.0 * i / 4999.0;
    want += std::tanh(x * 1.75) * std::cos(x) - 0.25;
  }
  auto files = [](const fs::path& d) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  };

  // The entries (one per kernel), compiled into the user's own directory, then planted in the shared one.
  config::set("LAZYFUSE_CACHE_DIR", own.string());
  config::set("LAZYFUSE_CACHE_IN_MEMORY", "0");
  lazyfuse::clear_kernel_cache();
  EXPECT_NEAR(run(), want, 1e-9 * 5000);
  const auto entries = files(own);
  ASSERT_FALSE(entries.empty());
  for (const auto& name : entries) fs::copy_file(own / name, shared / name);

  lazyfuse::clear_kernel_cache();
  config::set("LAZYFUSE_CACHE_DIR", shared.string());
  config::set("LAZYFUSE_LOG", "cache");
  const auto s0 = lazyfuse::kernel_cache_stats();
  testing::internal::CaptureStderr();
  const double got = run();
  const std::string err = testing::internal::GetCapturedStderr();
  const auto s1 = lazyfuse::kernel_cache_stats();
  config::reset("LAZYFUSE_LOG");
  EXPECT_NEAR(got, want, 1e-9 * 5000);
  EXPECT_EQ(s1.disk_hits - s0.disk_hits, 0u) << "the planted entry was loaded";
  EXPECT_EQ(s1.misses - s0.misses, entries.size()) << "compiled instead";
  EXPECT_EQ(files(shared), entries) << "nothing written there";
  const auto warning = err.find("[lazyfuse] warning: kernel cache directory '" + shared.string() + "' not used");
  EXPECT_NE(warning, std::string::npos) << err;
  EXPECT_NE(err.find("mode 0777"), std::string::npos) << err;
  EXPECT_EQ(err.find("[lazyfuse] warning:", warning + 1), std::string::npos) << "one warning:\n" << err;
  EXPECT_NE(err.find("[lazyfuse:cache] kernel cache directory '" + shared.string() + "' not used"), std::string::npos)
      << err;

  // The control: in the user's own directory the same entries are disk hits.
  lazyfuse::clear_kernel_cache();
  config::set("LAZYFUSE_CACHE_DIR", own.string());
  const auto s2 = lazyfuse::kernel_cache_stats();
  EXPECT_NEAR(run(), want, 1e-9 * 5000);
  EXPECT_EQ(lazyfuse::kernel_cache_stats().disk_hits - s2.disk_hits, entries.size());

  config::reset("LAZYFUSE_CACHE_DIR");
  config::reset("LAZYFUSE_CACHE_IN_MEMORY");
  lazyfuse::clear_kernel_cache();
  std::error_code ec;
  fs::remove_all(root, ec);
}

} // namespace
