#include "graph/Build.h"

#include "graph/Assert.h"
#include "graph/DTypeVisit.h"
#include "graph/HostOps.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>

namespace lazyfuse::graph {

namespace {

NodeSpec proto(NodeKind kind, DType type, Shape shape) {
  NodeSpec n;
  n.kind = kind;
  n.dtype = type;
  n.shape = std::move(shape);
  return n;
}

std::string index_text(const std::vector<Index>& index) {
  std::ostringstream os;
  os << '[';
  for (std::size_t k = 0; k < index.size(); ++k) {
    if (k) os << ", ";
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::int64_t>)
            os << v;
          else if constexpr (std::is_same_v<V, Slice>) {
            if (v.start) os << *v.start;
            os << ':';
            if (v.stop) os << *v.stop;
            if (v.step != 1) os << ':' << v.step;
          } else if constexpr (std::is_same_v<V, NewAxis>)
            os << "newaxis";
          else
            os << "...";
        },
        index[k]);
  }
  os << ']';
  return os.str();
}

// One source axis of a basic index: an integer (count < 0) or a slice.
struct AxisSelection {
  std::int64_t start = 0, step = 1, count = -1;
};

// A parsed basic index: for each source axis what it selects, and the view's axes in order (a source axis,
// or -1 for a new axis).
struct ParsedIndex {
  std::vector<AxisSelection> per_axis;
  std::vector<int> view_axes;
};

// The result is this thread's scratch (a solver step records several views, and two vectors a view were allocated
// and freed): valid until the thread parses the next index.
const ParsedIndex& parse_index(std::string_view op, const Node& a, const std::vector<Index>& index) {
  const auto ndim = a.ndim();
  std::int64_t consumed = 0, ellipses = 0;
  for (auto& i : index) {
    if (std::holds_alternative<std::int64_t>(i) || std::holds_alternative<Slice>(i)) ++consumed;
    if (std::holds_alternative<Ellipsis>(i)) ++ellipses;
  }
  if (ellipses > 1)
    throw IndexError(std::string(op) + ": an index can only have a single ellipsis; got " + index_text(index));
  if (consumed > ndim)
    throw IndexError(std::string(op) + ": too many indices for " + describe("array", a) + ": it is " +
                     std::to_string(ndim) + "-dimensional, but " + std::to_string(consumed) + " were indexed " +
                     index_text(index));
  thread_local ParsedIndex p;
  p.per_axis.assign(std::size_t(ndim), AxisSelection{});
  p.view_axes.clear();
  std::int64_t axis = 0;
  auto take_whole = [&](std::int64_t ax) {
    p.per_axis[std::size_t(ax)] = {0, 1, a.shape[std::size_t(ax)]};
    p.view_axes.push_back(int(ax));
  };
  for (auto& i : index) {
    if (auto* v = std::get_if<std::int64_t>(&i)) {
      std::int64_t n = a.shape[std::size_t(axis)], k = *v;
      if (k < -n || k >= n)
        throw IndexError(std::string(op) + ": index " + std::to_string(k) + " is out of bounds for axis " +
                         std::to_string(axis) + " with size " + std::to_string(n) + " of " + describe("array", a));
      if (k < 0) k += n;
      p.per_axis[std::size_t(axis)] = {k, 1, -1};
      ++axis;
    } else if (auto* s = std::get_if<Slice>(&i)) {
      std::int64_t n = a.shape[std::size_t(axis)], step = s->step;
      if (step == 0) throw IndexError(std::string(op) + ": slice step cannot be zero in " + index_text(index));
      std::int64_t start, stop;
      // Python's slice.indices(n).
      if (step > 0) {
        start = s->start ? *s->start : 0;
        stop = s->stop ? *s->stop : n;
        if (start < 0) start = std::max<std::int64_t>(start + n, 0);
        if (stop < 0) stop = std::max<std::int64_t>(stop + n, 0);
        start = std::min(start, n);
        stop = std::min(stop, n);
      } else {
        start = s->start ? *s->start : n - 1;
        stop = s->stop ? *s->stop : -1;
        if (s->start && start < 0) start = std::max<std::int64_t>(start + n, -1);
        if (s->stop && stop < 0) stop = std::max<std::int64_t>(stop + n, -1);
        start = std::min(start, n - 1);
        stop = std::min(stop, n - 1);
      }
      std::int64_t count = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                                    : (start > stop ? (start - stop + (-step) - 1) / (-step) : 0);
      if (count == 0) start = 0;
      p.per_axis[std::size_t(axis)] = {start, step, count};
      p.view_axes.push_back(int(axis));
      ++axis;
    } else if (std::holds_alternative<NewAxis>(i)) {
      p.view_axes.push_back(-1);
    } else {
      std::int64_t skip = ndim - consumed;
      for (std::int64_t k = 0; k < skip; ++k) take_whole(axis++);
    }
  }
  while (axis < ndim) take_whole(axis++);
  return p;
}

bool is_identity_map(const Node& a, const Shape& view_shape, const std::vector<AxisEntry>& entries) {
  if (view_shape != a.shape) return false;
  for (std::size_t d = 0; d < entries.size(); ++d)
    if (entries[d].view_axis != int(d) || entries[d].start != 0 || entries[d].step != 1) return false;
  return true;
}

} // namespace

int normalize_axis(std::string_view op, std::int64_t axis, std::int64_t ndim) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(std::string(op) + ": axis " + std::to_string(axis) + " is out of bounds for an array of " +
                     std::to_string(ndim) + " dimensions (valid: " + std::to_string(-ndim) + " to " +
                     std::to_string(ndim - 1) + ")");
  return int(axis < 0 ? axis + ndim : axis);
}

NodePtr make_buffer(std::shared_ptr<Storage> storage, DType type, Shape shape, std::int64_t offset,
                    std::vector<std::int64_t> strides) {
  LAZYFUSE_ASSERT(strides.size() == shape.size(), "buffer strides and shape differ in rank");
  auto view = std::make_shared<BufferView>();
  view->storage = std::move(storage);
  view->offset = offset;
  view->strides = std::move(strides);
  return intern(proto(NodeKind::Buffer, type, std::move(shape)), {}, std::move(view));
}

namespace {
// `x` rounded to float type t (as the op semantics convert a double), as a double.
double round_to(DType t, double x) {
  return visit_opmath_type(
      t, [&]<class T>() { return lazyfuse_opmath::lf_cast<double, T>(lazyfuse_opmath::lf_cast<T, double>(x)); });
}

// A Fill node's value as op-semantics type T (its own type's).
template <class T> T fill_value(const Node& n) {
  return opmath_value<T>(n.fvalue, n.ivalue, n.fimag);
}

// A fill of value y, of op-semantics type T.
template <class T> NodePtr fill_of(const Shape& shape, DType type, T y) {
  using namespace lazyfuse_opmath;
  if constexpr (is_opmath_complex<T>)
    return make_fill(shape, type, double(y.re), 0, double(y.im));
  else if constexpr (std::is_integral_v<T>)
    return make_fill(shape, type, 0, std::int64_t(y));
  else
    return make_fill(shape, type, lf_cast<double, T>(y), 0);
}
} // namespace

namespace {
// The fills scalar ops ask for again at every step of a loop (x = x * a + b asks for the same two), found without
// rounding the value, hashing a spec, allocating its shape and comparing structures: the last few fills this thread
// built or found, held weakly, by the arguments they were asked for with. A live fill is the only node of its
// structure (the table interns it), so the one found here is the one the table would return.
// Trivially destructible, so that it needs no flag beside it saying it is gone (a static Array may die after its
// thread's thread-locals), which would be a second thread-local read: in a shared library each read is a call.
struct RecentFills {
  struct Entry {
    WeakNodePtr node;
    DType type{};
    std::uint64_t real_bits = 0, imag_bits = 0; // of the arguments f and imag
    std::int64_t integer = 0;
  };
  std::array<Entry, 4> entries;
  std::size_t next = 0;
};
static_assert(std::is_trivially_destructible_v<RecentFills>);
constinit thread_local RecentFills t_recent_fills;
} // namespace

NodePtr make_fill(const Shape& shape, DType type, double f, std::int64_t i, double imag) {
  const auto f_bits = std::bit_cast<std::uint64_t>(f), imag_bits = std::bit_cast<std::uint64_t>(imag);
  RecentFills& recent = t_recent_fills;
  for (const auto& e : recent.entries)
    if (e.type == type && e.real_bits == f_bits && e.integer == i && e.imag_bits == imag_bits)
      if (NodePtr n = e.node.lock(); n && n->shape == shape) return n;
  for (auto d : shape)
    if (d < 0) throw ShapeError("full: negative dimensions are not allowed: shape " + format_shape(shape));
  // The value as the type holds it: floats (and complex parts) rounded to the type, integers wrapped to its width
  // (an unsigned 64-bit value keeps its bits in ivalue), bools 0 or 1.
  double real = 0, imaginary = 0;
  std::int64_t integer = 0;
  if (is_inexact(type)) {
    real = round_to(real_type_of(type), f);
    if (is_complex(type)) imaginary = round_to(real_type_of(type), imag);
  } else {
    visit_dtype(type, [&]<class T>() {
      if constexpr (std::is_integral_v<T>) integer = std::int64_t(T(i));
    });
  }
  NodeSpec n = proto(NodeKind::Fill, type, shape);
  n.fvalue = real;
  n.fimag = imaginary;
  n.ivalue = integer;
  NodePtr node = intern(std::move(n), {});
  recent.entries[recent.next++ % recent.entries.size()] = {WeakNodePtr(*node), type, f_bits, imag_bits, i};
  return node;
}

NodePtr make_fill_as(const Shape& shape, const Node& fill) {
  LAZYFUSE_ASSERT(fill.kind == NodeKind::Fill, "make_fill_as: not a Fill node");
  return make_fill(shape, fill.dtype, fill.fvalue, fill.ivalue, fill.fimag);
}

namespace {
// A constant converted as astype converts it in a kernel (lf_cast: saturating, NaN -> 0), so that folding a cast
// of a constant gives the same bits as the kernel would. From: an op-semantics type.
template <class From> NodePtr cast_fill(const Shape& shape, From x, DType type) {
  return visit_opmath_type(type,
                           [&]<class To>() { return fill_of(shape, type, lazyfuse_opmath::lf_cast<To, From>(x)); });
}
} // namespace

NodePtr make_fill_like(const Shape& shape, DType type, double value) {
  return cast_fill(shape, value, type);
}

NodePtr make_iota(Shape shape, DType type, int axis, double start, double step) {
  NodeSpec n = proto(NodeKind::Iota, type, std::move(shape));
  n.ivalue = axis;
  n.fvalue = start;
  n.fstep = step;
  return intern(std::move(n), {});
}

NodePtr make_random(Shape shape, DType type, RandomDist dist, std::uint64_t key, std::uint64_t counter, double p0,
                    double p1, std::uint64_t range) {
  for (auto d : shape)
    if (d < 0)
      throw ShapeError(std::string(name_of(dist)) + ": negative dimensions are not allowed: shape " +
                       format_shape(shape));
  LAZYFUSE_ASSERT(is_float_dist(dist) ? (type == DType::Float32 || type == DType::Float64)
                                      : type == integer_result(dist),
                  "a random node of a type its distribution does not return");
  NodeSpec n = proto(NodeKind::Random, type, shape);
  n.op = int(dist);
  n.fvalue = p0;
  n.fstep = p1;
  n.ivalue = std::int64_t(range);
  // Key and counter are fills, so they become kernel arguments like any scalar: a new draw is a new value of the
  // same kernel's parameters (and of the same cached plan), not a new kernel.
  NodePtr k = make_fill(shape, DType::UInt64, 0, std::int64_t(key));
  NodePtr c = make_fill(shape, DType::UInt64, 0, std::int64_t(counter));
  return intern(std::move(n), {std::move(k), std::move(c)});
}

NodePtr make_cast(const NodePtr& a, DType type) {
  if (a->dtype == type) return a;
  // A cast of a fill is a fill: keeps scalars out of kernels' inputs.
  if (a->kind == NodeKind::Fill && !a->materialized())
    return visit_opmath_type(a->dtype, [&]<class From>() { return cast_fill(a->shape, fill_value<From>(*a), type); });
  NodeSpec n = proto(NodeKind::Cast, type, copy_shape(a->shape));
  return intern(std::move(n), {a});
}

NodePtr make_contiguous(const NodePtr& a) {
  // Evaluating a view only evaluates its source, and a fill may stay a broadcast value: those need the copy.
  if (a->materialized()) {
    if (is_contiguous(*a->buffer(), a->shape)) return a;
  } else if (!reads_through_a_view(a->kind) && a->kind != NodeKind::Fill && a->kind != NodeKind::Buffer) {
    return a;
  }
  return intern(proto(NodeKind::Cast, a->dtype, a->shape), {a});
}

// ---- exact rewrites ----------------------------------------------------------------------------------------
// Applied once, as a node is built; each moves a negation outward, so none can undo another and they end:
//   -(-x) -> x;   erf(-x) -> -erf(x);   (-a) * b, a * (-b) -> -(a * b);   (-a) / b, a / (-b) -> -(a / b).
// Each holds bit for bit in IEEE arithmetic with round-to-nearest (and for wrapping integers), and erf is odd in
// both the GPU's and the C library's implementation. They let hash-consing share what a formula writes twice,
// e.g. Black-Scholes' cdf(d) and cdf(-d) then evaluate one erf each instead of two.

namespace {
// The operand of an unmaterialized negation, or null.
NodePtr negated_operand(const NodePtr& n) {
  if (n->kind != NodeKind::Unary || UnaryOp(n->op) != UnaryOp::Negative || n->materialized()) return nullptr;
  auto srcs = n->sources();
  return srcs.empty() ? nullptr : srcs[0];
}
} // namespace

NodePtr make_unary(UnaryOp op, const NodePtr& a) {
  auto types = unary_types(op, a->dtype);
  if (!types)
    throw DTypeError(std::string(name_of(op)) + ": not defined for " + describe("operand", *a) + "; " +
                     std::string(name_of(op)) + " takes " + valid_types(op) + " (astype converts)");
  if (op == UnaryOp::Negative || op == UnaryOp::Erf)
    if (auto x = negated_operand(a); x && a->dtype == types->compute)
      return op == UnaryOp::Negative ? x : make_unary(UnaryOp::Negative, make_unary(UnaryOp::Erf, x));
  NodeSpec n = proto(NodeKind::Unary, types->result, copy_shape(a->shape));
  n.op = int(op);
  return intern(std::move(n), {make_cast(a, types->compute)});
}

Shape broadcast_shapes(std::string_view op, const Node& a, const Node& b) {
  const auto na = a.shape.size(), nb = b.shape.size(), n = std::max(na, nb);
  Shape out = copy_shape(na >= nb ? a.shape : b.shape);
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t da = k + na >= n ? a.shape[k + na - n] : 1;
    std::int64_t db = k + nb >= n ? b.shape[k + nb - n] : 1;
    if (da != db && da != 1 && db != 1)
      throw ShapeError(std::string(op) + ": operands could not be broadcast together: " + describe("a", a) + ", " +
                       describe("b", b) + "; each trailing dimension must be equal or 1");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

NodePtr broadcast_to(const NodePtr& a, const Shape& shape, std::string_view op) {
  if (a->shape == shape) return a;
  const auto na = a->shape.size(), n = shape.size();
  auto fail = [&] {
    return ShapeError(std::string(op) + ": cannot broadcast " + describe("operand", *a) + " to shape " +
                      format_shape(shape) + "; each trailing dimension must be equal or 1");
  };
  if (na > n) throw fail();
  if (a->kind == NodeKind::Fill && !a->materialized()) {
    for (std::size_t k = 0; k < na; ++k)
      if (a->shape[k] != 1 && a->shape[k] != shape[k + n - na]) throw fail();
    return make_fill_as(shape, *a);
  }
  std::vector<AxisEntry> entries(na);
  for (std::size_t d = 0; d < na; ++d) {
    std::int64_t from = a->shape[d], to = shape[d + n - na];
    if (from == to)
      entries[d] = {int(d + n - na), 0, 1};
    else if (from == 1)
      entries[d] = {-1, 0, 1};
    else
      throw fail();
  }
  return make_axis_map(a, shape, std::move(entries));
}

namespace {
std::string binary_type_error(BinaryOp op, const std::string& operands, DType promoted) {
  std::string m = std::string(name_of(op)) + ": not defined for " + operands + " (promoted to " +
                  std::string(dtype_name(promoted)) + "); " + std::string(name_of(op)) + " takes " + valid_types(op);
  if (promoted == DType::Bool) m += " (logical_xor computes on booleans; astype converts)";
  return m;
}

// A comparison's result for a left operand below (sign < 0) or above (sign > 0) every value of the right one's
// type, or the mirror image: the op itself on -1/+1 against 0.
template <class I> bool compare_values(BinaryOp op, I x, I y) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  case BinaryOp::Enum:                                                                                                 \
    if constexpr (ResultRule::rule == ResultRule::Compare) return lazyfuse_opmath::lf_##name(x, y);                    \
    break;
#include <lazyfuse/ops.def>
  }
  LAZYFUSE_ASSERT(false, "compare_values: not a comparison");
  return false;
}
bool comparison_at(BinaryOp op, int sign, bool first_is_extreme) {
  const std::int64_t e = sign, z = 0;
  return first_is_extreme ? compare_values(op, e, z) : compare_values(op, z, e);
}
} // namespace

namespace {
// `a` converted to `type` and broadcast to `shape`; moved through when it is both already (a temporary operand's
// handle then reaches its consumer without a reference-count update).
NodePtr operand_as(NodePtr a, DType type, const Shape& shape) {
  if (a->dtype != type) a = make_cast(a, type);
  if (a->shape != shape) a = broadcast_to(a, shape);
  return a;
}
} // namespace

NodePtr make_binary(BinaryOp op, NodePtr a, NodePtr b) {
  const DType t = promote_types(a->dtype, b->dtype);
  auto types = binary_types(op, a->dtype, b->dtype);
  if (!types) throw DTypeError(binary_type_error(op, describe("a", *a) + " and " + describe("b", *b), t));
  Shape shape = broadcast_shapes(name_of(op), *a, *b);
  // A signed integer and uint64 promote to float64, whose comparisons would round values past 2^53; NumPy compares
  // them exactly: a negative signed value is below every unsigned one, and the others compare as uint64.
  if (rule_of(op) == ResultRule::Compare && t == DType::Float64 && is_integer(a->dtype) && is_integer(b->dtype)) {
    const bool signed_first = is_signed_integer(a->dtype);
    const NodePtr& s = signed_first ? a : b;
    const NodePtr u = make_cast(s, DType::UInt64);
    NodePtr negative = make_binary(BinaryOp::Less, s, make_fill({}, s->dtype, 0, 0));
    NodePtr exact = signed_first ? make_binary(op, u, b) : make_binary(op, a, u);
    return make_where(negative, make_fill({}, DType::Bool, 0, comparison_at(op, -1, signed_first)), exact);
  }
  if ((op == BinaryOp::Multiply || op == BinaryOp::TrueDivide) && a->dtype == types->compute &&
      b->dtype == types->compute) {
    if (auto x = negated_operand(a)) return make_unary(UnaryOp::Negative, make_binary(op, x, b));
    if (auto y = negated_operand(b)) return make_unary(UnaryOp::Negative, make_binary(op, a, y));
  }
  SourceList srcs(operand_as(std::move(a), types->compute, shape), operand_as(std::move(b), types->compute, shape));
  NodeSpec n = proto(NodeKind::Binary, types->result, std::move(shape));
  n.op = int(op);
  return intern(std::move(n), std::move(srcs));
}

namespace {
// Where a weak integer scalar lies against integer type t: 0 inside its range, -1 below, +1 above. (bool holds any:
// the value becomes != 0, as astype does.)
int outside_range(const detail::WeakScalar& s, DType t) {
  return visit_dtype(t, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool> || !std::is_integral_v<T>) {
      return 0;
    } else {
      using L = std::numeric_limits<T>;
      if (s.beyond_int64) return std::uint64_t(s.i) <= std::uint64_t(L::max()) ? 0 : 1;
      if (s.i < 0) return std::is_signed_v<T> && s.i >= std::int64_t(L::min()) ? 0 : -1;
      return std::uint64_t(s.i) <= std::uint64_t(L::max()) ? 0 : 1;
    }
  });
}
} // namespace

NodePtr make_weak_fill(const detail::WeakScalar& s, DType t, std::string_view op_name, const Shape& shape) {
  if (is_inexact(t)) return make_fill(shape, t, s.f, 0, s.im);
  if (s.kind == ScalarKind::Float) return make_fill_like(shape, t, s.f);
  // Only the logical ops take a complex scalar into a non-complex type: its truth, either part nonzero.
  if (s.kind == ScalarKind::Complex) {
    LAZYFUSE_ASSERT(t == DType::Bool, "a complex scalar converted to a real type other than bool");
    return make_fill(shape, t, 0, (s.f != 0 || s.im != 0) ? 1 : 0);
  }
  if (outside_range(s, t) != 0)
    throw DTypeError(std::string(op_name) + ": the C++ integer " +
                     (s.beyond_int64 ? std::to_string(std::uint64_t(s.i)) : std::to_string(s.i)) +
                     " is out of bounds for " + std::string(dtype_name(t)) +
                     " (NumPy 2 raises OverflowError here); convert the array with astype first");
  return make_fill(shape, t, double(s.i), s.i);
}

NodePtr make_binary_weak(BinaryOp op, NodePtr a, const detail::WeakScalar& s, bool scalar_on_left) {
  const DType t = promote_weak(a->dtype, s.kind);
  auto types = binary_types(op, t, t);
  if (!types) throw DTypeError(binary_type_error(op, describe("array", *a) + " with a C++ scalar", t));
  // NumPy's logical ops take a Python int as a C long first: one beyond int64 raises OverflowError whatever the array.
  if (s.kind == ScalarKind::Int && s.beyond_int64 && rule_of(op) == ResultRule::Logical)
    throw DTypeError(std::string(name_of(op)) + ": the C++ integer " + std::to_string(std::uint64_t(s.i)) +
                     " is out of bounds for int64 (NumPy 2 raises OverflowError here)");
  // An integer scalar beyond an integer array's type compares as NumPy 2 compares it: exactly (it is above or below
  // every element), where arithmetic with it is an error. (A bool array's is int64, where NumPy raises.)
  if (s.kind == ScalarKind::Int && is_integer(a->dtype) && rule_of(op) == ResultRule::Compare)
    if (const int side = outside_range(s, t))
      return make_fill(a->shape, DType::Bool, 0, comparison_at(op, side, scalar_on_left));
  if ((op == BinaryOp::Multiply || op == BinaryOp::TrueDivide) && a->dtype == types->compute)
    if (auto x = negated_operand(a)) return make_unary(UnaryOp::Negative, make_binary_weak(op, x, s, scalar_on_left));
  // Built at the array's shape at once: one fill node per scalar, not a scalar and its broadcast. The scalar becomes
  // the compute type itself, as NumPy converts it for the op's loop: int64 / 2**63 and logical_and(int8, 300) are
  // fine; only an integer compute type that cannot hold it raises.
  NodePtr fill = make_weak_fill(s, types->compute, name_of(op), a->shape);
  NodeSpec n = proto(NodeKind::Binary, types->result, copy_shape(a->shape));
  n.op = int(op);
  NodePtr arr = operand_as(std::move(a), types->compute, n.shape);
  return intern(std::move(n), scalar_on_left ? SourceList(std::move(fill), std::move(arr))
                                             : SourceList(std::move(arr), std::move(fill)));
}

NodePtr make_where(const NodePtr& cond, const NodePtr& a, const NodePtr& b) {
  const DType t = promote_types(a->dtype, b->dtype);
  Shape shape = broadcast_shapes("where", *a, *b);
  shape = broadcast_shapes("where", *cond, *make_fill(shape, DType::Bool, 0, 0));
  NodeSpec n = proto(NodeKind::Where, t, shape);
  return intern(std::move(n),
                {broadcast_to(make_cast(cond, DType::Bool), shape, "where"),
                 broadcast_to(make_cast(a, t), shape, "where"), broadcast_to(make_cast(b, t), shape, "where")});
}

NodePtr make_axis_map(const NodePtr& a, Shape view_shape, std::vector<AxisEntry> entries) {
  LAZYFUSE_ASSERT(entries.size() == a->shape.size(), "axis map rank differs from its source's");
  if (is_identity_map(*a, view_shape, entries)) return a;
  // A view of a fill is a fill.
  if (a->kind == NodeKind::Fill && !a->materialized()) return make_fill_as(std::move(view_shape), *a);
  // A view of memory is memory: fold the map into the buffer's offset and strides.
  if (auto buf = a->materialized() ? a->buffer() : nullptr) {
    std::int64_t offset = buf->offset;
    std::vector<std::int64_t> strides(view_shape.size(), 0);
    for (std::size_t d = 0; d < entries.size(); ++d) {
      offset += entries[d].start * buf->strides[d];
      if (entries[d].view_axis >= 0) strides[std::size_t(entries[d].view_axis)] += entries[d].step * buf->strides[d];
    }
    for (std::size_t k = 0; k < view_shape.size(); ++k)
      if (view_shape[k] == 1) strides[k] = 0;
    return make_buffer(buf->storage, a->dtype, std::move(view_shape), offset, std::move(strides));
  }
  // A view of a view is one view.
  if (a->kind == NodeKind::AxisMap) {
    auto srcs = a->sources();
    if (!srcs.empty()) {
      std::vector<AxisEntry> composed(a->axes.size());
      for (std::size_t d = 0; d < a->axes.size(); ++d) {
        const AxisEntry& inner = a->axes[d];
        if (inner.view_axis < 0) {
          composed[d] = inner;
          continue;
        }
        const AxisEntry& outer = entries[std::size_t(inner.view_axis)];
        composed[d] = {outer.view_axis, inner.start + inner.step * outer.start, inner.step * outer.step};
        if (outer.view_axis < 0) composed[d].step = 1;
      }
      return make_axis_map(srcs[0], std::move(view_shape), std::move(composed));
    }
  }
  NodeSpec n = proto(NodeKind::AxisMap, a->dtype, std::move(view_shape));
  n.axes = std::move(entries);
  return intern(std::move(n), {a});
}

NodePtr reshape(const NodePtr& a, Shape shape) {
  std::int64_t known = 1, unknown = -1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == -1) {
      if (unknown >= 0) throw ShapeError("reshape: can only specify one unknown dimension, got " + format_shape(shape));
      unknown = std::int64_t(k);
    } else if (shape[k] < 0) {
      throw ShapeError("reshape: negative dimension in " + format_shape(shape) + " for " + describe("array", *a));
    } else {
      known *= shape[k];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || a->size() % known != 0)
      throw ShapeError("reshape: cannot reshape " + describe("array", *a) + " of size " + std::to_string(a->size()) +
                       " into shape " + format_shape(shape));
    shape[std::size_t(unknown)] = a->size() / known;
  } else if (known != a->size()) {
    throw ShapeError("reshape: cannot reshape " + describe("array", *a) + " of size " + std::to_string(a->size()) +
                     " into shape " + format_shape(shape) + " (size " + std::to_string(known) + ")");
  }
  if (shape == a->shape) return a;
  if (a->kind == NodeKind::Fill && !a->materialized()) return make_fill_as(shape, *a);
  if (auto buf = a->buffer()) {
    if (is_contiguous(*buf, a->shape))
      return make_buffer(buf->storage, a->dtype, shape, buf->offset, contiguous_strides(shape));
  }
  if (a->kind == NodeKind::Reshape) {
    auto srcs = a->sources();
    if (!srcs.empty()) return reshape(srcs[0], std::move(shape));
  }
  return intern(proto(NodeKind::Reshape, a->dtype, std::move(shape)), {a});
}

NodePtr transpose(const NodePtr& a, std::vector<int> axes) {
  const auto n = a->ndim();
  if (axes.empty()) {
    for (std::int64_t k = n - 1; k >= 0; --k) axes.push_back(int(k));
  }
  if (std::int64_t(axes.size()) != n)
    throw ShapeError("transpose: axes don't match " + describe("array", *a) + ": got " + std::to_string(axes.size()) +
                     " axes for " + std::to_string(n) + " dimensions");
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  Shape shape(static_cast<std::size_t>(n));
  std::vector<AxisEntry> entries(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < axes.size(); ++k) {
    int ax = normalize_axis("transpose", axes[k], n);
    if (seen[std::size_t(ax)]) throw ShapeError("transpose: repeated axis " + std::to_string(ax) + " in axes");
    seen[std::size_t(ax)] = true;
    shape[k] = a->shape[std::size_t(ax)];
    entries[std::size_t(ax)] = {int(k), 0, 1};
  }
  return make_axis_map(a, std::move(shape), std::move(entries));
}

NodePtr expand_dims(const NodePtr& a, int axis) {
  const auto n = a->ndim() + 1;
  int ax = normalize_axis("expand_dims", axis, n);
  Shape shape;
  std::vector<AxisEntry> entries(a->shape.size());
  for (std::size_t d = 0, k = 0; k < std::size_t(n); ++k) {
    if (int(k) == ax) {
      shape.push_back(1);
      continue;
    }
    shape.push_back(a->shape[d]);
    entries[d] = {int(k), 0, 1};
    ++d;
  }
  return make_axis_map(a, std::move(shape), std::move(entries));
}

NodePtr squeeze(const NodePtr& a, std::optional<std::vector<int>> axes) {
  const auto n = a->ndim();
  std::vector<bool> drop(static_cast<std::size_t>(n), false);
  if (axes) {
    for (int ax : *axes) {
      int k = normalize_axis("squeeze", ax, n);
      if (a->shape[std::size_t(k)] != 1)
        throw ShapeError("squeeze: cannot select an axis to squeeze out which has size not equal to one: axis " +
                         std::to_string(k) + " of " + describe("array", *a));
      drop[std::size_t(k)] = true;
    }
  } else {
    for (std::int64_t k = 0; k < n; ++k) drop[std::size_t(k)] = a->shape[std::size_t(k)] == 1;
  }
  Shape shape;
  std::vector<AxisEntry> entries(static_cast<std::size_t>(n));
  for (std::size_t d = 0; d < std::size_t(n); ++d) {
    if (drop[d]) {
      entries[d] = {-1, 0, 1};
    } else {
      entries[d] = {int(shape.size()), 0, 1};
      shape.push_back(a->shape[d]);
    }
  }
  return make_axis_map(a, std::move(shape), std::move(entries));
}

NodePtr flip(const NodePtr& a, std::optional<int> axis) {
  const auto n = a->ndim();
  std::vector<AxisEntry> entries(static_cast<std::size_t>(n));
  for (std::size_t d = 0; d < std::size_t(n); ++d) entries[d] = {int(d), 0, 1};
  auto flip_axis = [&](std::size_t d) {
    std::int64_t size = a->shape[d];
    entries[d] = {int(d), size > 0 ? size - 1 : 0, -1};
  };
  if (axis)
    flip_axis(std::size_t(normalize_axis("flip", *axis, n)));
  else
    for (std::size_t d = 0; d < std::size_t(n); ++d) flip_axis(d);
  return make_axis_map(a, a->shape, std::move(entries));
}

NodePtr roll(const NodePtr& a, std::int64_t shift, std::optional<int> axis) {
  if (!axis) return reshape(roll(reshape(a, {-1}), shift, 0), a->shape);
  int ax = normalize_axis("roll", *axis, a->ndim());
  std::int64_t size = a->shape[std::size_t(ax)];
  if (size == 0) return a;
  shift %= size;
  if (shift < 0) shift += size;
  if (shift == 0) return a;
  NodeSpec n = proto(NodeKind::Roll, a->dtype, a->shape);
  n.ivalue = ax;
  n.shift = shift;
  return intern(std::move(n), {a});
}

NodePtr index(const NodePtr& a, const std::vector<Index>& idx) {
  const ParsedIndex& p = parse_index("index", *a, idx);
  Shape shape = recycled_shape();
  shape.reserve(p.view_axes.size());
  std::vector<AxisEntry> entries(p.per_axis.size());
  for (std::size_t d = 0; d < p.per_axis.size(); ++d)
    if (p.per_axis[d].count < 0) entries[d] = {-1, p.per_axis[d].start, 1};
  for (int ax : p.view_axes) {
    if (ax >= 0) {
      auto& sel = p.per_axis[std::size_t(ax)];
      entries[std::size_t(ax)] = {int(shape.size()), sel.start, sel.step};
      shape.push_back(sel.count);
    } else {
      shape.push_back(1);
    }
  }
  return make_axis_map(a, std::move(shape), std::move(entries));
}

NodePtr set_slice(const NodePtr& base, const std::vector<Index>& idx, const NodePtr& value) {
  const ParsedIndex& p = parse_index("at().set", *base, idx);
  // The region as seen through the index (NumPy's shape of base[idx]): the value broadcasts to it.
  Shape view_shape = recycled_shape();
  view_shape.reserve(p.view_axes.size());
  for (int ax : p.view_axes) view_shape.push_back(ax >= 0 ? p.per_axis[std::size_t(ax)].count : 1);
  // Re-index the value by base axes: one axis per base axis (size 1 for integer indices).
  Shape region_shape = recycled_shape();
  std::vector<RegionAxis> region;
  region_shape.reserve(p.per_axis.size());
  region.reserve(p.per_axis.size());
  for (auto& sel : p.per_axis) {
    std::int64_t count = sel.count < 0 ? 1 : sel.count;
    region.push_back({sel.start, sel.step, count});
    region_shape.push_back(count);
  }
  std::vector<AxisEntry> entries(view_shape.size());
  for (std::size_t k = 0; k < p.view_axes.size(); ++k) {
    int ax = p.view_axes[k];
    entries[k] = ax >= 0 ? AxisEntry{ax, 0, 1} : AxisEntry{-1, 0, 1};
  }
  // p (this thread's scratch) is not read past here: the builders below may parse indices of their own.
  NodePtr v = broadcast_to(make_cast(value, base->dtype), view_shape, "at().set");
  if (shape_size(region_shape) == 0) return base;
  NodePtr region_value = make_axis_map(v, std::move(region_shape), std::move(entries));
  NodeSpec n = proto(NodeKind::SetSlice, base->dtype, copy_shape(base->shape));
  n.region = std::move(region);
  return intern(std::move(n), SourceList(NodePtr(base), std::move(region_value)));
}

NodePtr concatenate(const std::vector<NodePtr>& arrays, int axis) {
  if (arrays.empty()) throw ShapeError("concatenate: need at least one array to concatenate");
  const auto& first = *arrays[0];
  if (first.ndim() == 0) throw ShapeError("concatenate: zero-dimensional arrays cannot be concatenated");
  int ax = normalize_axis("concatenate", axis, first.ndim());
  DType t = first.dtype;
  Shape shape = first.shape;
  shape[std::size_t(ax)] = 0;
  for (std::size_t k = 0; k < arrays.size(); ++k) {
    const auto& a = *arrays[k];
    bool ok = a.ndim() == first.ndim();
    for (std::size_t d = 0; ok && d < first.shape.size(); ++d)
      if (int(d) != ax && a.shape[d] != first.shape[d]) ok = false;
    if (!ok)
      throw ShapeError("concatenate: all input array dimensions except for the concatenation axis " +
                       std::to_string(ax) + " must match: " + describe("array 0", first) + ", " +
                       describe("array " + std::to_string(k), a));
    t = promote_types(t, a.dtype);
    shape[std::size_t(ax)] += a.shape[std::size_t(ax)];
  }
  if (arrays.size() == 1) return make_cast(arrays[0], t);
  NodePtr out = make_fill(shape, t, 0, 0);
  std::int64_t offset = 0;
  for (auto& a : arrays) {
    std::int64_t len = a->shape[std::size_t(ax)];
    std::vector<Index> idx(static_cast<std::size_t>(ax), Index{all_of});
    idx.push_back(Slice{offset, offset + len, 1});
    out = set_slice(out, idx, a);
    offset += len;
  }
  return out;
}

NodePtr stack(const std::vector<NodePtr>& arrays, int axis) {
  if (arrays.empty()) throw ShapeError("stack: need at least one array to stack");
  for (std::size_t k = 1; k < arrays.size(); ++k)
    if (arrays[k]->shape != arrays[0]->shape)
      throw ShapeError("stack: all input arrays must have the same shape: " + describe("array 0", *arrays[0]) + ", " +
                       describe("array " + std::to_string(k), *arrays[k]));
  int ax = normalize_axis("stack", axis, arrays[0]->ndim() + 1);
  std::vector<NodePtr> expanded;
  for (auto& a : arrays) expanded.push_back(expand_dims(a, ax));
  return concatenate(expanded, ax);
}

NodePtr pad(const NodePtr& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& widths, double value) {
  const auto n = std::size_t(a->ndim());
  if (widths.size() != n && widths.size() != 1)
    throw ShapeError("pad: pad_width has " + std::to_string(widths.size()) + " entries for " + describe("array", *a) +
                     "; give one (before, after) pair per axis or a single pair");
  Shape shape = a->shape;
  std::vector<Index> idx;
  for (std::size_t d = 0; d < n; ++d) {
    auto [before, after] = widths.size() == 1 ? widths[0] : widths[d];
    if (before < 0 || after < 0) throw ShapeError("pad: negative pad widths are not allowed");
    shape[d] += before + after;
    idx.push_back(Slice{before, before + a->shape[d], 1});
  }
  return set_slice(make_fill_like(shape, a->dtype, value), idx, a);
}

std::vector<std::int32_t> reduction_axes(std::string_view op, const std::optional<std::vector<int>>& axes,
                                         std::int64_t ndim) {
  std::vector<std::int32_t> out;
  if (!axes) {
    for (std::int64_t d = 0; d < ndim; ++d) out.push_back(std::int32_t(d));
    return out;
  }
  for (int ax : *axes) out.push_back(normalize_axis(op, ax, ndim));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw IndexError(std::string(op) + ": duplicate value in axis");
  return out;
}

NodePtr make_reduce(ReduceOp op, const NodePtr& a, const std::optional<std::vector<int>>& axes, bool keepdims) {
  // float16 and bfloat16 accumulate in float32 and round once, at the end (as NumPy's float16 sum and mean do
  // in effect; each op rounding would lose the sum of more than a few thousand elements).
  if (is_half(a->dtype) && rule_of(op) != ReduceRule::Logical) {
    NodePtr wide = make_reduce(op, make_cast(a, DType::Float32), axes, keepdims);
    return rule_of(op) == ReduceRule::Index ? wide : make_cast(wide, a->dtype);
  }
  const std::string_view name = name_of(op);
  auto raxes = reduction_axes(name, axes, a->ndim());
  const DType result = reduce_result_type(op, a->dtype);
  if (raxes.empty()) {
    if (is_arg(op)) return make_fill(a->shape, DType::Int64, 0, 0);
    // NumPy reduces over no axes by combining each element with the identity: 0 + -0.0 is 0.0, and (1 + 0j) *
    // (nan + 0j) is nan + nanj. The other reductions give the element itself.
    if (op == ReduceOp::Sum || op == ReduceOp::Prod) {
      const double identity = op == ReduceOp::Sum ? 0 : 1;
      return make_binary(op == ReduceOp::Sum ? BinaryOp::Add : BinaryOp::Multiply,
                         make_fill({}, result, identity, std::int64_t(identity)), make_cast(a, result));
    }
    return make_cast(a, result);
  }
  std::int64_t reduced = 1;
  Shape shape, kept_shape;
  for (std::int64_t d = 0; d < a->ndim(); ++d) {
    const bool r = std::binary_search(raxes.begin(), raxes.end(), std::int32_t(d));
    if (r)
      reduced *= a->shape[std::size_t(d)];
    else
      shape.push_back(a->shape[std::size_t(d)]);
    kept_shape.push_back(r ? 1 : a->shape[std::size_t(d)]);
  }
  if (reduced == 0 && !has_identity(op))
    throw Error(std::string(name) + ": zero-size array to reduction operation " + std::string(name) +
                " which has no identity: " + describe("array", *a) + " reduced over axes of size 0");
  NodeSpec n = proto(NodeKind::Reduce, result, shape);
  n.op = int(op);
  n.reduce_axes = raxes;
  NodePtr node = intern(std::move(n), {make_cast(a, reduce_input_type(op, a->dtype))});
  if (!keepdims) return node;
  std::vector<AxisEntry> entries;
  for (std::size_t d = 0; d < kept_shape.size(); ++d)
    if (!std::binary_search(raxes.begin(), raxes.end(), std::int32_t(d))) entries.push_back({int(d), 0, 1});
  return make_axis_map(node, kept_shape, std::move(entries));
}

} // namespace lazyfuse::graph
