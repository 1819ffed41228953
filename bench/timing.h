// The peers' timing method (shared/PERF_TARGETS.md), shared by every benchmark program: lazyfuse's (through
// bench/common.h) and the hand-written limits' (bench_limits.cu, which must not include lazyfuse, so this header
// does not either).
//
// One benchmark iteration is kCalls back-to-back calls followed by one synchronize, wall clock divided by kCalls
// (manual time); run with --benchmark_repetitions=5 and read the median. CUDA events around the same calls give
// the `event_ms` counter. Each program measures its own copy reference first (BM_CopyReference), against which
// `pct_of_copy` is reported.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <string>

namespace lazyfuse_bench {

inline constexpr int kCalls = 20;
inline constexpr int kWarmup = 3;
inline double g_copy_bytes_per_second = 0; // set by BM_CopyReference, registered first

// Times kCalls calls of `call` per iteration (warm up first) and records the counters. `sync` waits for all the
// calls' work; `check` runs after each iteration and returns "" or why it is wrong, which fails the benchmark.
// `bytes`: the minimal bytes of one call.
template <class Call, class Sync, class Check>
void time_calls(benchmark::State& state, cudaStream_t stream, Call&& call, Sync&& sync, Check&& check,
                double kernels_per_call, double bytes) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  double event_ms = 0, wall_s = 0;
  for (auto _ : state) {
    cudaEventRecord(start, stream);
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < kCalls; ++c) call();
    sync();
    const auto t1 = std::chrono::steady_clock::now();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    if (const std::string wrong = check(); !wrong.empty()) {
      state.SkipWithError(wrong.c_str());
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
  state.counters["kernels_per_call"] = kernels_per_call;
  if (bytes > 0) {
    const double rate = bytes / (wall_s / it);
    state.counters["GB_per_s"] = rate * 1e-9;
    if (g_copy_bytes_per_second > 0) state.counters["pct_of_copy"] = 100.0 * rate / g_copy_bytes_per_second;
  }
}

// After the copy reference's time_calls: its bandwidth (`bytes` read + written per call) from the CUDA events.
inline void record_copy_reference(benchmark::State& state, double bytes) {
  if (state.iterations() > 0) g_copy_bytes_per_second = bytes / (state.counters["event_ms"] * 1e-3);
  state.counters["pct_of_copy"] = 100.0;
  state.counters["kernels_per_call"] = 0;
}

} // namespace lazyfuse_bench
