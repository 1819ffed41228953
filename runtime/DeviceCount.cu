// The device bincount of runtime/DeviceCount.h, compiled by nvcc with the CUB kernels (runtime/CMakeLists.txt).
#include "runtime/DeviceCount.h"

#include "runtime/CudaApi.h"
#include "runtime/FixedPointSum.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/limits>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

namespace lazyfuse::runtime::device_count {

namespace {

constexpr int kThreads = 1024;
// Elements per launch: a block's 32-bit shared counters cannot overflow, whatever the grid.
constexpr std::int64_t kMaxChunk = std::int64_t(1) << 31;
// Vector loads in flight per thread before their counts (latency hiding for a stream of loads).
constexpr int kLoadsInFlight = 4;

// A negative v converts to 2^64 + v: above any number of bins, not counted.
template <class U, bool kShared>
__device__ __forceinline__ void count_element(U v, std::uint64_t bins, unsigned int* local,
                                              unsigned long long* counts) {
  if (std::uint64_t(v) < bins) {
    if constexpr (kShared)
      atomicAdd(local + v, 1u);
    else
      atomicAdd(counts + v, 1ull);
  }
}

// The smallest and largest element a thread has seen (kRange), in an order that converts to int64's monotonically:
// U's own, but uint64's as int64 (its elements above 2^63 - 1 wrap to negative numbers, as the range reports them).
template <class U> struct Seen {
  using T = std::conditional_t<std::is_same_v<U, std::uint64_t>, long long, U>;
  T lo = ::cuda::std::numeric_limits<T>::max(), hi = ::cuda::std::numeric_limits<T>::lowest();
  __device__ __forceinline__ void add(U u) {
    const T v = static_cast<T>(u);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
};

__device__ __forceinline__ unsigned long long order_key(long long v) {
  return static_cast<unsigned long long>(v) ^ (1ull << 63);
}

// Combines the threads' ranges of a block into `range` (BinCount::range): a warp's by shuffles, the warps' in
// shared memory, the block's with one pair of global atomics.
template <class U> __device__ void add_range(const Seen<U>& seen, unsigned long long* range) {
  __shared__ unsigned long long block_keys[2];
  if (threadIdx.x == 0) block_keys[0] = block_keys[1] = 0;
  unsigned long long low_key = ~order_key(static_cast<long long>(seen.lo)),
                     high_key = order_key(static_cast<long long>(seen.hi));
  for (int offset = 16; offset > 0; offset >>= 1) {
    low_key = max(low_key, __shfl_xor_sync(0xFFFFFFFFu, low_key, offset));
    high_key = max(high_key, __shfl_xor_sync(0xFFFFFFFFu, high_key, offset));
  }
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    atomicMax(block_keys, low_key);
    atomicMax(block_keys + 1, high_key);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMax(range, block_keys[0]);
    atomicMax(range + 1, block_keys[1]);
  }
}

// The last block to finish its elements copies the range into host memory (BinCount::range_to_host), then sets the word
// after it, and clears the count of finished blocks (range[2]). The fence orders each block's atomicMax before its
// arrival; the last block reads the range at L2, where the atomics were made.
__device__ void copy_range_to_host(unsigned long long* range, unsigned long long* to_host) {
  if (threadIdx.x != 0) return;
  __threadfence();
  if (atomicAdd(range + 2, 1ull) != gridDim.x - 1) return;
  range[2] = 0;
  volatile unsigned long long* host = to_host;
  host[0] = atomicAdd(range, 0ull);
  host[1] = atomicAdd(range + 1, 0ull);
  __threadfence_system(); // the keys before the word the host polls
  host[2] = 1;
}

// Counts x[0, n). kShared: per-block counters in dynamic shared memory, added into `counts` at the end; otherwise
// global atomics. kVector: x is 16-byte aligned and read 16 bytes per load. kRange: also x's range into `range`.
template <class U, bool kShared, bool kVector, bool kRange>
__global__ void __launch_bounds__(kThreads)
    lf_bincount(const U* __restrict__ x, std::int64_t n, std::uint64_t bins, unsigned long long* counts,
                unsigned long long* range, unsigned long long* range_to_host) {
  extern __shared__ unsigned int local[];
  if constexpr (kShared) {
    for (std::uint64_t b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
  }
  Seen<U> seen;
  const auto count_one = [&](U v) {
    if constexpr (kRange) seen.add(v);
    count_element<U, kShared>(v, bins, local, counts);
  };
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t start = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  std::int64_t scalar_from = 0;
  if constexpr (kVector) {
    constexpr int kPer = 16 / sizeof(U);
    const std::int64_t vectors = n / kPer;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    std::int64_t i = start;
    for (; i + (kLoadsInFlight - 1) * stride < vectors; i += kLoadsInFlight * stride) {
      uint4 v[kLoadsInFlight];
#pragma unroll
      for (int l = 0; l < kLoadsInFlight; ++l) v[l] = __ldcs(xv + i + l * stride);
#pragma unroll
      for (int l = 0; l < kLoadsInFlight; ++l) {
        U e[kPer];
        std::memcpy(e, &v[l], sizeof v[l]);
#pragma unroll
        for (int k = 0; k < kPer; ++k) count_one(e[k]);
      }
    }
    for (; i < vectors; i += stride) {
      const uint4 v = __ldcs(xv + i);
      U e[kPer];
      std::memcpy(e, &v, sizeof v);
#pragma unroll
      for (int k = 0; k < kPer; ++k) count_one(e[k]);
    }
    scalar_from = vectors * kPer;
  }
  for (std::int64_t i = scalar_from + start; i < n; i += stride) count_one(x[i]);
  // The range before the counters: the host waits for the range alone and goes on while the blocks still add their
  // counters (the stream orders every later use of the counts).
  if constexpr (kRange) {
    add_range(seen, range);
    if (range_to_host) copy_range_to_host(range, range_to_host);
  }
  if constexpr (kShared) {
    __syncthreads();
    for (std::uint64_t b = threadIdx.x; b < bins; b += blockDim.x)
      if (const unsigned int c = local[b]; c != 0) atomicAdd(counts + b, static_cast<unsigned long long>(c));
  }
}

template <class U, bool kShared, bool kRange> auto kernel_for(bool vector) {
  return vector ? lf_bincount<U, kShared, true, kRange> : lf_bincount<U, kShared, false, kRange>;
}

template <class U, bool kShared> auto kernel_for(bool vector, bool range) {
  return range ? kernel_for<U, kShared, true>(vector) : kernel_for<U, kShared, false>(vector);
}

// Blocks of `threads` of `kernel` an SM of `device` holds with `shared_bytes` of dynamic shared memory, asked of CUDA
// once per kernel, device and size; the kernel's dynamic shared memory limit only ever grows, so that a size asked for
// earlier stays allowed. A bincount waits for its range, so the host's time from that wait to the next count's launch
// leaves the GPU idle: CUDA's function attributes and occupancy calculator are kept off that path (and off every
// scatter-add's).
int resident_blocks(const void* kernel, int device, std::size_t shared_bytes, int threads = kThreads) {
  struct Key {
    const void* kernel;
    int device;
    std::size_t shared_bytes;
    int threads;
    auto operator<=>(const Key&) const = default;
  };
  static std::mutex mutex;
  static std::map<Key, int> blocks;
  static std::map<std::pair<const void*, int>, std::size_t> allowed;
  std::lock_guard lock(mutex);
  if (const auto known = blocks.find({kernel, device, shared_bytes, threads}); known != blocks.end())
    return known->second;
  if (std::size_t& most = allowed[{kernel, device}]; shared_bytes > most) {
    LAZYFUSE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
    most = shared_bytes;
  }
  int per_sm = 0;
  LAZYFUSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, shared_bytes));
  blocks.emplace(Key{kernel, device, shared_bytes, threads}, per_sm);
  return per_sm;
}

template <class U> Report run_typed(const BinCount& c, cudaStream_t stream) {
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  const cuda::DeviceInfo& info = cuda::device_info(device);
  const int sms = info.sm_count;
  const auto shared_bytes = std::size_t(c.bins) * sizeof(unsigned int);
  const bool vector = reinterpret_cast<std::uintptr_t>(c.x) % 16 == 0;
  bool shared = shared_bytes <= info.shared_bytes_per_block_optin;
  const bool range = c.range != nullptr;
  auto kernel = shared ? kernel_for<U, true>(vector, range) : kernel_for<U, false>(vector, range);
  int per_sm = 0;
  if (shared) {
    per_sm = resident_blocks(reinterpret_cast<const void*>(kernel), device, shared_bytes);
    if (per_sm == 0) { // the counters fit a block, not next to a block of kThreads: count in global memory
      shared = false;
      kernel = kernel_for<U, false>(vector, range);
    }
  }
  if (!shared) per_sm = resident_blocks(reinterpret_cast<const void*>(kernel), device, 0);
  const std::int64_t per_thread = (vector ? 16 / std::int64_t(sizeof(U)) : 1) * kLoadsInFlight;
  const std::size_t dynamic_shared = shared ? shared_bytes : 0;
  auto* counts = reinterpret_cast<unsigned long long*>(c.counts);
  Report report;
  int largest_grid = 0;
  for (std::int64_t first = 0; first < c.n; first += kMaxChunk) {
    const std::int64_t n = std::min(kMaxChunk, c.n - first);
    // Enough blocks to fill the device, no more than gives each thread a few loads: each block adds its own counters.
    const int grid = int(std::clamp<std::int64_t>((n + kThreads * per_thread - 1) / (kThreads * per_thread), 1,
                                                  std::int64_t(sms) * std::max(per_sm, 1)));
    largest_grid = std::max(largest_grid, grid);
    // Only the last launch's range is the whole one.
    const bool last = first + n == c.n;
    kernel<<<grid, kThreads, dynamic_shared, stream>>>(static_cast<const U*>(c.x) + first, n, std::uint64_t(c.bins),
                                                       counts, reinterpret_cast<unsigned long long*>(c.range),
                                                       last ? reinterpret_cast<unsigned long long*>(c.range_to_host)
                                                            : nullptr);
    LAZYFUSE_CUDA_CHECK(cudaGetLastError());
    ++report.kernels;
  }
  report.steps = std::string(shared ? "shared counters" : "global atomics") + ", up to " +
                 std::to_string(largest_grid) + " blocks of " + std::to_string(kThreads) + " threads, " +
                 (vector ? "16-byte loads" : "element loads") + (range ? ", with the range" : "");
  return report;
}

// ---- weighted counts: float64 by a stable sort ----

// key[i] = x[i]'s bin, or `bins` for an element outside [0, bins) (a negative one converts to 2^64 + it); and every
// sum set to the additive identity -0.0.
template <class U>
__global__ void lf_bincount_keys(const U* __restrict__ x, std::int64_t n, std::uint64_t bins,
                                 std::uint32_t* __restrict__ keys, double* __restrict__ sums) {
  const std::int64_t end = n > std::int64_t(bins) ? n : std::int64_t(bins);
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < end;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    if (i < n) {
      const auto v = static_cast<std::uint64_t>(x[i]);
      keys[i] = static_cast<std::uint32_t>(v < bins ? v : bins);
    }
    if (std::uint64_t(i) < bins) sums[i] = -0.0;
  }
}

// sums[key[r]] = sum[r] for each run r of the sorted keys but the outside elements' (key `bins`).
__global__ void lf_bincount_scatter(const std::uint32_t* __restrict__ keys, const double* __restrict__ run_sums,
                                    const std::int64_t* __restrict__ runs, std::uint64_t bins,
                                    double* __restrict__ sums) {
  const std::int64_t count = *runs;
  for (std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < count;
       r += std::int64_t(gridDim.x) * blockDim.x)
    if (keys[r] < bins) sums[keys[r]] = run_sums[r];
}

struct AddWeights {
  __device__ __forceinline__ double operator()(double a, double b) const { return a + b; }
};

// A grid of whole blocks over n threads, no more than the device holds at once.
int grid_over(std::int64_t n, int threads) {
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  const cuda::DeviceInfo& info = cuda::device_info(device);
  return int(std::clamp<std::int64_t>((n + threads - 1) / threads, 1,
                                      std::int64_t(info.sm_count) * info.max_threads_per_sm / threads));
}

// float64 weights: in 53 digits, a fixed-point sum (below) would need integers of more than 64 bits. So a stable sort
// by bin (a bin's weights stay in x's order) and a reduce-by-key, whose tiles and scan tree depend on n alone.
template <class U> Report run_sorted(const WeightedBinCount& c, const Scratch& scratch, cudaStream_t stream) {
  constexpr int kThreadsPerBlock = 256;
  const std::int64_t n = c.n;
  const auto take = [&]<class T>(std::int64_t count) {
    return static_cast<T*>(scratch(cub_sort::scratch_bytes(sizeof(T) * std::size_t(count))));
  };
  auto* keys = take.template operator()<std::uint32_t>(n);
  auto* sorted_keys = take.template operator()<std::uint32_t>(n);
  auto* sorted_weights = take.template operator()<double>(n);
  auto* run_keys = take.template operator()<std::uint32_t>(n);
  auto* run_sums = take.template operator()<double>(n);
  auto* runs = take.template operator()<std::int64_t>(1);
  Report report;
  const int grid = grid_over(std::max(n, c.bins), kThreadsPerBlock);
  lf_bincount_keys<U><<<grid, kThreadsPerBlock, 0, stream>>>(static_cast<const U*>(c.x), n, std::uint64_t(c.bins), keys,
                                                             static_cast<double*>(c.sums));
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  ++report.kernels;
  // Keys up to `bins` (the outside elements' key included) take bit_width(bins) bits: fewer radix passes.
  const int end_bit = std::bit_width(std::uint64_t(c.bins));
  const auto cub_call = [&](auto&& call) {
    std::size_t bytes = 0;
    LAZYFUSE_CUDA_CHECK(call(nullptr, bytes));
    void* temp = scratch(cub_sort::scratch_bytes(bytes));
    LAZYFUSE_CUDA_CHECK(call(temp, bytes));
    ++report.library_calls;
  };
  cub_call([&](void* temp, std::size_t& bytes) {
    return ::cub::DeviceRadixSort::SortPairs(temp, bytes, keys, sorted_keys, static_cast<const double*>(c.weights),
                                             sorted_weights, n, 0, end_bit, stream);
  });
  cub_call([&](void* temp, std::size_t& bytes) {
    return ::cub::DeviceReduce::ReduceByKey(temp, bytes, sorted_keys, run_keys, sorted_weights, run_sums, runs,
                                            AddWeights{}, n, stream);
  });
  lf_bincount_scatter<<<grid, kThreadsPerBlock, 0, stream>>>(run_keys, run_sums, runs, std::uint64_t(c.bins),
                                                             static_cast<double*>(c.sums));
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  ++report.kernels;
  report.steps =
      "keys and identities, SortPairs over " + std::to_string(end_bit) + " bits, ReduceByKey, scatter of the sums";
  return report;
}

// ---- fixed-point sums (runtime/FixedPointSum.h) ----

__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(__half v) {
  return __half2float(v);
}
__device__ __forceinline__ float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

// Each float type's format (fixed_sum::finish) and the conversion of a float it holds exactly.
template <class W> struct FloatFormat;
template <> struct FloatFormat<float> {
  static constexpr fixed_sum::Format format = fixed_sum::kFloat32;
  __device__ static float from(float v) { return v; }
};
template <> struct FloatFormat<__half> {
  static constexpr fixed_sum::Format format = fixed_sum::kFloat16;
  __device__ static __half from(float v) { return __float2half_rn(v); }
};
template <> struct FloatFormat<__nv_bfloat16> {
  static constexpr fixed_sum::Format format = fixed_sum::kBFloat16;
  __device__ static __nv_bfloat16 from(float v) { return __float2bfloat16_rn(v); }
};

// A bin's sum, rounded once to W from its integer sum and its word (the same in every kernel that finishes bins).
template <class W> __device__ __forceinline__ W rounded_sum(unsigned long long sum, std::uint32_t word, int fraction) {
  return FloatFormat<W>::from(
      fixed_sum::finish(static_cast<std::int64_t>(sum), word, fraction, FloatFormat<W>::format));
}

// Calls f(bin, weight) for each element of x in [0, bins), in a grid-stride loop that loads kLoadsInFlight elements
// and weights before it uses them: the atomics after the loads do not wait for one another, the loads do.
template <class U, class W, class F>
__device__ __forceinline__ void for_each_in_bins(const U* __restrict__ x, const W* __restrict__ weights, std::int64_t n,
                                                 std::uint64_t bins, F&& f) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += kLoadsInFlight * stride) {
    std::uint64_t bin[kLoadsInFlight];
    W weight[kLoadsInFlight];
#pragma unroll
    for (int l = 0; l < kLoadsInFlight; ++l) {
      const std::int64_t j = i + l * stride;
      bin[l] = j < n ? static_cast<std::uint64_t>(__ldcs(x + j)) : bins;
      if (j < n) weight[l] = __ldcs(weights + j);
    }
#pragma unroll
    for (int l = 0; l < kLoadsInFlight; ++l)
      if (bin[l] < bins) f(bin[l], weight[l]);
  }
}

// Pass 1: each bin's word takes the largest scale code of its values.
template <class U, class W>
__global__ void lf_fixed_scales(const U* __restrict__ x, const W* __restrict__ weights, std::int64_t n,
                                std::uint64_t bins, std::uint32_t* __restrict__ words) {
  for_each_in_bins(x, weights, n, bins, [&](std::uint64_t bin, W weight) {
    if (const std::uint32_t code = fixed_sum::scale_code(to_float(weight)); code != fixed_sum::kNothing)
      atomicMax(words + bin, code);
  });
}

// Pass 2: each finite value's term into its bin's integer sum (integer atomics commute); an infinity or a NaN sets
// its flag in the word, above the scale this pass reads.
template <class U, class W>
__global__ void lf_fixed_terms(const U* __restrict__ x, const W* __restrict__ weights, std::int64_t n,
                               std::uint64_t bins, int fraction, std::uint32_t* words,
                               unsigned long long* __restrict__ sums) {
  for_each_in_bins(x, weights, n, bins, [&](std::uint64_t bin, W weight) {
    const float v = to_float(weight);
    if (const std::uint32_t flag = fixed_sum::special_flag(v); flag != 0)
      atomicOr(words + bin, flag);
    else if (const std::int64_t t = fixed_sum::term(v, __ldcg(words + bin), fraction); t != 0)
      atomicAdd(sums + bin, static_cast<unsigned long long>(t));
  });
}

// Pass 3: each bin's sum rounded once to W.
template <class W>
__global__ void lf_fixed_finish(const std::uint32_t* __restrict__ words, const unsigned long long* __restrict__ sums,
                                std::int64_t bins, int fraction, W* __restrict__ out) {
  for (std::int64_t b = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < bins;
       b += std::int64_t(gridDim.x) * blockDim.x)
    out[b] = rounded_sum<W>(sums[b], words[b], fraction);
}

// ---- fixed-point sums over many bins: bucketed by a radix pass, summed in shared memory ----
//
// With many bins the kernels above spend two L2 atomics a value, each behind a read of its bin's word (design.md,
// "Counting"). Here CUB's radix sort of the (bin, value) pairs over the bin's bits [low, end) puts each bucket of 2^low
// bins in one run, and a block per bucket keeps its bins' words and sums in shared memory (12 bytes a bin) and writes
// each finished sum once. The sums are the same integers whatever the grouping, so the bits are the ones the global
// kernels (and the CPU backend) give. A run far longer than the average (skewed indices) would keep one block busy
// while the others wait: its block clears the bucket's global words and sums, marks it long and leaves its values to
// three kernels that spread them over chunks of sorted pairs, each chunk's part summed in shared memory and added
// into the global words and sums with one atomic a bin.

constexpr int kBucketThreads = 1024;
// Fewest bits of the largest bin for the bucketed path: more than 2^18 bins (with fewer, the global atomics spread
// well enough and the sort's fixed costs weigh more; not measured between 2^16 and 2^20).
constexpr int kMinBucketedBits = 19;
// A bucket holds at least 2^kMinBucketBits bins, and as many more as keep the sort to one 8-bit pass and fit shared
// memory.
constexpr int kMinBucketBits = 11;
constexpr int kRadixPassBits = 8;
// Sorted pairs per block in the long runs' kernels.
constexpr std::int64_t kLongChunk = 16384;

constexpr std::size_t bucket_shared_bytes(int low) {
  return (std::size_t(1) << low) * (sizeof(std::uint64_t) + sizeof(std::uint32_t));
}

__device__ __forceinline__ std::uint64_t digit_of(std::uint32_t key, int low, std::uint32_t mask) {
  return (key >> low) & mask;
}

// The first position of keys[lo, hi) whose digit is at least d (hi where none is), the keys being sorted by their
// digits: a warp probes 32 positions a round. Every lane returns it.
__device__ std::int64_t warp_lower_bound(const std::uint32_t* __restrict__ keys, std::int64_t lo, std::int64_t hi,
                                         std::uint64_t d, int low, std::uint32_t mask) {
  const int lane = int(threadIdx.x % 32);
  // The answer is in [lo, hi]: hi is the end, or a position whose digit is at least d.
  while (hi - lo > 32) {
    const std::int64_t step = (hi - lo + 31) / 32;
    const auto probe = [&](int l) { return min(lo + (l + 1) * step - 1, hi - 1); };
    const unsigned at_least = __ballot_sync(0xFFFFFFFFu, digit_of(keys[probe(lane)], low, mask) >= d);
    if (at_least == 0) return hi; // every probe below d, the last at hi - 1
    const int first = __ffs(int(at_least)) - 1;
    const std::int64_t below = first == 0 ? lo : probe(first - 1) + 1;
    hi = probe(first);
    lo = below;
  }
  const bool at_least = lo + lane < hi && digit_of(keys[lo + lane], low, mask) >= d;
  const unsigned found = __ballot_sync(0xFFFFFFFFu, at_least);
  return found == 0 ? hi : lo + __ffs(int(found)) - 1;
}

// Warps 0 and 1 find the positions in [lo, hi) where digits d and d + 1 begin, into run[0] and run[1]; the caller
// synchronizes the block before reading them.
__device__ void find_run(const std::uint32_t* __restrict__ keys, std::int64_t lo, std::int64_t hi, std::uint64_t d,
                         int low, std::uint32_t mask, std::int64_t* run) {
  if (threadIdx.x < 64) {
    const std::int64_t at = warp_lower_bound(keys, lo, hi, d + threadIdx.x / 32, low, mask);
    if (threadIdx.x % 32 == 0) run[threadIdx.x / 32] = at;
  }
}

// A value into its bin's word: its scale code by atomicMax, or an infinity's or a NaN's flag by atomicOr (shared or
// global memory). A flagged word's scale may stay below its values' (atomicMax compares the whole word, flags and
// all): harmless, since fixed_sum::finish ignores the sum of a flagged bin.
__device__ __forceinline__ void add_to_word(std::uint32_t* word, float v) {
  if (const std::uint32_t code = fixed_sum::scale_code(v); code != fixed_sum::kNothing)
    atomicMax(word, code);
  else
    atomicOr(word, fixed_sum::special_flag(v));
}

// Calls f(bin, weight) for each pair of sorted keys and values in [first, last) whose key, as U, is in [0, bins): the
// block's threads stride over the run with kLoadsInFlight pairs loaded before any is used. kLastRead: the pairs are
// not read again (loaded as streaming, first evicted from L2); a block's first pass over its run leaves them in L2 for
// its second.
template <class U, bool kLastRead = true, class W, class F>
__device__ __forceinline__ void for_each_in_run(const std::uint32_t* __restrict__ keys, const W* __restrict__ values,
                                                std::int64_t first, std::int64_t last, std::uint64_t bins, F&& f) {
  const std::int64_t stride = blockDim.x;
  for (std::int64_t i = first + threadIdx.x; i < last; i += kLoadsInFlight * stride) {
    std::uint32_t key[kLoadsInFlight];
    W weight[kLoadsInFlight];
#pragma unroll
    for (int l = 0; l < kLoadsInFlight; ++l) {
      const std::int64_t j = i + l * stride;
      if constexpr (kLastRead) {
        key[l] = j < last ? __ldcs(keys + j) : 0;
        if (j < last) weight[l] = __ldcs(values + j);
      } else {
        key[l] = j < last ? __ldg(keys + j) : 0;
        if (j < last) weight[l] = __ldg(values + j);
      }
    }
#pragma unroll
    for (int l = 0; l < kLoadsInFlight; ++l)
      if (i + l * stride < last && static_cast<std::uint64_t>(static_cast<U>(key[l])) < bins) f(key[l], weight[l]);
  }
}

// sum += t in shared memory. A shared 64-bit atomicAdd is a compare-and-swap loop on sm_90 (ATOMS.CAST.SPIN.64 in
// cuobjdump's listing, docs/results/2026-12-06g): two native 32-bit adds instead, the low word's carry going into the
// high one with the high half of t. Once every add is done, the pair holds the sum mod 2^64, as the 64-bit adds would.
__device__ __forceinline__ void add_to_shared_sum(unsigned long long* sum, std::int64_t t) {
  auto* halves = reinterpret_cast<unsigned int*>(sum); // little-endian: the low half first
  const auto u = static_cast<unsigned long long>(t);
  const auto low = static_cast<unsigned int>(u), high = static_cast<unsigned int>(u >> 32);
  const unsigned int before = atomicAdd(halves, low);
  const unsigned int carried = high + (before + low < before ? 1u : 0u);
  if (carried != 0) atomicAdd(halves + 1, carried);
}

// The terms of the pairs in [first, last) of one bucket (2^low bins, local_mask = 2^low - 1) into its sums in shared
// memory, from its final words (shared too): fixed_sum::term of each finite value by add_to_shared_sum.
template <class U, class W>
__device__ __forceinline__ void add_terms(const std::uint32_t* __restrict__ keys, const W* __restrict__ values,
                                          std::int64_t first, std::int64_t last, std::uint64_t bins,
                                          const std::uint32_t* bucket_words, unsigned long long* bucket_sums,
                                          std::uint32_t local_mask, int fraction) {
  for_each_in_run<U>(keys, values, first, last, bins, [&](std::uint32_t key, W weight) {
    const float v = to_float(weight);
    if (fixed_sum::special_flag(v) != 0) return;
    if (const std::int64_t t = fixed_sum::term(v, bucket_words[key & local_mask], fraction); t != 0)
      add_to_shared_sum(bucket_sums + (key & local_mask), t);
  });
}

// One block per bucket d (bins d 2^low ... (d + 1) 2^low - 1): its run found by two warps' searches; the words by
// shared atomicMax (a scale) or atomicOr (an infinity's or a NaN's flag), then the terms by add_to_shared_sum,
// then each bin's sum rounded once into `out`. A run longer than long_run: the bucket's global words and sums cleared,
// and long_buckets[d] = 1 for the kernels below (else 0).
template <class U, class W>
__global__ void __launch_bounds__(kBucketThreads)
    lf_fixed_buckets(const std::uint32_t* __restrict__ keys, const W* __restrict__ values, std::int64_t n,
                     std::uint64_t bins, int low, std::uint32_t mask, std::int64_t long_run, int fraction,
                     W* __restrict__ out, std::uint32_t* __restrict__ words, unsigned long long* __restrict__ sums,
                     std::uint32_t* __restrict__ long_buckets) {
  extern __shared__ unsigned long long bucket_sums[];
  __shared__ std::int64_t run[2];
  const std::uint64_t d = blockIdx.x, first_bin = d << low;
  const std::uint32_t bucket_bins = 1u << low;
  auto* bucket_words = reinterpret_cast<std::uint32_t*>(bucket_sums + bucket_bins);
  find_run(keys, 0, n, d, low, mask, run);
  for (std::uint32_t b = threadIdx.x; b < bucket_bins; b += blockDim.x) {
    bucket_sums[b] = 0;
    bucket_words[b] = 0;
  }
  __syncthreads();
  const std::int64_t first = run[0], last = run[1];
  if (last - first > long_run) {
    for (std::uint32_t b = threadIdx.x; b < bucket_bins && first_bin + b < bins; b += blockDim.x) {
      words[first_bin + b] = 0;
      sums[first_bin + b] = 0;
    }
    if (threadIdx.x == 0) long_buckets[d] = 1;
    return;
  }
  if (threadIdx.x == 0) long_buckets[d] = 0;
  const std::uint32_t local_mask = bucket_bins - 1;
  for_each_in_run<U, false>(keys, values, first, last, bins, [&](std::uint32_t key, W weight) {
    add_to_word(bucket_words + (key & local_mask), to_float(weight));
  });
  __syncthreads();
  add_terms<U>(keys, values, first, last, bins, bucket_words, bucket_sums, local_mask, fraction);
  __syncthreads();
  for (std::uint32_t b = threadIdx.x; b < bucket_bins && first_bin + b < bins; b += blockDim.x)
    out[first_bin + b] = rounded_sum<W>(bucket_sums[b], bucket_words[b], fraction);
}

// Calls f(d, first, last) for each long bucket d with pairs in the block's chunk of kLongChunk sorted pairs, [first,
// last) its pairs there; the block synchronized before each call (its shared memory free) and after the last.
template <class F>
__device__ void for_each_long_segment(const std::uint32_t* __restrict__ keys, std::int64_t n, int low,
                                      std::uint32_t mask, std::uint64_t buckets,
                                      const std::uint32_t* __restrict__ long_buckets, F&& f) {
  __shared__ std::int64_t run[2];
  // Most calls have no long bucket: where the flags are few, the block reads them all (from L2) before any key (from
  // DRAM), and leaves.
  if (buckets <= 4 * blockDim.x) {
    bool any = false;
    for (std::uint64_t d = threadIdx.x; d < buckets; d += blockDim.x) any = any || long_buckets[d] != 0;
    if (!__syncthreads_or(any)) return;
  }
  const std::int64_t first = std::int64_t(blockIdx.x) * kLongChunk, last = min(n, first + kLongChunk);
  const std::uint64_t from = digit_of(keys[first], low, mask), to = digit_of(keys[last - 1], low, mask);
  for (std::uint64_t d = from; d <= to && d < buckets; ++d) {
    if (long_buckets[d] == 0) continue; // the same load in every thread: the block agrees
    find_run(keys, first, last, d, low, mask, run);
    __syncthreads();
    const std::int64_t segment_first = run[0], segment_last = run[1];
    __syncthreads();
    f(d, segment_first, segment_last);
    __syncthreads();
  }
}

// The long buckets' words, over chunks of kLongChunk sorted pairs: each chunk's part of a long bucket gathered in
// shared words (2^low of them), then added into the bucket's global words, one atomic a bin the chunk wrote.
template <class U, class W>
__global__ void __launch_bounds__(kBucketThreads)
    lf_fixed_long_scales(const std::uint32_t* __restrict__ keys, const W* __restrict__ values, std::int64_t n,
                         std::uint64_t bins, int low, std::uint32_t mask, std::uint64_t buckets,
                         const std::uint32_t* __restrict__ long_buckets, std::uint32_t* __restrict__ words) {
  extern __shared__ std::uint32_t chunk_words[];
  const std::uint32_t bucket_bins = 1u << low, local_mask = bucket_bins - 1;
  for_each_long_segment(keys, n, low, mask, buckets, long_buckets,
                        [&](std::uint64_t d, std::int64_t first, std::int64_t last) {
                          for (std::uint32_t b = threadIdx.x; b < bucket_bins; b += blockDim.x) chunk_words[b] = 0;
                          __syncthreads();
                          for_each_in_run<U>(keys, values, first, last, bins, [&](std::uint32_t key, W weight) {
                            add_to_word(chunk_words + (key & local_mask), to_float(weight));
                          });
                          __syncthreads();
                          const std::uint64_t first_bin = d << low;
                          for (std::uint32_t b = threadIdx.x; b < bucket_bins; b += blockDim.x)
                            if (const std::uint32_t w = chunk_words[b]; w != 0) {
                              if (const std::uint32_t scale = w & fixed_sum::kScaleMask; scale != 0)
                                atomicMax(words + first_bin + b, scale);
                              if (const std::uint32_t flags = w & ~fixed_sum::kScaleMask; flags != 0)
                                atomicOr(words + first_bin + b, flags);
                            }
                        });
}

// The long buckets' terms (their words final now), gathered per chunk in shared sums, then added into the global
// sums, one int64 atomic a bin the chunk wrote.
template <class U, class W>
__global__ void __launch_bounds__(kBucketThreads)
    lf_fixed_long_terms(const std::uint32_t* __restrict__ keys, const W* __restrict__ values, std::int64_t n,
                        std::uint64_t bins, int low, std::uint32_t mask, std::uint64_t buckets,
                        const std::uint32_t* __restrict__ long_buckets, int fraction,
                        const std::uint32_t* __restrict__ words, unsigned long long* __restrict__ sums) {
  extern __shared__ unsigned long long chunk_sums[];
  const std::uint32_t bucket_bins = 1u << low, local_mask = bucket_bins - 1;
  auto* chunk_words = reinterpret_cast<std::uint32_t*>(chunk_sums + bucket_bins);
  for_each_long_segment(keys, n, low, mask, buckets, long_buckets,
                        [&](std::uint64_t d, std::int64_t first, std::int64_t last) {
                          const std::uint64_t first_bin = d << low;
                          for (std::uint32_t b = threadIdx.x; b < bucket_bins; b += blockDim.x) {
                            chunk_sums[b] = 0;
                            chunk_words[b] = first_bin + b < bins ? words[first_bin + b] : 0;
                          }
                          __syncthreads();
                          add_terms<U>(keys, values, first, last, bins, chunk_words, chunk_sums, local_mask, fraction);
                          __syncthreads();
                          for (std::uint32_t b = threadIdx.x; b < bucket_bins; b += blockDim.x)
                            if (const unsigned long long t = chunk_sums[b]; t != 0) atomicAdd(sums + first_bin + b, t);
                        });
}

// The long buckets' sums rounded once, a block a bucket: the blocks of the other buckets return after one flag. A
// thread a bin (a block per 256 bins) took 5.3 us where this takes 2.9 with no bucket long (H100, 256 buckets), and
// 5.3 where this takes 7.3 with a third of the values in one bucket: the uniform case is the common one.
template <class W>
__global__ void __launch_bounds__(kBucketThreads)
    lf_fixed_long_finish(const std::uint32_t* __restrict__ words, const unsigned long long* __restrict__ sums,
                         std::uint64_t bins, int low, const std::uint32_t* __restrict__ long_buckets, int fraction,
                         W* __restrict__ out) {
  if (long_buckets[blockIdx.x] == 0) return;
  const std::uint64_t first_bin = std::uint64_t(blockIdx.x) << low, bucket_end = first_bin + (std::uint64_t(1) << low),
                      last_bin = bucket_end < bins ? bucket_end : bins;
  for (std::uint64_t b = first_bin + threadIdx.x; b < last_bin; b += blockDim.x)
    out[b] = rounded_sum<W>(sums[b], words[b], fraction);
}

// The bucketed path for 4-byte bins and float16, bfloat16 or float32 values, or std::nullopt where it does not apply
// (at most 2^18 bins, or not one bucket's shared memory next to a block on this device).
template <class U, class W>
std::optional<Report> run_bucketed(const WeightedBinCount& c, const Scratch& scratch, cudaStream_t stream) {
  static_assert(sizeof(U) == sizeof(std::uint32_t), "bucketed bins are 4-byte keys");
  const int end = std::bit_width(std::uint64_t(c.bins - 1));
  if (end < kMinBucketedBits) return std::nullopt;
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  int low = std::max(end - kRadixPassBits, kMinBucketBits);
  // The block's own static shared memory (the run's two ends) beside the bucket's.
  const std::size_t shared_limit = cuda::device_info(device).shared_bytes_per_block_optin - 64;
  while (low > kMinBucketBits && bucket_shared_bytes(low) > shared_limit) --low;
  const std::size_t shared_bytes = bucket_shared_bytes(low);
  if (shared_bytes > shared_limit) return std::nullopt;
  const auto buckets_kernel = lf_fixed_buckets<U, W>;
  // Each of the three kernels is allowed the bucket's shared memory; all must fit beside a block.
  for (const void* kernel :
       {reinterpret_cast<const void*>(buckets_kernel), reinterpret_cast<const void*>(lf_fixed_long_scales<U, W>),
        reinterpret_cast<const void*>(lf_fixed_long_terms<U, W>)})
    if (resident_blocks(kernel, device, shared_bytes, kBucketThreads) == 0) return std::nullopt;

  const std::int64_t n = c.n;
  const std::uint64_t bins = std::uint64_t(c.bins), buckets = ((bins - 1) >> low) + 1;
  const auto mask = std::uint32_t((std::uint64_t(1) << (end - low)) - 1);
  // A run of a few times the average keeps its block's time near the others'; short ones are cheap whatever the mean.
  const std::int64_t long_run =
      std::max<std::int64_t>(4 * ((n + std::int64_t(buckets) - 1) / std::int64_t(buckets)), std::int64_t(1) << 16);
  const int fraction = fixed_sum::fraction_bits(n);
  using Bits = std::conditional_t<sizeof(W) == 2, std::uint16_t, std::uint32_t>;
  const auto take = [&]<class T>(std::uint64_t count) {
    return static_cast<T*>(scratch(cub_sort::scratch_bytes(sizeof(T) * std::size_t(count))));
  };
  auto* sorted_keys = take.template operator()<std::uint32_t>(std::uint64_t(n));
  auto* sorted_values = take.template operator()<Bits>(std::uint64_t(n));
  auto* words = take.template operator()<std::uint32_t>(bins);
  auto* sums = take.template operator()<unsigned long long>(bins);
  auto* long_buckets = take.template operator()<std::uint32_t>(buckets);
  Report report;
  std::size_t bytes = 0;
  const auto sort = [&](void* temp) {
    return ::cub::DeviceRadixSort::SortPairs(temp, bytes, static_cast<const std::uint32_t*>(c.x), sorted_keys,
                                             static_cast<const Bits*>(c.weights), sorted_values, n, low, end, stream);
  };
  LAZYFUSE_CUDA_CHECK(sort(nullptr));
  LAZYFUSE_CUDA_CHECK(sort(scratch(cub_sort::scratch_bytes(bytes))));
  ++report.library_calls;
  const auto* keys = sorted_keys;
  const auto* values = reinterpret_cast<const W*>(sorted_values);
  auto* out = static_cast<W*>(c.sums);
  buckets_kernel<<<unsigned(buckets), kBucketThreads, shared_bytes, stream>>>(
      keys, values, n, bins, low, mask, long_run, fraction, out, words, sums, long_buckets);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  const auto chunks = unsigned((n + kLongChunk - 1) / kLongChunk);
  lf_fixed_long_scales<U, W><<<chunks, kBucketThreads, shared_bytes, stream>>>(keys, values, n, bins, low, mask,
                                                                               buckets, long_buckets, words);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  lf_fixed_long_terms<U, W><<<chunks, kBucketThreads, shared_bytes, stream>>>(keys, values, n, bins, low, mask, buckets,
                                                                              long_buckets, fraction, words, sums);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  lf_fixed_long_finish<W>
      <<<unsigned(buckets), kBucketThreads, 0, stream>>>(words, sums, bins, low, long_buckets, fraction, out);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  report.kernels = 4;
  report.steps = "fixed point, bucketed: SortPairs over bits [" + std::to_string(low) + ", " + std::to_string(end) +
                 "), " + std::to_string(buckets) + " buckets of " + std::to_string(1 << low) +
                 " bins summed in shared memory (runs over " + std::to_string(long_run) +
                 " values by global atomics), " + std::to_string(fraction) + " bits below the scale";
  return report;
}

template <class U, class W>
Report run_fixed_point(const WeightedBinCount& c, const Scratch& scratch, cudaStream_t stream) {
  constexpr int kThreadsPerBlock = 256;
  if constexpr (sizeof(U) == sizeof(std::uint32_t))
    if (std::optional<Report> bucketed = run_bucketed<U, W>(c, scratch, stream)) return *bucketed;
  auto* words = static_cast<std::uint32_t*>(scratch(cub_sort::scratch_bytes(sizeof(std::uint32_t) * c.bins)));
  auto* sums = static_cast<unsigned long long*>(scratch(cub_sort::scratch_bytes(sizeof(std::uint64_t) * c.bins)));
  LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(words, 0, sizeof(std::uint32_t) * c.bins, stream));
  LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(std::uint64_t) * c.bins, stream));
  const int fraction = fixed_sum::fraction_bits(c.n);
  const auto* x = static_cast<const U*>(c.x);
  const auto* weights = static_cast<const W*>(c.weights);
  const int grid = grid_over(c.n, kThreadsPerBlock);
  lf_fixed_scales<U, W><<<grid, kThreadsPerBlock, 0, stream>>>(x, weights, c.n, std::uint64_t(c.bins), words);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  lf_fixed_terms<U, W>
      <<<grid, kThreadsPerBlock, 0, stream>>>(x, weights, c.n, std::uint64_t(c.bins), fraction, words, sums);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  lf_fixed_finish<W><<<grid_over(c.bins, kThreadsPerBlock), kThreadsPerBlock, 0, stream>>>(
      words, sums, c.bins, fraction, static_cast<W*>(c.sums));
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  Report report;
  report.kernels = 3;
  report.steps = "fixed point: each bin's scale, its terms by int64 atomics (" + std::to_string(fraction) +
                 " bits below the scale), rounded once";
  return report;
}

// Integer weights: sums by int64 atomics, which commute (and wrap as the sum in order would).
template <class U, class W>
__global__ void lf_integer_sums(const U* __restrict__ x, const W* __restrict__ weights, std::int64_t n,
                                std::uint64_t bins, unsigned long long* __restrict__ sums) {
  for_each_in_bins(x, weights, n, bins, [&](std::uint64_t bin, W weight) {
    atomicAdd(sums + bin, static_cast<unsigned long long>(weight));
  });
}

template <class U, class W> Report run_integer(const WeightedBinCount& c, cudaStream_t stream) {
  constexpr int kThreadsPerBlock = 256;
  auto* sums = static_cast<unsigned long long*>(c.sums);
  LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(sums, 0, sizeof(std::uint64_t) * c.bins, stream));
  lf_integer_sums<U, W><<<grid_over(c.n, kThreadsPerBlock), kThreadsPerBlock, 0, stream>>>(
      static_cast<const U*>(c.x), static_cast<const W*>(c.weights), c.n, std::uint64_t(c.bins), sums);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
  Report report;
  report.kernels = 1;
  report.steps = "int64 atomics";
  return report;
}

template <class U> Report run_weighted_for_x(const WeightedBinCount& c, const Scratch& scratch, cudaStream_t stream) {
  switch (c.weight_type) {
  case DType::Float16: return run_fixed_point<U, __half>(c, scratch, stream);
  case DType::BFloat16: return run_fixed_point<U, __nv_bfloat16>(c, scratch, stream);
  case DType::Float32: return run_fixed_point<U, float>(c, scratch, stream);
  case DType::Float64: return run_sorted<U>(c, scratch, stream);
  case DType::Int64: return run_integer<U, long long>(c, stream);
  case DType::UInt64: return run_integer<U, unsigned long long>(c, stream);
  default:
    throw Error(std::string("device_count: weights of type ") + std::string(dtype_name(c.weight_type)) +
                " are not summed on the device");
  }
}

// Calls f.template operator()<U>() with U the integer type of x's elements: `width` bytes, signed or not.
template <class F> Report visit_elements(int width, bool is_signed, F&& f) {
  switch (width) {
  case 1: return is_signed ? f.template operator()<std::int8_t>() : f.template operator()<std::uint8_t>();
  case 2: return is_signed ? f.template operator()<std::int16_t>() : f.template operator()<std::uint16_t>();
  case 4: return is_signed ? f.template operator()<std::int32_t>() : f.template operator()<std::uint32_t>();
  case 8: return is_signed ? f.template operator()<std::int64_t>() : f.template operator()<std::uint64_t>();
  default: throw Error("device_count: elements of " + std::to_string(width) + " bytes cannot be counted");
  }
}

} // namespace

Report run_weighted(const WeightedBinCount& c, const Scratch& scratch, cudaStream_t stream) {
  if (c.n < 1 || c.bins < 1 || std::uint64_t(c.bins) >= 0xFFFFFFFFull)
    throw Error("device_count: a weighted count needs at least one element and 1 to 2^32 - 2 bins, got " +
                std::to_string(c.n) + " elements and " + std::to_string(c.bins) + " bins");
  return visit_elements(c.width, c.is_signed, [&]<class U>() { return run_weighted_for_x<U>(c, scratch, stream); });
}

Report run(const BinCount& c, cudaStream_t stream) {
  if (c.n < 1 || c.bins < 1)
    throw Error("device_count: a count needs at least one element and one bin, got " + std::to_string(c.n) +
                " elements and " + std::to_string(c.bins) + " bins");
  // A range stored right after the counts is cleared with them.
  const bool range_follows = c.range == reinterpret_cast<std::uint64_t*>(c.counts + c.bins);
  LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(
      c.counts, 0, std::size_t(c.bins + (range_follows ? kRangeWords : 0)) * sizeof(std::int64_t), stream));
  if (c.range && !range_follows)
    LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(c.range, 0, kRangeWords * sizeof(std::uint64_t), stream));
  return visit_elements(c.width, c.is_signed, [&]<class U>() { return run_typed<U>(c, stream); });
}

} // namespace lazyfuse::runtime::device_count
