// One batched matrix product as the GEMM back ends (runtime/CublasLt.h, runtime/CpuGemm.h) take it: plain C++, so
// that it can be included anywhere. runtime/Products.h builds it from a product plan.
#pragma once

#include "graph/Matmul.h"

#include <lazyfuse/dtype.hpp>

#include <cstdint>

namespace lazyfuse::runtime {

/// What is applied to the product after the bias (fusion::ProductActivation).
enum class GemmActivation : std::uint8_t { None, Relu, GeluTanh };

/// c[b] = act(alpha * a[b] @ b[b] + beta * c_in[b] + bias) for b in [0, batch): a[b] is m x k and b[b] k x n, each
/// read through its layout (graph::GemmLayout: row- or column-major, leading dimension, batch stride in elements,
/// possibly 0); c_in (when set; beta is ignored without it) is read row-major through lc, never written; bias (when
/// set) holds n contiguous values added to every row; c is written C-contiguous (batch, m, n). All are of `type`;
/// m, n, k and batch are at least 1. The pointers are device pointers on the CUDA backend, host pointers on the CPU
/// backend.
struct Gemm {
  DType type = DType::Float32;
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  const void* a = nullptr;
  graph::GemmLayout la;
  const void* b = nullptr;
  graph::GemmLayout lb;
  void* c = nullptr;
  double alpha = 1, beta = 0;
  const void* c_in = nullptr;
  graph::GemmLayout lc;
  const void* bias = nullptr;
  GemmActivation activation = GemmActivation::None;
  /// Whether anything beyond c = a @ b is asked for.
  bool has_epilogue() const {
    return alpha != 1 || c_in != nullptr || bias != nullptr || activation != GemmActivation::None;
  }
};

} // namespace lazyfuse::runtime
