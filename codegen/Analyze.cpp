#include "codegen/Analyze.h"

#include "codegen/RowCache.h"
#include "codegen/VectorAccess.h"

namespace lazyfuse::codegen {

void analyze(KernelIR& ir) {
  ir.unit_step_loads = find_unit_step_loads(ir);
  ir.unit_step_randoms = find_unit_step_randoms(ir);
  ir.row_cache = plan_row_cache(ir);
  ir.analyzed = true;
}

} // namespace lazyfuse::codegen
