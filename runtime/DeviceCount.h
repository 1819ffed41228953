// NumPy's bincount (without weights) on the device (runtime/DeviceCount.cu, compiled ahead of time by nvcc with the
// CUB kernels): a kernel of lazyfuse's own, not cub::DeviceHistogram, whose shared-memory counters stop at 256 bins
// (docs/design.md, "Counting"). This header is plain C++ (no CUDA language) so that it can be included anywhere.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace lazyfuse::runtime::device_count {

/// counts[b] = the number of elements of x equal to b, for b in [0, bins): x holds `n` integers of `width` bytes (1,
/// 2, 4 or 8; bool counts as an unsigned byte), signed or not; `counts` holds `bins` int64. Elements outside [0, bins)
/// are not counted. Device pointers.
struct BinCount {
  int width = 4;
  bool is_signed = false;
  const void* x = nullptr;
  std::int64_t n = 0;
  std::int64_t bins = 0;
  std::int64_t* counts = nullptr;
  /// Optional: two order keys of x's range, found in the same pass: range[0] = the largest ~key(e), range[1] = the
  /// largest key(e) over the elements e as int64, key(v) = v ^ 2^63 (an unsigned number in v's order), so that a
  /// zeroed start is below every key. decode_smallest and decode_largest read them.
  std::uint64_t* range = nullptr;
};

/// BinCount::range's keys of the smallest and largest element, written by the host (the CPU backend's count keeps the
/// device's layout, so that one decoding serves both).
inline void encode_range(std::int64_t smallest, std::int64_t largest, std::uint64_t* range) {
  range[0] = ~(std::uint64_t(smallest) ^ (std::uint64_t(1) << 63));
  range[1] = std::uint64_t(largest) ^ (std::uint64_t(1) << 63);
}

/// The smallest and largest element from BinCount::range (uint64 elements above 2^63 - 1 wrap to negative numbers).
inline std::int64_t decode_smallest(const std::uint64_t* range) {
  return std::int64_t(~range[0] ^ (std::uint64_t(1) << 63));
}
inline std::int64_t decode_largest(const std::uint64_t* range) {
  return std::int64_t(range[1] ^ (std::uint64_t(1) << 63));
}

/// What a run did, for the counters and the logs.
struct Report {
  int kernels = 0;   ///< launches (one per 2^31 elements), besides the clearing of `counts`
  std::string steps; ///< e.g. "shared counters, 264 blocks of 1024 threads, 16-byte loads"
};

/// Queues the count on `stream`: `counts` (and `range`) cleared, then each block counts its part in shared memory (when
/// `bins` counters of 4 bytes fit in a block's shared memory) or straight into `counts` with global atomics (when they
/// do not), and adds its counts into `counts`. Integer atomics: the result is exact, the same on every run. Needs n >=
/// 1 and bins >= 1. Throws BackendError when CUDA fails.
Report run(const BinCount& c, cudaStream_t stream);

} // namespace lazyfuse::runtime::device_count
