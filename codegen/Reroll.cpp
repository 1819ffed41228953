#include "codegen/Reroll.h"

#include "graph/Hash.h"
#include "graph/Periodic.h"

#include <algorithm>

namespace lazyfuse::codegen {

namespace {

bool repeatable(IrOp op) {
  return op == IrOp::ScalarParam || op == IrOp::Unary || op == IrOp::Binary || op == IrOp::Cast || op == IrOp::Select;
}

// Parameters the loop reads from an array (codegen/KernelAbi.h): types whose kernel type is a C type, whose size is
// their alignment, so the host lays the array out as the compiler does.
bool plain_param_type(DType t) {
  return !is_complex(t) && !is_half(t);
}

// The instructions an elementwise instruction reads (a Random also its parameters).
template <class F> void for_each_operand(const Instr& in, F&& f) {
  for (int a : {in.a, in.b, in.c})
    if (a >= 0) f(a);
  if (in.op == IrOp::Random) {
    if (in.slot >= 0) f(in.slot);
    if (in.imm >= 0) f(int(in.imm));
  }
}

// Fills in what the printer needs of a periodic stretch that longest_periodic_run found, or returns false where the
// stretch does not qualify: the first copy reads further back than one copy, a value from before the stretch is
// read where the stretch's own is, the parameters are not consecutive, or code after the stretch reads a copy
// other than the last.
bool describe(const KernelIR& ir, RepeatedSteps& s) {
  const int P = s.period, S = s.start, E = s.end();
  s.initial.assign(std::size_t(P), -1);
  s.exported.assign(std::size_t(P), false);
  int first = -1, last = -1, params = 0;
  for (int k = 0; k < P; ++k) {
    const Instr& x = ir.code[std::size_t(S + k)];
    if (x.op == IrOp::ScalarParam) {
      if (!plain_param_type(x.dtype)) return false;
      first = first < 0 ? x.slot : std::min(first, x.slot);
      last = std::max(last, x.slot);
      ++params;
    }
    const Instr& y = ir.code[std::size_t(S + P + k)];
    const int xs[3] = {x.a, x.b, x.c}, ys[3] = {y.a, y.b, y.c};
    for (int o = 0; o < 3; ++o) {
      const int xa = xs[o];
      if (xa < 0) continue;
      if (xa == ys[o]) {
        if (xa >= S) return false; // every copy reads one value of the stretch: not a loop
        continue;
      }
      if (xa >= S) continue; // an earlier instruction of the same copy
      if (xa < S - P) return false;
      const int carried = xa + P - S;
      if (ir.code[std::size_t(xa)].dtype != ir.code[std::size_t(S + carried)].dtype) return false;
      s.initial[std::size_t(carried)] = xa;
    }
  }
  if (params > 0 && last - first + 1 != params) return false;
  s.first_param = params > 0 ? first : 0;
  s.params_per_step = params;
  for (std::size_t n = std::size_t(E); n < ir.code.size(); ++n) {
    bool ok = true;
    for_each_operand(ir.code[n], [&](int a) {
      if (a < S || a >= E) return;
      if (a < E - P)
        ok = false;
      else
        s.exported[std::size_t(a - (E - P))] = true;
    });
    if (!ok) return false;
  }
  return true;
}

} // namespace

RepeatedSteps find_repeated_steps(const KernelIR& ir) {
  RepeatedSteps none;
  if (ir.schedule != Schedule::Elementwise || ir.transpose_tiles.any()) return none;
  const int size = int(ir.code.size());
  // ScalarParams among the first i instructions: copy r + 1's parameter slots follow copy r's by the number of
  // parameters in between.
  std::vector<int> params_before(std::size_t(size) + 1, 0);
  for (int i = 0; i < size; ++i)
    params_before[std::size_t(i) + 1] =
        params_before[std::size_t(i)] + (ir.code[std::size_t(i)].op == IrOp::ScalarParam);
  auto signature = [&](int i) {
    const Instr& in = ir.code[std::size_t(i)];
    if (!repeatable(in.op)) return std::uint64_t(i) << 8 | 0xff; // never equal to another instruction's
    graph::FastHasher h;
    h.add(std::uint64_t(in.op) << 16 | std::uint64_t(in.dtype) << 8 | in.fn);
    h.add(std::uint64_t(in.imm));
    return h.value();
  };
  auto repeats = [&](int i, int p) {
    const Instr& x = ir.code[std::size_t(i)];
    const Instr& y = ir.code[std::size_t(i + p)];
    if (!repeatable(x.op) || x.op != y.op || x.dtype != y.dtype || x.fn != y.fn || x.imm != y.imm) return false;
    if (x.op == IrOp::ScalarParam)
      return y.slot - x.slot == params_before[std::size_t(i + p)] - params_before[std::size_t(i)] &&
             ir.params[std::size_t(x.slot)] == ir.params[std::size_t(y.slot)];
    const int xs[3] = {x.a, x.b, x.c}, ys[3] = {y.a, y.b, y.c};
    for (int o = 0; o < 3; ++o)
      if (!(xs[o] == ys[o] || (xs[o] >= 0 && ys[o] == xs[o] + p))) return false;
    return true;
  };
  const graph::PeriodicRun run =
      graph::longest_periodic_run(size, kMaxStepInstructions, kMinRepeatedSteps, signature, repeats);
  RepeatedSteps s;
  s.start = run.start;
  s.period = run.period;
  s.count = run.count;
  // The streak may begin with a copy that reads further back than the stretch allows (its first value from two
  // copies before): the copies after it may still qualify.
  for (int drop = 0; drop < 2 && s.count >= kMinRepeatedSteps; ++drop) {
    if (describe(ir, s)) return s;
    s.start += s.period;
    --s.count;
  }
  return none;
}

} // namespace lazyfuse::codegen
