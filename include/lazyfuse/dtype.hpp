// Element types and NumPy 2 type promotion.
#pragma once

#include <lazyfuse/half.hpp>

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace lazyfuse {

/// The element types an Array can hold: one per line of the type table, lazyfuse/dtypes.def, which every
/// per-type rule of the library is generated from (adding a type is a line there).
enum class DType : std::uint8_t {
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) Enum,
#include <lazyfuse/dtypes.def>
};

inline constexpr int kNumDTypes = 0
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) +1
#include <lazyfuse/dtypes.def>
    ;

/// What promotion and the op rules look at: a type's kind and its width.
enum class DTypeKind : std::uint8_t { Bool, Signed, Unsigned, Float, Complex };

constexpr DTypeKind dtype_kind(DType t) {
  switch (t) {
// clang-format off
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) \
  case DType::Enum: return DTypeKind::kind;
#include <lazyfuse/dtypes.def>
    // clang-format on
  }
  return DTypeKind::Bool;
}

/// Width of one element in bits.
constexpr int dtype_bits(DType t) {
  switch (t) {
// clang-format off
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) \
  case DType::Enum: return bits;
#include <lazyfuse/dtypes.def>
    // clang-format on
  }
  return 0;
}

/// Size of one element in bytes.
constexpr std::size_t itemsize(DType t) {
  return std::size_t(dtype_bits(t) / 8);
}

/// NumPy's name of the type ("float32", ...).
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
// clang-format off
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) \
  case DType::Enum: return #name;
#include <lazyfuse/dtypes.def>
    // clang-format on
  }
  return "?";
}

/// A real floating-point type (float16, bfloat16, float32, float64).
constexpr bool is_floating(DType t) {
  return dtype_kind(t) == DTypeKind::Float;
}
/// float16 or bfloat16: floats whose ops round to the type but compute in float32 (docs/semantics.md).
constexpr bool is_half(DType t) {
  return dtype_kind(t) == DTypeKind::Float && dtype_bits(t) == 16;
}
/// complex64 or complex128.
constexpr bool is_complex(DType t) {
  return dtype_kind(t) == DTypeKind::Complex;
}
/// Floating or complex (NumPy's np.inexact): the types whose values are not exact integers.
constexpr bool is_inexact(DType t) {
  return is_floating(t) || is_complex(t);
}
/// Signed or unsigned integer (not bool).
constexpr bool is_integer(DType t) {
  return dtype_kind(t) == DTypeKind::Signed || dtype_kind(t) == DTypeKind::Unsigned;
}
constexpr bool is_signed_integer(DType t) {
  return dtype_kind(t) == DTypeKind::Signed;
}
constexpr bool is_unsigned_integer(DType t) {
  return dtype_kind(t) == DTypeKind::Unsigned;
}

/// The kind of a C++ scalar in an expression. Scalars are "weak" as in NumPy 2 (NEP 50): they do
/// not widen an array's type unless they are of a higher kind (a float scalar with an int array).
enum class ScalarKind : std::uint8_t { Bool, Int, Float, Complex };

/// NumPy 2 promotion of two array types, e.g. int32 + float32 -> float64, bool + int32 -> int32,
/// float16 + int16 -> float32, complex64 + float64 -> complex128. bfloat16, which NumPy lacks, promotes as in
/// ml_dtypes and JAX: bfloat16 + float16 -> float32, bfloat16 + int8 -> bfloat16, bfloat16 + int16 -> float32.
DType promote_types(DType a, DType b);

/// Promotion of an array type with a weak C++ scalar: float32 * 2.0 -> float32, int32 * 2.0 -> float64,
/// bool + 1 -> int64, int32 + 1 -> int32, float32 * 1i -> complex64, int32 * 1i -> complex128.
DType promote_weak(DType array_type, ScalarKind scalar);

/// The C++ type of each DType (the table's host_type), and back.
template <class T> constexpr DType dtype_of() = delete;
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits)                                  \
  template <> constexpr DType dtype_of<host_type>() {                                                                  \
    return DType::Enum;                                                                                                \
  }
#include <lazyfuse/dtypes.def>

/// The C++ types an Array's elements can be read and written as: the host types of the type table.
template <class T>
concept Element = false
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) || std::is_same_v<T, host_type>
#include <lazyfuse/dtypes.def>
    ;

} // namespace lazyfuse
