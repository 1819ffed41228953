// Session 36: the SASS instruction counts of the GELU forms quoted in graph/OpMath.inc and docs/semantics.md,
// counted on a machine without a GPU: nvcc's cubin disassembled by nvdisasm (the nvidia-cuda-nvdisasm wheel),
//   nvcc -arch=sm_90 -cubin -o g.cubin gelu_sass.cu && nvdisasm -c g.cubin
// The arithmetic after the -inf test (its branch) up to the last multiply is 23 instructions in k_new against 51
// in k_old; from the widening load (SHF.L.U32) to the store, 33 against 61.
// The bodies are copies of lf_gelu_for_half before (c51834e^) and after (c51834e), with bfloat16 in and out.
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
extern "C" __global__ void k_old(const __nv_bfloat16* x, __nv_bfloat16* y) {
  const int i = threadIdx.x;
  y[i] = __float2bfloat16(old_gelu(__bfloat162float(x[i])));
}
extern "C" __global__ void k_new(const __nv_bfloat16* x, __nv_bfloat16* y) {
  const int i = threadIdx.x;
  y[i] = __float2bfloat16(new_gelu(__bfloat162float(x[i])));
}
