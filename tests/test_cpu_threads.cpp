// The CPU backend's persistent thread pool (runtime/ThreadPool.h): chunking, callers on several threads at once,
// nested calls, exceptions, shutdown; and CPU-backend kernels evaluated from several user threads at once.
//
// CI builds this file under ThreadSanitizer too (`ctest -R threads`). The tests run on the CPU backend on every
// machine (LAZYFUSE_BACKEND=cpu is set before anything runs).
#include "runtime/ThreadPool.h"

#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lazyfuse::runtime::ThreadPool;

const bool kOnCpu = (lf::config::set("LAZYFUSE_BACKEND", "cpu"), true);

// Records every chunk of one call: which ranges, and how often each index was visited.
struct Visits {
  explicit Visits(std::int64_t n) : count(std::size_t(n)) {}
  std::vector<std::atomic<int>> count;
  std::mutex mutex;
  std::set<std::pair<std::int64_t, std::int64_t>> chunks;
  void operator()(std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) count[std::size_t(i)]++;
    std::lock_guard lock(mutex);
    chunks.insert({b, e});
  }
};

TEST(CpuThreadPool, ChunksDependOnlyOnCountAndGrain) {
  ASSERT_TRUE(kOnCpu);
  for (int threads : {1, 2, 3, 8})
    for (std::int64_t n : {1, 7, 64, 1000, 4099})
      for (std::int64_t grain : {1, 3, 64, 5000}) {
        Visits v(n);
        ThreadPool::instance().parallel_for(n, grain, threads, [&](std::int64_t b, std::int64_t e) { v(b, e); });
        for (std::int64_t i = 0; i < n; ++i)
          ASSERT_EQ(v.count[std::size_t(i)].load(), 1) << "index " << i << " n " << n << " grain " << grain;
        std::set<std::pair<std::int64_t, std::int64_t>> expected;
        for (std::int64_t b = 0; b < n; b += grain) expected.insert({b, std::min(n, b + grain)});
        EXPECT_EQ(v.chunks, expected) << "n " << n << " grain " << grain << " threads " << threads;
      }
}

TEST(CpuThreadPool, NothingToDo) {
  bool called = false;
  ThreadPool::instance().parallel_for(0, 4, 2, [&](std::int64_t, std::int64_t) { called = true; });
  ThreadPool::instance().parallel_for(-5, 4, 2, [&](std::int64_t, std::int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(CpuThreadPool, WorkersStartOnDemandAndShareTheWork) {
  ThreadPool pool;
  EXPECT_EQ(pool.workers(), 0);
  std::mutex mutex;
  std::set<std::thread::id> ran_on;
  // Chunks that wait a little, so that the workers get some of them.
  pool.parallel_for(64, 1, 3, [&](std::int64_t, std::int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard lock(mutex);
    ran_on.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(pool.workers(), 2);
  EXPECT_GE(ran_on.size(), 2u);
  EXPECT_LE(ran_on.size(), 3u);
  pool.parallel_for(10, 1, 1, [](std::int64_t, std::int64_t) {});
  EXPECT_EQ(pool.workers(), 2); // never shrinks, and threads = 1 starts nothing
}

TEST(CpuThreadPool, SeveralCallersAtOnce) {
  constexpr int kCallers = 6;
  constexpr std::int64_t kN = 20000;
  std::vector<std::int64_t> totals(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 10; ++round) {
        std::vector<std::int64_t> out(std::size_t(kN), 0);
        ThreadPool::instance().parallel_for(kN, 97, 1 + c % 3, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i) out[std::size_t(i)] = i * (c + 1);
        });
        std::int64_t total = 0;
        for (auto x : out) total += x;
        totals[std::size_t(c)] += total;
      }
    });
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(totals[std::size_t(c)], 10 * (c + 1) * (kN * (kN - 1) / 2)) << c;
}

TEST(CpuThreadPool, NestedCallsFinish) {
  std::atomic<std::int64_t> visited{0};
  ThreadPool::instance().parallel_for(8, 1, 3, [&](std::int64_t, std::int64_t) {
    ThreadPool::instance().parallel_for(100, 7, 3, [&](std::int64_t b, std::int64_t e) { visited += e - b; });
  });
  EXPECT_EQ(visited.load(), 800);
}

TEST(CpuThreadPool, ExceptionOfTheLowestChunkReachesTheCaller) {
  for (int threads : {1, 2, 3}) {
    std::atomic<int> ran{0};
    try {
      ThreadPool::instance().parallel_for(40, 1, threads, [&](std::int64_t b, std::int64_t) {
        ran++;
        if (b == 3 || b == 5) throw std::runtime_error("chunk " + std::to_string(b));
      });
      ADD_FAILURE() << "no exception with " << threads << " threads";
    } catch (const std::runtime_error& e) {
      // Chunk 5 may or may not have run (chunks after a failure are skipped); 3 ran and is the lowest.
      EXPECT_STREQ(e.what(), "chunk 3") << threads << " threads";
    }
    EXPECT_GE(ran.load(), 4);
    // The pool still works.
    std::atomic<int> after{0};
    ThreadPool::instance().parallel_for(10, 1, threads, [&](std::int64_t, std::int64_t) { after++; });
    EXPECT_EQ(after.load(), 10);
  }
}

TEST(CpuThreadPool, AfterShutdownTheCallerRunsEverything) {
  ThreadPool pool;
  pool.parallel_for(8, 1, 3, [](std::int64_t, std::int64_t) {});
  pool.shutdown();
  pool.shutdown(); // idempotent
  EXPECT_EQ(pool.workers(), 0);
  std::set<std::thread::id> ran_on;
  pool.parallel_for(16, 1, 3, [&](std::int64_t, std::int64_t) { ran_on.insert(std::this_thread::get_id()); });
  EXPECT_EQ(ran_on, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(CpuThreadPool, ResolveThreads) {
  EXPECT_EQ(ThreadPool::resolve_threads(3), 3);
  EXPECT_EQ(ThreadPool::resolve_threads(0), int(std::max(1u, std::thread::hardware_concurrency())));
}

// Kernels of the CPU backend (elementwise, a full reduction split over threads, row sums) evaluated from several
// user threads at once: every thread gets the single-threaded answer, bit for bit.
TEST(CpuThreadPool, KernelsFromSeveralUserThreads) {
  ASSERT_EQ(lf::backend(), lf::Backend::Cpu);
  std::mt19937_64 rng(lazyfuse_test::seed());
  const auto values = lazyfuse_test::uniform_values<float>(rng, 300000, -1.0f, 1.0f);
  lf::Array x = lf::asarray(values, {300000});
  lf::Array m = lf::asarray(values, {300, 1000});
  x.eval();
  m.eval();
  // The bits of every result.
  auto compute = [&] {
    std::vector<std::uint32_t> bits{std::bit_cast<std::uint32_t>(lf::sum(x * 2.0f + 1.0f).item<float>())};
    for (float r : lf::sum(m, {1}).get<float>().to_vector()) bits.push_back(std::bit_cast<std::uint32_t>(r));
    for (float r : (x * 3.0f - 1.0f).get<float>().to_vector()) bits.push_back(std::bit_cast<std::uint32_t>(r));
    return bits;
  };
  lf::config::set("LAZYFUSE_CPU_THREADS", "1");
  const auto expected = compute();
  lf::config::reset("LAZYFUSE_CPU_THREADS");
  std::vector<std::thread> users;
  std::atomic<int> mismatches{0};
  for (int u = 0; u < 4; ++u)
    users.emplace_back([&] {
      for (int round = 0; round < 3; ++round)
        if (compute() != expected) mismatches++;
    });
  for (auto& t : users) t.join();
  EXPECT_EQ(mismatches.load(), 0) << lazyfuse_test::seed_note();
}

} // namespace
