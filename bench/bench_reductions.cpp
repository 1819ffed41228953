// The reduction workloads of shared/PERF_TARGETS.md (sumsq, softmax, rowvar) and a column sum, fused and in eager
// mode, beside a device-to-device copy. Timing and checks: bench/common.h.
#include "common.h"

using namespace lazyfuse_bench;

namespace {

constexpr std::int64_t kRows = 16384, kCols = 4096;

Array random_matrix(std::uint64_t seed) {
  return random_f32(kRows * kCols, -3, 3, seed).reshape({kRows, kCols}).eval();
}

// Eager kernels per call are counted by running the expression in eager mode on the CPU backend, but for sumsq: its
// eager sum of a buffer of 2^26 floats is cub::DeviceReduce's two kernels (LAZYFUSE_ACCELERATORS=cub, the default).
void BM_SumSq(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = std::int64_t(1) << 26;
  auto x = random_f32(n, -2, 2, 11).eval(), y = random_f32(n, -2, 2, 12).eval();
  Mode mode(eager);
  measure(
      state, [&] { sum(square(x - y)).eval(); }, eager ? 4 : 1, 2.0 * 4.0 * double(n));
}

void BM_Softmax(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  auto m = random_matrix(13);
  Mode mode(eager);
  measure(
      state,
      [&] {
        auto e = exp(m - max(m, 1, true));
        (e / sum(e, 1, true)).eval();
      },
      eager ? 5 : 1, 2.0 * 4.0 * double(kRows * kCols));
}

// Softmax over about 2^26 float32 in rows of `cols`: rows an attention's (1024, 2048), rows ending inside a block's
// trip of 1024 (768, 1536, 5000), the longest that the register path holds (8192) and longer ones (10240).
void BM_SoftmaxWidth(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t cols = state.range(0), rows = (std::int64_t(1) << 26) / cols;
  auto m = random_f32(rows * cols, -3, 3, 18).reshape({rows, cols}).eval();
  measure(
      state,
      [&] {
        auto e = exp(m - max(m, 1, true));
        (e / sum(e, 1, true)).eval();
      },
      1, 2.0 * 4.0 * double(rows * cols));
}

void BM_RowVar(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  auto m = random_matrix(14);
  Mode mode(eager);
  measure(
      state, [&] { (mean(m * m, 1) - square(mean(m, 1))).eval(); }, eager ? 7 : 1,
      4.0 * double(kRows * kCols) + 4.0 * kRows);
}

void BM_ColumnSum(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  auto m = random_matrix(15);
  Mode mode(eager);
  measure(
      state, [&] { sum(m, 0).eval(); }, 1, 4.0 * double(kRows * kCols) + 4.0 * kCols);
}

// Plain reductions of a buffer, nothing fused before or after: the cases LAZYFUSE_ACCELERATORS=cub (the default)
// hands to CUB where it measured faster (runtime/Accelerators.h), against the fused kernel (accelerators off).
struct Accelerators {
  explicit Accelerators(bool on) { config::set("LAZYFUSE_ACCELERATORS", on ? "cub" : ""); }
  ~Accelerators() { config::reset("LAZYFUSE_ACCELERATORS"); }
};

void BM_PlainSum(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool cub = state.range(0) != 0;
  const std::int64_t n = std::int64_t(1) << 26;
  auto x = random_f32(n, -2, 2, 16);
  Accelerators accelerators(cub);
  // cub::DeviceReduce: a reduce pass and a single-tile pass.
  measure(
      state, [&] { sum(x).eval(); }, cub ? 2 : 1, 4.0 * double(n));
}

void BM_RowSum(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool cub = state.range(0) != 0;
  auto m = random_matrix(17);
  Accelerators accelerators(cub);
  // cub::DeviceSegmentedReduce: one kernel, one block per row.
  measure(
      state, [&] { sum(m, 1).eval(); }, 1, 4.0 * double(kRows * kCols) + 4.0 * kRows);
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumSq)->ArgName("eager")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Softmax)->ArgName("eager")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SoftmaxWidth)
    ->ArgName("cols")
    ->Arg(768)
    ->Arg(1024)
    ->Arg(1536)
    ->Arg(2048)
    ->Arg(5000)
    ->Arg(8192)
    ->Arg(10240)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowVar)->ArgName("eager")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ColumnSum)
    ->ArgName("eager")
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_PlainSum)->ArgName("cub")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowSum)->ArgName("cub")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
