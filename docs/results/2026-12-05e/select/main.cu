// Experiment (2026-12-05, twenty-fourth session): where bench_gather's BM_MaskSelect (x[x > 0], 2^25 float32, about
// half selected; 0.118 ms, 41.7% of copy over the 192 MiB it must move) spends its time. CUB's DeviceSelect::If
// alone, timed with CUDA events around 20 back-to-back calls (median of 5 trials), against the same call followed by
// the count's download (what lazyfuse must wait for to give the result its shape), and DeviceSelect::Flagged over a
// precomputed byte mask. % of a 128 MiB device-to-device copy timed the same way, over x read once and the selected
// values written once. Each result is checked against the host's selection.
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

struct Positive {
  __host__ __device__ bool operator()(float v) const { return v > 0.0f; }
};

static double time_ms(const std::function<void()>& call, int calls = 20) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> trials;
  call();
  cudaDeviceSynchronize();
  for (int t = 0; t < 5; ++t) {
    cudaEventRecord(start);
    for (int k = 0; k < calls; ++k) call();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    trials.push_back(ms / calls);
  }
  std::sort(trials.begin(), trials.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return trials[2];
}

__global__ void flags_of(const float* x, unsigned char* f, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    f[i] = x[i] > 0.0f;
}

int main() {
  const long long n = 1ll << 25;
  std::vector<float> hx(n);
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (auto& v : hx) v = d(rng);
  long long want = 0;
  for (auto v : hx) want += v > 0.0f;
  float *x, *out, *copy;
  unsigned char* flags;
  long long* selected;
  cudaMalloc(&x, sizeof(float) * n);
  cudaMalloc(&out, sizeof(float) * n);
  cudaMalloc(&copy, sizeof(float) * n);
  cudaMalloc(&flags, n);
  cudaMalloc(&selected, sizeof(long long));
  cudaMemcpy(x, hx.data(), sizeof(float) * n, cudaMemcpyHostToDevice);
  flags_of<<<1024, 256>>>(x, flags, n);
  std::size_t if_bytes = 0, flagged_bytes = 0;
  cub::DeviceSelect::If(nullptr, if_bytes, x, out, selected, n, Positive());
  cub::DeviceSelect::Flagged(nullptr, flagged_bytes, x, flags, out, selected, n);
  void* temp;
  cudaMalloc(&temp, std::max(if_bytes, flagged_bytes));
  const double copy_ms = time_ms([&] { cudaMemcpyAsync(copy, x, sizeof(float) * n, cudaMemcpyDeviceToDevice); });
  const double copy_bw = 2.0 * sizeof(float) * n / (copy_ms * 1e-3);
  const double bytes = sizeof(float) * double(n + want);
  std::printf("copy 128 MiB: %.4f ms (%.0f GB/s); %lld of %lld selected; temp %zu / %zu bytes\n", copy_ms,
              copy_bw / 1e9, want, n, if_bytes, flagged_bytes);
  auto check = [&](const char* name, double ms) {
    long long count = 0;
    cudaMemcpy(&count, selected, sizeof count, cudaMemcpyDeviceToHost);
    std::vector<float> got(std::size_t(std::max(count, 1ll)));
    cudaMemcpy(got.data(), out, sizeof(float) * count, cudaMemcpyDeviceToHost);
    long long wrong = count == want ? 0 : -1;
    if (wrong == 0)
      for (long long i = 0, k = 0; i < n; ++i)
        if (hx[i] > 0.0f) wrong += got[k++] != hx[i];
    std::printf("%-44s %.4f ms, %.1f%% of copy, %lld wrong, %s\n", name, ms, 100.0 * bytes / (ms * 1e-3) / copy_bw,
                wrong, cudaGetErrorString(cudaGetLastError()));
  };
  cudaMemset(out, 0xff, sizeof(float) * n);
  check("DeviceSelect::If (x > 0)", time_ms([&] {
          cub::DeviceSelect::If(temp, if_bytes, x, out, selected, n, Positive());
        }));
  long long host_count = 0;
  cudaMemset(out, 0xff, sizeof(float) * n);
  check("DeviceSelect::If, then the count downloaded", time_ms([&] {
          cub::DeviceSelect::If(temp, if_bytes, x, out, selected, n, Positive());
          cudaMemcpy(&host_count, selected, sizeof host_count, cudaMemcpyDeviceToHost);
        }));
  cudaMemset(out, 0xff, sizeof(float) * n);
  check("DeviceSelect::Flagged (byte mask given)", time_ms([&] {
          cub::DeviceSelect::Flagged(temp, flagged_bytes, x, flags, out, selected, n);
        }));
  return 0;
}
