// Session 35, a lead for issue 15 (not measured on a GPU): the half types' GELU through a fitted erfc
// (half_gelu_erfc_fit.py) beside the library's form through CUDA's erfcf. Only compiled to PTX to count instructions:
//   nvcc -arch=sm_90 -fmad=false -ptx half_gelu_erfc.cu
__device__ float old_gelu(float x) {
  if (x == -__int_as_float(0x7f800000)) return -0.0f;
  return (0.5f * x) * erfcf(x * -0.70710677f);
}
__device__ float new_gelu(float x) {
  if (x == -__int_as_float(0x7f800000)) return -0.0f;
  const float y = x * -0.70710677f, a = fabsf(y);
  const float t = 1.0f / fmaf(0.5f, a, 1.0f);
  float p = 0.06916639977539908f;
  p = fmaf(p, t, -0.5107624350985626f);
  p = fmaf(p, t, 1.3870247426189493f);
  p = fmaf(p, t, -1.6858640199573738f);
  p = fmaf(p, t, 0.7896773190450382f);
  p = fmaf(p, t, -0.21105086111966218f);
  p = fmaf(p, t, 0.4332951371825532f);
  p = fmaf(p, t, 0.9937468727875499f);
  p = fmaf(p, t, -1.2652333994009624f);
  const float r = t * expf(fmaf(-a, a, p));
  return (0.5f * x) * (y < 0.0f ? 2.0f - r : r);
}
extern "C" __global__ void k_old(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = old_gelu(x[i]);
}
extern "C" __global__ void k_new(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = new_gelu(x[i]);
}
