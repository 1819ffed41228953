#include "codegen/KernelIR.h"

#include "graph/Hash.h"
#include "graph/Ops.h"
#include "graph/Random.h"

#include <cstdio>
#include <sstream>

namespace lazyfuse::codegen {

const char* ir_op_name(IrOp op) {
  switch (op) {
  case IrOp::LinearIndex: return "linear_index";
  case IrOp::IndexParam: return "index_param";
  case IrOp::IndexConst: return "index_const";
  case IrOp::IAdd: return "iadd";
  case IrOp::ISub: return "isub";
  case IrOp::IMul: return "imul";
  case IrOp::IDiv: return "idiv";
  case IrOp::IMod: return "imod";
  case IrOp::Coord: return "coord";
  case IrOp::ILt: return "ilt";
  case IrOp::IGe: return "ige";
  case IrOp::IEq: return "ieq";
  case IrOp::PAnd: return "pand";
  case IrOp::Load: return "load";
  case IrOp::LoadLinear: return "load_linear";
  case IrOp::ScalarParam: return "scalar_param";
  case IrOp::IndexToValue: return "index_to_value";
  case IrOp::Unary: return "unary";
  case IrOp::Binary: return "binary";
  case IrOp::Cast: return "cast";
  case IrOp::Select: return "select";
  case IrOp::Store: return "store";
  case IrOp::OuterIndex: return "outer_index";
  case IrOp::LoopBegin: return "loop_begin";
  case IrOp::Accumulate: return "accumulate";
  case IrOp::LoopEnd: return "loop_end";
  case IrOp::Result: return "result";
  case IrOp::StoreAt: return "store_at";
  case IrOp::Random: return "random";
  case IrOp::CheckedIndex: return "checked_index";
  case IrOp::ScanStore: return "scan_store";
  }
  return "?";
}

bool is_index_op(IrOp op) {
  switch (op) {
  case IrOp::LinearIndex:
  case IrOp::OuterIndex:
  case IrOp::LoopBegin:
  case IrOp::IndexParam:
  case IrOp::IndexConst:
  case IrOp::IAdd:
  case IrOp::ISub:
  case IrOp::IMul:
  case IrOp::IDiv:
  case IrOp::IMod:
  case IrOp::Coord:
  case IrOp::CheckedIndex: return true;
  default: return false;
  }
}

bool is_predicate_op(IrOp op) {
  return op == IrOp::ILt || op == IrOp::IGe || op == IrOp::IEq || op == IrOp::PAnd;
}

void KernelIR::finalize() {
  graph::Hasher h;
  h.add(std::uint64_t(schedule)).add(code.size());
  for (auto& i : code) {
    h.add(std::uint64_t(i.op)).add(std::uint64_t(i.dtype)).add(i.fn);
    h.add(std::uint64_t(std::int64_t(i.a))).add(std::uint64_t(std::int64_t(i.b))).add(std::uint64_t(std::int64_t(i.c)));
    h.add(std::uint64_t(std::int64_t(i.slot))).add(std::uint64_t(i.imm));
  }
  h.add(inputs.size());
  for (auto& s : inputs) h.add(std::uint64_t(s.dtype));
  h.add(outputs.size());
  for (auto t : outputs) h.add(std::uint64_t(t));
  h.add(params.size());
  for (auto& p : params) h.add(p.is_index).add(std::uint64_t(p.dtype));
  h.add(unravels.size());
  for (auto& g : unravels) {
    h.add(g.size());
    for (auto d : g) h.add(std::uint64_t(std::int64_t(d)));
  }
  h.add(index32);
  if (register_row_vectors > 0) h.add(std::uint64_t(register_row_vectors)); // (other kernels keep their names)
  if (register_row_partial) h.add(std::uint64_t(1));
  if (transpose_tiles_wide) h.add(std::uint64_t(2));
  hash = h.h;
  char buf[32];
  std::snprintf(buf, sizeof buf, "lf_k%016llx", static_cast<unsigned long long>(hash));
  name = buf;
}

bool has_bounds_checks(const KernelIR& ir) {
  for (const Instr& in : ir.code)
    if (in.op == IrOp::CheckedIndex) return true;
  return false;
}

bool is_divisor_param(const KernelIR& ir, int slot) {
  for (const auto& dims : ir.unravels)
    for (std::size_t k = 1; k < dims.size(); ++k)
      if (ir.code[std::size_t(dims[k])].slot == slot) return true;
  return false;
}

bool has_divisor_params(const KernelIR& ir) {
  for (const auto& dims : ir.unravels)
    if (dims.size() > 1) return true;
  return false;
}

std::vector<bool> data_dependent_indices(const KernelIR& ir) {
  std::vector<bool> dependent(ir.code.size(), false);
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    if (in.op == IrOp::CheckedIndex) {
      dependent[k] = true;
    } else if (is_index_op(in.op) || is_predicate_op(in.op)) {
      for (int a : {in.a, in.b, in.c})
        if (a >= 0 && dependent[std::size_t(a)]) dependent[k] = true;
    }
  }
  return dependent;
}

std::int64_t RowCache::bytes_per_element() const {
  std::int64_t bytes = 0;
  for (DType t : region_type) bytes += std::int64_t(itemsize(t));
  return bytes;
}

std::string to_string(const KernelIR& k) {
  std::ostringstream os;
  os << "kernel " << k.name << " (" << (k.index32 ? "int32" : "int64") << " indices, " << k.inputs.size() << " inputs, "
     << k.outputs.size() << " outputs, " << k.params.size() << " params";
  if (k.register_row_vectors > 0)
    os << ", rows in registers: " << k.register_row_vectors << " vectors a thread"
       << (k.register_row_partial ? ", the last partial" : "");
  if (k.transpose_tiles.any())
    os << ", tiles across axis " << k.transpose_tiles.axis << " of unravel group " << k.transpose_tiles.group
       << (k.transpose_tiles_wide ? " (wide)" : "");
  os << ")\n";
  for (std::size_t n = 0; n < k.code.size(); ++n) {
    const Instr& i = k.code[n];
    os << "  %" << n << " = " << ir_op_name(i.op);
    if (i.op == IrOp::Unary) os << "." << graph::name_of(graph::UnaryOp(i.fn));
    if (i.op == IrOp::Binary) os << "." << graph::name_of(graph::BinaryOp(i.fn));
    if (i.op == IrOp::Accumulate || i.op == IrOp::Result || i.op == IrOp::ScanStore)
      os << "." << graph::name_of(graph::ReduceOp(i.fn));
    if (i.op == IrOp::Random) os << "." << graph::name_of(graph::RandomDist(i.fn));
    if (!is_index_op(i.op) && !is_predicate_op(i.op)) os << ":" << dtype_name(i.dtype);
    for (int a : {i.a, i.b, i.c})
      if (a >= 0) os << " %" << a;
    if (i.slot >= 0) os << " [" << i.slot << "]";
    if (i.op == IrOp::IndexConst || i.op == IrOp::Coord) os << " " << i.imm;
    if (i.op == IrOp::Random && i.imm >= 0) os << " %" << i.imm;
    os << "\n";
  }
  return os.str();
}

int printed_instruction_count(const KernelIR& ir) {
  const RepeatedSteps& r = ir.repeated_steps;
  return int(ir.code.size()) - (r.any() ? r.period * (r.count - 1) : 0);
}

} // namespace lazyfuse::codegen
