// Scratch: does ptxas's VIMNMX3 fusion drop negations in elementwise max/min chains too?
#include <cuda.h>
#include <nvrtc.h>
#include <cstdio>
#include <string>
#include <vector>
#include <algorithm>
static const char* kSrc = R"(
extern "C" __global__ void chain_max(const int* a, const int* b, const int* c, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { int x = -a[i]; int y = -b[i]; int m = c[i] > x ? c[i] : x; out[i] = m > y ? m : y; }
}
extern "C" __global__ void chain_min(const int* a, const int* b, const int* c, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { int x = -a[i]; int y = -b[i]; int m = c[i] < x ? c[i] : x; out[i] = m < y ? m : y; }
}
extern "C" __global__ void abs_max(const int* a, const int* b, const int* c, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { int x = a[i] < 0 ? -a[i] : a[i]; int y = b[i] < 0 ? -b[i] : b[i]; int m = x > y ? x : y; out[i] = m > c[i] ? m : c[i]; }
}
extern "C" __global__ void neg_max_u(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { unsigned x = 0u - a[i]; unsigned y = 0u - b[i]; unsigned m = c[i] > x ? c[i] : x; out[i] = m > y ? m : y; }
}
)";
int main() {
  nvrtcProgram p; nvrtcCreateProgram(&p, kSrc, "e.cu", 0, nullptr, nullptr);
  const char* opts[] = {"--std=c++17", "-arch=sm_90"};
  if (nvrtcCompileProgram(p, 2, opts) != NVRTC_SUCCESS) { printf("compile failed\n"); return 1; }
  size_t n; nvrtcGetCUBINSize(p, &n); std::vector<char> cubin(n); nvrtcGetCUBIN(p, cubin.data());
  FILE* f = fopen("/tmp/rep/elem.cubin", "wb"); fwrite(cubin.data(), 1, n, f); fclose(f);
  cuInit(0); CUdevice d; cuDeviceGet(&d, 0); CUcontext ctx; cuDevicePrimaryCtxRetain(&ctx, d); cuCtxSetCurrent(ctx);
  CUmodule m; cuModuleLoadData(&m, cubin.data());
  const int N = 4096; std::vector<int> a(N), b(N), c(N);
  unsigned s = 12345; auto rnd = [&] { s = s * 1103515245u + 12345u; return int((s >> 8) % 41) - 20; };
  for (int i = 0; i < N; ++i) { a[i] = rnd(); b[i] = rnd(); c[i] = rnd(); }
  CUdeviceptr da, db, dc, dout; cuMemAlloc(&da, N * 4); cuMemAlloc(&db, N * 4); cuMemAlloc(&dc, N * 4); cuMemAlloc(&dout, N * 4);
  cuMemcpyHtoD(da, a.data(), N * 4); cuMemcpyHtoD(db, b.data(), N * 4); cuMemcpyHtoD(dc, c.data(), N * 4);
  for (const char* name : {"chain_max", "chain_min", "abs_max", "neg_max_u"}) {
    CUfunction fn; cuModuleGetFunction(&fn, m, name); int nn = N;
    void* args[] = {&da, &db, &dc, &dout, &nn};
    cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr); cuCtxSynchronize();
    std::vector<int> got(N); cuMemcpyDtoH(got.data(), dout, N * 4);
    int bad = 0;
    for (int i = 0; i < N; ++i) {
      long want;
      std::string nm = name;
      if (nm == "chain_max") want = std::max({c[i], -a[i], -b[i]});
      else if (nm == "chain_min") want = std::min({c[i], -a[i], -b[i]});
      else if (nm == "abs_max") want = std::max({std::abs(a[i]), std::abs(b[i]), c[i]});
      else want = (int)std::max({(unsigned)c[i], 0u - (unsigned)a[i], 0u - (unsigned)b[i]});
      bad += got[i] != (int)want;
    }
    printf("%-10s wrong %d of %d\n", name, bad, N);
  }
}
