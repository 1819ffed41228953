// The kernels of gathers as the CUDA printer writes them, compiled by NVRTC (no device needed): the checked index
// (IrOp::CheckedIndex) in every schedule the printer has (the elementwise vector path and tail, a row reduction with
// its row cache, a full reduction), and the error word as the kernel's last parameter.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/KernelAbi.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"

#include <gtest/gtest.h>

#include <vector>

using namespace lazyfuse;
using lazyfuse::detail::graph_node;

namespace {

Array ramp(Shape shape, DType t = DType::Float32) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return (arange(n).astype(t) * 0.5).reshape(shape).astype(t).eval();
}

codegen::LoweredKernel lowered_last(const Array& result) {
  auto plans = fusion::partition({graph_node(result)}, {});
  for (std::size_t p = 0; p + 1 < plans.size(); ++p) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  return codegen::lower(plans.back());
}

TEST(GatherCodegen, KernelsWithCheckedIndicesCompile) {
  Array x = ramp({1000});
  Array idx = asarray<std::int64_t>({1, -2, 7, 999, 0, 3, 5, 8, 9, 10}).eval();
  Array idx32 = asarray<std::int32_t>({1, 2}).eval();
  Array uidx = asarray<std::uint16_t>({1, 2, 3}).eval();
  Array table = ramp({300, 64});
  Array rows = asarray<std::int64_t>({5, 299, 0, 17}).eval();
  std::vector<Array> samples;
  samples.push_back(x(idx) * 3.0f - 1.0f);                             // elementwise, index read linearly
  samples.push_back(take(x, arange(4096) * 3 % 1000));                 // a lazy index array
  samples.push_back(table(rows) * 2.0f);                               // rows: the index invariant along a row
  samples.push_back(table(all_of, idx32) + table(all_of, 0, newaxis)); // a column gather beside a view
  samples.push_back(x(uidx).astype(DType::Float64));                   // unsigned indices
  samples.push_back(sum(take(x, arange(5000) % 1000)));                // inside a full reduction
  Array g = table(rows);
  Array e = exp(g - max(g, 1, true));
  samples.push_back(e / sum(e, 1, true)); // softmax of gathered rows: row reductions, the row cache
  samples.push_back(sum(take_along_axis(table, asarray<std::int64_t>({{3, 1}}).eval(), 1), 0)); // column reduction
  samples.push_back(x.at(slice(2, 6)).set(x(asarray<std::int64_t>({9, 8, 7, 6}).eval())));      // under a predicate
  // A constant checked index beside an array one, the innermost axis contiguous: the load's address steps by one
  // with the vector path's element but goes through a checked index (found by the random programs on the H200,
  // where its address was used before it was computed).
  Array grid = ramp({6, 1, 1, 4}, DType::Float64);
  samples.push_back(concatenate(
      {grid(-3, asarray<std::int64_t>({{0, -1, 0}}).eval()) * 4.0, full({1, 3, 1, 3}, -2.0, DType::Complex64)}, -1));
  codegen::CompileOptions opt;
  opt.arch = 90;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    auto low = lowered_last(samples[k]);
    ASSERT_TRUE(codegen::has_bounds_checks(low.ir)) << "sample " << k;
    EXPECT_FALSE(low.checks.empty());
    const auto abi = codegen::kernel_abi(low.ir);
    EXPECT_EQ(abi.back().role, codegen::AbiRole::ErrorWord) << "sample " << k;
    const std::string src = codegen::render_cuda(low.ir);
    EXPECT_NE(src.find("unsigned int* __restrict__ lf_error"), std::string::npos);
    EXPECT_NE(src.find("atomicOr(lf_error"), std::string::npos);
    EXPECT_EQ(codegen::render_cuda(low.ir), src) << "deterministic text";
    try {
      auto compiled = codegen::compile_cuda(src, low.ir.name, opt);
      EXPECT_FALSE(compiled.image.empty());
    } catch (const CompileError& err) {
      ADD_FAILURE() << "sample " << k << " failed to compile:\n" << err.what() << "\n" << codegen::numbered_source(src);
    }
  }
}

// An embedding's rows are read four elements at a time (the row's index loaded and checked ahead of the values),
// and a failed check is collected per thread and reported by one atomic at the kernel's end, so that no branch
// stands between a random gather's loads.
TEST(GatherCodegen, GatheredRowsAreReadInVectorsAndChecksReportOnce) {
  Array table = ramp({300, 64});
  Array rows = asarray<std::int64_t>({5, 299, 0, 17}).eval();
  Array x = ramp({1000});
  Array idx = asarray<std::int64_t>({1, -2, 7, 999, 0, 3, 5, 8}).eval();
  for (const Array& sample : {table(rows) * 2.0f, x(idx) * 1.5f - 0.25f}) {
    auto low = lowered_last(sample);
    const std::string src = codegen::render_cuda(low.ir);
    std::size_t atomics = 0;
    for (auto at = src.find("atomicOr("); at != std::string::npos; at = src.find("atomicOr(", at + 1)) ++atomics;
    EXPECT_EQ(atomics, 1u) << src;
    EXPECT_NE(src.find("if (lf_err != 0u) atomicOr(lf_error, lf_err);\n}"), std::string::npos) << src;
  }
  auto embedding = lowered_last(table(rows) * 2.0f);
  std::size_t vector_loads = 0;
  for (std::size_t k = 0; k < embedding.ir.code.size(); ++k) vector_loads += embedding.ir.unit_step_loads[k];
  EXPECT_EQ(vector_loads, 1u) << codegen::to_string(embedding.ir);
  EXPECT_NE(codegen::render_cuda(embedding.ir).find("lf_gv"), std::string::npos);
}

TEST(GatherCodegen, KernelsWithoutGathersTakeNoErrorWord) {
  Array x = ramp({100});
  auto low = lowered_last(x * 2.0f + 1.0f);
  EXPECT_FALSE(codegen::has_bounds_checks(low.ir));
  EXPECT_EQ(codegen::render_cuda(low.ir).find("lf_error"), std::string::npos);
}

} // namespace
