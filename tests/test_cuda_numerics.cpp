// The numerics policy of docs/semantics.md ("Numerics") across backends: the same expressions, on the same inputs,
// evaluated by the GPU (this process) and by the CPU backend (a child process: the backend is chosen once per
// process), compared bit for bit. Integer, bool, comparison, cast and rounding ops, + - * / sqrt and their
// compositions, and every op the accuracy table calls exact or correctly rounded must give identical bits (a NaN
// only has to be a NaN: its sign and payload are not part of the policy). The math library functions and float
// reductions may differ; for them the test prints the largest difference in ulps without asserting it (their
// accuracy is tests/test_accuracy.cpp's subject). float16 and bfloat16: conversions and every op computed in float32
// and rounded once (+ - * / sqrt, comparisons, rounding) are identical; a math library function, computed in float32
// by each backend's library and rounded to the half type, may differ by one unit in the half type's last place
// (asserted). complex64 and complex128: arithmetic, reciprocal, comparisons, predicates and casts are identical
// (docs/semantics.md, "Complex numbers"); the elementary functions, abs and the general power are reported per part.
//
// Without a CUDA backend the test skips, unless LAZYFUSE_TEST_REQUIRE_GPU=1. The child is this binary run again (fork +
// exec, never a bare fork after CUDA is initialized) with LAZYFUSE_BACKEND=cpu and
// --gtest_filter=CudaNumericsChild.Run; it writes its results to the file LAZYFUSE_TEST_NUMERICS_CHILD_OUT names.
// LAZYFUSE_TEST_SEED=<n> replays a run's inputs (the seed is printed).
#include "tests/child_process.h"
#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include <lazyfuse/lazyfuse.hpp>

#include "graph/DTypeVisit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <unistd.h>

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;

namespace {

constexpr const char* kChildOut = "LAZYFUSE_TEST_NUMERICS_CHILD_OUT";

using lazyfuse_test::seed;

constexpr std::int64_t kN = std::int64_t(1) << 16;

// ---- inputs: the same in both processes (same binary, same seed) -------------------------------------------------

template <class T> using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// Floats of every kind: moderate values, any finite bit pattern, halves (rounding ties), and the specials.
template <class T> std::vector<T> floats(std::mt19937_64& rng) {
  using L = std::numeric_limits<T>;
  const T specials[] = {T(0),      -T(0),         L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), T(0.5),
                        T(-0.5),   T(1.5),        T(2.5),          T(-2.5),          T(1),     T(-1),     L::max(),
                        -L::max(), L::infinity(), -L::infinity(),  L::quiet_NaN(),   T(3e9),   T(-3e9),   T(1e19),
                        T(-1e19),  T(16777217),   T(2147483647.0), T(-2147483648.0), T(9.3e18)};
  std::uniform_real_distribution<T> moderate(T(-100), T(100));
  std::vector<T> v;
  for (std::int64_t k = 0; k < kN; ++k) {
    const std::uint64_t r = rng();
    switch (k % 4) {
    case 0: v.push_back(moderate(rng)); break;
    case 1: {
      T x = std::bit_cast<T>(Bits<T>(rng()));
      v.push_back(std::isfinite(x) ? x : T(1) / T(3));
      break;
    }
    case 2: v.push_back(T(std::int64_t(r % 200) - 100) / T(2)); break; // halves and integers
    default: v.push_back(specials[r % std::size(specials)]);
    }
  }
  return v;
}

template <class I> std::vector<I> ints(std::mt19937_64& rng) {
  using L = std::numeric_limits<I>;
  const I specials[] = {0, 1, -1, 2, -2, L::min(), L::max(), I(L::min() + 1), I(L::max() - 1), 7, -7};
  std::vector<I> v;
  for (std::int64_t k = 0; k < kN; ++k) {
    const std::uint64_t r = rng();
    switch (k % 3) {
    case 0: v.push_back(I(r)); break;                             // any value: overflow in + - *
    case 1: v.push_back(I(std::int64_t(r % 2001) - 1000)); break; // small: exact products, zero divisors
    default: v.push_back(specials[r % std::size(specials)]);
    }
  }
  return v;
}

struct Inputs {
  Array x32, y32, z32, x64, y64, z64, pos32, pos64, i32a, i32b, i64a, i64b, e32, e64, b1, b2, nz32, nz64;
};

Inputs make_inputs() {
  std::mt19937_64 rng(seed());
  Inputs in;
  in.x32 = lf::asarray(floats<float>(rng));
  in.y32 = lf::asarray(floats<float>(rng));
  in.z32 = lf::asarray(floats<float>(rng));
  in.x64 = lf::asarray(floats<double>(rng));
  in.y64 = lf::asarray(floats<double>(rng));
  in.z64 = lf::asarray(floats<double>(rng));
  in.pos32 = lf::abs(in.x32);
  in.pos64 = lf::abs(in.x64);
  in.i32a = lf::asarray(ints<std::int32_t>(rng));
  in.i32b = lf::asarray(ints<std::int32_t>(rng));
  in.i64a = lf::asarray(ints<std::int64_t>(rng));
  in.i64b = lf::asarray(ints<std::int64_t>(rng));
  // Exponents for integer powers, negative ones included.
  const std::size_t n = std::size_t(kN);
  std::vector<std::int32_t> e32(n);
  std::vector<std::int64_t> e64(n);
  for (std::size_t k = 0; k < n; ++k) {
    e32[k] = std::int32_t(rng() % 70) - 5;
    e64[k] = std::int64_t(rng() % 70) - 5;
  }
  in.e32 = lf::asarray(e32);
  in.e64 = lf::asarray(e64);
  std::vector<bool> b1(n), b2(n);
  for (std::size_t k = 0; k < n; ++k) {
    b1[k] = rng() & 1;
    b2[k] = rng() & 1;
  }
  in.b1 = lf::asarray(b1, {kN});
  in.b2 = lf::asarray(b2, {kN});
  // Without zeros or NaN, so that min, max and the arg reductions have one answer whatever the order.
  std::uniform_real_distribution<float> u32(1, 2);
  std::uniform_real_distribution<double> u64(1, 2);
  std::vector<float> n32(n);
  std::vector<double> n64(n);
  for (std::size_t k = 0; k < n; ++k) {
    n32[k] = (rng() & 1 ? 1.0f : -1.0f) * u32(rng);
    n64[k] = (rng() & 1 ? 1.0 : -1.0) * u64(rng);
  }
  in.nz32 = lf::asarray(n32);
  in.nz64 = lf::asarray(n64);
  return in;
}

// ---- the expressions -------------------------------------------------------------------------------------------

enum class Expect { Identical, Report, WithinOneUlp };

struct Expr {
  std::string name;
  Expect expect;
  Array value;
};

std::vector<Expr> expressions(const Inputs& in) {
  std::vector<Expr> out;
  auto same = [&](const std::string& name, Array a) { out.push_back({name, Expect::Identical, std::move(a)}); };
  auto report = [&](const std::string& name, Array a) { out.push_back({name, Expect::Report, std::move(a)}); };
  auto within_one_ulp = [&](const std::string& name, Array a) {
    out.push_back({name, Expect::WithinOneUlp, std::move(a)});
  };

  // The half types: inputs are the float32 ones rounded (a conversion both backends do bit for bit).
  for (const DType h : {DType::Float16, DType::BFloat16}) {
    const std::string t = std::string(" ") + std::string(lf::dtype_name(h));
    const Array x = in.x32.astype(h), y = in.y32.astype(h), z = in.z32.astype(h), pos = in.pos32.astype(h);
    same("f32 -> half" + t, x);
    same("f64 -> half" + t, in.x64.astype(h));
    same("i64 -> half" + t, in.i64a.astype(h));
    same("half -> f32" + t, x.astype(DType::Float32));
    same("half -> i32" + t, x.astype(DType::Int32));
    same("x * y + z" + t, x * y + z);
    same("(x + y) * (x - y) / z" + t, (x + y) * (x - y) / z);
    same("sqrt(x * x + y * y)" + t, lf::sqrt(x * x + y * y));
    same("x * 2.5 + 1 (scalars)" + t, x * 2.5 + 1);
    same("reciprocal" + t, lf::reciprocal(x));
    same("abs, negative" + t, -lf::abs(x));
    same("minimum" + t, lf::minimum(x, y));
    same("x < y" + t, x < y);
    same("floor, rint" + t, lf::floor(x) + lf::rint(y));
    same("isnan" + t, lf::isnan(x / y));
    same("max" + t, lf::max(x));
    same("argmin" + t, lf::argmin(x));
    within_one_ulp("exp" + t, lf::exp(x));
    within_one_ulp("log" + t, lf::log(pos));
    within_one_ulp("sin" + t, lf::sin(x));
    within_one_ulp("tanh" + t, lf::tanh(x));
    within_one_ulp("erf" + t, lf::erf(x));
    within_one_ulp("power" + t, lf::power(pos, y));
    within_one_ulp("atan2" + t, lf::atan2(x, y));
    report("sum (float32 order differs)" + t, lf::sum(x));
    report("mean (float32 order differs)" + t, lf::mean(x));
  }

  // The complex types: x + iy from the float inputs.
  for (const DType c : {DType::Complex64, DType::Complex128}) {
    const std::string t = std::string(" ") + std::string(lf::dtype_name(c));
    const bool wide = c == DType::Complex128;
    const Array x = (wide ? in.x64 : in.x32), y = (wide ? in.y64 : in.y32), z = (wide ? in.z64 : in.z32);
    const Array u = x.astype(c) + y.astype(c) * std::complex<double>(0, 1);
    const Array v = z.astype(c) + x.astype(c) * std::complex<double>(0, -0.5);
    same("x + iy" + t, u);
    same("u * v + u" + t, u * v + u);
    same("u - v" + t, u - v);
    same("u / v" + t, u / v);
    same("reciprocal" + t, lf::reciprocal(u));
    same("square" + t, lf::square(u));
    same("conj, real, imag" + t, lf::conj(u) + lf::real(v) - lf::imag(v));
    same("u == v, u < v" + t, (u == v) | (u < v));
    same("minimum" + t, lf::minimum(u, v));
    same("isfinite" + t, lf::isfinite(u / v));
    same("power 3" + t, lf::power(u, 3));
    same("-> other complex" + t, u.astype(wide ? DType::Complex64 : DType::Complex128));
    same("-> float32" + t, u.astype(DType::Float32));
    same("max, argmax" + t, lf::max(u) + lf::argmax(v).astype(c));
    report("abs" + t, lf::abs(u));
    report("exp" + t, lf::exp(u));
    report("log" + t, lf::log(u));
    report("sqrt" + t, lf::sqrt(u));
    report("sin" + t, lf::sin(u));
    report("atanh" + t, lf::atanh(u));
    report("power" + t, lf::power(u, v));
    report("sum (order differs)" + t, lf::sum(u));
  }

  struct F {
    const char* t;
    Array x, y, z, pos, nz;
  };
  for (const F& f :
       {F{"f32", in.x32, in.y32, in.z32, in.pos32, in.nz32}, F{"f64", in.x64, in.y64, in.z64, in.pos64, in.nz64}}) {
    const std::string t = std::string(" ") + f.t;
    const Array &x = f.x, &y = f.y, &z = f.z;
    // + - * / sqrt and their compositions: each op rounds once, on both backends.
    same("x * y + z" + t, x * y + z);
    same("x * y - z * x" + t, x * y - z * x);
    same("(x + y) * (x - y) / z" + t, (x + y) * (x - y) / z);
    same("sqrt(x * x + y * y)" + t, lf::sqrt(x * x + y * y));
    same("sqrt(|x|)" + t, lf::sqrt(f.pos));
    same("x / y" + t, x / y);
    same("x * 2.5 + 1 (scalars)" + t, x * 2.5 + 1);
    same("0.1 * x - y / 3" + t, 0.1 * x - y / 3);
    same("reciprocal" + t, lf::reciprocal(x));
    same("square" + t, lf::square(x));
    same("abs" + t, lf::abs(x));
    same("negative" + t, -x);
    same("sign" + t, lf::sign(x));
    same("minimum" + t, lf::minimum(x, y));
    same("maximum" + t, lf::maximum(x, y));
    same("clip" + t, lf::clip(x, -1.5, 2.5));
    same("where" + t, lf::where(x > y, x, z));
    same("remainder" + t, lf::remainder(x, y));
    same("floor_divide" + t, lf::floor_divide(x, y));
    same("floor" + t, lf::floor(x));
    same("ceil" + t, lf::ceil(x));
    same("rint" + t, lf::rint(x));
    same("trunc" + t, lf::trunc(x));
    same("x == y" + t, x == y);
    same("x < y" + t, x < y);
    same("x >= y" + t, x >= y);
    same("x != x" + t, x != x);
    same("isnan" + t, lf::isnan(x));
    same("isinf" + t, lf::isinf(x));
    same("isfinite" + t, lf::isfinite(x));
    same("astype int32" + t, x.astype(DType::Int32));
    same("astype int64" + t, x.astype(DType::Int64));
    same("astype bool" + t, x.astype(DType::Bool));
    same("min (no zeros)" + t, lf::min(f.nz));
    same("max (no zeros)" + t, lf::max(f.nz));
    same("argmin (no zeros)" + t, lf::argmin(f.nz));
    same("argmax" + t, lf::argmax(x));
    same("any" + t, lf::any(x));
    same("count_nonzero" + t, lf::count_nonzero(x));
    // The math library: glibc on one side, CUDA's on the other.
    report("rsqrt" + t, lf::rsqrt(f.pos));
    report("exp" + t, lf::exp(x));
    report("exp2" + t, lf::exp2(x));
    report("expm1" + t, lf::expm1(x));
    report("log" + t, lf::log(f.pos));
    report("log2" + t, lf::log2(f.pos));
    report("log10" + t, lf::log10(f.pos));
    report("log1p" + t, lf::log1p(f.pos));
    report("sin" + t, lf::sin(x));
    report("cos" + t, lf::cos(x));
    report("tan" + t, lf::tan(x));
    report("asin" + t, lf::asin(lf::clip(x, -1, 1)));
    report("acos" + t, lf::acos(lf::clip(x, -1, 1)));
    report("atan" + t, lf::atan(x));
    report("sinh" + t, lf::sinh(x));
    report("cosh" + t, lf::cosh(x));
    report("tanh" + t, lf::tanh(x));
    report("erf" + t, lf::erf(x));
    report("power" + t, lf::power(f.pos, y));
    report("atan2" + t, lf::atan2(x, y));
    // Float reductions: the summation order differs between the backends.
    report("sum (order differs)" + t, lf::sum(f.nz));
    report("mean (order differs)" + t, lf::mean(f.nz));
    report("var (order differs)" + t, lf::var(f.nz));
  }
  same("f64 -> f32", in.x64.astype(DType::Float32));
  same("f32 -> f64", in.x32.astype(DType::Float64));
  same("i64 -> f32", in.i64a.astype(DType::Float32));
  same("i64 -> f64", in.i64a.astype(DType::Float64));
  same("i32 -> f32", in.i32a.astype(DType::Float32));
  same("i64 -> i32", in.i64a.astype(DType::Int32));
  same("bool -> f32", in.b1.astype(DType::Float32));
  same("i32 * f32 (computed in f64)", in.i32a * in.x32);
  same("arange f32", lf::arange(-5.0, -5.0 + 0.1 * double(kN), 0.1, DType::Float32));
  same("linspace f64", lf::linspace(-3.0, 7.0, kN));
  same("linspace f32", lf::linspace(-3.0, 7.0, kN, true, DType::Float32));

  struct I {
    const char* t;
    Array a, b, e;
  };
  for (const I& i : {I{"i32", in.i32a, in.i32b, in.e32}, I{"i64", in.i64a, in.i64b, in.e64}}) {
    const std::string t = std::string(" ") + i.t;
    const Array &a = i.a, &b = i.b;
    same("a + b" + t, a + b);
    same("a - b" + t, a - b);
    same("a * b" + t, a * b);
    same("a // b" + t, lf::floor_divide(a, b));
    same("a % b" + t, a % b);
    same("a / b (true_divide)" + t, a / b);
    same("power" + t, lf::power(b, i.e));
    same("negative" + t, -a);
    same("abs" + t, lf::abs(a));
    same("sign" + t, lf::sign(a));
    same("square" + t, lf::square(a));
    same("minimum" + t, lf::minimum(a, b));
    same("maximum" + t, lf::maximum(a, b));
    same("a < b" + t, a < b);
    same("a == b" + t, a == b);
    same("a && b" + t, a && b);
    same("rint (unchanged)" + t, lf::rint(a));
    same("sum" + t, lf::sum(a));
    same("prod" + t, lf::prod(b));
    same("min" + t, lf::min(a));
    same("max" + t, lf::max(a));
    same("argmax" + t, lf::argmax(a));
    same("argmin" + t, lf::argmin(b));
    same("row sums" + t, lf::sum(a.reshape({256, -1}), 1));
    same("column maxima" + t, lf::max(a.reshape({256, -1}), 0));
    same("count_nonzero" + t, lf::count_nonzero(b));
  }
  same("b1 & b2", in.b1 & in.b2);
  same("b1 | b2", in.b1 | in.b2);
  same("b1 ^ b2", in.b1 ^ in.b2);
  same("!b1", !in.b1);
  same("b1 + b2", in.b1 + in.b2);
  same("b1 * b2", in.b1 * in.b2);
  same("b1 == b2", in.b1 == in.b2);
  same("any", lf::any(in.b1));
  same("all", lf::all(in.b1 | in.b2));
  same("sum bool", lf::sum(in.b1));
  return out;
}

// Materializes every expression in one go, as both processes do: outputs of one shape share multi-output kernels
// (fewer NVRTC compiles; the arithmetic of each element is the same either way).
void evaluate(const std::vector<Expr>& exprs) {
  std::vector<const Array*> all;
  for (const Expr& e : exprs) all.push_back(&e.value);
  lf::eval_arrays(all);
}

// ---- results as bytes, and the file between the processes ---------------------------------------------------

struct Result {
  DType type = DType::Bool;
  std::vector<unsigned char> bytes;
};

template <class T> std::vector<unsigned char> bytes_as(const Array& a) {
  const auto h = a.get<T>();
  std::vector<unsigned char> out(h.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), h.data(), out.size());
  return out;
}

Result result_of(const Array& a) {
  Result r{a.dtype(), {}};
  r.bytes = lazyfuse::graph::visit_dtype(a.dtype(), [&]<class T>() { return bytes_as<T>(a); });
  return r;
}

void write_results(const std::string& path, const std::vector<Expr>& exprs) {
  std::ofstream out(path, std::ios::binary);
  for (const Expr& e : exprs) {
    const Result r = result_of(e.value);
    const std::uint64_t name_size = e.name.size(), size = r.bytes.size();
    const std::uint8_t type = std::uint8_t(r.type);
    out.write(reinterpret_cast<const char*>(&name_size), sizeof name_size);
    out.write(e.name.data(), std::streamsize(name_size));
    out.write(reinterpret_cast<const char*>(&type), 1);
    out.write(reinterpret_cast<const char*>(&size), sizeof size);
    out.write(reinterpret_cast<const char*>(r.bytes.data()), std::streamsize(size));
  }
}

std::map<std::string, Result> read_results(const std::string& path) {
  std::map<std::string, Result> out;
  std::ifstream in(path, std::ios::binary);
  std::uint64_t name_size = 0;
  while (in.read(reinterpret_cast<char*>(&name_size), sizeof name_size)) {
    std::string name(name_size, '\0');
    std::uint8_t type = 0;
    std::uint64_t size = 0;
    in.read(name.data(), std::streamsize(name_size));
    in.read(reinterpret_cast<char*>(&type), 1);
    in.read(reinterpret_cast<char*>(&size), sizeof size);
    Result r{DType(type), std::vector<unsigned char>(size)};
    in.read(reinterpret_cast<char*>(r.bytes.data()), std::streamsize(size));
    if (!in) break;
    out[name] = std::move(r);
  }
  return out;
}

// ---- comparing ---------------------------------------------------------------------------------------------------

// The first element whose bits differ (two NaNs are equal), or -1; `what` describes the first few differences and
// counts them all (a pattern among them -- every negative input, one lane of four -- points at the cause).
template <class T> std::int64_t first_difference(const Result& gpu, const Result& cpu, std::string& what) {
  const std::size_t n = gpu.bytes.size() / sizeof(T);
  std::int64_t first = -1, count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    T g, c;
    std::memcpy(&g, gpu.bytes.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&c, cpu.bytes.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(g) && std::isnan(c)) continue;
    } else if constexpr (std::is_same_v<T, lazyfuse::float16> || std::is_same_v<T, lazyfuse::bfloat16>) {
      if (std::isnan(float(g)) && std::isnan(float(c))) continue;
    } else if constexpr (lazyfuse::detail::is_std_complex<T>) {
      if ((std::isnan(g.real()) || std::isnan(g.imag())) && (std::isnan(c.real()) || std::isnan(c.imag()))) continue;
    }
    if (std::memcmp(&g, &c, sizeof(T)) != 0) {
      char buf[160];
      if constexpr (std::is_floating_point_v<T>)
        std::snprintf(buf, sizeof buf, "gpu %a, cpu %a", double(g), double(c));
      else if constexpr (std::is_same_v<T, lazyfuse::float16> || std::is_same_v<T, lazyfuse::bfloat16>)
        std::snprintf(buf, sizeof buf, "gpu %a (0x%04x), cpu %a (0x%04x)", double(float(g)), unsigned(g.bits),
                      double(float(c)), unsigned(c.bits));
      else if constexpr (lazyfuse::detail::is_std_complex<T>)
        std::snprintf(buf, sizeof buf, "gpu %a%+ai, cpu %a%+ai", double(g.real()), double(g.imag()), double(c.real()),
                      double(c.imag()));
      else
        std::snprintf(buf, sizeof buf, "gpu %lld, cpu %lld", (long long)g, (long long)c);
      if (count < 4) what += (count ? "; element " + std::to_string(i) + ": " : std::string()) + buf;
      if (first < 0) first = std::int64_t(i);
      ++count;
    }
  }
  if (count > 1) what += "; " + std::to_string(count) + " of " + std::to_string(n) + " elements differ";
  return first;
}

// Largest distance in ulps (floats between the two results) over the elements, and how many elements are NaN on one
// side only.
// T is float, double, or a half type; a complex result is compared part by part as its part type.
template <class T> std::pair<double, std::int64_t> ulp_difference(const Result& gpu, const Result& cpu) {
  using B =
      std::conditional_t<sizeof(T) == 2, std::int16_t, std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>>;
  auto ordered = [](T x) {
    const B b = std::bit_cast<B>(x);
    return b < 0 ? -std::int64_t(b & std::numeric_limits<B>::max()) : std::int64_t(b);
  };
  auto isnan = [](T x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::isnan(x);
    else
      return std::isnan(float(x));
  };
  double worst = 0;
  std::int64_t nan_mismatch = 0;
  const std::size_t n = gpu.bytes.size() / sizeof(T);
  for (std::size_t i = 0; i < n; ++i) {
    T g, c;
    std::memcpy(&g, gpu.bytes.data() + i * sizeof(T), sizeof(T));
    std::memcpy(&c, cpu.bytes.data() + i * sizeof(T), sizeof(T));
    if (isnan(g) || isnan(c)) {
      nan_mismatch += isnan(g) != isnan(c);
      continue;
    }
    worst = std::max(worst, double(std::llabs(ordered(g) - ordered(c))));
  }
  return {worst, nan_mismatch};
}

// Runs this binary again on the CPU backend; it writes its results to `out`.
lazyfuse_test::ChildResult run_cpu_child(const std::string& out) {
  return lazyfuse_test::run_self(
      "CudaNumericsChild.Run",
      {"LAZYFUSE_BACKEND=cpu", "LAZYFUSE_TEST_SEED=" + std::to_string(seed()), std::string(kChildOut) + "=" + out},
      {"LAZYFUSE_TEST_REQUIRE_GPU"}, 600);
}

} // namespace

// The CPU side: only as the child of CudaNumerics.GpuAndCpuBackendGiveTheSameBits.
TEST(CudaNumericsChild, Run) {
  const char* out = std::getenv(kChildOut);
  if (!out) GTEST_SKIP() << "helper process of CudaNumerics.GpuAndCpuBackendGiveTheSameBits";
  ASSERT_EQ(lf::backend(), lf::Backend::Cpu);
  const Inputs in = make_inputs();
  const std::vector<Expr> exprs = expressions(in);
  evaluate(exprs);
  write_results(out, exprs);
}

TEST(CudaNumerics, GpuAndCpuBackendGiveTheSameBits) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const Inputs in = make_inputs();
  const std::vector<Expr> exprs = expressions(in);
  evaluate(exprs);
  std::map<std::string, Result> gpu;
  for (const Expr& e : exprs) gpu[e.name] = result_of(e.value);

  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("lazyfuse_numerics_" + std::to_string(::getpid()) + ".bin");
  const lazyfuse_test::ChildResult child = run_cpu_child(file.string());
  ASSERT_TRUE(child.ok()) << "the CPU child failed: " << child.describe();
  const auto cpu = read_results(file.string());
  std::filesystem::remove(file);
  ASSERT_EQ(cpu.size(), gpu.size()) << "the child wrote " << cpu.size() << " of " << gpu.size() << " results";

  std::printf("[ numerics ] seed %llu, %lld elements per input\n", (unsigned long long)seed(), (long long)kN);
  int identical = 0;
  for (const Expr& e : exprs) {
    const Result& g = gpu.at(e.name);
    auto found = cpu.find(e.name);
    ASSERT_NE(found, cpu.end()) << e.name;
    const Result& c = found->second;
    ASSERT_EQ(g.type, c.type) << e.name;
    ASSERT_EQ(g.bytes.size(), c.bytes.size()) << e.name;
    if (e.expect == Expect::Identical) {
      std::string what;
      std::int64_t at = -1;
      at = lazyfuse::graph::visit_dtype(g.type, [&]<class T>() { return first_difference<T>(g, c, what); });
      EXPECT_EQ(at, -1) << e.name << ": element " << at << " differs: " << what << " (seed " << seed() << ")";
      identical += at == -1;
    } else {
      std::pair<double, std::int64_t> d;
      switch (g.type) {
      case DType::Float16: d = ulp_difference<lf::float16>(g, c); break;
      case DType::BFloat16: d = ulp_difference<lf::bfloat16>(g, c); break;
      case DType::Float32:
      case DType::Complex64: d = ulp_difference<float>(g, c); break;
      default: d = ulp_difference<double>(g, c); break;
      }
      const auto [ulps, nan_mismatch] = d;
      if (e.expect == Expect::WithinOneUlp) {
        EXPECT_LE(ulps, 1) << e.name << " (seed " << seed() << ")";
        EXPECT_EQ(nan_mismatch, 0) << e.name << " (seed " << seed() << ")";
      }
      std::printf("[ numerics ] %-26s max difference %8.0f ulps%s\n", e.name.c_str(), ulps,
                  nan_mismatch ? (", " + std::to_string(nan_mismatch) + " NaN on one side only").c_str() : "");
    }
  }
  std::printf("[ numerics ] %d expressions bit-identical on the GPU and the CPU backend\n", identical);
}
