// The graph layer: hash-consing (equal expressions are one node), the structural hash, release of history,
// bounded laziness over a million ops, and iterative destruction of a million-deep graph.
// Backend-agnostic: the same tests run on the CPU backend and on a GPU.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "graph/Assert.h"
#include "graph/FlatTable.h"
#include "graph/Node.h"
#include "test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace lf = lazyfuse;
using lazyfuse::detail::graph_node;
using lf::Array;
using lf::DType;
using lf::none;
using lf::slice;
using lf::graph::live_node_count;

namespace {

// Sets a configuration value for one scope and forgets the override afterwards (even when a test fails).
class ConfigOverride {
public:
  ConfigOverride(std::string name, const std::string& value) : name_(std::move(name)) { lf::config::set(name_, value); }
  ~ConfigOverride() { lf::config::reset(name_); }
  ConfigOverride(const ConfigOverride&) = delete;
  ConfigOverride& operator=(const ConfigOverride&) = delete;

private:
  std::string name_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Array vec(std::vector<float> v) {
  return lf::asarray(v);
}

// ---- hash-consing -------------------------------------------------------------------------------------------

TEST(HashConsing, EqualExpressionsAreOneNode) {
  Array a = vec({1, 2, 3}), b = vec({4, 5, 6});
  EXPECT_EQ(graph_node(a + b), graph_node(a + b));
  EXPECT_EQ(graph_node(a + b).get(), graph_node(a + b).get());
  Array p = a + 1.0, q = a + 1.0;
  EXPECT_EQ(graph_node(p), graph_node(q));
  EXPECT_EQ(graph_node(a * b + 2.0f), graph_node(a * b + 2.0f));
  EXPECT_EQ(graph_node(lf::sin(a)), graph_node(lf::sin(a)));
  // Views are hash-consed too.
  Array c = (a + b).T();
  EXPECT_EQ(graph_node(a(slice(none, none, -1))), graph_node(a(slice(none, none, -1))));
  EXPECT_EQ(graph_node((a + b)(slice(1, none))), graph_node((a + b)(slice(1, none))));
  EXPECT_EQ(graph_node(lf::roll(a + b, 1)), graph_node(lf::roll(a + b, 1)));
  EXPECT_EQ(graph_node(c), graph_node(a + b)); // a 1-D transpose is the array itself
  // A whole-array view is the array itself.
  EXPECT_EQ(graph_node(a(lf::all_of)), graph_node(a));
  Array m = lf::asarray({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT_EQ(graph_node(m.T().T()), graph_node(m));
  EXPECT_EQ(graph_node((m * 2.0).T().T()), graph_node(m * 2.0));
  // Still the same node after it was materialized, while it is alive.
  Array s = a + b;
  s.eval();
  EXPECT_TRUE(s.is_materialized());
  EXPECT_EQ(graph_node(a + b), graph_node(s));
}

// The intern table removes a dropped node by shifting the entries after it back. Thousands of nodes built and
// dropped in random order (each round keeps a random half alive; the table grows, wraps and shrinks its clusters):
// a node still alive must be found again, and a dropped one must be built anew.
TEST(HashConsing, NodesDroppedInAnyOrderLeaveTheOthersFindable) {
  Array a = vec({1, 2, 3});
  const std::size_t live_before = live_node_count();
  std::uint64_t state = 12345;
  auto coin = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) & 1;
  };
  constexpr std::size_t kValues = 3000;
  std::vector<Array> kept(kValues);
  std::vector<bool> alive(kValues, false);
  std::vector<std::uint64_t> serial(kValues, 0);
  for (int round = 0; round < 6; ++round) {
    for (std::size_t v = 0; v < kValues; ++v) {
      Array e = a + double(v);
      if (alive[v])
        ASSERT_EQ(graph_node(e)->serial, serial[v]) << "round " << round << ": a live node was not found, value " << v;
      else
        ASSERT_NE(graph_node(e)->serial, serial[v]) << "round " << round << ": a dropped node was found, value " << v;
      serial[v] = graph_node(e)->serial;
      alive[v] = coin() != 0;
      kept[v] = alive[v] ? e : Array();
    }
    // Drop about a third of the survivors, walking from a random point backwards (another order than built).
    const std::size_t start = std::size_t(state % kValues);
    for (std::size_t k = 0; k < kValues; ++k) {
      const std::size_t v = (start + kValues - k) % kValues;
      if (alive[v] && coin() && coin()) {
        kept[v] = Array();
        alive[v] = false;
      }
    }
  }
  kept.clear();
  EXPECT_EQ(live_node_count(), live_before);
}

// Node blocks come from slabs of a 16 MiB region, then from operator new (graph/Node.cpp, BlockPool): more nodes
// alive at once than the region holds are built, hold their values, and all leave when dropped; a second round
// reuses the kept blocks.
TEST(HashConsing, MoreNodesThanTheSlabRegionHoldsAreBuiltAndFreed) {
  Array a = vec({1, 2, 3});
  const std::size_t live_before = live_node_count();
  constexpr int kNodes = 40000; // 2 nodes each (the sum and its fill), beyond 16 MiB of 512-byte nodes
  for (int round = 0; round < 2; ++round) {
    std::vector<Array> kept;
    kept.reserve(kNodes);
    for (int k = 0; k < kNodes; ++k) kept.push_back(a + float(k));
    EXPECT_GE(live_node_count(), live_before + 2 * kNodes) << "round " << round;
    for (int k : {0, 1, kNodes / 2, kNodes - 1})
      EXPECT_EQ(kept[std::size_t(k)].get<float>().to_vector(),
                (std::vector<float>{1.0f + float(k), 2.0f + float(k), 3.0f + float(k)}))
          << "round " << round << ", value " << k;
    kept.clear();
    EXPECT_EQ(live_node_count(), live_before) << "round " << round;
  }
}

// Scalar ops find their fills among the last few this thread built (graph/Build.cpp, make_fill) before asking the
// intern table: what they find must be exactly the node the table holds, for every value, shape and type, alive or
// dropped, including more fills than that list keeps.
TEST(HashConsing, FillsFoundAgainAreTheNodesOfTheInternTable) {
  namespace g = lf::graph;
  auto table_fill = [](const lf::Shape& shape, DType type, double f, std::int64_t i) {
    g::NodeSpec spec;
    spec.kind = g::NodeKind::Fill;
    spec.dtype = type;
    spec.shape = shape;
    spec.fvalue = f;
    spec.ivalue = i;
    return g::intern(std::move(spec), {});
  };
  const std::vector<lf::Shape> shapes{{3}, {4}, {2, 3}};
  const std::vector<double> values{0.5, -0.0, 0.0, 1.5, 2.5, 3.5};
  std::vector<Array> kept;
  for (int round = 0; round < 3; ++round) {
    for (double v : values)
      for (const auto& shape : shapes)
        for (DType type : {DType::Float32, DType::Float64, DType::Int32}) {
          const Array fill = lf::full(shape, v, type);
          const bool integer = type == DType::Int32;
          const g::NodePtr expected = table_fill(shape, type, integer ? 0.0 : v, integer ? std::int64_t(v) : 0);
          ASSERT_EQ(graph_node(fill).get(), expected.get()) << "value " << v << ", shape " << g::format_shape(shape)
                                                            << ", " << lf::dtype_name(type) << ", round " << round;
          if (round == 1) kept.push_back(fill); // alive in round 2: found again; dropped in rounds 0 and 1
        }
  }
  const std::uint64_t serial = graph_node(kept.front())->serial;
  kept.clear();
  EXPECT_NE(graph_node(lf::full(shapes.front(), values.front(), DType::Float32))->serial, serial)
      << "a dropped fill was found again";
}

// A weak reference finds its node while a handle keeps it alive, and nothing once it died, also when the freed block
// was given to a new node of the same structure (graph/Node.h, WeakNodePtr).
TEST(HashConsing, WeakReferencesFindOnlyTheirLiveNode) {
  namespace g = lf::graph;
  g::NodePtr node = graph_node(lf::full({5}, 0.25, DType::Float64) + 1.0);
  const g::Node* address = node.get();
  const g::WeakNodePtr weak(*node);
  const std::uint64_t weak_hash = node->hash;
  EXPECT_EQ(weak.lock(), node);
  g::NodePtr copy = node;
  node.reset();
  EXPECT_EQ(weak.lock().get(), address) << "a copy still holds the node";
  copy.reset();
  EXPECT_EQ(weak.lock(), nullptr) << "the node died";
  // The same structure again: a node of the dead one's hash is in the table, and (blocks being reused last in, first
  // out, without ASan) the new fill sits at the dead node's address.
  const g::NodePtr rebuilt = graph_node(lf::full({5}, 0.25, DType::Float64) + 1.0);
  EXPECT_EQ(rebuilt->hash, weak_hash);
  EXPECT_EQ(weak.lock(), nullptr) << "a new node of the same structure, or in the dead one's block";
  EXPECT_EQ(g::WeakNodePtr().lock(), nullptr);
}

// An operator takes the node of a temporary (or moved) Array operand over instead of counting a reference
// (Operand(Array&&)); an Array passed as an lvalue, or the same moved Array on both sides, is left as it was.
TEST(HashConsing, TemporaryOperandsAreTakenOver) {
  const std::vector<float> values{0.5f, -1.25f, 3.0f};
  const Array x = lf::asarray(values);
  Array product = x * 2.0f;
  const lf::graph::Node* product_node = graph_node(product).get();
  const Array sum = std::move(product) + 1.0f;
  EXPECT_FALSE(product.valid()) << "the moved operand's node was taken over"; // NOLINT(bugprone-use-after-move)
  ASSERT_EQ(graph_node(sum)->sources_unlocked().size(), 2u);
  EXPECT_EQ(graph_node(sum)->sources_unlocked()[0].get(), product_node);
  EXPECT_TRUE(x.valid());

  Array twice = x * 3.0f;
  const Array doubled = std::move(twice) + std::move(twice);
  EXPECT_TRUE(twice.valid()) << "one Array on both sides is read, not taken"; // NOLINT(bugprone-use-after-move)
  const Array other = x - 1.0f;
  const Array both = (x * 4.0f) * (x - 1.0f) + other;
  const auto got_sum = sum.get<float>(), got_doubled = doubled.get<float>(), got_both = both.get<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    EXPECT_FLOAT_EQ(got_sum[i], v * 2.0f + 1.0f) << i;
    EXPECT_FLOAT_EQ(got_doubled[i], v * 3.0f + v * 3.0f) << i;
    EXPECT_FLOAT_EQ(got_both[i], (v * 4.0f) * (v - 1.0f) + (v - 1.0f)) << i;
  }
  EXPECT_TRUE(other.valid());
}

TEST(HashConsing, DifferentExpressionsAreDifferentNodes) {
  Array a = vec({1, 2, 3}), b = vec({4, 5, 6});
  Array p1 = a + 1.0, p2 = a + 2.0;
  EXPECT_NE(graph_node(p1), graph_node(p2));
  EXPECT_NE(graph_node(p1)->hash, graph_node(p2)->hash);
  Array ai = lf::arange(3);
  EXPECT_NE(graph_node(ai + 1), graph_node(ai + 2));
  EXPECT_EQ(graph_node(ai + 1), graph_node(ai + 1));
  EXPECT_NE(graph_node(a + b), graph_node(b + a));
  EXPECT_NE(graph_node(a + b), graph_node(a - b));
  EXPECT_NE(graph_node(a + b), graph_node((a + b).astype(DType::Float64)));
  EXPECT_NE(graph_node(lf::roll(a, 1)), graph_node(lf::roll(a, 2)));
  EXPECT_NE(graph_node(a(slice(none, none, -1))), graph_node(a(slice(none, none, 2))));
  EXPECT_NE(graph_node(lf::zeros({2, 3})), graph_node(lf::zeros({3, 2})));
  EXPECT_NE(graph_node(lf::zeros({3})), graph_node(lf::zeros({3}, DType::Float32)));
  EXPECT_NE(graph_node(lf::full({3}, 0.0)), graph_node(lf::full({3}, -0.0))) << "0.0 and -0.0 are different values";
  // The same data uploaded twice is two buffers, and expressions over them are different nodes.
  Array a2 = vec({1, 2, 3});
  EXPECT_NE(graph_node(a), graph_node(a2));
  EXPECT_NE(graph_node(a + b), graph_node(a2 + b));
}

TEST(HashConsing, HashExcludesBufferIdentity) {
  Array a = vec({1, 2, 3}), b = vec({4, 5, 6});
  Array c = vec({7, 8, 9}), d = vec({0, 0, 0});
  EXPECT_EQ(graph_node(a)->hash, graph_node(c)->hash);
  Array x = (a + b) * 2.0f, y = (c + d) * 2.0f;
  EXPECT_NE(graph_node(x), graph_node(y));
  EXPECT_EQ(graph_node(x)->hash, graph_node(y)->hash);
  EXPECT_NE(graph_node(x)->serial, graph_node(y)->serial);
  Array vx = lf::flip(a * b)(slice(1, none)), vy = lf::flip(c * d)(slice(1, none));
  EXPECT_NE(graph_node(vx), graph_node(vy));
  EXPECT_EQ(graph_node(vx)->hash, graph_node(vy)->hash);
  // Structure still matters: a different op, shape or view gives a different hash.
  EXPECT_NE(graph_node(a + b)->hash, graph_node(a - b)->hash);
  EXPECT_NE(graph_node(lf::flip(a * b))->hash, graph_node(lf::roll(a * b, 1))->hash);
}

TEST(HashConsing, HashDoesNotDependOnCreationOrder) {
  // Build (a + b) * (c - d) + sin(a) twice, creating the inputs and the subexpressions in opposite orders.
  std::uint64_t h1, h2;
  {
    Array a = vec({1, 2}), b = vec({3, 4}), c = vec({5, 6}), d = vec({7, 8});
    Array s = a + b;
    Array t = c - d;
    Array u = lf::sin(a);
    h1 = graph_node(s * t + u)->hash;
  }
  {
    Array d = vec({0, 1}), c = vec({2, 3}), b = vec({4, 5}), a = vec({6, 7});
    Array u = lf::sin(a);
    Array t = c - d;
    Array unrelated = (a * 3.0f)(slice(none, none, -1)); // shifts every counter in between
    Array s = a + b;
    h2 = graph_node(s * t + u)->hash;
  }
  EXPECT_EQ(h1, h2);
  // And in the same scope, with the first expression still alive.
  Array a = vec({1, 2}), b = vec({3, 4});
  Array e1 = lf::exp(a) + b;
  Array b2 = vec({3, 4}), a2 = vec({1, 2});
  Array e2 = b2 + 0.0f;
  Array e3 = lf::exp(a2) + b2;
  EXPECT_NE(graph_node(e1), graph_node(e3));
  EXPECT_EQ(graph_node(e1)->hash, graph_node(e3)->hash);
}

// ---- memory: history is released ----------------------------------------------------------------------------

TEST(Release, LoopWithEvalKeepsNodeCountBounded) {
  Array x = lf::zeros({16}, DType::Float32) + 0.0f;
  x.eval();
  const std::size_t before = live_node_count();
  std::size_t peak = before;
  for (int i = 0; i < 1000; ++i) {
    x = x * 2.0f + 1.0f;
    x.eval();
    x = x * 0.5f; // x_{n+1} = x_n + 0.5: exact in float32
    x.eval();
    peak = std::max(peak, live_node_count());
  }
  const std::size_t after = live_node_count();
  EXPECT_LE(after, before + 8) << "before " << before << ", after " << after;
  EXPECT_LE(peak, before + 16) << "before " << before << ", peak " << peak;
  auto h = x.get<float>();
  for (std::size_t i = 0; i < h.size(); ++i) EXPECT_EQ(h[i], 500.0f);
}

TEST(Release, LoopWithoutEvalKeepsNodeCountBounded) {
  // Bounded laziness: without explicit evaluation the graph is cut at LAZYFUSE_MAX_DEPTH and history freed.
  Array x = lf::ones({8}, DType::Float32) * 1.0f;
  x.eval();
  const std::size_t before = live_node_count();
  std::size_t peak = before;
  for (int i = 0; i < 5000; ++i) {
    x = x * 1.0f + 1.0f;
    peak = std::max(peak, live_node_count());
  }
  x.eval();
  const std::size_t after = live_node_count();
  EXPECT_LE(after, before + 8) << "before " << before << ", after " << after;
  const int max_depth = std::stoi(lf::config::get("LAZYFUSE_MAX_DEPTH"));
  EXPECT_LE(peak, before + std::size_t(4 * max_depth + 16)) << "before " << before << ", peak " << peak;
  EXPECT_EQ(x.get<float>()[0], 5001.0f);
}

// Bounded laziness in bytes: a loop that adds a fresh array at every step, never evaluated, keeps every one alive
// until it is materialized. Past LAZYFUSE_MAX_PINNED_MIB the step is materialized as it is built, and the values
// are those of the loop evaluated step by step.
TEST(Release, LoopReadingAFreshArrayEveryStepIsMaterializedPastThePinnedBound) {
  ConfigOverride limit("LAZYFUSE_MAX_PINNED_MIB", "1");
  constexpr std::int64_t n = 1 << 16; // 256 KiB of float32
  constexpr std::int64_t step_bytes = n * 4;
  std::mt19937 rng(unsigned(lazyfuse_test::seed()));
  std::uniform_real_distribution<float> uniform(-1, 1);
  auto fresh = [&] {
    std::vector<float> v(n);
    for (auto& x : v) x = uniform(rng);
    return v;
  };
  std::vector<float> x0 = fresh(), expected = x0;
  Array x = lf::asarray(x0);
  int materialized_steps = 0;
  for (int step = 0; step < 24; ++step) {
    const std::vector<float> y = fresh();
    for (std::int64_t i = 0; i < n; ++i) expected[std::size_t(i)] += y[std::size_t(i)];
    x = x + lf::asarray(y);
    const auto& node = *graph_node(x);
    if (x.is_materialized()) ++materialized_steps;
    ASSERT_LE(node.pinned_bytes, (std::int64_t(1) << 20) + step_bytes)
        << "step " << step << ", " << lazyfuse_test::seed_note();
  }
  EXPECT_GE(materialized_steps, 4) << "24 steps of 256 KiB each under a 1 MiB bound";
  const auto got = x.get<float>();
  for (std::int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(got[std::size_t(i)], expected[std::size_t(i)]) << "element " << i;
}

// The bound counts what a loop keeps alive, not what it reads: arrays read again at every step and a state read
// twice per step are counted once, so such a loop stays one lazy graph (one kernel at the end).
TEST(Release, LoopReadingTheSameArraysAgainStaysLazyUnderThePinnedBound) {
  ConfigOverride limit("LAZYFUSE_MAX_PINNED_MIB", "1");
  constexpr std::int64_t n = 1 << 16;
  Array x = lf::random::uniform(-0.5, 0.5, {n}, DType::Float32).eval();
  const Array f = lf::random::uniform(-0.5, 0.5, {n}, DType::Float32).eval();
  const Array g = lf::random::uniform(-0.5, 0.5, {n}, DType::Float32).eval();
  for (int step = 0; step < 200; ++step) {
    x = (x * x * 0.25f + x) * 0.5f + f - g * 0.125f;
    ASSERT_FALSE(x.is_materialized()) << "step " << step << ": materialized, keeping about "
                                      << graph_node(x)->pinned_bytes << " bytes alive";
  }
  EXPECT_EQ(graph_node(x)->pinned_bytes, 3 * n * 4) << "x0, f and g, each counted once";
}

// Inputs larger than the bound do not make an expression over them eager: storing a softmax's row maximum early, or
// a product of three such arrays, would let go of nothing (the inputs stay alive) and cost a pass.
TEST(Release, ExpressionsOverInputsLargerThanThePinnedBoundStayLazy) {
  ConfigOverride limit("LAZYFUSE_MAX_PINNED_MIB", "1");
  const Array x = lf::random::uniform(-1, 1, {512, 1024}, DType::Float32).eval(); // 2 MiB each
  const Array y = lf::random::uniform(-1, 1, {512, 1024}, DType::Float32).eval();
  const Array z = lf::random::uniform(-1, 1, {512, 1024}, DType::Float32).eval();
  const Array row_max = lf::max(x, 1, true);
  const Array e = lf::exp(x - row_max);
  const Array softmax = e / lf::sum(e, 1, true);
  const Array product = x * y + z;
  for (const Array* a : {&row_max, &e, &softmax, &product})
    EXPECT_FALSE(a->is_materialized()) << "pinning about " << graph_node(*a)->pinned_bytes << " bytes";
}

TEST(Release, DroppedExpressionsFreeTheirNodes) {
  const std::size_t before = live_node_count();
  {
    Array a = vec({1, 2, 3});
    Array e = a;
    for (int i = 0; i < 30; ++i) e = lf::flip(e + 1.0f)(slice(none, none, 1)); // 60 deep: below LAZYFUSE_MAX_DEPTH
    EXPECT_FALSE(e.is_materialized());
    EXPECT_GT(live_node_count(), before + 60);
  }
  EXPECT_EQ(live_node_count(), before);
}

// ---- eval of several arrays -----------------------------------------------------------------------------------

TEST(Eval, SeveralArraysAreAllMaterialized) {
  Array a = vec({1, 2, 3}), b = vec({10, 20, 30});
  Array s = a + b, p = a * b;
  EXPECT_FALSE(s.is_materialized());
  EXPECT_FALSE(p.is_materialized());
  lf::eval(s, p);
  EXPECT_TRUE(s.is_materialized());
  EXPECT_TRUE(p.is_materialized());
  EXPECT_EQ(s.get<float>().to_vector(), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(p.get<float>().to_vector(), (std::vector<float>{10, 40, 90}));
  // Different shapes, a view, a repeated argument and an already materialized one.
  Array m = lf::asarray({{1.0, 2.0}, {3.0, 4.0}});
  Array t = (m * 2.0).T(), u = lf::exp(a)(slice(none, none, -1)), r = lf::roll(b - 1.0f, 1);
  lf::eval(t, u, t, a, r);
  EXPECT_TRUE(t.is_materialized());
  EXPECT_TRUE(u.is_materialized());
  EXPECT_TRUE(r.is_materialized());
  EXPECT_TRUE(a.is_materialized());
  EXPECT_EQ(t.get<double>().to_vector(), (std::vector<double>{2, 6, 4, 8}));
  EXPECT_EQ(r.get<float>().to_vector(), (std::vector<float>{29, 9, 19}));
  auto hu = u.get<float>();
  EXPECT_NEAR(hu[0], std::exp(3.0f), 1e-3);
  EXPECT_NEAR(hu[2], std::exp(1.0f), 1e-5);
}

// ---- a million ops ----------------------------------------------------------------------------------------------

TEST(MillionOps, ChainWithBoundedLaziness) {
  auto t0 = std::chrono::steady_clock::now();
  Array x = vec({0, 1, 2, 3});
  for (int i = 0; i < 1000000; ++i) x = x + 1.0f;
  const double build_s = seconds_since(t0);
  auto h = x.get<float>();
  std::printf("[ info     ] 1e6 x = x + 1.0f: built in %.2f s, total %.2f s\n", build_s, seconds_since(t0));
  EXPECT_EQ(h.to_vector(), (std::vector<float>{1000000, 1000001, 1000002, 1000003}));
}

// A chain of `depth` nodes alternating an op and a view, with bounded laziness switched off.
Array deep_chain(const Array& start, int depth) {
  Array x = start;
  for (int i = 0; i < depth / 2; ++i) {
    x = x + 1.0f;
    x = lf::flip(x); // a view of an expression: one more node each time
  }
  return x;
}

TEST(MillionOps, MillionDeepChainIsDestroyedWithoutStackOverflow) {
  ConfigOverride depth("LAZYFUSE_MAX_DEPTH", "2000000");
  const std::size_t before = live_node_count();
  auto t0 = std::chrono::steady_clock::now();
  {
    Array x = deep_chain(vec({0, 1, 2, 3}), 1000000);
    EXPECT_FALSE(x.is_materialized());
    EXPECT_GE(graph_node(x)->depth, 1000000);
    EXPECT_GE(live_node_count(), before + 1000000);
    std::printf("[ info     ] 1e6-deep chain built in %.2f s\n", seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
  } // the whole chain goes here: a recursive destructor would overflow the stack
  std::printf("[ info     ] 1e6-deep chain destroyed in %.2f s\n", seconds_since(t0));
  EXPECT_LE(live_node_count(), before + 4);
}

TEST(MillionOps, DeepChainIsEvaluated) {
  // A million nodes with bounded laziness switched off: the partitioner cuts the chain into full kernels in
  // linear time, and every traversal is iterative.
  ConfigOverride depth("LAZYFUSE_MAX_DEPTH", "2000000");
  constexpr int kDepth = 1000000;
  auto t0 = std::chrono::steady_clock::now();
  Array x = deep_chain(vec({0, 1, 2, 3}), kDepth);
  EXPECT_FALSE(x.is_materialized());
  x.eval();
  EXPECT_TRUE(x.is_materialized());
  std::printf("[ info     ] %d-deep chain evaluated in %.2f s\n", kDepth, seconds_since(t0));
  // kDepth / 2 additions and an even number of flips.
  const float n = float(kDepth / 2);
  EXPECT_EQ(x.get<float>().to_vector(), (std::vector<float>{n, n + 1, n + 2, n + 3}));
}

TEST(MillionOps, DeepChainIsSplitIntoFewKernels) {
  // A chain over budget should be cut into pieces of about LAZYFUSE_MAX_KERNEL_NODES nodes, not peeled one node
  // per kernel.
  ConfigOverride depth("LAZYFUSE_MAX_DEPTH", "2000000");
  constexpr int kDepth = 2000;
  const int max_nodes = std::stoi(lf::config::get("LAZYFUSE_MAX_KERNEL_NODES"));
  Array x = deep_chain(vec({0, 1, 2, 3}), kDepth);
  const auto before = lf::kernel_cache_stats().kernels_launched;
  x.eval();
  const auto launched = lf::kernel_cache_stats().kernels_launched - before;
  EXPECT_LE(launched, std::uint64_t(2 * (kDepth / max_nodes + 1)))
      << kDepth << " nodes, at most " << max_nodes << " per kernel";
  const float n = float(kDepth / 2);
  EXPECT_EQ(x.get<float>().to_vector(), (std::vector<float>{n, n + 1, n + 2, n + 3}));
}

TEST(MillionOps, ConfigIsRestored) {
  // The tests above restore LAZYFUSE_MAX_DEPTH; a chain deeper than the default is cut again.
  ASSERT_NE(lf::config::get("LAZYFUSE_MAX_DEPTH"), "2000000");
  Array x = vec({0});
  for (int i = 0; i < 1000; ++i) x = x + 1.0f;
  EXPECT_LE(graph_node(x)->depth, std::stoi(lf::config::get("LAZYFUSE_MAX_DEPTH")));
  EXPECT_EQ(x.item<float>(), 1000.0f);
}

} // namespace

// ---- FlatTable and the comparison asserts ---------------------------------------------------------------------

// Random inserts, lookups and erases against std::multimap, with a hash of few values so that probe chains are
// long, wrap around the end of the table and cross each other: backward-shift erase must keep every entry
// reachable from its home slot.
TEST(FlatTable, AgreesWithAMultimapUnderRandomInsertsAndErases) {
  std::mt19937_64 rng(12345);
  lf::graph::FlatTable<int, -1> table;
  std::multimap<std::uint64_t, int> model;
  auto hash_of = [](int v) { return std::uint64_t(v % 37) * 0x9e3779b97f4a7c15ull; };
  for (int step = 0; step < 20000; ++step) {
    const int v = int(rng() % 500);
    const std::uint64_t h = hash_of(v);
    auto is_v = [v](int e) { return e == v; };
    switch (rng() % 3) {
    case 0:
      table.insert(h, v);
      model.emplace(h, v);
      break;
    case 1: {
      const bool erased = table.erase(h, is_v);
      auto range = model.equal_range(h);
      auto it = std::find_if(range.first, range.second, [v](const auto& kv) { return kv.second == v; });
      ASSERT_EQ(erased, it != range.second) << "step " << step;
      if (it != range.second) model.erase(it);
      break;
    }
    default: {
      const int* found = table.find(h, is_v);
      const bool present = std::any_of(model.begin(), model.end(), [v](const auto& kv) { return kv.second == v; });
      ASSERT_EQ(found != nullptr, present) << "step " << step;
      if (found) {
        EXPECT_EQ(*found, v);
      }
    }
    }
    ASSERT_EQ(table.size(), model.size()) << "step " << step;
  }
  for (int v = 0; v < 500; ++v) {
    const auto n = std::count_if(model.begin(), model.end(), [v](const auto& kv) { return kv.second == v; });
    for (long k = 0; k < n; ++k) ASSERT_TRUE(table.erase(hash_of(v), [v](int e) { return e == v; })) << v;
    EXPECT_FALSE(table.erase(hash_of(v), [v](int e) { return e == v; })) << v;
  }
  EXPECT_EQ(table.size(), 0u);
}

TEST(FlatTable, FindOrInsertFindsTheOldestMatchAndMakesOnlyOnAMiss) {
  lf::graph::FlatTable<int, -1> table;
  int made = 0;
  auto make = [&] { return 100 + made++; };
  auto any = [](int) { return true; };
  EXPECT_EQ(table.find_or_insert(7, any, make), 100);
  EXPECT_EQ(table.find_or_insert(7, any, make), 100);
  table.insert(7, 5); // a second entry of the same hash: lookups still find the older one first
  EXPECT_EQ(*table.find(7, any), 100);
  EXPECT_EQ(*table.find(7, [](int e) { return e == 5; }), 5);
  EXPECT_EQ(made, 1);
  EXPECT_EQ(table.size(), 2u);
}

TEST(AssertDeathTest, ComparisonAssertsPrintBothExpressionsAndValues) {
  const std::size_t size = 3;
  const int index = -1;
  LAZYFUSE_ASSERT_LT(0, size, "never fails");
  LAZYFUSE_ASSERT_NE(index, 3u, "compares by value: -1 is not 3u"); // a plain != would convert -1 to unsigned
  EXPECT_DEATH(LAZYFUSE_ASSERT_GE(index, 0, "index out of range"),
               "internal error at .*test_graph.cpp:[0-9]+: index out of range \\(index >= 0 failed: -1 vs 0\\)");
  EXPECT_DEATH(LAZYFUSE_ASSERT_EQ(size, 4u, "size"), "size == 4u failed: 3 vs 4");
  EXPECT_DEATH(LAZYFUSE_ASSERT_LE(2.5, 1.0, "doubles"), "2.5 <= 1.0 failed: 2.5 vs 1");
}
