// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_ka3ea801945e336dc (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_add lf_multiply lf_subtract lf_true_divide lf_square lf_sqrt lf_sum_identity lf_sum_combine>

template <class T> __device__ __forceinline__ T lf_shfl_down(T v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
template <> __device__ __forceinline__ bool lf_shfl_down<bool>(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
template <class S> __device__ __forceinline__ S lf_block_reduce(S s, S* shared) {
  for (int off = 16; off > 0; off >>= 1) s.combine(s.shfl_down(off));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < (blockDim.x >> 5) ? shared[threadIdx.x] : S::identity();
    for (int off = 16; off > 0; off >>= 1) s.combine(s.shfl_down(off));
    if (threadIdx.x == 0) shared[0] = s;
  }
  __syncthreads();
  return shared[0];
}
struct lf_loop0 {
  float a0;
  static __device__ __forceinline__ lf_loop0 identity() {
    lf_loop0 s;
    s.a0 = lf_sum_identity<float>();
    return s;
  }
  __device__ __forceinline__ lf_loop0 shfl_down(int off) const {
    lf_loop0 o;
    o.a0 = lf_shfl_down(a0, off);
    return o;
  }
  __device__ __forceinline__ void combine(const lf_loop0& o) {
    a0 = lf_sum_combine(a0, o.a0);
  }
};
struct lf_loop1 {
  float a1;
  static __device__ __forceinline__ lf_loop1 identity() {
    lf_loop1 s;
    s.a1 = lf_sum_identity<float>();
    return s;
  }
  __device__ __forceinline__ lf_loop1 shfl_down(int off) const {
    lf_loop1 o;
    o.a1 = lf_shfl_down(a1, off);
    return o;
  }
  __device__ __forceinline__ void combine(const lf_loop1& o) {
    a1 = lf_sum_combine(a1, o.a1);
  }
};

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

extern "C" __global__ void __launch_bounds__(256, 5) lf_ka3ea801945e336dc(const float* __restrict__ in0, const float* __restrict__ in1, float* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const idx_t p2, const float p3, const idx_t p4, const idx_t p5, const float p6, const idx_t p7, const float p8, const float p9) {
  __shared__ double lf_shared[64];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  const idx_t v14 = p2;
  const float v15 = p3;
  const idx_t v23 = p4;
  const idx_t v29 = p5;
  const float v30 = p6;
  const idx_t v33 = p7;
  const float v34 = p8;
  const float v36 = p9;
  for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {
    lf_vec<float> lf_reg0[1];
    bool lf_cached0 = false;
    const idx_t v0 = lf_o;
    float lf_acc0[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_sum_identity<float>();
    }
    const idx_t v4 = v0 * v3;
    const bool lf_vector0 = true && (unsigned long long)(in0 + v4) % sizeof(lf_vec<float>) == 0;
    lf_cached0 = lf_vector0;
    if (lf_vector0) {
      {
        const int lf_k = 0;
        const int lf_u = lf_k % 4;
        const idx_t lf_rt = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
        const bool lf_live = lf_rt < v1;
        const idx_t lf_rb = lf_live ? lf_rt : v1 - 4;
        const lf_vec<float> lf_l6 = *reinterpret_cast<const lf_vec<float>*>(in0 + v4 + lf_rb);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t v2 = lf_rb + j;
          const idx_t v5 = v4 + v2;
          const float v6 = lf_l6.v[j];
          if (lf_live) {
            lf_acc0[lf_u] = lf_sum_combine(lf_acc0[lf_u], v6);
          }
        }
        lf_reg0[lf_k] = lf_l6;
      }
    } else {
    const idx_t lf_step0 = blockDim.x * 4;
    for (idx_t lf_r0 = (threadIdx.x) * 4; lf_r0 < v1; lf_r0 += 4 * lf_step0) {
#pragma unroll
      for (int lf_u = 0; lf_u < 4; ++lf_u) {
        const idx_t lf_rb = lf_r0 + lf_u * lf_step0;
        if (lf_rb + 4 <= v1) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v2 = lf_rb + j;
            const idx_t v5 = v4 + v2;
            const float v6 = in0[v5];
            lf_acc0[lf_u] = lf_sum_combine(lf_acc0[lf_u], v6);
          }
        } else {
          for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
            const idx_t v5 = v4 + v2;
            const float v6 = in0[v5];
            lf_acc0[lf_u] = lf_sum_combine(lf_acc0[lf_u], v6);
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc0[0] = lf_sum_combine(lf_acc0[0], lf_acc0[lf_u]);
    }
    float lf_acc0_v = lf_acc0[0];
    lf_loop0 lf_st0;
    lf_st0.a0 = lf_acc0_v;
    lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));
    lf_acc0_v = lf_st0.a0;
    const float v9 = lf_acc0_v;
    float lf_acc1[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc1[lf_u] = lf_sum_identity<float>();
    }
    const idx_t v11 = v0 * v3;
    const bool lf_vector1 = true && (unsigned long long)(in0 + v11) % sizeof(lf_vec<float>) == 0;
    if (lf_vector1) {
      if (true && lf_cached0) {
        {
          const int lf_k = 0;
          const int lf_u = lf_k % 4;
          const idx_t lf_rt = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const bool lf_live = lf_rt < v1;
          const idx_t lf_rb = lf_live ? lf_rt : v1 - 4;
          const lf_vec<float> lf_c13 = lf_reg0[lf_k];
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v10 = lf_rb + j;
            const float v13 = lf_c13.v[j];
            const float v16 = lf_true_divide(v9, v15);
            const float v17 = lf_subtract(v13, v16);
            const float v18 = lf_square(v17);
            if (lf_live) {
              lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
            }
          }
        }
      } else {
        {
          const int lf_k = 0;
          const int lf_u = lf_k % 4;
          const idx_t lf_rt = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const bool lf_live = lf_rt < v1;
          const idx_t lf_rb = lf_live ? lf_rt : v1 - 4;
          const lf_vec<float> lf_l13 = *reinterpret_cast<const lf_vec<float>*>(in0 + v11 + lf_rb);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v10 = lf_rb + j;
            const idx_t v12 = v11 + v10;
            const float v13 = lf_l13.v[j];
            const float v16 = lf_true_divide(v9, v15);
            const float v17 = lf_subtract(v13, v16);
            const float v18 = lf_square(v17);
            if (lf_live) {
              lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
            }
          }
        }
      }
    } else {
    const idx_t lf_step1 = blockDim.x * 4;
    for (idx_t lf_r0 = (threadIdx.x) * 4; lf_r0 < v1; lf_r0 += 4 * lf_step1) {
#pragma unroll
      for (int lf_u = 0; lf_u < 4; ++lf_u) {
        const idx_t lf_rb = lf_r0 + lf_u * lf_step1;
        if (lf_rb + 4 <= v1) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v10 = lf_rb + j;
            const idx_t v12 = v11 + v10;
            const float v13 = in0[v12];
            const float v16 = lf_true_divide(v9, v15);
            const float v17 = lf_subtract(v13, v16);
            const float v18 = lf_square(v17);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
          }
        } else {
          for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
            const idx_t v12 = v11 + v10;
            const float v13 = in0[v12];
            const float v16 = lf_true_divide(v9, v15);
            const float v17 = lf_subtract(v13, v16);
            const float v18 = lf_square(v17);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc1[0] = lf_sum_combine(lf_acc1[0], lf_acc1[lf_u]);
    }
    float lf_acc1_v = lf_acc1[0];
    lf_loop1 lf_st1;
    lf_st1.a1 = lf_acc1_v;
    lf_st1 = lf_block_reduce(lf_st1, reinterpret_cast<lf_loop1*>(lf_shared));
    lf_acc1_v = lf_st1.a1;
    const float v21 = lf_acc1_v;
    const idx_t v24 = v0 * v23;
    const idx_t v26 = v0 * v3;
    const bool lf_vector2 = true && (unsigned long long)(in0 + v26) % sizeof(lf_vec<float>) == 0 && (unsigned long long)(in1) % sizeof(lf_vec<float>) == 0 && (unsigned long long)(out0 + v24) % sizeof(lf_vec<float>) == 0;
    if (lf_vector2) {
      if (true && lf_cached0) {
        {
          const int lf_k = 0;
          const int lf_u = lf_k % 4;
          const idx_t lf_rt = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const bool lf_live = lf_rt < v1;
          const idx_t lf_rb = lf_live ? lf_rt : v1 - 4;
          const lf_vec<float> lf_c28 = lf_reg0[lf_k];
          const lf_vec<float> lf_l40 = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_rb);
          lf_vec<float> lf_s42;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v22 = lf_rb + j;
            const idx_t v25 = v24 + v22;
            const float v28 = lf_c28.v[j];
            const float v31 = lf_true_divide(v9, v30);
            const float v32 = lf_subtract(v28, v31);
            const float v35 = lf_true_divide(v21, v34);
            const float v37 = lf_add(v35, v36);
            const float v38 = lf_sqrt(v37);
            const float v39 = lf_true_divide(v32, v38);
            const float v40 = lf_l40.v[j];
            const float v41 = lf_multiply(v39, v40);
            lf_s42.v[j] = v41;
          }
          if (lf_live) *reinterpret_cast<lf_vec<float>*>(out0 + v24 + lf_rb) = lf_s42;
        }
      } else {
        {
          const int lf_k = 0;
          const int lf_u = lf_k % 4;
          const idx_t lf_rt = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const bool lf_live = lf_rt < v1;
          const idx_t lf_rb = lf_live ? lf_rt : v1 - 4;
          const lf_vec<float> lf_l28 = *reinterpret_cast<const lf_vec<float>*>(in0 + v26 + lf_rb);
          const lf_vec<float> lf_l40 = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_rb);
          lf_vec<float> lf_s42;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v22 = lf_rb + j;
            const idx_t v25 = v24 + v22;
            const idx_t v27 = v26 + v22;
            const float v28 = lf_l28.v[j];
            const float v31 = lf_true_divide(v9, v30);
            const float v32 = lf_subtract(v28, v31);
            const float v35 = lf_true_divide(v21, v34);
            const float v37 = lf_add(v35, v36);
            const float v38 = lf_sqrt(v37);
            const float v39 = lf_true_divide(v32, v38);
            const float v40 = lf_l40.v[j];
            const float v41 = lf_multiply(v39, v40);
            lf_s42.v[j] = v41;
          }
          if (lf_live) *reinterpret_cast<lf_vec<float>*>(out0 + v24 + lf_rb) = lf_s42;
        }
      }
    } else {
    const idx_t lf_step2 = blockDim.x * 4;
    for (idx_t lf_r0 = (threadIdx.x) * 4; lf_r0 < v1; lf_r0 += 4 * lf_step2) {
#pragma unroll
      for (int lf_u = 0; lf_u < 4; ++lf_u) {
        const idx_t lf_rb = lf_r0 + lf_u * lf_step2;
        if (lf_rb + 4 <= v1) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v22 = lf_rb + j;
            const idx_t v25 = v24 + v22;
            const idx_t v27 = v26 + v22;
            const float v28 = in0[v27];
            const float v31 = lf_true_divide(v9, v30);
            const float v32 = lf_subtract(v28, v31);
            const float v35 = lf_true_divide(v21, v34);
            const float v37 = lf_add(v35, v36);
            const float v38 = lf_sqrt(v37);
            const float v39 = lf_true_divide(v32, v38);
            const float v40 = in1[v22];
            const float v41 = lf_multiply(v39, v40);
            out0[v25] = v41;
          }
        } else {
          for (idx_t v22 = lf_rb; v22 < v1; ++v22) {
            const idx_t v25 = v24 + v22;
            const idx_t v27 = v26 + v22;
            const float v28 = in0[v27];
            const float v31 = lf_true_divide(v9, v30);
            const float v32 = lf_subtract(v28, v31);
            const float v35 = lf_true_divide(v21, v34);
            const float v37 = lf_add(v35, v36);
            const float v38 = lf_sqrt(v37);
            const float v39 = lf_true_divide(v32, v38);
            const float v40 = in1[v22];
            const float v41 = lf_multiply(v39, v40);
            out0[v25] = v41;
          }
        }
      }
    }
    }
  }
}

