// Session 37: the SASS instruction count of the bfloat16 GELU form quoted in graph/OpMath.inc (406449a), counted on a
// machine without a GPU (nvcc's cubin disassembled by nvdisasm, from the nvidia-cuda-nvdisasm wheel):
//   nvcc -arch=sm_90 -cubin -o g.cubin gelu_sass.cu && nvdisasm -c g.cubin
// From the widening of the bfloat16 (SHF.L.U32) to its rounding (F2FP.BF16), inclusive, with the 3 instructions of
// address arithmetic the scheduler interleaves: 21 here; 31 for session 36's form and 59 through CUDA's erfcf
// (k_new and k_old of docs/results/2026-12-07a/gelu_sass.cu, counted the same way). This form: h = erfc(a)/2 with the
// halving folded into Q's constant, no -inf branch (a clamp of the multiplier), t and the exponent from x directly,
// Q of degree 5, and ex2.approx.ftz with the power taken 2^64 larger (one multiply where the non-ftz form's handling
// of subnormal powers took three).
#include <cuda_bf16.h>
__device__ __forceinline__ float rcpa(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
__device__ __forceinline__ float ex2a_ftz(float z) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(z));
  return r;
}
__device__ float gelu_37(float x) {
  const float t = rcpa(fmaf(fabsf(x), 0.353553391f, 1.0f));
  float q = 0.330055803f;
  q = fmaf(q, t, -1.02309084f);
  q = fmaf(q, t, 0.684486687f);
  q = fmaf(q, t, 0.367117465f);
  q = fmaf(q, t, 1.46867454f);
  q = fmaf(q, t, -1.82723272f - 1.0f + 64.0f);
  const float h = t * ex2a_ftz(fmaf(x * -0.721347520f, x, q)) * 0x1p-64f;
  return fmaxf(x, -0x1p100f) * (x > 0.0f ? 1.0f - h : h);
}
extern "C" __global__ void k_37(const __nv_bfloat16* x, __nv_bfloat16* y) {
  const int i = threadIdx.x;
  y[i] = __float2bfloat16(gelu_37(__bfloat162float(x[i])));
}
