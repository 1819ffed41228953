// Element types and NumPy 2 type promotion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace lazyfuse {

/// The element types an Array can hold. The order is the promotion lattice's order inside each kind
/// (bool < integers < floats); new types (uint8, float16, bfloat16) are added here and in
/// graph/DTypes.def, which every table in the library reads.
enum class DType : std::uint8_t { Bool, Int32, Int64, Float32, Float64 };

inline constexpr int kNumDTypes = 5;

/// Size of one element in bytes.
constexpr std::size_t itemsize(DType t) {
  switch (t) {
  case DType::Bool: return 1;
  case DType::Int32: return 4;
  case DType::Int64: return 8;
  case DType::Float32: return 4;
  case DType::Float64: return 8;
  }
  return 0;
}

/// NumPy's name of the type ("float32", ...).
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
  case DType::Bool: return "bool";
  case DType::Int32: return "int32";
  case DType::Int64: return "int64";
  case DType::Float32: return "float32";
  case DType::Float64: return "float64";
  }
  return "?";
}

constexpr bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}
constexpr bool is_integer(DType t) {
  return t == DType::Int32 || t == DType::Int64;
}

/// The kind of a C++ scalar in an expression. Scalars are "weak" as in NumPy 2 (NEP 50): they do
/// not widen an array's type unless they are of a higher kind (a float scalar with an int array).
enum class ScalarKind : std::uint8_t { Bool, Int, Float };

/// NumPy 2 promotion of two array types, e.g. int32 + float32 -> float64, bool + int32 -> int32.
DType promote_types(DType a, DType b);

/// Promotion of an array type with a weak C++ scalar: float32 * 2.0 -> float32, int32 * 2.0 -> float64,
/// bool + 1 -> int64, int32 + 1 -> int32.
DType promote_weak(DType array_type, ScalarKind scalar);

/// The C++ type of each DType, and back.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() {
  return DType::Bool;
}
template <> constexpr DType dtype_of<std::int32_t>() {
  return DType::Int32;
}
template <> constexpr DType dtype_of<std::int64_t>() {
  return DType::Int64;
}
template <> constexpr DType dtype_of<float>() {
  return DType::Float32;
}
template <> constexpr DType dtype_of<double>() {
  return DType::Float64;
}

template <class T>
concept Element = std::is_same_v<T, bool> || std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, double>;

} // namespace lazyfuse
