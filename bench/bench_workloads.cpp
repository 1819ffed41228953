// The elementwise workloads of shared/PERF_TARGETS.md, fused and in eager mode, beside a device-to-device copy.
//
// Timing follows the peers' method: each benchmark iteration is 20 back-to-back calls followed by one device
// synchronize, wall clock divided by 20 (manual time); run with --benchmark_repetitions=5 and read the median.
// CUDA events around the same 20 calls give the `event_ms` counter. Every call rebuilds its expression from the
// leaves and drops its result (so hash-consing cannot turn a call into a no-op), and every iteration checks the
// number of kernels launched against the expected count; a mismatch fails the benchmark.
#include <lazyfuse/lazyfuse.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <random>
#include <string>

using namespace lazyfuse;

namespace {

constexpr int kCalls = 20;
double g_copy_bytes_per_second = 0; // set by BM_CopyReference, registered first

Array random_f32(std::int64_t n, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(g);
  return asarray(v, {n});
}

bool has_gpu(benchmark::State& state) {
  if (backend() == Backend::Cuda) return true;
  state.SkipWithError("needs a CUDA device (the CPU backend is not benchmarked here)");
  return false;
}

cudaStream_t stream() { return static_cast<cudaStream_t>(current_stream_native()); }

struct Mode {
  explicit Mode(bool eager) { config::set_eager(eager); }
  ~Mode() { config::reset("LAZYFUSE_MODE"); }
};

// Runs `call` as the peers were timed and records the counters. `bytes`: minimal bytes of one call.
template <class F> void measure(benchmark::State& state, F&& call, std::uint64_t kernels_per_call, double bytes) {
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

void BM_CopyReference(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::size_t bytes = std::size_t(256) << 20;
  void *a = nullptr, *b = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    state.SkipWithError("cudaMalloc failed");
    return;
  }
  cudaMemset(a, 1, bytes);
  auto k0 = kernel_cache_stats().kernels_launched;
  measure(
      state, [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream()); }, 0, 2.0 * double(bytes));
  (void)k0;
  if (state.iterations() > 0) g_copy_bytes_per_second = 2.0 * double(bytes) / (state.counters["event_ms"] * 1e-3);
  state.counters["pct_of_copy"] = 100.0;
  cudaFree(a);
  cudaFree(b);
}

Array chain(const Array& x, const Array& y) { return sqrt(abs(sin(x) * cos(y) + x * y * 0.5f - exp(-x * x))); }
// Eager: sin, cos, *, x*y, *0.5, +, -x, *x, exp, -, abs, sqrt.
constexpr std::uint64_t kChainOps = 12;

void BM_Chain(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = state.range(1);
  auto x = random_f32(n, -2, 2, 1).eval(), y = random_f32(n, -2, 2, 2).eval();
  Mode mode(eager);
  measure(
      state, [&] { chain(x, y).eval(); }, eager ? kChainOps : 1, 3.0 * 4.0 * double(n));
}

void black_scholes(const Array& S, const Array& K, const Array& T) {
  const float r = 0.02f, v = 0.30f;
  auto sqrtT = sqrt(T);
  auto d1 = (log(S / K) + (r + 0.5f * v * v) * T) / (v * sqrtT);
  auto d2 = d1 - v * sqrtT;
  auto cdf = [](const Array& d) { return 0.5f * (1.0f + erf(d * 0.70710678f)); };
  auto disc = K * exp(-r * T);
  auto call = S * cdf(d1) - disc * cdf(d2);
  auto put = disc * cdf(-d2) - S * cdf(-d1);
  eval(call, put);
}
// Eager: one kernel per op of the expression after hash-consing (v*sqrtT is shared by d1 and d2): 36, as counted
// by running it in eager mode on the CPU backend.
constexpr std::uint64_t kBlackScholesOps = 36;

void BM_BlackScholes(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = std::int64_t(1) << 25;
  auto S = random_f32(n, 10, 100, 3).eval(), K = random_f32(n, 10, 100, 4).eval(), T = random_f32(n, 0.1f, 2, 5).eval();
  Mode mode(eager);
  measure(
      state, [&] { black_scholes(S, K, T); }, eager ? kBlackScholesOps : 1, 5.0 * 4.0 * double(n));
}

void heat_step(const Array& u) {
  auto in = slice(1, -1);
  auto c = u(in, in);
  auto step = c + 0.1f * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(2, none)) + u(in, slice(0, -2)) -
                          4.0f * c);
  u.at(in, in).set(step).eval();
}
// Eager: three additions of the neighbours, 4*c, -, *0.1, +, and the slice assignment (the shifted views are
// strided reads, no kernels).
constexpr std::uint64_t kHeatOps = 8;

void BM_Heat2d(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = 8192;
  auto u = random_f32(n * n, 0, 1, 6).reshape({n, n}).eval();
  Mode mode(eager);
  measure(
      state, [&] { heat_step(u); }, eager ? kHeatOps : 1, 2.0 * 4.0 * double(n * n));
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chain)
    ->ArgNames({"eager", "n"})
    ->Args({0, 1 << 26})
    ->Args({1, 1 << 26})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BlackScholes)->ArgName("eager")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Heat2d)->ArgName("eager")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
// tiny-chain: the chain on 1,024 elements, already compiled: the cost of one materialization.
BENCHMARK(BM_Chain)
    ->Name("BM_TinyChain")
    ->ArgNames({"eager", "n"})
    ->Args({0, 1024})
    ->Args({1, 1024})
    ->UseManualTime()
    ->Iterations(50)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
