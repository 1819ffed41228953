// The in-process kernel cache as any backend shows it: kernel_cache_stats().misses counts distinct kernel
// structures, so a new shape or a new scalar value reuses the kernel (a memory hit) and still gives the right
// values. Runs everywhere (CPU backend without a GPU); tests/test_cuda_cache.cpp covers the disk cache on a GPU.
#include "tests/cache_structures.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using lazyfuse::Array;
namespace config = lazyfuse::config;

struct Delta {
  std::int64_t memory_hits, disk_hits, misses, launched;
};

Delta operator-(const lazyfuse::KernelCacheStats& a, const lazyfuse::KernelCacheStats& b) {
  return {std::int64_t(a.memory_hits - b.memory_hits), std::int64_t(a.disk_hits - b.disk_hits),
          std::int64_t(a.misses - b.misses), std::int64_t(a.kernels_launched - b.kernels_launched)};
}

using lazyfuse_test::build_structure;
using lazyfuse_test::structure_reference;

// Builds structure `id` on fresh random inputs of `shape`, materializes it and compares every element with the
// double reference. Returns the number of wrong elements.
int run_and_check(int id, const lazyfuse::Shape& shape, double k, std::uint32_t seed) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-2.0, 2.0);
  std::vector<double> x(static_cast<std::size_t>(n)), y(x.size());
  for (auto& v : x) v = dist(rng);
  for (auto& v : y) v = dist(rng);
  const Array r = build_structure(id, lazyfuse::asarray(x, shape), lazyfuse::asarray(y, shape), k);
  const auto h = r.get<double>();
  int wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = structure_reference(id, x[i], y[i], k);
    if (!(std::fabs(h[i] - want) <= 1e-12 * (1 + std::fabs(want)))) {
      if (wrong < 5) ADD_FAILURE() << "structure " << id << " element " << i << ": got " << h[i] << ", want " << want;
      ++wrong;
    }
  }
  return wrong;
}

// Memory-only, so that a GPU run leaves the user's disk cache alone and every new structure is a miss.
class KernelCacheCounts : public ::testing::Test {
protected:
  void SetUp() override {
    config::set("LAZYFUSE_CACHE_IN_MEMORY", "1");
    lazyfuse::clear_kernel_cache();
  }
  void TearDown() override {
    lazyfuse::clear_kernel_cache();
    config::reset("LAZYFUSE_CACHE_IN_MEMORY");
  }
};

TEST_F(KernelCacheCounts, EachNewStructureIsOneMiss) {
  const auto s0 = lazyfuse::kernel_cache_stats();
  for (int id = 0; id < 16; ++id) EXPECT_EQ(run_and_check(id, {1000}, 1.5, 100 + id), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(d.misses, 16);
  EXPECT_EQ(d.memory_hits, 0);
  EXPECT_EQ(d.disk_hits, 0);
  EXPECT_EQ(d.launched, 16);
}

TEST_F(KernelCacheCounts, NewShapeOrScalarReusesTheKernel) {
  for (int id : {0, 5, 15}) {
    const auto s0 = lazyfuse::kernel_cache_stats();
    EXPECT_EQ(run_and_check(id, {1000}, 1.5, 1), 0);
    const Delta first = lazyfuse::kernel_cache_stats() - s0;
    EXPECT_EQ(first.misses, 1) << id;

    const auto s1 = lazyfuse::kernel_cache_stats();
    EXPECT_EQ(run_and_check(id, {1000}, -0.25, 2), 0);   // new scalar
    EXPECT_EQ(run_and_check(id, {3001}, 1.5, 3), 0);     // new length, not a multiple of 4
    EXPECT_EQ(run_and_check(id, {17}, 7.0, 4), 0);       // tiny
    EXPECT_EQ(run_and_check(id, {1 << 16}, 1e-3, 5), 0); // many blocks
    const Delta again = lazyfuse::kernel_cache_stats() - s1;
    EXPECT_EQ(again.misses, 0) << id;
    EXPECT_EQ(again.disk_hits, 0) << id;
    EXPECT_EQ(again.memory_hits, 4) << id;
    EXPECT_EQ(again.launched, 4) << id;
  }
}

TEST_F(KernelCacheCounts, ContiguousShapesOfTheSameSizeClassShareAKernel) {
  // A 2-D C-contiguous elementwise expression is the same flat kernel as a 1-D one.
  const auto s0 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(3, {64, 50}, 2.0, 7), 0);
  EXPECT_EQ(run_and_check(3, {3200}, -1.0, 8), 0);
  EXPECT_EQ(run_and_check(3, {10, 10, 10}, 0.5, 9), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(d.misses, 1);
  EXPECT_EQ(d.memory_hits, 2);
}

TEST_F(KernelCacheCounts, ClearKernelCacheForgetsStructures) {
  const auto s0 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(9, {500}, 3.0, 11), 0);
  EXPECT_EQ(run_and_check(9, {500}, 4.0, 12), 0);
  lazyfuse::clear_kernel_cache();
  EXPECT_EQ(run_and_check(9, {500}, 5.0, 13), 0);
  const Delta d = lazyfuse::kernel_cache_stats() - s0;
  EXPECT_EQ(d.misses, 2); // memory only: after the clear, the structure is compiled (counted) again
  EXPECT_EQ(d.memory_hits, 1);
}

TEST_F(KernelCacheCounts, EagerModeCountsOneStructurePerOp) {
  config::set_eager(true);
  const auto s0 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(1, {1000}, 2.0, 21), 0); // sin, *, +: three kernels
  const Delta first = lazyfuse::kernel_cache_stats() - s0;
  const auto s1 = lazyfuse::kernel_cache_stats();
  EXPECT_EQ(run_and_check(1, {999}, -3.0, 22), 0);
  const Delta second = lazyfuse::kernel_cache_stats() - s1;
  config::reset("LAZYFUSE_MODE");
  EXPECT_EQ(first.launched, 3);
  EXPECT_EQ(first.misses, 3);
  EXPECT_EQ(second.misses, 0);
  EXPECT_EQ(second.memory_hits, 3);
}

} // namespace
