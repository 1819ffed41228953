// The analyses of kernel IR, run once after lowering.
#pragma once

#include "codegen/KernelIR.h"

namespace lazyfuse::codegen {

/// Runs the analyses (codegen/VectorAccess.h, codegen/RowCache.h, codegen/TransposeTiles.h, codegen/Reroll.h,
/// codegen/ValueDivisors.h) over a
/// complete IR and stores their results in its analysis fields (KernelIR::unit_step_loads,
/// KernelIR::unit_step_randoms, KernelIR::row_cache, KernelIR::transpose_tiles, KernelIR::repeated_steps,
/// KernelIR::value_divisors), setting KernelIR::analyzed. Leaves the structure, the hash and the name unchanged.
/// lower() calls it last; everything that reads the fields (the CUDA printer, the executors) gets lowered IR.
void analyze(KernelIR& ir);

} // namespace lazyfuse::codegen
