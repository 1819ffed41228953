// Experiment (session 37, issue 15): does cuBLASLt's bias (and bias+ReLU) epilogue cost more than the bare product
// because of the epilogue or because the heuristic picks another algorithm for it? The MLP product of issue 15
// (x 16384 x 2048 times w 2048 x 8192, row-major; in cuBLASLt's column-major terms D (8192 x 16384) = W X), in TF32
// and bfloat16, with the alignment preferences lazyfuse passes (16 bytes). Timed as bench/timing.h does (20 calls,
// events around them, median of 5):
//   - each epilogue (DEFAULT, BIAS, RELU_BIAS) with the heuristic's first answer;
//   - BIAS and RELU_BIAS with the bare product's algorithm, where cublasLtMatmulAlgoCheck accepts it;
//   - every one of the first 8 answers for RELU_BIAS, with its configuration (tile, stages, split-k, swizzle).
// Operands are random (uniform in [-1, 1), from a hash of the index) unless the first argument is "constant" (every
// byte 0x3c, call 1's data: a GEMM on constant data draws less power, and the H100 then holds its clock).
//   nvcc -O2 -arch=sm_90 epilogue_algo.cu -lcublasLt -o epilogue_algo && ./epilogue_algo [constant]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

template <class T> __global__ void fill_random(T* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = T(float(h >> 8) * (1.0f / 8388608.0f) - 1.0f);
  }
}

#define CK(x)                                                                                                          \
  do {                                                                                                                 \
    auto s_ = (x);                                                                                                     \
    if (int(s_) != 0) {                                                                                                \
      std::printf("fail %s: %d line %d\n", #x, int(s_), __LINE__);                                                    \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

template <class F> float timeit(F f, cudaStream_t s) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) f();
  cudaStreamSynchronize(s);
  std::vector<float> ts;
  for (int t = 0; t < 5; ++t) {
    cudaEventRecord(a, s);
    for (int i = 0; i < 20; ++i) f();
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ts.push_back(ms / 20);
  }
  std::sort(ts.begin(), ts.end());
  return ts[2];
}

const char* name(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS ? "BIAS" : e == CUBLASLT_EPILOGUE_RELU_BIAS ? "RELU_BIAS" : "DEFAULT";
}

void describe(const cublasLtMatmulAlgo_t& algo) {
  int id = 0, tile = 0, stages = 0, splitk = 0, swizzle = 0, cluster = 0;
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w);
  std::printf("algo %d tile %d stages %d splitk %d swizzle %d cluster %d", id, tile, stages, splitk, swizzle, cluster);
}

struct Case {
  const char* label;
  cudaDataType_t data;
  cublasComputeType_t compute;
  size_t elem;
};

int main(int argc, char** argv) {
  const bool constant = argc > 1 && std::strcmp(argv[1], "constant") == 0;
  const int M = 16384, N = 8192, K = 2048;
  cudaStream_t s;
  cudaStreamCreate(&s);
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t wsb = size_t(32) << 20;
  void* ws;
  cudaMalloc(&ws, wsb);
  for (const Case c : {Case{"TF32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4},
                       Case{"bfloat16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2}}) {
    void *x, *w, *d, *bias;
    cudaMalloc(&x, c.elem * M * K);
    cudaMalloc(&w, c.elem * K * N);
    cudaMalloc(&d, c.elem * M * N);
    cudaMalloc(&bias, c.elem * N);
    if (constant) {
      cudaMemset(x, 0x3c, c.elem * M * K); // small nonzero values in both types
      cudaMemset(w, 0x3c, c.elem * K * N);
      cudaMemset(bias, 0x3c, c.elem * N);
    } else if (c.elem == 4) {
      fill_random<<<1024, 256>>>(static_cast<float*>(x), size_t(M) * K, 1u);
      fill_random<<<1024, 256>>>(static_cast<float*>(w), size_t(K) * N, 2u);
      fill_random<<<1024, 256>>>(static_cast<float*>(bias), size_t(N), 3u);
    } else {
      fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(x), size_t(M) * K, 1u);
      fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(w), size_t(K) * N, 2u);
      fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(bias), size_t(N), 3u);
    }
    cudaDeviceSynchronize();
    cublasLtMatrixLayout_t la, lb, ld;
    CK(cublasLtMatrixLayoutCreate(&la, c.data, N, K, N)); // w row-major K x N = column-major N x K
    CK(cublasLtMatrixLayoutCreate(&lb, c.data, K, M, K)); // x row-major M x K = column-major K x M
    CK(cublasLtMatrixLayoutCreate(&ld, c.data, N, M, N));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    const uint32_t align = 16;
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      CK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align));
    const float one = 1, zero = 0;
    auto desc = [&](cublasLtEpilogue_t e) {
      cublasLtMatmulDesc_t md;
      CK(cublasLtMatmulDescCreate(&md, c.compute, CUDA_R_32F));
      CK(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
      if (e != CUBLASLT_EPILOGUE_DEFAULT)
        CK(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
      return md;
    };
    auto run = [&](cublasLtMatmulDesc_t md, const cublasLtMatmulAlgo_t* algo) {
      return timeit([&] { cublasLtMatmul(lt, md, &one, w, la, x, lb, &zero, d, ld, d, ld, algo, ws, wsb, s); }, s);
    };
    cublasLtMatmulHeuristicResult_t bare[8];
    int nbare = 0;
    cublasLtMatmulDesc_t dbare = desc(CUBLASLT_EPILOGUE_DEFAULT);
    CK(cublasLtMatmulAlgoGetHeuristic(lt, dbare, la, lb, ld, ld, pref, 8, bare, &nbare));
    std::printf("== %s, %d x %d x %d, %s data\n", c.label, M, N, K, constant ? "constant" : "random");
    for (cublasLtEpilogue_t e : {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_BIAS, CUBLASLT_EPILOGUE_RELU_BIAS}) {
      cublasLtMatmulDesc_t md = desc(e);
      cublasLtMatmulHeuristicResult_t r[8];
      int n = 0;
      CK(cublasLtMatmulAlgoGetHeuristic(lt, md, la, lb, ld, ld, pref, 8, r, &n));
      for (int i = 0; i < n; ++i) {
        std::printf("%-9s heuristic #%d: %.4f ms  ", name(e), i, run(md, &r[i].algo));
        describe(r[i].algo);
        std::printf("  ws %zu\n", r[i].workspaceSize);
        if (e == CUBLASLT_EPILOGUE_BIAS && i >= 1) break; // two answers suffice for BIAS
      }
      if (e != CUBLASLT_EPILOGUE_DEFAULT) {
        for (int i = 0; i < 2 && i < nbare; ++i) {
          cublasLtMatmulHeuristicResult_t checked{};
          const cublasStatus_t st = cublasLtMatmulAlgoCheck(lt, md, la, lb, ld, ld, &bare[i].algo, &checked);
          if (st == CUBLAS_STATUS_SUCCESS)
            std::printf("%-9s with the bare answer #%d: %.4f ms\n", name(e), i, run(md, &bare[i].algo));
          else
            std::printf("%-9s with the bare answer #%d: rejected by AlgoCheck (%d)\n", name(e), i, int(st));
        }
      }
      cublasLtMatmulDescDestroy(md);
    }
    cublasLtMatmulDescDestroy(dbare);
    cudaFree(x);
    cudaFree(w);
    cudaFree(d);
    cudaFree(bias);
  }
  return 0;
}
