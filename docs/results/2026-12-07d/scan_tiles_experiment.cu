// Session 39 (issue 18): with the ticket and the clearing gone (tile = blockIdx.x, statuses tagged with the launch's
// epoch, e90efde), which tile shape and which pauses make lazyfuse's tiled float32 scan fastest? A standalone
// experiment, not part of the library: `tiled` is the kernel the printer generates for cumsum of float32 (warp-
// transposed loads, a thread's ITEMS values scanned in registers, Kogge-Stone over lanes and warps, warp 0's grouped
// look-back of codegen/CudaPrinter.cpp's lf_scan_look_back over one 64-bit word a tile), with THREADS x ITEMS a tile,
// a minimum of resident blocks, the first pause and the poll pause as switches, and CS: streaming loads and stores
// (__ldcs/__stcs). Every variant's output is checked bit for bit against the grouped order computed on the host for
// its tile shape. CUB's InclusiveSum (not deterministic for floats) and a copy kernel are the references. CUDA
// events, median of 5 trials of 20 launches.
//   nvcc -O3 -std=c++17 -arch=sm_90 scan_tiles_experiment.cu -o scan_tiles && ./scan_tiles
//   (call 3 of session 39: the same with -DSTREAMING_SWEEP, the streaming variants across pauses and shapes)
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
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

constexpr int kSavedGroups = 64;

// A tile's status: (epoch << 2 | flag) in the high half, the value's bits in the low; another epoch reads as flag 0.
struct Words {
  volatile unsigned long long* words;
  unsigned epoch;
  __device__ unsigned long long load(long long t) const { return words[t]; }
  __device__ unsigned flag(unsigned long long r) const {
    const unsigned hi = (unsigned)(r >> 32);
    return hi >> 2 == epoch ? (hi & 3u) : 0u;
  }
  __device__ static float value(unsigned long long r) { return __uint_as_float((unsigned)r); }
  __device__ void publish(long long t, unsigned f, float v) const {
    words[t] = (unsigned long long)(epoch << 2 | f) << 32 | __float_as_uint(v);
  }
};

template <class F> __device__ __forceinline__ float warp_inclusive(float v, int lane, F combine) {
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float y = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off) v = combine(y, v);
  }
  return v;
}
__device__ __forceinline__ float shfl_from(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }

template <int POLL_NS> __device__ __forceinline__ unsigned long long wait_word(const Words& s, long long t) {
  unsigned long long r = s.load(t);
  while (s.flag(r) == 0u) {
    __nanosleep(POLL_NS);
    r = s.load(t);
  }
  return r;
}
template <int POLL_NS, class F>
__device__ __forceinline__ float group_sum(const Words& s, long long first, int lane, F combine, bool* inclusive) {
  const unsigned long long r = wait_word<POLL_NS>(s, first + lane);
  const float own = Words::value(r);
  const float sum = warp_inclusive(own, lane, combine);
  *inclusive = __shfl_sync(0xffffffffu, s.flag(r), 31) == 2u;
  return shfl_from(*inclusive ? own : sum, 31);
}
// lf_scan_look_back of codegen/CudaPrinter.cpp, for float sums.
template <int FIRST_NS, int POLL_NS, class F>
__device__ float look_back(const Words& s, long long t, long long tr, float agg, int lane, F combine, float* saved) {
  if (lane == 0) s.publish(t, 1u, agg);
  if (tr == 0) return agg;
  if (FIRST_NS > 0) __nanosleep(FIRST_NS);
  const long long row0 = t - tr, g = tr / 32;
  const int gl = (int)(tr % 32);
  float v = agg;
  if (lane < gl) v = Words::value(wait_word<POLL_NS>(s, row0 + g * 32 + lane));
  v = warp_inclusive(v, lane, combine);
  const float before = shfl_from(v, gl > 0 ? gl - 1 : 0), upto = shfl_from(v, gl);
  float prefix = before, inclusive = upto;
  if (g > 0) {
    long long d = 0;
    bool found = false;
    float p;
    for (;; ++d) {
      p = group_sum<POLL_NS>(s, row0 + (g - 1 - d) * 32, lane, combine, &found);
      if (found || d == g - 1) break;
      if (d < kSavedGroups && lane == 0) saved[d] = p;
    }
    __syncwarp();
    for (--d; d >= 0; --d) {
      if (d < kSavedGroups) {
        p = combine(p, saved[d]);
      } else {
        const float sum = group_sum<POLL_NS>(s, row0 + (g - 1 - d) * 32, lane, combine, &found);
        p = found ? sum : combine(p, sum);
      }
    }
    prefix = gl > 0 ? combine(p, before) : p;
    inclusive = combine(p, upto);
  }
  if (gl == 31 && lane == 0) s.publish(t, 2u, inclusive);
  return prefix;
}

template <bool CS> __device__ __forceinline__ float4 load4(const float* p) {
  if constexpr (CS) return __ldcs(reinterpret_cast<const float4*>(p));
  return *reinterpret_cast<const float4*>(p);
}
template <bool CS> __device__ __forceinline__ void store4(float* p, float4 v) {
  if constexpr (CS) __stcs(reinterpret_cast<float4*>(p), v);
  else *reinterpret_cast<float4*>(p) = v;
}

template <int THREADS, int ITEMS, int MINB, int FIRST_NS, int POLL_NS, bool CS>
__global__ void __launch_bounds__(THREADS, MINB)
    tiled(const float* __restrict__ in0, float* __restrict__ out0, int len, unsigned long long* words, unsigned epoch) {
  constexpr int kT = THREADS * ITEMS, kW = 32 * ITEMS, kWarps = THREADS / 32;
  static_assert(ITEMS % 4 == 0, "whole float4 vectors a thread");
  __shared__ float incl[THREADS], warps[kWarps], prefix;
  __shared__ float saved[kSavedGroups];
  __shared__ __align__(16) float xp[kT + kT / 32];
  const int tiles_per_row = (len + kT - 1) / kT;
  const long long t = blockIdx.x, tr = t % tiles_per_row, base = t / tiles_per_row * (long long)len + tr * kT;
  const int count = (int)min((long long)len - tr * kT, (long long)kT), first = (int)threadIdx.x * ITEMS,
            items = count - first;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const bool whole = count - warp * kW >= kW && base % 4 == 0;
  const int xw = warp * kW;
  float s[ITEMS];
  if (whole) {
#pragma unroll
    for (int u = 0; u < ITEMS / 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      const float4 g = load4<CS>(in0 + base + o);
      xp[o + o / 32] = g.x;
      xp[o + 1 + (o + 1) / 32] = g.y;
      xp[o + 2 + (o + 2) / 32] = g.z;
      xp[o + 3 + (o + 3) / 32] = g.w;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) s[j] = xp[(first + j) + (first + j) / 32];
    __syncwarp();
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) s[k] = k < items ? in0[base + first + k] : 0.f;
  }
  const auto add = [](float a, float b) { return a + b; };
  float w = 0.f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (k < items) {
      if (k > 0) s[k] = s[k - 1] + s[k];
      w = s[k];
    }
  w = warp_inclusive(w, lane, add);
  if (lane == 31) warps[warp] = w;
  __syncthreads();
  if (warp == 0) {
    float p = lane < kWarps ? warps[lane] : w;
#pragma unroll
    for (int off = 1; off < kWarps; off <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, p, off);
      if (lane >= off) p = y + p;
    }
    if (lane < kWarps) warps[lane] = p;
  }
  __syncthreads();
  incl[threadIdx.x] = warp > 0 ? warps[warp - 1] + w : w;
  __syncthreads();
  if (warp == 0) {
    const float agg = incl[(count - 1) / ITEMS];
    const float p = look_back<FIRST_NS, POLL_NS>(Words{words, epoch}, t, tr, agg, lane, add, saved);
    if (lane == 0) prefix = p;
  }
  __syncthreads();
  const float excl = threadIdx.x > 0 ? incl[threadIdx.x - 1] : w;
  const float pre = tr > 0 ? prefix : w;
  float r[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    r[k] = threadIdx.x > 0 ? excl + s[k] : s[k];
    if (tr > 0) r[k] = pre + r[k];
    if (!whole && k < items) out0[base + first + k] = r[k];
  }
  if (whole) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) xp[(first + j) + (first + j) / 32] = r[j];
    __syncwarp();
#pragma unroll
    for (int u = 0; u < ITEMS / 4; ++u) {
      const int o = xw + (u * 32 + lane) * 4;
      float4 g;
      g.x = xp[o + o / 32];
      g.y = xp[o + 1 + (o + 1) / 32];
      g.z = xp[o + 2 + (o + 2) / 32];
      g.w = xp[o + 3 + (o + 3) / 32];
      store4<CS>(out0 + base + o, g);
    }
  }
}

// The grouped order on the host for tiles of THREADS x ITEMS (codegen/Schedule.h, "The scan order").
template <int THREADS, int ITEMS> void grouped_reference(const float* x, float* y, int len) {
  constexpr int kT = THREADS * ITEMS, kWarpsT = THREADS / 32;
  const int tiles = (len + kT - 1) / kT;
  std::vector<float> agg(tiles);
  for (int t = 0; t < tiles; ++t) {
    const int count = std::min(kT, len - t * kT);
    float* e = y + size_t(t) * kT;
    std::memcpy(e, x + size_t(t) * kT, size_t(count) * 4);
    const int threads = (count + ITEMS - 1) / ITEMS;
    std::vector<float> w(THREADS), incl(THREADS);
    for (int j = 0; j < threads; ++j) {
      const int own = std::min(ITEMS, count - j * ITEMS);
      for (int k = 1; k < own; ++k) e[j * ITEMS + k] = e[j * ITEMS + k - 1] + e[j * ITEMS + k];
      w[j] = e[j * ITEMS + own - 1];
    }
    for (int off = 1; off < 32; off *= 2)
      for (int l = threads - 1; l >= 0; --l)
        if (l % 32 >= off) w[l] = w[l - off] + w[l];
    std::vector<float> p(kWarpsT);
    const int warps = (threads - 1) / 32;
    for (int q = 0; q < warps; ++q) p[q] = w[q * 32 + 31];
    for (int off = 1; off < kWarpsT; off *= 2)
      for (int q = warps - 1; q >= off; --q) p[q] = p[q - off] + p[q];
    for (int j = 0; j < threads; ++j) incl[j] = j / 32 > 0 ? p[j / 32 - 1] + w[j] : w[j];
    for (int j = 1; j < threads; ++j)
      for (int k = 0; k < std::min(ITEMS, count - j * ITEMS); ++k) e[j * ITEMS + k] = incl[j - 1] + e[j * ITEMS + k];
    agg[t] = incl[threads - 1];
  }
  float gi = 0.f;
  for (int g0 = 0; g0 < tiles; g0 += 32) {
    std::vector<float> pre(agg.begin() + g0, agg.begin() + std::min(tiles, g0 + 32));
    for (int off = 1; off < 32; off *= 2)
      for (int l = int(pre.size()) - 1; l >= off; --l) pre[l] = pre[l - off] + pre[l];
    for (int l = 0; l < int(pre.size()); ++l) {
      const int t = g0 + l;
      if (t == 0) continue;
      const float e = g0 == 0 ? pre[l - 1] : l == 0 ? gi : gi + pre[l - 1];
      float* o = y + size_t(t) * kT;
      for (int k = 0; k < std::min(kT, len - t * kT); ++k) o[k] = e + o[k];
    }
    if (pre.size() == 32) gi = g0 == 0 ? pre[31] : gi + pre[31];
  }
}

__global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, int n4) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) b[i] = a[i];
}

template <class F> float time_ms(F&& launch) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> trials;
  for (int k = 0; k < 5; ++k) {
    CHECK(cudaEventRecord(a));
    for (int i = 0; i < 20; ++i) launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    trials.push_back(ms / 20);
  }
  CHECK(cudaGetLastError());
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  std::sort(trials.begin(), trials.end());
  return trials[2];
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int n = 1 << 25;
  std::vector<float> h(n);
  unsigned seed = 12345u;
  for (auto& v : h) {
    seed = seed * 1664525u + 1013904223u;
    v = float(seed >> 8) / float(1 << 24);
  }
  float *in, *out;
  unsigned long long* words;
  const size_t max_tiles = n / 256 + 64;
  CHECK(cudaMalloc(&in, size_t(n) * 4));
  CHECK(cudaMalloc(&out, size_t(n) * 4));
  CHECK(cudaMalloc(&words, max_tiles * 8));
  CHECK(cudaMemset(words, 0, max_tiles * 8));
  CHECK(cudaMemcpy(in, h.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
  unsigned epoch = 0; // one more every launch, as Executor::tagged_tickets gives them
  const double bytes = 2.0 * n * 4;
  const float copy = time_ms([&] { copy4<<<sms * 8, 256>>>((const float4*)in, (float4*)out, n / 4); });
  std::printf("copy kernel %.4f ms (%.2f TB/s); %d SMs\n", copy, bytes / copy / 1e9, sms);
  size_t temp_bytes = 0;
  cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, in, out, n);
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  std::vector<float> got(n);
  for (int len : {n, 8192}) {
    std::printf("\n== %s ==\n", len == n ? "cumsum of 2^25 float32" : "rows of 8192 (4096 x 8192)");
#define TILED(THREADS, ITEMS, MINB, FIRST, POLL, CS)                                                                 \
  {                                                                                                                  \
    constexpr int kT = THREADS * ITEMS;                                                                              \
    const int tiles = n / len * ((len + kT - 1) / kT);                                                               \
    std::vector<float> ref(n);                                                                                       \
    for (int r0 = 0; r0 < n; r0 += len) grouped_reference<THREADS, ITEMS>(h.data() + r0, ref.data() + r0, len);     \
    auto k = tiled<THREADS, ITEMS, MINB, FIRST, POLL, CS>;                                                           \
    int per_sm = 0;                                                                                                  \
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, THREADS, 0));                                    \
    cudaFuncAttributes attr;                                                                                         \
    CHECK(cudaFuncGetAttributes(&attr, k));                                                                          \
    CHECK(cudaMemset(out, 0xff, size_t(n) * 4));                                                                     \
    const float ms = time_ms([&] { k<<<tiles, THREADS>>>(in, out, len, words, ++epoch); });                          \
    CHECK(cudaMemcpy(got.data(), out, size_t(n) * 4, cudaMemcpyDeviceToHost));                                      \
    const bool same = std::memcmp(got.data(), ref.data(), size_t(n) * 4) == 0;                                       \
    char label[128];                                                                                                 \
    std::snprintf(label, sizeof label, "%d x %d, >= %d (%d/SM), pauses %d/%d%s", THREADS, ITEMS, MINB, per_sm,      \
                  FIRST, POLL, CS ? ", cs" : "");                                                                    \
    std::printf("%-46s %.4f ms  %5.1f%% of copy  regs %3d  %s\n", label, ms, 100.0 * copy / ms, attr.numRegs,      \
                same ? "bits equal its order's" : "BITS DIFFER from its order");                                      \
  }
#ifndef STREAMING_SWEEP // call 1
    TILED(256, 16, 5, 700, 300, false); // the library
    TILED(256, 16, 5, 700, 300, true);
    TILED(256, 16, 5, 400, 300, false);
    TILED(256, 16, 5, 1100, 300, false);
    TILED(256, 16, 5, 1100, 700, false);
    TILED(256, 16, 5, 700, 150, false);
    TILED(256, 16, 5, 700, 600, false);
    TILED(256, 16, 4, 700, 300, false);
    TILED(256, 16, 6, 700, 300, false);
    TILED(128, 16, 1, 700, 300, false);
    TILED(128, 24, 1, 700, 300, false);
    TILED(128, 24, 1, 1100, 700, false);
    TILED(128, 32, 1, 700, 300, false);
    TILED(256, 24, 1, 700, 300, false);
    TILED(256, 32, 1, 700, 300, false);
    TILED(256, 32, 1, 700, 300, true);
    TILED(384, 16, 1, 700, 300, false);
    TILED(512, 16, 1, 700, 300, false);
    TILED(512, 8, 1, 700, 300, false);
    TILED(256, 16, 5, 700, 300, false); // the library again: drift
#else // call 3: -DSTREAMING_SWEEP
    TILED(256, 16, 5, 700, 300, false); // the library
    TILED(256, 16, 5, 700, 300, true);
    TILED(256, 16, 5, 900, 300, true);
    TILED(256, 16, 5, 1100, 300, true);
    TILED(256, 16, 5, 1500, 300, true);
    TILED(256, 16, 5, 1100, 700, true);
    TILED(256, 16, 6, 1100, 300, true);
    TILED(128, 24, 1, 700, 300, true);
    TILED(128, 24, 1, 1100, 700, true);
    TILED(256, 24, 1, 1100, 300, true);
    TILED(256, 32, 1, 1100, 300, true);
    TILED(256, 16, 5, 700, 300, false); // the library again: drift
#endif
    if (len == n) {
      const float ms = time_ms([&] { cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n); });
      std::printf("%-46s %.4f ms  %5.1f%% of copy\n", "CUB DeviceScan::InclusiveSum (not deterministic)", ms,
                  100.0 * copy / ms);
    }
  }
  return 0;
}
