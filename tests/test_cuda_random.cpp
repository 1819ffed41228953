// Random numbers on the GPU (include/lazyfuse/random.hpp): the GPU's bits equal graph/RandomMath.inc's host
// functions (the CPU backend's, see tests/test_random.cpp) for every distribution and width on 10^6 draws; each
// element's value does not depend on fusion, views, launch shape or stream; a new draw reuses the compiled kernel;
// a consumed draw allocates nothing; and the statistical tests of test_random on 10^7 samples.
//
// Without a CUDA backend every test skips, unless LAZYFUSE_TEST_REQUIRE_GPU=1.
#include "tests/gpu_test.h"
#include "tests/random_stats.h"

#include <lazyfuse/lazyfuse.hpp>

#include "graph/HostOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace lazyfuse;
using namespace lazyfuse_test::stats;
namespace op = lazyfuse_opmath;

namespace {

class CudaRandom : public ::testing::Test {
protected:
  void SetUp() override { LAZYFUSE_SKIP_WITHOUT_GPU(); }
};

template <class T> std::vector<std::uint64_t> bits_of(const HostArray<T>& v) {
  std::vector<std::uint64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint64_t b = 0;
    std::memcpy(&b, &v[i], sizeof(T));
    out[i] = b;
  }
  return out;
}

std::vector<std::uint64_t> bits(const Array& a) {
  switch (a.dtype()) {
  case DType::Float32: return bits_of(a.get<float>());
  case DType::Float64: return bits_of(a.get<double>());
  case DType::Int64: return bits_of(a.get<std::int64_t>());
  default: ADD_FAILURE() << "bits: unexpected type"; return {};
  }
}

// |a - b| / |b| over all elements (float32 arrays of one shape), in float64.
double relative_l2(const Array& a, const Array& b) {
  const auto x = a.get<float>(), y = b.get<float>();
  double num = 0, den = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    num += (double(x[i]) - double(y[i])) * (double(x[i]) - double(y[i]));
    den += double(y[i]) * double(y[i]);
  }
  return std::sqrt(num / den);
}

std::uint64_t fnv1a(const std::vector<std::uint64_t>& v) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (auto x : v)
    for (int k = 0; k < 8; ++k) h = (h ^ ((x >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  return h;
}

// One distribution: its draw through the public API and the same element computed on the host.
struct Case {
  std::string name;
  DType type;
  std::function<Array(random::Generator&, std::int64_t)> draw;
  std::function<std::uint64_t(std::uint64_t key, std::uint64_t counter, std::uint64_t index)> host_bits;
};

template <class T> std::uint64_t to_bits(T x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof(T));
  return b;
}

std::vector<Case> cases() {
  using G = random::Generator;
  using U = std::uint64_t;
  std::vector<Case> c;
  // Both widths of the float distributions (location and scale apply in the draw's type, without FMA contraction).
  c.push_back({"random f32", DType::Float32, [](G& g, std::int64_t n) { return g.random({n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_random_f32(k, c, i)); }});
  c.push_back({"random f64", DType::Float64, [](G& g, std::int64_t n) { return g.random({n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_random_f64(k, c, i)); }});
  c.push_back({"uniform(-2, 3) f32", DType::Float32,
               [](G& g, std::int64_t n) { return g.uniform(-2, 3, {n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(-2.0f + 5.0f * op::lf_rand_random_f32(k, c, i)); }});
  c.push_back({"standard_normal f32", DType::Float32,
               [](G& g, std::int64_t n) { return g.standard_normal({n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_standard_normal_f32(k, c, i)); }});
  c.push_back({"standard_normal f64", DType::Float64, [](G& g, std::int64_t n) { return g.standard_normal({n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_standard_normal_f64(k, c, i)); }});
  c.push_back({"normal(1.5, 2) f64", DType::Float64, [](G& g, std::int64_t n) { return g.normal(1.5, 2, {n}); },
               [](U k, U c, U i) { return to_bits(1.5 + 2.0 * op::lf_rand_standard_normal_f64(k, c, i)); }});
  c.push_back({"standard_exponential f32", DType::Float32,
               [](G& g, std::int64_t n) { return g.standard_exponential({n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_standard_exponential_f32(k, c, i)); }});
  c.push_back({"standard_exponential f64", DType::Float64,
               [](G& g, std::int64_t n) { return g.standard_exponential({n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_standard_exponential_f64(k, c, i)); }});
  c.push_back({"lognormal f32", DType::Float32,
               [](G& g, std::int64_t n) { return g.lognormal(0.5, 0.75, {n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_lognormal_f32(k, c, i, 0.5, 0.75)); }});
  c.push_back({"lognormal f64", DType::Float64, [](G& g, std::int64_t n) { return g.lognormal(0.5, 0.75, {n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_lognormal_f64(k, c, i, 0.5, 0.75)); }});
  for (double shape : {0.3, 1.0, 7.5}) {
    c.push_back({"standard_gamma(" + std::to_string(shape) + ") f32", DType::Float32,
                 [shape](G& g, std::int64_t n) { return g.standard_gamma(shape, {n}, DType::Float32); },
                 [shape](U k, U c, U i) { return to_bits(op::lf_rand_standard_gamma_f32(k, c, i, shape)); }});
    c.push_back({"standard_gamma(" + std::to_string(shape) + ") f64", DType::Float64,
                 [shape](G& g, std::int64_t n) { return g.standard_gamma(shape, {n}); },
                 [shape](U k, U c, U i) { return to_bits(op::lf_rand_standard_gamma_f64(k, c, i, shape)); }});
  }
  c.push_back({"beta(0.4, 0.7) f64", DType::Float64, [](G& g, std::int64_t n) { return g.beta(0.4, 0.7, {n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_beta_f64(k, c, i, 0.4, 0.7)); }});
  c.push_back({"beta(2.5, 4) f32", DType::Float32,
               [](G& g, std::int64_t n) { return g.beta(2.5, 4, {n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_beta_f32(k, c, i, 2.5, 4)); }});
  c.push_back({"standard_t(5) f64", DType::Float64, [](G& g, std::int64_t n) { return g.standard_t(5, {n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_standard_t_f64(k, c, i, 5)); }});
  c.push_back({"standard_t(5) f32", DType::Float32,
               [](G& g, std::int64_t n) { return g.standard_t(5, {n}, DType::Float32); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_standard_t_f32(k, c, i, 5)); }});
  for (double lam : {3.5, 250.0}) {
    c.push_back({"poisson(" + std::to_string(lam) + ")", DType::Int64,
                 [lam](G& g, std::int64_t n) { return g.poisson(lam, {n}); },
                 [lam](U k, U c, U i) { return to_bits(op::lf_rand_poisson(k, c, i, lam)); }});
  }
  c.push_back({"binomial(25, 0.85)", DType::Int64, [](G& g, std::int64_t n) { return g.binomial(25, 0.85, {n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_binomial(k, c, i, 25, 0.85)); }});
  c.push_back({"binomial(2000, 0.4)", DType::Int64, [](G& g, std::int64_t n) { return g.binomial(2000, 0.4, {n}); },
               [](U k, U c, U i) { return to_bits(op::lf_rand_binomial(k, c, i, 2000, 0.4)); }});
  c.push_back({"integers(0, 1000003)", DType::Int64, [](G& g, std::int64_t n) { return g.integers(0, 1000003, {n}); },
               [](U k, U c, U i) { return op::lf_rand_integers(k, c, i, 1000002); }});
  return c;
}

TEST_F(CudaRandom, GpuBitsEqualTheHostFunctionsForEveryDistribution) {
  constexpr std::int64_t n = 1000000;
  for (const Case& c : cases()) {
    random::Generator g(123);
    g.advance(4000000000ull); // block counters past 2^32: word 1 of the counter is used
    const auto st = g.state();
    const auto gpu = bits(c.draw(g, n));
    ASSERT_EQ(gpu.size(), std::size_t(n));
    std::int64_t differ = 0, first = -1;
    std::vector<std::uint64_t> host(gpu.size());
    for (std::int64_t i = 0; i < n; ++i) {
      host[std::size_t(i)] = c.host_bits(st.key, st.counter, std::uint64_t(i));
      if (host[std::size_t(i)] != gpu[std::size_t(i)] && differ++ == 0) first = i;
    }
    EXPECT_EQ(differ, 0) << c.name << ": " << differ << " of 10^6 elements differ, the first at " << first;
    std::printf("[ hash     ] %-28s gpu %016llx host %016llx\n", c.name.c_str(), (unsigned long long)fnv1a(gpu),
                (unsigned long long)fnv1a(host));
  }
}

TEST_F(CudaRandom, ValuesDoNotDependOnFusionViewsLaunchShapeOrStream) {
  const std::int64_t rows = 1000, cols = 3001; // not a multiple of any vector width
  auto fresh = [&] { return random::Generator(5).standard_normal({rows, cols}, DType::Float32); };
  Array stored = fresh();
  stored.eval();
  EXPECT_EQ(bits(fresh() * 2 + 1), bits(stored * 2 + 1));
  EXPECT_EQ(bits(fresh().T() * 1), bits(stored.T() * 1));
  EXPECT_EQ(bits(fresh()(slice(3, none, 7), slice(none, none, -1)) * 1),
            bits(stored(slice(3, none, 7), slice(none, none, -1)) * 1));
  // A sum of the same elements: the reduction of a stored buffer may take another order (vector loads of aligned
  // rows, CUB for plain reductions of buffers: measured on the H200, the row sums differed in the last bits), so
  // the sums agree to rounding, not bit for bit; the elements themselves are compared bit for bit above.
  EXPECT_LT(relative_l2(sum(fresh(), 1), sum(stored, 1)), 1e-6);
  EXPECT_LT(relative_l2(sum(fresh(), 0), sum(stored, 0)), 1e-6);
  // max and argmax do not depend on the order: the fused draws (four at a time in the reductions' loops, Row and
  // Split schedules) equal the stored ones bit for bit.
  EXPECT_EQ(bits(max(fresh(), 1)), bits(max(stored, 1)));
  EXPECT_EQ(bits(argmax(fresh(), 1)), bits(argmax(stored, 1)));
  EXPECT_EQ(bits(max(fresh())), bits(max(stored)));
  EXPECT_EQ(bits(max(fresh()(slice(none, none), slice(1, none)), 1)),
            bits(max(stored(slice(none, none), slice(1, none)), 1)))
      << "rows starting off a group: the run-time check in the reductions' group calls";
  EXPECT_EQ(bits(argmax(fresh().reshape({rows * cols}))), bits(argmax(stored.reshape({rows * cols}))));
  // Views that start a thread's four elements off a Philox group (rows of 3001: every offset modulo 4 occurs) or on
  // one: the vector path's run-time check picks the four-element function or the element functions.
  for (std::int64_t first : {1, 2, 4})
    EXPECT_EQ(bits(fresh()(slice(none, none), slice(first, none)) * 1),
              bits(stored(slice(none, none), slice(first, none)) * 1))
        << first;
  // Another shape of the same counters (another launch shape and unravelling).
  EXPECT_EQ(bits(random::Generator(5).standard_normal({rows * cols}, DType::Float32)),
            bits(stored.reshape({rows * cols})));
  // On another stream.
  Stream s;
  std::vector<std::uint64_t> on_stream;
  {
    StreamGuard guard(s);
    Array x = fresh() * 1;
    x.eval();
    s.synchronize();
    on_stream = bits(x);
  }
  EXPECT_EQ(on_stream, bits(stored * 1));
  // Eager mode: one kernel per op.
  config::set_eager(true);
  auto eager = bits(exp(fresh() * 0.1f) + 1);
  config::set_eager(false);
  EXPECT_EQ(eager, bits(exp(stored * 0.1f) + 1));
}

TEST_F(CudaRandom, ANewDrawCompilesNoKernel) {
  random::Generator g(8), h(9);
  Array a = g.normal(1, 2, {1 << 20}, DType::Float32) * 3;
  a.eval();
  const auto before = kernel_cache_stats();
  Array b = h.normal(-1, 0.5, {1 << 20}, DType::Float32) * 3;
  b.eval();
  const auto after = kernel_cache_stats();
  EXPECT_EQ(after.misses, before.misses) << "a draw from another generator, other loc and scale: same kernel";
  EXPECT_EQ(after.disk_hits, before.disk_hits);
  EXPECT_EQ(after.kernels_launched, before.kernels_launched + 1);
}

TEST_F(CudaRandom, AConsumedDrawAllocatesNothing) {
  constexpr std::int64_t n = std::int64_t(1) << 24;
  random::Generator g(10);
  Array warm = mean(g.standard_normal({n}, DType::Float32) * 2);
  warm.eval(); // compiles; the pool's scratch for the reduction
  Array m = mean(g.standard_normal({n}, DType::Float32) * 2);
  memory::free_all_blocks();
  const std::size_t before = memory::total_bytes();
  const auto launched = kernel_cache_stats().kernels_launched;
  m.eval();
  EXPECT_EQ(kernel_cache_stats().kernels_launched, launched + 1) << "one kernel";
  EXPECT_LT(memory::total_bytes() - before, std::size_t(n) * 4 / 16)
      << "nothing near the draw's " << n * 4 << " bytes is allocated";
  EXPECT_LT(std::fabs(m.item<float>()), 5 * 2 / std::sqrt(double(n)));
}

// ---- 10^7 samples: Kolmogorov-Smirnov and chi-square at a Bonferroni-corrected level ----

constexpr std::int64_t kBig = 10000000;
constexpr double kAlpha = 1e-3 / 16; // the family's level over the 16 tests of the two tests below

TEST_F(CudaRandom, LargeSamplesPassKolmogorovSmirnov) {
  struct C {
    const char* name;
    std::function<Array(random::Generator&)> draw;
    std::function<double(double)> cdf;
  };
  const Shape s{kBig};
  const C cs[] = {
      {"random f32", [&](auto& g) { return g.random(s, DType::Float32); },
       [](double x) { return std::clamp(x, 0.0, 1.0); }},
      {"standard_normal f32", [&](auto& g) { return g.standard_normal(s, DType::Float32); }, normal_cdf},
      {"standard_normal f64", [&](auto& g) { return g.standard_normal(s); }, normal_cdf},
      {"exponential f64", [&](auto& g) { return g.standard_exponential(s); },
       [](double x) { return x <= 0 ? 0 : -std::expm1(-x); }},
      {"gamma(0.3)", [&](auto& g) { return g.standard_gamma(0.3, s); }, [](double x) { return gamma_p(0.3, x); }},
      {"gamma(7.5)", [&](auto& g) { return g.standard_gamma(7.5, s); }, [](double x) { return gamma_p(7.5, x); }},
      {"beta(2.5, 4)", [&](auto& g) { return g.beta(2.5, 4, s); }, [](double x) { return beta_i(2.5, 4, x); }},
      {"beta(0.4, 0.7)", [&](auto& g) { return g.beta(0.4, 0.7, s); }, [](double x) { return beta_i(0.4, 0.7, x); }},
      {"standard_t(5)", [&](auto& g) { return g.standard_t(5, s); },
       [](double x) {
         const double tail = 0.5 * beta_i(2.5, 0.5, 5 / (5 + x * x));
         return x > 0 ? 1 - tail : tail;
       }},
      {"lognormal(0.5, 0.75)", [&](auto& g) { return g.lognormal(0.5, 0.75, s); },
       [](double x) { return x <= 0 ? 0 : normal_cdf((std::log(x) - 0.5) / 0.75); }},
  };
  int seed = 300;
  for (const auto& c : cs) {
    random::Generator g(seed++);
    Array a = c.draw(g);
    std::vector<double> v;
    if (a.dtype() == DType::Float32) {
      auto f = a.get<float>();
      v.assign(f.begin(), f.end());
    } else {
      auto d = a.get<double>();
      v.assign(d.begin(), d.end());
    }
    const double p = ks_p(std::move(v), c.cdf);
    std::printf("[ ks       ] %-22s p = %.4f\n", c.name, p);
    EXPECT_GT(p, kAlpha) << c.name;
  }
}

TEST_F(CudaRandom, LargeSamplesPassChiSquare) {
  auto values = [](const Array& a) {
    auto v = a.get<std::int64_t>();
    return std::vector<double>(v.begin(), v.end());
  };
  using lazyfuse_test::stats::binomial_pmf;
  using lazyfuse_test::stats::poisson_pmf;
  const Shape s{kBig};
  random::Generator g(400);
  const double p[] = {
      chi2_p(values(g.poisson(3.5, s)), poisson_pmf(3.5), 0, 60),
      chi2_p(values(g.poisson(250, s)), poisson_pmf(250), 0, 700),
      chi2_p(values(g.binomial(40, 0.3, s)), binomial_pmf(40, 0.3), 0, 40),
      chi2_p(values(g.binomial(2000, 0.4, s)), binomial_pmf(2000, 0.4), 0, 2000),
      chi2_p(
          values(g.integers(-7, 12, s)), [](std::int64_t) { return 1.0 / 19; }, -7, 11),
      chi2_p(
          values(g.integers(0, 1000, s)), [](std::int64_t) { return 1.0 / 1000; }, 0, 999),
  };
  for (double x : p) {
    std::printf("[ chi2     ] p = %.4f\n", x);
    EXPECT_GT(x, kAlpha);
  }
}

} // namespace
