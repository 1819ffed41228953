// Experiment (session 37, issue 15, call 3): what of cuBLASLt's bias+ReLU epilogue costs time in bfloat16 on an H100
// at its power cap? Call 2 found the GPU power-capped on random operands (SM clock 1,185-1,950 MHz), so single
// timings in sequence drift; here every configuration is timed once per round, 15 rounds, the order rotated each
// round, and the median is reported. Configurations (the MLP product of issue 15, x 16384 x 2048 times w 2048 x 8192,
// random operands, the alignment preferences lazyfuse passes, each the heuristic's first answer unless said):
//   bare        CUBLASLT_EPILOGUE_DEFAULT
//   relu        CUBLASLT_EPILOGUE_RELU (no bias)
//   bias        CUBLASLT_EPILOGUE_BIAS
//   relu_bias   CUBLASLT_EPILOGUE_RELU_BIAS, the bias in the output type (lazyfuse's call)
//   relu_bias32 the same with a float32 bias (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE; bfloat16 only)
//   relu_bias@bare  RELU_BIAS with the bare product's algorithm (when cublasLtMatmulAlgoCheck accepts it)
// `once` as the first argument calls each configuration once (for ncu's kernel names and isolated durations).
//   nvcc -O2 -arch=sm_90 epilogue_rounds.cu -lcublasLt -o epilogue_rounds && ./epilogue_rounds [once]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                                          \
  do {                                                                                                                 \
    auto s_ = (x);                                                                                                     \
    if (int(s_) != 0) {                                                                                                \
      std::printf("fail %s: %d line %d\n", #x, int(s_), __LINE__);                                                    \
      std::exit(1);                                                                                                    \
    }                                                                                                                  \
  } while (0)

template <class T> __global__ void fill_random(T* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = T(float(h >> 8) * (1.0f / 8388608.0f) - 1.0f);
  }
}

struct Config {
  std::string name;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::vector<float> times;
};

int main(int argc, char** argv) {
  const bool once = argc > 1 && std::strcmp(argv[1], "once") == 0;
  const int M = 16384, N = 8192, K = 2048, kRounds = 15, kCalls = 20;
  cudaStream_t s;
  cudaStreamCreate(&s);
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  const size_t wsb = size_t(32) << 20;
  void* ws;
  cudaMalloc(&ws, wsb);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const bool bf16 : {true, false}) {
    const cudaDataType_t data = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t compute = bf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    const size_t elem = bf16 ? 2 : 4;
    void *x, *w, *d, *bias, *bias32;
    cudaMalloc(&x, elem * M * K);
    cudaMalloc(&w, elem * K * N);
    cudaMalloc(&d, elem * M * N);
    cudaMalloc(&bias, elem * N);
    cudaMalloc(&bias32, 4 * N);
    if (bf16) {
      fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(x), size_t(M) * K, 1u);
      fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(w), size_t(K) * N, 2u);
      fill_random<<<1024, 256>>>(static_cast<__nv_bfloat16*>(bias), size_t(N), 3u);
    } else {
      fill_random<<<1024, 256>>>(static_cast<float*>(x), size_t(M) * K, 1u);
      fill_random<<<1024, 256>>>(static_cast<float*>(w), size_t(K) * N, 2u);
      fill_random<<<1024, 256>>>(static_cast<float*>(bias), size_t(N), 3u);
    }
    fill_random<<<1024, 256>>>(static_cast<float*>(bias32), size_t(N), 3u);
    cudaDeviceSynchronize();
    cublasLtMatrixLayout_t la, lb, ld;
    CK(cublasLtMatrixLayoutCreate(&la, data, N, K, N));
    CK(cublasLtMatrixLayoutCreate(&lb, data, K, M, K));
    CK(cublasLtMatrixLayoutCreate(&ld, data, N, M, N));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    const uint32_t align = 16;
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      CK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align));
    auto make = [&](cublasLtEpilogue_t e, bool float_bias) {
      cublasLtMatmulDesc_t md;
      CK(cublasLtMatmulDescCreate(&md, compute, CUDA_R_32F));
      CK(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
      if (e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS) {
        void* b = float_bias ? bias32 : bias;
        CK(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b, sizeof b));
        if (float_bias) {
          const cudaDataType_t t = CUDA_R_32F;
          CK(cublasLtMatmulDescSetAttribute(md, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &t, sizeof t));
        }
      }
      return md;
    };
    auto first_answer = [&](cublasLtMatmulDesc_t md, cublasLtMatmulAlgo_t& algo) {
      cublasLtMatmulHeuristicResult_t r{};
      int n = 0;
      const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, md, la, lb, ld, ld, pref, 1, &r, &n);
      algo = r.algo;
      return st == CUBLAS_STATUS_SUCCESS && n == 1;
    };
    std::vector<Config> configs;
    auto add = [&](const char* name, cublasLtEpilogue_t e, bool float_bias) {
      Config c{name, make(e, float_bias)};
      if (first_answer(c.desc, c.algo))
        configs.push_back(c);
      else
        std::printf("%s: no algorithm\n", name);
    };
    add("bare", CUBLASLT_EPILOGUE_DEFAULT, false);
    add("relu", CUBLASLT_EPILOGUE_RELU, false);
    add("bias", CUBLASLT_EPILOGUE_BIAS, false);
    add("relu_bias", CUBLASLT_EPILOGUE_RELU_BIAS, false);
    if (bf16) add("relu_bias32", CUBLASLT_EPILOGUE_RELU_BIAS, true);
    {
      Config c{"relu_bias@bare", make(CUBLASLT_EPILOGUE_RELU_BIAS, false), configs[0].algo};
      cublasLtMatmulHeuristicResult_t checked{};
      if (cublasLtMatmulAlgoCheck(lt, c.desc, la, lb, ld, ld, &c.algo, &checked) == CUBLAS_STATUS_SUCCESS)
        configs.push_back(c);
      else
        std::printf("relu_bias@bare: rejected by AlgoCheck\n");
    }
    const float one = 1, zero = 0;
    auto call = [&](const Config& c) {
      CK(cublasLtMatmul(lt, c.desc, &one, w, la, x, lb, &zero, d, ld, d, ld, &c.algo, ws, wsb, s));
    };
    std::printf("== %s, %d x %d x %d, random data, %s\n", bf16 ? "bfloat16" : "TF32", M, N, K,
                once ? "each once" : "median of 15 rounds of 20 calls");
    if (once) {
      for (const Config& c : configs) call(c);
      cudaStreamSynchronize(s);
    } else {
      for (const Config& c : configs)
        for (int i = 0; i < 3; ++i) call(c);
      for (int r = 0; r < kRounds; ++r)
        for (size_t k = 0; k < configs.size(); ++k) {
          Config& c = configs[(k + size_t(r)) % configs.size()];
          cudaEventRecord(e0, s);
          for (int i = 0; i < kCalls; ++i) call(c);
          cudaEventRecord(e1, s);
          cudaEventSynchronize(e1);
          float ms = 0;
          cudaEventElapsedTime(&ms, e0, e1);
          c.times.push_back(ms / kCalls);
        }
      const double bare = [&] {
        std::vector<float> t = configs[0].times;
        std::sort(t.begin(), t.end());
        return double(t[t.size() / 2]);
      }();
      for (Config& c : configs) {
        std::vector<float> t = c.times;
        std::sort(t.begin(), t.end());
        std::printf("%-15s median %.4f ms (%+.1f%% over bare)  min %.4f  max %.4f\n", c.name.c_str(), t[t.size() / 2],
                    100.0 * (t[t.size() / 2] / bare - 1), t.front(), t.back());
      }
    }
    for (Config& c : configs) cublasLtMatmulDescDestroy(c.desc);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    for (void* p : {x, w, d, bias, bias32}) cudaFree(p);
  }
  return 0;
}
