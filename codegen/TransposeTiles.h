// Analysis: the loads of an elementwise kernel that read across the output's rows (a transposed operand), which the
// CUDA printer stages through square tiles of shared memory, so that both they and the rest of the kernel coalesce.
#pragma once

#include "codegen/KernelIR.h"

#include <vector>

namespace lazyfuse::codegen {

/// The tiles (KernelIR::transpose_tiles) of `ir`. None unless it is an elementwise kernel with a Load whose address,
/// computed from index arithmetic alone (no loaded value), steps by one along an axis of the output's shape other
/// than the last, and along the last neither stays (a broadcast column, whose address a warp shares) nor steps by
/// one (the vector path reads that). Where loads step along different axes, the axis (and group) with the most such
/// loads wins, the first in instruction order on a tie; loads stage in instruction order while their tiles fit
/// kMaxTransposeTileBytes. The other loads whose addresses are index arithmetic alone are read early. Deterministic:
/// a function of the structure.
///
/// May run on any complete IR (after lowering; the IR is not changed). lower() stores the result in
/// KernelIR::transpose_tiles (codegen/Analyze.h).
TransposeTiles find_transpose_tiles(const KernelIR& ir);

} // namespace lazyfuse::codegen
