// Thread safety of the public API: several host threads build, evaluate and drop graphs at once.
//
// Threads share leaves (asarray'd once, then only read) and build structurally identical expressions, so the
// intern table hands one node to several threads while others destroy theirs; they evaluate through every
// path (eval, get, item, lazyfuse::eval, data_ptr), use views and slice assignment, and check every value
// against a reference computed here. Also: one thread materializes an array while others build on top of it,
// config::set/get of harmless settings and kernel_cache_stats() reads while others compute.
//
// CI builds this file under ThreadSanitizer and runs it on 2 cores (`ctest -R threads`). Size knobs:
// LAZYFUSE_TEST_THREAD_ITERS (iterations per thread, default 20), LAZYFUSE_TEST_THREAD_COUNT (threads, default 6),
// LAZYFUSE_TEST_SEED (random seed; printed on failure). On the CUDA backend every thread uses its own Stream.
#include "graph/Node.h"
#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::Array;
using lf::Shape;

int env_int(const char* name, int fallback, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  int x = std::atoi(v);
  return std::min(hi, std::max(lo, x));
}
int iterations() {
  return env_int("LAZYFUSE_TEST_THREAD_ITERS", 20, 1, 100000);
}
int thread_count() {
  return env_int("LAZYFUSE_TEST_THREAD_COUNT", 6, 2, 64);
}

using lazyfuse_test::seed;

std::vector<double> random_doubles(std::mt19937_64& rng, std::size_t n, double lo = -1, double hi = 1) {
  return lazyfuse_test::uniform_values(rng, n, lo, hi);
}

std::vector<std::int32_t> random_ints(std::mt19937_64& rng, std::size_t n, int lo, int hi) {
  return lazyfuse_test::uniform_values<std::int32_t>(rng, n, lo, hi);
}

bool close(double got, double want, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  return std::abs(got - want) <= rtol * std::abs(want) + rtol;
}

// Compares a computed array (read back as T) with a reference in row-major order.
template <class T>
::testing::AssertionResult Matches(const Array& a, const std::vector<double>& want, const Shape& shape,
                                   double rtol = 1e-12) {
  if (a.shape() != shape) return ::testing::AssertionFailure() << "shape mismatch";
  auto got = a.get<T>();
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!close(double(got[i]), want[i], rtol))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << double(got[i]) << ", want " << want[i] << " (seed " << seed() << ")";
  return ::testing::AssertionSuccess();
}

// Runs `body(thread_index)` on n threads; an exception in a thread is a test failure, not a crash.
void run_threads(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      try {
        lf::Stream stream; // the CUDA backend: one stream per thread; a no-op on the CPU backend
        lf::StreamGuard guard(stream);
        body(t);
        stream.synchronize();
      } catch (const std::exception& e) {
        errors[std::size_t(t)] = e.what();
      } catch (...) {
        errors[std::size_t(t)] = "unknown exception";
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < n; ++t)
    EXPECT_TRUE(errors[std::size_t(t)].empty())
        << "thread " << t << " threw: " << errors[std::size_t(t)] << " (seed " << seed() << ")";
}

constexpr std::int64_t R = 16, C = 24;

// Leaves every thread reads, and their host copies.
struct Shared {
  std::vector<double> a, b;     // a: (R, C), b: (C,)
  std::vector<std::int32_t> ai; // (R, C) in [0, 99]
  Array A, B, Ai;
};

Shared make_shared_leaves(std::uint64_t s) {
  std::mt19937_64 rng(s);
  Shared sh;
  sh.a = random_doubles(rng, std::size_t(R * C));
  sh.b = random_doubles(rng, std::size_t(C));
  sh.ai = random_ints(rng, std::size_t(R * C), 0, 99);
  sh.A = lf::asarray(sh.a, {R, C});
  sh.B = lf::asarray(sh.b, {C});
  sh.Ai = lf::asarray(sh.ai, {R, C});
  return sh;
}

std::vector<double> map2(const std::function<double(std::int64_t, std::int64_t)>& f, std::int64_t rows,
                         std::int64_t cols) {
  std::vector<double> v(std::size_t(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) v[std::size_t(i * cols + j)] = f(i, j);
  return v;
}

// One iteration of one thread's work: every kind of expression, checked, then dropped.
void work_iteration(const Shared& sh, int t, int it, std::mt19937_64& rng) {
  const auto& a = sh.a;
  const auto& b = sh.b;
  auto at = [](const std::vector<double>& v, std::int64_t i, std::int64_t j) { return v[std::size_t(i * C + j)]; };

  // Own leaf.
  const std::vector<double> c = random_doubles(rng, std::size_t(R * C));
  Array Cl = lf::asarray(c, {R, C});

  // (1) The same expression in every thread (k repeats across threads and iterations): one interned node.
  const double k = double(it % 3 + 1);
  Array e1 = (sh.A * k + sh.B) * sh.A - 1.0;
  auto r1 = map2([&](auto i, auto j) { return (at(a, i, j) * k + b[std::size_t(j)]) * at(a, i, j) - 1.0; }, R, C);

  // (2) Own leaf mixed with shared ones.
  Array e2 = lf::sin(Cl) + sh.A * Cl;
  auto r2 = map2([&](auto i, auto j) { return std::sin(at(c, i, j)) + at(a, i, j) * at(c, i, j); }, R, C);
  Array e3 = lf::where(Cl > 0.25, Cl, sh.B);
  auto r3 = map2([&](auto i, auto j) { return at(c, i, j) > 0.25 ? at(c, i, j) : b[std::size_t(j)]; }, R, C);

  // Different evaluation paths, chosen per thread and iteration.
  switch ((t + it) % 3) {
  case 0: e1.eval(); break;
  case 1: lf::eval(e1, e2, e3); break;
  default: break; // get() materializes
  }
  EXPECT_TRUE(Matches<double>(e1, r1, {R, C}));
  EXPECT_TRUE(Matches<double>(e2, r2, {R, C}, 1e-12));
  EXPECT_TRUE(Matches<double>(e3, r3, {R, C}));

  // (3) Views of shared and own leaves (transpose, strided slices, reshape, broadcast, flip).
  Array v1 = (sh.A.T() + Cl.T())(lf::slice(1, lf::none, 2), lf::all_of); // (C/2, R)
  auto r_v1 = map2([&](auto i, auto j) { return at(a, j, 2 * i + 1) + at(c, j, 2 * i + 1); }, C / 2, R);
  EXPECT_TRUE(Matches<double>(v1, r_v1, {C / 2, R}));
  Array v2 = (sh.A(lf::slice(lf::none, lf::none, -1), lf::slice(2, 10)) * 2.0).reshape({4, 32});
  std::vector<double> r_v2;
  for (std::int64_t i = R - 1; i >= 0; --i)
    for (std::int64_t j = 2; j < 10; ++j) r_v2.push_back(at(a, i, j) * 2.0);
  EXPECT_TRUE(Matches<double>(v2, r_v2, {4, 32}));
  Array v3 = sh.B(lf::newaxis, lf::all_of) - Cl(lf::slice(0, 1), lf::all_of); // (1, C)
  auto r_v3 = map2([&](auto, auto j) { return b[std::size_t(j)] - at(c, 0, j); }, 1, C);
  EXPECT_TRUE(Matches<double>(v3, r_v3, {1, C}));
  // A 0-d view and item().
  EXPECT_DOUBLE_EQ((sh.A(t % R, it % C) + double(it)).item<double>(), at(a, t % R, it % C) + double(it));

  // (4) Slice assignment: value semantics over the shared leaf, which must stay unchanged.
  Array s1 = Cl.at(lf::slice(2, 5), lf::all_of).set(sh.B * 2.0);
  auto r_s1 = map2([&](auto i, auto j) { return i >= 2 && i < 5 ? 2 * b[std::size_t(j)] : at(c, i, j); }, R, C);
  const std::int64_t col = t % C;
  Array s2 = sh.A.at(lf::slice(lf::none, lf::none, 3), col).set(double(t + it));
  s2.set_at({lf::slice(0, 4), lf::all_of}, Cl(lf::slice(4, 8), lf::all_of));
  auto r_s2 = map2(
      [&](auto i, auto j) {
        if (i < 4) return at(c, i + 4, j);
        if (j == col && i % 3 == 0) return double(t + it);
        return at(a, i, j);
      },
      R, C);
  if (it % 2) lf::eval(s1, s2);
  EXPECT_TRUE(Matches<double>(s1, r_s1, {R, C}));
  EXPECT_TRUE(Matches<double>(s2, r_s2, {R, C}));

  // (5) Integers on a shared leaf (same structure across threads for equal it % 4).
  Array i1 = (sh.Ai * 3 + (it % 4)) % 7;
  std::vector<double> r_i1;
  for (auto x : sh.ai) r_i1.push_back(double((x * 3 + (it % 4)) % 7));
  EXPECT_TRUE(Matches<std::int32_t>(i1, r_i1, {R, C}));
  EXPECT_EQ(i1.dtype(), lf::DType::Int32);

  // (6) A chain long enough to trip bounded laziness when another test lowers LAZYFUSE_MAX_DEPTH.
  Array x = Cl;
  std::vector<double> rx = c;
  for (int s = 0; s < 30; ++s) {
    x = x * 0.5 + 1.0;
    for (auto& v : rx) v = v * 0.5 + 1.0;
  }
  EXPECT_TRUE(Matches<double>(x, rx, {R, C}, 1e-12));

  // (7) float32 from a float64 expression on shared data.
  Array f = (sh.A + sh.B).astype(lf::DType::Float32) * 3.0f;
  auto r_f = map2([&](auto i, auto j) { return double(float(at(a, i, j) + b[std::size_t(j)]) * 3.0f); }, R, C);
  EXPECT_TRUE(Matches<float>(f, r_f, {R, C}, 1e-6));
  // Everything above is dropped here, racing with other threads' interning of the same structures.
}

// ---- tests ------------------------------------------------------------------------------------------------

TEST(Threads, SharedLeavesIdenticalExpressionsViewsAndSliceAssignment) {
  const Shared sh = make_shared_leaves(seed());
  const int n = thread_count(), iters = iterations();
  run_threads(n, [&](int t) {
    std::mt19937_64 rng(seed() * 7919 + std::uint64_t(t) + 1);
    for (int it = 0; it < iters; ++it) work_iteration(sh, t, it, rng);
  });
  // The shared leaves are unchanged.
  EXPECT_TRUE(Matches<double>(sh.A, sh.a, {R, C}, 0));
  EXPECT_TRUE(Matches<double>(sh.B, sh.b, {C}, 0));
}

TEST(Threads, SameLazyNodeEvaluatedByAllThreadsAtOnce) {
  const Shared sh = make_shared_leaves(seed() + 1);
  const int n = thread_count(), rounds = iterations();
  std::barrier sync(n);
  run_threads(n, [&](int t) {
    for (int round = 0; round < rounds; ++round) {
      // Built independently in every thread: the intern table returns one node, then all evaluate it at once.
      const double k = 1.5 + round;
      Array e = lf::exp(sh.A * 0.5) * k - lf::square(sh.B);
      auto r = map2(
          [&](auto i, auto j) {
            double bb = sh.b[std::size_t(j)];
            return std::exp(sh.a[std::size_t(i * C + j)] * 0.5) * k - bb * bb;
          },
          R, C);
      sync.arrive_and_wait();
      if (t % 2) e.eval();
      EXPECT_TRUE(Matches<double>(e, r, {R, C}, 1e-12));
      EXPECT_TRUE(e.is_materialized());
      sync.arrive_and_wait();
    }
  });
}

TEST(Threads, OneThreadMaterializesWhileOthersBuildOnTop) {
  const Shared sh = make_shared_leaves(seed() + 2);
  const int n = thread_count(), rounds = iterations();
  for (int round = 0; round < rounds; ++round) {
    // A lazy array shared by all threads; thread 0 materializes it while the others build and evaluate on it.
    const double k = 3.0 + round;
    Array L = sh.A * k + lf::cos(sh.B);
    auto rL =
        map2([&](auto i, auto j) { return sh.a[std::size_t(i * C + j)] * k + std::cos(sh.b[std::size_t(j)]); }, R, C);
    ASSERT_FALSE(L.is_materialized());
    std::barrier sync(n);
    run_threads(n, [&](int t) {
      std::mt19937_64 rng(seed() + std::uint64_t(round * 131 + t));
      const auto own = random_doubles(rng, std::size_t(R * C));
      Array O = lf::asarray(own, {R, C});
      sync.arrive_and_wait();
      if (t == 0) {
        L.eval();
        EXPECT_TRUE(L.is_materialized());
        EXPECT_TRUE(Matches<double>(L, rL, {R, C}));
        return;
      }
      for (int rep = 0; rep < 3; ++rep) {
        Array top = (L + O) * L.T().T() - double(rep);
        Array side = L(lf::slice(1, lf::none, 2), lf::all_of) * O(lf::slice(0, lf::none, 2), lf::all_of);
        auto r_top = map2(
            [&](auto i, auto j) {
              double l = rL[std::size_t(i * C + j)];
              return (l + own[std::size_t(i * C + j)]) * l - rep;
            },
            R, C);
        auto r_side =
            map2([&](auto i, auto j) { return rL[std::size_t((2 * i + 1) * C + j)] * own[std::size_t(2 * i * C + j)]; },
                 R / 2, C);
        if ((t + rep) % 2) lf::eval(top, side);
        EXPECT_TRUE(Matches<double>(top, r_top, {R, C}));
        EXPECT_TRUE(Matches<double>(side, r_side, {R / 2, C}));
      }
    });
    EXPECT_TRUE(Matches<double>(L, rL, {R, C}));
  }
}

TEST(Threads, DataPtrOfASharedStridedViewFromAllThreads) {
  // data_ptr() of a non-contiguous array makes a contiguous copy and attaches it to the node. Several threads
  // asking at once must all get a pointer that stays valid while the array lives.
  if (lf::backend() != lf::Backend::Cpu) GTEST_SKIP() << "reads the pointer on the host (CPU backend only)";
  const Shared sh = make_shared_leaves(seed() + 3);
  const int n = thread_count(), rounds = iterations();
  for (int round = 0; round < rounds; ++round) {
    Array T = (sh.A + double(round)).eval().T(); // a strided view of a buffer
    std::barrier sync(n);
    std::vector<const double*> ptrs(static_cast<std::size_t>(n));
    run_threads(n, [&](int t) {
      sync.arrive_and_wait();
      ptrs[std::size_t(t)] = static_cast<const double*>(T.data_ptr());
      sync.arrive_and_wait(); // every thread has its pointer; all are still meant to be valid
      const double* p = ptrs[std::size_t(t)];
      for (std::int64_t i = 0; i < C; ++i)
        for (std::int64_t j = 0; j < R; ++j)
          if (p[i * R + j] != sh.a[std::size_t(j * C + i)] + double(round)) {
            ADD_FAILURE() << "thread " << t << ": data_ptr()[" << i * R + j << "] = " << p[i * R + j] << ", want "
                          << sh.a[std::size_t(j * C + i)] + double(round);
            return;
          }
    });
  }
}

TEST(Threads, ConfigAndKernelCacheStatsWhileOthersCompute) {
  const Shared sh = make_shared_leaves(seed() + 4);
  const int n = thread_count(), iters = iterations();
  const std::string depth_before = lf::config::get("LAZYFUSE_MAX_DEPTH");
  const std::string log_before = lf::config::get("LAZYFUSE_LOG");
  const auto stats_before = lf::kernel_cache_stats();
  std::atomic<int> computing{n - 2};
  run_threads(n, [&](int t) {
    if (t == 0) {
      // Settings: LAZYFUSE_LOG stays off; LAZYFUSE_MAX_DEPTH moves between values that only change when
      // arrays are materialized, never their values.
      int k = 0;
      while (computing.load() > 0 || k < 4) {
        lf::config::set("LAZYFUSE_LOG", "");
        lf::config::set("LAZYFUSE_MAX_DEPTH", k % 2 ? "8" : "100");
        EXPECT_TRUE(lf::config::get("LAZYFUSE_LOG").empty());
        const std::string d = lf::config::get("LAZYFUSE_MAX_DEPTH");
        EXPECT_TRUE(d == "8" || d == "100") << d;
        (void)lf::config::all();
        ++k;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      return;
    }
    if (t == 1) {
      // Counters only grow.
      auto prev = lf::kernel_cache_stats();
      while (computing.load() > 0) {
        auto s = lf::kernel_cache_stats();
        EXPECT_GE(s.kernels_launched, prev.kernels_launched);
        EXPECT_GE(s.misses, prev.misses);
        EXPECT_GE(s.memory_hits, prev.memory_hits);
        EXPECT_GE(s.disk_hits, prev.disk_hits);
        EXPECT_GE(s.compile_seconds, prev.compile_seconds);
        prev = s;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return;
    }
    std::mt19937_64 rng(seed() * 31 + std::uint64_t(t));
    for (int it = 0; it < iters; ++it) work_iteration(sh, t, it, rng);
    computing.fetch_sub(1);
  });
  lf::config::set("LAZYFUSE_MAX_DEPTH", depth_before);
  lf::config::set("LAZYFUSE_LOG", log_before);
  const auto stats_after = lf::kernel_cache_stats();
  // Every work_iteration evaluates at least five kernels over its own leaf (e2/e3, v1, v3, s1/s2, the chain); the
  // rest read shared leaves only, so another thread may have materialized the same interned node first, and how
  // many of those a thread launches itself depends on timing (under load, a dozen per iteration was not met).
  EXPECT_GE(stats_after.kernels_launched, stats_before.kernels_launched + std::uint64_t((n - 2) * iters * 5));
  EXPECT_GE(stats_after.misses + stats_after.memory_hits + stats_after.disk_hits,
            stats_before.misses + stats_before.memory_hits + stats_before.disk_hits);
}

TEST(Threads, LargeArrayUsesTheBackendsOwnThreadsFromSeveralHostThreads) {
  // 2^16 elements: the CPU backend splits each kernel over its worker threads, inside every host thread.
  std::mt19937_64 rng(seed() + 5);
  constexpr std::int64_t N = 1 << 16;
  const auto big = random_doubles(rng, std::size_t(N));
  const Array G = lf::asarray(big, {256, 256});
  const int n = std::min(thread_count(), 4);
  run_threads(n, [&](int t) {
    Array e = lf::maximum(G * double(t + 1), 0.0) + G.T();
    std::vector<double> r(static_cast<std::size_t>(N));
    for (std::int64_t i = 0; i < 256; ++i)
      for (std::int64_t j = 0; j < 256; ++j)
        r[std::size_t(i * 256 + j)] =
            std::max(big[std::size_t(i * 256 + j)] * (t + 1), 0.0) + big[std::size_t(j * 256 + i)];
    EXPECT_TRUE(Matches<double>(e, r, {256, 256}));
  });
}

// Nodes outlive the threads that recorded them: a thread's cache of node blocks and shapes (graph/Node.cpp) is
// handed back when it ends, and threads that never recorded a node release them through the shared pool. Every
// value is right and every node is freed.
TEST(Threads, NodesOutliveTheThreadsThatRecordedThem) {
  constexpr int kThreads = 4;
  const std::size_t live_before = lf::graph::live_node_count();
  for (int round = 0; round < 3; ++round) {
    std::vector<Array> made(kThreads);
    std::vector<std::thread> recorders, releasers;
    for (int t = 0; t < kThreads; ++t)
      recorders.emplace_back([&made, t] {
        Array x = lf::asarray(std::vector<float>{1, 2, 3, 4});
        for (int k = 0; k < 1000; ++k) x = x * 0.5f + float(t); // converges to 2t exactly
        made[std::size_t(t)] = x;
      });
    for (auto& r : recorders) r.join();
    std::vector<std::vector<float>> got(kThreads);
    for (int t = 0; t < kThreads; ++t)
      releasers.emplace_back([&made, &got, t] {
        got[std::size_t(t)] = made[std::size_t(t)].get<float>().to_vector();
        made[std::size_t(t)] = Array();
      });
    for (auto& r : releasers) r.join();
    for (int t = 0; t < kThreads; ++t)
      EXPECT_EQ(got[std::size_t(t)], std::vector<float>(4, 2.0f * float(t))) << "round " << round << ", thread " << t;
  }
  EXPECT_EQ(lf::graph::live_node_count(), live_before);
}

} // namespace
