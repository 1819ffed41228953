// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_kac73ea9353d1dbfa (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_add lf_greater lf_cast lf_sum_identity lf_sum_combine lf_any_identity lf_any_combine lf_all_identity lf_all_combine>

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
  bool a0;
  bool a1;
  lf_i64 a2;
  static __device__ __forceinline__ lf_loop0 identity() {
    lf_loop0 s;
    s.a0 = lf_any_identity<bool>();
    s.a1 = lf_all_identity<bool>();
    s.a2 = lf_sum_identity<lf_i64>();
    return s;
  }
  __device__ __forceinline__ lf_loop0 shfl_down(int off) const {
    lf_loop0 o;
    o.a0 = lf_shfl_down(a0, off);
    o.a1 = lf_shfl_down(a1, off);
    o.a2 = lf_shfl_down(a2, off);
    return o;
  }
  __device__ __forceinline__ void combine(const lf_loop0& o) {
    a0 = lf_any_combine(a0, o.a0);
    a1 = lf_all_combine(a1, o.a1);
    a2 = lf_sum_combine(a2, o.a2);
  }
};

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

extern "C" __global__ void __launch_bounds__(256) lf_kac73ea9353d1dbfa(const float* __restrict__ in0, lf_i64* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const float p2, const float p3, const float p4) {
  __shared__ double lf_shared[96];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  const float v7 = p2;
  const float v10 = p3;
  const float v13 = p4;
  for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {
    const idx_t v0 = lf_o;
    bool lf_acc0[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_any_identity<bool>();
    }
    bool lf_acc1[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc1[lf_u] = lf_all_identity<bool>();
    }
    lf_i64 lf_acc2[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc2[lf_u] = lf_sum_identity<lf_i64>();
    }
    const idx_t v4 = v0 * v3;
    const bool lf_vector0 = true && (unsigned long long)(in0 + v4) % sizeof(lf_vec<float>) == 0;
    if (lf_vector0) {
      idx_t lf_r0 = (idx_t)threadIdx.x * 4;
      for (; lf_r0 + 4 * blockDim.x * 4 - blockDim.x * 4 + 4 <= v1; lf_r0 += 4 * blockDim.x * 4) {
#pragma unroll
        for (int lf_u = 0; lf_u < 4; ++lf_u) {
          const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
          const lf_vec<float> lf_l6 = *reinterpret_cast<const lf_vec<float>*>(in0 + v4 + lf_rb);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v2 = lf_rb + j;
            const idx_t v5 = v4 + v2;
            const float v6 = lf_l6.v[j];
            const bool v8 = lf_greater(v6, v7);
            lf_acc0[lf_u] = lf_any_combine(lf_acc0[lf_u], v8);
            const bool v11 = lf_greater(v6, v10);
            lf_acc1[lf_u] = lf_all_combine(lf_acc1[lf_u], v11);
            const bool v14 = lf_greater(v6, v13);
            const lf_i64 v15 = lf_cast<lf_i64, bool>(v14);
            lf_acc2[lf_u] = lf_sum_combine(lf_acc2[lf_u], v15);
          }
        }
      }
      if (lf_r0 < v1) {
#pragma unroll
        for (int lf_u = 0; lf_u < 4; ++lf_u) {
          const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
          if (lf_rb + 4 <= v1) {
            const lf_vec<float> lf_l6 = *reinterpret_cast<const lf_vec<float>*>(in0 + v4 + lf_rb);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v2 = lf_rb + j;
              const idx_t v5 = v4 + v2;
              const float v6 = lf_l6.v[j];
              const bool v8 = lf_greater(v6, v7);
              lf_acc0[lf_u] = lf_any_combine(lf_acc0[lf_u], v8);
              const bool v11 = lf_greater(v6, v10);
              lf_acc1[lf_u] = lf_all_combine(lf_acc1[lf_u], v11);
              const bool v14 = lf_greater(v6, v13);
              const lf_i64 v15 = lf_cast<lf_i64, bool>(v14);
              lf_acc2[lf_u] = lf_sum_combine(lf_acc2[lf_u], v15);
            }
          } else {
            for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
              const idx_t v5 = v4 + v2;
              const float v6 = in0[v5];
              const bool v8 = lf_greater(v6, v7);
              lf_acc0[lf_u] = lf_any_combine(lf_acc0[lf_u], v8);
              const bool v11 = lf_greater(v6, v10);
              lf_acc1[lf_u] = lf_all_combine(lf_acc1[lf_u], v11);
              const bool v14 = lf_greater(v6, v13);
              const lf_i64 v15 = lf_cast<lf_i64, bool>(v14);
              lf_acc2[lf_u] = lf_sum_combine(lf_acc2[lf_u], v15);
            }
          }
        }
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
            const bool v8 = lf_greater(v6, v7);
            lf_acc0[lf_u] = lf_any_combine(lf_acc0[lf_u], v8);
            const bool v11 = lf_greater(v6, v10);
            lf_acc1[lf_u] = lf_all_combine(lf_acc1[lf_u], v11);
            const bool v14 = lf_greater(v6, v13);
            const lf_i64 v15 = lf_cast<lf_i64, bool>(v14);
            lf_acc2[lf_u] = lf_sum_combine(lf_acc2[lf_u], v15);
          }
        } else {
          for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
            const idx_t v5 = v4 + v2;
            const float v6 = in0[v5];
            const bool v8 = lf_greater(v6, v7);
            lf_acc0[lf_u] = lf_any_combine(lf_acc0[lf_u], v8);
            const bool v11 = lf_greater(v6, v10);
            lf_acc1[lf_u] = lf_all_combine(lf_acc1[lf_u], v11);
            const bool v14 = lf_greater(v6, v13);
            const lf_i64 v15 = lf_cast<lf_i64, bool>(v14);
            lf_acc2[lf_u] = lf_sum_combine(lf_acc2[lf_u], v15);
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc0[0] = lf_any_combine(lf_acc0[0], lf_acc0[lf_u]);
    }
    bool lf_acc0_v = lf_acc0[0];
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc1[0] = lf_all_combine(lf_acc1[0], lf_acc1[lf_u]);
    }
    bool lf_acc1_v = lf_acc1[0];
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc2[0] = lf_sum_combine(lf_acc2[0], lf_acc2[lf_u]);
    }
    lf_i64 lf_acc2_v = lf_acc2[0];
    lf_loop0 lf_st0;
    lf_st0.a0 = lf_acc0_v;
    lf_st0.a1 = lf_acc1_v;
    lf_st0.a2 = lf_acc2_v;
    lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));
    lf_acc0_v = lf_st0.a0;
    lf_acc1_v = lf_st0.a1;
    lf_acc2_v = lf_st0.a2;
    const bool v18 = lf_acc0_v;
    const bool v19 = lf_acc1_v;
    const lf_i64 v20 = lf_acc2_v;
    const lf_i64 v21 = lf_cast<lf_i64, bool>(v18);
    const lf_i64 v22 = lf_cast<lf_i64, bool>(v19);
    const lf_i64 v23 = lf_add(v21, v22);
    const lf_i64 v24 = lf_add(v23, v20);
    if (threadIdx.x == 0) out0[lf_o] = v24;
  }
}

