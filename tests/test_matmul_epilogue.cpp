// The work around a matrix product folded into its library call (fusion/ProductEpilogues.h): alpha * (a @ b) +
// beta * c with c never overwritten, scalars on the operands, the bias row, ReLU and the tanh GELU, on the backend
// in use (cuBLASLt's epilogues on a GPU, BLAS or the blocked loop plus the op table's functions on the CPU). Also
// the gelu ops themselves against a long double reference. Fused results are compared with a float64 reference
// within tolerances (they are not the unfused ops' bits); kernel and library-call counts pin what folds.
#include <lazyfuse/lazyfuse.hpp>

#include "graph/Node.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

using namespace lazyfuse;

namespace {

struct Counts {
  std::uint64_t kernels = 0, library = 0;
};
Counts counted(const std::function<void()>& f) {
  const auto before = kernel_cache_stats();
  f();
  const auto after = kernel_cache_stats();
  return {after.kernels_launched - before.kernels_launched, after.library_calls - before.library_calls};
}

std::vector<double> values(const Array& a) {
  auto h = a.astype(DType::Float64).get<double>();
  return std::vector<double>(h.data(), h.data() + h.size());
}

// Random values in [-1, 1) of type t, evaluated.
Array random(Shape s, DType t, std::uint64_t salt) {
  std::mt19937_64 rng(lazyfuse_test::seed() + salt);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> v(static_cast<std::size_t>(graph::shape_size(s)));
  for (auto& x : v) x = d(rng);
  Array a = asarray(v, s).astype(t);
  a.eval();
  return a;
}

double gelu_tanh_ref(double x) {
  return x / (1 + std::exp(-2 * std::sqrt(2 / std::acos(-1.0)) * (x + 0.044715 * x * x * x)));
}
double gelu_ref(double x) {
  return x / 2 * std::erfc(-x / std::sqrt(2.0));
}

enum class Act { None, Relu, GeluTanh, Gelu };

// The float64 reference of act(alpha * (a @ b) + beta * c + bias) for a (batch, m, k) (or (m, k)) and b (k, n);
// c (empty: none) of the result's shape, bias (empty: none) of n values.
std::vector<double> reference(const Array& a, const Array& b, double alpha, const std::vector<double>& c, double beta,
                              const std::vector<double>& bias, Act act, std::vector<double>* magnitude = nullptr) {
  const auto va = values(a), vb = values(b);
  const std::int64_t k = b.shape()[0], n = b.shape()[1];
  const std::int64_t rows = a.size() / k;
  std::vector<double> r(std::size_t(rows * n)), mag(std::size_t(rows * n));
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0, m = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        s += va[std::size_t(i * k + l)] * vb[std::size_t(l * n + j)];
        m += std::fabs(va[std::size_t(i * k + l)] * vb[std::size_t(l * n + j)]);
      }
      const std::size_t e = std::size_t(i * n + j);
      double v = alpha * s;
      m = std::fabs(alpha) * m;
      if (!c.empty()) {
        v += beta * c[e];
        m += std::fabs(beta * c[e]);
      }
      if (!bias.empty()) {
        v += bias[std::size_t(j)];
        m += std::fabs(bias[std::size_t(j)]);
      }
      switch (act) {
      case Act::None: break;
      case Act::Relu: v = std::max(v, 0.0); break;
      case Act::GeluTanh: v = gelu_tanh_ref(v); break;
      case Act::Gelu: v = gelu_ref(v); break;
      }
      r[e] = v;
      mag[e] = m + std::fabs(v);
    }
  if (magnitude) *magnitude = mag;
  return r;
}

// The unit roundoff a fused result may be off by per accumulated term (TF32 when it is on, on a GPU).
double unit(DType t) {
  switch (t) {
  case DType::Float64: return 0x1p-52;
  case DType::Float16: return 0x1p-10;
  case DType::BFloat16: return 0x1p-7;
  default: {
    const char* tf32 = std::getenv("LAZYFUSE_TF32");
    return backend() == Backend::Cuda && tf32 && std::string(tf32) == "1" ? 0x1p-10 : 0x1p-23;
  }
  }
}

// `extra`: a relative error allowed on top (cuBLASLt's own GELU, whose accuracy NVIDIA does not state).
void expect_near(const Array& got, const std::vector<double>& want, const std::vector<double>& magnitude,
                 std::int64_t k, DType t, const std::string& what, double extra = 0) {
  const auto g = values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  // k + 4 roundoffs of the accumulation, the scaling, the addend and the activation, of the magnitudes involved.
  const double tol = double(k + 4) * unit(t) + extra;
  int bad = 0;
  for (std::size_t e = 0; e < g.size() && bad < 5; ++e)
    if (!(std::fabs(g[e] - want[e]) <= tol * magnitude[e] + 1e-300)) {
      ADD_FAILURE() << what << ": element " << e << " is " << g[e] << ", expected " << want[e] << " (tolerance "
                    << tol * magnitude[e] << ")";
      ++bad;
    }
}

// ---- what folds: counts ------------------------------------------------------------------------------------------

TEST(MatmulEpilogue, ProductPlusCIsOneLibraryCallAndNoKernel) {
  const Array a = random({12, 20}, DType::Float32, 1), b = random({20, 9}, DType::Float32, 2);
  const Array c = random({12, 9}, DType::Float32, 3);
  const auto c_before = values(c);
  Array d;
  const Counts n = counted([&] {
    d = matmul(a, b) + c;
    d.eval();
  });
  EXPECT_EQ(n.library, 1u);
  EXPECT_EQ(n.kernels, 0u);
  std::vector<double> mag;
  const auto want = reference(a, b, 1, c_before, 1, {}, Act::None, &mag);
  expect_near(d, want, mag, 20, DType::Float32, "a @ b + c");
  EXPECT_EQ(values(c), c_before) << "c was overwritten";
  // The same sum with c on the left.
  Array d2;
  const Counts n2 = counted([&] {
    d2 = c + matmul(a, b);
    d2.eval();
  });
  EXPECT_EQ(n2.library, 1u);
  EXPECT_EQ(n2.kernels, 0u);
  expect_near(d2, want, mag, 20, DType::Float32, "c + a @ b");
}

TEST(MatmulEpilogue, ScalarsFoldIntoAlphaAndBeta) {
  const Array a = random({2, 6, 16}, DType::Float64, 4), b = random({16, 5}, DType::Float64, 5);
  const Array c = random({2, 6, 5}, DType::Float64, 6);
  const auto vc = values(c);
  struct Case {
    const char* name;
    std::function<Array()> make;
    double alpha, beta;
    bool with_c;
  };
  const std::vector<Case> cases = {
      {"2 * (a @ b)", [&] { return 2.0 * matmul(a, b); }, 2, 0, false},
      {"(a @ b) * 2 * 3", [&] { return matmul(a, b) * 2.0 * 3.0; }, 6, 0, false},
      {"(a * 3) @ b", [&] { return matmul(a * 3.0, b); }, 3, 0, false},
      {"(a * 3) @ b * 0.5", [&] { return matmul(a * 3.0, b) * 0.5; }, 1.5, 0, false},
      {"2 * (a @ b) + 0.5 * c", [&] { return 2.0 * matmul(a, b) + 0.5 * c; }, 2, 0.5, true},
      {"a @ b - c", [&] { return matmul(a, b) - c; }, 1, -1, true},
      {"c * 4 + (a * 0.25) @ b", [&] { return c * 4.0 + matmul(a * 0.25, b); }, 0.25, 4, true},
  };
  for (const Case& cs : cases) {
    Array d;
    const Counts n = counted([&] {
      d = cs.make();
      d.eval();
    });
    EXPECT_EQ(n.library, 1u) << cs.name;
    EXPECT_EQ(n.kernels, 0u) << cs.name;
    std::vector<double> mag;
    const auto want = reference(a, b, cs.alpha, cs.with_c ? vc : std::vector<double>{}, cs.beta, {}, Act::None, &mag);
    expect_near(d, want, mag, 16, DType::Float64, cs.name);
  }
}

TEST(MatmulEpilogue, BiasReluAndTanhGeluAreOneLibraryCall) {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const std::string tn(dtype_name(t));
    const Array x = random({3, 10, 24}, t, 7), w = random({24, 17}, t, 8), bias = random({17}, t, 9);
    const auto vbias = values(bias);
    struct Case {
      const char* name;
      std::function<Array()> make;
      Act act;
      bool with_bias;
    };
    const std::vector<Case> cases = {
        {"x @ w + bias", [&] { return matmul(x, w) + bias; }, Act::None, true},
        {"bias + x @ w", [&] { return bias + matmul(x, w); }, Act::None, true},
        {"maximum(x @ w + bias, 0)", [&] { return maximum(matmul(x, w) + bias, 0.0); }, Act::Relu, true},
        {"maximum(0, x @ w)", [&] { return maximum(0.0, matmul(x, w)); }, Act::Relu, false},
        {"gelu_tanh(x @ w + bias)", [&] { return gelu(matmul(x, w) + bias, GeluApproximate::Tanh); }, Act::GeluTanh,
         true},
        {"gelu_tanh(2 * (x @ w))", [&] { return gelu_tanh(2.0 * matmul(x, w)); }, Act::GeluTanh, false},
    };
    for (const Case& cs : cases) {
      Array d;
      const Counts n = counted([&] {
        d = cs.make();
        d.eval();
      });
      EXPECT_EQ(n.library, 1u) << cs.name << " " << tn;
      // On a GPU, cuBLASLt may decline an epilogue for a type (float64's GELU): the ops above then run as one kernel.
      if (backend() == Backend::Cpu) {
        EXPECT_EQ(n.kernels, 0u) << cs.name << " " << tn;
      }
      EXPECT_LE(n.kernels, 1u) << cs.name << " " << tn;
      const double alpha = std::string(cs.name).find("2 *") != std::string::npos ? 2 : 1;
      std::vector<double> mag;
      const auto want = reference(x, w, alpha, {}, 0, cs.with_bias ? vbias : std::vector<double>{}, cs.act, &mag);
      const double gpu_gelu = cs.act == Act::GeluTanh && backend() == Backend::Cuda ? 0x1p-10 : 0;
      expect_near(d, want, mag, 24, t, std::string(cs.name) + " " + tn, gpu_gelu);
    }
  }
}

TEST(MatmulEpilogue, ErfGeluIsOneKernelReadingTheProduct) {
  const Array x = random({16, 32}, DType::Float32, 10), w = random({32, 24}, DType::Float32, 11);
  const Array bias = random({24}, DType::Float32, 12);
  Array d;
  const Counts n = counted([&] {
    d = gelu(matmul(x, w) + bias);
    d.eval();
  });
  EXPECT_EQ(n.library, 1u) << "the product and its bias";
  EXPECT_EQ(n.kernels, 1u) << "erf GELU never maps to cuBLASLt's (tanh) GELU";
  std::vector<double> mag;
  const auto want = reference(x, w, 1, {}, 0, values(bias), Act::Gelu, &mag);
  expect_near(d, want, mag, 32, DType::Float32, "gelu(x @ w + bias)");
}

TEST(MatmulEpilogue, WhatDoesNotFold) {
  const Array a = random({8, 12}, DType::Float32, 13), b = random({12, 6}, DType::Float32, 14);
  const Array c = random({8, 6}, DType::Float32, 15), ct = random({6, 8}, DType::Float32, 16);
  const Array col = random({8, 1}, DType::Float32, 17);
  struct Case {
    const char* name;
    std::function<std::vector<Array>()> make;
    std::uint64_t kernels;
  };
  const std::vector<Case> cases = {
      // A scalar addend is elementwise work on the product.
      {"a @ b + 1", [&] { return std::vector<Array>{matmul(a, b) + 1.0}; }, 1},
      // The product is also asked for: it is stored, and the sum is a kernel reading it.
      {"p and p + c",
       [&] {
         Array p = matmul(a, b);
         return std::vector<Array>{p, p + c};
       },
       1},
      // A column broadcast is no bias (cuBLASLt's runs along rows): c is materialized first.
      {"a @ b + column", [&] { return std::vector<Array>{matmul(a, b) + col}; }, 1},
      // A transposed c: copied row-major by one kernel, then one call.
      {"a @ b + c.T", [&] { return std::vector<Array>{matmul(a, b) + ct.transpose()}; }, 1},
      // Pending work in c: one kernel writes it, then one call.
      {"a @ b + (c * 2 + 1)", [&] { return std::vector<Array>{matmul(a, b) + (c * 2.0 + 1.0)}; }, 1},
  };
  for (const Case& cs : cases) {
    std::vector<Array> outs;
    const Counts n = counted([&] {
      outs = cs.make();
      for (Array& o : outs) o.eval();
    });
    EXPECT_EQ(n.library, 1u) << cs.name;
    EXPECT_EQ(n.kernels, cs.kernels) << cs.name;
  }
  // The values of the unfused cases.
  std::vector<double> mag;
  const auto vc = values(c), vcol = values(col), vct = values(ct);
  std::vector<double> c_col(48), c_t(48), c21(48);
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 6; ++j) {
      c_col[i * 6 + j] = vcol[i];
      c_t[i * 6 + j] = vct[j * 8 + i];
      c21[i * 6 + j] = double(float(float(vc[i * 6 + j]) * 2.0f) + 1.0f);
    }
  expect_near(matmul(a, b) + col, reference(a, b, 1, c_col, 1, {}, Act::None, &mag), mag, 12, DType::Float32,
              "a @ b + column");
  expect_near(matmul(a, b) + ct.transpose(), reference(a, b, 1, c_t, 1, {}, Act::None, &mag), mag, 12, DType::Float32,
              "a @ b + c.T");
  expect_near(matmul(a, b) + (c * 2.0 + 1.0), reference(a, b, 1, c21, 1, {}, Act::None, &mag), mag, 12, DType::Float32,
              "a @ b + (c * 2 + 1)");
}

TEST(MatmulEpilogue, IntegerProductsAndEagerModeFoldNothing) {
  const Array a = (arange(0, 12) % 5).reshape({3, 4}).astype(DType::Int32), b = ones({4, 2}, DType::Int32);
  const Array c = full({3, 2}, 7, DType::Int32);
  a.eval();
  b.eval();
  c.eval();
  Array d;
  const Counts n = counted([&] {
    d = matmul(a, b) + c;
    d.eval();
  });
  EXPECT_EQ(n.library + n.kernels, 2u) << "an integer product and then its sum";
  const auto va = values(a), vd = values(d);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 2; ++j)
      EXPECT_EQ(vd[i * 2 + j], va[i * 4] + va[i * 4 + 1] + va[i * 4 + 2] + va[i * 4 + 3] + 7);

  const Array x = random({4, 8}, DType::Float32, 18), w = random({8, 3}, DType::Float32, 19);
  const Array bias = random({3}, DType::Float32, 20);
  config::set_eager(true);
  Array e;
  const Counts m = counted([&] {
    e = maximum(matmul(x, w) + bias, 0.0);
    e.eval();
  });
  config::set_eager(false);
  EXPECT_EQ(m.library, 1u);
  EXPECT_EQ(m.kernels, 2u) << "eager mode: the add and the maximum are kernels of their own";
}

TEST(MatmulEpilogue, ChainOfLayers) {
  // x @ w1 -> bias -> relu -> @ w2 -> bias: two library calls, nothing else.
  const Array x = random({32, 16}, DType::Float32, 21), w1 = random({16, 24}, DType::Float32, 22);
  const Array b1 = random({24}, DType::Float32, 23), w2 = random({24, 8}, DType::Float32, 24);
  const Array b2 = random({8}, DType::Float32, 25);
  Array y;
  const Counts n = counted([&] {
    y = matmul(maximum(matmul(x, w1) + b1, 0.0), w2) + b2;
    y.eval();
  });
  EXPECT_EQ(n.library, 2u);
  EXPECT_EQ(n.kernels, 0u);
  std::vector<double> mag;
  Array h = asarray(reference(x, w1, 1, {}, 0, values(b1), Act::Relu), {32, 24}).astype(DType::Float32);
  const auto want = reference(h, w2, 1, {}, 0, values(b2), Act::None, &mag);
  // The hidden layer's own roundoff, propagated through w2, is within the same relative bound.
  expect_near(y, want, mag, 16 + 24, DType::Float32, "two layers");
}

// ---- the gelu ops ------------------------------------------------------------------------------------------------

TEST(Gelu, MatchesTheFloat64DefinitionAndApproximateChooses) {
  std::vector<double> xs;
  for (double v = -12; v <= 12; v += 0.0625) xs.push_back(v);
  const Array x64 = asarray(xs);
  const auto g = values(gelu(x64)), gn = values(gelu(x64, GeluApproximate::None));
  const auto gt = values(gelu(x64, GeluApproximate::Tanh)), gt2 = values(gelu_tanh(x64));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const long double x = xs[i];
    const long double ref = x / 2 * std::erfc(-x / std::sqrt(2.0L));
    const long double reft = x / (1 + std::exp(-2 * std::sqrt(2 / std::acos(-1.0L)) * (x + 0.044715L * x * x * x)));
    EXPECT_LE(std::fabs(g[i] - double(ref)), 8 * std::numeric_limits<double>::epsilon() * std::fabs(double(ref)))
        << "gelu(" << xs[i] << ")";
    EXPECT_EQ(g[i], gn[i]);
    EXPECT_EQ(gt[i], gt2[i]);
    // The far tail loses |2u| roundoffs to exp (docs/semantics.md): a looser bound there.
    EXPECT_LE(std::fabs(gt[i] - double(reft)), 512 * std::numeric_limits<double>::epsilon() * std::fabs(double(reft)))
        << "gelu_tanh(" << xs[i] << ")";
  }
  // The two differ (by up to about 5e-4 near |x| = 2): the choice is not ignored.
  double most = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) most = std::max(most, std::fabs(g[i] - gt[i]));
  EXPECT_GT(most, 1e-4);
  EXPECT_LT(most, 1e-3);
}

// Every value of each half type but NaN: the half GELUs (graph/OpMath.inc: a fitted erfc, the tanh form in float)
// are approximations whose error a sample of points could miss.
template <class Half> Array every_half_value() {
  std::vector<Half> all;
  for (unsigned bits = 0; bits <= 0xffff; ++bits) {
    const Half h = Half::from_bits(static_cast<std::uint16_t>(bits));
    if (!std::isnan(static_cast<float>(h))) all.push_back(h);
  }
  return asarray(all);
}

// Each result is within one unit in the last place of the half type from the exact value, as any half function's,
// for every input (bfloat16's results reach x = -14 before they underflow), the limits included.
TEST(Gelu, HalfTypesAreWithinOneUnitOfTheExactValue) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    const int mantissa_bits = t == DType::Float16 ? 10 : 7, min_exponent = t == DType::Float16 ? -14 : -126;
    // The spacing of the half type's values at magnitude m.
    const auto unit = [&](long double m) {
      int e = m > 0 ? std::ilogb(m) : min_exponent;
      return std::ldexp(1.0L, std::max(e, min_exponent) - mantissa_bits);
    };
    const Array x = t == DType::Float16 ? every_half_value<float16>() : every_half_value<bfloat16>();
    ASSERT_EQ(x.dtype(), t);
    const auto xh = values(x);
    for (bool tanh_form : {false, true}) {
      const auto got = values(gelu(x, tanh_form ? GeluApproximate::Tanh : GeluApproximate::None));
      const auto via32 =
          values(gelu(x.astype(DType::Float32), tanh_form ? GeluApproximate::Tanh : GeluApproximate::None).astype(t));
      std::size_t same = 0;
      for (std::size_t i = 0; i < xh.size(); ++i) {
        const long double v = xh[i];
        long double want;
        if (std::isinf(v))
          want = v > 0 ? v : -0.0L;
        else if (tanh_form) {
          const long double u = std::sqrt(2 / std::acos(-1.0L)) * (v + 0.044715L * v * v * v);
          want = std::isinf(u) ? (v > 0 ? v : -0.0L) : v / (1 + std::exp(-2 * u));
        } else
          want = v / 2 * std::erfc(-v / std::sqrt(2.0L));
        const long double g = got[i];
        if (std::isinf(v)) {
          EXPECT_EQ(double(g), double(want)) << dtype_name(t) << " at " << xh[i];
          EXPECT_EQ(std::signbit(g), std::signbit(want)) << dtype_name(t) << " at " << xh[i];
        } else {
          EXPECT_LE(std::fabs(g - want), unit(std::max(std::fabs(g), std::fabs(want))))
              << dtype_name(t) << (tanh_form ? " gelu_tanh(" : " gelu(") << xh[i] << ") = " << got[i] << ", exact "
              << double(want);
        }
        same += std::memcmp(&got[i], &via32[i], sizeof(double)) == 0;
      }
      // Both round a float32 value within a few of its ulps: they rarely straddle a rounding point of the half type.
      EXPECT_GE(same, xh.size() * 99 / 100) << dtype_name(t) << (tanh_form ? " tanh" : " erf");
    }
  }
}

TEST(Gelu, IntegersBecomeFloat64AsErfDoes) {
  const Array i = arange(-3, 4);
  EXPECT_EQ(gelu(i).dtype(), erf(i).dtype());
  EXPECT_THROW(gelu(asarray(std::vector<std::complex<float>>{{1, 1}})), DTypeError);
}

} // namespace
