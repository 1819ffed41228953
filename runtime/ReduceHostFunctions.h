// The reductions' host functions that the LLVM CPU code generator's kernels call (runtime/LlvmCodegen.cpp): a column's
// fold, a counter's finish and absorb, and the arg reductions' steps, by symbol name. They run the interpreter's own
// tree code (runtime/ReduceTree.h), so compiled and interpreted sums have the same bits.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lazyfuse::runtime {

/// Every reduction's host functions as (symbol, address): lfhost_reduce_fold_<op>_<type>,
/// lfhost_reduce_finish_<op>_<type>, lfhost_reduce_absorb_<op>_<type>, lfhost_arg_init_<op>_<type>,
/// lfhost_arg_fold_<op>_<type>, for every (op, type) the reduce and type tables allow. The column folds are the
/// builds for this CPU's vector unit (AVX2 where it has one), chosen here at run time.
std::vector<std::pair<std::string, void*>> reduction_host_functions();

/// The instruction set the column folds of reduction_host_functions() were built for: "avx2" or "baseline".
const char* reduction_fold_isa();

} // namespace lazyfuse::runtime
