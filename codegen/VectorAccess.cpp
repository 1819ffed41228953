#include "codegen/VectorAccess.h"

namespace lazyfuse::codegen {

std::vector<bool> find_unit_step_loads(const KernelIR& ir) {
  std::vector<bool> loads(ir.code.size(), false);
  if (ir.schedule != Schedule::Elementwise) return loads;
  int root_lin = -1;
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (ir.code[k].op == IrOp::LinearIndex) root_lin = int(k);
  constexpr int kUnknown = -1;
  std::vector<int> step(ir.code.size(), kUnknown);
  auto known = [](int s) { return s == 0 || s == 1 ? s : kUnknown; };
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    auto at = [&](int a) { return a < 0 ? 0 : step[std::size_t(a)]; };
    const int a = at(in.a), b = at(in.b);
    switch (in.op) {
    case IrOp::LinearIndex: step[k] = 1; break;
    case IrOp::IndexParam:
    case IrOp::IndexConst:
    case IrOp::ScalarParam: step[k] = 0; break;
    case IrOp::Coord:
      if (in.a == root_lin)
        step[k] = std::size_t(in.imm) + 1 == ir.unravels[std::size_t(in.slot)].size() ? 1 : 0;
      else
        step[k] = a == 0 ? 0 : kUnknown;
      break;
    case IrOp::IAdd: step[k] = a == kUnknown || b == kUnknown ? kUnknown : known(a + b); break;
    case IrOp::ISub: step[k] = a == kUnknown || b == kUnknown ? kUnknown : known(a - b); break;
    default:
      // Products, quotients and predicates: invariant when their operands are, else unknown.
      if (is_index_op(in.op) || is_predicate_op(in.op)) step[k] = a == 0 && b == 0 ? 0 : kUnknown;
      break;
    }
    if (in.op == IrOp::Load && step[std::size_t(in.a)] == 1) loads[k] = true;
  }
  return loads;
}

} // namespace lazyfuse::codegen
