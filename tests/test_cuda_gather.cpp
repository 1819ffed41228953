// Gathers on the GPU: fused results equal the CPU backend's (computed on the host here), the kernel count, and the
// out-of-range IndexError raised from the device's error word. Skips without a device (tests/gpu_test.h).
#include <lazyfuse/lazyfuse.hpp>

#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace lazyfuse;

namespace {

TEST(CudaGather, FusedGatherMatchesTheHost) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t n = 1 << 20, m = (1 << 20) + 37; // a tail past the vector path
  std::vector<float> xs(std::size_t(n), 0.0f);
  for (std::size_t k = 0; k < xs.size(); ++k) xs[k] = float(k % 4096) * 0.25f;
  std::vector<std::int64_t> idx(std::size_t(m), 0);
  for (auto& i : idx) i = std::int64_t(rng() % std::uint64_t(2 * n)) - n;
  Array x = asarray(xs, {n}).eval(), i = asarray(idx).eval();
  const auto before = kernel_cache_stats().kernels_launched;
  const HostArray<float> got = (x(i) * 2.0f - 1.0f).get<float>();
  EXPECT_EQ(kernel_cache_stats().kernels_launched - before, 1u);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const std::int64_t j = idx[k] < 0 ? idx[k] + n : idx[k];
    ASSERT_EQ(got[k], xs[std::size_t(j)] * 2.0f - 1.0f) << "element " << k << ", " << lazyfuse_test::seed_note();
  }
}

TEST(CudaGather, RowsAndReductionsOfGatheredRows) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::int64_t rows = 1000, width = 300;
  Array table = (arange(rows * width).astype(DType::Float32) * 0.5f).reshape({rows, width}).eval();
  Array pick = asarray<std::int64_t>({999, 0, -1, 17, 500}).eval();
  const HostArray<float> g = (table(pick) + 1.0f).get<float>();
  const HostArray<float> s = sum(table(pick), 1).get<float>();
  const std::int64_t r[] = {999, 0, 999, 17, 500};
  for (std::int64_t k = 0; k < 5; ++k) {
    double want = 0;
    for (std::int64_t c = 0; c < width; ++c) {
      ASSERT_EQ(g[std::size_t(k * width + c)], 0.5f * float(r[k] * width + c) + 1.0f);
      want += 0.5 * double(r[k] * width + c);
    }
    EXPECT_NEAR(s[std::size_t(k)], want, 1e-6 * want);
  }
}

TEST(CudaGather, OutOfRangeIsAnIndexErrorAndNoFault) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  Array x = arange(1000).astype(DType::Float32).eval();
  std::vector<std::int64_t> idx(100000, 3);
  idx[77777] = 1 << 30; // far outside: a read there would fault (compute-sanitizer would report it)
  Array y = x(asarray(idx)) * 2.0f;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      y.eval();
      (void)y.get<float>();
      ADD_FAILURE() << "no IndexError";
    } catch (const IndexError& e) {
      EXPECT_EQ(std::string(e.what()), "index 1073741824 is out of bounds for axis 0 with size 1000");
    }
  }
  EXPECT_EQ(take(x, arange(3) - 1).get<float>()[0], 999.0f) << "the device is still usable";
}

} // namespace
