// Compute-bound kernels (issue 19): a kernel that generates its data and reads no memory, where the instructions per
// element, not the bytes, set the time. BM_GeneratedSum: arange(n) scrambled by an int64 multiply and a modulo by a
// scalar, cast to float32, scaled, masked around a sine, summed; one kernel. The peers' rows:
// bench/peers/run_compute_peers.py. Timing and kernel-count checks: bench/common.h; the minimal bytes are the 4 of the
// result, so no share of the copy bandwidth is quoted.
#include "common.h"

using namespace lazyfuse_bench;

namespace {

// The workload, as run_compute_peers.py writes it for every peer.
Array generated_sum(std::int64_t n) {
  constexpr std::int64_t kMultiplier = 1103515245, kModulus = 1000003;
  Array k = (arange(n) * kMultiplier) % kModulus;
  Array v = k.astype(DType::Float32) * (1.0f / float(kModulus));
  return sum(where(v > 0.25f, sin(v * 6.2831853f), 0.0f));
}

// The sum in double over the same float32 v, and the sum of the terms' magnitudes (the scale of its rounding error).
std::pair<double, double> generated_sum_reference(std::int64_t n) {
  double total = 0, magnitude = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = float((i * 1103515245) % 1000003) * (1.0f / 1000003.0f);
    const double term = v > 0.25f ? std::sin(double(v * 6.2831853f)) : 0.0;
    total += term;
    magnitude += std::abs(term);
  }
  return {total, magnitude};
}

void BM_GeneratedSum(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = state.range(0);
  const auto [want, magnitude] = generated_sum_reference(n);
  const double got = generated_sum(n).item<double>();
  if (!(std::abs(got - want) <= 1e-5 * magnitude)) {
    state.SkipWithError(("sum " + std::to_string(got) + ", expected " + std::to_string(want)).c_str());
    return;
  }
  measure(
      state, [&] { generated_sum(n).eval(); }, 1, 4.0);
  state.counters["result"] = got;
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GeneratedSum)
    ->ArgName("n")
    ->Arg(std::int64_t(1) << 26)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
