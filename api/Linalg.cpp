// Matrix products (graph/Matmul.h's node) and NumPy's linalg functions (linalg.hpp), the latter built from
// reductions and elementwise ops.
#include <lazyfuse/creation.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/linalg.hpp>
#include <lazyfuse/manipulation.hpp>

#include "api/ApiAccess.h"
#include "api/Reductions.h"
#include "graph/Build.h"
#include "graph/Matmul.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>

namespace lazyfuse {

using detail::mean_type;
using detail::node_of;
using detail::wrap_node;

namespace {

std::string axes_text(const std::vector<int>& axes) {
  std::string s = "[";
  for (std::size_t k = 0; k < axes.size(); ++k) s += (k ? ", " : "") + std::to_string(axes[k]);
  return s + "]";
}

Array product(const Array& a, const Array& b, const char* op) {
  return wrap_node(graph::matmul(node_of(a, op, "a"), node_of(b, op, "b"), op));
}

} // namespace

Array matmul(const Array& a, const Array& b) {
  return product(a, b, "matmul");
}

Array tensordot(const Array& a, const Array& b, const std::pair<std::vector<int>, std::vector<int>>& axes) {
  const graph::NodePtr& na = node_of(a, "tensordot", "a");
  const graph::NodePtr& nb = node_of(b, "tensordot", "b");
  const auto& [axes_a, axes_b] = axes;
  const std::string both = graph::describe("a", *na) + " and " + graph::describe("b", *nb);
  if (axes_a.size() != axes_b.size())
    throw ShapeError("tensordot: " + std::to_string(axes_a.size()) + " axes of a " + axes_text(axes_a) + " against " +
                     std::to_string(axes_b.size()) + " of b " + axes_text(axes_b) + " for " + both);
  auto normalized = [&](const std::vector<int>& list, const graph::Node& n) {
    std::vector<int> out;
    for (int ax : list) {
      const int d = graph::normalize_axis("tensordot", ax, n.ndim());
      if (std::find(out.begin(), out.end(), d) != out.end())
        throw IndexError("tensordot: repeated axis " + std::to_string(ax) + " in " + axes_text(list));
      out.push_back(d);
    }
    return out;
  };
  const std::vector<int> ca = normalized(axes_a, *na), cb = normalized(axes_b, *nb);
  std::int64_t k = 1;
  for (std::size_t i = 0; i < ca.size(); ++i) {
    const std::int64_t la = na->shape[std::size_t(ca[i])], lb = nb->shape[std::size_t(cb[i])];
    if (la != lb)
      throw ShapeError("tensordot: shape mismatch for sum: axis " + std::to_string(ca[i]) + " of " +
                       graph::describe("a", *na) + " has " + std::to_string(la) + " elements, axis " +
                       std::to_string(cb[i]) + " of " + graph::describe("b", *nb) + " has " + std::to_string(lb) +
                       " (axes " + axes_text(axes_a) + " against " + axes_text(axes_b) + ")");
    k *= la;
  }
  // a as (free, contracted) and b as (contracted, free), each flattened into a matrix.
  std::vector<int> perm_a, perm_b;
  Shape out;
  std::int64_t m = 1, n = 1;
  for (int d = 0; d < int(na->ndim()); ++d)
    if (std::find(ca.begin(), ca.end(), d) == ca.end()) {
      perm_a.push_back(d);
      out.push_back(na->shape[std::size_t(d)]);
      m *= na->shape[std::size_t(d)];
    }
  perm_a.insert(perm_a.end(), ca.begin(), ca.end());
  perm_b = cb;
  for (int d = 0; d < int(nb->ndim()); ++d)
    if (std::find(cb.begin(), cb.end(), d) == cb.end()) {
      perm_b.push_back(d);
      out.push_back(nb->shape[std::size_t(d)]);
      n *= nb->shape[std::size_t(d)];
    }
  const graph::NodePtr ma = graph::reshape(graph::transpose(na, perm_a), {m, k});
  const graph::NodePtr mb = graph::reshape(graph::transpose(nb, perm_b), {k, n});
  return wrap_node(graph::reshape(graph::matmul(ma, mb, "tensordot"), out));
}

Array tensordot(const Array& a, const Array& b, int axes) {
  const graph::NodePtr& na = node_of(a, "tensordot", "a");
  const graph::NodePtr& nb = node_of(b, "tensordot", "b");
  if (axes < 0 || axes > na->ndim() || axes > nb->ndim())
    throw ShapeError("tensordot: cannot contract " + std::to_string(axes) + " axes of " + graph::describe("a", *na) +
                     " and " + graph::describe("b", *nb));
  std::vector<int> la, lb;
  for (int i = 0; i < axes; ++i) {
    la.push_back(int(na->ndim()) - axes + i);
    lb.push_back(i);
  }
  return tensordot(a, b, {la, lb});
}

Array dot(const Array& a, const Array& b) {
  const graph::NodePtr& na = node_of(a, "dot", "a");
  const graph::NodePtr& nb = node_of(b, "dot", "b");
  if (na->ndim() == 0 || nb->ndim() == 0) return a * b;
  if (nb->ndim() == 1 || (na->ndim() <= 2 && nb->ndim() <= 2)) return product(a, b, "dot");
  return tensordot(a, b, {{int(na->ndim()) - 1}, {int(nb->ndim()) - 2}});
}

Array inner(const Array& a, const Array& b) {
  const graph::NodePtr& na = node_of(a, "inner", "a");
  const graph::NodePtr& nb = node_of(b, "inner", "b");
  if (na->ndim() == 0 || nb->ndim() == 0) return a * b;
  return tensordot(a, b, {{-1}, {-1}});
}

Array vdot(const Array& a, const Array& b) {
  const graph::NodePtr& na = node_of(a, "vdot", "a");
  const graph::NodePtr& nb = node_of(b, "vdot", "b");
  if (na->size() != nb->size())
    throw ShapeError("vdot: " + graph::describe("a", *na) + " has " + std::to_string(na->size()) + " elements, " +
                     graph::describe("b", *nb) + " has " + std::to_string(nb->size()) + "; both are flattened");
  const Array fa = a.reshape({-1});
  return product(is_complex(a.dtype()) ? conj(fa) : fa, b.reshape({-1}), "vdot");
}

Array outer(const Array& a, const Array& b) {
  detail::require_valid(a, "outer", "a");
  detail::require_valid(b, "outer", "b");
  return a.reshape({-1, 1}) * b.reshape({1, -1});
}

Array kron(const Array& a, const Array& b) {
  detail::require_valid(a, "kron", "a");
  detail::require_valid(b, "kron", "b");
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  // Both padded to nd axes; a's axis d becomes axis 2d of the product and b's axis 2d + 1, then each pair merges.
  const std::size_t nd = std::max(a.ndim(), b.ndim());
  Shape sa(nd - a.ndim(), 1), sb(nd - b.ndim(), 1);
  sa.insert(sa.end(), a.shape().begin(), a.shape().end());
  sb.insert(sb.end(), b.shape().begin(), b.shape().end());
  Shape ea, eb, out;
  for (std::size_t d = 0; d < nd; ++d) {
    ea.insert(ea.end(), {sa[d], 1});
    eb.insert(eb.end(), {1, sb[d]});
    out.push_back(sa[d] * sb[d]);
  }
  return (a.reshape(ea) * b.reshape(eb)).reshape(out);
}

namespace {

// An operand of einsum with one label per axis.
struct Labelled {
  Array x;
  std::string labels;
};

// Sums `x`'s axes whose labels are not in `keep`, keeping its dtype (NumPy's einsum does; sum widens integers).
Labelled sum_labels_not_in(const Labelled& in, const std::string& keep) {
  std::vector<int> axes;
  std::string left;
  for (std::size_t d = 0; d < in.labels.size(); ++d)
    if (keep.find(in.labels[d]) == std::string::npos)
      axes.push_back(int(d));
    else
      left += in.labels[d];
  if (axes.empty()) return in;
  return {sum(in.x, axes).astype(in.x.dtype()), left};
}

// x's axes permuted to the order of `to` (a permutation of x's labels).
Array permuted(const Labelled& in, const std::string& to) {
  std::vector<int> axes;
  for (char c : to) axes.push_back(int(in.labels.find(c)));
  return transpose(in.x, axes);
}

std::int64_t size_of(const Labelled& in, const std::string& labels) {
  std::int64_t n = 1;
  for (char c : labels) n *= in.x.shape()[in.labels.find(c)];
  return n;
}

// The pair contracted, its labels those of `keep` that either has: batch labels (in both, kept), then a's own, then
// b's own. Contracted labels (in both, not kept) go through a batched matmul; without any, an elementwise product.
Labelled contract_pair(Labelled a, Labelled b, const std::string& keep) {
  a = sum_labels_not_in(a, keep + b.labels);
  b = sum_labels_not_in(b, keep + a.labels);
  std::string batch, inner, own_a, own_b;
  for (char c : a.labels)
    (b.labels.find(c) == std::string::npos ? own_a : keep.find(c) == std::string::npos ? inner : batch) += c;
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos) own_b += c;
  Shape out;
  for (char c : batch) out.push_back(a.x.shape()[a.labels.find(c)]);
  for (char c : own_a) out.push_back(a.x.shape()[a.labels.find(c)]);
  for (char c : own_b) out.push_back(b.x.shape()[b.labels.find(c)]);
  const std::string labels = batch + own_a + own_b;
  const std::int64_t nb = size_of(a, batch), m = size_of(a, own_a), n = size_of(b, own_b);
  if (inner.empty()) {
    const Array pa = permuted(a, batch + own_a).reshape({nb, m, 1});
    const Array pb = permuted(b, batch + own_b).reshape({nb, 1, n});
    return {(pa * pb).reshape(out), labels};
  }
  const std::int64_t k = size_of(a, inner);
  const Array pa = permuted(a, batch + own_a + inner).reshape({nb, m, k});
  const Array pb = permuted(b, batch + inner + own_b).reshape({nb, k, n});
  return {matmul(pa, pb).reshape(out), labels};
}

// NumPy's ellipsis: each term's "..." stands for its operand's axes that no letter names; those axes broadcast across
// the operands, aligned on the right, and get fresh labels (letters the string does not use). The output's "..." (or,
// implicitly, the front of the output) is those labels. Rewrites `text` into plain labels and broadcasts `operands`
// along the ellipsis axes in place.
void expand_ellipsis(std::string& text, std::vector<Array>& operands, const std::string& subscripts) {
  auto malformed = [&](const std::string& why) { return Error("einsum: '" + subscripts + "': " + why); };
  const std::size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  if (terms.size() != operands.size())
    throw malformed(std::to_string(terms.size()) + " terms for " + std::to_string(operands.size()) + " operands");
  auto dots = [&](const std::string& term) {
    const std::size_t at = term.find("...");
    if (at != std::string::npos && term.find('.', at + 3) != std::string::npos)
      throw malformed("'" + term + "' has more than one ellipsis");
    if (term.find('.') != at) throw malformed("'" + term + "' has a '.' outside an ellipsis '...'");
    return at;
  };
  // Each term's ellipsis rank, and the broadcast rank R of them all.
  std::vector<std::int64_t> rank(terms.size(), 0);
  std::int64_t r = 0;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (dots(terms[i]) == std::string::npos) continue;
    rank[i] = operands[i].ndim() - std::int64_t(terms[i].size() - 3);
    if (rank[i] < 0)
      throw ShapeError("einsum: '" + subscripts + "': term '" + terms[i] + "' names more axes than operand " +
                       std::to_string(i) + " has (" + std::to_string(operands[i].ndim()) + ")");
    r = std::max(r, rank[i]);
  }
  std::string fresh;
  for (char c : std::string("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    if (std::int64_t(fresh.size()) < r && text.find(c) == std::string::npos) fresh += c;
  if (std::int64_t(fresh.size()) < r) throw malformed("not enough unused letters to label the ellipsis' axes");
  // The broadcast sizes of the ellipsis axes (right-aligned), then each operand broadcast to them.
  Shape ellipsis(std::size_t(r), 1);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::size_t at = dots(terms[i]);
    if (at == std::string::npos) continue;
    for (std::int64_t j = 0; j < rank[i]; ++j) {
      const std::int64_t n = operands[i].shape()[at + std::size_t(j)];
      std::int64_t& e = ellipsis[std::size_t(r - rank[i] + j)];
      if (n != e && n != 1 && e != 1)
        throw ShapeError("einsum: '" + subscripts +
                         "': the ellipsis' axes of the operands could not be broadcast "
                         "together (sizes " +
                         std::to_string(e) + " and " + std::to_string(n) + ")");
      e = std::max(e, n);
    }
  }
  std::string new_lhs;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const std::size_t at = dots(terms[i]);
    if (at != std::string::npos) {
      Shape target = operands[i].shape();
      for (std::int64_t j = 0; j < rank[i]; ++j) target[at + std::size_t(j)] = ellipsis[std::size_t(r - rank[i] + j)];
      if (target != operands[i].shape()) operands[i] = broadcast_to(operands[i], target);
      terms[i].replace(at, 3, fresh.substr(std::size_t(r - rank[i])));
    }
    new_lhs += (i ? "," : "") + terms[i];
  }
  std::string rhs;
  if (arrow == std::string::npos) { // implicit: the ellipsis' labels, then those appearing once, in order
    std::string once;
    for (char c : new_lhs)
      if (std::isalpha(static_cast<unsigned char>(c)) && fresh.find(c) == std::string::npos &&
          std::count(new_lhs.begin(), new_lhs.end(), c) == 1)
        once += c;
    std::sort(once.begin(), once.end());
    rhs = fresh + once;
  } else {
    rhs = text.substr(arrow + 2);
    const std::size_t at = dots(rhs);
    if (at != std::string::npos)
      rhs.replace(at, 3, fresh);
    else if (r > 0)
      throw malformed("the output has no '...' for the ellipsis' " + std::to_string(r) +
                      " axes (NumPy: output has more dimensions than subscripts given)");
  }
  text = new_lhs + "->" + rhs;
}

} // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands_in) {
  std::string text;
  for (char c : subscripts)
    if (c != ' ') text += c;
  auto malformed = [&](const std::string& why) { return Error("einsum: '" + subscripts + "': " + why); };
  std::vector<Array> operands = operands_in;
  if (text.find('.') != std::string::npos) expand_ellipsis(text, operands, subscripts);
  const std::size_t arrow = text.find("->");
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else if (std::isalpha(static_cast<unsigned char>(c)))
      terms.back() += c;
    else
      throw malformed(std::string("'") + c + "' is not a label (letters only)");
  }
  if (terms.size() != operands.size())
    throw malformed(std::to_string(terms.size()) + " terms for " + std::to_string(operands.size()) + " operands");
  // Every label's size, checked across operands; each operand's repeated labels reduced to their diagonal.
  std::vector<std::pair<char, std::int64_t>> sizes;
  std::vector<Labelled> ops;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const std::string operand = "operand " + std::to_string(i);
    const graph::NodePtr& node = node_of(operands[i], "einsum", operand.c_str());
    if (terms[i].size() != std::size_t(node->ndim()))
      throw ShapeError("einsum: '" + subscripts + "': term '" + terms[i] + "' has " + std::to_string(terms[i].size()) +
                       " labels for " + graph::describe(operand, *node));
    for (std::size_t d = 0; d < terms[i].size(); ++d) {
      const char c = terms[i][d];
      const std::int64_t n = node->shape[d];
      auto it = std::find_if(sizes.begin(), sizes.end(), [&](const auto& s) { return s.first == c; });
      if (it == sizes.end())
        sizes.emplace_back(c, n);
      else if (it->second != n)
        throw ShapeError("einsum: '" + subscripts + "': label '" + std::string(1, c) + "' has size " +
                         std::to_string(it->second) + " and, in " + graph::describe(operand, *node) + ", " +
                         std::to_string(n));
    }
    Labelled op{operands[i], terms[i]};
    for (std::size_t d = 0; d < op.labels.size(); ++d) {
      const std::size_t again = op.labels.find(op.labels[d], d + 1);
      if (again == std::string::npos) continue;
      const char c = op.labels[d];
      op.x = diagonal(op.x, 0, int(d), int(again));
      op.labels.erase(again, 1);
      op.labels.erase(d, 1);
      op.labels += c;
      d = std::size_t(-1); // start over: the labels moved
    }
    ops.push_back(std::move(op));
  }
  std::string out;
  if (arrow == std::string::npos) {
    // Implicit: the labels that appear once in all terms, in alphabetical (character) order.
    for (const auto& [c, n] : sizes)
      if (std::count(lhs.begin(), lhs.end(), c) == 1) out += c;
    std::sort(out.begin(), out.end());
  } else {
    out = text.substr(arrow + 2);
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (lhs.find(out[k]) == std::string::npos || !std::isalpha(static_cast<unsigned char>(out[k])))
        throw malformed(std::string("output label '") + out[k] + "' is not in any input term");
      if (out.find(out[k], k + 1) != std::string::npos)
        throw malformed(std::string("output label '") + out[k] + "' appears twice");
    }
  }
  DType type = ops[0].x.dtype();
  for (const Labelled& op : ops) type = promote_types(type, op.x.dtype());
  Labelled acc = ops[0];
  for (std::size_t i = 1; i < ops.size(); ++i) {
    std::string keep = out;
    for (std::size_t j = i + 1; j < ops.size(); ++j) keep += ops[j].labels;
    acc = contract_pair(acc, ops[i], keep);
  }
  acc = sum_labels_not_in(acc, out);
  return permuted(acc, out).astype(type);
}

Array diagonal(const Array& a, std::int64_t offset, int axis1, int axis2) {
  const graph::NodePtr& n = node_of(a, "diagonal");
  if (n->ndim() < 2)
    throw ShapeError("diagonal: needs an array of at least 2 dimensions; got " + graph::describe("array", *n));
  const int d1 = graph::normalize_axis("diagonal", axis1, n->ndim());
  const int d2 = graph::normalize_axis("diagonal", axis2, n->ndim());
  if (d1 == d2)
    throw Error("diagonal: axis1 and axis2 cannot be the same axis (both are axis " + std::to_string(d1) + " of " +
                graph::describe("array", *n) + ")");
  const std::int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  const std::int64_t rows = n->shape[std::size_t(d1)], cols = n->shape[std::size_t(d2)];
  const std::int64_t length = std::max<std::int64_t>(0, std::min(rows - r0, cols - c0));
  Shape shape;
  std::vector<graph::AxisEntry> entries(std::size_t(n->ndim()));
  for (int d = 0; d < int(n->ndim()); ++d)
    if (d != d1 && d != d2) {
      entries[std::size_t(d)] = {int(shape.size()), 0, 1};
      shape.push_back(n->shape[std::size_t(d)]);
    }
  const int last = int(shape.size());
  shape.push_back(length);
  // Both axes step along the diagonal's one axis; an empty diagonal starts at 0 so that no offset leaves the array.
  entries[std::size_t(d1)] = {last, length ? r0 : 0, 1};
  entries[std::size_t(d2)] = {last, length ? c0 : 0, 1};
  return wrap_node(graph::make_axis_map(n, std::move(shape), std::move(entries)));
}

Array trace(const Array& a, std::int64_t offset, int axis1, int axis2) {
  return sum(diagonal(a, offset, axis1, axis2), -1);
}

namespace linalg {

Array matrix_power(const Array& a, std::int64_t n) {
  const graph::NodePtr& node = node_of(a, "linalg.matrix_power");
  if (node->ndim() < 2 || node->shape[node->ndim() - 1] != node->shape[node->ndim() - 2])
    throw ShapeError("linalg.matrix_power: needs a stack of square matrices; got " + graph::describe("a", *node));
  if (n < 0)
    throw Error("linalg.matrix_power: the power " + std::to_string(n) +
                " is negative, which needs a matrix inverse; lazyfuse has none yet");
  if (n == 0) {
    const std::int64_t m = node->shape.back();
    return broadcast_to(eye(m, m, 0, a.dtype()), a.shape());
  }
  // NumPy's order: (a @ a) @ a for 3; otherwise squares z = a, a^2, a^4, ... and the result the product of those of
  // n's set bits, lowest first.
  if (n == 3) return matmul(matmul(a, a), a);
  std::optional<Array> result, z;
  for (; n > 0; n >>= 1) {
    z = z ? matmul(*z, *z) : a;
    if (n & 1) result = result ? matmul(*result, *z) : *z;
  }
  return *result;
}

Array norm(const Array& a, std::optional<double> ord, Axes axes, bool keepdims) {
  detail::require_valid(a, "linalg.norm");
  const Array x = a.astype(mean_type(a.dtype()));
  const std::size_t naxes = axes.list ? axes.list->size() : std::size_t(a.ndim());
  if (naxes == 2 && axes.list) {
    if (ord && *ord != 2 && *ord != 1 && !std::isinf(*ord))
      throw Error("linalg.norm: invalid norm order " + std::to_string(*ord) + " for matrices");
    if (!ord) return sqrt(sum(x * x, axes, keepdims));
    throw Error("linalg.norm: matrix norms other than Frobenius ('fro') are not supported yet");
  }
  if (!axes.list && a.ndim() == 2 && ord)
    throw Error("linalg.norm: matrix norms other than Frobenius ('fro') are not supported yet; pass axes for a "
                "vector norm along one axis");
  if (!ord || *ord == 2) return sqrt(sum(x * x, axes, keepdims));
  const double p = *ord;
  if (p == 1) return sum(abs(x), axes, keepdims);
  if (std::isinf(p)) return p > 0 ? max(abs(x), axes, keepdims) : min(abs(x), axes, keepdims);
  if (p == 0) return sum((x != 0).astype(x.dtype()), axes, keepdims);
  return power(sum(power(abs(x), p), axes, keepdims), 1.0 / p);
}

Array norm(const Array& a, const char* ord, Axes axes, bool keepdims) {
  detail::require_valid(a, "linalg.norm");
  if (!ord) throw Error("linalg.norm: the norm order is a null pointer; pass \"fro\", a number, or nothing");
  if (std::string(ord) != "fro") throw Error(std::string("linalg.norm: unknown norm order '") + ord + "'");
  const Array x = a.astype(mean_type(a.dtype()));
  return sqrt(sum(x * x, axes, keepdims));
}

} // namespace linalg

} // namespace lazyfuse
