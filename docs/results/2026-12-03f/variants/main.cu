// Experiment (2026-12-03, fourteenth session): x + row at 8192^2 float32 on the H200, three versions of the kernel
// lazyfuse generates, each launched with the resident blocks only (132 SMs x 8 blocks, each striding over the chunks)
// and with a block per chunk of 2048 elements. v1: the unravelling by a division instruction (the kernel before this
// session); v2: by the fast-division constants (codegen/KernelAbi.h); v3: v2 with the contiguous loads issued before
// the unravelling. scale_v0: x * 2, the plain contiguous kernel. Timing as bench/common.h: CUDA events around 20
// calls, the median of 5 trials; % of a 256 MiB device-to-device copy timed the same way, over the minimal bytes.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

void launch_addrow_v1(int, const float*, const float*, float*, int, int, int, unsigned, unsigned);
void launch_addrow_v2(int, const float*, const float*, float*, int, int, int, unsigned, unsigned);
void launch_addrow_v3(int, const float*, const float*, float*, int, int, int, unsigned, unsigned);
void launch_scale_v0(int, const float*, float*, int, float);

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
  const int side = 8192, n = side * side;
  float *x, *row, *out, *copy;
  cudaMalloc(&x, sizeof(float) * n);
  cudaMalloc(&out, sizeof(float) * n);
  cudaMalloc(&copy, sizeof(float) * n);
  cudaMalloc(&row, sizeof(float) * side);
  std::vector<float> hx(n), hrow(side);
  for (int i = 0; i < n; ++i) hx[i] = float(i % 1013) * 0.25f - 100.0f;
  for (int j = 0; j < side; ++j) hrow[j] = float(j % 97) - 40.0f;
  cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
  cudaMemcpy(row, hrow.data(), sizeof(float) * side, cudaMemcpyHostToDevice);
  const double copy_ms = time_ms([&] { cudaMemcpyAsync(copy, x, sizeof(float) * n, cudaMemcpyDeviceToDevice); });
  const double copy_bw = 2.0 * sizeof(float) * n / (copy_ms * 1e-3);
  std::printf("copy 256 MiB: %.4f ms (%.0f GB/s)\n", copy_ms, copy_bw / 1e9);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int resident = sms * 8, per_chunk = n / 2048;
  const double scale_bytes = 2.0 * sizeof(float) * n, row_bytes = scale_bytes + sizeof(float) * side;
  // 8192 = 2^13: the constants of codegen::fast_divisor32(8192).
  const unsigned mul = 1, shift = 13;
  using Launch = void (*)(int, const float*, const float*, float*, int, int, int, unsigned, unsigned);
  const std::pair<const char*, Launch> variants[] = {
      {"v1 division", launch_addrow_v1}, {"v2 fast division", launch_addrow_v2}, {"v3 fast, loads first", launch_addrow_v3}};
  for (int grid : {resident, per_chunk}) {
    const char* g = grid == resident ? "resident" : "per chunk";
    const double t = time_ms([&] { launch_scale_v0(grid, x, out, n, 2.0f); });
    std::printf("%-22s %-9s grid %6d: %.4f ms, %.1f%% of copy\n", "scale x * 2", g, grid, t,
                100.0 * scale_bytes / (t * 1e-3) / copy_bw);
    for (auto [name, launch] : variants) {
      cudaMemset(out, 0xff, sizeof(float) * n);
      const double ms = time_ms([&] { launch(grid, x, row, out, n, side, side, mul, shift); });
      std::vector<float> got(n);
      cudaMemcpy(got.data(), out, sizeof(float) * n, cudaMemcpyDeviceToHost);
      long wrong = 0;
      for (int i = 0; i < n; ++i) wrong += got[i] != hx[i] + hrow[i % side];
      std::printf("%-22s %-9s grid %6d: %.4f ms, %.1f%% of copy, %ld wrong\n", name, g, grid, ms,
                  100.0 * row_bytes / (ms * 1e-3) / copy_bw, wrong);
    }
  }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
