// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_kae0837744b03c6e5 (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_add lf_multiply lf_subtract>

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

struct lf_divisor { unsigned mul; unsigned shift; };
__device__ __forceinline__ idx_t lf_div(idx_t n, lf_divisor d) { return (idx_t)((__umulhi((unsigned)n, d.mul) + (unsigned)n) >> d.shift); }
__device__ __forceinline__ idx_t lf_mod(idx_t n, idx_t p, lf_divisor d) { return n - lf_div(n, d) * p; }

extern "C" __global__ void __launch_bounds__(256) lf_kae0837744b03c6e5(const float* __restrict__ in0, const float* __restrict__ in1, const float* __restrict__ in2, const float* __restrict__ in3, const float* __restrict__ in4, const float* __restrict__ in5, float* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const idx_t p2, const idx_t p3, const idx_t p4, const idx_t p5, const idx_t p6, const idx_t p7, const idx_t p8, const idx_t p9, const idx_t p10, const float p11, const float p12, const lf_divisor lf_d1) {
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
      lf_vec<float> lf_l0[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) lf_l0[u] = *reinterpret_cast<const lf_vec<float>*>(in0 + lf_first + (idx_t)u * blockDim.x * 4);
      lf_vec<float> lf_gv23[2];
      lf_vec<float> lf_gv27[2];
      lf_vec<float> lf_gv31[2];
      lf_vec<float> lf_gv36[2];
      lf_vec<float> lf_gv41[2];
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const idx_t base = lf_first + (idx_t)u * blockDim.x * 4;
        const idx_t u0_c0 = lf_u0_c0[u];
        const idx_t u0_c1 = lf_u0_c1[u];
        idx_t lf_a23 = 0;
        bool lf_p23[4];
        idx_t lf_a27 = 0;
        bool lf_p27[4];
        idx_t lf_a31 = 0;
        bool lf_p31[4];
        idx_t lf_a36 = 0;
        bool lf_p36[4];
        idx_t lf_a41 = 0;
        bool lf_p41[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t i = base + j;
          const idx_t v0 = i;
          const idx_t v1 = p0;
          const idx_t v2 = p1;
          const idx_t v3 = u0_c0;
          const idx_t v4 = u0_c1 + j;
          const idx_t v5 = p2;
          const idx_t v6 = v3 - v5;
          const idx_t v7 = p3;
          const bool v8 = v6 < v7;
          const idx_t v9 = (idx_t)0;
          const bool v10 = v6 >= v9;
          const bool v11 = v10 && v8;
          const idx_t v12 = p4;
          const idx_t v13 = v4 - v12;
          const idx_t v14 = p5;
          const bool v15 = v13 < v14;
          const bool v16 = v13 >= v9;
          const bool v17 = v16 && v15;
          const bool v18 = v11 && v17;
          const idx_t v20 = p6;
          const idx_t v21 = v6 * v20;
          const idx_t v22 = v21 + v13;
          const idx_t v24 = p7;
          const idx_t v25 = v6 * v24;
          const idx_t v26 = v25 + v13;
          const idx_t v28 = p8;
          const idx_t v29 = v6 * v28;
          const idx_t v30 = v29 + v13;
          const idx_t v33 = p9;
          const idx_t v34 = v6 * v33;
          const idx_t v35 = v34 + v13;
          const idx_t v38 = p10;
          const idx_t v39 = v6 * v38;
          const idx_t v40 = v39 + v13;
          if (j == 0) lf_a23 = v22;
          lf_p23[j] = v18;
          if (j == 0) lf_a27 = v26;
          lf_p27[j] = v18;
          if (j == 0) lf_a31 = v30;
          lf_p31[j] = v18;
          if (j == 0) lf_a36 = v35;
          lf_p36[j] = v18;
          if (j == 0) lf_a41 = v40;
          lf_p41[j] = v18;
        }
        if (lf_p23[0] && lf_p23[1] && lf_p23[2] && lf_p23[3] && (unsigned long long)(in1 + lf_a23) % sizeof(lf_vec<float>) == 0) {
          lf_gv23[u] = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_a23);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) lf_gv23[u].v[j] = lf_p23[j] ? in1[lf_a23 + j] : (float)0;
        }
        if (lf_p27[0] && lf_p27[1] && lf_p27[2] && lf_p27[3] && (unsigned long long)(in2 + lf_a27) % sizeof(lf_vec<float>) == 0) {
          lf_gv27[u] = *reinterpret_cast<const lf_vec<float>*>(in2 + lf_a27);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) lf_gv27[u].v[j] = lf_p27[j] ? in2[lf_a27 + j] : (float)0;
        }
        if (lf_p31[0] && lf_p31[1] && lf_p31[2] && lf_p31[3] && (unsigned long long)(in3 + lf_a31) % sizeof(lf_vec<float>) == 0) {
          lf_gv31[u] = *reinterpret_cast<const lf_vec<float>*>(in3 + lf_a31);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) lf_gv31[u].v[j] = lf_p31[j] ? in3[lf_a31 + j] : (float)0;
        }
        if (lf_p36[0] && lf_p36[1] && lf_p36[2] && lf_p36[3] && (unsigned long long)(in4 + lf_a36) % sizeof(lf_vec<float>) == 0) {
          lf_gv36[u] = *reinterpret_cast<const lf_vec<float>*>(in4 + lf_a36);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) lf_gv36[u].v[j] = lf_p36[j] ? in4[lf_a36 + j] : (float)0;
        }
        if (lf_p41[0] && lf_p41[1] && lf_p41[2] && lf_p41[3] && (unsigned long long)(in5 + lf_a41) % sizeof(lf_vec<float>) == 0) {
          lf_gv41[u] = *reinterpret_cast<const lf_vec<float>*>(in5 + lf_a41);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) lf_gv41[u].v[j] = lf_p41[j] ? in5[lf_a41 + j] : (float)0;
        }
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const idx_t base = lf_first + (idx_t)u * blockDim.x * 4;
        const idx_t u0_c0 = lf_u0_c0[u];
        const idx_t u0_c1 = lf_u0_c1[u];
        const lf_vec<float>& l0 = lf_l0[u];
        const lf_vec<float>& lf_g23 = lf_gv23[u];
        const lf_vec<float>& lf_g27 = lf_gv27[u];
        const lf_vec<float>& lf_g31 = lf_gv31[u];
        const lf_vec<float>& lf_g36 = lf_gv36[u];
        const lf_vec<float>& lf_g41 = lf_gv41[u];
        lf_vec<float> s0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t i = base + j;
          const idx_t v0 = i;
          const idx_t v1 = p0;
          const idx_t v2 = p1;
          const idx_t v3 = u0_c0;
          const idx_t v4 = u0_c1 + j;
          const idx_t v5 = p2;
          const idx_t v6 = v3 - v5;
          const idx_t v7 = p3;
          const bool v8 = v6 < v7;
          const idx_t v9 = (idx_t)0;
          const bool v10 = v6 >= v9;
          const bool v11 = v10 && v8;
          const idx_t v12 = p4;
          const idx_t v13 = v4 - v12;
          const idx_t v14 = p5;
          const bool v15 = v13 < v14;
          const bool v16 = v13 >= v9;
          const bool v17 = v16 && v15;
          const bool v18 = v11 && v17;
          const float v19 = l0.v[j];
          const idx_t v20 = p6;
          const idx_t v21 = v6 * v20;
          const idx_t v22 = v21 + v13;
          const float v23 = lf_g23.v[j];
          const idx_t v24 = p7;
          const idx_t v25 = v6 * v24;
          const idx_t v26 = v25 + v13;
          const float v27 = lf_g27.v[j];
          const idx_t v28 = p8;
          const idx_t v29 = v6 * v28;
          const idx_t v30 = v29 + v13;
          const float v31 = lf_g31.v[j];
          const float v32 = lf_add(v27, v31);
          const idx_t v33 = p9;
          const idx_t v34 = v6 * v33;
          const idx_t v35 = v34 + v13;
          const float v36 = lf_g36.v[j];
          const float v37 = lf_add(v32, v36);
          const idx_t v38 = p10;
          const idx_t v39 = v6 * v38;
          const idx_t v40 = v39 + v13;
          const float v41 = lf_g41.v[j];
          const float v42 = lf_add(v37, v41);
          const float v43 = p11;
          const float v44 = lf_multiply(v43, v23);
          const float v45 = lf_subtract(v42, v44);
          const float v46 = p12;
          const float v47 = lf_multiply(v46, v45);
          const float v48 = lf_add(v23, v47);
          const float v49 = v18 ? v48 : v19;
          s0.v[j] = v49;
        }
        *reinterpret_cast<lf_vec<float>*>(out0 + base) = s0;
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
          const idx_t v6 = v3 - v5;
          const idx_t v7 = p3;
          const bool v8 = v6 < v7;
          const idx_t v9 = (idx_t)0;
          const bool v10 = v6 >= v9;
          const bool v11 = v10 && v8;
          const idx_t v12 = p4;
          const idx_t v13 = v4 - v12;
          const idx_t v14 = p5;
          const bool v15 = v13 < v14;
          const bool v16 = v13 >= v9;
          const bool v17 = v16 && v15;
          const bool v18 = v11 && v17;
          const float v19 = in0[i];
          const idx_t v20 = p6;
          const idx_t v21 = v6 * v20;
          const idx_t v22 = v21 + v13;
          const float v23 = v18 ? in1[v22] : (float)0;
          const idx_t v24 = p7;
          const idx_t v25 = v6 * v24;
          const idx_t v26 = v25 + v13;
          const float v27 = v18 ? in2[v26] : (float)0;
          const idx_t v28 = p8;
          const idx_t v29 = v6 * v28;
          const idx_t v30 = v29 + v13;
          const float v31 = v18 ? in3[v30] : (float)0;
          const float v32 = lf_add(v27, v31);
          const idx_t v33 = p9;
          const idx_t v34 = v6 * v33;
          const idx_t v35 = v34 + v13;
          const float v36 = v18 ? in4[v35] : (float)0;
          const float v37 = lf_add(v32, v36);
          const idx_t v38 = p10;
          const idx_t v39 = v6 * v38;
          const idx_t v40 = v39 + v13;
          const float v41 = v18 ? in5[v40] : (float)0;
          const float v42 = lf_add(v37, v41);
          const float v43 = p11;
          const float v44 = lf_multiply(v43, v23);
          const float v45 = lf_subtract(v42, v44);
          const float v46 = p12;
          const float v47 = lf_multiply(v46, v45);
          const float v48 = lf_add(v23, v47);
          const float v49 = v18 ? v48 : v19;
          out0[i] = v49;
        }
      }
    }
  }
}

