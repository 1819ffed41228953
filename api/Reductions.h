// What the reductions (api/Reductions.cpp) share with the functions built on them elsewhere in api/.
#pragma once

#include <lazyfuse/dtype.hpp>

namespace lazyfuse::detail {

/// The type mean, var and norms compute in, as NumPy's: float32 for float16 and bfloat16 (their results are rounded
/// once, to the input's type: mean_result), other floats and complex types their own, bool and integers float64.
inline DType mean_type(DType t) {
  if (is_half(t)) return DType::Float32;
  return is_inexact(t) ? t : DType::Float64;
}
/// The type mean, var and norms return: a half input's type, else mean_type (var and norms of a complex input
/// return its parts' type).
inline DType mean_result_type(DType t) {
  return is_half(t) ? t : mean_type(t);
}

} // namespace lazyfuse::detail
