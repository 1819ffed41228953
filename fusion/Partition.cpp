#include "fusion/Partition.h"

#include "fusion/PartitionSteps.h"
#include "fusion/ProductEpilogues.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/Matmul.h"
#include "graph/Ops.h"
#include "graph/Periodic.h"

#include <algorithm>
#include <span>

namespace lazyfuse::fusion {

using graph::Node;
using graph::NodeKind;
using graph::NodePtr;
using steps::Info;
using steps::PlanOutputs;
using steps::Region;
using steps::Subgraph;

namespace {

bool is_view(NodeKind k) {
  return graph::reads_through_a_view(k) || k == NodeKind::SetSlice;
}

// The op table's costs (lazyfuse/ops.def).
int own_cost(const Node& n) {
  switch (n.kind) {
  case NodeKind::Unary: return graph::cost_of(graph::UnaryOp(n.op));
  case NodeKind::Binary: return graph::cost_of(graph::BinaryOp(n.op));
  case NodeKind::Reduce: return graph::cost_of(graph::ReduceOp(n.op));
  case NodeKind::Fill: return 0;
  default: return 1;
  }
}

// ---- reductions --------------------------------------------------------------------------------------------

ReductionDomain domain_of(const Node& reduce) {
  return {reduce.sources_unlocked()[0]->shape, reduce.reduce_axes};
}

std::vector<std::int32_t> kept_axes(const ReductionDomain& d) {
  std::vector<std::int32_t> kept;
  for (std::int32_t k = 0; k < std::int32_t(d.in_shape.size()); ++k)
    if (!std::binary_search(d.axes.begin(), d.axes.end(), k)) kept.push_back(k);
  return kept;
}

// Walks a plan from its outputs, following which domain axis each axis of each node stands for. A reduction is
// inlined when it is reached with its kept axes in place; every other reduction found below the outputs is
// returned in `to_store`.
struct ReductionCheck {
  const Subgraph& g;
  const ReductionDomain& d;
  std::vector<int> fused;    // positions of inlined reductions
  std::vector<int> to_store; // positions of reductions that cannot be inlined
  bool dependent = false;    // an inlined reduction reads another inlined one
  bool full_outputs = false;

  // mapping[a] = the domain axis axis a of the node stands for, -1 for a size-1 axis, -2: unknown (opaque).
  using Mapping = std::vector<int>;

  void run(const std::vector<NodePtr>& outputs) {
    const auto kept = kept_axes(d);
    const Shape outer = d.outer_shape();
    // Outputs outside the domain: the kernel would not run over their index space, so nothing can be inlined.
    const bool admitted =
        std::all_of(outputs.begin(), outputs.end(), [&](auto& o) { return d.admits_output(o->shape); });
    std::vector<std::tuple<int, Mapping, int>> stack; // (position, mapping, inlined reduction above or -1)
    for (auto& o : outputs) {
      int k = g.find(o.get());
      if (k < 0) continue;
      Mapping m;
      if (!admitted) {
        m.assign(o->shape.size(), -2);
      } else if (o->shape == d.in_shape) {
        full_outputs = true;
        for (std::size_t a = 0; a < d.in_shape.size(); ++a) m.push_back(int(a));
      } else if (o->shape == outer) {
        m.assign(kept.begin(), kept.end());
      } else { // keepdims: the outer shape with size-1 axes where the reduced ones were.
        for (std::size_t a = 0; a < o->shape.size(); ++a)
          m.push_back(std::binary_search(d.axes.begin(), d.axes.end(), std::int32_t(a)) ? -1 : int(a));
      }
      stack.push_back({k, m, -1});
    }
    std::vector<int> output_positions;
    for (auto& o : outputs) output_positions.push_back(g.find(o.get()));
    std::vector<std::pair<int, Mapping>> seen;
    while (!stack.empty()) {
      auto [k, m, above] = stack.back();
      stack.pop_back();
      if (std::find(seen.begin(), seen.end(), std::make_pair(k, m)) != seen.end()) continue;
      seen.push_back({k, m});
      const Info& info = g.info[std::size_t(k)];
      const Node& n = *info.node;
      const bool is_output = std::find(output_positions.begin(), output_positions.end(), k) != output_positions.end();
      if (info.stored && !info.root && !is_output) continue;
      auto push = [&](const NodePtr& src, Mapping sm, int red) {
        int j = g.find(src.get());
        if (j >= 0 && (!g.info[std::size_t(j)].stored || g.info[std::size_t(j)].root))
          stack.push_back({j, std::move(sm), red});
      };
      const auto& srcs = n.sources_unlocked();
      switch (n.kind) {
      case NodeKind::Reduce: {
        bool ok = admitted && domain_of(n) == d && m.size() == kept.size();
        for (std::size_t a = 0; ok && a < kept.size(); ++a) ok = m[a] == kept[a];
        if (!ok) {
          add(to_store, k);
          break;
        }
        if (above >= 0 && above != k) dependent = true;
        add(fused, k);
        Mapping full;
        for (std::size_t a = 0; a < d.in_shape.size(); ++a) full.push_back(int(a));
        for (auto& s : srcs) push(s, full, k);
        break;
      }
      case NodeKind::Unary:
      case NodeKind::Binary:
      case NodeKind::Where:
      case NodeKind::Cast:
        for (auto& s : srcs) push(s, m, above);
        break;
      case NodeKind::AxisMap: {
        Mapping sm(n.axes.size(), -2);
        const Shape& src_shape = srcs[0]->shape;
        for (std::size_t j = 0; j < n.axes.size(); ++j) {
          const auto& e = n.axes[j];
          if (e.view_axis >= 0 && e.start == 0 && e.step == 1 && src_shape[j] == n.shape[std::size_t(e.view_axis)])
            sm[j] = m[std::size_t(e.view_axis)];
          else if (src_shape[j] == 1)
            sm[j] = -1;
        }
        push(srcs[0], sm, above);
        break;
      }
      default:
        for (auto& s : srcs) push(s, Mapping(s->shape.size(), -2), above);
        break;
      }
    }
  }
  static void add(std::vector<int>& v, int k) {
    if (std::find(v.begin(), v.end(), k) == v.end()) v.push_back(k);
  }
};

} // namespace

Shape ReductionDomain::outer_shape() const {
  Shape s;
  for (std::size_t k = 0; k < in_shape.size(); ++k)
    if (!std::binary_search(axes.begin(), axes.end(), std::int32_t(k))) s.push_back(in_shape[k]);
  return s;
}
Shape ReductionDomain::keepdims_shape() const {
  Shape s = in_shape;
  for (auto a : axes) s[std::size_t(a)] = 1;
  return s;
}
bool ReductionDomain::admits_output(const Shape& shape) const {
  return shape == in_shape || shape == outer_shape() || shape == keepdims_shape();
}
std::int64_t ReductionDomain::outer_size() const {
  return graph::shape_size(outer_shape());
}
std::int64_t ReductionDomain::reduced_size() const {
  std::int64_t n = 1;
  for (auto a : axes) n *= in_shape[std::size_t(a)];
  return n;
}

namespace {

void store(Subgraph& g, std::size_t k, std::string reason) {
  g.info[k].stored = true;
  g.info[k].reason = std::move(reason);
}

// The reduction whose domain a plan runs over: of the reductions it reaches (not through another reduction or a
// stored node), the first in depth-first order whose domain admits the plan's shape, else the first (whose check
// then stores every reduction the plan reaches), or -1 when it reaches none.
int choose_reduction(const Subgraph& g, const std::vector<NodePtr>& outs) {
  std::vector<int> stack;
  std::vector<char> seen(g.order.size(), 0);
  int first = -1;
  for (auto it = outs.rbegin(); it != outs.rend(); ++it) stack.push_back(g.find(it->get()));
  while (!stack.empty()) {
    int k = stack.back();
    stack.pop_back();
    if (k < 0 || seen[std::size_t(k)]) continue;
    seen[std::size_t(k)] = 1;
    const Info& info = g.info[std::size_t(k)];
    if (info.node->kind == NodeKind::Reduce) {
      if (domain_of(*info.node).admits_output(outs[0]->shape)) return k;
      if (first < 0) first = k;
      continue;
    }
    const auto& srcs = info.node->sources_unlocked();
    for (auto it = srcs.rbegin(); it != srcs.rend(); ++it) {
      int j = g.find(it->get());
      if (j >= 0 && !g.info[std::size_t(j)].stored) stack.push_back(j);
    }
  }
  return first;
}

} // namespace

namespace steps {

Subgraph collect(const std::vector<NodePtr>& roots) {
  Subgraph g;
  // A node enters the index (at -1) when the walk first reaches it and gets its position when emitted.
  std::vector<std::pair<const NodePtr*, bool>> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it)
    if (!(*it)->materialized()) stack.push_back({&*it, false});
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    stack.pop_back();
    const Node* node = n->get();
    auto is_node = [node](const SubgraphPosition& e) { return e.node == node; };
    if (expanded) {
      g.index.find_or_insert(node->hash, is_node, [] { return SubgraphPosition{}; }).index = int(g.order.size());
      g.order.push_back(*n);
      continue;
    }
    bool fresh = false;
    g.index.find_or_insert(node->hash, is_node, [&] {
      fresh = true;
      return SubgraphPosition{node, -1};
    });
    if (!fresh) continue;
    stack.push_back({n, true});
    const auto& srcs = node->sources_unlocked();
    for (auto it = srcs.rbegin(); it != srcs.rend(); ++it) {
      const Node* src = it->get();
      if (!src->materialized() && !g.index.find(src->hash, [src](const SubgraphPosition& e) { return e.node == src; }))
        stack.push_back({&*it, false});
    }
  }
  g.info.resize(g.order.size());
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    const Node* n = g.order[k].get();
    g.info[k].node = n;
    for (auto& src : n->sources_unlocked()) {
      int j = g.find(src.get());
      if (j < 0) continue;
      g.info[std::size_t(j)].consumers++;
      if (is_view(n->kind)) g.info[std::size_t(j)].view_consumers++;
    }
  }
  for (auto& r : roots)
    if (int k = g.find(r.get()); k >= 0) g.info[std::size_t(k)].root = true;
  return g;
}

// What one plan with `outputs` inlines, stopping at materialized and stored nodes.
Region measure(const Subgraph& g, const std::vector<NodePtr>& outputs) {
  Region r;
  std::vector<char> seen(g.order.size(), 0);
  std::vector<std::uint64_t> leaves;
  std::vector<int> stack;
  for (auto& o : outputs) stack.push_back(g.find(o.get()));
  while (!stack.empty()) {
    int k = stack.back();
    stack.pop_back();
    if (seen[std::size_t(k)]) continue;
    seen[std::size_t(k)] = 1;
    r.nodes++;
    for (auto& s : g.order[std::size_t(k)]->sources_unlocked()) {
      int j = g.find(s.get());
      if (j < 0 || g.info[std::size_t(j)].stored) {
        leaves.push_back(s->serial);
        continue;
      }
      stack.push_back(j);
    }
  }
  std::sort(leaves.begin(), leaves.end());
  r.inputs = int(std::unique(leaves.begin(), leaves.end()) - leaves.begin());
  // Ascending without a sort: a first call's plan inlines thousands of nodes.
  r.inlined.reserve(std::size_t(r.nodes));
  for (std::size_t k = 0; k < seen.size(); ++k)
    if (seen[k]) r.inlined.push_back(int(k));
  return r;
}

// Unique, unmaterialized roots in the caller's order.
std::vector<NodePtr> unique_roots(const std::vector<NodePtr>& roots_in) {
  std::vector<NodePtr> roots;
  for (auto& r : roots_in)
    if (!r->materialized() && std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
  return roots;
}

// Subtree costs and loads; in eager mode every node that computes something is stored, else the nodes that views
// read in several index frames where recomputing them in each would repeat too much work.
void store_shared_or_eager(Subgraph& g, const PartitionOptions& options) {
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    Info& info = g.info[k];
    const Node& n = *g.order[k];
    // Tree counts (each path counted) double per step of a loop that reads its state twice: saturated, since they
    // are only ever compared with kExpensiveCost.
    std::int64_t c = own_cost(n), loads = 0;
    for (auto& s : n.sources_unlocked()) {
      const int j = g.find(s.get());
      if (j >= 0 && !g.info[std::size_t(j)].stored) {
        c += g.info[std::size_t(j)].cost;
        loads += g.info[std::size_t(j)].loads;
      } else {
        ++loads;
      }
    }
    constexpr std::int64_t kSaturated = std::int64_t(1) << 30;
    info.cost = int(std::min(c, kSaturated));
    info.loads = int(std::min(loads, kSaturated));
    if (info.root) continue;
    if (options.eager) {
      if (n.kind != NodeKind::Fill && n.kind != NodeKind::AxisMap && n.kind != NodeKind::Reshape)
        store(g, k, "eager mode: one kernel per op");
      continue;
    }
    // Each view consumer reads the node at its own indices; the other consumers share one frame (the IR's CSE).
    const int frames = info.view_consumers + (info.consumers > info.view_consumers ? 1 : 0);
    if (info.view_consumers >= 1 && frames >= 2 &&
        (frames - 1) * (std::int64_t(info.cost) + info.loads) >= kExpensiveCost)
      store(g, k,
            "stored once: cost " + std::to_string(info.cost) + " and " + std::to_string(info.loads) +
                " loads, read in " + std::to_string(frames) + " index frames by " + std::to_string(info.consumers) +
                " consumers");
  }
}

void store_products(Subgraph& g) {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  // A root stored here is no longer a root: its own plan runs before the products that read it, which the roots'
  // plans (the last ones) would not.
  auto store = [&](std::size_t k, std::string reason) {
    g.info[k].stored = true;
    g.info[k].root = false;
    g.info[k].reason = std::move(reason);
  };
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    const Node& n = *g.order[k];
    if (n.kind == NodeKind::Scan) { // its own kernel, its source (the prologue) inlined into it
      store(k, "scan: a kernel of its own");
      continue;
    }
    if (graph::runs_over_materialized_source(n.kind)) { // a library call over its materialized sources
      const std::string what(graph::kind_name(n.kind));
      store(k, what + ": a library call");
      for (const NodePtr& src : n.sources_unlocked()) {
        const int j = g.find(src.get());
        if (j >= 0 && !g.info[std::size_t(j)].stored)
          store(std::size_t(j), "input of a " + what + ", written contiguously");
      }
      continue;
    }
    const ProductEpilogue* e = g.info[k].epilogue.get();
    if (!e && (n.kind != NodeKind::Matmul || g.info[k].folded)) continue;
    store(k, e ? "matrix product with its epilogue: a library call" : "matrix product: a library call");
    // c is read as a matrix like the operands (row-major only: cuBLASLt's C is not transposed); the bias is a
    // broadcast (fold_product_epilogues), read through its row, which is stored when pending.
    if (e && e->bias)
      if (const int j = g.find(e->bias.get()); j >= 0) {
        const int row = g.find(e->bias->sources_unlocked()[0].get());
        if (row >= 0 && !g.info[std::size_t(row)].stored) store(std::size_t(row), "bias of a matrix product");
      }
    if (e && e->c)
      if (const int j = g.find(e->c.get()); j >= 0 && !g.info[std::size_t(j)].stored) {
        const NodePtr& src = e->c;
        const bool is_view = src->kind == NodeKind::AxisMap || src->kind == NodeKind::Reshape;
        const int base = is_view ? g.find(src->sources_unlocked()[0].get()) : -1;
        std::optional<graph::GemmLayout> layout;
        if (is_view && graph::operand_strides(*src, true, strides, offset))
          layout = graph::gemm_layout(src->shape, strides);
        const bool readable = layout && !layout->transposed;
        if (readable && base >= 0)
          store(std::size_t(base), "addend of a matrix product, written contiguously (the product reads a view)");
        else if (!readable)
          store(std::size_t(j), "addend of a matrix product, written contiguously");
      }
    // The product's operands, or the node's sources: named, since a span over a temporary vector would dangle.
    const std::vector<NodePtr> product_operands = e ? std::vector<NodePtr>{e->a, e->b} : std::vector<NodePtr>{};
    for (const NodePtr& src : e ? std::span<const NodePtr>(product_operands) : n.sources_unlocked()) {
      const int j = g.find(src.get());
      if (j < 0 || g.info[std::size_t(j)].stored) continue; // materialized, or already written contiguously
      const bool is_view = src->kind == NodeKind::AxisMap || src->kind == NodeKind::Reshape;
      const int base = is_view ? g.find(src->sources_unlocked()[0].get()) : -1;
      const bool readable = is_view && graph::operand_strides(*src, true, strides, offset) &&
                            graph::gemm_layout(src->shape, strides).has_value();
      if (readable && base >= 0)
        store(std::size_t(base), "operand of a matrix product, written contiguously (the product reads a view)");
      else if (!readable)
        store(std::size_t(j), "operand of a matrix product, written contiguously");
    }
  }
}

// Groups of roots by shape, in order of first appearance: one multi-output plan each.
PlanOutputs group_roots_by_shape(const std::vector<NodePtr>& roots) {
  PlanOutputs groups;
  for (auto& r : roots) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& grp) { return grp[0]->shape == r->shape; });
    if (it == groups.end())
      groups.push_back({r});
    else
      it->push_back(r);
  }
  return groups;
}

namespace {
// Kinds a kernel prints as a loop when they repeat (codegen/Reroll.h: value ops and scalar parameters of C types).
bool repeatable(const Node& n) {
  switch (n.kind) {
  case NodeKind::Fill: return !is_complex(n.dtype) && !is_half(n.dtype);
  case NodeKind::Unary:
  case NodeKind::Binary:
  case NodeKind::Cast:
  case NodeKind::Where: return true;
  default: return false;
  }
}
} // namespace

int printed_node_count(const Subgraph& g) {
  // The nodes that compute, in post-order: scalars are kernel parameters (and equal scalars are one interned node,
  // which one copy reads from another's place), bounded by their bytes instead.
  std::vector<int> computing;
  for (int i = 0; i < int(g.order.size()); ++i)
    if (g.order[std::size_t(i)]->kind != NodeKind::Fill) computing.push_back(i);
  auto node = [&](int i) -> const Node& { return *g.order[std::size_t(computing[std::size_t(i)])]; };
  auto stored = [&](int i) { return g.info[std::size_t(computing[std::size_t(i)])].stored; };
  auto signature = [&](int i) {
    const Node& n = node(i);
    if (!repeatable(n) || stored(i)) return std::uint64_t(i) << 8 | 0xff; // equal to none
    return std::uint64_t(n.kind) << 40 | std::uint64_t(n.dtype) << 32 | std::uint64_t(std::uint32_t(n.op));
  };
  // Position in `computing` of each node of the subgraph (-1: a fill).
  std::vector<int> position(g.order.size(), -1);
  for (int i = 0; i < int(computing.size()); ++i) position[std::size_t(computing[std::size_t(i)])] = i;
  // Computing node i + p is node i one copy later: the same op on the same shape, reading scalars of the same type
  // (any values), the same nodes from outside the copies, or the nodes p later.
  auto repeats = [&](int i, int p) {
    const Node& x = node(i);
    const Node& y = node(i + p);
    if (!repeatable(x) || stored(i) || stored(i + p)) return false;
    if (x.kind != y.kind || x.dtype != y.dtype || x.op != y.op || x.shape != y.shape) return false;
    const auto& xs = x.sources_unlocked();
    const auto& ys = y.sources_unlocked();
    if (xs.size() != ys.size()) return false;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      if (xs[k] == ys[k]) continue;
      if (xs[k]->kind == NodeKind::Fill && ys[k]->kind == NodeKind::Fill && repeatable(*xs[k]) &&
          xs[k]->dtype == ys[k]->dtype && xs[k]->shape == ys[k]->shape)
        continue;
      const int kx = g.find(xs[k].get()), ky = g.find(ys[k].get());
      if (kx < 0 || ky < 0) return false;
      const int jx = position[std::size_t(kx)], jy = position[std::size_t(ky)];
      if (jx < 0 || jy < 0 || jy != jx + p) return false;
    }
    return true;
  };
  const graph::PeriodicRun run =
      graph::longest_periodic_run(int(computing.size()), 64, kMinRepeatedNodeSteps, signature, repeats);
  return int(computing.size()) - run.saved();
}

bool whole_subgraph_fits(const Subgraph& g, int max_nodes, bool loops_for_repeated_steps) {
  if (int(g.order.size()) <= max_nodes) return true;
  if (!loops_for_repeated_steps || printed_node_count(g) > max_nodes) return false;
  std::int64_t scalar_bytes = 0;
  for (const NodePtr& n : g.order)
    if (n->kind == NodeKind::Fill) scalar_bytes += std::int64_t(itemsize(n->dtype));
  return scalar_bytes <= kMaxStepParamBytes;
}

namespace {
// Stores nodes until no inlined path is longer than `band` nodes: where a node's longest inlined path would be, a
// node on it is stored, the one with the most consumers within a few nodes (a loop's state, which the step's
// branches all read: storing it shortens them all at once), else the nearest. A path, not a tree count: a time loop
// whose steps read their state several times (x > t ? x - a : x) multiplies a tree count per step, and a cut by it
// stored nearly every step.
void cut_paths(Subgraph& g, int band) {
  std::vector<int> depth(g.order.size(), 0);
  // The inlined source of position k on its longest path (-1: none) and that path's length.
  auto deepest_source = [&](std::size_t k) {
    std::pair<int, int> best{-1, 0};
    for (auto& src : g.order[k]->sources_unlocked()) {
      const int j = g.find(src.get());
      if (j >= 0 && !g.info[std::size_t(j)].stored && depth[std::size_t(j)] > best.second)
        best = {j, depth[std::size_t(j)]};
    }
    return best;
  };
  auto cuttable = [&](int j) {
    return !g.info[std::size_t(j)].root && g.order[std::size_t(j)]->kind != NodeKind::Fill;
  };
  for (std::size_t k = 0; k < g.order.size(); ++k) {
    for (;;) {
      const auto [deepest, longest] = deepest_source(k);
      if (longest + 1 <= band || !cuttable(deepest)) {
        depth[k] = longest + 1;
        break;
      }
      int cut = deepest;
      for (int j = deepest, walked = 0; walked < 16; ++walked) {
        j = deepest_source(std::size_t(j)).first;
        if (j < 0) break;
        if (cuttable(j) && g.info[std::size_t(j)].consumers > g.info[std::size_t(cut)].consumers) cut = j;
      }
      store(g, std::size_t(cut), "split: a kernel inlines paths of at most " + std::to_string(band) + " nodes");
      for (std::size_t j = std::size_t(cut) + 1; j < k; ++j) depth[j] = deepest_source(j).second + 1;
    }
  }
}
} // namespace

// The node budget: paths of at most max_nodes nodes, then, while the largest plan (measured: shared nodes once)
// holds more than max_nodes nodes, shorter paths in proportion, from the same start. A chain is cut into full
// kernels at the first try; a loop whose steps branch takes a try or two.
void cut_to_node_budget(Subgraph& g, int max_nodes, bool loops_for_repeated_steps) {
  if (whole_subgraph_fits(g, max_nodes, loops_for_repeated_steps)) return;
  std::vector<char> stored_before(g.order.size());
  for (std::size_t k = 0; k < g.order.size(); ++k) stored_before[k] = g.info[k].stored;
  for (int band = max_nodes;;) {
    cut_paths(g, band);
    int largest = 0;
    for (std::size_t k = 0; k < g.order.size(); ++k)
      if (g.info[k].stored || g.info[k].root) largest = std::max(largest, measure(g, {g.order[k]}).nodes);
    if (largest <= max_nodes || band <= 8) return;
    band = std::max(8, std::min(band - 1, int(std::int64_t(band) * max_nodes / largest)));
    for (std::size_t k = 0; k < g.order.size(); ++k)
      if (!stored_before[k] && g.info[k].stored) {
        g.info[k].stored = false;
        g.info[k].reason.clear();
      }
  }
}

// Enforce the budgets: store the largest inlined piece that fits a kernel (the earliest in post-order on a tie)
// until every plan fits. Each round stores one more node, so this ends. Most graphs fit whole and skip the loop.
void enforce_budgets(Subgraph& g, const std::vector<NodePtr>& roots, const PlanOutputs& groups,
                     const PartitionOptions& options) {
  if (whole_subgraph_fits(g, options.max_nodes, options.loops_for_repeated_steps) &&
      measure(g, roots).inputs <= options.max_inputs)
    return;
  for (int round = 0;; ++round) {
    LAZYFUSE_ASSERT(round <= int(g.order.size()) + 1, "partition budget loop did not converge");
    bool changed = false;
    PlanOutputs plans_outputs = groups;
    for (std::size_t k = 0; k < g.order.size(); ++k)
      if (g.info[k].stored) plans_outputs.push_back({g.order[k]});
    // Inlined nodes below each node (a tree count: shared nodes count once per use, saturated: it doubles per step
    // of a loop reading its state twice), stopping at stored ones.
    constexpr std::int64_t kSaturated = std::int64_t(1) << 40;
    std::vector<std::int64_t> below(g.order.size(), 0);
    for (std::size_t k = 0; k < g.order.size(); ++k) {
      below[k] = 1;
      for (auto& src : g.order[k]->sources_unlocked())
        if (int j = g.find(src.get()); j >= 0 && !g.info[std::size_t(j)].stored)
          below[k] = std::min(kSaturated, below[k] + below[std::size_t(j)]);
    }
    for (auto& outs : plans_outputs) {
      Region r = measure(g, outs);
      if (r.nodes <= options.max_nodes && r.inputs <= options.max_inputs) continue;
      // Store the largest piece that fits a kernel on its own, so a long chain is cut into few, full kernels.
      int best = -1;
      for (int k : r.inlined) {
        const Info& info = g.info[std::size_t(k)];
        if (info.root || info.node->kind == NodeKind::Fill) continue;
        if (std::find_if(outs.begin(), outs.end(), [&](auto& o) { return o.get() == info.node; }) != outs.end())
          continue;
        const std::int64_t size = below[std::size_t(k)];
        if (size > options.max_nodes) continue;
        if (best < 0 || size > below[std::size_t(best)]) best = k;
      }
      if (best < 0) continue; // nothing left to split: the plan runs as it is
      store(g, std::size_t(best),
            "split: plan over budget (" + std::to_string(r.nodes) + " nodes, " + std::to_string(r.inputs) +
                " inputs; limits " + std::to_string(options.max_nodes) + ", " + std::to_string(options.max_inputs) +
                ")");
      changed = true;
      break;
    }
    if (!changed) return;
  }
}

// Every plan's outputs: the stored nodes in post-order, then the groups of roots.
PlanOutputs plan_outputs(const Subgraph& g, const PlanOutputs& groups) {
  PlanOutputs outs;
  for (std::size_t k = 0; k < g.order.size(); ++k)
    if (g.info[k].stored) outs.push_back({g.order[k]});
  for (auto& grp : groups) outs.push_back(grp);
  return outs;
}

// Reductions: find each plan's domain and store the reductions it cannot inline, until nothing changes. Each round
// stores at least one more node, so this ends. Returns each plan's domain, in plan_outputs' order.
std::vector<std::optional<ReductionDomain>> settle_reductions(Subgraph& g, const PlanOutputs& groups) {
  std::vector<std::optional<ReductionDomain>> domains;
  for (int round = 0;; ++round) {
    LAZYFUSE_ASSERT(round <= int(g.order.size()) + 1, "partition reduction loop did not converge");
    const PlanOutputs outs_list = plan_outputs(g, groups);
    domains.assign(outs_list.size(), std::nullopt);
    bool changed = false;
    for (std::size_t p = 0; p < outs_list.size() && !changed; ++p) {
      int r = choose_reduction(g, outs_list[p]);
      if (r < 0) continue;
      ReductionDomain d = domain_of(*g.info[std::size_t(r)].node);
      ReductionCheck check{g, d, {}, {}, false, false};
      check.run(outs_list[p]);
      std::vector<int> to_store = check.to_store;
      if (to_store.empty() && !check.fused.empty() && prefers_split(d.outer_size()) &&
          (check.dependent || check.full_outputs)) {
        // Few outer elements: split so each reduction spreads over many blocks. Store the reductions that others
        // read (or all of them when full-shape outputs need them broadcast).
        for (int k : check.fused) {
          const Node* n = g.info[std::size_t(k)].node;
          bool is_output = std::find_if(outs_list[p].begin(), outs_list[p].end(),
                                        [&](auto& o) { return o.get() == n; }) != outs_list[p].end();
          if (!is_output) to_store.push_back(k);
        }
      }
      for (int k : to_store) {
        if (g.info[std::size_t(k)].stored) continue;
        store(g, std::size_t(k), "reduction stored: its consumers cannot inline it");
        changed = true;
      }
      if (!changed && !check.fused.empty()) domains[p] = d;
    }
    if (!changed) return domains;
  }
}

std::vector<KernelPlan> make_plans(const Subgraph& g, const PlanOutputs& groups,
                                   const std::vector<std::optional<ReductionDomain>>& domains) {
  std::vector<KernelPlan> plans;
  std::size_t p = 0;
  for (std::size_t k = 0; k < g.order.size(); ++k)
    if (g.info[k].stored)
      plans.push_back({{g.order[k]},
                       g.order[k]->shape,
                       g.info[k].reason,
                       domains[p++],
                       g.order[k]->kind == NodeKind::Matmul || graph::runs_over_materialized_source(g.order[k]->kind) ||
                           g.info[k].epilogue,
                       g.info[k].epilogue});
  for (auto& grp : groups) {
    std::string why = grp.size() > 1 ? std::to_string(grp.size()) + " outputs of one shape" : "requested output";
    plans.push_back({grp, grp[0]->shape, why, domains[p++]});
  }
  return plans;
}

void log_plans(const Subgraph& g, const std::vector<KernelPlan>& plans) {
  if (!config::log_enabled("fusion")) return;
  for (std::size_t k = 0; k < plans.size(); ++k) {
    Region r = measure(g, plans[k].outputs);
    config::log("fusion", "plan " + std::to_string(k) + ": " + std::to_string(plans[k].outputs.size()) +
                              " output(s) of shape " + graph::format_shape(plans[k].shape) + ", " +
                              std::to_string(r.nodes) + " nodes inlined, " + std::to_string(r.inputs) + " inputs (" +
                              plans[k].reason + ")");
  }
}

} // namespace steps

std::vector<KernelPlan> partition(const std::vector<NodePtr>& roots_in, const PartitionOptions& options) {
  using namespace steps;
  const std::vector<NodePtr> roots = unique_roots(roots_in);
  if (roots.empty()) return {};
  Subgraph g = collect(roots);
  store_shared_or_eager(g, options);
  fold_product_epilogues(g);
  store_products(g);
  // Roots that store_products stored (products, their operands) have plans of their own.
  std::vector<NodePtr> grouped;
  for (auto& r : roots)
    if (!g.info[std::size_t(g.find(r.get()))].stored) grouped.push_back(r);
  const PlanOutputs groups = group_roots_by_shape(grouped);
  cut_to_node_budget(g, options.max_nodes, options.loops_for_repeated_steps);
  enforce_budgets(g, roots, groups, options);
  const auto domains = settle_reductions(g, groups);
  std::vector<KernelPlan> plans = make_plans(g, groups, domains);
  log_plans(g, plans);
  return plans;
}

} // namespace lazyfuse::fusion
