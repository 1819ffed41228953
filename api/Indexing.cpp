// Advanced indexing (Array::index_arrays, behind x(...) with Arrays), take and take_along_axis: each is one gather
// node (graph/Gather.h) over a basic-index view of the array.
#include <lazyfuse/indexing.hpp>

#include "api/ApiAccess.h"
#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Count.h"
#include "graph/Gather.h"
#include "runtime/Selection.h"

#include <lazyfuse/creation.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/manipulation.hpp>
#include <lazyfuse/reductions.hpp>
#include <lazyfuse/sorting.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

namespace lazyfuse {

using detail::node_of;
using detail::wrap_node;
using graph::NodePtr;

namespace {

// The flat (C order) positions of the true elements of a bool array, int64 of shape (count,): listed by the runtime
// (runtime/Selection.h) on the backend in use, the one synchronization of mask selection.
Array flat_positions(const Array& mask) {
  return wrap_node(runtime::true_positions(detail::ApiAccess::node(mask)));
}

// The positions of the true elements of a bool array, one int64 array of shape (count,) per axis, in C order: the
// flat positions unraveled by elementwise work that stays lazy, so that a gather reading them fuses it (and no
// coordinate array is stored unless asked for).
std::vector<Array> true_positions(const Array& mask) {
  const Shape shape = mask.shape();
  const Array flat = flat_positions(mask);
  std::vector<Array> out;
  if (shape.size() == 1) {
    out.push_back(flat);
    return out;
  }
  // With no true element (which an axis of size 0 implies) there is nothing to divide, and nothing to divide by 0.
  if (flat.size() == 0) {
    for (std::size_t d = 0; d < shape.size(); ++d) out.push_back(flat);
    return out;
  }
  std::int64_t stride = 1;
  std::vector<std::int64_t> strides(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    Array c = strides[d] == 1 ? flat : floor_divide(flat, strides[d]);
    if (d > 0) c = c % shape[d]; // the first coordinate is below shape[0] already
    out.push_back(c);
  }
  return out;
}

} // namespace

Array Array::index_arrays(const std::vector<std::variant<Index, Array>>& index) const {
  const NodePtr& base = node_of(*this, "index");
  const std::int64_t ndim = base->ndim();
  std::int64_t consumed = 0, ellipses = 0;
  bool any_array = false;
  for (auto& c : index) {
    if (const Index* i = std::get_if<Index>(&c)) {
      if (std::holds_alternative<std::int64_t>(*i) || std::holds_alternative<Slice>(*i)) ++consumed;
      if (std::holds_alternative<Ellipsis>(*i)) ++ellipses;
    } else {
      const NodePtr& a = node_of(std::get<Array>(c), "index", "an index array");
      any_array = true;
      if (a->dtype == DType::Bool && a->ndim() == 0)
        throw IndexError("index: a 0-d boolean mask (NumPy's x[True]) is not supported");
      consumed += a->dtype == DType::Bool ? a->ndim() : 1; // a mask covers as many axes as it has
    }
  }
  if (ellipses > 1) throw IndexError("index: an index can only have a single ellipsis");
  if (consumed > ndim)
    throw IndexError("index: too many indices for " + graph::describe("array", *base) + ": it is " +
                     std::to_string(ndim) + "-dimensional, but " + std::to_string(consumed) + " were indexed");
  if (!any_array) {
    std::vector<Index> basic;
    for (auto& c : index) basic.push_back(std::get<Index>(c));
    return index_with(basic);
  }
  // x[mask] with a mask of x's shape over a materialized x: the selected elements are copied as they are, without
  // their positions (8 bytes each, written and read back by a gather). A lazy x is gathered at the positions instead,
  // which computes only the selected elements.
  if (const Array* mask = std::get_if<Array>(&index[0]);
      index.size() == 1 && mask->dtype() == DType::Bool && mask->shape() == base->shape && base->materialized())
    return wrap_node(runtime::masked_values(base, detail::ApiAccess::node(*mask)));
  // The basic part first (a view V in which every advanced component keeps its axis whole); then one gather over
  // V's advanced axes. An integer among arrays is a 0-d index array, checked now as NumPy checks it.
  std::vector<Index> basic;
  std::vector<NodePtr> arrays;
  std::vector<int> view_axes, positions; // per advanced component: its axis in W (below), its place in the index
  // W is V with the axes of each mask of 2 or more dimensions merged into one (a reshape), which the mask's flat
  // positions index: NumPy's x[mask] reads x[mask.nonzero()], the same elements, and one flat index array costs less
  // than one coordinate array per axis. `merged`: per such mask, its first axis in V and its number of axes.
  std::vector<std::pair<int, int>> merged;
  int view_axis = 0, source_axis = 0, place = 0, extra_axes = 0; // extra_axes: V's axes less W's so far
  auto advanced = [&](NodePtr node) {
    basic.push_back(all_of);
    arrays.push_back(std::move(node));
    view_axes.push_back(view_axis++);
    positions.push_back(place);
    ++source_axis;
  };
  for (auto& c : index) {
    if (const Array* a = std::get_if<Array>(&c); a && a->dtype() == DType::Bool) {
      // A mask is its true positions, one index array per axis it covers (NumPy's x[mask] = x[mask.nonzero()]).
      for (std::size_t d = 0; d < std::size_t(a->ndim()); ++d)
        if (a->shape()[d] != base->shape[std::size_t(source_axis) + d])
          throw IndexError("boolean index did not match indexed array along axis " +
                           std::to_string(source_axis + int(d)) + "; size of axis is " +
                           std::to_string(base->shape[std::size_t(source_axis) + d]) +
                           " but size of corresponding boolean axis is " + std::to_string(a->shape()[d]));
      const int k = int(a->ndim());
      if (k > 1) merged.emplace_back(view_axis + extra_axes, k);
      advanced(detail::ApiAccess::node(flat_positions(*a)));
      for (int d = 1; d < k; ++d) basic.push_back(all_of);
      source_axis += k - 1;
      extra_axes += k - 1;
    } else if (const Array* a = std::get_if<Array>(&c)) {
      advanced(detail::ApiAccess::node(*a));
    } else if (const auto* i = std::get_if<std::int64_t>(&std::get<Index>(c))) {
      const std::int64_t size = base->shape[std::size_t(source_axis)];
      if (*i < -size || *i >= size)
        throw IndexError("index " + std::to_string(*i) + " is out of bounds for axis " + std::to_string(source_axis) +
                         " with size " + std::to_string(size));
      advanced(graph::make_fill({}, DType::Int64, 0, *i < 0 ? *i + size : *i));
    } else if (std::holds_alternative<Ellipsis>(std::get<Index>(c))) {
      const std::int64_t whole = ndim - consumed;
      for (std::int64_t k = 0; k < whole; ++k) basic.push_back(all_of);
      view_axis += int(whole);
      source_axis += int(whole);
      // An ellipsis separates the advanced components around it, even when it stands for no axis (as in NumPy).
      ++place;
    } else {
      basic.push_back(std::get<Index>(c));
      ++view_axis;
      if (std::holds_alternative<Slice>(std::get<Index>(c))) ++source_axis;
    }
    ++place;
  }
  bool adjacent = true;
  for (std::size_t k = 1; k < positions.size(); ++k) adjacent = adjacent && positions[k] <= positions[k - 1] + 1;
  NodePtr view = graph::index(base, basic);
  if (!merged.empty()) {
    Shape shape;
    std::size_t v = 0;
    for (const auto& [first, count] : merged) {
      for (; v < std::size_t(first); ++v) shape.push_back(view->shape[v]);
      std::int64_t size = 1;
      for (int d = 0; d < count; ++d) size *= view->shape[v++];
      shape.push_back(size);
    }
    for (; v < view->shape.size(); ++v) shape.push_back(view->shape[v]);
    view = graph::reshape(view, std::move(shape));
  }
  return wrap_node(graph::make_gather(view, std::move(arrays), view_axes, adjacent ? view_axes[0] : 0));
}

Array take(const Array& a, const Array& indices, std::optional<int> axis) {
  const NodePtr& source = node_of(a, "take");
  const NodePtr& idx = node_of(indices, "take", "the indices");
  if (!axis) return wrap_node(graph::make_gather(graph::reshape(source, {-1}), {idx}, {0}, 0));
  const int ax = graph::normalize_axis("take", *axis, source->ndim());
  if (source->shape[std::size_t(ax)] == 0 && is_integer(idx->dtype)) {
    // NumPy's take (unlike x[:, idx]) checks its indices once per element of the axes before `axis`: with none of
    // them, an empty axis is no error.
    const Shape before(source->shape.begin(), source->shape.begin() + ax);
    if (graph::shape_size(before) == 0) {
      Shape out = before;
      out.insert(out.end(), idx->shape.begin(), idx->shape.end());
      out.insert(out.end(), source->shape.begin() + ax + 1, source->shape.end());
      return zeros(out, source->dtype);
    }
  }
  return wrap_node(graph::make_gather(source, {idx}, {ax}, ax));
}

namespace {

// take_along_axis of arrays with the same number of dimensions, at most kMaxGatherIndices (one index array per axis).
NodePtr take_along_each_axis(const NodePtr& source, const NodePtr& idx, int ax) {
  // Every axis is indexed: the selecting one by `indices`, each other one by its own coordinate (an iota of size 1
  // where a's axis is 1 and broadcasts), so that a's other axes and indices' broadcast together, as in NumPy.
  std::vector<NodePtr> arrays;
  std::vector<int> axes;
  for (int d = 0; d < int(source->ndim()); ++d) {
    axes.push_back(d);
    if (d == ax) {
      arrays.push_back(idx);
      continue;
    }
    Shape shape(std::size_t(source->ndim()), 1);
    shape[std::size_t(d)] = source->shape[std::size_t(d)];
    arrays.push_back(graph::make_iota(std::move(shape), DType::Int64, d, 0, 1));
  }
  return graph::make_gather(source, std::move(arrays), std::move(axes), 0);
}

// take_along_axis beyond kMaxGatherIndices dimensions, which a gather cannot index one by one: a's and indices' other
// axes are broadcast together, and those before and after `ax` merged into one each (views where the layouts allow,
// lazy copies otherwise), so that the gather indexes three axes; the result is reshaped back.
NodePtr take_along_merged_axes(const NodePtr& source, const NodePtr& idx, int ax) {
  Shape source_shape = source->shape, index_shape = idx->shape;
  std::int64_t before = 1, after = 1;
  for (std::size_t d = 0; d < source_shape.size(); ++d) {
    if (int(d) == ax) continue;
    std::int64_t& s = source_shape[d];
    std::int64_t& i = index_shape[d];
    if (s != i && s != 1 && i != 1)
      throw IndexError("take_along_axis: shape mismatch: " + graph::describe("arr", *source) + " and " +
                       graph::describe("indices", *idx) + " cannot be broadcast together (axis " + std::to_string(ax) +
                       " aside)");
    s = i = s == 1 ? i : s; // an axis of 0 broadcasts against 1 to 0
    (int(d) < ax ? before : after) *= s;
  }
  const std::int64_t length = source_shape[std::size_t(ax)], count = index_shape[std::size_t(ax)];
  const NodePtr gathered =
      take_along_each_axis(graph::reshape(graph::broadcast_to(source, source_shape), {before, length, after}),
                           graph::reshape(graph::broadcast_to(idx, index_shape), {before, count, after}), 1);
  return graph::reshape(gathered, index_shape);
}

} // namespace

Array take_along_axis(const Array& a, const Array& indices, std::optional<int> axis) {
  const NodePtr& source = node_of(a, "take_along_axis");
  const NodePtr& idx = node_of(indices, "take_along_axis", "the indices");
  if (!axis) {
    if (idx->ndim() != 1)
      throw ValueError("take_along_axis: with axis None, indices must be 1-dimensional, got " +
                       graph::describe("indices", *idx));
    return wrap_node(graph::make_gather(graph::reshape(source, {-1}), {idx}, {0}, 0));
  }
  if (idx->ndim() != source->ndim())
    throw ValueError("take_along_axis: indices and arr must have the same number of dimensions: " +
                     graph::describe("arr", *source) + ", " + graph::describe("indices", *idx));
  const int ax = graph::normalize_axis("take_along_axis", *axis, source->ndim());
  if (source->ndim() > std::int64_t(graph::kMaxGatherIndices))
    return wrap_node(take_along_merged_axes(source, idx, ax));
  return wrap_node(take_along_each_axis(source, idx, ax));
}

Array put(const Array& a, const Array& indices, const Array& values, const std::string& mode) {
  const NodePtr& base = node_of(a, "put");
  const NodePtr& idx = node_of(indices, "put", "the indices");
  node_of(values, "put", "the values");
  if (mode != "raise" && mode != "wrap" && mode != "clip")
    throw ValueError("put: mode must be one of 'raise', 'wrap', 'clip', got '" + mode + "'");
  if (!is_integer(idx->dtype))
    throw IndexError("put: the indices must be integers, got " + graph::describe("indices", *idx));
  const std::int64_t n = base->size(), m = idx->size(), count = values.size();
  if (m == 0 || count == 0) return a; // NumPy: nothing to write
  if (n == 0) throw IndexError("put: cannot replace elements of an empty array");
  Array at = indices.ravel();
  if (mode == "wrap") at = at % n; // the remainder of floor division: in [0, n)
  if (mode == "clip") at = clip(at, 0, n - 1);
  // The values repeat cyclically over the indices, as in NumPy.
  Array v = values.ravel();
  if (count != m) v = take(v, arange(m) % count);
  return a.ravel().at(at).set(v).reshape(base->shape);
}

Array put_along_axis(const Array& a, const Array& indices, const Array& values, std::optional<int> axis) {
  const NodePtr& base = node_of(a, "put_along_axis");
  node_of(values, "put_along_axis", "the values");
  // Where in a (flat, C order) each written element is: a's flat positions read along the axis, which checks the
  // indices' dimensions, types, shapes and range as take_along_axis does.
  const Array flat = take_along_axis(arange(base->size()).reshape(base->shape), indices, axis);
  return a.ravel().at(flat).set(values).reshape(base->shape);
}

// ---- compositions ------------------------------------------------------------------------------------------------

namespace {

// `a` with every axis whole except `axis`, which takes `s`.
Array along(const Array& a, int axis, Slice s) {
  std::vector<Index> index(static_cast<std::size_t>(axis), Index{all_of});
  index.push_back(s);
  return a.index_with(index);
}

} // namespace

Array diff(const Array& a, int n, int axis, const std::optional<Array>& prepend, const std::optional<Array>& append) {
  const NodePtr& node = node_of(a, "diff");
  if (n < 0) throw ValueError("diff: order must be non-negative but got " + std::to_string(n));
  if (node->ndim() == 0) throw ValueError("diff requires input that is at least one dimensional");
  const int ax = graph::normalize_axis("diff", axis, node->ndim());
  if (n == 0) return a;
  Array x = a;
  if (prepend || append) {
    // A 0-d value stands for one slice along the axis, as NumPy broadcasts it.
    auto part = [&](const Array& p, const char* what) {
      node_of(p, "diff", what);
      if (p.ndim() != 0) return p;
      Shape s = a.shape();
      s[std::size_t(ax)] = 1;
      return broadcast_to(p, s);
    };
    std::vector<Array> parts;
    if (prepend) parts.push_back(part(*prepend, "prepend"));
    parts.push_back(a);
    if (append) parts.push_back(part(*append, "append"));
    x = concatenate(parts, ax);
  }
  for (int k = 0; k < n; ++k) {
    const Array hi = along(x, ax, slice(1, none)), lo = along(x, ax, slice(none, -1));
    x = x.dtype() == DType::Bool ? not_equal(hi, lo) : subtract(hi, lo);
  }
  return x;
}

namespace {

Array triangle(const Array& a, std::int64_t k, bool lower, const char* op) {
  const NodePtr& node = node_of(a, op);
  if (node->ndim() < 2)
    throw ValueError(std::string(op) + ": the array must be at least 2-D, got " + graph::describe("a", *node));
  const std::int64_t rows = node->shape[node->shape.size() - 2], cols = node->shape.back();
  const Array r = arange(rows).reshape({rows, 1}) + k, c = arange(cols).reshape({1, cols});
  return where(lower ? less_equal(c, r) : greater_equal(c, r), a, zeros({}, a.dtype()));
}

} // namespace

Array tril(const Array& a, std::int64_t k) {
  return triangle(a, k, true, "tril");
}
Array triu(const Array& a, std::int64_t k) {
  return triangle(a, k, false, "triu");
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing, bool sparse) {
  if (indexing != "xy" && indexing != "ij")
    throw ValueError("meshgrid: valid values for `indexing` are 'xy' and 'ij', got '" + indexing + "'");
  const std::size_t n = xs.size();
  const bool swap = indexing == "xy" && n >= 2;
  auto place = [&](std::size_t i) { return swap && i < 2 ? 1 - i : i; };
  Shape full(n, 1);
  for (std::size_t i = 0; i < n; ++i) full[place(i)] = node_of(xs[i], "meshgrid")->size();
  std::vector<Array> out;
  for (std::size_t i = 0; i < n; ++i) {
    Shape s(n, 1);
    s[place(i)] = full[place(i)];
    Array v = xs[i].ravel().reshape(s);
    out.push_back(sparse ? v : broadcast_to(v, full));
  }
  return out;
}

std::vector<Array> indices_sparse(const Shape& dimensions, DType type) {
  std::vector<Array> out;
  for (std::size_t d = 0; d < dimensions.size(); ++d) {
    Shape s(dimensions.size(), 1);
    s[d] = dimensions[d];
    out.push_back(wrap_node(graph::make_iota(s, type, int(d), 0, 1)));
  }
  return out;
}

Array indices(const Shape& dimensions, DType type) {
  if (dimensions.empty()) return zeros({0}, type);
  std::vector<Array> grids;
  for (auto& g : indices_sparse(dimensions, type)) grids.push_back(broadcast_to(g, dimensions));
  return stack(grids, 0);
}

namespace {

// a, or a flattened when axis is nullopt, and the axis to work along.
std::pair<Array, int> axis_view(const Array& a, std::optional<int> axis, const char* op) {
  const NodePtr& node = node_of(a, op);
  if (!axis) return {a.ravel(), 0};
  return {a, graph::normalize_axis(op, *axis, node->ndim())};
}

} // namespace

Array repeat(const Array& a, std::int64_t repeats, std::optional<int> axis) {
  if (repeats < 0)
    throw ValueError("repeat: negative dimensions are not allowed (repeats " + std::to_string(repeats) + ")");
  auto [x, ax] = axis_view(a, axis, "repeat");
  const std::int64_t len = x.shape()[std::size_t(ax)];
  if (repeats == 0 || len == 0) return take(x, zeros({0}, DType::Int64), ax);
  return take(x, floor_divide(arange(len * repeats), repeats), ax);
}

Array repeat(const Array& a, const std::vector<std::int64_t>& repeats, std::optional<int> axis) {
  if (repeats.size() == 1) return repeat(a, repeats[0], axis);
  auto [x, ax] = axis_view(a, axis, "repeat");
  const std::int64_t len = x.shape()[std::size_t(ax)];
  if (std::int64_t(repeats.size()) != len)
    throw ValueError("repeat: operands could not be broadcast together: " + std::to_string(repeats.size()) +
                     " repeats for an axis of length " + std::to_string(len));
  std::vector<std::int64_t> positions;
  for (std::int64_t j = 0; j < len; ++j) {
    if (repeats[std::size_t(j)] < 0)
      throw ValueError("repeat: negative dimensions are not allowed (repeats " +
                       std::to_string(repeats[std::size_t(j)]) + ")");
    positions.insert(positions.end(), std::size_t(repeats[std::size_t(j)]), j);
  }
  return take(x, asarray(positions, {std::int64_t(positions.size())}), ax);
}

Array tile(const Array& a, const std::vector<std::int64_t>& reps) {
  const NodePtr& node = node_of(a, "tile");
  for (auto r : reps)
    if (r < 0) throw ValueError("tile: negative dimensions are not allowed (reps " + std::to_string(r) + ")");
  const std::size_t nd = std::max(std::size_t(node->ndim()), reps.size());
  Shape shape(nd - std::size_t(node->ndim()), 1), r(nd - reps.size(), 1);
  shape.insert(shape.end(), node->shape.begin(), node->shape.end());
  r.insert(r.end(), reps.begin(), reps.end());
  // (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), then merged pairwise: element (i, j) of each pair is
  // a's element j, whatever i.
  Shape interleaved, repeated, result;
  for (std::size_t d = 0; d < nd; ++d) {
    interleaved.insert(interleaved.end(), {1, shape[d]});
    repeated.insert(repeated.end(), {r[d], shape[d]});
    result.push_back(r[d] * shape[d]);
  }
  return broadcast_to(a.reshape(interleaved), repeated).reshape(result);
}

Array choose(const Array& a, const std::vector<Array>& choices) {
  const NodePtr& index = node_of(a, "choose");
  if (choices.empty()) throw ValueError("choose: at least one choice is needed");
  // The shape a and every choice broadcast to.
  NodePtr probe = graph::make_fill(index->shape, DType::Bool, 0, 0);
  for (auto& c : choices)
    probe = graph::make_fill(graph::broadcast_shapes("choose", *probe, *node_of(c, "choose", "a choice")), DType::Bool,
                             0, 0);
  const Shape shape = probe->shape;
  if (shape.size() + 1 > graph::kMaxGatherIndices)
    throw IndexError("choose: at most " + std::to_string(graph::kMaxGatherIndices - 1) + " dimensions, got " +
                     graph::format_shape(shape));
  std::vector<Array> broadcast;
  for (auto& c : choices) broadcast.push_back(broadcast_to(c, shape));
  const NodePtr stacked = detail::ApiAccess::node(stack(broadcast, 0));
  // Axis 0 by a's values, every other axis by its own coordinate.
  // NumPy's choose takes no negative entries: they are made out of range (count of choices), so they fail too.
  const Array entries = a.astype(DType::Int64);
  const Array checked = where(entries < 0, std::int64_t(choices.size()), entries);
  std::vector<NodePtr> arrays{graph::broadcast_to(detail::ApiAccess::node(checked), shape, "choose")};
  std::vector<int> axes{0};
  for (std::size_t d = 0; d < shape.size(); ++d) {
    Shape s(shape.size(), 1);
    s[d] = shape[d];
    arrays.push_back(graph::make_iota(s, DType::Int64, int(d), 0, 1));
    axes.push_back(int(d) + 1);
  }
  return wrap_node(graph::make_gather(stacked, std::move(arrays), std::move(axes), 0));
}

Array compress(const Array& condition, const Array& a, std::optional<int> axis) {
  const NodePtr& cond = node_of(condition, "compress", "the condition");
  if (cond->ndim() != 1)
    throw ValueError("compress: condition must be a 1-d array, got " + graph::describe("condition", *cond));
  auto [x, ax] = axis_view(a, axis, "compress");
  const std::int64_t len = x.shape()[std::size_t(ax)];
  Array selected = condition.astype(DType::Bool);
  if (selected.size() > len) {
    // Only a true element past the axis' end is an error (NumPy's message names the first): the tail is read on the
    // host only when it has one.
    const Array tail = selected.index_with({slice(len, none)});
    if (any(tail).item<bool>())
      throw IndexError("index " + std::to_string(argmax(tail).item<std::int64_t>() + len) +
                       " is out of bounds for axis " + std::to_string(ax) + " with size " + std::to_string(len));
    selected = selected.index_with({slice(0, len)});
  }
  return take(x, flat_positions(selected), ax);
}

// ---- masks ----------------------------------------------------------------------------------------------------

std::vector<Array> nonzero(const Array& a) {
  const NodePtr& node = node_of(a, "nonzero");
  if (node->ndim() == 0)
    throw ValueError("nonzero: calling nonzero on 0d arrays is not allowed; use atleast_1d(a).nonzero() instead");
  return true_positions(a.astype(DType::Bool));
}

Array flatnonzero(const Array& a) {
  node_of(a, "flatnonzero");
  return flat_positions(a.ravel().astype(DType::Bool));
}

Array argwhere(const Array& a) {
  const NodePtr& node = node_of(a, "argwhere");
  if (node->ndim() == 0) {
    // NumPy: shape (1, 0) when the value is true, (0, 0) otherwise.
    const bool on = a.astype(DType::Bool).item<bool>();
    return zeros({on ? 1 : 0, 0}, DType::Int64);
  }
  std::vector<Array> columns = true_positions(a.astype(DType::Bool));
  return stack(columns, 1);
}

Array extract(const Array& condition, const Array& a) {
  node_of(condition, "extract", "the condition");
  node_of(a, "extract");
  if (condition.size() != a.size())
    throw ValueError("extract: condition and arr must have the same number of elements: " +
                     std::to_string(condition.size()) + " and " + std::to_string(a.size()));
  return take(a.ravel(), flatnonzero(condition));
}

// ---- writes: Array::At ---------------------------------------------------------------------------------------

Array::At::At(graph::NodePtr base, std::vector<std::variant<Index, Array>> advanced)
    : base_(std::move(base)), advanced_(std::move(advanced)) {}

namespace {

// The value of an assignment: an Array as it is, a number as a constant of `base`'s type.
NodePtr assigned(Operand value, DType base, const char* op) {
  if (const Array* a = detail::ApiAccess::array(value)) return node_of(*a, op, "the value");
  return graph::make_weak_fill(detail::ApiAccess::scalar(value), base, "scalar");
}

// Where in x (flat, C order) each element of x(index) is, read on the host (a synchronization), and x(index)'s shape.
struct Positions {
  Shape shape;
  std::vector<std::int64_t> flat;
};
Positions positions_of(const NodePtr& base, const std::vector<std::variant<Index, Array>>& index) {
  const Array where_in_x = arange(base->size()).reshape(base->shape).index_arrays(index);
  const HostArray<std::int64_t> h = where_in_x.get<std::int64_t>();
  return {where_in_x.shape(), std::vector<std::int64_t>(h.data(), h.data() + h.size())};
}

enum class GroupReduction { Sum, Prod, Min, Max };

// The reduction of each group of `values`: group g is values[members[offsets[g]]], ..., values[members[offsets[g + 1]
// - 1]] (no group is empty), reduced in that order. Groups of at most `width` members are rows of a padded matrix,
// reduced along the rows (the order of `sum`, `prod`, `min`, `max` over an axis). A longer group is cut into blocks
// of `width` consecutive members, and the blocks' results are the groups of the next level. `width` is at least the
// mean group size, so each matrix holds at most about five times the values: memory stays linear in them however
// skewed the counts (one element written a million times beside a million written once), and the order depends on
// the counts alone.
Array reduce_groups(Array values, std::vector<std::int64_t> offsets, std::vector<std::int64_t> members,
                    GroupReduction how) {
  constexpr std::int64_t kMinWidth = 4;
  const auto groups = std::int64_t(offsets.size()) - 1;
  for (;;) {
    const auto m = std::int64_t(members.size());
    std::int64_t longest = 0;
    for (std::size_t g = 0; g + 1 < offsets.size(); ++g) longest = std::max(longest, offsets[g + 1] - offsets[g]);
    const std::int64_t width = std::min(longest, std::max(kMinWidth, (m + groups - 1) / groups));
    // Unused cells: -1 for sum and prod (their identity is put there), the block's first member for min and max
    // (which it does not change).
    std::vector<std::int64_t> sources, next_offsets{0};
    for (std::size_t g = 0; g + 1 < offsets.size(); ++g) {
      for (std::int64_t b = offsets[g]; b < offsets[g + 1]; b += width) {
        const std::int64_t end = std::min(b + width, offsets[g + 1]);
        const std::int64_t pad =
            how == GroupReduction::Min || how == GroupReduction::Max ? members[std::size_t(b)] : -1;
        for (std::int64_t k = b; k < b + width; ++k) sources.push_back(k < end ? members[std::size_t(k)] : pad);
      }
      next_offsets.push_back(std::int64_t(sources.size()) / width);
    }
    const std::int64_t blocks = next_offsets.back();
    const Array src = asarray(sources, {blocks, width});
    const Array picked = take(values, maximum(src, 0));
    Array reduced;
    switch (how) {
    case GroupReduction::Sum: reduced = sum(where(src >= 0, picked, zeros({}, values.dtype())), 1); break;
    case GroupReduction::Prod: reduced = prod(where(src >= 0, picked, ones({}, values.dtype())), 1); break;
    case GroupReduction::Min: reduced = lazyfuse::min(picked, 1); break;
    case GroupReduction::Max: reduced = lazyfuse::max(picked, 1); break;
    }
    if (blocks == groups) return reduced;
    values = reduced;
    offsets = std::move(next_offsets);
    members.resize(std::size_t(blocks));
    std::iota(members.begin(), members.end(), std::int64_t(0));
  }
}

} // namespace

Array Array::At::set(Operand value) const {
  if (!base_) throw Error("at().set: the array is an empty (default-constructed) Array");
  NodePtr v = assigned(value, base_->dtype, "at().set");
  if (advanced_.empty()) return wrap_node(graph::set_slice(base_, index_, v));
  const Positions p = positions_of(base_, advanced_);
  v = graph::broadcast_to(graph::make_cast(v, base_->dtype), p.shape, "at().set");
  const Array x = wrap_node(base_);
  if (p.flat.empty()) return x;
  // Per element of x, the last position of x(index) that writes it (C order), or -1: the last write wins.
  std::vector<std::int64_t> writer(std::size_t(base_->size()), -1);
  for (std::size_t s = 0; s < p.flat.size(); ++s) writer[std::size_t(p.flat[s])] = std::int64_t(s);
  const Array w = asarray(writer, base_->shape);
  return where(w >= 0, take(wrap_node(graph::reshape(v, {-1})), maximum(w, 0)), x);
}

Array Array::At::add(Operand value) const {
  return combine(value, Combine::Add, "at().add");
}
Array Array::At::multiply(Operand value) const {
  return combine(value, Combine::Multiply, "at().multiply");
}
Array Array::At::min(Operand value) const {
  return combine(value, Combine::Min, "at().min");
}
Array Array::At::max(Operand value) const {
  return combine(value, Combine::Max, "at().max");
}

std::optional<Array> Array::At::add_lazily(const Array& x, const graph::NodePtr& value) const {
  const DType t = promote_types(base_->dtype, value->dtype);
  // Integers are summed in the 64-bit type of their signedness, whose wrapped sum is the narrow type's.
  const DType sum_type = is_signed_integer(t) ? DType::Int64 : is_unsigned_integer(t) ? DType::UInt64 : t;
  if (!graph::weighted_bincount_type(sum_type)) return std::nullopt; // bool and complex: positions on the host
  // Where in x (flat, C order) each element of x(index) is: a lazy gather, bounds-checked when it runs. In int32 where
  // x allows: the positions are stored, then read by the count twice (runtime/DeviceCount.h).
  const std::int64_t n = base_->size();
  const DType position_type = n <= std::numeric_limits<std::int32_t>::max() ? DType::Int32 : DType::Int64;
  const Array where_in_x = arange(0, double(n), 1, position_type).reshape(base_->shape).index_arrays(advanced_);
  if (where_in_x.size() == 0) return x;
  const NodePtr values = graph::broadcast_to(value, detail::ApiAccess::node(where_in_x)->shape, "at().add");
  const Array targets = where_in_x.reshape({-1});
  const Array weights = wrap_node(graph::reshape(values, {-1})).astype(sum_type);
  const Array sums =
      wrap_node(graph::make_weighted_bincount(detail::ApiAccess::node(targets), n, detail::ApiAccess::node(weights)))
          .astype(t)
          .reshape(base_->shape);
  const Array added = lazyfuse::add(x, sums).astype(base_->dtype);
  // An element no index names gets the identity (0, or -0.0 for floats) and keeps its bits, but through a float
  // type wider than its own only when it is a float: an integer x with float values is masked by a count of writes.
  if (is_inexact(base_->dtype) || !is_inexact(t)) return added;
  return where(bincount_fixed(targets, n).reshape(base_->shape) > 0, added, x);
}

Array Array::At::combine(Operand value, Combine how, const char* what) const {
  if (!base_) throw Error(std::string(what) + ": the array is an empty (default-constructed) Array");
  NodePtr v = assigned(value, base_->dtype, what);
  const Array x = wrap_node(base_);
  const auto apply = [how](const Array& a, const Array& b) {
    switch (how) {
    case Combine::Add: return lazyfuse::add(a, b);
    case Combine::Multiply: return lazyfuse::multiply(a, b);
    case Combine::Min: return lazyfuse::minimum(a, b);
    case Combine::Max: return lazyfuse::maximum(a, b);
    }
    LAZYFUSE_ASSERT(false, "an At::Combine without its function");
    return a;
  };
  if (advanced_.empty()) {
    const Array region = x.index_with(index_);
    return wrap_node(graph::set_slice(base_, index_, detail::ApiAccess::node(apply(region, wrap_node(v)))));
  }
  if (how == Combine::Add && base_->size() > 0)
    if (auto sum = add_lazily(x, v)) return *sum;
  const Positions p = positions_of(base_, advanced_);
  if (p.flat.empty()) return x;
  v = graph::broadcast_to(v, p.shape, what);
  // Every element of x that is written gets a group: the positions of x(index) that combine into it, in C order. The
  // groups are reduced (reduce_groups: fixed blocks, in an order set by the counts alone) and combined with x once.
  const std::size_t n = std::size_t(base_->size());
  std::vector<std::int64_t> row(n, -1), count(n, 0);
  for (auto t : p.flat) ++count[std::size_t(t)];
  std::int64_t rows = 0;
  std::vector<std::int64_t> offsets{0};
  for (std::size_t t = 0; t < n; ++t)
    if (count[t] > 0) {
      row[t] = rows++;
      offsets.push_back(offsets.back() + count[t]);
    }
  std::vector<std::int64_t> members(p.flat.size()), filled(offsets.begin(), offsets.end() - 1);
  for (std::size_t s = 0; s < p.flat.size(); ++s)
    members[std::size_t(filled[std::size_t(row[std::size_t(p.flat[s])])]++)] = std::int64_t(s);
  const DType t = promote_types(base_->dtype, v->dtype);
  const Array flat_values = wrap_node(graph::reshape(v, {-1})).astype(t);
  const GroupReduction reduction = how == Combine::Add        ? GroupReduction::Sum
                                   : how == Combine::Multiply ? GroupReduction::Prod
                                   : how == Combine::Min      ? GroupReduction::Min
                                                              : GroupReduction::Max;
  const Array reduced = reduce_groups(flat_values, std::move(offsets), std::move(members), reduction);
  const Array r = asarray(row, base_->shape);
  return where(r >= 0, apply(x, take(reduced, maximum(r, 0))).astype(base_->dtype), x);
}

} // namespace lazyfuse
