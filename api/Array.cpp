// The Array class: properties, views, slice assignment, compound assignment and materialization; and wrap_node,
// the door every new array of a computation passes (bounded laziness and eager mode).
#include <lazyfuse/array.hpp>
#include <lazyfuse/config.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "runtime/Materialize.h"

namespace lazyfuse {

using detail::node_of;
using graph::NodePtr;

namespace {
// Views (axis maps, reshapes) are index arithmetic of their consumer's kernel, also in eager mode (as in CuPy,
// where they are free).
bool computes(const graph::Node& n) {
  using graph::NodeKind;
  return n.kind != NodeKind::Fill && n.kind != NodeKind::Buffer && n.kind != NodeKind::AxisMap &&
         n.kind != NodeKind::Reshape;
}

// What a depth cut at `n` materializes: n, and the source of the view nearest to n on its deepest path of lazy
// nodes. That source is typically a time loop's state, which n's siblings (built after n) read through other
// views: stored now, they start from it. Cutting at n alone leaves it lazy, and each sibling's own cut computes it
// again (a periodic heat loop through `roll` recorded without eval() recomputed its state five times per cut).
std::vector<NodePtr> depth_cut(const NodePtr& n) {
  std::vector<NodePtr> roots{n};
  for (NodePtr x = n;;) {
    NodePtr deepest;
    for (const NodePtr& s : x->sources())
      if (!s->materialized() && (!deepest || s->depth > deepest->depth)) deepest = s;
    if (!deepest) break;
    if (graph::reads_through_a_view(x->kind) && computes(*deepest)) {
      roots.push_back(deepest);
      break;
    }
    x = std::move(deepest);
  }
  return roots;
}
// Whether storing `n` now would let go of much: it keeps more than kPinnedLeaves values alive beside its own, each
// counted at the largest (a loop reading a fresh array at every step), not a few large inputs that one expression
// reads (a softmax of a matrix larger than the bound, whose row maximum stored early would only cost a pass).
bool pins_more_than_it_reads(const graph::Node& n) {
  const std::int64_t own = n.size() * std::int64_t(itemsize(n.dtype));
  const std::int64_t largest = std::max(own, n.pinned_largest);
  return n.pinned_bytes / std::int64_t(graph::Node::kPinnedLeaves) > largest;
}
} // namespace

namespace detail {
Array wrap_node(NodePtr n) {
  const auto& cfg = config::snapshot();
  if (!n->materialized() && computes(*n)) {
    if (cfg.eager) {
      runtime::materialize({n});
    } else if (n->depth >= cfg.max_depth) {
      config::log("fusion", "materializing a " + std::string(graph::kind_name(n->kind)) + " node of shape " +
                                graph::format_shape(n->shape) + ": graph depth " + std::to_string(n->depth) +
                                " reached LAZYFUSE_MAX_DEPTH=" + std::to_string(cfg.max_depth));
      runtime::materialize(depth_cut(n));
    } else if (n->pinned_bytes > cfg.max_pinned_bytes && pins_more_than_it_reads(*n)) {
      config::log("fusion", "materializing a " + std::string(graph::kind_name(n->kind)) + " node of shape " +
                                graph::format_shape(n->shape) + ": it keeps about " +
                                std::to_string(n->pinned_bytes >> 20) + " MiB of stored values alive, over " +
                                "LAZYFUSE_MAX_PINNED_MIB=" + std::to_string(cfg.max_pinned_bytes >> 20));
      runtime::materialize(depth_cut(n));
    }
  }
  return ApiAccess::adopt(std::move(n));
}

void require_valid(const Array& a, const char* op, const char* operand) {
  if (!a.valid()) throw Error(std::string(op) + ": " + operand + " is an empty (default-constructed) Array");
}
} // namespace detail

using detail::wrap_node;

// ---- properties -----------------------------------------------------------------------------------------

DType Array::dtype() const {
  return node_of(*this, "dtype")->dtype;
}
const Shape& Array::shape() const {
  return node_of(*this, "shape")->shape;
}
const Shape& Array::shape_for(const char* op) const {
  return node_of(*this, op)->shape;
}
std::int64_t Array::ndim() const {
  return node_of(*this, "ndim")->ndim();
}
std::int64_t Array::size() const {
  return node_of(*this, "size")->size();
}
bool Array::is_materialized() const {
  return node_of(*this, "is_materialized")->materialized();
}

// ---- views and slice assignment -------------------------------------------------------------------------

Array Array::reshape(Shape s) const {
  return wrap_node(graph::reshape(node_of(*this, "reshape"), std::move(s)));
}
Array Array::transpose() const {
  return wrap_node(graph::transpose(node_of(*this, "transpose"), {}));
}
Array Array::transpose(std::vector<int> axes) const {
  return wrap_node(graph::transpose(node_of(*this, "transpose"), std::move(axes)));
}
Array Array::index_with(const std::vector<Index>& index) const {
  return wrap_node(graph::index(node_of(*this, "index"), index));
}

namespace {
// The value of a slice assignment into an array of type `base`: an Array as it is, a number as a constant of
// `base`'s type (NumPy's `x[...] = 5`; a number the type cannot hold is a DTypeError).
NodePtr assigned_value(Operand value, DType base, const char* op) {
  if (const Array* a = detail::ApiAccess::array(value)) return node_of(*a, op, "the value");
  return graph::make_weak_fill(detail::ApiAccess::scalar(value), base, "scalar");
}
} // namespace

// Array::At (set, add) is in api/Indexing.cpp, beside the advanced indexes it shares with x(...).
Array& Array::set_at(const std::vector<Index>& index, Operand value) {
  const NodePtr& base = node_of(*this, "set_at");
  return *this = wrap_node(graph::set_slice(base, index, assigned_value(value, base->dtype, "set_at")));
}
Array Array::astype(DType type) const {
  return wrap_node(graph::make_cast(node_of(*this, "astype"), type));
}

// ---- compound assignment ----------------------------------------------------------------------------------

Array& Array::operator+=(Operand o) {
  return *this = *this + o;
}
Array& Array::operator-=(Operand o) {
  return *this = *this - o;
}
Array& Array::operator*=(Operand o) {
  return *this = *this * o;
}
Array& Array::operator/=(Operand o) {
  return *this = *this / o;
}
Array& Array::operator%=(Operand o) {
  return *this = *this % o;
}
Array& Array::operator&=(Operand o) {
  return *this = *this & o;
}
Array& Array::operator|=(Operand o) {
  return *this = *this | o;
}
Array& Array::operator^=(Operand o) {
  return *this = *this ^ o;
}
Array& Array::operator<<=(Operand o) {
  return *this = *this << o;
}
Array& Array::operator>>=(Operand o) {
  return *this = *this >> o;
}

// ---- materialization -------------------------------------------------------------------------------------

const Array& Array::eval() const {
  runtime::materialize({node_of(*this, "eval")});
  return *this;
}

void Array::get_into(DType as, void* out) const {
  runtime::download(node_of(*this, "get"), as, out);
}

void Array::check_item() const {
  const NodePtr& n = node_of(*this, "item");
  if (n->size() != 1)
    throw Error("item: can only convert an array of size 1 to a C++ scalar; " + graph::describe("array", *n) +
                " has size " + std::to_string(n->size()));
}

void* Array::data_ptr() const {
  auto buf = runtime::contiguous_buffer(node_of(*this, "data_ptr"), /*attach=*/true);
  buf->storage->external = true; // the caller may write through the address
  return static_cast<char*>(buf->storage->data) + buf->offset * std::int64_t(itemsize(dtype()));
}

void eval_arrays(std::span<const Array* const> arrays) {
  std::vector<NodePtr> roots;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (!arrays[i]->valid()) [[unlikely]]
      detail::require_valid(*arrays[i], "eval", ("array " + std::to_string(i)).c_str());
    roots.push_back(detail::graph_node(*arrays[i]));
  }
  runtime::materialize(roots);
}

} // namespace lazyfuse
