// Scratch (not built; run from examples/): the kernels a too-long plan is split into, rendered for ptxas.
#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include "runtime/Materialize.h"
#include <cstdio>
#include <fstream>
#include <lazyfuse/lazyfuse.hpp>
using namespace lazyfuse;
using lazyfuse::detail::graph_node;

static void split(const std::string& name, const Array& root) {
  fusion::PartitionOptions opt;
  opt.loops_for_repeated_steps = true;
  std::vector<graph::NodePtr> roots{graph_node(root)};
  auto plans = fusion::partition(roots, opt);
  int kernel = 0;
  for (std::size_t i = 0; i < plans.size();) {
    auto plan = plans[i++];
    auto k = codegen::lower(plan);
    int printed = codegen::printed_instruction_count(k.ir);
    if (printed > codegen::kMaxPrintedInstructions && opt.max_nodes > 8) {
      opt.max_nodes /= 2;
      plans = fusion::partition(roots, opt);
      i = 0;
      continue;
    }
    std::ofstream("/tmp/regs/split_" + name + "_" + std::to_string(kernel++) + ".cu") << codegen::render_cuda(k.ir);
    std::printf("%s kernel %d: %d instructions (budget %d)\n", name.c_str(), kernel - 1, printed, opt.max_nodes);
    runtime::materialize(plan.outputs);
  }
}

int main() {
  Array g = random::uniform(-1, 1, {1024, 1024}, DType::Float32).eval();
  for (int r : {3, 4, 6}) {
    Array s = g * 0.0f;
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) s = s + roll(roll(g, dy, 0), dx, 1) * float(1 + dy + 2 * dx);
    split("stencil_r" + std::to_string(r), s);
  }
}
