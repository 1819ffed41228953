// Random numbers (include/lazyfuse/random.hpp): 2^26 float32 uniforms and standard normals written to memory
// (against bench_limits' BM_LimitWriteOnly, the write-only bandwidth, and BM_CopyReference here), a float64 normal
// draw, and the fused Monte Carlo European option (examples/monte_carlo_option.cpp: GBM terminal values of 2^26
// paths, payoff, mean in one kernel, no random array stored). bench/peers/run_peers.py measures torch, CuPy and JAX
// on the same workloads (--workloads random). Timing and checks: bench/common.h; every call draws new numbers
// (the generator's counter advances), so no call repeats another's work.
#include "common.h"

using namespace lazyfuse_bench;

namespace {

constexpr std::int64_t kN = std::int64_t(1) << 26;

void BM_Random(benchmark::State& state) {
  if (!has_gpu(state)) return;
  random::Generator g(1);
  measure(
      state, [&] { g.random({kN}, DType::Float32).eval(); }, 1, 4.0 * double(kN));
}

void BM_StandardNormal(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const DType t = state.range(0) == 64 ? DType::Float64 : DType::Float32;
  random::Generator g(2);
  measure(
      state, [&] { g.standard_normal({kN}, t).eval(); }, 1, double(itemsize(t)) * double(kN));
}

// The option of examples/monte_carlo_option.cpp, priced from 2^26 paths: one kernel, and no bytes but the result.
void BM_MonteCarloOption(benchmark::State& state) {
  if (!has_gpu(state)) return;
  random::Generator g(3);
  const double S0 = 100, K = 105, rate = 0.03, sigma = 0.25, T = 1.5;
  const float drift = float((rate - 0.5 * sigma * sigma) * T), vol = float(sigma * std::sqrt(T));
  const float discount = float(std::exp(-rate * T));
  double price = 0;
  measure(
      state,
      [&] {
        Array z = g.standard_normal({kN}, DType::Float32);
        Array p = mean(discount * maximum(float(S0) * exp(drift + vol * z) - float(K), 0.0f));
        p.eval();
      },
      1, 0);
  // The last price, checked against Black-Scholes (standard error about 0.0022 at 2^26 paths).
  {
    Array z = g.standard_normal({kN}, DType::Float32);
    price = mean(discount * maximum(float(S0) * exp(drift + vol * z) - float(K), 0.0f)).item<float>();
  }
  auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double d1 = (std::log(S0 / K) + (rate + 0.5 * sigma * sigma) * T) / (sigma * std::sqrt(T));
  const double exact = S0 * cdf(d1) - K * std::exp(-rate * T) * cdf(d1 - sigma * std::sqrt(T));
  state.counters["price"] = price;
  if (std::fabs(price - exact) > 0.02) state.SkipWithError("the Monte Carlo price is off the closed form");
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Random)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StandardNormal)
    ->ArgName("bits")
    ->Arg(32)
    ->Arg(64)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MonteCarloOption)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
