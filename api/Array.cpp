// The public Array API: builds graph nodes (graph/Build.h), bounds laziness, and materializes through the runtime.
#include <lazyfuse/array.hpp>
#include <lazyfuse/config.hpp>
#include <lazyfuse/error.hpp>

#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"
#include "runtime/Executor.h"
#include "runtime/Materialize.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace lazyfuse {

using graph::NodePtr;

namespace {

const NodePtr& node_of(const Array& a, const char* op, const char* operand = "the array") {
  detail::require_valid(a, op, operand);
  return a.node();
}

// For the per-op hot paths: the op's name (a literal from ops.def) and the operand's label are only looked up
// when the check fails.
template <class Op> const NodePtr& operand_of(const Array& a, Op op, const char* operand) {
  if (!a.valid()) [[unlikely]]
    detail::require_valid(a, graph::name_of(op).data(), operand);
  return a.node();
}
const NodePtr& element_of(const Array& a, const char* op, std::size_t i) {
  if (!a.valid()) [[unlikely]]
    detail::require_valid(a, op, ("array " + std::to_string(i)).c_str());
  return a.node();
}

// Views (axis maps, reshapes) are index arithmetic of their consumer's kernel, also in eager mode (as in CuPy,
// where they are free).
bool computes(const graph::Node& n) {
  using graph::NodeKind;
  return n.kind != NodeKind::Fill && n.kind != NodeKind::Buffer && n.kind != NodeKind::AxisMap &&
         n.kind != NodeKind::Reshape;
}

// Every new array passes here. Bounded laziness: a graph deeper than LAZYFUSE_MAX_DEPTH is materialized now, so
// a loop `x = x * 0.5 + 1` holds neither unbounded memory nor an unbounded kernel, and its steady state reuses
// one kernel structure. In eager mode every op that computes something runs at once, as its own kernel.
Array wrap(NodePtr n);
} // namespace

Array wrap_node(NodePtr n) {
  return wrap(std::move(n));
}

namespace {
Array wrap(NodePtr n) {
  const auto& cfg = config::snapshot();
  if (!n->materialized() && computes(*n)) {
    if (cfg.eager) {
      runtime::materialize({n});
    } else if (n->depth >= cfg.max_depth) {
      config::log("fusion", "materializing a " + std::string(graph::kind_name(n->kind)) + " node of shape " +
                                graph::format_shape(n->shape) + ": graph depth " + std::to_string(n->depth) +
                                " reached LAZYFUSE_MAX_DEPTH=" + std::to_string(cfg.max_depth));
      runtime::materialize({n});
    }
  }
  return Array(std::move(n));
}

std::vector<NodePtr> nodes_of(const std::vector<Array>& arrays, const char* op) {
  std::vector<NodePtr> v;
  for (std::size_t i = 0; i < arrays.size(); ++i) v.push_back(element_of(arrays[i], op, i));
  return v;
}

} // namespace

namespace detail {
void require_valid(const Array& a, const char* op, const char* operand) {
  if (!a.valid()) throw Error(std::string(op) + ": " + operand + " is an empty (default-constructed) Array");
}
} // namespace detail

// ---- properties -----------------------------------------------------------------------------------------

DType Array::dtype() const {
  return node_of(*this, "dtype")->dtype;
}
const Shape& Array::shape() const {
  return node_of(*this, "shape")->shape;
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

// ---- views --------------------------------------------------------------------------------------------

Array Array::reshape(Shape s) const {
  return wrap(graph::reshape(node_of(*this, "reshape"), std::move(s)));
}
Array Array::transpose() const {
  return wrap(graph::transpose(node_of(*this, "transpose"), {}));
}
Array Array::transpose(std::vector<int> axes) const {
  return wrap(graph::transpose(node_of(*this, "transpose"), std::move(axes)));
}
Array Array::index_with(const std::vector<Index>& index) const {
  return wrap(graph::index(node_of(*this, "index"), index));
}
DType Array::At::base_dtype() const {
  if (!base_) throw Error("at().set: the array is an empty (default-constructed) Array");
  return base_->dtype;
}
Array Array::At::set(const Array& value) const {
  base_dtype();
  return wrap(graph::set_slice(base_, index_, node_of(value, "at().set", "the value")));
}
Array& Array::set_at(const std::vector<Index>& index, const Array& value) {
  return *this = wrap(graph::set_slice(node_of(*this, "set_at"), index, node_of(value, "set_at", "the value")));
}
Array Array::astype(DType type) const {
  return wrap(graph::make_cast(node_of(*this, "astype"), type));
}

Array& Array::operator+=(const Array& o) {
  return *this = *this + o;
}
Array& Array::operator-=(const Array& o) {
  return *this = *this - o;
}
Array& Array::operator*=(const Array& o) {
  return *this = *this * o;
}
Array& Array::operator/=(const Array& o) {
  return *this = *this / o;
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
  node_of(*this, "item");
  if (size() != 1)
    throw Error("item: can only convert an array of size 1 to a C++ scalar; " + graph::describe("array", *node()) +
                " has size " + std::to_string(size()));
}

void* Array::data_ptr() const {
  auto buf = runtime::contiguous_buffer(node_of(*this, "data_ptr"), /*attach=*/true);
  return static_cast<char*>(buf->storage->data) + buf->offset * std::int64_t(itemsize(dtype()));
}

void eval_arrays(std::span<const Array* const> arrays) {
  std::vector<NodePtr> roots;
  for (std::size_t i = 0; i < arrays.size(); ++i) roots.push_back(element_of(*arrays[i], "eval", i));
  runtime::materialize(roots);
}

// ---- elementwise ------------------------------------------------------------------------------------------

namespace detail {
Array unary(UnaryOp op, const Array& a) {
  return wrap(graph::make_unary(op, operand_of(a, op, "the array")));
}
Array binary(BinaryOp op, const Array& a, const Array& b) {
  const NodePtr& na = operand_of(a, op, "operand a"); // in order: the first empty operand is the one reported
  return wrap(graph::make_binary(op, na, operand_of(b, op, "operand b")));
}
Array binary(BinaryOp op, const Array& a, WeakScalar b) {
  return wrap(graph::make_binary_weak(op, operand_of(a, op, "operand a"), b, false));
}
Array binary(BinaryOp op, WeakScalar a, const Array& b) {
  return wrap(graph::make_binary_weak(op, operand_of(b, op, "operand b"), a, true));
}
Array scalar_array(WeakScalar s, DType type) {
  return Array(graph::make_weak_fill(s, type, "scalar"));
}
Array where_weak(const Array& cond, const Array* a, WeakScalar sa, const Array* b, WeakScalar sb) {
  node_of(cond, "where", "operand cond");
  if (a) node_of(*a, "where", "operand a");
  if (b) node_of(*b, "where", "operand b");
  // The scalars take the type the array operand gives them (NumPy 2's weak scalars); two scalars promote
  // between themselves.
  DType t;
  if (a && !b)
    t = promote_weak(a->dtype(), sb.kind);
  else if (b && !a)
    t = promote_weak(b->dtype(), sa.kind);
  else {
    auto kind_type = [](ScalarKind k) {
      return k == ScalarKind::Bool ? DType::Bool : (k == ScalarKind::Int ? DType::Int64 : DType::Float64);
    };
    t = promote_types(kind_type(sa.kind), kind_type(sb.kind));
  }
  NodePtr na = a ? a->node() : graph::make_weak_fill(sa, t, "where");
  NodePtr nb = b ? b->node() : graph::make_weak_fill(sb, t, "where");
  return wrap(graph::make_where(cond.node(), na, nb));
}
} // namespace detail

Array where(const Array& cond, const Array& a, const Array& b) {
  const NodePtr& nc = node_of(cond, "where", "operand cond"); // in order: the first empty operand is reported
  const NodePtr& na = node_of(a, "where", "operand a");
  return wrap(graph::make_where(nc, na, node_of(b, "where", "operand b")));
}
Array clip(const Array& a, const Array& lo, const Array& hi) {
  node_of(a, "clip", "operand a");
  node_of(lo, "clip", "operand lo");
  node_of(hi, "clip", "operand hi");
  return minimum(maximum(a, lo), hi);
}
Array astype(const Array& a, DType type) {
  return a.astype(type);
}

// ---- creation ---------------------------------------------------------------------------------------------

namespace {
Array from_host(const void* data, std::size_t count, DType type, Shape shape, const char* op) {
  for (auto d : shape)
    if (d < 0) throw ShapeError(std::string(op) + ": negative dimension in shape " + graph::format_shape(shape));
  if (std::int64_t(count) != graph::shape_size(shape))
    throw ShapeError(std::string(op) + ": " + std::to_string(count) + " values do not fill shape " +
                     graph::format_shape(shape) + " (size " + std::to_string(graph::shape_size(shape)) + ")");
  auto storage = runtime::executor().upload(data, count * itemsize(type));
  auto strides = graph::contiguous_strides(shape);
  return Array(graph::make_buffer(std::move(storage), type, std::move(shape), 0, std::move(strides)));
}
} // namespace

template <Element T> Array asarray(std::span<const T> data, Shape shape) {
  if constexpr (std::is_same_v<T, bool>) {
    // sizeof(bool) is 1 with values 0/1 on every platform lazyfuse supports; copy through uint8 to be sure.
    std::vector<std::uint8_t> bytes(data.begin(), data.end());
    return from_host(bytes.data(), bytes.size(), DType::Bool, std::move(shape), "asarray");
  } else {
    return from_host(data.data(), data.size(), dtype_of<T>(), std::move(shape), "asarray");
  }
}
// Flat storage for nested literals; bools as bytes since std::vector<bool> has no data().
template <class T> using FlatOf = std::vector<std::conditional_t<std::is_same_v<T, bool>, std::uint8_t, T>>;

template <Element T> Array asarray(std::initializer_list<std::initializer_list<T>> v) {
  FlatOf<T> flat;
  std::int64_t cols = v.size() ? std::int64_t(v.begin()->size()) : 0;
  for (auto& row : v) {
    if (std::int64_t(row.size()) != cols) throw ShapeError("asarray: nested lists of different lengths (ragged)");
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return from_host(flat.data(), flat.size(), dtype_of<T>(), Shape{std::int64_t(v.size()), cols}, "asarray");
}
template <Element T> Array asarray(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v) {
  FlatOf<T> flat;
  std::int64_t rows = v.size() ? std::int64_t(v.begin()->size()) : 0;
  std::int64_t cols = rows ? std::int64_t(v.begin()->begin()->size()) : 0;
  for (auto& plane : v) {
    if (std::int64_t(plane.size()) != rows) throw ShapeError("asarray: nested lists of different lengths (ragged)");
    for (auto& row : plane) {
      if (std::int64_t(row.size()) != cols) throw ShapeError("asarray: nested lists of different lengths (ragged)");
      flat.insert(flat.end(), row.begin(), row.end());
    }
  }
  return from_host(flat.data(), flat.size(), dtype_of<T>(), Shape{std::int64_t(v.size()), rows, cols}, "asarray");
}

#define LAZYFUSE_INSTANTIATE(T)                                                                                        \
  template Array asarray<T>(std::span<const T>, Shape);                                                                \
  template Array asarray<T>(std::initializer_list<std::initializer_list<T>>);                                          \
  template Array asarray<T>(std::initializer_list<std::initializer_list<std::initializer_list<T>>>);
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) LAZYFUSE_INSTANTIATE(host_type)
#include <lazyfuse/dtypes.def>
#undef LAZYFUSE_INSTANTIATE

Array asarray(const std::vector<bool>& data, Shape shape) {
  std::vector<std::uint8_t> bytes(data.begin(), data.end());
  return from_host(bytes.data(), bytes.size(), DType::Bool, std::move(shape), "asarray");
}

Array asarray_as(DType type, std::span<const double> values, Shape shape) {
  return asarray(values, std::move(shape)).astype(type);
}

Array zeros(Shape shape, DType type) {
  return full(std::move(shape), 0, type);
}
Array ones(Shape shape, DType type) {
  return full(std::move(shape), 1, type);
}
// An integer fill must be a number the dtype holds once truncated toward zero. NumPy 2.4 fills with INT_MIN and a
// RuntimeWarning for NaN, infinities and values out of range; a kernel cannot warn, and a silent wrong value is
// worse than an error, so these throw, as a C++ integer scalar outside an integer array's range does.
static void check_integer_fill(std::string_view op, double value, DType type) {
  if (!is_integer(type)) return;
  // The type's range as doubles: [-2^(bits-1), 2^(bits-1)) signed, [0, 2^bits) unsigned; both ends exact.
  const int bits = dtype_bits(type);
  const double lo = is_signed_integer(type) ? -std::ldexp(1.0, bits - 1) : 0.0;
  const double hi = std::ldexp(1.0, is_signed_integer(type) ? bits - 1 : bits);
  const double t = std::trunc(value);
  if (std::isfinite(value) && t >= lo && t < hi) return;
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  throw DTypeError(std::string(op) + ": cannot fill an " + std::string(dtype_name(type)) + " array with " + text +
                   (std::isfinite(value) ? ", which is out of its range" : ", which is not a finite number") +
                   " (NumPy 2 gives an undefined value with a RuntimeWarning); use astype on a float array for a "
                   "saturating conversion");
}

Array full(Shape shape, double value, DType type) {
  check_integer_fill("full", value, type);
  return Array(graph::make_fill_like(std::move(shape), type, value));
}
Array empty(Shape shape, DType type) {
  return zeros(std::move(shape), type);
}
Array zeros_like(const Array& a) {
  node_of(a, "zeros_like");
  return zeros(a.shape(), a.dtype());
}
Array ones_like(const Array& a) {
  node_of(a, "ones_like");
  return ones(a.shape(), a.dtype());
}
Array full_like(const Array& a, double value) {
  node_of(a, "full_like");
  check_integer_fill("full_like", value, a.dtype());
  return Array(graph::make_fill_like(a.shape(), a.dtype(), value));
}
Array empty_like(const Array& a) {
  node_of(a, "empty_like");
  return empty(a.shape(), a.dtype());
}

Array arange(std::int64_t stop) {
  return arange(0, double(stop), 1, DType::Int64);
}

Array arange(double start, double stop, double step, std::optional<DType> type) {
  if (step == 0) throw Error("arange: step must not be zero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw Error("arange: start, stop and step must be finite");
  const double len = std::ceil((stop - start) / step);
  const std::int64_t n = len > 0 ? std::int64_t(len) : 0;
  const bool integral = start == std::floor(start) && stop == std::floor(stop) && step == std::floor(step);
  DType t = type ? *type : (integral ? DType::Int64 : DType::Float64);
  if (t == DType::Float32) {
    // NumPy computes in float64 and converts.
    return wrap(graph::make_cast(graph::make_iota({n}, DType::Float64, 0, start, step), t));
  }
  return wrap(graph::make_iota({n}, t, 0, start, step));
}

Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType type) {
  if (num < 0) throw Error("linspace: number of samples, " + std::to_string(num) + ", must be non-negative");
  const std::int64_t div = endpoint ? num - 1 : num;
  const double step = div > 0 ? (stop - start) / double(div) : 0;
  NodePtr n = graph::make_iota({num}, DType::Float64, 0, start, step);
  if (endpoint && num > 1)
    n = graph::set_slice(n, {Index(std::int64_t(num - 1))}, graph::make_fill({}, DType::Float64, stop, 0));
  return wrap(graph::make_cast(n, type));
}

Array eye(std::int64_t n, std::optional<std::int64_t> m_opt, std::int64_t k, DType type) {
  const std::int64_t m = m_opt ? *m_opt : n;
  if (n < 0 || m < 0) throw ShapeError("eye: negative dimensions are not allowed");
  NodePtr rows = graph::make_iota({n, m}, DType::Int64, 0, double(k), 1);
  NodePtr cols = graph::make_iota({n, m}, DType::Int64, 1, 0, 1);
  return wrap(graph::make_cast(graph::make_binary(graph::BinaryOp::Equal, rows, cols), type));
}

namespace {
class WrappedStorage : public graph::Storage {
public:
  WrappedStorage(void* p, std::size_t n, bool device, std::shared_ptr<void> owner) : owner_(std::move(owner)) {
    data = p;
    bytes = n;
    on_device = device;
  }

private:
  std::shared_ptr<void> owner_;
};
} // namespace

Array from_pointer(void* data, Shape shape, DType type, std::vector<std::int64_t> strides,
                   std::shared_ptr<void> owner) {
  if (strides.empty()) strides = graph::contiguous_strides(shape);
  if (strides.size() != shape.size())
    throw ShapeError("from_pointer: " + std::to_string(strides.size()) + " strides for shape " +
                     graph::format_shape(shape));
  bool empty = false;
  for (std::int64_t d : shape) {
    if (d < 0) throw ShapeError("from_pointer: negative dimension in " + graph::format_shape(shape));
    empty = empty || d == 0;
  }
  // The bytes that the elements span from `data`: the highest element's offset plus one element. A zero-size array
  // reads nothing, so its pointer is neither checked nor read (it may be null).
  std::size_t bytes = 0;
  if (!empty) {
    if (!data) throw Error("from_pointer: null data pointer for shape " + graph::format_shape(shape));
    std::int64_t lo = 0, hi = 0;
    bool overflow = false;
    for (std::size_t k = 0; k < shape.size(); ++k) {
      std::int64_t extent = 0;
      overflow = overflow || __builtin_mul_overflow(shape[k] - 1, strides[k], &extent);
      std::int64_t& side = extent < 0 ? lo : hi;
      overflow = overflow || __builtin_add_overflow(side, extent, &side);
    }
    const std::size_t item = itemsize(type);
    if (overflow || hi >= INT64_MAX / std::int64_t(item))
      throw ShapeError("from_pointer: shape " + graph::format_shape(shape) + " with strides " +
                       graph::format_shape(strides) + " spans more memory than an address space holds");
    if (lo < 0)
      throw ShapeError("from_pointer: negative strides would read before the pointer; pass the first element's "
                       "address of the lowest-addressed element");
    // Kernels read each element whole: a misaligned one faults on the GPU (and loses the context).
    if (reinterpret_cast<std::uintptr_t>(data) % item != 0) {
      std::ostringstream os;
      os << "from_pointer: " << data << " is not aligned to the " << item << "-byte elements of " << dtype_name(type)
         << "; the address must be a multiple of " << item;
      throw Error(os.str());
    }
    bytes = std::size_t(hi + 1) * item;
  }
  runtime::check_wrappable(data, bytes, "from_pointer");
  const bool device = runtime::executor().kind() == Backend::Cuda;
  auto storage = std::make_shared<WrappedStorage>(data, bytes, device, std::move(owner));
  return Array(graph::make_buffer(std::move(storage), type, std::move(shape), 0, std::move(strides)));
}

// ---- shape manipulation --------------------------------------------------------------------------------

Array reshape(const Array& a, Shape shape) {
  return a.reshape(std::move(shape));
}
Array transpose(const Array& a) {
  return a.transpose();
}
Array transpose(const Array& a, std::vector<int> axes) {
  return a.transpose(std::move(axes));
}
Array permute(const Array& a, std::vector<int> axes) {
  return wrap(graph::transpose(node_of(a, "permute"), std::move(axes)));
}
Array expand_dims(const Array& a, int axis) {
  return wrap(graph::expand_dims(node_of(a, "expand_dims"), axis));
}
Array squeeze(const Array& a, std::optional<std::vector<int>> axes) {
  return wrap(graph::squeeze(node_of(a, "squeeze"), std::move(axes)));
}
Array broadcast_to(const Array& a, Shape shape) {
  return wrap(graph::broadcast_to(node_of(a, "broadcast_to"), shape));
}
Array flip(const Array& a, std::optional<int> axis) {
  return wrap(graph::flip(node_of(a, "flip"), axis));
}
Array roll(const Array& a, std::int64_t shift, std::optional<int> axis) {
  return wrap(graph::roll(node_of(a, "roll"), shift, axis));
}
Array concatenate(const std::vector<Array>& arrays, int axis) {
  return wrap(graph::concatenate(nodes_of(arrays, "concatenate"), axis));
}
Array stack(const std::vector<Array>& arrays, int axis) {
  return wrap(graph::stack(nodes_of(arrays, "stack"), axis));
}
Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& widths, double value) {
  return wrap(graph::pad(node_of(a, "pad"), widths, value));
}

// ---- printing ----------------------------------------------------------------------------------------------

namespace {

std::string format_element(bool v) {
  return v ? "True" : "False";
}
template <class T> std::string format_element(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    std::ostringstream s;
    s << std::setprecision(8) << v;
    std::string t = s.str();
    if (t.find_first_of(".e") == std::string::npos) t += ".";
    return t;
  } else {
    return std::to_string(v);
  }
}

// NumPy's layout: elements padded to one width (floats aligned on the decimal point), rows separated by one
// newline per remaining dimension, and more than 1000 elements summarized with "..." (3 at each edge).
template <class T> void print_array(std::ostream& os, const HostArray<T>& h) {
  const auto& shape = h.shape();
  std::vector<std::string> text(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) text[i] = format_element(h[i]);
  if (shape.empty()) {
    os << text[0];
    return;
  }
  std::size_t width = 0, int_width = 0, frac_width = 0;
  bool decimal_align = std::is_floating_point_v<T>;
  for (auto& t : text) {
    width = std::max(width, t.size());
    if (t.find('e') != std::string::npos) decimal_align = false;
    auto dot = t.find('.');
    if (dot != std::string::npos) {
      int_width = std::max(int_width, dot);
      frac_width = std::max(frac_width, t.size() - dot - 1);
    }
  }
  if (decimal_align && int_width + frac_width > 0) {
    width = std::max(width, int_width + 1 + frac_width);
    for (auto& t : text) {
      auto dot = t.find('.');
      if (dot == std::string::npos) continue; // nan, inf: right-aligned below
      t = std::string(int_width - dot, ' ') + t + std::string(frac_width - (t.size() - dot - 1), ' ');
    }
  }
  for (auto& t : text)
    if (t.size() < width) t = std::string(width - t.size(), ' ') + t;

  const bool summarize = h.size() > 1000;
  constexpr std::int64_t edge = 3;
  const auto strides = graph::contiguous_strides(shape);
  const std::size_t ndim = shape.size();
  std::function<void(std::size_t, std::int64_t)> rec = [&](std::size_t axis, std::int64_t base) {
    os << '[';
    const std::int64_t n = shape[axis];
    const std::string separator =
        axis + 1 == ndim ? ", " : "," + std::string(ndim - axis - 1, '\n') + std::string(axis + 1, ' ');
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * edge && i == edge) {
        os << "..." << separator;
        i = n - edge;
      }
      if (axis + 1 == ndim)
        os << text[std::size_t(base + i)];
      else
        rec(axis + 1, base + i * strides[axis]);
      if (i + 1 < n) os << separator;
    }
    os << ']';
  };
  rec(0, 0);
}
} // namespace

std::string to_string(const Array& a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Array& a) {
  if (!a.valid()) return os << "Array(<empty>)";
  graph::visit_dtype(a.dtype(), [&]<class T>() { print_array(os, a.get<T>()); });
  return os;
}

// ---- runtime: cache control ----------------------------------------------------------------------------------

} // namespace lazyfuse
