// Gathers on the GPU: fused results equal the CPU backend's (computed on the host here), the kernel count, and the
// out-of-range IndexError raised from the device's error word; boolean-mask selection listed on the device by CUB
// (runtime/Selection.h) against the host's listing. Skips without a device (tests/gpu_test.h).
#include <lazyfuse/lazyfuse.hpp>

#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include "runtime/CubSelection.h"
#include "runtime/Executor.h"
#include "runtime/Streams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace lazyfuse;

namespace {

TEST(CudaGather, FusedGatherMatchesTheHost) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(lazyfuse_test::seed());
  const std::int64_t n = 1 << 20, m = (1 << 20) + 37; // a tail past the vector path
  std::vector<float> xs(std::size_t(n), 0.0f);
  for (std::size_t k = 0; k < xs.size(); ++k) xs[k] = float(k % 4096) * 0.25f;
  std::vector<std::int64_t> idx(std::size_t(m), 0);
  for (auto& i : idx) i = std::int64_t(rng() % std::uint64_t(2 * n)) - n;
  Array x = asarray(xs, {n}).eval(), i = asarray(idx).eval();
  const auto before = kernel_cache_stats().kernels_launched;
  const HostArray<float> got = (x(i) * 2.0f - 1.0f).get<float>();
  EXPECT_EQ(kernel_cache_stats().kernels_launched - before, 1u);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const std::int64_t j = idx[k] < 0 ? idx[k] + n : idx[k];
    ASSERT_EQ(got[k], xs[std::size_t(j)] * 2.0f - 1.0f) << "element " << k << ", " << lazyfuse_test::seed_note();
  }
}

TEST(CudaGather, RowsAndReductionsOfGatheredRows) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::int64_t rows = 1000, width = 300;
  Array table = (arange(rows * width).astype(DType::Float32) * 0.5f).reshape({rows, width}).eval();
  Array pick = asarray<std::int64_t>({999, 0, -1, 17, 500}).eval();
  const HostArray<float> g = (table(pick) + 1.0f).get<float>();
  const HostArray<float> s = sum(table(pick), 1).get<float>();
  const std::int64_t r[] = {999, 0, 999, 17, 500};
  for (std::int64_t k = 0; k < 5; ++k) {
    double want = 0;
    for (std::int64_t c = 0; c < width; ++c) {
      ASSERT_EQ(g[std::size_t(k * width + c)], 0.5f * float(r[k] * width + c) + 1.0f);
      want += 0.5 * double(r[k] * width + c);
    }
    EXPECT_NEAR(s[std::size_t(k)], want, 1e-6 * want);
  }
}

TEST(CudaGather, OutOfRangeIsAnIndexErrorAndNoFault) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  Array x = arange(1000).astype(DType::Float32).eval();
  std::vector<std::int64_t> idx(100000, 3);
  idx[77777] = 1 << 30; // far outside: a read there would fault (compute-sanitizer would report it)
  Array y = x(asarray(idx)) * 2.0f;
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      y.eval();
      (void)y.get<float>();
      ADD_FAILURE() << "no IndexError";
    } catch (const IndexError& e) {
      EXPECT_EQ(std::string(e.what()), "index 1073741824 is out of bounds for axis 0 with size 1000");
    }
  }
  EXPECT_EQ(take(x, arange(3) - 1).get<float>()[0], 999.0f) << "the device is still usable";
}

// An embedding's rows are read in vectors, their row index loaded and checked ahead of the values: a bad row is
// still an IndexError (and no fault), naming the right check when a kernel has two; the next kernel's word starts
// at zero again, and good rows come out right.
TEST(CudaGather, RowGathersCheckTheirIndicesAheadOfTheVectors) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::int64_t rows = 300, width = 64;
  Array table = (arange(rows * width).astype(DType::Float32) * 0.5f).reshape({rows, width}).eval();
  std::vector<std::int64_t> picked(4096);
  for (std::size_t k = 0; k < picked.size(); ++k) picked[k] = std::int64_t(k * 7919 % 600) - 300; // -300 .. 299
  std::vector<std::int64_t> bad = picked;
  bad[4000] = rows;
  try {
    (void)(table(asarray(bad)) * 2.0f).get<float>();
    ADD_FAILURE() << "no IndexError";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()), "index 300 is out of bounds for axis 0 with size 300");
  }
  std::vector<std::int64_t> columns(picked.size(), 5);
  columns[123] = -65;
  try {
    (void)table(asarray(picked), asarray(columns)).get<float>();
    ADD_FAILURE() << "no IndexError";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()), "index -65 is out of bounds for axis 1 with size 64");
  }
  const auto got = (table(asarray(picked)) * 2.0f).get<float>();
  ASSERT_EQ(got.size(), picked.size() * std::size_t(width));
  for (std::size_t k = 0; k < picked.size(); ++k) {
    const std::int64_t row = picked[k] < 0 ? picked[k] + rows : picked[k];
    for (std::int64_t c = 0; c < width; ++c)
      ASSERT_EQ(got[k * std::size_t(width) + std::size_t(c)], float(row * width + c) * 0.5f * 2.0f)
          << "row " << k << ", column " << c;
  }
}

// ---- boolean masks ------------------------------------------------------------------------------------------

std::int64_t elements(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string case_note(const Shape& x, std::size_t mask_ndim, double density, DType t) {
  std::string s = "x of shape (";
  for (auto d : x) s += std::to_string(d) + ",";
  return s + "), a mask over " + std::to_string(mask_ndim) + " axes, density " + std::to_string(density) + ", " +
         std::string(dtype_name(t));
}

// A random mask of `shape` with about `density` of its elements true (exactly none for 0, all for 1).
std::vector<bool> random_mask(const Shape& shape, double density, std::mt19937_64& rng) {
  std::vector<bool> m(std::size_t(elements(shape)));
  std::bernoulli_distribution pick(density);
  for (std::size_t k = 0; k < m.size(); ++k) m[k] = density >= 1 ? true : density <= 0 ? false : pick(rng);
  return m;
}

std::vector<std::int64_t> host_positions(const std::vector<bool>& m) {
  std::vector<std::int64_t> p;
  for (std::size_t k = 0; k < m.size(); ++k)
    if (m[k]) p.push_back(std::int64_t(k));
  return p;
}

template <class T> std::vector<std::int64_t> as_int64(const HostArray<T>& h) {
  std::vector<std::int64_t> v(h.size());
  for (std::size_t k = 0; k < h.size(); ++k) v[k] = std::int64_t(h.data()[k]);
  return v;
}

// x(mask) for masks over all of x's axes and over its leading ones, of several densities and dtypes: x holds its own
// flat positions, so the host's expectation is the mask's positions times the size of the axes it leaves whole.
TEST(CudaMaskSelection, SelectionMatchesTheHost) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(lazyfuse_test::seed());
  struct Case {
    Shape x;
    std::size_t mask_ndim;
  };
  const Case cases[] = {{{(1 << 20) + 37}, 1}, {{1000, 777}, 2}, {{64, 33, 17}, 3},
                        {{64, 33, 17}, 2},     {{300, 5, 7}, 1}, {{5, 0, 3}, 2}};
  for (const Case& c : cases)
    for (double density : {0.0, 0.001, 0.5, 1.0})
      for (DType t : {DType::Float32, DType::Int32, DType::Float64, DType::Int8}) {
        const Shape mshape(c.x.begin(), c.x.begin() + std::ptrdiff_t(c.mask_ndim));
        const Shape rest(c.x.begin() + std::ptrdiff_t(c.mask_ndim), c.x.end());
        const std::int64_t inner = elements(rest);
        const std::vector<bool> m = random_mask(mshape, density, rng);
        const std::vector<std::int64_t> p = host_positions(m);
        // int8 holds the flat position modulo 256 (astype wraps), the others exactly.
        const bool wraps = t == DType::Int8;
        Array x = arange(elements(c.x)).reshape(c.x).astype(t).eval();
        Array y = x(asarray(m, mshape).eval());
        Shape want_shape{std::int64_t(p.size())};
        want_shape.insert(want_shape.end(), rest.begin(), rest.end());
        const std::string what = case_note(c.x, c.mask_ndim, density, t);
        ASSERT_EQ(y.shape(), want_shape) << what;
        const std::vector<std::int64_t> got = as_int64(y.astype(DType::Int64).get<std::int64_t>());
        for (std::size_t s = 0; s < p.size(); ++s)
          for (std::int64_t j = 0; j < inner; ++j) {
            std::int64_t want = p[s] * inner + j;
            if (wraps) want = std::int64_t(std::int8_t(std::uint8_t(want & 0xff)));
            ASSERT_EQ(got[s * std::size_t(inner) + std::size_t(j)], want)
                << what << ", selected row " << s << ", " << lazyfuse_test::seed_note();
          }
      }
}

// nonzero, flatnonzero, argwhere, compress and extract over device masks of each density.
TEST(CudaMaskSelection, NonzeroArgwhereCompressMatchTheHost) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(lazyfuse_test::seed());
  for (const Shape& shape : {Shape{100003}, Shape{301, 97}, Shape{17, 19, 23}})
    for (double density : {0.0, 0.001, 0.5, 1.0}) {
      const std::vector<bool> m = random_mask(shape, density, rng);
      const std::vector<std::int64_t> p = host_positions(m);
      const std::string what = case_note(shape, shape.size(), density, DType::Bool);
      // Non-bool input: nonzero's cast to bool runs on the device too.
      Array a = asarray(m, shape).astype(DType::Float32).eval();
      EXPECT_EQ(as_int64(flatnonzero(a).get<std::int64_t>()), p) << what;
      const std::vector<Array> coords = nonzero(a);
      ASSERT_EQ(coords.size(), shape.size()) << what;
      Array arg = argwhere(a);
      ASSERT_EQ(arg.shape(), (Shape{std::int64_t(p.size()), std::int64_t(shape.size())})) << what;
      const std::vector<std::int64_t> args = as_int64(arg.get<std::int64_t>());
      for (std::size_t d = 0; d < shape.size(); ++d) {
        std::int64_t stride = 1;
        for (std::size_t e = d + 1; e < shape.size(); ++e) stride *= shape[e];
        ASSERT_EQ(coords[d].shape(), (Shape{std::int64_t(p.size())})) << what;
        const std::vector<std::int64_t> c = as_int64(coords[d].get<std::int64_t>());
        for (std::size_t s = 0; s < p.size(); ++s) {
          const std::int64_t want = p[s] / stride % shape[d];
          ASSERT_EQ(c[s], want) << what << ", axis " << d << ", element " << s << ", " << lazyfuse_test::seed_note();
          ASSERT_EQ(args[s * shape.size() + d], want) << what << ", argwhere row " << s;
        }
      }
      // extract over the flattened array; compress along the last axis with a condition of that length.
      Array values = arange(elements(shape)).reshape(shape).eval();
      EXPECT_EQ(as_int64(extract(a, values).get<std::int64_t>()), p) << what;
      const std::int64_t len = shape.back();
      const std::vector<bool> cond(m.begin(), m.begin() + len);
      const std::vector<std::int64_t> cp = host_positions(cond);
      Array compressed = compress(asarray(cond, {len}), values, int(shape.size()) - 1);
      Shape cshape = shape;
      cshape.back() = std::int64_t(cp.size());
      ASSERT_EQ(compressed.shape(), cshape) << what;
      const std::vector<std::int64_t> cg = as_int64(compressed.get<std::int64_t>());
      const std::int64_t lines = elements(shape) / len;
      for (std::int64_t r = 0; r < lines; ++r)
        for (std::size_t s = 0; s < cp.size(); ++s)
          ASSERT_EQ(cg[std::size_t(r) * cp.size() + s], r * len + cp[s]) << what << ", compress line " << r;
    }
}

// The relative L2 error of y = x.at(positions).add(v) from the sums of x's and v's values in float64; with `exact`,
// each element must equal its float64 sum (the first that does not is a test failure).
double index_add_error(const Array& x, const std::vector<std::int64_t>& positions, const Array& v, const Array& y,
                       bool exact) {
  const HostArray<double> xs = x.astype(DType::Float64).get<double>(), vs = v.astype(DType::Float64).get<double>();
  std::vector<double> reference(xs.data(), xs.data() + xs.size());
  for (std::size_t k = 0; k < positions.size(); ++k) reference[std::size_t(positions[k])] += vs.data()[k];
  const HostArray<double> got = y.astype(DType::Float64).get<double>();
  double error = 0, norm = 0;
  bool differed = false;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    if (exact && !differed && got.data()[k] != reference[k]) {
      differed = true;
      ADD_FAILURE() << "element " << k << ": " << got.data()[k] << " against " << reference[k];
    }
    error += (got.data()[k] - reference[k]) * (got.data()[k] - reference[k]);
    norm += reference[k] * reference[k];
  }
  return std::sqrt(error / norm);
}

// x.at(idx).add(v) launches, besides x plus the sums and the positions' gather: for float16, bfloat16 and float32
// values the fixed-point count's three kernels (scales, terms, rounding), no library call; for integers one kernel of
// int64 atomics (after the values' cast to int64); for float64 the keys, CUB's sort and reduce-by-key (two library
// calls) and the scatter of the sums. Every path against a float64 reference (exact for the integers).
TEST(CudaGather, ScatterAddKernelCounts) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::int64_t n = std::int64_t(1) << 16, m = std::int64_t(1) << 20;
  const Array idx = random::integers(0, n, {m}, DType::Int64).eval();
  const std::vector<std::int64_t> positions = as_int64(idx.get<std::int64_t>());
  struct Case {
    DType type;
    std::uint64_t kernels, library_calls;
    double tolerance;
  };
  for (const Case c :
       {Case{DType::Float32, 5, 0, 1e-6}, Case{DType::Float16, 5, 0, 1e-2}, Case{DType::BFloat16, 5, 0, 1e-1},
        Case{DType::Int32, 4, 0, 0}, Case{DType::Float64, 4, 2, 1e-14}}) {
    SCOPED_TRACE(std::string(dtype_name(c.type)));
    const Array x = (random::uniform(-100, 100, {n})).astype(c.type).eval();
    const Array v = (random::uniform(-100, 100, {m})).astype(c.type).eval();
    const auto before = kernel_cache_stats();
    const Array y = x.at(idx).add(v).eval();
    const auto after = kernel_cache_stats();
    EXPECT_EQ(after.kernels_launched - before.kernels_launched, c.kernels);
    EXPECT_EQ(after.library_calls - before.library_calls, c.library_calls);
    // int32: wrapped exactly (the sums stay far inside int32 here)
    EXPECT_LE(index_add_error(x, positions, v, y, c.tolerance == 0), c.tolerance);
  }
}

// Over more than 2^18 elements float values take the bucketed path: CUB's radix pass over the positions' top bits (one
// library call), the buckets' kernel, the long runs' three (which return at once here, where no bucket is written far
// more than the average), besides the positions and x plus the sums.
TEST(CudaGather, ScatterAddIntoManyElementsIsBucketed) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::int64_t n = std::int64_t(1) << 20, m = std::int64_t(1) << 22;
  const Array idx = random::integers(0, n, {m}, DType::Int64).eval();
  const Array x = random::uniform(-100, 100, {n}).astype(DType::Float32).eval(),
              v = random::uniform(-100, 100, {m}).astype(DType::Float32).eval();
  const auto before = kernel_cache_stats();
  const Array y = x.at(idx).add(v).eval();
  const auto after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 6u);
  EXPECT_EQ(after.library_calls - before.library_calls, 1u);
  EXPECT_LE(index_add_error(x, as_int64(idx.get<std::int64_t>()), v, y, false), 1e-6);
}

// x[x > 0] over a materialized x: the mask kernel, CUB's count, the 8-byte count read back and CUB's select copying
// the selected values (nothing left to run when the result is read). Over a lazy x: the same with the select writing
// the positions, and the gather computing the selected elements when the result is read. No library call: CUB's
// kernels count as kernels, as the reductions' do.
TEST(CudaMaskSelection, KernelCounts) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  namespace ck = lazyfuse::runtime::cub_kernels;
  const std::int64_t n = std::int64_t(1) << 22;
  Array x = ((arange(n) % 7).astype(DType::Float32) - 3.0f).eval(); // values -3 .. 3: k % 7 in {4, 5, 6} selected
  const std::uint64_t count_kernels = std::uint64_t(ck::count_requirements(n).kernels);
  const std::uint64_t select_kernels = std::uint64_t(ck::select_requirements(n).kernels);
  EXPECT_EQ(select_kernels, 2u);
  EXPECT_EQ(ck::select_values_requirements(4, n).kernels, 2);
  // x[x > 0]: one kernel tests the elements itself (runtime/DeviceSelect.h); no mask is written, no count pass runs.
  auto before = kernel_cache_stats();
  Array y = x(x > 0.0f);
  auto after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 1u);
  EXPECT_EQ(after.library_calls - before.library_calls, 0u);
  const std::int64_t want = 3 * (n / 7) + std::max<std::int64_t>(0, n % 7 - 4);
  ASSERT_EQ(y.shape(), (Shape{want}));
  before = kernel_cache_stats();
  const HostArray<float> got = y.get<float>();
  after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 0u) << "the values were copied by the select";
  std::size_t s = 0;
  for (std::int64_t k = 0; k < n; ++k)
    if (k % 7 > 3) {
      ASSERT_EQ(got[s++], float(k % 7 - 3)) << "element " << k;
    }

  // A mask already written: the count, then the select of the flagged values.
  const Array mask = (x > 0.0f).eval();
  before = kernel_cache_stats();
  const HostArray<float> got_flagged = x(mask).get<float>();
  after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, count_kernels + select_kernels);
  ASSERT_EQ(got_flagged.size(), got.size());
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got_flagged[k], got[k]) << "element " << k;

  before = kernel_cache_stats();
  Array lazy = (x * 2.0f)(x > 0.0f);
  const HostArray<float> got_lazy = lazy.get<float>();
  after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 1 + count_kernels + select_kernels + 1)
      << "a lazy x: the positions, then the gather";
  ASSERT_EQ(got_lazy.size(), got.size());
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got_lazy[k], 2.0f * got[k]) << "element " << k;

  // Nothing selected: one select pass, its count read.
  before = kernel_cache_stats();
  Array none = x(x > 100.0f);
  EXPECT_EQ(none.shape(), (Shape{0}));
  EXPECT_EQ(none.get<float>().size(), 0u);
  after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 1u);

  // A 2-d comparison over a 2-d array: the same select over the flat elements.
  Array x2 = x.reshape({1024, n / 1024}).eval();
  before = kernel_cache_stats();
  Array y2 = x2(x2 > 0.0f);
  const HostArray<float> got2 = y2.get<float>();
  after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 1u);
  ASSERT_EQ(got2.size(), got.size());
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got2[k], got[k]) << "element " << k;
}

// x[x op s] without the mask (runtime/DeviceSelect.h: one kernel, nothing else) against the same selection
// through the written mask, for every comparison, both operand orders, every type it serves, NaNs among the floats,
// and selections of every size (none, under a quarter: a buffer of their own, most, all).
TEST(CudaMaskSelection, ComparisonsWithAScalarSelectAsTheWrittenMask) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  const std::int64_t n = 100003;
  const Array steps = ((arange(n) * 7919) % 1000).astype(DType::Float64) / 100.0 - 5.0; // -5 .. 4.99
  const Array with_nans = where(arange(n) % 101 == 0, full({}, std::nan(""), DType::Float64), steps).eval();
  const auto as_doubles = [](const Array& a) {
    const HostArray<double> h = a.astype(DType::Float64).get<double>();
    return std::vector<double>(h.data(), h.data() + h.size());
  };
  const auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])))) return false;
    return true;
  };
  for (const DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    const bool real = is_floating(t);
    const Array x = (real ? with_nans : floor(steps)).astype(t).eval();
    for (const double threshold : {-100.0, -4.5, 0.1, 3.0, 100.0}) {
      const auto compare = [&](const auto s) {
        return std::vector<std::pair<std::string, Array>>{{"x == s", x == s}, {"x != s", x != s}, {"x < s", x < s},
                                                          {"x <= s", x <= s}, {"x > s", x > s},   {"x >= s", x >= s},
                                                          {"s < x", s < x},   {"s >= x", s >= x}};
      };
      for (const auto& [name, m] : real ? compare(threshold) : compare(std::int64_t(threshold))) {
        const std::string what = std::string(dtype_name(t)) + " " + name + " s=" + std::to_string(threshold);
        const auto before = kernel_cache_stats();
        const Array fused = x(m).eval();
        EXPECT_EQ(kernel_cache_stats().kernels_launched - before.kernels_launched, 1u) << what;
        const Array written = x(m.eval());
        ASSERT_EQ(fused.dtype(), t) << what;
        ASSERT_TRUE(same(as_doubles(fused), as_doubles(written))) << what;
      }
    }
    // A view one element in: not 16-byte aligned, so every tile reads element by element.
    const Array tail = x(slice(1, none));
    const Array m = real ? tail > 0.1 : tail > std::int64_t(0);
    const auto before = kernel_cache_stats();
    const Array fused = tail(m).eval();
    EXPECT_EQ(kernel_cache_stats().kernels_launched - before.kernels_launched, 1u) << dtype_name(t);
    ASSERT_TRUE(same(as_doubles(fused), as_doubles(tail(m.eval())))) << dtype_name(t) << " x[1:]";
  }
}

// x[x op s] after selections of other sizes and data on the same stream: the statuses they left in the buffer
// (runtime/DeviceSelect.h: tagged with earlier epochs, never cleared) must read as unwritten. Each result against the
// selection through the written mask.
TEST(CudaMaskSelection, EarlierSelectionsStatusesAreNotThisOnes) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  std::int64_t seed = 1;
  for (const std::int64_t n : {std::int64_t(3) << 20, std::int64_t(9000), std::int64_t(5) << 20, std::int64_t(1),
                               std::int64_t(8192), std::int64_t(3) << 20}) {
    for (const float t : {-0.5f, 0.0f, 0.9f}) {
      const Array x = ((arange(n) * (7919 + 2 * seed++)) % 1999).astype(DType::Float32) / 999.0f - 1.0f;
      const Array xe = x.eval();
      const HostArray<float> fused = xe(xe > t).get<float>();
      const HostArray<float> written = xe((xe > t).eval()).get<float>();
      ASSERT_EQ(fused.size(), written.size()) << "n=" << n << " t=" << t;
      for (std::size_t k = 0; k < fused.size(); ++k) ASSERT_EQ(fused[k], written[k]) << "n=" << n << " element " << k;
    }
  }
}

// The tagged tickets of a stream: epochs 1, 2, ... up to the limit, then the buffer zeroed and 1 again; a larger
// request gets a new zeroed buffer at epoch 1.
TEST(CudaTaggedTickets, EpochsCountUpAndTheBufferIsZeroedWhenTheyRunOut) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  lazyfuse::runtime::Executor& ex = lazyfuse::runtime::executor();
  const cudaStream_t stream = lazyfuse::runtime::current_stream();
  const auto zero_from_host = [&](const unsigned char* data, std::size_t bytes) {
    std::vector<unsigned char> h(bytes, 0xAB);
    EXPECT_EQ(cudaMemcpyAsync(h.data(), data, bytes, cudaMemcpyDeviceToHost, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    return std::all_of(h.begin(), h.end(), [](unsigned char b) { return b == 0; });
  };
  const std::size_t big = std::size_t(1) << 24; // larger than any earlier test's buffer
  const auto first = ex.tagged_tickets(big, 3);
  EXPECT_EQ(first.epoch, 1u);
  EXPECT_TRUE(zero_from_host(first.data, big));
  ASSERT_EQ(cudaMemsetAsync(first.data, 0x5A, big, stream), cudaSuccess);
  EXPECT_EQ(ex.tagged_tickets(64, 3).epoch, 2u);
  const auto third = ex.tagged_tickets(big, 3);
  EXPECT_EQ(third.epoch, 3u);
  EXPECT_EQ(third.data, first.data);
  const auto wrapped = ex.tagged_tickets(big, 3);
  EXPECT_EQ(wrapped.epoch, 1u);
  EXPECT_EQ(wrapped.data, first.data);
  EXPECT_TRUE(zero_from_host(wrapped.data, big)) << "the buffer is zeroed when the epochs run out";
  ASSERT_EQ(cudaMemsetAsync(wrapped.data, 0x5A, big, stream), cudaSuccess);
  const auto larger = ex.tagged_tickets(2 * big, 3);
  EXPECT_EQ(larger.epoch, 1u);
  EXPECT_TRUE(zero_from_host(larger.data, 2 * big));
}

// More than 2^31 mask elements: int64 counts, and CUB's select over two partitions of 32-bit offsets (4 kernels) in
// order. About 2 GiB of mask.
TEST(CudaMaskSelection, MoreThanTwoToTheThirtyOneElements) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  namespace ck = lazyfuse::runtime::cub_kernels;
  // The last selected position, 2148 * step, lies past 2^31.
  const std::int64_t n = (std::int64_t(1) << 31) + (std::int64_t(1) << 20), step = 1000003;
  Array mask = (arange(n) % step == 0).eval();
  EXPECT_EQ(ck::select_requirements(n).kernels, 4);
  const auto before = kernel_cache_stats();
  Array p = flatnonzero(mask);
  const auto after = kernel_cache_stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched,
            std::uint64_t(ck::count_requirements(n).kernels + ck::select_requirements(n).kernels));
  const std::int64_t count = (n - 1) / step + 1;
  ASSERT_EQ(p.shape(), (Shape{count}));
  const std::vector<std::int64_t> got = as_int64(p.get<std::int64_t>());
  for (std::int64_t k = 0; k < count; ++k) ASSERT_EQ(got[std::size_t(k)], k * step) << "position " << k;
  EXPECT_GT(got.back(), std::int64_t(1) << 31);
}

} // namespace
