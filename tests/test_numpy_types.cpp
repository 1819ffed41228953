// Every dtype, op, cast and reduction against NumPy itself: tests/numpy_types.py computes NumPy's answers (type
// promotion over all pairs, weak Python scalars, the values of every op of the op table on edge values of every
// dtype, casts, reductions, printing, which op each Python operator is) and this test compares lazyfuse's with them
// (the C++ operators included); bfloat16's answers are ml_dtypes'. The script runs under the interpreter
// LAZYFUSE_TEST_PYTHON names, which needs NumPy 2 and ml_dtypes; without one the tests skip, and fail when CI=true.
// The script lists the documented differences it encodes.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/DTypeVisit.h"

#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;

namespace {

// ---- NumPy's answers ----------------------------------------------------------------------------------------

struct Line {
  std::vector<std::string> head;                // the first field's words
  std::vector<std::vector<std::string>> fields; // the other fields' words
  std::vector<std::string> raw;                 // the other fields as they are
  std::string text;                             // the whole line, for messages
};

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> w;
  std::istringstream in(s);
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

struct Answers {
  std::vector<Line> lines;
  std::string why_not; // empty when NumPy answered
};

Answers run_numpy() {
  Answers a;
  const char* python = std::getenv("LAZYFUSE_TEST_PYTHON");
  if (!python || !*python) {
    a.why_not = "LAZYFUSE_TEST_PYTHON is not set (the Python interpreter with NumPy 2 that answers for NumPy)";
    return a;
  }
  const std::string cmd = std::string("'") + python + "' '" + LAZYFUSE_TEST_SOURCE_DIR + "/numpy_types.py' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    a.why_not = "cannot run " + cmd;
    return a;
  }
  std::string all;
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) all.append(buf, n);
  const int status = pclose(p);
  if (status != 0) {
    a.why_not = cmd + " failed (status " + std::to_string(status) + "): " + all.substr(0, 2000);
    return a;
  }
  std::istringstream in(all);
  for (std::string text; std::getline(in, text);) {
    if (text.empty()) continue;
    Line l;
    l.text = text.size() > 300 ? text.substr(0, 300) + "..." : text;
    std::size_t at = 0;
    bool first = true;
    while (true) {
      const std::size_t bar = text.find(" | ", at);
      auto w = words(text.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
      if (first) {
        l.head = std::move(w);
      } else {
        l.fields.push_back(std::move(w));
        l.raw.push_back(text.substr(at, bar == std::string::npos ? std::string::npos : bar - at));
      }
      first = false;
      if (bar == std::string::npos) break;
      at = bar + 3;
    }
    a.lines.push_back(std::move(l));
  }
  return a;
}

const Answers& answers() {
  static const Answers a = run_numpy();
  return a;
}

// Skips (or, in CI, fails) when NumPy cannot answer.
#define NEED_NUMPY() LAZYFUSE_NEED_NUMPY(answers().why_not)

std::vector<const Line*> lines_of(const std::string& kind) {
  std::vector<const Line*> out;
  for (auto& l : answers().lines)
    if (!l.head.empty() && l.head[0] == kind) out.push_back(&l);
  return out;
}

// ---- types and values ---------------------------------------------------------------------------------------

/// The lazyfuse type of a NumPy dtype name (ml_dtypes' for bfloat16).
DType lazyfuse_type(const std::string& numpy_name) {
  for (int k = 0; k < lf::kNumDTypes; ++k)
    if (lf::dtype_name(DType(k)) == numpy_name) return DType(k);
  ADD_FAILURE() << "NumPy type " << numpy_name << " is not a lazyfuse type";
  return DType::Float64;
}

std::string name(DType t) {
  return std::string(lf::dtype_name(t));
}

template <class T> T parse(const std::string& s) {
  if constexpr (std::is_same_v<T, bool>)
    return s != "0";
  else if constexpr (std::is_same_v<T, lf::float16> || std::is_same_v<T, lf::bfloat16>)
    return T(std::strtod(s.c_str(), nullptr)); // exact: NumPy's values of T, in hex
  else if constexpr (lf::detail::is_std_complex<T>) {
    // "re,im", each exact in hex
    const auto comma = s.find(',');
    using R = typename T::value_type;
    return T(R(std::strtod(s.substr(0, comma).c_str(), nullptr)), R(std::strtod(s.substr(comma + 1).c_str(), nullptr)));
  } else if constexpr (std::is_floating_point_v<T>)
    return T(std::strtod(s.c_str(), nullptr)); // exact: NumPy's values of T, in hex
  else if constexpr (std::is_signed_v<T>)
    return T(std::strtoll(s.c_str(), nullptr, 10));
  else
    return T(std::strtoull(s.c_str(), nullptr, 10));
}

template <class T> std::string show(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    std::ostringstream os;
    os.precision(std::is_same_v<T, float> ? 9 : 17);
    os << v;
    return os.str();
  } else if constexpr (std::is_same_v<T, lf::float16> || std::is_same_v<T, lf::bfloat16>) {
    return show(float(v));
  } else if constexpr (lf::detail::is_std_complex<T>) {
    return show(v.real()) + (std::signbit(v.imag()) ? "" : "+") + show(v.imag()) + "j";
  } else {
    return std::to_string(v);
  }
}

Array make(DType t, const std::vector<std::string>& v) {
  return lf::graph::visit_dtype(t, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<bool> b;
      for (auto& s : v) b.push_back(parse<bool>(s));
      return lf::asarray(b, {std::int64_t(v.size())});
    } else {
      std::vector<T> x;
      for (auto& s : v) x.push_back(parse<T>(s));
      return lf::asarray(std::span<const T>(x.data(), x.size()), {std::int64_t(x.size())});
    }
  });
}

/// Ops whose float results may differ from NumPy's by a few units in the last place (C library, CUDA and NumPy's
/// SIMD implementations differ); every other result must have NumPy's bits: conversions, + - * / and sqrt of the
/// half types (computed in float32 and rounded once: correctly rounded, as NumPy's and ml_dtypes' loops), and the
/// complex arithmetic, which docs/semantics.md states bit for bit NumPy's.
const std::set<std::string> kApproximate = {
    "rsqrt",  "exp",     "exp2",    "expm1",  "log",    "log2",      "log10",        "log1p",
    "sin",    "asinh",   "acosh",   "atanh",  "cos",    "tan",       "asin",         "acos",
    "atan",   "sinh",    "cosh",    "tanh",   "erf",    "gelu",      "gelu_tanh",    "power",
    "atan2",  "hypot",   "mean",    "var",    "std",    "sum",       "prod",         "logaddexp",
    "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "var_ddof1", "nanvar_ddof1", "nanstd_ddof1"};
/// Complex results of these call hypot, atan2 or the elementary functions as well (docs/semantics.md, "Complex
/// numbers"): approximate for complex operands even where the real op is exact.
/// min and max of complex values with NaN parts: which NaN a reduction keeps depends on the order it combines
/// elements in (docs/semantics.md promises a value with a NaN part, not NumPy's first one), so there a complex
/// approximate result only needs a NaN part where NumPy's has one.
const std::set<std::string> kApproximateComplex = {"abs", "sqrt", "sign", "angle", "min", "max", "nanmin", "nanmax"};
/// The bound for approximate results: float32 and float64 within kUlps units in the last place of the larger of the
/// two values; a complex number's parts within kUlps ulps of its larger part (the parts of a complex function are
/// accurate relative to its magnitude, not each on its own near a zero of one part); the half types within one
/// unit of their last place (a float32 result within a few ulps of NumPy's rounds to the same half value or a
/// neighbour).
constexpr double kUlps = 16;

bool approximate_for(const std::string& op, const std::string& operand_type) {
  return kApproximate.count(op) || (operand_type.rfind("complex", 0) == 0 && kApproximateComplex.count(op));
}

template <class T> bool close(T got, T want, bool approximate) {
  if constexpr (std::is_same_v<T, lf::float16> || std::is_same_v<T, lf::bfloat16>) {
    if (std::isnan(float(want))) return std::isnan(float(got));
    if (float(got) == float(want)) return true; // zeros of either sign, as for float32
    // Approximate ops: a float32 result a few ulps from NumPy's may round to the neighbouring half value.
    return approximate && std::abs(int(got.bits & 0x7fff) - int(want.bits & 0x7fff)) <= 1 &&
           (got.bits & 0x8000) == (want.bits & 0x8000);
  } else if constexpr (lf::detail::is_std_complex<T>) {
    using R = typename T::value_type;
    const bool nan_want = std::isnan(want.real()) || std::isnan(want.imag());
    if (nan_want && approximate) return std::isnan(got.real()) || std::isnan(got.imag());
    if (nan_want || !approximate) return close(got.real(), want.real(), false) && close(got.imag(), want.imag(), false);
    const R scale = std::max(std::fabs(want.real()), std::fabs(want.imag()));
    auto part_close = [&](R g, R w) {
      if (g == w) return true;
      if (std::isinf(w) || std::isinf(g) || std::isnan(g)) return false;
      const R ulp = std::nextafter(std::max(scale, std::fabs(w)), std::numeric_limits<R>::infinity()) -
                    std::max(scale, std::fabs(w));
      return std::fabs(g - w) <= R(kUlps) * ulp;
    };
    return part_close(got.real(), want.real()) && part_close(got.imag(), want.imag());
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(want)) return std::isnan(got);
    if (got == want) return true;
    if (!approximate || std::isinf(want) || std::isinf(got) || std::isnan(got)) return false;
    const T scale = std::max(std::fabs(got), std::fabs(want));
    const T ulp = std::nextafter(scale, std::numeric_limits<T>::infinity()) - scale;
    return std::fabs(got - want) <= T(kUlps) * ulp;
  } else {
    return got == want;
  }
}

/// Compares `got` (a lazyfuse result) with NumPy's values `want` of NumPy type `numpy_type`.
testing::AssertionResult same(const Array& got, const std::string& numpy_type, const std::vector<std::string>& want,
                              bool approximate) {
  const DType t = lazyfuse_type(numpy_type);
  if (got.dtype() != t)
    return testing::AssertionFailure() << "dtype " << name(got.dtype()) << ", NumPy's " << numpy_type;
  if (std::size_t(got.size()) != want.size())
    return testing::AssertionFailure() << "size " << got.size() << ", NumPy's " << want.size();
  return lf::graph::visit_dtype(t, [&]<class T>() -> testing::AssertionResult {
    auto h = got.get<T>();
    std::ostringstream bad;
    int nbad = 0;
    for (std::size_t k = 0; k < want.size(); ++k) {
      const T w = parse<T>(want[k]);
      if (close(h[k], w, approximate)) continue;
      if (++nbad <= 6) bad << "\n  at " << k << ": " << show(h[k]) << ", NumPy " << show(w);
    }
    if (nbad == 0) return testing::AssertionSuccess();
    return testing::AssertionFailure() << nbad << " of " << want.size() << " values differ:" << bad.str();
  });
}

/// A constant (a fill, which astype folds on the host) of type t and shape {1} holding v exactly.
Array constant_of_type(DType t, const std::string& v) {
  return lf::graph::visit_dtype(t, [&]<class T>() {
    if constexpr (std::is_same_v<T, lf::float16> || std::is_same_v<T, lf::bfloat16>)
      return lf::detail::ApiAccess::adopt(lf::graph::make_fill({1}, t, double(float(parse<T>(v))), 0));
    else
      return lf::detail::ApiAccess::adopt(lf::graph::make_weak_fill(lf::detail::weak(parse<T>(v)), t, "scalar", {1}));
  });
}

lf::Operand scalar_of(const std::string& s) {
  const std::string v = s.substr(2);
  if (s[0] == 'b') return lf::Operand(v == "1");
  if (s[0] == 'c') return lf::Operand(parse<std::complex<double>>(v));
  if (s[0] == 'f') return lf::Operand(std::strtod(v.c_str(), nullptr));
  if (v[0] == '-') return lf::Operand(std::int64_t(std::strtoll(v.c_str(), nullptr, 10)));
  return lf::Operand(std::uint64_t(std::strtoull(v.c_str(), nullptr, 10)));
}

lf::ScalarKind kind_of(const std::string& s) {
  switch (s[0]) {
  case 'b': return lf::ScalarKind::Bool;
  case 'i': return lf::ScalarKind::Int;
  case 'c': return lf::ScalarKind::Complex;
  default: return lf::ScalarKind::Float;
  }
}

// ---- the op table and the operators by name ---------------------------------------------------------------------

// Each row of the op table is its public function, named as numpy_types.py names NumPy's.
using Unary = Array (*)(const Array&);
using Binary = Array (*)(lf::Operand, lf::Operand);

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> m = {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) {#name, &lf::name},
#include <lazyfuse/ops.def>
  };
  return m;
}
const std::map<std::string, Binary>& binary_ops() {
  static const std::map<std::string, Binary> m = {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) {#name, &lf::name},
#include <lazyfuse/ops.def>
  };
  return m;
}

// The C++ operators, named as numpy_types.py names Python's.
const std::map<std::string, Unary>& unary_operators() {
  static const std::map<std::string, Unary> m = {
      {"operator-", [](const Array& a) { return -a; }},
      {"operator~", [](const Array& a) { return ~a; }},
  };
  return m;
}
const std::map<std::string, Binary>& binary_operators() {
  static const std::map<std::string, Binary> m = {
      {"operator+", [](lf::Operand a, lf::Operand b) { return a + b; }},
      {"operator-", [](lf::Operand a, lf::Operand b) { return a - b; }},
      {"operator*", [](lf::Operand a, lf::Operand b) { return a * b; }},
      {"operator/", [](lf::Operand a, lf::Operand b) { return a / b; }},
      {"operator%", [](lf::Operand a, lf::Operand b) { return a % b; }},
      {"operator==", [](lf::Operand a, lf::Operand b) { return a == b; }},
      {"operator!=", [](lf::Operand a, lf::Operand b) { return a != b; }},
      {"operator<", [](lf::Operand a, lf::Operand b) { return a < b; }},
      {"operator<=", [](lf::Operand a, lf::Operand b) { return a <= b; }},
      {"operator>", [](lf::Operand a, lf::Operand b) { return a > b; }},
      {"operator>=", [](lf::Operand a, lf::Operand b) { return a >= b; }},
      {"operator&", [](lf::Operand a, lf::Operand b) { return a & b; }},
      {"operator|", [](lf::Operand a, lf::Operand b) { return a | b; }},
      {"operator^", [](lf::Operand a, lf::Operand b) { return a ^ b; }},
      {"operator<<", [](lf::Operand a, lf::Operand b) { return a << b; }},
      {"operator>>", [](lf::Operand a, lf::Operand b) { return a >> b; }},
  };
  return m;
}

using Reduction = std::function<Array(const Array&, std::optional<int>)>;
const std::map<std::string, Reduction>& reductions() {
  auto axes = [](std::optional<int> a) { return a ? lf::Axes(*a) : lf::Axes(); };
  static const std::map<std::string, Reduction> m = {
      {"sum", [=](const Array& x, std::optional<int> a) { return lf::sum(x, axes(a)); }},
      {"prod", [=](const Array& x, std::optional<int> a) { return lf::prod(x, axes(a)); }},
      {"min", [=](const Array& x, std::optional<int> a) { return lf::min(x, axes(a)); }},
      {"max", [=](const Array& x, std::optional<int> a) { return lf::max(x, axes(a)); }},
      {"argmin", [=](const Array& x, std::optional<int> a) { return lf::argmin(x, a); }},
      {"argmax", [=](const Array& x, std::optional<int> a) { return lf::argmax(x, a); }},
      {"any", [=](const Array& x, std::optional<int> a) { return lf::any(x, axes(a)); }},
      {"all", [=](const Array& x, std::optional<int> a) { return lf::all(x, axes(a)); }},
      {"mean", [=](const Array& x, std::optional<int> a) { return lf::mean(x, axes(a)); }},
      {"var", [=](const Array& x, std::optional<int> a) { return lf::var(x, axes(a)); }},
      {"std", [=](const Array& x, std::optional<int> a) { return lf::stddev(x, axes(a)); }},
      {"count_nonzero", [=](const Array& x, std::optional<int> a) { return lf::count_nonzero(x, axes(a)); }},
      {"nansum", [=](const Array& x, std::optional<int> a) { return lf::nansum(x, axes(a)); }},
      {"nanprod", [=](const Array& x, std::optional<int> a) { return lf::nanprod(x, axes(a)); }},
      {"nanmin", [=](const Array& x, std::optional<int> a) { return lf::nanmin(x, axes(a)); }},
      {"nanmax", [=](const Array& x, std::optional<int> a) { return lf::nanmax(x, axes(a)); }},
      {"nanmean", [=](const Array& x, std::optional<int> a) { return lf::nanmean(x, axes(a)); }},
      {"nanvar", [=](const Array& x, std::optional<int> a) { return lf::nanvar(x, axes(a)); }},
      {"nanstd", [=](const Array& x, std::optional<int> a) { return lf::nanstd(x, axes(a)); }},
      {"var_ddof1", [=](const Array& x, std::optional<int> a) { return lf::var(x, axes(a), 1); }},
      {"nanvar_ddof1", [=](const Array& x, std::optional<int> a) { return lf::nanvar(x, axes(a), 1); }},
      {"nanstd_ddof1", [=](const Array& x, std::optional<int> a) { return lf::nanstd(x, axes(a), 1); }},
  };
  return m;
}

// ---- tests ------------------------------------------------------------------------------------------------------

TEST(NumPyTypes, PromoteTypesOfEveryPair) {
  NEED_NUMPY();
  int n = 0;
  for (const Line* l : lines_of("P")) {
    const DType a = lazyfuse_type(l->head[1]), b = lazyfuse_type(l->head[2]);
    EXPECT_EQ(name(lf::promote_types(a, b)), name(lazyfuse_type(l->head[3]))) << l->text;
    ++n;
  }
  EXPECT_EQ(n, lf::kNumDTypes * lf::kNumDTypes) << "NumPy answered for other types than lazyfuse's";
}

TEST(NumPyTypes, WeakScalarResultTypes) {
  NEED_NUMPY();
  for (const Line* l : lines_of("W")) {
    const DType t = lazyfuse_type(l->head[1]);
    EXPECT_EQ(name(lf::promote_weak(t, kind_of(l->head[2]))), name(lazyfuse_type(l->head[3]))) << l->text;
  }
}

/// Results checked after one evaluation per group: on a GPU, the results of a group (one shape) are a few
/// multi-output kernels, so the whole table compiles hundreds of kernels, not thousands.
class Batch {
public:
  void add(const std::string& group, Array got, std::string numpy_type, const std::vector<std::string>& want,
           bool approximate, std::string what) {
    auto& g = groups_[group];
    if (g.empty() || g.back().size() == kPerKernel) g.emplace_back();
    g.back().push_back({std::move(got), std::move(numpy_type), &want, approximate, std::move(what)});
  }
  void check() {
    for (auto& [key, chunks] : groups_)
      for (auto& chunk : chunks) {
        std::vector<const Array*> arrays;
        for (auto& i : chunk) arrays.push_back(&i.got);
        lf::eval_arrays(arrays);
        for (auto& i : chunk) EXPECT_TRUE(same(i.got, i.type, *i.want, i.approximate)) << i.what;
      }
    groups_.clear();
  }

private:
  static constexpr std::size_t kPerKernel = 32;
  struct Item {
    Array got;
    std::string type;
    const std::vector<std::string>* want;
    bool approximate;
    std::string what;
  };
  std::map<std::string, std::vector<std::vector<Item>>> groups_;
};

TEST(NumPyTypes, EveryUnaryOpOnEveryType) {
  NEED_NUMPY();
  std::set<std::string> seen;
  Batch batch;
  for (const Line* l : lines_of("U")) {
    const std::string& op = l->head[1];
    ASSERT_TRUE(unary_ops().count(op)) << "NumPy answered for " << op << ", which the op table does not have";
    seen.insert(op);
    Array x = make(lazyfuse_type(l->head[2]), l->fields[0]);
    batch.add(l->head[2], unary_ops().at(op)(x), l->head[3], l->fields[1], approximate_for(op, l->head[2]), l->text);
  }
  batch.check();
  for (const Line* l : lines_of("UE")) {
    Array x = make(lazyfuse_type(l->head[2]), {"1"});
    EXPECT_THROW(unary_ops().at(l->head[1])(x), lf::DTypeError) << l->text;
  }
  for (auto& [op, _] : unary_ops()) EXPECT_TRUE(seen.count(op)) << op << " is not compared with NumPy";
}

TEST(NumPyTypes, EveryBinaryOpOnEveryPairOfTypes) {
  NEED_NUMPY();
  std::set<std::string> seen;
  Batch batch;
  for (const Line* l : lines_of("B")) {
    const std::string& op = l->head[1];
    ASSERT_TRUE(binary_ops().count(op)) << "NumPy answered for " << op << ", which the op table does not have";
    seen.insert(op);
    Array x = make(lazyfuse_type(l->head[2]), l->fields[0]), y = make(lazyfuse_type(l->head[3]), l->fields[1]);
    batch.add(l->head[2] + " " + l->head[3] + " " + std::to_string(x.size()), binary_ops().at(op)(x, y), l->head[4],
              l->fields[2], approximate_for(op, l->head[4]), l->text);
  }
  batch.check();
  for (const Line* l : lines_of("BE")) {
    Array x = make(lazyfuse_type(l->head[2]), {"1"}), y = make(lazyfuse_type(l->head[3]), {"1"});
    EXPECT_THROW(binary_ops().at(l->head[1])(x, y), lf::DTypeError) << l->text;
  }
  for (auto& [op, _] : binary_ops()) EXPECT_TRUE(seen.count(op)) << op << " is not compared with NumPy";
}

TEST(NumPyTypes, EveryBinaryOpWithWeakScalars) {
  NEED_NUMPY();
  Batch batch;
  for (const Line* l : lines_of("S")) {
    const auto op = binary_ops().at(l->head[1]);
    Array x = make(lazyfuse_type(l->head[2]), l->fields[0]);
    const auto s = scalar_of(l->head[3]);
    Array z = l->head[4] == "L" ? op(s, x) : op(x, s);
    batch.add(l->head[2], z, l->head[5], l->fields[1], approximate_for(l->head[1], l->head[5]), l->text);
  }
  batch.check();
  // NumPy's TypeError (an op not defined for the types) and OverflowError (an integer the array's type cannot
  // hold) are both DTypeError.
  for (const Line* l : lines_of("SE")) {
    const auto op = binary_ops().at(l->head[1]);
    Array x = make(lazyfuse_type(l->head[2]), {"1"});
    const auto s = scalar_of(l->head[3]);
    if (l->head[4] == "L")
      EXPECT_THROW(op(s, x), lf::DTypeError) << l->text;
    else
      EXPECT_THROW(op(x, s), lf::DTypeError) << l->text;
  }
}

// NumPy says which op each Python operator is (OU and OB lines: the same values, types and exceptions everywhere). The
// C++ operator then builds the very graph node that op's function builds, or throws the same DTypeError, for every case
// the tests above compare with NumPy, so its values are the function's. Comparing nodes compiles no kernel.
TEST(NumPyTypes, OperatorsAreNumPysOperators) {
  NEED_NUMPY();
  std::map<std::string, std::string> op_of, unary_op_of;
  for (const Line* l : lines_of("OB")) op_of[l->head[1]] = l->head[2];
  for (const Line* l : lines_of("OU")) unary_op_of[l->head[1]] = l->head[2];
  auto same = [](const Array& a, const Array& b) { return lf::detail::graph_node(a) == lf::detail::graph_node(b); };
  for (auto& [name, op] : unary_operators()) {
    ASSERT_TRUE(unary_op_of.count(name)) << "NumPy's " << name << " is no ufunc of the op table (numpy_types.py)";
    const Unary f = unary_ops().at(unary_op_of[name]);
    int cases = 0;
    for (const Line* l : lines_of("U"))
      if (l->head[1] == unary_op_of[name]) {
        Array x = make(lazyfuse_type(l->head[2]), l->fields[0]);
        EXPECT_TRUE(same(op(x), f(x))) << name << ": " << l->text;
        ++cases;
      }
    for (const Line* l : lines_of("UE")) {
      if (l->head[1] != unary_op_of[name]) continue;
      EXPECT_THROW(op(make(lazyfuse_type(l->head[2]), {"1"})), lf::DTypeError) << name << ": " << l->text;
    }
    EXPECT_GT(cases, 0) << name;
  }
  for (auto& [name, op] : binary_operators()) {
    ASSERT_TRUE(op_of.count(name)) << "NumPy's " << name << " is no ufunc of the op table (numpy_types.py)";
    const Binary f = binary_ops().at(op_of[name]);
    int cases = 0;
    for (const Line* l : lines_of("B"))
      if (l->head[1] == op_of[name]) {
        Array x = make(lazyfuse_type(l->head[2]), l->fields[0]), y = make(lazyfuse_type(l->head[3]), l->fields[1]);
        EXPECT_TRUE(same(op(x, y), f(x, y))) << name << ": " << l->text;
        ++cases;
      }
    for (const Line* l : lines_of("BE"))
      if (l->head[1] == op_of[name]) {
        Array x = make(lazyfuse_type(l->head[2]), {"1"}), y = make(lazyfuse_type(l->head[3]), {"1"});
        EXPECT_THROW(op(x, y), lf::DTypeError) << name << ": " << l->text;
      }
    for (const Line* l : lines_of("S"))
      if (l->head[1] == op_of[name]) {
        Array x = make(lazyfuse_type(l->head[2]), l->fields[0]);
        const auto s = scalar_of(l->head[3]);
        const bool left = l->head[4] == "L";
        EXPECT_TRUE(left ? same(op(s, x), f(s, x)) : same(op(x, s), f(x, s))) << name << ": " << l->text;
        ++cases;
      }
    for (const Line* l : lines_of("SE")) {
      if (l->head[1] != op_of[name]) continue;
      Array x = make(lazyfuse_type(l->head[2]), {"1"});
      const auto s = scalar_of(l->head[3]);
      if (l->head[4] == "L") {
        EXPECT_THROW(op(s, x), lf::DTypeError) << name << ": " << l->text;
      } else {
        EXPECT_THROW(op(x, s), lf::DTypeError) << name << ": " << l->text;
      }
    }
    EXPECT_GT(cases, 0) << name;
  }
}

TEST(NumPyTypes, CastsBetweenEveryPair) {
  NEED_NUMPY();
  Batch batch;
  std::vector<std::vector<std::string>> one_each; // the single values the constants are compared with
  for (const Line* l : lines_of("C"))
    for (auto& v : l->fields[1]) one_each.push_back({v});
  std::size_t next = 0;
  for (const Line* l : lines_of("C")) {
    const DType from = lazyfuse_type(l->head[1]), to = lazyfuse_type(l->head[2]);
    Array x = make(from, l->fields[0]);
    batch.add(l->head[1], x.astype(to), l->head[2], l->fields[1], false, l->text);
    // The same conversions of constants (fills, which astype folds on the host) give the same values.
    for (std::size_t k = 0; k < l->fields[0].size(); ++k) {
      Array c = constant_of_type(from, l->fields[0][k]);
      batch.add("constants", c.astype(to), l->head[2], one_each[next++], false,
                "constant " + l->fields[0][k] + " of " + l->text);
    }
  }
  batch.check();
}

TEST(NumPyTypes, ReductionsOfEveryType) {
  NEED_NUMPY();
  std::set<std::string> seen;
  Batch batch;
  for (const Line* l : lines_of("R")) {
    const std::string& op = l->head[1];
    ASSERT_TRUE(reductions().count(op)) << "NumPy answered for " << op << ", which this test does not call";
    seen.insert(op);
    const auto& shape = l->fields[0];
    Array x = make(lazyfuse_type(l->head[2]), l->fields[1]).reshape({std::stoll(shape[0]), std::stoll(shape[1])});
    const std::optional<int> axis = l->head[3] == "all" ? std::nullopt : std::optional<int>(std::stoi(l->head[3]));
    batch.add(l->head[2] + " " + l->head[3], reductions().at(op)(x, axis).reshape({-1}), l->head[4], l->fields[2],
              approximate_for(op, l->head[2]), l->text);
  }
  batch.check();
  EXPECT_EQ(seen.size(), reductions().size());
}

TEST(NumPyTypes, PrintsBoolsIntegersHalvesAndComplexAsNumPy) {
  NEED_NUMPY();
  for (const Line* l : lines_of("T")) {
    Array x = make(lazyfuse_type(l->head[1]), l->fields[0]);
    EXPECT_EQ(lf::to_string(x), l->raw[1]) << l->text;
  }
}

} // namespace
