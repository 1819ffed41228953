// Experiment (issue 16, session 43): where the generated float32 normal's time goes. ncu of session 42's ziggurat
// call showed the generated Box-Muller kernel (C) at 32 registers (full occupancy), 2.93 instructions a cycle, issue
// slots 71.8% busy and warps eligible but not selected 9.4 of their 20.5 cycles between issues, with no pipeline
// saturated (ALU highest, 51.5%): neither purely issue-bound nor latency-bound. The variants split its cost:
//   W   write-only                 P   Philox + uniform (99% of W in session 42)
//   C   the generated normal       CN  C computing everything, storing almost nothing (compute alone)
//   BM  Box-Muller on cheap words (no Philox), stored; BMN the same, storing almost nothing
//   C2  C with its four groups' Philox calls first, then their Box-Muller (the compiler's interleaving helped or not)
//   nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -o normal_profile normal_profile.cu
#include "../../2026-12-07g/normal-tables/prelude.cuh"

#include <algorithm>
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

__device__ __forceinline__ void store(float* out, const lf_vec<float>& s, bool always) {
  // A value the normal never takes keeps the compute without the store (the compiler cannot prove it).
  if (always || s.v[0] == -1234.5f) lf_store_stream(reinterpret_cast<lf_vec<float>*>(out), s);
}

template <bool kStore> struct Gen {
  __device__ static void trip(lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_vec<float> s;
      lf_rand_standard_normal_f32_x4(key, ctr, (lf_u64)(first + u * step), s.v);
      store(out + first + u * step, s, kStore);
    }
  }
};
using C = Gen<true>;
using CN = Gen<false>;

template <bool kStore> struct BoxMullerOnly {
  __device__ static void trip(lf_u64 key, lf_u64, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const lf_u32 g = (lf_u32)(first + u * step) ^ (lf_u32)key;
      lf_u32 w[4] = {g * 0x9E3779B9u, g * 0x85EBCA6Bu, g * 0xC2B2AE35u, g * 0x27D4EB2Fu};
      lf_vec<float> s;
      lf_rand_box_muller_f32(w[0], w[1], s.v);
      lf_rand_box_muller_f32(w[2], w[3], s.v + 2);
      store(out + first + u * step, s, kStore);
    }
  }
};
using BM = BoxMullerOnly<true>;
using BMN = BoxMullerOnly<false>;

struct C2 {
  __device__ static void trip(lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
    lf_u32 w[4][4];
#pragma unroll
    for (int u = 0; u < 4; ++u) lf_rand_block_at(key, ctr + (lf_u64)(first + u * step) / 4, 0, w[u]);
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_vec<float> s;
      lf_rand_box_muller_f32(w[u][0], w[u][1], s.v);
      lf_rand_box_muller_f32(w[u][2], w[u][3], s.v + 2);
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};

struct P {
  __device__ static void trip(lf_u64 key, lf_u64 ctr, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_u32 w[4];
      lf_rand_block_at(key, ctr + (lf_u64)(first + u * step) / 4, 0, w);
      lf_vec<float> s;
      for (int k = 0; k < 4; ++k) s.v[k] = (float)(w[k] >> 8) * (1.0f / 16777216.0f);
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};
struct W {
  __device__ static void trip(lf_u64, lf_u64, int first, int step, float* out) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      lf_vec<float> s{{1.0f, 2.0f, 3.0f, 4.0f}};
      lf_store_stream(reinterpret_cast<lf_vec<float>*>(out + first + u * step), s);
    }
  }
};

template <class V> __global__ void __launch_bounds__(256) gen(float* __restrict__ out, int n, lf_u64 key, lf_u64 ctr) {
  const int chunk = blockDim.x * 16;
  for (int first = blockIdx.x * chunk + threadIdx.x * 4; first < n; first += gridDim.x * chunk)
    V::trip(key, ctr, first, blockDim.x * 4, out);
}

template <class V> float time_ms(float* out, int n, int reps) {
  const int grid = n / (256 * 16);
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

int main(int argc, char** argv) {
  const int n = 1 << 26, grid = n / (256 * 16);
  float* out;
  CHECK(cudaMalloc(&out, sizeof(float) * n));
  if (argc > 1 && std::strcmp(argv[1], "--once") == 0) { // for ncu
    gen<C><<<grid, 256>>>(out, n, 1, 0);
    gen<CN><<<grid, 256>>>(out, n, 1, 0);
    gen<BMN><<<grid, 256>>>(out, n, 1, 0);
    gen<C2><<<grid, 256>>>(out, n, 1, 0);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  // C2 must give C's bits.
  std::vector<float> a(n), b(n);
  gen<C><<<grid, 256>>>(out, n, 7, 0);
  CHECK(cudaMemcpy(a.data(), out, sizeof(float) * n, cudaMemcpyDeviceToHost));
  CHECK(cudaMemset(out, 0xFF, sizeof(float) * n));
  gen<C2><<<grid, 256>>>(out, n, 7, 0);
  CHECK(cudaMemcpy(b.data(), out, sizeof(float) * n, cudaMemcpyDeviceToHost));
  std::printf("C2 equals C bit for bit: %s\n", std::memcmp(a.data(), b.data(), sizeof(float) * n) == 0 ? "yes" : "NO");
  const int reps = 20;
  for (int round = 0; round < 2; ++round) {
    const float w = time_ms<W>(out, n, reps);
    const struct {
      const char* name;
      float ms;
    } rows[] = {{"W   write-only", w},
                {"P   Philox + uniform", time_ms<P>(out, n, reps)},
                {"C   generated Box-Muller", time_ms<C>(out, n, reps)},
                {"CN  C, compute only", time_ms<CN>(out, n, reps)},
                {"BM  Box-Muller on cheap words", time_ms<BM>(out, n, reps)},
                {"BMN BM, compute only", time_ms<BMN>(out, n, reps)},
                {"C2  Philox first, then Box-Muller", time_ms<C2>(out, n, reps)}};
    std::printf("round %d\n%-34s %10s %12s\n", round, "kernel (2^26 float32)", "median ms", "of write-only");
    for (const auto& r : rows) std::printf("%-34s %10.4f %11.1f%%\n", r.name, r.ms, 100.0 * w / r.ms);
  }
  return 0;
}
