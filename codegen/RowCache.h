// Analysis: the vector paths of a Row- or Split-schedule kernel's loops and what a Row kernel's shared-memory row
// cache holds.
#pragma once

#include "codegen/KernelIR.h"

namespace lazyfuse::codegen {

/// Finds, for each loop of a Row- or Split-schedule kernel, which of its loads and stores are at X + r for the reduced
/// index r (read and written in vectors of kElementsPerThread elements where the row is aligned), and which values a
/// later loop needs that an earlier loop with a vector path computed: the earliest such loop stores them in the
/// row cache, the later ones read them back instead of loading and computing them again. Groups of cached values
/// whose lives do not overlap share a region of shared memory. Only values of the element type are cached (loads
/// and arithmetic, not index arithmetic). Split kernels get the vector paths only: their loops are independent and
/// each row is walked by several blocks, so nothing is cached. Empty for other schedules.
///
/// May run on any complete IR (after lowering; the IR is not changed). lower() stores the result in
/// KernelIR::row_cache (codegen/Analyze.h).
RowCache plan_row_cache(const KernelIR& ir);

} // namespace lazyfuse::codegen
