// Statistical tests of random samples for tests/test_random.cpp and tests/test_cuda_random.cpp: the CDFs of the
// distributions lazyfuse draws from (incomplete gamma and beta functions, Numerical Recipes' algorithms), and the
// p-values of the Kolmogorov-Smirnov and chi-square goodness-of-fit tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace lazyfuse_test::stats {

// Regularized lower incomplete gamma P(a, x) (Numerical Recipes' series and continued fraction).
inline double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  const double gln = std::lgamma(a);
  if (x < a + 1) {
    double ap = a, sum = 1.0 / a, del = sum;
    for (int n = 0; n < 10000; ++n) {
      ap += 1;
      del *= x / ap;
      sum += del;
      if (std::fabs(del) < std::fabs(sum) * 1e-15) break;
    }
    return sum * std::exp(-x + a * std::log(x) - gln);
  }
  double b = x + 1 - a, c = 1.0 / 1e-300, d = 1.0 / b, h = d;
  for (int i = 1; i < 10000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < 1e-300) d = 1e-300;
    c = b + an / c;
    if (std::fabs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return 1 - std::exp(-x + a * std::log(x) - gln) * h;
}

// Regularized incomplete beta I_x(a, b) (Numerical Recipes' continued fraction).
inline double beta_cf(double a, double b, double x) {
  double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < 1e-300) d = 1e-300;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < 10000; ++m) {
    const int m2 = 2 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < 1e-300) d = 1e-300;
    c = 1 + aa / c;
    if (std::fabs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < 1e-300) d = 1e-300;
    c = 1 + aa / c;
    if (std::fabs(c) < 1e-300) c = 1e-300;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < 1e-15) break;
  }
  return h;
}
inline double beta_i(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double bt =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return bt * beta_cf(a, b, x) / a;
  return 1 - bt * beta_cf(b, a, 1 - x) / b;
}

inline double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// P(K > lambda) of the Kolmogorov distribution.
inline double kolmogorov_q(double lambda) {
  if (lambda < 0.2) return 1;
  double sum = 0;
  for (int k = 1; k < 200; ++k) sum += (k % 2 ? 2 : -2) * std::exp(-2.0 * k * k * lambda * lambda);
  return std::clamp(sum, 0.0, 1.0);
}

// The Kolmogorov-Smirnov test's p-value of `x` against `cdf` (Stephens' finite-sample correction).
inline double ks_p(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = double(x.size());
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - double(i) / n, double(i + 1) / n - f});
  }
  const double sn = std::sqrt(n);
  return kolmogorov_q((sn + 0.12 + 0.11 / sn) * d);
}

// The probability mass functions of the discrete distributions the chi-square tests check.
inline std::function<double(std::int64_t)> poisson_pmf(double lam) {
  return [lam](std::int64_t k) { return std::exp(-lam + double(k) * std::log(lam) - std::lgamma(double(k) + 1)); };
}
inline std::function<double(std::int64_t)> binomial_pmf(std::int64_t n, double p) {
  return [n, p](std::int64_t k) {
    return std::exp(std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) - std::lgamma(double(n - k) + 1) +
                    double(k) * std::log(p) + double(n - k) * std::log1p(-p));
  };
}

// The chi-square test's p-value of integer samples against `pmf`, cells merged until each expects >= 5.
inline double chi2_p(const std::vector<double>& x, const std::function<double(std::int64_t)>& pmf, std::int64_t lo,
                     std::int64_t hi) {
  std::map<std::int64_t, double> observed;
  for (double v : x) ++observed[std::int64_t(v)];
  const double n = double(x.size());
  double stat = 0, cell_e = 0, cell_o = 0, outside = n;
  int cells = 0;
  for (std::int64_t k = lo; k <= hi; ++k) {
    cell_e += n * pmf(k);
    cell_o += observed.count(k) ? observed[k] : 0;
    outside -= observed.count(k) ? observed[k] : 0;
    if (cell_e >= 5 || k == hi) {
      stat += (cell_o - cell_e) * (cell_o - cell_e) / cell_e;
      ++cells;
      cell_e = cell_o = 0;
    }
  }
  EXPECT_EQ(outside, 0) << "samples outside [" << lo << ", " << hi << "]";
  return 1 - gamma_p((cells - 1) / 2.0, stat / 2);
}

} // namespace lazyfuse_test::stats
