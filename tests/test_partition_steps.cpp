// The steps of fusion::partition (fusion/PartitionSteps.h), each on small graphs, asserting its own effect: which
// nodes it stores, how it groups, which budgets it cuts, which reductions it settles.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"

#include "fusion/PartitionSteps.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/Ops.h"

#include <gtest/gtest.h>

#include <algorithm>

using lazyfuse::detail::graph_node;

using namespace lazyfuse;
using namespace lazyfuse::fusion::steps;
using graph::NodePtr;

namespace {

Array input(Shape shape) {
  std::vector<float> v(std::size_t(graph::shape_size(shape)), 0.5f);
  return asarray(v, shape).eval();
}

bool is_stored(const Subgraph& g, const Array& a) {
  const int at = g.find(graph_node(a).get());
  EXPECT_GE(at, 0) << "not in the subgraph";
  return at >= 0 && g.info[std::size_t(at)].stored;
}

int stored_count(const Subgraph& g) {
  return int(std::count_if(g.info.begin(), g.info.end(), [](const Info& i) { return i.stored; }));
}

// A chain of `length` unary ops over x.
Array chain_of(const Array& x, int length) {
  Array a = x;
  // No rewrite shortens it, and no stretch of it repeats (printed_node_count would count that once): the ops follow
  // the bits of a linear congruential sequence.
  std::uint32_t bits = 12345;
  for (int k = 0; k < length; ++k) {
    bits = bits * 1103515245u + 12345u;
    a = (bits >> 16) % 2 ? sin(a) : cos(a);
  }
  return a;
}

// The steps up to the budgets, as partition() runs them.
Subgraph through_budgets(const std::vector<NodePtr>& roots, const fusion::PartitionOptions& options,
                         PlanOutputs& groups) {
  Subgraph g = collect(roots);
  store_shared_or_eager(g, options);
  groups = group_roots_by_shape(roots);
  cut_to_node_budget(g, options.max_nodes);
  enforce_budgets(g, roots, groups, options);
  return g;
}

} // namespace

TEST(PartitionSteps, UniqueRootsDropsRepeatsAndMaterializedRootsInOrder) {
  auto x = input({8});
  Array a = x + 1.0f, b = x * 2.0f;
  auto roots = unique_roots({graph_node(b), graph_node(a), graph_node(b), graph_node(x), graph_node(a)});
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[0], graph_node(b));
  EXPECT_EQ(roots[1], graph_node(a));
  EXPECT_TRUE(unique_roots({graph_node(x)}).empty());
}

TEST(PartitionSteps, CollectOrdersSourcesFirstCountsConsumersAndMarksRoots) {
  auto x = input({8}), y = input({8});
  Array s = x * y;                         // read by the two below
  Array u = sin(s), v = s(slice(1, none)); // v: a view of s
  Array w = u(slice(0, 7)) + v;
  const Subgraph g = collect({graph_node(w)});
  EXPECT_EQ(g.find(graph_node(x).get()), -1) << "materialized nodes are not in the subgraph";
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    EXPECT_EQ(g.find(g.order[k].get()), int(k));
    for (auto& src : g.order[k]->sources_unlocked()) EXPECT_LT(g.find(src.get()), int(k)) << "post-order";
  }
  const Info& si = g.info[std::size_t(g.find(graph_node(s).get()))];
  EXPECT_EQ(si.consumers, 2);
  EXPECT_EQ(si.view_consumers, 1);
  EXPECT_FALSE(si.root);
  EXPECT_TRUE(g.info[std::size_t(g.find(graph_node(w).get()))].root);
  EXPECT_EQ(stored_count(g), 0) << "collect stores nothing";
}

TEST(PartitionSteps, StoreSharedStoresOnlyExpensiveNodesReadThroughViews) {
  auto x = input({64});
  // Six exps: a subtree cost of 6 * cost_of(exp) + the leaf-free chain, at least kExpensiveCost.
  Array e = x;
  for (int k = 0; k < 6; ++k) e = exp(e);
  ASSERT_GE(6 * graph::cost_of(graph::UnaryOp::Exp), kExpensiveCost);
  Array cheap = x + 1.0f;
  // Read twice, once through a view: stored when expensive.
  Array through_view = e(slice(1, none)) + e(slice(0, 63)) + cheap(slice(1, none)) + cheap(slice(0, 63));
  // Read twice elementwise only: recomputed.
  Array e2 = x;
  for (int k = 0; k < 6; ++k) e2 = exp(e2 * 0.5f);
  Array twice = e2 * e2 + e2;
  fusion::PartitionOptions options;
  Subgraph g = collect({graph_node(through_view), graph_node(twice)});
  store_shared_or_eager(g, options);
  EXPECT_TRUE(is_stored(g, e));
  EXPECT_FALSE(is_stored(g, cheap));
  EXPECT_FALSE(is_stored(g, e2));
  EXPECT_EQ(stored_count(g), 1);
  EXPECT_GE(g.info[std::size_t(g.find(graph_node(e).get()))].cost, kExpensiveCost);
  // Costs add up the sources' (the stored e counts as a leaf for its consumers).
  const Info& ci = g.info[std::size_t(g.find(graph_node(cheap).get()))];
  EXPECT_EQ(ci.cost, graph::cost_of(graph::BinaryOp::Add)) << "x + 1: the fill costs nothing";
}

TEST(PartitionSteps, StoreEagerStoresEveryComputingNodeButRootsFillsAndFreeViews) {
  auto x = input({4, 8});
  Array y = x + 1.0f;
  Array t = y.T();            // axis map: stays inlined
  Array r = reshape(t, {32}); // reshape: stays inlined
  Array s = sin(r);
  Array out = s * 2.0f + 1.0f;
  fusion::PartitionOptions options;
  options.eager = true;
  Subgraph g = collect({graph_node(out)});
  store_shared_or_eager(g, options);
  EXPECT_TRUE(is_stored(g, y));
  EXPECT_FALSE(is_stored(g, t));
  EXPECT_FALSE(is_stored(g, r));
  EXPECT_TRUE(is_stored(g, s));
  EXPECT_FALSE(is_stored(g, out)) << "a root is its own plan already";
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    const auto kind = g.order[k]->kind;
    const bool free = kind == graph::NodeKind::Fill || kind == graph::NodeKind::AxisMap ||
                      kind == graph::NodeKind::Reshape || g.info[k].root;
    EXPECT_EQ(g.info[k].stored, !free) << graph::format_shape(g.order[k]->shape);
  }
}

TEST(PartitionSteps, GroupRootsByShapeInOrderOfFirstAppearance) {
  auto x = input({3}), y = input({4}), z = input({5});
  Array a = x + 1.0f, b = y + 1.0f, c = x * 2.0f, d = z + 1.0f, e = y * 2.0f;
  const PlanOutputs groups =
      group_roots_by_shape({graph_node(a), graph_node(b), graph_node(c), graph_node(d), graph_node(e)});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], (std::vector<NodePtr>{graph_node(a), graph_node(c)}));
  EXPECT_EQ(groups[1], (std::vector<NodePtr>{graph_node(b), graph_node(e)}));
  EXPECT_EQ(groups[2], (std::vector<NodePtr>{graph_node(d)}));
}

TEST(PartitionSteps, CutToNodeBudgetCutsALongChainIntoFullKernels) {
  auto x = input({16});
  const int length = 60, budget = 16; // under the bounded-laziness depth, so nothing is materialized early
  ASSERT_LT(length, config::snapshot().max_depth);
  Array out = chain_of(x, length);
  Subgraph g = collect({graph_node(out)});
  cut_to_node_budget(g, budget);
  const PlanOutputs plans = plan_outputs(g, {{graph_node(out)}});
  for (auto& outs : plans) EXPECT_LE(measure(g, outs).nodes, budget);
  // Full kernels: no more than one plan per half budget (a greedy cut can leave one short plan at each end).
  EXPECT_GE(int(plans.size()), (length + budget - 1) / budget);
  EXPECT_LE(int(plans.size()), length / budget + 2);
  // A graph within the budget is left alone.
  Subgraph whole = collect({graph_node(out)});
  cut_to_node_budget(whole, length + 1);
  EXPECT_EQ(stored_count(whole), 0);
}

// A time loop's steps are printed as a loop (codegen/Reroll.h): the node budget counts them as one step, and a
// 1,000-step loop stays one kernel whatever the budget.
TEST(PartitionSteps, RepeatedStepsCountOnceAgainstTheNodeBudget) {
  auto x = input({16});
  Array looped = x;
  // Scalars of equal values are one node (interned): each step's own factor, and one 0.5 that every step reads.
  for (int k = 0; k < 1000; ++k) looped = looped * (2.0f + 0.001f * float(k)) + 0.5f;
  Subgraph g = collect({graph_node(looped)});
  EXPECT_EQ(int(g.order.size()), 3001) << "per step a multiply, an add and the factor; and the 0.5";
  EXPECT_LE(printed_node_count(g), 4);
  cut_to_node_budget(g, 16);
  EXPECT_EQ(stored_count(g), 0);
  // Not when the scalars take more than the kernel's parameters may: 2,000 float64 steps of two scalars each (within
  // the bounded-laziness depth, so nothing is materialized while recording).
  Array wide = x.astype(DType::Float64);
  for (int k = 0; k < 2000; ++k) wide = wide * (2.0 + 0.001 * k) - (3.0 + 0.001 * k);
  ASSERT_FALSE(wide.is_materialized());
  Subgraph too_many = collect({graph_node(wide)});
  EXPECT_LE(printed_node_count(too_many), 4);
  EXPECT_FALSE(whole_subgraph_fits(too_many, 256));
  // Nor a chain that does not repeat (chain_of): it is counted whole.
  Subgraph plain = collect({graph_node(chain_of(x, 60))});
  EXPECT_EQ(printed_node_count(plain), 60);
  // Steps whose scalars are sometimes equal (one interned node read by two copies) still repeat.
  Array colliding = x;
  for (int k = 0; k < 1000; ++k) colliding = colliding * (1.0f - 0.001f * float(k)) + 0.5f; // k = 500: 0.5
  Subgraph collide = collect({graph_node(colliding)});
  EXPECT_LE(printed_node_count(collide), 4);
}

TEST(PartitionSteps, EnforceBudgetsCutsPlansReadingTooManyBuffers) {
  std::vector<Array> xs;
  for (int k = 0; k < 10; ++k) xs.push_back(input({32}));
  Array sum_all = xs[0];
  for (int k = 1; k < 10; ++k) sum_all = sum_all + xs[std::size_t(k)] * float(k);
  fusion::PartitionOptions options;
  options.max_inputs = 4;
  PlanOutputs groups;
  const std::vector<NodePtr> roots{graph_node(sum_all)};
  Subgraph g = collect(roots);
  groups = group_roots_by_shape(roots);
  cut_to_node_budget(g, options.max_nodes);
  EXPECT_EQ(stored_count(g), 0) << "the node budget alone sees nothing to cut";
  enforce_budgets(g, roots, groups, options);
  EXPECT_GT(stored_count(g), 0);
  for (auto& outs : plan_outputs(g, groups)) {
    const Region r = measure(g, outs);
    EXPECT_LE(r.inputs, options.max_inputs);
    EXPECT_LE(r.nodes, options.max_nodes);
  }
  // Within the budgets: nothing is stored.
  Subgraph fits = collect(roots);
  enforce_budgets(fits, roots, groups, {});
  EXPECT_EQ(stored_count(fits), 0);
}

TEST(PartitionSteps, SettleReductionsStoresWhatAPlanCannotInline) {
  // A slice of a reduced array: the reduction is computed by a plan of its own over its domain.
  auto m = input({300, 64});
  Array r = sum(m, 1);
  Array out = r(slice(1, none)) + 1.0f;
  PlanOutputs groups;
  Subgraph g = through_budgets({graph_node(out)}, {}, groups);
  auto domains = settle_reductions(g, groups);
  EXPECT_TRUE(is_stored(g, r));
  const PlanOutputs plans = plan_outputs(g, groups);
  ASSERT_EQ(domains.size(), plans.size());
  ASSERT_EQ(plans.size(), 2u);
  ASSERT_TRUE(domains[0].has_value());
  EXPECT_EQ(domains[0]->in_shape, (Shape{300, 64}));
  EXPECT_EQ(domains[0]->axes, (std::vector<std::int32_t>{1}));
  EXPECT_FALSE(domains[1].has_value()) << "the slice plan is elementwise";
}

TEST(PartitionSteps, SettleReductionsKeepsSoftmaxInOneKernelUnlessRowsAreFew) {
  auto softmax = [](const Array& m) {
    auto e = exp(m - max(m, 1, true));
    return e / sum(e, 1, true);
  };
  {
    Array out = softmax(input({fusion::kSplitBelowOuter, 64}));
    PlanOutputs groups;
    Subgraph g = through_budgets({graph_node(out)}, {}, groups);
    auto domains = settle_reductions(g, groups);
    EXPECT_EQ(stored_count(g), 0);
    ASSERT_EQ(domains.size(), 1u);
    EXPECT_TRUE(domains[0].has_value());
  }
  {
    // Few rows: the max, which the sum reads, is stored so that each reduction kernel can split over blocks.
    auto m = input({fusion::kSplitBelowOuter - 1, 64});
    Array mx = max(m, 1, true);
    auto e = exp(m - mx);
    Array out = e / sum(e, 1, true);
    PlanOutputs groups;
    Subgraph g = through_budgets({graph_node(out)}, {}, groups);
    auto domains = settle_reductions(g, groups);
    EXPECT_GE(stored_count(g), 1);
    const PlanOutputs plans = plan_outputs(g, groups);
    ASSERT_EQ(domains.size(), plans.size());
    for (std::size_t p = 0; p + 1 < plans.size(); ++p)
      EXPECT_EQ(plans[p][0]->kind, graph::NodeKind::Reduce) << "only reductions are stored";
  }
}

TEST(PartitionSteps, MakePlansRunsStoredNodesFirstThenTheRootGroups) {
  auto m = input({300, 64});
  Array r = sum(m, 1);
  Array a = r(slice(1, none)) + 1.0f, b = r(slice(0, 299)) * 2.0f, c = m * 3.0f;
  const std::vector<NodePtr> roots{graph_node(a), graph_node(c), graph_node(b)};
  PlanOutputs groups;
  Subgraph g = through_budgets(roots, {}, groups);
  const auto domains = settle_reductions(g, groups);
  const auto plans = make_plans(g, groups, domains);
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].outputs, (std::vector<NodePtr>{graph_node(r)}));
  EXPECT_TRUE(plans[0].reduction.has_value());
  EXPECT_EQ(plans[1].outputs, (std::vector<NodePtr>{graph_node(a), graph_node(b)}));
  EXPECT_EQ(plans[1].shape, (Shape{299}));
  EXPECT_FALSE(plans[1].reduction.has_value());
  EXPECT_EQ(plans[2].outputs, (std::vector<NodePtr>{graph_node(c)}));
  for (auto& p : plans) EXPECT_FALSE(p.reason.empty());
}

TEST(PartitionSteps, LogPlansWritesOneLinePerPlanOnlyWhenAsked) {
  auto m = input({300, 64});
  Array out = sum(m, 1)(slice(1, none)) + 1.0f;
  PlanOutputs groups;
  Subgraph g = through_budgets({graph_node(out)}, {}, groups);
  const auto plans = make_plans(g, groups, settle_reductions(g, groups));
  testing::internal::CaptureStderr();
  log_plans(g, plans);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  config::set("LAZYFUSE_LOG", "fusion");
  testing::internal::CaptureStderr();
  log_plans(g, plans);
  const std::string text = testing::internal::GetCapturedStderr();
  config::reset("LAZYFUSE_LOG");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), std::ptrdiff_t(plans.size()));
  EXPECT_NE(text.find("plan 1: 1 output(s) of shape (299,)"), std::string::npos) << text;
}

TEST(PartitionSteps, TheStepsInOrderArePartition) {
  auto m = input({100, 48});
  Array out = (m - mean(m, 1, true)) / sqrt(var(m, 1, 0, true) + 1e-5f);
  const std::vector<NodePtr> roots{graph_node(out)};
  PlanOutputs groups;
  Subgraph g = through_budgets(unique_roots(roots), {}, groups);
  const auto by_steps = make_plans(g, groups, settle_reductions(g, groups));
  const auto whole = fusion::partition(roots, {});
  ASSERT_EQ(by_steps.size(), whole.size());
  for (std::size_t p = 0; p < whole.size(); ++p) {
    EXPECT_EQ(by_steps[p].outputs, whole[p].outputs);
    EXPECT_EQ(by_steps[p].reduction, whole[p].reduction);
    EXPECT_EQ(by_steps[p].reason, whole[p].reason);
  }
}
