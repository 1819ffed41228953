// The 16 expression structures of the kernel-cache tests (tests/test_cache.cpp on any backend,
// tests/test_cuda_cache.cpp with the disk cache), and their double-precision reference.
#pragma once

#include <lazyfuse/lazyfuse.hpp>

#include <cmath>

namespace lazyfuse_test {

/// Structure `id` (0..15): x, then sin / tanh / sqrt(|.|) / square-0.5 for the set bits of id, then * k + y.
/// Every id is a different op sequence, so a different kernel; k is a runtime scalar, not part of the structure.
inline lazyfuse::Array build_structure(int id, const lazyfuse::Array& x, const lazyfuse::Array& y, double k) {
  lazyfuse::Array v = x;
  if (id & 1) v = lazyfuse::sin(v);
  if (id & 2) v = lazyfuse::tanh(v);
  if (id & 4) v = lazyfuse::sqrt(lazyfuse::abs(v));
  if (id & 8) v = lazyfuse::square(v) - 0.5;
  return v * k + y;
}

/// build_structure(id, x, y, k) for one element, in double.
inline double structure_reference(int id, double x, double y, double k) {
  double v = x;
  if (id & 1) v = std::sin(v);
  if (id & 2) v = std::tanh(v);
  if (id & 4) v = std::sqrt(std::fabs(v));
  if (id & 8) v = v * v - 0.5;
  return v * k + y;
}

} // namespace lazyfuse_test
