// Matrix products on the GPU: cuBLASLt (float32 in full FP32 and TF32, float64, float16, bfloat16, complex) and the
// generated kernel (integers, bool), each compared with the CPU backend's GEMM (runtime/CpuGemm.h: BLAS or the
// blocked loop) run on the same inputs in this process, and with a float64 product as the reference. Also: one
// library call and no kernel per product, the algorithm cache (a repeat makes no heuristic query), the
// materialization's stream. Skips without a GPU (tests/gpu_test.h).
#include <lazyfuse/lazyfuse.hpp>

#include "gpu_test.h"
#include "graph/Node.h"
#include "runtime/CpuGemm.h"
#include "runtime/CublasLt.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <type_traits>

using namespace lazyfuse;

namespace {

class CudaMatmul : public testing::Test {
protected:
  void SetUp() override { LAZYFUSE_SKIP_WITHOUT_GPU(); }
  void TearDown() override { config::reset("LAZYFUSE_TF32"); }
};

// A (batch, rows, cols) array of values exactly representable in `t` (small integers for the integer types), and its
// values as doubles (interleaved real and imaginary parts for complex types).
Array random_array(DType t, Shape s, std::mt19937_64& rng, std::vector<double>& values) {
  const std::int64_t n = graph::shape_size(s);
  std::uniform_real_distribution<double> d(-1, 1);
  if (is_complex(t)) {
    std::vector<std::complex<double>> z(static_cast<std::size_t>(n));
    for (auto& x : z) x = {d(rng), d(rng)};
    Array a = asarray(z, s).astype(t);
    a.eval();
    auto back = a.astype(DType::Complex128).get<std::complex<double>>();
    values.clear();
    for (std::size_t i = 0; i < back.size(); ++i) {
      values.push_back(back.data()[i].real());
      values.push_back(back.data()[i].imag());
    }
    return a;
  }
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = t == DType::Bool ? double(rng() % 2) : is_integer(t) ? double(int(rng() % 9) - 4) : d(rng);
  Array a = asarray(v, s).astype(t);
  a.eval();
  auto back = a.astype(DType::Float64).get<double>();
  values.assign(back.data(), back.data() + back.size());
  return a;
}

// The same host values, as `t`'s host type, for the CPU GEMM.
template <class T> std::vector<T> host_values(const Array& a) {
  auto h = a.get<T>();
  return std::vector<T>(h.data(), h.data() + h.size());
}

struct Shapes {
  std::int64_t batch, m, n, k;
};

// Runs a (batch, m, k) @ (batch, k, n) on the GPU and on the CPU GEMM; checks both against the float64 product
// within `units` roundoffs of the accumulation times |a| @ |b| (k-scaled).
template <class T> void compare(DType t, Shapes s, double unit, bool transpose_b = false) {
  std::mt19937_64 rng(lazyfuse_test::seed() + std::uint64_t(t));
  std::vector<double> va, vb;
  Array a = random_array(t, {s.batch, s.m, s.k}, rng, va);
  Array b_stored = random_array(t, transpose_b ? Shape{s.batch, s.n, s.k} : Shape{s.batch, s.k, s.n}, rng, vb);
  Array b = transpose_b ? transpose(b_stored, {0, 2, 1}) : b_stored;
  const auto before = kernel_cache_stats();
  Array gpu = matmul(a, b);
  gpu.eval();
  const auto after = kernel_cache_stats();
  EXPECT_EQ(after.library_calls - before.library_calls, 1u);
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 0u);

  // The CPU GEMM on host copies of the same inputs.
  std::vector<T> ha = host_values<T>(a), hb = host_values<T>(b_stored), hc(std::size_t(s.batch * s.m * s.n));
  runtime::Gemm g;
  g.type = t;
  g.batch = s.batch;
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.a = ha.data();
  g.la = {false, s.k, s.m * s.k};
  g.b = hb.data();
  g.lb = transpose_b ? graph::GemmLayout{true, s.k, s.n * s.k} : graph::GemmLayout{false, s.n, s.k * s.n};
  g.c = hc.data();
  runtime::cpu_gemm::run(g);

  const bool cplx = is_complex(t);
  auto at = [&](const std::vector<double>& v, std::int64_t i) {
    return cplx ? std::complex<double>(v[std::size_t(2 * i)], v[std::size_t(2 * i + 1)])
                : std::complex<double>(v[std::size_t(i)], 0);
  };
  auto got = gpu.astype(DType::Complex128).get<std::complex<double>>();
  const double bound_scale = double(s.k + 2) * unit * (cplx ? 2 : 1);
  std::int64_t bad = 0;
  for (std::int64_t e = 0; e < s.batch; ++e)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        std::complex<double> ref = 0;
        double mag = 0;
        for (std::int64_t l = 0; l < s.k; ++l) {
          const auto x = at(va, (e * s.m + i) * s.k + l);
          const auto y = transpose_b ? at(vb, (e * s.n + j) * s.k + l) : at(vb, (e * s.k + l) * s.n + j);
          ref += x * y;
          mag += std::abs(x) * std::abs(y);
        }
        const std::int64_t idx = (e * s.m + i) * s.n + j;
        const std::complex<double> cpu = std::complex<double>(hc[std::size_t(idx)]);
        const double bound = bound_scale * mag + 1e-300;
        if (std::abs(got.data()[idx] - ref) > bound || std::abs(cpu - ref) > bound) {
          if (++bad <= 5)
            ADD_FAILURE() << dtype_name(t) << " element " << idx << ": GPU " << got.data()[idx] << ", CPU " << cpu
                          << ", float64 " << ref << ", bound " << bound << "; " << lazyfuse_test::seed_note();
        }
      }
  EXPECT_EQ(bad, 0);
}

TEST_F(CudaMatmul, Float32FullPrecision) {
  compare<float>(DType::Float32, {1, 96, 80, 512}, std::ldexp(1.0, -24));
  compare<float>(DType::Float32, {3, 33, 17, 65}, std::ldexp(1.0, -24), true);
}

TEST_F(CudaMatmul, Float64) {
  compare<double>(DType::Float64, {2, 64, 48, 300}, std::ldexp(1.0, -53));
}

TEST_F(CudaMatmul, Complex) {
  compare<std::complex<float>>(DType::Complex64, {2, 16, 24, 40}, std::ldexp(1.0, -24));
  compare<std::complex<double>>(DType::Complex128, {1, 16, 24, 40}, std::ldexp(1.0, -53), true);
}

// Half types: exact products, float32 accumulation, one rounding of the result (2^-11, 2^-8) on top of the k-scaled
// float32 bound: expressed here as a bound per k that covers both for the k used.
TEST_F(CudaMatmul, HalfTypesAccumulateInFloat32) {
  compare<float16>(DType::Float16, {2, 64, 64, 128}, std::ldexp(1.0, -24) + std::ldexp(1.0, -11) / 130);
  compare<bfloat16>(DType::BFloat16, {2, 64, 64, 128}, std::ldexp(1.0, -24) + std::ldexp(1.0, -8) / 130);
}

TEST_F(CudaMatmul, IntegersAndBoolAreExactInOneKernel) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::vector<double> va, vb;
  for (DType t : {DType::Int32, DType::Int8, DType::Int64, DType::Bool}) {
    Array a = random_array(t, {2, 9, 31}, rng, va), b = random_array(t, {2, 31, 7}, rng, vb);
    const auto before = kernel_cache_stats();
    Array p = matmul(a, b);
    p.eval();
    EXPECT_EQ(kernel_cache_stats().kernels_launched - before.kernels_launched, 1u) << dtype_name(t);
    EXPECT_EQ(kernel_cache_stats().library_calls - before.library_calls, 0u) << dtype_name(t);
    auto got = p.astype(DType::Float64).get<double>();
    for (std::int64_t e = 0; e < 2; ++e)
      for (std::int64_t i = 0; i < 9; ++i)
        for (std::int64_t j = 0; j < 7; ++j) {
          double ref = 0;
          for (std::int64_t l = 0; l < 31; ++l)
            ref += va[std::size_t((e * 9 + i) * 31 + l)] * vb[std::size_t((e * 31 + l) * 7 + j)];
          if (t == DType::Bool) ref = ref != 0;
          if (t == DType::Int8) ref = double(std::int8_t(std::int64_t(ref))); // NumPy's wrapping
          EXPECT_EQ(got.data()[(e * 9 + i) * 7 + j], ref) << dtype_name(t);
        }
  }
}

TEST_F(CudaMatmul, Tf32IsOptInAndWithinItsBound) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::vector<double> va, vb;
  const std::int64_t m = 128, n = 128, k = 1024;
  Array a = random_array(DType::Float32, {m, k}, rng, va), b = random_array(DType::Float32, {k, n}, rng, vb);
  auto max_error = [&](const Array& p) {
    auto got = p.astype(DType::Float64).get<double>();
    double worst = 0; // error relative to |a| @ |b|
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        for (std::int64_t l = 0; l < k; ++l) {
          ref += va[std::size_t(i * k + l)] * vb[std::size_t(l * n + j)];
          mag += std::abs(va[std::size_t(i * k + l)] * vb[std::size_t(l * n + j)]);
        }
        worst = std::max(worst, std::abs(got.data()[i * n + j] - ref) / mag);
      }
    return worst;
  };
  const double fp32 = max_error(matmul(a, b));
  config::set("LAZYFUSE_TF32", "1");
  const double tf32 = max_error(matmul(a, b));
  EXPECT_LE(fp32, double(k + 2) * std::ldexp(1.0, -24));
  EXPECT_LE(tf32, std::ldexp(1.0, -10) + double(k + 2) * std::ldexp(1.0, -24));
  // TF32 rounds the inputs to 10 mantissa bits: on random data its error is far above full FP32's.
  EXPECT_GT(tf32, 8 * fp32) << "LAZYFUSE_TF32=1 gave full-FP32 accuracy: TF32 not in use?";
}

TEST_F(CudaMatmul, RepeatedProblemMakesNoHeuristicQuery) {
  Array a = ones({64, 32}, DType::Float32), b = ones({32, 16}, DType::Float32);
  a.eval();
  b.eval();
  matmul(a, b).eval();
  const std::uint64_t queries = runtime::cublaslt::heuristic_queries();
  for (int i = 0; i < 3; ++i) matmul(a, b).eval();
  EXPECT_EQ(runtime::cublaslt::heuristic_queries(), queries);
  matmul(b.transpose(), a.transpose()).eval(); // another problem: one query
  EXPECT_EQ(runtime::cublaslt::heuristic_queries(), queries + 1);
}

TEST_F(CudaMatmul, RunsOnTheCurrentStream) {
  Stream s;
  Array a = arange(0, 48, 1, DType::Float32).reshape({6, 8}), b = ones({8, 5}, DType::Float32);
  Array p;
  {
    StreamGuard guard(s);
    p = matmul(a, b);
    p.eval();
  }
  s.synchronize();
  auto got = p.get<float>();
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 5; ++j) {
      float row = 0;
      for (int l = 0; l < 8; ++l) row += float(i * 8 + l);
      EXPECT_EQ(got.data()[i * 5 + j], row);
    }
}

// ---- epilogues (fusion/ProductEpilogues.h): cuBLASLt's against the CPU GEMM's on the same inputs ----------------

// act(alpha * x @ w + beta * c + bias) on the GPU (one library call; float64's GELU may fall back to the unfused
// kernels) and through runtime::cpu_gemm::run with the same epilogue on host copies; both within (k + 4) roundoffs
// of the magnitudes of the float64 value.
template <class T>
void compare_epilogue(DType t, runtime::GemmActivation act, bool with_c, bool with_bias, double unit) {
  std::mt19937_64 rng(lazyfuse_test::seed() + std::uint64_t(t) * 7 + std::uint64_t(act));
  const std::int64_t m = 48, n = 40, k = 96;
  std::vector<double> vx, vw, vc, vb;
  Array x = random_array(t, {m, k}, rng, vx), w = random_array(t, {k, n}, rng, vw);
  Array c = random_array(t, {m, n}, rng, vc), bias = random_array(t, {n}, rng, vb);
  const double alpha = 0.5, beta = with_c ? 2.0 : 0.0;
  const auto before = kernel_cache_stats();
  Array y = matmul(x, w) * alpha;
  if (with_c) y = y + c * beta;
  if (with_bias) y = y + bias;
  if (act == runtime::GemmActivation::Relu) y = maximum(y, 0.0);
  if (act == runtime::GemmActivation::GeluTanh) y = gelu_tanh(y);
  y.eval();
  const auto after = kernel_cache_stats();
  EXPECT_EQ(after.library_calls - before.library_calls, 1u) << dtype_name(t);
  if (t != DType::Float64) { // cuBLASLt may have no float64 GELU epilogue: then the unfused kernels run
    EXPECT_EQ(after.kernels_launched - before.kernels_launched, 0u) << dtype_name(t);
  }

  std::vector<T> hx = host_values<T>(x), hw = host_values<T>(w), hc = host_values<T>(c), hb = host_values<T>(bias);
  std::vector<T> out(std::size_t(m * n));
  runtime::Gemm g;
  g.type = t;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = hx.data();
  g.la = {false, k, 0};
  g.b = hw.data();
  g.lb = {false, n, 0};
  g.c = out.data();
  g.alpha = alpha;
  if (with_c) {
    g.c_in = hc.data();
    g.lc = {false, n, 0};
    g.beta = beta;
  }
  if (with_bias) g.bias = hb.data();
  g.activation = act;
  runtime::cpu_gemm::run(g);

  auto got = y.astype(DType::Float64).get<double>();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (std::int64_t l = 0; l < k; ++l) {
        ref += vx[std::size_t(i * k + l)] * vw[std::size_t(l * n + j)];
        mag += std::abs(vx[std::size_t(i * k + l)] * vw[std::size_t(l * n + j)]);
      }
      ref *= alpha;
      mag *= alpha;
      if (with_c) ref += beta * vc[std::size_t(i * n + j)], mag += beta * std::abs(vc[std::size_t(i * n + j)]);
      if (with_bias) ref += vb[std::size_t(j)], mag += std::abs(vb[std::size_t(j)]);
      if (act == runtime::GemmActivation::Relu) ref = std::max(ref, 0.0);
      if (act == runtime::GemmActivation::GeluTanh)
        ref = ref / (1 + std::exp(-2 * std::sqrt(2 / std::acos(-1.0)) * (ref + 0.044715 * ref * ref * ref)));
      // cuBLASLt's GELU is its own approximation of the tanh form, of unstated accuracy: 2^-10 relative allowed.
      const double gelu_slack = act == runtime::GemmActivation::GeluTanh ? 0x1p-10 : 0;
      const double bound = (double(k + 4) * unit + gelu_slack) * (mag + std::abs(ref)) + 1e-300;
      const std::size_t e = std::size_t(i * n + j);
      double cpu = 0;
      if constexpr (std::is_floating_point_v<T>)
        cpu = double(out[e]);
      else
        cpu = double(float(out[e]));
      if (std::abs(got.data()[e] - ref) > bound || std::abs(cpu - ref) > bound)
        if (++bad <= 5)
          ADD_FAILURE() << dtype_name(t) << " element " << e << ": GPU " << got.data()[e] << ", CPU " << cpu
                        << ", float64 " << ref << ", bound " << bound << "; " << lazyfuse_test::seed_note();
    }
  EXPECT_EQ(bad, 0);
}

TEST_F(CudaMatmul, EpiloguesAgreeWithTheCpu) {
  using A = runtime::GemmActivation;
  for (A act : {A::None, A::Relu, A::GeluTanh})
    for (bool with_c : {false, true}) {
      compare_epilogue<float>(DType::Float32, act, with_c, !with_c, std::ldexp(1.0, -24));
      compare_epilogue<double>(DType::Float64, act, with_c, !with_c, std::ldexp(1.0, -53));
      compare_epilogue<float16>(DType::Float16, act, with_c, !with_c, std::ldexp(1.0, -11));
      compare_epilogue<bfloat16>(DType::BFloat16, act, with_c, !with_c, std::ldexp(1.0, -8));
    }
}

TEST_F(CudaMatmul, ProductPlusCLeavesCAndCachesItsAlgorithm) {
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::vector<double> va, vb, vc;
  Array a = random_array(DType::Float32, {64, 32}, rng, va), b = random_array(DType::Float32, {32, 16}, rng, vb);
  Array c = random_array(DType::Float32, {64, 16}, rng, vc);
  (matmul(a, b) + c).eval();
  const std::uint64_t queries = runtime::cublaslt::heuristic_queries();
  const auto before = kernel_cache_stats();
  for (int i = 0; i < 3; ++i) (matmul(a, b) + c).eval();
  EXPECT_EQ(kernel_cache_stats().library_calls - before.library_calls, 3u);
  EXPECT_EQ(kernel_cache_stats().kernels_launched - before.kernels_launched, 0u);
  EXPECT_EQ(runtime::cublaslt::heuristic_queries(), queries) << "a repeated epilogue made a heuristic query";
  const auto again = c.astype(DType::Float64).get<double>();
  for (std::size_t e = 0; e < vc.size(); ++e) ASSERT_EQ(again.data()[e], vc[e]) << "c was overwritten";
}

} // namespace
