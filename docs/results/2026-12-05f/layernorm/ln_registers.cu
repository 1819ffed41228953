// Hand-written layer norms that keep a whole row in registers (no row cache in shared memory): a block of THREADS
// threads per row, each holding VECS float4 of it, so the row is read from memory once with VECS loads in flight per
// thread; mean, then the sum of squared deviations from the registers (two passes, as lazyfuse's var), then
// (x - mean) / sqrt(var + eps) * gamma + beta. MODE 0: true division as the generated kernel did; 1: one reciprocal of
// the standard deviation and a multiply (to measure what the division costs); 2: the exact division by the
// reciprocal that session 25's kernels print (lf_div_by_reciprocal: the IEEE quotient).
#include <cuda_runtime.h>

namespace {

__device__ __forceinline__ float div_reciprocal(float d) {
  const float r = __frcp_rn(d), a = fabsf(r);
  return a >= 0x1p-100f && a <= 0x1p100f ? r : __int_as_float(0x7fc00000);
}
__device__ __forceinline__ float div_by_reciprocal(float x, float d, float r) {
  const float q0 = __fmul_rn(x, r);
  const float q1 = __fmaf_rn(__fmaf_rn(-q0, d, x), r, q0);
  const float q2 = __fmaf_rn(__fmaf_rn(-q1, d, x), r, q1);
  const float ax = fabsf(x), aq = fabsf(q0);
  return ax >= 0x1p-100f && ax <= 0x1p100f && aq >= 0x1p-100f && aq <= 0x1p100f ? q2 : __fdiv_rn(x, d);
}

template <int THREADS> __device__ float block_sum(float v, float* shared) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < THREADS / 32 ? shared[threadIdx.x] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x == 0) shared[32] = v;
  }
  __syncthreads();
  const float total = shared[32];
  __syncthreads(); // the slots are reused by the next sum
  return total;
}

template <int THREADS, int VECS, int MODE>
__global__ void __launch_bounds__(THREADS) ln_registers(const float* __restrict__ x, const float* __restrict__ g,
                                                         const float* __restrict__ b, float* __restrict__ out, int rows,
                                                         int cols, float eps) {
  __shared__ float shared[33];
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const float4* xr = reinterpret_cast<const float4*>(x + (long long)row * cols);
    float4 v[VECS];
#pragma unroll
    for (int k = 0; k < VECS; ++k) v[k] = xr[k * THREADS + threadIdx.x];
    float s = 0;
#pragma unroll
    for (int k = 0; k < VECS; ++k) s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    const float mean = block_sum<THREADS>(s, shared) / float(cols);
    float q = 0;
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
      const float a = v[k].x - mean, c = v[k].y - mean, d = v[k].z - mean, e = v[k].w - mean;
      q += (a * a + c * c) + (d * d + e * e);
    }
    const float var = block_sum<THREADS>(q, shared) / float(cols);
    const float sd = sqrtf(var + eps), inv = MODE == 2 ? div_reciprocal(sd) : 1.0f / sd;
    float4* o = reinterpret_cast<float4*>(out + (long long)row * cols);
    const float4* g4 = reinterpret_cast<const float4*>(g);
    const float4* b4 = reinterpret_cast<const float4*>(b);
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
      const int i = k * THREADS + threadIdx.x;
      const float4 gg = g4[i], bb = b4[i];
      float4 r;
      if (MODE == 2) {
        r.x = div_by_reciprocal(v[k].x - mean, sd, inv) * gg.x + bb.x;
        r.y = div_by_reciprocal(v[k].y - mean, sd, inv) * gg.y + bb.y;
        r.z = div_by_reciprocal(v[k].z - mean, sd, inv) * gg.z + bb.z;
        r.w = div_by_reciprocal(v[k].w - mean, sd, inv) * gg.w + bb.w;
      } else if (MODE == 0) {
        r.x = (v[k].x - mean) / sd * gg.x + bb.x;
        r.y = (v[k].y - mean) / sd * gg.y + bb.y;
        r.z = (v[k].z - mean) / sd * gg.z + bb.z;
        r.w = (v[k].w - mean) / sd * gg.w + bb.w;
      } else {
        r.x = (v[k].x - mean) * inv * gg.x + bb.x;
        r.y = (v[k].y - mean) * inv * gg.y + bb.y;
        r.z = (v[k].z - mean) * inv * gg.z + bb.z;
        r.w = (v[k].w - mean) * inv * gg.w + bb.w;
      }
      o[i] = r;
    }
  }
}

template <int THREADS, int VECS, int MODE> int blocks_per_sm() {
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ln_registers<THREADS, VECS, MODE>, THREADS, 0);
  return blocks;
}

template <int MODE> void launch_mode(int threads, int grid, const float* x, const float* g, const float* b, float* out,
                                     int rows, int cols) {
  if (threads == 256) ln_registers<256, 8, MODE><<<grid, 256>>>(x, g, b, out, rows, cols, 1e-5f);
  if (threads == 512) ln_registers<512, 4, MODE><<<grid, 512>>>(x, g, b, out, rows, cols, 1e-5f);
}

template <int MODE> int blocks_mode(int threads) {
  return threads == 256 ? blocks_per_sm<256, 8, MODE>() : blocks_per_sm<512, 4, MODE>();
}

} // namespace

// cols must be 4 * THREADS * VECS (8192 here).
void launch_ln_registers(int threads, int mode, int grid, const float* x, const float* g, const float* b, float* out,
                         int rows, int cols) {
  if (mode == 0) launch_mode<0>(threads, grid, x, g, b, out, rows, cols);
  if (mode == 1) launch_mode<1>(threads, grid, x, g, b, out, rows, cols);
  if (mode == 2) launch_mode<2>(threads, grid, x, g, b, out, rows, cols);
}

int ln_registers_blocks_per_sm(int threads, int mode) {
  return mode == 0 ? blocks_mode<0>(threads) : mode == 1 ? blocks_mode<1>(threads) : blocks_mode<2>(threads);
}
