// The CPU backend's scans: the second half of running a scan kernel (Schedule::Scan) on the host.
#pragma once

#include "codegen/KernelIR.h"

namespace lazyfuse::runtime {

/// Replaces the scan's input, already written to args.outputs[0] by the kernel's elementwise part, with its inclusive
/// scan, in codegen/Schedule.h's scan order (the GPU kernel's, so that both give the same bits), on up to `threads`
/// threads of ThreadPool::instance(). The result does not depend on `threads`. Call from run_on_cpu only.
void scan_in_place(const codegen::KernelIR& ir, const codegen::KernelArgs& args, int threads);

} // namespace lazyfuse::runtime
