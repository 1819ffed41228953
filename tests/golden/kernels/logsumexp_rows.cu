// ===== plan 0 of 1: requested output
// lazyfuse kernel lf_k87c6895f560e5436 (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_add lf_subtract lf_exp lf_log lf_isfinite lf_maximum lf_max_identity lf_sum_identity lf_sum_combine lf_max_combine>

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
  double a0;
  static __device__ __forceinline__ lf_loop0 identity() {
    lf_loop0 s;
    s.a0 = lf_max_identity<double>();
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
  double a1;
  static __device__ __forceinline__ lf_loop1 identity() {
    lf_loop1 s;
    s.a1 = lf_sum_identity<double>();
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

extern "C" __global__ void __launch_bounds__(256) lf_k87c6895f560e5436(const double* __restrict__ in0, double* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const idx_t p2, const double p3, const idx_t p4, const double p5) {
  __shared__ double lf_shared[64];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  const idx_t v14 = p2;
  const double v16 = p3;
  const idx_t v23 = p4;
  const double v26 = p5;
  for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {
    extern __shared__ __align__(16) unsigned char lf_row_cache[];
    unsigned lf_cache_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(lf_cache_bytes));
    const unsigned long long lf_cache_row = ((unsigned long long)v1 + 3) / 4 * 4;
    double* const lf_cache0 = reinterpret_cast<double*>(lf_row_cache + lf_cache_row * 0);
    bool lf_cached0 = false;
    const bool lf_cache_fits = lf_cache_row * 8 <= lf_cache_bytes;
    const idx_t v0 = lf_o;
    double lf_acc0[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_max_identity<double>();
    }
    const idx_t v4 = v0 * v3;
    const bool lf_vector0 = true && (unsigned long long)(in0 + v4) % sizeof(lf_vec<double>) == 0;
    lf_cached0 = lf_vector0 && lf_cache_fits;
    if (lf_vector0) {
      idx_t lf_r0 = (idx_t)threadIdx.x * 4;
      for (; lf_r0 + 4 * blockDim.x * 4 - blockDim.x * 4 + 4 <= v1; lf_r0 += 4 * blockDim.x * 4) {
#pragma unroll
        for (int lf_u = 0; lf_u < 4; ++lf_u) {
          const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
          const lf_vec<double> lf_l6 = *reinterpret_cast<const lf_vec<double>*>(in0 + v4 + lf_rb);
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v2 = lf_rb + j;
            const idx_t v5 = v4 + v2;
            const double v6 = lf_l6.v[j];
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
          }
          if (lf_cached0) *reinterpret_cast<lf_vec<double>*>(lf_cache0 + lf_rb) = lf_l6;
        }
      }
      if (lf_r0 < v1) {
#pragma unroll
        for (int lf_u = 0; lf_u < 4; ++lf_u) {
          const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
          if (lf_rb + 4 <= v1) {
            const lf_vec<double> lf_l6 = *reinterpret_cast<const lf_vec<double>*>(in0 + v4 + lf_rb);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v2 = lf_rb + j;
              const idx_t v5 = v4 + v2;
              const double v6 = lf_l6.v[j];
              lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
            }
            if (lf_cached0) *reinterpret_cast<lf_vec<double>*>(lf_cache0 + lf_rb) = lf_l6;
          } else {
            for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
              const idx_t v5 = v4 + v2;
              const double v6 = in0[v5];
              lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
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
            const double v6 = in0[v5];
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
          }
        } else {
          for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
            const idx_t v5 = v4 + v2;
            const double v6 = in0[v5];
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v6);
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc0[0] = lf_max_combine(lf_acc0[0], lf_acc0[lf_u]);
    }
    double lf_acc0_v = lf_acc0[0];
    lf_loop0 lf_st0;
    lf_st0.a0 = lf_acc0_v;
    lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));
    lf_acc0_v = lf_st0.a0;
    const double v9 = lf_acc0_v;
    double lf_acc1[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc1[lf_u] = lf_sum_identity<double>();
    }
    const idx_t v11 = v0 * v3;
    const bool lf_vector1 = true && (unsigned long long)(in0 + v11) % sizeof(lf_vec<double>) == 0;
    if (lf_vector1) {
      if (true && lf_cached0) {
        idx_t lf_r0 = (idx_t)threadIdx.x * 4;
        for (; lf_r0 + 4 * blockDim.x * 4 - blockDim.x * 4 + 4 <= v1; lf_r0 += 4 * blockDim.x * 4) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            const lf_vec<double> lf_c13 = *reinterpret_cast<const lf_vec<double>*>(lf_cache0 + lf_rb);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v10 = lf_rb + j;
              const double v13 = lf_c13.v[j];
              const bool v15 = lf_isfinite(v9);
              const double v17 = v15 ? v9 : v16;
              const double v18 = lf_subtract(v13, v17);
              const double v19 = lf_exp(v18);
              lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
            }
          }
        }
        if (lf_r0 < v1) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            if (lf_rb + 4 <= v1) {
              const lf_vec<double> lf_c13 = *reinterpret_cast<const lf_vec<double>*>(lf_cache0 + lf_rb);
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const idx_t v10 = lf_rb + j;
                const double v13 = lf_c13.v[j];
                const bool v15 = lf_isfinite(v9);
                const double v17 = v15 ? v9 : v16;
                const double v18 = lf_subtract(v13, v17);
                const double v19 = lf_exp(v18);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
              }
            } else {
              for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
                const idx_t v12 = v11 + v10;
                const double v13 = in0[v12];
                const bool v15 = lf_isfinite(v9);
                const double v17 = v15 ? v9 : v16;
                const double v18 = lf_subtract(v13, v17);
                const double v19 = lf_exp(v18);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
              }
            }
          }
        }
      } else {
        idx_t lf_r0 = (idx_t)threadIdx.x * 4;
        for (; lf_r0 + 4 * blockDim.x * 4 - blockDim.x * 4 + 4 <= v1; lf_r0 += 4 * blockDim.x * 4) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            const lf_vec<double> lf_l13 = *reinterpret_cast<const lf_vec<double>*>(in0 + v11 + lf_rb);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v10 = lf_rb + j;
              const idx_t v12 = v11 + v10;
              const double v13 = lf_l13.v[j];
              const bool v15 = lf_isfinite(v9);
              const double v17 = v15 ? v9 : v16;
              const double v18 = lf_subtract(v13, v17);
              const double v19 = lf_exp(v18);
              lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
            }
          }
        }
        if (lf_r0 < v1) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            if (lf_rb + 4 <= v1) {
              const lf_vec<double> lf_l13 = *reinterpret_cast<const lf_vec<double>*>(in0 + v11 + lf_rb);
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const idx_t v10 = lf_rb + j;
                const idx_t v12 = v11 + v10;
                const double v13 = lf_l13.v[j];
                const bool v15 = lf_isfinite(v9);
                const double v17 = v15 ? v9 : v16;
                const double v18 = lf_subtract(v13, v17);
                const double v19 = lf_exp(v18);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
              }
            } else {
              for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
                const idx_t v12 = v11 + v10;
                const double v13 = in0[v12];
                const bool v15 = lf_isfinite(v9);
                const double v17 = v15 ? v9 : v16;
                const double v18 = lf_subtract(v13, v17);
                const double v19 = lf_exp(v18);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
              }
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
            const double v13 = in0[v12];
            const bool v15 = lf_isfinite(v9);
            const double v17 = v15 ? v9 : v16;
            const double v18 = lf_subtract(v13, v17);
            const double v19 = lf_exp(v18);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
          }
        } else {
          for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
            const idx_t v12 = v11 + v10;
            const double v13 = in0[v12];
            const bool v15 = lf_isfinite(v9);
            const double v17 = v15 ? v9 : v16;
            const double v18 = lf_subtract(v13, v17);
            const double v19 = lf_exp(v18);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v19);
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc1[0] = lf_sum_combine(lf_acc1[0], lf_acc1[lf_u]);
    }
    double lf_acc1_v = lf_acc1[0];
    lf_loop1 lf_st1;
    lf_st1.a1 = lf_acc1_v;
    lf_st1 = lf_block_reduce(lf_st1, reinterpret_cast<lf_loop1*>(lf_shared));
    lf_acc1_v = lf_st1.a1;
    const double v22 = lf_acc1_v;
    const double v24 = lf_log(v22);
    const bool v25 = lf_isfinite(v9);
    const double v27 = v25 ? v9 : v26;
    const double v28 = lf_add(v24, v27);
    if (threadIdx.x == 0) out0[lf_o] = v28;
  }
}

