// The CPU backend's order of a combining reduction (docs/design.md, "The CPU backend's order"), as functions over
// plain arrays: the one definition that the interpreter (runtime/CpuBackend.cpp) and the LLVM code generator (through
// the op library's bitcode, runtime/LlvmOpLibrary.cc) both run, so their sums have the same bits.
//
// Elements come in columns of at most kReduceColumn. A column is folded by a halving tree (element e takes element
// e + half, the halves rounded up, until one value is left); the column partials go into a binary counter: `levels`
// holds one partial per set bit of the count of columns so far (`used[level]`), and a new partial carries upwards as
// an increment does. The counter's result combines the levels from the lowest. So rounding errors grow with log n, and
// blocks of 2^k whole columns folded separately (a reduction split over threads) carry in at level k with the same
// bits as one sequential fold.
//
// Plain C++ without the standard library: compiled by the host compiler and by clang to bitcode.
#pragma once

namespace lazyfuse::runtime {

/// Elements of one column (the interpreter's kChunk).
constexpr int kReduceColumn = 256;

/// The halving tree of the 2^k values at v. Each level is a loop of constant trip count into its own array, which
/// compilers vectorize at -O2 (a sum of 256 float32 folds in about 25 ns instead of 110 on x86-64 with SSE2), so a
/// full reduction streams at the memory's speed; the combines and their order are the general tree's.
template <int Len, class T, class Combine> inline T reduce_power_of_two(const T* v, Combine combine) {
  static_assert(Len >= 2 && (Len & (Len - 1)) == 0, "a power of two");
  T half[Len / 2];
  for (int e = 0; e < Len / 2; ++e) half[e] = combine(v[e], v[e + Len / 2]);
  if constexpr (Len == 2)
    return half[0];
  else
    return reduce_power_of_two<Len / 2>(half, combine);
}

/// The halving tree of the `len` (1..kReduceColumn) values at v.
template <class T, class Combine> inline T reduce_column(const T* v, int len, Combine combine) {
  if (len == kReduceColumn) return reduce_power_of_two<kReduceColumn>(v, combine);
  if (len == 1) return v[0];
  // The first halving reads the column; the rest work in scratch.
  T scratch[kReduceColumn];
  int half = (len + 1) / 2;
  for (int e = 0; e + half < len; ++e) scratch[e] = combine(v[e], v[e + half]);
  if (len % 2) scratch[half - 1] = v[half - 1];
  for (int m = half; m > 1;) {
    half = (m + 1) / 2;
    for (int e = 0; e + half < m; ++e) scratch[e] = combine(scratch[e], scratch[e + half]);
    m = half;
  }
  return scratch[0];
}

/// Adds `partial` (of 2^level columns) to the counter (levels[64], used[64]).
template <class T, class Combine>
inline void reduce_carry(T* levels, bool* used, T partial, int level, Combine combine) {
  while (used[level]) {
    partial = combine(levels[level], partial);
    used[level++] = false;
  }
  levels[level] = partial;
  used[level] = true;
}

/// Carries the counter of a block of columns (from_levels, from_used) into the counter of the columns before it
/// (levels, used), from its lowest level: what folding the block's columns into this counter would have done when the
/// counter holds whole blocks of 2^k columns and the block at most 2^k (a reduction split over threads).
template <class T, class Combine>
inline void reduce_absorb(T* levels, bool* used, const T* from_levels, const bool* from_used, Combine combine) {
  for (int level = 0; level < 64; ++level)
    if (from_used[level]) reduce_carry(levels, used, from_levels[level], level, combine);
}

/// The counter's result: its levels combined from the lowest, starting from `identity`.
template <class T, class Combine>
inline T reduce_finish(const T* levels, const bool* used, T identity, Combine combine) {
  T result = identity;
  for (int level = 0; level < 64; ++level)
    if (used[level]) result = combine(levels[level], result);
  return result;
}

} // namespace lazyfuse::runtime
