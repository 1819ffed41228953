// The per-op rounding of float16 and bfloat16 made visible, shared by test_half_rounding.cpp (the backend in use)
// and test_cuda_half_rounding.cpp (the GPU). docs/semantics.md promises that every op on a half type rounds its
// result to the type, so that results do not depend on fusion. Each chain below is written once and evaluated
// three ways: by lazyfuse fused into one kernel, by lazyfuse one op per kernel (each step evaluated: eager), and
// on the host in float with a rounding after every op. Its inputs are found by a deterministic search for values
// where rounding once at the end (the chain in float32, as a fused kernel without the per-op rounding would
// compute it) gives other bits, so a kernel that skipped a rounding, or contracted a multiply and an add into an
// FMA, fails the test. The chains use + - * / and sqrt only, correctly rounded in float32 and so in the half type,
// so every backend must give the host's bits exactly.
#pragma once

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace half_rounding {

namespace lf = lazyfuse;

// The chains, for any value type V (float on the host, lf::Array in lazyfuse); `r` is applied after every op:
// rounding to the half type (host, per op), nothing (host, once at the end; lazyfuse fused), or evaluation
// (lazyfuse, eager).
struct MulAdd {
  static constexpr const char* name = "x * y + x";
  template <class V, class R> static V run(const V& x, const V& y, R r) { return r(r(x * y) + x); }
};
struct SumTimesDifference {
  static constexpr const char* name = "(x + y) * (x - y) / y";
  template <class V, class R> static V run(const V& x, const V& y, R r) { return r(r(r(x + y) * r(x - y)) / y); }
};
struct Hypotenuse {
  static constexpr const char* name = "sqrt(x * x + y * y) - x";
  template <class V, class R> static V run(const V& x, const V& y, R r) {
    using lf::sqrt;
    using std::sqrt;
    return r(r(sqrt(r(r(x * x) + r(y * y)))) - x);
  }
};

/// Inputs (x, y) of chain C where rounding after every op and rounding once at the end differ, found
/// deterministically (a fixed linear congruential sequence of values in [-8, 8) rounded to H).
template <class H, class C> void find_inputs(std::vector<H>& xs, std::vector<H>& ys, std::size_t want) {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return H(float(double(state >> 11) / double(1ull << 53) * 16.0 - 8.0));
  };
  auto per_op = [](float v) { return float(H(v)); };
  auto once = [](float v) { return v; };
  for (int trial = 0; trial < 200000 && xs.size() < want; ++trial) {
    const H x = next(), y = next();
    const H a = H(C::run(float(x), float(y), per_op)), b = H(C::run(float(x), float(y), once));
    if (a.bits != b.bits && !std::isnan(float(a))) {
      xs.push_back(x);
      ys.push_back(y);
    }
  }
}

template <class H> std::vector<std::uint16_t> bits_of(const lf::Array& a) {
  auto h = a.get<H>();
  std::vector<std::uint16_t> out;
  for (std::size_t k = 0; k < h.size(); ++k) out.push_back(h[k].bits);
  return out;
}

/// Checks chain C on half type H with the backend in use: fused (one kernel) == eager (one kernel per op) == the
/// host's per-op rounding, bit for bit, on inputs where rounding once differs.
template <class H, class C> void check_chain() {
  SCOPED_TRACE(std::string(C::name) + " in " + (std::is_same_v<H, lf::float16> ? "float16" : "bfloat16"));
  std::vector<H> xs, ys;
  find_inputs<H, C>(xs, ys, 256);
  // Half precision rounds often: a chain of three ops differs from one rounding on a few percent of the inputs.
  ASSERT_GE(xs.size(), 64u) << "too few inputs where the per-op rounding shows";
  const lf::Shape shape{std::int64_t(xs.size())};
  const lf::Array x = lf::asarray(std::span<const H>(xs), shape), y = lf::asarray(std::span<const H>(ys), shape);
  x.eval();
  y.eval();

  const auto before = lf::kernel_cache_stats().kernels_launched;
  const lf::Array fused = C::run(x, y, [](const lf::Array& a) { return a; });
  fused.eval();
  EXPECT_EQ(lf::kernel_cache_stats().kernels_launched - before, 1u) << "the chain is not one kernel";

  const auto before_eager = lf::kernel_cache_stats().kernels_launched;
  const lf::Array eager = C::run(x, y, [](const lf::Array& a) {
    a.eval();
    return a;
  });
  EXPECT_GT(lf::kernel_cache_stats().kernels_launched - before_eager, 1u) << "the eager chain was fused";

  const auto got = bits_of<H>(fused), got_eager = bits_of<H>(eager);
  int differ_once = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const float xf = float(xs[k]), yf = float(ys[k]);
    const H want = H(C::run(xf, yf, [](float v) { return float(H(v)); }));
    const H once = H(C::run(xf, yf, [](float v) { return v; }));
    EXPECT_EQ(got[k], want.bits) << "fused, x = " << xf << ", y = " << yf << ": " << float(H::from_bits(got[k]))
                                 << ", per-op rounding " << float(want) << ", rounded once " << float(once);
    EXPECT_EQ(got_eager[k], got[k]) << "eager differs from fused, x = " << xf << ", y = " << yf;
    differ_once += got[k] != once.bits;
  }
  EXPECT_EQ(differ_once, int(xs.size())) << "every input was chosen where rounding once gives other bits";
}

template <class H> void check_all_chains() {
  check_chain<H, MulAdd>();
  check_chain<H, SumTimesDifference>();
  check_chain<H, Hypotenuse>();
}

} // namespace half_rounding
