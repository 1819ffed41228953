// The CPU backend's caching host allocator (runtime/HostPool.h): size classes, reuse, the cache limit, pass-through
// mode, out-of-memory errors, poisoning under AddressSanitizer, and reuse by the CPU backend's outputs.
#include "runtime/HostPool.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#define LAZYFUSE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAZYFUSE_TEST_ASAN 1
#endif
#endif

namespace {

namespace lf = lazyfuse;
using lazyfuse::runtime::HostPool;

const bool kOnCpu = (lf::config::set("LAZYFUSE_BACKEND", "cpu"), true);
constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(CpuHostPool, SizeClassesCoverTheRequestWithinAQuarter) {
  for (std::size_t bytes = 0; bytes < (std::size_t{1} << 28); bytes = bytes * 3 / 2 + 1) {
    const std::size_t c = HostPool::size_class(bytes);
    EXPECT_GE(c, std::max<std::size_t>(bytes, 1)) << bytes;
    EXPECT_EQ(c % HostPool::kAlignment, 0u) << bytes;
    if (bytes > 4096) {
      EXPECT_LE(double(c), 1.25 * double(bytes)) << bytes;
    }
    EXPECT_EQ(HostPool::size_class(c), c) << "a class is its own class: " << c;
  }
  EXPECT_EQ(HostPool::size_class(64 * kMiB), 64 * kMiB);
  EXPECT_EQ(HostPool::size_class(64 * kMiB + 1), 80 * kMiB);
}

TEST(CpuHostPool, FreedBlocksAreReused) {
  HostPool pool(true, 1024 * kMiB);
  void* a = pool.allocate(64 * kMiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % HostPool::kAlignment, 0u);
  std::memset(a, 1, 64 * kMiB);
  pool.deallocate(a);
  auto s = pool.stats();
  EXPECT_EQ(s.used_bytes, 0u);
  EXPECT_EQ(s.total_bytes, 64 * kMiB);
  void* b = pool.allocate(60 * kMiB); // the same class
  EXPECT_EQ(b, a);
  s = pool.stats();
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.system_allocs, 1u);
  EXPECT_EQ(s.allocations, 2u);
  EXPECT_EQ(s.used_bytes, 64 * kMiB);
  EXPECT_EQ(s.peak_total_bytes, 64 * kMiB);
  void* c = pool.allocate(100); // another class: a new block
  EXPECT_NE(c, b);
  pool.deallocate(b);
  pool.deallocate(c);
  pool.deallocate(nullptr);
  pool.free_all_blocks();
  s = pool.stats();
  EXPECT_EQ(s.total_bytes, 0u);
  EXPECT_EQ(s.system_frees, 2u);
}

TEST(CpuHostPool, CacheLimitGivesBackTheOldestBlocks) {
  HostPool pool(true, 1 * kMiB);
  void* a = pool.allocate(512 * 1024);
  void* b = pool.allocate(512 * 1024);
  void* c = pool.allocate(512 * 1024);
  pool.deallocate(a);
  pool.deallocate(b);
  pool.deallocate(c); // 1.5 MiB cached > 1 MiB: a (freed first) goes back
  auto s = pool.stats();
  EXPECT_EQ(s.total_bytes, 1 * kMiB);
  EXPECT_EQ(s.system_frees, 1u);
  // The most recently freed comes back first.
  void* d = pool.allocate(512 * 1024);
  EXPECT_EQ(d, c);
  pool.deallocate(d);
  // A block larger than the whole cache is not kept.
  void* big = pool.allocate(2 * kMiB);
  pool.deallocate(big);
  EXPECT_LE(pool.stats().total_bytes, 1 * kMiB);
}

TEST(CpuHostPool, PassThroughKeepsNothing) {
  HostPool pool(false, 1024 * kMiB);
  EXPECT_FALSE(pool.caching());
  void* a = pool.allocate(3 * kMiB + 5);
  EXPECT_EQ(pool.stats().used_bytes, 3 * kMiB + 64); // the request rounded to the alignment, not a class
  pool.deallocate(a);
  void* b = pool.allocate(3 * kMiB + 5);
  pool.deallocate(b);
  const auto s = pool.stats();
  EXPECT_EQ(s.cache_hits, 0u);
  EXPECT_EQ(s.system_allocs, 2u);
  EXPECT_EQ(s.system_frees, 2u);
  EXPECT_EQ(s.total_bytes, 0u);
}

TEST(CpuHostPool, OutOfMemoryNamesTheRequestAndThePool) {
  HostPool pool(true, 1024 * kMiB);
  void* keep = pool.allocate(kMiB);
  std::vector<std::size_t> requests = {std::numeric_limits<std::size_t>::max() / 2 + 1};
#ifndef LAZYFUSE_TEST_ASAN
  // A request the system refuses (AddressSanitizer's allocator aborts on it instead of returning null).
  requests.push_back(std::size_t{1} << 60);
#endif
  for (std::size_t request : requests) {
    try {
      (void)pool.allocate(request);
      ADD_FAILURE() << "no OutOfMemoryError for " << request << " bytes";
    } catch (const lf::OutOfMemoryError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("out of host memory: asked for"), std::string::npos) << what;
      EXPECT_NE(what.find(std::to_string(request) + " bytes"), std::string::npos) << what;
      EXPECT_NE(what.find("1.00 MiB used"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(pool.stats().out_of_memory, requests.size());
  pool.deallocate(keep);
}

#ifdef LAZYFUSE_TEST_ASAN
TEST(CpuHostPoolDeathTest, UseAfterFreeOfACachedBlockIsReported) {
  HostPool pool(true, 1024 * kMiB);
  auto* p = static_cast<volatile char*>(pool.allocate(1000));
  p[999] = 1;
  pool.deallocate(const_cast<char*>(p));
  EXPECT_DEATH(p[10] = 2, "use-after-poison");
}

TEST(CpuHostPoolDeathTest, ReadPastTheRequestIsReported) {
  HostPool pool(true, 1024 * kMiB);
  auto* p = static_cast<volatile char*>(pool.allocate(1000)); // class 1024
  EXPECT_DEATH((void)p[1000], "use-after-poison");
  pool.deallocate(const_cast<char*>(p));
}
#endif

// Outputs of the CPU backend come from the process' pool: the second evaluation of the same-size result reuses the
// first one's block.
TEST(CpuHostPool, CpuBackendOutputsReuseBlocks) {
  ASSERT_TRUE(kOnCpu);
  ASSERT_EQ(lf::backend(), lf::Backend::Cpu);
  HostPool& pool = HostPool::instance();
  if (!pool.caching()) GTEST_SKIP() << "LAZYFUSE_POOL=none";
  lf::Array x = lf::arange(0, 1 << 20, 1, lf::DType::Float32);
  x.eval();
  { (x * 2.0f).eval(); }
  const auto before = pool.stats();
  for (int i = 0; i < 3; ++i) {
    lf::Array y = x * 2.0f + float(i);
    EXPECT_EQ(y.get<float>().data()[5], 10.0f + float(i));
  }
  const auto after = pool.stats();
  EXPECT_GE(after.cache_hits - before.cache_hits, 3u);
  EXPECT_EQ(after.system_allocs, before.system_allocs);
}

} // namespace
