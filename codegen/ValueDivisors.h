// Divisions of values by a kernel-wide scalar: `arange(n) * 3 % m` with m a run-time scalar. A 64-bit division
// instruction does not exist on the GPU; NVCC calls a routine of about seventy instructions, which dominates a kernel
// that generates its data. Such a kernel instead takes multiply-shift constants of the divisor's magnitude, computed
// once per launch on the host (codegen/KernelAbi.h: AbiRole::ValueDivisor), and divides with a high multiply, an
// add and a shift.
#pragma once

#include "codegen/KernelIR.h"

#include <vector>

namespace lazyfuse::codegen {

/// The slots of the parameters that `ir` divides values by: the right operand of a floor division or a remainder of
/// signed 32- or 64-bit integers that is a ScalarParam of a slot outside the repeated steps (whose values the kernel
/// reads per step). Ascending, each once. Runs in codegen::analyze after find_repeated_steps.
std::vector<int> find_value_divisors(const KernelIR& ir);

/// The divisor's slot when `in` divides by one of `ir.value_divisors`, else -1.
int value_divisor_of(const KernelIR& ir, const Instr& in);

} // namespace lazyfuse::codegen
