// lazyfuse kernel lf_k178ed7d4c5ba1a58 (generated; self-contained: it includes no header)
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
LF_HD float lf_negative(float a) { return -a; }
LF_HD double lf_negative(double a) { return -a; }
LF_HD bool lf_maximum(bool a, bool b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD float lf_maximum(float a, float b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD double lf_maximum(double a, double b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
template <class T> LF_HD T lf_max_identity();
LF_HD lf_i8 lf_maximum(lf_i8 a, lf_i8 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_i8 lf_negative(lf_i8 a) { return (lf_i8)((unsigned)0 - (unsigned)a); }
template <> LF_HD lf_i8 lf_max_identity<lf_i8>() { return -128; }
LF_HD lf_i16 lf_maximum(lf_i16 a, lf_i16 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_i16 lf_negative(lf_i16 a) { return (lf_i16)((unsigned)0 - (unsigned)a); }
template <> LF_HD lf_i16 lf_max_identity<lf_i16>() { return -32768; }
LF_HD lf_i32 lf_maximum(lf_i32 a, lf_i32 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_i32 lf_negative(lf_i32 a) { return (lf_i32)((unsigned)0 - (unsigned)a); }
template <> LF_HD lf_i32 lf_max_identity<lf_i32>() { return -2147483647 - 1; }
LF_HD lf_i64 lf_maximum(lf_i64 a, lf_i64 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_i64 lf_negative(lf_i64 a) { return (lf_i64)((unsigned long long)0 - (unsigned long long)a); }
template <> LF_HD lf_i64 lf_max_identity<lf_i64>() { return -9223372036854775807LL - 1; }
LF_HD lf_u8 lf_maximum(lf_u8 a, lf_u8 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_u8 lf_negative(lf_u8 a) { return (lf_u8)((unsigned)0 - (unsigned)a); }
template <> LF_HD lf_u8 lf_max_identity<lf_u8>() { return 0; }
LF_HD lf_u16 lf_maximum(lf_u16 a, lf_u16 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_u16 lf_negative(lf_u16 a) { return (lf_u16)((unsigned)0 - (unsigned)a); }
template <> LF_HD lf_u16 lf_max_identity<lf_u16>() { return 0; }
LF_HD lf_u32 lf_maximum(lf_u32 a, lf_u32 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_u32 lf_negative(lf_u32 a) { return (lf_u32)((unsigned)0 - (unsigned)a); }
template <> LF_HD lf_u32 lf_max_identity<lf_u32>() { return 0; }
LF_HD lf_u64 lf_maximum(lf_u64 a, lf_u64 b) { return (a != a) ? a : ((b != b) ? b : (b > a ? b : a)); }
LF_HD lf_u64 lf_negative(lf_u64 a) { return (lf_u64)((unsigned long long)0 - (unsigned long long)a); }
template <> LF_HD lf_u64 lf_max_identity<lf_u64>() { return 0; }
template <class T> LF_HD T lf_max_combine(T a, T b) { return lf_maximum(a, b); }
template <> LF_HD bool lf_max_identity<bool>() { return false; }
template <> LF_HD float lf_max_identity<float>() { return -LF_INF_F; }
template <> LF_HD double lf_max_identity<double>() { return -LF_INF_D; }

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
template <class T> __device__ __forceinline__ T lf_load_partial(const unsigned char* p) { return __ldcg(reinterpret_cast<const T*>(p)); }
template <> __device__ __forceinline__ bool lf_load_partial<bool>(const unsigned char* p) { return *reinterpret_cast<const volatile bool*>(p); }
struct lf_loop0 {
  lf_i32 a0;
  static __device__ __forceinline__ lf_loop0 identity() {
    lf_loop0 s;
    s.a0 = lf_max_identity<lf_i32>();
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

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

typedef int idx_t;

extern "C" __global__ void __launch_bounds__(256) lf_k178ed7d4c5ba1a58(const lf_i32* __restrict__ in0, lf_i32* __restrict__ out0, const idx_t n, const idx_t p0, const idx_t p1, unsigned char* __restrict__ lf_partials, unsigned int* __restrict__ lf_tickets, const idx_t lf_splits) {
  __shared__ double lf_shared[64];
  const idx_t v1 = p0;
  const idx_t v3 = p1;
  const idx_t lf_o = blockIdx.x / lf_splits;
  const idx_t lf_s = blockIdx.x % lf_splits;
  if (lf_o >= n) return;
  {
    const idx_t v0 = lf_o;
    lf_i32 lf_acc0[4];
    for (int lf_u = 0; lf_u < 4; ++lf_u) {
      lf_acc0[lf_u] = lf_max_identity<lf_i32>();
    }
    const idx_t lf_step0 = lf_splits * blockDim.x * 4;
    for (idx_t lf_r0 = (lf_s * blockDim.x + threadIdx.x) * 4; lf_r0 < v1; lf_r0 += 4 * lf_step0) {
#pragma unroll
      for (int lf_u = 0; lf_u < 4; ++lf_u) {
        const idx_t lf_rb = lf_r0 + lf_u * lf_step0;
        if (lf_rb + 4 <= v1) {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const idx_t v2 = lf_rb + j;
            const idx_t v4 = v2 * v3;
            const idx_t v5 = v4 + v0;
            const lf_i32 v6 = in0[v5];
            const lf_i32 v7 = lf_negative(v6);
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v7);
          }
        } else {
          for (idx_t v2 = lf_rb; v2 < v1; ++v2) {
            const idx_t v4 = v2 * v3;
            const idx_t v5 = v4 + v0;
            const lf_i32 v6 = in0[v5];
            const lf_i32 v7 = lf_negative(v6);
            lf_acc0[lf_u] = lf_max_combine(lf_acc0[lf_u], v7);
          }
        }
      }
    }
    for (int lf_u = 1; lf_u < 4; ++lf_u) {
      lf_acc0[0] = lf_max_combine(lf_acc0[0], lf_acc0[lf_u]);
    }
    lf_i32 lf_acc0_v = lf_acc0[0];
    lf_loop0 lf_st0;
    lf_st0.a0 = lf_acc0_v;
    lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));
    lf_acc0_v = lf_st0.a0;
    if (threadIdx.x == 0) {
      unsigned char* lf_p = lf_partials + ((idx_t)0 * n * lf_splits + lf_o * lf_splits + lf_s) * 16;
      *reinterpret_cast<lf_i32*>(lf_p) = lf_acc0_v;
    }
    __shared__ bool lf_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) lf_last = atomicAdd(lf_tickets + lf_o, 1u) == (unsigned)(lf_splits - 1);
    __syncthreads();
    if (!lf_last) return;
    __threadfence();
    lf_loop0 lf_fin0 = lf_loop0::identity();
    for (idx_t lf_q = threadIdx.x; lf_q < lf_splits; lf_q += blockDim.x) {
      lf_loop0 lf_v;
      const unsigned char* lf_p0 = lf_partials + ((idx_t)0 * n * lf_splits + lf_o * lf_splits + lf_q) * 16;
      lf_v.a0 = lf_load_partial<lf_i32>(lf_p0);
      lf_fin0.combine(lf_v);
    }
    lf_fin0 = lf_block_reduce(lf_fin0, reinterpret_cast<lf_loop0*>(lf_shared));
    const lf_i32 v10 = lf_fin0.a0;
    if (threadIdx.x == 0) out0[lf_o] = v10;
    if (threadIdx.x == 0) lf_tickets[lf_o] = 0u;
  }
}

