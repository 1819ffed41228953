// Creating arrays (creation.hpp): copies of host data, constants, ranges, and wrapped memory the caller owns.
#include <lazyfuse/creation.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/runtime.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "runtime/Executor.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace lazyfuse {

using detail::node_of;
using detail::wrap_node;
using graph::NodePtr;

namespace {
Array from_host(const void* data, std::size_t count, DType type, Shape shape, const char* op) {
  for (auto d : shape)
    if (d < 0) throw ShapeError(std::string(op) + ": negative dimension in shape " + graph::format_shape(shape));
  if (std::int64_t(count) != graph::shape_size(shape))
    throw ShapeError(std::string(op) + ": " + std::to_string(count) + " values do not fill shape " +
                     graph::format_shape(shape) + " (size " + std::to_string(graph::shape_size(shape)) + ")");
  auto storage = runtime::executor().upload(data, count * itemsize(type));
  auto strides = graph::contiguous_strides(shape);
  return detail::ApiAccess::adopt(
      graph::make_buffer(std::move(storage), type, std::move(shape), 0, std::move(strides)));
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
  return detail::ApiAccess::adopt(graph::make_fill_like(std::move(shape), type, value));
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
  return detail::ApiAccess::adopt(graph::make_fill_like(a.shape(), a.dtype(), value));
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
    return wrap_node(graph::make_cast(graph::make_iota({n}, DType::Float64, 0, start, step), t));
  }
  return wrap_node(graph::make_iota({n}, t, 0, start, step));
}

Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType type) {
  if (num < 0) throw Error("linspace: number of samples, " + std::to_string(num) + ", must be non-negative");
  const std::int64_t div = endpoint ? num - 1 : num;
  const double step = div > 0 ? (stop - start) / double(div) : 0;
  NodePtr n = graph::make_iota({num}, DType::Float64, 0, start, step);
  if (endpoint && num > 1)
    n = graph::set_slice(n, {Index(std::int64_t(num - 1))}, graph::make_fill({}, DType::Float64, stop, 0));
  return wrap_node(graph::make_cast(n, type));
}

Array eye(std::int64_t n, std::optional<std::int64_t> m_opt, std::int64_t k, DType type) {
  const std::int64_t m = m_opt ? *m_opt : n;
  if (n < 0 || m < 0) throw ShapeError("eye: negative dimensions are not allowed");
  NodePtr rows = graph::make_iota({n, m}, DType::Int64, 0, double(k), 1);
  NodePtr cols = graph::make_iota({n, m}, DType::Int64, 1, 0, 1);
  return wrap_node(graph::make_cast(graph::make_binary(graph::BinaryOp::Equal, rows, cols), type));
}

namespace {
class WrappedStorage : public graph::Storage {
public:
  WrappedStorage(void* p, std::size_t n, bool device, std::shared_ptr<void> owner) : owner_(std::move(owner)) {
    data = p;
    bytes = n;
    on_device = device;
    external = true;
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
  return detail::ApiAccess::adopt(
      graph::make_buffer(std::move(storage), type, std::move(shape), 0, std::move(strides)));
}

} // namespace lazyfuse
