// Host types of the half-precision element types: lazyfuse::float16 (IEEE 754 binary16, NumPy's float16) and
// lazyfuse::bfloat16 (the upper half of a float32, ml_dtypes' bfloat16). g++ 12 has no <stdfloat>, so these are
// two-byte structs holding the bits; arithmetic on the host goes through float (each conversion below is the one the
// kernels and the CPU backend use, bit for bit).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <type_traits>

namespace lazyfuse {

/// An IEEE 754 binary16 value (1 sign, 5 exponent, 10 significand bits), as an element of a float16 Array.
struct float16 {
  std::uint16_t bits = 0; ///< the encoding; +0 by default

  float16() = default;
  /// `value` rounded to the nearest float16, ties to even (overflow gives infinity; NaN stays NaN).
  explicit float16(float value);
  /// `value` rounded once, directly from double (as NumPy's astype(float16) does; not through float).
  explicit float16(double value);
  /// An integer through float, as NumPy and ml_dtypes convert one.
  template <class I>
  requires std::is_integral_v<I>
  explicit float16(I value) : float16(float(value)) {}
  /// The exact value (every float16 is a float).
  operator float() const;

  static constexpr float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

/// A bfloat16 value (1 sign, 8 exponent, 7 significand bits: a float32 with its low 16 bits dropped), as an element
/// of a bfloat16 Array.
struct bfloat16 {
  std::uint16_t bits = 0; ///< the encoding; +0 by default

  bfloat16() = default;
  /// `value` rounded to the nearest bfloat16, ties to even; NaN becomes the quiet NaN of its sign (ml_dtypes').
  explicit bfloat16(float value);
  /// `value` rounded once, directly from double, as ml_dtypes converts a double (not through float).
  explicit bfloat16(double value);
  /// An integer through float, as NumPy and ml_dtypes convert one.
  template <class I>
  requires std::is_integral_v<I>
  explicit bfloat16(I value) : bfloat16(float(value)) {}
  /// The exact value (every bfloat16 is a float).
  operator float() const;

  static constexpr bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "half types must have the layout of their bits");

/// Prints the value as the shortest decimal that reads back as the same half value (NumPy's repr of a float16).
std::ostream& operator<<(std::ostream& os, float16 h);
std::ostream& operator<<(std::ostream& os, bfloat16 h);

} // namespace lazyfuse
