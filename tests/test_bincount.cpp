// bincount without weights (graph::NodeKind::BinCount; runtime/Counting.h): exact counts for every integer type and
// bool against a count on the host, bins that fit a block's shared memory and bins that do not, unaligned and
// lazy inputs, lengths around the vector width, and what each backend launches. Runs on the backend in use (the CPU
// backend here, the CUDA backend on a GPU machine); the CudaBinCount tests need the CUDA backend and skip without it,
// unless LAZYFUSE_TEST_REQUIRE_GPU=1. Fresh random data each run; LAZYFUSE_TEST_SEED=<n> replays one.
#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using i64 = std::int64_t;

using lazyfuse_test::seed_note;

// n values in [0, bins) of type t, a third of them the value `heavy` (skew: many atomics on one counter), and their
// counts over all `bins`, computed here (bincount needs minlength = bins to give as many: the largest value may not be
// drawn).
struct Sample {
  Array x;
  std::vector<i64> counts;
};
Sample sample(DType t, i64 n, i64 bins, i64 heavy, std::mt19937_64& rng) {
  std::vector<i64> v(static_cast<std::size_t>(n));
  Sample s;
  s.counts.assign(static_cast<std::size_t>(bins), 0);
  for (auto& e : v) {
    e = rng() % 3 == 0 ? heavy : i64(rng() % std::uint64_t(bins));
    ++s.counts[std::size_t(e)];
  }
  s.x = lf::asarray(v, {n}).astype(t).eval();
  return s;
}

std::vector<i64> counts_of(const Array& a) {
  const lf::HostArray<i64> h = a.get<i64>();
  return std::vector<i64>(h.data(), h.data() + h.size());
}

// "" when got equals want, else the sizes, the totals and the first bin that differs.
std::string difference(const std::vector<i64>& got, const std::vector<i64>& want) {
  if (got == want) return "";
  i64 total_got = 0, total_want = 0;
  for (auto c : got) total_got += c;
  for (auto c : want) total_want += c;
  std::string d = std::to_string(got.size()) + " bins counting " + std::to_string(total_got) + ", expected " +
                  std::to_string(want.size()) + " counting " + std::to_string(total_want);
  for (std::size_t b = 0; b < std::min(got.size(), want.size()); ++b)
    if (got[b] != want[b])
      return d + "; bin " + std::to_string(b) + " holds " + std::to_string(got[b]) + ", expected " +
             std::to_string(want[b]);
  return d;
}

i64 largest_value(DType t) {
  switch (t) {
  case DType::Bool: return 1;
  case DType::Int8: return 127;
  case DType::UInt8: return 255;
  case DType::Int16: return 32767;
  default: return 65535;
  }
}

TEST(BinCount, EveryIntegerTypeCountsExactly) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (const DType t : {DType::Bool, DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32,
                        DType::UInt32, DType::Int64, DType::UInt64})
    for (const i64 n : {i64(1), i64(15), i64(17), i64(4099), i64(1) << 20})
      for (const i64 bins : {i64(2), i64(100), i64(4096), i64(70000)}) {
        const i64 b = std::min(bins, largest_value(t) + 1);
        const Sample s = sample(t, n, b, b - 1, rng);
        const Array c = lf::bincount(s.x, std::nullopt, b);
        const std::string what = std::string(lf::dtype_name(t)) + " n=" + std::to_string(n) +
                                 " bins=" + std::to_string(b) + ", " + seed_note();
        ASSERT_EQ(c.dtype(), DType::Int64) << what;
        ASSERT_EQ(difference(counts_of(c), s.counts), "") << what;
      }
}

TEST(BinCount, ViewsAndExpressionsAreCountedAsTheirValues) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  const Sample s = sample(DType::Int32, 100003, 5000, 7, rng);
  // An unaligned slice (the count reads it in place, element by element on the device) and a reversed one.
  std::vector<i64> tail = s.counts;
  const lf::HostArray<std::int32_t> first = s.x.get<std::int32_t>();
  --tail[std::size_t(first.data()[0])];
  EXPECT_EQ(counts_of(lf::bincount(s.x(lf::slice(1, lf::none)), std::nullopt, 5000)), tail) << seed_note();
  EXPECT_EQ(counts_of(lf::bincount(s.x(lf::slice(lf::none, lf::none, -1)), std::nullopt, 5000)), s.counts)
      << seed_note();
  // A lazy expression: its values are written once, then counted; minlength adds empty bins.
  std::vector<i64> doubled(10000 + 5, 0);
  for (std::size_t b = 0; b < s.counts.size(); ++b) doubled[2 * b] = s.counts[b];
  EXPECT_EQ(counts_of(lf::bincount(s.x * 2, std::nullopt, 10005)), doubled) << seed_note();
  // Consumers of the counts read them as a buffer.
  const Array share = lf::bincount(s.x, std::nullopt, 5000).astype(DType::Float64) / 100003.0;
  const lf::HostArray<double> h = share.get<double>();
  for (std::size_t b = 0; b < s.counts.size(); ++b) ASSERT_EQ(h.data()[b], double(s.counts[b]) / 100003.0) << b;
}

// NumPy's length: the largest value plus one, or minlength. One pass counts into 16384 provisional bins while it finds
// the range; a value beyond them is counted again with the exact length.
TEST(BinCount, TheLargestValueSizesTheResult) {
  EXPECT_EQ(counts_of(lf::bincount(lf::asarray<i64>({3, 1, 3}))), (std::vector<i64>{0, 1, 0, 2}));
  EXPECT_EQ(counts_of(lf::bincount(lf::asarray<i64>({3, 1, 3}), std::nullopt, 6)),
            (std::vector<i64>{0, 1, 0, 2, 0, 0}));
  for (const i64 largest : {i64(16383), i64(16384), i64(100000)}) {
    const Array c = lf::bincount(lf::asarray<std::int32_t>({2, std::int32_t(largest), 2}));
    ASSERT_EQ(c.shape(), lf::Shape{largest + 1}) << largest;
    const std::vector<i64> got = counts_of(c);
    EXPECT_EQ(got[2], 2) << largest;
    EXPECT_EQ(got[std::size_t(largest)], 1) << largest;
    EXPECT_EQ(std::accumulate(got.begin(), got.end(), i64(0)), 3) << largest;
  }
  EXPECT_THROW((void)lf::bincount(lf::asarray<std::int16_t>({4, -1, 2})), lf::ValueError);
  EXPECT_THROW((void)lf::bincount(lf::asarray<i64>({4, std::numeric_limits<i64>::min()})), lf::ValueError);
  // uint64 elements above 2^63 - 1 are negative as int64 (NumPy refuses uint64 input outright).
  const Array huge = lf::asarray<i64>({4, std::numeric_limits<i64>::min() + 5, 1}).astype(DType::UInt64);
  EXPECT_THROW((void)lf::bincount(huge), lf::ValueError);
  // Small uint64 values count as themselves; the threads that see no element leave no trace in the range.
  EXPECT_EQ(counts_of(lf::bincount(lf::asarray<i64>({2, 0, 2}).astype(DType::UInt64))), (std::vector<i64>{1, 0, 2}));
  // The weighted count sizes its result the same way.
  const Array w = lf::bincount(lf::asarray<i64>({0, 20000}), lf::asarray({0.5, 2.0}));
  ASSERT_EQ(w.shape(), lf::Shape{20001});
  EXPECT_EQ(w(lf::slice(20000, lf::none)).item<double>(), 2.0);
}

// The same over inputs long enough for every block's vector loads (the device folds the range into its counting
// pass, each block's into one pair of atomics): the largest value drawn, wherever it is, sizes the result, and one
// negative element anywhere is refused.
TEST(BinCount, TheRangeOfLongInputs) {
  std::mt19937_64 rng(lazyfuse_test::seed() ^ 0x5eed);
  const i64 n = i64(1) << 21;
  // Every width, the narrow ones too: a negative int8 or int16 must not pass for a large unsigned value.
  for (const DType t : {DType::Int8, DType::UInt8, DType::Int16, DType::Int32, DType::UInt32, DType::Int64}) {
    const i64 limit = std::min(std::uniform_int_distribution<i64>(2, 16000)(rng), largest_value(t) + 1);
    std::vector<i64> v(static_cast<std::size_t>(n));
    for (auto& e : v) e = i64(rng() % std::uint64_t(limit));
    const std::string what =
        std::string(lf::dtype_name(t)) + " values below " + std::to_string(limit) + ", " + seed_note();
    const auto check_size = [&](const std::vector<i64>& values) {
      const Array c = lf::bincount(lf::asarray(values, {n}).astype(t));
      EXPECT_EQ(c.shape(), lf::Shape{*std::max_element(values.begin(), values.end()) + 1}) << what;
    };
    check_size(v);
    const auto at = std::size_t(rng() % std::uint64_t(n));
    const i64 kept = v[at];
    v[at] = std::min(i64(30000), largest_value(t)); // beyond the provisional counters: counted again
    check_size(v);
    v[at] = -1;
    if (lf::is_signed_integer(t)) { // an unsigned -1 is 2^8 - 1 or 2^32 - 1
      EXPECT_THROW((void)lf::bincount(lf::asarray(v, {n}).astype(t)), lf::ValueError) << what;
    }
    v[at] = kept;
  }
}

TEST(BinCount, EmptyInputsGiveMinlengthZeros) {
  EXPECT_EQ(counts_of(lf::bincount(lf::zeros({0}, DType::Int32), std::nullopt, 3)), (std::vector<i64>{0, 0, 0}));
  EXPECT_EQ(lf::bincount(lf::zeros({0}, DType::Int32)).shape(), lf::Shape{0});
}

TEST(BinCount, FixedLengthDropsValuesOutsideAndStaysLazy) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  // Every signed type with negatives (whose unsigned twins, 255 for an int8 -1, would land in 300 bins) and values of
  // the length or more, neither counted.
  for (const DType t : {DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8, DType::UInt32}) {
    const i64 n = 50000, length = 300;
    const bool is_signed = lf::is_signed_integer(t);
    const i64 lo = is_signed ? -128 : 0, hi = t == DType::Int8 ? 127 : t == DType::UInt8 ? 255 : 400;
    std::vector<i64> v(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(length), 0);
    for (auto& e : v) {
      e = lo + i64(rng() % std::uint64_t(hi - lo + 1));
      if (e >= 0 && e < length) ++want[std::size_t(e)];
    }
    const Array x = lf::asarray(v, {n}).astype(t).eval();
    const lf::KernelCacheStats before = lf::kernel_cache_stats();
    const Array c = lf::bincount_fixed(x, length);
    EXPECT_EQ(lf::kernel_cache_stats().kernels_launched, before.kernels_launched) << "nothing runs before it is needed";
    EXPECT_EQ(counts_of(c), want) << lf::dtype_name(t) << ", " << seed_note();
  }
  EXPECT_EQ(counts_of(lf::bincount_fixed(lf::asarray<i64>({5, 7}), 0)), std::vector<i64>{});
  EXPECT_THROW((void)lf::bincount_fixed(lf::asarray<i64>({1}), -1), lf::ValueError);
  EXPECT_THROW((void)lf::bincount_fixed(lf::asarray({1.0}), 3), lf::DTypeError);
  EXPECT_THROW((void)lf::bincount_fixed(lf::zeros({2, 2}, DType::Int32), 3), lf::ValueError);
}

class CudaBinCount : public testing::Test {
protected:
  void SetUp() override { LAZYFUSE_SKIP_WITHOUT_GPU(); }
  std::mt19937_64 rng{lazyfuse_test::seed()};
};

TEST_F(CudaBinCount, OneKernelCountsAndSizes) {
  // bincount is one kernel that counts into provisional bins and finds the range (read on the host); its result is
  // a view of those counts. A value beyond them costs a second count, with the exact length.
  const Sample s = sample(DType::Int32, i64(1) << 22, 4096, 4095, rng);
  lf::KernelCacheStats before = lf::kernel_cache_stats();
  Array c = lf::bincount(s.x);
  c.eval();
  EXPECT_EQ(lf::kernel_cache_stats().kernels_launched - before.kernels_launched, 1u);
  EXPECT_EQ(counts_of(c), s.counts) << seed_note();
  const Array beyond = lf::concatenate({s.x, lf::full({1}, 20000.0, DType::Int32)}).eval();
  before = lf::kernel_cache_stats();
  c = lf::bincount(beyond);
  c.eval();
  EXPECT_EQ(lf::kernel_cache_stats().kernels_launched - before.kernels_launched, 2u);
  std::vector<i64> want = s.counts;
  want.resize(20001);
  want[20000] = 1;
  EXPECT_EQ(difference(counts_of(c), want), "") << seed_note();
}

TEST_F(CudaBinCount, EachCountReadsItsOwnRange) {
  // The range reaches the host through a reused slot of mapped memory, written by the last block of each count
  // (runtime/HostSlots.h): back-to-back counts of arrays with other largest values, through shared counters and
  // (a minlength of 2^20) global ones, must each be sized by their own.
  for (int round = 0; round < 24; ++round) {
    const i64 largest = 100 + i64(rng() % 16000), minlength = round % 3 == 2 ? i64(1) << 20 : 0;
    const Sample s = sample(DType::Int32, i64(1) << 20, largest + 1, largest, rng);
    const Array c = lf::bincount(s.x, std::nullopt, minlength);
    ASSERT_EQ(c.shape(), lf::Shape{std::max(largest + 1, minlength)}) << round << ", " << seed_note();
    std::vector<i64> want = s.counts;
    want.resize(std::size_t(std::max(largest + 1, minlength)));
    ASSERT_EQ(difference(counts_of(c), want), "") << round << ", " << seed_note();
  }
}

TEST_F(CudaBinCount, BinsBeyondSharedMemoryUseGlobalCounters) {
  // 2^20 bins of 4 bytes do not fit a block's shared memory (228 KB on the H200): global atomics; the result is the
  // same exact counts.
  for (const DType t : {DType::Int32, DType::Int64}) {
    const Sample s = sample(t, i64(1) << 21, i64(1) << 20, 12345, rng);
    EXPECT_EQ(difference(counts_of(lf::bincount(s.x, std::nullopt, i64(1) << 20)), s.counts), "")
        << lf::dtype_name(t) << ", " << seed_note();
  }
}

} // namespace
