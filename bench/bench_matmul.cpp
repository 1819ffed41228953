// Matrix products: lazyfuse's matmul against cuBLASLt called directly in the same program on the same buffers (the
// limit, in the style of bench/bench_limits.cu), timed as the peers were (bench/timing.h: 20 back-to-back calls, one
// synchronize). Workloads of issue 15: a float32 GEMM 4096^3 in full FP32 and in TF32 (LAZYFUSE_TF32, and the
// direct call's CUBLAS_COMPUTE_32F_FAST_TF32), a bfloat16 GEMM 8192^3 (float32 accumulation), and 2048 batched
// float32 products of 128 x 128 matrices. Each lazyfuse call must make exactly one library call and launch no kernel
// (checked every iteration; a mismatch fails the benchmark). Counter TFLOP_per_s: 2 m n k batch per second of wall
// time. The direct call uses the same workspace size and the first algorithm of the same heuristic query, so the
// difference between the two rows is lazyfuse's own cost (graph, partition, pool, descriptor cache). The batched
// product is also timed as cuBLAS's cublasGemmStridedBatchedEx called directly, the routine lazyfuse uses for it.
//
// Epilogues (x 16384 x 2048, w 2048 x 8192, b 8192; TF32 and bfloat16):
//  - BM_MlpGelu: the MLP block gelu(x @ w + b) with the exact (erf) GELU: one library call (product and bias in
//    cuBLASLt's BIAS epilogue) and one kernel (the GELU, reading the product once). Its limit,
//    BM_MlpGelu_cuBLASLt: the same call with CUBLASLT_EPILOGUE_BIAS made directly, plus one device-to-device copy
//    of the output (one read and one write at copy bandwidth, what the GELU pass must at least cost).
//  - BM_BiasRelu: maximum(x @ w + b, 0): one library call (RELU_BIAS), no kernel; BM_BiasRelu_cuBLASLt the same
//    epilogue called directly, and BM_MlpGemm / BM_MlpGemm_cuBLASLt the bare product of the same shape beside them.
#include "common.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <memory>

namespace {

using namespace lazyfuse_bench;

struct Gemm {
  std::int64_t batch, m, n, k;
  DType type;
  double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
};

const Gemm kSgemm{1, 4096, 4096, 4096, DType::Float32};
const Gemm kBf16{1, 8192, 8192, 8192, DType::BFloat16};
const Gemm kBatched{2048, 128, 128, 128, DType::Float32};
const Gemm kMlp{1, 16384, 8192, 2048, DType::Float32};
const Gemm kMlpBf16{1, 16384, 8192, 2048, DType::BFloat16};

// What a lazyfuse benchmark computes from x, w and the bias row.
enum class Work { Product, BiasRelu, MlpGelu };

// Inputs of `type`: small values in [-0.5, 0.5) (no overflow in any accumulation), materialized.
Array operand(Shape shape, DType type, double phase) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  Array x = (sin(arange(0, double(n), 1, DType::Float32) * 0.37 + phase) * 0.5).reshape(shape).astype(type);
  x.eval();
  return x;
}

struct Tf32 {
  explicit Tf32(bool on) { config::set("LAZYFUSE_TF32", on ? "1" : "0"); }
  ~Tf32() { config::reset("LAZYFUSE_TF32"); }
};

void lazyfuse_gemm(benchmark::State& state, const Gemm& g, Work work = Work::Product) {
  if (!has_gpu(state)) return;
  const Tf32 tf32(state.range(0) != 0);
  Array a = operand({g.batch, g.m, g.k}, g.type, 0.1), b = operand({g.batch, g.k, g.n}, g.type, 0.2);
  Array bias = operand({g.n}, g.type, 0.4);
  if (g.batch == 1 && work != Work::Product) {
    a = a.reshape({g.m, g.k});
    b = b.reshape({g.k, g.n});
  }
  const std::uint64_t kernels_per_call = work == Work::MlpGelu ? 1 : 0;
  auto call = [&] {
    Array c;
    switch (work) {
    case Work::Product: c = matmul(a, b); break;
    case Work::BiasRelu: c = maximum(matmul(a, b) + bias, 0.0); break;
    case Work::MlpGelu: c = gelu(matmul(a, b) + bias); break;
    }
    c.eval();
  };
  for (int w = 0; w < kWarmup; ++w) call();
  lazyfuse::sync();
  auto before = kernel_cache_stats();
  time_calls(
      state, stream(), call, [] { lazyfuse::sync(); },
      [&]() -> std::string {
        const auto now = kernel_cache_stats();
        const auto kernels = now.kernels_launched - before.kernels_launched;
        const auto calls = now.library_calls - before.library_calls;
        before = now;
        if (kernels == kernels_per_call * kCalls && calls == std::uint64_t(kCalls)) return "";
        return std::to_string(kernels) + " kernels and " + std::to_string(calls) + " library calls in " +
               std::to_string(kCalls) + " calls; expected " + std::to_string(kernels_per_call * kCalls) + " and " +
               std::to_string(kCalls);
      },
      0, 0);
  state.counters["library_calls_per_call"] = 1;
  state.counters["kernels_per_call"] = double(kernels_per_call);
  if (state.iterations() > 0)
    state.counters["TFLOP_per_s"] =
        benchmark::Counter(g.flops() * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- cuBLASLt directly ----------------------------------------------------------------------------------------

#define CHECK_LT(expr)                                                                                                 \
  do {                                                                                                                 \
    if (cublasStatus_t s_ = (expr); s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      state.SkipWithError((std::string(#expr) + ": " + cublasLtGetStatusString(s_)).c_str());                          \
      return;                                                                                                          \
    }                                                                                                                  \
  } while (0)

// Times a direct library call as lazyfuse_gemm times lazyfuse's (warm-up, then time_calls); `error` returns what
// made the last call fail ("" when none did).
template <class Call, class Error>
void time_direct(benchmark::State& state, const Gemm& g, Call&& call, Error&& error) {
  for (int w = 0; w < kWarmup; ++w) call();
  cudaDeviceSynchronize();
  time_calls(
      state, stream(), call, [] { cudaDeviceSynchronize(); }, error, 0, 0);
  state.counters["library_calls_per_call"] = 1;
  if (state.iterations() > 0)
    state.counters["TFLOP_per_s"] =
        benchmark::Counter(g.flops() * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
}

// `epilogue`: CUBLASLT_EPILOGUE_DEFAULT, or a bias epilogue (the bias row is then a buffer of n values); `copy_out`:
// one device-to-device copy of the output after each call (the limit of the MLP block's GELU pass).
void direct_gemm(benchmark::State& state, const Gemm& g, cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT,
                 bool copy_out = false) {
  if (!has_gpu(state)) return;
  const bool tf32 = state.range(0) != 0;
  Array a = operand({g.batch, g.m, g.k}, g.type, 0.1), b = operand({g.batch, g.k, g.n}, g.type, 0.2);
  Array c = operand({g.batch, g.m, g.n}, g.type, 0.3); // the output buffer, overwritten
  Array copy = operand({g.batch, g.m, g.n}, g.type, 0.5);
  Array bias = operand({g.n}, g.type, 0.4);
  const void* pa = a.data_ptr();
  const void* pb = b.data_ptr();
  void* pc = c.data_ptr();
  void* pcopy = copy.data_ptr();
  const void* pbias = bias.data_ptr();
  const std::size_t out_bytes = std::size_t(g.batch * g.m * g.n) * itemsize(g.type);
  const cudaDataType_t t = g.type == DType::BFloat16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute =
      g.type == DType::Float32 && tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cublasLtHandle_t handle = nullptr;
  CHECK_LT(cublasLtCreate(&handle));
  std::unique_ptr<cublasLtContext, decltype(&cublasLtDestroy)> own_handle(handle, cublasLtDestroy);
  cublasLtMatmulDesc_t desc = nullptr;
  CHECK_LT(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F));
  std::unique_ptr<cublasLtMatmulDescOpaque_t, decltype(&cublasLtMatmulDescDestroy)> own_desc(desc,
                                                                                             cublasLtMatmulDescDestroy);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    CHECK_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pbias, sizeof pbias));
  }
  // Row-major C = A B as column-major C^T = B^T A^T (as lazyfuse does).
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  CHECK_LT(cublasLtMatrixLayoutCreate(&la, t, std::uint64_t(g.n), std::uint64_t(g.k), g.n)); // b
  CHECK_LT(cublasLtMatrixLayoutCreate(&lb, t, std::uint64_t(g.k), std::uint64_t(g.m), g.k)); // a
  CHECK_LT(cublasLtMatrixLayoutCreate(&lc, t, std::uint64_t(g.n), std::uint64_t(g.m), g.n));
  using LayoutPtr = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, decltype(&cublasLtMatrixLayoutDestroy)>;
  LayoutPtr own_a(la, cublasLtMatrixLayoutDestroy), own_b(lb, cublasLtMatrixLayoutDestroy),
      own_c(lc, cublasLtMatrixLayoutDestroy);
  if (g.batch > 1) {
    const std::int32_t count = std::int32_t(g.batch);
    const std::int64_t sa = g.n * g.k, sb = g.k * g.m, sc = g.n * g.m;
    for (auto [l, stride] : {std::pair{la, sa}, std::pair{lb, sb}, std::pair{lc, sc}}) {
      CHECK_LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      CHECK_LT(
          cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }
  const std::size_t workspace_bytes = std::size_t(32) << 20;
  void* workspace = nullptr;
  if (cudaMalloc(&workspace, workspace_bytes) != cudaSuccess) {
    state.SkipWithError("cudaMalloc of the workspace failed");
    return;
  }
  cublasLtMatmulPreference_t pref = nullptr;
  CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, decltype(&cublasLtMatmulPreferenceDestroy)> own_pref(
      pref, cublasLtMatmulPreferenceDestroy);
  const std::uint64_t ws = workspace_bytes;
  CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  CHECK_LT(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, pref, 1, &heuristic, &found));
  if (found == 0) {
    state.SkipWithError("cuBLASLt has no algorithm");
    cudaFree(workspace);
    return;
  }
  const float one = 1, zero = 0;
  cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
  auto call = [&] {
    const cublasStatus_t s = cublasLtMatmul(handle, desc, &one, pb, la, pa, lb, &zero, pc, lc, pc, lc, &heuristic.algo,
                                            workspace, workspace_bytes, stream());
    if (s != CUBLAS_STATUS_SUCCESS) last = s;
    if (copy_out) cudaMemcpyAsync(pcopy, pc, out_bytes, cudaMemcpyDeviceToDevice, stream());
  };
  time_direct(state, g, call, [&]() -> std::string {
    return last == CUBLAS_STATUS_SUCCESS ? "" : std::string("cublasLtMatmul: ") + cublasLtGetStatusString(last);
  });
  cudaFree(workspace);
}

void BM_Sgemm4096(benchmark::State& state) {
  lazyfuse_gemm(state, kSgemm);
}
void BM_Sgemm4096_cuBLASLt(benchmark::State& state) {
  direct_gemm(state, kSgemm);
}
void BM_Bf16Gemm8192(benchmark::State& state) {
  lazyfuse_gemm(state, kBf16);
}
void BM_Bf16Gemm8192_cuBLASLt(benchmark::State& state) {
  direct_gemm(state, kBf16);
}
void BM_Batched128x2048(benchmark::State& state) {
  lazyfuse_gemm(state, kBatched);
}
void BM_Batched128x2048_cuBLASLt(benchmark::State& state) {
  direct_gemm(state, kBatched);
}

// The batched product as cuBLAS's cublasGemmStridedBatchedEx, called directly (CuPy's and PyTorch's call, and
// lazyfuse's route for batched products without an epilogue).
void BM_Batched128x2048_cuBLAS(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const Gemm& g = kBatched;
  const bool tf32 = state.range(0) != 0;
  Array a = operand({g.batch, g.m, g.k}, g.type, 0.1), b = operand({g.batch, g.k, g.n}, g.type, 0.2);
  Array c = operand({g.batch, g.m, g.n}, g.type, 0.3);
  const void* pa = a.data_ptr();
  const void* pb = b.data_ptr();
  void* pc = c.data_ptr();
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    state.SkipWithError("cublasCreate failed");
    return;
  }
  std::unique_ptr<cublasContext, decltype(&cublasDestroy)> own_handle(handle, cublasDestroy);
  const std::size_t workspace_bytes = std::size_t(32) << 20;
  void* workspace = nullptr;
  if (cudaMalloc(&workspace, workspace_bytes) != cudaSuccess) {
    state.SkipWithError("cudaMalloc of the workspace failed");
    return;
  }
  cublasSetStream(handle, stream());
  cublasSetWorkspace(handle, workspace, workspace_bytes);
  const float one = 1, zero = 0;
  cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
  auto call = [&] {
    const cublasStatus_t s = cublasGemmStridedBatchedEx(
        handle, CUBLAS_OP_N, CUBLAS_OP_N, int(g.n), int(g.m), int(g.k), &one, pb, CUDA_R_32F, int(g.n), g.k * g.n, pa,
        CUDA_R_32F, int(g.k), g.m * g.k, &zero, pc, CUDA_R_32F, int(g.n), g.m * g.n, int(g.batch),
        tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) last = s;
  };
  time_direct(state, g, call, [&]() -> std::string {
    return last == CUBLAS_STATUS_SUCCESS ? ""
                                         : std::string("cublasGemmStridedBatchedEx: ") + cublasGetStatusString(last);
  });
  cudaFree(workspace);
}

void BM_MlpGemm(benchmark::State& state) {
  lazyfuse_gemm(state, state.range(1) ? kMlpBf16 : kMlp);
}
void BM_MlpGemm_cuBLASLt(benchmark::State& state) {
  direct_gemm(state, state.range(1) ? kMlpBf16 : kMlp);
}
void BM_BiasRelu(benchmark::State& state) {
  lazyfuse_gemm(state, state.range(1) ? kMlpBf16 : kMlp, Work::BiasRelu);
}
void BM_BiasRelu_cuBLASLt(benchmark::State& state) {
  direct_gemm(state, state.range(1) ? kMlpBf16 : kMlp, CUBLASLT_EPILOGUE_RELU_BIAS);
}
void BM_MlpGelu(benchmark::State& state) {
  lazyfuse_gemm(state, state.range(1) ? kMlpBf16 : kMlp, Work::MlpGelu);
}
void BM_MlpGelu_cuBLASLt(benchmark::State& state) {
  direct_gemm(state, state.range(1) ? kMlpBf16 : kMlp, CUBLASLT_EPILOGUE_BIAS, true);
}

// The epilogue workloads: TF32 float32 (tf32 = 1, bf16 = 0) and bfloat16 (tf32 = 0, bf16 = 1).
void epilogue_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"tf32", "bf16"})->Args({1, 0})->Args({0, 1})->UseManualTime()->Iterations(1);
  b->Unit(benchmark::kMillisecond);
}

// The plain products: full FP32 (tf32 = 0) and TF32 (tf32 = 1).
void tf32_args(benchmark::internal::Benchmark* b) {
  b->ArgName("tf32")->Arg(0)->Arg(1)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK(BM_MlpGemm)->Apply(epilogue_args);
BENCHMARK(BM_MlpGemm_cuBLASLt)->Apply(epilogue_args);
BENCHMARK(BM_BiasRelu)->Apply(epilogue_args);
BENCHMARK(BM_BiasRelu_cuBLASLt)->Apply(epilogue_args);
BENCHMARK(BM_MlpGelu)->Apply(epilogue_args);
BENCHMARK(BM_MlpGelu_cuBLASLt)->Apply(epilogue_args);
BENCHMARK(BM_Sgemm4096)->Apply(tf32_args);
BENCHMARK(BM_Sgemm4096_cuBLASLt)->Apply(tf32_args);
BENCHMARK(BM_Bf16Gemm8192)->ArgName("tf32")->Arg(0)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Bf16Gemm8192_cuBLASLt)
    ->ArgName("tf32")
    ->Arg(0)
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Batched128x2048)->Apply(tf32_args);
BENCHMARK(BM_Batched128x2048_cuBLASLt)->Apply(tf32_args);
BENCHMARK(BM_Batched128x2048_cuBLAS)->Apply(tf32_args);
BENCHMARK_MAIN();
