// Experiment for the next session (issue 16; written in session 42, not yet run on a GPU): can a ziggurat, an exact
// method with a cheap common path, bring the float32 standard normal to 60% of the H200's write-only kernel where
// Box-Muller (51%) and Box-Muller through tables (55-58% projected, ../normal-tables) do not?
//
//   nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -o ziggurat ziggurat.cu
//   ./ziggurat --host-check    (no GPU: the sampler's statistics on 2^24 host draws)
//   ./ziggurat                 (checks, then timings: CUDA events, median of 20 after 3 warm-ups, two rounds)
//
// The sampler: Marsaglia and Tsang's ziggurat with 256 strips in Doornik's form (ZIGNOR: the strip's index and the
// uniform from separate bits), one 32-bit Philox word an element as lazyfuse's layout has it (docs/semantics.md,
// "Counters"): the strip i from the low 8 bits, the uniform u in (-1, 1) from the high 24 (u = (s + 1/2) 2^-23, s
// the signed 24-bit field, exact in float32). Fast path: x = u X[i], accepted when |u| < X[i + 1] / X[i]. Else the
// element reads on in its attempt blocks (g, 1 + lane), (g, 1 + lane + 4), ...: the base strip (i = 0) samples the
// tail beyond R (Marsaglia's exponential method), another strip tests the wedge against exp(-x^2 / 2), and a
// rejection starts again with the stream's next word. The slow path uses CUDA's expf/logf here (the library would
// use its own functions, for the CPU's bits); only its cost matters for the timing.
//
// Kernels (the generated loop: 256 threads, 4 groups of 4 elements a thread and trip, streaming 16-byte stores):
//   C     the generated Box-Muller normal (../normal-tables/prelude.cuh)
//   Z1    ziggurat, each rejected element taking its slow path where it falls (a warp waits for its slowest lane)
//   Z3    ziggurat, the trip's 16 fast paths first, then the rejected ones of the trip (fewer divergent passes)
//   Z3P   Z3 on a persistent grid (the 2 KiB table copied to shared memory once a block)
//   P, W  Philox and the uniform only; write-only
#include "../normal-tables/prelude.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                                    \
  do {                                                                                                              \
    cudaError_t e_ = (x);                                                                                           \
    if (e_ != cudaSuccess) {                                                                                        \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_));                                                          \
      std::exit(1);                                                                                                 \
    }                                                                                                               \
  } while (0)

#define HD __host__ __device__ __forceinline__

constexpr int kStrips = 256;
constexpr double kR = 3.6541528853610088, kV = 4.92867323399e-3; // Marsaglia and Tsang's 256-strip constants

// {X[i], X[i + 1] / X[i]} per strip, and X[i]^2 for the wedge.
float h_x[kStrips + 1], h_ratio[kStrips];
__device__ float2 d_table[kStrips]; // {X[i], ratio}
__device__ float d_x[kStrips + 1];

void make_tables() {
  double x[kStrips + 1];
  double f = std::exp(-0.5 * kR * kR);
  x[0] = kV / f;
  x[1] = kR;
  x[kStrips] = 0;
  for (int i = 2; i < kStrips; ++i) {
    x[i] = std::sqrt(-2 * std::log(kV / x[i - 1] + f));
    f = std::exp(-0.5 * x[i] * x[i]);
  }
  for (int i = 0; i <= kStrips; ++i) h_x[i] = (float)x[i];
  for (int i = 0; i < kStrips; ++i) h_ratio[i] = (float)(x[i + 1] / x[i]);
}

HD float uniform_pm1(lf_u32 w) { // (s + 1/2) 2^-23 from the high 24 bits, s signed
  return fmaf((float)((int)w >> 8), 0x1p-23f, 0x1p-24f);
}
HD float unit_open(lf_u32 w) { // (0, 1]
  return fmaf((float)(w >> 8), 0x1p-24f, 0x1p-24f);
}

// The element's stream after its group word: all four words of attempt blocks (g, 1 + lane), (g, 1 + lane + 4), ...
struct Stream {
  lf_u64 key, group;
  lf_u32 block, word, w[4];
};
HD void host_or_device_philox(lf_u64 key, lf_u64 group, lf_u64 block, lf_u32* out);
HD lf_u32 next_word(Stream& s) {
  if (s.word == 4) {
    host_or_device_philox(s.key, s.group, s.block, s.w);
    s.block += 4;
    s.word = 0;
  }
  return s.w[s.word++];
}

HD void host_or_device_philox(lf_u64 key, lf_u64 group, lf_u64 block, lf_u32* out) {
#ifdef __CUDA_ARCH__
  lf_rand_block_at(key, group, block, out);
#else
  lf_u32 c0 = (lf_u32)group, c1 = (lf_u32)(group >> 32), c2 = (lf_u32)block, c3 = (lf_u32)(block >> 32);
  lf_u32 k0 = (lf_u32)key, k1 = (lf_u32)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
    const lf_u32 hi0 = lf_u32(p0 >> 32), lo0 = lf_u32(p0), hi1 = lf_u32(p1 >> 32), lo1 = lf_u32(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
#endif
}

// The slow path of an element whose first word w was rejected by the fast test; xs: X[0 .. 256].
HD float zig_slow(lf_u32 w, lf_u64 key, lf_u64 group, int lane, const float* xs) {
  Stream s{key, group, (lf_u32)(1 + lane), 4, {0, 0, 0, 0}};
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int i = (int)(w & 255u);
    const float u = uniform_pm1(w);
    const float x = u * xs[i];
    if (fabsf(u) * xs[i] < xs[i + 1]) return x; // a retry's fast path
    if (i == 0) {                               // the tail beyond R
      float t, y;
      do {
        t = logf(unit_open(next_word(s))) * (float)(1.0 / kR);
        y = logf(unit_open(next_word(s)));
      } while (-2.0f * y < t * t);
      return u < 0 ? t - (float)kR : (float)kR - t;
    }
    const float f0 = expf(-0.5f * (xs[i] * xs[i] - x * x)), f1 = expf(-0.5f * (xs[i + 1] * xs[i + 1] - x * x));
    if (f1 + unit_open(next_word(s)) * (f0 - f1) < 1.0f) return x;
    w = next_word(s);
  }
  return 0.0f;
}

// Fast path: the value, or false where the element needs zig_slow.
HD bool zig_fast(lf_u32 w, float2 entry, float* out) {
  const float u = uniform_pm1(w);
  *out = u * entry.x;
  return fabsf(u) < entry.y;
}

// Host reference of a group of four; returns the mask of the elements that took the slow path.
unsigned host_zig_x4(lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
  const lf_u64 g = ctr + first / 4;
  lf_u32 w[4];
  host_or_device_philox(key, g, 0, w);
  unsigned slow = 0;
  for (int k = 0; k < 4; ++k) {
    const float2 e{h_x[w[k] & 255u], h_ratio[w[k] & 255u]};
    if (!zig_fast(w[k], e, out + k)) {
      out[k] = zig_slow(w[k], key, g, k, h_x);
      slow |= 1u << k;
    }
  }
  return slow;
}

int host_check() {
  const long n = 1l << 24;
  std::vector<float> z(n);
  long slow = 0;
  for (long i = 0; i < n; i += 4) slow += __builtin_popcount(host_zig_x4(0x0123456789ABCDEFull, 1000, (lf_u64)i, &z[i]));
  double m1 = 0, m2 = 0, m4 = 0;
  for (float v : z) m1 += v, m2 += (double)v * v, m4 += (double)v * v * v * v;
  m1 /= n, m2 /= n, m4 /= n;
  std::sort(z.begin(), z.end());
  double d = 0; // Kolmogorov-Smirnov against the normal CDF
  for (long i = 0; i < n; i += 7) {
    const double cdf = 0.5 * std::erfc(-z[i] / std::sqrt(2.0));
    d = std::max(d, std::max(std::fabs(cdf - (double)i / n), std::fabs(cdf - (double)(i + 1) / n)));
  }
  std::printf("host, 2^24 draws: slow path %.4f%% of elements; mean %.2e, variance %.6f, kurtosis %.4f (3); KS D %.2e "
              "(1%% critical %.2e); min %.3f, max %.3f\n",
              100.0 * slow / n, m1, m2, m4 / (m2 * m2), d, 1.63 / std::sqrt((double)n), z.front(), z.back());
  return 0;
}

// ---- kernels --------------------------------------------------------------------------------------------------------

struct Shared {
  float2 table[kStrips];
  float xs[kStrips + 1];
};

struct C {
  static constexpr bool kTable = false;
  __device__ static void trip(const Shared*, lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_vec<float> s;
      lf_rand_standard_normal_f32_x4(key, ctr, (lf_u64)(first + u * step), s.v);
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};
struct P {
  static constexpr bool kTable = false;
  __device__ static void trip(const Shared*, lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_u32 w[4];
      lf_rand_block_at(key, ctr + (first + u * step) / 4, 0, w);
      lf_vec<float> s;
      for (int k = 0; k < 4; ++k) s.v[k] = (float)(w[k] >> 8) * (1.0f / 16777216.0f);
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};
struct W {
  static constexpr bool kTable = false;
  __device__ static void trip(const Shared*, lf_u64 key, lf_u64, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_vec<float> s;
      for (int k = 0; k < 4; ++k) s.v[k] = (float)(lf_u32)key;
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};
struct Z1 {
  static constexpr bool kTable = true;
  __device__ static void trip(const Shared* sm, lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const lf_u64 g = ctr + (first + u * step) / 4;
      lf_u32 w[4];
      lf_rand_block_at(key, g, 0, w);
      lf_vec<float> s;
#pragma unroll
      for (int k = 0; k < 4; ++k)
        if (!zig_fast(w[k], sm->table[w[k] & 255u], &s.v[k])) s.v[k] = zig_slow(w[k], key, g, k, sm->xs);
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};
struct Z3 {
  static constexpr bool kTable = true;
  __device__ static void trip(const Shared* sm, lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
    lf_vec<float> s[4];
    lf_u32 words[16];
    unsigned rejected = 0;
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_u32 w[4];
      lf_rand_block_at(key, ctr + (first + u * step) / 4, 0, w);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        words[4 * u + k] = w[k];
        if (!zig_fast(w[k], sm->table[w[k] & 255u], &s[u].v[k])) rejected |= 1u << (4 * u + k);
      }
    }
    while (rejected) {
      const int b = __ffs(rejected) - 1;
      rejected &= rejected - 1;
      const int u = b / 4, k = b % 4;
      // Dynamic indexing of registers would spill the arrays: select through a switch on the few rejected ones.
      lf_u32 w = 0;
#pragma unroll
      for (int q = 0; q < 16; ++q)
        if (q == b) w = words[q];
      const float v = zig_slow(w, key, ctr + (first + u * step) / 4, k, sm->xs);
#pragma unroll
      for (int q = 0; q < 16; ++q)
        if (q == b) s[q / 4].v[q % 4] = v;
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s[u]);
  }
};
using Z3P = Z3;

template <class V> __global__ void __launch_bounds__(256) gen(float* __restrict__ out, int n, lf_u64 key, lf_u64 ctr) {
  __shared__ Shared sm;
  if constexpr (V::kTable) {
    sm.table[threadIdx.x] = d_table[threadIdx.x];
    sm.xs[threadIdx.x] = d_x[threadIdx.x];
    if (threadIdx.x == 0) sm.xs[kStrips] = d_x[kStrips];
    __syncthreads();
  }
  const int chunk = blockDim.x * 16;
  for (int first = blockIdx.x * chunk + threadIdx.x * 4; first < n; first += gridDim.x * chunk)
    V::trip(&sm, key, ctr, first, blockDim.x * 4, out);
}

int g_blocks_persistent = 0;
template <class V> float time_ms(float* out, int n, int reps, bool persistent = false) {
  const int grid = persistent ? g_blocks_persistent : n / (256 * 16);
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps + 3; ++r) {
    CHECK(cudaEventRecord(a));
    gen<V><<<grid, 256>>>(out, n, 0x0123456789ABCDEFull + r, 1000);
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 3) t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Device draws against the host's: fast-path elements must match bit for bit (the slow path's expf/logf differ).
template <class V> void check_against_host(float* out, int n, bool persistent = false) {
  const int grid = persistent ? g_blocks_persistent : n / (256 * 16);
  CHECK(cudaMemset(out, 0xFF, sizeof(float) * n));
  gen<V><<<grid, 256>>>(out, n, 0x0123456789ABCDEFull, 1000);
  std::vector<float> d(n);
  CHECK(cudaMemcpy(d.data(), out, sizeof(float) * n, cudaMemcpyDeviceToHost));
  long fast_differ = 0, slow = 0, slow_far = 0;
  double m1 = 0, m2 = 0;
  for (int i = 0; i < n; i += 4) {
    float h[4];
    const unsigned slow_mask = host_zig_x4(0x0123456789ABCDEFull, 1000, (lf_u64)i, h);
    slow += __builtin_popcount(slow_mask);
    for (int k = 0; k < 4; ++k) {
      unsigned a, b;
      std::memcpy(&a, &h[k], 4);
      std::memcpy(&b, &d[i + k], 4);
      m1 += d[i + k], m2 += (double)d[i + k] * d[i + k];
      if (!(slow_mask >> k & 1)) fast_differ += a != b;
      else if (std::fabs(h[k] - d[i + k]) > 1e-5f * std::max(1.0f, std::fabs(h[k]))) ++slow_far;
    }
  }
  std::printf("  fast-path elements differing from the host %ld; slow-path elements %ld, of which off by "
              "more than 1e-5 %ld; mean %.2e, variance %.6f\n",
              fast_differ, slow, slow_far, m1 / n, m2 / n);
}

int main(int argc, char** argv) {
  make_tables();
  if (argc > 1 && std::strcmp(argv[1], "--host-check") == 0) return host_check();
  float2 table[kStrips];
  for (int i = 0; i < kStrips; ++i) table[i] = {h_x[i], h_ratio[i]};
  CHECK(cudaMemcpyToSymbol(d_table, table, sizeof(table)));
  CHECK(cudaMemcpyToSymbol(d_x, h_x, sizeof(h_x)));
  const int n = 1 << 26;
  float* out;
  CHECK(cudaMalloc(&out, sizeof(float) * n));
  int sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gen<Z3>, 256, 0));
  g_blocks_persistent = sms * per_sm;
  if (argc > 1 && std::strcmp(argv[1], "--once") == 0) {
    const int grid = n / (256 * 16);
    gen<C><<<grid, 256>>>(out, n, 1, 0);
    gen<Z1><<<grid, 256>>>(out, n, 1, 0);
    gen<Z3><<<grid, 256>>>(out, n, 1, 0);
    gen<Z3P><<<g_blocks_persistent, 256>>>(out, n, 1, 0);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  std::printf("SMs %d, resident blocks of Z3 per SM %d\n", sms, per_sm);
  host_check();
  std::printf("Z1:\n");
  check_against_host<Z1>(out, n);
  std::printf("Z3:\n");
  check_against_host<Z3>(out, n);
  std::printf("Z3P:\n");
  check_against_host<Z3P>(out, n, true);
  const int reps = 20;
  for (int round = 0; round < 2; ++round) {
    const float w = time_ms<W>(out, n, reps);
    const struct {
      const char* name;
      float ms;
    } rows[] = {{"W   write-only", w},
                {"P   Philox + uniform", time_ms<P>(out, n, reps)},
                {"C   generated Box-Muller", time_ms<C>(out, n, reps)},
                {"Z1  ziggurat, slow path in place", time_ms<Z1>(out, n, reps)},
                {"Z3  ziggurat, slow paths per trip", time_ms<Z3>(out, n, reps)},
                {"Z3P Z3, persistent grid", time_ms<Z3P>(out, n, reps, true)}};
    std::printf("round %d\n%-34s %10s %12s\n", round, "kernel (2^26 float32)", "median ms", "of write-only");
    for (const auto& r : rows) std::printf("%-34s %10.4f %11.1f%%\n", r.name, r.ms, 100.0 * w / r.ms);
  }
  return 0;
}
