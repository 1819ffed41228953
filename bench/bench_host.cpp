// Host-side costs that every call pays before a kernel runs: recording ops (the intern table of graph/Node.cpp) and
// lowering a plan (the memo and CSE tables of codegen/Lower.cpp). Nothing here launches a kernel, so it measures the
// same code on either backend; run it with --benchmark_repetitions=5 and read the medians.
#include "common.h"

#include "api/ApiAccess.h"
#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include "runtime/PlanCache.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

using lazyfuse::detail::graph_node;

namespace {

using namespace lazyfuse_bench;

Array ramp(std::int64_t n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  for (auto& x : v) x *= scale;
  return asarray(v, {n});
}

// The tiny-chain expression built and dropped: 12 ops interned, then erased from the table.
void BM_RecordChain(benchmark::State& state) {
  auto x = ramp(1024, 1e-3f).eval(), y = ramp(1024, 2e-3f).eval();
  for (auto _ : state) benchmark::DoNotOptimize(chain(x, y));
}

// 4,096 distinct nodes (and their scalar fills) alive at once, then dropped: the table grows and empties again.
void BM_RecordMany(benchmark::State& state) {
  auto x = ramp(1024, 1e-3f).eval();
  std::vector<Array> alive;
  alive.reserve(4096);
  for (auto _ : state) {
    for (int k = 0; k < 4096; ++k) alive.push_back(x * float(k));
    alive.clear();
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}

// Issue 19's time loop, x = x * 0.999 + 0.001 for 1,000 steps, recorded and dropped: 2,000 nodes built (the two
// scalars are interned once) and released. Target: 100 ns a node, quoted beside BM_NvrtcCold of the same machine.
constexpr int kLoopSteps = 1000;
Array time_loop(Array x) {
  for (int k = 0; k < kLoopSteps; ++k) x = x * 0.999f + 0.001f;
  return x;
}
void BM_RecordTimeLoop(benchmark::State& state) {
  const auto x = ramp(1024, 1e-3f).eval();
  for (auto _ : state) benchmark::DoNotOptimize(time_loop(x));
  state.counters["ns_per_node"] = benchmark::Counter(double(state.iterations()) * 2 * kLoopSteps,
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The walk a plan-cache hit of that loop starts with (runtime/PlanCache.h): its signature, 2,000 nodes numbered and
// hashed. Target for the whole hit: 50 us.
void BM_SignatureTimeLoop(benchmark::State& state) {
  const Array root = time_loop(ramp(1024, 1e-3f).eval());
  const std::vector<graph::NodePtr> roots{graph_node(root)};
  runtime::GraphSignature sig;
  for (auto _ : state) {
    runtime::compute_signature(roots, {}, sig);
    benchmark::DoNotOptimize(sig.hash);
  }
}

// The whole evaluation of that loop on a one-element array, a plan-cache hit from the second call: recording
// (`record_us`) and eval() (`eval_us`: the signature, the cache lookup, binding, running the plan, releasing the
// 2,000 nodes), means over every call. On the CPU backend the plan's one kernel does 2,000 steps of one element, so
// eval_us is nearly all host work of the hit; on the GPU, bench_loops' BM_UpdateLoop splits the same call.
void BM_EvalTimeLoop(benchmark::State& state) {
  const auto x = ramp(1, 1e-3f).eval();
  using Clock = std::chrono::steady_clock;
  double record_seconds = 0, eval_seconds = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    Array y = time_loop(x);
    const auto t1 = Clock::now();
    y.eval();
    y = Array();
    const auto t2 = Clock::now();
    record_seconds += std::chrono::duration<double>(t1 - t0).count();
    eval_seconds += std::chrono::duration<double>(t2 - t1).count();
  }
  const double calls = double(std::max<benchmark::IterationCount>(state.iterations(), 1));
  state.counters["record_us"] = 1e6 * record_seconds / calls;
  state.counters["eval_us"] = 1e6 * eval_seconds / calls;
}

// One step of a Jacobi solver on a lazy grid (the state of bench_loops' BM_JacobiSolver between its checks): five
// shifted views, four adds, a scale and a slice assignment, recorded and dropped. A solver that reads a norm every
// few steps pays this on the host while the device waits.
void BM_RecordJacobiStep(benchmark::State& state) {
  const std::int64_t n = 64;
  const Array u = ramp(n * n, 1e-3f).eval().reshape({n, n}) * 1.0f, f = ramp(n * n, 2e-3f).eval().reshape({n, n});
  const Slice in = slice(1, -1);
  for (auto _ : state)
    benchmark::DoNotOptimize(u.at(in, in).set(0.25f * (u(slice(0, -2), in) + u(slice(2, none), in) +
                                                       u(in, slice(0, -2)) + u(in, slice(2, none)) + f(in, in))));
}

// Lowering only (partitioned once): what a materialization of a new structure costs beyond partitioning.
void BM_LowerChain(benchmark::State& state) {
  auto x = ramp(1024, 1e-3f).eval(), y = ramp(1024, 2e-3f).eval();
  const auto root = chain(x, y);
  const auto plan = fusion::partition({graph_node(root)}, {}).back();
  for (auto _ : state) benchmark::DoNotOptimize(codegen::lower(plan));
}

// Black-Scholes' two outputs over shared subexpressions: more CSE hits.
void BM_LowerBlackScholes(benchmark::State& state) {
  auto S = ramp(4096, 1e-2f).eval() + 10.0f, K = ramp(4096, 2e-2f).eval() + 10.0f, T = ramp(4096, 1e-4f).eval() + 0.1f;
  const auto [call, put] = black_scholes_prices(S, K, T);
  std::vector<graph::NodePtr> roots{graph_node(call), graph_node(put)};
  const auto plan = fusion::partition(roots, {}).back();
  for (auto _ : state) benchmark::DoNotOptimize(codegen::lower(plan));
}

// A row reduction over a chain: the memo table keys values by loop frame.
void BM_LowerReduction(benchmark::State& state) {
  auto x = ramp(64 * 256, 1e-4f).eval().reshape({64, 256}), y = ramp(64 * 256, 2e-4f).eval().reshape({64, 256});
  const auto root = sum(chain(x, y), 1);
  const auto plan = fusion::partition({graph_node(root)}, {}).back();
  for (auto _ : state) benchmark::DoNotOptimize(codegen::lower(plan));
}

} // namespace

// What recording's ingredients cost on this host, to tell why hosts differ more at recording than at compiling
// (the H200's host recorded 3.3x slower than the 2-core machine where NVRTC was 1.8x slower): a dependent
// multiply-add (the clock), a locked instruction (an uncontended atomic increment) and a small block from malloc
// and back. Each reports ns per operation.
void BM_HostDependentMultiplyAdd(benchmark::State& state) {
  constexpr int kOps = 1000;
  std::uint64_t x = 1;
  for (auto _ : state) {
    for (int k = 0; k < kOps; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      benchmark::DoNotOptimize(x);
    }
  }
  state.counters["ns_per_op"] =
      benchmark::Counter(double(state.iterations()) * kOps, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
void BM_HostAtomicIncrement(benchmark::State& state) {
  constexpr int kOps = 1000;
  std::atomic<std::uint64_t> count{0};
  for (auto _ : state)
    for (int k = 0; k < kOps; ++k) count.fetch_add(1, std::memory_order_relaxed);
  benchmark::DoNotOptimize(count.load());
  state.counters["ns_per_op"] =
      benchmark::Counter(double(state.iterations()) * kOps, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
// The same increment while another thread increments the same counter: what a node's count costs when a second
// thread (a release on another thread, issue 19) updates the counts of the nodes this one records with, such as
// the scalars every step of a loop reads. The counter's cache line moves between the two cores.
void BM_HostAtomicShared(benchmark::State& state) {
  constexpr int kOps = 1000;
  std::atomic<std::uint64_t> count{0};
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop.load(std::memory_order_relaxed)) count.fetch_add(1, std::memory_order_relaxed);
  });
  for (auto _ : state)
    for (int k = 0; k < kOps; ++k) count.fetch_add(1, std::memory_order_relaxed);
  stop = true;
  other.join();
  state.counters["ns_per_op"] =
      benchmark::Counter(double(state.iterations()) * kOps, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
void BM_HostMallocFree(benchmark::State& state) {
  constexpr int kOps = 1000;
  for (auto _ : state)
    for (int k = 0; k < kOps; ++k) {
      void* p = ::operator new(64);
      benchmark::DoNotOptimize(p);
      ::operator delete(p);
    }
  state.counters["ns_per_op"] =
      benchmark::Counter(double(state.iterations()) * kOps, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_RecordChain)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_RecordMany)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RecordTimeLoop)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SignatureTimeLoop)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EvalTimeLoop)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_RecordJacobiStep)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_LowerChain)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_LowerBlackScholes)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_LowerReduction)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_HostDependentMultiplyAdd)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HostAtomicIncrement)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HostAtomicShared)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_HostMallocFree)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
