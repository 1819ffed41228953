// Shared by the benchmark programs: the peers' timing method, kernel-count checks and the copy reference.
//
// Each benchmark iteration is 20 back-to-back calls followed by one device synchronize, wall clock divided by 20
// (manual time); run with --benchmark_repetitions=5 and read the median. CUDA events around the same 20 calls give
// the `event_ms` counter. Every call rebuilds its expression from the leaves and drops its result (so hash-consing
// cannot turn a call into a no-op), and every iteration checks the number of kernels launched against the expected
// count; a mismatch fails the benchmark. Each program measures its own copy reference first (BM_CopyReference).
#pragma once

#include <lazyfuse/lazyfuse.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <random>
#include <string>

namespace lazyfuse_bench {

using namespace lazyfuse;

inline constexpr int kCalls = 20;
inline double g_copy_bytes_per_second = 0; // set by BM_CopyReference, registered first

inline Array random_f32(std::int64_t n, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(g);
  return asarray(v, {n});
}

inline bool has_gpu(benchmark::State& state) {
  if (backend() == Backend::Cuda) return true;
  state.SkipWithError("needs a CUDA device (the CPU backend is not benchmarked here)");
  return false;
}

inline cudaStream_t stream() {
  return static_cast<cudaStream_t>(current_stream_native());
}

struct Mode {
  explicit Mode(bool eager) { config::set_eager(eager); }
  ~Mode() { config::reset("LAZYFUSE_MODE"); }
};

// Runs `call` as the peers were timed and records the counters. `bytes`: minimal bytes of one call.
template <class F>
inline void measure(benchmark::State& state, F&& call, std::uint64_t kernels_per_call, double bytes) {
  for (int w = 0; w < 3; ++w) call();
  lazyfuse::sync();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  double event_ms = 0, wall_s = 0;
  for (auto _ : state) {
    const auto k0 = kernel_cache_stats().kernels_launched;
    cudaEventRecord(start, stream());
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < kCalls; ++c) call();
    lazyfuse::sync();
    const auto t1 = std::chrono::steady_clock::now();
    cudaEventRecord(stop, stream());
    cudaEventSynchronize(stop);
    const auto launched = kernel_cache_stats().kernels_launched - k0;
    if (launched != kernels_per_call * kCalls) {
      state.SkipWithError(("launched " + std::to_string(launched) + " kernels in " + std::to_string(kCalls) +
                           " calls, expected " + std::to_string(kernels_per_call * kCalls))
                              .c_str());
      break;
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    const double per_call = std::chrono::duration<double>(t1 - t0).count() / kCalls;
    state.SetIterationTime(per_call);
    event_ms += ms / kCalls;
    wall_s += per_call;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  const double it = double(state.iterations());
  if (it == 0) return;
  state.counters["event_ms"] = event_ms / it;
  state.counters["kernels_per_call"] = double(kernels_per_call);
  if (bytes > 0) {
    const double rate = bytes / (wall_s / it);
    state.counters["GB_per_s"] = rate * 1e-9;
    if (g_copy_bytes_per_second > 0) state.counters["pct_of_copy"] = 100.0 * rate / g_copy_bytes_per_second;
  }
}

inline void BM_CopyReference(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::size_t bytes = std::size_t(256) << 20;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  cudaMemset(a, 1, bytes);
  measure(
      state, [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream()); }, 0, 2.0 * double(bytes));
  if (state.iterations() > 0) g_copy_bytes_per_second = 2.0 * double(bytes) / (state.counters["event_ms"] * 1e-3);
  state.counters["pct_of_copy"] = 100.0;
  cudaFree(a);
  cudaFree(b);
}

} // namespace lazyfuse_bench
