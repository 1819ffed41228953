// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_kad81f6c52c595896 (generated; self-contained: it includes no header)
#define LF_HD __device__ __forceinline__
#define LF_INF_F __int_as_float(0x7f800000)
#define LF_INF_D __longlong_as_double(0x7ff0000000000000LL)
typedef int lf_i32;
typedef long long lf_i64;
typedef signed char lf_i8;
typedef short lf_i16;
typedef unsigned char lf_u8;
typedef unsigned short lf_u16;
typedef unsigned int lf_u32;
typedef unsigned long long lf_u64;
// <the op prelude: graph/OpMath.inc's lf_add lf_multiply lf_abs lf_subtract lf_negative lf_sqrt lf_exp lf_sin lf_cos lf_negate32>

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

extern "C" __global__ void __launch_bounds__(256) lf_kad81f6c52c595896(const double* __restrict__ in0, const double* __restrict__ in1, double* __restrict__ out0, const idx_t n, const double p0) {
  const idx_t lf_chunk = (idx_t)blockDim.x * 8;
  for (idx_t lf_first = (idx_t)blockIdx.x * lf_chunk + (idx_t)threadIdx.x * 4; lf_first < n; lf_first += (idx_t)gridDim.x * lf_chunk) {
    bool lf_whole = lf_first + (idx_t)1 * blockDim.x * 4 + 4 <= n;
    if (lf_whole) {
      lf_vec<double> lf_l0[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) lf_l0[u] = *reinterpret_cast<const lf_vec<double>*>(in0 + lf_first + (idx_t)u * blockDim.x * 4);
      lf_vec<double> lf_l1[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) lf_l1[u] = *reinterpret_cast<const lf_vec<double>*>(in1 + lf_first + (idx_t)u * blockDim.x * 4);
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const idx_t base = lf_first + (idx_t)u * blockDim.x * 4;
        const lf_vec<double>& l0 = lf_l0[u];
        const lf_vec<double>& l1 = lf_l1[u];
        lf_vec<double> s0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t i = base + j;
          const idx_t v0 = i;
          const double v1 = l0.v[j];
          const double v2 = lf_sin(v1);
          const double v3 = l1.v[j];
          const double v4 = lf_cos(v3);
          const double v5 = lf_multiply(v2, v4);
          const double v6 = lf_multiply(v1, v3);
          const double v7 = p0;
          const double v8 = lf_multiply(v6, v7);
          const double v9 = lf_add(v5, v8);
          const double v10 = lf_multiply(v1, v1);
          const double v11 = lf_negative(v10);
          const double v12 = lf_exp(v11);
          const double v13 = lf_subtract(v9, v12);
          const double v14 = lf_abs(v13);
          const double v15 = lf_sqrt(v14);
          s0.v[j] = v15;
        }
        *reinterpret_cast<lf_vec<double>*>(out0 + base) = s0;
      }
    } else {
      for (int u = 0; u < 2; ++u) {
        const idx_t base = lf_first + (idx_t)u * blockDim.x * 4;
        const idx_t end = base + 4 < n ? base + 4 : n;
        for (idx_t i = base; i < end; ++i) {
          const idx_t v0 = i;
          const double v1 = in0[i];
          const double v2 = lf_sin(v1);
          const double v3 = in1[i];
          const double v4 = lf_cos(v3);
          const double v5 = lf_multiply(v2, v4);
          const double v6 = lf_multiply(v1, v3);
          const double v7 = p0;
          const double v8 = lf_multiply(v6, v7);
          const double v9 = lf_add(v5, v8);
          const double v10 = lf_multiply(v1, v1);
          const double v11 = lf_negative(v10);
          const double v12 = lf_exp(v11);
          const double v13 = lf_subtract(v9, v12);
          const double v14 = lf_abs(v13);
          const double v15 = lf_sqrt(v14);
          out0[i] = v15;
        }
      }
    }
  }
}

