#include "runtime/DiskCache.h"
#include <lazyfuse/config.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using lazyfuse::runtime::DiskCache;
using lazyfuse::runtime::kernel_cache_key;

namespace {

// Each test gets its own directory, so tests never see each other's entries (or warnings, which are once per
// directory per process).
class DiskCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = "/tmp/lazyfuse_disk_cache_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string dir() const { return (root_ / "kernels").string(); }

  static std::vector<std::string> files(const std::string& d) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(d)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  static std::vector<char> bytes(std::string_view s) { return {s.begin(), s.end()}; }

  fs::path root_;
};

std::string key_of(int i) {
  return kernel_cache_key("kernel " + std::to_string(i), {"-arch=sm_90"}, 13000, 90, "t");
}

// Sizes vary so that some entries span many write() calls and some are tiny.
std::vector<char> payload_of(int i) {
  std::vector<char> p(static_cast<std::size_t>(1 + (i * 7919) % 20000));
  for (std::size_t j = 0; j < p.size(); ++j) p[j] = static_cast<char>((j * 31 + static_cast<std::size_t>(i)) & 0xff);
  return p;
}

class ScopedEnv {
public:
  explicit ScopedEnv(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) {
      had_ = true;
      old_ = v;
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

} // namespace

TEST(KernelCacheKey, IsDeterministicHex) {
  const std::vector<std::string> opts = {"--std=c++17", "-arch=sm_90", "--fmad=true", "-default-device"};
  const std::string k = kernel_cache_key("src", opts, 13000, 90, "0.1.0");
  EXPECT_EQ(k, kernel_cache_key("src", opts, 13000, 90, "0.1.0"));
  ASSERT_EQ(k.size(), 32u);
  for (char c : k) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << k;
  // Pinned, so that a change to the key derivation (which orphans every user's cache) is a deliberate one.
  EXPECT_EQ(k, "b06efe3d48e14cf8a96d959e776f39ab");
  // Many SHA-256 blocks, no options, a negative int: checked against Python's hashlib over the same bytes.
  EXPECT_EQ(kernel_cache_key(std::string(1000, 'a'), {}, -1, 0, ""), "9cd043d0d20673152ab08c353a614122");
}

TEST(KernelCacheKey, ChangesWithEveryInput) {
  const std::vector<std::string> opts = {"--std=c++17", "-arch=sm_90", "--fmad=true"};
  const std::string base = kernel_cache_key("src", opts, 13000, 90, "0.1.0");
  std::set<std::string> keys = {base};
  auto add = [&](const std::string& k) { EXPECT_TRUE(keys.insert(k).second) << "duplicate key " << k; };
  add(kernel_cache_key("src ", opts, 13000, 90, "0.1.0"));
  add(kernel_cache_key("", opts, 13000, 90, "0.1.0"));
  add(kernel_cache_key("src", {"--std=c++17", "-arch=sm_90", "--fmad=false"}, 13000, 90, "0.1.0"));
  add(kernel_cache_key("src", {"--std=c++17", "-arch=sm_90"}, 13000, 90, "0.1.0"));
  add(kernel_cache_key("src", {"--std=c++17", "-arch=sm_90", "--fmad=true", "-G"}, 13000, 90, "0.1.0"));
  add(kernel_cache_key("src", {"-arch=sm_90", "--std=c++17", "--fmad=true"}, 13000, 90, "0.1.0"));
  add(kernel_cache_key("src", opts, 12080, 90, "0.1.0"));
  add(kernel_cache_key("src", opts, 13000, 80, "0.1.0"));
  add(kernel_cache_key("src", opts, 13000, 90, "0.1.1"));
  // Length prefixes keep field boundaries: moving bytes between fields gives another key.
  add(kernel_cache_key("src", {"ab", "c"}, 13000, 90, "0.1.0"));
  add(kernel_cache_key("src", {"a", "bc"}, 13000, 90, "0.1.0"));
  add(kernel_cache_key("srcab", {"c"}, 13000, 90, "0.1.0"));
}

// The settings are read once; a C++ override (config::set) rebuilds them, which re-reads XDG_CACHE_HOME and HOME
// for the fallback directory.
TEST(KernelCacheKey, DefaultDirectoryFollowsSettings) {
  {
    ScopedEnv b("XDG_CACHE_HOME"), c("HOME");
    ::setenv("XDG_CACHE_HOME", "/x/xdg", 1);
    ::setenv("HOME", "/x/home", 1);
    lazyfuse::config::set("LAZYFUSE_CACHE_DIR", "/x/lf");
    EXPECT_EQ(lazyfuse::runtime::default_kernel_cache_dir(), "/x/lf");
    lazyfuse::config::set("LAZYFUSE_CACHE_DIR", "");
    EXPECT_EQ(lazyfuse::runtime::default_kernel_cache_dir(), "/x/xdg/lazyfuse/kernels");
    ::unsetenv("XDG_CACHE_HOME");
    lazyfuse::config::set("LAZYFUSE_CACHE_DIR", "");
    EXPECT_EQ(lazyfuse::runtime::default_kernel_cache_dir(), "/x/home/.cache/lazyfuse/kernels");
    ::unsetenv("HOME");
    lazyfuse::config::set("LAZYFUSE_CACHE_DIR", "");
    EXPECT_EQ(lazyfuse::runtime::default_kernel_cache_dir(), "");
  }
  lazyfuse::config::reset("LAZYFUSE_CACHE_DIR"); // with HOME back
}

TEST_F(DiskCacheTest, CreatesDirectoryAndRoundTrips) {
  DiskCache cache(dir());
  ASSERT_TRUE(cache.enabled());
  EXPECT_EQ(cache.dir(), dir());
  EXPECT_TRUE(fs::is_directory(dir()));
  EXPECT_TRUE(files(dir()).empty()) << "the write probe must not stay behind";

  const std::string key = key_of(1);
  EXPECT_FALSE(cache.load(key).has_value());
  std::vector<char> payload = {'\x7f', 'E', 'L', 'F', '\0', '\1', '\xff', 'x'};
  cache.store(key, payload);
  auto got = cache.load(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, payload);
  EXPECT_EQ(files(dir()), std::vector<std::string>{key + ".lfk"});

  auto info = cache.info();
  EXPECT_EQ(info.entries, 1u);
  EXPECT_EQ(info.bytes, fs::file_size(fs::path(dir()) / (key + ".lfk")));
  EXPECT_GT(info.bytes, payload.size());

  // A second DiskCache on the same directory (as a second process would) sees the entry.
  DiskCache again(dir());
  ASSERT_TRUE(again.load(key).has_value());
  EXPECT_EQ(*again.load(key), payload);
}

TEST_F(DiskCacheTest, EmptyPayloadRoundTrips) {
  DiskCache cache(dir());
  cache.store(key_of(2), {});
  auto got = cache.load(key_of(2));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->empty());
}

TEST_F(DiskCacheTest, SecondStoreAddsNoFile) {
  DiskCache cache(dir());
  const std::string key = key_of(3);
  const auto payload = payload_of(3);
  cache.store(key, payload);
  const auto before = files(dir());
  const auto path = fs::path(dir()) / (key + ".lfk");
  struct stat st1 {};
  ASSERT_EQ(::stat(path.c_str(), &st1), 0);
  cache.store(key, payload);
  struct stat st2 {};
  ASSERT_EQ(::stat(path.c_str(), &st2), 0);
  EXPECT_EQ(files(dir()), before);
  EXPECT_EQ(st1.st_ino, st2.st_ino) << "a valid entry must not be rewritten";
  EXPECT_EQ(cache.info().entries, 1u);
}

TEST_F(DiskCacheTest, CorruptByteIsDetectedAndDeleted) {
  DiskCache cache(dir());
  const std::string key = key_of(4);
  cache.store(key, payload_of(4));
  const auto path = fs::path(dir()) / (key + ".lfk");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(40);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(40);
    f.write(&c, 1);
  }
  EXPECT_FALSE(cache.load(key).has_value());
  EXPECT_FALSE(fs::exists(path));
  // The cache heals: the next store writes a good entry again.
  cache.store(key, payload_of(4));
  ASSERT_TRUE(cache.load(key).has_value());
  EXPECT_EQ(*cache.load(key), payload_of(4));
}

TEST_F(DiskCacheTest, BadMagicIsDetectedAndDeleted) {
  DiskCache cache(dir());
  const std::string key = key_of(5);
  cache.store(key, payload_of(5));
  const auto path = fs::path(dir()) / (key + ".lfk");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(0);
    f.write("X", 1);
  }
  EXPECT_FALSE(cache.load(key).has_value());
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(DiskCacheTest, TruncatedFileIsDetectedAndDeleted) {
  DiskCache cache(dir());
  const auto path_of = [&](const std::string& k) { return fs::path(dir()) / (k + ".lfk"); };
  // Cut inside the payload, inside the header, and to nothing.
  const std::string k1 = key_of(6), k2 = key_of(7), k3 = key_of(8);
  for (const auto& k : {k1, k2, k3}) cache.store(k, payload_of(6));
  fs::resize_file(path_of(k1), fs::file_size(path_of(k1)) - 3);
  fs::resize_file(path_of(k2), 10);
  fs::resize_file(path_of(k3), 0);
  for (const auto& k : {k1, k2, k3}) {
    EXPECT_FALSE(cache.load(k).has_value());
    EXPECT_FALSE(fs::exists(path_of(k)));
  }
  EXPECT_EQ(cache.info().entries, 0u);
}

TEST_F(DiskCacheTest, InvalidExistingEntryIsReplacedByStore) {
  DiskCache cache(dir());
  const std::string key = key_of(9);
  { std::ofstream(fs::path(dir()) / (key + ".lfk")) << "garbage"; }
  cache.store(key, payload_of(9));
  ASSERT_TRUE(cache.load(key).has_value());
  EXPECT_EQ(*cache.load(key), payload_of(9));
}

TEST_F(DiskCacheTest, UnwritableDirectoryDisablesWithOneWarning) {
  const std::string file = (root_ / "regular_file").string();
  { std::ofstream(file) << "x"; }
  const std::string bad = file + "/kernels";
  testing::internal::CaptureStderr();
  DiskCache cache(bad);
  DiskCache again(bad);
  cache.store(key_of(10), payload_of(10), "source");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(again.enabled());
  EXPECT_FALSE(cache.load(key_of(10)).has_value());
  EXPECT_EQ(cache.info().entries, 0u);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find(bad), std::string::npos) << err;
  EXPECT_TRUE(fs::is_regular_file(file));
}

TEST_F(DiskCacheTest, EmptyDirectoryIsSilentlyDisabled) {
  testing::internal::CaptureStderr();
  DiskCache cache("");
  cache.store(key_of(11), payload_of(11));
  EXPECT_FALSE(cache.load(key_of(11)).has_value());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.info().entries, 0u);
}

TEST_F(DiskCacheTest, KeysThatAreNotPlainNamesAreRefused) {
  DiskCache cache(dir());
  for (std::string key : {"../escape", "a/b", "", ".hidden", "x y"}) {
    cache.store(key, payload_of(12));
    EXPECT_FALSE(cache.load(key).has_value()) << key;
  }
  EXPECT_TRUE(files(dir()).empty());
  EXPECT_FALSE(fs::exists(root_ / "escape.lfk"));
}

TEST_F(DiskCacheTest, SavesCudaSourceWhenAsked) {
  DiskCache cache(dir());
  const std::string with = key_of(13), without = key_of(14);
  const std::string src = "extern \"C\" __global__ void k() {}\n";
  cache.store(with, payload_of(13), src);
  cache.store(without, payload_of(14));
  std::ifstream in(fs::path(dir()) / (with + ".cu"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, src);
  EXPECT_FALSE(fs::exists(fs::path(dir()) / (without + ".cu")));
  EXPECT_EQ(cache.info().entries, 2u) << ".cu files are not entries";
  // A later run that asks for the source gets it even though the entry itself already exists.
  cache.store(without, payload_of(14), src);
  EXPECT_TRUE(fs::exists(fs::path(dir()) / (without + ".cu")));
}

TEST_F(DiskCacheTest, StaleTempFilesAreRemoved) {
  fs::create_directories(dir());
  const auto stale = fs::path(dir()) / ".tmp.deadbeef.1.2.3";
  const auto fresh = fs::path(dir()) / ".tmp.deadbeef.4.5.6";
  { std::ofstream(stale) << "partial"; }
  { std::ofstream(fresh) << "partial"; }
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  DiskCache cache(dir());
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh)) << "a live writer's temp file must stay";
}

TEST_F(DiskCacheTest, ManyThreadsShareOneCache) {
  DiskCache cache(dir());
  constexpr int kKeys = 64;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 3; ++r)
        for (int i = 0; i < kKeys; ++i) {
          const int k = (i + t * 7) % kKeys;
          if (auto got = cache.load(key_of(k)); got && *got != payload_of(k)) ++bad;
          cache.store(key_of(k), payload_of(k));
        }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(cache.info().entries, static_cast<std::size_t>(kKeys));
  for (const auto& name : files(dir())) EXPECT_FALSE(name.starts_with(".")) << "temp file left: " << name;
}

TEST_F(DiskCacheTest, ProcessesStoringAtOnceLeaveOnlyValidEntries) {
  constexpr int kProcs = 4, kKeys = 300;
  DiskCache parent(dir());
  ASSERT_TRUE(parent.enabled());
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // _exit: the child must not run gtest's or the parent's exit handlers.
      DiskCache cache(dir());
      int wrong = 0;
      for (int r = 0; r < 2; ++r)
        for (int i = 0; i < kKeys; ++i) {
          const int k = (i * (p + 1) + r) % kKeys; // every process walks the keys in its own order
          if (auto got = cache.load(key_of(k)); got && *got != payload_of(k)) ++wrong;
          cache.store(key_of(k), payload_of(k), "// source " + std::to_string(k));
        }
      ::_exit(cache.enabled() && wrong == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child saw a bad entry";
  }
  std::size_t lfk = 0, cu = 0;
  for (const auto& name : files(dir())) {
    EXPECT_FALSE(name.starts_with(".")) << "temp file left: " << name;
    lfk += name.ends_with(".lfk");
    cu += name.ends_with(".cu");
  }
  EXPECT_EQ(lfk, static_cast<std::size_t>(kKeys));
  EXPECT_EQ(cu, static_cast<std::size_t>(kKeys));
  for (int k = 0; k < kKeys; ++k) {
    auto got = parent.load(key_of(k));
    ASSERT_TRUE(got.has_value()) << k;
    EXPECT_EQ(*got, payload_of(k)) << k;
  }
  EXPECT_EQ(parent.info().entries, static_cast<std::size_t>(kKeys));
}
