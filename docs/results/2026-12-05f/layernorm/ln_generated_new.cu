// The layer-norm kernel lazyfuse generates at 3da5547 (session 25: a row loop's invariant values printed once before it,
// and the division by the standard deviation through its reciprocal with two exact corrections) for
// ((x - mean(x, 1, true)) / sqrt(var(x, 1, 0, true) + 1e-5f) * gamma + beta) on 8192 x 8192 float32 (the CPU
// backend's printer, codegen::render_cuda), verbatim below the wrapper. Before: ../../2026-12-05e/layernorm/ln_generated.cu.
#ifdef MIN_BLOCKS // run4.sh: a minimum of resident blocks for ptxas, which caps the registers
#define LF_MIN_BLOCKS , MIN_BLOCKS
#else
#define LF_MIN_BLOCKS
#endif
// lazyfuse kernel lf_kcd3ee85cd450cda4 (generated; self-contained: it includes no header)
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
LF_HD bool lf_add(bool a, bool b) { return a || b; }
LF_HD bool lf_multiply(bool a, bool b) { return a && b; }
LF_HD float lf_add(float a, float b) { return a + b; }
LF_HD float lf_subtract(float a, float b) { return a - b; }
LF_HD float lf_multiply(float a, float b) { return a * b; }
LF_HD float lf_true_divide(float a, float b) { return a / b; }
LF_HD float lf_square(float a) { return a * a; }
LF_HD double lf_add(double a, double b) { return a + b; }
LF_HD double lf_subtract(double a, double b) { return a - b; }
LF_HD double lf_multiply(double a, double b) { return a * b; }
LF_HD double lf_true_divide(double a, double b) { return a / b; }
LF_HD double lf_square(double a) { return a * a; }
LF_HD float lf_sqrt(float x) { return sqrtf(x); }
LF_HD double lf_sqrt(double x) { return sqrt(x); }
LF_HD lf_i8 lf_add(lf_i8 a, lf_i8 b) { return (lf_i8)((unsigned)a + (unsigned)b); }
LF_HD lf_i8 lf_subtract(lf_i8 a, lf_i8 b) { return (lf_i8)((unsigned)a - (unsigned)b); }
LF_HD lf_i8 lf_multiply(lf_i8 a, lf_i8 b) { return (lf_i8)((unsigned)a * (unsigned)b); }
LF_HD lf_i8 lf_square(lf_i8 a) { return lf_multiply(a, a); }
LF_HD lf_i16 lf_add(lf_i16 a, lf_i16 b) { return (lf_i16)((unsigned)a + (unsigned)b); }
LF_HD lf_i16 lf_subtract(lf_i16 a, lf_i16 b) { return (lf_i16)((unsigned)a - (unsigned)b); }
LF_HD lf_i16 lf_multiply(lf_i16 a, lf_i16 b) { return (lf_i16)((unsigned)a * (unsigned)b); }
LF_HD lf_i16 lf_square(lf_i16 a) { return lf_multiply(a, a); }
LF_HD lf_i32 lf_add(lf_i32 a, lf_i32 b) { return (lf_i32)((unsigned)a + (unsigned)b); }
LF_HD lf_i32 lf_subtract(lf_i32 a, lf_i32 b) { return (lf_i32)((unsigned)a - (unsigned)b); }
LF_HD lf_i32 lf_multiply(lf_i32 a, lf_i32 b) { return (lf_i32)((unsigned)a * (unsigned)b); }
LF_HD lf_i32 lf_square(lf_i32 a) { return lf_multiply(a, a); }
LF_HD lf_i64 lf_add(lf_i64 a, lf_i64 b) { return (lf_i64)((unsigned long long)a + (unsigned long long)b); }
LF_HD lf_i64 lf_subtract(lf_i64 a, lf_i64 b) { return (lf_i64)((unsigned long long)a - (unsigned long long)b); }
LF_HD lf_i64 lf_multiply(lf_i64 a, lf_i64 b) { return (lf_i64)((unsigned long long)a * (unsigned long long)b); }
LF_HD lf_i64 lf_square(lf_i64 a) { return lf_multiply(a, a); }
LF_HD lf_u8 lf_add(lf_u8 a, lf_u8 b) { return (lf_u8)((unsigned)a + (unsigned)b); }
LF_HD lf_u8 lf_subtract(lf_u8 a, lf_u8 b) { return (lf_u8)((unsigned)a - (unsigned)b); }
LF_HD lf_u8 lf_multiply(lf_u8 a, lf_u8 b) { return (lf_u8)((unsigned)a * (unsigned)b); }
LF_HD lf_u8 lf_square(lf_u8 a) { return lf_multiply(a, a); }
LF_HD lf_u16 lf_add(lf_u16 a, lf_u16 b) { return (lf_u16)((unsigned)a + (unsigned)b); }
LF_HD lf_u16 lf_subtract(lf_u16 a, lf_u16 b) { return (lf_u16)((unsigned)a - (unsigned)b); }
LF_HD lf_u16 lf_multiply(lf_u16 a, lf_u16 b) { return (lf_u16)((unsigned)a * (unsigned)b); }
LF_HD lf_u16 lf_square(lf_u16 a) { return lf_multiply(a, a); }
LF_HD lf_u32 lf_add(lf_u32 a, lf_u32 b) { return (lf_u32)((unsigned)a + (unsigned)b); }
LF_HD lf_u32 lf_subtract(lf_u32 a, lf_u32 b) { return (lf_u32)((unsigned)a - (unsigned)b); }
LF_HD lf_u32 lf_multiply(lf_u32 a, lf_u32 b) { return (lf_u32)((unsigned)a * (unsigned)b); }
LF_HD lf_u32 lf_square(lf_u32 a) { return lf_multiply(a, a); }
LF_HD lf_u64 lf_add(lf_u64 a, lf_u64 b) { return (lf_u64)((unsigned long long)a + (unsigned long long)b); }
LF_HD lf_u64 lf_subtract(lf_u64 a, lf_u64 b) { return (lf_u64)((unsigned long long)a - (unsigned long long)b); }
LF_HD lf_u64 lf_multiply(lf_u64 a, lf_u64 b) { return (lf_u64)((unsigned long long)a * (unsigned long long)b); }
LF_HD lf_u64 lf_square(lf_u64 a) { return lf_multiply(a, a); }
template <class T> LF_HD T lf_sum_identity() { return (T)0; }
template <class T> LF_HD T lf_sum_combine(T a, T b) { return lf_add(a, b); }

__device__ __forceinline__ float lf_div_reciprocal(float d) { const float r = __frcp_rn(d), a = fabsf(r); return a >= 0x1p-100f && a <= 0x1p100f ? r : __int_as_float(0x7fc00000); }
__device__ __forceinline__ double lf_div_reciprocal(double d) { const double r = __drcp_rn(d), a = fabs(r); return a >= 0x1p-900 && a <= 0x1p900 ? r : __longlong_as_double(0x7ff8000000000000ll); }
__device__ __forceinline__ float lf_div_by_reciprocal(float x, float d, float r) {
  const float q0 = __fmul_rn(x, r);
  const float q1 = __fmaf_rn(__fmaf_rn(-q0, d, x), r, q0);
  const float q2 = __fmaf_rn(__fmaf_rn(-q1, d, x), r, q1);
  const float ax = fabsf(x), aq = fabsf(q0);
  return ax >= 0x1p-100f && ax <= 0x1p100f && aq >= 0x1p-100f && aq <= 0x1p100f ? q2 : __fdiv_rn(x, d);
}
__device__ __forceinline__ double lf_div_by_reciprocal(double x, double d, double r) {
  const double q0 = __dmul_rn(x, r);
  const double q1 = __fma_rn(__fma_rn(-q0, d, x), r, q0);
  const double q2 = __fma_rn(__fma_rn(-q1, d, x), r, q1);
  const double ax = fabs(x), aq = fabs(q0);
  return ax >= 0x1p-900 && ax <= 0x1p900 && aq >= 0x1p-900 && aq <= 0x1p900 ? q2 : __ddiv_rn(x, d);
}
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

extern "C" __global__ void __launch_bounds__(256 LF_MIN_BLOCKS) lf_kcd3ee85cd450cda4(const float* __restrict__ in0, const float* __restrict__ in1, const float* __restrict__ in2, float* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, const idx_t p2, const float p3, const idx_t p4, const idx_t p5, const float p6, const idx_t p7, const float p8, const float p9) {
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
    extern __shared__ __align__(16) unsigned char lf_row_cache[];
    unsigned lf_cache_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(lf_cache_bytes));
    const unsigned long long lf_cache_row = ((unsigned long long)v1 + 3) / 4 * 4;
    float* const lf_cache0 = reinterpret_cast<float*>(lf_row_cache + lf_cache_row * 0);
    bool lf_cached0 = false;
    const bool lf_cache_fits = lf_cache_row * 4 <= lf_cache_bytes;
    const idx_t v0 = lf_o;
    float lf_acc0[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_sum_identity<float>();
    }
    const idx_t v4 = v0 * v3;
    const bool lf_vector0 = true && (unsigned long long)(in0 + v4) % sizeof(lf_vec<float>) == 0;
    lf_cached0 = lf_vector0 && lf_cache_fits;
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
            lf_acc0[lf_u] = lf_sum_combine(lf_acc0[lf_u], v6);
          }
          if (lf_cached0) *reinterpret_cast<lf_vec<float>*>(lf_cache0 + lf_rb) = lf_l6;
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
              lf_acc0[lf_u] = lf_sum_combine(lf_acc0[lf_u], v6);
            }
            if (lf_cached0) *reinterpret_cast<lf_vec<float>*>(lf_cache0 + lf_rb) = lf_l6;
          } else {
            for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
              const idx_t v5 = v4 + v2;
              const float v6 = in0[v5];
              lf_acc0[lf_u] = lf_sum_combine(lf_acc0[lf_u], v6);
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
    const float v16 = lf_true_divide(v9, v15);
    const bool lf_vector1 = true && (unsigned long long)(in0 + v11) % sizeof(lf_vec<float>) == 0;
    if (lf_vector1) {
      if (true && lf_cached0) {
        idx_t lf_r0 = (idx_t)threadIdx.x * 4;
        for (; lf_r0 + 4 * blockDim.x * 4 - blockDim.x * 4 + 4 <= v1; lf_r0 += 4 * blockDim.x * 4) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            const lf_vec<float> lf_c13 = *reinterpret_cast<const lf_vec<float>*>(lf_cache0 + lf_rb);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v10 = lf_rb + j;
              const float v13 = lf_c13.v[j];
              const float v17 = lf_subtract(v13, v16);
              const float v18 = lf_square(v17);
              lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
            }
          }
        }
        if (lf_r0 < v1) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            if (lf_rb + 4 <= v1) {
              const lf_vec<float> lf_c13 = *reinterpret_cast<const lf_vec<float>*>(lf_cache0 + lf_rb);
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const idx_t v10 = lf_rb + j;
                const float v13 = lf_c13.v[j];
                const float v17 = lf_subtract(v13, v16);
                const float v18 = lf_square(v17);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
              }
            } else {
              for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
                const idx_t v12 = v11 + v10;
                const float v13 = in0[v12];
                const float v17 = lf_subtract(v13, v16);
                const float v18 = lf_square(v17);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
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
            const lf_vec<float> lf_l13 = *reinterpret_cast<const lf_vec<float>*>(in0 + v11 + lf_rb);
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v10 = lf_rb + j;
              const idx_t v12 = v11 + v10;
              const float v13 = lf_l13.v[j];
              const float v17 = lf_subtract(v13, v16);
              const float v18 = lf_square(v17);
              lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
            }
          }
        }
        if (lf_r0 < v1) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            if (lf_rb + 4 <= v1) {
              const lf_vec<float> lf_l13 = *reinterpret_cast<const lf_vec<float>*>(in0 + v11 + lf_rb);
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const idx_t v10 = lf_rb + j;
                const idx_t v12 = v11 + v10;
                const float v13 = lf_l13.v[j];
                const float v17 = lf_subtract(v13, v16);
                const float v18 = lf_square(v17);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
              }
            } else {
              for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
                const idx_t v12 = v11 + v10;
                const float v13 = in0[v12];
                const float v17 = lf_subtract(v13, v16);
                const float v18 = lf_square(v17);
                lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
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
            const float v13 = in0[v12];
            const float v17 = lf_subtract(v13, v16);
            const float v18 = lf_square(v17);
            lf_acc1[lf_u] = lf_sum_combine(lf_acc1[lf_u], v18);
          }
        } else {
          for (idx_t v10 = lf_rb; v10 < v1; ++v10) {
            const idx_t v12 = v11 + v10;
            const float v13 = in0[v12];
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
    const float v31 = lf_true_divide(v9, v30);
    const float v35 = lf_true_divide(v21, v34);
    const float v37 = lf_add(v35, v36);
    const float v38 = lf_sqrt(v37);
    const float lf_rcp38 = lf_div_reciprocal(v38);
    const bool lf_vector2 = true && (unsigned long long)(in0 + v26) % sizeof(lf_vec<float>) == 0 && (unsigned long long)(in1) % sizeof(lf_vec<float>) == 0 && (unsigned long long)(in2) % sizeof(lf_vec<float>) == 0 && (unsigned long long)(out0 + v24) % sizeof(lf_vec<float>) == 0;
    if (lf_vector2) {
      if (true && lf_cached0) {
        idx_t lf_r0 = (idx_t)threadIdx.x * 4;
        for (; lf_r0 + 4 * blockDim.x * 4 - blockDim.x * 4 + 4 <= v1; lf_r0 += 4 * blockDim.x * 4) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            const lf_vec<float> lf_c28 = *reinterpret_cast<const lf_vec<float>*>(lf_cache0 + lf_rb);
            const lf_vec<float> lf_l40 = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_rb);
            const lf_vec<float> lf_l42 = *reinterpret_cast<const lf_vec<float>*>(in2 + lf_rb);
            lf_vec<float> lf_s44;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v22 = lf_rb + j;
              const idx_t v25 = v24 + v22;
              const float v28 = lf_c28.v[j];
              const float v32 = lf_subtract(v28, v31);
              const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
              const float v40 = lf_l40.v[j];
              const float v41 = lf_multiply(v39, v40);
              const float v42 = lf_l42.v[j];
              const float v43 = lf_add(v41, v42);
              lf_s44.v[j] = v43;
            }
            *reinterpret_cast<lf_vec<float>*>(out0 + v24 + lf_rb) = lf_s44;
          }
        }
        if (lf_r0 < v1) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            if (lf_rb + 4 <= v1) {
              const lf_vec<float> lf_c28 = *reinterpret_cast<const lf_vec<float>*>(lf_cache0 + lf_rb);
              const lf_vec<float> lf_l40 = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_rb);
              const lf_vec<float> lf_l42 = *reinterpret_cast<const lf_vec<float>*>(in2 + lf_rb);
              lf_vec<float> lf_s44;
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const idx_t v22 = lf_rb + j;
                const idx_t v25 = v24 + v22;
                const float v28 = lf_c28.v[j];
                const float v32 = lf_subtract(v28, v31);
                const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
                const float v40 = lf_l40.v[j];
                const float v41 = lf_multiply(v39, v40);
                const float v42 = lf_l42.v[j];
                const float v43 = lf_add(v41, v42);
                lf_s44.v[j] = v43;
              }
              *reinterpret_cast<lf_vec<float>*>(out0 + v24 + lf_rb) = lf_s44;
            } else {
              for (idx_t v22 = lf_rb; v22 < v1; ++v22) {
                const idx_t v25 = v24 + v22;
                const idx_t v27 = v26 + v22;
                const float v28 = in0[v27];
                const float v32 = lf_subtract(v28, v31);
                const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
                const float v40 = in1[v22];
                const float v41 = lf_multiply(v39, v40);
                const float v42 = in2[v22];
                const float v43 = lf_add(v41, v42);
                out0[v25] = v43;
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
            const lf_vec<float> lf_l28 = *reinterpret_cast<const lf_vec<float>*>(in0 + v26 + lf_rb);
            const lf_vec<float> lf_l40 = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_rb);
            const lf_vec<float> lf_l42 = *reinterpret_cast<const lf_vec<float>*>(in2 + lf_rb);
            lf_vec<float> lf_s44;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const idx_t v22 = lf_rb + j;
              const idx_t v25 = v24 + v22;
              const idx_t v27 = v26 + v22;
              const float v28 = lf_l28.v[j];
              const float v32 = lf_subtract(v28, v31);
              const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
              const float v40 = lf_l40.v[j];
              const float v41 = lf_multiply(v39, v40);
              const float v42 = lf_l42.v[j];
              const float v43 = lf_add(v41, v42);
              lf_s44.v[j] = v43;
            }
            *reinterpret_cast<lf_vec<float>*>(out0 + v24 + lf_rb) = lf_s44;
          }
        }
        if (lf_r0 < v1) {
#pragma unroll
          for (int lf_u = 0; lf_u < 4; ++lf_u) {
            const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * 4;
            if (lf_rb + 4 <= v1) {
              const lf_vec<float> lf_l28 = *reinterpret_cast<const lf_vec<float>*>(in0 + v26 + lf_rb);
              const lf_vec<float> lf_l40 = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_rb);
              const lf_vec<float> lf_l42 = *reinterpret_cast<const lf_vec<float>*>(in2 + lf_rb);
              lf_vec<float> lf_s44;
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const idx_t v22 = lf_rb + j;
                const idx_t v25 = v24 + v22;
                const idx_t v27 = v26 + v22;
                const float v28 = lf_l28.v[j];
                const float v32 = lf_subtract(v28, v31);
                const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
                const float v40 = lf_l40.v[j];
                const float v41 = lf_multiply(v39, v40);
                const float v42 = lf_l42.v[j];
                const float v43 = lf_add(v41, v42);
                lf_s44.v[j] = v43;
              }
              *reinterpret_cast<lf_vec<float>*>(out0 + v24 + lf_rb) = lf_s44;
            } else {
              for (idx_t v22 = lf_rb; v22 < v1; ++v22) {
                const idx_t v25 = v24 + v22;
                const idx_t v27 = v26 + v22;
                const float v28 = in0[v27];
                const float v32 = lf_subtract(v28, v31);
                const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
                const float v40 = in1[v22];
                const float v41 = lf_multiply(v39, v40);
                const float v42 = in2[v22];
                const float v43 = lf_add(v41, v42);
                out0[v25] = v43;
              }
            }
          }
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
            const float v32 = lf_subtract(v28, v31);
            const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
            const float v40 = in1[v22];
            const float v41 = lf_multiply(v39, v40);
            const float v42 = in2[v22];
            const float v43 = lf_add(v41, v42);
            out0[v25] = v43;
          }
        } else {
          for (idx_t v22 = lf_rb; v22 < v1; ++v22) {
            const idx_t v25 = v24 + v22;
            const idx_t v27 = v26 + v22;
            const float v28 = in0[v27];
            const float v32 = lf_subtract(v28, v31);
            const float v39 = lf_div_by_reciprocal(v32, v38, lf_rcp38);
            const float v40 = in1[v22];
            const float v41 = lf_multiply(v39, v40);
            const float v42 = in2[v22];
            const float v43 = lf_add(v41, v42);
            out0[v25] = v43;
          }
        }
      }
    }
    }
  }
}

void launch_ln_generated(int grid, int block, unsigned shared, const float* x, const float* g, const float* b, float* out,
                         int rows, int cols) {
  const float c = float(cols);
  lf_kcd3ee85cd450cda4<<<grid, block, shared>>>(x, g, b, out, rows, cols, cols, cols, c, cols, cols, c, cols, c, 1e-5f);
}

int generated_blocks_per_sm(int block, unsigned shared) {
  int blocks = 0;
  cudaFuncSetAttribute(lf_kcd3ee85cd450cda4, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024);
#ifdef CARVEOUT // run4.sh: the shared memory the SM keeps from its L1, in percent
  cudaFuncSetAttribute(lf_kcd3ee85cd450cda4, cudaFuncAttributePreferredSharedMemoryCarveout, CARVEOUT);
#endif
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, lf_kcd3ee85cd450cda4, block, shared);
  return blocks;
}
