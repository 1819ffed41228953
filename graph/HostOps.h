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
#include "graph/OpMathTypes.inc"
// (before the op semantics, which use these names)
#include "graph/OpMath.inc"
#undef LF_HD
#undef LF_INF_F
#undef LF_INF_D
} // namespace lazyfuse_opmath
