// Plan cache replays launched as CUDA graphs (LAZYFUSE_CUDA_GRAPH_KERNELS): a replay with new inputs and scalars
// gives the values a kernel-by-kernel run gives, bit for bit, whether the graph's nodes already hold its arguments,
// are set anew, or a new instance is built; short replays launch kernel by kernel. Needs the CUDA backend.
#include <lazyfuse/lazyfuse.hpp>

#include "gpu_test.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace lazyfuse;

namespace {

// A setting for one scope.
struct Setting {
  Setting(const char* name, const char* value) : name_(name) { config::set(name, value); }
  ~Setting() { config::reset(name_); }
  Setting(const Setting&) = delete;
  Setting& operator=(const Setting&) = delete;

private:
  const char* name_;
};

// Fresh values in [-2, 2) for each (run, `stream`): the run's seed (lazyfuse_test::seed_note replays it).
std::vector<float> random_values(std::size_t n, std::uint64_t stream) {
  std::mt19937_64 g(lazyfuse_test::seed() + stream);
  return lazyfuse_test::uniform_values<float>(g, n, -2, 2);
}

// `scales.size()` rounds of centring the rows and scaling: one row-mean kernel per round and one for the last
// scaling, so rounds + 1 kernels (the plan this file relies on; checked by each test through the launch counter).
// The input is doubled first: CUB serves a plain reduction of a buffer on the GPU, and a materialization with such a
// plan is not recorded by the plan cache (runtime/Accelerators.h).
Array centre_rounds(const Array& x, const std::vector<float>& scales) {
  Array y = x * 2.0f;
  for (float s : scales) y = (y - mean(y, {1}, true)) * s;
  return y;
}

// The same in double, row by row, from the float32 input.
std::vector<double> centre_rounds_ref(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                                      const std::vector<float>& scales) {
  std::vector<double> y(x.begin(), x.end());
  for (double& v : y) v *= 2.0;
  for (float s : scales)
    for (std::int64_t r = 0; r < rows; ++r) {
      double m = 0;
      for (std::int64_t c = 0; c < cols; ++c) m += y[std::size_t(r * cols + c)];
      m /= double(cols);
      for (std::int64_t c = 0; c < cols; ++c) y[std::size_t(r * cols + c)] = (y[std::size_t(r * cols + c)] - m) * s;
    }
  return y;
}

double rel_err(const HostArray<float>& got, const std::vector<double>& want) {
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(err / std::max(norm, 1e-300));
}

std::vector<float> scales_of(int round, int count) {
  std::vector<float> s;
  for (int k = 0; k < count; ++k) s.push_back(0.5f + 0.125f * float((round + k) % 7));
  return s;
}

class CudaGraphs : public ::testing::Test {
protected:
  void SetUp() override { LAZYFUSE_SKIP_WITHOUT_GPU(); }
};

TEST_F(CudaGraphs, ReplaysWithNewInputsAndScalarsGiveTheRightValues) {
  const Setting graphs("LAZYFUSE_CUDA_GRAPH_KERNELS", "4");
  const std::int64_t rows = 67, cols = 129;
  for (int round = 0; round < 6; ++round) {
    const auto hx = random_values(std::size_t(rows * cols), 100 + std::uint64_t(round));
    const auto scales = scales_of(round, 9);
    Array y = centre_rounds(asarray(hx, {rows, cols}), scales);
    const auto before = kernel_cache_stats();
    y.eval();
    const auto after = kernel_cache_stats();
    EXPECT_EQ(after.kernels_launched - before.kernels_launched, 10u) << "round " << round;
    // The first round partitions and records; every later one is a plan cache hit launched as one graph.
    EXPECT_EQ(after.plan_hits - before.plan_hits, round > 0 ? 1u : 0u) << "round " << round;
    EXPECT_EQ(after.graph_launches - before.graph_launches, round > 0 ? 1u : 0u) << "round " << round;
    EXPECT_LT(rel_err(y.get<float>(), centre_rounds_ref(hx, rows, cols, scales)), 1e-5)
        << "round " << round << ", " << lazyfuse_test::seed_note();
  }
}

// Results of `calls` calls over `inputs` (cycled), each kept alive until the end so that no two calls share an output
// buffer: more sets of buffers than a recipe keeps instances, so later replays set nodes of an existing instance.
std::vector<std::vector<float>> run_calls(const std::vector<Array>& inputs, int calls) {
  std::vector<Array> kept;
  std::vector<std::vector<float>> out;
  for (int c = 0; c < calls; ++c) {
    Array y = centre_rounds(inputs[std::size_t(c) % inputs.size()], scales_of(c, 5));
    y.eval();
    kept.push_back(y);
    const auto h = y.get<float>();
    out.emplace_back(h.begin(), h.end());
  }
  return out;
}

TEST_F(CudaGraphs, GraphReplaysMatchKernelByKernelRunsBitForBit) {
  const std::int64_t rows = 33, cols = 1000;
  std::vector<Array> inputs;
  for (int k = 0; k < 7; ++k)
    inputs.push_back(asarray(random_values(std::size_t(rows * cols), 200 + std::uint64_t(k)), {rows, cols}).eval());
  std::vector<std::vector<float>> by_kernel, by_graph;
  {
    const Setting off("LAZYFUSE_CUDA_GRAPH_KERNELS", "0");
    const auto before = kernel_cache_stats().graph_launches;
    by_kernel = run_calls(inputs, 12);
    EXPECT_EQ(kernel_cache_stats().graph_launches, before) << "0 launches no graph";
  }
  {
    const Setting on("LAZYFUSE_CUDA_GRAPH_KERNELS", "2");
    const auto before = kernel_cache_stats().graph_launches;
    by_graph = run_calls(inputs, 12);
    // The first call of this block may still be a replay of the recipe the block above recorded: every call is one.
    EXPECT_EQ(kernel_cache_stats().graph_launches - before, 12u);
  }
  ASSERT_EQ(by_kernel.size(), by_graph.size());
  for (std::size_t c = 0; c < by_kernel.size(); ++c) {
    ASSERT_EQ(by_kernel[c].size(), by_graph[c].size());
    EXPECT_EQ(std::memcmp(by_kernel[c].data(), by_graph[c].data(), by_kernel[c].size() * sizeof(float)), 0)
        << "call " << c << ", " << lazyfuse_test::seed_note();
  }
}

TEST_F(CudaGraphs, ShortReplaysLaunchKernelByKernel) {
  const Setting graphs("LAZYFUSE_CUDA_GRAPH_KERNELS", "4");
  const std::int64_t rows = 21, cols = 40;
  for (int round = 0; round < 3; ++round) {
    const auto hx = random_values(std::size_t(rows * cols), 300 + std::uint64_t(round));
    const auto scales = scales_of(round, 2); // 3 kernels
    Array y = centre_rounds(asarray(hx, {rows, cols}), scales);
    const auto before = kernel_cache_stats();
    y.eval();
    const auto after = kernel_cache_stats();
    EXPECT_EQ(after.kernels_launched - before.kernels_launched, 3u);
    EXPECT_EQ(after.graph_launches, before.graph_launches);
    EXPECT_LT(rel_err(y.get<float>(), centre_rounds_ref(hx, rows, cols, scales)), 1e-5)
        << "round " << round << ", " << lazyfuse_test::seed_note();
  }
}

TEST_F(CudaGraphs, SplitReductionsGetFreshScratchInEveryReplay) {
  // Without CUB the sums of long rows are split schedules, whose partials live in scratch allocated per launch and
  // whose tickets are the stream's: both are arguments a replay sets.
  const Setting graphs("LAZYFUSE_CUDA_GRAPH_KERNELS", "2");
  const Setting no_cub("LAZYFUSE_ACCELERATORS", "");
  const std::int64_t rows = 4, cols = std::int64_t(1) << 20;
  std::vector<Array> kept;
  for (int round = 0; round < 6; ++round) {
    const auto hx = random_values(std::size_t(rows * cols), 400 + std::uint64_t(round % 3));
    const auto scales = scales_of(round, 3);
    Array y = centre_rounds(asarray(hx, {rows, cols}), scales);
    const auto before = kernel_cache_stats();
    y.eval();
    kept.push_back(y);
    EXPECT_EQ(kernel_cache_stats().graph_launches - before.graph_launches, round > 0 ? 1u : 0u);
    EXPECT_LT(rel_err(y.get<float>(), centre_rounds_ref(hx, rows, cols, scales)), 1e-5)
        << "round " << round << ", " << lazyfuse_test::seed_note();
  }
}

TEST_F(CudaGraphs, InputsProducedOnAnotherStreamAreWaitedFor) {
  const Setting graphs("LAZYFUSE_CUDA_GRAPH_KERNELS", "2");
  const std::int64_t rows = 512, cols = 2048;
  Stream producer;
  for (int round = 0; round < 4; ++round) {
    const auto hx = random_values(std::size_t(rows * cols), 500 + std::uint64_t(round));
    Array x;
    {
      const StreamGuard on(producer);
      // Produced on the other stream by a long kernel chain, so a replay that did not wait would read it early.
      x = asarray(hx, {rows, cols});
      for (int k = 0; k < 20; ++k) x = x * 1.0f + 0.0f * sin(x);
      x.eval();
    }
    const auto scales = scales_of(round, 4);
    Array y = centre_rounds(x, scales);
    y.eval();
    EXPECT_LT(rel_err(y.get<float>(), centre_rounds_ref(hx, rows, cols, scales)), 1e-5)
        << "round " << round << ", " << lazyfuse_test::seed_note();
  }
}

TEST_F(CudaGraphs, ReplaysWithBoundsCheckedGathersLaunchKernelByKernel) {
  // A failed index check must stop the kernels after it, so such a recipe never becomes a graph, whatever its length.
  const Setting graphs("LAZYFUSE_CUDA_GRAPH_KERNELS", "2");
  const std::int64_t rows = 64, cols = 300;
  for (int round = 0; round < 3; ++round) {
    const auto hx = random_values(std::size_t(rows * cols), 600 + std::uint64_t(round));
    std::mt19937_64 g(lazyfuse_test::seed() + 700 + std::uint64_t(round));
    const auto hidx = lazyfuse_test::uniform_values<std::int64_t>(g, std::size_t(rows), -rows, rows - 1);
    const Array x = asarray(hx, {rows, cols}).eval(), idx = asarray(hidx, {rows}).eval();
    Array y = take(x, idx, 0) * 2.0f; // rows gathered by possibly negative indices: checked
    y = y - mean(y, {1}, true);
    const auto before = kernel_cache_stats();
    y.eval();
    const auto after = kernel_cache_stats();
    EXPECT_GE(after.kernels_launched - before.kernels_launched, 2u);
    EXPECT_EQ(after.plan_hits - before.plan_hits, round > 0 ? 1u : 0u) << "round " << round;
    EXPECT_EQ(after.graph_launches, before.graph_launches) << "round " << round;
    std::vector<double> want(std::size_t(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t src = hidx[std::size_t(r)] < 0 ? hidx[std::size_t(r)] + rows : hidx[std::size_t(r)];
      double m = 0;
      for (std::int64_t c = 0; c < cols; ++c) m += 2.0 * hx[std::size_t(src * cols + c)];
      m /= double(cols);
      for (std::int64_t c = 0; c < cols; ++c)
        want[std::size_t(r * cols + c)] = 2.0 * hx[std::size_t(src * cols + c)] - m;
    }
    EXPECT_LT(rel_err(y.get<float>(), want), 1e-5) << "round " << round << ", " << lazyfuse_test::seed_note();
  }
}

} // namespace
