#include "codegen/VectorAccess.h"

#include "graph/Random.h"

#include <algorithm>

namespace lazyfuse::codegen {

std::vector<int> index_steps(const KernelIR& ir, const IndexWalk& walk) {
  int root_lin = -1;
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (ir.code[k].op == IrOp::LinearIndex) root_lin = int(k);
  std::vector<int> step(ir.code.size(), kUnknownStep);
  auto known = [](int s) { return s == 0 || s == 1 ? s : kUnknownStep; };
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    auto at = [&](int a) { return a < 0 ? 0 : step[std::size_t(a)]; };
    const int a = at(in.a), b = at(in.b);
    switch (in.op) {
    case IrOp::LinearIndex: step[k] = walk.linear; break;
    case IrOp::LoopBegin: step[k] = 1; break;
    case IrOp::OuterIndex:
    case IrOp::IndexParam:
    case IrOp::IndexConst:
    case IrOp::ScalarParam: step[k] = 0; break;
    case IrOp::Coord:
      if (in.a == root_lin)
        step[k] = walk.root_coord(in);
      else
        step[k] = a == 0 ? 0 : kUnknownStep;
      break;
    case IrOp::IAdd: step[k] = a == kUnknownStep || b == kUnknownStep ? kUnknownStep : known(a + b); break;
    case IrOp::ISub: step[k] = a == kUnknownStep || b == kUnknownStep ? kUnknownStep : known(a - b); break;
    case IrOp::Load:
    case IrOp::IndexToValue:
    case IrOp::Unary:
    case IrOp::Binary:
    case IrOp::Cast:
    case IrOp::Select:
      // A value is the same for every element where everything it is computed from is: a gather index read once
      // per row (an embedding's) makes that row's addresses step by one. Values have no other known step.
      step[k] = a == 0 && b == 0 && at(in.c) == 0 ? 0 : kUnknownStep;
      break;
    default:
      // Products, quotients, predicates and checked indices: invariant when their operands are, else unknown.
      if (is_index_op(in.op) || is_predicate_op(in.op)) step[k] = a == 0 && b == 0 ? 0 : kUnknownStep;
      break;
    }
  }
  return step;
}

namespace {

// The printer's vector path: a thread's elements j of an elementwise kernel (the output's coordinates step like its
// linear index in their last dimension: the vector path keeps a thread's elements in one row, and stay in the
// others), or a reduction loop's r.
std::vector<int> thread_element_steps(const KernelIR& ir) {
  return index_steps(ir, IndexWalk{1, [&](const Instr& coord) {
                                     return std::size_t(coord.imm) + 1 == ir.unravels[std::size_t(coord.slot)].size()
                                                ? 1
                                                : 0;
                                   }});
}

// Whether any instruction is `op`: the walks below cost a pass over thousands of instructions of a first call's
// kernel, most of which have no random draw.
bool has_op(const KernelIR& ir, IrOp op) {
  return std::any_of(ir.code.begin(), ir.code.end(), [op](const Instr& in) { return in.op == op; });
}

} // namespace

std::vector<bool> find_unit_step_loads(const KernelIR& ir) {
  std::vector<bool> loads(ir.code.size(), false);
  if (ir.schedule != Schedule::Elementwise || !has_op(ir, IrOp::Load)) return loads;
  const auto step = thread_element_steps(ir);
  // The printer computes a unit-step load's address, and its predicate per element, ahead of the values: from pure
  // index arithmetic, or through values that do not change with the element (a checked gather index read once per
  // vector), which it computes ahead too. A predicate computed from values that do change could not be.
  const auto dependent = data_dependent_indices(ir);
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    if (in.op != IrOp::Load || step[std::size_t(in.a)] != 1) continue;
    if (in.b >= 0 && dependent[std::size_t(in.b)] && step[std::size_t(in.b)] != 0) continue;
    loads[k] = true;
  }
  return loads;
}

std::vector<bool> find_unit_step_randoms(const KernelIR& ir) {
  std::vector<bool> randoms(ir.code.size(), false);
  // Column and scan kernels print one element at a time.
  if (is_column(ir.schedule) || ir.schedule == Schedule::Scan || !has_op(ir, IrOp::Random)) return randoms;
  const auto step = thread_element_steps(ir);
  // The printer computes a grouped draw's first index ahead of the values from pure index arithmetic only.
  const auto dependent = data_dependent_indices(ir);
  auto is_param = [&](int k) { return ir.code[std::size_t(k)].op == IrOp::ScalarParam; };
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    if (in.op == IrOp::Random && graph::has_group_function(graph::RandomDist(in.fn)) && step[std::size_t(in.a)] == 1 &&
        !dependent[std::size_t(in.a)] && is_param(in.b) && is_param(in.c))
      randoms[k] = true;
  }
  return randoms;
}

} // namespace lazyfuse::codegen
