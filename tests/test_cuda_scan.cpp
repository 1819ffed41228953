// Scans on the GPU (the single-pass look-back kernel of codegen/CudaPrinter.cpp): the same bits on every run (the
// look-back folds forward, so its result does not depend on which predecessor it finds), the same bits as the scan
// order written out in tests/scan_order.h (which the CPU backend computes too: CPU and GPU agree bit for bit), the
// tickets left zero between launches of different tile counts, and rows, columns and wide types.
//
// Skips without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1. Fresh random data each run; LAZYFUSE_TEST_SEED
// replays one.
#include "tests/gpu_test.h"
#include "tests/scan_order.h"
#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <random>
#include <vector>

using namespace lazyfuse;

namespace {

std::vector<float> random_floats(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 rng(lazyfuse_test::seed() ^ salt);
  return lazyfuse_test::uniform_values<float>(rng, n, -1.0f, 1.0f);
}

template <class T> bool same_bits(const HostArray<T>& a, const HostArray<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), std::size_t(a.size()) * sizeof(T)) == 0;
}

TEST(CudaScan, SameBitsOnEveryRun) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::size_t n = std::size_t(1) << 24;
  const Array x = asarray(random_floats(n, 1));
  x.eval();
  HostArray<float> first = cumsum(x * x).get<float>();
  for (int run = 1; run < 5; ++run) {
    const HostArray<float> again = cumsum(x * x).get<float>(); // a new node each time: the old one is gone
    EXPECT_TRUE(same_bits(first, again)) << "run " << run << ", " << lazyfuse_test::seed_note();
  }
  const std::vector<float> parts = random_floats(600000, 2);
  std::vector<std::complex<double>> zs(300000);
  for (std::size_t i = 0; i < zs.size(); ++i) zs[i] = {parts[2 * i], parts[2 * i + 1]};
  const Array z = asarray(zs, {3, 100000});
  z.eval();
  const auto zfirst = cumprod(z * 0.01 + 1.0, 1).get<std::complex<double>>();
  for (int run = 1; run < 3; ++run)
    EXPECT_TRUE(same_bits(zfirst, cumprod(z * 0.01 + 1.0, 1).get<std::complex<double>>())) << "run " << run;
}

TEST(CudaScan, FollowsTheDocumentedOrder) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  // Launches of different tile counts back to back, unsynchronized: each must find the tickets zero.
  // 131072 and 135168: 32 and 33 tiles of 4,096, one whole group and the first tile of the next.
  std::vector<std::int64_t> lengths = {
      5000, 1, 300000, 2, 1024, 70001, 127, 128, 131072, 135168, std::int64_t(1) << 22};
  std::vector<std::vector<float>> inputs;
  std::vector<Array> results;
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    inputs.push_back(random_floats(std::size_t(lengths[k]), k + 10));
    results.push_back(cumsum(asarray(inputs.back())));
  }
  for (auto& r : results) r.eval();
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    std::vector<float>& want = inputs[k];
    lazyfuse_test::scan_order_line(want.data(), lengths[k]);
    const auto got = results[k].get<float>();
    for (std::int64_t i = 0; i < lengths[k]; ++i)
      ASSERT_EQ(got.data()[i], want[std::size_t(i)])
          << "length " << lengths[k] << ", element " << i << ", " << lazyfuse_test::seed_note();
  }
  // float64 (status values in the partials, not packed) over many tiles.
  {
    std::mt19937_64 rng(lazyfuse_test::seed() ^ 5);
    std::vector<double> d = lazyfuse_test::uniform_values<double>(rng, std::size_t(1) << 21, -1.0, 1.0);
    const auto got = cumsum(asarray(d)).get<double>();
    lazyfuse_test::scan_order_line(d.data(), std::int64_t(d.size()));
    for (std::size_t i = 0; i < d.size(); ++i)
      ASSERT_EQ(got.data()[i], d[i]) << "float64, element " << i << ", " << lazyfuse_test::seed_note();
  }
  // Rows of a matrix, and columns (one element after another).
  std::vector<float> m = random_floats(64 * 3000, 3);
  const auto rows = cumsum(asarray(m, {64, 3000}), 1).get<float>();
  const auto cols = cumsum(asarray(m, {3000, 64}), 0).get<float>();
  std::vector<float> by_rows = m, by_cols = m;
  for (int r = 0; r < 64; ++r) lazyfuse_test::scan_order_line(by_rows.data() + r * 3000, 3000);
  for (std::size_t r = 1; r < 3000; ++r)
    for (std::size_t c = 0; c < 64; ++c) by_cols[r * 64 + c] = by_cols[(r - 1) * 64 + c] + by_cols[r * 64 + c];
  for (std::size_t i = 0; i < m.size(); ++i) {
    ASSERT_EQ(rows.data()[i], by_rows[i]) << "rows, element " << i;
    ASSERT_EQ(cols.data()[i], by_cols[i]) << "columns, element " << i;
  }
}

TEST(CudaScan, NarrowAndWideTypes) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  // Exact integer sums (int8 wraps as NumPy's does; int32 and int8 keep their tile status packed in one word, int64
  // does not), and bool counted in int64.
  std::mt19937_64 rng(lazyfuse_test::seed() ^ 7);
  std::vector<std::int32_t> ints = lazyfuse_test::uniform_values<std::int32_t>(rng, 100000, -100, 100);
  const Array a = asarray(ints);
  const auto wide = cumsum(a).get<std::int64_t>();
  const auto narrow = cumsum(a.astype(DType::Int8), 0, DType::Int8).get<std::int8_t>();
  const auto packed = cumsum(a, 0, DType::Int32).get<std::int32_t>();
  const auto flags = cumsum(a > 0).get<std::int64_t>();
  std::int64_t s = 0, count = 0;
  std::int8_t wrap = 0;
  for (std::size_t i = 0; i < ints.size(); ++i) {
    s += ints[i];
    wrap = std::int8_t(std::uint8_t(std::uint8_t(wrap) + std::uint8_t(std::int8_t(ints[i]))));
    count += ints[i] > 0;
    ASSERT_EQ(wide.data()[i], s) << "element " << i;
    ASSERT_EQ(packed.data()[i], s) << "element " << i;
    ASSERT_EQ(narrow.data()[i], wrap) << "element " << i;
    ASSERT_EQ(flags.data()[i], count) << "element " << i;
  }
}

} // namespace
