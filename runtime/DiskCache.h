// The on-disk kernel cache: compiled images keyed by everything that could change them, so that a second run of
// a program skips NVRTC. Several threads and several processes may share one directory; every entry is checked
// before it is used, since a wrong cubin would silently give wrong results.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lazyfuse::runtime {

/// Key of a compiled kernel: 32 lowercase hex chars, the first 128 bits of a SHA-256 of the full source, every
/// compile option (in order), the NVRTC version, the target architecture, the lazyfuse version string and the
/// cache's entry format. Each input is length-prefixed, so no two different inputs hash the same bytes.
/// Deterministic across processes, runs and hosts.
std::string kernel_cache_key(std::string_view source, const std::vector<std::string>& options, int nvrtc_version,
                             int arch, std::string_view lazyfuse_version);

/// Default directory: $LAZYFUSE_CACHE_DIR if set and non-empty, else $XDG_CACHE_HOME/lazyfuse/kernels (if set
/// and non-empty), else $HOME/.cache/lazyfuse/kernels; "" (no disk cache) when none of them is set.
std::string default_kernel_cache_dir();

/// A directory of compiled kernels. All methods are const and keep no mutable state, so one DiskCache may be used
/// from many threads at once, and many processes may share its directory. Copies share the open directory.
///
/// A cached kernel is code that runs in the user's process, so the directory must be the user's alone: one that is
/// owned by another user, or writable by the group or others (mode & 022), is used for neither loads nor stores,
/// with one warning naming it and its mode. The directory itself is checked, through the descriptor that every
/// later operation uses, so a path changed after the check cannot redirect them; a symbolic link as the directory
/// is followed only if it is the user's or root's; entries that are symbolic links, or files of another user, are
/// not read. Directories it creates are private (0700), entries 0600.
class DiskCache {
public:
  /// Creates the directory (and missing parents, each 0700) if needed. If it cannot be created or written, or is
  /// not private to the user, the cache is off (enabled() false, problem() says why) and ONE warning line goes to
  /// stderr per directory per process (also logged on the "cache" channel). `dir` empty: disabled silently.
  explicit DiskCache(std::string dir);

  bool enabled() const { return directory_ != nullptr; }
  const std::string& dir() const { return dir_; }
  /// Why the directory is not used; "" when enabled() or when `dir` is empty.
  const std::string& problem() const { return problem_; }

  /// The entry for `key`, or nullopt (also when disabled or `key` is not a plain file name). An entry is one file
  /// `<key>.lfk`: a 32-byte header (magic, format version, payload size, 64-bit FNV-1a of the payload) then the
  /// payload. A corrupt or truncated entry is deleted and nullopt returned, never loaded.
  std::optional<std::vector<char>> load(const std::string& key) const;

  /// Writes the entry to a unique temporary file in the same directory (pid + thread id + counter in its name),
  /// then rename()s it into place, so readers never see a partial file and several processes sharing the
  /// directory are safe. If a valid entry for the key already exists, the entry is not rewritten (so a second
  /// identical run adds no file). When `cuda_source` is non-empty, also writes `<key>.cu` beside it (same
  /// temp+rename) unless that file already exists. I/O errors degrade to a warning (one per directory per
  /// process), never throw.
  void store(const std::string& key, std::span<const char> payload, std::string_view cuda_source = {}) const;

  struct Info {
    std::size_t entries = 0;
    std::size_t bytes = 0;
  };
  /// Counts the .lfk entries and their total size in bytes (headers included).
  Info info() const;

private:
  struct Directory; // the open directory (closed with the last copy)

  std::string dir_;
  std::string problem_;
  std::shared_ptr<const Directory> directory_;
};

} // namespace lazyfuse::runtime
