// Per-op rounding of float16 and bfloat16 in CUDA kernels (tests/half_rounding.h): a fused kernel, one kernel per
// op and the host's per-op rounding agree bit for bit, on inputs where rounding once at the end (or an FMA
// contraction) would give other bits. Skips without a GPU (fails under LAZYFUSE_TEST_REQUIRE_GPU=1).
#include "gpu_test.h"
#include "half_rounding.h"

#include <lazyfuse/lazyfuse.hpp>

#include <cmath>
#include <random>
#include <vector>

namespace {

namespace lf = lazyfuse;

// abs and negative right after a float -> half conversion, in every element of the vectors the kernels load and
// store: ptxas of CUDA 13.0 paired two scalar conversions into one packed instruction and dropped the `and 0x7fff`
// on the lower element of the pair, so abs(x.astype(float16)) gave x in every other element (graph/OpMath.inc).
template <class H> void check_sign_ops_after_conversion(lf::DType h) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float> x(4099); // odd: the vector path and the element-by-element tail
  for (float& v : x) v = u(rng);
  const lf::Array a = lf::asarray(x);
  const auto abs_h = lf::abs(a.astype(h)).get<H>(), neg_abs = (-lf::abs(a.astype(h))).get<H>(),
             neg = (-a.astype(h)).get<H>();
  int wrong = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float m = float(H(std::fabs(x[i])));
    const bool bad = float(abs_h[i]) != m || float(neg_abs[i]) != -m || float(neg[i]) != -float(H(x[i]));
    if (bad && wrong++ == 0)
      ADD_FAILURE() << "first wrong element " << i << " (lane " << i % 4 << ") of x = " << x[i] << ": abs "
                    << float(abs_h[i]) << ", -abs " << float(neg_abs[i]) << ", -x " << float(neg[i]);
  }
  EXPECT_EQ(wrong, 0) << "elements with a wrong sign bit";
}

TEST(CudaHalfRounding, Float16RoundsEveryOp) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  half_rounding::check_all_chains<lazyfuse::float16>();
}

TEST(CudaHalfRounding, BFloat16RoundsEveryOp) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  half_rounding::check_all_chains<lazyfuse::bfloat16>();
}

TEST(CudaHalfRounding, SignOpsAfterAConversionInEveryLane) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  check_sign_ops_after_conversion<lf::float16>(lf::DType::Float16);
  check_sign_ops_after_conversion<lf::bfloat16>(lf::DType::BFloat16);
}

} // namespace
