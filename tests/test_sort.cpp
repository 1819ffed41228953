// Sorting (sorting.hpp: sort, argsort; quantile, percentile, median) on the backend in use, against NumPy's stable
// sorts (the interpreter LAZYFUSE_TEST_PYTHON names): every dtype, axes, views, the flattened array, empty arrays, and
// inputs full of ties and special values (NaNs of both signs, -0.0 and +0.0, infinities). NumPy sorts the very bits
// lazyfuse sorted (its input is lazyfuse's input, written out byte for byte), and the results must be equal byte for
// byte: the same values with the same signs and NaN payloads where they landed, the same permutations.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "graph/DTypeVisit.h"
#include "graph/Node.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace lazyfuse;

namespace {

constexpr int kNoAxis = -99;

struct Case {
  std::string name, op; // sort, argsort
  DType dtype;
  Shape shape;
  int axis = -1;
  bool transposed = false; // the input is the transpose of an array of the reversed shape (a strided view)
  bool finite = false;     // no NaNs (the CUDA backend's keys-only path); -0.0, +0.0 and infinities still
};

std::vector<Case> cases() {
  struct Input {
    std::string name;
    DType dtype;
    Shape shape;
    int axis;
    bool transposed;
    bool finite = false;
  };
  using D = DType;
  const std::vector<Input> inputs = {
      {"f32", D::Float32, {1000}, -1, false},
      {"f32_axis0", D::Float32, {20, 50}, 0, false},
      {"f32_rows", D::Float32, {20, 50}, 1, false},
      {"f32_middle", D::Float32, {3, 40, 5}, 1, false},
      {"f32_flat", D::Float32, {4, 25}, kNoAxis, false},
      {"f32_transposed", D::Float32, {30, 40}, 0, true},
      {"f64", D::Float64, {500}, 0, false},
      {"f16", D::Float16, {300}, -1, false},
      {"bf16", D::BFloat16, {6, 50}, -1, false},
      {"c64", D::Complex64, {400}, -1, false},
      {"c128_axis0", D::Complex128, {30, 10}, 0, false},
      {"i8", D::Int8, {300}, -1, false},
      {"i32_axis0", D::Int32, {20, 50}, 0, false},
      {"u16", D::UInt16, {300}, -1, false},
      {"i64", D::Int64, {7, 60}, 1, false},
      {"u64", D::UInt64, {200}, -1, false},
      {"bool", D::Bool, {300}, -1, false},
      {"f32_long_finite", D::Float32, {100003}, -1, false, true},
      {"f64_rows_finite", D::Float64, {3, 4001}, -1, false, true},
      {"f16_long_finite", D::Float16, {70001}, -1, false, true},
      {"i16_long", D::Int16, {70001}, -1, false},
      {"empty", D::Float32, {0}, -1, false},
      {"empty_lines", D::Float64, {3, 0}, 0, false},
      {"empty_rows", D::Int32, {0, 4}, -1, false},
  };
  std::vector<Case> out;
  for (const char* op : {"sort", "argsort"})
    for (const Input& in : inputs)
      out.push_back({std::string(op) + "_" + in.name, op, in.dtype, in.shape, in.axis, in.transposed, in.finite});
  return out;
}

// Values with many ties and every special value: small integers and halves, +-0.0, +-inf, NaNs of both signs.
double draw_value(DType t, std::mt19937_64& rng, bool finite) {
  if (t == DType::Bool) return double(rng() % 2);
  if (is_integer(t)) {
    const std::int64_t lo = is_signed_integer(t) ? -50 : 0;
    return double(lo + std::int64_t(rng() % 101));
  }
  const double inf = std::numeric_limits<double>::infinity();
  switch (rng() % 12) {
  case 0: return finite ? 0.5 : std::nan("");
  case 1: return finite ? -0.5 : -std::nan("");
  case 2: return 0.0;
  case 3: return -0.0;
  case 4: return inf;
  case 5: return -inf;
  default: return double(std::int64_t(rng() % 9) - 4) / 2;
  }
}

Array make_input(const Case& c, std::mt19937_64& rng) {
  Shape shape = c.shape;
  if (c.transposed) std::reverse(shape.begin(), shape.end());
  const std::int64_t n = graph::shape_size(shape);
  Array a;
  if (is_complex(c.dtype)) {
    std::vector<std::complex<double>> z(static_cast<std::size_t>(n));
    for (auto& v : z)
      v = {draw_value(c.dtype, rng, c.finite),
           rng() % 3 ? double(std::int64_t(rng() % 3)) : draw_value(c.dtype, rng, c.finite)};
    a = asarray(z, shape).astype(c.dtype);
  } else {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = draw_value(c.dtype, rng, c.finite);
    a = asarray(v, shape).astype(c.dtype);
  }
  return (c.transposed ? a.transpose() : a).eval();
}

// The C-order bytes of `a`.
std::string bytes_of(const Array& a) {
  return graph::visit_dtype(a.dtype(), [&]<class T>() {
    auto h = a.get<T>();
    return std::string(reinterpret_cast<const char*>(h.data()), std::size_t(h.size()) * sizeof(T));
  });
}

Array run_case(const Case& c, const Array& a) {
  const std::optional<int> axis = c.axis == kNoAxis ? std::nullopt : std::optional<int>(c.axis);
  return c.op == "sort" ? sort(a, axis) : argsort(a, axis);
}

constexpr const char* kScript = R"PY(
import sys, numpy as np, ml_dtypes
d = sys.argv[1]
def dt(name):
    return np.dtype(ml_dtypes.bfloat16) if name == 'bfloat16' else np.dtype(name)
meta = open(d + '/meta.txt', 'w')
for line in open(d + '/cases.txt'):
    name, op, dtype, shape, axis = line.rstrip('\n').split('\t')
    shape = tuple(int(x) for x in shape.split(',') if x)
    a = np.fromfile(d + '/' + name + '.in', dtype=dt(dtype)).reshape(shape)
    ax = None if axis == 'none' else int(axis)
    # ml_dtypes' bfloat16 sorts through float32, whose order it shares (every bfloat16 is a float32).
    key = a.astype(np.float32) if a.dtype == dt('bfloat16') else a
    idx = np.argsort(key, axis=ax, kind='stable')
    if op == 'argsort':
        r = idx
    else:
        r = np.take_along_axis(a.reshape(-1) if ax is None else a, idx, axis=-1 if ax is None else ax)
        if a.dtype != dt('bfloat16'):
            assert np.array_equal(r, np.sort(a, axis=ax, kind='stable'), equal_nan=True), name
    meta.write(f"{name} {r.dtype.name} {','.join(str(x) for x in r.shape)}\n")
    np.ascontiguousarray(r).tofile(d + '/' + name + '.out')
meta.close()
print('ok')
)PY";

struct Answer {
  std::string dtype;
  Shape shape;
  std::string bytes;
};

struct Oracle {
  std::string why_not;
  std::map<std::string, Answer> answers;
  std::map<std::string, Array> inputs;
};

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
  const std::string dir = lazyfuse_test::fresh_oracle_dir("sort");
  std::mt19937_64 rng(lazyfuse_test::seed());
  std::ofstream list(dir + "/cases.txt");
  for (const Case& c : cases()) {
    const Array a = make_input(c, rng);
    o.inputs[c.name] = a;
    std::ofstream(dir + "/" + c.name + ".in", std::ios::binary) << bytes_of(a);
    list << c.name << '\t' << c.op << '\t' << dtype_name(c.dtype) << '\t' << shape_text(a.shape()) << '\t'
         << (c.axis == kNoAxis ? std::string("none") : std::to_string(c.axis)) << '\n';
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
    std::ifstream f(dir + "/" + name + ".out", std::ios::binary);
    a.bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    o.answers[name] = std::move(a);
  }
  std::filesystem::remove_all(dir);
  return o;
}

const Oracle& oracle() {
  static const Oracle o = run_oracle();
  return o;
}

class SortOracle : public testing::TestWithParam<std::size_t> {};

TEST_P(SortOracle, AgreesWithNumPyBitForBit) {
  LAZYFUSE_NEED_NUMPY(oracle().why_not);
  const Case c = cases()[GetParam()];
  const Answer& want = oracle().answers.at(c.name);
  const Array r = run_case(c, oracle().inputs.at(c.name));
  SCOPED_TRACE(c.name + ", " + lazyfuse_test::seed_note());
  ASSERT_EQ(std::string(dtype_name(r.dtype())), want.dtype);
  ASSERT_EQ(r.shape(), want.shape);
  const std::string got = bytes_of(r);
  ASSERT_EQ(got.size(), want.bytes.size());
  const std::size_t item = itemsize(r.dtype());
  for (std::size_t k = 0; k < got.size(); k += item)
    ASSERT_EQ(std::memcmp(got.data() + k, want.bytes.data() + k, item), 0) << "element " << k / item;
}

INSTANTIATE_TEST_SUITE_P(Cases, SortOracle, testing::Range<std::size_t>(0, cases().size()),
                         [](const testing::TestParamInfo<std::size_t>& info) { return cases()[info.param].name; });

// quantile, percentile and median (NumPy's linear method) against NumPy, within a few units of roundoff of the
// result type times the line's largest magnitude; NaN where NumPy's is.
struct QuantileCase {
  std::string name, op; // quantile, percentile, median
  DType dtype;
  Shape shape;
  int axis;
  double q;
  bool keepdims;
  bool nans; // some NaNs among the elements
};

std::vector<QuantileCase> quantile_cases() {
  using D = DType;
  return {
      {"q_f64_flat", "quantile", D::Float64, {101}, kNoAxis, 0.3, false, false},
      {"q_f32_rows", "quantile", D::Float32, {6, 40}, 1, 0.75, false, false},
      {"q_f32_columns_keep", "quantile", D::Float32, {40, 6}, 0, 0.1, true, false},
      {"q_i32", "quantile", D::Int32, {5, 33}, -1, 0.5, false, false},
      {"q_edges_0", "quantile", D::Float64, {17}, 0, 0.0, false, false},
      {"q_edges_1", "quantile", D::Float64, {17}, 0, 1.0, false, false},
      {"q_f16", "quantile", D::Float16, {50}, 0, 0.4, false, false},
      {"q_nans", "quantile", D::Float64, {8, 20}, 1, 0.6, false, true},
      {"p_u8", "percentile", D::UInt8, {4, 25}, 1, 90, false, false},
      {"p_flat_keep", "percentile", D::Float32, {3, 7}, kNoAxis, 12.5, true, false},
      {"m_f64_even", "median", D::Float64, {3, 10}, 1, 0.5, false, false},
      {"m_f32_odd", "median", D::Float32, {9, 4}, 0, 0.5, false, false},
      {"m_i64_flat", "median", D::Int64, {2, 3, 5}, kNoAxis, 0.5, false, false},
  };
}

constexpr const char* kQuantileScript = R"PY(
import sys, numpy as np
d = sys.argv[1]
out = open(d + '/meta.txt', 'w')
for line in open(d + '/cases.txt'):
    name, op, dtype, shape, axis, q, keep = line.rstrip('\n').split('\t')
    shape = tuple(int(x) for x in shape.split(',') if x)
    a = np.fromfile(d + '/' + name + '.in', dtype=np.dtype(dtype)).reshape(shape)
    ax = None if axis == 'none' else int(axis)
    kw = {'axis': ax, 'keepdims': keep == '1'}
    r = np.median(a, **kw) if op == 'median' else getattr(np, op)(a, float(q), **kw)
    r = np.asarray(r)
    out.write(f"{name} {r.dtype.name} {','.join(str(x) for x in r.shape)}\n")
    np.ascontiguousarray(r, dtype=np.float64).tofile(d + '/' + name + '.out')
out.close()
print('ok')
)PY";

struct QuantileOracle {
  std::string why_not;
  std::map<std::string, std::tuple<std::string, Shape, std::vector<double>>> answers;
  std::map<std::string, Array> inputs;
};

const QuantileOracle& quantile_oracle() {
  static const QuantileOracle oracle = [] {
    QuantileOracle o;
    o.why_not = lazyfuse_test::python_missing();
    if (!o.why_not.empty()) return o;
    const char* python = lazyfuse_test::oracle_python();
    const std::string dir = lazyfuse_test::fresh_oracle_dir("quantile");
    std::mt19937_64 rng(lazyfuse_test::seed() ^ 77);
    std::ofstream list(dir + "/cases.txt");
    for (const QuantileCase& c : quantile_cases()) {
      std::vector<double> v(static_cast<std::size_t>(graph::shape_size(c.shape)));
      for (auto& x : v) {
        x = is_integer(c.dtype) ? double(rng() % 200) : std::uniform_real_distribution<double>(-5, 5)(rng);
        if (c.nans && rng() % 8 == 0) x = std::nan("");
      }
      const Array a = asarray(v, c.shape).astype(c.dtype).eval();
      o.inputs[c.name] = a;
      std::ofstream(dir + "/" + c.name + ".in", std::ios::binary) << bytes_of(a);
      list << c.name << '\t' << c.op << '\t' << dtype_name(c.dtype) << '\t' << shape_text(c.shape) << '\t'
           << (c.axis == kNoAxis ? std::string("none") : std::to_string(c.axis)) << '\t' << c.q << '\t'
           << (c.keepdims ? 1 : 0) << '\n';
    }
    list.close();
    o.why_not = lazyfuse_test::run_oracle_script(python, dir, kQuantileScript, {dir});
    if (!o.why_not.empty()) return o;
    std::ifstream meta(dir + "/meta.txt");
    for (std::string line; std::getline(meta, line);) {
      std::istringstream in(line);
      std::string name, dtype, shape;
      in >> name >> dtype >> shape;
      Shape dims;
      std::istringstream ds(shape);
      for (std::string d; std::getline(ds, d, ',');) dims.push_back(std::stoll(d));
      std::ifstream f(dir + "/" + name + ".out", std::ios::binary);
      std::vector<double> values;
      for (double x; f.read(reinterpret_cast<char*>(&x), sizeof x);) values.push_back(x);
      o.answers[name] = {dtype, dims, values};
    }
    std::filesystem::remove_all(dir);
    return o;
  }();
  return oracle;
}

class QuantileAgainstNumPy : public testing::TestWithParam<std::size_t> {};

TEST_P(QuantileAgainstNumPy, Agrees) {
  LAZYFUSE_NEED_NUMPY(quantile_oracle().why_not);
  const QuantileCase c = quantile_cases()[GetParam()];
  const auto& [dtype, shape, want] = quantile_oracle().answers.at(c.name);
  const Array a = quantile_oracle().inputs.at(c.name);
  const std::optional<int> axis = c.axis == kNoAxis ? std::nullopt : std::optional<int>(c.axis);
  const Array r = c.op == "median"       ? median(a, axis, c.keepdims)
                  : c.op == "percentile" ? percentile(a, c.q, axis, c.keepdims)
                                         : quantile(a, c.q, axis, c.keepdims);
  SCOPED_TRACE(c.name + ", " + lazyfuse_test::seed_note());
  ASSERT_EQ(std::string(dtype_name(r.dtype())), dtype);
  ASSERT_EQ(r.shape(), shape);
  const auto got = r.astype(DType::Float64).get<double>();
  const double unit = c.dtype == DType::Float16   ? std::ldexp(1.0, -10)
                      : c.dtype == DType::Float32 ? std::ldexp(1.0, -23)
                                                  : std::ldexp(1.0, -52);
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got.data()[i])) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got.data()[i], want[i], 4 * unit * (is_integer(c.dtype) ? 200 : 5)) << "element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, QuantileAgainstNumPy, testing::Range<std::size_t>(0, quantile_cases().size()),
                         [](const testing::TestParamInfo<std::size_t>& info) {
                           return quantile_cases()[info.param].name;
                         });

TEST(Quantile, Errors) {
  const Array x = asarray(std::vector<double>{1, 2, 3});
  EXPECT_THROW(quantile(x, 1.5), ValueError);
  EXPECT_THROW(percentile(x, -1), ValueError);
  EXPECT_THROW(median(x.astype(DType::Complex64)), DTypeError);
  EXPECT_THROW(median(x, 1), IndexError);
  EXPECT_TRUE(std::isnan(median(zeros({0})).item<double>())); // NumPy: NaN (with a warning)
}

TEST(Sort, LazyInputAndConsumers) {
  // The input is computed first (a kernel), the sort runs on it, and consumers read the result.
  const Array x = asarray(std::vector<float>{3, -1, 2, -0.0f, 0.0f, 5, -7, 2});
  const Array s = sort(x * 2.0f) + 1.0f;
  const auto got = s.get<float>();
  const std::vector<float> want = {-13, -1, 1, 1, 5, 5, 7, 11};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.data()[i], want[i]) << "element " << i;
  const auto idx = argsort(x).get<std::int64_t>();
  const std::vector<std::int64_t> order = {6, 1, 3, 4, 2, 7, 0, 5};
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(idx.data()[i], order[i]) << "position " << i;
  // -0.0 and +0.0 are equal: stable, so -0.0 (index 3) stays before +0.0 (index 4), with its sign.
  const auto zeros = sort(x).get<float>();
  EXPECT_TRUE(std::signbit(zeros.data()[2]));
  EXPECT_FALSE(std::signbit(zeros.data()[3]));
}

// unique keeps one element of each value in ascending order: the zeros of either sign one value, every NaN one value
// (NumPy's equal_nan), NaN last; every real type, values and kernels on the backend in use (one pass of CUB's unique
// on the CUDA backend), complex numbers by the mask of the runs' starts.
TEST(Sort, UniqueKeepsOneElementOfEachValue) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {2, nan, -0.0f, 0.0f, 1, -nan, 2, -inf, inf, 0.0f};
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    const auto got = unique(asarray(special).astype(t)).get<double>();
    ASSERT_EQ(got.size(), 6) << dtype_name(t);
    const std::vector<double> want = {-INFINITY, 0.0, 1, 2, INFINITY};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.data()[i], want[i]) << dtype_name(t) << " " << i;
    EXPECT_TRUE(std::isnan(got.data()[5])) << dtype_name(t);
  }
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (DType t : {DType::Bool, DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32, DType::UInt32,
                  DType::Int64, DType::UInt64, DType::Float32})
    for (std::int64_t n : {1, 7, 1000, 100003}) {
      std::vector<double> v(static_cast<std::size_t>(n));
      for (auto& e : v) e = double(rng() % 90);
      if (t == DType::Bool)
        for (auto& e : v) e = e < 45 ? 0 : 1;
      std::vector<double> want(v);
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      const Array u = unique(asarray(v, {n}).astype(t));
      ASSERT_EQ(u.dtype(), t);
      const auto got = u.get<double>();
      ASSERT_EQ(std::vector<double>(got.data(), got.data() + got.size()), want)
          << dtype_name(t) << " n=" << n << ", " << lazyfuse_test::seed_note();
    }
  const std::vector<std::complex<double>> z = {{1, 2}, {1, 0}, {1, 2}, {0, 5}};
  const auto cz = unique(asarray(z)).get<std::complex<double>>();
  ASSERT_EQ(cz.size(), 3);
  EXPECT_EQ(cz.data()[0], std::complex<double>(0, 5));
  EXPECT_EQ(cz.data()[2], std::complex<double>(1, 2));
}

TEST(Sort, Errors) {
  const Array m = zeros({2, 3});
  EXPECT_THROW(sort(m, 2), IndexError);
  EXPECT_THROW(argsort(m, -3), IndexError);
  EXPECT_THROW(sort(asarray({1.0f}).reshape({})), IndexError); // a 0-d array has no last axis
  EXPECT_EQ(sort(asarray({1.0f}).reshape({}), std::nullopt).shape(), (Shape{1}));
  EXPECT_THROW(sort(Array()), Error);
  EXPECT_THROW(argsort(Array()), Error);
}

} // namespace
