// Why does the (2, 1, 0) permute of 255 x 1000 x 1001 float32 reach ~66% of copy where 256 x 1024 x 1024 reaches 97%?
// A standalone experiment (not part of the library): y[a][j][b] = x[b][j][a] with the generated kernel's tiling
// (a tile of TA a-values x TB b-values per block and plane j, staged through shared memory), variants of tile shape,
// block order and row pitch (padded rows make every row start 128-byte aligned), timed with CUDA events (median of
// 5 trials of 20 launches), each output checked on the GPU, and with --ncu one launch each for Nsight Compute.
//   nvcc -O3 -std=c++17 -arch=sm_90 permute_experiment.cu -o permute_experiment && ./permute_experiment
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                                                     \
  do {                                                                                                               \
    cudaError_t e_ = (x);                                                                                            \
    if (e_ != cudaSuccess) {                                                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                        \
      std::exit(1);                                                                                                  \
    }                                                                                                                \
  } while (0)

struct Geometry {
  int A, J, B;           // y is (A, J, B), x is (B, J, A)
  long sxb, sxj;         // x's strides of b and j (a steps by 1)
  long sya, syj;         // y's strides of a and j (b steps by 1)
  int order;             // 0: units (j, a-tile, b-tile) as generated; 1: (j, b-tile, a-tile); 2: (a-tile, j, b-tile)
};

// MIN_BLOCKS: __launch_bounds__'s minimum of resident blocks (registers a thread then at most 65536 / (256 x it)).
template <int TA, int TB, bool STREAM = false, int MIN_BLOCKS = 1>
__global__ void __launch_bounds__(256, MIN_BLOCKS) tiled(const float* __restrict__ x, float* __restrict__ y, Geometry g) {
  extern __shared__ float tile_storage[];
  float(*tile)[TA + 1] = reinterpret_cast<float(*)[TA + 1]>(tile_storage);
  const int na = (g.A + TA - 1) / TA, nb = (g.B + TB - 1) / TB;
  const long units = (long)g.J * na * nb;
  for (long u = blockIdx.x; u < units; u += gridDim.x) {
    int j, ta, tb;
    if (g.order == 0) { j = int(u / (na * nb)); const int q = int(u % (na * nb)); ta = q / nb; tb = q % nb; }
    else if (g.order == 1) { j = int(u / (na * nb)); const int q = int(u % (na * nb)); tb = q / na; ta = q % na; }
    else { ta = int(u / ((long)g.J * nb)); const long q = u % ((long)g.J * nb); j = int(q / nb); tb = int(q % nb); }
    const int a0 = ta * TA, b0 = tb * TB;
    constexpr int RSTEP = 256 / TA, RN = TB / RSTEP;   // read: lanes along a, rows along b
    constexpr int WSTEP = 256 / TB, WN = TA / WSTEP;   // write: lanes along b, rows along a
    float v[RN];
    const int la = threadIdx.x % TA, lb = threadIdx.x / TA;
#pragma unroll
    for (int e = 0; e < RN; ++e) {
      const int a = a0 + la, b = b0 + lb + RSTEP * e;
      v[e] = (a < g.A && b < g.B) ? x[b * g.sxb + j * g.sxj + a] : 0.f;
    }
#pragma unroll
    for (int e = 0; e < RN; ++e) tile[lb + RSTEP * e][la] = v[e];
    __syncthreads();
    const int wb = threadIdx.x % TB, wa = threadIdx.x / TB;
#pragma unroll
    for (int e = 0; e < WN; ++e) {
      const int a = a0 + wa + WSTEP * e, b = b0 + wb;
      if (a < g.A && b < g.B) {
        if (STREAM) __stcs(&y[a * g.sya + j * g.syj + b], tile[wb][wa + WSTEP * e]);
        else y[a * g.sya + j * g.syj + b] = tile[wb][wa + WSTEP * e];
      }
    }
    __syncthreads();
  }
}

__global__ void fill(float* x, long n, unsigned seed) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
    x[i] = float(h & 0xffffff) * (1.0f / 16777216.0f) - 0.5f;
  }
}

__global__ void check(const float* x, const float* y, Geometry g, unsigned long long* bad) {
  const long n = (long)g.A * g.J * g.B;
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
    const int b = int(i % g.B), j = int(i / g.B % g.J), a = int(i / ((long)g.B * g.J));
    if (y[a * g.sya + j * g.syj + b] != x[b * g.sxb + j * g.sxj + a]) atomicAdd(bad, 1ull);
  }
}

using Kernel = void (*)(const float*, float*, Geometry);

struct Variant {
  const char* name; Kernel k; int ta, tb; bool pad_x, pad_y; int order; int A, J, B;
  bool planes_outer = false;  // (0, 2, 1): x (J, B, A) -> y (J, A, B), j the outer plane on both sides
};

template <class F> float median_ms(F launch) {
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<float> t;
  for (int trial = 0; trial < 5; ++trial) {
    CHECK(cudaEventRecord(e0));
    for (int i = 0; i < 20; ++i) launch();
    CHECK(cudaEventRecord(e1)); CHECK(cudaEventSynchronize(e1));
    float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms / 20);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  cudaEventDestroy(e0); cudaEventDestroy(e1);
  return t[2];
}

int main(int argc, char** argv) {
  const bool ncu = argc > 1 && !std::strcmp(argv[1], "--ncu");
  const Variant variants[] = {
      {"odd 64x64 order0 (as generated)", tiled<64, 64>, 64, 64, false, false, 0, 1001, 1000, 255},
      {"odd 64a x 128b", tiled<64, 128>, 64, 128, false, false, 0, 1001, 1000, 255},
      {"odd 64a x 256b", tiled<64, 256>, 64, 256, false, false, 0, 1001, 1000, 255},
      {"odd 32a x 128b", tiled<32, 128>, 32, 128, false, false, 0, 1001, 1000, 255},
      {"odd 32a x 256b", tiled<32, 256>, 32, 256, false, false, 0, 1001, 1000, 255},
      {"odd 128a x 128b", tiled<128, 128>, 128, 128, false, false, 0, 1001, 1000, 255},
      {"odd 64x64 streaming stores", tiled<64, 64, true>, 64, 64, false, false, 0, 1001, 1000, 255},
      {"odd 64a x 128b streaming stores", tiled<64, 128, true>, 64, 128, false, false, 0, 1001, 1000, 255},
      {"odd 64a x 128b y rows padded to 256", tiled<64, 128>, 64, 128, false, true, 0, 1001, 1000, 255},
      {"odd 64x64 y rows padded to 256", tiled<64, 64>, 64, 64, false, true, 0, 1001, 1000, 255},
      {"pow2 256x1024x1024 64x64 order0", tiled<64, 64>, 64, 64, false, false, 0, 1024, 1024, 256},
      {"pow2 256x1024x1024 64a x 128b", tiled<64, 128>, 64, 128, false, false, 0, 1024, 1024, 256},
      {"pow2 256x1024x1024 64a x 256b", tiled<64, 256>, 64, 256, false, false, 0, 1024, 1024, 256},
      {"odd (0,2,1) 64x64", tiled<64, 64>, 64, 64, false, false, 0, 1001, 255, 1000, true},
      {"odd (0,2,1) 64a x 128b", tiled<64, 128>, 64, 128, false, false, 0, 1001, 255, 1000, true},
      {"odd (2,1,0) repeat 64x64", tiled<64, 64>, 64, 64, false, false, 0, 1001, 1000, 255},
      {"odd (2,1,0) repeat 64a x 128b", tiled<64, 128>, 64, 128, false, false, 0, 1001, 1000, 255},
      // Occupancy (session 30's lead): the library's wide kernel takes 48 registers (5 blocks an SM).
      {"odd 64a x 128b at least 5 blocks", tiled<64, 128, false, 5>, 64, 128, false, false, 0, 1001, 1000, 255},
      {"odd 64a x 128b at least 6 blocks", tiled<64, 128, false, 6>, 64, 128, false, false, 0, 1001, 1000, 255},
  };
  const long cap = 1024L * 1024 * 256;  // elements: the largest padded array
  float *x, *y, *c0, *c1;
  unsigned long long* bad;
  CHECK(cudaMalloc(&x, cap * 4)); CHECK(cudaMalloc(&y, cap * 4));
  CHECK(cudaMalloc(&c0, 256L << 20)); CHECK(cudaMalloc(&c1, 256L << 20));
  CHECK(cudaMalloc(&bad, 8));
  fill<<<1024, 256>>>(c0, (256L << 20) / 4, 7);
  const float copy_ms = median_ms([&] { CHECK(cudaMemcpyAsync(c1, c0, 256L << 20, cudaMemcpyDeviceToDevice)); });
  const double copy_bw = 2.0 * (256L << 20) / (copy_ms * 1e-3);
  if (!ncu) std::printf("copy 256 MiB: %.4f ms, %.1f GB/s (read + written)\n", copy_ms, copy_bw * 1e-9);
  int sms; CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const Variant& v : variants) {
    Geometry g{v.A, v.J, v.B, 0, 0, 0, 0, v.order};
    const long xa = v.pad_x ? 1024 : v.A, yb = v.pad_y ? 256 : v.B;
    g.sxj = xa; g.sxb = xa * v.J; g.syj = yb; g.sya = yb * v.J;
    if (v.planes_outer) { g.sxb = v.A; g.sxj = (long)v.A * v.B; g.sya = v.B; g.syj = (long)v.A * v.B; }
    fill<<<4096, 256>>>(x, (long)v.B * v.J * xa, 11);
    CHECK(cudaMemset(y, 0xff, (long)v.A * v.J * yb * 4));  // poison: NaN
    const long units = (long)v.J * ((v.A + v.ta - 1) / v.ta) * ((v.B + v.tb - 1) / v.tb);
    const int grid = int(std::min<long>(units, 2147483647L));
    const int smem = v.tb * (v.ta + 1) * 4;
    CHECK(cudaFuncSetAttribute(v.k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    auto launch = [&] { v.k<<<grid, 256, smem>>>(x, y, g); };
    if (ncu) { launch(); CHECK(cudaDeviceSynchronize()); continue; }
    const float ms = median_ms(launch);
    CHECK(cudaMemset(bad, 0, 8));
    check<<<sms * 8, 256>>>(x, y, g, bad);
    unsigned long long nbad; CHECK(cudaMemcpy(&nbad, bad, 8, cudaMemcpyDeviceToHost));
    const double bytes = 2.0 * 4 * (double)v.A * v.J * v.B;
    std::printf("%-36s %.4f ms  %6.1f%% of copy  %s\n", v.name, ms, 100.0 * bytes / (ms * 1e-3) / copy_bw,
                nbad ? "WRONG" : "ok");
  }
  return 0;
}
