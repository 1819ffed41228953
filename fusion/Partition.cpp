#include "fusion/Partition.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/Ops.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace lazyfuse::fusion {

using graph::Node;
using graph::NodeKind;
using graph::NodePtr;

namespace {

constexpr int kExpensiveCost = 24;

bool is_view(NodeKind k) {
  return k == NodeKind::AxisMap || k == NodeKind::Reshape || k == NodeKind::Roll || k == NodeKind::SetSlice;
}

int own_cost(const Node& n) {
  if (n.kind == NodeKind::Unary) {
    auto rule = graph::rule_of(graph::UnaryOp(n.op));
    return rule == graph::ResultRule::Float ? 4 : 1;
  }
  if (n.kind == NodeKind::Binary) {
    auto op = graph::BinaryOp(n.op);
    return (op == graph::BinaryOp::Power || op == graph::BinaryOp::Atan2) ? 4 : 1;
  }
  return n.kind == NodeKind::Fill ? 0 : 1;
}

struct Info {
  std::vector<NodePtr> srcs;
  int consumers = 0;
  int view_consumers = 0;
};

// The unmaterialized subgraph below `roots`, in post-order (sources before consumers), found without recursion.
struct Subgraph {
  std::vector<NodePtr> order;
  std::unordered_map<const Node*, Info> info;
};

Subgraph collect(const std::vector<NodePtr>& roots) {
  Subgraph g;
  std::vector<std::pair<NodePtr, bool>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it)
    if (!(*it)->materialized()) stack.push_back({*it, false});
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      g.order.push_back(n);
      continue;
    }
    if (g.info.count(n.get())) continue;
    Info& info = g.info[n.get()];
    info.srcs = n->sources();
    stack.push_back({n, true});
    for (auto it = info.srcs.rbegin(); it != info.srcs.rend(); ++it)
      if (!(*it)->materialized() && !g.info.count(it->get())) stack.push_back({*it, false});
  }
  for (auto& n : g.order)
    for (auto& s : g.info[n.get()].srcs) {
      auto it = g.info.find(s.get());
      if (it == g.info.end()) continue;
      it->second.consumers++;
      if (is_view(n->kind)) it->second.view_consumers++;
    }
  return g;
}

struct Region {
  int nodes = 0;
  int inputs = 0;
  std::vector<const Node*> inlined; // post-order
};

// What one plan with `outputs` inlines, stopping at materialized and stored nodes.
Region measure(const Subgraph& g, const std::vector<NodePtr>& outputs, const std::unordered_set<const Node*>& stored) {
  Region r;
  std::unordered_set<const Node*> seen;
  std::set<std::uint64_t> leaves;
  std::vector<std::pair<const Node*, bool>> stack;
  for (auto& o : outputs) stack.push_back({o.get(), false});
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      r.inlined.push_back(n);
      continue;
    }
    if (!seen.insert(n).second) continue;
    r.nodes++;
    stack.push_back({n, true});
    for (auto& s : g.info.at(n).srcs) {
      if (s->materialized() || stored.count(s.get()) || !g.info.count(s.get())) {
        leaves.insert(s->serial);
        continue;
      }
      stack.push_back({s.get(), false});
    }
  }
  r.inputs = int(leaves.size());
  return r;
}

} // namespace

std::vector<KernelPlan> partition(const std::vector<NodePtr>& roots_in, const PartitionOptions& options) {
  // Unique, unmaterialized roots in the caller's order.
  std::vector<NodePtr> roots;
  {
    std::unordered_set<const Node*> seen;
    for (auto& r : roots_in)
      if (!r->materialized() && seen.insert(r.get()).second) roots.push_back(r);
  }
  if (roots.empty()) return {};
  Subgraph g = collect(roots);
  std::unordered_set<const Node*> roots_set;
  for (auto& r : roots) roots_set.insert(r.get());

  std::unordered_set<const Node*> stored;
  std::map<const Node*, std::string> reasons;
  std::unordered_map<const Node*, int> cost;
  for (auto& n : g.order) {
    const Info& info = g.info[n.get()];
    int c = own_cost(*n);
    for (auto& s : info.srcs)
      if (auto it = cost.find(s.get()); it != cost.end() && !stored.count(s.get())) c += it->second;
    cost[n.get()] = c;
    if (roots_set.count(n.get())) continue;
    if (options.eager) {
      if (n->kind != NodeKind::Fill && n->kind != NodeKind::AxisMap && n->kind != NodeKind::Reshape) {
        stored.insert(n.get());
        reasons[n.get()] = "eager mode: one kernel per op";
      }
    } else if (info.consumers >= 2 && info.view_consumers >= 1 && c >= kExpensiveCost) {
      stored.insert(n.get());
      reasons[n.get()] = "stored once: cost " + std::to_string(c) + " read through " +
                         std::to_string(info.consumers) + " consumers, views among them";
    }
  }

  // Groups of roots by shape, in order of first appearance.
  std::vector<std::vector<NodePtr>> groups;
  for (auto& r : roots) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& grp) { return grp[0]->shape == r->shape; });
    if (it == groups.end())
      groups.push_back({r});
    else
      it->push_back(r);
  }

  // Enforce the budgets: store the inlined node with the largest cost (then the earliest in post-order) until
  // every plan fits. Each round stores one more node, so this ends.
  for (int round = 0;; ++round) {
    LAZYFUSE_ASSERT(round <= int(g.order.size()) + 1, "partition budget loop did not converge");
    bool changed = false;
    std::vector<std::vector<NodePtr>> plans_outputs = groups;
    for (auto& n : g.order)
      if (stored.count(n.get())) plans_outputs.push_back({n});
    for (auto& outs : plans_outputs) {
      Region r = measure(g, outs, stored);
      if (r.nodes <= options.max_nodes && r.inputs <= options.max_inputs) continue;
      const Node* best = nullptr;
      int best_cost = -1;
      for (const Node* n : r.inlined) {
        if (roots_set.count(n) || n->kind == NodeKind::Fill) continue;
        if (std::find_if(outs.begin(), outs.end(), [&](auto& o) { return o.get() == n; }) != outs.end()) continue;
        int c = cost[n];
        if (c > best_cost) best = n, best_cost = c;
      }
      if (!best) continue; // nothing left to split: the plan runs as it is
      stored.insert(best);
      reasons[best] = "split: plan over budget (" + std::to_string(r.nodes) + " nodes, " + std::to_string(r.inputs) +
                      " inputs; limits " + std::to_string(options.max_nodes) + ", " +
                      std::to_string(options.max_inputs) + ")";
      changed = true;
      break;
    }
    if (!changed) break;
  }

  std::vector<KernelPlan> plans;
  for (auto& n : g.order)
    if (stored.count(n.get())) plans.push_back({{n}, n->shape, reasons[n.get()]});
  for (auto& grp : groups) {
    std::string why = grp.size() > 1 ? std::to_string(grp.size()) + " outputs of one shape" : "requested output";
    plans.push_back({grp, grp[0]->shape, why});
  }
  if (config::log_enabled("fusion")) {
    for (std::size_t k = 0; k < plans.size(); ++k) {
      Region r = measure(g, plans[k].outputs, stored);
      config::log("fusion", "plan " + std::to_string(k) + ": " + std::to_string(plans[k].outputs.size()) +
                                " output(s) of shape " + graph::format_shape(plans[k].shape) + ", " +
                                std::to_string(r.nodes) + " nodes inlined, " + std::to_string(r.inputs) +
                                " inputs (" + plans[k].reason + ")");
    }
  }
  return plans;
}

} // namespace lazyfuse::fusion
