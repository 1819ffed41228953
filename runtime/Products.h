// Matrix product plans (fusion::KernelPlan::library): cuBLASLt on the CUDA backend, BLAS or the blocked loop on the
// CPU backend, and a generated reduction kernel where neither library takes the product.
#pragma once

#include "fusion/Partition.h"
#include "graph/Node.h"

#include <memory>
#include <string>

namespace lazyfuse::runtime {

/// Runs a product plan (its one output a graph::NodeKind::Matmul node, or with KernelPlan::epilogue the last node
/// of the work folded around a product: fusion/ProductEpilogues.h) and returns the output's buffer, C-contiguous
/// and not yet attached. An epilogue goes into the one library call (alpha, beta and c, bias, activation); where
/// the library cannot take it, the product is computed alone, attached to its node, and the folded ops run as the
/// kernels the unfused graph would make. An operand that the plan left as a view a GEMM cannot read is first copied by
/// one generated kernel (partition makes that rare: it stores such operands). Paths:
///  - CUDA, a type cuBLASLt takes (cublaslt::supports) and the library loadable: one cuBLASLt call on the current
///    stream, with a workspace from the pool;
///  - CUDA otherwise (integers, bool; no algorithm; no library): one generated reduction kernel, exact for integers
///    and bool: sum of products over k (half types multiply in float32), or any of ands;
///  - CPU: BLAS for float32, float64 and complex when built with it, else the blocked loop (runtime/CpuGemm.h).
/// Library paths count one in KernelCacheStats::library_calls, generated kernels in kernels_launched.
/// Preconditions: the caller holds the evaluation lock and has run the plans before this one.
std::shared_ptr<const graph::BufferView> run_product(const fusion::KernelPlan& plan);

/// What runs products on each backend, for lazyfuse-info: one line per backend.
std::string product_libraries();

} // namespace lazyfuse::runtime
