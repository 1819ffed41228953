#include "codegen/Schedule.h"

#include "codegen/CudaPrinter.h"

#include "graph/Assert.h"

#include <algorithm>
#include <tuple>

namespace lazyfuse::codegen {

DeviceCaps DeviceCaps::reference() {
  DeviceCaps c;
  c.warp_size = 32;
  c.max_threads_per_block = 1024;
  c.sm_count = 132;
  c.resident_blocks_per_sm = 2048 / kBlockSize;
  c.max_grid_blocks = 2147483647;
  c.shared_bytes_per_block = 48 * 1024;
  c.shared_bytes_per_block_optin = 227 * 1024;
  return c;
}

Schedule choose_reduction_schedule(const ReductionFacts& f) {
  // A split kernel's blocks each fold a part of every reduction and the last one combines the partials: no loop
  // may read another's result, and nothing can be written per element of a row before the row is reduced.
  const bool splittable = !f.full_outputs && !f.dependent;
  if (fusion::walks_columns(f.inner_kept, f.outer)) return splittable ? Schedule::ColumnSplit : Schedule::Column;
  if (splittable && fusion::prefers_split(f.outer)) return Schedule::Split;
  return Schedule::Row;
}

bool reads_broadcast_operand(const KernelIR& ir, std::size_t load) {
  const Instr& in = ir.code[load];
  LAZYFUSE_ASSERT(in.op == IrOp::Load, "reads_broadcast_operand: not a Load");
  std::vector<bool> visited(load, false);
  std::vector<std::vector<bool>> reached(ir.unravels.size()); // per unravel group: the coordinates the address reaches
  std::vector<int> pending;
  for (int operand : {in.a, in.b})
    if (operand >= 0) pending.push_back(operand);
  while (!pending.empty()) {
    const auto k = std::size_t(pending.back());
    pending.pop_back();
    if (visited[k]) continue;
    visited[k] = true;
    const Instr& x = ir.code[k];
    switch (x.op) {
    case IrOp::IndexParam:
    case IrOp::IndexConst: break;
    case IrOp::Coord:
      if (ir.code[std::size_t(x.a)].op == IrOp::LinearIndex) {
        auto& coords = reached[std::size_t(x.slot)];
        coords.resize(ir.unravels[std::size_t(x.slot)].size(), false);
        coords[std::size_t(x.imm)] = true;
      } else {
        pending.push_back(x.a);
      }
      break;
    case IrOp::IAdd:
    case IrOp::ISub:
    case IrOp::IMul:
    case IrOp::IDiv:
    case IrOp::IMod:
    case IrOp::ILt:
    case IrOp::IGe:
    case IrOp::IEq:
    case IrOp::PAnd:
      for (int operand : {x.a, x.b})
        if (operand >= 0) pending.push_back(operand);
      break;
    default: return false; // the output's own index, or a loaded value (a gather)
    }
  }
  return std::none_of(reached.begin(), reached.end(), [](const std::vector<bool>& coords) {
    return !coords.empty() && std::find(coords.begin(), coords.end(), false) == coords.end();
  });
}

namespace {

// The parameter slots of the tiled transpose's two axes: the tile axis and the last axis of its unravel group.
std::pair<int, int> transpose_tile_slots(const KernelIR& ir) {
  const auto& dims = ir.unravels[std::size_t(ir.transpose_tiles.group)];
  return {ir.code[std::size_t(dims[std::size_t(ir.transpose_tiles.axis)])].slot,
          ir.code[std::size_t(dims.back())].slot};
}

} // namespace

KernelLaunchFacts launch_facts(const KernelIR& ir) {
  KernelLaunchFacts f;
  if (ir.schedule == Schedule::Elementwise)
    for (std::size_t k = 0; k < ir.code.size() && !f.resident_grid; ++k)
      f.resident_grid = ir.code[k].op == IrOp::Load && !reads_broadcast_operand(ir, k);
  f.row_cache_bytes_per_element = ir.row_cache.bytes_per_element();
  f.register_row_elements = std::int64_t(ir.register_row_vectors) * kBlockSize * kElementsPerThread;
  f.register_row_partial = ir.register_row_partial;
  f.accumulators =
      std::count_if(ir.code.begin(), ir.code.end(), [](const Instr& in) { return in.op == IrOp::Accumulate; });
  f.partial_bytes = partial_bytes_of(ir);
  if (ir.transpose_tiles.any()) {
    std::tie(f.tile_axis_slot, f.tile_last_slot) = transpose_tile_slots(ir);
    f.tile_wide = ir.transpose_tiles_wide;
  }
  return f;
}

std::int64_t partial_bytes_of(const KernelIR& ir) {
  const bool wide = std::any_of(ir.code.begin(), ir.code.end(),
                                [](const Instr& in) { return in.op == IrOp::Accumulate && itemsize(in.dtype) > 8; });
  return wide ? kWidePartialBytes : kPartialBytes;
}

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

} // namespace

std::int64_t transpose_tile_units(std::int64_t n, std::int64_t a, std::int64_t b, bool wide) {
  if (a < kTransposeTileMinExtent || b < kTransposeTileMinExtent) return 0;
  const std::int64_t ta = ceil_div(a, kTransposeTile), tb = ceil_div(b, wide ? kTransposeTileWide : kTransposeTile);
  const std::int64_t per_plane = !wide && ta == tb ? ta * (ta + 1) / 2 : ta * tb;
  return n / (a * b) * per_plane;
}

bool choose_wide_transpose_tiles(const KernelIR& ir, const KernelArgs& args) {
  const TransposeTiles& tiles = ir.transpose_tiles;
  if (!tiles.any()) return false;
  const auto [axis_slot, last_slot] = transpose_tile_slots(ir);
  const std::int64_t a = args.params[std::size_t(axis_slot)].i, b = args.params[std::size_t(last_slot)].i;
  if (a < kTransposeTileMinExtent || b < kTransposeTileMinExtent) return false;
  if (ceil_div(a, kTransposeTile) == ceil_div(b, kTransposeTile)) return false; // mirrored pairs
  const bool rows_off_sectors = std::any_of(ir.outputs.begin(), ir.outputs.end(),
                                            [&](DType t) { return b * std::int64_t(itemsize(t)) % kSectorBytes != 0; });
  if (!rows_off_sectors) return false;
  std::int64_t bytes = 0;
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (tiles.staged[k])
      bytes += std::int64_t(kTransposeTileWide) * (kTransposeTile + 1) * std::int64_t(itemsize(ir.code[k].dtype));
  return bytes <= kMaxTransposeTileBytes;
}

LaunchShape launch_shape(const KernelIR& ir, const KernelArgs& args, const DeviceCaps& caps,
                         const KernelLaunchFacts& facts) {
  // The printed kernels assume their block size and 32-lane warps (__launch_bounds__, shuffles).
  LAZYFUSE_ASSERT(caps.warp_size == kWarpSize && caps.max_threads_per_block >= kBlockSize,
                  ("device with warps of " + std::to_string(caps.warp_size) + " threads and blocks of at most " +
                   std::to_string(caps.max_threads_per_block) + " threads: the kernels need " +
                   std::to_string(kWarpSize) + " and " + std::to_string(kBlockSize))
                      .c_str());
  LaunchShape s;
  s.block = kBlockSize;
  switch (ir.schedule) {
  case Schedule::Elementwise: {
    if (facts.tile_axis_slot >= 0) {
      // A block per unit of tiles, where the axes are long enough for tiles.
      const std::int64_t units =
          transpose_tile_units(args.n, args.params[std::size_t(facts.tile_axis_slot)].i,
                               args.params[std::size_t(facts.tile_last_slot)].i, facts.tile_wide);
      if (units > 0) {
        s.grid = std::min(units, caps.max_grid_blocks);
        break;
      }
    }
    // Measured on the H200 (2026-11-30, median of 3): contiguous kernels run faster with a block per chunk
    // (chain 2^26 0.198 vs 0.217 ms, blackscholes 2^25 0.182 vs 0.196 ms with the resident blocks only), kernels
    // reading views faster with the resident blocks striding over the chunks (heat2d 8192^2 0.155 vs 0.170 ms).
    const std::int64_t per_block = std::int64_t(kBlockSize) * kElementsPerThread * vectors_per_thread(ir);
    s.grid = std::min(ceil_div(args.n, per_block), facts.resident_grid ? caps.grid_limit() : caps.max_grid_blocks);
    break;
  }
  case Schedule::Row: {
    // A block per row (the kernel's loop over rows strides by the grid): measured on the H200 against a grid of
    // resident blocks only, softmax of 16384 x 4096 took 0.145 instead of 0.155 ms, rowvar 0.063 instead of 0.064.
    s.grid = std::min(args.n, caps.max_grid_blocks);
    // A kernel with a register path holds its rows there (it was lowered for rows it holds): no shared memory.
    // Otherwise the row cache takes only what needs no opt-in: static and dynamic shared memory together within
    // the per-block limit. The kernel reads its inputs again where it gets none.
    LAZYFUSE_ASSERT(facts.register_row_elements == 0 ||
                        (facts.register_row_partial
                             ? register_rows_partial(args.reduced) &&
                                   args.reduced > facts.register_row_elements - kBlockSize * kElementsPerThread &&
                                   args.reduced < facts.register_row_elements
                             : args.reduced == facts.register_row_elements),
                    "a kernel holding rows in registers launched for rows of another length");
    const std::int64_t cache = facts.row_cache_bytes_per_element * row_cache_elements(args.reduced);
    if (facts.register_row_elements == 0 &&
        cache <= std::min(kMaxRowCacheBytes, caps.shared_bytes_per_block - caps.static_shared_bytes))
      s.shared_bytes = unsigned(cache);
    break;
  }
  case Schedule::Column: s.grid = ceil_div(args.n, kBlockSize); break;
  case Schedule::Scan: {
    const ScanGeometry g = scan_geometry(ir, args);
    if (g.tiled) {
      // A block per tile, tile blockIdx.x: blocks start in that order, so a tile waits only for tiles that blocks
      // already running hold.
      s.grid = g.tiles;
      s.partial_bytes = g.packed ? 0 : g.tiles * kScanStatusBytes;
      s.ticket_bytes = g.tiles * (g.packed ? 8 : std::int64_t(sizeof(unsigned)));
      s.splits = g.tiles_per_row;
    } else {
      s.grid = std::min(ceil_div(g.columns, kBlockSize), caps.max_grid_blocks);
    }
    break;
  }
  case Schedule::ColumnSplit:
  case Schedule::Split: {
    // Enough blocks for two waves, each reading at least a few thousand elements; at most one partial per thread
    // of the combining block.
    const bool column = ir.schedule == Schedule::ColumnSplit;
    // Rows: blocks per outer element. Columns: blocks per tile of kBlockSize outer elements.
    const std::int64_t groups = column ? ceil_div(args.n, kBlockSize) : args.n;
    const std::int64_t waves = column ? 2 : 4;
    const std::int64_t want = std::max<std::int64_t>(1, waves * caps.grid_limit() / std::max<std::int64_t>(1, groups));
    const std::int64_t per_part = column ? 16 : std::int64_t(kBlockSize) * 8; // elements each thread should read
    const std::int64_t useful = std::max<std::int64_t>(1, args.reduced / per_part);
    // Column partials are folded by one thread each (keep them few), row partials by a whole block.
    const std::int64_t cap = column ? kMaxColumnSplits : kMaxSplits;
    s.splits = std::min({want, useful, cap});
    s.partial_bytes = facts.accumulators * args.n * s.splits * facts.partial_bytes;
    s.ticket_bytes = groups * std::int64_t(sizeof(unsigned));
    s.grid = groups * s.splits;
    break;
  }
  }
  return s;
}

namespace {
bool reads_memory(const KernelIR& ir) {
  for (const Instr& in : ir.code)
    if (in.op == IrOp::Load || in.op == IrOp::LoadLinear) return true;
  return false;
}
} // namespace

int vectors_per_thread(const KernelIR& ir) {
  return reads_memory(ir) ? kVectorsPerThread : kGeneratorVectorsPerThread;
}

bool streams_stores(const KernelIR& ir) {
  return (ir.schedule == Schedule::Elementwise && !reads_memory(ir)) || ir.schedule == Schedule::Scan;
}

bool streams_vector_loads(const KernelIR& ir) {
  if (ir.schedule == Schedule::Scan)
    return std::any_of(ir.code.begin(), ir.code.end(), [](const Instr& in) { return in.op == IrOp::LoadLinear; });
  if (ir.schedule != Schedule::Split) return false;
  for (const RowLoop& loop : ir.row_cache.loops)
    for (std::size_t b = loop.begin + 1; b < loop.end; ++b)
      if (loop.base[b] != -1 && ir.code[b].op == IrOp::Load) return true;
  return false;
}

int choose_register_row_vectors(const KernelIR& ir, std::int64_t reduced) {
  LAZYFUSE_ASSERT(ir.analyzed, "the register path's size needs the row cache (codegen/Analyze.h)");
  const std::int64_t bytes = ir.row_cache.bytes_per_element();
  if (ir.schedule != Schedule::Row || bytes == 0) return 0;
  const std::int64_t most = kRegisterRowBytes / (bytes * kElementsPerThread);
  const std::int64_t trip = std::int64_t(kBlockSize) * kElementsPerThread;
  if (reduced <= 0 || reduced % kElementsPerThread != 0) return 0;
  const std::int64_t k = ceil_div(reduced, trip);
  return k <= most ? int(k) : 0;
}

bool register_rows_partial(std::int64_t reduced) {
  return reduced > 0 && reduced % kElementsPerThread == 0 &&
         reduced % (std::int64_t(kBlockSize) * kElementsPerThread) != 0;
}

int register_row_min_blocks(const KernelIR& ir) {
  if (ir.register_row_vectors == 0) return 0;
  const std::int64_t words = ir.register_row_vectors * kElementsPerThread * ir.row_cache.bytes_per_element() / 4;
  return int(std::max<std::int64_t>(1, 65536 / kBlockSize / (44 + 3 * words / 2)));
}

int scan_min_blocks(const KernelIR& ir) {
  if (ir.schedule != Schedule::Scan) return 0;
  if (itemsize(ir.code.back().dtype) > kScanPackedBytes) return 0;
  for (const auto& input : ir.inputs)
    if (itemsize(input.dtype) > kScanPackedBytes) return 0;
  return 5;
}

int reduction_unroll(const KernelIR& ir, const RowLoop* loop) {
  if (is_column(ir.schedule)) return 2 * kUnroll;
  if (ir.schedule != Schedule::Split || !loop || !loop->vector) return kUnroll;
  std::size_t widest = 0;
  for (std::size_t b = loop->begin + 1; b < loop->end; ++b)
    if (loop->base[b] != -1 && ir.code[b].op == IrOp::Load) widest = std::max(widest, itemsize(ir.code[b].dtype));
  if (widest == 0) return kUnroll;
  return std::max(kUnroll, int(std::size_t(kSplitBytesInFlight) / (kElementsPerThread * widest)));
}

ScanGeometry scan_geometry(const KernelIR& ir, const KernelArgs& args) {
  LAZYFUSE_ASSERT(ir.schedule == Schedule::Scan && !ir.code.empty() && ir.code.back().op == IrOp::ScanStore,
                  "scan_geometry of a kernel that is not a scan");
  const Instr& st = ir.code.back();
  auto index_value = [&](int id) {
    const Instr& in = ir.code[std::size_t(id)];
    return in.op == IrOp::IndexConst ? in.imm : args.params[std::size_t(in.slot)].i;
  };
  ScanGeometry g;
  g.len = index_value(st.b);
  g.inner = index_value(st.c);
  const bool contiguous = ir.code[std::size_t(st.c)].op == IrOp::IndexConst;
  g.tiled = contiguous && g.len >= kScanTileMinLength;
  if (g.len <= 0 || args.n <= 0) return g;
  if (g.tiled) {
    g.items = scan_items(itemsize(st.dtype));
    g.tile = std::int64_t(kBlockSize) * g.items;
    g.packed = itemsize(st.dtype) <= kScanPackedBytes;
    g.tiles_per_row = ceil_div(g.len, g.tile);
    g.tiles = args.n / g.len * g.tiles_per_row;
  } else {
    g.columns = args.n / g.len;
  }
  return g;
}

} // namespace lazyfuse::codegen
