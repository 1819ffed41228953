// Time loops recorded without eval(): the partitioner keeps their repeated steps in one kernel
// (fusion/PartitionSteps.h, printed_node_count), the analysis finds them (codegen/Reroll.h) and the CUDA printer
// prints them as a loop over one step whose scalars come from one array parameter (codegen/KernelAbi.h). The value
// tests run on the backend in use: the CPU backend runs the straight-line IR, the GPU the printed loop.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/KernelAbi.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"
#include "codegen/Reroll.h"
#include "fusion/Partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <random>
#include <vector>

using namespace lazyfuse;
using lazyfuse::detail::graph_node;

namespace {

// One kernel on the GPU, whose printer prints the steps as a loop; the CPU backends run straight-line code, for which
// the partitioner cuts paths of at most 256 nodes (fusion::PartitionOptions::loops_for_repeated_steps): about one
// kernel per 256 nodes of `nodes` (scalars counted), twice that as a bound.
std::uint64_t loop_kernels(std::uint64_t nodes) {
  return backend() == Backend::Cuda ? 1 : 2 * ((nodes + 255) / 256);
}

template <class F> std::uint64_t kernels_of(F&& f) {
  const auto before = kernel_cache_stats().kernels_launched;
  f();
  return kernel_cache_stats().kernels_launched - before;
}

std::vector<float> random_floats(std::size_t n, float lo, float hi, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// Step k's factor and offset: a different value for every step (an array parameter read at the loop's counter).
float factor(int k) {
  return 0.999f - 1e-7f * float(k);
}
float offset(int k) {
  return 0.001f + 1e-6f * float(k);
}

Array update_loop(Array x, int steps) {
  for (int k = 0; k < steps; ++k) x = x * factor(k) + offset(k);
  return x;
}

codegen::LoweredKernel only_kernel(const Array& result) {
  auto plans = fusion::partition({graph_node(result)}, {});
  EXPECT_EQ(plans.size(), 1u);
  return codegen::lower(plans.at(0));
}

// Relative error against a float64 reference of the same steps; a float32 step rounds twice.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i], tolerance * (1 + std::abs(want[i]))) << "element " << i;
}

} // namespace

TEST(RepeatedSteps, AThousandStepLoopIsOneStepRepeated) {
  const auto x0 = asarray(random_floats(1000, -1, 1, 1)).eval();
  const Array out = update_loop(x0, 1000);
  const codegen::LoweredKernel k = only_kernel(out);
  const codegen::RepeatedSteps& steps = k.ir.repeated_steps;
  ASSERT_TRUE(steps.any()) << codegen::to_string(k.ir);
  // Each copy: its factor, the multiply, its offset, the add; the streak may start one copy late.
  EXPECT_EQ(steps.period, 4);
  EXPECT_GE(steps.count, 999);
  EXPECT_EQ(steps.params_per_step, 2);
  int carried = 0;
  for (int j = 0; j < steps.period; ++j) carried += steps.initial[std::size_t(j)] >= 0;
  EXPECT_EQ(carried, 1) << "the state, read by the next copy's multiply";
  EXPECT_EQ(std::count(steps.exported.begin(), steps.exported.end(), true), 1) << "the last add, stored";

  // The ABI: one array parameter in place of the copies' scalars, holding them in step order.
  const auto abi = codegen::kernel_abi(k.ir);
  EXPECT_EQ(std::count_if(abi.begin(), abi.end(), [](auto& p) { return p.role == codegen::AbiRole::RepeatedParams; }),
            1);
  const int outside = int(k.ir.params.size()) - steps.params_per_step * steps.count;
  EXPECT_EQ(std::count_if(abi.begin(), abi.end(), [](auto& p) { return p.role == codegen::AbiRole::Param; }), outside);
  std::vector<void*> outputs(1, nullptr);
  codegen::PackedArgs packed = codegen::pack_kernel_args(k.ir, k.args, outputs, nullptr);
  const codegen::StepParamsLayout layout = codegen::step_params_layout(k.ir);
  std::size_t at = 0;
  while (at < abi.size() && abi[at].role != codegen::AbiRole::RepeatedParams) ++at;
  ASSERT_EQ(packed.size_of(at), layout.size);
  EXPECT_EQ(codegen::abi_size(k.ir, abi[at]), layout.size);
  for (int r = 0; r < steps.count; ++r)
    for (int j = 0; j < steps.params_per_step; ++j) {
      float value;
      std::memcpy(&value, packed.data(at) + layout.offsets[std::size_t(j)] + std::size_t(r) * sizeof(float),
                  sizeof value);
      ASSERT_EQ(value, float(k.args.params[std::size_t(steps.first_param + r * steps.params_per_step + j)].f))
          << "step " << r << ", parameter " << j;
    }
}

TEST(RepeatedSteps, TheKernelTextIsOneStepAndCompilesAsFastAsOne) {
  const auto x0 = asarray(random_floats(1000, -1, 1, 2)).eval();
  const codegen::LoweredKernel thousand = only_kernel(update_loop(x0, 1000));
  const codegen::LoweredKernel ten = only_kernel(update_loop(x0, 10));
  const std::string long_text = codegen::render_cuda(thousand.ir), short_text = codegen::render_cuda(ten.ir);
  EXPECT_NE(long_text.find("for (int lf_r = 0; lf_r < "), std::string::npos) << long_text;
  EXPECT_LT(long_text.size(), short_text.size() + 512) << "a thousand steps print as one";
  codegen::CompileOptions opt;
  opt.arch = 90;
  const auto compiled = codegen::compile_cuda(long_text, thousand.ir.name, opt);
  EXPECT_FALSE(compiled.image.empty());
  // NVRTC's time is a small kernel's, not a thousand steps' (seconds): a generous bound for a loaded CI machine.
  EXPECT_LT(compiled.seconds, 2.0);
}

// Loops users write, each against a float64 reference of its steps. One kernel each on the GPU.
TEST(RepeatedSteps, LoopsGiveTheValuesOfTheirSteps) {
  const std::size_t n = 1003; // not a whole number of vectors: the tail runs the loop too
  const auto h0 = random_floats(n, -1, 1, 3), hy = random_floats(n, 0.5f, 1.5f, 4);
  const Array x0 = asarray(h0).eval(), y = asarray(hy).eval();
  const int steps = 300;

  // A state, an array every step reads, and a branch.
  Array x = x0;
  for (int k = 0; k < steps; ++k) {
    x = x * factor(k) + y * offset(k);
    x = where(x > 0.5f, x - offset(k), x);
  }
  EXPECT_LE(kernels_of([&] { x.eval(); }), loop_kernels(8 * steps));
  std::vector<double> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v = h0[i];
    for (int k = 0; k < steps; ++k) {
      v = v * factor(k) + hy[i] * offset(k);
      v = v > 0.5f ? v - offset(k) : v;
    }
    want[i] = v;
  }
  expect_close(x.get<float>().to_vector(), want, 1e-5);

  // Two outputs of one kernel: the last state and a value computed from it and from the start.
  Array s = x0;
  for (int k = 0; k < steps; ++k) s = s * factor(k) + offset(k);
  Array diff = s - x0 * 2.0f;
  EXPECT_LE(kernels_of([&] { eval(s, diff); }), loop_kernels(3 * steps + 2));
  std::vector<double> want_s(n), want_diff(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v = h0[i];
    for (int k = 0; k < steps; ++k) v = v * factor(k) + offset(k);
    want_s[i] = v;
    want_diff[i] = double(v) - 2.0 * double(h0[i]);
  }
  expect_close(s.get<float>().to_vector(), want_s, 1e-5);
  expect_close(diff.get<float>().to_vector(), want_diff, 1e-5);

  // float64 and int32 states.
  Array d = x0.astype(DType::Float64);
  for (int k = 0; k < steps; ++k) d = d * (1.0 - 1e-4 * (k % 13)) + 1e-3;
  Array i32 = asarray(std::vector<std::int32_t>{1, -7, 123456, 2147483000, -5});
  for (int k = 0; k < steps; ++k) i32 = i32 * 3 + std::int32_t(k);
  eval(d, i32);
  const auto hd = d.get<double>().to_vector();
  for (std::size_t i = 0; i < n; ++i) {
    double v = h0[i];
    for (int k = 0; k < steps; ++k) v = v * (1.0 - 1e-4 * (k % 13)) + 1e-3;
    ASSERT_NEAR(hd[i], v, 1e-12 * (1 + std::abs(v))) << i;
  }
  // uint8 steps: 301 copies of two one-byte scalars, a parameter struct of 602 bytes (copied byte by byte).
  Array u8 = asarray(std::vector<std::uint8_t>{1, 7, 200, 255});
  for (int k = 0; k < 301; ++k) u8 = u8 * std::uint8_t(3) + std::uint8_t(k % 251);
  const auto hu = u8.get<std::uint8_t>().to_vector();
  const std::vector<std::uint8_t> u8_starts{1, 7, 200, 255};
  for (std::size_t i = 0; i < u8_starts.size(); ++i) {
    std::uint8_t v = u8_starts[i];
    for (int k = 0; k < 301; ++k) v = std::uint8_t(v * 3 + k % 251);
    EXPECT_EQ(hu[i], v) << i;
  }
  const auto hi = i32.get<std::int32_t>().to_vector();
  const std::vector<std::int32_t> starts{1, -7, 123456, 2147483000, -5};
  for (std::size_t i = 0; i < starts.size(); ++i) {
    std::uint32_t v = std::uint32_t(starts[i]); // wraps as the kernel's int32 does
    for (int k = 0; k < steps; ++k) v = v * 3u + std::uint32_t(k);
    EXPECT_EQ(hi[i], std::int32_t(v)) << i;
  }
}

// Steps whose scalars cycle through a few values share nodes (y * 0.002 of step k is step k + 11's, interned), so
// they do not repeat: the partitioner cuts them into kernels of many steps (paths of at most 256 nodes, shorter
// where a kernel would hold more), never one per step.
TEST(RepeatedSteps, StepsSharingNodesAreCutIntoLongKernels) {
  const std::size_t n = 1003;
  const auto h0 = random_floats(n, -1, 1, 6), hy = random_floats(n, 0.5f, 1.5f, 7);
  const Array x0 = asarray(h0).eval(), y = asarray(hy).eval();
  const int steps = 300;
  auto cycling_factor = [](int k) { return 0.999f - 1e-5f * float(k % 37); };
  auto cycling_offset = [](int k) { return 0.001f * float(1 + k % 11); };
  Array x = x0;
  for (int k = 0; k < steps; ++k) {
    x = x * cycling_factor(k) + y * cycling_offset(k);
    x = where(x > 0.5f, x - cycling_offset(k), x);
  }
  EXPECT_LE(kernels_of([&] { x.eval(); }), 12u) << "8 measured; 300 before paths replaced tree counts";
  std::vector<double> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v = h0[i];
    for (int k = 0; k < steps; ++k) {
      v = v * cycling_factor(k) + hy[i] * cycling_offset(k);
      v = v > 0.5f ? v - cycling_offset(k) : v;
    }
    want[i] = v;
  }
  expect_close(x.get<float>().to_vector(), want, 1e-5);
}

// The 1,000-step loop of bench_loops: one kernel on the GPU, whatever LAZYFUSE_MAX_KERNEL_NODES's default budget
// (256 nodes) would make of its 2,000 nodes counted one by one; on the CPU backends, kernels of 256 nodes.
TEST(RepeatedSteps, AThousandStepLoopIsOneKernel) {
  const std::size_t n = 1 << 12;
  const auto h0 = random_floats(n, -1, 1, 5);
  const Array x0 = asarray(h0).eval();
  Array x = x0;
  for (int k = 0; k < 1000; ++k) x = x * 0.999f + 0.001f;
  EXPECT_FALSE(x.is_materialized()) << "recorded whole: bounded laziness is a memory bound";
  EXPECT_EQ(kernels_of([&] { x.eval(); }), backend() == Backend::Cuda ? 1u : 8u);
  std::vector<double> want(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v = h0[i];
    for (int k = 0; k < 1000; ++k) v = v * 0.999f + 0.001f;
    want[i] = v;
  }
  expect_close(x.get<float>().to_vector(), want, 1e-5);
}

// Steps of other shapes, printed and compiled with NVRTC here (the value tests above run them on the GPU): a branch
// on a mask computed before the loop, casts each step, an exported intermediate beside the state, and types whose
// scalars are not plain C types (complex64, float16), which are left straight.
TEST(RepeatedSteps, OtherStepShapesPrintAndCompile) {
  const auto h0 = random_floats(4096, -1, 1, 8);
  const Array x0 = asarray(h0).eval();
  struct Case {
    const char* name;
    std::vector<Array> outputs;
    bool repeats;
  };
  std::vector<Case> cases;
  {
    const Array mask = x0 > 0.0f;
    Array x = x0;
    for (int k = 0; k < 50; ++k) x = where(mask, x * factor(k), x + offset(k));
    cases.push_back({"a mask from before the loop", {x}, true});
  }
  {
    Array x = x0;
    for (int k = 0; k < 50; ++k) x = (x * factor(k)).astype(DType::Float64).astype(DType::Float32) + offset(k);
    cases.push_back({"casts each step", {x}, true});
  }
  {
    Array x = x0, y;
    for (int k = 0; k < 50; ++k) {
      y = x * factor(k);
      x = y + offset(k);
    }
    cases.push_back({"the last multiply and the state, two outputs", {x, y * 2.0f}, true});
  }
  {
    Array z = x0.astype(DType::Complex64);
    for (int k = 0; k < 50; ++k) z = z * std::complex<float>(factor(k), 0.001f) + std::complex<float>(offset(k), 0);
    cases.push_back({"complex64 scalars", {z}, false});
  }
  {
    Array h = x0.astype(DType::Float16);
    for (int k = 0; k < 50; ++k) h = h * factor(k) + offset(k);
    cases.push_back({"float16 scalars", {h}, false});
  }
  codegen::CompileOptions opt;
  opt.arch = 90;
  opt.dump_source_on_error = true;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<graph::NodePtr> roots;
    for (const Array& o : c.outputs) roots.push_back(graph_node(o));
    const auto plans = fusion::partition(roots, {});
    ASSERT_EQ(plans.size(), 1u);
    const codegen::LoweredKernel k = codegen::lower(plans[0]);
    EXPECT_EQ(k.ir.repeated_steps.any(), c.repeats);
    if (c.repeats) {
      EXPECT_GE(k.ir.repeated_steps.count, 49);
    }
    const std::string text = codegen::render_cuda(k.ir);
    EXPECT_NO_THROW(codegen::compile_cuda(text, k.ir.name, opt));
  }
}
