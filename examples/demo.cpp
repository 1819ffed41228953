// lazyfuse demo (`make demo ARGS=[n]`): four small workloads, each run lazily (fused) and eagerly (one kernel
// per op), checked against a float64 host reference, timed, and their kernel launches counted.
//
// usage: demo [n]   (elements per workload; default 1<<20 on a GPU, 1<<16 on the CPU backend)
#include <lazyfuse/lazyfuse.hpp>

#include "common.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace lazyfuse;
using Ref = std::function<double(std::size_t)>; // the float64 host value of output element i

static Array cdf(const Array& x) {
  return 0.5f * (1.0f + erf(x * float(1 / std::sqrt(2.0))));
}
static double cdf(double x) {
  return 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
}

struct Row {
  double ms[2];
  std::uint64_t kernels[2];
  double err_over_tol = 0;
};

// Runs `op` lazily then eagerly (after a warm-up each), and checks every output against `ref`.
static Row measure(const std::function<std::vector<Array>()>& op, const std::vector<Ref>& ref, double atol, double rtol,
                   const Ref& extra_atol = nullptr) {
  Row row;
  for (int eager = 0; eager < 2; ++eager) {
    config::set_eager(eager == 1);
    { // warm-up, evaluated exactly as timed below: kernel cache, memory pool
      std::vector<Array> warm = op();
      if (warm.size() == 2)
        eval(warm[0], warm[1]);
      else
        warm[0].eval();
    }
    lazyfuse::sync();
    auto k0 = kernel_cache_stats().kernels_launched;
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Array> out = op();
    if (out.size() == 2)
      eval(out[0], out[1]);
    else
      out[0].eval();
    lazyfuse::sync();
    auto t1 = std::chrono::steady_clock::now();
    row.kernels[eager] = kernel_cache_stats().kernels_launched - k0;
    row.ms[eager] = std::chrono::duration<double, std::milli>(t1 - t0).count();
    config::reset("LAZYFUSE_MODE");
    for (std::size_t o = 0; o < out.size(); ++o) {
      HostArray<float> got = out[o].get<float>();
      for (std::size_t i = 0; i < got.size(); ++i) {
        double want = ref[o](i);
        double tol = atol + rtol * std::abs(want) + (extra_atol ? extra_atol(i) : 0.0);
        row.err_over_tol = std::max(row.err_over_tol, std::abs(got[i] - want) / tol);
      }
    }
  }
  return row;
}

static int run(int argc, char** argv) {
  const bool gpu = backend() == Backend::Cuda;
  const char* env = std::getenv("LAZYFUSE_BACKEND");
  std::printf("lazyfuse demo on the %s (%s)\n", gpu ? "CUDA GPU" : "CPU backend",
              gpu                                ? "a CUDA driver and device were found"
              : env && std::string(env) == "cpu" ? "LAZYFUSE_BACKEND=cpu asked for it"
              : device_count() == 0              ? "no usable CUDA driver or device"
                                                 : "CUDA device present but not usable");
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : (gpu ? 1 << 20 : 1 << 16);
  if (n < 256) {
    std::fprintf(stderr, "usage: demo [n>=256]\n");
    return 2;
  }
  std::mt19937 gen(1);
  auto uniform = [&](std::int64_t count, float lo, float hi) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<std::size_t>(count));
    for (auto& x : v) x = d(gen);
    return v;
  };
  bool ok = true;
  std::printf("%lld elements per workload\n\n%-14s %9s %9s %8s %13s %13s  %s\n", (long long)n, "workload", "lazy ms",
              "eager ms", "speedup", "kernels lazy", "kernels eager", "check");
  auto report = [&](const char* name, const Row& r) {
    bool good = r.err_over_tol <= 1;
    ok = ok && good;
    std::printf("%-14s %9.3f %9.3f %7.2fx %13llu %13llu  %s\n", name, r.ms[0], r.ms[1], r.ms[1] / r.ms[0],
                (unsigned long long)r.kernels[0], (unsigned long long)r.kernels[1], good ? "ok" : "WRONG");
  };

  // 1. An elementwise chain. The float32 sum inside the sqrt is off by up to d ~ 2e-6 (roundings of terms up to
  // ~5); sqrt(|z|) amplifies that near z = 0 to about d / (w + sqrt(d)), so that is allowed on top of 1e-5 (1 + w).
  std::vector<float> hx = uniform(n, -2, 2), hy = uniform(n, -2, 2);
  Array x = asarray(hx), y = asarray(hy);
  auto chain_ref = [&](std::size_t i) {
    double a = hx[i], b = hy[i];
    return std::sqrt(std::abs(std::sin(a) * std::cos(b) + a * b * 0.5 - std::exp(-a * a)));
  };
  report("chain", measure([&] { return std::vector{sqrt(abs(sin(x) * cos(y) + x * y * 0.5 - exp(-x * x)))}; },
                          {chain_ref}, 1e-5, 1e-5, [&](std::size_t i) { return 2e-6 / (chain_ref(i) + 1.5e-3); }));

  // 2. Black-Scholes call and put, one two-output kernel (tolerance 1e-3 abs + 1e-4 rel on prices up to ~200).
  std::vector<float> hs = uniform(n, 10, 200), hk = uniform(n, 10, 200), ht = uniform(n, 0.05f, 5),
                     hv = uniform(n, 0.05f, 0.6f);
  Array S = asarray(hs), K = asarray(hk), T = asarray(ht), V = asarray(hv);
  auto bs = [&](std::size_t i, bool call) {
    double sq = std::sqrt(double(ht[i])),
           d1 = (std::log(double(hs[i]) / hk[i]) + (0.02 + 0.5 * hv[i] * hv[i]) * ht[i]) / (hv[i] * sq);
    double d2 = d1 - hv[i] * sq, disc = hk[i] * std::exp(-0.02 * ht[i]);
    return call ? hs[i] * cdf(d1) - disc * cdf(d2) : disc * cdf(-d2) - hs[i] * cdf(-d1);
  };
  report("black-scholes",
         measure(
             [&] {
               Array d1 = (log(S / K) + (0.02f + 0.5f * V * V) * T) / (V * sqrt(T)), d2 = d1 - V * sqrt(T);
               Array disc = K * exp(-0.02f * T);
               return std::vector{S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)};
             },
             {[&](std::size_t i) { return bs(i, true); }, [&](std::size_t i) { return bs(i, false); }}, 1e-3, 1e-4));

  // 3. One heat-diffusion step on a side x side grid, fixed border (tolerance 1e-6 on values in [0, 1]).
  const std::int64_t side = std::int64_t(std::sqrt(double(n)));
  std::vector<float> hu = uniform(side * side, 0, 1);
  Array u = asarray(hu, {side, side});
  const Slice in = slice(1, -1);
  auto heat_ref = [&](std::size_t k) {
    std::int64_t i = std::int64_t(k) / side, j = std::int64_t(k) % side;
    auto at = [&](std::int64_t a, std::int64_t b) { return double(hu[std::size_t(a * side + b)]); };
    if (i == 0 || j == 0 || i == side - 1 || j == side - 1) return at(i, j);
    return at(i, j) + 0.2 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4 * at(i, j));
  };
  report("heat step", measure(
                          [&] {
                            Array c = u(in, in);
                            Array lap = u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(0, -2)) +
                                        u(in, slice(2, none)) - 4.0f * c;
                            return std::vector{u.at(in, in).set(c + 0.2f * lap)};
                          },
                          {heat_ref}, 1e-6, 1e-6));

  // 4. Row softmax of an (n/256 x 256) matrix (tolerance 1e-7 abs + 1e-4 rel).
  const std::int64_t cols = 256, rows = n / cols;
  std::vector<float> hm = uniform(rows * cols, -5, 5);
  Array m = asarray(hm, {rows, cols});
  std::vector<double> row_max(std::size_t(rows), -1e300), row_sum(std::size_t(rows), 0);
  for (std::size_t k = 0; k < hm.size(); ++k) row_max[k / cols] = std::max(row_max[k / cols], double(hm[k]));
  for (std::size_t k = 0; k < hm.size(); ++k) row_sum[k / cols] += std::exp(hm[k] - row_max[k / cols]);
  report("softmax",
         measure(
             [&] {
               Array e = exp(m - max(m, 1, true));
               return std::vector{e / sum(e, 1, true)};
             },
             {[&](std::size_t k) { return std::exp(hm[k] - row_max[k / cols]) / row_sum[k / cols]; }}, 1e-7, 1e-4));

  std::printf("\n%s\n", ok ? "all results match the host references" : "WRONG RESULT");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return examples::run_example(argc, argv, run);
}
