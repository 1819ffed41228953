// The kernel IR and the CUDA printer: structural keys, deterministic text, and NVRTC accepting what we print.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/KernelAbi.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"
#include "graph/Build.h"
#include "graph/Node.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <regex>

using namespace lazyfuse;
using lazyfuse::detail::graph_node;

namespace {

Array random_array(Shape shape, DType t) {
  static std::mt19937_64 g{std::random_device{}()};
  std::uniform_real_distribution<double> d(0.5, 3.0);
  std::vector<double> v(std::size_t(graph::shape_size(shape)));
  for (auto& x : v) x = d(g);
  return asarray(v, shape).astype(t).eval();
}

codegen::LoweredKernel lowered(std::vector<Array> outputs) {
  fusion::KernelPlan plan;
  for (auto& o : outputs) plan.outputs.push_back(graph_node(o));
  plan.shape = outputs[0].shape();
  return codegen::lower(plan);
}

// The last kernel partitioning gives for `result` (earlier ones materialized first, as the runtime runs them).
codegen::LoweredKernel lowered_last(const Array& result) {
  auto plans = fusion::partition({graph_node(result)}, {});
  for (std::size_t p = 0; p + 1 < plans.size(); ++p) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  return codegen::lower(plans.back());
}

// FileCheck-style: each pattern must appear, in order.
void expect_in_order(const std::string& text, std::initializer_list<std::string> patterns) {
  std::size_t at = 0;
  for (auto& p : patterns) {
    auto found = text.find(p, at);
    ASSERT_NE(found, std::string::npos) << "missing (in order): " << p << "\n--- source ---\n" << text;
    at = found + p.size();
  }
}

Array chain(const Array& x, const Array& y) {
  return sqrt(abs(sin(x) * cos(y) + x * y * 0.5f - exp(-x * x)));
}

} // namespace

// Softmax reads each row three times. The first loop (the max) stores the row in the row cache, the second reads it
// back and stores the exponentials (in shared memory over the same region: each thread reads its elements before
// it writes them), the third divides the exponentials without reading the input or computing exp again. All three
// read and write in vectors. Rows of a whole number of the block's vectors, up to 8192 floats, are cached in
// registers, with no test between the trips; others in shared memory. A kernel of one loop (mean and variance) has no
// cache.
TEST(Codegen, RowLoopsReadInVectorsAndCacheWhatLaterLoopsNeed) {
  auto m = random_array({300, 1024}, DType::Float32);
  auto e = exp(m - max(m, 1, true));
  auto softmax = lowered_last(e / sum(e, 1, true));
  ASSERT_EQ(softmax.ir.schedule, codegen::Schedule::Row);
  EXPECT_EQ(softmax.ir.row_cache.bytes_per_element(), 4);
  ASSERT_EQ(softmax.ir.register_row_vectors, 1) << "rows of 1024: one vector a thread";
  const std::string src = codegen::render_cuda(softmax.ir);
  EXPECT_EQ(src.find("lf_row_cache"), std::string::npos) << "no shared memory";
  expect_in_order(src, {"__launch_bounds__(256, 5)",
                        "lf_vec<float> lf_reg0[1];",
                        "lf_vec<float> lf_reg1[1];",
                        "lf_cached0 = lf_vector0;",
                        "for (int lf_k = 0; lf_k < 1; ++lf_k)",
                        "const int lf_u = lf_k % 4;",
                        "const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * 4;",
                        "*reinterpret_cast<const lf_vec<float>*>(in0 + ",
                        "lf_reg0[lf_k] = lf_l",
                        "lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));",
                        "lf_cached1 = lf_vector1;",
                        "if (true && lf_cached0) {",
                        "= lf_reg0[lf_k];",
                        "lf_exp(",
                        "lf_reg1[lf_k] = lf_w",
                        "lf_st1 = lf_block_reduce(lf_st1, reinterpret_cast<lf_loop1*>(lf_shared));",
                        "if (true && lf_cached1) {",
                        "= lf_reg1[lf_k];",
                        "lf_true_divide(",
                        "*reinterpret_cast<lf_vec<float>*>(out0 + ",
                        "} else {",
                        "in0 + ",
                        "lf_exp("});

  const std::size_t trip = src.find("for (int lf_k = 0;"), cached = src.find("lf_reg0[lf_k] = lf_l");
  ASSERT_LT(trip, cached);
  EXPECT_EQ(src.substr(trip, cached - trip).find("if ("), std::string::npos) << "a test between the trips' loads";
  // Rows ending inside the last trip: that trip loads from a start clamped into the row with no test before the
  // load either, and masks what it adds and stores.
  auto part = random_array({300, 1536}, DType::Float32);
  auto pe = exp(part - max(part, 1, true));
  auto partial = lowered_last(pe / sum(pe, 1, true));
  ASSERT_EQ(partial.ir.register_row_vectors, 2);
  ASSERT_TRUE(partial.ir.register_row_partial);
  const std::string psrc = codegen::render_cuda(partial.ir);
  expect_in_order(psrc, {"for (int lf_k = 0; lf_k < 1; ++lf_k)", "const int lf_k = 1;", "const bool lf_live = lf_rt < ",
                         "const idx_t lf_rb = lf_live ? lf_rt : ", "*reinterpret_cast<const lf_vec<float>*>(in0 + ",
                         "if (lf_live) {", "lf_acc0[lf_u] = lf_max_combine(", "lf_reg0[lf_k] = lf_l", "lf_true_divide(",
                         "if (lf_live) *reinterpret_cast<lf_vec<float>*>(out0 + "});
  const std::size_t first_trip = psrc.find("for (int lf_k = 0;"),
                    last_load = psrc.find("*reinterpret_cast<const lf_vec<float>*>(in0 + ", psrc.find("lf_k = 1;"));
  ASSERT_LT(first_trip, last_load);
  EXPECT_EQ(psrc.substr(first_trip, last_load - first_trip).find("if ("), std::string::npos)
      << "a test before the last trip's load";
  auto other = random_array({300, 1002}, DType::Float32);
  auto oe = exp(other - max(other, 1, true));
  EXPECT_EQ(lowered_last(oe / sum(oe, 1, true)).ir.register_row_vectors, 0) << "rows of 1002: not whole vectors";

  auto wide = random_array({300, 10000}, DType::Float32);
  auto we = exp(wide - max(wide, 1, true));
  auto wide_softmax = lowered_last(we / sum(we, 1, true));
  ASSERT_EQ(wide_softmax.ir.register_row_vectors, 0) << "rows of 10000 do not fit";
  const std::string shared = codegen::render_cuda(wide_softmax.ir);
  EXPECT_EQ(shared.find("lf_reg"), std::string::npos);
  expect_in_order(shared, {"__launch_bounds__(256) ",
                           "extern __shared__",
                           "lf_row_cache[]",
                           "%%dynamic_smem_size",
                           "lf_cache0 = ",
                           "lf_cache1 = ",
                           "lf_cache_row * 4 <= lf_cache_bytes",
                           "lf_cached0 = lf_vector0 && lf_cache_fits",
                           "*reinterpret_cast<const lf_vec<float>*>(in0 + ",
                           "if (lf_cached0) *reinterpret_cast<lf_vec<float>*>(lf_cache0 + lf_rb) = lf_l",
                           "lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));",
                           "lf_cached1 = lf_vector1 && lf_cache_fits",
                           "if (true && lf_cached0) {",
                           "*reinterpret_cast<const lf_vec<float>*>(lf_cache0 + lf_rb)",
                           "lf_exp(",
                           "if (lf_cached1) *reinterpret_cast<lf_vec<float>*>(lf_cache1 + lf_rb) = lf_w",
                           "lf_st1 = lf_block_reduce(lf_st1, reinterpret_cast<lf_loop1*>(lf_shared));",
                           "if (true && lf_cached1) {",
                           "*reinterpret_cast<const lf_vec<float>*>(lf_cache1 + lf_rb)",
                           "lf_true_divide(",
                           "*reinterpret_cast<lf_vec<float>*>(out0 + ",
                           "} else {",
                           "in0 + ",
                           "lf_exp("});
  // The cached versions of the last loop neither read the input nor compute exp in their whole trips.
  for (const std::string* text : {&src, &shared}) {
    const auto from = text->find("if (true && lf_cached1) {");
    const auto to = text->find("} else {", from);
    ASSERT_NE(to, std::string::npos);
    const std::string cached = text->substr(from, to - from);
    EXPECT_EQ(cached.find("lf_exp("), std::string::npos) << cached;
    EXPECT_EQ(cached.find("in0"), std::string::npos) << cached;
  }

  auto rowvar = lowered_last(mean(m * m, 1) - square(mean(m, 1)));
  EXPECT_EQ(rowvar.ir.row_cache.bytes_per_element(), 0);
  const std::string one_loop = codegen::render_cuda(rowvar.ir);
  EXPECT_EQ(one_loop.find("lf_row_cache"), std::string::npos);
  // Only kernels holding rows in registers ask for fewer resident blocks (ptxas keeps the row in registers).
  EXPECT_NE(one_loop.find("__launch_bounds__(256) "), std::string::npos);
  expect_in_order(one_loop, {"lf_vector0 = ", "*reinterpret_cast<const lf_vec<float>*>(in0 + ", "} else {", "in0[",
                             // both sums combined over the block together, by the one tree
                             "lf_st0.a0 = lf_acc0_v;", "lf_st0.a1 = lf_acc1_v;",
                             "lf_st0 = lf_block_reduce(lf_st0, reinterpret_cast<lf_loop0*>(lf_shared));",
                             "lf_acc0_v = lf_st0.a0;", "lf_acc1_v = lf_st0.a1;"});
  EXPECT_EQ(one_loop.find("lf_block_reduce(", one_loop.find("lf_block_reduce(lf_st0") + 1), std::string::npos)
      << "one block reduction for the loop's two accumulators";

  // Two inputs read again by the output loop, of two types: both cached; in shared memory (rows of 3000 at 12
  // bytes an element do not fit in registers) the wider first, in registers an array of each type.
  auto f = random_array({300, 3000}, DType::Float32), d = random_array({300, 3000}, DType::Float64);
  auto mixed = lowered_last((f - max(f, 1, true)) * d / sum(f * d, 1, true));
  EXPECT_EQ(mixed.ir.row_cache.bytes_per_element(), 12);
  EXPECT_EQ(mixed.ir.register_row_vectors, 0);
  expect_in_order(codegen::render_cuda(mixed.ir),
                  {"float* const lf_cache0 = reinterpret_cast<float*>(lf_row_cache + lf_cache_row * 8)",
                   "double* const lf_cache1 = reinterpret_cast<double*>(lf_row_cache + lf_cache_row * 0)",
                   "lf_cache_row * 12 <= lf_cache_bytes"});
  auto fs = random_array({300, 2048}, DType::Float32), ds = random_array({300, 2048}, DType::Float64);
  auto mixed_short = lowered_last((fs - max(fs, 1, true)) * ds / sum(fs * ds, 1, true));
  EXPECT_EQ(mixed_short.ir.register_row_vectors, 2);
  expect_in_order(codegen::render_cuda(mixed_short.ir),
                  {"__launch_bounds__(256, 3)", "lf_vec<float> lf_reg0[2];", "lf_vec<double> lf_reg1[2];"});
}

TEST(Codegen, ChainRendersVectorLoadsAndNoIncludes) {
  auto x = random_array({1024}, DType::Float32), y = random_array({1024}, DType::Float32);
  auto k = lowered({chain(x, y)});
  std::string src = codegen::render_cuda(k.ir);
  EXPECT_EQ(src.find("#include"), std::string::npos);
  expect_in_order(
      src, {"extern \"C\" __global__ void __launch_bounds__(256) " + k.ir.name + "(", "const float* __restrict__ in0",
            "const float* __restrict__ in1", "float* __restrict__ out0", "const idx_t n", "const float p",
            // every vector of both inputs is loaded before the first arithmetic
            "lf_l0[u] = *reinterpret_cast<const lf_vec<float>*>(in0 + lf_first + (idx_t)u * blockDim.x * 4)",
            "lf_l1[u] = *reinterpret_cast<const lf_vec<float>*>(in1 + lf_first + (idx_t)u * blockDim.x * 4)",
            "const lf_vec<float>& l0 = lf_l0[u];", "lf_sin(", "lf_cos(", "lf_exp(", "lf_sqrt(",
            "s0.v[j] = ", "*reinterpret_cast<lf_vec<float>*>(out0 + base) = s0;", "out0[i] = "});
  EXPECT_EQ(k.ir.inputs.size(), 2u);
  EXPECT_TRUE(k.ir.index32);
}

// A heat-equation step reads five shifted views of one array. Their addresses step by one with a thread's element, so
// the vector path reads each view's four values before its loop over them: one vector load where all four are
// wanted and aligned, else one by one. A transposed view (step: the row stride) is read element by element.
TEST(Codegen, ViewLoadsSteppingByOneReadFourValuesAtOnce) {
  auto u = random_array({64, 64}, DType::Float32);
  auto in = slice(1, -1);
  auto c = u(in, in);
  auto step =
      c + 0.1f * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(2, none)) + u(in, slice(0, -2)) - 4.0f * c);
  auto heat = lowered_last(u.at(in, in).set(step));
  const std::string src = codegen::render_cuda(heat.ir);
  auto count = [&](const char* pattern) {
    const std::regex re(pattern);
    return std::distance(std::sregex_iterator(src.begin(), src.end(), re), std::sregex_iterator());
  };
  expect_in_order(src, {"lf_vec<float> lf_gv", "bool lf_p", "if (j == 0) lf_a", "% sizeof(lf_vec<float>) == 0) {",
                        "= *reinterpret_cast<const lf_vec<float>*>(in", "} else {", ".v[j] = lf_p",
                        "const lf_vec<float>& lf_g", "for (int j = 0; j < 4; ++j) {", ".v[j];"});
  EXPECT_EQ(heat.ir.inputs.size(), 6u);
  // The five views; the array itself is a LoadLinear.
  EXPECT_EQ(count(R"(lf_gv\d+\[u\] = \*reinterpret_cast<const lf_vec<float>\*>\(in)"), 5) << src;

  auto m = random_array({64, 64}, DType::Float32);
  const std::string transposed = codegen::render_cuda(lowered({m.T() + m}).ir);
  EXPECT_FALSE(std::regex_search(transposed, std::regex(R"(lf_g\w*\d+)"))) << transposed;
}

TEST(Codegen, KeyIgnoresShapesScalarsAndBuffers) {
  auto a = lowered({random_array({1000}, DType::Float32) * 2.0f + 1.0f});
  auto b = lowered({random_array({77}, DType::Float32) * 5.0f + 3.0f});
  EXPECT_EQ(a.ir.hash, b.ir.hash);
  EXPECT_EQ(a.ir.name, b.ir.name);
  EXPECT_EQ(codegen::render_cuda(a.ir), codegen::render_cuda(b.ir));
  // Strides and offsets of views are parameters too.
  auto m1 = random_array({30, 40}, DType::Float32), m2 = random_array({9, 5}, DType::Float32);
  auto c = lowered({m1.T()(slice(1, none)) + 1.0f});
  auto d = lowered({m2.T()(slice(2, none)) + 7.0f});
  EXPECT_EQ(c.ir.hash, d.ir.hash);
}

// Hash-consing makes equal scalars one node; the kernel must not depend on which scalar values are equal, or a
// new scalar could need a new kernel.
TEST(Codegen, KeyIgnoresWhichScalarsAreEqual) {
  auto x = random_array({100}, DType::Float64), y = random_array({100}, DType::Float64);
  auto same = lowered({x * 0.5 + y * 0.5});
  auto different = lowered({x * 0.5 + y * 0.7});
  EXPECT_EQ(same.ir.hash, different.ir.hash);
  EXPECT_EQ(codegen::render_cuda(same.ir), codegen::render_cuda(different.ir));
  auto pad_same = lowered({pad(x, {{1, 1}}, 0.0) + 0.0});
  auto pad_different = lowered({pad(x, {{1, 1}}, 0.0) + 1.0});
  EXPECT_EQ(pad_same.ir.hash, pad_different.ir.hash);
}

TEST(Codegen, KeyDistinguishesStructureAndTypes) {
  auto x = random_array({100}, DType::Float32);
  auto add = lowered({x + 1.0f}), mul = lowered({x * 1.0f});
  auto x64 = random_array({100}, DType::Float64);
  auto add64 = lowered({x64 + 1.0});
  EXPECT_NE(add.ir.hash, mul.ir.hash);
  EXPECT_NE(add.ir.hash, add64.ir.hash);
  EXPECT_NE(codegen::render_cuda(add.ir), codegen::render_cuda(mul.ir));
}

TEST(Codegen, RenderingIsDeterministic) {
  auto x = random_array({8, 8}, DType::Float32);
  auto e = roll(x.T(), 2, 0) + pad(x(slice(1, -1), slice(1, -1)), {{1, 1}}, 0.0);
  auto k1 = lowered({e});
  auto k2 = lowered({e});
  EXPECT_EQ(codegen::render_cuda(k1.ir), codegen::render_cuda(k2.ir));
  EXPECT_EQ(codegen::to_string(k1.ir), codegen::to_string(k2.ir));
}

TEST(Codegen, MultiOutputKernelStoresEachOutput) {
  auto x = random_array({256}, DType::Float32);
  auto k = lowered({exp(x), exp(x) + 1.0f, x > 1.0f});
  std::string src = codegen::render_cuda(k.ir);
  expect_in_order(src, {"float* __restrict__ out0", "float* __restrict__ out1", "bool* __restrict__ out2"});
  EXPECT_EQ(k.ir.inputs.size(), 1u) << "x is read once";
  std::size_t exps = 0;
  for (auto& i : k.ir.code) exps += i.op == codegen::IrOp::Unary;
  EXPECT_EQ(exps, 1u) << "exp(x) is computed once for both outputs";
}

// A sample of the kernels the library generates, compiled by NVRTC for sm_90: the printer's output must be valid
// CUDA for every dtype, op family and view kind, also in CI where no GPU runs them.
TEST(Codegen, SampleKernelsCompileWithNvrtc) {
  std::vector<Array> samples;
  std::vector<DType> types;
  for (int k = 0; k < kNumDTypes; ++k) types.push_back(DType(k));
  for (DType t : types) {
    auto a = random_array({6, 10}, t), b = random_array({10}, t);
    if (t != DType::Bool) {
      samples.push_back(a + b * a - b);
      if (!is_complex(t)) samples.push_back(floor_divide(a, b) + remainder(a, b));
      samples.push_back(where(a > b, minimum(a, b), maximum(a, b)));
      samples.push_back(power(a, b) + abs(-a) + sign(a) + square(a));
    }
    if (!is_inexact(t)) samples.push_back((a & b) | (a ^ ~b));
    if (!is_inexact(t)) samples.push_back(left_shift(a, b) + right_shift(a, b));
    samples.push_back(logical_xor(a > 1, b < 2) && !isnan(a.astype(DType::Float32)));
    samples.push_back(a(slice(0, none), slice(1, none)) * a(slice(0, none), slice(0, -1))); // shifted views
    // A transposed operand, staged through tiles of shared memory of every type (codegen/TransposeTiles.h).
    samples.push_back(ascontiguousarray(random_array({10, 6}, t).T()));
    for (DType u : types) samples.push_back(a.astype(u));
  }
  auto f = random_array({6, 10}, DType::Float32);
  samples.push_back(exp2(f) + expm1(f) + log2(f) + log10(f) + log1p(f) + tan(f) + asin(f / 4.0f) + acos(f / 4.0f) +
                    atan(f) + sinh(f) + cosh(f) + tanh(f) + erf(f) + rsqrt(f) + reciprocal(f) + ceil(f) + rint(f) +
                    trunc(f) + atan2(f, f + 1.0f) + hypot(f, f * 2.0f) + logaddexp(f, -f));
  auto d = random_array({6, 10}, DType::Float64);
  samples.push_back(hypot(d, d + 1.0) + logaddexp(d, d * 3.0));
  samples.push_back(concatenate({f, f * 2.0f}, 1));
  samples.push_back(stack({f, f}, 0));
  samples.push_back(roll(f.T().reshape({-1}), 7));
  samples.push_back(concatenate({f.T(), f.T() * 2.0f}, 1) + 1.0f); // staged loads under a predicate
  samples.push_back(ascontiguousarray(random_array({3, 5, 7}, DType::Float64).transpose({2, 1, 0})));
  samples.push_back(f.at(slice(5, 0, -2), 3).set(1.0f));
  samples.push_back(arange(0.0, 6.0, 0.5) + linspace(0, 1, 12));
  samples.push_back(eye(5, 7, 1, DType::Int32));
  // Reductions: many outer elements (row schedule) and few (split schedule), every reduction and dtype.
  for (DType t : types) {
    for (Shape shape : {Shape{300, 9}, Shape{4, 1000}}) {
      auto a = random_array(shape, t);
      samples.push_back(sum(a, 1));
      samples.push_back(prod(a, 1));
      samples.push_back(min(a, 1));
      samples.push_back(max(a, 1));
      samples.push_back(argmax(a, 1));
      samples.push_back(argmin(a, 1));
      samples.push_back(any(a, 1));
      samples.push_back(all(a, 1));
      samples.push_back(nanmax(a, 1));
      samples.push_back(nanmin(a, 1));
    }
    // Column reductions (partials of small types are loaded through __ldcg and shuffled as int).
    auto c = random_array({64, 300}, t);
    samples.push_back(max(c, 0));
    samples.push_back(argmin(c, 0));
  }
  auto rows = random_array({300, 64}, DType::Float32);
  auto e = exp(rows - max(rows, 1, true));
  samples.push_back(e / sum(e, 1, true));
  samples.push_back(mean(rows * rows, 1) - square(mean(rows, 1)));
  samples.push_back(sum(square(rows - rows.T().T() * 2.0f)));
  auto rows64 = random_array({300, 64}, DType::Float64), gamma = random_array({64}, DType::Float32);
  auto e64 = exp(rows64 - max(rows64, 1, true));
  samples.push_back(e64 / sum(e64, 1, true));
  samples.push_back((rows - mean(rows, 1, true)) / sqrt(var(rows, 1, 0, true) + 1e-5f) * gamma);
  samples.push_back((rows - max(rows, 1, true)) * rows64 / sum(rows * rows64, 1, true));
  // Outer reductions (the innermost axis kept): a thread per column, split over blocks or not.
  auto cols = random_array({64, 300}, DType::Float32);
  samples.push_back(sum(cols, 0));
  samples.push_back(argmax(cols, 0));
  samples.push_back(cols - mean(cols, 0, true));
  samples.push_back(var(cols, 0));
  samples.push_back(nanvar(rows, 1) + nanmean(rows, 1));
  samples.push_back(nanstd(cols, 0) + nansum(cols, 0) + nanprod(cols, 0));
  // Scans of each width and kind of type: a contiguous axis (the tiled path and a thread per line, picked at run time)
  // with an elementwise prologue, and a strided one.
  for (DType t :
       {DType::Bool, DType::Int8, DType::Int64, DType::Float16, DType::Float32, DType::Float64, DType::Complex128}) {
    auto s = random_array({4, 1000}, t);
    samples.push_back(cumsum(s * s, 1));
    samples.push_back(cumprod(s, 1));
    samples.push_back(cumsum(s, 0));
  }
  codegen::CompileOptions opt;
  opt.arch = 90;
  for (std::size_t k = 0; k < samples.size(); ++k) {
    // The plans partition makes for the sample, each lowered as the runtime would (earlier plans' outputs are
    // materialized first, so later ones read them).
    if (fusion::partition({graph_node(samples[k])}, {}).empty()) continue; // already materialized (an astype)
    auto low = lowered_last(samples[k]);
    std::string src = codegen::render_cuda(low.ir);
    try {
      auto compiled = codegen::compile_cuda(src, low.ir.name, opt);
      EXPECT_FALSE(compiled.image.empty());
    } catch (const CompileError& e) {
      ADD_FAILURE() << "sample " << k << " failed to compile:\n" << e.what() << "\n" << codegen::numbered_source(src);
    }
  }
}

// A tiled scan reads each contiguous input and writes each result once: streaming loads and stores (evict first),
// measured faster (codegen/Schedule.h, streams_vector_loads).
TEST(Codegen, TiledScansStreamTheirLoadsAndStores) {
  const auto x = random_array({4, 1000}, DType::Float32);
  const std::string src = codegen::render_cuda(lowered_last(cumsum(x * x + 1.0f, 1)).ir);
  expect_in_order(src, {"lf_load_stream(reinterpret_cast<const lf_vec<float>*>(in", "lf_scan_look_back",
                        "lf_store_stream(reinterpret_cast<lf_vec<float>*>(out"});
}

// The numerics policy (docs/semantics.md, "Numerics"): a generated kernel rounds every product and sum, as the CPU
// backend does, so x * y + z (and arange's start + i * step) compile to mul.rn and add.rn, never to fma.rn, which
// NVRTC's default --fmad=true would make of them.
TEST(Codegen, GeneratedKernelsRoundEveryProductAndSum) {
  for (DType t : {DType::Float32, DType::Float64}) {
    auto x = random_array({1024}, t), y = random_array({1024}, t), z = random_array({1024}, t);
    auto low = lowered({x * y + z + arange(0.0, 512.0, 0.5, t)});
    const std::string src = codegen::render_cuda(low.ir);
    codegen::CompileOptions opt;
    opt.ptx = true;
    const auto compiled = codegen::compile_cuda(src, low.ir.name, opt);
    const std::string ptx(compiled.image.data());
    const std::string suffix = t == DType::Float32 ? ".f32" : ".f64";
    EXPECT_EQ(ptx.find("fma."), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("mul.rn" + suffix), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("add.rn" + suffix), std::string::npos) << ptx;
  }
}

// Kernels with 64-bit indices divide by their dimensions through __umul64hi: a leaf whose storage claims more elements
// than 32-bit indices reach makes one (only its first 64 are read: the kernel is compiled, not run).
TEST(Codegen, SixtyFourBitIndexKernelsDivideByTheirDimensions) {
  struct LargeClaimStorage : graph::Storage {
    explicit LargeClaimStorage(std::vector<float>& host) {
      data = host.data();
      bytes = std::size_t(codegen::kIndex32Limit + 4096) * sizeof(float);
    }
  };
  std::vector<float> host(64, 1.5f);
  const Array big = detail::ApiAccess::adopt(
      graph::make_buffer(std::make_shared<LargeClaimStorage>(host), DType::Float32, {4, 2, 8}, 0, {16, 8, 1}));
  const Array result = big * random_array({4, 1, 1}, DType::Float32) + random_array({8}, DType::Float32) +
                       big(slice(none, none, -1), slice(none, none), slice(none, none, -1));
  // One plan: nothing is evaluated, so no backend reads the storage's claim.
  const auto plans = fusion::partition({graph_node(result)}, {});
  ASSERT_EQ(plans.size(), 1u);
  const auto low = codegen::lower(plans[0]);
  ASSERT_FALSE(low.ir.index32);
  const std::string src = codegen::render_cuda(low.ir);
  expect_in_order(src, {"typedef long long idx_t;", "struct lf_divisor { unsigned long long mul; unsigned shift; };",
                        "__umul64hi", "const lf_divisor lf_d", "lf_div("});
  codegen::CompileOptions opt;
  opt.arch = 90;
  try {
    EXPECT_FALSE(codegen::compile_cuda(src, low.ir.name, opt).image.empty());
  } catch (const CompileError& e) {
    ADD_FAILURE() << e.what() << "\n" << codegen::numbered_source(src);
  }
}

// The constants a kernel divides indices by (codegen/KernelAbi.h): every divisor up to 4096, the divisors around
// each power of two and the largest, against the division they replace, at the dividends where a multiply-high
// rounds wrong first (multiples of d and their neighbours, the largest index) and random ones.
TEST(FastDivisor, DividesEveryIndexAsDivisionDoes) {
  std::mt19937_64 rng(20261203);
  std::vector<std::int64_t> divisors;
  for (std::int64_t d = 1; d <= 4096; ++d) divisors.push_back(d);
  for (int b = 12; b < 63; ++b)
    for (std::int64_t e : {-1, 0, 1}) divisors.push_back((std::int64_t(1) << b) + e);
  divisors.push_back(std::numeric_limits<std::int64_t>::max());
  for (int k = 0; k < 2000; ++k) divisors.push_back(std::int64_t(rng() >> 1) >> (rng() % 63));
  for (std::int64_t d : divisors) {
    if (d < 1) continue;
    const bool fits32 = d < (std::int64_t(1) << 31);
    const codegen::FastDivisor64 d64 = codegen::fast_divisor64(d);
    const codegen::FastDivisor32 d32 = fits32 ? codegen::fast_divisor32(d) : codegen::FastDivisor32{};
    auto check = [&](std::int64_t n) {
      if (n < 0) return;
      ASSERT_EQ(d64.divide(std::uint64_t(n)), std::uint64_t(n / d)) << n << " / " << d << " (64 bits)";
      if (fits32 && n <= std::numeric_limits<std::int32_t>::max()) {
        ASSERT_EQ(d32.divide(std::uint32_t(n)), std::uint32_t(n / d)) << n << " / " << d << " (32 bits)";
      }
    };
    for (std::int64_t q : {0, 1, 2, 3, 1000, 65535}) {
      for (std::int64_t e : {-1, 0, 1}) {
        std::int64_t multiple = 0, n = 0;
        if (__builtin_mul_overflow(q, d, &multiple) || __builtin_add_overflow(multiple, e, &n)) continue;
        check(n);
      }
    }
    for (std::int64_t top :
         {std::int64_t(std::numeric_limits<std::int32_t>::max()), std::numeric_limits<std::int64_t>::max()})
      for (std::int64_t e : {0, 1, 2}) check(top - e - (top - e) % d), check(top - e);
    for (int k = 0; k < 64; ++k) {
      check(std::int64_t(rng() >> 33));
      check(std::int64_t(rng() >> 1));
    }
  }
  // A divisor an empty dimension can give (no element is ever divided by it) divides by one.
  EXPECT_EQ(codegen::fast_divisor32(0).divide(12345u), 12345u);
  EXPECT_EQ(codegen::fast_divisor64(0).divide(12345u), 12345u);
}
