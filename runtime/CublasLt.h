// Matrix products on cuBLASLt (and cuBLAS for plain batched products), loaded with dlopen on first use (docs/design.md,
// "Matrix products" says why it is not linked): a handle per device, a fixed-size workspace from the device pool per
// call, and the algorithm and descriptors of each exact problem cached, so a repeated product makes no heuristic query.
#pragma once

#include "runtime/Gemm.h"

#include <cuda_runtime_api.h>

#include <string>

namespace lazyfuse::runtime::cublaslt {

/// Bytes of workspace every cuBLASLt product gets (NVIDIA's recommendation for Hopper): fixed, so that the algorithm
/// chosen for a problem never depends on the memory free at the time.
inline constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;

/// Whether cuBLASLt takes products of `type`: float32 (full FP32, or TF32 tensor cores with LAZYFUSE_TF32=1),
/// float64, float16 and bfloat16 (float32 accumulation), complex64, complex128.
bool supports(DType type);

/// Whether libcublasLt could be loaded (tried once; never throws). `why_not` gets the loader's message when not.
bool available(std::string* why_not = nullptr);

/// "cuBLASLt <version> (<path>); batched products: cuBLAS (<path>)" (or why cuBLAS is not used), or "cuBLASLt not
/// loadable: <why>", for lazyfuse-info.
std::string description();

/// Queues `g` on `stream` (the current device's), with `workspace` (kWorkspaceBytes of device memory, which may be
/// released stream-ordered as soon as this returns). A batched product with no epilogue but alpha goes to cuBLAS's
/// cublasGemmStridedBatchedEx (loaded the same way) where cuBLAS takes it; everything else, and any problem cuBLAS
/// declines, to cublasLtMatmul. g's epilogue maps to cuBLASLt's: alpha and beta as the scales,
/// c_in as a C apart from D, the bias and activation as CUBLASLT_EPILOGUE_{BIAS, RELU, RELU_BIAS, GELU, GELU_BIAS}
/// (its GELU is the tanh approximation). Returns false, having queued nothing, when cuBLASLt cannot run it (not
/// loadable, a type it does not take, no algorithm for the problem or its epilogue, a batch over 2^31 - 1): the
/// caller computes it another way. Throws BackendError when cuBLASLt fails.
/// Precondition: available() and supports(g.type); the caller holds the evaluation lock (the caches are not locked).
bool run(const Gemm& g, void* workspace, cudaStream_t stream);

/// Heuristic queries made so far (once per exact problem and device: tests check that a repeat makes none).
std::uint64_t heuristic_queries();

} // namespace lazyfuse::runtime::cublaslt
