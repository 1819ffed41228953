// Analysis: the repeated steps of an elementwise kernel, which the CUDA printer prints as a loop.
#pragma once

#include "codegen/KernelIR.h"

namespace lazyfuse::codegen {

/// The fewest copies of a step that are printed as a loop: fewer save little text and cost the loop's overhead.
inline constexpr int kMinRepeatedSteps = 8;
/// The most instructions of one step the analysis looks for.
inline constexpr int kMaxStepInstructions = 256;

/// Finds the longest stretch of an elementwise kernel's instructions that is kMinRepeatedSteps or more copies of one
/// step (KernelIR::RepeatedSteps): a time loop recorded without eval(), `x = x * a + b` a thousand times. Copy r + 1
/// computes what copy r computes from copy r's values where copy r read the previous copy's (or, for the first copy,
/// a value computed before the stretch), reads the same values from before the stretch, and reads its own scalar
/// parameters: each copy has the same number of ScalarParam slots, the copies' slots consecutive. Only value
/// instructions repeat (scalar parameters, unary and binary ops, casts, selects: no loads, no index arithmetic), the
/// parameters of plain C types (not the half or complex structs); instructions after the stretch read only its last
/// copy. Returns steps with count 0 where nothing qualifies, and always for other schedules and for kernels with
/// transpose tiles.
///
/// The printed loop reads copy r's parameters from one array parameter (codegen/KernelAbi.h, AbiRole::RepeatedParams)
/// so the kernel's text, and NVRTC's time, are those of one step. The CPU backends run the straight-line IR, which
/// computes the same values in the same order.
///
/// May run on any complete IR (after lowering; the IR is not changed). lower() stores the result in
/// KernelIR::repeated_steps (codegen/Analyze.h), after find_transpose_tiles.
RepeatedSteps find_repeated_steps(const KernelIR& ir);

} // namespace lazyfuse::codegen
