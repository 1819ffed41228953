// Schedules (codegen/Schedule.h): the reduction schedule lowering chooses and the launch shape of every schedule,
// checked on the CPU with the reference device. The CUDA executor launches exactly launch_shape's answer.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"

#include "codegen/CudaPrinter.h"
#include "codegen/Lower.h"
#include "codegen/Schedule.h"
#include "fusion/Partition.h"

#include <gtest/gtest.h>

using lazyfuse::detail::graph_node;

using namespace lazyfuse;
using codegen::DeviceCaps;
using codegen::LaunchShape;
using codegen::ReductionFacts;
using codegen::Schedule;

namespace {

Array input(Shape shape, DType t = DType::Float32) {
  std::vector<double> v(std::size_t(graph::shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.25 + double(i % 5) * 0.5;
  return asarray(v, shape).astype(t).eval();
}

// The last kernel of `result`'s materialization, lowered after the earlier ones have run (as the runtime does).
codegen::LoweredKernel last_kernel(const Array& result) {
  auto plans = fusion::partition({graph_node(result)}, {});
  for (std::size_t p = 0; p + 1 < plans.size(); ++p) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  return codegen::lower(plans.back());
}

LaunchShape shape_of(const codegen::LoweredKernel& k, const DeviceCaps& caps = DeviceCaps::reference()) {
  return codegen::launch_shape(k.ir, k.args, caps, codegen::launch_facts(k.ir));
}

} // namespace

TEST(Schedule, ReductionScheduleThresholds) {
  using fusion::kMinColumnOuter;
  using fusion::kSplitBelowOuter;
  auto choose = [](std::int64_t outer, bool inner_kept, bool full, bool dependent) {
    ReductionFacts f;
    f.outer = outer;
    f.inner_kept = inner_kept;
    f.full_outputs = full;
    f.dependent = dependent;
    return codegen::choose_reduction_schedule(f);
  };
  // Columns from one warp's worth of outer elements on, split unless a loop or an output prevents it.
  EXPECT_EQ(choose(kMinColumnOuter, true, false, false), Schedule::ColumnSplit);
  EXPECT_EQ(choose(kMinColumnOuter, true, true, false), Schedule::Column);
  EXPECT_EQ(choose(kMinColumnOuter, true, false, true), Schedule::Column);
  EXPECT_EQ(choose(1 << 20, true, false, false), Schedule::ColumnSplit);
  // Fewer columns than a warp: rows, split because there are few of them.
  EXPECT_EQ(choose(kMinColumnOuter - 1, true, false, false), Schedule::Split);
  EXPECT_EQ(choose(kMinColumnOuter - 1, true, false, true), Schedule::Row);
  // Rows: split below kSplitBelowOuter when nothing prevents it, else a block per row.
  EXPECT_EQ(choose(kSplitBelowOuter - 1, false, false, false), Schedule::Split);
  EXPECT_EQ(choose(kSplitBelowOuter, false, false, false), Schedule::Row);
  EXPECT_EQ(choose(1, false, true, false), Schedule::Row);
  EXPECT_EQ(choose(1, false, false, true), Schedule::Row);
  EXPECT_TRUE(fusion::prefers_split(kSplitBelowOuter - 1));
  EXPECT_FALSE(fusion::prefers_split(kSplitBelowOuter));
}

TEST(Schedule, LoweringChoosesTheScheduleOfTheRules) {
  EXPECT_EQ(last_kernel(input({4096, 64}) * 2.0f).ir.schedule, Schedule::Elementwise);
  EXPECT_EQ(last_kernel(sum(input({300, 64}), 1)).ir.schedule, Schedule::Row);
  EXPECT_EQ(last_kernel(sum(input({100, 64}), 1)).ir.schedule, Schedule::Split);
  EXPECT_EQ(last_kernel(sum(input({4096, 64}), 0)).ir.schedule, Schedule::ColumnSplit);
  // The mean, then the squares: a dependent reduction. With enough columns it stays in one column kernel; with
  // fewer than kSplitBelowOuter partitioning stores the mean first, so that each kernel can split.
  EXPECT_EQ(last_kernel(var(input({512, 1000}), 0)).ir.schedule, Schedule::Column);
  // 16 columns are fewer than a warp: a split over the rows of the transposed walk.
  EXPECT_EQ(last_kernel(sum(input({4096, 16}), 0)).ir.schedule, Schedule::Split);
  auto m = input({300, 64});
  EXPECT_EQ(last_kernel(m - max(m, 1, true)).ir.schedule, Schedule::Row); // full-shape output
}

// Split loops reading contiguous rows keep kSplitBytesInFlight bytes of vector loads in flight per thread and trip:
// narrow types get more iterations per trip; strided rows, row and column kernels keep their counts.
TEST(Schedule, SplitVectorLoopsUnrollByTheBytesOfTheirLoads) {
  auto unroll_of = [](const Array& r) {
    const codegen::LoweredKernel k = last_kernel(r);
    const auto& loops = k.ir.row_cache.loops;
    return codegen::reduction_unroll(k.ir, loops.empty() ? nullptr : &loops.front());
  };
  using codegen::kUnroll;
  EXPECT_EQ(unroll_of(sum(input({1 << 16}, DType::Float16))), 2 * kUnroll);
  EXPECT_EQ(unroll_of(sum(input({1 << 16}, DType::BFloat16))), 2 * kUnroll);
  EXPECT_EQ(unroll_of(any(input({1 << 16}, DType::Bool))), 4 * kUnroll);
  EXPECT_EQ(unroll_of(sum(input({1 << 16}, DType::Float32))), kUnroll);
  EXPECT_EQ(unroll_of(sum(input({1 << 16}, DType::Float64))), kUnroll);
  EXPECT_EQ(unroll_of(sum(input({4096, 16}, DType::Float16), 0)), kUnroll) << "strided: no vector path";
  EXPECT_EQ(unroll_of(sum(input({300, 64}, DType::Float16), 1)), kUnroll) << "a block per row";
  EXPECT_EQ(unroll_of(sum(input({4096, 64}), 0)), 2 * kUnroll) << "columns";
}

TEST(Schedule, ReferenceDeviceIsAnH200) {
  const DeviceCaps c = DeviceCaps::reference();
  EXPECT_EQ(c.warp_size, codegen::kWarpSize);
  EXPECT_GE(c.max_threads_per_block, codegen::kBlockSize);
  EXPECT_EQ(c.grid_limit(), std::int64_t(c.sm_count) * c.resident_blocks_per_sm);
  EXPECT_EQ(c.sm_count, 132);
  EXPECT_EQ(c.resident_blocks_per_sm * codegen::kBlockSize, 2048); // 2048 resident threads per SM
}

TEST(Schedule, ElementwiseLaunchCoversEveryChunkOnce) {
  const std::int64_t chunk =
      std::int64_t(codegen::kBlockSize) * codegen::kElementsPerThread * codegen::kVectorsPerThread;
  for (std::int64_t n : {1, 100, 2048, 2049, 1 << 20, 3000001}) {
    auto x = input({n});
    auto k = last_kernel(x * 3.0f + 1.0f); // contiguous: a block per chunk
    const LaunchShape s = shape_of(k);
    EXPECT_EQ(s.block, codegen::kBlockSize);
    EXPECT_EQ(s.shared_bytes, 0u);
    EXPECT_EQ(s.splits, 0);
    EXPECT_GE(s.grid * chunk, n) << n;
    EXPECT_LT((s.grid - 1) * chunk, n) << n;
  }
  // 2^20 float elements in chunks of 256 threads x 2 vectors x 4 elements: 512 blocks.
  EXPECT_EQ(shape_of(last_kernel(input({1 << 20}) * 2.0f)).grid, 512);
}

// Kernels that read no memory generate their values: twice the vectors per thread, and streaming stores.
TEST(Schedule, GeneratingKernelsTakeMoreVectorsPerThread) {
  const auto draw = last_kernel(random::Generator(5).random({1 << 20}, DType::Float32) * 2.0f);
  EXPECT_EQ(codegen::vectors_per_thread(draw.ir), codegen::kGeneratorVectorsPerThread);
  EXPECT_TRUE(codegen::streams_stores(draw.ir));
  // 2^20 elements in chunks of 256 threads x 4 vectors x 4 elements: 256 blocks.
  EXPECT_EQ(shape_of(draw).grid,
            (1 << 20) / (codegen::kBlockSize * codegen::kElementsPerThread * codegen::kGeneratorVectorsPerThread));
  const auto reads = last_kernel(input({1 << 20}) * 2.0f);
  EXPECT_EQ(codegen::vectors_per_thread(reads.ir), codegen::kVectorsPerThread);
  EXPECT_FALSE(codegen::streams_stores(reads.ir));
}

TEST(Schedule, ElementwiseKernelsReadingViewsRunOnlyTheResidentBlocks) {
  auto m = input({2048, 2048});
  auto k = last_kernel(flip(m, 0) + m); // reads through index arithmetic
  const auto facts = codegen::launch_facts(k.ir);
  ASSERT_TRUE(facts.resident_grid);
  DeviceCaps caps = DeviceCaps::reference();
  EXPECT_EQ(shape_of(k, caps).grid, caps.grid_limit()); // 4M elements: 2048 chunks, more than 1056 resident blocks
  caps.resident_blocks_per_sm = 2;                      // a kernel of lower occupancy
  EXPECT_EQ(shape_of(k, caps).grid, 2 * caps.sm_count);
  auto small = last_kernel(flip(input({64, 64}), 0) + input({64, 64}));
  EXPECT_EQ(shape_of(small).grid, 2) << "4096 elements are two chunks, fewer than the resident blocks";
  EXPECT_FALSE(codegen::launch_facts(last_kernel(input({4096}) * 2.0f).ir).resident_grid);
}

// Broadcast operands (a bias row, a per-row scale) are small and stay in the caches: kernels whose every read through
// index arithmetic is one stream like contiguous kernels, a block per chunk. A view of the output's size among them,
// or a gather, keeps the resident blocks.
TEST(Schedule, ElementwiseKernelsReadingOnlyBroadcastOperandsRunABlockPerChunk) {
  auto m = input({2048, 2048});
  auto resident = [](const Array& result) { return codegen::launch_facts(last_kernel(result).ir).resident_grid; };
  EXPECT_FALSE(resident(m + input({2048})));
  EXPECT_FALSE(resident(m * input({2048, 1})));
  EXPECT_FALSE(resident(m * input({2048, 1}) + input({2048})));
  EXPECT_FALSE(resident(input({8, 16, 32}) * input({8, 1, 32}) + input({16, 1})))
      << "broadcast along one axis of three";
  EXPECT_FALSE(resident(m + input({1})));
  auto k = last_kernel(m + input({2048}));
  EXPECT_EQ(shape_of(k).grid,
            2048 * 2048 / (codegen::kBlockSize * codegen::kElementsPerThread * codegen::vectors_per_thread(k.ir)));
  EXPECT_TRUE(resident(m + input({2048}) + flip(m, 1))) << "a view of the whole output's shape";
  EXPECT_TRUE(resident(m(slice(none, none), slice(1, none)) + input({2047}))) << "a sliced view";
  const Array rows = (arange(2048) % 100).eval();
  EXPECT_TRUE(resident(take(input({100}), rows) + m)) << "a gather";
}

// Kernels with staged loads (KernelIR::transpose_tiles) launch a block per unit of tiles where both tile axes have
// at least kTransposeTileMinExtent elements: a tile, or in a square plane of tiles a pair of mirrored tiles.
TEST(Schedule, TransposedKernelsLaunchABlockPerUnitOfTiles) {
  constexpr std::int64_t T = codegen::kTransposeTile;
  auto tiles = [](std::int64_t extent) { return (extent + T - 1) / T; };
  EXPECT_EQ(codegen::transpose_tile_units(T * T, T, T), 1);
  EXPECT_EQ(codegen::transpose_tile_units(4 * T * T, 2 * T, 2 * T), 3); // (0, 0), (1, 1), the pair (0, 1), (1, 0)
  EXPECT_EQ(codegen::transpose_tile_units(6 * T * T, 3 * T, 2 * T), 6); // 3 x 2 tiles, no pairs
  const std::int64_t a = 3 * T - 5, b = 2 * T - 7, c = 2 * T - 14;
  EXPECT_EQ(codegen::transpose_tile_units(5 * a * b, a, b), 5 * 3 * 2); // 5 planes of 3 x 2 tiles
  EXPECT_EQ(codegen::transpose_tile_units(7 * c * c, c, c), 7 * 3);     // 7 planes of 2 x 2 tiles, 3 units each
  EXPECT_EQ(codegen::transpose_tile_units(15 * 1000, 15, 1000), 0);
  EXPECT_EQ(codegen::transpose_tile_units(1000 * 15, 1000, 15), 0);

  auto m = input({2048, 2048});
  auto k = last_kernel(m.T() + m);
  ASSERT_TRUE(k.ir.transpose_tiles.any());
  EXPECT_GE(codegen::launch_facts(k.ir).tile_axis_slot, 0);
  EXPECT_EQ(shape_of(k).grid, tiles(2048) * (tiles(2048) + 1) / 2);
  EXPECT_EQ(shape_of(last_kernel(input({96, 3000}).T() + input({3000, 96}))).grid, tiles(3000) * tiles(96));
  EXPECT_EQ(shape_of(last_kernel(ascontiguousarray(input({5, 200, 70}).transpose({0, 2, 1})))).grid,
            5 * tiles(70) * tiles(200));
  // Too narrow for tiles: the chunks of the untiled path, over the resident blocks at most.
  auto narrow = last_kernel(input({1000, 8}).T() + 1.0f);
  ASSERT_TRUE(narrow.ir.transpose_tiles.any());
  EXPECT_EQ(shape_of(narrow).grid, 4) << "8000 elements in chunks of 2048";

  // Wide tiles (KernelIR::transpose_tiles_wide): kTransposeTileWide elements of the last axis, never pairs.
  constexpr std::int64_t W = codegen::kTransposeTileWide;
  EXPECT_EQ(codegen::transpose_tile_units(4 * T * T, 2 * T, 2 * T, true), 2 * 1);
  EXPECT_EQ(codegen::transpose_tile_units(5 * a * b, a, b, true), 5 * 3 * 1);
  EXPECT_EQ(codegen::transpose_tile_units(3 * 1000 * (W + 1), 1000, W + 1, true), 3 * tiles(1000) * 2);
  EXPECT_EQ(codegen::transpose_tile_units(15 * 1000, 15, 1000, true), 0);
  auto permute = last_kernel(ascontiguousarray(input({255, 10, 1001}).transpose({2, 1, 0})));
  ASSERT_TRUE(permute.ir.transpose_tiles_wide);
  EXPECT_TRUE(codegen::launch_facts(permute.ir).tile_wide);
  EXPECT_EQ(shape_of(permute).grid, 10 * tiles(1001) * 2);
}

// Wide tiles where the output's rows along the last axis are not whole 32-byte sectors and the plane's tiles are not
// square (codegen::choose_wide_transpose_tiles): each output row is then split between fewer blocks.
TEST(Schedule, WideTilesWhereOutputRowsAreOffSectors) {
  auto wide = [](const Array& y) { return last_kernel(y).ir.transpose_tiles_wide; };
  EXPECT_TRUE(wide(ascontiguousarray(input({255, 10, 1001}).transpose({2, 1, 0})))) << "rows of 255 float32";
  EXPECT_TRUE(wide(input({70, 300}).T() + 1.0f)) << "rows of 70 float32";
  EXPECT_FALSE(wide(ascontiguousarray(input({256, 10, 1024}).transpose({2, 1, 0})))) << "rows of 256 float32";
  EXPECT_FALSE(wide(input({72, 300}).T() + 1.0f)) << "rows of 72 float32: whole sectors";
  EXPECT_FALSE(wide(input({1001, 1001}).T() + 1.0f)) << "16 x 16 tiles: mirrored pairs";
  EXPECT_FALSE(wide(input({70, 300}, DType::Float64).T() + 1.0)) << "a wide float64 tile takes 65 KiB";
  EXPECT_FALSE(wide(input({70, 300}).T() + input({70, 300}).T())) << "two wide float32 tiles take 65 KiB";
  EXPECT_TRUE(wide(input({72, 300}).T().astype(DType::Int8))) << "rows of 72 int8";
  EXPECT_FALSE(wide(input({8, 1000}).T() + 1.0f)) << "too narrow for tiles";
  EXPECT_FALSE(wide(input({70, 300}) + 1.0f)) << "no staged load";
  // The choice is the lowered shape's, so it names the kernel: the same code for rows of 64 has another name.
  EXPECT_NE(last_kernel(input({70, 300}).T() + 1.0f).ir.name, last_kernel(input({64, 300}).T() + 1.0f).ir.name);
}

TEST(Schedule, RowLaunchHasABlockPerRowAndItsRowCache) {
  // 300 rows: not split, so softmax is one kernel. Rows of whole vectors, up to 8192 float32, are held in registers
  // (no shared memory): as many of the block's trips per thread as cover the row, the last partial where the row
  // ends inside it. Rows of other lengths are cached in shared memory.
  // The kernels ask for as many resident blocks as hold those registers (codegen::register_row_min_blocks).
  struct Case {
    std::int64_t cols;
    int vectors, blocks;
    bool partial;
  };
  const Case cases[] = {{64, 1, 5, true},    {1000, 1, 5, true},  {1024, 1, 5, false}, {1025, 0, 0, false},
                        {1536, 2, 4, true},  {2048, 2, 4, false}, {3072, 3, 4, false}, {4096, 4, 3, false},
                        {4097, 0, 0, false}, {7168, 7, 2, false}, {8000, 8, 2, true},  {8192, 8, 2, false},
                        {8193, 0, 0, false}, {8196, 0, 0, false}, {10000, 0, 0, false}};
  for (auto [cols, vectors, blocks, partial] : cases) {
    auto m = input({300, cols});
    auto e = exp(m - max(m, 1, true));
    auto k = last_kernel(e / sum(e, 1, true)); // softmax: reads each row three times
    ASSERT_EQ(k.ir.schedule, Schedule::Row);
    const auto facts = codegen::launch_facts(k.ir);
    ASSERT_EQ(facts.row_cache_bytes_per_element, 4) << "a float32 row";
    EXPECT_EQ(k.ir.register_row_vectors, vectors) << cols;
    EXPECT_EQ(k.ir.register_row_partial, partial) << cols;
    EXPECT_EQ(codegen::register_row_min_blocks(k.ir), blocks) << cols;
    EXPECT_EQ(facts.register_row_elements, vectors * codegen::kBlockSize * codegen::kElementsPerThread);
    const LaunchShape s = shape_of(k);
    EXPECT_EQ(s.grid, 300);
    EXPECT_EQ(s.shared_bytes, vectors > 0 ? 0u : unsigned(4 * codegen::row_cache_elements(cols))) << cols;
    EXPECT_EQ(s.splits, 0);
  }
  // float64 rows: at most 16 per thread, 4096 per block.
  auto d = input({300, 4096}, DType::Float64);
  auto ed = exp(d - max(d, 1, true));
  EXPECT_EQ(last_kernel(ed / sum(ed, 1, true)).ir.register_row_vectors, 4);
  auto d2 = input({300, 5000}, DType::Float64);
  auto ed2 = exp(d2 - max(d2, 1, true));
  auto kd2 = last_kernel(ed2 / sum(ed2, 1, true));
  EXPECT_EQ(kd2.ir.register_row_vectors, 0);
  EXPECT_EQ(shape_of(kd2).shared_bytes, 8u * 5000);
  // Kernels without a row cache have no register path; the lengths' kernels differ (their hashes too).
  EXPECT_EQ(last_kernel(sum(input({300, 4096}), 1)).ir.register_row_vectors, 0);
  auto a = input({300, 1024}), b = input({300, 2048});
  EXPECT_NE(last_kernel(a / sum(a, 1, true)).ir.hash, last_kernel(b / sum(b, 1, true)).ir.hash);
  // One kernel serves the lengths a partial last trip covers, and one the lengths cached in shared memory.
  auto c = input({300, 1000}), c2 = input({300, 1020}), c3 = input({300, 1024});
  EXPECT_EQ(last_kernel(c / sum(c, 1, true)).ir.hash, last_kernel(c2 / sum(c2, 1, true)).ir.hash);
  EXPECT_NE(last_kernel(c / sum(c, 1, true)).ir.hash, last_kernel(c3 / sum(c3, 1, true)).ir.hash);
  auto u = input({300, 1025}), u3 = input({300, 3001});
  EXPECT_EQ(last_kernel(u / sum(u, 1, true)).ir.hash, last_kernel(u3 / sum(u3, 1, true)).ir.hash);
  // A row of 12289 floats needs 49,168 bytes: more than a block gets without opting in, so no cache.
  auto m = input({300, 12289});
  auto e = exp(m - max(m, 1, true));
  auto k = last_kernel(e / sum(e, 1, true));
  ASSERT_EQ(k.ir.schedule, Schedule::Row);
  EXPECT_GT(4 * codegen::row_cache_elements(12289), codegen::kMaxRowCacheBytes);
  EXPECT_EQ(shape_of(k).shared_bytes, 0u);
  // 12288 floats need exactly 48 KiB: given only when the kernel's static shared memory (its block reductions)
  // leaves that much of the per-block limit, which it never does (the launch would fail without an opt-in).
  auto m3 = input({300, 12288});
  auto e3 = exp(m3 - max(m3, 1, true));
  auto k3 = last_kernel(e3 / sum(e3, 1, true));
  ASSERT_EQ(k3.ir.schedule, Schedule::Row);
  DeviceCaps no_static = DeviceCaps::reference(), with_static = DeviceCaps::reference();
  with_static.static_shared_bytes = 512;
  EXPECT_EQ(shape_of(k3, no_static).shared_bytes, unsigned(codegen::kMaxRowCacheBytes));
  EXPECT_EQ(shape_of(k3, with_static).shared_bytes, 0u);
  // Rows of 12000 floats (48,000 bytes) leave room for 512 static bytes.
  auto m4 = input({300, 12000});
  auto e4 = exp(m4 - max(m4, 1, true));
  EXPECT_EQ(shape_of(last_kernel(e4 / sum(e4, 1, true)), with_static).shared_bytes, 48000u);
  // A device with less shared memory per block gets no cache where the reference device does.
  auto m2 = input({300, 9000});
  auto e2 = exp(m2 - max(m2, 1, true));
  auto k2 = last_kernel(e2 / sum(e2, 1, true));
  DeviceCaps small = DeviceCaps::reference();
  small.shared_bytes_per_block = 8 * 1024;
  EXPECT_EQ(shape_of(k2, small).shared_bytes, 0u);
  EXPECT_EQ(shape_of(k2).shared_bytes, 4u * 9000);
}

TEST(Schedule, ColumnLaunchHasAThreadPerColumn) {
  auto k = last_kernel(var(input({512, 1000}), 0));
  ASSERT_EQ(k.ir.schedule, Schedule::Column);
  const LaunchShape s = shape_of(k);
  EXPECT_EQ(s.grid, (1000 + codegen::kBlockSize - 1) / codegen::kBlockSize);
  EXPECT_EQ(s.shared_bytes, 0u);
  EXPECT_EQ(s.splits, 0);
}

TEST(Schedule, SplitLaunchesBoundTheirSplitsAndSizeTheirScratch) {
  const DeviceCaps caps = DeviceCaps::reference();
  struct Case {
    Array result;
    Schedule schedule;
  };
  std::vector<Case> cases = {
      {sum(input({1 << 22})), Schedule::Split},               // one row of 4M: as many splits as two waves allow
      {sum(input({4, 1 << 20}), 1), Schedule::Split},         // few rows
      {sum(input({10, 3000}), 1), Schedule::Split},           // short rows: few useful splits
      {sum(input({8192, 64}), 0), Schedule::ColumnSplit},     // tall columns
      {argmax(input({4096, 300}), 0), Schedule::ColumnSplit}, // an arg reduction: a partial is a value and an index
  };
  for (auto& c : cases) {
    auto k = last_kernel(c.result);
    ASSERT_EQ(k.ir.schedule, c.schedule);
    const auto facts = codegen::launch_facts(k.ir);
    const LaunchShape s = shape_of(k, caps);
    const bool column = c.schedule == Schedule::ColumnSplit;
    const std::int64_t groups = column ? (k.args.n + codegen::kBlockSize - 1) / codegen::kBlockSize : k.args.n;
    SCOPED_TRACE(std::to_string(k.args.n) + " x " + std::to_string(k.args.reduced));
    EXPECT_GE(s.splits, 1);
    EXPECT_LE(s.splits, column ? codegen::kMaxColumnSplits : codegen::kMaxSplits);
    // Never more blocks than two (columns) or four (rows) waves of resident blocks, unless one per group.
    EXPECT_LE(s.grid, std::max(groups, (column ? 2 : 4) * caps.grid_limit()));
    // Each split part reads at least 16 elements per thread (columns) or 8 per thread of a block (rows).
    EXPECT_LE(s.splits, std::max<std::int64_t>(1, k.args.reduced / (column ? 16 : codegen::kBlockSize * 8)));
    EXPECT_EQ(s.grid, groups * s.splits);
    EXPECT_GE(facts.accumulators, 1);
    EXPECT_EQ(s.partial_bytes, facts.accumulators * k.args.n * s.splits * codegen::kPartialBytes);
    EXPECT_EQ(s.ticket_bytes, groups * std::int64_t(sizeof(unsigned)));
  }
  // One row of 4M elements on the reference device: 4 waves of 1056 blocks want 4224 splits, 4M / 2048 elements
  // per block-part allow 2048, kMaxSplits caps them at 1024.
  EXPECT_EQ(shape_of(last_kernel(sum(input({1 << 22})))).splits, codegen::kMaxSplits);
  // 8192 x 64 columns: one tile; 2 waves want 2112 splits, 8192 / 16 allow 512, kMaxColumnSplits caps at 64.
  EXPECT_EQ(shape_of(last_kernel(sum(input({8192, 64}), 0))).splits, codegen::kMaxColumnSplits);
}

TEST(Schedule, LaunchShapeIsPure) {
  auto k = last_kernel(sum(input({4, 1 << 16}), 1));
  const auto facts = codegen::launch_facts(k.ir);
  EXPECT_EQ(codegen::launch_shape(k.ir, k.args, DeviceCaps::reference(), facts),
            codegen::launch_shape(k.ir, k.args, DeviceCaps::reference(), facts));
  // A device with twice the SMs may split more, never less.
  DeviceCaps big = DeviceCaps::reference();
  big.sm_count *= 2;
  EXPECT_GE(codegen::launch_shape(k.ir, k.args, big, facts).splits,
            codegen::launch_shape(k.ir, k.args, DeviceCaps::reference(), facts).splits);
}
