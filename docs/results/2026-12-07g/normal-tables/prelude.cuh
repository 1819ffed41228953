// lazyfuse kernel lf_k8713c7ab0e963bff (generated; self-contained: it includes no header)
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
#define LF_F32_BITS(x) __float_as_uint(x)
#define LF_F32_FROM_BITS(u) __uint_as_float(u)
#define LF_F64_BITS(x) ((unsigned long long)__double_as_longlong(x))
#define LF_F64_FROM_BITS(u) __longlong_as_double((long long)(u))
LF_HD lf_u32 lf_rand_mulhi(lf_u32 a, lf_u32 b) {
  return __umulhi(a, b);
}
LF_HD void lf_rand_philox4x32_10(lf_u32 c0, lf_u32 c1, lf_u32 c2, lf_u32 c3, lf_u32 k0, lf_u32 k1, lf_u32* out) {
  for (int round = 0; round < 10; ++round) {
    const lf_u32 hi0 = lf_rand_mulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const lf_u32 hi1 = lf_rand_mulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 = (lf_u32)(k0 + 0x9E3779B9u);
    k1 = (lf_u32)(k1 + 0xBB67AE85u);
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}
LF_HD void lf_rand_block_at(lf_u64 key, lf_u64 group, lf_u64 block, lf_u32* out) {
  lf_rand_philox4x32_10((lf_u32)group, (lf_u32)(group >> 32), (lf_u32)block, (lf_u32)(block >> 32), (lf_u32)key,
                        (lf_u32)(key >> 32), out);
}
LF_HD float lf_rand_minus2log_f32(float v) {
  const lf_u32 t = (lf_u32)LF_F32_BITS(v) + (0x3F800000u - 0x3F3504F3u);
  const float e = (float)((int)(t >> 23) - 127 - 32);
  const float g = fmaf(LF_F32_FROM_BITS((t & 0x007FFFFFu) + 0x3F3504F3u), -2.0f, 2.0f);
  const float z4 = g * g;
  float p = 7.0376836292e-2f * 0x1p-10f;
  p = fmaf(p, g, -1.1514610310e-1f * -0x1p-9f);
  p = fmaf(p, g, 1.1676998740e-1f * 0x1p-8f);
  p = fmaf(p, g, -1.2420140846e-1f * -0x1p-7f);
  p = fmaf(p, g, 1.4249322787e-1f * 0x1p-6f);
  p = fmaf(p, g, -1.6668057665e-1f * -0x1p-5f);
  p = fmaf(p, g, 2.0000714765e-1f * 0x1p-4f);
  p = fmaf(p, g, -2.4999993993e-1f * -0x1p-3f);
  p = fmaf(p, g, 3.3333331174e-1f * 0x1p-2f);
  float y = (p * g) * z4;
  y = fmaf(-2.12194440e-4f * -2.0f, e, y);
  y = fmaf(0.25f, z4, y);
  return fmaf(0.693359375f * -2.0f, e, g + y);
}
LF_HD float lf_rand_sqrt_f32(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  const float s = x * y, half_y = y * 0.5f;
  return fmaf(fmaf(-s, s, x), half_y, s);
}
LF_HD void lf_rand_cossin_turn32(lf_u32 b, float* out) {
  const lf_u32 shifted = b + 0x20000000u;
  const lf_u32 q = shifted >> 30;
  const float x = (float)(int)(b << 2) * (1.46291807926715968e-9f * 0.25f);
  const float z = x * x;
  const float ps = fmaf(fmaf(-1.9515295891e-4f, z, 8.3321608736e-3f), z, -1.6666654611e-1f);
  const float s = fmaf(ps * z, x, x);
  const float pc = fmaf(fmaf(2.443315711809948e-5f, z, -1.388731625493765e-3f), z, 4.166664568298827e-2f);
  const float c = fmaf(pc * z, z, fmaf(-0.5f, z, 1.0f));
  const float along = (q & 1) ? s : c, across = (q & 1) ? c : s;
  out[0] = ((q + 1) & 2) ? -along : along;
  out[1] = (q & 2) ? -across : across;
}
LF_HD void lf_rand_box_muller_f32(lf_u32 a, lf_u32 b, float* out) {
  const float r = lf_rand_sqrt_f32(fmaxf(lf_rand_minus2log_f32((float)a + 0.5f), 0x1p-100f));
  lf_rand_cossin_turn32(b, out);
  out[0] = r * out[0];
  out[1] = r * out[1];
}
LF_HD float lf_rand_standard_normal_f32(lf_u64 key, lf_u64 counter, lf_u64 index) {
  lf_u32 w[4];
  lf_rand_block_at(key, counter + index / 4, 0, w);
  const int second_pair = (int)(index % 4) >= 2;
  float z[2];
  lf_rand_box_muller_f32(second_pair ? w[2] : w[0], second_pair ? w[3] : w[1], z);
  return index % 2 ? z[1] : z[0];
}
LF_HD void lf_rand_standard_normal_f32_x4(lf_u64 key, lf_u64 counter, lf_u64 first, float* out) {
  lf_u32 w[4];
  lf_rand_block_at(key, counter + first / 4, 0, w);
  lf_rand_box_muller_f32(w[0], w[1], out);
  lf_rand_box_muller_f32(w[2], w[3], out + 2);
}

template <class T> struct alignas(sizeof(T) * 4) lf_vec { T v[4]; };

template <class V> __device__ __forceinline__ void lf_store_stream(V* p, const V& v) {
  if constexpr (sizeof(V) % 16 == 0) {
#pragma unroll
    for (int k = 0; k < (int)(sizeof(V) / 16); ++k)
      __stcs(reinterpret_cast<uint4*>(p) + k, reinterpret_cast<const uint4*>(&v)[k]);
  } else if constexpr (sizeof(V) == 8) {
    __stcs(reinterpret_cast<uint2*>(p), *reinterpret_cast<const uint2*>(&v));
  } else if constexpr (sizeof(V) == 4) {
    __stcs(reinterpret_cast<unsigned*>(p), *reinterpret_cast<const unsigned*>(&v));
  } else {
    *p = v;
  }
}

typedef int idx_t;

