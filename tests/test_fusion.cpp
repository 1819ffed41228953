// Fusion: how many kernels each workload takes, bounded laziness, eager mode, multi-output kernels.
#include <lazyfuse/lazyfuse.hpp>

#include "graph/Node.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace lazyfuse;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g{std::random_device{}()};
  return g;
}

Array random_f32(Shape shape, float lo = -2, float hi = 2) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(std::size_t(graph::shape_size(shape)));
  for (auto& x : v) x = d(rng());
  return asarray(v, shape);
}

// Kernels launched while `f` runs.
template <class F> std::uint64_t kernels_of(F&& f) {
  auto before = kernel_cache_stats().kernels_launched;
  f();
  return kernel_cache_stats().kernels_launched - before;
}

Array chain(const Array& x, const Array& y) {
  return sqrt(abs(sin(x) * cos(y) + x * y * 0.5 - exp(-x * x)));
}

double ncdf(double x) {
  return 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
}

} // namespace

TEST(Fusion, ChainIsOneKernel) {
  auto x = random_f32({1 << 12}), y = random_f32({1 << 12});
  Array r;
  EXPECT_EQ(kernels_of([&] { r = chain(x, y).eval(); }), 1u);
  auto hx = x.get<float>(), hy = y.get<float>(), hr = r.get<float>();
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < hr.size(); ++i) {
    double a = hx[i], b = hy[i];
    double ref = std::sqrt(std::abs(std::sin(a) * std::cos(b) + a * b * 0.5 - std::exp(-a * a)));
    err += (hr[i] - ref) * (hr[i] - ref);
    norm += ref * ref;
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-6);
}

TEST(Fusion, BlackScholesCallAndPutAreOneKernel) {
  const std::int64_t n = 5000;
  auto S = random_f32({n}, 10, 100), K = random_f32({n}, 10, 100), T = random_f32({n}, 0.1f, 2);
  const float r = 0.02f, v = 0.30f;
  auto sqrtT = sqrt(T);
  auto d1 = (log(S / K) + (r + 0.5f * v * v) * T) / (v * sqrtT);
  auto d2 = d1 - v * sqrtT;
  auto cdf = [](const Array& d) { return 0.5f * (1.0f + erf(d * float(M_SQRT1_2))); };
  auto disc = K * exp(-r * T);
  auto call = S * cdf(d1) - disc * cdf(d2);
  auto put = disc * cdf(-d2) - S * cdf(-d1);
  EXPECT_EQ(kernels_of([&] { eval(call, put); }), 1u);
  auto hS = S.get<float>(), hK = K.get<float>(), hT = T.get<float>(), hc = call.get<float>(), hp = put.get<float>();
  double ec = 0, nc = 0, ep = 0, np = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double s = hS[i], k = hK[i], t = hT[i];
    double e1 = (std::log(s / k) + (r + 0.5 * double(v) * v) * t) / (v * std::sqrt(t));
    double e2 = e1 - v * std::sqrt(t);
    double c = s * ncdf(e1) - k * std::exp(-r * t) * ncdf(e2);
    double p = k * std::exp(-r * t) * ncdf(-e2) - s * ncdf(-e1);
    ec += (hc[i] - c) * (hc[i] - c), nc += c * c;
    ep += (hp[i] - p) * (hp[i] - p), np += p * p;
  }
  EXPECT_LT(std::sqrt(ec / nc), 2e-5);
  EXPECT_LT(std::sqrt(ep / np), 2e-5);
}

TEST(Fusion, HeatStepIsOneKernel) {
  const std::int64_t n = 96;
  auto u = random_f32({n, n}, 0, 1).eval();
  auto inner = slice(1, -1);
  Array next;
  EXPECT_EQ(kernels_of([&] {
              auto c = u(inner, inner);
              auto north = u(slice(0, -2), inner), south = u(slice(2, none), inner);
              auto west = u(inner, slice(0, -2)), east = u(inner, slice(2, none));
              next = u.at(inner, inner).set(c + 0.1f * (north + south + east + west - 4.0f * c)).eval();
            }),
            1u);
  auto h = u.get<float>(), o = next.get<float>();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = h(i, j);
      if (i > 0 && j > 0 && i < n - 1 && j < n - 1)
        ref = double(h(i, j)) +
              0.1 * (double(h(i - 1, j)) + h(i + 1, j) + h(i, j + 1) + h(i, j - 1) - 4.0 * double(h(i, j)));
      ASSERT_NEAR(o(i, j), ref, 1e-5) << "at " << i << ", " << j;
    }
}

TEST(Fusion, OutputsOfDifferentShapesAreSeparateKernels) {
  auto x = random_f32({64, 32});
  auto a = x * 2.0f;
  auto b = x(0) + 1.0f;
  EXPECT_EQ(kernels_of([&] { eval(a, b); }), 2u);
}

TEST(Fusion, ViewsOfLazyExpressionsFuse) {
  auto x = random_f32({16, 8}), y = random_f32({8, 16});
  // (x + 1).T * y[::-1], reshaped to (4, 32), every other row, then rolled along the columns: one kernel.
  auto e = roll(((x + 1.0f).T() * y(slice(none, none, -1))).reshape({4, 32})(slice(none, none, 2)), 3, 1);
  EXPECT_EQ(kernels_of([&] { e.eval(); }), 1u);
  ASSERT_EQ(e.shape(), (Shape{2, 32}));
  auto hx = x.get<float>(), hy = y.get<float>(), he = e.get<float>();
  auto prod = [&](int i, int j) { return (hx(j, i) + 1.0f) * hy(7 - i, j); }; // (8, 16)
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 32; ++c) {
      int src_c = (c - 3 + 32) % 32;
      int flat = (2 * r) * 32 + src_c; // row 2r of the (4, 32) reshape
      ASSERT_FLOAT_EQ(he(r, c), prod(flat / 16, flat % 16)) << r << ", " << c;
    }
}

// Kernel structures: on the GPU, the cut's 2,048 steps (one loop) and the end's; on the CPU backend (kernels of 256
// nodes), a full kernel, the last of each cut and the end's.
TEST(Fusion, BoundedLazinessCompilesAtMostThreeKernelsAndStaysFlat) {
  auto x = random_f32({1024});
  auto ref = x.get<float>();
  const auto nodes_before = graph::live_node_count();
  const auto misses_before = kernel_cache_stats().misses;
  std::size_t peak_nodes = 0;
  for (int step = 0; step < 10000; ++step) {
    x = x * 0.5f + 1.0f;
    peak_nodes = std::max(peak_nodes, graph::live_node_count());
  }
  auto h = x.get<float>();
  EXPECT_LE(kernel_cache_stats().misses - misses_before, backend() == Backend::Cuda ? 2u : 3u);
  const auto max_depth = std::size_t(std::stoul(config::get("LAZYFUSE_MAX_DEPTH")));
  EXPECT_LT(peak_nodes - nodes_before, 2 * max_depth + 16) << "the lazy graph must stay bounded";
  for (std::size_t i = 0; i < h.size(); ++i) {
    float r = ref[i];
    for (int step = 0; step < 10000; ++step) r = r * 0.5f + 1.0f;
    ASSERT_NEAR(h[i], r, 1e-5f);
  }
}

TEST(Fusion, EagerModeRunsEveryOpAsItsOwnKernelWithTheSameResults) {
  auto x = random_f32({1000}), y = random_f32({1000});
  auto lazy = chain(x, y).get<float>();
  config::set_eager(true);
  std::uint64_t kernels = 0;
  HostArray<float> eager;
  kernels = kernels_of([&] { eager = chain(x, y).get<float>(); });
  config::reset("LAZYFUSE_MODE");
  EXPECT_GE(kernels, 10u);
  for (std::size_t i = 0; i < lazy.size(); ++i) ASSERT_NEAR(eager[i], lazy[i], 2e-6f * (1 + std::abs(lazy[i])));
}

TEST(Fusion, MultiOutputKernelReadsSharedInputsOnce) {
  auto x = random_f32({300});
  auto a = sin(x) + 1.0f, b = sin(x) * 2.0f, c = (sin(x) > 0.0f);
  EXPECT_EQ(kernels_of([&] { eval(a, b, c); }), 1u);
  auto hx = x.get<float>(), ha = a.get<float>(), hb = b.get<float>();
  auto hc = c.get<bool>();
  for (std::size_t i = 0; i < hx.size(); ++i) {
    float s = std::sin(hx[i]);
    ASSERT_NEAR(ha[i], s + 1, 1e-6);
    ASSERT_NEAR(hb[i], s * 2, 1e-6);
    ASSERT_EQ(hc[i], s > 0) << i;
  }
}

TEST(Fusion, ExpensiveNodeReadThroughSeveralViewsIsStoredOnce) {
  auto u = random_f32({64, 64});
  auto e = exp(sin(u) * cos(u) + tanh(u) * sin(u * 2.0f) + exp(cos(u)));
  auto s = e(slice(1, none)) + e(slice(0, -1));
  auto k = kernels_of([&] { s.eval(); });
  EXPECT_EQ(k, 2u) << "an expensive node used through two shifted views is stored once, then read twice";
}

TEST(Fusion, StencilOfAStencilIsStoredOneStepPerKernel) {
  // A periodic heat loop recorded without eval(): each step reads the one before at five index frames (four rolls
  // and the centre), so inlining a step into the next would compute it five times. One kernel per step.
  auto u0 = random_f32({32, 32});
  u0.eval();
  Array u = u0;
  const int steps = 6;
  for (int k = 0; k < steps; ++k)
    u = u + 0.1f * (roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1) - 4.0f * u);
  EXPECT_EQ(kernels_of([&] { u.eval(); }), std::uint64_t(steps));
  // The same steps evaluated one at a time give the same bits.
  Array v = u0;
  for (int k = 0; k < steps; ++k) {
    v = v + 0.1f * (roll(v, 1, 0) + roll(v, -1, 0) + roll(v, 1, 1) + roll(v, -1, 1) - 4.0f * v);
    v.eval();
  }
  EXPECT_EQ(u.get<float>().to_vector(), v.get<float>().to_vector());
}

// A plan whose kernel would print more than codegen::kMaxPrintedInstructions (past which ptxas spilled and took
// seconds) is split: a 49-point stencil through rolls lowers to about 630 instructions and runs as several kernels,
// with the values of a float64 reference; a 9-point one (about 110) stays one kernel. An equal graph evaluated again
// replays the same kernels (the plan cache records what ran).
TEST(Fusion, KernelsTooLongToCompileWellAreSplit) {
  constexpr int n = 32;
  auto g = random_f32({n, n});
  g.eval();
  const auto host = g.get<float>().to_vector();
  auto stencil = [&](int r) {
    Array s = g * 0.0f;
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) s = s + roll(roll(g, dy, 0), dx, 1) * float(1 + dy + 2 * dx);
    return s;
  };
  auto reference = [&](int r) {
    std::vector<double> out(std::size_t(n * n), 0.0);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx)
            out[std::size_t(i * n + j)] +=
                double(host[std::size_t(((i - dy + n) % n) * n + (j - dx + n) % n)]) * double(1 + dy + 2 * dx);
    return out;
  };
  auto relative_error = [&](const Array& a, const std::vector<double>& ref) {
    const auto got = a.get<float>().to_vector();
    double num = 0, den = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) {
      num += (double(got[k]) - ref[k]) * (double(got[k]) - ref[k]);
      den += ref[k] * ref[k];
    }
    return std::sqrt(num / den);
  };
  Array small = stencil(1);
  EXPECT_EQ(kernels_of([&] { small.eval(); }), 1u);
  EXPECT_LT(relative_error(small, reference(1)), 1e-6);
  Array wide = stencil(3);
  const std::uint64_t split = kernels_of([&] { wide.eval(); });
  EXPECT_GE(split, 2u) << "a 49-point stencil in one kernel";
  EXPECT_LT(relative_error(wide, reference(3)), 1e-6);
  Array again = stencil(3);
  EXPECT_EQ(kernels_of([&] { again.eval(); }), split);
  EXPECT_EQ(again.get<float>().to_vector(), wide.get<float>().to_vector());
}

// The same loop long enough for bounded laziness to cut it (LAZYFUSE_MAX_DEPTH, 100 by default, about 14 steps): a
// cut stores the step state the rolls read, not the roll or the partial sum that reached the limit, and views of it
// built before the cut count as shallow afterwards, so the loop takes at most one kernel per step (it took 27 kernels
// for 20 steps, the state computed again by each later cut; where a cut lands, a partial step may share a kernel).
TEST(Fusion, DepthCutsOfARollHeatLoopStoreTheStepState) {
  auto u0 = random_f32({32, 32});
  u0.eval();
  Array u = u0;
  const int steps = 40;
  const std::uint64_t kernels = kernels_of([&] {
    for (int k = 0; k < steps; ++k)
      u = u + 0.1f * (roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1) - 4.0f * u);
    u.eval();
  });
  EXPECT_LE(kernels, std::uint64_t(steps));
  Array v = u0;
  for (int k = 0; k < steps; ++k)
    v = (v + 0.1f * (roll(v, 1, 0) + roll(v, -1, 0) + roll(v, 1, 1) + roll(v, -1, 1) - 4.0f * v)).eval();
  EXPECT_EQ(u.get<float>().to_vector(), v.get<float>().to_vector());
}

// An iterative solver that checks a norm on the host every 10 steps and never calls eval(): each check's evaluation
// stores what it computed, so the next check starts from there instead of recomputing the earlier steps (issue 19's
// bound: at most 120 kernels for 100 steps and 10 checks). Norms and the final state have the bits of the same loop
// evaluated step by step.
TEST(Fusion, SolverCheckingANormEveryTenStepsDoesNotRecomputeEarlierSteps) {
  auto x0 = random_f32({64, 64}, 0, 1);
  x0.eval();
  auto jacobi = [](const Array& x) {
    return 0.25f * (roll(x, 1, 0) + roll(x, -1, 0) + roll(x, 1, 1) + roll(x, -1, 1));
  };
  std::vector<float> norms, stepwise_norms;
  Array x = x0;
  const std::uint64_t kernels = kernels_of([&] {
    for (int step = 1; step <= 100; ++step) {
      x = jacobi(x);
      if (step % 10 == 0) norms.push_back(sqrt(sum(x * x)).item<float>());
    }
    x.eval();
  });
  EXPECT_LE(kernels, 120u);
  Array y = x0;
  for (int step = 1; step <= 100; ++step) {
    y = jacobi(y).eval();
    if (step % 10 == 0) stepwise_norms.push_back(sqrt(sum(y * y)).item<float>());
  }
  EXPECT_EQ(norms, stepwise_norms);
  EXPECT_EQ(x.get<float>().to_vector(), y.get<float>().to_vector());
}

// The same with examples/jacobi.cpp's update (the border kept by a slice assignment) and the norm of the update:
// the step a check computes inside its norm is not stored, and the steps after it count its depth from the stored
// values, not from the depth it was built with, so LAZYFUSE_MAX_DEPTH cuts nothing: a kernel per step and per check.
TEST(Fusion, SolverStepsAfterACheckCountTheirDepthFromTheStoredSteps) {
  auto u0 = random_f32({256, 256}, 0, 1), f = random_f32({256, 256}, 0, 1);
  u0.eval();
  f.eval();
  const Slice in = slice(1, -1);
  auto step = [&](const Array& u) {
    return u.at(in, in).set(0.25f * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(0, -2)) +
                                     u(in, slice(2, none)) + f(in, in)));
  };
  std::vector<float> norms, stepwise_norms;
  Array u = u0;
  const std::uint64_t kernels = kernels_of([&] {
    for (int k = 1; k <= 100; ++k) {
      Array next = step(u);
      if (k % 10 == 0) norms.push_back(linalg::norm(next - u).item<float>());
      u = next;
    }
    u.eval();
  });
  EXPECT_EQ(kernels, 110u);
  Array v = u0;
  for (int k = 1; k <= 100; ++k) {
    Array next = step(v).eval();
    if (k % 10 == 0) stepwise_norms.push_back(linalg::norm(next - v).item<float>());
    v = next;
  }
  EXPECT_EQ(norms, stepwise_norms);
  EXPECT_EQ(u.get<float>().to_vector(), v.get<float>().to_vector());
}

TEST(Fusion, DifferenceOfADifferenceIsOneKernel) {
  // Cheap stencils of stencils still fuse: recomputing x[1:] - x[:-1] twice costs less than storing it.
  auto x = random_f32({1000});
  x.eval();
  auto d = x(slice(1, none)) - x(slice(none, -1));
  auto dd = d(slice(1, none)) - d(slice(none, -1));
  EXPECT_EQ(kernels_of([&] { dd.eval(); }), 1u);
  const auto hx = x.get<float>();
  const auto got = dd.get<float>();
  for (std::int64_t i = 0; i < 998; ++i)
    ASSERT_EQ(got[std::size_t(i)],
              (hx[std::size_t(i + 2)] - hx[std::size_t(i + 1)]) - (hx[std::size_t(i + 1)] - hx[std::size_t(i)]))
        << i;
}

TEST(Fusion, PlansOverBudgetAreSplitDeterministically) {
  config::set("LAZYFUSE_MAX_KERNEL_INPUTS", "4");
  std::vector<Array> leaves;
  for (int k = 0; k < 10; ++k) leaves.push_back(random_f32({50}));
  Array sum = leaves[0];
  for (int k = 1; k < 10; ++k) sum = sum + leaves[std::size_t(k)];
  auto k1 = kernels_of([&] { sum.eval(); });
  config::reset("LAZYFUSE_MAX_KERNEL_INPUTS");
  EXPECT_GE(k1, 3u);
  auto h = sum.get<float>();
  std::vector<HostArray<float>> hl;
  for (auto& l : leaves) hl.push_back(l.get<float>());
  for (std::size_t i = 0; i < h.size(); ++i) {
    float r = hl[0][i];
    for (int k = 1; k < 10; ++k) r += hl[std::size_t(k)][i];
    ASSERT_NEAR(h[i], r, 1e-5f);
  }
}

// ---- reductions ---------------------------------------------------------------------------------------------

TEST(FusionReductions, SumOfSquaredDifferencesIsOneKernel) {
  auto x = random_f32({1 << 14}), y = random_f32({1 << 14});
  Array r;
  EXPECT_EQ(kernels_of([&] { r = sum(square(x - y)).eval(); }), 1u);
  auto hx = x.get<float>(), hy = y.get<float>();
  double ref = 0;
  for (std::size_t i = 0; i < hx.size(); ++i) ref += (double(hx[i]) - hy[i]) * (double(hx[i]) - hy[i]);
  EXPECT_NEAR(r.item<float>(), ref, 1e-5 * ref);
}

TEST(FusionReductions, SoftmaxOverRowsIsOneKernel) {
  auto m = random_f32({300, 64}, -5, 5);
  Array s;
  EXPECT_EQ(kernels_of([&] {
              auto e = exp(m - max(m, 1, true));
              s = (e / sum(e, 1, true)).eval();
            }),
            1u);
  auto hm = m.get<float>(), hs = s.get<float>();
  for (int i = 0; i < 300; ++i) {
    double mx = -1e30, total = 0;
    for (int j = 0; j < 64; ++j) mx = std::max(mx, double(hm(i, j)));
    for (int j = 0; j < 64; ++j) total += std::exp(hm(i, j) - mx);
    for (int j = 0; j < 64; ++j) ASSERT_NEAR(hs(i, j), std::exp(hm(i, j) - mx) / total, 1e-6) << i << ", " << j;
  }
}

TEST(FusionReductions, LayerNormWithColumnScaleAndShiftIsOneKernel) {
  auto m = random_f32({400, 48}), gamma = random_f32({48}), beta = random_f32({48});
  Array out, out_rsqrt;
  EXPECT_EQ(kernels_of([&] {
              auto mu = mean(m, 1, true);
              out = ((m - mu) / sqrt(var(m, 1, 0, true) + 1e-5f) * gamma + beta).eval();
            }),
            1u);
  // As torch's F.layer_norm computes it (bench_layout's BM_LayerNormRsqrt).
  EXPECT_EQ(kernels_of([&] {
              auto mu = mean(m, 1, true);
              out_rsqrt = ((m - mu) * rsqrt(var(m, 1, 0, true) + 1e-5f) * gamma + beta).eval();
            }),
            1u);
  auto hm = m.get<float>(), hg = gamma.get<float>(), hb = beta.get<float>(), ho = out.get<float>(),
       hr = out_rsqrt.get<float>();
  for (int i = 0; i < 400; ++i) {
    double mu = 0, v = 0;
    for (int j = 0; j < 48; ++j) mu += hm(i, j);
    mu /= 48;
    for (int j = 0; j < 48; ++j) v += (hm(i, j) - mu) * (hm(i, j) - mu);
    v /= 48;
    for (int j = 0; j < 48; ++j) {
      const double want = (hm(i, j) - mu) / std::sqrt(v + 1e-5) * hg[std::size_t(j)] + hb[std::size_t(j)];
      ASSERT_NEAR(ho(i, j), want, 2e-5);
      ASSERT_NEAR(hr(i, j), want, 2e-5);
    }
  }
}

TEST(FusionReductions, MeanAndVarianceOfTheSameRowsAreOneKernel) {
  auto m = random_f32({500, 33});
  Array mu, v;
  EXPECT_EQ(kernels_of([&] {
              mu = mean(m, 1);
              v = var(m, 1);
              eval(mu, v);
            }),
            1u);
  Array rv;
  EXPECT_EQ(kernels_of([&] { rv = (mean(m * m, 1) - square(mean(m, 1))).eval(); }), 1u);
  auto hm = m.get<float>(), hmu = mu.get<float>(), hv = v.get<float>(), hrv = rv.get<float>();
  for (int i = 0; i < 500; ++i) {
    double s = 0, q = 0;
    for (int j = 0; j < 33; ++j) s += hm(i, j);
    s /= 33;
    for (int j = 0; j < 33; ++j) q += (hm(i, j) - s) * (hm(i, j) - s);
    ASSERT_NEAR(hmu[std::size_t(i)], s, 1e-6);
    ASSERT_NEAR(hv[std::size_t(i)], q / 33, 1e-5);
    ASSERT_NEAR(hrv[std::size_t(i)], q / 33, 1e-5);
  }
}

TEST(FusionReductions, SiblingReductionsOfOneInputShareAKernel) {
  auto m = random_f32({300, 20});
  Array lo, hi;
  EXPECT_EQ(kernels_of([&] {
              lo = min(m, 1);
              hi = max(m, 1);
              eval(lo, hi);
            }),
            1u);
}

TEST(FusionReductions, SliceOfAReducedArrayStoresTheReductionFirst) {
  auto m = random_f32({300, 20});
  auto s = sum(m, 1);
  auto d = s(slice(1, none)) - s(slice(none, -1));
  EXPECT_EQ(kernels_of([&] { d.eval(); }), 2u);
  auto hm = m.get<float>(), hd = d.get<float>();
  for (int i = 0; i + 1 < 300; ++i) {
    double a = 0, b = 0;
    for (int j = 0; j < 20; ++j) a += hm(i + 1, j), b += hm(i, j);
    ASSERT_NEAR(hd[std::size_t(i)], a - b, 1e-4);
  }
}

// ---- a reduction read by a plan of another shape --------------------------------------------------------------
// A reduction over all axes has no kept axes, so every consumer can broadcast it; a plan whose outputs have neither
// the reduction's input shape nor its outer or keepdims shape cannot compute it inline (its kernel would run over
// the wrong index space). These once wrote only the first element, or stopped at an internal assert.

namespace {

struct ReducedIntoOtherShape {
  const char* expression;
  std::function<Array()> build;
  Shape shape;
  std::vector<double> expected;
  std::uint64_t kernels;
};

std::vector<ReducedIntoOtherShape> reduced_into_other_shapes() {
  auto x = [] { return asarray({1.0, 2.0, 3.0}); };
  auto w = [] { return asarray({10.0, 20.0}); };
  auto y = [] { return asarray({{1.0, 2.0}, {3.0, 4.0}}); };
  return {
      {"x(slice(1, none)) + sum(x)", [=] { return x()(slice(1, none)) + sum(x()); }, {2}, {8, 9}, 2},
      {"broadcast_to(sum(x), {2})", [=] { return broadcast_to(sum(x()), {2}); }, {2}, {6, 6}, 2},
      {"stack({sum(x), sum(w)})",
       [=] {
         return stack({sum(x()), sum(w())});
       },
       {2},
       {6, 30},
       3},
      {"w.at(0).set(sum(x))", [=] { return w().at(0).set(sum(x())); }, {2}, {6, 20}, 2},
      {"(x + max(x))(slice(1, none))", [=] { return (x() + max(x()))(slice(1, none)); }, {2}, {5, 6}, 2},
      {"y(1) + sum(y)", [=] { return y()(1) + sum(y()); }, {2}, {13, 14}, 2},
      {"y.reshape({4}) + sum(y)", [=] { return y().reshape({4}) + sum(y()); }, {4}, {11, 12, 13, 14}, 2},
      {"sum(y, 1) + sum(y)", [=] { return sum(y(), 1) + sum(y()); }, {2}, {13, 17}, 2},
      {"sum(y, 0, true).T + sum(y)", [=] { return sum(y(), 0, true).T() + sum(y()); }, {2, 1}, {14, 16}, 3},
      {"concatenate({x, sum(x, 0, true)})",
       [=] {
         return concatenate({x(), sum(x(), 0, true)});
       },
       {4},
       {1, 2, 3, 6},
       2},
  };
}

} // namespace

TEST(FusionReductions, FullReductionReadByAPlanOfAnotherShapeIsStoredFirst) {
  for (const auto& c : reduced_into_other_shapes()) {
    SCOPED_TRACE(c.expression);
    Array r = c.build();
    ASSERT_EQ(r.shape(), c.shape);
    EXPECT_EQ(kernels_of([&] { r.eval(); }), c.kernels);
    auto h = r.get<double>();
    ASSERT_EQ(h.size(), c.expected.size());
    for (std::size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h[i], c.expected[i]) << "element " << i;
  }
}

// The general case: reductions over all axes, some axes and with keepdims, read through every kind of consumer
// whose shape differs from the reduction's, evaluated alone and beside roots of other shapes; the lazy result must
// equal the eager one (each op its own kernel) and a host reference.
TEST(FusionReductions, ReductionsReadThroughViewsBroadcastsJoinsAndAssignments) {
  auto m = random_f32({6, 5, 4});
  auto hm = m.get<float>();
  struct Reduction {
    const char* name;
    std::function<Array(const Array&)> apply;
  };
  const std::vector<Reduction> reductions = {
      {"sum(m)", [](const Array& a) { return sum(a); }},
      {"max(m)", [](const Array& a) { return max(a); }},
      {"sum(m, {0, 2})",
       [](const Array& a) {
         return sum(a, {0, 2});
       }},
      {"mean(m, 2)", [](const Array& a) { return mean(a, 2); }},
      {"min(m, 1, true)", [](const Array& a) { return min(a, 1, true); }},
      {"sum(m, {0, 1, 2}, true)",
       [](const Array& a) {
         return sum(a, {0, 1, 2}, true);
       }},
  };
  struct Consumer {
    const char* name;
    std::function<Array(const Array& r, const Array& m)> apply;
  };
  // r: the reduction; f: r flattened (a reshape), k: its size.
  const std::vector<Consumer> consumers = {
      {"f(slice(1, none)) * 2", [](const Array& r, const Array&) { return r.ravel()(slice(1, none)) * 2.0f; }},
      {"f + ravel(m)(slice(0, k))",
       [](const Array& r, const Array& a) { return r.ravel() + a.ravel()(slice(0, r.size())); }},
      {"flip(f) - f", [](const Array& r, const Array&) { return flip(r.ravel()) - r.ravel(); }},
      {"broadcast_to(r, {7} + shape(r))",
       [](const Array& r, const Array&) {
         Shape s{7};
         for (auto d : r.shape()) s.push_back(d);
         return broadcast_to(r, s);
       }},
      {"r + m where they broadcast, else r(newaxis) * 3",
       [](const Array& r, const Array& a) { return r.ndim() == 0 || r.ndim() == 3 ? r + a : r(newaxis) * 3.0f; }},
      {"f(newaxis).T + 1", [](const Array& r, const Array&) { return r.ravel()(newaxis).T() + 1.0f; }},
      {"concatenate({f, ravel(m(0))})",
       [](const Array& r, const Array& a) {
         return concatenate({r.ravel(), a(0).ravel()});
       }},
      {"stack({f, f + 1})",
       [](const Array& r, const Array&) {
         return stack({r.ravel(), r.ravel() + 1.0f});
       }},
      {"ravel(m).at(slice(1, k + 1)).set(f)",
       [](const Array& r, const Array& a) { return a.ravel().at(slice(1, r.size() + 1)).set(r.ravel()); }},
      {"pad(f, 1) + 1",
       [](const Array& r, const Array&) {
         return pad(r.ravel(), {{1, 1}}) + 1.0f;
       }},
  };
  for (const auto& red : reductions) {
    for (const auto& con : consumers) {
      SCOPED_TRACE(std::string(con.name) + " with r = " + red.name);
      auto build = [&] { return con.apply(red.apply(m), m); };
      config::set_eager(true);
      Array want = build().eval();
      config::set_eager(false);
      Array got = build();
      Array other = exp(m(slice(none, none, 2))); // a root of another shape and rank, evaluated beside it
      Array alone = build();
      eval(got, other);
      alone.eval();
      ASSERT_EQ(got.shape(), want.shape());
      auto hw = want.get<float>(), hg = got.get<float>(), ha = alone.get<float>();
      for (std::size_t i = 0; i < hw.size(); ++i) {
        ASSERT_NEAR(hg[i], hw[i], 1e-5 * (1 + std::abs(hw[i]))) << "element " << i << " (beside another root)";
        ASSERT_NEAR(ha[i], hw[i], 1e-5 * (1 + std::abs(hw[i]))) << "element " << i;
      }
      auto ho = other.get<float>();
      ASSERT_NEAR(ho[0], std::exp(hm(0, 0, 0)), 1e-6 * std::exp(hm(0, 0, 0)));
    }
  }
  // The host reference of one combination per reduction kind, so that lazy and eager cannot agree on a wrong value.
  double total = 0, top = -1e30;
  for (std::size_t i = 0; i < hm.size(); ++i) total += hm[i], top = std::max(top, double(hm[i]));
  auto s = (m(0, 0) + sum(m)).get<float>();
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(s[std::size_t(j)], hm(0, 0, j) + total, 1e-4);
  auto b = broadcast_to(max(m), {3}).get<float>();
  for (int j = 0; j < 3; ++j) EXPECT_EQ(b[std::size_t(j)], float(top));
}
