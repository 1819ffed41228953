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

// float64 -> bfloat16 rounds once, as ml_dtypes' astype does: through float32 it could round twice. Found by
// test_random_graphs against NumPy (LAZYFUSE_TEST_RANDOM_SEED=3256935836 LAZYFUSE_TEST_RANDOM_CASE=1485):
// -3.53906256 became -3.53125, whose float32 -3.5390625 is a bfloat16 midpoint. Checked on the backend (astype) and
// on the host (the bfloat16 constructor) at random midpoints and one double ulp either side, normal and subnormal.
TEST(HalfRounding, Float64ToBFloat16RoundsOnce) {
  const double found = -3.53906256;
  EXPECT_EQ(float(lf::bfloat16(found)), -3.546875f);
  EXPECT_EQ(float(lf::asarray(std::vector<double>{found}).astype(lf::DType::BFloat16).item<lf::bfloat16>()),
            -3.546875f);

  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pattern(0x0001, 0x7f7e); // finite positive bfloat16 values with a successor
  std::vector<double> inputs;
  std::vector<std::uint16_t> want;
  for (int i = 0; i < 4000; ++i) {
    // Every fourth pair among the subnormals and the smallest normals.
    const std::uint16_t b = std::uint16_t(i % 4 == 0 ? pattern(rng) % 0x0100 + 1 : pattern(rng));
    const double lo = float(lf::bfloat16::from_bits(b)), hi = float(lf::bfloat16::from_bits(std::uint16_t(b + 1)));
    const double mid = lo + (hi - lo) / 2; // exact: both are floats
    const std::uint16_t even = (b & 1u) == 0 ? b : std::uint16_t(b + 1);
    for (double sign : {1.0, -1.0}) {
      const std::uint16_t s = sign < 0 ? 0x8000u : 0u;
      inputs.push_back(sign * mid);
      want.push_back(std::uint16_t(s | even));
      inputs.push_back(sign * std::nextafter(mid, 0.0));
      want.push_back(std::uint16_t(s | b));
      inputs.push_back(sign * std::nextafter(mid, 1e300));
      want.push_back(std::uint16_t(s | (b + 1)));
    }
  }
  const auto got = lf::asarray(inputs).astype(lf::DType::BFloat16).get<lf::bfloat16>();
  int bad = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::uint16_t host = lf::bfloat16(inputs[i]).bits;
    if ((got[i].bits != want[i] || host != want[i]) && ++bad <= 5)
      ADD_FAILURE() << std::hexfloat << inputs[i] << ": astype 0x" << std::hex << got[i].bits << ", host 0x" << host
                    << ", want 0x" << want[i];
  }
  EXPECT_EQ(bad, 0);
}

} // namespace
