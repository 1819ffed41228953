// Analysis: the loads of an elementwise kernel that read across the output's rows (a transposed operand), which the
// CUDA printer stages through square tiles of shared memory, so that both they and the rest of the kernel coalesce.
#pragma once

#include "codegen/KernelIR.h"

#include <vector>

namespace lazyfuse::codegen {

/// The tiles (KernelIR::transpose_tiles) of `ir`: none unless it is an elementwise kernel with a Load whose address
/// steps by one along an axis of the output's shape other than the last and changes along the last (not by one: a
/// broadcast column, whose address a warp shares, stages nothing), computed from index arithmetic alone (no loaded
/// value). Where loads step along different axes, the axis (and group) with the most such loads wins, the first in
/// instruction order on a tie; loads stage in instruction order while their tiles fit kMaxTransposeTileBytes.
/// Deterministic: a function of the structure.
///
/// May run on any complete IR (after lowering; the IR is not changed). lower() stores the result in
/// KernelIR::transpose_tiles (codegen/Analyze.h).
TransposeTiles find_transpose_tiles(const KernelIR& ir);

} // namespace lazyfuse::codegen
