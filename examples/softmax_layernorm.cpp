// Row softmax and layer normalization of a (rows x cols) float32 matrix, the two row-wise blocks of a
// transformer layer:
//   softmax:   e = exp(m - max(m, 1)); e / sum(e, 1)
//   layernorm: (m - mean(m, 1)) / sqrt(var(m, 1) + 1e-5) * gamma + beta
// Lazily each is one kernel (row reductions fused with the elementwise work around them). Checked against
// double-precision host loops.
//
// usage: softmax_layernorm [rows=512] [cols=256]
#include <lazyfuse/lazyfuse.hpp>

#include "common.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

using namespace lazyfuse;

static Array softmax(const Array& m) {
  Array e = exp(m - max(m, 1, true));
  return e / sum(e, 1, true);
}

static Array layernorm(const Array& m, const Array& gamma, const Array& beta) {
  return (m - mean(m, 1, true)) / sqrt(var(m, 1, 0, true) + 1e-5f) * gamma + beta;
}

struct Timing {
  double ms;
  std::uint64_t kernels;
  HostArray<float> out;
};

static Timing timed(bool eager, const std::function<Array()>& op) {
  config::set_eager(eager);
  op().eval(); // warm-up: kernel cache, memory pool
  lazyfuse::sync();
  auto k0 = kernel_cache_stats().kernels_launched;
  auto t0 = std::chrono::steady_clock::now();
  Array out = op();
  out.eval();
  lazyfuse::sync();
  auto t1 = std::chrono::steady_clock::now();
  auto k1 = kernel_cache_stats().kernels_launched;
  config::reset("LAZYFUSE_MODE");
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(), k1 - k0, out.get<float>()};
}

static int run(int argc, char** argv) {
  const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 512, cols = argc > 2 ? std::atoll(argv[2]) : 256;
  if (rows < 1 || cols < 2) {
    std::fprintf(stderr, "usage: softmax_layernorm [rows>=1] [cols>=2]\n");
    return 2;
  }
  std::printf("softmax_layernorm: %lld x %lld float32 matrix, on the %s\n", (long long)rows, (long long)cols,
              backend() == Backend::Cuda ? "CUDA GPU" : "CPU backend");

  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> h(static_cast<std::size_t>(rows * cols)), g(static_cast<std::size_t>(cols)), b(g);
  for (auto& x : h) x = normal(gen);
  for (std::size_t j = 0; j < g.size(); ++j) g[j] = 1.0f + 0.01f * float(j % 7), b[j] = 0.1f * float(j % 3);
  Array m = asarray(h, {rows, cols}), gamma = asarray(g), beta = asarray(b);

  // Double-precision references.
  std::vector<double> ref_sm(h.size()), ref_ln(h.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* row = &h[std::size_t(i * cols)];
    double mx = row[0], se = 0, mu = 0, var = 0;
    for (std::int64_t j = 0; j < cols; ++j) mx = std::max(mx, double(row[j])), mu += row[j];
    mu /= double(cols);
    for (std::int64_t j = 0; j < cols; ++j) se += std::exp(row[j] - mx), var += (row[j] - mu) * (row[j] - mu);
    var /= double(cols);
    for (std::int64_t j = 0; j < cols; ++j) {
      std::size_t k = std::size_t(i * cols + j);
      ref_sm[k] = std::exp(row[j] - mx) / se;
      ref_ln[k] = (row[j] - mu) / std::sqrt(var + 1e-5) * g[std::size_t(j)] + b[std::size_t(j)];
    }
  }

  struct Case {
    const char* name;
    std::function<Array()> op;
    const std::vector<double>* ref;
    double atol, rtol; // float32 rounding of exp / row sums (softmax), of mean / var / sqrt (layernorm)
  };
  const Case cases[] = {
      {"softmax", [&] { return softmax(m); }, &ref_sm, 1e-7, 1e-4},
      {"layernorm", [&] { return layernorm(m, gamma, beta); }, &ref_ln, 1e-4, 1e-4},
  };
  bool ok = true;
  std::printf("  %-10s %10s %10s %8s %13s %13s  %s\n", "op", "lazy ms", "eager ms", "speedup", "kernels lazy",
              "kernels eager", "check");
  for (const Case& c : cases) {
    Timing lazy = timed(false, c.op), eager = timed(true, c.op);
    double worst = 0;
    for (const Timing* t : {&lazy, &eager})
      for (std::size_t k = 0; k < h.size(); ++k)
        worst = std::max(worst, std::abs(t->out[k] - (*c.ref)[k]) / (c.atol + c.rtol * std::abs((*c.ref)[k])));
    bool good = worst <= 1;
    ok = ok && good;
    std::printf("  %-10s %10.3f %10.3f %7.2fx %13llu %13llu  %s (err/tol %.1e; atol %.0e, rtol %.0e)\n", c.name,
                lazy.ms, eager.ms, eager.ms / lazy.ms, (unsigned long long)lazy.kernels,
                (unsigned long long)eager.kernels, good ? "ok" : "WRONG", worst, c.atol, c.rtol);
  }
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return examples::run_example(argc, argv, run);
}
