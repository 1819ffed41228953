// NumPy's bincount on the device (runtime/DeviceCount.cu, compiled ahead of time by nvcc with the CUB kernels): counts
// by a kernel of lazyfuse's own, not cub::DeviceHistogram, whose shared-memory counters stop at 256 bins
// (docs/design.md, "Counting"); sums of weights by integer atomics, exact or in fixed point, or (float64) by CUB's
// radix sort and reduce-by-key. This header is plain C++ (no CUDA language) so that it can be included anywhere.
#pragma once

#include "runtime/CubSort.h"

#include <lazyfuse/dtype.hpp>

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
  /// zeroed start is below every key. decode_smallest and decode_largest read them. A third word after them counts
  /// the blocks that are done (kRangeWords in all, cleared with the counts when they follow them).
  std::uint64_t* range = nullptr;
  /// Optional, with `range`: three words of host memory every device maps (runtime/HostSlots.h). The last block of
  /// the last launch to finish its elements copies range[0] and range[1] into the first two, then writes 1 into the
  /// third, so that the host polls that word and reads the range with no copy queued; the blocks may still be adding
  /// their counters then.
  std::uint64_t* range_to_host = nullptr;
};

/// The words of BinCount::range.
inline constexpr int kRangeWords = 3;

/// sums[b] = the sum of weights[i] over the elements x[i] equal to b, for b in [0, bins) (the additive identity where
/// none is: 0, or -0.0 for floats; graph/Count.h): x as in BinCount, `weights` n values of `weight_type`
/// (weighted_bincount_type of graph/Count.h), `sums` bins values of that type. The same bits on every run: float16,
/// bfloat16 and float32 as fixed-point sums (runtime/FixedPointSum.h: the CPU backend's bits too), integers by int64
/// atomics (exact, wrapping), float64 stably sorted by bin (so in the order of x) and combined by
/// cub::DeviceReduce::ReduceByKey, whose tiles and scan tree depend only on n. Device pointers.
struct WeightedBinCount {
  int width = 4;
  bool is_signed = false;
  const void* x = nullptr;
  std::int64_t n = 0;
  std::int64_t bins = 0;
  DType weight_type = DType::Float64;
  const void* weights = nullptr;
  void* sums = nullptr;
};

/// Device memory for one weighted count, as for a sort (runtime/CubSort.h).
using cub_sort::Scratch;

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
  int kernels = 0;       ///< lazyfuse's own launches (a count: one per 2^31 elements), besides clearing the output
  int library_calls = 0; ///< CUB calls (each launches kernels of CUB's choosing)
  std::string steps;     ///< e.g. "shared counters, 264 blocks of 1024 threads, 16-byte loads"
};

/// Queues the count on `stream`: `counts` (and `range`) cleared, then each block counts its part in shared memory (when
/// `bins` counters of 4 bytes fit in a block's shared memory) or straight into `counts` with global atomics (when they
/// do not), and adds its counts into `counts`. Integer atomics: the result is exact, the same on every run. Needs n >=
/// 1 and bins >= 1. Throws BackendError when CUDA fails.
Report run(const BinCount& c, cudaStream_t stream);

/// Queues the weighted count on `stream`. Float16, bfloat16, float32: three kernels (each bin's scale by atomicMax; the
/// values' terms by int64 atomicAdd; each sum rounded once) over 12 bytes of scratch a bin; with 4-byte x and more than
/// 2^18 bins, bucketed instead: cub::DeviceRadixSort::SortPairs of (x, weight) over the bins' top bits, then a block
/// per bucket of 2^11 to 2^14 bins summing in shared memory, and three kernels for the buckets written far more than
/// the average (the same bits either way). Integers: one kernel of
/// int64 atomics into the cleared `sums`. Float64: a key per element (its bin, or `bins` for one outside [0, bins))
/// and `sums` set to -0.0, in one kernel; cub::DeviceRadixSort::SortPairs of (key, weight) over the key's bits;
/// cub::DeviceReduce::ReduceByKey over the sorted pairs; each bin's sum written into `sums`. Needs n >= 1, 1 <= bins <
/// 2^32 - 1 and a weight type of weighted_bincount_type. Throws BackendError when CUDA fails.
Report run_weighted(const WeightedBinCount& c, const Scratch& scratch, cudaStream_t stream);

} // namespace lazyfuse::runtime::device_count
