#include "codegen/Analyze.h"

#include "codegen/Reroll.h"
#include "codegen/RowCache.h"
#include "codegen/TransposeTiles.h"
#include "codegen/ValueDivisors.h"
#include "codegen/VectorAccess.h"

namespace lazyfuse::codegen {

void analyze(KernelIR& ir) {
  ir.unit_step_loads = find_unit_step_loads(ir);
  ir.unit_step_randoms = find_unit_step_randoms(ir);
  ir.row_cache = plan_row_cache(ir);
  ir.transpose_tiles = find_transpose_tiles(ir); // reads unit_step_loads
  ir.repeated_steps = find_repeated_steps(ir);   // reads transpose_tiles
  ir.value_divisors = find_value_divisors(ir);   // reads repeated_steps
  ir.analyzed = true;
}

} // namespace lazyfuse::codegen
