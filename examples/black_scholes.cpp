// Black-Scholes prices of a batch of European options (float32), call and put evaluated together:
//   d1 = (log(S/K) + (r + sigma^2/2) T) / (sigma sqrt(T)),  d2 = d1 - sigma sqrt(T)
//   call = S N(d1) - K e^{-rT} N(d2),  put = K e^{-rT} N(-d2) - S N(-d1),  N(x) = (1 + erf(x / sqrt 2)) / 2
// lazyfuse::eval(call, put) computes both in one fused kernel. Checked against the same formulas in double.
//
// usage: black_scholes [n=65536]
#include <lazyfuse/lazyfuse.hpp>

#include "common.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace lazyfuse;

constexpr double rate = 0.02;

static Array cdf(const Array& x) {
  return 0.5f * (1.0f + erf(x * float(1 / std::sqrt(2.0))));
}

struct Prices {
  Array call, put;
};

static Prices price(const Array& S, const Array& K, const Array& T, const Array& sigma) {
  Array sqrtT = sqrt(T);
  Array d1 = (log(S / K) + (rate + 0.5f * sigma * sigma) * T) / (sigma * sqrtT);
  Array d2 = d1 - sigma * sqrtT;
  Array discounted = K * exp(-rate * T);
  Array call = S * cdf(d1) - discounted * cdf(d2);
  Array put = discounted * cdf(-d2) - S * cdf(-d1);
  eval(call, put); // one kernel with two outputs
  return {call, put};
}

struct Timing {
  double ms;
  std::uint64_t kernels;
  HostArray<float> call, put;
};

template <class F> static Timing timed(bool eager, F&& run) {
  config::set_eager(eager);
  run(); // warm-up: kernel cache, memory pool
  lazyfuse::sync();
  auto k0 = kernel_cache_stats().kernels_launched;
  auto t0 = std::chrono::steady_clock::now();
  Prices p = run();
  lazyfuse::sync();
  auto t1 = std::chrono::steady_clock::now();
  auto k1 = kernel_cache_stats().kernels_launched;
  config::reset("LAZYFUSE_MODE");
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(), k1 - k0, p.call.get<float>(), p.put.get<float>()};
}

static int run(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : std::int64_t(1) << 16;
  if (n < 1) {
    std::fprintf(stderr, "usage: black_scholes [n>=1]\n");
    return 2;
  }
  std::printf("black_scholes: %lld options (float32), on the %s\n", (long long)n,
              backend() == Backend::Cuda ? "CUDA GPU" : "CPU backend");

  std::mt19937 gen(42);
  auto uniform = [&](float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(std::size_t(n), 0.0f);
    for (auto& x : v) x = d(gen);
    return v;
  };
  std::vector<float> s = uniform(10, 200), k = uniform(10, 200), t = uniform(0.05f, 5), v = uniform(0.05f, 0.6f);
  Array S = asarray(s), K = asarray(k), T = asarray(t), sigma = asarray(v);
  auto run = [&] { return price(S, K, T, sigma); };

  Timing lazy = timed(false, run);
  Timing eager = timed(true, run);

  // Reference in double; float32 inputs are exact in double. Tolerance: |err| <= 1e-3 + 1e-4 * price
  // (float32 rounding of log/exp/erf on prices up to ~200).
  auto cdf_ref = [](double x) { return 0.5 * (1 + std::erf(x / std::sqrt(2.0))); };
  bool ok = true;
  for (const Timing* r : {&lazy, &eager}) {
    double worst = 0; // max of |err| / (atol + rtol |ref|); <= 1 passes
    double max_abs = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      double sq = std::sqrt(double(t[i]));
      double d1 = (std::log(double(s[i]) / k[i]) + (rate + 0.5 * double(v[i]) * v[i]) * t[i]) / (v[i] * sq);
      double d2 = d1 - v[i] * sq;
      double disc = k[i] * std::exp(-rate * t[i]);
      double call = s[i] * cdf_ref(d1) - disc * cdf_ref(d2), put = disc * cdf_ref(-d2) - s[i] * cdf_ref(-d1);
      for (auto [got, want] : {std::pair{double(r->call[i]), call}, std::pair{double(r->put[i]), put}}) {
        max_abs = std::max(max_abs, std::abs(got - want));
        worst = std::max(worst, std::abs(got - want) / (1e-3 + 1e-4 * std::abs(want)));
      }
    }
    bool good = worst <= 1;
    ok = ok && good;
    std::printf("  %-5s %9.3f ms  %4llu kernels  max|price - ref| = %.2e  %s\n", r == &lazy ? "lazy" : "eager", r->ms,
                (unsigned long long)r->kernels, max_abs, good ? "ok" : "WRONG");
  }
  std::printf("  first option: S=%.2f K=%.2f T=%.2f sigma=%.3f  call=%.4f put=%.4f\n", s[0], k[0], t[0], v[0],
              lazy.call[0], lazy.put[0]);
  std::printf("  speedup lazy vs eager: %.2fx   (tolerance: |err| <= 1e-3 + 1e-4 |price|)\n", eager.ms / lazy.ms);
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return examples::run_example(argc, argv, run);
}
