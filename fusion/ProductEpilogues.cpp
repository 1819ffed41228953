#include "fusion/ProductEpilogues.h"

#include "graph/Ops.h"

namespace lazyfuse::fusion::steps {

namespace {

using graph::BinaryOp;
using graph::Node;
using graph::NodeKind;
using graph::NodePtr;

bool gemm_float(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

// The value of a scalar of type `t`: a Fill node, or a view (broadcast) of one.
bool scalar_value(const Node& n, DType t, double& value) {
  const Node* f = &n;
  if (f->kind == NodeKind::AxisMap) f = f->sources_unlocked()[0].get();
  if (f->kind != NodeKind::Fill || f->dtype != t || n.dtype != t) return false;
  value = f->fvalue;
  return true;
}

bool is_binary(const Node& n, BinaryOp op) {
  return n.kind == NodeKind::Binary && BinaryOp(n.op) == op;
}

// The other source of a binary node that reads `x`, or null when x is not one of its two sources or both.
const NodePtr* other_source(const Node& n, const Node* x) {
  const auto& s = n.sources_unlocked();
  if (s[0].get() == x && s[1].get() != x) return &s[1];
  if (s[1].get() == x && s[0].get() != x) return &s[0];
  return nullptr;
}

// Whether y (of the product's shape (batch..., m, n)) is a row of n > 1 values broadcast over the other axes: an axis
// map whose source has n elements, read along the last axis from the start with step 1 (every other source axis of
// length 1), or a buffer read that way (a broadcast of a materialized row folds into a buffer's strides).
bool bias_row(const Node& y, const Node& product) {
  const std::int64_t n = product.shape.back();
  if (n <= 1 || y.dtype != product.dtype) return false;
  const std::size_t last = product.shape.size() - 1;
  if (const graph::BufferView* buf = y.buffer_unlocked(); buf && y.kind == NodeKind::Buffer) {
    for (std::size_t d = 0; d < last; ++d)
      if (y.shape[d] != 1 && buf->strides[d] != 0) return false;
    return buf->strides[last] == 1;
  }
  if (y.kind != NodeKind::AxisMap) return false;
  const NodePtr& src = y.sources_unlocked()[0];
  if (src->size() != n || src->kind == NodeKind::Fill) return false;
  bool found = false;
  for (std::size_t d = 0; d < y.axes.size(); ++d) {
    const graph::AxisEntry& e = y.axes[d];
    if (src->shape[d] == 1) continue;
    if (e.view_axis != int(last) || e.start != 0 || e.step != 1) return false;
    found = true;
  }
  return found;
}

// An operand x * s (or s * x) with a scalar s: folds s into alpha and reads x.
NodePtr unscaled_operand(const NodePtr& operand, double& alpha) {
  if (!is_binary(*operand, BinaryOp::Multiply)) return operand;
  const auto& s = operand->sources_unlocked();
  for (int side = 0; side < 2; ++side) {
    double v = 0;
    const NodePtr& x = s[std::size_t(1 - side)];
    if (scalar_value(*s[std::size_t(side)], operand->dtype, v) && x->shape == operand->shape &&
        x->dtype == operand->dtype) {
      alpha *= v;
      return x;
    }
  }
  return operand;
}

struct Chain {
  Subgraph& g;
  int top; // position of the chain's last node so far
  std::vector<int> folded;

  // The one consumer of the chain's last node, when the chain may grow through it.
  const Node* next() const {
    const Info& info = g.info[std::size_t(top)];
    if (info.consumers != 1 || info.root || info.stored) return nullptr;
    const Node* x = info.node;
    for (std::size_t k = std::size_t(top) + 1; k < g.order.size(); ++k) {
      const Node& n = *g.order[k];
      for (const NodePtr& s : n.sources_unlocked())
        if (s.get() == x) return g.info[k].stored ? nullptr : &n;
    }
    return nullptr;
  }
  void extend(const Node* n) {
    folded.push_back(top);
    top = g.find(n);
  }
};

void fold(Subgraph& g, std::size_t k) {
  const Node& p = *g.order[k];
  if (!gemm_float(p.dtype) || g.info[k].stored) return;
  auto e = std::make_shared<ProductEpilogue>();
  e->product = g.order[k];
  // An operand stored already (eager mode) is computed anyway: it is read as it is.
  for (int side = 0; side < 2; ++side) {
    const NodePtr& src = p.sources_unlocked()[std::size_t(side)];
    const int j = g.find(src.get());
    (side ? e->b : e->a) = j >= 0 && g.info[std::size_t(j)].stored ? src : unscaled_operand(src, e->alpha);
  }
  Chain chain{g, int(k), {}};
  const Node* x = &p;
  // s * (a @ b)
  while (const Node* n = chain.next()) {
    double v = 0;
    const NodePtr* s = is_binary(*n, BinaryOp::Multiply) ? other_source(*n, x) : nullptr;
    if (!s || !scalar_value(**s, p.dtype, v) || n->shape != p.shape) break;
    e->alpha *= v;
    chain.extend(n);
    x = n;
  }
  // + c, + t * c, - c, + bias
  if (const Node* n = chain.next(); n && n->shape == p.shape && n->dtype == p.dtype) {
    const bool add = is_binary(*n, BinaryOp::Add);
    const bool subtract = is_binary(*n, BinaryOp::Subtract) && n->sources_unlocked()[0].get() == x;
    const NodePtr* y = add || subtract ? other_source(*n, x) : nullptr;
    double unused = 0;
    if (y && (*y)->dtype == p.dtype && !scalar_value(**y, p.dtype, unused)) {
      if (add && bias_row(**y, p)) {
        e->bias = *y;
      } else {
        double t = 1;
        const Node& yn = **y;
        e->c = *y;
        if (is_binary(yn, BinaryOp::Multiply)) {
          const auto& ys = yn.sources_unlocked();
          for (int side = 0; side < 2; ++side)
            if (scalar_value(*ys[std::size_t(side)], p.dtype, t) && ys[std::size_t(1 - side)]->shape == p.shape) {
              e->c = ys[std::size_t(1 - side)];
              break;
            }
          if (e->c == *y) t = 1;
        }
        e->beta = subtract ? -t : t;
      }
      if (e->c && scalar_value(*e->c, p.dtype, unused)) { // a scalar addend stays elementwise work
        e->c = nullptr;
        e->beta = 0;
      } else {
        chain.extend(n);
        x = n;
      }
    }
  }
  // ReLU, the tanh GELU
  if (const Node* n = chain.next(); n && n->shape == p.shape && n->dtype == p.dtype) {
    double zero = 1;
    const NodePtr* other = is_binary(*n, BinaryOp::Maximum) ? other_source(*n, x) : nullptr;
    if (other && scalar_value(**other, p.dtype, zero) && zero == 0) {
      e->activation = ProductActivation::Relu;
      chain.extend(n);
    } else if (n->kind == NodeKind::Unary && graph::UnaryOp(n->op) == graph::UnaryOp::GeluTanh) {
      e->activation = ProductActivation::GeluTanh;
      chain.extend(n);
    }
  }
  const bool operands_folded = e->a != p.sources_unlocked()[0] || e->b != p.sources_unlocked()[1];
  if (chain.folded.empty() && !operands_folded) return;
  for (int j : chain.folded) g.info[std::size_t(j)].folded = true;
  g.info[std::size_t(chain.top)].epilogue = std::move(e);
}

} // namespace

void fold_product_epilogues(Subgraph& g) {
  for (std::size_t k = 0; k < g.order.size(); ++k)
    if (g.order[k]->kind == NodeKind::Matmul) fold(g, k);
}

} // namespace lazyfuse::fusion::steps
