#include "codegen/ValueDivisors.h"

#include "graph/Ops.h"

#include <algorithm>

namespace lazyfuse::codegen {

namespace {

// The slot of `in`'s right operand when `in` is a signed 32- or 64-bit floor division or remainder by a ScalarParam
// that is not a step's, else -1.
int candidate_slot(const KernelIR& ir, const Instr& in) {
  if (in.op != IrOp::Binary || (in.dtype != DType::Int64 && in.dtype != DType::Int32)) return -1;
  const auto op = graph::BinaryOp(in.fn);
  if (op != graph::BinaryOp::FloorDivide && op != graph::BinaryOp::Remainder) return -1;
  const Instr& divisor = ir.code[std::size_t(in.b)];
  if (divisor.op != IrOp::ScalarParam || divisor.dtype != in.dtype) return -1;
  const RepeatedSteps& steps = ir.repeated_steps;
  const int end_step_params = steps.first_param + steps.params_per_step * steps.count;
  if (divisor.slot >= steps.first_param && divisor.slot < end_step_params) return -1;
  return divisor.slot;
}

} // namespace

std::vector<int> find_value_divisors(const KernelIR& ir) {
  std::vector<int> slots;
  for (const Instr& in : ir.code)
    if (const int slot = candidate_slot(ir, in); slot >= 0) slots.push_back(slot);
  std::sort(slots.begin(), slots.end());
  slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
  return slots;
}

int value_divisor_of(const KernelIR& ir, const Instr& in) {
  const int slot = candidate_slot(ir, in);
  return slot >= 0 && std::binary_search(ir.value_divisors.begin(), ir.value_divisors.end(), slot) ? slot : -1;
}

} // namespace lazyfuse::codegen
