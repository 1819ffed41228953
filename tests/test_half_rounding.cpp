// Per-op rounding of float16 and bfloat16 on the backend in use (the CPU backend without a GPU): see
// tests/half_rounding.h. test_cuda_half_rounding.cpp runs the same chains on the GPU.
#include "half_rounding.h"

#include <cmath>
#include <random>
#include <vector>

namespace {

TEST(HalfRounding, Float16RoundsEveryOp) {
  half_rounding::check_all_chains<lazyfuse::float16>();
}

TEST(HalfRounding, BFloat16RoundsEveryOp) {
  half_rounding::check_all_chains<lazyfuse::bfloat16>();
}

namespace lf = lazyfuse;

// std of a half array is the square root of the float32 variance, rounded once (docs/semantics.md, "Half-precision
// types"): not the root of the variance rounded to the half type. Found by test_random_graphs: std of float16 values
// whose variance exceeds 65504 was inf (LAZYFUSE_TEST_RANDOM_SEED=31 LAZYFUSE_TEST_RANDOM_CASE=4860 of 10,000), and
// bfloat16 results were a unit in the last place off (cases 5152 and 5192).
TEST(HalfRounding, StdRoundsOnceAfterTheRoot) {
  const lf::Array wide = lf::asarray(std::vector<lf::float16>{lf::float16(-300.0), lf::float16(300.0)}, {2});
  EXPECT_EQ(float(lf::stddev(wide).item<lf::float16>()), 300.0f);
  EXPECT_EQ(float(lf::nanstd(wide).item<lf::float16>()), 300.0f);
  EXPECT_TRUE(std::isinf(float(lf::var(wide).item<lf::float16>()))) << "var 90000 is beyond float16's range";

  // Rows of random bfloat16 values: each row's std equals the float32 computation rounded once.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-100.0f, 100.0f);
  constexpr int kRows = 500, kCols = 6;
  std::vector<lf::bfloat16> data;
  for (int i = 0; i < kRows * kCols; ++i) data.push_back(lf::bfloat16(value(rng)));
  const lf::Array x = lf::asarray(data, {kRows, kCols});
  for (int ddof : {0, 1}) {
    const auto got = lf::stddev(x, {1}, ddof).get<lf::bfloat16>();
    const auto got_nan = lf::nanstd(x, {1}, ddof).get<lf::bfloat16>();
    const auto want =
        lf::stddev(x.astype(lf::DType::Float32), {1}, ddof).astype(lf::DType::BFloat16).get<lf::bfloat16>();
    for (int r = 0; r < kRows; ++r) {
      EXPECT_EQ(got[std::size_t(r)].bits, want[std::size_t(r)].bits) << "row " << r << ", ddof " << ddof;
      EXPECT_EQ(got_nan[std::size_t(r)].bits, want[std::size_t(r)].bits) << "nanstd, row " << r << ", ddof " << ddof;
    }
  }
}

} // namespace
