// The plan cache: an equal graph over other buffers and scalars reuses the recorded kernels, and what makes graphs
// unequal (alignment, shared buffers, shapes, multiple kernels) never gives a wrong answer. Runs on either backend.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"

#include "codegen/Lower.h"
#include "graph/Build.h"
#include "graph/Node.h"
#include "runtime/PlanCache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using lazyfuse::detail::graph_node;

using namespace lazyfuse;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g{std::random_device{}()};
  return g;
}

std::vector<float> random_values(std::size_t n, float lo = -2, float hi = 2) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng());
  return v;
}

std::uint64_t plan_hits() {
  return kernel_cache_stats().plan_hits;
}

// Relative L2 error of `got` against `want`.
double rel_err(const HostArray<float>& got, const std::vector<double>& want) {
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(err / std::max(norm, 1e-300));
}

Array affine_chain(const Array& x, const Array& y, float a, float b) {
  return sqrt(abs(sin(x) * a + x * y * b - exp(-x * x)));
}

std::vector<double> affine_chain_ref(const std::vector<float>& x, const std::vector<float>& y, float a, float b) {
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double u = x[i], v = y[i];
    r[i] = std::sqrt(std::abs(std::sin(u) * double(a) + u * v * double(b) - std::exp(-u * u)));
  }
  return r;
}

// What the plan cache keys `result` by, and what lowering makes of it (its one kernel).
struct Keyed {
  std::vector<std::uint64_t> words;
  codegen::KernelIR ir;
};
Keyed key_and_lower(const Array& result) {
  Keyed k;
  runtime::GraphSignature sig;
  runtime::compute_signature({graph_node(result)}, {}, sig);
  k.words.assign(sig.words().begin(), sig.words().end());
  auto plans = fusion::partition({graph_node(result)}, {});
  EXPECT_EQ(plans.size(), 1u);
  k.ir = codegen::lower(plans[0]).ir;
  return k;
}

bool same_kernel(const codegen::KernelIR& a, const codegen::KernelIR& b) {
  return a.schedule == b.schedule && a.code == b.code && a.inputs == b.inputs && a.params == b.params &&
         a.unravels == b.unravels && a.index32 == b.index32;
}

} // namespace

TEST(PlanCache, EqualGraphOverOtherBuffersAndScalarsIsReplayedCorrectly) {
  const std::size_t n = 3001;
  float a = 0.25f, b = 0.5f;
  {
    auto x = random_values(n), y = random_values(n);
    auto r = affine_chain(asarray(x, {std::int64_t(n)}), asarray(y, {std::int64_t(n)}), a, b).get<float>();
    EXPECT_LT(rel_err(r, affine_chain_ref(x, y, a, b)), 1e-6);
  }
  for (int round = 0; round < 3; ++round) {
    auto x = random_values(n), y = random_values(n);
    a += 0.125f;
    b -= 0.375f;
    auto xa = asarray(x, {std::int64_t(n)}).eval(), ya = asarray(y, {std::int64_t(n)}).eval();
    const auto hits = plan_hits(), launched = kernel_cache_stats().kernels_launched;
    auto r = affine_chain(xa, ya, a, b).eval();
    EXPECT_EQ(plan_hits(), hits + 1) << "round " << round << ": the same structure should reuse its plans";
    EXPECT_EQ(kernel_cache_stats().kernels_launched, launched + 1);
    EXPECT_LT(rel_err(r.get<float>(), affine_chain_ref(x, y, a, b)), 1e-6) << "round " << round;
  }
}

TEST(PlanCache, AlignmentSharedBuffersAndShapesAreStructure) {
  const std::int64_t n = 4099;
  auto hx = random_values(std::size_t(n)), hy = random_values(std::size_t(n));
  auto x = asarray(hx, {n}).eval(), y = asarray(hy, {n}).eval();
  std::vector<float> x1(hx.begin() + 1, hx.end()), y1(hy.begin() + 1, hy.end()), x2(hx.begin() + 2, hx.end());
  // Each call twice: the second may be a replay, and must still be right.
  for (int twice = 0; twice < 2; ++twice) {
    // Aligned leaves, then the same shapes at an offset of one element (no vector loads).
    auto aligned = affine_chain(x(slice(0, n - 1)), y(slice(0, n - 1)), 0.5f, 0.25f).get<float>();
    std::vector<float> hx0(hx.begin(), hx.end() - 1), hy0(hy.begin(), hy.end() - 1);
    EXPECT_LT(rel_err(aligned, affine_chain_ref(hx0, hy0, 0.5f, 0.25f)), 1e-6);
    auto shifted = affine_chain(x(slice(1, none)), y(slice(1, none)), 0.5f, 0.25f).get<float>();
    EXPECT_LT(rel_err(shifted, affine_chain_ref(x1, y1, 0.5f, 0.25f)), 1e-6);
    // One buffer read twice, then two buffers: kernels with one input and with two.
    auto same = affine_chain(x, x, 0.5f, 0.25f).get<float>();
    EXPECT_LT(rel_err(same, affine_chain_ref(hx, hx, 0.5f, 0.25f)), 1e-6);
    auto both = affine_chain(x, y, 0.5f, 0.25f).get<float>();
    EXPECT_LT(rel_err(both, affine_chain_ref(hx, hy, 0.5f, 0.25f)), 1e-6);
    // One buffer at two offsets.
    auto offsets = affine_chain(x(slice(1, n - 1)), x(slice(2, none)), 0.5f, 0.25f).get<float>();
    std::vector<float> x1s(hx.begin() + 1, hx.end() - 1);
    EXPECT_LT(rel_err(offsets, affine_chain_ref(x1s, x2, 0.5f, 0.25f)), 1e-6);
  }
  // Another shape is another graph: one this process has not evaluated before (the test may run again in the same
  // process, --gtest_repeat).
  static std::int64_t another = 17;
  const auto hits = plan_hits();
  auto small = affine_chain(x(slice(0, another)), y(slice(0, another)), 0.5f, 0.25f).eval();
  ++another;
  EXPECT_EQ(plan_hits(), hits);
}

TEST(PlanCache, MultiKernelMaterializationsReplayInOrder) {
  // Two outputs of different shapes (two kernels), one reading an intermediate the other stores (a reduction
  // used at shifted indices is stored first).
  const std::int64_t rows = 37, cols = 53;
  for (int round = 0; round < 3; ++round) {
    auto hm = random_values(std::size_t(rows * cols));
    const float s = 1.5f + float(round);
    auto m = asarray(hm, {rows, cols}).eval();
    auto row_max = max(m * s, 1, true);
    auto centred = m * s - row_max;
    auto total = sum(exp(centred), 1);
    const auto hits = plan_hits();
    eval(centred, total);
    if (round > 0) {
      EXPECT_EQ(plan_hits(), hits + 1) << "round " << round;
    }
    auto hc = centred.get<float>(), ht = total.get<float>();
    std::vector<double> want_c(std::size_t(rows * cols)), want_t(std::size_t(rows), 0.0);
    for (std::int64_t r = 0; r < rows; ++r) {
      double mx = -INFINITY;
      for (std::int64_t c = 0; c < cols; ++c) mx = std::max(mx, double(float(hm[std::size_t(r * cols + c)] * s)));
      for (std::int64_t c = 0; c < cols; ++c) {
        const double v = double(float(hm[std::size_t(r * cols + c)] * s)) - mx;
        want_c[std::size_t(r * cols + c)] = v;
        want_t[std::size_t(r)] += std::exp(v);
      }
    }
    EXPECT_LT(rel_err(hc, want_c), 1e-6) << "round " << round;
    EXPECT_LT(rel_err(ht, want_t), 1e-6) << "round " << round;
  }
}

TEST(PlanCache, ScalarsFromFillsOnlyAreArguments) {
  // Iota start and step are part of the structure; fills are arguments. Both must come out right on a replay.
  for (int round = 0; round < 3; ++round) {
    const double start = 1.0 + round, fill = 0.5 * round - 1.0;
    auto r = (arange(start, start + 64.0, 1.0 + 0.5 * round) * fill + full({1}, fill)).get<double>();
    for (std::size_t i = 0; i < r.size(); ++i)
      EXPECT_DOUBLE_EQ(r[i], (start + double(i) * (1.0 + 0.5 * round)) * fill + fill) << "round " << round;
  }
}

TEST(PlanCache, KeepsNoNodeOfAReplayedGraphAlive) {
  const std::size_t before = graph::live_node_count();
  {
    const std::size_t n = 257;
    auto x = asarray(random_values(n), {std::int64_t(n)}), y = asarray(random_values(n), {std::int64_t(n)});
    for (int k = 0; k < 3; ++k) affine_chain(x, y, 0.5f + float(k), 0.25f).eval();
  }
  EXPECT_EQ(graph::live_node_count(), before) << "the recorded kernels must hold no node or buffer";
}

// A gather's graph is replayed like any other, its checks bound to the replayed graph's index arrays: each round
// reads its own indices (a lazy index array among them), and an out-of-range index on a replay names that round's
// value. The cache keeps none of the graph alive, also after the IndexError.
TEST(PlanCache, GathersAreReplayedWithTheirOwnIndexArrays) {
  const std::size_t before = graph::live_node_count();
  {
    const std::int64_t n = 1000, m = 777;
    const auto values = random_values(std::size_t(n));
    Array x = asarray(values, {n}).eval();
    std::uniform_int_distribution<std::int64_t> pick(-n, n - 1);
    for (int round = 0; round < 4; ++round) {
      std::vector<std::int64_t> idx(static_cast<std::size_t>(m));
      for (auto& v : idx) v = pick(rng());
      if (round == 3) idx[500] = n + 41;
      Array ia = asarray(idx, {m}).eval();
      const auto hits = plan_hits();
      Array r = x(ia) * 2.0f - take(x, (arange(m) * 3 + std::int64_t(round)) % n);
      if (round == 3) {
        try {
          r.eval();
          ADD_FAILURE() << "no IndexError";
        } catch (const IndexError& e) {
          EXPECT_EQ(std::string(e.what()), "index 1041 is out of bounds for axis 0 with size 1000");
        }
        EXPECT_EQ(plan_hits(), hits + 1) << "the replay raised it";
        continue;
      }
      r.eval();
      if (round > 0) {
        EXPECT_EQ(plan_hits(), hits + 1) << "round " << round;
      }
      const auto got = r.get<float>();
      for (std::int64_t k = 0; k < m; ++k) {
        const std::int64_t at = idx[std::size_t(k)] < 0 ? idx[std::size_t(k)] + n : idx[std::size_t(k)];
        const float want = values[std::size_t(at)] * 2.0f - values[std::size_t((k * 3 + round) % n)];
        ASSERT_EQ(got[std::size_t(k)], want) << "round " << round << ", element " << k;
      }
    }
  }
  EXPECT_EQ(graph::live_node_count(), before) << "the recorded kernels must hold no node or buffer";
}

// The signature asks lowering's own alignment_class: graphs over leaves at different offsets get one signature
// exactly when lowering gives them one kernel, and each replay is right.
TEST(PlanCache, SignatureDistinguishesExactlyLoweringsAlignmentClasses) {
  const std::int64_t n = 1000, pad = 8;
  auto hx = random_values(std::size_t(n + pad)), hy = random_values(std::size_t(n));
  auto x = asarray(hx, {n + pad}).eval(), y = asarray(hy, {n}).eval();
  auto at_offset = [&](std::int64_t k) { return affine_chain(x(slice(k, k + n)), y, 0.5f, 0.25f); };
  std::vector<Keyed> keyed;
  for (std::int64_t k = 0; k < pad; ++k) keyed.push_back(key_and_lower(at_offset(k)));
  int vector_classes = 0;
  for (std::int64_t a = 0; a < pad; ++a) {
    const void* first = static_cast<const float*>(graph_node(x)->buffer()->storage->data) + a;
    vector_classes += codegen::alignment_class(first, DType::Float32) == codegen::AlignmentClass::Vector;
    for (std::int64_t b = 0; b < pad; ++b)
      EXPECT_EQ(keyed[std::size_t(a)].words == keyed[std::size_t(b)].words,
                same_kernel(keyed[std::size_t(a)].ir, keyed[std::size_t(b)].ir))
          << "offsets " << a << " and " << b;
  }
  // 8 float offsets span two 16-byte vectors: two aligned starts, six unaligned ones.
  EXPECT_EQ(vector_classes, 2);
  for (int twice = 0; twice < 2; ++twice)
    for (std::int64_t k = 0; k < pad; ++k) {
      std::vector<float> hxk(hx.begin() + k, hx.begin() + k + n);
      const auto hits = plan_hits();
      auto got = at_offset(k).get<float>();
      EXPECT_LT(rel_err(got, affine_chain_ref(hxk, hy, 0.5f, 0.25f)), 1e-6) << "offset " << k;
      if (twice) {
        EXPECT_EQ(plan_hits(), hits + 1) << "offset " << k << ": seen before";
      }
    }
}

namespace {

// Storage that claims `bytes` over a small host array: the index width depends on the allocation's size, which a
// test cannot allocate (2^30 elements), and a kernel over a few elements reads only those.
struct LargeClaimStorage : graph::Storage {
  LargeClaimStorage(std::vector<float>& host, std::size_t claimed) {
    data = host.data();
    bytes = claimed;
  }
};

} // namespace

// Likewise for fits_index32: a leaf whose allocation is too large for 32-bit indices gives another signature exactly
// when it gives another kernel (64-bit indices).
TEST(PlanCache, SignatureDistinguishesExactlyLoweringsIndexWidth) {
  std::vector<float> host = random_values(64);
  const std::int64_t limit = codegen::kIndex32Limit;
  const std::vector<std::size_t> claims = {host.size() * sizeof(float), std::size_t(limit - 1) * sizeof(float),
                                           std::size_t(limit) * sizeof(float), std::size_t(limit + 4096) * 4};
  std::vector<std::shared_ptr<graph::Storage>> storages;
  std::vector<Keyed> keyed;
  std::vector<Array> leaves;
  for (auto bytes : claims) {
    storages.push_back(std::make_shared<LargeClaimStorage>(host, bytes));
    leaves.push_back(detail::ApiAccess::adopt(graph::make_buffer(storages.back(), DType::Float32, {64}, 0, {1})));
    keyed.push_back(key_and_lower(leaves.back() * 3.0f + 1.0f));
  }
  EXPECT_TRUE(keyed[0].ir.index32);
  EXPECT_TRUE(keyed[1].ir.index32);
  EXPECT_FALSE(keyed[2].ir.index32);
  EXPECT_FALSE(keyed[3].ir.index32);
  for (std::size_t a = 0; a < claims.size(); ++a)
    for (std::size_t b = 0; b < claims.size(); ++b)
      EXPECT_EQ(keyed[a].words == keyed[b].words, same_kernel(keyed[a].ir, keyed[b].ir)) << a << " " << b;
  // Replays read host memory: only the CPU backend can run them.
  if (backend() != Backend::Cpu) return;
  for (int twice = 0; twice < 2; ++twice)
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      auto got = (leaves[k] * 3.0f + 1.0f).get<float>();
      for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(got[i], host[i] * 3.0f + 1.0f) << k << " " << i;
    }
}
