// The analyses of kernel IR (codegen/VectorAccess.h, codegen/RowCache.h, codegen/TransposeTiles.h) on small
// hand-written IRs, and their results as lower() stores them.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"

#include "codegen/Analyze.h"
#include "codegen/Lower.h"
#include "codegen/RowCache.h"
#include "codegen/Schedule.h"
#include "codegen/TransposeTiles.h"
#include "codegen/VectorAccess.h"
#include "graph/Ops.h"
#include "graph/Random.h"

#include <gtest/gtest.h>

#include <algorithm>

using lazyfuse::detail::graph_node;

using namespace lazyfuse;
using codegen::Instr;
using codegen::IrOp;
using codegen::KernelIR;
using codegen::RowLoop;

namespace {

// Appends instructions to an IR and returns their ids.
struct IrBuilder {
  KernelIR ir;
  int add(IrOp op, int a = -1, int b = -1, int slot = -1, std::int64_t imm = 0, DType t = DType::Int64,
          std::uint8_t fn = 0, int c = -1) {
    Instr in;
    in.op = op;
    in.dtype = t;
    in.fn = fn;
    in.a = a;
    in.b = b;
    in.c = c;
    in.slot = slot;
    in.imm = imm;
    ir.code.push_back(in);
    return int(ir.code.size()) - 1;
  }
  int param() {
    ir.params.push_back({});
    return add(IrOp::IndexParam, -1, -1, int(ir.params.size()) - 1);
  }
  int load(int address, DType t = DType::Float32) {
    ir.inputs.push_back({t});
    return add(IrOp::Load, address, -1, int(ir.inputs.size()) - 1, 0, t);
  }
};

std::uint8_t op(graph::ReduceOp r) {
  return std::uint8_t(r);
}

} // namespace

// An elementwise kernel over a 2-d output: loads at the linear index and at row * stride + column step by one
// with the thread's elements (their vectors are read at once); loads at the row start (a broadcast column), at
// column * stride (a transposed view) and at a coordinate of another index do not.
TEST(CodegenAnalyses, UnitStepLoadsFollowTheStepOfEachIndex) {
  IrBuilder b;
  const int i = b.add(IrOp::LinearIndex);
  const int rows = b.param(), cols = b.param(), stride = b.param();
  b.ir.unravels = {{rows, cols}};
  const int row = b.add(IrOp::Coord, i, -1, 0, 0), col = b.add(IrOp::Coord, i, -1, 0, 1);
  const int at_i = b.load(i);
  const int row_major = b.load(b.add(IrOp::IAdd, b.add(IrOp::IMul, row, stride), col));
  const int row_start = b.load(b.add(IrOp::IMul, row, stride));
  const int transposed = b.load(b.add(IrOp::IMul, col, stride));
  const int other = b.load(b.add(IrOp::Coord, b.add(IrOp::IAdd, i, i), -1, 0, 1));
  const int backwards = b.load(b.add(IrOp::ISub, stride, col));
  const int predicated = b.add(IrOp::Load, col, b.add(IrOp::ILt, col, cols), 0, 0, DType::Float32);
  b.ir.outputs = {DType::Float32};
  b.add(IrOp::Store, at_i, -1, 0, 0, DType::Float32);
  b.ir.finalize();

  const std::vector<bool> unit = codegen::find_unit_step_loads(b.ir);
  ASSERT_EQ(unit.size(), b.ir.code.size());
  EXPECT_TRUE(unit[std::size_t(at_i)]);
  EXPECT_TRUE(unit[std::size_t(row_major)]);
  EXPECT_FALSE(unit[std::size_t(row_start)]);
  EXPECT_FALSE(unit[std::size_t(transposed)]);
  EXPECT_FALSE(unit[std::size_t(other)]);
  EXPECT_FALSE(unit[std::size_t(backwards)]); // steps by -1
  EXPECT_TRUE(unit[std::size_t(predicated)]); // the predicate does not change the address's step
  std::size_t loads = 0;
  for (std::size_t k = 0; k < unit.size(); ++k) loads += unit[k] && b.ir.code[k].op != IrOp::Load;
  EXPECT_EQ(loads, 0u) << "only Load instructions are marked";

  b.ir.schedule = codegen::Schedule::Row;
  for (bool u : codegen::find_unit_step_loads(b.ir)) EXPECT_FALSE(u) << "reduction kernels have no vector path";
}

// A row gather (an embedding's): the row's index is loaded once per output row and checked, so the gathered row's
// address still steps by one with the thread's elements and is read in vectors. An index loaded at the element
// itself (a random gather) changes with every element, and so does what it addresses. A draw at a gathered index is
// never grouped: the printer computes a group's first index from pure index arithmetic only.
TEST(CodegenAnalyses, UnitStepLoadsGoThroughAGatherIndexReadOncePerRow) {
  IrBuilder b;
  const int i = b.add(IrOp::LinearIndex);
  const int rows = b.param(), cols = b.param(), table_rows = b.param();
  b.ir.unravels = {{rows, cols}};
  const int row = b.add(IrOp::Coord, i, -1, 0, 0), col = b.add(IrOp::Coord, i, -1, 0, 1);
  const int row_index = b.load(row, DType::Int64);
  const int checked_row = b.add(IrOp::CheckedIndex, row_index, table_rows, 0);
  const int row_start = b.add(IrOp::IMul, checked_row, cols);
  const int embedding = b.load(b.add(IrOp::IAdd, row_start, col));
  const int element_index = b.load(i, DType::Int64);
  const int checked_element = b.add(IrOp::CheckedIndex, element_index, table_rows, 1);
  const int random_gather = b.load(checked_element);
  const int shifted = b.load(b.add(IrOp::IAdd, checked_element, col));
  const int key = b.add(IrOp::ScalarParam, -1, -1, 0, 0, DType::UInt64);
  auto random_at = [&](int index) {
    return b.add(IrOp::Random, index, key, -1, -1, DType::Float32, std::uint8_t(graph::RandomDist::Random), key);
  };
  const int draw = random_at(b.add(IrOp::IAdd, row_start, col));
  const int pure_draw = random_at(b.add(IrOp::IAdd, b.add(IrOp::IMul, row, cols), col));
  b.ir.outputs = {DType::Float32};
  b.add(IrOp::Store, embedding, -1, 0, 0, DType::Float32);
  b.ir.finalize();

  const std::vector<bool> unit = codegen::find_unit_step_loads(b.ir);
  EXPECT_TRUE(unit[std::size_t(embedding)]);
  EXPECT_FALSE(unit[std::size_t(row_index)]) << "the same address for every element of a row";
  EXPECT_FALSE(unit[std::size_t(random_gather)]);
  EXPECT_FALSE(unit[std::size_t(shifted)]) << "its index changes with the element";
  const std::vector<bool> grouped = codegen::find_unit_step_randoms(b.ir);
  EXPECT_FALSE(grouped[std::size_t(draw)]);
  EXPECT_TRUE(grouped[std::size_t(pure_draw)]) << "the same address computed without the gather";
}

// A Row kernel of two loops over one row (x - max(x)): the first reads x[o * stride + r] in vectors and stores it
// in the row cache, the second reads it back instead of loading it. One region of 4 bytes.
TEST(CodegenAnalyses, RowCacheStoresWhatALaterLoopReadsAgain) {
  IrBuilder b;
  b.ir.schedule = codegen::Schedule::Row;
  const int o = b.add(IrOp::OuterIndex);
  const int len = b.param(), stride = b.param();
  const int row = b.add(IrOp::IMul, o, stride);
  b.ir.inputs.push_back({DType::Float32});
  // Loop 0: the max of the row.
  const int r0 = b.add(IrOp::LoopBegin, len, -1, 0);
  const int x0 = b.add(IrOp::Load, b.add(IrOp::IAdd, row, r0), -1, 0, 0, DType::Float32);
  b.add(IrOp::Accumulate, x0, -1, 0, 0, DType::Float32, op(graph::ReduceOp::Max), 0);
  const int end0 = b.add(IrOp::LoopEnd, -1, -1, 0, 0, DType::Bool);
  const int max = b.add(IrOp::Result, -1, -1, 0, 0, DType::Float32, op(graph::ReduceOp::Max));
  // Loop 1: the sum of x - max, reading x at the same addresses.
  const int r1 = b.add(IrOp::LoopBegin, len, -1, 1);
  const int x1 = b.add(IrOp::Load, b.add(IrOp::IAdd, row, r1), -1, 0, 0, DType::Float32);
  const int sub = b.add(IrOp::Binary, x1, max, -1, 0, DType::Float32, std::uint8_t(graph::BinaryOp::Subtract));
  b.add(IrOp::Accumulate, sub, -1, 1, 0, DType::Float32, op(graph::ReduceOp::Sum), 1);
  const int end1 = b.add(IrOp::LoopEnd, -1, -1, 1, 0, DType::Bool);
  const int sum = b.add(IrOp::Result, -1, -1, 1, 0, DType::Float32, op(graph::ReduceOp::Sum));
  b.ir.outputs = {DType::Float32};
  b.add(IrOp::Store, sum, -1, 0, 0, DType::Float32);
  b.ir.finalize();

  const codegen::RowCache cache = codegen::plan_row_cache(b.ir);
  ASSERT_EQ(cache.loops.size(), 2u);
  const RowLoop &first = cache.loops[0], &second = cache.loops[1];
  EXPECT_EQ(first.begin, std::size_t(r0));
  EXPECT_EQ(first.end, std::size_t(end0));
  EXPECT_EQ(second.begin, std::size_t(r1));
  EXPECT_EQ(second.end, std::size_t(end1));
  EXPECT_TRUE(first.vector);
  EXPECT_FALSE(first.reads_cache);
  EXPECT_EQ(first.base[std::size_t(x0)], row) << "x0 is read at row + r";
  EXPECT_EQ(first.writes[std::size_t(x0)], 0) << "the first loop stores x in group 0";
  EXPECT_TRUE(second.vector);
  EXPECT_TRUE(second.reads_cache);
  EXPECT_EQ(second.reads[std::size_t(x1)], 0) << "the second loop reads x from group 0";
  EXPECT_TRUE(second.varies[std::size_t(sub)]);
  EXPECT_FALSE(second.varies[std::size_t(max)]);
  // The cached version of the second loop needs neither the load's address nor anything else to read x.
  EXPECT_FALSE(second.live[std::size_t(x1) - 1]);
  EXPECT_EQ(cache.region, std::vector<int>{0});
  EXPECT_EQ(cache.region_type, std::vector<DType>{DType::Float32});
  EXPECT_EQ(cache.bytes_per_element(), 4);
}

// A loop whose address is not X + r (a column of a row-major matrix: r * stride) has no vector path, and no
// later loop reads a cache from it; other schedules have no row loops at all.
TEST(CodegenAnalyses, RowCacheNeedsContiguousRowsAndTheRowSchedule) {
  IrBuilder b;
  b.ir.schedule = codegen::Schedule::Row;
  const int o = b.add(IrOp::OuterIndex);
  const int len = b.param(), stride = b.param();
  b.ir.inputs.push_back({DType::Float32});
  int results[2];
  for (int loop = 0; loop < 2; ++loop) {
    const int r = b.add(IrOp::LoopBegin, len, -1, loop);
    const int x = b.add(IrOp::Load, b.add(IrOp::IAdd, b.add(IrOp::IMul, r, stride), o), -1, 0, 0, DType::Float32);
    b.add(IrOp::Accumulate, x, -1, loop, 0, DType::Float32, op(graph::ReduceOp::Sum), loop);
    b.add(IrOp::LoopEnd, -1, -1, loop, 0, DType::Bool);
    results[loop] = b.add(IrOp::Result, -1, -1, loop, 0, DType::Float32, op(graph::ReduceOp::Sum));
  }
  b.ir.outputs = {DType::Float32};
  b.add(IrOp::Store, results[1], -1, 0, 0, DType::Float32);
  b.ir.finalize();

  const codegen::RowCache cache = codegen::plan_row_cache(b.ir);
  ASSERT_EQ(cache.loops.size(), 2u);
  for (const RowLoop& L : cache.loops) {
    EXPECT_FALSE(L.vector);
    EXPECT_FALSE(L.reads_cache);
    for (int base : L.base) EXPECT_EQ(base, -1);
  }
  EXPECT_TRUE(cache.region.empty());
  EXPECT_EQ(cache.bytes_per_element(), 0);

  b.ir.schedule = codegen::Schedule::Split;
  EXPECT_EQ(codegen::plan_row_cache(b.ir).loops.size(), 2u) << "split loops are analysed for vector paths";
  for (auto s : {codegen::Schedule::Column, codegen::Schedule::ColumnSplit}) {
    b.ir.schedule = s;
    EXPECT_TRUE(codegen::plan_row_cache(b.ir).loops.empty());
  }
}

// A split kernel's loops each walk a row over several blocks: contiguous loads get vector paths, but nothing is
// cached between loops (another block may hold the elements a later loop of this block needs).
TEST(CodegenAnalyses, SplitLoopsGetVectorPathsButNoRowCache) {
  IrBuilder b;
  b.ir.schedule = codegen::Schedule::Split;
  const int o = b.add(IrOp::OuterIndex);
  const int len = b.param();
  b.ir.inputs.push_back({DType::Float32});
  const int row = b.add(IrOp::IMul, o, len);
  int results[2];
  for (int loop = 0; loop < 2; ++loop) {
    const int r = b.add(IrOp::LoopBegin, len, -1, loop);
    const int x = b.add(IrOp::Load, b.add(IrOp::IAdd, row, r), -1, 0, 0, DType::Float32);
    b.add(IrOp::Accumulate, x, -1, loop, 0, DType::Float32, op(graph::ReduceOp::Sum), loop);
    b.add(IrOp::LoopEnd, -1, -1, loop, 0, DType::Bool);
    results[loop] = b.add(IrOp::Result, -1, -1, loop, 0, DType::Float32, op(graph::ReduceOp::Sum));
  }
  b.ir.outputs = {DType::Float32, DType::Float32};
  b.add(IrOp::Store, results[0], -1, 0, 0, DType::Float32);
  b.add(IrOp::Store, results[1], -1, 1, 0, DType::Float32);
  b.ir.finalize();

  const codegen::RowCache cache = codegen::plan_row_cache(b.ir);
  ASSERT_EQ(cache.loops.size(), 2u);
  for (const RowLoop& L : cache.loops) {
    EXPECT_TRUE(L.vector);
    EXPECT_FALSE(L.reads_cache);
    for (int g : L.writes) EXPECT_EQ(g, -1);
    for (int g : L.reads) EXPECT_EQ(g, -1);
  }
  EXPECT_TRUE(cache.region.empty());
  EXPECT_EQ(cache.bytes_per_element(), 0);
}

// lower() runs the analyses: its IR carries their results, equal to running them again, and the hash and the
// name are those of the structure alone.
TEST(CodegenAnalyses, LowerStoresTheResultsWithoutChangingTheHash) {
  auto m = asarray(std::vector<float>(300 * 64, 1.5f), {300, 64});
  auto e = exp(m - max(m, 1, true));
  auto plans = fusion::partition({graph_node(e / sum(e, 1, true))}, {});
  for (std::size_t p = 0; p + 1 < plans.size(); ++p) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  auto k = codegen::lower(plans.back());
  ASSERT_EQ(k.ir.schedule, codegen::Schedule::Row);
  ASSERT_TRUE(k.ir.analyzed);
  EXPECT_EQ(k.ir.unit_step_loads, codegen::find_unit_step_loads(k.ir));
  EXPECT_EQ(k.ir.row_cache, codegen::plan_row_cache(k.ir));
  EXPECT_EQ(k.ir.row_cache.bytes_per_element(), 4);
  const auto hash = k.ir.hash;
  const std::string name = k.ir.name;
  k.ir.finalize();
  EXPECT_EQ(k.ir.hash, hash);
  EXPECT_EQ(k.ir.name, name);

  auto elementwise = codegen::lower(fusion::partition({graph_node(m * 2.0f + 1.0f)}, {}).back());
  ASSERT_TRUE(elementwise.ir.analyzed);
  EXPECT_EQ(elementwise.ir.unit_step_loads, codegen::find_unit_step_loads(elementwise.ir));
  EXPECT_TRUE(elementwise.ir.row_cache.loops.empty());
}

namespace {

// The last kernel of `a`'s plans, lowered after the earlier plans' outputs are materialized.
codegen::LoweredKernel lowered(const Array& a) {
  auto plans = fusion::partition({graph_node(a)}, {});
  for (std::size_t p = 0; p + 1 < plans.size(); ++p) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  return codegen::lower(plans.back());
}

std::size_t staged_count(const KernelIR& ir) {
  return std::size_t(std::count(ir.transpose_tiles.staged.begin(), ir.transpose_tiles.staged.end(), true));
}

} // namespace

// Loads that step by one along an axis of the output other than the last stage through tiles spanning that axis and
// the last; loads that step along the last axis (contiguous operands, row broadcasts), kernels without such loads
// and reductions stage nothing.
TEST(CodegenAnalyses, TransposeTilesStageTheLoadsAcrossTheOutputRows) {
  auto a = asarray(std::vector<float>(40 * 24, 1.5f), {40, 24});
  auto b = asarray(std::vector<float>(24 * 40, 2.5f), {24, 40});
  auto row = asarray(std::vector<float>(24, 0.5f), {24});
  {
    auto k = lowered(a + b.T() * row);
    ASSERT_TRUE(k.ir.analyzed);
    EXPECT_EQ(k.ir.transpose_tiles, codegen::find_transpose_tiles(k.ir));
    EXPECT_EQ(k.ir.transpose_tiles.axis, 0);
    EXPECT_EQ(k.ir.unravels[std::size_t(k.ir.transpose_tiles.group)].size(), 2u);
    EXPECT_EQ(staged_count(k.ir), 1u) << codegen::to_string(k.ir);
    // a (contiguous) and the row are read in place, early; the staged load is not.
    const auto& early = k.ir.transpose_tiles.early;
    EXPECT_EQ(std::count(early.begin(), early.end(), true), 2) << codegen::to_string(k.ir);
    for (std::size_t n = 0; n < k.ir.code.size(); ++n)
      if (k.ir.transpose_tiles.staged[n]) {
        EXPECT_EQ(k.ir.code[n].op, IrOp::Load);
        EXPECT_FALSE(early[n]);
      }
  }
  EXPECT_TRUE(lowered(a + b.T().T().T() * 2.0f).ir.transpose_tiles.any());
  EXPECT_FALSE(lowered(a * 2.0f + a).ir.transpose_tiles.any());
  EXPECT_FALSE(lowered(a * row + 1.0f).ir.transpose_tiles.any());
  EXPECT_FALSE(lowered(a(slice(0, none, 2), slice(1, none)) * 2.0f).ir.transpose_tiles.any());
  EXPECT_FALSE(lowered(sum(b.T(), 1)).ir.transpose_tiles.any());

  // Permutes of a 3-d array: the staged axis is the one the source is contiguous along; (1, 0, 2) keeps the last
  // axis contiguous and stages nothing.
  auto x = asarray(std::vector<float>(6 * 20 * 36, 1.0f), {6, 20, 36});
  EXPECT_EQ(lowered(ascontiguousarray(x.transpose({0, 2, 1}))).ir.transpose_tiles.axis, 1);
  EXPECT_EQ(lowered(ascontiguousarray(x.transpose({2, 1, 0}))).ir.transpose_tiles.axis, 0);
  EXPECT_FALSE(lowered(ascontiguousarray(x.transpose({1, 0, 2}))).ir.transpose_tiles.any());

  // Two loads across axis 0 outvote one across axis 1.
  auto y = asarray(std::vector<float>(36 * 6 * 20, 1.0f), {36, 6, 20});
  auto z = asarray(std::vector<float>(6 * 20 * 36, 2.0f), {6, 20, 36});
  auto k = lowered(x.transpose({2, 1, 0}) + y.transpose({0, 2, 1}) * 3.0f + z.transpose({2, 1, 0}));
  EXPECT_EQ(k.ir.transpose_tiles.axis, 0) << codegen::to_string(k.ir);
  EXPECT_EQ(staged_count(k.ir), 2u) << codegen::to_string(k.ir);
}

// The tiles of one kernel stay within kMaxTransposeTileBytes of shared memory: one of two transposed complex64
// operands is staged, and no complex128 one (its tile alone is larger).
TEST(CodegenAnalyses, TransposeTilesFitTheirSharedMemory) {
  const std::int64_t tile = codegen::kTransposeTile * (codegen::kTransposeTile + 1);
  ASSERT_LE(8 * tile, codegen::kMaxTransposeTileBytes);
  ASSERT_GT(16 * tile, codegen::kMaxTransposeTileBytes);
  auto a = asarray(std::vector<float>(40 * 24, 1.5f), {40, 24});
  auto b = asarray(std::vector<float>(40 * 24, 2.5f), {40, 24});
  auto a64 = a.astype(DType::Complex64).eval(), b64 = b.astype(DType::Complex64).eval();
  EXPECT_EQ(staged_count(lowered(a64.T() + b64.T()).ir), 1u);
  auto a128 = a.astype(DType::Complex128).eval();
  EXPECT_FALSE(lowered(a128.T() * 2.0).ir.transpose_tiles.any());
}
