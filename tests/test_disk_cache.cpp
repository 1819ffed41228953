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
    // The settings are read (and any warning about the environment printed) now, not inside a test's
    // CaptureStderr, where such a warning would be counted as the cache's.
    (void)lazyfuse::config::all();
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

// ---- a directory others could plant kernels in is not used -------------------------------------------------------
// A cached kernel is code that runs in the user's process and its key is predictable, so a directory another user
// owns or may write to is used for neither loads nor stores (docs/configuration.md, LAZYFUSE_CACHE_DIR).

namespace {

std::string mode_of(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return "missing";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return buf;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

TEST_F(DiskCacheTest, DirectoryWritableByOthersIsNeitherReadNorWritten) {
  // A valid entry, made where it is allowed, then planted in each shared directory.
  DiskCache own(dir());
  ASSERT_TRUE(own.enabled());
  const std::string key = key_of(20);
  own.store(key, payload_of(20));
  const std::string planted = read_all(fs::path(dir()) / (key + ".lfk"));
  ASSERT_FALSE(planted.empty());

  for (const mode_t mode : {mode_t(0777), mode_t(01777), mode_t(0770), mode_t(0720), mode_t(0702)}) {
    const fs::path shared = root_ / ("shared_" + std::to_string(mode));
    ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(shared.c_str(), mode), 0);
    { std::ofstream(shared / (key + ".lfk"), std::ios::binary) << planted; }
    const fs::path stale = shared / ".tmp.stale.1.2.3";
    { std::ofstream(stale) << "partial"; }
    fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
    const auto before = files(shared.string());

    testing::internal::CaptureStderr();
    DiskCache cache(shared.string());
    DiskCache again(shared.string());
    const auto loaded = cache.load(key);
    cache.store(key_of(21), payload_of(21), "// source");
    again.store(key, payload_of(20));
    const std::string err = testing::internal::GetCapturedStderr();

    const std::string m = mode_of(shared);
    EXPECT_FALSE(cache.enabled()) << m;
    EXPECT_FALSE(loaded.has_value()) << m << ": a planted entry was loaded";
    EXPECT_EQ(files(shared.string()), before) << m << ": nothing is written, created or removed";
    EXPECT_EQ(read_all(shared / (key + ".lfk")), planted) << m;
    EXPECT_EQ(cache.info().entries, 0u);
    EXPECT_NE(cache.problem().find("writable by other users (mode " + m + ")"), std::string::npos) << cache.problem();
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one warning per directory:\n" << err;
    EXPECT_NE(err.find(shared.string()), std::string::npos) << err;
    EXPECT_NE(err.find("mode " + m), std::string::npos) << err;
    EXPECT_NE(err.find("memory only"), std::string::npos) << err;
    EXPECT_EQ(mode_of(shared), m) << "lazyfuse does not change the mode of a directory it did not create";
  }
}

TEST_F(DiskCacheTest, DirectoryOfAnotherUserIsNotUsed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to give a directory to another user";
  const fs::path theirs = root_ / "theirs";
  ASSERT_EQ(::mkdir(theirs.c_str(), 0755), 0);
  ASSERT_EQ(::chown(theirs.c_str(), 12345, 12345), 0);
  testing::internal::CaptureStderr();
  DiskCache cache(theirs.string());
  cache.store(key_of(22), payload_of(22));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.enabled());
  EXPECT_TRUE(files(theirs.string()).empty()) << "root could write there, but must not";
  EXPECT_NE(cache.problem().find("owned by another user (uid 12345, mode 0755)"), std::string::npos) << cache.problem();
  EXPECT_NE(err.find(theirs.string()), std::string::npos) << err;
  EXPECT_NE(err.find("mode 0755"), std::string::npos) << err;
}

TEST_F(DiskCacheTest, CreatedDirectoriesAndEntriesArePrivate) {
  const mode_t old_mask = ::umask(0); // even with no umask at all
  const fs::path deep = root_ / "a" / "b" / "kernels";
  DiskCache cache(deep.string());
  cache.store(key_of(23), payload_of(23), "// source");
  ::umask(old_mask);
  ASSERT_TRUE(cache.enabled()) << cache.problem();
  for (const fs::path& d : {root_ / "a", root_ / "a" / "b", deep}) EXPECT_EQ(mode_of(d), "0700") << d;
  EXPECT_EQ(mode_of(deep / (key_of(23) + ".lfk")), "0600");
  EXPECT_EQ(mode_of(deep / (key_of(23) + ".cu")), "0600");

  // An existing directory of the user's that others may read but not write is fine, and stays as it is.
  const fs::path readable = root_ / "readable";
  ASSERT_EQ(::mkdir(readable.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(readable.c_str(), 0755), 0);
  DiskCache shared_read(readable.string());
  EXPECT_TRUE(shared_read.enabled()) << shared_read.problem();
  EXPECT_EQ(mode_of(readable), "0755");
}

TEST_F(DiskCacheTest, SymbolicLinksAreFollowedOnlyWhereSafe) {
  // The user's own link to a private directory: used, and the entries land in the directory.
  fs::create_directories(dir());
  const fs::path link = root_ / "link";
  fs::create_directory_symlink(dir(), link);
  DiskCache via_link(link.string());
  ASSERT_TRUE(via_link.enabled()) << via_link.problem();
  via_link.store(key_of(24), payload_of(24));
  EXPECT_TRUE(fs::exists(fs::path(dir()) / (key_of(24) + ".lfk")));

  // A link to a directory others may write to: the directory is what is checked.
  const fs::path open_dir = root_ / "open";
  ASSERT_EQ(::mkdir(open_dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(open_dir.c_str(), 0777), 0);
  const fs::path open_link = root_ / "open_link";
  fs::create_directory_symlink(open_dir, open_link);
  testing::internal::CaptureStderr();
  DiskCache via_open_link(open_link.string());
  via_open_link.store(key_of(25), payload_of(25));
  (void)testing::internal::GetCapturedStderr();
  EXPECT_FALSE(via_open_link.enabled());
  EXPECT_TRUE(files(open_dir.string()).empty());

  // An entry that is a symbolic link (to a valid entry elsewhere) is not read, and what it points to stays.
  DiskCache cache(dir());
  const fs::path elsewhere = root_ / "elsewhere.lfk";
  fs::copy_file(fs::path(dir()) / (key_of(24) + ".lfk"), elsewhere);
  fs::create_symlink(elsewhere, fs::path(dir()) / (key_of(26) + ".lfk"));
  EXPECT_FALSE(cache.load(key_of(26)).has_value());
  EXPECT_TRUE(fs::exists(elsewhere));

  // A link that another user planted (in a shared /tmp, say) is not followed, even to a good directory.
  if (::geteuid() == 0) {
    const fs::path planted = root_ / "planted";
    fs::create_directory_symlink(dir(), planted);
    ASSERT_EQ(::lchown(planted.c_str(), 12345, 12345), 0);
    testing::internal::CaptureStderr();
    DiskCache via_planted(planted.string());
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_FALSE(via_planted.enabled());
    EXPECT_NE(via_planted.problem().find("symbolic link owned by another user (uid 12345)"), std::string::npos)
        << via_planted.problem();
    EXPECT_NE(err.find(planted.string()), std::string::npos) << err;
  }
}

// The directory is checked once and then held open: replacing the path with a directory others may write to
// afterwards does not redirect loads or stores there.
TEST_F(DiskCacheTest, TheCheckedDirectoryIsTheOneUsed) {
  DiskCache cache(dir());
  ASSERT_TRUE(cache.enabled());
  const fs::path moved = root_ / "moved";
  fs::rename(dir(), moved);
  ASSERT_EQ(::mkdir(dir().c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir().c_str(), 0777), 0);
  { std::ofstream(fs::path(dir()) / (key_of(27) + ".lfk")) << "planted"; }
  EXPECT_FALSE(cache.load(key_of(27)).has_value());
  cache.store(key_of(28), payload_of(28));
  EXPECT_EQ(files(dir()), std::vector<std::string>{key_of(27) + ".lfk"});
  EXPECT_TRUE(fs::exists(moved / (key_of(28) + ".lfk")));
  ASSERT_TRUE(cache.load(key_of(28)).has_value());
}
