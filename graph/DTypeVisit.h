// A DType as its host C++ type: the one dispatcher from the runtime value of a DType to code over its element type
// (the CPU backend, kernel arguments, printing, asarray, fills). Generated from the type table, lazyfuse/dtypes.def.
#pragma once

#include "graph/Assert.h"

#include <lazyfuse/dtype.hpp>

#include <cstdint>
#include <utility>

namespace lazyfuse::graph {

/// Calls `f.template operator()<T>()` with T the host type of `t` (bool, std::int32_t, float, ...) and returns what
/// it returns; every instantiation must return the same type. Write f as `[&]<class T>() { ... }`.
template <class F> decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
// clang-format off
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) \
  case DType::Enum: return std::forward<F>(f).template operator()<host_type>();
#include <lazyfuse/dtypes.def>
    // clang-format on
  }
  LAZYFUSE_ASSERT(false, "visit_dtype: not a DType of the type table");
  return std::forward<F>(f).template operator()<bool>();
}

} // namespace lazyfuse::graph
