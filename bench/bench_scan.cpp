// Scans (scans.hpp) on the GPU beside a device-to-device copy: cumsum of 2^25 float32 (the single-pass look-back
// kernel; bytes: one read and one write), with an elementwise input fused in, along the rows and along the columns of
// a matrix, each call one kernel; sort, argsort and unique (sorting.hpp) of 2^25 float32; bincount of 2^25 int32.
// Timing and checks: bench/common.h.
#include "common.h"

#include <lazyfuse/scans.hpp>
#include <lazyfuse/sorting.hpp>

using namespace lazyfuse_bench;

namespace {

constexpr std::int64_t kN = std::int64_t(1) << 25;
constexpr std::int64_t kRows = 4096, kCols = 8192;
constexpr std::int64_t kBins = 4096;

void BM_Cumsum(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = random_f32(kN, -1, 1, 21).eval();
  measure(
      state, [&] { cumsum(x).eval(); }, 1, 2.0 * 4.0 * double(kN));
}

void BM_CumsumFused(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = random_f32(kN, -1, 1, 22).eval();
  measure(
      state, [&] { cumsum(x * x + 1.0f).eval(); }, 1, 2.0 * 4.0 * double(kN));
}

void BM_CumsumRows(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto m = random_f32(kRows * kCols, -1, 1, 23).reshape({kRows, kCols}).eval();
  measure(
      state, [&] { cumsum(m, 1).eval(); }, 1, 2.0 * 4.0 * double(kRows * kCols));
}

void BM_CumsumColumns(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto m = random_f32(kRows * kCols, -1, 1, 24).reshape({kRows, kCols}).eval();
  measure(
      state, [&] { cumsum(m, 0).eval(); }, 1, 2.0 * 4.0 * double(kRows * kCols));
}

// sort and argsort of 2^25 float32 (no NaNs): cub::DeviceRadixSort (runtime/CubSort.h). sort: SortKeys into the
// output and the NaN check kernel; argsort: the positions kernel, SortPairs of (value, 32-bit position), the NaN check
// and the kernel that widens the positions to int64. Bytes: the values read and the result written once.
void BM_Sort(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = random_f32(kN, -1, 1, 25).eval();
  measure(
      state, [&] { sort(x).eval(); }, 1, 2.0 * 4.0 * double(kN), 1);
}

void BM_Argsort(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = random_f32(kN, -1, 1, 26).eval();
  measure(
      state, [&] { argsort(x).eval(); }, 3, (4.0 + 8.0) * double(kN), 1);
}

// unique of 2^25 float32 (NumPy's unique: the sorted distinct values): the sort of BM_Sort, then one pass of
// cub::DeviceSelect::Unique over the sorted values (2 kernels) and its count read on the host (runtime/Selection.h).
// Minimal bytes: the values read once and
// the distinct values written (nearly all of them: ties among 2^25 float32 uniforms are few), counted once before.
void BM_Unique(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto x = random_f32(kN, -1, 1, 29).eval();
  const std::int64_t distinct = unique(x).size();
  state.counters["distinct"] = double(distinct);
  measure(
      state, [&] { unique(x).eval(); }, 3, 4.0 * double(kN + distinct), 1);
}

// bincount of 2^25 int32 uniform in [0, 4096) (runtime/Counting.h). NumPy's bincount needs the largest value to size
// its result: one kernel counts into provisional bins and finds the range, read on the host (16 bytes); bincount_fixed,
// with the number of bins known, is the count alone. Minimal bytes: the values read once and the counts written.
Array random_bins(std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<std::int32_t> v(static_cast<std::size_t>(kN));
  for (auto& e : v) e = std::int32_t(g() % kBins);
  return asarray(v, {kN}).eval();
}

void BM_Bincount(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto k = random_bins(27);
  measure(
      state, [&] { bincount(k).eval(); }, 1, 4.0 * double(kN) + 8.0 * kBins);
}

void BM_BincountFixed(benchmark::State& state) {
  if (!has_gpu(state)) return;
  auto k = random_bins(28);
  measure(
      state, [&] { bincount_fixed(k, kBins).eval(); }, 1, 4.0 * double(kN) + 8.0 * kBins);
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Cumsum)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CumsumFused)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CumsumRows)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CumsumColumns)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sort)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Argsort)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Unique)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bincount)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BincountFixed)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
