// Divisions inside a reduction kernel's loop by a value computed before the loop: layer norm's division by the row's
// standard deviation, softmax's by the row's sum. The IEEE division costs a reciprocal approximation, its refinement
// and a range check per element, and held layer norm of 8192 x 8192 on the H200 at 90.7% of copy; one reciprocal
// per row and a multiply reached 98.1% (docs/results/2026-12-05e). The multiply alone is not the division's result;
// the CUDA printer instead prints, per element, the product by the reciprocal and two fused corrections, which give
// the correctly rounded quotient where no step overflows or underflows (Markstein's theorem: the reciprocal rounded
// to nearest, a quotient within one unit in the last place, one correction), with the full division for the rest.
// The quotient is the same bits either way, so the CPU backend keeps its plain division.
#pragma once

#include "codegen/KernelIR.h"

#include <vector>

namespace lazyfuse::codegen {

/// Per instruction: a float32 or float64 true division inside a loop of a Row- or Split-schedule kernel (the loops
/// of KernelIR::row_cache) that depends on the loop's index, by a divisor that does not: computed before the loop
/// (a kernel parameter included) or hoisted out of it (RowLoop::hoisted). Column kernels, whose loops print every
/// instruction per element, are left as they are. Runs in codegen::analyze after plan_row_cache.
std::vector<bool> find_loop_invariant_divisions(const KernelIR& ir);

/// Per instruction: the divisor of a division find_loop_invariant_divisions marks, whose reciprocal the printer
/// computes once, right after the divisor itself.
std::vector<bool> reciprocals_of(const KernelIR& ir, const std::vector<bool>& divisions);

} // namespace lazyfuse::codegen
