// What the GPU test programs share: a test that needs the CUDA backend skips without one, unless
// LAZYFUSE_TEST_REQUIRE_GPU=1 (scripts/gpu-check.sh sets it), which turns the skip into a failure.
#pragma once

#include <lazyfuse/runtime.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <exception>
#include <string>

namespace lazyfuse_test {

inline bool require_gpu() {
  const char* v = std::getenv("LAZYFUSE_TEST_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

/// "" when the CUDA backend is in use, else why not.
inline std::string why_no_gpu() {
  try {
    if (lazyfuse::backend() == lazyfuse::Backend::Cuda) return "";
    return "the backend in use is the CPU backend (no usable CUDA device)";
  } catch (const std::exception& e) {
    return e.what();
  }
}

} // namespace lazyfuse_test

/// In a test body (or SetUp): skip, or fail under LAZYFUSE_TEST_REQUIRE_GPU=1, when the CUDA backend is not in use.
#define LAZYFUSE_SKIP_WITHOUT_GPU()                                                                                    \
  do {                                                                                                                 \
    if (const std::string why = ::lazyfuse_test::why_no_gpu(); !why.empty()) {                                         \
      if (::lazyfuse_test::require_gpu()) FAIL() << "LAZYFUSE_TEST_REQUIRE_GPU=1 but " << why;                         \
      GTEST_SKIP() << why;                                                                                             \
    }                                                                                                                  \
  } while (0)
