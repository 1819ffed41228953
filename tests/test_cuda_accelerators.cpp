// LAZYFUSE_ACCELERATORS=cub: CUB's reductions (runtime/Accelerators.h) checked against host references (long double,
// or exact wrapping integer arithmetic) and against the fused kernels (LAZYFUSE_ACCELERATORS empty), for every dtype
// and op they serve, full reductions and rows, sizes 1 to 2^24 + 3; NaN semantics; bitwise determinism over 3 runs;
// which plans take the CUB path (accelerator_stats, kernel_cache_stats, the logs) and which do not.
//
// The GPU tests skip without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1, which makes that a failure. Most of
// them lower the size limits so that every candidate plan goes to CUB (DefaultLimits checks the defaults). The settings
// tests and the CPU-backend test run everywhere. Fresh random data each run; LAZYFUSE_TEST_SEED=<n> replays one.
// `--gtest_also_run_disabled_tests --gtest_filter='*SizeSweep*'` prints the timings the default limits come from.
#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include "graph/Node.h"
#include "runtime/Accelerators.h"
#include "runtime/CubReductions.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace lf = lazyfuse;
namespace rt = lazyfuse::runtime;
using lf::Array;
using lf::DType;
using lf::Shape;
using i64 = std::int64_t;
using u64 = std::uint64_t;
using ld = long double;

static_assert(std::numeric_limits<ld>::digits >= 64, "int64 values must be exact in a long double");

using lazyfuse_test::seed;
using lazyfuse_test::seed_note;

// LAZYFUSE_ACCELERATORS for one scope.
struct AcceleratorsSetting {
  explicit AcceleratorsSetting(const char* value) { lf::config::set("LAZYFUSE_ACCELERATORS", value); }
  ~AcceleratorsSetting() { lf::config::reset("LAZYFUSE_ACCELERATORS"); }
  AcceleratorsSetting(const AcceleratorsSetting&) = delete;
  AcceleratorsSetting& operator=(const AcceleratorsSetting&) = delete;
};

// Accelerator limits for one scope; by default every candidate plan goes to CUB, whatever its size.
struct LimitsScope {
  explicit LimitsScope(rt::AcceleratorLimits l = everything()) { rt::set_accelerator_limits(l); }
  ~LimitsScope() { rt::set_accelerator_limits(rt::default_accelerator_limits()); }
  LimitsScope(const LimitsScope&) = delete;
  LimitsScope& operator=(const LimitsScope&) = delete;
  static rt::AcceleratorLimits everything() {
    rt::AcceleratorLimits l;
    l.full_single_tile = true;
    l.full_min_elements = 1;
    l.long_rows = 1;
    l.few_rows = std::numeric_limits<i64>::max();
    l.few_rows_elements = std::numeric_limits<i64>::max();
    return l;
  }
};

std::string str(const Shape& s) {
  return lazyfuse::graph::format_shape(s);
}
std::string name(DType t) {
  return std::string(lf::dtype_name(t));
}
i64 numel(const Shape& s) {
  i64 n = 1;
  for (auto d : s) n *= d;
  return n;
}
bool is_float(DType t) {
  return t == DType::Float32 || t == DType::Float64;
}

// ---- host data --------------------------------------------------------------------------------------------------

enum class Op { Sum, Prod, Min, Max };
constexpr Op kOps[] = {Op::Sum, Op::Prod, Op::Min, Op::Max};
constexpr DType kTypes[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64};

const char* op_name(Op op) {
  switch (op) {
  case Op::Sum: return "sum";
  case Op::Prod: return "prod";
  case Op::Min: return "min";
  case Op::Max: return "max";
  }
  return "?";
}

DType result_type(Op op, DType t) {
  return (op == Op::Sum || op == Op::Prod) && !is_float(t) ? DType::Int64 : t;
}

Array apply(Op op, const Array& x, lf::Axes axes = {}, bool keepdims = false) {
  switch (op) {
  case Op::Sum: return lf::sum(x, axes, keepdims);
  case Op::Prod: return lf::prod(x, axes, keepdims);
  case Op::Min: return lf::min(x, axes, keepdims);
  case Op::Max: return lf::max(x, axes, keepdims);
  }
  return x;
}

// Values of a dtype (exact in a long double), as the array of that dtype.
template <class T> Array upload_as(const std::vector<ld>& v, const Shape& shape) {
  std::vector<T> typed(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) typed[i] = T(v[i]);
  return lf::asarray<T>(std::span<const T>(typed.data(), typed.size()), shape);
}
Array upload(DType t, const std::vector<ld>& v, const Shape& shape) {
  switch (t) {
  case DType::Float32: return upload_as<float>(v, shape);
  case DType::Float64: return upload_as<double>(v, shape);
  case DType::Int32: return upload_as<std::int32_t>(v, shape);
  case DType::Int64: return upload_as<std::int64_t>(v, shape);
  case DType::Bool: break;
  default: break; // a type this test does not generate
  }
  ADD_FAILURE() << "no bool data here";
  return {};
}

// Random values of `t`: for sums and extremes spread out (floats in [-1, 1), int32 in [-1000, 1000], int64 up to
// 2^40). For products, values whose product is exact in every order: for floats +-1 with at most 40 factors of 2, 40
// of 0.5 and 10 of 1.5 (every partial product is exact, so CUB, the fused kernel and the reference agree bit for bit;
// random factors near 1 would not do: float32 rounding near 1.0 is biased, and a product of 2^24 of them drifts by
// ~10% in any order); for integers small factors whose products wrap modulo 2^64, also exactly in any order.
std::vector<ld> random_values(DType t, i64 n, bool for_prod, std::mt19937_64& rng) {
  std::vector<ld> v(static_cast<std::size_t>(n));
  if (is_float(t) && for_prod) {
    std::uniform_int_distribution<int> sign(0, 1);
    for (auto& x : v) x = sign(rng) ? 1 : -1;
    std::uniform_int_distribution<i64> at(0, n - 1);
    for (int k = 0; k < 40; ++k) v[std::size_t(at(rng))] *= 2;
    for (int k = 0; k < 40; ++k) v[std::size_t(at(rng))] *= 0.5L;
    for (int k = 0; k < 10; ++k) v[std::size_t(at(rng))] *= 1.5L;
  } else if (is_float(t)) {
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (auto& x : v) x = t == DType::Float32 ? ld(float(d(rng))) : ld(d(rng));
  } else if (for_prod) {
    constexpr int kFactors[] = {1, 1, 1, 1, 1, -1, 2, 3, -3, 5};
    std::uniform_int_distribution<int> d(0, 9);
    for (auto& x : v) x = kFactors[d(rng)];
  } else {
    const i64 hi = t == DType::Int32 ? 1000 : (i64(1) << 40);
    std::uniform_int_distribution<i64> d(-hi, hi);
    for (auto& x : v) x = ld(d(rng));
  }
  return v;
}

// The reference of one row: value and allowed error. Float sums: a bound valid for any tree order, relative to
// sum |x|; products of random_values' data and integer sums (wrapping modulo 2^64): exact; min and max: exact, NaN
// wins.
struct Expected {
  ld value;
  ld tol;
};
Expected reference(Op op, DType t, const ld* v, i64 n) {
  const bool f = is_float(t);
  const ld rel = t == DType::Float32 ? 1e-5L : 1e-12L;
  switch (op) {
  case Op::Sum:
    if (f) {
      ld s = 0, a = 0;
      for (i64 i = 0; i < n; ++i) s += v[i], a += std::fabs(v[i]);
      return {s, rel * a};
    } else {
      u64 s = 0;
      for (i64 i = 0; i < n; ++i) s += u64(i64(v[i]));
      return {ld(i64(s)), 0};
    }
  case Op::Prod:
    if (f) {
      ld p = 1; // exact: see random_values
      for (i64 i = 0; i < n; ++i) p *= v[i];
      return {p, 0};
    } else {
      u64 p = 1;
      for (i64 i = 0; i < n; ++i) p *= u64(i64(v[i]));
      return {ld(i64(p)), 0};
    }
  case Op::Min:
  case Op::Max: {
    ld m = v[0];
    for (i64 i = 0; i < n; ++i) {
      if (std::isnan(v[i])) return {v[i], 0};
      m = op == Op::Min ? std::min(m, v[i]) : std::max(m, v[i]);
    }
    return {m, 0};
  }
  }
  return {0, 0};
}

// ---- evaluation ---------------------------------------------------------------------------------------------------

// One materialization: the result's bytes and values, and what ran it.
struct Outcome {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<unsigned char> bytes;
  std::vector<ld> values;
  u64 kernels = 0;     // kernel_cache_stats().kernels_launched
  u64 cub_plans = 0;   // plans served by CUB
  u64 cub_kernels = 0; // kernels those launched
  u64 fused = 0;       // generated kernels looked up (memory hits, disk hits, compiles)
};

template <class T> void read_into(const Array& r, Outcome& o) {
  auto h = r.get<T>();
  o.bytes.resize(h.size() * sizeof(T));
  if (h.size()) std::memcpy(o.bytes.data(), h.data(), o.bytes.size());
  o.values.resize(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) o.values[i] = ld(h[i]);
}

Outcome evaluate(const std::function<Array()>& make) {
  Outcome o;
  const auto s0 = lf::kernel_cache_stats();
  const auto a0 = rt::accelerator_stats();
  Array r = make();
  EXPECT_FALSE(r.is_materialized()) << "the expression must be computed by this call";
  r.eval();
  const auto s1 = lf::kernel_cache_stats();
  const auto a1 = rt::accelerator_stats();
  o.kernels = s1.kernels_launched - s0.kernels_launched;
  o.cub_plans = a1.plans - a0.plans;
  o.cub_kernels = a1.kernels - a0.kernels;
  o.fused = (s1.memory_hits + s1.disk_hits + s1.misses) - (s0.memory_hits + s0.disk_hits + s0.misses);
  o.dtype = r.dtype();
  o.shape = r.shape();
  switch (r.dtype()) {
  case DType::Float32: read_into<float>(r, o); break;
  case DType::Float64: read_into<double>(r, o); break;
  case DType::Int32: read_into<std::int32_t>(r, o); break;
  case DType::Int64: read_into<std::int64_t>(r, o); break;
  case DType::Bool: read_into<bool>(r, o); break;
  default: break; // a type this test does not generate
  }
  return o;
}

std::string show(ld x) {
  std::ostringstream os;
  os.precision(21);
  os << x;
  return os.str();
}

// Every row of `got` against the references; reports the first few bad rows.
void expect_matches(const std::string& what, const Outcome& got, const std::vector<Expected>& want) {
  ASSERT_EQ(got.values.size(), want.size()) << what << ": result size";
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const ld g = got.values[i], w = want[i].value;
    const bool ok = std::isnan(w) ? std::isnan(g) : (g == w || std::fabs(g - w) <= want[i].tol);
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": row " << i << " = " << show(g) << ", reference " << show(w) << " (allowed error "
                    << show(want[i].tol) << ", error " << show(std::fabs(g - w)) << ")";
  }
}

// CUB against the fused path: equal for integers, min and max (NaN where either is NaN); within twice the reference
// bound for float sums and products (the two combine in different orders).
void expect_same_as_fused(const std::string& what, const Outcome& cub, const Outcome& fused,
                          const std::vector<Expected>& want) {
  ASSERT_EQ(cub.values.size(), fused.values.size()) << what;
  EXPECT_EQ(cub.dtype, fused.dtype) << what << ": dtype " << name(cub.dtype) << " vs fused " << name(fused.dtype);
  EXPECT_EQ(cub.shape, fused.shape) << what << ": shape " << str(cub.shape) << " vs fused " << str(fused.shape);
  int bad = 0;
  for (std::size_t i = 0; i < cub.values.size(); ++i) {
    const ld a = cub.values[i], b = fused.values[i];
    const bool ok =
        std::isnan(a) || std::isnan(b) ? std::isnan(a) && std::isnan(b) : a == b || std::fabs(a - b) <= 2 * want[i].tol;
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": row " << i << ": CUB " << show(a) << ", fused kernel " << show(b)
                    << " (allowed difference " << show(2 * want[i].tol) << ")";
  }
}

// Runs `make` three times with CUB forced and once with LAZYFUSE_ACCELERATORS empty; checks the path each took, the
// kernel counts, bitwise determinism of the three CUB runs, and both results against `want`.
void check_both_paths(const std::string& what, const std::function<Array()>& make, DType want_dtype,
                      const Shape& want_shape, const std::vector<Expected>& want, bool expect_cub = true) {
  SCOPED_TRACE(what);
  Outcome first;
  {
    LimitsScope all;
    AcceleratorsSetting on("cub");
    for (int rep = 0; rep < 3; ++rep) {
      Outcome o = evaluate(make);
      if (expect_cub) {
        EXPECT_EQ(o.cub_plans, 1u) << what << " [cub, run " << rep << "]: not served by CUB";
        EXPECT_EQ(o.fused, 0u) << what << " [cub, run " << rep << "]: a generated kernel ran too";
        EXPECT_EQ(o.kernels, o.cub_kernels)
            << what << " [cub, run " << rep << "]: kernels counted " << o.kernels << ", CUB launched " << o.cub_kernels;
        EXPECT_TRUE(o.cub_kernels >= 1 && o.cub_kernels <= 2) << what << ": " << o.cub_kernels << " CUB kernels";
      } else {
        EXPECT_EQ(o.cub_plans, 0u) << what << " [cub on, run " << rep << "]: CUB served a plan it must not";
      }
      if (rep == 0) {
        first = o;
        EXPECT_EQ(o.dtype, want_dtype) << what << ": dtype " << name(o.dtype) << ", NumPy's is " << name(want_dtype);
        EXPECT_EQ(o.shape, want_shape) << what << ": shape " << str(o.shape) << ", expected " << str(want_shape);
        expect_matches(what + " [cub]", o, want);
      } else {
        EXPECT_TRUE(o.bytes == first.bytes) << what << ": run " << rep << " differs bitwise from run 0";
      }
    }
  }
  Outcome fused;
  {
    AcceleratorsSetting off("");
    fused = evaluate(make);
    EXPECT_EQ(fused.cub_plans, 0u) << what << " [LAZYFUSE_ACCELERATORS empty]: CUB ran anyway";
    EXPECT_GE(fused.fused, 1u) << what << " [LAZYFUSE_ACCELERATORS empty]: no generated kernel ran";
    expect_matches(what + " [fused]", fused, want);
  }
  expect_same_as_fused(what, first, fused, want);
}

// References of `rows` rows of `row_size` elements.
std::vector<Expected> row_references(Op op, DType t, const std::vector<ld>& v, i64 rows, i64 row_size) {
  std::vector<Expected> out;
  for (i64 r = 0; r < rows; ++r) out.push_back(reference(op, t, v.data() + r * row_size, row_size));
  return out;
}

} // namespace

// ---- settings (every backend) ---------------------------------------------------------------------------------------

TEST(AcceleratorSettings, CubOrEmptyAndAClearErrorOtherwise) {
  bool env_set = std::getenv("LAZYFUSE_ACCELERATORS") != nullptr;
  if (!env_set) {
    EXPECT_EQ(lf::config::get("LAZYFUSE_ACCELERATORS"), "cub") << "the default";
  }
  bool listed = false;
  for (const auto& s : lf::config::all())
    if (s.name == "LAZYFUSE_ACCELERATORS") listed = true;
  EXPECT_TRUE(listed) << "config::all() lists LAZYFUSE_ACCELERATORS";
  EXPECT_NO_THROW(lf::config::set("LAZYFUSE_ACCELERATORS", ""));
  EXPECT_EQ(lf::config::get("LAZYFUSE_ACCELERATORS"), "");
  EXPECT_NO_THROW(lf::config::set("LAZYFUSE_ACCELERATORS", "cub"));
  EXPECT_EQ(lf::config::get("LAZYFUSE_ACCELERATORS"), "cub");
  for (const char* bad : {"cutensor", "CUB", "cub,cutensor", "1", "none"}) {
    try {
      lf::config::set("LAZYFUSE_ACCELERATORS", bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const lf::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("LAZYFUSE_ACCELERATORS"), std::string::npos) << m;
      EXPECT_NE(m.find(bad), std::string::npos) << m;
      EXPECT_NE(m.find("cub"), std::string::npos) << "names the valid values: " << m;
    }
  }
  lf::config::reset("LAZYFUSE_ACCELERATORS");
}

TEST(AcceleratorCpu, SettingIsAcceptedAndDoesNotApply) {
  if (lf::backend() != lf::Backend::Cpu) GTEST_SKIP() << "this process runs on the CUDA backend";
  LimitsScope all;
  AcceleratorsSetting on("cub");
  std::mt19937_64 rng(seed());
  const auto v = random_values(DType::Float32, 10001, false, rng);
  const Array x = upload(DType::Float32, v, {10001});
  const Outcome o = evaluate([&] { return lf::sum(x); });
  EXPECT_EQ(o.cub_plans, 0u) << "the CPU backend never runs CUB";
  EXPECT_EQ(o.kernels, 1u);
  EXPECT_EQ(o.fused, 1u) << "the fused kernel ran";
  expect_matches("sum float32 on the CPU backend", o, {reference(Op::Sum, DType::Float32, v.data(), 10001)});
}

// ---- the CUB path on the GPU ------------------------------------------------------------------------------------

TEST(CubFull, EveryDtypeAndOpAgainstReferenceAndFusedPath) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  SCOPED_TRACE(seed_note());
  std::mt19937_64 rng(seed());
  const i64 sizes[] = {1, 2, 3, 5, 127, 1000, 4097, 65537, 1000003, (i64(1) << 24) + 3};
  for (DType t : kTypes)
    for (i64 n : sizes) {
      const auto general = random_values(t, n, false, rng), for_prod = random_values(t, n, true, rng);
      const Array xg = upload(t, general, {n}), xp = upload(t, for_prod, {n});
      for (Op op : kOps) {
        const auto& v = op == Op::Prod ? for_prod : general;
        const Array& x = op == Op::Prod ? xp : xg;
        const std::string what = std::string(op_name(op)) + " " + name(t) + " of " + str({n});
        check_both_paths(what, [&] { return apply(op, x); }, result_type(op, t), Shape{},
                         {reference(op, t, v.data(), n)});
        if (n == 1 || n >= (i64(1) << 20)) {
          // The honest kernel count: one single-tile launch for tiny inputs, two passes for large ones.
          LimitsScope all;
          AcceleratorsSetting on("cub");
          const Outcome o = evaluate([&] { return apply(op, x); });
          EXPECT_EQ(o.kernels, n == 1 ? 1u : 2u) << what << ": kernels launched by cub::DeviceReduce";
        }
      }
    }
}

TEST(CubRows, InnermostAxesOfContiguousBuffers) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  SCOPED_TRACE(seed_note());
  std::mt19937_64 rng(seed() + 1);
  struct Case {
    Shape shape;
    std::vector<int> axes; // trailing axes (size-1 axes aside)
    bool keepdims;
  };
  const std::vector<Case> cases = {
      {{2, 1}, {1}, false},      {{3, 5}, {1}, false},       {{1000, 1}, {1}, false},      {{257, 3}, {1}, true},
      {{17, 4097}, {1}, false},  {{4096, 4099}, {1}, false}, {{1 << 20, 3}, {1}, false},   {{5, 7, 301}, {1, 2}, false},
      {{7, 1, 300}, {2}, false}, {{7, 300, 1}, {1}, true},   {{3, 4, 5, 6}, {2, 3}, true},
  };
  for (DType t : kTypes)
    for (const Case& c : cases) {
      const i64 n = numel(c.shape);
      i64 row_size = 1;
      for (int a : c.axes) row_size *= c.shape[std::size_t(a)];
      const i64 rows = n / row_size;
      Shape out_shape;
      for (std::size_t d = 0; d < c.shape.size(); ++d) {
        const bool reduced = std::find(c.axes.begin(), c.axes.end(), int(d)) != c.axes.end();
        if (!reduced)
          out_shape.push_back(c.shape[d]);
        else if (c.keepdims)
          out_shape.push_back(1);
      }
      const auto general = random_values(t, n, false, rng), for_prod = random_values(t, n, true, rng);
      const Array xg = upload(t, general, c.shape), xp = upload(t, for_prod, c.shape);
      for (Op op : kOps) {
        const auto& v = op == Op::Prod ? for_prod : general;
        const Array& x = op == Op::Prod ? xp : xg;
        std::string axes_text;
        for (int a : c.axes) axes_text += (axes_text.empty() ? "" : ", ") + std::to_string(a);
        const std::string what = std::string(op_name(op)) + " " + name(t) + " of " + str(c.shape) + " over axes {" +
                                 axes_text + "}" + (c.keepdims ? " keepdims" : "");
        // One row is a full reduction (DeviceReduce), several are rows (DeviceSegmentedReduce): both are CUB.
        check_both_paths(
            what, [&] { return apply(op, x, c.axes, c.keepdims); }, result_type(op, t), out_shape,
            row_references(op, t, v, rows, row_size));
      }
    }
}

TEST(CubNaN, MinMaxAndSumPropagateNaNAsNumPy) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const ld nan = std::numeric_limits<ld>::quiet_NaN(), inf = std::numeric_limits<ld>::infinity();
  for (DType t : {DType::Float32, DType::Float64})
    for (i64 n : {i64(1), i64(7), i64(1000), i64(1 << 20) + 1}) {
      struct Pattern {
        const char* name;
        std::function<void(std::vector<ld>&)> apply;
      };
      const std::vector<Pattern> patterns = {
          {"NaN first", [](std::vector<ld>& v) { v.front() = std::numeric_limits<ld>::quiet_NaN(); }},
          {"NaN last", [](std::vector<ld>& v) { v.back() = std::numeric_limits<ld>::quiet_NaN(); }},
          {"NaN in the middle, +inf and -inf around",
           [&](std::vector<ld>& v) {
             v[v.size() / 2] = nan;
             if (v.size() > 2) v[1] = inf, v[v.size() - 2] = -inf;
           }},
          {"all NaN", [&](std::vector<ld>& v) { std::fill(v.begin(), v.end(), nan); }},
          {"+inf and -inf, no NaN",
           [&](std::vector<ld>& v) {
             v.front() = -inf;
             v.back() = inf;
           }},
          {"all -inf", [&](std::vector<ld>& v) { std::fill(v.begin(), v.end(), -inf); }},
      };
      for (const auto& p : patterns) {
        std::vector<ld> v(static_cast<std::size_t>(n));
        for (i64 i = 0; i < n; ++i) v[std::size_t(i)] = ld(float(std::sin(double(i)))); // exact in float32
        p.apply(v);
        const Array x = upload(t, v, {n});
        for (Op op : {Op::Min, Op::Max, Op::Sum}) {
          const std::string what = std::string(op_name(op)) + " " + name(t) + " of " + str({n}) + ", " + p.name;
          Expected e = reference(op, t, v.data(), n);
          if (op == Op::Sum && std::isinf(e.tol)) e.tol = 0; // sums of infinities: exact (inf, or NaN for inf - inf)
          check_both_paths(what, [&] { return apply(op, x); }, t, Shape{}, {e});
        }
      }
      // Rows: NaN in some rows only.
      if (n >= 7) {
        const i64 rows = 3;
        std::vector<ld> v(static_cast<std::size_t>(rows * n));
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = ld(float(std::cos(double(i))));
        v[std::size_t(n + n / 2)] = nan;     // row 1
        v[std::size_t(2 * n + n - 1)] = nan; // row 2, last element
        v[std::size_t(2 * n)] = inf;         // row 2, first element
        const Array x = upload(t, v, {rows, n});
        for (Op op : {Op::Min, Op::Max}) {
          const std::string what = std::string(op_name(op)) + " " + name(t) + " of " + str({rows, n}) +
                                   " rows, NaN "
                                   "in rows 1, 2";
          check_both_paths(
              what, [&] { return apply(op, x, 1); }, t, Shape{rows}, row_references(op, t, v, rows, n));
        }
      }
    }
}

TEST(CubPath, TakenOnlyForPlainReductionsOfContiguousBuffers) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  SCOPED_TRACE(seed_note());
  std::mt19937_64 rng(seed() + 2);
  const i64 r = 512, c = 1024;
  const auto v = random_values(DType::Float32, r * c, false, rng);
  const Array x = upload(DType::Float32, v, {r * c}), m = x.reshape({r, c});
  const auto vi = random_values(DType::Int32, r * c, false, rng);
  const Array xi = upload(DType::Int32, vi, {r * c});
  const Array b = (x > 0.0f).eval();
  const Array mt = m.transpose().eval(); // a contiguous (c, r) buffer
  LimitsScope all;
  AcceleratorsSetting on("cub");
  struct Case {
    const char* what;
    std::function<Array()> make;
    bool cub;
  };
  const std::vector<Case> cases = {
      {"sum(x)", [&] { return lf::sum(x); }, true},
      {"sum(x, keepdims)", [&] { return lf::sum(x, {}, true); }, true},
      {"max(m) (2-D, every axis)", [&] { return lf::max(m); }, true},
      {"sum(m, 1) (rows)", [&] { return lf::sum(m, 1); }, true},
      {"min(m, -1, keepdims)", [&] { return lf::min(m, -1, true); }, true},
      {"sum(int32 x) -> int64", [&] { return lf::sum(xi); }, true},
      {"prod(int32 m, 1) -> int64",
       [&] {
         return lf::prod(xi.reshape({r, c}), 1);
       },
       true},
      {"sum(x * 2) (a prologue)", [&] { return lf::sum(x * 2.0f); }, false},
      {"sum(x) + 1 (an epilogue)", [&] { return lf::sum(x) + 1.0f; }, false},
      {"mean(x) (an epilogue)", [&] { return lf::mean(x); }, false},
      {"sum(m, 0) (columns)", [&] { return lf::sum(m, 0); }, false},
      {"sum(m.T, 1) (a transposed view)", [&] { return lf::sum(m.transpose(), 1); }, false},
      {"sum(mt, 0) (columns of a transposed copy)", [&] { return lf::sum(mt, 0); }, false},
      {"sum(m[::2], 1) (a strided view)", [&] { return lf::sum(m(lf::slice(0, lf::none, 2)), 1); }, false},
      {"sum(m[:, :100], 1) (rows of a sliced view)",
       [&] { return lf::sum(m(lf::slice(lf::none, lf::none), lf::slice(0, 100)), 1); }, false},
      {"sum(bool b) (bool is not dispatched)", [&] { return lf::sum(b); }, false},
      {"argmax(x)", [&] { return lf::argmax(x); }, false},
      {"any(b)", [&] { return lf::any(b); }, false},
      {"sum(x.astype(float64)) (a cast CUB does not do)", [&] { return lf::sum(x.astype(DType::Float64)); }, false},
  };
  for (const auto& k : cases) {
    const Outcome o = evaluate(k.make);
    EXPECT_EQ(o.cub_plans, k.cub ? 1u : 0u) << k.what << (k.cub ? ": not served by CUB" : ": served by CUB");
    if (!k.cub) {
      EXPECT_GE(o.fused, 1u) << k.what << ": no generated kernel ran";
    }
  }
  // Values of a few of them (the sweep tests above check values in depth).
  const Outcome s = evaluate([&] { return lf::sum(m, 1); });
  expect_matches("sum(m, 1)", s, row_references(Op::Sum, DType::Float32, v, r, c));
  const Outcome si = evaluate([&] { return lf::sum(xi); });
  EXPECT_EQ(si.dtype, DType::Int64);
  expect_matches("sum(int32 x)", si, {reference(Op::Sum, DType::Int32, vi.data(), r * c)});
  // Two reductions in one plan are one fused kernel, not two CUB calls.
  const auto a0 = rt::accelerator_stats();
  Array lo = lf::min(m, 1), hi = lf::max(m, 1);
  lf::eval(lo, hi);
  EXPECT_EQ(rt::accelerator_stats().plans - a0.plans, 0u) << "min and max of the same rows share one fused kernel";
}

TEST(CubPath, SettingSwitchesThePathAndTheLogsSaySo) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed() + 3);
  const i64 n = (i64(1) << 20) + 5;
  const auto v = random_values(DType::Float32, n, false, rng);
  const Array x = upload(DType::Float32, v, {n});
  const Expected want = reference(Op::Sum, DType::Float32, v.data(), n);
  LimitsScope all;
  lf::config::set("LAZYFUSE_LOG", "accelerator,launch");
  // The same structure on, off, on: the choice is made on every call (no cache replays a stale path).
  for (const char* setting : {"cub", "", "cub", ""}) {
    AcceleratorsSetting s(setting);
    testing::internal::CaptureStderr();
    const Outcome o = evaluate([&] { return lf::sum(x); });
    const std::string log = testing::internal::GetCapturedStderr();
    const bool on = std::string(setting) == "cub";
    EXPECT_EQ(o.cub_plans, on ? 1u : 0u) << "LAZYFUSE_ACCELERATORS='" << setting << "'";
    EXPECT_EQ(o.fused, on ? 0u : 1u) << "LAZYFUSE_ACCELERATORS='" << setting << "'";
    expect_matches(std::string("sum with LAZYFUSE_ACCELERATORS='") + setting + "'", o, {want});
    if (on) {
      EXPECT_NE(log.find("[lazyfuse:accelerator] sum float32 of 1048581 elements: cub::DeviceReduce, 2 kernels"),
                std::string::npos)
          << log;
      EXPECT_NE(log.find("[lazyfuse:launch] cub::DeviceReduce n=1048581"), std::string::npos) << log;
    } else {
      EXPECT_NE(log.find("[lazyfuse:accelerator] sum float32 of 1048581 elements: fused kernel "
                         "(LAZYFUSE_ACCELERATORS is empty)"),
                std::string::npos)
          << log;
      EXPECT_EQ(log.find("cub::DeviceReduce n="), std::string::npos) << log;
    }
  }
  lf::config::reset("LAZYFUSE_LOG");
}

TEST(CubPath, InputsFromOtherStreamsAndResultsOnTheCurrentOne) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed() + 4);
  const i64 rows = 2048, cols = 2049;
  const auto v = random_values(DType::Float64, rows * cols, false, rng);
  LimitsScope all;
  AcceleratorsSetting on("cub");
  lf::Stream producer, consumer;
  Array m;
  {
    lf::StreamGuard g(producer);
    m = (upload(DType::Float64, v, {rows, cols}) * 1.0).eval(); // produced by a kernel queued on `producer`
  }
  Array full, per_row;
  {
    lf::StreamGuard g(consumer);
    full = lf::sum(m).eval();
    per_row = lf::max(m, 1).eval();
  }
  const auto a = full.get<double>(), b = per_row.get<double>();
  const Expected fe = reference(Op::Sum, DType::Float64, v.data(), rows * cols);
  EXPECT_LE(std::fabs(ld(a[0]) - fe.value), fe.tol) << "sum on another stream: " << a[0] << " vs " << show(fe.value);
  const auto re = row_references(Op::Max, DType::Float64, v, rows, cols);
  for (i64 i = 0; i < rows; ++i)
    ASSERT_EQ(ld(b[std::size_t(i)]), re[std::size_t(i)].value) << "max of row " << i << " on another stream";
}

TEST(CubDefaults, DefaultLimitsSendTheMeasuredCasesToCub) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const rt::AcceleratorLimits d = rt::default_accelerator_limits(), now = rt::accelerator_limits();
  EXPECT_EQ(now.full_single_tile, d.full_single_tile) << "no other test left its limits behind";
  EXPECT_EQ(now.full_min_elements, d.full_min_elements);
  EXPECT_EQ(now.long_rows, d.long_rows);
  EXPECT_EQ(now.few_rows, d.few_rows);
  EXPECT_EQ(now.few_rows_elements, d.few_rows_elements);
  AcceleratorsSetting on("cub");
  std::mt19937_64 rng(seed() + 5);
  struct Case {
    Shape shape;
    lf::Axes axes;
    bool cub;
    u64 kernels;
    const char* why;
  };
  const i64 big = d.full_min_elements;
  const std::vector<Case> cases = {
      {{1000}, {}, true, 1, "one CUB kernel (single tile)"},
      {{1 << 20}, {}, false, 1, "CUB would need two kernels: the fused split kernel is faster"},
      {{big}, {}, true, 2, "large: CUB's two passes are faster"},
      {{64, 8192}, 1, true, 1, "few long rows"},
      {{16384, 64}, 1, false, 1, "many short rows: the fused row kernel is faster"},
      {{1024, 64}, 1, true, 1, "few short rows"},
      {{4096, 2048}, 1, false, 1, "few short rows, but 2^23 elements: the fused row kernel is faster"},
      {{8192, d.long_rows}, 1, true, 1, "many long rows"},
  };
  for (const auto& c : cases) {
    const i64 n = numel(c.shape);
    const auto v = random_values(DType::Float32, n, false, rng);
    const Array x = upload(DType::Float32, v, c.shape);
    const Outcome o = evaluate([&] { return lf::sum(x, c.axes); });
    const std::string what = "sum float32 of " + str(c.shape) + (c.shape.size() > 1 ? " over axis 1" : "");
    EXPECT_EQ(o.cub_plans, c.cub ? 1u : 0u)
        << what << ": expected " << (c.cub ? "CUB" : "the fused kernel") << " (" << c.why << ")";
    EXPECT_EQ(o.kernels, c.kernels) << what << ": kernels launched";
    const i64 row = c.shape.size() > 1 ? c.shape[1] : n;
    expect_matches(what, o, row_references(Op::Sum, DType::Float32, v, n / row, row));
  }
  namespace ck = rt::cub_kernels;
  const i64 tile32 = ck::single_tile_elements(ck::Op::Sum, DType::Float32, DType::Float32);
  EXPECT_GE(tile32, 1000) << "the 1000-element case above assumed one tile";
  std::printf("[          ] cub::DeviceReduce single tile: %lld float32, %lld float64, %lld int32->int64 (sum); "
              "%lld int32 (max)\n",
              (long long)tile32, (long long)ck::single_tile_elements(ck::Op::Sum, DType::Float64, DType::Float64),
              (long long)ck::single_tile_elements(ck::Op::Sum, DType::Int32, DType::Int64),
              (long long)ck::single_tile_elements(ck::Op::Max, DType::Int32, DType::Int32));
  std::printf("[          ] default limits: full reductions in one CUB kernel, or of at least %lld elements; rows of "
              "at least %lld elements, or at most %lld rows of %lld elements in all\n",
              (long long)d.full_min_elements, (long long)d.long_rows, (long long)d.few_rows,
              (long long)d.few_rows_elements);
}

// ---- timings (disabled: run by hand on the GPU to re-derive the default limits) -------------------------------------

namespace {

// Median microseconds per call of `make().eval()`: 20 back-to-back calls and one synchronize, 5 times.
double micros_per_call(const std::function<Array()>& make) {
  for (int w = 0; w < 3; ++w) make().eval();
  lf::sync();
  std::vector<double> t;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < 20; ++c) make().eval();
    lf::sync();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

void sweep_row(const char* what, const std::function<Array()>& make) {
  double us[2];
  for (int on = 0; on < 2; ++on) {
    LimitsScope all;
    AcceleratorsSetting s(on ? "cub" : "");
    us[on] = micros_per_call(make);
  }
  std::printf("[ sweep    ] %-44s fused %10.2f us   cub %10.2f us   cub/fused %.3f\n", what, us[0], us[1],
              us[1] / us[0]);
  std::fflush(stdout);
}

} // namespace

TEST(AcceleratorTiming, DISABLED_SizeSweep) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(seed());
  for (DType t : {DType::Float32, DType::Float64, DType::Int32})
    for (int k = 8; k <= 26; k += 2) {
      const i64 n = i64(1) << k;
      const Array x = upload(t, random_values(t, n, false, rng), {n});
      for (Op op : {Op::Sum, Op::Max}) {
        const std::string what = std::string(op_name(op)) + " " + name(t) + " 2^" + std::to_string(k);
        sweep_row(what.c_str(), [&] { return apply(op, x); });
      }
    }
  for (i64 cols : {8, 32, 128, 512, 2048, 4096, 16384, 65536})
    for (i64 rows : {64, 256, 1024, 4096, 16384, 65536}) {
      if (rows * cols > (i64(1) << 26) || rows * cols < (i64(1) << 12)) continue;
      const Array m = upload(DType::Float32, random_values(DType::Float32, rows * cols, false, rng), {rows, cols});
      const std::string what = "sum float32 rows " + std::to_string(rows) + "x" + std::to_string(cols);
      sweep_row(what.c_str(), [&] { return lf::sum(m, 1); });
    }
  // Other dtypes and ops on both sides of the row limits.
  const std::pair<i64, i64> shapes[] = {{1024, 128}, {16384, 128}, {4096, 2048}, {16384, 2048}, {16384, 4096}};
  for (DType t : {DType::Float64, DType::Int32})
    for (auto [rows, cols] : shapes) {
      const Array m = upload(t, random_values(t, rows * cols, false, rng), {rows, cols});
      for (Op op : {Op::Sum, Op::Max}) {
        const std::string what =
            std::string(op_name(op)) + " " + name(t) + " rows " + std::to_string(rows) + "x" + std::to_string(cols);
        sweep_row(what.c_str(), [&] { return apply(op, m, 1); });
      }
    }
}
