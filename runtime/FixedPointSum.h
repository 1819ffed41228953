// Per-bin sums of float16, bfloat16 and float32 values as integer sums: each value becomes an integer multiple of a
// power of two chosen for its bin, and integer additions commute, so the order of the additions (threads, atomics,
// chunks) cannot change a bit. The CPU backend (runtime/Counting.cpp) and the CUDA one (runtime/DeviceCount.cu) call
// these same functions, so that both give the same bits (docs/design.md, "Counting"). Host and device code: plain
// C++ and integer arithmetic, nothing from a math library whose rounding could differ between the two.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define LF_FIXED_HD __host__ __device__ inline
#else
#define LF_FIXED_HD inline
#endif

namespace lazyfuse::runtime::fixed_sum {

// What a bin has seen, in one 32-bit word that grows by atomicMax of a scale code (its low 16 bits) and by atomicOr of
// the flags above them. Scale codes: 0 nothing, 1 only -0.0, 2 zeros of which one is +0.0, e + kExponentBias for a
// finite nonzero value in [2^(e-1), 2^e) (e from -148 to 128: from 30 to 306).
inline constexpr std::uint32_t kNothing = 0;
inline constexpr std::uint32_t kNegativeZeros = 1;
inline constexpr std::uint32_t kZeros = 2;
inline constexpr int kExponentBias = 178;
inline constexpr std::uint32_t kScaleMask = 0xFFFF;
inline constexpr std::uint32_t kPlusInfinity = 1u << 16, kMinusInfinity = 1u << 17, kNaN = 1u << 18;

LF_FIXED_HD int bit_width(std::uint64_t v) {
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(static_cast<long long>(v));
#else
  return v == 0 ? 0 : 64 - __builtin_clzll(v);
#endif
}

LF_FIXED_HD std::uint32_t bits_of(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

LF_FIXED_HD float float_of(std::uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

/// 2^k for k in [-1022, 1023], exactly.
LF_FIXED_HD double power_of_two(int k) {
  const std::uint64_t u = std::uint64_t(k + 1023) << 52;
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

/// What finish rounds to: a type's significant binary digits and the exponent of its smallest normal number.
struct Format {
  int digits;
  int min_exponent;
};
inline constexpr Format kFloat32{24, -126}, kFloat16{11, -14}, kBFloat16{8, -126};

/// Binary digits of each term below its bin's scale, for sums of n terms: each term is at most 2^F in magnitude, so
/// that n of them stay below 2^62 in an int64. F = 38 for 2^23 terms, 14 bits more than float32 holds.
LF_FIXED_HD int fraction_bits(std::int64_t n) {
  return 62 - bit_width(static_cast<std::uint64_t>(n));
}

/// The scale code of v (combined by maximum), or kNothing for an infinity or a NaN, which special_flag reports.
LF_FIXED_HD std::uint32_t scale_code(float v) {
  const std::uint32_t u = bits_of(v), magnitude = u & 0x7FFFFFFFu, field = magnitude >> 23;
  if (magnitude == 0) return u >> 31 ? kNegativeZeros : kZeros;
  if (field == 0xFF) return kNothing;
  // A normal value is below 2^(field - 126); a subnormal one, m 2^-149, below 2^(bit_width(m) - 149).
  const int e = field != 0 ? int(field) - 126 : bit_width(magnitude) - 149;
  return std::uint32_t(e + kExponentBias);
}

/// The flag of an infinity or a NaN, 0 for a finite v.
LF_FIXED_HD std::uint32_t special_flag(float v) {
  const std::uint32_t u = bits_of(v);
  if ((u & 0x7F800000u) != 0x7F800000u) return 0;
  if (u & 0x007FFFFFu) return kNaN;
  return u >> 31 ? kMinusInfinity : kPlusInfinity;
}

/// Finite v as an integer multiple of 2^(e - fraction), 2^e the scale of the bin's `word` (at least v's), rounded to
/// nearest, ties to even: |term| <= 2^fraction. v times a power of two is exact in double, whose rounding to an
/// integer is the only rounding.
LF_FIXED_HD std::int64_t term(float v, std::uint32_t word, int fraction) {
  const int code = int(word & kScaleMask);
  if (code <= int(kZeros)) return 0; // the bin holds zeros only, v among them
  const double scaled = double(v) * power_of_two(fraction - (code - kExponentBias));
#if defined(__CUDA_ARCH__)
  return __double2ll_rn(scaled);
#else
  return __builtin_llrint(scaled);
#endif
}

/// A bin's sum from its word and its integer sum: rounded once, to nearest with ties to even, to `format` (kFloat32,
/// kFloat16 or kBFloat16), and returned as a float that the type's conversion from float (to nearest) keeps exactly:
/// the rounded value, or past the type's largest number a float that converts to its infinity (float16's range ends
/// inside float's). Nothing, or only -0.0, gives -0.0 (the identity of addition); a NaN, or both infinities,
/// NaN (0x7FC00000, the same bits on every backend); one infinity that infinity; a sum of 0 from nonzero values +0.0.
LF_FIXED_HD float finish(std::int64_t sum, std::uint32_t word, int fraction, Format format) {
  if ((word & kNaN) || ((word & kPlusInfinity) && (word & kMinusInfinity))) return float_of(0x7FC00000u);
  if (word & kPlusInfinity) return float_of(0x7F800000u);
  if (word & kMinusInfinity) return float_of(0xFF800000u);
  const int code = int(word & kScaleMask);
  if (code <= int(kNegativeZeros)) return float_of(0x80000000u);
  if (sum == 0) return 0.0f;
  const bool negative = sum < 0;
  // |sum| < 2^62: its negation does not overflow.
  std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(sum) : static_cast<std::uint64_t>(sum);
  int exponent = code - kExponentBias - fraction; // the value is magnitude * 2^exponent
  const int width = bit_width(magnitude), top = width - 1 + exponent;
  // Below the normal numbers a type keeps fewer digits: as many fewer as the value is below 2^min_exponent.
  const int kept = format.digits - (top < format.min_exponent ? format.min_exponent - top : 0);
  const int dropped = width - kept;
  if (dropped > 0) {
    if (dropped >= 64) {
      // Nothing kept, and the value is below half the smallest step (width < dropped): it rounds to zero.
      magnitude = 0;
    } else {
      const std::uint64_t half = std::uint64_t(1) << (dropped - 1);
      const std::uint64_t rest = magnitude & (2 * half - 1);
      magnitude >>= dropped;
      if (rest > half || (rest == half && (magnitude & 1))) ++magnitude;
      exponent += dropped;
    }
  }
  // At most format.digits digits (up to 2^24) times a power of two within double's range: exact in double, and exact in
  // float, or beyond float's largest number and so an infinity, as rounding to the type gives.
  const float value = float(double(magnitude) * power_of_two(exponent));
  return negative ? -value : value;
}

} // namespace lazyfuse::runtime::fixed_sum

#undef LF_FIXED_HD
