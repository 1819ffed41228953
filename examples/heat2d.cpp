// 2-D heat diffusion on an n x n grid with a fixed (Dirichlet) border, explicit 5-point stencil:
//   u[1:-1, 1:-1] = c + alpha * (N + S + E + W - 4c)
// Every k steps the change since the last check, ||u_new - u_old||, is read back on the host (a host
// decision). Runs once lazily and once eagerly, and checks both against the same stencil in host loops.
//
// usage: heat2d [n=256] [steps=200]
#include <lazyfuse/lazyfuse.hpp>

#include "common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace lazyfuse;

constexpr double alpha = 0.2; // stable for alpha <= 0.25
constexpr int check_every = 50;

// Initial state: a hot square in the middle, a warm left edge (part of the fixed border), zero elsewhere.
static std::vector<float> initial(std::int64_t n) {
  std::vector<float> u(std::size_t(n * n), 0.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    u[std::size_t(i * n)] = 1.0f;
    for (std::int64_t j = 0; j < n; ++j)
      if (std::abs(i - n / 2) < n / 8 && std::abs(j - n / 2) < n / 8) u[std::size_t(i * n + j)] = 2.0f;
  }
  return u;
}

struct Result {
  Array u;
  std::vector<float> norms; // ||u_new - u_old|| every check_every steps
};

static Result simulate(const Array& u0, int steps) {
  const Slice in = slice(1, -1);
  Array u = u0, u_old = u0;
  std::vector<float> norms;
  for (int s = 1; s <= steps; ++s) {
    Array c = u(in, in);
    Array lap = u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(0, -2)) + u(in, slice(2, none)) - 4.0f * c;
    u = u.at(in, in).set(c + alpha * lap);
    u.eval(); // one step = one kernel; keeps the graph from growing across steps
    if (s % check_every == 0) {
      norms.push_back(linalg::norm(u - u_old).item<float>());
      u_old = u;
    }
  }
  return {u, norms};
}

static std::vector<double> reference(std::int64_t n, int steps, std::vector<double>& norms) {
  std::vector<float> init = initial(n);
  std::vector<double> u(init.begin(), init.end()), v = u, old = u;
  for (int s = 1; s <= steps; ++s) {
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        auto at = [&](std::int64_t a, std::int64_t b) { return u[std::size_t(a * n + b)]; };
        double c = at(i, j);
        v[std::size_t(i * n + j)] = c + alpha * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) - 4 * c);
      }
    std::swap(u, v);
    if (s % check_every == 0) {
      double d = 0;
      for (std::size_t k = 0; k < u.size(); ++k) d += (u[k] - old[k]) * (u[k] - old[k]);
      norms.push_back(std::sqrt(d));
      old = u;
    }
  }
  return u;
}

struct Timing {
  double ms;
  std::uint64_t kernels;
  HostArray<float> u;
  std::vector<float> norms;
};

static Timing timed(bool eager, const Array& u0, int steps) {
  config::set_eager(eager);
  simulate(u0, std::min(steps, check_every)); // warm-up through the first norm check: kernel cache, memory pool
  lazyfuse::sync();
  auto k0 = kernel_cache_stats().kernels_launched;
  auto t0 = std::chrono::steady_clock::now();
  Result r = simulate(u0, steps);
  lazyfuse::sync();
  auto t1 = std::chrono::steady_clock::now();
  auto k1 = kernel_cache_stats().kernels_launched;
  config::reset("LAZYFUSE_MODE");
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(), k1 - k0, r.u.get<float>(), r.norms};
}

static int run(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 256;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (n < 3 || steps < 1) {
    std::fprintf(stderr, "usage: heat2d [n>=3] [steps>=1]\n");
    return 2;
  }
  std::printf("heat2d: %lld x %lld grid, %d steps, norm check every %d, on the %s\n", (long long)n, (long long)n, steps,
              check_every, backend() == Backend::Cuda ? "CUDA GPU" : "CPU backend");

  Array u0 = asarray(initial(n), {n, n});
  Timing lazy = timed(false, u0, steps);
  Timing eager = timed(true, u0, steps);

  std::vector<double> ref_norms;
  std::vector<double> ref = reference(n, steps, ref_norms);
  // float32 arithmetic over `steps` steps of a contracting stencil: errors stay near float eps * |u|.
  const double tol = 1e-4;
  bool ok = true;
  for (const Timing* t : {&lazy, &eager}) {
    double err = 0;
    for (std::size_t k = 0; k < ref.size(); ++k) err = std::max(err, std::abs(double(t->u[k]) - ref[k]));
    double norm_err = 0;
    for (std::size_t k = 0; k < ref_norms.size(); ++k)
      norm_err = std::max(norm_err, std::abs(t->norms[k] - ref_norms[k]) / std::max(ref_norms[k], 1e-30));
    bool good = err <= tol && norm_err <= 1e-3;
    ok = ok && good;
    std::printf("  %-5s %9.2f ms  %6llu kernels  max|u - ref| = %.2e  max rel norm err = %.2e  %s\n",
                t == &lazy ? "lazy" : "eager", t->ms, (unsigned long long)t->kernels, err, norm_err,
                good ? "ok" : "WRONG");
  }
  std::printf("  convergence norms:");
  for (float v : lazy.norms) std::printf(" %.4g", v);
  std::printf("\n  speedup lazy vs eager: %.2fx   (tolerance: |u - ref| <= %.0e, norms rel <= 1e-3)\n",
              eager.ms / lazy.ms, tol);
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return examples::run_example(argc, argv, run);
}
