// The CPU backend's random numbers: graph/RandomMath.inc's functions (the very ones the kernels run) over a column.
#pragma once

#include "graph/Random.h"

#include <lazyfuse/dtype.hpp>

#include <cstdint>

namespace lazyfuse::runtime {

/// What one Random instruction (codegen/KernelIR.h) reads: per element its index, key and counter offset; the
/// distribution's parameters, the same for all.
struct RandomColumn {
  graph::RandomDist dist = graph::RandomDist::Random;
  DType type = DType::Float64;
  const std::int64_t* index = nullptr;
  const std::uint64_t* key = nullptr;
  const std::uint64_t* counter = nullptr;
  double p0 = 0, p1 = 0;
  std::uint64_t range = 0;
};

/// Writes `len` elements of type c.type to `out`: element e is element index[e] of the draw with key key[e] and
/// counter counter[e]. Runs of four elements of one draw that make up a Philox group are computed together (one
/// Philox block for the four, as the GPU's vector path: the same bits either way).
void random_column(const RandomColumn& c, void* out, int len);

} // namespace lazyfuse::runtime
