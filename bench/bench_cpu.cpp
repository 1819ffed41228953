// The CPU backend on the workloads of issue 20, side by side with NumPy (bench/cpu/run_numpy.py runs this program
// and NumPy in one run and prints one table). Every iteration rebuilds its expression from the materialized leaves
// and evaluates it (a fresh output buffer each time, as a user's loop gets), so thread start-up, page faults of
// fresh outputs and the interpreter all count. Run with --benchmark_repetitions=5 and read the medians.
//
// BM_StreamSum is the memory-read reference: a hand-written float sum over all hardware threads, compiled with -O3
// -march=native (bench/CMakeLists.txt), whose GB/s a full reduction is compared against.
#include "runtime/LlvmCodegen.h"
#include "workloads.h"

#include <lazyfuse/lazyfuse.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace lazyfuse;

// Uniform in [-2, 2], the same distribution bench/cpu/run_numpy.py draws.
std::vector<float> uniform_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(g);
  return v;
}

Array uniform(Shape shape, std::uint64_t seed) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  Array a = asarray(uniform_values(n, seed), shape);
  a.eval();
  return a;
}

// Uniform in [lo, hi] (Black-Scholes' prices and times), the same ranges bench/cpu/run_numpy.py draws.
Array uniform_in(std::int64_t n, float lo, float hi, std::uint64_t seed) {
  return (uniform({n}, seed) * ((hi - lo) / 4.0f) + (lo + hi) / 2.0f).eval();
}

void set_bytes(benchmark::State& state, double bytes_per_iteration) {
  state.SetBytesProcessed(std::int64_t(bytes_per_iteration * double(state.iterations())));
}

void BM_WhereSqrtExp(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array x = uniform({n}, 1);
  for (auto _ : state) {
    Array y = where(x > 0, sqrt(x) * 2.0, exp(x) - 1.0);
    y.eval();
  }
  set_bytes(state, 8.0 * double(n));
}

void BM_Axpb(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array x = uniform({n}, 2);
  for (auto _ : state) {
    Array y = x * 2.0 + 1.0;
    y.eval();
  }
  set_bytes(state, 8.0 * double(n));
}

void BM_Sum(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array x = uniform({n}, 3);
  for (auto _ : state) benchmark::DoNotOptimize(sum(x).item<float>());
  set_bytes(state, 4.0 * double(n));
}

// (x - mean) / std, then the fraction of z > 2: NumPy evaluates four passes and two temporaries.
void BM_StandardizeThenMean(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array x = uniform({n}, 4);
  for (auto _ : state) {
    Array z = (x - mean(x)) / stddev(x);
    benchmark::DoNotOptimize(mean(z > 2.0).item<double>());
  }
  set_bytes(state, 4.0 * double(n));
}

void BM_RowSums(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array a = uniform({n, n}, 5);
  for (auto _ : state) {
    Array s = sum(a, {1});
    s.eval();
  }
  set_bytes(state, 4.0 * double(n) * double(n));
}

void BM_RowSoftmax(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array a = uniform({n, n}, 6);
  for (auto _ : state) {
    Array e = exp(a - max(a, {1}, true));
    Array s = e / sum(e, {1}, true);
    s.eval();
  }
  set_bytes(state, 8.0 * double(n) * double(n));
}

// PERF_TARGETS.md's chain: 12 elementwise ops of two arrays (bench/workloads.h).
void BM_Chain(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array x = uniform({n}, 11), y = uniform({n}, 12);
  for (auto _ : state) lazyfuse_bench::chain(x, y).eval();
  set_bytes(state, 12.0 * double(n));
}

// PERF_TARGETS.md's Black-Scholes: call and put of S, K, T (bench/workloads.h), one kernel with two outputs.
void BM_BlackScholes(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array S = uniform_in(n, 10, 100, 13), K = uniform_in(n, 10, 100, 14), T = uniform_in(n, 0.1f, 2, 15);
  for (auto _ : state) {
    const auto [call, put] = lazyfuse_bench::black_scholes_prices(S, K, T);
    eval(call, put);
  }
  set_bytes(state, 20.0 * double(n));
}

// mean(m * m, 1) - mean(m, 1)**2: two reductions of the same rows in one kernel.
void BM_RowVariance(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array m = uniform({n, n}, 16);
  for (auto _ : state) {
    Array v = mean(m * m, {1}) - square(mean(m, {1}));
    v.eval();
  }
  set_bytes(state, 4.0 * double(n) * double(n));
}

// One explicit step of the periodic heat equation on a grid, through `roll`.
Array heat_roll_step(const Array& u) {
  return u + 0.1f * (roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1) - 4.0f * u);
}

// A periodic heat step through `roll`, evaluated every step as a time loop that checks its state would: each
// iteration is one step of an n x n float32 grid.
void BM_HeatRoll(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  Array u = uniform({n, n}, 17);
  for (auto _ : state) {
    u = heat_roll_step(u);
    u.eval();
  }
  set_bytes(state, 8.0 * double(n) * double(n));
}

// The same heat step as a time loop that never evaluates: `steps` steps recorded, one eval at the end (the time is the
// whole loop; bytes_per_second counts a step's minimal bytes per step, comparable with BM_HeatRoll's). Issue 19 asks
// for this within 10% of BM_HeatRoll's step.
void BM_HeatRollNoEval(benchmark::State& state) {
  const std::int64_t n = state.range(0), steps = state.range(1);
  Array u = uniform({n, n}, 17);
  for (auto _ : state) {
    for (std::int64_t k = 0; k < steps; ++k) u = heat_roll_step(u);
    u.eval();
  }
  set_bytes(state, 8.0 * double(n) * double(n) * double(steps));
}

// What a full reduction could reach: every hardware thread sums its contiguous share in 16 independent lanes
// (vectorized without reassociation), then the shares are added.
void BM_StreamSum(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const std::vector<float> v = uniform_values(n, 7);
  const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (auto _ : state) {
    std::vector<float> partial(std::size_t(threads), 0.0f);
    std::vector<std::thread> pool;
    const std::int64_t per = (n + threads - 1) / threads / 16 * 16;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const std::int64_t b = t * per, e = t + 1 == threads ? n : std::min(n, b + per);
        float lanes[16] = {};
        std::int64_t i = b;
        for (; i + 16 <= e; i += 16)
          for (int l = 0; l < 16; ++l) lanes[l] += v[std::size_t(i + l)];
        float s = 0;
        for (; i < e; ++i) s += v[std::size_t(i)];
        for (float l : lanes) s += l;
        partial[std::size_t(t)] = s;
      });
    for (auto& t : pool) t.join();
    float total = 0;
    for (float p : partial) total += p;
    benchmark::DoNotOptimize(total);
  }
  set_bytes(state, 4.0 * double(n));
}

// A cold compile by the LLVM CPU code generator (runtime/LlvmCodegen.h): each iteration empties the kernel cache and
// runs the kernel of `make` once on a small input with LAZYFUSE_CPU_CODEGEN=llvm. Argument 0: compiled every time
// (LAZYFUSE_CACHE_IN_MEMORY=1); counters compile_ms, the mean compile time alone (lowering, linking the op library,
// -O3, machine code), and setup_ms, the one-time JIT setup of the process (target detection, LLJIT), paid by the
// first compile of all and not in compile_ms. Argument 1: loaded from the disk cache (a fresh directory, filled
// before the timing), as a second run of a program does; counter load_ms (lowering, linking, the cache's key and
// read, loading the object code). Skipped in a build without LLVM.
template <class Make> void cold_compile(benchmark::State& state, Make make) {
  if (!runtime::llvm_codegen_built()) {
    state.SkipWithError("built without the LLVM code generator");
    return;
  }
  const bool from_disk = state.range(0) != 0;
  std::string dir = "/tmp/lazyfuse_bench_cpu_XXXXXX";
  if (from_disk && ::mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  config::set("LAZYFUSE_CPU_CODEGEN", "llvm");
  if (from_disk)
    config::set("LAZYFUSE_CACHE_DIR", dir);
  else
    config::set("LAZYFUSE_CACHE_IN_MEMORY", "1");
  Array x = uniform({64, 64}, 8);
  clear_kernel_cache();
  if (from_disk) make(x).eval();
  const auto before = runtime::cpu_codegen_stats();
  for (auto _ : state) {
    clear_kernel_cache();
    make(x).eval();
  }
  const auto after = runtime::cpu_codegen_stats();
  const double compiles = double(after.compiled - before.compiled), loads = double(after.disk_hits - before.disk_hits);
  state.counters["compiles"] = compiles;
  state.counters["disk_loads"] = loads;
  if (from_disk)
    state.counters["load_ms"] = loads > 0 ? 1e3 * (after.disk_load_seconds - before.disk_load_seconds) / loads : 0;
  else
    state.counters["compile_ms"] = compiles > 0 ? 1e3 * (after.compile_seconds - before.compile_seconds) / compiles : 0;
  state.counters["setup_ms"] = 1e3 * after.setup_seconds;
  config::reset("LAZYFUSE_CPU_CODEGEN");
  config::reset("LAZYFUSE_CACHE_DIR");
  config::reset("LAZYFUSE_CACHE_IN_MEMORY");
  if (from_disk) std::filesystem::remove_all(dir);
}

void BM_ColdCompileElementwise(benchmark::State& state) {
  cold_compile(state, [](const Array& x) { return where(x > 0, sqrt(x) * 2.0, exp(x) - 1.0); });
}

void BM_ColdCompileReduction(benchmark::State& state) {
  cold_compile(state, [](const Array& x) { return sum(x * 2.0f + 1.0f, {1}); });
}

constexpr std::int64_t k2To24 = std::int64_t(1) << 24;

BENCHMARK(BM_ColdCompileElementwise)
    ->ArgName("from_disk")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ColdCompileReduction)->ArgName("from_disk")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK(BM_StreamSum)->Arg(k2To24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhereSqrtExp)->Arg(k2To24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Axpb)->Arg(std::int64_t(4) << 20)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sum)->Arg(k2To24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StandardizeThenMean)->Arg(k2To24)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowSums)->Arg(4096)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowSoftmax)->Arg(4096)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeatRoll)->Arg(1024)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HeatRollNoEval)->Args({1024, 20})->UseRealTime()->Unit(benchmark::kMillisecond);
// The same rows at sizes of at least four times this machine class's last-level cache (32 MiB): 2^26 float32 and
// 8192 x 8192, and PERF_TARGETS.md's chain and Black-Scholes at its sizes.
constexpr std::int64_t k2To26 = std::int64_t(1) << 26;
BENCHMARK(BM_StreamSum)->Arg(k2To26)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhereSqrtExp)->Arg(k2To26)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Axpb)->Arg(k2To26)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sum)->Arg(k2To26)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StandardizeThenMean)->Arg(k2To26)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowSums)->Arg(8192)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowSoftmax)->Arg(8192)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RowVariance)->Arg(8192)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chain)->Arg(k2To26)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BlackScholes)->Arg(std::int64_t(1) << 25)->UseRealTime()->Unit(benchmark::kMillisecond);

} // namespace

int main(int argc, char** argv) {
  // The CPU backend even on a GPU machine: this program measures the host code path.
  lazyfuse::config::set("LAZYFUSE_BACKEND", "cpu");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
