// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_kb170d89316bbe756 (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_add lf_subtract lf_true_divide lf_exp lf_maximum lf_max_identity lf_sum_identity lf_sum_combine lf_max_combine>

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
    s.a0 = lf_max_identity<float>();
    return s;
  }
  __device__ __forceinline__ lf_loop0 shfl_down(int off) const {
    lf_loop0 o;
    o.a0 = lf_shfl_down(a0, off);
    return o;
  }
  __device__ __forceinline__ void combine(const lf_loop0& o) {
    a0 = lf_max_combine(a0, o.a0);
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

extern "C" __global__ void __launch_bounds__(256, 4) lf_kb170d89316bbe756(const float* __restrict__ in0, float* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const idx_t p2) {
  __shared__ double lf_shared[64];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  const idx_t v20 = p2;
  for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {
    lf_vec<float> lf_reg0[2];
    bool lf_cached0 = false;
    lf_vec<float> lf_reg1[2];
    bool lf_cached1 = false;
    const idx_t v0 = lf_o;
    float lf_acc0[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_max_identity<float>();
    }
    const idx_t v4 = v0 * v3;
    const bool lf_vector0 = true && (unsigned long long)(in0 + v4) % sizeof(lf_vec<float>) == 0;
    lf_cached0 = lf_vector0;
    if (lf_vector0) {
#pragma unroll
      for (int lf_k = 0; lf_k < 2; ++lf_k) {
        const int lf_u = lf_k % 4;
        const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
        const lf_vec<float> lf_l6 = *reinterpret_cast<const lf_vec<float>*>(in0 + v4 + lf_rb);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const idx_t v2 = lf_rb + j;
          const idx_t v5 = v4 + v2;
          const float v6 = lf_l6.v[j];
          lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
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
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
          }
        } else {
          for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
            const idx_t v5 = v4 + v2;
            const float v6 = in0[v5];
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc0[0] = lf_max_combine(lf_acc0[0], lf_acc0[lf_u]);
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
    lf_cached1 = lf_vector1;
    if (lf_vector1) {
      if (true && lf_cached0) {
#pragma unroll
        for (int lf_k = 0; lf_k < 2; ++lf_k) {
          const int lf_u = lf_k % 4;
          const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const lf_vec<float> lf_c13 = lf_reg0[lf_k];
          lf_vec<float> lf_w15;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v10 = lf_rb + j;
            const float v13 = lf_c13.v[j];
            const float v14 = lf_subtract(v13, v9);
            const float v15 = lf_exp(v14);
            lf_w15.v[j] = v15;
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v15);
          }
          lf_reg1[lf_k] = lf_w15;
        }
      } else {
#pragma unroll
        for (int lf_k = 0; lf_k < 2; ++lf_k) {
          const int lf_u = lf_k % 4;
          const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const lf_vec<float> lf_l13 = *reinterpret_cast<const lf_vec<float>*>(in0 + v11 + lf_rb);
          lf_vec<float> lf_w15;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v10 = lf_rb + j;
            const idx_t v12 = v11 + v10;
            const float v13 = lf_l13.v[j];
            const float v14 = lf_subtract(v13, v9);
            const float v15 = lf_exp(v14);
            lf_w15.v[j] = v15;
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v15);
          }
          lf_reg1[lf_k] = lf_w15;
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
            const float v14 = lf_subtract(v13, v9);
            const float v15 = lf_exp(v14);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v15);
          }
        } else {
          for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
            const idx_t v12 = v11 + v10;
            const float v13 = in0[v12];
            const float v14 = lf_subtract(v13, v9);
            const float v15 = lf_exp(v14);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v15);
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
    const float v18 = lf_acc1_v;
    const idx_t v21 = v0 * v20;
    const idx_t v23 = v0 * v3;
    const bool lf_vector2 = true && (unsigned long long)(in0 + v23) % sizeof(lf_vec<float>) == 0 && (unsigned long long)(out0 + v21) % sizeof(lf_vec<float>) == 0;
    if (lf_vector2) {
      if (true && lf_cached1) {
#pragma unroll
        for (int lf_k = 0; lf_k < 2; ++lf_k) {
          const int lf_u = lf_k % 4;
          const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const lf_vec<float> lf_c27 = lf_reg1[lf_k];
          lf_vec<float> lf_s29;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v19 = lf_rb + j;
            const idx_t v22 = v21 + v19;
            const float v27 = lf_c27.v[j];
            const float v28 = lf_true_divide(v27, v18);
            lf_s29.v[j] = v28;
          }
          *reinterpret_cast<lf_vec<float>*>(out0 + v21 + lf_rb) = lf_s29;
        }
      } else {
#pragma unroll
        for (int lf_k = 0; lf_k < 2; ++lf_k) {
          const int lf_u = lf_k % 4;
          const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;
          const lf_vec<float> lf_l25 = *reinterpret_cast<const lf_vec<float>*>(in0 + v23 + lf_rb);
          lf_vec<float> lf_s29;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v19 = lf_rb + j;
            const idx_t v22 = v21 + v19;
            const idx_t v24 = v23 + v19;
            const float v25 = lf_l25.v[j];
            const float v26 = lf_subtract(v25, v9);
            const float v27 = lf_exp(v26);
            const float v28 = lf_true_divide(v27, v18);
            lf_s29.v[j] = v28;
          }
          *reinterpret_cast<lf_vec<float>*>(out0 + v21 + lf_rb) = lf_s29;
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
            const idx_t v19 = lf_rb + j;
            const idx_t v22 = v21 + v19;
            const idx_t v24 = v23 + v19;
            const float v25 = in0[v24];
            const float v26 = lf_subtract(v25, v9);
            const float v27 = lf_exp(v26);
            const float v28 = lf_true_divide(v27, v18);
            out0[v22] = v28;
          }
        } else {
          for (idx_t v19 = lf_rb; v19 < v1; ++v19) {
            const idx_t v22 = v21 + v19;
            const idx_t v24 = v23 + v19;
            const float v25 = in0[v24];
            const float v26 = lf_subtract(v25, v9);
            const float v27 = lf_exp(v26);
            const float v28 = lf_true_divide(v27, v18);
            out0[v22] = v28;
          }
        }
      }
    }
    }
  }
}

