// The expressions of PERF_TARGETS.md's workloads that several benchmark programs run (bench_workloads on the GPU,
// bench_cpu on the CPU backend): one definition, so every program measures the same expression. No CUDA here.
#pragma once

#include <lazyfuse/lazyfuse.hpp>

namespace lazyfuse_bench {

using namespace lazyfuse;

/// tiny-chain and chain: a 12-op elementwise expression of two arrays.
inline Array chain(const Array& x, const Array& y) {
  return sqrt(abs(sin(x) * cos(y) + x * y * 0.5f - exp(-x * x)));
}

/// Black-Scholes call and put prices, not materialized.
struct CallPut {
  Array call, put;
};
inline CallPut black_scholes_prices(const Array& S, const Array& K, const Array& T) {
  const float r = 0.02f, v = 0.30f;
  auto sqrtT = sqrt(T);
  auto d1 = (log(S / K) + (r + 0.5f * v * v) * T) / (v * sqrtT);
  auto d2 = d1 - v * sqrtT;
  auto cdf = [](const Array& d) { return 0.5f * (1.0f + erf(d * 0.70710678f)); };
  auto disc = K * exp(-r * T);
  return {S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)};
}

} // namespace lazyfuse_bench
