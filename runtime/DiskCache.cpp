#include "runtime/DiskCache.h"

#include "graph/Config.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <set>
#include <string_view>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lazyfuse::runtime {
namespace {

// Bumping this changes every key (it is hashed in), so old entries are simply never looked up again.
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::array<char, 8> kMagic = {'L', 'F', 'K', 'C', 'A', 'C', 'H', 'E'};
constexpr std::size_t kHeaderSize = 32;
// Temporary files of processes killed mid-write are removed once they are this old: a live writer finishes
// within milliseconds, so anything older is certainly abandoned.
constexpr auto kStaleTempAge = std::chrono::hours(1);
constexpr std::string_view kTempPrefix = ".tmp.";

// ---- SHA-256 (FIPS 180-4). Written here to keep the runtime free of a crypto dependency; only the key needs it,
// and a strong hash there matters because a collision would run the wrong kernel without any error.
class Sha256 {
public:
  void update(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    total_ += size;
    while (size > 0) {
      std::size_t n = std::min(size, block_.size() - used_);
      std::memcpy(block_.data() + used_, p, n);
      used_ += n;
      p += n;
      size -= n;
      if (used_ == block_.size()) {
        compress();
        used_ = 0;
      }
    }
  }
  std::array<unsigned char, 32> finish() {
    const std::uint64_t bits = total_ * 8;
    const unsigned char pad = 0x80;
    update(&pad, 1);
    const unsigned char zero = 0;
    while (used_ != 56) update(&zero, 1);
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
    update(len, 8);
    std::array<unsigned char, 32> out{};
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<unsigned char>(h_[i] >> (24 - 8 * j));
    return out;
  }

private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress() {
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = std::uint32_t(block_[4 * i]) << 24 | std::uint32_t(block_[4 * i + 1]) << 16 |
             std::uint32_t(block_[4 * i + 2]) << 8 | std::uint32_t(block_[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h_[0] += a;
    h_[1] += b;
    h_[2] += c;
    h_[3] += d;
    h_[4] += e;
    h_[5] += f;
    h_[6] += g;
    h_[7] += h;
  }

  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> block_{};
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};

// Fixed-width little-endian, so keys and headers are the same bytes on every host.
void put_u64(unsigned char* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint64_t get_u64(const char* in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

void hash_u64(Sha256& h, std::uint64_t v) {
  unsigned char b[8];
  put_u64(b, v);
  h.update(b, 8);
}
void hash_field(Sha256& h, std::string_view s) {
  hash_u64(h, s.size());
  h.update(s.data(), s.size());
}

std::uint64_t fnv1a64(std::span<const char> data) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : data) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Keys become file names, so anything that could leave the directory or hide a file is refused.
bool valid_key(const std::string& key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-'))
      return false;
  return true;
}

// One warning per directory per process, whatever goes wrong: a broken cache directory must not flood stderr
// with one line per kernel. The "cache" log channel says it at every compile that finds the cache off.
void warn_once(const std::string& dir, const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  {
    std::lock_guard lock(mutex);
    if (!warned.insert(dir).second) return;
  }
  config::warn("kernel cache directory '" + dir + "' not used: " + what + "; kernels are cached in memory only");
}

std::string errno_text(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closing can report a deferred write error, so writers close explicitly and check.
  int close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

private:
  int fd_;
};

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// A name for a temporary file, unique across threads and processes sharing the directory.
std::string temp_name(std::string_view stem) {
  static std::atomic<std::uint64_t> counter{0};
  char buf[96];
  std::snprintf(buf, sizeof buf, ".%ld.%zx.%llu", static_cast<long>(::getpid()),
                std::hash<std::thread::id>{}(std::this_thread::get_id()),
                static_cast<unsigned long long>(counter.fetch_add(1, std::memory_order_relaxed)));
  return std::string(kTempPrefix) + std::string(stem) + buf;
}

// Writes `parts` to a fresh temporary file in the directory `dir_fd` (`dir` names it in messages), then renames it
// to `name`: rename() is atomic within a directory, so a reader sees either no file or the whole file. No fsync: a
// torn file after a power loss fails the checksum and is recompiled, which is cheaper than syncing every kernel.
// Files are the user's alone (0600), like the directory. Returns "" or what went wrong.
std::string write_atomically(int dir_fd, const std::string& dir, const std::string& name, std::string_view stem,
                             std::initializer_list<std::span<const char>> parts) {
  const std::string tmp = temp_name(stem);
  const auto failed = [&](const std::string& what) {
    const int err = errno;
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return errno_text(what, err);
  };
  Fd fd(::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) return errno_text("cannot create " + dir + "/" + tmp, errno);
  for (auto part : parts)
    if (!write_all(fd.get(), part.data(), part.size())) return failed("cannot write " + dir + "/" + tmp);
  if (fd.close() != 0) return failed("cannot write " + dir + "/" + tmp);
  if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) return failed("cannot rename to " + dir + "/" + name);
  return {};
}

enum class ReadStatus { Ok, Missing, Corrupt };

// Reads and checks the entry `name` of the directory `dir_fd`. A symbolic link or a file of another user (only
// root could have put one there) is not read. A corrupt file is deleted only if it is still the file that was
// read: another process may have renamed a good entry into place meanwhile, and that one must stay.
ReadStatus read_entry(int dir_fd, const std::string& name, std::vector<char>* payload) {
  Fd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) return ReadStatus::Missing;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_uid != ::geteuid() && st.st_uid != 0))
    return ReadStatus::Missing;

  auto corrupt = [&] {
    struct stat now {};
    if (::fstatat(dir_fd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
        now.st_ino == st.st_ino)
      ::unlinkat(dir_fd, name.c_str(), 0);
    return ReadStatus::Corrupt;
  };

  const auto file_size = static_cast<std::size_t>(st.st_size);
  if (file_size < kHeaderSize) return corrupt();
  std::vector<char> bytes(file_size);
  std::size_t got = 0;
  while (got < file_size) {
    ssize_t r = ::read(fd.get(), bytes.data() + got, file_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  if (got != file_size) return corrupt();

  const char* h = bytes.data();
  const std::uint64_t version_word = get_u64(h + 8);
  const std::uint64_t size = get_u64(h + 16);
  const std::uint64_t checksum = get_u64(h + 24);
  if (std::memcmp(h, kMagic.data(), kMagic.size()) != 0 || version_word != kFormatVersion ||
      size != file_size - kHeaderSize)
    return corrupt();
  std::span<const char> body(bytes.data() + kHeaderSize, file_size - kHeaderSize);
  if (fnv1a64(body) != checksum) return corrupt();
  if (payload) payload->assign(body.begin(), body.end());
  return ReadStatus::Ok;
}

// Calls `each(name, stat)` for every entry of the directory `dir_fd` (not following symbolic links). Reads through
// a descriptor of its own, since a directory stream's position is shared by duplicated descriptors.
template <class F> void for_each_entry(int dir_fd, F&& each) {
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    // Entries may be deleted by another process while we list them; those are simply skipped.
    if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) each(name, st);
  }
  ::closedir(d);
}

// Leftovers of writers killed between create and rename; see kStaleTempAge.
void remove_stale_temps(int dir_fd) {
  const auto now = std::chrono::system_clock::now();
  for_each_entry(dir_fd, [&](std::string_view name, const struct stat& st) {
    if (!name.starts_with(kTempPrefix) || !S_ISREG(st.st_mode)) return;
    const auto mtime = std::chrono::system_clock::from_time_t(st.st_mtim.tv_sec);
    if (now - mtime > kStaleTempAge) ::unlinkat(dir_fd, std::string(name).c_str(), 0);
  });
}

// Creates the missing directories of `dir`, each private to the user (0700, less what the umask takes away).
// Returns "" or what went wrong. Existing ones are left as they are; the caller checks the last one.
std::string make_private_directories(const std::string& dir) {
  std::string path = dir.starts_with('/') ? "/" : "";
  for (std::size_t start = 0; start < dir.size();) {
    std::size_t end = dir.find('/', start);
    if (end == std::string::npos) end = dir.size();
    if (end > start) {
      if (!path.empty() && !path.ends_with('/')) path += '/';
      path += dir.substr(start, end - start);
      if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return errno_text("cannot create " + path, errno);
    }
    start = end + 1;
  }
  return {};
}

std::string mode_text(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

} // namespace

std::string kernel_cache_key(std::string_view source, const std::vector<std::string>& options, int nvrtc_version,
                             int arch, std::string_view lazyfuse_version) {
  Sha256 h;
  hash_field(h, "lazyfuse-kernel-cache-key");
  hash_u64(h, kFormatVersion);
  hash_field(h, source);
  hash_u64(h, options.size());
  for (const auto& o : options) hash_field(h, o);
  hash_u64(h, static_cast<std::uint64_t>(static_cast<std::int64_t>(nvrtc_version)));
  hash_u64(h, static_cast<std::uint64_t>(static_cast<std::int64_t>(arch)));
  hash_field(h, lazyfuse_version);
  const auto digest = h.finish();
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(32);
  for (std::size_t i = 0; i < 16; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string default_kernel_cache_dir() {
  return config::snapshot().cache_dir;
}

struct DiskCache::Directory {
  explicit Directory(int fd) : fd(fd) {}
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;
  ~Directory() { ::close(fd); }
  const int fd;
};

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  const auto refuse = [&](const std::string& why) {
    problem_ = why;
    warn_once(dir_, why);
    config::log("cache", "kernel cache directory '" + dir_ + "' not used: " + why + "; memory only");
  };
  if (std::string err = make_private_directories(dir_); !err.empty()) {
    refuse(err);
    return;
  }
  // A symbolic link is followed only if it is the user's (or root's): in a shared /tmp anyone can plant one.
  struct stat path_stat {};
  if (::lstat(dir_.c_str(), &path_stat) == 0 && S_ISLNK(path_stat.st_mode) && path_stat.st_uid != ::geteuid() &&
      path_stat.st_uid != 0) {
    refuse("it is a symbolic link owned by another user (uid " + std::to_string(path_stat.st_uid) + ")");
    return;
  }
  // Everything later goes through this descriptor, so the directory checked below is the one used, even if the
  // path is changed meanwhile.
  const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    refuse(errno_text("cannot open it", errno));
    return;
  }
  auto directory = std::make_shared<const Directory>(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    refuse(errno_text("cannot stat it", errno));
    return;
  }
  // A cached kernel is code that runs in this process: a directory that another user owns or may write to could
  // hold a kernel planted for us (the keys are predictable), so it is used for neither loads nor stores.
  if (st.st_uid != ::geteuid()) {
    refuse("it is owned by another user (uid " + std::to_string(st.st_uid) + ", mode " + mode_text(st.st_mode) +
           "), and a cached kernel is code that runs in this process; use a directory of your own");
    return;
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    refuse("it is writable by other users (mode " + mode_text(st.st_mode) +
           "), and a cached kernel is code that runs in this process; make it private (chmod go-w) or "
           "use another LAZYFUSE_CACHE_DIR");
    return;
  }
  // Probe with a real write: permission bits do not tell (root ignores them, read-only mounts do not show in them).
  const std::string probe = temp_name("probe");
  const char byte = 0;
  if (std::string err = write_atomically(fd, dir_, probe, "probe", {std::span<const char>(&byte, 1)}); !err.empty()) {
    refuse(err);
    return;
  }
  ::unlinkat(fd, probe.c_str(), 0);
  directory_ = std::move(directory);
  remove_stale_temps(fd);
}

std::optional<std::vector<char>> DiskCache::load(const std::string& key) const {
  if (!enabled() || !valid_key(key)) return std::nullopt;
  std::vector<char> payload;
  if (read_entry(directory_->fd, key + ".lfk", &payload) != ReadStatus::Ok) return std::nullopt;
  return payload;
}

void DiskCache::store(const std::string& key, std::span<const char> payload, std::string_view cuda_source) const {
  if (!enabled() || !valid_key(key)) return;
  const int fd = directory_->fd;
  const std::string name = key + ".lfk";
  if (read_entry(fd, name, nullptr) != ReadStatus::Ok) {
    unsigned char header[kHeaderSize] = {};
    std::memcpy(header, kMagic.data(), kMagic.size());
    put_u64(header + 8, kFormatVersion);
    put_u64(header + 16, payload.size());
    put_u64(header + 24, fnv1a64(payload));
    std::span<const char> head(reinterpret_cast<const char*>(header), kHeaderSize);
    if (std::string err = write_atomically(fd, dir_, name, key, {head, payload}); !err.empty()) {
      warn_once(dir_, err);
      return;
    }
  }
  if (!cuda_source.empty()) {
    const std::string cu = key + ".cu";
    struct stat st {};
    if (::fstatat(fd, cu.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (std::string err = write_atomically(fd, dir_, cu, key, {std::span<const char>(cuda_source)}); !err.empty())
        warn_once(dir_, err);
    }
  }
}

DiskCache::Info DiskCache::info() const {
  Info info;
  if (!enabled()) return info;
  for_each_entry(directory_->fd, [&](std::string_view name, const struct stat& st) {
    if (name.starts_with('.') || !name.ends_with(".lfk") || !S_ISREG(st.st_mode)) return;
    ++info.entries;
    info.bytes += static_cast<std::size_t>(st.st_size);
  });
  return info;
}

} // namespace lazyfuse::runtime
