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
