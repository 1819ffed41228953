#include "codegen/TransposeTiles.h"

#include "codegen/Schedule.h"
#include "codegen/VectorAccess.h"

#include <lazyfuse/dtype.hpp>

namespace lazyfuse::codegen {

namespace {

// Per instruction: how its index value changes when coordinate `axis` of the output's index in unravel group `group`
// grows by one and the other coordinates stay. The output's linear index, and its coordinates in other groups, change
// by amounts the structure does not say.
std::vector<int> axis_steps(const KernelIR& ir, int group, int axis) {
  return index_steps(ir, IndexWalk{kUnknownStep, [&](const Instr& coord) {
                                     return coord.slot != group ? kUnknownStep : coord.imm == axis ? 1 : 0;
                                   }});
}

} // namespace

TransposeTiles find_transpose_tiles(const KernelIR& ir) {
  TransposeTiles best;
  if (ir.schedule != Schedule::Elementwise) return best;
  int root_lin = -1;
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (ir.code[k].op == IrOp::LinearIndex) root_lin = int(k);
  if (root_lin < 0) return best;
  std::vector<bool> root_group(ir.unravels.size(), false);
  for (const Instr& in : ir.code)
    if (in.op == IrOp::Coord && in.a == root_lin) root_group[std::size_t(in.slot)] = true;
  // The printer computes a staged load's address (and predicate) for the tile's elements in another order than the
  // body's: from index arithmetic alone.
  const auto dependent = data_dependent_indices(ir);
  auto index_address = [&](const Instr& in) {
    return !dependent[std::size_t(in.a)] && (in.b < 0 || !dependent[std::size_t(in.b)]);
  };
  std::size_t best_count = 0;
  for (std::size_t g = 0; g < ir.unravels.size(); ++g) {
    if (!root_group[g]) continue;
    const int rank = int(ir.unravels[g].size());
    const auto step_last = axis_steps(ir, int(g), rank - 1);
    for (int axis = 0; axis + 1 < rank; ++axis) {
      const auto step = axis_steps(ir, int(g), axis);
      TransposeTiles tiles{int(g), axis, std::vector<bool>(ir.code.size(), false), {}};
      std::size_t count = 0;
      std::int64_t bytes = 0;
      for (std::size_t k = 0; k < ir.code.size(); ++k) {
        const Instr& in = ir.code[k];
        // A load that stays along the last axis (a broadcast column) is one address per warp already.
        if (in.op != IrOp::Load || ir.unit_step_loads[k] || step[std::size_t(in.a)] != 1 ||
            step_last[std::size_t(in.a)] == 0)
          continue;
        if (!index_address(in)) continue;
        const std::int64_t tile =
            std::int64_t(kTransposeTile) * (kTransposeTile + 1) * std::int64_t(itemsize(in.dtype));
        if (bytes + tile > kMaxTransposeTileBytes) continue;
        bytes += tile;
        tiles.staged[k] = true;
        ++count;
      }
      if (count > best_count) {
        best_count = count;
        best = std::move(tiles);
      }
    }
  }
  if (!best.any()) return best;
  // Measured on the H200 (2026-12-03, 64-element tiles): x + x.T of 8192^2 took 0.150 ms with its in-place load read
  // early, 0.163 without; the other layout benchmarks moved less than 0.5%.
  best.early.assign(ir.code.size(), false);
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    if (best.staged[k]) continue;
    best.early[k] = in.op == IrOp::LoadLinear || (in.op == IrOp::Load && index_address(in));
  }
  return best;
}

} // namespace lazyfuse::codegen
