// The CUDA backend's sorts (cub::DeviceRadixSort, runtime/CubSort.h) against the CPU backend's (runtime::host_sort,
// the std::stable_sort that the CPU backend runs), bit for bit: every dtype; special values drawn by their bits (NaNs
// of both signs with random payloads, quiet and signalling, -0.0 and +0.0, infinities) among many ties; lengths 0 to
// 2^20 + 7; 1-D arrays and every axis of 2-D and 3-D ones, views and empty lines; and how many CUB calls and kernels of
// lazyfuse's own each path takes (KernelCacheStats::library_calls and kernels_launched).
//
// The tests skip without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1, which makes that a failure. Fresh random
// data each run; LAZYFUSE_TEST_SEED=<n> replays one.
#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include "graph/DTypeVisit.h"
#include "graph/Node.h"
#include "runtime/Sorting.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::Shape;
using i64 = std::int64_t;
using u64 = std::uint64_t;

using lazyfuse_test::seed_note;

const std::vector<DType> kRealTypes = {DType::Bool,     DType::Int8,    DType::UInt8,  DType::Int16,  DType::UInt16,
                                       DType::Int32,    DType::UInt32,  DType::Int64,  DType::UInt64, DType::Float16,
                                       DType::BFloat16, DType::Float32, DType::Float64};

// Exponent widths of the floating-point types (bits of the whole number come from itemsize).
int exponent_bits(DType t) {
  switch (t) {
  case DType::Float16: return 5;
  case DType::BFloat16:
  case DType::Float32: return 8;
  case DType::Float64: return 11;
  default: return 0;
  }
}

// Bit patterns of one real number of `width` bytes with `ebits` exponent bits (0: an integer type).
struct Patterns {
  int width = 4, ebits = 8;
  bool nans = true;
  std::vector<u64> pool; // a few finite patterns, so that ties are common

  u64 sign() const { return u64(1) << (8 * width - 1); }
  u64 mask() const { return width == 8 ? ~u64(0) : (u64(1) << (8 * width)) - 1; }
  u64 inf() const { return ((u64(1) << ebits) - 1) << (8 * width - 1 - ebits); }

  Patterns(int w, int e, bool with_nans, std::mt19937_64& rng) : width(w), ebits(e), nans(with_nans) {
    for (int k = 0; k < 40; ++k) {
      u64 b = rng() & mask();
      if (ebits > 0 && (b & inf()) == inf()) b &= ~(u64(1) << (8 * width - 2)); // not an infinity or a NaN
      pool.push_back(b);
    }
  }

  u64 draw(std::mt19937_64& rng) const {
    if (ebits == 0) {
      switch (rng() % 10) {
      case 0: return 0;
      case 1: return mask();           // -1, or the largest unsigned
      case 2: return sign();           // the smallest signed
      case 3: return mask() & ~sign(); // the largest signed
      default: return pool[rng() % pool.size()];
      }
    }
    const u64 mantissa = (u64(1) << (8 * width - 1 - ebits)) - 1;
    switch (rng() % 16) {
    case 0: return 0;
    case 1: return sign(); // -0.0
    case 2: return inf();
    case 3: return sign() | inf();
    case 4:
      if (nans) return inf() | ((mantissa >> 1) ^ mantissa); // the quiet NaN
      break;
    case 5:
      if (nans) return sign() | inf() | ((mantissa >> 1) ^ mantissa); // its negative, as x86 makes it
      break;
    case 6:
      if (nans) {
        u64 payload = rng() & mantissa;
        if (payload == 0) payload = 1; // quiet or signalling, any payload, either sign
        return (rng() % 2 ? sign() : 0) | inf() | payload;
      }
      break;
    default: break;
    }
    return pool[rng() % pool.size()];
  }
};

// An evaluated array of `t` and `shape` drawn by bits (complex: two parts of the real type drawn alike).
Array make_input(DType t, const Shape& shape, bool nans, std::mt19937_64& rng) {
  const i64 n = lf::graph::shape_size(shape);
  if (t == DType::Bool) {
    std::vector<bool> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = rng() % 2;
    return lf::asarray(v, shape).eval();
  }
  const bool complex = lf::is_complex(t);
  const int width = int(lf::itemsize(t)) / (complex ? 2 : 1);
  const int ebits = complex ? (width == 4 ? 8 : 11) : exponent_bits(t);
  const Patterns p(width, ebits, nans, rng);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(n) * lf::itemsize(t));
  for (std::size_t at = 0; at < bytes.size(); at += std::size_t(width)) {
    const u64 b = p.draw(rng);
    std::memcpy(bytes.data() + at, &b, std::size_t(width)); // little-endian: the low bytes
  }
  return lf::graph::visit_dtype(t, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      return Array();
    } else {
      std::vector<T> v(static_cast<std::size_t>(n));
      if (n > 0) std::memcpy(static_cast<void*>(v.data()), bytes.data(), bytes.size());
      return lf::asarray(v, shape).eval();
    }
  });
}

// The C-order bytes of `a`.
std::string bytes_of(const Array& a) {
  return lf::graph::visit_dtype(a.dtype(), [&]<class T>() {
    auto h = a.get<T>();
    return std::string(reinterpret_cast<const char*>(h.data()), std::size_t(h.size()) * sizeof(T));
  });
}

// (complex: not needed, the host sorts them)
bool has_nan(const Array& a) {
  if (!lf::is_floating(a.dtype())) return false;
  const auto h = a.astype(DType::Float64).get<double>();
  for (std::size_t i = 0; i < std::size_t(h.size()); ++i)
    if (h.data()[i] != h.data()[i]) return true;
  return false;
}

struct Counts {
  u64 library_calls = 0, kernels = 0;
};

// What runtime/CubSort.cu launches for a sort of `lines` lines (see its run).
Counts expected_counts(DType t, bool indices, i64 lines, bool nans) {
  Counts c;
  if (lf::is_complex(t)) return c; // the host sort
  const bool fl = lf::is_floating(t);
  if (!indices && lines == 1) {
    c.library_calls = 1; // SortKeys into the output
    if (!fl) return c;
    c.kernels = 1;                               // the NaN check
    if (nans) c.library_calls++, c.kernels += 2; // canonical keys, SortPairs, gather
    return c;
  }
  // Positions (or canonical keys), SortPairs, line keys and SortPairs by line, the scatter of positions or the
  // gather of values: once, and again on canonical keys when there are NaNs.
  const Counts pass{lines > 1 ? 2u : 1u, lines > 1 ? 3u : 2u};
  c.library_calls = pass.library_calls * (nans ? 2 : 1);
  c.kernels = pass.kernels * (nans ? 2 : 1) + (fl ? 1 : 0); // and the NaN check
  return c;
}

// `x` sorted (or argsorted) along `axis` on the device must be the CPU backend's result, bit for bit.
void check_sort(const Array& x, int axis, bool indices, bool count, const std::string& what) {
  SCOPED_TRACE(what + ", " + seed_note());
  const Shape& shape = x.shape();
  const int ax = axis < 0 ? axis + int(shape.size()) : axis;
  i64 outer = 1, inner = 1;
  for (int d = 0; d < ax; ++d) outer *= shape[std::size_t(d)];
  for (std::size_t d = std::size_t(ax) + 1; d < shape.size(); ++d) inner *= shape[d];
  const i64 len = shape[std::size_t(ax)];
  const std::string in = bytes_of(x);
  const bool nans = has_nan(x);

  const lf::KernelCacheStats before = lf::kernel_cache_stats();
  const Array r = (indices ? lf::argsort(x, axis) : lf::sort(x, axis)).eval();
  const lf::KernelCacheStats after = lf::kernel_cache_stats();

  const DType out_type = indices ? DType::Int64 : x.dtype();
  ASSERT_EQ(r.dtype(), out_type);
  ASSERT_EQ(r.shape(), shape);
  std::string want(in.size() / lf::itemsize(x.dtype()) * lf::itemsize(out_type), '\0');
  if (len > 1) {
    lf::runtime::host_sort(x.dtype(), indices, in.data(), want.data(), outer, len, inner);
  } else if (!indices) {
    want = in; // nothing to sort: make_sort returns the input
  }
  const std::string got = bytes_of(r);
  ASSERT_EQ(got.size(), want.size());
  const std::size_t item = lf::itemsize(out_type);
  for (std::size_t k = 0; k < got.size(); k += item)
    ASSERT_EQ(std::memcmp(got.data() + k, want.data() + k, item), 0) << "element " << k / item;

  // (nothing to sort, or nothing at all: no Sort node, or one that launches nothing)
  if (!count || len <= 1 || outer * inner == 0) return;
  const Counts c = expected_counts(x.dtype(), indices, outer * inner, nans);
  EXPECT_EQ(after.library_calls - before.library_calls, c.library_calls) << (nans ? "with NaNs" : "without NaNs");
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, c.kernels) << (nans ? "with NaNs" : "without NaNs");
}

class CudaSort : public testing::Test {
protected:
  void SetUp() override { LAZYFUSE_SKIP_WITHOUT_GPU(); }
  std::mt19937_64 rng{lazyfuse_test::seed()};
};

TEST_F(CudaSort, EveryTypeAndLengthMatchesTheCpuBackend) {
  std::vector<DType> types = kRealTypes;
  types.push_back(DType::Complex64); // the host path on either backend
  types.push_back(DType::Complex128);
  for (const DType t : types)
    for (const i64 n : {i64(0), i64(1), i64(2), i64(1000), i64(100003), (i64(1) << 20) + 7})
      for (const bool nans : {false, true}) {
        if (nans && !lf::is_inexact(t)) continue;
        const Array x = make_input(t, {n}, nans, rng);
        for (const bool indices : {false, true})
          check_sort(x, -1, indices, true,
                     std::string(indices ? "argsort " : "sort ") + std::string(lf::dtype_name(t)) +
                         " n=" + std::to_string(n) + (nans ? " with NaNs" : ""));
      }
}

TEST_F(CudaSort, AxesOfNDArraysMatchTheCpuBackend) {
  struct Case {
    Shape shape;
    int axis;
  };
  const std::vector<Case> cases = {
      {{37, 1000}, 1}, {{37, 1000}, 0}, {{5, 300, 7}, 1}, {{5, 300, 7}, 0}, {{5, 300, 7}, 2},
      {{4096, 33}, 1}, {{4096, 33}, 0}, {{3, 0, 4}, 1},   {{3, 0, 4}, 0},   {{2, 70001}, -1},
  };
  for (const DType t : kRealTypes)
    for (const Case& c : cases)
      for (const bool indices : {false, true}) {
        const Array x = make_input(t, c.shape, true, rng);
        check_sort(x, c.axis, indices, true,
                   std::string(indices ? "argsort " : "sort ") + std::string(lf::dtype_name(t)) + " " +
                       lf::graph::format_shape(c.shape) + " axis " + std::to_string(c.axis));
      }
}

TEST_F(CudaSort, ViewsAreSortedAsTheirValues) {
  // A transposed (strided) input is made contiguous by a generated copy first; the sort then reads that copy.
  for (const DType t : {DType::Float32, DType::Int16, DType::Float64})
    for (const int axis : {0, 1})
      for (const bool indices : {false, true}) {
        const Array x = make_input(t, {300, 41}, true, rng).transpose().eval();
        check_sort(x, axis, indices, false,
                   std::string(indices ? "argsort " : "sort ") + std::string(lf::dtype_name(t)) +
                       " of a transpose, axis " + std::to_string(axis));
      }
}

TEST_F(CudaSort, SignsAndPayloadsStayWhereNumPyPutsThem) {
  // Ties of -0.0 and +0.0 keep their input order and signs; NaNs of every sign and payload go last in input order.
  const std::vector<std::uint32_t> bits = {0x7fc00000u, 0x80000000u, 0x3f800000u, 0xffc00001u, 0x00000000u,
                                           0xff800000u, 0x7f800001u, 0x80000000u, 0xbf800000u, 0x7f800000u};
  std::vector<float> v(bits.size());
  std::memcpy(v.data(), bits.data(), bits.size() * sizeof(float));
  const Array x = lf::asarray(v).eval();
  const auto s = lf::sort(x).get<float>();
  const std::vector<std::uint32_t> want = {0xff800000u, 0xbf800000u, 0x80000000u, 0x00000000u, 0x80000000u,
                                           0x3f800000u, 0x7f800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u};
  for (std::size_t i = 0; i < want.size(); ++i) {
    std::uint32_t got = 0;
    std::memcpy(&got, &s.data()[i], sizeof got);
    EXPECT_EQ(got, want[i]) << "position " << i;
  }
  const auto idx = lf::argsort(x).get<i64>();
  const std::vector<i64> order = {5, 8, 1, 4, 7, 2, 9, 0, 3, 6};
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(idx.data()[i], order[i]) << "position " << i;
}

TEST_F(CudaSort, ConsumersReadTheSortedBuffer) {
  // A lazy input (one kernel), the sort, and a consumer fused after it.
  const Array x = make_input(DType::Float32, {5000}, false, rng);
  const Array s = (lf::sort(x * 2.0f) + 1.0f).eval();
  const Array want = lf::sort(x).eval() * 2.0f + 1.0f;
  EXPECT_EQ(bytes_of(s), bytes_of(want.eval()));
}

// unique after the sort is one pass of CUB's DeviceSelect::Unique (its tile-state initialization and the pass) and
// the count's read: for every real type the first of each run of equal values of the sorted array, NaNs one value.
// A floating-point sort's NaN check is read with the count (one wait); when there were NaNs, that first unique pass
// is dropped and runs again after the sort on canonical NaN keys.
void check_unique(const Array& x, DType t) {
  const bool had_nans = lf::is_inexact(t) && lf::any(lf::isnan(x)).item<bool>();
  lf::KernelCacheStats before = lf::kernel_cache_stats();
  lf::sort(x, std::nullopt).eval();
  const std::uint64_t sort_kernels = lf::kernel_cache_stats().kernels_launched - before.kernels_launched;
  before = lf::kernel_cache_stats();
  const Array u = lf::unique(x).eval();
  EXPECT_EQ(lf::kernel_cache_stats().kernels_launched - before.kernels_launched, sort_kernels + (had_nans ? 4 : 2))
      << lf::dtype_name(t) << (had_nans ? " with NaNs" : "");
  lf::graph::visit_dtype(t, [&]<class T>() {
    const auto same = [](T a, T b) { return a == b || (a != a && b != b); };
    const lf::HostArray<T> sorted = lf::sort(x, std::nullopt).get<T>(), got = u.get<T>();
    std::vector<T> want;
    for (std::size_t i = 0; i < sorted.size(); ++i)
      if (want.empty() || !same(want.back(), sorted.data()[i])) want.push_back(sorted.data()[i]);
    ASSERT_EQ(got.size(), want.size()) << lf::dtype_name(t) << ", " << lazyfuse_test::seed_note();
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_TRUE(same(got.data()[i], want[i])) << lf::dtype_name(t) << " " << i << ", " << lazyfuse_test::seed_note();
  });
}

TEST_F(CudaSort, UniqueIsOneCubPassAfterTheSort) {
  for (const bool nans : {false, true})
    for (const DType t : kRealTypes)
      if (!nans || lf::is_inexact(t)) check_unique(make_input(t, {(i64(1) << 20) + 3}, nans, rng), t);
}

} // namespace
