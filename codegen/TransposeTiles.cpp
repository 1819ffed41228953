#include "codegen/TransposeTiles.h"

#include "codegen/Schedule.h"

#include <lazyfuse/dtype.hpp>

namespace lazyfuse::codegen {

namespace {

constexpr int kUnknown = -1;

// Per instruction: how its index value changes when coordinate `axis` of the output's index in unravel group `group`
// grows by one and the other coordinates stay (0, 1 or kUnknown). The output's linear index, and its coordinates in
// other groups, change by amounts the structure does not say.
std::vector<int> axis_steps(const KernelIR& ir, int root_lin, int group, int axis) {
  std::vector<int> step(ir.code.size(), kUnknown);
  auto known = [](int s) { return s == 0 || s == 1 ? s : kUnknown; };
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    auto at = [&](int a) { return a < 0 ? 0 : step[std::size_t(a)]; };
    const int a = at(in.a), b = at(in.b);
    switch (in.op) {
    case IrOp::LinearIndex: step[k] = kUnknown; break;
    case IrOp::IndexParam:
    case IrOp::IndexConst:
    case IrOp::ScalarParam: step[k] = 0; break;
    case IrOp::Coord:
      if (in.a == root_lin)
        step[k] = in.slot != group ? kUnknown : in.imm == axis ? 1 : 0;
      else
        step[k] = a == 0 ? 0 : kUnknown;
      break;
    case IrOp::IAdd: step[k] = a == kUnknown || b == kUnknown ? kUnknown : known(a + b); break;
    case IrOp::ISub: step[k] = a == kUnknown || b == kUnknown ? kUnknown : known(a - b); break;
    default:
      // Products, quotients, predicates and values: invariant when their operands are, else unknown.
      step[k] = a == 0 && b == 0 && at(in.c) == 0 ? 0 : kUnknown;
      break;
    }
  }
  return step;
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
  std::size_t best_count = 0;
  for (std::size_t g = 0; g < ir.unravels.size(); ++g) {
    if (!root_group[g]) continue;
    const int rank = int(ir.unravels[g].size());
    for (int axis = 0; axis + 1 < rank; ++axis) {
      const auto step = axis_steps(ir, root_lin, int(g), axis);
      const auto step_last = axis_steps(ir, root_lin, int(g), rank - 1);
      TransposeTiles tiles{int(g), axis, std::vector<bool>(ir.code.size(), false)};
      std::size_t count = 0;
      std::int64_t bytes = 0;
      for (std::size_t k = 0; k < ir.code.size(); ++k) {
        const Instr& in = ir.code[k];
        // A load that stays along the last axis (a broadcast column) is one address per warp already.
        if (in.op != IrOp::Load || ir.unit_step_loads[k] || step[std::size_t(in.a)] != 1 ||
            step_last[std::size_t(in.a)] == 0)
          continue;
        if (dependent[std::size_t(in.a)] || (in.b >= 0 && dependent[std::size_t(in.b)])) continue;
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
  return best;
}

} // namespace lazyfuse::codegen
