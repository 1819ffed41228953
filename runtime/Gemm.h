// One batched matrix product as the GEMM back ends (runtime/CublasLt.h, runtime/CpuGemm.h) take it: plain C++, so
// that it can be included anywhere. runtime/Products.h builds it from a product plan.
#pragma once

#include "graph/Matmul.h"

#include <lazyfuse/dtype.hpp>

#include <cstdint>

namespace lazyfuse::runtime {

/// c[b] = a[b] @ b[b] for b in [0, batch): a[b] is m x k and b[b] k x n, each read through its layout
/// (graph::GemmLayout: row- or column-major, leading dimension, batch stride in elements, possibly 0); c is written
/// C-contiguous (batch, m, n). All three are of `type`; m, n, k and batch are at least 1. The pointers are device
/// pointers on the CUDA backend, host pointers on the CPU backend.
struct Gemm {
  DType type = DType::Float32;
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  const void* a = nullptr;
  graph::GemmLayout la;
  const void* b = nullptr;
  graph::GemmLayout lb;
  void* c = nullptr;
};

} // namespace lazyfuse::runtime
