// The one-pass selection of runtime/DeviceSelect.h, compiled by nvcc with the CUB kernels (runtime/CMakeLists.txt).
#include "runtime/DeviceSelect.h"

#include "runtime/CudaApi.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace lazyfuse::runtime::device_select {

namespace {

constexpr int kThreads = 256;
// A thread's share of a tile: four 16-byte vectors, all loaded before any is used, so that a block has 16 KiB in
// flight (as the generated scan's tiles, codegen/Schedule.h).
constexpr int kVectors = 4;
constexpr int kTileBytes = kThreads * kVectors * 16;
template <class T> constexpr long long kTileElements = kTileBytes / (long long)sizeof(T);

// The tickets: word 0 numbers the tiles in the order their blocks start (so a tile's predecessors have all started
// and its look-back cannot wait for a block that is not resident), word 1 counts the finished blocks, then a status
// word per tile: a flag in the top two bits (0: nothing yet, kAggregate: the tile's own count, kInclusive: the count
// up to and including the tile) and the count below. One 64-bit store publishes both, one load reads both.
constexpr int kCounterWords = 2;
constexpr unsigned long long kAggregate = 1ull << 62, kInclusive = 2ull << 62, kCountMask = (1ull << 62) - 1;
// Nanoseconds between two reads of a predecessor's status that was not published yet: polling without a pause loads
// the L2 slices that hold the statuses, and with them every tile's publishing.
constexpr int kPollNs = 200;

template <class T> struct ComparesTo {
  Comparison comparison;
  T threshold;
  __device__ __forceinline__ bool operator()(T v) const {
    switch (comparison) {
    case Comparison::Equal: return v == threshold;
    case Comparison::NotEqual: return v != threshold;
    case Comparison::Less: return v < threshold;
    case Comparison::LessEqual: return v <= threshold;
    case Comparison::Greater: return v > threshold;
    case Comparison::GreaterEqual: return v >= threshold;
    }
    return false;
  }
};

__device__ __forceinline__ unsigned long long load_status(const unsigned long long* status) {
  return *static_cast<const volatile unsigned long long*>(status);
}
__device__ __forceinline__ void publish(unsigned long long* status, unsigned long long word) {
  *static_cast<volatile unsigned long long*>(status) = word;
}

// The count of the tiles before tile t > 0, by warp 0 (CUB's decoupled look-back, Merrill and Garland 2016): the warp
// reads the statuses of the 32 tiles before a window's end, waits until each has published something, adds the
// counts from the nearest tile back to the nearest inclusive one, and moves the window back when none was inclusive.
// Counts are integers, so the order of the additions does not matter.
__device__ long long preceding_count(const unsigned long long* status, long long t, int lane) {
  long long before = 0;
  for (long long end = t - 1;; end -= 32) {
    const long long q = end - lane;
    unsigned long long s = q >= 0 ? load_status(status + q) : kInclusive;
    while (__any_sync(0xFFFFFFFFu, s < kAggregate)) {
      __nanosleep(kPollNs);
      if (s < kAggregate) s = load_status(status + q);
    }
    const unsigned int inclusive = __ballot_sync(0xFFFFFFFFu, s >= kInclusive);
    const int stop = inclusive != 0 ? __ffs(static_cast<int>(inclusive)) - 1 : 31;
    long long c = lane <= stop ? static_cast<long long>(s & kCountMask) : 0;
    for (int offset = 16; offset > 0; offset >>= 1) c += __shfl_xor_sync(0xFFFFFFFFu, c, offset);
    before += c;
    if (inclusive != 0) return before;
  }
}

// One tile of x[x op s]. Thread j holds vectors j, j + 256, j + 512, j + 768 of the tile (coalesced loads), so the
// tile's order of its elements is (vector row k, thread j, element e of the vector): the selected ones are ranked in
// that order by one block-wide scan of four 16-bit counts packed into a 64-bit word (a row's count is at most
// 256 * 4), gathered in shared memory, and written from there as one contiguous run (coalesced stores).
// kVectorLoads: x is 16-byte aligned (a tile that ends past n reads element by element).
template <class T, bool kVectorLoads>
__global__ void __launch_bounds__(kThreads)
    lf_select_compared(const T* __restrict__ x, long long n, T* __restrict__ out, ComparesTo<T> keep,
                       unsigned long long* tickets, long long tiles, unsigned long long* count_to_host) {
  constexpr int E = 16 / int(sizeof(T)), I = kVectors * E;
  constexpr long long kTile = kTileElements<T>;
  __shared__ T staged[kTile];
  __shared__ unsigned long long warp_counts[kThreads / 32];
  __shared__ long long tile_sm, prefix_sm;
  __shared__ bool last_sm;
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  unsigned long long* status = tickets + kCounterWords;

  if (threadIdx.x == 0) tile_sm = static_cast<long long>(atomicAdd(tickets, 1ull));
  __syncthreads();
  const long long t = tile_sm, base = t * kTile;

  T v[I];
  unsigned int kept = 0; // bit k * E + e: element e of the thread's vector k is selected
  if (kVectorLoads && base + kTile <= n) {
    uint4 raw[kVectors];
#pragma unroll
    for (int k = 0; k < kVectors; ++k)
      raw[k] = __ldcs(reinterpret_cast<const uint4*>(x + base) + k * kThreads + threadIdx.x);
#pragma unroll
    for (int k = 0; k < kVectors; ++k) std::memcpy(v + k * E, &raw[k], 16);
#pragma unroll
    for (int j = 0; j < I; ++j) kept |= unsigned(keep(v[j])) << j;
  } else {
#pragma unroll
    for (int k = 0; k < kVectors; ++k)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const long long i = base + (long long)(k * kThreads + int(threadIdx.x)) * E + e;
        v[k * E + e] = T(0);
        if (i < n) {
          v[k * E + e] = x[i];
          kept |= unsigned(keep(v[k * E + e])) << (k * E + e);
        }
      }
  }

  // Four counts (a vector row each) in 16-bit fields, scanned across the block at once.
  unsigned long long counts = 0;
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
    counts += static_cast<unsigned long long>(__popc((kept >> (k * E)) & ((1u << E) - 1u))) << (16 * k);
  unsigned long long inclusive = counts;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    const unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, inclusive, offset);
    if (lane >= offset) inclusive += y;
  }
  if (lane == 31) warp_counts[warp] = inclusive;
  __syncthreads();
  unsigned long long before = 0, total = 0;
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) {
    const unsigned long long c = warp_counts[w];
    before += w < warp ? c : 0;
    total += c;
  }
  const unsigned long long exclusive = before + inclusive - counts;
  int row_start = 0; // selected elements of the tile's rows before row k
#pragma unroll
  for (int k = 0; k < kVectors; ++k) {
    int p = row_start + int((exclusive >> (16 * k)) & 0xFFFFu);
#pragma unroll
    for (int e = 0; e < E; ++e)
      if ((kept >> (k * E + e)) & 1u) staged[p++] = v[k * E + e];
    row_start += int((total >> (16 * k)) & 0xFFFFu);
  }
  const int tile_count = row_start;

  if (warp == 0) {
    long long prefix = 0;
    if (t == 0) {
      if (lane == 0) publish(status, kInclusive | static_cast<unsigned long long>(tile_count));
    } else {
      if (lane == 0) publish(status + t, kAggregate | static_cast<unsigned long long>(tile_count));
      prefix = preceding_count(status, t, lane);
      if (lane == 0) publish(status + t, kInclusive | static_cast<unsigned long long>(prefix + tile_count));
    }
    if (lane == 0) prefix_sm = prefix;
  }
  __syncthreads();
  const long long prefix = prefix_sm;
  for (int i = int(threadIdx.x); i < tile_count; i += kThreads) __stcs(out + prefix + i, staged[i]);

  // The last block to finish: every look-back is over, so it may hand the count to the host and clear the tickets.
  if (threadIdx.x == 0) {
    __threadfence();
    last_sm = atomicAdd(tickets + 1, 1ull) == static_cast<unsigned long long>(tiles - 1);
  }
  __syncthreads();
  if (!last_sm) return;
  if (threadIdx.x == 0) {
    __threadfence();
    volatile unsigned long long* host = count_to_host;
    host[0] = load_status(status + tiles - 1) & kCountMask;
    __threadfence_system(); // the count before the word the host polls
    host[1] = 1;
  }
  __syncthreads(); // the last status read before it is cleared
  for (long long q = threadIdx.x; q < tiles + kCounterWords; q += kThreads) tickets[q] = 0;
}

template <class T>
void launch(const Compared& c, T threshold, unsigned char* tickets, std::uint64_t* count_to_host, cudaStream_t stream) {
  const long long tiles = (c.n + kTileElements<T> - 1) / kTileElements<T>;
  const ComparesTo<T> keep{c.comparison, threshold};
  const auto* x = static_cast<const T*>(c.values);
  auto* out = static_cast<T*>(c.out);
  auto* words = reinterpret_cast<unsigned long long*>(tickets);
  auto* host = reinterpret_cast<unsigned long long*>(count_to_host);
  if (reinterpret_cast<std::uintptr_t>(x) % 16 == 0)
    lf_select_compared<T, true><<<unsigned(tiles), kThreads, 0, stream>>>(x, c.n, out, keep, words, tiles, host);
  else
    lf_select_compared<T, false><<<unsigned(tiles), kThreads, 0, stream>>>(x, c.n, out, keep, words, tiles, host);
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
}

std::int64_t tile_elements_of(ComparedType type) {
  switch (type) {
  case ComparedType::Float32: return kTileElements<float>;
  case ComparedType::Float64: return kTileElements<double>;
  case ComparedType::Int32: return kTileElements<std::int32_t>;
  case ComparedType::Int64: return kTileElements<std::int64_t>;
  }
  throw Error("device_select: no comparison of that type");
}

} // namespace

std::size_t ticket_bytes(const Compared& c) {
  if (c.n < 1) throw Error("device_select: a selection needs at least one element, got " + std::to_string(c.n));
  const std::int64_t tile = tile_elements_of(c.type);
  return std::size_t(kCounterWords + (c.n + tile - 1) / tile) * sizeof(unsigned long long);
}

void select_compared(const Compared& c, unsigned char* tickets, std::uint64_t* count_to_host, cudaStream_t stream) {
  (void)ticket_bytes(c); // checks n and the type
  switch (c.type) {
  case ComparedType::Float32: return launch<float>(c, float(c.threshold.real), tickets, count_to_host, stream);
  case ComparedType::Float64: return launch<double>(c, c.threshold.real, tickets, count_to_host, stream);
  case ComparedType::Int32:
    return launch<std::int32_t>(c, std::int32_t(c.threshold.integer), tickets, count_to_host, stream);
  case ComparedType::Int64: return launch<std::int64_t>(c, c.threshold.integer, tickets, count_to_host, stream);
  }
}

} // namespace lazyfuse::runtime::device_select
