// Analysis: which loads of an elementwise kernel step by one element with the thread's elements (vector access).
#pragma once

#include "codegen/KernelIR.h"

#include <functional>
#include <vector>

namespace lazyfuse::codegen {

/// A step of an index value that is neither 0 nor 1, or not known.
inline constexpr int kUnknownStep = -1;

/// A walk over a kernel's index space, for index_steps: the step of the output's linear index (LinearIndex) and of
/// each coordinate that unravels it (a root Coord); a reduction loop's r (LoopBegin) steps by one, the outer index
/// stays.
struct IndexWalk {
  int linear = 1;
  std::function<int(const Instr& coord)> root_coord;
};

/// Per instruction of `ir`: how its index value changes (0, 1 or kUnknownStep) in one step of `walk`. Parameters stay;
/// sums and differences add their operands' steps; a loaded or computed value stays where everything it is computed
/// from does (a gather index read once per row); anything else is unknown.
std::vector<int> index_steps(const KernelIR& ir, const IndexWalk& walk);

/// Per instruction of `ir`: true for a Load of an elementwise kernel whose address, in the printer's vector path,
/// is a + j for the thread's element j (a the address of its first element), so that its kElementsPerThread
/// values can be read at once. The step of each index value with j is tracked as 0, 1 or unknown: the coordinates
/// of the output's own linear index step like it in their last dimension (the vector path keeps a thread's
/// elements in one row) and stay in the others; unit strides are structural (Lower), so a view's innermost
/// coordinate reaches its address with step 1. A loaded value steps by 0 where its address (and predicate) does, so
/// an address through a gather index read once per row (an embedding's rows) steps by one too: the printer computes
/// that index, and its check, ahead of the values. All false for reduction kernels.
///
/// May run on any complete IR (after lowering; the IR is not changed). lower() stores the result in
/// KernelIR::unit_step_loads (codegen/Analyze.h).
std::vector<bool> find_unit_step_loads(const KernelIR& ir);

/// Per instruction of `ir`: true for a Random instruction whose element index steps by one with the thread's
/// elements: in an elementwise kernel's vector path a + j (the same step analysis as find_unit_step_loads, but never
/// through a gather index), in a Row or Split reduction's loop X + r for the reduced index r (X invariant in the
/// loop). Its key and counter are kernel parameters and its distribution has a group function
/// (graph::has_group_function): the printer computes four consecutive values with one call where the first index
/// is a multiple of four. All false for the column schedules (a thread's elements there are one column's, not
/// consecutive).
///
/// May run on any complete IR (after lowering; the IR is not changed). lower() stores the result in
/// KernelIR::unit_step_randoms (codegen/Analyze.h).
std::vector<bool> find_unit_step_randoms(const KernelIR& ir);

} // namespace lazyfuse::codegen
