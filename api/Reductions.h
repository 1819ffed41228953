// What the reductions (api/Reductions.cpp) share with the functions built on them elsewhere in api/.
#pragma once

#include <lazyfuse/dtype.hpp>

namespace lazyfuse::detail {

/// The type mean, var and norms compute in and return, as NumPy's: floats keep theirs, bool and integers float64.
inline DType mean_type(DType t) {
  return is_floating(t) ? t : DType::Float64;
}

} // namespace lazyfuse::detail
