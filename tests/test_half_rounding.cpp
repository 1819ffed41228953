// Per-op rounding of float16 and bfloat16 on the backend in use (the CPU backend without a GPU): see
// tests/half_rounding.h. test_cuda_half_rounding.cpp runs the same chains on the GPU.
#include "half_rounding.h"

namespace {

TEST(HalfRounding, Float16RoundsEveryOp) {
  half_rounding::check_all_chains<lazyfuse::float16>();
}

TEST(HalfRounding, BFloat16RoundsEveryOp) {
  half_rounding::check_all_chains<lazyfuse::bfloat16>();
}

} // namespace
