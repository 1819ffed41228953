// The scan order of codegen/Schedule.h ("The scan order"), written out again from its description for the tests: a
// sum scan of float or double values computed exactly as both backends must compute it, so that a test can ask for
// equal bits. Deliberately a literal simulation (a block of threads, warps, lanes), not the CPU backend's code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lazyfuse_test {

inline constexpr int kScanTileThreads = 256, kScanWarp = 32, kScanTileMinLength = 128;
// Tiles of a group: the lanes of a warp, each holding one tile's aggregate.
inline constexpr int kScanGroupTiles = kScanWarp;

// Elements each thread of a tile owns: 64 bytes of them, at least 4 and at most 16 (16 float32, 8 double).
template <class T> constexpr int scan_tile_items() {
  return std::clamp(int(64 / sizeof(T)), 4, 16);
}

// One line of `len` elements of a contiguous scan axis, in place.
template <class T> void scan_order_line(T* x, std::int64_t len) {
  if (len < kScanTileMinLength) { // a thread walks the line
    for (std::int64_t r = 1; r < len; ++r) x[r] = x[r - 1] + x[r];
    return;
  }
  constexpr int kScanTileItems = scan_tile_items<T>();
  const std::int64_t tile = kScanTileThreads * kScanTileItems;
  std::vector<T> aggs; // each tile's aggregate, in order
  for (std::int64_t t0 = 0; t0 < len; t0 += tile) {
    const int count = int(std::min(tile, len - t0));
    T* e = x + t0;
    std::vector<T> own(kScanTileThreads, T(0)); // each thread's last own-scan value
    std::vector<bool> holds(kScanTileThreads, false);
    for (int j = 0; j < kScanTileThreads; ++j)
      for (int k = 0; k < kScanTileItems; ++k) {
        const int at = j * kScanTileItems + k;
        if (at >= count) continue;
        if (k > 0) e[at] = e[at - 1] + e[at];
        own[std::size_t(j)] = e[at];
        holds[std::size_t(j)] = true;
      }
    // Kogge-Stone in each warp: every lane reads the previous step's values.
    std::vector<T> w = own;
    for (int off = 1; off < kScanWarp; off *= 2) {
      std::vector<T> prev = w;
      for (int j = 0; j < kScanTileThreads; ++j)
        if (j % kScanWarp >= off) w[std::size_t(j)] = prev[std::size_t(j - off)] + prev[std::size_t(j)];
    }
    const int warps = kScanTileThreads / kScanWarp;
    std::vector<T> p(static_cast<std::size_t>(warps));
    for (int q = 0; q < warps; ++q) p[std::size_t(q)] = w[std::size_t(q * kScanWarp + kScanWarp - 1)];
    for (int off = 1; off < warps; off *= 2) {
      std::vector<T> prev = p;
      for (int q = off; q < warps; ++q) p[std::size_t(q)] = prev[std::size_t(q - off)] + prev[std::size_t(q)];
    }
    std::vector<T> incl(kScanTileThreads);
    for (int j = 0; j < kScanTileThreads; ++j) {
      const int q = j / kScanWarp;
      incl[std::size_t(j)] = q > 0 ? p[std::size_t(q - 1)] + w[std::size_t(j)] : w[std::size_t(j)];
    }
    T agg{};
    for (int j = 0; j < kScanTileThreads; ++j)
      if (holds[std::size_t(j)]) agg = incl[std::size_t(j)];
    for (int at = 0; at < count; ++at) {
      const int j = at / kScanTileItems;
      e[at] = j > 0 ? incl[std::size_t(j - 1)] + e[at] : e[at];
    }
    aggs.push_back(agg);
  }
  // Across tiles: Kogge-Stone over each group of 32 tiles' aggregates (a lane per tile), the groups' inclusive
  // values one after another, and each tile's prefix from both.
  const auto tiles = std::int64_t(aggs.size());
  T group_inclusive{};
  for (std::int64_t g0 = 0; g0 < tiles; g0 += kScanGroupTiles) {
    const int lanes = int(std::min<std::int64_t>(kScanGroupTiles, tiles - g0));
    std::vector<T> pre(aggs.begin() + g0, aggs.begin() + g0 + lanes);
    for (int off = 1; off < kScanGroupTiles; off *= 2) {
      std::vector<T> prev = pre;
      for (int l = off; l < lanes; ++l) pre[std::size_t(l)] = prev[std::size_t(l - off)] + prev[std::size_t(l)];
    }
    for (int l = 0; l < lanes; ++l) {
      const std::int64_t t = g0 + l;
      if (t == 0) continue;
      const T prefix = g0 == 0  ? pre[std::size_t(l - 1)]
                       : l == 0 ? group_inclusive
                                : group_inclusive + pre[std::size_t(l - 1)];
      T* e = x + t * tile;
      const std::int64_t count = std::min(tile, len - t * tile);
      for (std::int64_t at = 0; at < count; ++at) e[at] = prefix + e[at];
    }
    if (lanes == kScanGroupTiles) group_inclusive = g0 == 0 ? pre.back() : group_inclusive + pre.back();
  }
}

} // namespace lazyfuse_test
