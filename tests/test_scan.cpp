// Scans (scans.hpp: cumsum, cumprod, nancumsum, nancumprod) on the backend in use: against NumPy (dtypes, shapes,
// axes, views, NaNs, empty arrays; the interpreter LAZYFUSE_TEST_PYTHON names), against the scan order written out
// again in tests/scan_order.h (equal bits: the CPU backend and the GPU compute that one order), the kernels a scan
// takes (its elementwise input fused in; consumers read it), errors, and the printed CUDA compiled by NVRTC.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/Lower.h"
#include "codegen/Nvrtc.h"
#include "codegen/Schedule.h"
#include "fusion/Partition.h"
#include "graph/Node.h"
#include "scan_order.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

using namespace lazyfuse;

namespace {

constexpr int kNoAxis = -99;

struct Case {
  std::string name, op; // op: cumsum, cumprod, nancumsum, nancumprod
  DType dtype;
  Shape shape;
  int axis = kNoAxis;
  std::string result_dtype; // the dtype argument, or ""
  std::string view;         // "": as is, "T": last two axes swapped, "S": every other element of the last axis
};

std::vector<Case> cases() {
  using D = DType;
  return {
      {"sum_f32_flat", "cumsum", D::Float32, {1000}, kNoAxis, "", ""},
      {"sum_f32_tiles", "cumsum", D::Float32, {3000}, 0, "", ""},
      {"sum_f32_rows", "cumsum", D::Float32, {4, 5000}, 1, "", ""},
      {"sum_f32_short_rows", "cumsum", D::Float32, {50, 100}, -1, "", ""},
      {"sum_f32_columns", "cumsum", D::Float32, {5000, 3}, 0, "", ""},
      {"sum_f32_middle", "cumsum", D::Float32, {7, 300, 5}, 1, "", ""},
      {"sum_f32_3d_flat", "cumsum", D::Float32, {2, 3, 4}, kNoAxis, "", ""},
      {"sum_f64_long", "cumsum", D::Float64, {70000}, kNoAxis, "", ""},
      {"sum_f32_transposed", "cumsum", D::Float32, {300, 200}, 0, "", "T"},
      {"sum_f32_transposed_rows", "cumsum", D::Float32, {300, 200}, 1, "", "T"},
      {"sum_f32_strided", "cumsum", D::Float32, {3, 4000}, 1, "", "S"},
      {"sum_f32_into_f64", "cumsum", D::Float32, {2500}, 0, "float64", ""},
      {"sum_i32", "cumsum", D::Int32, {100, 50}, 0, "", ""},
      {"sum_i32_rows", "cumsum", D::Int32, {10, 3000}, 1, "", ""},
      {"sum_u8", "cumsum", D::UInt8, {1000}, kNoAxis, "", ""},
      {"sum_bool", "cumsum", D::Bool, {2000}, kNoAxis, "", ""},
      {"sum_i8_wraps", "cumsum", D::Int8, {3000}, 0, "int8", ""},
      {"sum_i64_into_f32", "cumsum", D::Int64, {1500}, 0, "float32", ""},
      {"sum_f16", "cumsum", D::Float16, {3000}, 0, "", ""},
      {"sum_bf16", "cumsum", D::BFloat16, {20, 200}, 1, "", ""},
      {"sum_c64", "cumsum", D::Complex64, {2500}, kNoAxis, "", ""},
      {"sum_c128_rows", "cumsum", D::Complex128, {3, 1500}, 1, "", ""},
      {"sum_c128_columns", "cumsum", D::Complex128, {400, 3}, 0, "", ""},
      {"prod_f64", "cumprod", D::Float64, {3000}, 0, "", ""},
      {"prod_f32_columns", "cumprod", D::Float32, {40, 60}, 0, "", ""},
      {"prod_i64", "cumprod", D::Int64, {40}, 0, "", ""},
      {"prod_i16_wraps", "cumprod", D::Int16, {2, 700}, 1, "int16", ""},
      {"prod_c128", "cumprod", D::Complex128, {2000}, kNoAxis, "", ""},
      {"nansum_f32", "nancumsum", D::Float32, {3000}, kNoAxis, "", ""},
      {"nansum_c64", "nancumsum", D::Complex64, {1200}, 0, "", ""},
      {"nansum_i32", "nancumsum", D::Int32, {500}, 0, "", ""},
      {"nanprod_f64_rows", "nancumprod", D::Float64, {2, 2000}, 1, "", ""},
      {"nanprod_f32_columns", "nancumprod", D::Float32, {300, 4}, 0, "", ""},
      {"empty_flat", "cumsum", D::Float32, {0}, kNoAxis, "", ""},
      {"empty_rows", "cumprod", D::Int32, {3, 0}, 1, "", ""},
      {"empty_columns", "cumsum", D::Float64, {0, 5}, 0, "", ""},
      {"single", "cumsum", D::Float32, {1, 7}, 0, "", ""},
  };
}

bool is_product(const Case& c) {
  return c.op.find("prod") != std::string::npos;
}
bool has_nans(const Case& c) {
  return c.op.rfind("nan", 0) == 0 && is_inexact(c.dtype);
}

// Exactly representable in every float type (bfloat16: 8 significant bits): sums k/64, products near 1.
std::vector<double> draw(const Case& c, std::int64_t n, std::mt19937_64& rng) {
  std::vector<double> v(std::size_t(is_complex(c.dtype) ? 2 * n : n));
  const bool product = is_product(c);
  for (auto& x : v) {
    if (c.dtype == DType::Bool) {
      x = double(rng() % 2);
    } else if (is_integer(c.dtype)) {
      const bool wraps = c.name.find("wraps") != std::string::npos;
      const std::int64_t lo = is_signed_integer(c.dtype) ? (product && !wraps ? -2 : -100) : 0;
      const std::int64_t hi = product && !wraps ? 2 : 100;
      x = double(lo + std::int64_t(rng() % std::uint64_t(hi - lo + 1)));
    } else if (product) {
      x = double(7 + std::int64_t(rng() % 3)) / 8 * (rng() % 4 == 0 ? -1 : 1); // 0.875 .. 1.125
    } else {
      x = double(std::int64_t(rng() % 257) - 128) / 64;
    }
    if (has_nans(c) && rng() % 16 == 0) x = std::nan("");
  }
  return v;
}

Array make_array(DType t, const Shape& s, const std::vector<double>& values) {
  if (is_complex(t)) {
    std::vector<std::complex<double>> z(values.size() / 2);
    for (std::size_t i = 0; i < z.size(); ++i) z[i] = {values[2 * i], values[2 * i + 1]};
    return asarray(z, s).astype(t);
  }
  return asarray(values, s).astype(t);
}

DType dtype_named(const std::string& name) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int8, DType::Int16})
    if (name == dtype_name(t)) return t;
  throw std::invalid_argument("no such dtype in the cases: " + name);
}

Array apply_view(const Array& x, const std::string& view) {
  if (view == "T") {
    std::vector<int> axes;
    for (int d = 0; d < int(x.ndim()); ++d) axes.push_back(d);
    std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
    return x.transpose(axes);
  }
  if (view == "S") return x(ellipsis, slice(none, none, 2));
  return x;
}

Array run_case(const Case& c, const Array& in) {
  const Array a = apply_view(in, c.view);
  const std::optional<int> axis = c.axis == kNoAxis ? std::nullopt : std::optional<int>(c.axis);
  std::optional<DType> t;
  if (!c.result_dtype.empty()) t = dtype_named(c.result_dtype);
  if (c.op == "cumsum") return cumsum(a, axis, t);
  if (c.op == "cumprod") return cumprod(a, axis, t);
  if (c.op == "nancumsum") return nancumsum(a, axis, t);
  return nancumprod(a, axis, t);
}

constexpr const char* kScript = R"PY(
import sys, numpy as np, ml_dtypes
d = sys.argv[1]
def dt(name):
    return np.dtype(ml_dtypes.bfloat16) if name == 'bfloat16' else np.dtype(name)
meta = open(d + '/meta.txt', 'w')
for line in open(d + '/cases.txt'):
    name, op, dtype, shape, axis, rdtype, view = line.rstrip('\n').split('\t')
    shape = tuple(int(x) for x in shape.split(',') if x)
    v = np.fromfile(d + '/' + name + '.in', dtype=np.float64)
    t = dt(dtype)
    if t.kind == 'c':
        v = v[0::2] + 1j * v[1::2]
    a = v.astype(t).reshape(shape)
    if view == 'T':
        a = np.swapaxes(a, -1, -2)
    elif view == 'S':
        a = a[..., ::2]
    ax = None if axis == 'none' else int(axis)
    kw = {'dtype': dt(rdtype)} if rdtype else {}
    r = getattr(np, op)(a, axis=ax, **kw)
    meta.write(f"{name} {r.dtype.name} {','.join(str(x) for x in r.shape)}\n")
    if r.dtype.kind in 'biu':
        r.astype(np.int64).tofile(d + '/' + name + '.int')
        continue
    # The float64 (complex128) value of the same scan of the same elements, and of their magnitudes: the error bound.
    wide = np.complex128 if r.dtype.kind == 'c' else np.float64
    w = a.astype(wide) if rdtype == '' or dt(rdtype).kind in 'fc' else a.astype(dt(rdtype)).astype(wide)
    base = op.replace('nan', '')
    ref = getattr(np, op)(w, axis=ax)
    mag = getattr(np, base)(np.nan_to_num(np.abs(w), nan=0.0 if base == 'cumsum' else 1.0), axis=ax)
    ref = ref.reshape(-1)
    if r.dtype.kind == 'c':
        ref = np.stack([ref.real, ref.imag], axis=-1)
    np.ascontiguousarray(ref, dtype=np.float64).tofile(d + '/' + name + '.ref')
    np.ascontiguousarray(mag.reshape(-1), dtype=np.float64).tofile(d + '/' + name + '.mag')
meta.close()
print('ok')
)PY";

struct Answer {
  std::string dtype;
  Shape shape;
  std::vector<std::int64_t> ints;
  std::vector<double> ref, mag;
};

struct Oracle {
  std::string why_not;
  std::map<std::string, Answer> answers;
  std::map<std::string, Array> inputs;
};

template <class T> std::vector<T> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<T> v;
  T x;
  while (f.read(reinterpret_cast<char*>(&x), sizeof x)) v.push_back(x);
  return v;
}

std::string shape_text(const Shape& s) {
  std::string out;
  for (std::size_t k = 0; k < s.size(); ++k) out += (k ? "," : "") + std::to_string(s[k]);
  return out;
}

Oracle run_oracle() {
  Oracle o;
  o.why_not = lazyfuse_test::python_missing();
  if (!o.why_not.empty()) return o;
  const char* python = lazyfuse_test::oracle_python();
  const std::string dir = lazyfuse_test::fresh_oracle_dir("scan");
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::ofstream list(dir + "/cases.txt");
  for (const Case& c : cases()) {
    std::vector<double> v = draw(c, graph::shape_size(c.shape), rng);
    std::ofstream(dir + "/" + c.name + ".in", std::ios::binary)
        .write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(double)));
    o.inputs[c.name] = make_array(c.dtype, c.shape, v);
    list << c.name << '\t' << c.op << '\t' << dtype_name(c.dtype) << '\t' << shape_text(c.shape) << '\t'
         << (c.axis == kNoAxis ? std::string("none") : std::to_string(c.axis)) << '\t' << c.result_dtype << '\t'
         << c.view << '\n';
  }
  list.close();
  o.why_not = lazyfuse_test::run_oracle_script(python, dir, kScript, {dir});
  if (!o.why_not.empty()) return o;
  std::ifstream meta(dir + "/meta.txt");
  for (std::string line; std::getline(meta, line);) {
    std::istringstream in(line);
    std::string name, shape;
    Answer a;
    in >> name >> a.dtype >> shape;
    std::istringstream dims(shape);
    for (std::string d; std::getline(dims, d, ',');) a.shape.push_back(std::stoll(d));
    a.ints = read_file<std::int64_t>(dir + "/" + name + ".int");
    a.ref = read_file<double>(dir + "/" + name + ".ref");
    a.mag = read_file<double>(dir + "/" + name + ".mag");
    o.answers[name] = std::move(a);
  }
  std::filesystem::remove_all(dir);
  return o;
}

const Oracle& oracle() {
  static const Oracle o = run_oracle();
  return o;
}

// Roundoff per step of the type a float result accumulates in, and of the result's own rounding.
std::pair<double, double> roundoff(DType t) {
  switch (t) {
  case DType::Float64:
  case DType::Complex128: return {std::ldexp(1.0, -53), 0};
  case DType::Float16: return {std::ldexp(1.0, -24), std::ldexp(1.0, -11)};
  case DType::BFloat16: return {std::ldexp(1.0, -24), std::ldexp(1.0, -8)};
  default: return {std::ldexp(1.0, -24), 0};
  }
}

class ScanOracle : public testing::TestWithParam<std::size_t> {};

TEST_P(ScanOracle, AgreesWithNumPy) {
  LAZYFUSE_NEED_NUMPY(oracle().why_not);
  const Case c = cases()[GetParam()];
  const Answer& want = oracle().answers.at(c.name);
  const Array r = run_case(c, oracle().inputs.at(c.name));
  SCOPED_TRACE(c.name + ", " + lazyfuse_test::seed_note());
  ASSERT_EQ(std::string(dtype_name(r.dtype())), want.dtype);
  ASSERT_EQ(r.shape(), want.shape);
  const std::int64_t n = graph::shape_size(want.shape);
  if (!want.ints.empty() || n == 0 || is_integer(r.dtype()) || r.dtype() == DType::Bool) {
    auto got = r.astype(DType::Int64).get<std::int64_t>();
    ASSERT_EQ(std::int64_t(want.ints.size()), n);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got.data()[i], want.ints[std::size_t(i)]) << "element " << i;
    return;
  }
  const bool complex = is_complex(r.dtype());
  std::vector<double> got(std::size_t(complex ? 2 * n : n));
  if (complex) {
    auto z = r.astype(DType::Complex128).get<std::complex<double>>();
    std::memcpy(got.data(), z.data(), got.size() * sizeof(double));
  } else {
    auto x = r.astype(DType::Float64).get<double>();
    std::memcpy(got.data(), x.data(), got.size() * sizeof(double));
  }
  ASSERT_EQ(want.ref.size(), got.size());
  const std::int64_t len = c.axis == kNoAxis ? n : want.shape[std::size_t(c.axis < 0 ? c.axis + r.ndim() : c.axis)];
  const auto [step, result] = roundoff(r.dtype());
  int bad = 0;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const double ref = want.ref[k], mag = want.mag[complex ? k / 2 : k];
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(got[k])) << "element " << k << ": " << got[k] << ", NumPy's NaN";
      continue;
    }
    const double bound = (complex ? 2 : 1) * ((double(len) + 2) * step * mag + result * mag) + 1e-300;
    if (!(std::fabs(got[k] - ref) <= bound) && ++bad <= 5)
      ADD_FAILURE() << "element " << k << ": " << got[k] << ", float64 " << ref << ", bound " << bound;
  }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(Cases, ScanOracle, testing::Range<std::size_t>(0, cases().size()),
                         [](const testing::TestParamInfo<std::size_t>& info) { return cases()[info.param].name; });

std::uint64_t kernels() {
  return kernel_cache_stats().kernels_launched;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 rng(lazyfuse_test::seed() ^ salt);
  return lazyfuse_test::uniform_values<float>(rng, n, -1.0f, 1.0f);
}

TEST(Scan, ElementwiseInputIsOneKernel) {
  const std::vector<float> h = random_floats(100000, 1);
  const Array x = asarray(h);
  x.eval();
  const auto before = kernels();
  const Array y = cumsum(x * x + 1.0f);
  y.eval();
  EXPECT_EQ(kernels() - before, 1u) << "cumsum(x * x + 1) must be one kernel";
  // The value: the scan order over the fused input, element by element as the kernel computes it.
  std::vector<float> want(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) want[i] = h[i] * h[i] + 1.0f;
  lazyfuse_test::scan_order_line(want.data(), std::int64_t(want.size()));
  auto got = y.get<float>();
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(got.data()[i], want[i]) << "element " << i;
}

TEST(Scan, ConsumersReadTheStoredScan) {
  const Array x = asarray(random_floats(5000, 2));
  x.eval();
  const Array s = cumsum(x);
  const Array y = s * 2.0f + 1.0f;
  const Array total = sum(s);
  auto before = kernels();
  eval(y, total);
  EXPECT_EQ(kernels() - before, 3u) << "the scan, then one kernel for each consumer's shape";
  auto sv = s.get<float>(), yv = y.get<float>();
  for (std::size_t i = 0; i < 5000; ++i) ASSERT_EQ(yv.data()[i], sv.data()[i] * 2.0f + 1.0f);
  before = kernels();
  const Array twice = cumsum(cumsum(x * 3.0f)); // (cumsum(x) itself is s, already stored)
  twice.eval();
  EXPECT_EQ(kernels() - before, 2u) << "a scan of a scan: two kernels";
}

// A loop that rebuilds a scan over new arrays and scalars reuses its plan (runtime/PlanCache.h) and gets each
// iteration's values; eager mode runs the input and the scan as kernels of their own, with the same result.
TEST(Scan, PlanCacheAndEagerMode) {
  const std::vector<float> h = random_floats(3000, 5);
  Array first;
  for (int it = 0; it < 3; ++it) {
    const Array x = asarray(h);
    x.eval();
    const auto hits = kernel_cache_stats().plan_hits;
    const Array y = cumsum(x * float(it + 1), 0);
    auto got = y.get<float>();
    if (it > 0) {
      EXPECT_EQ(kernel_cache_stats().plan_hits, hits + 1) << "iteration " << it;
    }
    std::vector<float> want(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) want[i] = h[i] * float(it + 1);
    lazyfuse_test::scan_order_line(want.data(), std::int64_t(want.size()));
    for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(got.data()[i], want[i]) << "iteration " << it;
  }
  const Array x = asarray(h);
  x.eval();
  const auto lazy = cumprod(x * 0.5f + 1.0f).get<float>();
  config::set_eager(true);
  const auto before = kernels();
  const auto eager = cumprod(x * 0.5f + 1.0f).get<float>();
  const auto launched = kernels() - before;
  config::set_eager(false);
  EXPECT_EQ(launched, 3u) << "eager: the multiply, the add and the scan";
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(eager.data()[i], lazy.data()[i]) << "element " << i;
}

TEST(Scan, OfAReduction) {
  const std::vector<float> h = random_floats(3000, 3);
  const Array x = asarray(h, {3, 1000});
  const Array y = cumsum(x - mean(x, 1, true), 1);
  auto got = y.get<float>();
  for (int r = 0; r < 3; ++r) {
    double m = 0, acc = 0;
    for (int k = 0; k < 1000; ++k) m += h[std::size_t(r * 1000 + k)];
    m /= 1000;
    for (int k = 0; k < 1000; ++k) {
      acc += h[std::size_t(r * 1000 + k)] - m;
      ASSERT_NEAR(got.data()[r * 1000 + k], acc, 1e-4) << "row " << r << ", element " << k;
    }
  }
}

// Equal bits to the scan order of codegen/Schedule.h (tests/scan_order.h), on either backend: so the CPU backend
// and the GPU give the same bits. Lengths around the tile size and the tiling threshold, rows, columns.
TEST(Scan, FollowsTheDocumentedOrderBitForBit) {
  // 131072 is one whole group of 32 tiles, 131073 starts the second, 700001 has five groups and part of a sixth.
  for (std::int64_t len : {1, 2, 127, 128, 1023, 1024, 1025, 4095, 4096, 4097, 8193, 100000, 131072, 131073, 700001}) {
    std::vector<float> h = random_floats(std::size_t(len), std::uint64_t(len));
    const Array x = asarray(h);
    auto got = cumsum(x).get<float>();
    lazyfuse_test::scan_order_line(h.data(), len);
    for (std::int64_t i = 0; i < len; ++i)
      ASSERT_EQ(got.data()[i], h[std::size_t(i)]) << "length " << len << ", element " << i;
  }
  // float64 (tiles of 2,048): 147 tiles, four whole groups and part of a fifth.
  {
    std::mt19937_64 rng(lazyfuse_test::seed() ^ 11);
    std::vector<double> d = lazyfuse_test::uniform_values<double>(rng, 300001, -1.0, 1.0);
    auto got = cumsum(asarray(d)).get<double>();
    lazyfuse_test::scan_order_line(d.data(), std::int64_t(d.size()));
    for (std::size_t i = 0; i < d.size(); ++i) ASSERT_EQ(got.data()[i], d[i]) << "float64, element " << i;
  }
  // Rows of a matrix: each row scanned on its own.
  std::vector<double> h(3 * 5000);
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (auto& v : h) v = std::uniform_real_distribution<double>(-1, 1)(rng);
  auto got = cumsum(asarray(h, {3, 5000}), 1).get<double>();
  for (int r = 0; r < 3; ++r) lazyfuse_test::scan_order_line(h.data() + r * 5000, 5000);
  for (std::size_t i = 0; i < h.size(); ++i) ASSERT_EQ(got.data()[i], h[i]) << "element " << i;
  // Columns: one element after another.
  std::vector<float> c = random_floats(300 * 7, 9);
  auto cols = cumsum(asarray(c, {300, 7}), 0).get<float>();
  for (std::size_t r = 1; r < 300; ++r)
    for (std::size_t k = 0; k < 7; ++k) c[r * 7 + k] = c[(r - 1) * 7 + k] + c[r * 7 + k];
  for (std::size_t i = 0; i < c.size(); ++i) ASSERT_EQ(cols.data()[i], c[i]) << "element " << i;
}

// float32 cumsum of 2^20 elements against float64: the error of element i stays within its depth in the scan order
// (its tile's tree: the thread's own items, 5 + 3 Kogge-Stone steps and 3 combines; the group's 5 Kogge-Stone steps
// and the two combines of the prefix; one per group before its own) times float32's unit roundoff times the sum of
// magnitudes so far.
TEST(Scan, Float32ErrorAgainstFloat64) {
  const std::size_t n = std::size_t(1) << 20;
  std::mt19937_64 rng(lazyfuse_test::seed() ^ 4);
  const std::vector<float> h = lazyfuse_test::uniform_values<float>(rng, n, 0.0f, 1.0f);
  auto got = cumsum(asarray(h)).get<float>();
  double exact = 0, worst_rel = 0, worst_ratio = 0;
  for (std::size_t i = 0; i < n; ++i) {
    exact += h[i];
    const double err = std::fabs(double(got.data()[i]) - exact);
    worst_rel = std::max(worst_rel, err / exact);
    const int items = codegen::scan_items(sizeof(float));
    const std::int64_t tile = std::int64_t(i) / (codegen::kBlockSize * items);
    const double depth = double(tile / codegen::kScanGroupTiles) + items + 11 + 5 + 2;
    worst_ratio = std::max(worst_ratio, err / (depth * std::ldexp(1.0, -24) * exact));
  }
  std::printf("[ info     ] float32 cumsum of 2^20 uniform [0, 1): largest relative error %.3g, %.3g of the bound\n",
              worst_rel, worst_ratio);
  EXPECT_LE(worst_ratio, 1.0);
}

TEST(Scan, Errors) {
  const Array m = zeros({2, 3});
  EXPECT_THROW(cumsum(m, 2), IndexError);
  EXPECT_THROW(cumprod(m, -3), IndexError);
  EXPECT_THROW(cumsum(asarray({1.0f}).reshape({}), 0), IndexError);
  EXPECT_THROW(cumsum(Array()), Error);
  EXPECT_THROW(nancumprod(Array(), 0), Error);
  // A 0-d array, flattened, is one element.
  EXPECT_EQ(cumsum(asarray({2.5f}).reshape({})).shape(), (Shape{1}));
}

// The printed kernel compiles (NVRTC, no device needed) for each kind of scan: tiled and walked, each scan type
// (packed status words up to 4 bytes, status values in the partials above), sums and products.
TEST(Scan, PrintedKernelsCompile) {
  struct Kind {
    DType in;
    std::optional<DType> scan; // the dtype argument (none: the input's accumulation type)
    Shape shape;
    int axis;
    bool product;
  };
  for (const Kind& k : std::vector<Kind>{{DType::Float32, {}, {4096}, 0, false},
                                         {DType::Float64, {}, {3, 5000}, 1, false},
                                         {DType::Int32, DType::Int32, {2, 3000}, 1, true},
                                         {DType::Int64, {}, {70000}, 0, false},
                                         {DType::Complex64, {}, {2, 3000}, 1, true},
                                         {DType::Complex128, DType::Complex128, {3, 2000}, 1, true},
                                         {DType::Float16, {}, {5000}, 0, false},
                                         {DType::BFloat16, {}, {2, 3000}, 1, true},
                                         {DType::Bool, {}, {2, 3000}, 1, false},
                                         {DType::Bool, DType::Bool, {2, 3000}, 1, false},
                                         {DType::Int16, DType::Int16, {9000}, 0, false},
                                         {DType::Int8, DType::Int8, {500, 3}, 0, true},
                                         {DType::Float64, {}, {5, 40, 6}, 1, false}}) {
    const Array x = zeros(k.shape, k.in);
    x.eval();
    const Array s = k.product ? cumprod(sqrt(x).astype(k.in), k.axis, k.scan) : cumsum(x, k.axis, k.scan);
    SCOPED_TRACE(std::string(dtype_name(k.in)) + " " + graph::format_shape(k.shape));
    int scans = 0;
    for (const auto& plan : fusion::partition({detail::graph_node(s)}, {})) {
      if (plan.outputs[0]->kind != graph::NodeKind::Scan) continue; // a half scan's cast back
      const codegen::LoweredKernel lowered = codegen::lower(plan);
      ASSERT_EQ(lowered.ir.schedule, codegen::Schedule::Scan);
      ++scans;
      const std::string source = codegen::render_cuda(lowered.ir);
      codegen::CompileOptions options;
      options.dump_source_on_error = true;
      EXPECT_NO_THROW(codegen::compile_cuda(source, lowered.ir.name + ".cu", options));
      // The tiles (chosen at run time by the length) are printed only for a contiguous scan axis, their status
      // packed in one word for scan values of at most 4 bytes.
      const bool tiled = k.axis == int(k.shape.size()) - 1;
      EXPECT_EQ(source.find("lf_tiles_per_row") != std::string::npos, tiled);
      const bool packed = itemsize(lowered.ir.code.back().dtype) <= codegen::kScanPackedBytes;
      EXPECT_EQ(source.find("lf_scan_look_back<64>(lf_scan_words<") != std::string::npos, tiled && packed);
      EXPECT_EQ(source.find("lf_scan_look_back<64>(lf_scan_slots<") != std::string::npos, tiled && !packed);
    }
    EXPECT_EQ(scans, 1);
  }
}

} // namespace

// A float32 scan whose prologue reads a complex128 input (case 292 of seed 1905391407 of RandomGraphs.Differential on
// the GPU): the input's tile would take 66 KiB of shared memory, past the 48 KiB a block may use, and ptxas refused
// the kernel. Such an input is read in place; the values are the float64 reference's.
TEST(Scan, PrologueReadingAWideInputCompilesAndScans) {
  const std::int64_t n = 20000;
  std::mt19937_64 rng(29);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<std::complex<double>> hc(static_cast<std::size_t>(n));
  for (auto& v : hc) v = {d(rng), d(rng)};
  const Array c = asarray(std::span<const std::complex<double>>(hc.data(), hc.size()), {n}).eval();
  const Array s = cumsum(real(c).astype(DType::Float32));
  const auto plans = fusion::partition({detail::graph_node(s)}, {});
  ASSERT_EQ(plans.size(), 1u);
  const codegen::LoweredKernel lowered = codegen::lower(plans[0]);
  ASSERT_EQ(lowered.ir.schedule, codegen::Schedule::Scan);
  const std::string source = codegen::render_cuda(lowered.ir);
  codegen::CompileOptions options;
  options.arch = 90;
  options.dump_source_on_error = true;
  EXPECT_NO_THROW(codegen::compile_cuda(source, lowered.ir.name + ".cu", options));
  const auto got = s.get<float>();
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    sum += double(float(hc[std::size_t(i)].real()));
    ASSERT_NEAR(got[std::size_t(i)], sum, 1e-4 * (1 + std::abs(sum))) << i;
  }
}
