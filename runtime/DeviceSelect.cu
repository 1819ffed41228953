// The one-pass selection of runtime/DeviceSelect.h, compiled by nvcc with the CUB kernels (runtime/CMakeLists.txt).
#include "runtime/DeviceSelect.h"

#include "graph/Assert.h"
#include "runtime/CudaApi.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace lazyfuse::runtime::device_select {

namespace {

constexpr int kThreads = 256;
// A thread's share of a tile: eight 16-byte vectors, all loaded before any is used, so that a block has 32 KiB in
// flight. Measured on an H100 for 2^25 float32 (docs/results/2026-12-07c/select_experiment.cu): 0.0936 ms with
// eight, 0.1025 ms with four, 0.1265 ms with two; 128 x 8 as fast as 256 x 8 (cub::DeviceSelect::If: 0.0952 ms).
constexpr int kVectors = 8;
constexpr int kTileBytes = kThreads * kVectors * 16;
template <class T> constexpr long long kTileElements = kTileBytes / (long long)sizeof(T);

// A tile's status word: a flag in the top two bits (kAggregate: the tile's own count, kInclusive: the count up to
// and including the tile), the launch's epoch in the next kEpochBits, the count in the low kCountBits. One 64-bit
// store publishes all three, one load reads them. A word of another epoch is unwritten: the buffer keeps earlier
// launches' words (Executor::tagged_tickets), so nothing needs clearing, which cost every block a fence, an atomic
// and a barrier at its end (0.1175 against 0.1025 ms in the experiment). Tiles are numbered by blockIdx.x, as in
// CUB's look-back: blocks start in that order, so a tile's predecessors have all started (an atomic ticket cost
// 0.0111 ms more).
constexpr int kCountBits = 40, kEpochBits = 22;
constexpr unsigned long long kAggregate = 1ull << 62, kInclusive = 2ull << 62, kFlags = 3ull << 62;
constexpr unsigned long long kCountMask = (1ull << kCountBits) - 1, kEpochMask = (1ull << kEpochBits) - 1;
// Nanoseconds between two reads of a predecessor's status that was not published yet: polling without a pause loads
// the L2 slices that hold the statuses, and with them every tile's publishing (100 to 400 ns measured alike).
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
__device__ __forceinline__ bool published(unsigned long long s, unsigned long long epoch) {
  return (s & kFlags) != 0 && ((s >> kCountBits) & kEpochMask) == epoch;
}

// The count of the tiles before tile t > 0, by warp 0 (CUB's decoupled look-back, Merrill and Garland 2016): the warp
// reads the statuses of the 32 tiles before a window's end, waits until each has published something, adds the
// counts from the nearest tile back to the nearest inclusive one, and moves the window back when none was inclusive.
// Counts are integers, so the order of the additions does not matter.
__device__ long long preceding_count(const unsigned long long* status, long long t, int lane,
                                     unsigned long long epoch) {
  long long before = 0;
  for (long long end = t - 1;; end -= 32) {
    const long long q = end - lane;
    unsigned long long s = q >= 0 ? load_status(status + q) : (kInclusive | epoch << kCountBits);
    while (__any_sync(0xFFFFFFFFu, !published(s, epoch))) {
      __nanosleep(kPollNs);
      if (!published(s, epoch)) s = load_status(status + q);
    }
    const unsigned int inclusive = __ballot_sync(0xFFFFFFFFu, (s & kFlags) == kInclusive);
    const int stop = inclusive != 0 ? __ffs(static_cast<int>(inclusive)) - 1 : 31;
    long long c = lane <= stop ? static_cast<long long>(s & kCountMask) : 0;
    for (int offset = 16; offset > 0; offset >>= 1) c += __shfl_xor_sync(0xFFFFFFFFu, c, offset);
    before += c;
    if (inclusive != 0) return before;
  }
}

// One tile of x[x op s]. Thread j holds vectors j, j + 256, ..., j + 7 * 256 of the tile (coalesced loads), so the
// tile's order of its elements is (vector row k, thread j, element e of the vector): the selected ones are ranked in
// that order by a block-wide scan of the rows' counts, four 16-bit counts packed in each 64-bit word (a row's count
// is at most 256 * 4), gathered in shared memory, and written from there as one contiguous run (coalesced stores).
// kVectorLoads: x is 16-byte aligned (a tile that ends past n reads element by element). The last tile hands the
// total count to the host once its look-back has found it.
template <class T, bool kVectorLoads>
__global__ void __launch_bounds__(kThreads)
    lf_select_compared(const T* __restrict__ x, long long n, T* __restrict__ out, ComparesTo<T> keep,
                       unsigned long long* status, unsigned long long epoch, unsigned long long* count_to_host) {
  constexpr int E = 16 / int(sizeof(T)), I = kVectors * E, kWords = kVectors / 4, kWarps = kThreads / 32;
  constexpr long long kTile = kTileElements<T>;
  static_assert(I <= 32 && kVectors % 4 == 0, "a thread's selection is one 32-bit word; rows pack four a word");
  __shared__ T staged[kTile];
  __shared__ unsigned long long warp_counts[kWarps][kWords];
  __shared__ long long prefix_sm;
  const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
  const long long t = blockIdx.x, base = t * kTile;

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

  unsigned long long counts[kWords], inclusive[kWords];
#pragma unroll
  for (int w = 0; w < kWords; ++w) counts[w] = 0;
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
    counts[k / 4] += static_cast<unsigned long long>(__popc((kept >> (k * E)) & ((1u << E) - 1u))) << (16 * (k % 4));
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    inclusive[w] = counts[w];
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
      const unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, inclusive[w], offset);
      if (lane >= offset) inclusive[w] += y;
    }
    if (lane == 31) warp_counts[warp][w] = inclusive[w];
  }
  __syncthreads();
  int row_start = 0; // selected elements of the tile's rows before row k
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    unsigned long long before = 0, total = 0;
#pragma unroll
    for (int q = 0; q < kWarps; ++q) {
      const unsigned long long c = warp_counts[q][w];
      before += q < warp ? c : 0;
      total += c;
    }
    const unsigned long long exclusive = before + inclusive[w] - counts[w];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int k = 4 * w + r;
      int p = row_start + int((exclusive >> (16 * r)) & 0xFFFFu);
#pragma unroll
      for (int e = 0; e < E; ++e)
        if ((kept >> (k * E + e)) & 1u) staged[p++] = v[k * E + e];
      row_start += int((total >> (16 * r)) & 0xFFFFu);
    }
  }
  const int tile_count = row_start;

  if (warp == 0) {
    const unsigned long long tag = epoch << kCountBits;
    long long prefix = 0;
    if (t == 0) {
      if (lane == 0) publish(status, kInclusive | tag | static_cast<unsigned long long>(tile_count));
    } else {
      if (lane == 0) publish(status + t, kAggregate | tag | static_cast<unsigned long long>(tile_count));
      prefix = preceding_count(status, t, lane, epoch);
      if (lane == 0) publish(status + t, kInclusive | tag | static_cast<unsigned long long>(prefix + tile_count));
    }
    if (lane == 0) {
      prefix_sm = prefix;
      if (t == gridDim.x - 1) {
        volatile unsigned long long* host = count_to_host;
        host[0] = static_cast<unsigned long long>(prefix + tile_count);
        __threadfence_system(); // the count before the word the host polls
        host[1] = 1;
      }
    }
  }
  __syncthreads();
  const long long prefix = prefix_sm;
  for (int i = int(threadIdx.x); i < tile_count; i += kThreads) __stcs(out + prefix + i, staged[i]);
}

template <class T>
void launch(const Compared& c, T threshold, Statuses status, std::uint64_t* count_to_host, cudaStream_t stream) {
  const long long tiles = (c.n + kTileElements<T> - 1) / kTileElements<T>;
  const ComparesTo<T> keep{c.comparison, threshold};
  const auto* x = static_cast<const T*>(c.values);
  auto* out = static_cast<T*>(c.out);
  auto* words = reinterpret_cast<unsigned long long*>(status.data);
  auto* host = reinterpret_cast<unsigned long long*>(count_to_host);
  if (reinterpret_cast<std::uintptr_t>(x) % 16 == 0)
    lf_select_compared<T, true><<<unsigned(tiles), kThreads, 0, stream>>>(x, c.n, out, keep, words, status.epoch, host);
  else
    lf_select_compared<T, false>
        <<<unsigned(tiles), kThreads, 0, stream>>>(x, c.n, out, keep, words, status.epoch, host);
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

std::size_t status_bytes(const Compared& c) {
  if (c.n < 1) throw Error("device_select: a selection needs at least one element, got " + std::to_string(c.n));
  if (c.n > (std::int64_t(1) << kCountBits))
    throw Error("device_select: a selection counts at most 2^40 elements, got " + std::to_string(c.n));
  const std::int64_t tile = tile_elements_of(c.type);
  return std::size_t((c.n + tile - 1) / tile) * sizeof(unsigned long long);
}

std::uint32_t epoch_limit() {
  return std::uint32_t(kEpochMask);
}

void select_compared(const Compared& c, Statuses status, std::uint64_t* count_to_host, cudaStream_t stream) {
  (void)status_bytes(c); // checks n and the type
  LAZYFUSE_ASSERT(status.epoch >= 1 && status.epoch <= epoch_limit(), "a selection's epoch outside [1, limit]");
  switch (c.type) {
  case ComparedType::Float32: return launch<float>(c, float(c.threshold.real), status, count_to_host, stream);
  case ComparedType::Float64: return launch<double>(c, c.threshold.real, status, count_to_host, stream);
  case ComparedType::Int32:
    return launch<std::int32_t>(c, std::int32_t(c.threshold.integer), status, count_to_host, stream);
  case ComparedType::Int64: return launch<std::int64_t>(c, c.threshold.integer, status, count_to_host, stream);
  }
}

} // namespace lazyfuse::runtime::device_select
