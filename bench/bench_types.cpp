// The element types of issue 14 (float16, bfloat16, complex64, complex128) on the workloads of its Performance
// section, fused and in eager mode, beside a device-to-device copy. Timing and checks: bench/common.h. Bytes per call
// are the minimal ones at the type's size: each input read once, the output written once.
//
// The half chain is the float32 chain's expression on float16 or bfloat16 inputs; lazyfuse rounds every op's result
// to the type (docs/semantics.md), so its arithmetic, not its bytes, bounds it: bench_limits' BM_LimitChainF16 and
// BM_LimitChainBF16 are the same math with the same per-op rounding. Sums of halves accumulate in float32 and round
// once.
#include "common.h"

#include <complex>

using namespace lazyfuse_bench;

namespace {

Array random_as(DType type, std::int64_t n, float lo, float hi, std::uint64_t seed) {
  return random_f32(n, lo, hi, seed).astype(type).eval();
}

template <class R> Array random_complex(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<R> d(-2, 2);
  std::vector<std::complex<R>> v(static_cast<std::size_t>(n));
  for (auto& z : v) {
    const R re = d(g);
    z = {re, d(g)};
  }
  return asarray(v, {n});
}

// A promotion would time another workload than the row's name says: the result type is checked before timing.
bool has_type(benchmark::State& state, const Array& result, DType want) {
  if (result.dtype() == want) return true;
  const std::string why = "the expression's type is " + std::string(dtype_name(result.dtype())) + ", expected " +
                          std::string(dtype_name(want));
  state.SkipWithError(why.c_str());
  return false;
}

// Eager: sin, cos, *, x*y, *0.5, +, -x, *x, exp, -, abs, sqrt (as the float32 chain; counted on the CPU backend).
constexpr std::uint64_t kChainOps = 12;

void half_chain(benchmark::State& state, DType type) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = std::int64_t(1) << 26;
  auto x = random_as(type, n, -2, 2, 1), y = random_as(type, n, -2, 2, 2);
  if (!has_type(state, chain(x, y), type)) return;
  Mode mode(eager);
  measure(
      state, [&] { chain(x, y).eval(); }, eager ? kChainOps : 1, 3.0 * 2.0 * double(n));
}
void BM_ChainF16(benchmark::State& state) {
  half_chain(state, DType::Float16);
}
void BM_ChainBF16(benchmark::State& state) {
  half_chain(state, DType::BFloat16);
}

// Plain reductions go to CUB or not by LAZYFUSE_ACCELERATORS; the eager sum of halves would hand its float32 step
// to CUB (two kernels) where the fused one cannot (CUB takes no halves): both rows run with the setting empty, so
// that each is one known count of generated kernels.
struct NoAccelerators {
  NoAccelerators() { config::set("LAZYFUSE_ACCELERATORS", ""); }
  ~NoAccelerators() { config::reset("LAZYFUSE_ACCELERATORS"); }
};

// sum of 2^26 halves in [-1, 1) (a sum of [0, 1) values would overflow float16), accumulated in float32 and rounded
// once: one kernel fused; eager, the cast up, the float32 sum and the cast down (3, counted on the CPU backend).
void half_sum(benchmark::State& state, DType type) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = std::int64_t(1) << 26;
  auto x = random_as(type, n, -1, 1, 16);
  if (!has_type(state, sum(x), type)) return;
  NoAccelerators accelerators;
  Mode mode(eager);
  measure(
      state, [&] { sum(x).eval(); }, eager ? 3 : 1, 2.0 * double(n));
}
void BM_SumF16(benchmark::State& state) {
  half_sum(state, DType::Float16);
}
void BM_SumBF16(benchmark::State& state) {
  half_sum(state, DType::BFloat16);
}

// a * b + c, complex64 (2^25, 8 bytes an element) and complex128 (2^24, 16 bytes): a GiB per call either way.
template <class R> void complex_madd(benchmark::State& state, std::int64_t n) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  auto a = random_complex<R>(n, 21), b = random_complex<R>(n, 22), c = random_complex<R>(n, 23);
  if (!has_type(state, a * b + c, dtype_of<std::complex<R>>())) return;
  Mode mode(eager);
  measure(
      state, [&] { (a * b + c).eval(); }, eager ? 2 : 1, 4.0 * double(sizeof(std::complex<R>)) * double(n));
}
void BM_ComplexMaddC64(benchmark::State& state) {
  complex_madd<float>(state, std::int64_t(1) << 25);
}
void BM_ComplexMaddC128(benchmark::State& state) {
  complex_madd<double>(state, std::int64_t(1) << 24);
}

// float16 -> float32 -> float16 around one op: the casts fuse with it (one kernel reading and writing halves).
void BM_AstypeRoundTripF16(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const bool eager = state.range(0) != 0;
  const std::int64_t n = std::int64_t(1) << 26;
  auto x = random_as(DType::Float16, n, -2, 2, 17);
  auto round_trip = [&] { return (x.astype(DType::Float32) * 2).astype(DType::Float16); };
  if (!has_type(state, round_trip(), DType::Float16)) return;
  Mode mode(eager);
  // Eager: the cast up, the product, the cast down.
  measure(
      state, [&] { round_trip().eval(); }, eager ? 3 : 1, 2.0 * 2.0 * double(n));
}

// The exact (erf) GELU of 2^27 values in [-3, 3) (the MLP block's output of bench_matmul, 16384 x 8192), by element
// type (0 float32, 1 bfloat16, 2 float16): bench_matmul's bfloat16 block spent 0.53 ms in this kernel where the
// float32 block spent 0.36 ms on twice the bytes, so the row tells the kernel's own cost per type.
void BM_GeluByType(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const DType types[] = {DType::Float32, DType::BFloat16, DType::Float16};
  const DType type = types[state.range(0)];
  const std::int64_t n = std::int64_t(1) << 27;
  auto x = random_as(type, n, -3, 3, 23);
  if (!has_type(state, gelu(x), type)) return;
  measure(
      state, [&] { gelu(x).eval(); }, 1, 2.0 * double(itemsize(type)) * double(n));
}

void eager_args(benchmark::internal::Benchmark* b) {
  b->ArgName("eager")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainF16)->Apply(eager_args);
BENCHMARK(BM_ChainBF16)->Apply(eager_args);
BENCHMARK(BM_SumF16)->Apply(eager_args);
BENCHMARK(BM_SumBF16)->Apply(eager_args);
BENCHMARK(BM_ComplexMaddC64)->Apply(eager_args);
BENCHMARK(BM_ComplexMaddC128)->Apply(eager_args);
BENCHMARK(BM_AstypeRoundTripF16)->Apply(eager_args);
BENCHMARK(BM_GeluByType)
    ->ArgName("type")
    ->DenseRange(0, 2)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
