// ===== plan 0 of 2: reduction stored: its consumers cannot inline it
// lazyfuse kernel lf_k03c6355a4ecb9ac2 (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_isnan lf_equal lf_less lf_min_identity lf_argmin_better lf_argmin_identity>

template <class T> __device__ __forceinline__ T lf_shfl_down(T v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
template <> __device__ __forceinline__ bool lf_shfl_down<bool>(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
template <class T> __device__ __forceinline__ T lf_load_partial(const unsigned char* p) { return __ldcg(reinterpret_cast<const T*>(p)); }
template <> __device__ __forceinline__ bool lf_load_partial<bool>(const unsigned char* p) { return *reinterpret_cast<const volatile bool*>(p); }
struct lf_loop0 {
  float a0;
  lf_i64 a0_i;
  static __device__ __forceinline__ lf_loop0 identity() {
    lf_loop0 s;
    s.a0 = lf_argmin_identity<float>();
    s.a0_i = 9223372036854775807LL;
    return s;
  }
  __device__ __forceinline__ lf_loop0 shfl_down(int off) const {
    lf_loop0 o;
    o.a0 = lf_shfl_down(a0, off);
    o.a0_i = lf_shfl_down(a0_i, off);
    return o;
  }
  __device__ __forceinline__ void combine(const lf_loop0& o) {
    if (lf_argmin_better(o.a0, o.a0_i, a0, a0_i)) { a0 = o.a0; a0_i = o.a0_i; }
  }
};

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

extern "C" __global__ void __launch_bounds__(256) lf_k03c6355a4ecb9ac2(const float* __restrict__ in0, lf_i64* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, unsigned char* __restrict__ lf_partials, unsigned int* __restrict__ lf_tickets, const idx_t lf_splits) {
  __shared__ double lf_shared[64];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  const idx_t lf_tiles = (n + blockDim.x - 1) / blockDim.x;
  const idx_t lf_tile = blockIdx.x % lf_tiles;
  const idx_t lf_s = blockIdx.x / lf_tiles;
  const bool lf_active = lf_tile * blockDim.x + threadIdx.x < n;
  const idx_t lf_o = lf_active ? lf_tile * blockDim.x + threadIdx.x : n - 1;
  {
    const idx_t v0 = lf_o;
    float lf_acc0[8];
    lf_i64 lf_acc0_i[8];
    for (int lf_u = 0; lf_u < 8; ++lf_u) {
      lf_acc0[lf_u] = lf_argmin_identity<float>();
      lf_acc0_i[lf_u] = 9223372036854775807LL;
    }
    const idx_t lf_step0 = lf_splits;
    if (lf_active) for (idx_t lf_r0 = lf_s; lf_r0 < v1; lf_r0 += 8 * lf_step0) {
#pragma unroll
    for (int lf_u = 0; lf_u < 8; ++lf_u) {
      const idx_t v2 = lf_r0 + lf_u * lf_step0;
      if (v2 < v1) {
        const idx_t v4 = v0 * v3;
        const idx_t v5 = v2 + v4;
        const float v6 = in0[v5];
        if (lf_argmin_better(v6, (lf_i64)v2, lf_acc0[lf_u], lf_acc0_i[lf_u])) { lf_acc0[lf_u] = v6; lf_acc0_i[lf_u] = (lf_i64)v2; }
      }
    }
    }
    for (int lf_u = 1; lf_u < 8; ++lf_u) {
      if (lf_argmin_better(lf_acc0[lf_u], lf_acc0_i[lf_u], lf_acc0[0], lf_acc0_i[0])) { lf_acc0[0] = lf_acc0[lf_u]; lf_acc0_i[0] = lf_acc0_i[lf_u]; }
    }
    float lf_acc0_v = lf_acc0[0];
    lf_i64 lf_acc0_vi = lf_acc0_i[0];
    if (lf_active) {
      unsigned char* lf_p = lf_partials + (((idx_t)0 * lf_splits + lf_s) * n + lf_o) * 16;
      *reinterpret_cast<float*>(lf_p) = lf_acc0_v;
      *reinterpret_cast<lf_i64*>(lf_p + 8) = lf_acc0_vi;
    }
    __shared__ bool lf_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) lf_last = atomicAdd(lf_tickets + lf_tile, 1u) == (unsigned)(lf_splits - 1);
    __syncthreads();
    if (!lf_last) return;
    __threadfence();
    lf_loop0 lf_fin0 = lf_loop0::identity();
#pragma unroll 64
    for (idx_t lf_q = 0; lf_q < lf_splits; ++lf_q) {
      lf_loop0 lf_v;
      const unsigned char* lf_p0 = lf_partials + (((idx_t)0 * lf_splits + lf_q) * n + lf_o) * 16;
      lf_v.a0 = lf_load_partial<float>(lf_p0);
      lf_v.a0_i = lf_load_partial<lf_i64>(lf_p0 + 8);
      lf_fin0.combine(lf_v);
    }
    const lf_i64 v9 = lf_fin0.a0_i;
    if (lf_active) out0[lf_o] = v9;
    if (threadIdx.x == 0) lf_tickets[lf_tile] = 0u;
  }
}

// ===== plan 1 of 2: requested output
// lazyfuse kernel lf_k75894066362f1792 (generated; self-contained: it includes no header)
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
// <the op prelude: graph/OpMath.inc's lf_add lf_isnan lf_equal lf_greater lf_max_identity lf_argmax_better lf_argmax_identity>

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
  lf_i64 a0_i;
  static __device__ __forceinline__ lf_loop0 identity() {
    lf_loop0 s;
    s.a0 = lf_argmax_identity<float>();
    s.a0_i = 9223372036854775807LL;
    return s;
  }
  __device__ __forceinline__ lf_loop0 shfl_down(int off) const {
    lf_loop0 o;
    o.a0 = lf_shfl_down(a0, off);
    o.a0_i = lf_shfl_down(a0_i, off);
    return o;
  }
  __device__ __forceinline__ void combine(const lf_loop0& o) {
    if (lf_argmax_better(o.a0, o.a0_i, a0, a0_i)) { a0 = o.a0; a0_i = o.a0_i; }
  }
};

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

extern "C" __global__ void __launch_bounds__(256) lf_k75894066362f1792(const float* __restrict__ in0, const lf_i64* __restrict__ in1, lf_i64* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1) {
  __shared__ double lf_shared[64];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {
    const idx_t v0 = lf_o;
    float lf_acc0[4];
    lf_i64 lf_acc0_i[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_argmax_identity<float>();
      lf_acc0_i[lf_u] = 9223372036854775807LL;
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
            if (lf_argmax_better(v6, (lf_i64)v2, lf_acc0[lf_u], lf_acc0_i[lf_u])) { lf_acc0[lf_u] = v6; lf_acc0_i[lf_u] = (lf_i64)v2; }
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
              if (lf_argmax_better(v6, (lf_i64)v2, lf_acc0[lf_u], lf_acc0_i[lf_u])) { lf_acc0[lf_u] = v6; lf_acc0_i[lf_u] = (lf_i64)v2; }
            }
          } else {
            for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
              const idx_t v5 = v4 + v2;
              const float v6 = in0[v5];
              if (lf_argmax_better(v6, (lf_i64)v2, lf_acc0[lf_u], lf_acc0_i[lf_u])) { lf_acc0[lf_u] = v6; lf_acc0_i[lf_u] = (lf_i64)v2; }
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
            if (lf_argmax_better(v6, (lf_i64)v2, lf_acc0[lf_u], lf_acc0_i[lf_u])) { lf_acc0[lf_u] = v6; lf_acc0_i[lf_u] = (lf_i64)v2; }
          }
        } else {
          for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
            const idx_t v5 = v4 + v2;
            const float v6 = in0[v5];
            if (lf_argmax_better(v6, (lf_i64)v2, lf_acc0[lf_u], lf_acc0_i[lf_u])) { lf_acc0[lf_u] = v6; lf_acc0_i[lf_u] = (lf_i64)v2; }
          }
        }
      }
    }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      if (lf_argmax_better(lf_acc0[lf_u], lf_acc0_i[lf_u], lf_acc0[0], lf_acc0_i[0])) { lf_acc0[0] = lf_acc0[lf_u]; lf_acc0_i[0] = lf_acc0_i[lf_u]; }
    }
    float lf_acc0_v = lf_acc0[0];
    lf_i64 lf_acc0_vi = lf_acc0_i[0];
    lf_loop0 lf_st0;
    lf_st0.a0 = lf_acc0_v;
    lf_st0.a0_i = lf_acc0_vi;
    lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));
    lf_acc0_v = lf_st0.a0;
    lf_acc0_vi = lf_st0.a0_i;
    const lf_i64 v9 = lf_acc0_vi;
    const lf_i64 v10 = in1[v0];
    const lf_i64 v11 = lf_add(v9, v10);
    if (threadIdx.x == 0) out0[lf_o] = v11;
  }
}

