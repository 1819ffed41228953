#include "runtime/CpuScan.h"

#include "runtime/ThreadPool.h"

#include "codegen/Schedule.h"
#include "graph/Assert.h"
#include "graph/HostOps.h"
#include "graph/Ops.h"

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

namespace lazyfuse::runtime {

using codegen::kBlockSize;
using codegen::kWarpSize;

namespace {

// Work below which a scan stays on the calling thread (elements).
constexpr std::int64_t kMinParallelScan = std::int64_t(1) << 15;
// Columns of an untiled scan one task walks at once (consecutive in memory when inner is large).
constexpr std::int64_t kColumnsPerTask = 1024;

// Kogge-Stone over v[0, count): for each offset at once, v[l] = v[l - off] (+) v[l] where the lane l % width >= off.
template <class T, class Combine> void kogge_stone(T* v, int count, int width, Combine combine) {
  for (int off = 1; off < width; off *= 2)
    for (int l = count - 1; l >= 0; --l) // downwards: v[l - off] still holds the previous step's value
      if (l % width >= off) v[l] = combine(v[l - off], v[l]);
}

// One tile of `count` elements, `items` per thread (codegen/Schedule.h, "The scan order"): x becomes the tile's
// local values; returns the tile's aggregate.
template <class T, class Combine> T tile_scan(T* x, int count, int items, Combine combine) {
  constexpr int kWarps = kBlockSize / kWarpSize;
  const int threads = (count + items - 1) / items;
  std::array<T, kBlockSize> w;
  for (int j = 0; j < threads; ++j) {
    T* s = x + j * items;
    const int own = std::min(items, count - j * items);
    for (int k = 1; k < own; ++k) s[k] = combine(s[k - 1], s[k]);
    w[std::size_t(j)] = s[own - 1];
  }
  kogge_stone(w.data(), threads, kWarpSize, combine);
  // Only the warps before the last one holding elements are needed, and those are whole.
  const int warps = (threads - 1) / kWarpSize;
  std::array<T, kWarps> p;
  for (int q = 0; q < warps; ++q) p[std::size_t(q)] = w[std::size_t(q * kWarpSize + kWarpSize - 1)];
  kogge_stone(p.data(), warps, kWarps, combine);
  std::array<T, kBlockSize> incl;
  for (int j = 0; j < threads; ++j) {
    const int q = j / kWarpSize;
    incl[std::size_t(j)] = q > 0 ? combine(p[std::size_t(q - 1)], w[std::size_t(j)]) : w[std::size_t(j)];
  }
  for (int j = 1; j < threads; ++j) {
    T* s = x + j * items;
    const int own = std::min(items, count - j * items);
    for (int k = 0; k < own; ++k) s[k] = combine(incl[std::size_t(j - 1)], s[k]);
  }
  return incl[std::size_t(threads - 1)];
}

template <class T, class Combine>
void scan_tiles(T* out, const codegen::ScanGeometry& g, std::int64_t n, int threads, Combine combine) {
  const std::int64_t rows = n / g.len;
  // Not std::vector: vector<bool> packs bits, which neither data() nor the parallel writes below allow.
  const auto agg = std::make_unique<T[]>(std::size_t(g.tiles));
  auto tile_span = [&](std::int64_t t, std::int64_t& first, int& count) {
    const std::int64_t row = t / g.tiles_per_row, tr = t % g.tiles_per_row;
    first = row * g.len + tr * g.tile;
    count = int(std::min(g.tile, g.len - tr * g.tile));
  };
  ThreadPool& pool = ThreadPool::instance();
  const std::int64_t grain = std::max<std::int64_t>(1, kMinParallelScan / g.tile);
  pool.parallel_for(g.tiles, grain, threads, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      std::int64_t first;
      int count;
      tile_span(t, first, count);
      agg[std::size_t(t)] = tile_scan(out + first, count, g.items, combine);
    }
  });
  // The tiles' prefixes (codegen/Schedule.h, "The scan order"): in each row, Kogge-Stone over each group of
  // kScanGroupTiles aggregates, the groups' inclusive values one after another.
  const auto prefix = std::make_unique<T[]>(std::size_t(g.tiles));
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t t0 = row * g.tiles_per_row;
    T group_inclusive{};
    for (std::int64_t g0 = 0; g0 < g.tiles_per_row; g0 += codegen::kScanGroupTiles) {
      const int lanes = int(std::min<std::int64_t>(codegen::kScanGroupTiles, g.tiles_per_row - g0));
      T* pre = agg.get() + t0 + g0;
      kogge_stone(pre, lanes, codegen::kScanGroupTiles, combine);
      for (int l = 0; l < lanes; ++l) {
        T& e = prefix[std::size_t(t0 + g0 + l)];
        if (g0 == 0)
          e = l > 0 ? pre[l - 1] : T{};
        else
          e = l > 0 ? combine(group_inclusive, pre[l - 1]) : group_inclusive;
      }
      if (lanes == codegen::kScanGroupTiles)
        group_inclusive = g0 == 0 ? pre[lanes - 1] : combine(group_inclusive, pre[lanes - 1]);
    }
  }
  pool.parallel_for(g.tiles, grain, threads, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) {
      if (t % g.tiles_per_row == 0) continue;
      std::int64_t first;
      int count;
      tile_span(t, first, count);
      const T p = prefix[std::size_t(t)];
      for (int k = 0; k < count; ++k) out[first + k] = combine(p, out[first + k]);
    }
  });
}

template <class T, class Combine>
void scan_columns(T* out, const codegen::ScanGeometry& g, std::int64_t n, int threads, Combine combine) {
  const std::int64_t outer = n / (g.len * g.inner);
  const std::int64_t chunks = (g.inner + kColumnsPerTask - 1) / kColumnsPerTask;
  const std::int64_t per_task = std::min(g.inner, kColumnsPerTask) * g.len;
  ThreadPool::instance().parallel_for(outer * chunks, std::max<std::int64_t>(1, kMinParallelScan / per_task), threads,
                                      [&](std::int64_t b, std::int64_t e) {
                                        for (std::int64_t u = b; u < e; ++u) {
                                          const std::int64_t o = u / chunks, c0 = u % chunks * kColumnsPerTask;
                                          const std::int64_t c1 = std::min(g.inner, c0 + kColumnsPerTask);
                                          T* line = out + o * g.len * g.inner;
                                          for (std::int64_t r = 1; r < g.len; ++r) {
                                            const T* prev = line + (r - 1) * g.inner;
                                            T* cur = line + r * g.inner;
                                            for (std::int64_t c = c0; c < c1; ++c) cur[c] = combine(prev[c], cur[c]);
                                          }
                                        }
                                      });
}

} // namespace

void scan_in_place(const codegen::KernelIR& ir, const codegen::KernelArgs& args, int threads) {
  const codegen::ScanGeometry g = codegen::scan_geometry(ir, args);
  if (args.n <= 0 || g.len <= 1) return;
  const codegen::Instr& st = ir.code.back();
  const auto op = graph::ReduceOp(st.fn);
  LAZYFUSE_ASSERT(op == graph::ReduceOp::Sum || op == graph::ReduceOp::Prod, "a scan is a sum or a product");
  graph::visit_opmath_type(st.dtype, [&]<class T>() {
    T* out = static_cast<T*>(args.outputs[0]);
    auto run = [&](auto combine) {
      if (g.tiled)
        scan_tiles(out, g, args.n, threads, combine);
      else
        scan_columns(out, g, args.n, threads, combine);
    };
    if (op == graph::ReduceOp::Sum)
      run([](T a, T b) { return lazyfuse_opmath::lf_sum_combine(a, b); });
    else
      run([](T a, T b) { return lazyfuse_opmath::lf_prod_combine(a, b); });
  });
}

} // namespace lazyfuse::runtime
