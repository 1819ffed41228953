#include "codegen/LoopInvariantDivisors.h"

#include "graph/Ops.h"

namespace lazyfuse::codegen {

std::vector<bool> find_loop_invariant_divisions(const KernelIR& ir) {
  std::vector<bool> marked(ir.code.size(), false);
  const std::vector<RowLoop>& loops = ir.row_cache.loops;
  auto in_a_loop = [&](std::size_t k) {
    for (const RowLoop& L : loops)
      if (k > L.begin && k < L.end) return true;
    return false;
  };
  for (const RowLoop& L : loops)
    for (std::size_t k = L.begin + 1; k < L.end; ++k) {
      const Instr& in = ir.code[k];
      if (in.op != IrOp::Binary || graph::BinaryOp(in.fn) != graph::BinaryOp::TrueDivide || !L.varies[k]) continue;
      if (in.dtype != DType::Float32 && in.dtype != DType::Float64) continue;
      const std::size_t divisor = std::size_t(in.b);
      marked[k] = !L.varies[divisor] && (L.hoisted[divisor] || !in_a_loop(divisor));
    }
  return marked;
}

std::vector<bool> reciprocals_of(const KernelIR& ir, const std::vector<bool>& divisions) {
  std::vector<bool> wanted(ir.code.size(), false);
  for (std::size_t k = 0; k < divisions.size(); ++k)
    if (divisions[k]) wanted[std::size_t(ir.code[k].b)] = true;
  return wanted;
}

} // namespace lazyfuse::codegen
