// Experiment (issue 16): a float32 Box-Muller normal with fewer instructions, through small tables, with bits a CPU
// reproduces. prelude.cuh is the prelude of the kernel lazyfuse generates today (main 6e2e0c5) for
// g.standard_normal({1 << 26}, DType::Float32), verbatim; C below is that kernel's loop.
//
//   nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -o normal_tables normal_tables.cu
//   ./normal_tables            (checks, then timings: CUDA events, median of 20 after 3 warm-ups)
//   ./normal_tables --once     (one launch of each kernel, for ncu)
//
// The tables:
//   log: 128 entries per octave, m in [0.70, 1.40), the entries 75-77 around 1 with c = 1 (g = -2 (m - 1) exact
//        where L is small):
//        -2 ln(v 2^-32) = k (-2 ln2_hi) + T_hi  [exact: both on a 2^-8 grid]
//                       + (k (-2 ln2_lo) + T_lo + P(g)),  g = -2 (m / c - 1) = fmaf(m, -2 / c, 2),
//        P(g) = g + g^2 (1/4 + g (1/12 + g / 32)) (Taylor of -2 log1p(-g / 2); |g| <= 2^-7: truncation < 2^-40)
//   cos/sin: 256 entries of (cos, sin)(2 pi j / 256); the angle 2 pi b / 2^32 = 2 pi j / 256 + d, |d| <= pi / 256:
//        cos = cT - (sT sin d + cT d^2 / 2), sin = sT + (cT sin d - sT d^2 / 2), sin d = d - d^3 / 6
//        (cos d's d^4 / 24 < 2^-29 and sin d's d^5 / 120 < 2^-38 left out)
//
// Kernels (the generated loop: 256 threads, 4 groups of 4 elements per thread and trip, streaming 16-byte stores):
//   C    the generated normal (prelude.cuh)
//   TS   both tables, copied to shared memory at the block's start (log: float4 entries)
//   TSP  TS with a persistent grid (blocks = SMs x resident blocks), so each block copies the tables once
//   TSS  TS with the log table as three float arrays (fewer bank conflicts per load?)
//   TG   both tables read from global memory (__ldg), no shared memory
//   TC   the cos/sin table only (shared), the generated logarithm
//   TL   the log table only (shared), the generated cos/sin
//   P    Philox and the uniform only (what `random` computes)
//   W    write-only
#include "prelude.cuh"

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

struct LogEntry {
  float ninv2, hi, lo, pad; // -2 / c, -2 ln c split: hi on the 2^-8 grid, lo the rest
};
constexpr unsigned kLogOff = 0x3F338000u; // puts 1.0 in the middle of entry 76
constexpr float kLn2HiM2 = -1.38671875f;   // -2 * 0.693359375 (355 / 256)
constexpr float kLn2LoM2 = 4.24388880e-4f; // -2 * (ln 2 - 0.693359375)

HD unsigned f2u(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  unsigned u;
  std::memcpy(&u, &x, 4);
  return u;
#endif
}
HD float u2f(unsigned u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, 4);
  return x;
#endif
}

// -2 ln(v 2^-32) for v in [1/2, 2^32].
HD float t_minus2log(float v, float ninv2, float hi, float lo, float kf, float m) {
  const float g = fmaf(m, ninv2, 2.0f);
  const float g2 = g * g;
  float q = fmaf(g, 0.03125f, 0.0833333358f);
  q = fmaf(q, g, 0.25f);
  const float p = fmaf(q, g2, g);
  const float a = fmaf(kf, kLn2HiM2, hi);
  const float b = fmaf(kf, kLn2LoM2, lo) + p;
  (void)v;
  return a + b;
}
struct LogParts {
  unsigned index;
  float kf, m;
};
HD LogParts t_log_parts(float v) {
  const unsigned t = f2u(v) - (kLogOff + 0x10000000u); // the exponent less 32 (u = v 2^-32)
  return {(t >> 16) & 127u, (float)((int)t >> 23), u2f((t & 0x007FFFFFu) + kLogOff)};
}

HD void t_cossin(unsigned b, float cT, float sT, float* out) {
  const float d = (float)(int)(b << 8) * 0x1.921fb6p-38f; // 2 pi / 2^40
  const float h = 0.5f * d;
  const float d2h = d * h;
  const float sd = fmaf(d2h * d, -0.333333343f, d);
  const float cc = fmaf(sT, sd, cT * d2h);
  const float sc = fmaf(cT, sd, -(sT * d2h));
  out[0] = cT - cc;
  out[1] = sT + sc;
}
HD unsigned t_cossin_index(unsigned b) {
  return (b + 0x800000u) >> 24;
}

HD float t_sqrt(float x) {
#ifdef __CUDA_ARCH__
  return lf_rand_sqrt_f32(x);
#else
  return sqrtf(x);
#endif
}

// Host tables (the same floats go to the device).
LogEntry h_log[128];
float h_cs[256][2];
__device__ LogEntry d_log[128];
__device__ float2 d_cs[256];

void make_tables() {
  for (unsigned i = 0; i < 128; ++i) {
    const long double lo = u2f(kLogOff + (i << 16)), hi = u2f(kLogOff + ((i + 1) << 16));
    float invc = (float)(2.0L / (lo + hi));
    // c = 1 around 1 (entries 75-77): there L is as small as g, whose rounding a c != 1 would add at L's scale.
    if (i >= 75 && i <= 77) invc = 1.0f;
    const long double m2lnc = 2.0L * logl((long double)invc); // -2 ln c = 2 ln(1 / c)
    const float thi = (float)(nearbyintl(m2lnc * 256.0L) / 256.0L);
    h_log[i] = {-2.0f * invc, thi, (float)(m2lnc - thi), 0.0f};
  }
  for (int j = 0; j < 256; ++j) {
    const long double a = 2.0L * 3.14159265358979323846264338327950288L * j / 256.0L;
    h_cs[j][0] = (float)cosl(a);
    h_cs[j][1] = (float)sinl(a);
    if (j % 64 == 0) { // exact at the quarter turns
      const int q = j / 64;
      h_cs[j][0] = q == 0 ? 1.0f : q == 2 ? -1.0f : 0.0f;
      h_cs[j][1] = q == 1 ? 1.0f : q == 3 ? -1.0f : 0.0f;
    }
  }
}

// Box-Muller from the parts (shared by every variant, so each differs only in where its entries come from).
HD void t_box_muller(lf_u32 a, lf_u32 b, LogEntry le, float cT, float sT, LogParts lp, float* out) {
  const float L = t_minus2log(0, le.ninv2, le.hi, le.lo, lp.kf, lp.m);
  const float r = t_sqrt(fmaxf(L, 0x1p-100f));
  t_cossin(b, cT, sT, out);
  out[0] = r * out[0];
  out[1] = r * out[1];
  (void)a;
}

// Host reference of the table normal: Philox on the host and the same functions.
void host_philox(lf_u32 c0, lf_u32 c1, lf_u32 c2, lf_u32 c3, lf_u32 k0, lf_u32 k1, lf_u32* out) {
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
}
void host_table_normal_x4(lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
  const lf_u64 g = ctr + first / 4;
  lf_u32 w[4];
  host_philox(lf_u32(g), lf_u32(g >> 32), 0, 0, lf_u32(key), lf_u32(key >> 32), w);
  for (int p = 0; p < 2; ++p) {
    const lf_u32 a = w[2 * p], b = w[2 * p + 1];
    const LogParts lp = t_log_parts((float)a + 0.5f);
    const unsigned j = t_cossin_index(b) & 255u;
    t_box_muller(a, b, h_log[lp.index], h_cs[j][0], h_cs[j][1], lp, out + 2 * p);
  }
}

// ---- kernels --------------------------------------------------------------------------------------------------------

struct C {
  static constexpr int kShared = 0;
  __device__ static void group(const void*, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    lf_rand_standard_normal_f32_x4(key, ctr, first, out);
  }
};
struct P {
  static constexpr int kShared = 0;
  __device__ static void group(const void*, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    lf_u32 w[4];
    lf_rand_block_at(key, ctr + first / 4, 0, w);
    for (int k = 0; k < 4; ++k) out[k] = (float)(w[k] >> 8) * (1.0f / 16777216.0f);
  }
};
struct W {
  static constexpr int kShared = 0;
  __device__ static void group(const void*, lf_u64 key, lf_u64, lf_u64, float* out) {
    for (int k = 0; k < 4; ++k) out[k] = (float)(lf_u32)key;
  }
};
// Shared layout: log entries (128 x 16 B), then cos/sin (256 x 8 B).
struct TS {
  static constexpr int kShared = 1;
  __device__ static void group(const void* sm, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    const LogEntry* lt = static_cast<const LogEntry*>(sm);
    const float2* ct = reinterpret_cast<const float2*>(lt + 128);
    lf_u32 w[4];
    lf_rand_block_at(key, ctr + first / 4, 0, w);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const lf_u32 a = w[2 * p], b = w[2 * p + 1];
      const LogParts lp = t_log_parts((float)a + 0.5f);
      const float2 cs = ct[t_cossin_index(b)];
      t_box_muller(a, b, lt[lp.index], cs.x, cs.y, lp, out + 2 * p);
    }
  }
};
using TSP = TS;
// Shared layout: ninv2[128], hi[128], lo[128], then cos/sin.
struct TSS {
  static constexpr int kShared = 2;
  __device__ static void group(const void* sm, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    const float* f = static_cast<const float*>(sm);
    const float2* ct = reinterpret_cast<const float2*>(f + 512);
    lf_u32 w[4];
    lf_rand_block_at(key, ctr + first / 4, 0, w);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const lf_u32 a = w[2 * p], b = w[2 * p + 1];
      const LogParts lp = t_log_parts((float)a + 0.5f);
      const float2 cs = ct[t_cossin_index(b)];
      const LogEntry le{f[lp.index], f[128 + lp.index], f[256 + lp.index], 0};
      t_box_muller(a, b, le, cs.x, cs.y, lp, out + 2 * p);
    }
  }
};
struct TG {
  static constexpr int kShared = 0;
  __device__ static void group(const void*, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    lf_u32 w[4];
    lf_rand_block_at(key, ctr + first / 4, 0, w);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const lf_u32 a = w[2 * p], b = w[2 * p + 1];
      const LogParts lp = t_log_parts((float)a + 0.5f);
      const float2 cs = __ldg(&d_cs[t_cossin_index(b)]);
      const float4 e = __ldg(reinterpret_cast<const float4*>(&d_log[lp.index]));
      t_box_muller(a, b, LogEntry{e.x, e.y, e.z, e.w}, cs.x, cs.y, lp, out + 2 * p);
    }
  }
};
struct TC {
  static constexpr int kShared = 1;
  __device__ static void group(const void* sm, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    const float2* ct = reinterpret_cast<const float2*>(static_cast<const LogEntry*>(sm) + 128);
    lf_u32 w[4];
    lf_rand_block_at(key, ctr + first / 4, 0, w);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const float r = lf_rand_sqrt_f32(fmaxf(lf_rand_minus2log_f32((float)w[2 * p] + 0.5f), 0x1p-100f));
      const float2 cs = ct[t_cossin_index(w[2 * p + 1])];
      t_cossin(w[2 * p + 1], cs.x, cs.y, out + 2 * p);
      out[2 * p] *= r;
      out[2 * p + 1] *= r;
    }
  }
};
struct TL {
  static constexpr int kShared = 1;
  __device__ static void group(const void* sm, lf_u64 key, lf_u64 ctr, lf_u64 first, float* out) {
    const LogEntry* lt = static_cast<const LogEntry*>(sm);
    lf_u32 w[4];
    lf_rand_block_at(key, ctr + first / 4, 0, w);
#pragma unroll
    for (int p = 0; p < 2; ++p) {
      const LogParts lp = t_log_parts((float)w[2 * p] + 0.5f);
      const LogEntry le = lt[lp.index];
      const float r = t_sqrt(fmaxf(t_minus2log(0, le.ninv2, le.hi, le.lo, lp.kf, lp.m), 0x1p-100f));
      lf_rand_cossin_turn32(w[2 * p + 1], out + 2 * p);
      out[2 * p] *= r;
      out[2 * p + 1] *= r;
    }
  }
};

template <class V> __global__ void __launch_bounds__(256) gen(float* __restrict__ out, int n, lf_u64 key, lf_u64 ctr) {
  __shared__ __align__(16) float sm[V::kShared ? 1024 : 1];
  if constexpr (V::kShared == 1) {
    // 4 KiB: 256 threads, 16 bytes each.
    const float4* src = threadIdx.x < 128 ? reinterpret_cast<const float4*>(d_log) + threadIdx.x
                                          : reinterpret_cast<const float4*>(d_cs) + (threadIdx.x - 128);
    reinterpret_cast<float4*>(sm)[threadIdx.x] = *src;
    __syncthreads();
  } else if constexpr (V::kShared == 2) {
    if (threadIdx.x < 128) {
      const LogEntry e = d_log[threadIdx.x];
      sm[threadIdx.x] = e.ninv2, sm[128 + threadIdx.x] = e.hi, sm[256 + threadIdx.x] = e.lo;
    }
    reinterpret_cast<float2*>(sm + 512)[threadIdx.x] = d_cs[threadIdx.x];
    __syncthreads();
  }
  const int chunk = blockDim.x * 16;
  for (int first = blockIdx.x * chunk + threadIdx.x * 4; first < n; first += gridDim.x * chunk) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int base = first + u * blockDim.x * 4;
      lf_vec<float> s;
      V::group(sm, key, ctr, (lf_u64)base, s.v);
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + base), s);
    }
  }
}

// Every a: the table's -2 ln(u) against double's, in float ulps of the double result (max), u = fl(a + 1/2) 2^-32.
__global__ void log_check(unsigned long long* worst_ulp_x16, unsigned long long* bad_c) {
  unsigned long long mt = 0, mc = 0; // per thread, one atomic at the end
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < (1ull << 32);
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const float v = (float)(lf_u32)i + 0.5f;
    const LogParts lp = t_log_parts(v);
    const LogEntry le = d_log[lp.index];
    const float t = t_minus2log(v, le.ninv2, le.hi, le.lo, lp.kf, lp.m);
    const float c = lf_rand_minus2log_f32(v);
    const double ref = -2.0 * log((double)v * 0x1p-32);
    if (ref == 0.0) continue;
    const double ulp = ldexp(1.0, ilogb(ref) - 23);
    mt = max(mt, (unsigned long long)(fabs((double)t - ref) / ulp * 16));
    mc = max(mc, (unsigned long long)(fabs((double)c - ref) / ulp * 16));
  }
  atomicMax(worst_ulp_x16, mt);
  atomicMax(bad_c, mc);
}
// Every b: the table's cos and sin against double's: max error in ulps of the result, and max absolute error.
__global__ void cossin_check(unsigned long long* out) {
  unsigned long long m[6] = {};
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < (1ull << 32);
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const lf_u32 b = (lf_u32)i;
    const float2 cs = d_cs[t_cossin_index(b)];
    float t[2], c[2];
    t_cossin(b, cs.x, cs.y, t);
    lf_rand_cossin_turn32(b, c);
    double rs, rc;
    sincospi((double)b * 0x1p-31, &rs, &rc);
    const double ref[2] = {rc, rs};
    for (int k = 0; k < 2; ++k) {
      const double ulp = ldexp(1.0, max(ilogb(ref[k]), -126) - 23);
      const double et = fabs((double)t[k] - ref[k]), ec = fabs((double)c[k] - ref[k]);
      m[0] = max(m[0], (unsigned long long)(et / ulp * 16));
      m[1] = max(m[1], (unsigned long long)(ec / ulp * 16));
      m[2] = max(m[2], (unsigned long long)(et * 0x1p40));
      m[3] = max(m[3], (unsigned long long)(ec * 0x1p40));
      if (fabs(ref[k]) > 1e-3) {
        m[4] = max(m[4], (unsigned long long)(et / ulp * 16));
        m[5] = max(m[5], (unsigned long long)(ec / ulp * 16));
      }
    }
  }
  for (int k = 0; k < 6; ++k) atomicMax(out + k, m[k]);
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

template <class V> long long differs_from_host(float* out, int n, bool persistent = false) {
  const int grid = persistent ? g_blocks_persistent : n / (256 * 16);
  CHECK(cudaMemset(out, 0xFF, sizeof(float) * n));
  gen<V><<<grid, 256>>>(out, n, 0x0123456789ABCDEFull, 1000);
  std::vector<float> d(n);
  CHECK(cudaMemcpy(d.data(), out, sizeof(float) * n, cudaMemcpyDeviceToHost));
  long long differ = 0;
  for (int i = 0; i < n; i += 4) {
    float h[4];
    host_table_normal_x4(0x0123456789ABCDEFull, 1000, (lf_u64)i, h);
    for (int k = 0; k < 4; ++k) differ += f2u(h[k]) != f2u(d[i + k]);
  }
  return differ;
}

// Host only (no GPU needed): the tables' functions against long double on 2^24 random words and the ends.
int host_check() {
  double worst_log = 0, worst_cs = 0, worst_cs_abs = 0;
  unsigned s = 12345;
  auto next = [&s] { return s = s * 1664525u + 1013904223u; };
  for (long k = 0; k < (1l << 24) + 4096; ++k) {
    const lf_u32 a = k < 2048 ? lf_u32(k) : k < 4096 ? lf_u32(0u - 1u - (k - 2048)) : next();
    const float v = (float)a + 0.5f;
    const LogParts lp = t_log_parts(v);
    const LogEntry le = h_log[lp.index];
    const float t = t_minus2log(v, le.ninv2, le.hi, le.lo, lp.kf, lp.m);
    const long double ref = -2.0L * logl((long double)v * 0x1p-32L);
    if (ref != 0) worst_log = std::max(worst_log, (double)(fabsl(t - ref) / ldexpl(1.0L, ilogbl(ref) - 23)));
    const lf_u32 b = k < 4096 ? lf_u32(k * 0x100000u + (k & 7) * 0x7FFFFu) : next();
    const unsigned j = t_cossin_index(b) & 255u;
    float cs[2];
    t_cossin(b, h_cs[j][0], h_cs[j][1], cs);
    const long double ang = 3.14159265358979323846264338327950288L * (long double)b * 0x1p-31L;
    const long double r[2] = {cosl(ang), sinl(ang)};
    for (int q = 0; q < 2; ++q) {
      const long double e = fabsl(cs[q] - r[q]);
      worst_cs_abs = std::max(worst_cs_abs, (double)e);
      if (fabsl(r[q]) > 1e-3L) worst_cs = std::max(worst_cs, (double)(e / ldexpl(1.0L, ilogbl(r[q]) - 23)));
    }
  }
  std::printf("host: -2 ln u max %.3f ulp; cos/sin max %.3f ulp where |ref| > 1e-3, max abs %.3g\n", worst_log,
              worst_cs, worst_cs_abs);
  return 0;
}

int main(int argc, char** argv) {
  make_tables();
  if (argc > 1 && std::strcmp(argv[1], "--host-check") == 0) return host_check();
  CHECK(cudaMemcpyToSymbol(d_log, h_log, sizeof(h_log)));
  CHECK(cudaMemcpyToSymbol(d_cs, h_cs, sizeof(h_cs)));
  const int n = 1 << 26;
  float* out;
  CHECK(cudaMalloc(&out, sizeof(float) * n));
  int dev = 0, sms = 0, per_sm = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gen<TS>, 256, 0));
  g_blocks_persistent = sms * per_sm;
  if (argc > 1 && std::strcmp(argv[1], "--once") == 0) {
    const int grid = n / (256 * 16);
    gen<C><<<grid, 256>>>(out, n, 1, 0);
    gen<TS><<<grid, 256>>>(out, n, 1, 0);
    gen<TSS><<<grid, 256>>>(out, n, 1, 0);
    gen<TG><<<grid, 256>>>(out, n, 1, 0);
    gen<W><<<grid, 256>>>(out, n, 1, 0);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  std::printf("SMs %d, resident blocks of TS per SM %d\n", sms, per_sm);
  std::printf("device vs host bits over 2^26 draws: TS %lld, TSP %lld, TSS %lld, TG %lld elements differ\n",
              differs_from_host<TS>(out, n), differs_from_host<TSP>(out, n, true), differs_from_host<TSS>(out, n),
              differs_from_host<TG>(out, n));
  unsigned long long *acc, h[8];
  CHECK(cudaMalloc(&acc, 64));
  CHECK(cudaMemset(acc, 0, 64));
  log_check<<<4096, 256>>>(acc, acc + 1);
  CHECK(cudaMemcpy(h, acc, 16, cudaMemcpyDeviceToHost));
  std::printf("-2 ln u over every a: table max %.3f ulp, generated max %.3f ulp\n", h[0] / 16.0, h[1] / 16.0);
  CHECK(cudaMemset(acc, 0, 64));
  cossin_check<<<4096, 256>>>(acc);
  CHECK(cudaMemcpy(h, acc, 48, cudaMemcpyDeviceToHost));
  std::printf("cos/sin over every b: table max %.3f ulp (%.3f where |ref| > 1e-3), abs %.3g; generated %.3f ulp "
              "(%.3f), abs %.3g\n",
              h[0] / 16.0, h[4] / 16.0, h[2] * 0x1p-40, h[1] / 16.0, h[5] / 16.0, h[3] * 0x1p-40);

  const int reps = 20;
  for (int round = 0; round < 2; ++round) {
    const float w = time_ms<W>(out, n, reps);
    const struct {
      const char* name;
      float ms;
    } rows[] = {{"W  write-only", w},
                {"P  Philox + uniform", time_ms<P>(out, n, reps)},
                {"C  generated normal", time_ms<C>(out, n, reps)},
                {"TS tables in shared", time_ms<TS>(out, n, reps)},
                {"TSP TS, persistent grid", time_ms<TSP>(out, n, reps, true)},
                {"TSS TS, log as 3 arrays", time_ms<TSS>(out, n, reps)},
                {"TG tables by __ldg", time_ms<TG>(out, n, reps)},
                {"TC cos/sin table only", time_ms<TC>(out, n, reps)},
                {"TL log table only", time_ms<TL>(out, n, reps)}};
    std::printf("round %d\n%-28s %10s %12s\n", round, "kernel (2^26 float32)", "median ms", "of write-only");
    for (const auto& r : rows) std::printf("%-28s %10.4f %11.1f%%\n", r.name, r.ms, 100.0 * w / r.ms);
  }
  return 0;
}
