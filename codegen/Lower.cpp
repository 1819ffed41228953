#include "codegen/Lower.h"

#include "codegen/Analyze.h"
#include "codegen/Schedule.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/FlatTable.h"
#include "graph/Hash.h"
#include "graph/Ops.h"
#include "graph/Random.h"

#include <algorithm>
#include <cstring>
#include <deque>

namespace lazyfuse::codegen {

using graph::Node;
using graph::NodeKind;
using graph::NodePtr;

namespace {

struct Frame {
  int lin = -1;            // linear index in the current node's shape, or -1
  std::vector<int> coords; // coordinates in the current node's shape (when lin < 0)
  int pred = -1;           // loads happen only where this holds
  bool operator==(const Frame&) const = default;
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

struct MemoEntry {
  const Node* node = nullptr;
  int frame = 0;
  int value = -1;
  bool operator==(const MemoEntry&) const = default;
};

// (node, frame) -> IR value: lowering is on the host path of every materialization, so a FlatTable (no allocation
// per entry) rather than a map.
class MemoTable {
public:
  // The value, or -1; `visible` says whether a value computed in an earlier loop can be used here.
  template <class Visible> int find(const Node* n, int frame, Visible&& visible) const {
    const Entry* e = entries_.find(hash(n, frame), [&](const Entry& e) { return e.node == n && e.frame == frame; });
    return e && visible(e->value) ? e->value : -1;
  }
  int at(const Node* n, int frame) const {
    int v = find(n, frame, [](int) { return true; });
    LAZYFUSE_ASSERT_GE(v, 0, "lowering looked up a node it has not lowered");
    return v;
  }
  void insert(const Node* n, int frame, int value) {
    entries_
        .find_or_insert(
            hash(n, frame), [&](const Entry& e) { return e.node == n && e.frame == frame; },
            [&] {
              return Entry{n, frame, value};
            })
        .value = value;
  }

private:
  using Entry = MemoEntry;
  // Pointer values only pick a slot; nothing observable depends on them.
  static std::uint64_t hash(const Node* n, int frame) {
    return graph::mix64(reinterpret_cast<std::uintptr_t>(n) ^ (std::uint64_t(std::uint32_t(frame)) << 48));
  }
  graph::FlatTable<Entry> entries_;
};

class Lowerer {
public:
  explicit Lowerer(const fusion::KernelPlan& plan) : plan_(plan) {}

  LoweredKernel run() {
    if (plan_.outputs[0]->kind == NodeKind::Scan && !plan_.outputs[0]->materialized()) return run_scan();
    if (plan_.reduction) return run_reduction(*plan_.reduction);
    out_.args.n = graph::shape_size(plan_.shape);
    root_lin_ = emit({IrOp::LinearIndex});
    const int root = frame_id(Frame{root_lin_, {}, -1});
    root_frame_ = root;
    std::vector<int> values;
    for (auto& o : plan_.outputs) values.push_back(value_of(o, root));
    for (std::size_t k = 0; k < values.size(); ++k) {
      out_.ir.outputs.push_back(plan_.outputs[k]->dtype);
      Instr st{IrOp::Store, plan_.outputs[k]->dtype};
      st.a = values[k];
      st.slot = int(k);
      out_.ir.code.push_back(st);
      region_of_.push_back(0);
    }
    out_.ir.index32 = fits_index32();
    return std::move(out_);
  }

private:
  // ---- scan kernels: the source's value at the linear index, then the one ScanStore (codegen/KernelIR.h) ----
  LoweredKernel run_scan() {
    const Node& scan = *plan_.outputs[0];
    LAZYFUSE_ASSERT(plan_.outputs.size() == 1 && !plan_.reduction, "a scan plan has the scan as its only output");
    out_.args.n = graph::shape_size(scan.shape);
    root_lin_ = emit({IrOp::LinearIndex});
    const int root = frame_id(Frame{root_lin_, {}, -1});
    const int value = value_of(scan.sources_unlocked()[0], root);
    const auto axis = std::size_t(scan.ivalue);
    std::int64_t inner = 1;
    for (std::size_t d = axis + 1; d < scan.shape.size(); ++d) inner *= scan.shape[d];
    const int len = index_param(scan.shape[axis], "scan_len");
    // A contiguous scan axis is structure (the kernel scans it in tiles), any other stride a parameter.
    const int inner_id = inner == 1 ? index_const(1) : index_param(inner, "scan_inner");
    out_.args.reduced = scan.shape[axis];
    out_.ir.outputs.push_back(scan.dtype);
    Instr st{IrOp::ScanStore, scan.dtype};
    st.fn = std::uint8_t(scan.op);
    st.a = value;
    st.b = len;
    st.c = inner_id;
    st.slot = 0;
    out_.ir.code.push_back(st);
    region_of_.push_back(0);
    out_.ir.schedule = Schedule::Scan;
    out_.ir.index32 = fits_index32();
    return std::move(out_);
  }

  // ---- reduction kernels ----
  LoweredKernel run_reduction(const fusion::ReductionDomain& d) {
    const Shape outer = d.outer_shape();
    Shape reduced;
    for (auto a : d.axes) reduced.push_back(d.in_shape[std::size_t(a)]);
    out_.args.n = graph::shape_size(outer);
    out_.args.reduced = graph::shape_size(reduced);
    max_param_ = std::max(max_param_, graph::shape_size(d.in_shape));
    out_.ir.schedule = Schedule::Row;
    const int o = emit({IrOp::OuterIndex});
    const int outer_frame = frame_id(Frame{o, {}, -1});
    const std::vector<int> o_coords = coords(outer_frame, outer);
    const int n_reduced = index_param(graph::shape_size(reduced), "reduced");

    // Reductions to inline, sources before consumers.
    std::vector<NodePtr> reductions;
    {
      std::vector<std::pair<NodePtr, bool>> stack;
      std::vector<const Node*> seen;
      for (auto it = plan_.outputs.rbegin(); it != plan_.outputs.rend(); ++it) stack.push_back({*it, false});
      while (!stack.empty()) {
        auto [n, expanded] = stack.back();
        stack.pop_back();
        if (expanded) {
          if (n->kind == NodeKind::Reduce) reductions.push_back(n);
          continue;
        }
        if (n->materialized() || std::find(seen.begin(), seen.end(), n.get()) != seen.end()) continue;
        seen.push_back(n.get());
        stack.push_back({n, true});
        const auto& srcs = n->sources_unlocked();
        for (auto it = srcs.rbegin(); it != srcs.rend(); ++it) stack.push_back({*it, false});
      }
    }
    auto full_frame = [&](int r) {
      const std::vector<int> r_coords = coords(frame_id(Frame{r, {}, -1}), reduced);
      Frame f;
      std::size_t ko = 0, kr = 0;
      for (std::size_t a = 0; a < d.in_shape.size(); ++a)
        f.coords.push_back(std::binary_search(d.axes.begin(), d.axes.end(), std::int32_t(a)) ? r_coords[kr++]
                                                                                             : o_coords[ko++]);
      return frame_id(std::move(f));
    };
    // Does a reduction read another inlined reduction? Then it needs that one's result: a later loop. Independent
    // reductions share one loop, so they read their inputs once (mean and variance of the same rows, min and max).
    auto reads_reduction = [&](const NodePtr& red) {
      std::vector<const Node*> stack{red->sources_unlocked()[0].get()}, seen;
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (n->materialized() || std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
        seen.push_back(n);
        if (n->kind == NodeKind::Reduce) return true;
        for (auto& s : n->sources_unlocked()) stack.push_back(s.get());
      }
      return false;
    };
    int loops = 0, accumulators = 0, open_loop = -1, r = -1, frame = -1;
    bool dependent = false;
    std::vector<std::pair<const Node*, int>> pending; // reductions of the open loop, with their accumulators
    auto close_loop = [&] {
      region_ = 0;
      Instr end{IrOp::LoopEnd, DType::Bool};
      end.slot = open_loop;
      emit(end);
      for (auto& [red, acc] : pending) {
        Instr result{IrOp::Result, red->dtype, std::uint8_t(red->op)};
        result.slot = acc;
        memo_.insert(red, -1, emit(result));
      }
      pending.clear();
      open_loop = -1;
    };
    for (auto& red : reductions) {
      const bool reads = reads_reduction(red);
      dependent = dependent || reads;
      if (open_loop >= 0 && reads) close_loop();
      if (open_loop < 0) {
        open_loop = loops++;
        region_ = open_loop + 1;
        Instr begin{IrOp::LoopBegin, DType::Int64};
        begin.slot = open_loop;
        begin.a = n_reduced;
        r = emit(begin);
        frame = full_frame(r);
      }
      const NodePtr& src = red->sources_unlocked()[0];
      Instr acc{IrOp::Accumulate, src->dtype, std::uint8_t(red->op)};
      acc.slot = accumulators++;
      acc.a = value_of(src, frame);
      acc.b = r;
      acc.c = open_loop;
      emit(acc);
      pending.push_back({red.get(), acc.slot});
    }
    if (open_loop >= 0) close_loop();
    // Reduced outputs at the outer index, then full-shape outputs in one more loop.
    bool full = false;
    for (std::size_t k = 0; k < plan_.outputs.size(); ++k) {
      const NodePtr& out = plan_.outputs[k];
      out_.ir.outputs.push_back(out->dtype);
      if (out->shape == d.in_shape && !(outer == d.in_shape)) {
        full = true;
        continue;
      }
      int frame = outer_frame;
      if (out->shape != outer) { // keepdims: the outer coordinates with zeros at the reduced axes
        Frame f;
        std::size_t ko = 0;
        for (std::size_t a = 0; a < d.in_shape.size(); ++a)
          f.coords.push_back(std::binary_search(d.axes.begin(), d.axes.end(), std::int32_t(a)) ? index_const(0)
                                                                                               : o_coords[ko++]);
        frame = frame_id(std::move(f));
      }
      Instr st{IrOp::Store, out->dtype};
      st.a = value_of(out, frame);
      st.slot = int(k);
      out_.ir.code.push_back(st);
      region_of_.push_back(0);
    }
    if (full) {
      const int loop = loops++;
      region_ = loop + 1;
      Instr begin{IrOp::LoopBegin, DType::Int64};
      begin.slot = loop;
      begin.a = n_reduced;
      const int r = emit(begin);
      const int frame = full_frame(r);
      const auto& c = frames_[std::size_t(frame)].coords;
      const auto strides = graph::contiguous_strides(d.in_shape);
      int lin = -1;
      for (std::size_t a = 0; a < c.size(); ++a) {
        if (d.in_shape[a] == 1) continue;
        int term = scaled(c[a], strides[a], "stride:" + std::to_string(a));
        lin = lin < 0 ? term : index_op(IrOp::IAdd, lin, term);
      }
      if (lin < 0) lin = index_const(0);
      for (std::size_t k = 0; k < plan_.outputs.size(); ++k) {
        const NodePtr& out = plan_.outputs[k];
        if (!(out->shape == d.in_shape && !(outer == d.in_shape))) continue;
        Instr st{IrOp::StoreAt, out->dtype};
        st.a = lin;
        st.b = value_of(out, frame);
        st.slot = int(k);
        out_.ir.code.push_back(st);
        region_of_.push_back(region_);
      }
      region_ = 0;
      Instr end{IrOp::LoopEnd, DType::Bool};
      end.slot = loop;
      emit(end);
    }
    ReductionFacts facts;
    facts.outer = out_.args.n;
    facts.inner_kept = !std::binary_search(d.axes.begin(), d.axes.end(), std::int32_t(d.in_shape.size()) - 1);
    facts.full_outputs = full;
    facts.dependent = dependent;
    out_.ir.schedule = choose_reduction_schedule(facts);
    out_.ir.index32 = fits_index32();
    return std::move(out_);
  }

  // ---- IR emission with common-subexpression elimination ----
  int emit(Instr i) {
    auto& code = out_.ir.code;
    if (i.op == IrOp::IndexParam || i.op == IrOp::ScalarParam) {
      code.push_back(i);
      region_of_.push_back(0); // the printer declares parameters once, at the top
      return int(code.size()) - 1;
    }
    // Instruction indices in a FlatTable: lowering a small kernel allocates almost nothing. An equal instruction of
    // another loop is not visible here: the probe passes it and this one gets an entry of its own.
    return cse_.find_or_insert(
        InstrHash{}(i), [&](std::int32_t id) { return code[std::size_t(id)] == i && visible(id); },
        [&] {
          code.push_back(i);
          region_of_.push_back(i.op == IrOp::IndexConst ? 0 : region_);
          return std::int32_t(code.size() - 1);
        });
  }
  // A value computed inside a loop is visible only in that loop; outer values everywhere after them.
  bool visible(int id) const { return region_of_[std::size_t(id)] == 0 || region_of_[std::size_t(id)] == region_; }
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
      for (auto& [k, id] : param_keys_)
        if (k == key) return id;
    Instr i{IrOp::IndexParam, DType::Int64};
    i.slot = int(out_.ir.params.size());
    out_.ir.params.push_back({true, DType::Int64});
    out_.args.params.push_back({value, 0});
    out_.scalar_sources.push_back(nullptr);
    max_param_ = std::max(max_param_, value < 0 ? -value : value);
    int id = emit(i);
    if (!key.empty()) param_keys_.emplace_back(key, id);
    return id;
  }
  // `fill`: the Fill node holding the value, if it is one (a value that may differ in an equal graph).
  int scalar_param(DType t, double f, std::int64_t iv, const Node* fill = nullptr) {
    Instr i{IrOp::ScalarParam, t};
    i.slot = int(out_.ir.params.size());
    out_.ir.params.push_back({false, t});
    out_.args.params.push_back({iv, f, fill ? fill->fimag : 0.0});
    out_.scalar_sources.push_back(fill);
    return emit(i);
  }
  // coord * stride. A unit stride (and a zero start, see AxisMap) is part of the kernel's structure, not a
  // parameter: the innermost axis of contiguous data then indexes as i + const, which the CUDA printer turns into
  // vector loads and the compiler into fewer integer instructions. A kernel over other strides is another kernel.
  int scaled(int coord, std::int64_t stride, const std::string& key = {}) {
    return stride == 1 ? coord : index_op(IrOp::IMul, coord, index_param(stride, key));
  }
  int and_pred(int p, int q) { return p < 0 ? q : (q < 0 ? p : pred_op(IrOp::PAnd, p, q)); }

  int frame_id(Frame f) {
    for (std::size_t k = 0; k < frames_.size(); ++k)
      if (frames_[k] == f) return int(k);
    frames_.push_back(std::move(f));
    return int(frames_.size()) - 1;
  }

  // Coordinates of frame `fid` in `shape`: its own, or its linear index unravelled (once per frame and shape).
  std::vector<int> coords(int fid, const Shape& shape) {
    const Frame& f = frames_[std::size_t(fid)];
    if (f.lin < 0) {
      LAZYFUSE_ASSERT(f.coords.size() == shape.size(), "frame rank differs from the node's");
      return f.coords;
    }
    for (auto& u : unravel_)
      if (u.frame == fid && u.shape == shape) return u.coords;
    std::vector<int> c(shape.size());
    if (shape.size() == 1) {
      c[0] = f.lin;
    } else if (!shape.empty()) {
      std::vector<std::int32_t> dims;
      for (std::size_t k = 0; k < shape.size(); ++k)
        dims.push_back(index_param(shape[k], "dim:" + std::to_string(f.lin) + ":" + graph::format_shape(shape) + ":" +
                                                 std::to_string(k)));
      auto& groups = out_.ir.unravels;
      auto it = std::find(groups.begin(), groups.end(), dims);
      const int group = int(it - groups.begin());
      if (it == groups.end()) groups.push_back(dims);
      for (std::size_t k = 0; k < shape.size(); ++k) {
        Instr coord{IrOp::Coord, DType::Int64};
        coord.a = f.lin;
        coord.slot = group;
        coord.imm = std::int64_t(k);
        c[k] = emit(coord);
      }
    }
    unravel_.push_back({fid, shape, c});
    return c;
  }

  int input_slot(const Node& n, const graph::BufferView& v, DType t) {
    for (auto& in : input_slots_)
      if (in.serial == v.storage->serial && in.offset == v.offset) return in.slot;
    int slot = int(out_.ir.inputs.size());
    out_.ir.inputs.push_back({t});
    out_.args.inputs.push_back(static_cast<const char*>(v.storage->data) + v.offset * std::int64_t(itemsize(t)));
    out_.input_sources.push_back(&n);
    max_storage_elems_ = std::max<std::int64_t>(max_storage_elems_, std::int64_t(v.storage->bytes / itemsize(t)));
    input_slots_.push_back({v.storage->serial, v.offset, slot});
    return slot;
  }

  int load(const NodePtr& n, const graph::BufferView& v, int fid) {
    const Frame& f = frames_[std::size_t(fid)];
    int slot = input_slot(*n, v, n->dtype);
    if (std::find(out_.input_nodes.begin(), out_.input_nodes.end(), n) == out_.input_nodes.end())
      out_.input_nodes.push_back(n);
    if (graph::is_contiguous(v, n->shape) && f.lin >= 0) {
      if (f.lin == root_lin_ && f.pred < 0 &&
          alignment_class(out_.args.inputs[std::size_t(slot)], n->dtype) == AlignmentClass::Vector) {
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
      // A size-1 axis' coordinate is always 0; a broadcast axis (stride 0) is structure, as a unit stride is: the
      // kernel then sees that the address stays along it (a broadcast column is one address per warp).
      if (n->shape[k] == 1 || v.strides[k] == 0) continue;
      // Loads of one input with one stride share the parameter, so that equal addresses in different loops are
      // equal expressions (the CUDA printer's row cache recognizes rows read twice by them).
      int term = scaled(c[k], v.strides[k],
                        "in" + std::to_string(slot) + ":" + std::to_string(k) + ":" + std::to_string(v.strides[k]));
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
  // Tasks point at the handles in the plan's graph (its nodes' source lists, the root's caller): lowering runs
  // under the evaluation lock, which keeps them, so a task copies no handle and allocates nothing (a first call
  // lowers thousands of nodes).
  struct Child {
    const NodePtr* node = nullptr;
    int frame = -1;
  };
  struct Task {
    const NodePtr* node = nullptr;
    int frame = -1;
    bool expanded = false;
    std::array<Child, Node::kMaxSources> children{};
    std::size_t child_count = 0;
    int aux = -1; // SetSlice: the region predicate

    void add_child(const NodePtr& n, int f) {
      LAZYFUSE_ASSERT_LT(child_count, children.size(), "a node lowered with more children than sources");
      children[child_count++] = {&n, f};
    }
  };

  // A fill becomes a fresh parameter at each use: hash-consing makes equal scalars one node, and sharing one
  // parameter between their uses would make the kernel's structure depend on which scalar values happen to be
  // equal (x * 0.5 + y * 0.5 against x * 0.5 + y * 0.7), so a new scalar could need a new kernel.
  static bool is_scalar(const Node& n) { return n.kind == NodeKind::Fill && !n.materialized(); }
  int scalar_of(const Node& n) { return scalar_param(n.dtype, n.fvalue, n.ivalue, &n); }

  // The task stacks of value_of, one per nesting level (a gather lowers its source from inside its own task), kept
  // by the thread between lowerings: a first call's chain of thousands of nodes grows a stack of hundreds of KiB,
  // which glibc would map afresh, and fault in page by page, at every lowering.
  class TaskStack {
  public:
    TaskStack() : stack_(lease()) { stack_.clear(); }
    ~TaskStack() {
      if (stack_.capacity() > kKeptTasks) std::vector<Task>().swap(stack_); // an unusually deep plan's is not kept
      --depth();
    }
    TaskStack(const TaskStack&) = delete;
    TaskStack& operator=(const TaskStack&) = delete;
    std::vector<Task>& operator*() { return stack_; }

  private:
    static constexpr std::size_t kKeptTasks = 8192; // about 1.3 MiB a level
    static std::size_t& depth() {
      thread_local std::size_t d = 0;
      return d;
    }
    static std::vector<Task>& lease() {
      thread_local std::deque<std::vector<Task>> stacks; // a deque: a deeper level's growth moves no stack in use
      if (stacks.size() <= depth()) stacks.emplace_back();
      return stacks[depth()++];
    }
    std::vector<Task>& stack_;
  };

  int value_of(const NodePtr& root, int root_frame) {
    if (is_scalar(*root)) return scalar_of(*root);
    TaskStack lease;
    std::vector<Task>& stack = *lease;
    stack.push_back({&root, root_frame});
    while (!stack.empty()) {
      Task t = stack.back();
      stack.pop_back();
      const Node& n = **t.node;
      const int memo_frame = memo_frame_of(n, t.frame);
      if (memo_find(&n, memo_frame) >= 0) continue;
      if (!t.expanded) {
        if (const graph::BufferView* buf = n.buffer_unlocked()) {
          memo_.insert(&n, memo_frame, load(*t.node, *buf, t.frame));
          continue;
        }
        plan_children(t);
        t.expanded = true;
        stack.push_back(t);
        for (std::size_t k = t.child_count; k-- > 0;) {
          const Child& c = t.children[k];
          if (is_scalar(**c.node)) continue; // resolved by child(), once per use
          if (memo_find(c.node->get(), memo_frame_of(**c.node, c.frame)) < 0) stack.push_back({c.node, c.frame});
        }
        continue;
      }
      memo_.insert(&n, memo_frame, finish(t));
    }
    return memo_.at(root.get(), memo_frame_of(*root, root_frame));
  }

  int memo_find(const Node* n, int frame) const {
    return memo_.find(n, frame, [&](int id) { return visible(id); });
  }

  // An inlined reduction's value does not depend on the index within its kernel: it is the reduction of the
  // current outer element.
  static int memo_frame_of(const Node& n, int frame) {
    if (n.materialized()) return frame;
    return n.kind == NodeKind::Reduce ? -1 : frame;
  }

  int child(const Task& t, std::size_t k) {
    const Child& c = t.children[k];
    const Node& node = **c.node;
    if (is_scalar(node)) return scalar_of(node);
    return memo_.at(&node, memo_frame_of(node, c.frame));
  }

  void plan_children(Task& t) {
    const Node& n = **t.node;
    const auto& srcs = (*t.node)->sources_unlocked(); // lowering runs under the evaluation lock
    const Frame f = frames_[std::size_t(t.frame)];
    switch (n.kind) {
    case NodeKind::Buffer: LAZYFUSE_ASSERT(false, "a buffer node without a buffer"); break;
    case NodeKind::Reduce: LAZYFUSE_ASSERT(false, "a reduction reached outside its reduction kernel"); break;
    case NodeKind::Matmul:
      LAZYFUSE_ASSERT(false, "a matrix product reached inside a kernel (partition stores them)");
      break;
    case NodeKind::Scan: LAZYFUSE_ASSERT(false, "a scan reached inside another kernel (partition stores them)"); break;
    case NodeKind::Sort:
    case NodeKind::BinCount:
      LAZYFUSE_ASSERT(false, "a sort or a count reached inside a kernel (partition stores them)");
      break;
    case NodeKind::Fill:
    case NodeKind::Iota: break;
    case NodeKind::Random:
    case NodeKind::Unary:
    case NodeKind::Binary:
    case NodeKind::Where:
    case NodeKind::Cast:
      for (auto& s : srcs) t.add_child(s, t.frame);
      break;
    case NodeKind::AxisMap: {
      auto c = coords(t.frame, n.shape);
      Frame g;
      g.pred = f.pred;
      for (auto& e : n.axes) {
        if (e.view_axis < 0) {
          g.coords.push_back(index_param(e.start));
        } else {
          const int step = scaled(c[std::size_t(e.view_axis)], e.step);
          g.coords.push_back(e.start == 0 ? step : index_op(IrOp::IAdd, index_param(e.start), step));
        }
      }
      t.add_child(srcs[0], frame_id(std::move(g)));
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
          int term = scaled(f.coords[k], strides[k]);
          lin = lin < 0 ? term : index_op(IrOp::IAdd, lin, term);
        }
        g.lin = lin < 0 ? index_const(0) : lin;
      }
      t.add_child(srcs[0], frame_id(std::move(g)));
      break;
    }
    case NodeKind::Roll: {
      auto c = coords(t.frame, n.shape);
      const auto ax = std::size_t(n.ivalue);
      const std::int64_t size = n.shape[ax];
      c[ax] = index_op(IrOp::IMod, index_op(IrOp::IAdd, c[ax], index_param(size - n.shift)), index_param(size));
      t.add_child(srcs[0], frame_id(Frame{-1, c, f.pred}));
      break;
    }
    case NodeKind::Gather: {
      // The index arrays here; the source in finish(), at coordinates computed from their values.
      const Shape& b = srcs[1]->shape;
      int g = t.frame;
      if (b != n.shape) {
        auto c = coords(t.frame, n.shape);
        const auto at = c.begin() + n.ivalue;
        g = frame_id(Frame{-1, std::vector<int>(at, at + std::ptrdiff_t(b.size())), f.pred});
      }
      for (std::size_t k = 1; k < srcs.size(); ++k) t.add_child(srcs[k], g);
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
      t.add_child(srcs[0], t.frame);
      t.add_child(srcs[1], frame_id(Frame{-1, k, and_pred(f.pred, cond)}));
      break;
    }
    }
  }

  int finish(const Task& t) {
    const Node& n = **t.node;
    switch (n.kind) {
    case NodeKind::Buffer:
    case NodeKind::Reduce:
    case NodeKind::Matmul:
    case NodeKind::Scan:
    case NodeKind::Sort:
    case NodeKind::BinCount: break;
    case NodeKind::Fill: return scalar_of(n);
    case NodeKind::Iota: {
      auto c = coords(t.frame, n.shape);
      Instr conv{IrOp::IndexToValue, n.dtype};
      conv.a = c[std::size_t(n.ivalue)];
      int v = emit(conv);
      // Start and step are structure (the plan cache's signature holds them), so arange's usual 0 and 1 need no
      // arguments and no arithmetic: the converted index is already the value, bit for bit (it is never -0).
      if (n.fstep != 1) {
        Instr mul{IrOp::Binary, n.dtype, std::uint8_t(graph::BinaryOp::Multiply)};
        mul.a = v;
        mul.b = scalar_param(n.dtype, n.fstep, std::int64_t(n.fstep));
        v = emit(mul);
      }
      if (n.fvalue != 0) {
        Instr add{IrOp::Binary, n.dtype, std::uint8_t(graph::BinaryOp::Add)};
        add.a = scalar_param(n.dtype, n.fvalue, std::int64_t(n.fvalue));
        add.b = v;
        v = emit(add);
      }
      return v;
    }
    case NodeKind::Random: return random(t);
    case NodeKind::Gather: return gather(t);
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

  // The source read at the checked indices: each source axis takes either its index array's value or the next of
  // the result's own coordinates outside B.
  int gather(const Task& t) {
    const Node& n = **t.node;
    const NodePtr& src = (*t.node)->sources_unlocked()[0];
    const Frame f = frames_[std::size_t(t.frame)];
    const auto c = coords(t.frame, n.shape);
    const std::size_t b_rank = (*t.node)->sources_unlocked()[1]->shape.size();
    Frame s;
    s.pred = f.pred;
    std::size_t next = 0; // the next result axis outside B
    for (std::size_t d = 0; d < src->shape.size(); ++d) {
      const auto it = std::find(n.reduce_axes.begin(), n.reduce_axes.end(), std::int32_t(d));
      if (it == n.reduce_axes.end()) {
        if (next == std::size_t(n.ivalue)) next += b_rank;
        s.coords.push_back(c[next++]);
        continue;
      }
      const auto k = std::size_t(it - n.reduce_axes.begin());
      Instr check{IrOp::CheckedIndex, DType::Int64};
      check.a = child(t, k);
      check.b = index_param(src->shape[d]);
      check.c = f.pred;
      check.slot = int(out_.checks.size());
      out_.checks.push_back({(*t.node)->sources_unlocked()[k + 1], int(d), src->shape[d], t.frame == root_frame_});
      s.coords.push_back(emit(check));
    }
    return value_of(src, frame_id(std::move(s)));
  }

  // Element i of a draw reads counter offset + i, i the element's linear index in the node's own shape (whatever
  // kernel, frame or view reaches it), so its value does not depend on fusion.
  int random(const Task& t) {
    const Node& n = **t.node;
    const Frame& f = frames_[std::size_t(t.frame)];
    int lin = f.lin;
    if (lin < 0) {
      const auto strides = graph::contiguous_strides(n.shape);
      for (std::size_t k = 0; k < n.shape.size(); ++k) {
        if (n.shape[k] == 1) continue;
        const int term = scaled(f.coords[k], strides[k]);
        lin = lin < 0 ? term : index_op(IrOp::IAdd, lin, term);
      }
      if (lin < 0) lin = index_const(0);
    }
    const auto dist = graph::RandomDist(n.op);
    Instr r{IrOp::Random, n.dtype, std::uint8_t(n.op)};
    r.a = lin;
    r.b = child(t, 0);
    r.c = child(t, 1);
    r.imm = -1;
    // Parameters of the distribution: values of the node, not structure, so other parameters reuse the kernel.
    if (dist == graph::RandomDist::Integers) {
      r.slot = scalar_param(DType::UInt64, 0, n.ivalue);
    } else {
      const int count = graph::real_params(dist);
      if (count >= 1) r.slot = scalar_param(DType::Float64, n.fvalue, 0);
      if (count >= 2) r.imm = scalar_param(DType::Float64, n.fstep, 0);
    }
    return emit(r);
  }

  bool fits_index32() const { return codegen::fits_index32(std::max({out_.args.n, max_storage_elems_, max_param_})); }

  const fusion::KernelPlan& plan_;
  LoweredKernel out_;
  int root_lin_ = -1;
  int root_frame_ = -1; // an elementwise kernel's frame of its own output elements (every one, no predicate)
  graph::FlatTable<std::int32_t, -1> cse_;
  std::vector<int> region_of_; // per instruction: 0 outside loops, k + 1 inside loop k
  int region_ = 0;
  std::vector<std::pair<std::string, int>> param_keys_;
  std::vector<Frame> frames_;
  struct Unravel {
    int frame;
    Shape shape;
    std::vector<int> coords;
  };
  std::vector<Unravel> unravel_;
  struct InputSlotKey {
    std::uint64_t serial;
    std::int64_t offset;
    int slot;
  };
  std::vector<InputSlotKey> input_slots_;
  MemoTable memo_;
  std::int64_t max_storage_elems_ = 0;
  std::int64_t max_param_ = 0;
};

} // namespace

AlignmentClass alignment_class(const void* first, DType t) {
  // The printer reads kElementsPerThread elements at once, aligned to their total size.
  const auto vector_bytes = std::uintptr_t(kElementsPerThread) * itemsize(t);
  return reinterpret_cast<std::uintptr_t>(first) % vector_bytes == 0 ? AlignmentClass::Vector
                                                                     : AlignmentClass::Unaligned;
}

LoweredKernel lower(const fusion::KernelPlan& plan) {
  LAZYFUSE_ASSERT(!plan.outputs.empty(), "a kernel plan without outputs");
  LoweredKernel k = Lowerer(plan).run();
  analyze(k.ir);
  // Schedule choices that need the analyses (the row cache's size, the staged loads) and change the kernel's text:
  // part of its structure, so hashed with it.
  k.ir.register_row_vectors = choose_register_row_vectors(k.ir, k.args.reduced);
  k.ir.register_row_partial = k.ir.register_row_vectors > 0 && register_rows_partial(k.args.reduced);
  k.ir.transpose_tiles_wide = choose_wide_transpose_tiles(k.ir, k.args);
  k.ir.finalize();
  if (config::log_enabled("lower")) config::log("lower", to_string(k.ir));
  return k;
}

} // namespace lazyfuse::codegen
