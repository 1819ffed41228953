#include "codegen/Lower.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/Hash.h"
#include "graph/Ops.h"

#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

namespace lazyfuse::codegen {

using graph::Node;
using graph::NodeKind;
using graph::NodePtr;

namespace {

struct Frame {
  int lin = -1;            // linear index in the current node's shape, or -1
  std::vector<int> coords; // coordinates in the current node's shape (when lin < 0)
  int pred = -1;           // loads happen only where this holds
  bool operator<(const Frame& o) const {
    return std::tie(lin, coords, pred) < std::tie(o.lin, o.coords, o.pred);
  }
};

struct InstrHash {
  std::size_t operator()(const Instr& i) const {
    graph::Hasher h;
    h.add(std::uint64_t(i.op)).add(std::uint64_t(i.dtype)).add(i.fn).add(std::uint64_t(std::int64_t(i.a)));
    h.add(std::uint64_t(std::int64_t(i.b))).add(std::uint64_t(std::int64_t(i.c)));
    h.add(std::uint64_t(std::int64_t(i.slot))).add(std::uint64_t(i.imm));
    return h.h;
  }
};

bool contiguous(const graph::BufferView& v, const Shape& shape) {
  auto expect = graph::contiguous_strides(shape);
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (shape[k] != 1 && v.strides[k] != expect[k]) return false;
  return true;
}

class Lowerer {
public:
  explicit Lowerer(const fusion::KernelPlan& plan) : plan_(plan) {}

  LoweredKernel run() {
    out_.args.n = graph::shape_size(plan_.shape);
    root_lin_ = emit({IrOp::LinearIndex});
    const int root = frame_id(Frame{root_lin_, {}, -1});
    std::vector<int> values;
    for (auto& o : plan_.outputs) values.push_back(value_of(o, root));
    for (std::size_t k = 0; k < values.size(); ++k) {
      out_.ir.outputs.push_back(plan_.outputs[k]->dtype);
      Instr st{IrOp::Store, plan_.outputs[k]->dtype};
      st.a = values[k];
      st.slot = int(k);
      out_.ir.code.push_back(st);
    }
    out_.ir.index32 = fits_index32();
    out_.ir.finalize();
    return std::move(out_);
  }

private:
  // ---- IR emission with common-subexpression elimination ----
  int emit(Instr i) {
    if (i.op == IrOp::IndexParam || i.op == IrOp::ScalarParam) {
      out_.ir.code.push_back(i);
      return int(out_.ir.code.size()) - 1;
    }
    auto [it, inserted] = cse_.try_emplace(i, int(out_.ir.code.size()));
    if (inserted) out_.ir.code.push_back(i);
    return it->second;
  }
  int index_op(IrOp op, int a, int b) {
    Instr i{op, DType::Int64};
    i.a = a;
    i.b = b;
    return emit(i);
  }
  int pred_op(IrOp op, int a, int b) {
    Instr i{op, DType::Bool};
    i.a = a;
    i.b = b;
    return emit(i);
  }
  int index_const(std::int64_t v) {
    Instr i{IrOp::IndexConst, DType::Int64};
    i.imm = v;
    return emit(i);
  }
  // A fresh index parameter; `key` (when non-empty) makes equal keys share one parameter.
  int index_param(std::int64_t value, const std::string& key = {}) {
    if (!key.empty())
      if (auto it = param_keys_.find(key); it != param_keys_.end()) return it->second;
    Instr i{IrOp::IndexParam, DType::Int64};
    i.slot = int(out_.ir.params.size());
    out_.ir.params.push_back({true, DType::Int64});
    out_.args.params.push_back({value, 0});
    max_param_ = std::max(max_param_, value < 0 ? -value : value);
    int id = emit(i);
    if (!key.empty()) param_keys_[key] = id;
    return id;
  }
  int scalar_param(DType t, double f, std::int64_t iv) {
    Instr i{IrOp::ScalarParam, t};
    i.slot = int(out_.ir.params.size());
    out_.ir.params.push_back({false, t});
    out_.args.params.push_back({iv, f});
    return emit(i);
  }
  int and_pred(int p, int q) { return p < 0 ? q : (q < 0 ? p : pred_op(IrOp::PAnd, p, q)); }

  int frame_id(Frame f) {
    auto [it, inserted] = frame_ids_.try_emplace(f, int(frames_.size()));
    if (inserted) frames_.push_back(std::move(f));
    return it->second;
  }

  // Coordinates of frame `fid` in `shape`: its own, or its linear index unravelled (once per frame and shape).
  std::vector<int> coords(int fid, const Shape& shape) {
    const Frame& f = frames_[std::size_t(fid)];
    if (f.lin < 0) {
      LAZYFUSE_ASSERT(f.coords.size() == shape.size(), "frame rank differs from the node's");
      return f.coords;
    }
    auto key = std::make_pair(fid, shape);
    if (auto it = unravel_.find(key); it != unravel_.end()) return it->second;
    std::vector<int> c(shape.size());
    int rest = f.lin;
    for (std::size_t k = shape.size(); k-- > 0;) {
      if (k == 0) {
        c[k] = rest;
        break;
      }
      std::string pkey = "dim:" + std::to_string(f.lin) + ":" + graph::format_shape(shape) + ":" + std::to_string(k);
      int dim = index_param(shape[k], pkey);
      c[k] = index_op(IrOp::IMod, rest, dim);
      rest = index_op(IrOp::IDiv, rest, dim);
    }
    unravel_[key] = c;
    return c;
  }

  int input_slot(const graph::BufferView& v, DType t) {
    auto key = std::make_pair(v.storage->serial, v.offset);
    if (auto it = input_slots_.find(key); it != input_slots_.end()) return it->second;
    int slot = int(out_.ir.inputs.size());
    out_.ir.inputs.push_back({t});
    out_.args.inputs.push_back(static_cast<const char*>(v.storage->data) + v.offset * std::int64_t(itemsize(t)));
    max_storage_elems_ = std::max<std::int64_t>(max_storage_elems_, std::int64_t(v.storage->bytes / itemsize(t)));
    input_slots_[key] = slot;
    return slot;
  }

  int load(const NodePtr& n, const graph::BufferView& v, int fid) {
    const Frame& f = frames_[std::size_t(fid)];
    int slot = input_slot(v, n->dtype);
    if (std::find(out_.input_nodes.begin(), out_.input_nodes.end(), n) == out_.input_nodes.end())
      out_.input_nodes.push_back(n);
    if (contiguous(v, n->shape) && f.lin >= 0) {
      auto addr = reinterpret_cast<std::uintptr_t>(out_.args.inputs[std::size_t(slot)]);
      if (f.lin == root_lin_ && f.pred < 0 && addr % 16 == 0) {
        Instr i{IrOp::LoadLinear, n->dtype};
        i.slot = slot;
        return emit(i);
      }
      Instr i{IrOp::Load, n->dtype};
      i.slot = slot;
      i.a = f.lin;
      i.b = f.pred;
      return emit(i);
    }
    auto c = coords(fid, n->shape);
    int offset = -1;
    for (std::size_t k = 0; k < c.size(); ++k) {
      if (n->shape[k] == 1) continue; // coordinate is always 0
      int term = index_op(IrOp::IMul, c[k], index_param(v.strides[k]));
      offset = offset < 0 ? term : index_op(IrOp::IAdd, offset, term);
    }
    if (offset < 0) offset = index_const(0);
    Instr i{IrOp::Load, n->dtype};
    i.slot = slot;
    i.a = offset;
    i.b = f.pred;
    return emit(i);
  }

  // ---- nodes ----
  struct Task {
    NodePtr node;
    int frame;
    bool expanded = false;
    std::vector<std::pair<NodePtr, int>> children;
    int aux = -1; // SetSlice: the region predicate
  };

  using MemoKey = std::pair<const Node*, int>;

  int value_of(const NodePtr& root, int root_frame) {
    std::vector<Task> stack;
    stack.push_back({root, root_frame, false, {}, -1});
    while (!stack.empty()) {
      Task t = std::move(stack.back());
      stack.pop_back();
      const Node& n = *t.node;
      const int memo_frame = memo_frame_of(n, t.frame);
      if (memo_.count({&n, memo_frame})) continue;
      if (!t.expanded) {
        if (auto buf = t.node->buffer()) {
          memo_[{&n, memo_frame}] = load(t.node, *buf, t.frame);
          continue;
        }
        plan_children(t);
        t.expanded = true;
        auto children = t.children;
        stack.push_back(std::move(t));
        for (auto it = children.rbegin(); it != children.rend(); ++it) {
          if (!memo_.count({it->first.get(), memo_frame_of(*it->first, it->second)}))
            stack.push_back({it->first, it->second, false, {}, -1});
        }
        continue;
      }
      memo_[{&n, memo_frame}] = finish(t);
    }
    return memo_.at({root.get(), memo_frame_of(*root, root_frame)});
  }

  // A fill's value does not depend on the index: one parameter serves every frame.
  static int memo_frame_of(const Node& n, int frame) {
    return n.kind == NodeKind::Fill && !n.materialized() ? -1 : frame;
  }

  int child(const Task& t, std::size_t k) {
    auto& [node, frame] = t.children[k];
    return memo_.at({node.get(), memo_frame_of(*node, frame)});
  }

  void plan_children(Task& t) {
    const Node& n = *t.node;
    auto srcs = t.node->sources();
    const Frame f = frames_[std::size_t(t.frame)];
    switch (n.kind) {
    case NodeKind::Buffer: LAZYFUSE_ASSERT(false, "a buffer node without a buffer"); break;
    case NodeKind::Fill:
    case NodeKind::Iota: break;
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Where:
    case NodeKind::Cast:
      for (auto& s : srcs) t.children.push_back({s, t.frame});
      break;
    case NodeKind::AxisMap: {
      auto c = coords(t.frame, n.shape);
      Frame g;
      g.pred = f.pred;
      for (auto& e : n.axes) {
        int start = index_param(e.start);
        if (e.view_axis < 0) {
          g.coords.push_back(start);
        } else {
          int scaled = index_op(IrOp::IMul, c[std::size_t(e.view_axis)], index_param(e.step));
          g.coords.push_back(index_op(IrOp::IAdd, start, scaled));
        }
      }
      t.children.push_back({srcs[0], frame_id(std::move(g))});
      break;
    }
    case NodeKind::Reshape: {
      Frame g;
      g.pred = f.pred;
      if (f.lin >= 0) {
        g.lin = f.lin;
      } else {
        auto strides = graph::contiguous_strides(n.shape);
        int lin = -1;
        for (std::size_t k = 0; k < n.shape.size(); ++k) {
          if (n.shape[k] == 1) continue;
          int term = index_op(IrOp::IMul, f.coords[k], index_param(strides[k]));
          lin = lin < 0 ? term : index_op(IrOp::IAdd, lin, term);
        }
        g.lin = lin < 0 ? index_const(0) : lin;
      }
      t.children.push_back({srcs[0], frame_id(std::move(g))});
      break;
    }
    case NodeKind::Roll: {
      auto c = coords(t.frame, n.shape);
      const auto ax = std::size_t(n.ivalue);
      const std::int64_t size = n.shape[ax];
      c[ax] = index_op(IrOp::IMod, index_op(IrOp::IAdd, c[ax], index_param(size - n.shift)), index_param(size));
      t.children.push_back({srcs[0], frame_id(Frame{-1, c, f.pred})});
      break;
    }
    case NodeKind::SetSlice: {
      auto c = coords(t.frame, n.shape);
      bool unit = true;
      for (auto& r : n.region) unit = unit && r.step == 1;
      std::vector<int> k(c.size());
      int cond = -1;
      for (std::size_t d = 0; d < c.size(); ++d) {
        const auto& r = n.region[d];
        int rel = index_op(IrOp::ISub, c[d], index_param(r.start));
        int in_range;
        if (unit) {
          k[d] = rel;
          in_range = pred_op(IrOp::PAnd, pred_op(IrOp::IGe, rel, index_const(0)),
                             pred_op(IrOp::ILt, rel, index_param(r.count)));
        } else {
          int step = index_param(r.step);
          k[d] = index_op(IrOp::IDiv, rel, step);
          int exact = pred_op(IrOp::IEq, index_op(IrOp::IMul, k[d], step), rel);
          in_range = pred_op(IrOp::PAnd, exact,
                             pred_op(IrOp::PAnd, pred_op(IrOp::IGe, k[d], index_const(0)),
                                     pred_op(IrOp::ILt, k[d], index_param(r.count))));
        }
        cond = and_pred(cond, in_range);
      }
      if (cond < 0) cond = pred_op(IrOp::IGe, index_const(0), index_const(0));
      t.aux = cond;
      t.children.push_back({srcs[0], t.frame});
      t.children.push_back({srcs[1], frame_id(Frame{-1, k, and_pred(f.pred, cond)})});
      break;
    }
    }
  }

  int finish(const Task& t) {
    const Node& n = *t.node;
    switch (n.kind) {
    case NodeKind::Buffer: break;
    case NodeKind::Fill: return scalar_param(n.dtype, n.fvalue, n.ivalue);
    case NodeKind::Iota: {
      auto c = coords(t.frame, n.shape);
      Instr conv{IrOp::IndexToValue, n.dtype};
      conv.a = c[std::size_t(n.ivalue)];
      int v = emit(conv);
      Instr mul{IrOp::Binary, n.dtype, std::uint8_t(graph::BinaryOp::Multiply)};
      mul.a = v;
      mul.b = scalar_param(n.dtype, n.fstep, std::int64_t(n.fstep));
      Instr add{IrOp::Binary, n.dtype, std::uint8_t(graph::BinaryOp::Add)};
      add.a = scalar_param(n.dtype, n.fvalue, std::int64_t(n.fvalue));
      add.b = emit(mul);
      return emit(add);
    }
    case NodeKind::Unary: {
      Instr i{IrOp::Unary, n.dtype, std::uint8_t(n.op)};
      i.a = child(t, 0);
      return emit(i);
    }
    case NodeKind::Binary: {
      Instr i{IrOp::Binary, n.dtype, std::uint8_t(n.op)};
      i.a = child(t, 0);
      i.b = child(t, 1);
      return emit(i);
    }
    case NodeKind::Where: {
      Instr i{IrOp::Select, n.dtype};
      i.a = child(t, 0);
      i.b = child(t, 1);
      i.c = child(t, 2);
      return emit(i);
    }
    case NodeKind::Cast: {
      Instr i{IrOp::Cast, n.dtype};
      i.a = child(t, 0);
      return emit(i);
    }
    case NodeKind::AxisMap:
    case NodeKind::Reshape:
    case NodeKind::Roll: return child(t, 0);
    case NodeKind::SetSlice: {
      Instr i{IrOp::Select, n.dtype};
      i.a = t.aux;
      i.b = child(t, 1);
      i.c = child(t, 0);
      return emit(i);
    }
    }
    LAZYFUSE_ASSERT(false, "unhandled node kind in lowering");
    return -1;
  }

  bool fits_index32() const {
    constexpr std::int64_t lim = std::numeric_limits<std::int32_t>::max() / 2;
    return out_.args.n < lim && max_storage_elems_ < lim && max_param_ < lim;
  }

  const fusion::KernelPlan& plan_;
  LoweredKernel out_;
  int root_lin_ = -1;
  std::unordered_map<Instr, int, InstrHash> cse_;
  std::map<std::string, int> param_keys_;
  std::vector<Frame> frames_;
  std::map<Frame, int> frame_ids_;
  std::map<std::pair<int, Shape>, std::vector<int>> unravel_;
  std::map<std::pair<std::uint64_t, std::int64_t>, int> input_slots_;
  std::map<MemoKey, int> memo_;
  std::int64_t max_storage_elems_ = 0;
  std::int64_t max_param_ = 0;
};

} // namespace

LoweredKernel lower(const fusion::KernelPlan& plan) {
  LAZYFUSE_ASSERT(!plan.outputs.empty(), "a kernel plan without outputs");
  LoweredKernel k = Lowerer(plan).run();
  if (config::log_enabled("lower")) config::log("lower", to_string(k.ir));
  return k;
}

} // namespace lazyfuse::codegen
