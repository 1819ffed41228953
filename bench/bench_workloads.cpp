// The elementwise workloads of shared/PERF_TARGETS.md, fused and in eager mode, beside a device-to-device copy.
// Timing and checks: bench/common.h.
#include "common.h"

using namespace lazyfuse_bench;

namespace {

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

// The graph-building share of tiny-chain: the same expression built and dropped, not materialized (no kernel).
void BM_TinyChainBuildOnly(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = random_f32(1024, -2, 2, 1).eval(), y = random_f32(1024, -2, 2, 2).eval();
  measure(
      state, [&] { benchmark::DoNotOptimize(chain(x, y)); }, 0, 0);
}

void black_scholes(const Array& S, const Array& K, const Array& T) {
  const auto [call, put] = black_scholes_prices(S, K, T);
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
  auto step =
      c + 0.1f * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(2, none)) + u(in, slice(0, -2)) - 4.0f * c);
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
BENCHMARK(BM_BlackScholes)
    ->ArgName("eager")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
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
BENCHMARK(BM_TinyChainBuildOnly)->UseManualTime()->Iterations(50)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
