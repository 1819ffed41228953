// Shared by the benchmark programs: the peers' timing method, kernel-count checks and the copy reference.
//
// Each benchmark iteration is 20 back-to-back calls followed by one device synchronize, wall clock divided by 20
// (manual time); run with --benchmark_repetitions=5 and read the median. CUDA events around the same 20 calls give
// the `event_ms` counter. Every call rebuilds its expression from the leaves and drops its result (so hash-consing
// cannot turn a call into a no-op), and every iteration checks the number of kernels launched against the expected
// count; a mismatch fails the benchmark. Each program measures its own copy reference first (BM_CopyReference).
#pragma once

#include <lazyfuse/lazyfuse.hpp>

#include "timing.h"
#include "workloads.h"

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <random>
#include <string>

namespace lazyfuse_bench {

using namespace lazyfuse;

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

// Runs `call` as the peers were timed (bench/timing.h), checking that each call launched `kernels_per_call`
// kernels and, unless it is negative, made `library_calls_per_call` library calls (KernelCacheStats::library_calls:
// cuBLASLt, CUB's sorts). `bytes`: minimal bytes of one call.
template <class F>
inline void measure(benchmark::State& state, F&& call, std::uint64_t kernels_per_call, double bytes,
                    std::int64_t library_calls_per_call = -1) {
  for (int w = 0; w < kWarmup; ++w) call();
  lazyfuse::sync();
  auto before = kernel_cache_stats();
  time_calls(
      state, stream(), call, [] { lazyfuse::sync(); },
      [&]() -> std::string {
        const auto now = kernel_cache_stats();
        const auto launched = now.kernels_launched - before.kernels_launched;
        const auto calls = now.library_calls - before.library_calls;
        before = now;
        const bool calls_ok = library_calls_per_call < 0 || calls == std::uint64_t(library_calls_per_call) * kCalls;
        if (launched == kernels_per_call * kCalls && calls_ok) return "";
        return "launched " + std::to_string(launched) + " kernels and made " + std::to_string(calls) +
               " library calls in " + std::to_string(kCalls) + " calls, expected " +
               std::to_string(kernels_per_call * kCalls) + " kernels" +
               (library_calls_per_call < 0
                    ? std::string()
                    : " and " + std::to_string(std::uint64_t(library_calls_per_call) * kCalls) + " library calls");
      },
      double(kernels_per_call), bytes);
  if (library_calls_per_call >= 0) state.counters["library_calls_per_call"] = double(library_calls_per_call);
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
  record_copy_reference(state, 2.0 * double(bytes));
  cudaFree(a);
  cudaFree(b);
}

} // namespace lazyfuse_bench
