// Why is lazyfuse's one-pass x[x > 0] (runtime/DeviceSelect.cu at ac8fde4: 121-128 us on an H100 for 2^25 float32)
// slower than cub::DeviceSelect::If (102-109 us)? A standalone experiment (not part of the library): a replica of
// the library's kernel with switches. THREADS x VECS 16-byte vectors a thread; TICKET: tiles numbered by an atomic
// ticket (else blockIdx.x, as CUB); END: 0 = every block counts itself done at its end (a fence, an atomic and a
// barrier; the last block hands the count to the host and clears the tickets, the library's form), 1 = warp 0 counts
// the block done right after publishing its inclusive count, 2 = no counter at all: status words tagged with the
// launch's epoch, so nothing needs clearing, and the last tile hands the count to the host; POLL_NS: the pause
// between two reads of an unpublished status. CUB's select and a copy kernel are the references. Every variant's
// output is compared with the host's selection (count and bits). CUDA events, median of 7 trials of 20 launches.
//   nvcc -O3 -std=c++17 -arch=sm_90 select_experiment.cu -o select_experiment && ./select_experiment
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                                     \
  do {                                                                                                               \
    cudaError_t e_ = (x);                                                                                            \
    if (e_ != cudaSuccess) {                                                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                        \
      std::exit(1);                                                                                                  \
    }                                                                                                                \
  } while (0)

constexpr unsigned long long kAggregate = 1ull << 62, kInclusive = 2ull << 62, kFlags = 3ull << 62;
constexpr unsigned long long kCountMask = (1ull << 40) - 1;
constexpr int kEpochShift = 40;

__device__ __forceinline__ unsigned long long ld_status(const unsigned long long* p) {
  return *static_cast<const volatile unsigned long long*>(p);
}
__device__ __forceinline__ void st_status(unsigned long long* p, unsigned long long w) {
  *static_cast<volatile unsigned long long*>(p) = w;
}

// A status word of this launch (END 2: its epoch in bits 40-61; else the epoch is 0 and the words start zeroed).
__device__ __forceinline__ bool published(unsigned long long s, unsigned long long epoch) {
  return (s & kFlags) != 0 && ((s >> kEpochShift) & ((1ull << 22) - 1)) == epoch;
}

template <int POLL_NS>
__device__ long long preceding(const unsigned long long* status, long long t, int lane, unsigned long long epoch) {
  long long before = 0;
  for (long long end = t - 1;; end -= 32) {
    const long long q = end - lane;
    unsigned long long s = q >= 0 ? ld_status(status + q) : (kInclusive | epoch << kEpochShift);
    while (__any_sync(0xFFFFFFFFu, !published(s, epoch))) {
      if (POLL_NS > 0) __nanosleep(POLL_NS);
      if (!published(s, epoch)) s = ld_status(status + q);
    }
    const unsigned inc = __ballot_sync(0xFFFFFFFFu, (s & kFlags) == kInclusive);
    const int stop = inc ? __ffs(int(inc)) - 1 : 31;
    long long c = lane <= stop ? (long long)(s & kCountMask) : 0;
    for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xFFFFFFFFu, c, o);
    before += c;
    if (inc) return before;
  }
}

template <int THREADS, int VECS, bool TICKET, int END, int POLL_NS>
__global__ void __launch_bounds__(THREADS)
    select_gt0(const float* __restrict__ x, long long n, float* __restrict__ out, unsigned long long* tickets,
               long long tiles, unsigned long long* host, unsigned long long epoch) {
  constexpr int E = 4, I = VECS * E, W = (VECS + 3) / 4, WARPS = THREADS / 32;
  constexpr long long TILE = (long long)THREADS * I;
  static_assert(I <= 32, "a thread's selection bits fit one word");
  __shared__ float staged[TILE];
  __shared__ unsigned long long warp_counts[WARPS][W];
  __shared__ long long tile_sm, prefix_sm;
  __shared__ bool last_sm;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* status = tickets + 2;
  long long t;
  if (TICKET) {
    if (threadIdx.x == 0) tile_sm = (long long)atomicAdd(tickets, 1ull);
    __syncthreads();
    t = tile_sm;
  } else {
    t = blockIdx.x;
  }
  const long long base = t * TILE;
  float v[I];
  unsigned kept = 0;
  if (base + TILE <= n) {
    uint4 raw[VECS];
#pragma unroll
    for (int k = 0; k < VECS; ++k) raw[k] = __ldcs(reinterpret_cast<const uint4*>(x + base) + k * THREADS + threadIdx.x);
#pragma unroll
    for (int k = 0; k < VECS; ++k) std::memcpy(v + k * E, &raw[k], 16);
#pragma unroll
    for (int j = 0; j < I; ++j) kept |= unsigned(v[j] > 0.0f) << j;
  } else {
#pragma unroll
    for (int k = 0; k < VECS; ++k)
#pragma unroll
      for (int e = 0; e < E; ++e) {
        const long long i = base + (long long)(k * THREADS + threadIdx.x) * E + e;
        v[k * E + e] = 0.0f;
        if (i < n) {
          v[k * E + e] = x[i];
          kept |= unsigned(v[k * E + e] > 0.0f) << (k * E + e);
        }
      }
  }
  unsigned long long counts[W], incl[W];
#pragma unroll
  for (int w = 0; w < W; ++w) counts[w] = 0;
#pragma unroll
  for (int k = 0; k < VECS; ++k)
    counts[k / 4] += (unsigned long long)__popc((kept >> (k * E)) & 0xFu) << (16 * (k % 4));
#pragma unroll
  for (int w = 0; w < W; ++w) {
    incl[w] = counts[w];
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const unsigned long long y = __shfl_up_sync(0xFFFFFFFFu, incl[w], o);
      if (lane >= o) incl[w] += y;
    }
    if (lane == 31) warp_counts[warp][w] = incl[w];
  }
  __syncthreads();
  int row_start = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    unsigned long long before = 0, total = 0;
#pragma unroll
    for (int q = 0; q < WARPS; ++q) {
      const unsigned long long c = warp_counts[q][w];
      before += q < warp ? c : 0;
      total += c;
    }
    const unsigned long long excl = before + incl[w] - counts[w];
#pragma unroll
    for (int r = 0; r < 4 && 4 * w + r < VECS; ++r) {
      const int k = 4 * w + r;
      int p = row_start + int((excl >> (16 * r)) & 0xFFFFu);
#pragma unroll
      for (int e = 0; e < E; ++e)
        if ((kept >> (k * E + e)) & 1u) staged[p++] = v[k * E + e];
      row_start += int((total >> (16 * r)) & 0xFFFFu);
    }
  }
  const int tile_count = row_start;
  const unsigned long long tag = epoch << kEpochShift;
  if (warp == 0) {
    long long prefix = 0;
    if (t == 0) {
      if (lane == 0) st_status(status, kInclusive | tag | (unsigned long long)tile_count);
    } else {
      if (lane == 0) st_status(status + t, kAggregate | tag | (unsigned long long)tile_count);
      prefix = preceding<POLL_NS>(status, t, lane, epoch);
      if (lane == 0) st_status(status + t, kInclusive | tag | (unsigned long long)(prefix + tile_count));
    }
    if (lane == 0) {
      prefix_sm = prefix;
      if (END == 1) {
        __threadfence();
        const bool last = atomicAdd(tickets + 1, 1ull) == (unsigned long long)(tiles - 1);
        last_sm = last;
        if (last) {
          __threadfence();
          volatile unsigned long long* h = host;
          h[0] = ld_status(status + tiles - 1) & kCountMask;
          __threadfence_system();
          h[1] = 1;
        }
      }
      if (END == 2 && t == tiles - 1) {
        volatile unsigned long long* h = host;
        h[0] = (unsigned long long)(prefix + tile_count);
        __threadfence_system();
        h[1] = 1;
      }
    }
  }
  __syncthreads();
  const long long prefix = prefix_sm;
  for (int i = threadIdx.x; i < tile_count; i += THREADS) __stcs(out + prefix + i, staged[i]);
  if (END == 0) {
    if (threadIdx.x == 0) {
      __threadfence();
      last_sm = atomicAdd(tickets + 1, 1ull) == (unsigned long long)(tiles - 1);
    }
    __syncthreads();
    if (!last_sm) return;
    if (threadIdx.x == 0) {
      __threadfence();
      volatile unsigned long long* h = host;
      h[0] = ld_status(status + tiles - 1) & kCountMask;
      __threadfence_system();
      h[1] = 1;
    }
    __syncthreads();
    for (long long q = threadIdx.x; q < tiles + 2; q += THREADS) tickets[q] = 0;
  } else if (END == 1) {
    if (!last_sm) return;
    for (long long q = threadIdx.x; q < tiles + 2; q += THREADS) tickets[q] = 0;
  }
}

__global__ void copy_kernel(const float4* __restrict__ a, float4* __restrict__ b, long long n4) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
    b[i] = a[i];
}

struct GreaterThanZero {
  __device__ bool operator()(float v) const { return v > 0.0f; }
};

template <class F> float time_ms(F&& launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> trials;
  launch();
  CHECK(cudaDeviceSynchronize());
  for (int trial = 0; trial < 7; ++trial) {
    CHECK(cudaEventRecord(a));
    for (int k = 0; k < 20; ++k) launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    trials.push_back(ms / 20);
  }
  CHECK(cudaGetLastError());
  std::sort(trials.begin(), trials.end());
  return trials[3];
}

long long n;
float *x, *out;
unsigned long long *tickets, *host;
std::vector<float> want;
double copy_ms;

template <int THREADS, int VECS, bool TICKET, int END, int POLL_NS> void variant(const char* name) {
  const long long tile = (long long)THREADS * VECS * 4, tiles = (n + tile - 1) / tile;
  CHECK(cudaMemset(tickets, 0, (tiles + 2) * 8));
  static unsigned long long epoch = 0;
  const auto launch = [&] {
    epoch = END == 2 ? epoch % ((1ull << 22) - 1) + 1 : 0;
    host[1] = 0;
    select_gt0<THREADS, VECS, TICKET, END, POLL_NS>
        <<<unsigned(tiles), THREADS>>>(x, n, out, tickets, tiles, host, epoch);
  };
  CHECK(cudaMemset(out, 0xFF, n * 4));
  launch();
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGetLastError());
  const long long k = (long long)host[0];
  std::vector<float> got(want.size());
  if (k == (long long)want.size()) CHECK(cudaMemcpy(got.data(), out, k * 4, cudaMemcpyDeviceToHost));
  const bool ok = host[1] == 1 && k == (long long)want.size() && std::memcmp(got.data(), want.data(), k * 4) == 0;
  const float ms = time_ms(launch);
  const double bytes = double(n) * 4 + double(want.size()) * 4;
  std::printf("%-44s %8.4f ms  %5.1f%% of the copy kernel's rate  %s\n", name, ms,
              100.0 * (bytes / ms) / (2.0 * n * 4 / copy_ms), ok ? "bits ok" : "WRONG");
}

int main() {
  n = 1ll << 25;
  std::vector<float> h(n);
  unsigned long long s = 88172645463325252ull;
  for (long long i = 0; i < n; ++i) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    h[i] = float((s >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
  }
  for (float v : h)
    if (v > 0.0f) want.push_back(v);
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&out, n * 4));
  CHECK(cudaMalloc(&tickets, (n / 512 + 16) * 8));
  CHECK(cudaHostAlloc(&host, 64, cudaHostAllocMapped));
  CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, 2^25 float32, %zu selected (%.1f%%)\n", p.name, want.size(), 100.0 * want.size() / n);
  copy_ms = time_ms([&] { copy_kernel<<<p.multiProcessorCount * 8, 256>>>((const float4*)x, (float4*)out, n / 4); });
  std::printf("%-44s %8.4f ms\n", "copy kernel (2^25 float32 each way)", copy_ms);
  {
    long long* d_k;
    CHECK(cudaMalloc(&d_k, 8));
    size_t bytes = 0;
    CHECK(cub::DeviceSelect::If(nullptr, bytes, x, out, d_k, n, GreaterThanZero{}));
    void* temp;
    CHECK(cudaMalloc(&temp, bytes));
    const float ms = time_ms([&] { CHECK(cub::DeviceSelect::If(temp, bytes, x, out, d_k, n, GreaterThanZero{})); });
    long long k = 0;
    CHECK(cudaMemcpy(&k, d_k, 8, cudaMemcpyDeviceToHost));
    std::printf("%-44s %8.4f ms  %5.1f%% of the copy kernel's rate  %s\n", "cub::DeviceSelect::If", ms,
                100.0 * ((n * 4.0 + want.size() * 4.0) / ms) / (2.0 * n * 4 / copy_ms),
                k == (long long)want.size() ? "count ok" : "WRONG");
  }
  variant<256, 4, true, 0, 200>("A library: 256x4, ticket, end counter");
  variant<256, 4, true, 1, 200>("B 256x4, ticket, counted after look-back");
  variant<256, 4, false, 1, 200>("C 256x4, blockIdx, counted after look-back");
  variant<256, 4, false, 2, 200>("D 256x4, blockIdx, epochs");
  variant<256, 4, false, 2, 100>("E 256x4, blockIdx, epochs, poll 100");
  variant<256, 4, false, 2, 0>("F 256x4, blockIdx, epochs, no pause");
  variant<256, 4, false, 2, 400>("G 256x4, blockIdx, epochs, poll 400");
  variant<256, 8, false, 2, 200>("H 256x8, blockIdx, epochs");
  variant<512, 4, false, 2, 200>("I 512x4, blockIdx, epochs");
  variant<128, 8, false, 2, 200>("J 128x8, blockIdx, epochs");
  variant<256, 2, false, 2, 200>("K 256x2, blockIdx, epochs");
  variant<384, 4, false, 2, 200>("L 384x4, blockIdx, epochs");
  return 0;
}
