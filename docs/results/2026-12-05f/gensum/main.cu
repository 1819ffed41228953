// Experiment (2026-12-05, twenty-fourth session; v6 and v7 from the twenty-fifth): bench_compute's BM_GeneratedSum (the sum over 2^26 elements of
// where(v > 0.25, sin(v * 6.2831853), 0), v = float32((arange(n) * 1103515245) % 1000003) / 1000003; lazyfuse 0.237 ms,
// jax.jit 0.138 ms) as lazyfuse generates it and in the variants of variants.py, each leaving one stage's cost out.
// Launched as lazyfuse's split schedule launches it (codegen/Schedule.cpp: 4 waves of resident blocks, at most 1,024
// splits, at least 2,048 elements each). Timing as bench/common.h: CUDA events around 20 calls, the median of 5; each
// variant's sum is checked against a float64 one.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#define DECLARE(v)                                                                                                     \
  void launch_##v(int grid, float* out, long long n, float* partials, unsigned* tickets, int splits);                  \
  int blocks_per_sm_##v();
DECLARE(v0)
DECLARE(v1)
DECLARE(v2)
DECLARE(v3)
DECLARE(v4)
DECLARE(v5)
DECLARE(v6)
DECLARE(v7)

static double time_ms(const std::function<void()>& call) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> trials;
  call();
  cudaDeviceSynchronize();
  for (int t = 0; t < 5; ++t) {
    cudaEventRecord(start);
    for (int k = 0; k < 20; ++k) call();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    trials.push_back(ms / 20);
  }
  std::sort(trials.begin(), trials.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return trials[2];
}

int main() {
  const long long n = 1ll << 26;
  double want = 0, magnitude = 0;
  for (long long i = 0; i < n; ++i) {
    const float v = float((i * 1103515245) % 1000003) * (1.0f / 1000003.0f);
    const double term = v > 0.25f ? std::sin(double(v * 6.2831853f)) : 0.0;
    want += term;
    magnitude += std::abs(term);
  }
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *out, *partials;
  unsigned* tickets;
  cudaMalloc(&out, sizeof(float));
  cudaMalloc(&partials, 1024 * 16);
  cudaMalloc(&tickets, sizeof(unsigned));
  cudaMemset(tickets, 0, sizeof(unsigned));
  struct Variant {
    const char* name;
    void (*launch)(int, float*, long long, float*, unsigned*, int);
    int (*blocks)();
  };
  const Variant variants[] = {{"v0 as generated", launch_v0, blocks_per_sm_v0},
                              {"v1 unsigned remainder", launch_v1, blocks_per_sm_v1},
                              {"v2 __sinf", launch_v2, blocks_per_sm_v2},
                              {"v3 constants (jax.jit's)", launch_v3, blocks_per_sm_v3},
                              {"v4 float of int32", launch_v4, blocks_per_sm_v4},
                              {"v5 constants, float of int32", launch_v5, blocks_per_sm_v5},
                              {"v6 non-negative dividend first", launch_v6, blocks_per_sm_v6},
                              {"v7 v6, marked likely", launch_v7, blocks_per_sm_v7}};
  for (const auto& v : variants) {
    const int per_sm = v.blocks();
    const int splits = int(std::min<long long>({4ll * sms * per_sm, n / 2048, 1024}));
    const float poison = std::nanf("");
    cudaMemcpy(out, &poison, sizeof poison, cudaMemcpyHostToDevice);
    const double ms = time_ms([&] { v.launch(splits, out, n, partials, tickets, splits); });
    float got = 0;
    cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost);
    std::printf("%-32s %2d blocks/SM, %4d splits: %.4f ms, sum %.6g (float64 %.6g, error %.2e of the magnitudes) %s\n",
                v.name, per_sm, splits, ms, got, want, std::abs(got - want) / magnitude,
                cudaGetErrorString(cudaGetLastError()));
  }
  return 0;
}
