// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_k7570295e550b806e (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_multiply>

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

struct lf_divisor { unsigned mul; unsigned shift; };
__device__ __forceinline__ idx_t lf_div(idx_t n, lf_divisor d) { return (idx_t)((__umulhi((unsigned)n, d.mul) + (unsigned)n) >> d.shift); }
__device__ __forceinline__ idx_t lf_mod(idx_t n, idx_t p, lf_divisor d) { return n - lf_div(n, d) * p; }

extern "C" __global__ void __launch_bounds__(256) lf_k7570295e550b806e(const double* __restrict__ in0, const double* __restrict__ in1, double* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const idx_t p2, const idx_t p3, const idx_t p4, const lf_divisor lf_d1) {
  const idx_t lf_chunk = (idx_t)blockDim.x * 8;
  for (idx_t lf_first = (idx_t)blockIdx.x * lf_chunk + (idx_t)threadIdx.x * 4; lf_first < n; lf_first += (idx_t)gridDim.x * lf_chunk) {
    bool lf_whole = lf_first + (idx_t)1 * blockDim.x * 4 + 4 <= n;
    idx_t lf_u0_c0[2];
    idx_t lf_u0_c1[2];
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      idx_t lf_rest, lf_next;
      lf_rest = lf_first + (idx_t)u * blockDim.x * 4;
      lf_next = lf_div(lf_rest, lf_d1);
      lf_u0_c1[u] = lf_rest - lf_next * p1;
      lf_rest = lf_next;
      lf_u0_c0[u] = lf_rest;
      lf_whole = lf_whole && lf_u0_c1[u] + 4 <= p1;
    }
    if (lf_whole) {
      lf_vec<double> lf_gv14[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const idx_t base = lf_first + (idx_t)u * blockDim.x * 4;
        const idx_t u0_c0 = lf_u0_c0[u];
        const idx_t u0_c1 = lf_u0_c1[u];
        idx_t lf_a14 = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t i = base + j;
          const idx_t v0 = i;
          const idx_t v1 = p0;
          const idx_t v2 = p1;
          const idx_t v3 = u0_c0;
          const idx_t v4 = u0_c1 + j;
          const idx_t v5 = p2;
          const idx_t v6 = v3 * v5;
          const idx_t v7 = p3;
          const idx_t v8 = v4 * v7;
          const idx_t v9 = v6 + v8;
          const idx_t v11 = p4;
          const idx_t v12 = v3 * v11;
          const idx_t v13 = v12 + v4;
          if (j == 0) lf_a14 = v13;
        }
        if ((unsigned long long)(in1 + lf_a14) % sizeof(lf_vec<double>) == 0) {
          lf_gv14[u] = *reinterpret_cast<const lf_vec<double>*>(in1 + lf_a14);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) lf_gv14[u].v[j] = in1[lf_a14 + j];
        }
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const idx_t base = lf_first + (idx_t)u * blockDim.x * 4;
        const idx_t u0_c0 = lf_u0_c0[u];
        const idx_t u0_c1 = lf_u0_c1[u];
        const lf_vec<double>& lf_g14 = lf_gv14[u];
        lf_vec<double> s0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t i = base + j;
          const idx_t v0 = i;
          const idx_t v1 = p0;
          const idx_t v2 = p1;
          const idx_t v3 = u0_c0;
          const idx_t v4 = u0_c1 + j;
          const idx_t v5 = p2;
          const idx_t v6 = v3 * v5;
          const idx_t v7 = p3;
          const idx_t v8 = v4 * v7;
          const idx_t v9 = v6 + v8;
          const double v10 = in0[v9];
          const idx_t v11 = p4;
          const idx_t v12 = v3 * v11;
          const idx_t v13 = v12 + v4;
          const double v14 = lf_g14.v[j];
          const double v15 = lf_multiply(v10, v14);
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
          const idx_t v1 = p0;
          const idx_t v2 = p1;
          const idx_t v3 = lf_div(v0, lf_d1);
          const idx_t v4 = lf_mod(v0, p1, lf_d1);
          const idx_t v5 = p2;
          const idx_t v6 = v3 * v5;
          const idx_t v7 = p3;
          const idx_t v8 = v4 * v7;
          const idx_t v9 = v6 + v8;
          const double v10 = in0[v9];
          const idx_t v11 = p4;
          const idx_t v12 = v3 * v11;
          const idx_t v13 = v12 + v4;
          const double v14 = in1[v13];
          const double v15 = lf_multiply(v10, v14);
          out0[i] = v15;
        }
      }
    }
  }
}

