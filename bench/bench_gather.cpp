// Gathers and scatters (issue 17): a random gather fused with elementwise work, an embedding-style row gather, each
// beside a device-to-device copy, a boolean-mask selection and a scatter-add. Timing and kernel-count checks:
// bench/common.h. Bytes are the minimal bytes each call moves (indices read, gathered elements read, results written).
#include "common.h"

using namespace lazyfuse_bench;

namespace {

// x[idx] * a - b: 2^23 uniform random int64 indices into a 2^25-element float32 array (128 MiB: not in L2). One
// kernel; the gathered array is never stored.
void BM_RandomGather(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 25, m = std::int64_t(1) << 23;
  auto x = random_f32(n, -1, 1, 1).eval();
  auto idx = random::integers(0, n, {m}, DType::Int64).eval();
  measure(
      state, [&] { (x(idx) * 1.5f - 0.25f).eval(); }, 1, double(m) * (8.0 + 4.0 + 4.0));
}

// 32,768 rows of 512 float32 gathered from a 131,072-row table (256 MiB), scaled: one kernel, row-contiguous reads.
void BM_EmbeddingGather(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t rows = 131072, width = 512, picked = 32768;
  auto table = random_f32(rows * width, -1, 1, 2).reshape({rows, width}).eval();
  auto idx = random::integers(0, rows, {picked}, DType::Int64).eval();
  measure(
      state, [&] { (table(idx) * 2.0f).eval(); }, 1, double(picked) * (8.0 + 2.0 * 4.0 * double(width)));
}

// x[x > t] at 50% selectivity on 2^25 float32 (materialized): one kernel testing x > t itself (runtime/DeviceSelect.h,
// no mask written) and its 8-byte count polled in host memory (the synchronization of indexing.hpp;
// runtime/Selection.h, masked_values). Minimal bytes: x read once, the selected values written.
void BM_MaskSelect(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 25;
  auto x = random_f32(n, -1, 1, 3).eval();
  measure(
      state, [&] { x(x > 0.0f).eval(); }, 1, double(n) * (4.0 + 0.5 * 4.0));
}

// x.at(idx).add(v): 2^23 float32 values added into 2^20 float32 elements at int64 indices (NumPy's add.at; torch's
// index_add), uniform at random or (skewed) a third of them into one range of 2,000 elements. Kernels: the positions
// (a gather of an int32 arange), the bucketed fixed-point count's four (a block per bucket of 4,096 elements summing
// in shared memory after CUB's radix pass over the positions' top 8 bits, one library call; then the long runs' three,
// which return at once for uniform indices and take the skewed range's values by global atomics) and x plus the sums.
// Minimal bytes: the indices and values read once, x read and the result written.
void scatter_add(benchmark::State& state, bool skewed) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 20, m = std::int64_t(1) << 23;
  auto x = random_f32(n, -1, 1, 4).eval();
  auto idx = random::integers(0, n, {m}, DType::Int64).eval();
  if (skewed) {
    const auto crowded = (random::integers(0, 2000, {m}, DType::Int64) + 300000);
    idx = where(random::uniform(0, 1, {m}) < 1.0 / 3.0, crowded, idx).eval();
  }
  auto v = random_f32(m, -1, 1, 5).eval();
  measure(
      state, [&] { x.at(idx).add(v).eval(); }, 6, double(m) * (8.0 + 4.0) + double(n) * 2.0 * 4.0, 1);
}

void BM_ScatterAdd(benchmark::State& state) {
  scatter_add(state, false);
}

void BM_ScatterAddSkewed(benchmark::State& state) {
  scatter_add(state, true);
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RandomGather)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EmbeddingGather)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MaskSelect)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScatterAdd)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScatterAddSkewed)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
