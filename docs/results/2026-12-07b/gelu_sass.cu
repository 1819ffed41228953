// Session 37: the SASS instruction counts of the bfloat16 GELU forms quoted in graph/OpMath.inc, counted on a machine
// without a GPU (nvcc's cubin disassembled by nvdisasm, from the nvidia-cuda-nvdisasm wheel):
//   nvcc -arch=sm_90 -cubin -o g.cubin gelu_sass.cu && nvdisasm -c g.cubin
// k_new is session 36's form (docs/results/2026-12-07a/gelu_sass.cu, lf_gelu_for_half at c51834e); k_37 this
// session's: h = erfc(a)/2 with the halving folded into Q's constant, no separate -inf branch (a clamp of the
// multiplier instead), t and the exponent from x directly, Q of degree 5 for bfloat16, and ex2.approx.ftz with the
// power taken 2^64 larger (one multiply) where the non-ftz form's handling of subnormal powers took three.
#include <cuda_bf16.h>
__device__ __forceinline__ float rcpa(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}
__device__ __forceinline__ float ex2a(float z) {
  float r;
  asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(z));
  return r;
}
__device__ float old_gelu(float x) {
  if (x == -__int_as_float(0x7f800000)) return -0.0f;
  return (0.5f * x) * erfcf(x * -0.70710677f);
}
__device__ float new_gelu(float x) {
  if (x == -__int_as_float(0x7f800000)) return -0.0f;
  const float y = x * -0.70710677f, a = fabsf(y);
  const float t = rcpa(fmaf(0.5f, a, 1.0f));
  float q = -0.264942467f;
  q = fmaf(q, t, 1.05882514f);
  q = fmaf(q, t, -1.39942086f);
  q = fmaf(q, t, 0.462826461f);
  q = fmaf(q, t, -0.0348092057f);
  q = fmaf(q, t, 0.561555505f);
  q = fmaf(q, t, 1.44172919f);
  q = fmaf(q, t, -1.82576478f);
  const float e = t * ex2a(fmaf(-a, a * 1.44269504f, q));
  return (0.5f * x) * (y < 0.0f ? 2.0f - e : e);
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
extern "C" __global__ void k_old(const __nv_bfloat16* x, __nv_bfloat16* y) {
  const int i = threadIdx.x;
  y[i] = __float2bfloat16(old_gelu(__bfloat162float(x[i])));
}
extern "C" __global__ void k_new(const __nv_bfloat16* x, __nv_bfloat16* y) {
  const int i = threadIdx.x;
  y[i] = __float2bfloat16(new_gelu(__bfloat162float(x[i])));
}
extern "C" __global__ void k_37(const __nv_bfloat16* x, __nv_bfloat16* y) {
  const int i = threadIdx.x;
  y[i] = __float2bfloat16(gelu_37(__bfloat162float(x[i])));
}
