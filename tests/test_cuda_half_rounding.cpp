// Per-op rounding of float16 and bfloat16 in CUDA kernels (tests/half_rounding.h): a fused kernel, one kernel per
// op and the host's per-op rounding agree bit for bit, on inputs where rounding once at the end (or an FMA
// contraction) would give other bits. Skips without a GPU (fails under LAZYFUSE_TEST_REQUIRE_GPU=1).
#include "gpu_test.h"
#include "half_rounding.h"

namespace {

TEST(CudaHalfRounding, Float16RoundsEveryOp) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  half_rounding::check_all_chains<lazyfuse::float16>();
}

TEST(CudaHalfRounding, BFloat16RoundsEveryOp) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  half_rounding::check_all_chains<lazyfuse::bfloat16>();
}

} // namespace
