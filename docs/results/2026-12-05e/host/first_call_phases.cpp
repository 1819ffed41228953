// Session 24's scratch program: where a first call of issue 19's 1,000-step loop goes (record, partition, lower,
// print), three passes in one process (the first in a fresh process, the others warm, each with a new scalar so
// that nothing is found again), with getrusage's minor page faults. Built from the repository root against the
// default preset's shared libraries:
//   g++ -std=c++20 -O2 -I include -I . -I build/default -I build/default/include \
//     docs/results/2026-12-05e/host/first_call_phases.cpp -o /tmp/first_call_phases \
//     -Lbuild/default/api -Lbuild/default/runtime -Lbuild/default/codegen -Lbuild/default/fusion \
//     -Lbuild/default/graph -llazyfuse -llazyfuse_runtime -llazyfuse_codegen -llazyfuse_fusion -llazyfuse_graph \
//     -Wl,-rpath,build/default/api:build/default/runtime:build/default/codegen:build/default/fusion:build/default/graph
//   /tmp/first_call_phases   (from the repository root; LD_LIBRARY_PATH=<folder> runs it on another graph library)
#include <lazyfuse/lazyfuse.hpp>
#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include <sys/resource.h>
#include <chrono>
#include <iostream>
using namespace lazyfuse;
using lazyfuse::detail::graph_node;
static long faults() { rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_minflt; }
int main() {
  std::vector<float> v(1 << 20, 0.5f);
  auto x = asarray(v, {1 << 20}).eval();
  for (int pass = 0; pass < 3; ++pass) {
  auto t0 = std::chrono::steady_clock::now(); long f0 = faults();
  Array y = x;
  for (int k = 0; k < 1000; ++k) y = y * (0.999f + 1e-6f * float(pass)) + 0.001f;
  auto t1 = std::chrono::steady_clock::now(); long f1 = faults();
  auto plans = fusion::partition({graph_node(y)}, {});
  auto t2 = std::chrono::steady_clock::now(); long f2 = faults();
  auto k = codegen::lower(plans[0]);
  auto t3 = std::chrono::steady_clock::now(); long f3 = faults();
  auto src = codegen::render_cuda(k.ir);
  auto t4 = std::chrono::steady_clock::now(); long f4 = faults();
  auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
  std::cout << "record " << us(t0, t1) << " us " << f1 - f0 << " faults; partition " << us(t1, t2) << " us " << f2 - f1
            << "; lower " << us(t2, t3) << " us " << f3 - f2 << "; render " << us(t3, t4) << " us " << f4 - f3 << " (" << src.size() << " bytes)\n";
  }
}
