// Elementwise kernels whose operands disagree on the contiguous axis or broadcast (issue 19): a + b.T and x + x.T of
// 8192^2 float32, 3-d permutes copied into C order (ascontiguousarray) of 256 x 1024 x 1024 and of the odd
// 255 x 1000 x 1001; an 8192^2 matrix plus a row, times a column, its plain contiguous counterpart x * 2, and a layer
// norm with per-column scale and shift; each one kernel. Timing and kernel-count checks: bench/common.h. Bytes are the
// minimal bytes of a call: every operand read once, the result written once (x + x.T reads x once).
#include "common.h"

using namespace lazyfuse_bench;

namespace {

constexpr std::int64_t kSide = 8192;

Array matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  return random_f32(rows * cols, -1, 1, seed).reshape({rows, cols}).eval();
}

void BM_AddTransposed(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto a = matrix(kSide, kSide, 1), b = matrix(kSide, kSide, 2);
  measure(
      state, [&] { (a + b.T()).eval(); }, 1, 3.0 * 4.0 * double(kSide * kSide));
}

void BM_AddOwnTranspose(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = matrix(kSide, kSide, 3);
  measure(
      state, [&] { (x + x.T()).eval(); }, 1, 2.0 * 4.0 * double(kSide * kSide));
}

// ascontiguousarray(x.transpose(axes)) of a d0 x d1 x d2 float32 array; the arguments: d0, d1, d2 and the axes as
// one number (21 for (0, 2, 1)).
void BM_Permute(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t d0 = state.range(0), d1 = state.range(1), d2 = state.range(2), code = state.range(3);
  const std::vector<int> axes = {int(code / 100), int(code / 10 % 10), int(code % 10)};
  auto x = random_f32(d0 * d1 * d2, -1, 1, 4).reshape({d0, d1, d2}).eval();
  state.SetLabel("axes (" + std::to_string(axes[0]) + ", " + std::to_string(axes[1]) + ", " + std::to_string(axes[2]) +
                 ")");
  measure(
      state, [&] { ascontiguousarray(x.transpose(axes)).eval(); }, 1, 2.0 * 4.0 * double(d0 * d1 * d2));
}

// The plain contiguous kernel the broadcasts are compared with: one matrix read, one written.
void BM_ScaleContiguous(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = matrix(kSide, kSide, 5);
  measure(
      state, [&] { (x * 2).eval(); }, 1, 2.0 * 4.0 * double(kSide * kSide));
}

void BM_AddRow(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = matrix(kSide, kSide, 6);
  auto row = random_f32(kSide, -1, 1, 7).eval();
  measure(
      state, [&] { (x + row).eval(); }, 1, 2.0 * 4.0 * double(kSide * kSide) + 4.0 * kSide);
}

void BM_MulColumn(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = matrix(kSide, kSide, 8);
  auto column = matrix(kSide, 1, 9);
  measure(
      state, [&] { (x * column).eval(); }, 1, 2.0 * 4.0 * double(kSide * kSide) + 4.0 * kSide);
}

// A transformer's layer norm over rows of 8192, with per-column scale (gamma) and shift (beta).
void BM_LayerNorm(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = matrix(kSide, kSide, 10);
  auto gamma = random_f32(kSide, 0.5, 1.5, 11).eval(), beta = random_f32(kSide, -1, 1, 12).eval();
  measure(
      state, [&] { ((x - mean(x, 1, true)) / sqrt(var(x, 1, 0, true) + 1e-5f) * gamma + beta).eval(); }, 1,
      2.0 * 4.0 * double(kSide * kSide) + 2.0 * 4.0 * kSide);
}

// The same layer norm as torch's F.layer_norm computes it: a multiply by rsqrt(var + eps) instead of NumPy's division
// (session 25: with the row in registers, the division held the H200 at 91%, a multiply reached 97%).
void BM_LayerNormRsqrt(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = matrix(kSide, kSide, 10);
  auto gamma = random_f32(kSide, 0.5, 1.5, 11).eval(), beta = random_f32(kSide, -1, 1, 12).eval();
  measure(
      state, [&] { ((x - mean(x, 1, true)) * rsqrt(var(x, 1, 0, true) + 1e-5f) * gamma + beta).eval(); }, 1,
      2.0 * 4.0 * double(kSide * kSide) + 2.0 * 4.0 * kSide);
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AddTransposed)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AddOwnTranspose)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Permute)
    ->ArgNames({"d0", "d1", "d2", "axes"})
    ->Args({256, 1024, 1024, 21})
    ->Args({256, 1024, 1024, 210})
    ->Args({256, 1024, 1024, 102})
    ->Args({255, 1000, 1001, 21})
    ->Args({255, 1000, 1001, 210})
    ->Args({255, 1000, 1001, 102})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScaleContiguous)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AddRow)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MulColumn)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LayerNorm)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LayerNormRsqrt)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
