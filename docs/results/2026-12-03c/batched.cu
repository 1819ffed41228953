// Experiment: batched FP32 128^3 x 2048 -- cuBLAS strided batched vs cuBLASLt heuristic answers.
#include <cublas_v2.h>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#define CK(x) do { auto s_ = (x); if ((int)s_ != 0) { printf("fail %s: %d line %d\n", #x, (int)s_, __LINE__); return 1; } } while (0)
template <class F> float timeit(F f, cudaStream_t s) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) f();
  cudaStreamSynchronize(s);
  std::vector<float> ts;
  for (int t = 0; t < 5; ++t) {
    cudaEventRecord(a, s);
    for (int i = 0; i < 20; ++i) f();
    cudaEventRecord(b, s); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms / 20);
  }
  std::sort(ts.begin(), ts.end()); return ts[2];
}
int main() {
  const int B = 2048, M = 128, N = 128, K = 128;
  float *a, *b, *c; void* ws; size_t wsb = 32 << 20;
  cudaMalloc(&a, sizeof(float) * B * M * K); cudaMalloc(&b, sizeof(float) * B * K * N); cudaMalloc(&c, sizeof(float) * B * M * N);
  cudaMalloc(&ws, wsb);
  cudaMemset(a, 0, sizeof(float) * B * M * K); cudaMemset(b, 0, sizeof(float) * B * K * N);
  cudaStream_t s; cudaStreamCreate(&s);
  cublasHandle_t h; CK(cublasCreate(&h)); CK(cublasSetStream(h, s));
  CK(cublasSetWorkspace(h, ws, wsb));
  const float one = 1, zero = 0;
  float t1 = timeit([&] { cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, N, (long long)K * N, a, K, (long long)M * K, &zero, c, N, (long long)M * N, B); }, s);
  printf("cublasSgemmStridedBatched: %.4f ms\n", t1);
  float t2 = timeit([&] { cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_32F, N, (long long)K * N, a, CUDA_R_32F, K, (long long)M * K, &zero, c, CUDA_R_32F, N, (long long)M * N, B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); }, s);
  printf("cublasGemmStridedBatchedEx 32F: %.4f ms\n", t2);
  float t2b = timeit([&] { cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_32F, N, (long long)K * N, a, CUDA_R_32F, K, (long long)M * K, &zero, c, CUDA_R_32F, N, (long long)M * N, B, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT); }, s);
  printf("cublasGemmStridedBatchedEx 32F_PEDANTIC: %.4f ms\n", t2b);
  // cuBLASLt: top 16 heuristic answers.
  cublasLtHandle_t lt; CK(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t d; CK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, lc;
  CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, N, K, N)); CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, M, K)); CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, N, M, N));
  long long sa = (long long)K * N, sb = (long long)M * K, sc = (long long)M * N; int cnt = B;
  for (auto [l, st] : {std::pair{la, sa}, std::pair{lb, sb}, std::pair{lc, sc}}) {
    CK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &cnt, sizeof cnt));
    CK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st, sizeof st));
  }
  cublasLtMatmulPreference_t p; CK(cublasLtMatmulPreferenceCreate(&p));
  uint64_t w = wsb; CK(cublasLtMatmulPreferenceSetAttribute(p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &w, sizeof w));
  cublasLtMatmulHeuristicResult_t r[16]; int found = 0;
  CK(cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, p, 16, r, &found));
  for (int i = 0; i < found; ++i) {
    int id = 0, tile = 0, stages = 0, splitk = 0; size_t sz;
    cublasLtMatmulAlgoConfigGetAttribute(&r[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&r[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&r[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &sz);
    cublasLtMatmulAlgoConfigGetAttribute(&r[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &sz);
    float t = timeit([&] { cublasLtMatmul(lt, d, &one, b, la, a, lb, &zero, c, lc, c, lc, &r[i].algo, ws, wsb, s); }, s);
    printf("cublasLt heuristic #%d: algo %d tile %d stages %d splitk %d waves %.2f ws %zu: %.4f ms\n", i, id, tile, stages, splitk, r[i].wavesCount, r[i].workspaceSize, t);
  }
  return 0;
}
