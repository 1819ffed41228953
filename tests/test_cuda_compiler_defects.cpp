// Defects of the CUDA toolchain that lazyfuse works around (docs/design.md, "Compiler defects"), each with the
// shapes that exposed it, on every integer type, compared with plain C++ on the host.
//
// ptxas (CUDA 12.8 to 13.3, sm_90 and later) fuses two dependent 32-bit integer max/min into one VIMNMX3 and can
// drop a negation of an operand (pytorch/pytorch#190973). On the H200, before graph/OpMath.inc's mask-select min/max
// and hidden negation: int32 maximum(maximum(c, -a), -b) was wrong in 56% of elements, and the column maximum of a
// negated 6 x 6 array (the NumPy oracle's seed 20251201, case 41) lost two of its rows.
//
// Without a CUDA backend the tests skip (unless LAZYFUSE_TEST_REQUIRE_GPU=1): the CPU backend has no ptxas.
#include <lazyfuse/lazyfuse.hpp>

#include "tests/gpu_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace lazyfuse;

namespace {

template <class T> std::vector<T> small_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  // Values around zero (for unsigned types: near 0 and near the top, which is where negation wraps to).
  std::uniform_int_distribution<int> dist(-20, 20);
  std::vector<T> out(n);
  for (auto& x : out) x = static_cast<T>(dist(rng));
  return out;
}

// Wrapping negation, as NumPy's.
template <class T> T neg(T x) {
  using U = std::conditional_t<(sizeof(T) > 4), std::uint64_t, std::uint32_t>;
  return static_cast<T>(U(0) - static_cast<U>(x));
}

template <class T> std::string values_text(const std::vector<T>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 12; ++i) s += std::to_string(v[i]) + " ";
  return s;
}

template <class T> void elementwise_chains() {
  constexpr std::size_t n = 4096;
  const auto ha = small_values<T>(n, 1), hb = small_values<T>(n, 2), hc = small_values<T>(n, 3);
  const Array a = asarray(ha, {std::int64_t(n)}), b = asarray(hb, {std::int64_t(n)}),
              c = asarray(hc, {std::int64_t(n)});
  struct Case {
    const char* what;
    Array got;
    std::function<T(T, T, T)> want;
  };
  const std::vector<Case> cases = {
      {"maximum(maximum(c, -a), -b)", maximum(maximum(c, -a), -b),
       [](T x, T y, T z) {
         return std::max({z, neg(x), neg(y)});
       }},
      {"minimum(minimum(c, -a), -b)", minimum(minimum(c, -a), -b),
       [](T x, T y, T z) {
         return std::min({z, neg(x), neg(y)});
       }},
      {"maximum(-a, maximum(-b, c))", maximum(-a, maximum(-b, c)),
       [](T x, T y, T z) {
         return std::max({z, neg(x), neg(y)});
       }},
      {"where(-a > c, -a, c) then the same with -b", where(where(-a > c, -a, c) > -b, where(-a > c, -a, c), -b),
       [](T x, T y, T z) {
         return std::max({z, neg(x), neg(y)});
       }},
      {"clip(-a, -b, c)", clip(-a, -b, c), [](T x, T y, T z) { return std::min(std::max(neg(x), neg(y)), z); }},
      {"maximum(abs(a), abs(b)) with c", maximum(maximum(abs(a), abs(b)), c),
       [](T x, T y, T z) {
         auto ab = [](T v) { return std::is_signed_v<T> && v < T(0) ? neg(v) : v; };
         return std::max({ab(x), ab(y), z});
       }},
  };
  for (const auto& k : cases) {
    const auto got = k.got.template get<T>().to_vector();
    std::vector<T> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = k.want(ha[i], hb[i], hc[i]);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += got[i] != want[i];
    EXPECT_EQ(wrong, 0u) << dtype_name(dtype_of<T>()) << " " << k.what << ": got " << values_text(got) << "... want "
                         << values_text(want) << "...";
  }
}

template <class T> void reductions_of_negations() {
  for (const auto& [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{6, 6}, {37, 129}, {1000, 7}}) {
    const auto hv = small_values<T>(std::size_t(rows * cols), unsigned(rows + cols));
    const Array v = asarray(hv, {rows, cols});
    std::vector<T> want_max0(cols, neg(hv[0])), want_min0(cols, neg(hv[0])), want_max1(rows, neg(hv[0]));
    for (std::int64_t j = 0; j < cols; ++j) want_max0[j] = want_min0[j] = neg(hv[j]);
    for (std::int64_t i = 0; i < rows; ++i) want_max1[i] = neg(hv[i * cols]);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        const T x = neg(hv[i * cols + j]);
        want_max0[j] = std::max(want_max0[j], x);
        want_min0[j] = std::min(want_min0[j], x);
        want_max1[i] = std::max(want_max1[i], x);
      }
    const std::string where =
        std::string(dtype_name(dtype_of<T>())) + " " + std::to_string(rows) + " x " + std::to_string(cols);
    EXPECT_EQ(max(-v, 0).template get<T>().to_vector(), want_max0) << where << ": max(-v, axis 0)";
    EXPECT_EQ(min(-v, 0).template get<T>().to_vector(), want_min0) << where << ": min(-v, axis 0)";
    EXPECT_EQ(max(-v, 1).template get<T>().to_vector(), want_max1) << where << ": max(-v, axis 1)";
    EXPECT_EQ(max(-v).template item<T>(), *std::max_element(want_max0.begin(), want_max0.end()))
        << where << ": max(-v)";
  }
}

template <class F> void for_each_integer_type(F&& f) {
  f(std::int8_t{});
  f(std::int16_t{});
  f(std::int32_t{});
  f(std::int64_t{});
  f(std::uint8_t{});
  f(std::uint16_t{});
  f(std::uint32_t{});
  f(std::uint64_t{});
}

TEST(CudaCompilerDefects, IntegerMaxMinChainsOfNegations) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  for_each_integer_type([](auto zero) { elementwise_chains<decltype(zero)>(); });
}

TEST(CudaCompilerDefects, IntegerMaxMinReductionsOfNegations) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  for_each_integer_type([](auto zero) { reductions_of_negations<decltype(zero)>(); });
}

} // namespace
