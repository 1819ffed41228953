// Jacobi iteration for the 2-D Poisson equation -lap(u) = f on the unit square, u = 0 on the border, on an
// n x n grid (float64). f = 2 pi^2 sin(pi x) sin(pi y), so the exact solution is sin(pi x) sin(pi y).
// Each iteration mixes elementwise work (the stencil), a reduction (the norm of the update) and a host
// decision (stop once ||u_new - u|| < tol, read with item<double>()). Checked against a host Jacobi run for
// the same number of iterations; the update norm must decrease monotonically (Jacobi contracts).
//
// usage: jacobi [n=64] [tol=1e-4] [max_iter=20000]
#include <lazyfuse/lazyfuse.hpp>

#include "common.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <vector>

using namespace lazyfuse;

struct Solve {
  Array u;
  std::vector<double> norms; // ||u_new - u|| of every iteration
};

static Solve jacobi(const Array& h2f, std::int64_t n, double tol, int max_iter) {
  const Slice in = slice(1, -1);
  Array u = zeros({n, n});
  std::vector<double> norms;
  while (int(norms.size()) < max_iter) {
    Array u_new = u.at(in, in).set(0.25 * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(0, -2)) +
                                           u(in, slice(2, none)) + h2f(in, in)));
    u_new.eval();
    norms.push_back(linalg::norm(u_new - u).item<double>()); // host decision each iteration
    u = u_new;
    if (norms.back() < tol) break;
  }
  return {u, norms};
}

struct Timing {
  double ms;
  std::uint64_t kernels;
  HostArray<double> u;
  std::vector<double> norms;
};

static Timing timed(bool eager, const Array& h2f, std::int64_t n, double tol, int max_iter) {
  config::set_eager(eager);
  jacobi(h2f, n, tol, 2); // warm-up: kernel cache, memory pool
  lazyfuse::sync();
  auto k0 = kernel_cache_stats().kernels_launched;
  auto t0 = std::chrono::steady_clock::now();
  Solve s = jacobi(h2f, n, tol, max_iter);
  lazyfuse::sync();
  auto t1 = std::chrono::steady_clock::now();
  auto k1 = kernel_cache_stats().kernels_launched;
  config::reset("LAZYFUSE_MODE");
  return {std::chrono::duration<double, std::milli>(t1 - t0).count(), k1 - k0, s.u.get<double>(), s.norms};
}

static int run(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 64;
  const double tol = argc > 2 ? std::atof(argv[2]) : 1e-4;
  const int max_iter = argc > 3 ? std::atoi(argv[3]) : 20000;
  if (n < 3 || tol <= 0 || max_iter < 1) {
    std::fprintf(stderr, "usage: jacobi [n>=3] [tol>0] [max_iter>=1]\n");
    return 2;
  }
  std::printf("jacobi: Poisson on a %lld x %lld grid (float64), tol %.1e, max %d iterations, on the %s\n", (long long)n,
              (long long)n, tol, max_iter, backend() == Backend::Cuda ? "CUDA GPU" : "CPU backend");

  const double pi = std::numbers::pi, h = 1.0 / double(n - 1);
  std::vector<double> h2f(std::size_t(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      h2f[std::size_t(i * n + j)] = h * h * 2 * pi * pi * std::sin(pi * double(i) * h) * std::sin(pi * double(j) * h);
  Array rhs = asarray(h2f, {n, n});

  Timing lazy = timed(false, rhs, n, tol, max_iter);
  Timing eager = timed(true, rhs, n, tol, max_iter);

  // Host Jacobi, same stencil and summation order, same number of iterations as the lazy run.
  const int iters = int(lazy.norms.size());
  std::vector<double> u(std::size_t(n * n), 0.0), v = u;
  for (int it = 0; it < iters; ++it) {
    for (std::int64_t i = 1; i < n - 1; ++i)
      for (std::int64_t j = 1; j < n - 1; ++j) {
        auto at = [&](std::int64_t a, std::int64_t b) { return u[std::size_t(a * n + b)]; };
        v[std::size_t(i * n + j)] =
            0.25 * (at(i - 1, j) + at(i + 1, j) + at(i, j - 1) + at(i, j + 1) + h2f[std::size_t(i * n + j)]);
      }
    std::swap(u, v);
  }

  const double check_tol = 1e-12; // float64, identical arithmetic up to FMA contraction
  bool ok = true;
  for (const Timing* t : {&lazy, &eager}) {
    double err = 0, exact_err = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::size_t k = std::size_t(i * n + j);
        err = std::max(err, std::abs(t->u[k] - u[k]));
        exact_err =
            std::max(exact_err, std::abs(t->u[k] - std::sin(pi * double(i) * h) * std::sin(pi * double(j) * h)));
      }
    bool decreasing = true;
    for (std::size_t k = 1; k < t->norms.size(); ++k) decreasing = decreasing && t->norms[k] <= t->norms[k - 1];
    bool good = err <= check_tol && decreasing && int(t->norms.size()) == iters;
    ok = ok && good;
    std::printf("  %-5s %9.1f ms  %6llu kernels  %5zu iterations  final ||du|| %.3e  max|u - host| %.1e  "
                "max|u - exact| %.2e  norms %s  %s\n",
                t == &lazy ? "lazy" : "eager", t->ms, (unsigned long long)t->kernels, t->norms.size(), t->norms.back(),
                err, exact_err, decreasing ? "decreasing" : "NOT decreasing", good ? "ok" : "WRONG");
  }
  std::printf("  first update norms: %.3e %.3e %.3e ...\n", lazy.norms[0], lazy.norms.size() > 1 ? lazy.norms[1] : 0.0,
              lazy.norms.size() > 2 ? lazy.norms[2] : 0.0);
  std::printf("  speedup lazy vs eager: %.2fx   (tolerance vs host Jacobi: %.0e)\n", eager.ms / lazy.ms, check_tol);
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  return examples::run_example(argc, argv, run);
}
