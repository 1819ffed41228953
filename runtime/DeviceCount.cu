// The device bincount of runtime/DeviceCount.h, compiled by nvcc with the CUB kernels (runtime/CMakeLists.txt).
#include "runtime/DeviceCount.h"

#include "runtime/CudaApi.h"

#include <cuda/std/limits>

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// Counts x[0, n). kShared: per-block counters in dynamic shared memory, added into `counts` at the end; otherwise
// global atomics. kVector: x is 16-byte aligned and read 16 bytes per load. kRange: also x's range into `range`.
template <class U, bool kShared, bool kVector, bool kRange>
__global__ void __launch_bounds__(kThreads) lf_bincount(const U* __restrict__ x, std::int64_t n, std::uint64_t bins,
                                                        unsigned long long* counts, unsigned long long* range) {
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
  if constexpr (kShared) {
    __syncthreads();
    for (std::uint64_t b = threadIdx.x; b < bins; b += blockDim.x)
      if (const unsigned int c = local[b]; c != 0) atomicAdd(counts + b, static_cast<unsigned long long>(c));
  }
  if constexpr (kRange) add_range(seen, range);
}

template <class U, bool kShared, bool kRange> auto kernel_for(bool vector) {
  return vector ? lf_bincount<U, kShared, true, kRange> : lf_bincount<U, kShared, false, kRange>;
}

template <class U, bool kShared> auto kernel_for(bool vector, bool range) {
  return range ? kernel_for<U, kShared, true>(vector) : kernel_for<U, kShared, false>(vector);
}

template <class U> Report run_typed(const BinCount& c, cudaStream_t stream) {
  int device = 0, sms = 0, shared_optin = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const auto shared_bytes = std::size_t(c.bins) * sizeof(unsigned int);
  const bool vector = reinterpret_cast<std::uintptr_t>(c.x) % 16 == 0;
  bool shared = shared_bytes <= std::size_t(shared_optin);
  const bool range = c.range != nullptr;
  auto kernel = shared ? kernel_for<U, true>(vector, range) : kernel_for<U, false>(vector, range);
  int per_sm = 0;
  if (shared) {
    LAZYFUSE_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
    LAZYFUSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, shared_bytes));
    if (per_sm == 0) { // the counters fit a block, not next to a block of kThreads: count in global memory
      shared = false;
      kernel = kernel_for<U, false>(vector, range);
    }
  }
  if (!shared) LAZYFUSE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
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
    kernel<<<grid, kThreads, dynamic_shared, stream>>>(static_cast<const U*>(c.x) + first, n, std::uint64_t(c.bins),
                                                       counts, reinterpret_cast<unsigned long long*>(c.range));
    LAZYFUSE_CUDA_CHECK(cudaGetLastError());
    ++report.kernels;
  }
  report.steps = std::string(shared ? "shared counters" : "global atomics") + ", up to " +
                 std::to_string(largest_grid) + " blocks of " + std::to_string(kThreads) + " threads, " +
                 (vector ? "16-byte loads" : "element loads") + (range ? ", with the range" : "");
  return report;
}

} // namespace

Report run(const BinCount& c, cudaStream_t stream) {
  if (c.n < 1 || c.bins < 1)
    throw Error("device_count: a count needs at least one element and one bin, got " + std::to_string(c.n) +
                " elements and " + std::to_string(c.bins) + " bins");
  // A range stored right after the counts is cleared with them.
  const bool range_follows = c.range == reinterpret_cast<std::uint64_t*>(c.counts + c.bins);
  LAZYFUSE_CUDA_CHECK(
      cudaMemsetAsync(c.counts, 0, std::size_t(c.bins + (range_follows ? 2 : 0)) * sizeof(std::int64_t), stream));
  if (c.range && !range_follows) LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(c.range, 0, 2 * sizeof(std::uint64_t), stream));
  switch (c.width) {
  case 1: return c.is_signed ? run_typed<std::int8_t>(c, stream) : run_typed<std::uint8_t>(c, stream);
  case 2: return c.is_signed ? run_typed<std::int16_t>(c, stream) : run_typed<std::uint16_t>(c, stream);
  case 4: return c.is_signed ? run_typed<std::int32_t>(c, stream) : run_typed<std::uint32_t>(c, stream);
  case 8: return c.is_signed ? run_typed<std::int64_t>(c, stream) : run_typed<std::uint64_t>(c, stream);
  default: throw Error("device_count: elements of " + std::to_string(c.width) + " bytes cannot be counted");
  }
}

} // namespace lazyfuse::runtime::device_count
