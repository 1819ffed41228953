// Experiment (2026-12-05, session 24; session 25 adds the exact reciprocal division and builds it twice, against the
// generated kernel before and after session 25, with --fmad=false (as lazyfuse's NVRTC compiles) and true): the layer norm of bench_layout's BM_LayerNorm (8192 x 8192 float32,
// per-column gamma and beta) on the GPU, as lazyfuse generates it (ln_generated.cu, with its row cache in shared
// memory) and with the row kept in registers (ln_registers.cu), each at a grid of one block per row and of the
// resident blocks. Timing as bench/common.h: CUDA events around 20 calls, the median of 5 trials; % of a 256 MiB
// device-to-device copy timed the same way, over the minimal bytes (x read and the result written once, gamma and
// beta once). Each variant's output is poisoned before it runs and compared with a float64 reference on 64 rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

void launch_ln_generated(int grid, int block, unsigned shared, const float* x, const float* g, const float* b,
                         float* out, int rows, int cols);
int generated_blocks_per_sm(int block, unsigned shared);
void launch_ln_registers(int threads, int mode, int grid, const float* x, const float* g, const float* b,
                         float* out, int rows, int cols);
int ln_registers_blocks_per_sm(int threads, int mode);

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

int main(int argc, char**) {
  const int rows = 8192, cols = 8192;
  const long long n = (long long)rows * cols;
  float *x, *g, *b, *out, *copy;
  cudaMalloc(&x, sizeof(float) * n);
  cudaMalloc(&out, sizeof(float) * n);
  cudaMalloc(&copy, sizeof(float) * n);
  cudaMalloc(&g, sizeof(float) * cols);
  cudaMalloc(&b, sizeof(float) * cols);
  std::vector<float> hx(n), hg(cols), hb(cols);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f), ug(0.5f, 1.5f), ub(-1.0f, 1.0f);
  for (auto& v : hx) v = u(rng);
  for (auto& v : hg) v = ug(rng);
  for (auto& v : hb) v = ub(rng);
  cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
  cudaMemcpy(g, hg.data(), sizeof(float) * cols, cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), sizeof(float) * cols, cudaMemcpyHostToDevice);
  // float64 reference on rows 0, 128, ..., 8064.
  std::vector<int> check_rows;
  for (int r = 0; r < rows; r += rows / 64) check_rows.push_back(r);
  std::vector<double> want;
  for (int r : check_rows) {
    double s = 0, q = 0;
    for (int c = 0; c < cols; ++c) s += hx[(long long)r * cols + c];
    const double mean = s / cols;
    for (int c = 0; c < cols; ++c) q += (hx[(long long)r * cols + c] - mean) * (hx[(long long)r * cols + c] - mean);
    const double sd = std::sqrt(q / cols + 1e-5);
    for (int c = 0; c < cols; ++c) want.push_back((hx[(long long)r * cols + c] - mean) / sd * hg[c] + hb[c]);
  }
  const double copy_ms = time_ms([&] { cudaMemcpyAsync(copy, x, sizeof(float) * n, cudaMemcpyDeviceToDevice); });
  const double copy_bw = 2.0 * sizeof(float) * n / (copy_ms * 1e-3);
  const double bytes = 2.0 * sizeof(float) * n + 2.0 * sizeof(float) * cols;
  std::printf("copy 256 MiB: %.4f ms (%.0f GB/s)\n", copy_ms, copy_bw / 1e9);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  auto report = [&](const char* name, int grid, int block, const std::function<void()>& call) {
    cudaMemset(out, 0xff, sizeof(float) * n);
    const double ms = time_ms(call);
    cudaError_t e = cudaDeviceSynchronize();
    std::vector<float> got(cols);
    double err = 0, norm = 0;
    std::size_t w = 0;
    for (int r : check_rows) {
      cudaMemcpy(got.data(), out + (long long)r * cols, sizeof(float) * cols, cudaMemcpyDeviceToHost);
      for (int c = 0; c < cols; ++c, ++w) {
        err += (got[c] - want[w]) * (got[c] - want[w]);
        norm += want[w] * want[w];
      }
    }
    std::printf("%-34s grid %5d block %4d: %.4f ms, %.1f%% of copy, rel. L2 error %.2e %s\n", name, grid, block, ms,
                100.0 * bytes / (ms * 1e-3) / copy_bw, std::sqrt(err / norm), cudaGetErrorString(e));
  };
  const unsigned row_bytes = sizeof(float) * cols;
  const int gen_resident = sms * generated_blocks_per_sm(256, row_bytes);
  for (int grid : {gen_resident, rows})
    report("generated (row cache in shared)", grid, 256,
           [&] { launch_ln_generated(grid, 256, row_bytes, x, g, b, out, rows, cols); });
  if (argc > 1) return 0; // the generated kernel only
  const char* modes[] = {"registers, divide", "registers, reciprocal multiply", "registers, exact reciprocal"};
  for (int mode : {0, 1, 2})
    for (int threads : {256, 512}) {
      const int resident = sms * ln_registers_blocks_per_sm(threads, mode);
      for (int grid : {resident, rows})
        report(modes[mode], grid, threads, [&] { launch_ln_registers(threads, mode, grid, x, g, b, out, rows, cols); });
    }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
