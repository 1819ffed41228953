// Random numbers (include/lazyfuse/random.hpp, graph/RandomMath.inc) on the backend in use (the CPU backend in CI):
// Philox's published known-answer vectors, the transformations' own log and exp against the C library, the
// generator's bookkeeping (seeds, spawn, state, advance), invariance of every element's value under fusion, views,
// reductions and eager mode, the kernel cache (a new draw is new arguments of the same kernel), and statistical
// tests of every distribution with fixed seeds (so they cannot flake): Kolmogorov-Smirnov for the continuous ones,
// chi-square for the discrete ones, each at a Bonferroni-corrected level. tests/test_cuda_random.cpp checks the GPU's
// bits against these functions and runs the large samples.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"
#include "fusion/Partition.h"
#include "graph/HostOps.h"
#include "graph/Random.h"
#include "tests/child_process.h"
#include "tests/random_stats.h"
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace lazyfuse;
using namespace lazyfuse_test::stats;
namespace op = lazyfuse_opmath;

namespace {

// docs/semantics.md's accuracy of the normals: error / (max(r, 1) ulp(1)) for radius r (float32: 2^-23).
constexpr double kNormalBoundUlps = 2;

// ---- Philox4x32-10: Random123's kat_vectors (philox4x32 10 rows) ----
TEST(Philox, MatchesTheKnownAnswerVectors) {
  struct Kat {
    std::uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    std::uint32_t b[4];
    op::lf_rand_philox4x32_10(k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3], k.key[0], k.key[1], b);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(b[w], k.out[w]) << w;
  }
}

// ---- helpers ----

template <class T> std::vector<double> as_doubles(const Array& a) {
  auto v = a.get<T>();
  return std::vector<double>(v.begin(), v.end());
}

std::vector<double> values(const Array& a) {
  switch (a.dtype()) {
  case DType::Float32: return as_doubles<float>(a);
  case DType::Float64: return as_doubles<double>(a);
  case DType::Int64: return as_doubles<std::int64_t>(a);
  default: ADD_FAILURE() << "values: unexpected type"; return {};
  }
}

// The bits of an array's elements, for exact comparisons (NaN-safe).
std::vector<std::uint64_t> bits(const Array& a) {
  std::vector<std::uint64_t> out;
  switch (a.dtype()) {
  case DType::Float32:
    for (float x : a.get<float>()) {
      std::uint32_t b;
      std::memcpy(&b, &x, 4);
      out.push_back(b);
    }
    break;
  case DType::Float64:
    for (double x : a.get<double>()) {
      std::uint64_t b;
      std::memcpy(&b, &x, 8);
      out.push_back(b);
    }
    break;
  case DType::Int64:
    for (auto x : a.get<std::int64_t>()) out.push_back(std::uint64_t(x));
    break;
  case DType::UInt64:
    for (auto x : a.get<std::uint64_t>()) out.push_back(x);
    break;
  default: ADD_FAILURE() << "bits: unexpected type";
  }
  return out;
}

template <class F> std::uint64_t kernels_of(F&& f) {
  const auto before = kernel_cache_stats().kernels_launched;
  f();
  return kernel_cache_stats().kernels_launched - before;
}

// Every distribution of the node (graph/Random.h) drawn through the public API, with its parameters.
struct Draw {
  std::string name;
  std::function<Array(random::Generator&, Shape, DType)> draw;
  bool float_type = true; // takes float32/float64; else int64 only
};

std::vector<Draw> all_draws() {
  return {
      {"random", [](random::Generator& g, Shape s, DType t) { return g.random(s, t); }},
      {"uniform", [](random::Generator& g, Shape s, DType t) { return g.uniform(-2, 3, s, t); }},
      {"standard_normal", [](random::Generator& g, Shape s, DType t) { return g.standard_normal(s, t); }},
      {"normal", [](random::Generator& g, Shape s, DType t) { return g.normal(1.5, 2, s, t); }},
      {"lognormal", [](random::Generator& g, Shape s, DType t) { return g.lognormal(0.5, 0.75, s, t); }},
      {"standard_exponential", [](random::Generator& g, Shape s, DType t) { return g.standard_exponential(s, t); }},
      {"exponential", [](random::Generator& g, Shape s, DType t) { return g.exponential(3, s, t); }},
      {"gamma_small", [](random::Generator& g, Shape s, DType t) { return g.standard_gamma(0.3, s, t); }},
      {"gamma_large", [](random::Generator& g, Shape s, DType t) { return g.gamma(7.5, 2, s, t); }},
      {"beta_small", [](random::Generator& g, Shape s, DType t) { return g.beta(0.4, 0.7, s, t); }},
      {"beta_large", [](random::Generator& g, Shape s, DType t) { return g.beta(2.5, 4, s, t); }},
      {"chisquare", [](random::Generator& g, Shape s, DType t) { return g.chisquare(3, s, t); }},
      {"standard_t", [](random::Generator& g, Shape s, DType t) { return g.standard_t(5, s, t); }},
      {"poisson_small", [](random::Generator& g, Shape s, DType) { return g.poisson(3.5, s); }, false},
      {"poisson_large", [](random::Generator& g, Shape s, DType) { return g.poisson(250, s); }, false},
      {"binomial", [](random::Generator& g, Shape s, DType) { return g.binomial(40, 0.3, s); }, false},
      {"binomial_high_p", [](random::Generator& g, Shape s, DType) { return g.binomial(25, 0.85, s); }, false},
      {"integers", [](random::Generator& g, Shape s, DType) { return g.integers(-7, 12, s); }, false},
  };
}

// ---- the transformations' own log and exp (graph/RandomMath.inc) against the C library: within 1 ulp ----

double ulps(double a, double b) {
  if (a == b) return 0;
  return std::fabs(a - b) / (std::nextafter(std::fabs(b), INFINITY) - std::fabs(b));
}

TEST(RandomMath, LogAndExpAreWithinOneUlpOfTheCLibrary) {
  double worst_log = 0, worst_exp = 0;
  std::uint64_t x = 12345;
  for (int k = 0; k < 200000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    // Log over the whole positive range (subnormals included), exp over (-745, 709].
    double lx;
    const std::uint64_t b = (x >> 1) & 0x7fefffffffffffffull;
    std::memcpy(&lx, &b, 8);
    worst_log = std::max(worst_log, ulps(op::lf_rand_log(lx), std::log(lx)));
    const double ex = -745.0 + 1454.0 * double(x >> 11) / 9007199254740992.0;
    if (ex < 709.7) worst_exp = std::max(worst_exp, ulps(op::lf_rand_exp(ex), std::exp(ex)));
  }
  EXPECT_LE(worst_log, 1.0);
  EXPECT_LE(worst_exp, 1.0);
  EXPECT_EQ(op::lf_rand_log(1.0), 0.0);
  EXPECT_EQ(op::lf_rand_exp(0.0), 1.0);
  EXPECT_EQ(op::lf_rand_log(0.0), -INFINITY);
  EXPECT_TRUE(std::isnan(op::lf_rand_log(-1.0)));
  EXPECT_EQ(op::lf_rand_exp(800.0), INFINITY);
  EXPECT_EQ(op::lf_rand_exp(-800.0), 0.0);
}

// ---- the element's stream and the kernel functions ----

// The layout (docs/semantics.md, "Counters"): element i of a draw at counter C takes its words from Philox block
// (C + i / P, 0), P = 4 elements a block for one word each, 2 for two, and reads on in attempt blocks
// (C + i / P, 1 + i % P + P k).
std::array<std::uint32_t, 4> philox_block(std::uint64_t key, std::uint64_t group, std::uint64_t number) {
  std::array<std::uint32_t, 4> b{};
  op::lf_rand_philox4x32_10(std::uint32_t(group), std::uint32_t(group >> 32), std::uint32_t(number),
                            std::uint32_t(number >> 32), std::uint32_t(key), std::uint32_t(key >> 32), b.data());
  return b;
}

TEST(RandomMath, EachElementTakesItsWordsOfItsGroupsBlock) {
  const std::uint64_t key = 0x0123456789abcdefull, ctr = (std::uint64_t(1) << 32) + 77; // counter word 1 in use
  for (std::uint64_t i = 0; i < 64; ++i) {
    const auto b4 = philox_block(key, ctr + i / 4, 0), b2 = philox_block(key, ctr + i / 2, 0);
    // random f32: the top 24 bits of word i % 4; f64: 53 bits of words 2 (i % 2) and 2 (i % 2) + 1.
    EXPECT_EQ(op::lf_rand_random_f32(key, ctr, i), float(b4[i % 4] >> 8) / 16777216.0f) << i;
    const std::uint32_t first = b2[2 * (i % 2)], second = b2[2 * (i % 2) + 1];
    EXPECT_EQ(op::lf_rand_random_f64(key, ctr, i),
              (double(first >> 5) * 67108864.0 + double(second >> 6)) / 9007199254740992.0)
        << i;
    // Integers of ranges that never reject show the raw words: one per element below 2^32, two from there.
    EXPECT_EQ(op::lf_rand_integers(key, ctr, i, 0xFFFFFFFFull), b4[i % 4]) << i;
    EXPECT_EQ(op::lf_rand_integers(key, ctr, i, ~0ull), std::uint64_t(first) | (std::uint64_t(second) << 32)) << i;
  }
  // A rejected first word: the next attempt reads word 0 of the element's first attempt block (C + g, 1 + lane),
  // then word 1. Range 0x5FFFFFFF takes the low 31 bits of a word and rejects a quarter of them.
  const std::uint64_t range = 0x5FFFFFFFull, mask = 0x7FFFFFFFull;
  int rejected = 0;
  for (std::uint64_t i = 0; i < 256; ++i) {
    if ((philox_block(key, ctr + i / 4, 0)[i % 4] & mask) <= range) continue;
    ++rejected;
    const auto attempt = philox_block(key, ctr + i / 4, 1 + i % 4);
    const std::uint64_t second = attempt[0] & mask, third = attempt[1] & mask;
    if (second <= range || third <= range) {
      EXPECT_EQ(op::lf_rand_integers(key, ctr, i, range), second <= range ? second : third) << i;
    }
  }
  EXPECT_GT(rejected, 10);
}

// The four-element functions the kernels' vector path calls are the element functions, bit for bit.
TEST(RandomMath, GroupFunctionsEqualTheElementFunctions) {
  const std::uint64_t key = 0xfeedfacecafebeefull, ctr = 1000;
  auto same_bits = [](auto a, auto b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  for (std::uint64_t first = 0; first < 4096; first += 4) {
    float f[4];
    double d[4];
    op::lf_rand_random_f32_x4(key, ctr, first, f);
    op::lf_rand_random_f64_x4(key, ctr, first, d);
    for (int k = 0; k < 4; ++k) {
      ASSERT_TRUE(same_bits(f[k], op::lf_rand_random_f32(key, ctr, first + k))) << first + k;
      ASSERT_TRUE(same_bits(d[k], op::lf_rand_random_f64(key, ctr, first + k))) << first + k;
    }
    op::lf_rand_standard_normal_f32_x4(key, ctr, first, f);
    op::lf_rand_standard_normal_f64_x4(key, ctr, first, d);
    for (int k = 0; k < 4; ++k) {
      ASSERT_TRUE(same_bits(f[k], op::lf_rand_standard_normal_f32(key, ctr, first + k))) << first + k;
      ASSERT_TRUE(same_bits(d[k], op::lf_rand_standard_normal_f64(key, ctr, first + k))) << first + k;
    }
    op::lf_rand_standard_exponential_f32_x4(key, ctr, first, f);
    op::lf_rand_standard_exponential_f64_x4(key, ctr, first, d);
    for (int k = 0; k < 4; ++k) {
      ASSERT_TRUE(same_bits(f[k], op::lf_rand_standard_exponential_f32(key, ctr, first + k))) << first + k;
      ASSERT_TRUE(same_bits(d[k], op::lf_rand_standard_exponential_f64(key, ctr, first + k))) << first + k;
    }
    op::lf_rand_lognormal_f32_x4(key, ctr, first, 0.5, 0.75, f);
    op::lf_rand_lognormal_f64_x4(key, ctr, first, 0.5, 0.75, d);
    for (int k = 0; k < 4; ++k) {
      ASSERT_TRUE(same_bits(f[k], op::lf_rand_lognormal_f32(key, ctr, first + k, 0.5, 0.75))) << first + k;
      ASSERT_TRUE(same_bits(d[k], op::lf_rand_lognormal_f64(key, ctr, first + k, 0.5, 0.75))) << first + k;
    }
  }
}

// ---- the float32 logarithm and the fixed-point angle's cosine and sine (graph/RandomMath.inc) ----

TEST(RandomMath, Float32MinusTwoLogIsWithinOneUlp) {
  // -2 log u for every u Box-Muller can pass (a 2^-32 + 2^-33 for 32-bit a, rounded), and every float u in
  // [2^-33, 1] of a sample, given as v = u 2^32; compared with -2 times the float64 log rounded to float32 (within 1
  // ulp of it: 1.5 ulps of the exact value at most, since the float64 log is within 2^-28 ulp).
  double worst = 0;
  std::uint32_t x = 7;
  for (int k = 0; k < 400000; ++k) {
    const std::uint32_t a = (x = x * 1664525u + 1013904223u);
    const float u = std::fma(float(a), 0x1p-32f, 0x1p-33f);
    float v;
    const std::uint32_t b = 0x2f000000u + (a % (0x3f800001u - 0x2f000000u)); // [2^-33, 1]
    std::memcpy(&v, &b, 4);
    for (float arg : {u, v}) {
      const double exact = -2 * std::log(double(arg));
      const float got = op::lf_rand_minus2log_f32(arg * 0x1p32f);
      if (exact == 0) {
        EXPECT_EQ(got, 0.0f);
        continue;
      }
      const double ulp = std::fabs(double(std::nextafter(float(exact), 0.0f)) - double(float(exact)));
      worst = std::max(worst, std::fabs(double(got) - exact) / ulp);
    }
  }
  std::printf("[ -2 log   ] worst %.3f ulp\n", worst);
  EXPECT_LE(worst, 1.0);
  // u = 1 - 2^-24, the largest u below 1, is the least positive result.
  EXPECT_GT(op::lf_rand_minus2log_f32((1.0f - 0x1p-24f) * 0x1p32f), 0x1p-100f);
}

// u = 1 has no logarithm to take the square root of: the clamp makes its radius 2^-50 (docs/semantics.md).
TEST(RandomMath, BoxMullerRadiusOfUOneIsTheClampedRoot) {
  float z[2];
  op::lf_rand_box_muller_f32(0xFFFFFFFFu, 0u, z); // u rounds to 1: -2 log u = 0, clamped to 2^-100
  EXPECT_EQ(z[0], 0x1p-50f);
  EXPECT_EQ(z[1], 0.0f);
  // The other end: the least u, 2^-33 (a = 0), gives the largest radius, sqrt(66 ln 2) = 6.7637: docs/semantics.md's
  // float32 tail.
  op::lf_rand_box_muller_f32(0u, 0u, z);
  EXPECT_NEAR(z[0], 6.7637, 1e-4);
  EXPECT_LT(z[0], 6.77f);
}

TEST(RandomMath, AngleCosineAndSineAreAccurate) {
  // Float32: within 2 ulps of the float64 cosine and sine of the exact angle 2 pi b / 2^32, plus 2^-25 absolute
  // (the angle's offset rounded to float32). Float64 against long double: 2 ulps plus 2^-54.
  double worst32 = 0, worst64 = 0;
  std::uint64_t x = 99;
  for (int k = 0; k < 400000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint32_t b = std::uint32_t(x >> 32);
    float cs[2];
    op::lf_rand_cossin_turn32(b, cs);
    const double angle = 6.283185307179586476925 * double(b) / 4294967296.0;
    const double want32[2] = {std::cos(angle), std::sin(angle)};
    for (int j = 0; j < 2; ++j) {
      const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::fabs(want32[j]), 0x1p-126)) - 23);
      worst32 = std::max(worst32, std::fabs(double(cs[j]) - want32[j]) / (2 * ulp + 0x1p-25));
    }
    double cd[2];
    op::lf_rand_cossin_turn64(x, cd);
    const long double angle64 = 6.283185307179586476925286766559L * (long double)x / 18446744073709551616.0L;
    const long double want64[2] = {std::cos(angle64), std::sin(angle64)};
    for (int j = 0; j < 2; ++j) {
      const double ulp = std::ldexp(1.0, std::ilogb(std::max(double(std::fabs(want64[j])), 0x1p-1022)) - 52);
      worst64 = std::max(worst64, double(std::fabs((long double)cd[j] - want64[j])) / (2 * ulp + 0x1p-54));
    }
  }
  std::printf("[ cossin   ] worst %.3f (float32), %.3f (float64) of the bound\n", worst32, worst64);
  EXPECT_LE(worst32, 1.0);
  EXPECT_LE(worst64, 1.0);
  // The quarter turns are exact.
  float cs[2];
  op::lf_rand_cossin_turn32(0x40000000u, cs);
  EXPECT_EQ(cs[0], 0.0f);
  EXPECT_EQ(cs[1], 1.0f);
  op::lf_rand_cossin_turn32(0x80000000u, cs);
  EXPECT_EQ(cs[0], -1.0f);
  EXPECT_EQ(cs[1], 0.0f);
}

// Box-Muller's normals against the same formula in long double on the same uniforms: the error, as a multiple of
// the radius' ulp (2^-23 r for float32, 2^-52 r for float64: near a zero of the cosine or sine the angle's
// rounding dominates), stays within the bound docs/semantics.md states.
TEST(RandomMath, BoxMullerNormalsAreWithinTheirBound) {
  double worst32 = 0, worst64 = 0;
  std::uint64_t x = 2026;
  for (int k = 0; k < 400000; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const std::uint32_t a = std::uint32_t(x), b = std::uint32_t(x >> 32);
    float z[2];
    op::lf_rand_box_muller_f32(a, b, z);
    const long double u = (long double)std::fma(float(a), 0x1p-32f, 0x1p-33f);
    const long double r = std::sqrt(-2.0L * std::log(u));
    const long double angle = 6.283185307179586476925286766559L * (long double)b / 4294967296.0L;
    const long double want32[2] = {r * std::cos(angle), r * std::sin(angle)};
    for (int j = 0; j < 2; ++j)
      worst32 = std::max(worst32, double(std::fabs((long double)z[j] - want32[j]) / (std::max(r, 1.0L) * 0x1p-23L)));
    const std::uint64_t y = x * 0x9E3779B97F4A7C15ull + 1;
    double d[2];
    op::lf_rand_box_muller_f64(a, b, std::uint32_t(y), std::uint32_t(y >> 32), d);
    const long double u53 = ((long double)((a >> 5) * 67108864.0 + (b >> 6)) + 1.0L) / 9007199254740992.0L;
    const long double r53 = std::sqrt(-2.0L * std::log(u53));
    const long double angle64 = 6.283185307179586476925286766559L * (long double)y / 18446744073709551616.0L;
    const long double want64[2] = {r53 * std::cos(angle64), r53 * std::sin(angle64)};
    for (int j = 0; j < 2; ++j)
      worst64 = std::max(worst64, double(std::fabs((long double)d[j] - want64[j]) / (std::max(r53, 1.0L) * 0x1p-52L)));
  }
  std::printf("[ normal   ] worst %.3f (float32), %.3f (float64) radius ulps\n", worst32, worst64);
  EXPECT_LE(worst32, kNormalBoundUlps);
  EXPECT_LE(worst64, kNormalBoundUlps);
}

TEST(RandomMath, IntegersAreUnbiasedOverTheirRange) {
  // Every value of a range that is not a power of two, equally often up to sampling noise.
  const std::uint64_t range = 5; // values 0..5
  std::vector<int> count(6, 0);
  for (std::uint64_t i = 0; i < 60000; ++i) {
    const auto v = op::lf_rand_integers(99, 0, i, range);
    ASSERT_LE(v, range);
    ++count[v];
  }
  for (int c : count) EXPECT_NEAR(c, 10000, 500); // 5 standard deviations (about 91)
  // The full 64-bit range and a single value.
  EXPECT_EQ(op::lf_rand_integers(1, 0, 2, 0), 0u);
  std::uint64_t any_high = 0;
  for (std::uint64_t i = 0; i < 64; ++i) any_high |= op::lf_rand_integers(1, 0, i, ~0ull);
  EXPECT_EQ(any_high >> 63, 1u) << "the top bit of full-range integers is random";
}

// ---- the runtime computes what the functions say ----

TEST(Random, EveryElementIsTheFunctionAtItsCounter) {
  for (DType t : {DType::Float32, DType::Float64}) {
    random::Generator g(7);
    g.advance(1000);
    const auto st = g.state();
    Array x = g.standard_normal({3, 5}, t);
    const auto got = values(x);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double want = t == DType::Float32 ? double(op::lf_rand_standard_normal_f32(st.key, st.counter, i))
                                              : op::lf_rand_standard_normal_f64(st.key, st.counter, i);
      EXPECT_EQ(got[i], want) << i;
    }
  }
  random::Generator g(8);
  const auto st = g.state();
  const auto p = values(g.poisson(20, {100}));
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(p[i], double(op::lf_rand_poisson(st.key, st.counter, i, 20)));
}

// ---- stability: the numbers a seed gives are part of the interface (docs/semantics.md, "Stability") ----

std::uint64_t fnv1a(const std::vector<std::uint64_t>& v) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (auto x : v)
    for (int k = 0; k < 8; ++k) h = (h ^ ((x >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  return h;
}

// Hashes of 4096 draws of each distribution and width from Generator(2026), recorded when the algorithms were
// written (last: the Philox group layout and Box-Muller normals). Those of random, uniform and integers are also
// derived independently by tests/random_oracle.py (RandomOracle below). A change of any algorithm, of the key
// derivation or of the layout changes them: update them only together with docs/semantics.md, in a commit that
// says the numbers changed.
TEST(RandomStability, KnownAnswerHashes) {
  const std::map<std::string, std::uint64_t> want = {{"beta_large f32", 0x35a30243fde4bdfcull},
                                                     {"beta_large f64", 0x1f448ff33954b715ull},
                                                     {"beta_small f32", 0x4b227ac1372b6291ull},
                                                     {"beta_small f64", 0x7e9ea91795614d8dull},
                                                     {"binomial", 0xe8fc002ed72d2c85ull},
                                                     {"binomial_high_p", 0xd0e45106d7b5d37bull},
                                                     {"chisquare f32", 0x11f4926922747373ull},
                                                     {"chisquare f64", 0xaa709208a0332680ull},
                                                     {"exponential f32", 0xbabe42fd109ee543ull},
                                                     {"exponential f64", 0x52e8d98a5cabb4bbull},
                                                     {"gamma_large f32", 0x94366e7f9abda618ull},
                                                     {"gamma_large f64", 0xfd437c7613959e23ull},
                                                     {"gamma_small f32", 0xa49980de7a86aea6ull},
                                                     {"gamma_small f64", 0xbb9bd8415065fa5bull},
                                                     {"integers", 0x6ede88071dc0778dull},
                                                     {"lognormal f32", 0x54195856b1cc27e0ull},
                                                     {"lognormal f64", 0xaab3a7b5cd2016baull},
                                                     {"normal f32", 0x6ad474070f2405cbull},
                                                     {"normal f64", 0xf00eef09e1843c08ull},
                                                     {"poisson_large", 0xbba2a40672122b95ull},
                                                     {"poisson_small", 0xf02fe35012dc1009ull},
                                                     {"random f32", 0x4ed9004e5b73e5c8ull},
                                                     {"random f64", 0x6c2d8e38a9625d9eull},
                                                     {"standard_exponential f32", 0x80d303e5113c4d2full},
                                                     {"standard_exponential f64", 0x3294873eb133876bull},
                                                     {"standard_normal f32", 0xb9d13b090c23ed79ull},
                                                     {"standard_normal f64", 0x0290b5e431aae405ull},
                                                     {"standard_t f32", 0x312c98802b49926aull},
                                                     {"standard_t f64", 0x326a65c217b1f5edull},
                                                     {"uniform f32", 0x438fd4d2a899fa75ull},
                                                     {"uniform f64", 0xd3935f2606b69759ull}};
  std::map<std::string, std::uint64_t> got;
  for (const Draw& d : all_draws())
    for (DType t : {DType::Float32, DType::Float64}) {
      if (!d.float_type && t == DType::Float32) continue;
      random::Generator g(2026);
      got[d.name + (d.float_type ? (t == DType::Float32 ? " f32" : " f64") : "")] = fnv1a(bits(d.draw(g, {4096}, t)));
    }
  for (const auto& [name, h] : got) {
    char line[96];
    std::snprintf(line, sizeof line, "{\"%s\", 0x%016llxull}", name.c_str(), (unsigned long long)h);
    auto it = want.find(name);
    if (it == want.end())
      ADD_FAILURE() << name << ": no recorded hash; now " << line;
    else
      EXPECT_EQ(h, it->second) << name << ": the numbers of seed 2026 changed; now " << line;
  }
}

// ---- an independent reimplementation: tests/random_oracle.py (Python integers and NumPy scalars) ----

// The script's answers: the hashes of the draws whose bits follow from the layout alone, and long double
// Box-Muller references for the first normals of each width. Without an interpreter (LAZYFUSE_TEST_PYTHON) the test
// skips, and fails when CI=true.
TEST(RandomOracle, APythonReimplementationGivesTheSameNumbers) {
  const char* python = std::getenv("LAZYFUSE_TEST_PYTHON");
  LAZYFUSE_NEED_NUMPY(python && *python ? "" : "LAZYFUSE_TEST_PYTHON is not set");
  const std::string cmd = std::string("'") + python + "' '" + LAZYFUSE_TEST_SOURCE_DIR + "/random_oracle.py' 2>&1";
  std::FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << cmd;
  std::string all;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) all.append(buf, n);
  ASSERT_EQ(pclose(pipe), 0) << cmd << ": " << all;
  std::map<std::string, std::uint64_t> hashes;
  std::map<int, std::vector<std::pair<long double, long double>>> normals; // value, radius
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "H") {
      std::string name, hex;
      in >> name >> hex;
      hashes[name] = std::stoull(hex, nullptr, 16);
    } else if (kind == "N") {
      int width = 0;
      in >> width;
      for (std::string triple; in >> triple;) {
        const auto a = triple.find(':'), b = triple.find(':', a + 1);
        normals[width].push_back(
            {(long double)std::stod(triple.substr(0, a)) + (long double)std::stod(triple.substr(a + 1, b - a - 1)),
             std::stod(triple.substr(b + 1))});
      }
    }
  }
  auto hash_of = [](auto draw) {
    random::Generator g(2026);
    return fnv1a(bits(draw(g)));
  };
  const Shape s{4096};
  const std::map<std::string, std::uint64_t> mine = {
      {"random_f32", hash_of([&](auto& g) { return g.random(s, DType::Float32); })},
      {"random_f64", hash_of([&](auto& g) { return g.random(s, DType::Float64); })},
      {"uniform_f32", hash_of([&](auto& g) { return g.uniform(-2, 3, s, DType::Float32); })},
      {"uniform_f64", hash_of([&](auto& g) { return g.uniform(-2, 3, s, DType::Float64); })},
      {"integers", hash_of([&](auto& g) { return g.integers(-7, 12, s); })},
  };
  EXPECT_EQ(hashes.size(), mine.size()) << all;
  for (const auto& [name, h] : mine) EXPECT_EQ(hashes[name], h) << name;
  for (int width : {1, 2}) {
    ASSERT_EQ(normals[width].size(), 64u) << all;
    random::Generator g(2026);
    const auto z = values(g.standard_normal({64}, width == 1 ? DType::Float32 : DType::Float64));
    const long double ulp = width == 1 ? 0x1p-23L : 0x1p-52L;
    for (std::size_t i = 0; i < 64; ++i) {
      const auto [want, radius] = normals[width][i];
      EXPECT_LE(std::fabs((long double)z[i] - want), kNormalBoundUlps * ulp * std::max(radius, 1.0L))
          << "width " << width << ", element " << i << ": " << z[i] << " vs " << double(want);
    }
  }
}

// ---- the generator ----

TEST(Generator, EqualSeedsGiveEqualNumbersAndOtherSeedsOthers) {
  random::Generator a(2026), b(2026), c(2027);
  auto xa = bits(a.random({100})), xb = bits(b.random({100})), xc = bits(c.random({100}));
  EXPECT_EQ(xa, xb);
  EXPECT_NE(xa, xc);
  // Signed seeds are the same numbers; negative ones are refused.
  random::Generator d(2026LL);
  EXPECT_EQ(bits(d.random({100})), xa);
  EXPECT_THROW(random::Generator(-1), ValueError);
  try {
    random::Generator(-5);
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
  }
}

TEST(Generator, DrawsAdvanceTheCounterAndReevaluationRepeats) {
  random::Generator g(1);
  const auto s0 = g.state();
  Array x = g.standard_normal({4, 6});
  EXPECT_EQ(g.state().counter, s0.counter + 12)
      << "a float64 draw takes a block counter per two elements, at record time";
  {
    random::Generator f(1);
    f.random({25}, DType::Float32);
    EXPECT_EQ(f.state().counter, 7u) << "a float32 draw takes one per four elements, whole blocks";
    f.integers(0, 10, {5});
    EXPECT_EQ(f.state().counter, 9u) << "integers below 2^32: four a block";
    f.integers(0, std::int64_t(1) << 40, {5});
    EXPECT_EQ(f.state().counter, 12u) << "integers from 2^32: two a block";
    f.poisson(3, {5});
    EXPECT_EQ(f.state().counter, 15u) << "poisson: two a block";
  }
  Array y = g.standard_normal({4, 6});
  EXPECT_NE(bits(x), bits(y));
  EXPECT_EQ(bits(x), bits(x)) << "evaluating a draw twice";
  EXPECT_EQ(bits(x + 0.0), bits(x)) << "a draw read by another kernel";
}

TEST(Generator, StateRestoresAndAdvanceSkips) {
  random::Generator g(5);
  const auto s = g.state();
  auto first = bits(g.uniform(0, 1, {50}));
  g.set_state(s);
  EXPECT_EQ(bits(g.uniform(0, 1, {50})), first);
  random::Generator copy(s);
  EXPECT_EQ(bits(copy.uniform(0, 1, {50})), first);
  // advance(k) then a draw of n - 2k is the tail of a float64 draw of n (two elements a block).
  random::Generator h(s);
  h.advance(10);
  auto tail = bits(h.uniform(0, 1, {30}));
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), first.begin() + 20));
}

TEST(Generator, SpawnedChildrenAreDistinctAndDeterministic) {
  random::Generator g(9), h(9);
  auto kids = g.spawn(3);
  auto twins = h.spawn(3);
  ASSERT_EQ(kids.size(), 3u);
  std::vector<std::vector<std::uint64_t>> seen;
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(kids[k].state(), twins[k].state());
    seen.push_back(bits(kids[k].random({64})));
  }
  seen.push_back(bits(g.random({64})));
  auto more = g.spawn(1);
  seen.push_back(bits(more[0].random({64})));
  EXPECT_EQ(g.state().spawned, 4u);
  for (std::size_t a = 0; a < seen.size(); ++a)
    for (std::size_t b = a + 1; b < seen.size(); ++b) EXPECT_NE(seen[a], seen[b]) << a << " " << b;
}

TEST(Generator, DefaultGeneratorReseeds) {
  random::seed(31);
  auto a = bits(random::standard_normal({20}));
  random::Generator g(31);
  EXPECT_EQ(a, bits(g.standard_normal({20})));
  random::seed(31);
  EXPECT_EQ(bits(random::random({5})), bits(random::Generator(31).random({5})));
}

// The child of DefaultGeneratorFollowsLazyfuseSeed: only runs with LAZYFUSE_TEST_RANDOM_CHILD set.
TEST(RandomChild, DefaultGeneratorSeed) {
  const char* want = std::getenv("LAZYFUSE_TEST_RANDOM_CHILD");
  if (!want) GTEST_SKIP() << "run by Generator.DefaultGeneratorFollowsLazyfuseSeed";
  if (std::string(want) == "bad") {
    EXPECT_THROW(random::random({3}), ValueError);
    return;
  }
  EXPECT_EQ(bits(random::random({10})), bits(random::Generator(std::uint64_t(std::stoull(want))).random({10})));
}

TEST(Generator, DefaultGeneratorFollowsLazyfuseSeed) {
  auto r = lazyfuse_test::run_self("RandomChild.DefaultGeneratorSeed",
                                   {"LAZYFUSE_SEED=18446744073709551615",
                                    "LAZYFUSE_TEST_RANDOM_CHILD=18446744073709551615", "LAZYFUSE_BACKEND=cpu"});
  EXPECT_TRUE(r.ok()) << r.describe();
  auto bad = lazyfuse_test::run_self("RandomChild.DefaultGeneratorSeed",
                                     {"LAZYFUSE_SEED=-3", "LAZYFUSE_TEST_RANDOM_CHILD=bad", "LAZYFUSE_BACKEND=cpu"});
  EXPECT_TRUE(bad.ok()) << bad.describe();
}

// ---- bad input ----

template <class F> std::string value_error(F&& f) {
  try {
    f();
  } catch (const ValueError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception: ") + e.what();
  }
  return "no exception";
}

TEST(Random, BadArgumentsAreValueErrorsNamingTheArgument) {
  random::Generator g(3);
  const auto before = g.state();
  struct Case {
    std::function<void()> f;
    const char* word;
  };
  const Case cases[] = {
      {[&] { g.integers(5, 5, {2}); }, "high"},
      {[&] { g.integers(5, 4, {2}, DType::Int64, true); }, "high"},
      {[&] { g.integers(0, 300, {2}, DType::UInt8); }, "uint8"},
      {[&] { g.integers(-1, 3, {2}, DType::UInt32); }, "uint32"},
      {[&] { g.uniform(2, 1, {2}); }, "high"},
      {[&] { g.uniform(NAN, 1, {2}); }, "low"},
      {[&] { g.normal(0, -1, {2}); }, "scale"},
      {[&] { g.normal(0, NAN, {2}); }, "scale"},
      {[&] { g.lognormal(0, -1, {2}); }, "sigma"},
      {[&] { g.exponential(-2, {2}); }, "scale"},
      {[&] { g.standard_gamma(-1, {2}); }, "shape"},
      {[&] { g.gamma(2, -1, {2}); }, "scale"},
      {[&] { g.beta(0, 1, {2}); }, "a"},
      {[&] { g.beta(1, NAN, {2}); }, "b"},
      {[&] { g.chisquare(0, {2}); }, "df"},
      {[&] { g.standard_t(-3, {2}); }, "df"},
      {[&] { g.poisson(-1, {2}); }, "lam"},
      {[&] { g.poisson(NAN, {2}); }, "lam"},
      {[&] { g.binomial(-1, 0.5, {2}); }, "n"},
      {[&] { g.binomial(10, 1.5, {2}); }, "p"},
      {[&] { g.binomial(10, NAN, {2}); }, "p"},
  };
  for (const auto& c : cases) {
    const std::string what = value_error(c.f);
    EXPECT_NE(what.find(c.word), std::string::npos) << what;
  }
  EXPECT_THROW(g.random({2}, DType::Int32), DTypeError);
  EXPECT_THROW(g.integers(0, 2, {2}, DType::Float32), DTypeError);
  EXPECT_THROW(g.integers(0, 2, {2}, DType::Bool), DTypeError);
  EXPECT_THROW(g.standard_normal({2, -1}), ShapeError);
  EXPECT_EQ(g.state(), before) << "a refused draw takes no counters";
}

// ---- integers ----

TEST(Random, IntegersCoverTheirIntervalInAnyIntegerType) {
  random::Generator g(11);
  auto v = g.integers(-3, 4, {4000}).get<std::int64_t>();
  std::map<std::int64_t, int> count;
  for (auto x : v) ++count[x];
  EXPECT_EQ(count.size(), 7u);
  EXPECT_EQ(count.begin()->first, -3);
  EXPECT_EQ(count.rbegin()->first, 3);
  auto w = g.integers(-128, 127, {6000}, DType::Int8, true).get<std::int8_t>();
  std::map<int, int> c8;
  for (auto x : w) ++c8[x];
  EXPECT_EQ(c8.size(), 256u) << "every int8 with endpoint";
  auto u = g.integers(250, 256, {500}, DType::UInt8).get<std::uint8_t>();
  for (auto x : u) EXPECT_GE(x, 250);
  auto one = g.integers(10, std::nullopt, {1000}, DType::Int16).get<std::int16_t>();
  for (auto x : one) {
    EXPECT_GE(x, 0);
    EXPECT_LT(x, 10);
  }
  auto big = g.integers(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), {256},
                        DType::Int64, true)
                 .get<std::int64_t>();
  int negative = 0;
  for (auto x : big) negative += x < 0;
  EXPECT_GT(negative, 64);
  EXPECT_LT(negative, 192);
}

// ---- invariance: an element's value does not depend on how it is computed ----

TEST(RandomInvariance, FusedAndMaterializedDrawsAgree) {
  // Each expression reads a fresh, unevaluated draw (evaluating one expression may store the draw it read, which
  // would hide what a later expression computes), against the same draw stored first. The sums compare the generated
  // kernels: with CUB on, the stored draw's row sums would run in cub::DeviceSegmentedReduce, whose float order is
  // CUB's (docs/semantics.md, "Accuracy and determinism"), so the comparison would be of two algorithms.
  config::set("LAZYFUSE_ACCELERATORS", "");
  struct RestoreAccelerators {
    ~RestoreAccelerators() { config::reset("LAZYFUSE_ACCELERATORS"); }
  } restore;
  const std::vector<std::pair<const char*, std::function<Array(const Array&)>>> uses = {
      {"elementwise", [](const Array& a) { return a * 3 + 1; }},
      {"transpose", [](const Array& a) { return a.T() + 0; }},
      {"strided slice", [](const Array& a) { return a(slice(2, 5), slice(1, none, 2)) * 1; }},
      {"reversed", [](const Array& a) { return a(slice(none, none, -1), slice(none, none, -2)) * 1; }},
      {"broadcast",
       [](const Array& a) {
         return a(slice(0, 1)) + zeros({4, 9});
       }},
      {"row sums", [](const Array& a) { return sum(a, 1); }},
      {"column sums", [](const Array& a) { return sum(a, 0); }},
      {"reshape",
       [](const Array& a) {
         return a.reshape({3, 21}).T() * 1;
       }},
  };
  for (const Draw& d : all_draws()) {
    for (DType t : {DType::Float32, DType::Float64}) {
      if (!d.float_type && t == DType::Float32) continue;
      for (const auto& [what, use] : uses) {
        random::Generator g1(21), g2(21);
        Array stored = d.draw(g2, {7, 9}, t);
        stored.eval();
        EXPECT_EQ(bits(use(d.draw(g1, {7, 9}, t))), bits(use(stored))) << d.name << " " << dtype_name(t) << " " << what;
      }
    }
  }
}

TEST(RandomInvariance, EagerAndLazyModesAgree) {
  for (const Draw& d : all_draws()) {
    random::Generator g1(4), g2(4);
    const DType t = DType::Float64;
    auto lazy = bits(exp(d.draw(g1, {5, 6}, t) * 0.01) + 1);
    config::set_eager(true);
    auto eager = bits(exp(d.draw(g2, {5, 6}, t) * 0.01) + 1);
    config::set_eager(false);
    EXPECT_EQ(lazy, eager) << d.name;
  }
}

TEST(RandomInvariance, ThreadsOfTheCpuBackendDoNotMatter) {
  // Threads split the index space into other chunks; every element keeps its value.
  auto draw = [] { return bits(random::Generator(17).gamma(1.7, 2, {300000}, DType::Float32) + 0); };
  config::set("LAZYFUSE_CPU_THREADS", "1");
  const auto one = draw();
  config::set("LAZYFUSE_CPU_THREADS", "3");
  const auto three = draw();
  config::reset("LAZYFUSE_CPU_THREADS");
  EXPECT_EQ(one, three);
}

TEST(RandomInvariance, ElementsDependOnTheirIndexAloneNotTheShape) {
  random::Generator a(6), b(6);
  EXPECT_EQ(bits(a.standard_normal({3, 4, 5})), bits(b.standard_normal({60})));
  // A draw broadcast into a larger kernel is the same draw.
  random::Generator c(6);
  Array row = c.standard_normal({5});
  auto grid = bits(row + zeros({4, 5}));
  auto r = bits(random::Generator(6).standard_normal({5}));
  for (std::size_t k = 0; k < grid.size(); ++k) EXPECT_EQ(grid[k], r[k % 5]);
}

// ---- fusion and the kernel cache ----

TEST(RandomFusion, AConsumedDrawIsNeverStored) {
  random::Generator g(12);
  Array z = g.normal(0.1, 2, {256, 64});
  Array m = mean(exp(z * 0.2), 1);
  // One plan whose only output is the result: the draw is computed where it is read.
  auto plans = fusion::partition({detail::graph_node(m)}, fusion::PartitionOptions{});
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].outputs.size(), 1u);
  EXPECT_EQ(plans[0].outputs[0], detail::graph_node(m));
  EXPECT_EQ(kernels_of([&] { m.eval(); }), 1u);
}

TEST(RandomFusion, ANewDrawIsNewArgumentsOfTheSameKernel) {
  random::Generator g(13), other(14);
  auto lowered = [](const Array& a) {
    auto plans = fusion::partition({detail::graph_node(a)}, fusion::PartitionOptions{});
    EXPECT_EQ(plans.size(), 1u);
    return codegen::lower(plans[0]);
  };
  for (const Draw& d : all_draws()) {
    auto k1 = lowered(d.draw(g, {1000}, DType::Float32) * 2);
    auto k2 = lowered(d.draw(other, {1000}, DType::Float32) * 2);
    EXPECT_EQ(k1.ir.name, k2.ir.name) << d.name << ": a draw from another generator compiles no new kernel";
    EXPECT_NE(k1.args.params.size(), 0u);
  }
  // Other parameters are also arguments, not structure.
  auto a = lowered(g.gamma(2.5, 1, {100}));
  auto b = lowered(g.gamma(0.5, 1, {100}));
  EXPECT_EQ(a.ir.name, b.ir.name);
  // And the runtime replays the plan for a second draw.
  Array x = g.standard_normal({4096}) * 2 + 1;
  x.eval();
  const auto before = kernel_cache_stats();
  Array y = g.standard_normal({4096}) * 2 + 1;
  y.eval();
  EXPECT_EQ(kernel_cache_stats().plan_hits, before.plan_hits + 1);
  EXPECT_EQ(kernel_cache_stats().misses, before.misses);
  EXPECT_NE(bits(x), bits(y));
}

// ---- statistics: fixed seeds, so the outcomes are fixed; levels Bonferroni-corrected over the tests below ----

constexpr int kStatTests = 40;        // at most this many p-values are tested in this file
constexpr double kFamilyAlpha = 1e-3; // chance that a correct implementation fails any of them
constexpr double kAlpha = kFamilyAlpha / kStatTests;
constexpr std::int64_t kSamples = 20000;

struct Continuous {
  std::string name;
  std::function<Array(random::Generator&, DType)> draw;
  std::function<double(double)> cdf;
};

TEST(RandomStatistics, ContinuousDistributionsPassKolmogorovSmirnov) {
  const Shape s{kSamples};
  const std::vector<Continuous> cases = {
      {"random", [&](auto& g, DType t) { return g.random(s, t); }, [](double x) { return std::clamp(x, 0.0, 1.0); }},
      {"uniform(-2, 3)", [&](auto& g, DType t) { return g.uniform(-2, 3, s, t); },
       [](double x) { return std::clamp((x + 2) / 5, 0.0, 1.0); }},
      {"standard_normal", [&](auto& g, DType t) { return g.standard_normal(s, t); }, normal_cdf},
      {"normal(1.5, 2)", [&](auto& g, DType t) { return g.normal(1.5, 2, s, t); },
       [](double x) { return normal_cdf((x - 1.5) / 2); }},
      {"lognormal(0.5, 0.75)", [&](auto& g, DType t) { return g.lognormal(0.5, 0.75, s, t); },
       [](double x) { return x <= 0 ? 0 : normal_cdf((std::log(x) - 0.5) / 0.75); }},
      {"exponential(3)", [&](auto& g, DType t) { return g.exponential(3, s, t); },
       [](double x) { return x <= 0 ? 0 : -std::expm1(-x / 3); }},
      {"standard_gamma(0.3)", [&](auto& g, DType t) { return g.standard_gamma(0.3, s, t); },
       [](double x) { return gamma_p(0.3, x); }},
      {"gamma(7.5, 2)", [&](auto& g, DType t) { return g.gamma(7.5, 2, s, t); },
       [](double x) { return gamma_p(7.5, x / 2); }},
      {"beta(0.4, 0.7)", [&](auto& g, DType t) { return g.beta(0.4, 0.7, s, t); },
       [](double x) { return beta_i(0.4, 0.7, x); }},
      {"beta(2.5, 4)", [&](auto& g, DType t) { return g.beta(2.5, 4, s, t); },
       [](double x) { return beta_i(2.5, 4, x); }},
      {"chisquare(3)", [&](auto& g, DType t) { return g.chisquare(3, s, t); },
       [](double x) { return gamma_p(1.5, x / 2); }},
      {"standard_t(5)", [&](auto& g, DType t) { return g.standard_t(5, s, t); },
       [](double x) {
         const double tail = 0.5 * beta_i(2.5, 0.5, 5 / (5 + x * x));
         return x > 0 ? 1 - tail : tail;
       }},
  };
  int tests = 0;
  for (const auto& c : cases) {
    for (DType t : {DType::Float64, DType::Float32}) {
      random::Generator g(1000 + tests);
      const double p = ks_p(values(c.draw(g, t)), c.cdf);
      EXPECT_GT(p, kAlpha) << c.name << " " << dtype_name(t);
      ++tests;
    }
  }
  EXPECT_LE(tests, kStatTests);
}

TEST(RandomStatistics, DiscreteDistributionsPassChiSquare) {
  const Shape s{kSamples};
  using lazyfuse_test::stats::binomial_pmf;
  using lazyfuse_test::stats::poisson_pmf;
  random::Generator g(77);
  // Tail cells beyond any plausible sample are part of the last cell's range (pmf summed up to hi).
  EXPECT_GT(chi2_p(values(g.poisson(3.5, s)), poisson_pmf(3.5), 0, 40), kAlpha);
  EXPECT_GT(chi2_p(values(g.poisson(0.05, s)), poisson_pmf(0.05), 0, 10), kAlpha);
  EXPECT_GT(chi2_p(values(g.poisson(250, s)), poisson_pmf(250), 0, 600), kAlpha);
  EXPECT_GT(chi2_p(values(g.binomial(40, 0.3, s)), binomial_pmf(40, 0.3), 0, 40), kAlpha);
  EXPECT_GT(chi2_p(values(g.binomial(25, 0.85, s)), binomial_pmf(25, 0.85), 0, 25), kAlpha);
  EXPECT_GT(chi2_p(values(g.binomial(2000, 0.4, s)), binomial_pmf(2000, 0.4), 0, 2000), kAlpha);
  EXPECT_GT(chi2_p(
                values(g.integers(-7, 12, s)), [](std::int64_t) { return 1.0 / 19; }, -7, 11),
            kAlpha);
  // Degenerate parameters give their one value.
  for (double v : values(g.binomial(0, 0.3, {10}))) EXPECT_EQ(v, 0);
  for (double v : values(g.binomial(9, 1.0, {10}))) EXPECT_EQ(v, 9);
  for (double v : values(g.poisson(0, {10}))) EXPECT_EQ(v, 0);
}

// ---- permutations and sampling (random.hpp: permutation, permuted, choice) ----

std::vector<std::int64_t> ints(const Array& a) {
  const auto h = a.astype(DType::Int64).get<std::int64_t>();
  return {h.begin(), h.end()};
}

TEST(RandomSampling, PermutationsAreRandomOrders) {
  random::Generator g(71);
  const auto p = ints(g.permutation(1000));
  auto sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[std::size_t(i)], i);
  EXPECT_NE(p, sorted) << "1000 elements left in order";
  EXPECT_NE(ints(g.permutation(1000)), p) << "a second draw repeats the first";
  EXPECT_EQ(ints(random::Generator(71).permutation(1000)), p) << "the same seed gives the same order";
  EXPECT_EQ(g.permutation(0).shape(), (Shape{0}));

  // Each row of a (n, 3) array shuffled on its own: the six orders equally likely.
  const std::int64_t n = kSamples;
  const Array rows = zeros({n, 3}, DType::Int64) + arange(3);
  const auto shuffled = ints(g.permuted(rows, 1));
  std::vector<double> orders;
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t* v = &shuffled[std::size_t(r * 3)];
    ASSERT_EQ(v[0] + v[1] + v[2], 3);
    ASSERT_TRUE(v[0] != v[1] && v[1] != v[2] && v[0] != v[2]) << "row " << r << " is not an order of 0, 1, 2";
    orders.push_back(double(v[0] * 2 + (v[1] < v[2] ? 0 : 1)));
  }
  EXPECT_GT(chi2_p(
                orders, [](std::int64_t) { return 1.0 / 6; }, 0, 5),
            kAlpha);

  // permutation(x, axis): one order of the entries along the axis (the columns move together).
  const Array m = arange(12).reshape({3, 4});
  const auto by_columns = ints(g.permutation(m, 1));
  for (int c = 0; c < 4; ++c) {
    const std::int64_t first = by_columns[std::size_t(c)];
    EXPECT_EQ(by_columns[std::size_t(4 + c)], first + 4);
    EXPECT_EQ(by_columns[std::size_t(8 + c)], first + 8);
  }
  // permuted without an axis: the flattened entries in one order, in x's shape.
  const Array flat = g.permuted(m);
  EXPECT_EQ(flat.shape(), m.shape());
  auto entries = ints(flat);
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, ints(arange(12)));
}

TEST(RandomSampling, ChoiceDrawsWithTheGivenProbabilities) {
  random::Generator g(72);
  const std::vector<double> p = {0.1, 0.0, 0.25, 0.4, 0.25};
  auto pmf = [&](std::int64_t k) { return p[std::size_t(k)]; };
  EXPECT_GT(chi2_p(values(g.choice(5, {kSamples}, true, asarray(p))), pmf, 0, 4), kAlpha);
  EXPECT_GT(chi2_p(
                values(g.choice(7, {kSamples})), [](std::int64_t) { return 1.0 / 7; }, 0, 6),
            kAlpha);

  // Without replacement: distinct entries; with p, the first drawn has distribution p and zero-probability entries
  // never appear (three of the four non-zero entries drawn each time).
  std::vector<double> first;
  for (int call = 0; call < 3000; ++call) {
    const auto s = ints(g.choice(5, {3}, false, asarray(p)));
    ASSERT_TRUE(s[0] != s[1] && s[1] != s[2] && s[0] != s[2]);
    for (auto v : s) ASSERT_NE(v, 1) << "an entry of probability 0 was drawn";
    first.push_back(double(s[0]));
  }
  EXPECT_GT(chi2_p(first, pmf, 0, 4), kAlpha);
  auto all = ints(g.choice(9, {3, 3}, false));
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, ints(arange(9)));

  // An array's entries along an axis: a's shape with the axis replaced by the sample's.
  const Array m = arange(12).reshape({3, 4});
  const Array picked = g.choice(m, {2, 5}, true, std::nullopt, 1);
  EXPECT_EQ(picked.shape(), (Shape{3, 2, 5}));
  const auto v = ints(picked);
  for (std::size_t j = 0; j < 10; ++j) {
    EXPECT_LT(v[j], 4);
    EXPECT_EQ(v[10 + j], v[j] + 4);
    EXPECT_EQ(v[20 + j], v[j] + 8);
  }
  EXPECT_EQ(g.choice(m, {}).shape(), (Shape{4})) << "an empty size picks one row";
  EXPECT_EQ(g.choice(0, {0}).shape(), (Shape{0}));
}

TEST(RandomSampling, BadArgumentsAreErrors) {
  random::Generator g(73);
  auto message = [](auto&& f) -> std::string {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THROW(g.permutation(-1), ValueError);
  EXPECT_THROW(g.permutation(asarray({1.0}).reshape({})), ValueError);
  EXPECT_THROW(g.permutation(arange(4), 1), IndexError);
  EXPECT_THROW(g.choice(-2, {3}), ValueError);
  EXPECT_THROW(g.choice(0, {3}), ValueError);
  EXPECT_THROW(g.choice(3, {4}, false), ValueError);
  EXPECT_THROW(g.choice(3, {-1}), ShapeError);
  EXPECT_THROW(g.choice(asarray({1.0}).reshape({}), {2}), ValueError);
  EXPECT_NE(message([&] { g.choice(3, {2}, true, asarray({0.5, 0.5})); }).find("same size"), std::string::npos);
  EXPECT_NE(message([&] { g.choice(2, {2}, true, asarray({0.5, std::nan("")})); }).find("NaN"), std::string::npos);
  EXPECT_NE(message([&] { g.choice(2, {2}, true, asarray({1.5, -0.5})); }).find("non-negative"), std::string::npos);
  EXPECT_NE(message([&] { g.choice(2, {2}, true, asarray({0.5, 0.6})); }).find("sum to 1"), std::string::npos);
  EXPECT_NE(message([&] { g.choice(3, {2}, false, asarray({1.0, 0.0, 0.0})); }).find("non-zero"), std::string::npos);
  EXPECT_NE(message([&] { g.choice(2, {2}, true, asarray({{0.5, 0.5}})); }).find("1-dimensional"), std::string::npos);
  // float32 probabilities get float32's tolerance, as in NumPy.
  EXPECT_NO_THROW(g.choice(2, {2}, true, asarray({0.5f, 0.5001f})));
}

TEST(RandomStatistics, MomentsMatch) {
  // Mean and variance of 2e4 draws, within a Bonferroni-corrected normal quantile of their standard errors
  // (variance's standard error from the fourth moment).
  struct M {
    const char* name;
    std::function<Array(random::Generator&)> draw;
    double mean, var, kurt; // kurt: the fourth central moment over var^2
  };
  const Shape s{kSamples};
  const M cases[] = {
      {"standard_normal", [&](auto& g) { return g.standard_normal(s); }, 0, 1, 3},
      {"standard_exponential", [&](auto& g) { return g.standard_exponential(s); }, 1, 1, 9},
      {"gamma(4)", [&](auto& g) { return g.standard_gamma(4, s); }, 4, 4, 3 + 6.0 / 4},
      {"poisson(12)", [&](auto& g) { return g.poisson(12, s); }, 12, 12, 3 + 1.0 / 12},
  };
  const double z = 4.6; // two-sided 1e-3 / 4 / 2 tests ~ 4.3; a little more for the variance's normal approximation
  for (const auto& c : cases) {
    random::Generator g(55);
    const auto x = values(c.draw(g));
    double m = 0;
    for (double v : x) m += v;
    m /= double(x.size());
    double var = 0;
    for (double v : x) var += (v - m) * (v - m);
    var /= double(x.size() - 1);
    const double n = double(x.size());
    EXPECT_LT(std::fabs(m - c.mean), z * std::sqrt(c.var / n)) << c.name;
    EXPECT_LT(std::fabs(var - c.var), z * c.var * std::sqrt((c.kurt - 1) / n)) << c.name;
  }
}

// ---- the CUDA source: renders for every distribution, and NVRTC (which needs no GPU) compiles it ----

std::string cuda_source(const Array& a) {
  auto plans = fusion::partition({detail::graph_node(a)}, fusion::PartitionOptions{});
  EXPECT_EQ(plans.size(), 1u);
  return codegen::render_cuda(codegen::lower(plans[0]).ir);
}

TEST(RandomCuda, EveryDistributionRendersWithTheKeyAsAnArgumentAndCompiles) {
  random::Generator g(1), h(2), all(3);
  Array every = zeros({1000});
  for (const Draw& d : all_draws()) {
    for (DType t : {DType::Float32, DType::Float64}) {
      if (!d.float_type && t == DType::Float32) continue;
      const std::string text = cuda_source(d.draw(g, {1000}, t) * 2);
      EXPECT_EQ(text, cuda_source(d.draw(h, {1000}, t) * 2)) << d.name << ": the key is an argument, not kernel text";
      EXPECT_NE(text.find("lf_rand_"), std::string::npos) << d.name;
      every = every + d.draw(all, {1000}, t).astype(DType::Float64);
    }
  }
  // A kernel carries the transformations it calls, not the others.
  const std::string uniform = cuda_source(g.random({1000}, DType::Float32) * 2);
  for (const char* absent : {"lf_rand_gamma", "lf_rand_log(", "lf_rand_poisson", "lf_rand_refill"})
    EXPECT_EQ(uniform.find(absent), std::string::npos) << absent;
  EXPECT_NE(cuda_source(g.standard_gamma(2, {1000})).find("lf_rand_gamma_ge1("), std::string::npos);
  // One kernel with every distribution in both widths: one NVRTC compile (seconds) instead of one per draw.
  const std::string text = cuda_source(every);
  try {
    codegen::compile_cuda(text, "every_distribution", codegen::CompileOptions{});
  } catch (const CompileError& e) {
    ADD_FAILURE() << e.what() << "\n" << e.log() << "\n" << text;
  }
}

// The vector paths compute a thread's four elements of a draw with one group function (one Philox block for four
// float32 elements) where they are one group: in elementwise kernels always at the kernel's own index, after a
// run-time check through a view that steps by one; in reductions' loops over groups of four r; element by element
// where the index does not step by one (a transposed view), in column reductions and for rejection samplers.
TEST(RandomCuda, VectorPathsComputeWholeGroupsAtOnce) {
  random::Generator g(1);
  const std::string own = cuda_source(g.standard_normal({4096}, DType::Float32) * 2);
  EXPECT_NE(own.find("lf_rand_standard_normal_f32_x4("), std::string::npos) << own;
  EXPECT_EQ(own.find("lf_rg"), std::string::npos) << "no run-time check at the kernel's own index\n" << own;
  const std::string sliced = cuda_source(g.random({64, 1001}, DType::Float32)(slice(none, none), slice(1, none)) * 2);
  EXPECT_NE(sliced.find("lf_rand_random_f32_x4("), std::string::npos) << sliced;
  EXPECT_NE(sliced.find("lf_rg"), std::string::npos) << "a view's groups are checked at run time\n" << sliced;
  const std::string transposed = cuda_source(g.random({64, 1000}, DType::Float64).T() * 2);
  EXPECT_EQ(transposed.find("_x4("), std::string::npos) << transposed;
  const std::string rows = cuda_source(sum(g.standard_normal({64, 1000}, DType::Float32), 1));
  EXPECT_NE(rows.find("lf_rand_standard_normal_f32_x4("), std::string::npos) << rows;
  const std::string full = cuda_source(mean(exp(g.standard_normal({1 << 22}, DType::Float32))));
  EXPECT_NE(full.find("lf_rand_standard_normal_f32_x4("), std::string::npos) << full;
  const std::string columns = cuda_source(sum(g.standard_normal({1000, 64}, DType::Float32), 0));
  EXPECT_EQ(columns.find("_x4("), std::string::npos) << columns;
  EXPECT_EQ(cuda_source(g.standard_gamma(2, {1000}) * 2).find("_x4("), std::string::npos) << "rejection samplers";
  // Both kinds of vector path in one kernel, and the lognormal's parameters: NVRTC compiles them.
  Array both = g.lognormal(0.5, 0.75, {64, 1000}, DType::Float32) +
               g.standard_exponential({64, 1003}, DType::Float32)(slice(none, none), slice(3, none)) +
               g.standard_normal({64, 1000}, DType::Float64).astype(DType::Float32);
  for (const std::string& text :
       {cuda_source(both), rows, full,
        cuda_source(sum(g.random({64, 1001}, DType::Float64)(slice(none, none), slice(1, none)) *
                            zeros({64, 1000}, DType::Float64),
                        1))}) {
    try {
      codegen::compile_cuda(text, "grouped_draws", codegen::CompileOptions{});
    } catch (const CompileError& e) {
      ADD_FAILURE() << e.what() << "\n" << e.log() << "\n" << text;
    }
  }
  // And computes the same values as the element functions (on the backend in use).
  random::Generator h(3);
  const auto st = h.state();
  const auto got = values(h.random({8, 1001}, DType::Float32)(slice(none, none), slice(1, none)) * 1);
  for (std::size_t r = 0; r < 8; ++r)
    for (std::size_t c = 0; c < 1000; ++c)
      ASSERT_EQ(got[r * 1000 + c], double(op::lf_rand_random_f32(st.key, st.counter, r * 1001 + c + 1))) << r << c;
}

} // namespace
