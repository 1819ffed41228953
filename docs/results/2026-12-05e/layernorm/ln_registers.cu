// Hand-written layer norms that keep a whole row in registers (no row cache in shared memory): a block of THREADS
// threads per row, each holding VECS float4 of it, so the row is read from memory once with VECS loads in flight per
// thread; mean, then the sum of squared deviations from the registers (two passes, as lazyfuse's var), then
// (x - mean) / sqrt(var + eps) * gamma + beta. DIVIDE: true division as the generated kernel does; else one
// reciprocal of the standard deviation and a multiply (to measure what the division costs).
#include <cuda_runtime.h>

namespace {

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

template <int THREADS, int VECS, bool DIVIDE>
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
    const float sd = sqrtf(var + eps), inv = 1.0f / sd;
    float4* o = reinterpret_cast<float4*>(out + (long long)row * cols);
    const float4* g4 = reinterpret_cast<const float4*>(g);
    const float4* b4 = reinterpret_cast<const float4*>(b);
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
      const int i = k * THREADS + threadIdx.x;
      const float4 gg = g4[i], bb = b4[i];
      float4 r;
      if (DIVIDE) {
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

template <int THREADS, int VECS, bool DIVIDE> int blocks_per_sm() {
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ln_registers<THREADS, VECS, DIVIDE>, THREADS, 0);
  return blocks;
}

} // namespace

// cols must be 4 * THREADS * VECS (8192 here).
void launch_ln_registers(int threads, bool divide, int grid, const float* x, const float* g, const float* b,
                         float* out, int rows, int cols) {
  if (threads == 256 && divide) ln_registers<256, 8, true><<<grid, 256>>>(x, g, b, out, rows, cols, 1e-5f);
  if (threads == 512 && divide) ln_registers<512, 4, true><<<grid, 512>>>(x, g, b, out, rows, cols, 1e-5f);
  if (threads == 1024 && divide) ln_registers<1024, 2, true><<<grid, 1024>>>(x, g, b, out, rows, cols, 1e-5f);
  if (threads == 256 && !divide) ln_registers<256, 8, false><<<grid, 256>>>(x, g, b, out, rows, cols, 1e-5f);
  if (threads == 512 && !divide) ln_registers<512, 4, false><<<grid, 512>>>(x, g, b, out, rows, cols, 1e-5f);
  if (threads == 1024 && !divide) ln_registers<1024, 2, false><<<grid, 1024>>>(x, g, b, out, rows, cols, 1e-5f);
}

int ln_registers_blocks_per_sm(int threads, bool divide) {
  if (threads == 256) return divide ? blocks_per_sm<256, 8, true>() : blocks_per_sm<256, 8, false>();
  if (threads == 512) return divide ? blocks_per_sm<512, 4, true>() : blocks_per_sm<512, 4, false>();
  return divide ? blocks_per_sm<1024, 2, true>() : blocks_per_sm<1024, 2, false>();
}
