// The op semantics of graph/OpMath.inc compiled for the host: the CPU backend calls these, and the CUDA printer
// pastes the same text into every kernel.
#pragma once

#include <cmath>
#include <cstdint>
#include <math.h>

// Outside namespace lazyfuse on purpose: unqualified sinf, floor, pow... must find the C library, not
// lazyfuse::floor(const Array&).
namespace lazyfuse_opmath {
#define LF_HD inline
#define LF_INF_F __builtin_huge_valf()
#define LF_INF_D __builtin_huge_val()
// The kernel names of the integer types (the CUDA printer typedefs them the same way).
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits)                                  \
  LAZYFUSE_HOST_ALIAS_##kind(kernel_type, host_type)
#define LAZYFUSE_HOST_ALIAS_Bool(kernel_type, host_type)
#define LAZYFUSE_HOST_ALIAS_Float(kernel_type, host_type)
#define LAZYFUSE_HOST_ALIAS_Signed(kernel_type, host_type) using kernel_type = host_type;
#define LAZYFUSE_HOST_ALIAS_Unsigned(kernel_type, host_type) using kernel_type = host_type;
#include <lazyfuse/dtypes.def>
#undef LAZYFUSE_HOST_ALIAS_Bool
#undef LAZYFUSE_HOST_ALIAS_Float
#undef LAZYFUSE_HOST_ALIAS_Signed
#undef LAZYFUSE_HOST_ALIAS_Unsigned
#include "graph/OpMath.inc"
#undef LF_HD
#undef LF_INF_F
#undef LF_INF_D
} // namespace lazyfuse_opmath
