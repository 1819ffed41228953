// lazyfuse::Array: a cheap handle to an immutable node of a deferred computation graph.
//
// Every operation records a node and returns at once; nothing runs until a result is needed (get, item,
// eval, sync). Then the graph is fused into as few kernels as possible and run on the GPU, or on the CPU
// backend when there is none. Names and semantics follow NumPy; docs/semantics.md lists the differences.
#pragma once

#include <lazyfuse/dtype.hpp>
#include <lazyfuse/host_array.hpp>

#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace lazyfuse {

namespace graph {
class Node;
}

using Shape = std::vector<std::int64_t>;

/// A C++ number usable as a weak scalar in expressions (`x * 2.0` keeps float32 arrays float32).
template <class S>
concept Scalar = std::is_arithmetic_v<S>;

/// `x(slice(1, none))` is NumPy's `x[1:]`; `slice(none, none, -1)` is `x[::-1]`.
struct None {};
inline constexpr None none{};
struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;
};
inline Slice slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop, std::int64_t step = 1) {
  return {start, stop, step};
}
inline Slice slice(None, std::optional<std::int64_t> stop, std::int64_t step = 1) {
  return {std::nullopt, stop, step};
}
inline Slice slice(std::optional<std::int64_t> start, None, std::int64_t step = 1) {
  return {start, std::nullopt, step};
}
inline Slice slice(None, None, std::int64_t step = 1) {
  return {std::nullopt, std::nullopt, step};
}
/// NumPy's `:` (the whole axis).
inline constexpr Slice all_of{};
/// NumPy's `np.newaxis` / `None` in an index.
struct NewAxis {};
inline constexpr NewAxis newaxis{};
/// NumPy's `...` in an index.
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

/// One component of an index: an integer (drops the axis), a slice, a new axis or an ellipsis.
using Index = std::variant<std::int64_t, Slice, NewAxis, Ellipsis>;

class Array;
template <class... A> void eval(const A&... arrays);

// The compile-time error of `x(mask)`, `x.at(mask)`, `x.index_with({mask})` and `x.set_at({mask}, v)`.
#define LAZYFUSE_ARRAY_AS_INDEX_MESSAGE                                                                                \
  "lazyfuse: an Array cannot be used as an index: boolean-mask indexing (NumPy's x[mask]) and integer-array "          \
  "indexing are not supported yet. Select under a mask with where(mask, x, fill); update under a mask with "           \
  "where(mask, value, x)."

namespace detail {
/// Throws Error("<op>: <operand> is an empty (default-constructed) Array") when `a` holds no value. Every public
/// function that takes an Array calls it (or an equivalent) before touching the array's node.
void require_valid(const Array& a, const char* op, const char* operand = "the array");

/// What `x(...)` and `x.at(...)` accept: the types of `Index`, plus `none` and any integer except bool.
template <class I>
concept IndexComponent =
    (std::integral<I> && !std::same_as<I, bool>) || std::same_as<I, Slice> || std::same_as<I, NewAxis> ||
    std::same_as<I, Ellipsis> || std::same_as<I, None> || std::same_as<I, Index>;
template <class> inline constexpr bool always_false = false;

// Compile-time diagnostics for index components lazyfuse does not take, so that a user sees one sentence instead
// of a failed overload resolution. Called only when some component is not an IndexComponent.
template <class... I> constexpr void reject_index() {
  static_assert(!(std::same_as<I, Array> || ...), LAZYFUSE_ARRAY_AS_INDEX_MESSAGE);
  static_assert(!(std::same_as<I, bool> || ...),
                "lazyfuse: a bool is not an index (NumPy reads x[True] as a 0-d boolean mask, which is not supported "
                "yet); pass an integer, slice(...), newaxis/none or ellipsis.");
  // Only when neither assertion above fired: one message per mistake.
  static_assert((std::same_as<I, Array> || ...) || (std::same_as<I, bool> || ...),
                "lazyfuse: an index component must be an integer, slice(...), all_of, newaxis/none or ellipsis.");
}
} // namespace detail

/// Value semantics over an immutable graph node. Copying an Array copies a pointer.
class Array {
public:
  /// An empty handle; every operation on it throws. Arrays come from the creation functions.
  Array() = default;

  DType dtype() const;
  const Shape& shape() const;
  std::int64_t ndim() const;
  /// Number of elements.
  std::int64_t size() const;
  bool valid() const noexcept { return node_ != nullptr; }

  // ---- views (never copy) -------------------------------------------------------------------------
  /// NumPy reshape; one dimension may be -1.
  Array reshape(Shape shape) const;
  /// Reverses the axes.
  Array transpose() const;
  /// Permutes the axes (NumPy `transpose(axes)`); negative axes count from the end.
  Array transpose(std::vector<int> axes) const;
  Array T() const { return transpose(); }
  Array ravel() const { return reshape({-1}); }
  /// NumPy indexing: `x(1, slice(2, none), newaxis, ellipsis)`. Boolean masks and integer arrays as indices are
  /// not supported yet: `x(mask)` does not compile (use `where(mask, x, fill)`).
  template <class... I> Array operator()(const I&... index) const {
    if constexpr ((detail::IndexComponent<I> && ...)) {
      return index_with({Index(to_index(index))...});
    } else {
      detail::reject_index<I...>();
      return *this;
    }
  }
  Array index_with(const std::vector<Index>& index) const;

  /// Slice assignment with value semantics: `x.at(1, slice(2, 5)).set(y)` returns a new array equal to x
  /// except in the region, which holds y broadcast to the region's shape. x and every other handle to x's
  /// value are unchanged. `x.set_at({...}, y)` rebinds x itself to the new version.
  class At {
  public:
    Array set(const Array& value) const;
    template <Scalar S> Array set(S value) const;

  private:
    friend class Array;
    DType base_dtype() const; // throws when `at` was called on an empty Array
    At(std::shared_ptr<graph::Node> base, std::vector<Index> index)
        : base_(std::move(base)), index_(std::move(index)) {}
    std::shared_ptr<graph::Node> base_;
    std::vector<Index> index_;
  };
  template <class... I> At at(const I&... index) const {
    if constexpr ((detail::IndexComponent<I> && ...)) {
      return At(node_, {Index(to_index(index))...});
    } else {
      detail::reject_index<I...>();
      return At(node_, {});
    }
  }
  Array& set_at(const std::vector<Index>& index, const Array& value);

  Array astype(DType type) const;

  // ---- materialization ----------------------------------------------------------------------------
  /// Computes the array (if needed) and copies it to the host.
  template <Element T> HostArray<T> get() const;
  /// The single element of a size-1 array.
  template <Element T> T item() const;
  /// Computes the array on the device and returns without waiting.
  const Array& eval() const;
  /// True once the array's value is held in a buffer (it was evaluated, or came from data).
  bool is_materialized() const;

  // ---- interop ------------------------------------------------------------------------------------
  /// Device (or, on the CPU backend, host) address of the first element, after materializing the array
  /// into a C-contiguous buffer. Valid while any handle to this array's value lives.
  void* data_ptr() const;

  // ---- compound assignment (rebinds this handle, never writes into shared buffers) ----------------
  Array& operator+=(const Array& o);
  Array& operator-=(const Array& o);
  Array& operator*=(const Array& o);
  Array& operator/=(const Array& o);
  template <Scalar S> Array& operator+=(S s);
  template <Scalar S> Array& operator-=(S s);
  template <Scalar S> Array& operator*=(S s);
  template <Scalar S> Array& operator/=(S s);

  /// Not a conversion: it exists so that an Array passed where an `Index` is expected (`x.index_with({mask})`,
  /// `x.set_at({mask}, v)`) fails to compile with the message below rather than a list of variant constructors.
  template <class T>
  requires std::same_as<T, Index>
  operator T() const {
    static_assert(detail::always_false<T>, LAZYFUSE_ARRAY_AS_INDEX_MESSAGE);
    return T{};
  }

  /// The graph node (for the library's own layers and tests).
  const std::shared_ptr<graph::Node>& node() const noexcept { return node_; }
  explicit Array(std::shared_ptr<graph::Node> node) : node_(std::move(node)) {}

private:
  static Index to_index(std::integral auto i) { return Index(std::int64_t(i)); }
  static Index to_index(const Slice& s) { return s; }
  static Index to_index(NewAxis) { return NewAxis{}; }
  static Index to_index(Ellipsis) { return Ellipsis{}; }
  static Index to_index(None) { return NewAxis{}; }
  static Index to_index(const Index& i) { return i; }
  void get_into(DType as, void* out) const;
  void check_item() const;
  std::shared_ptr<graph::Node> node_;
};

// ---- scalars ------------------------------------------------------------------------------------------
namespace detail {
/// A weak scalar: its value plus its C++ kind; the array operand decides the result type.
struct WeakScalar {
  double f = 0;       // the value (exact for floats; rounded for huge integers)
  std::int64_t i = 0; // the value of a bool or integer that fits int64
  ScalarKind kind = ScalarKind::Float;
  bool beyond_int64 = false; // an unsigned integer above INT64_MAX: no integer array type holds it
};
template <Scalar S> WeakScalar weak(S s) {
  if constexpr (std::is_same_v<S, bool>)
    return {double(s), std::int64_t(s), ScalarKind::Bool, false};
  else if constexpr (std::is_integral_v<S> && std::is_unsigned_v<S>)
    return {double(s), std::int64_t(s), ScalarKind::Int, std::uint64_t(s) > std::uint64_t(INT64_MAX)};
  else if constexpr (std::is_integral_v<S>)
    return {double(s), std::int64_t(s), ScalarKind::Int, false};
  else
    return {double(s), std::int64_t(0), ScalarKind::Float, false};
}
/// The operations of the op table (lazyfuse/ops.def); their meaning is in graph/OpMath.inc.
enum class UnaryOp {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) Enum,
#include <lazyfuse/ops.def>
};
enum class BinaryOp {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) Enum,
#include <lazyfuse/ops.def>
};
enum class ReduceOp {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) Enum,
#include <lazyfuse/ops.def>
};
Array unary(UnaryOp op, const Array& a);
/// A weak scalar as a 0-d array of `type`.
Array scalar_array(WeakScalar s, DType type);
Array binary(BinaryOp op, const Array& a, const Array& b);
Array binary(BinaryOp op, const Array& a, WeakScalar b);
Array binary(BinaryOp op, WeakScalar a, const Array& b);
} // namespace detail

// ---- creation -----------------------------------------------------------------------------------------
/// Copies `data` (row-major, `shape`'s size) into a new array before returning.
template <Element T> Array asarray(std::span<const T> data, Shape shape);
template <Element T>
requires(!std::is_same_v<T, bool>) Array asarray(const std::vector<T>& data, Shape shape) {
  return asarray(std::span<const T>(data.data(), data.size()), std::move(shape));
}
template <Element T>
requires(!std::is_same_v<T, bool>) Array asarray(const std::vector<T>& data) {
  return asarray(std::span<const T>(data.data(), data.size()), Shape{std::int64_t(data.size())});
}
/// Small literals: `asarray({1.0, 2.0})`, `asarray({{1, 2}, {3, 4}})`.
template <Element T> Array asarray(std::initializer_list<T> v) {
  return asarray(std::span<const T>(v.begin(), v.end()), Shape{std::int64_t(v.size())});
}
Array asarray(const std::vector<bool>& data, Shape shape);
template <Element T> Array asarray(std::initializer_list<std::initializer_list<T>> v);
template <Element T> Array asarray(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v);
/// Copies `values` (any element type) into an array of type `type`.
Array asarray_as(DType type, std::span<const double> values, Shape shape);

Array zeros(Shape shape, DType type = DType::Float64);
Array ones(Shape shape, DType type = DType::Float64);
/// `value` converted to `type`. A NaN, infinite or out-of-range value for an integer type throws DTypeError (NumPy
/// fills INT_MIN with a RuntimeWarning; docs/semantics.md lists the difference); a fraction truncates toward zero.
Array full(Shape shape, double value, DType type = DType::Float64);
/// Uninitialized in NumPy; here filled with zeros on creation is not promised either — treat as garbage.
Array empty(Shape shape, DType type = DType::Float64);
Array zeros_like(const Array& a);
Array ones_like(const Array& a);
/// full(a.shape(), value, a.dtype()), with full's DTypeError for integer types.
Array full_like(const Array& a, double value);
Array empty_like(const Array& a);
/// NumPy arange: int64 for integer arguments unless `type` says otherwise.
Array arange(std::int64_t stop);
Array arange(double start, double stop, double step = 1, std::optional<DType> type = std::nullopt);
Array linspace(double start, double stop, std::int64_t num = 50, bool endpoint = true, DType type = DType::Float64);
Array eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
          DType type = DType::Float64);

/// Wraps memory the caller owns as an array, without copying. Strides are in elements (C-contiguous when empty) and
/// must not be negative. `owner` is kept alive as long as any array reads the memory, then released (put your
/// deleter in it).
///
/// The memory is checked when it is wrapped, so that no kernel can fault on it later (a fault would lose the CUDA
/// context for the whole process): `data` must be aligned to the element size, and the driver is asked what it is.
/// - CUDA backend: accepts memory of the current device (cudaMalloc, pools, virtual-memory mappings), managed memory
///   (cudaMallocManaged), and another device's memory that the current device can access (peer access enabled with
///   cudaDeviceEnablePeerAccess, or access granted to its pool). The elements' span, from `data` to the end of the
///   highest-addressed element, must lie inside one allocation (or consecutive mappings of one reservation). Refuses
///   host memory: pageable (malloc, new, std::vector) and pinned (cudaMallocHost, cudaHostAlloc, cudaHostRegister)
///   alike, since kernels would read pinned memory across the host link at every use; copy with asarray instead.
/// - CPU backend: accepts host, pinned and managed memory; refuses device memory when a driver is loaded to tell
///   (without one, no device memory can exist).
///
/// A zero-size array reads nothing: its pointer is not checked and may be null. Throws ShapeError for a bad shape or
/// strides (too many or too few, negative, a span larger than the address space), Error for memory it refuses
/// (naming its kind, or the bytes asked for and the allocation's range), BackendError when the CUDA context is lost.
Array from_pointer(void* data, Shape shape, DType type, std::vector<std::int64_t> strides = {},
                   std::shared_ptr<void> owner = nullptr);

// ---- elementwise --------------------------------------------------------------------------------------
#define LAZYFUSE_BINARY(OP, fn, rule, cost)                                                                            \
  inline Array fn(const Array& a, const Array& b) {                                                                    \
    return detail::binary(detail::BinaryOp::OP, a, b);                                                                 \
  }                                                                                                                    \
  template <Scalar S> Array fn(const Array& a, S b) {                                                                  \
    return detail::binary(detail::BinaryOp::OP, a, detail::weak(b));                                                   \
  }                                                                                                                    \
  template <Scalar S> Array fn(S a, const Array& b) {                                                                  \
    return detail::binary(detail::BinaryOp::OP, detail::weak(a), b);                                                   \
  }
#include <lazyfuse/ops.def>
#define LAZYFUSE_ALIAS(alias, fn)                                                                                      \
  inline Array alias(const Array& a, const Array& b) {                                                                 \
    return fn(a, b);                                                                                                   \
  }                                                                                                                    \
  template <Scalar S> Array alias(const Array& a, S b) {                                                               \
    return fn(a, b);                                                                                                   \
  }                                                                                                                    \
  template <Scalar S> Array alias(S a, const Array& b) {                                                               \
    return fn(a, b);                                                                                                   \
  }
LAZYFUSE_ALIAS(divide, true_divide)
LAZYFUSE_ALIAS(mod, remainder)
LAZYFUSE_ALIAS(pow, power)
#undef LAZYFUSE_ALIAS

#define LAZYFUSE_DECLARE_OPERATOR(sym, fn)                                                                             \
  inline Array operator sym(const Array& a, const Array& b) {                                                          \
    return fn(a, b);                                                                                                   \
  }                                                                                                                    \
  template <Scalar S> Array operator sym(const Array& a, S b) {                                                        \
    return fn(a, b);                                                                                                   \
  }                                                                                                                    \
  template <Scalar S> Array operator sym(S a, const Array& b) {                                                        \
    return fn(a, b);                                                                                                   \
  }
LAZYFUSE_DECLARE_OPERATOR(+, add)
LAZYFUSE_DECLARE_OPERATOR(-, subtract)
LAZYFUSE_DECLARE_OPERATOR(*, multiply)
LAZYFUSE_DECLARE_OPERATOR(/, divide)
LAZYFUSE_DECLARE_OPERATOR(%, remainder)
LAZYFUSE_DECLARE_OPERATOR(==, equal)
LAZYFUSE_DECLARE_OPERATOR(!=, not_equal)
LAZYFUSE_DECLARE_OPERATOR(<, less)
LAZYFUSE_DECLARE_OPERATOR(<=, less_equal)
LAZYFUSE_DECLARE_OPERATOR(>, greater)
LAZYFUSE_DECLARE_OPERATOR(>=, greater_equal)
/// `&& || !` are logical on every type (and do not short-circuit). `& | ^ ~` are NumPy's bitwise_and, bitwise_or,
/// bitwise_xor and invert: bitwise on integers, logical on bool, a DTypeError on floats (they used to be logical on
/// every type: docs/semantics.md).
LAZYFUSE_DECLARE_OPERATOR(&&, logical_and)
LAZYFUSE_DECLARE_OPERATOR(||, logical_or)
LAZYFUSE_DECLARE_OPERATOR(&, bitwise_and)
LAZYFUSE_DECLARE_OPERATOR(|, bitwise_or)
LAZYFUSE_DECLARE_OPERATOR(^, bitwise_xor)
#undef LAZYFUSE_DECLARE_OPERATOR

#define LAZYFUSE_UNARY(OP, fn, rule, cost)                                                                             \
  inline Array fn(const Array& a) {                                                                                    \
    return detail::unary(detail::UnaryOp::OP, a);                                                                      \
  }
#include <lazyfuse/ops.def>

inline Array operator-(const Array& a) {
  return negative(a);
}
inline Array operator+(const Array& a) {
  return a;
}
inline Array operator!(const Array& a) {
  return logical_not(a);
}
inline Array operator~(const Array& a) {
  return invert(a);
}
/// NumPy's other name of invert.
inline Array bitwise_not(const Array& a) {
  return invert(a);
}
inline Array absolute(const Array& a) {
  return abs(a);
}
inline Array fabs(const Array& a) {
  return abs(a);
}

/// `cond ? a : b` elementwise, broadcasting all three; the result type promotes a and b.
Array where(const Array& cond, const Array& a, const Array& b);
template <Scalar S> Array where(const Array& cond, const Array& a, S b);
template <Scalar S> Array where(const Array& cond, S a, const Array& b);
template <Scalar S, Scalar R> Array where(const Array& cond, S a, R b);
/// minimum(maximum(a, lo), hi), NaN-propagating.
Array clip(const Array& a, const Array& lo, const Array& hi);
template <Scalar S, Scalar R> Array clip(const Array& a, S lo, R hi) {
  detail::require_valid(a, "clip");
  return minimum(maximum(a, lo), hi);
}
Array astype(const Array& a, DType type);

// ---- shape manipulation (views and lazy copies) --------------------------------------------------------
Array reshape(const Array& a, Shape shape);
Array transpose(const Array& a);
Array transpose(const Array& a, std::vector<int> axes);
Array permute(const Array& a, std::vector<int> axes);
Array expand_dims(const Array& a, int axis);
/// Removes all size-1 axes, or the given ones (which must have size 1).
Array squeeze(const Array& a, std::optional<std::vector<int>> axes = std::nullopt);
Array broadcast_to(const Array& a, Shape shape);
/// Reverses the order along one axis, or all axes.
Array flip(const Array& a, std::optional<int> axis = std::nullopt);
/// NumPy roll: shifts along an axis (or the flattened array) with wrap-around.
Array roll(const Array& a, std::int64_t shift, std::optional<int> axis = std::nullopt);
Array concatenate(const std::vector<Array>& arrays, int axis = 0);
Array stack(const std::vector<Array>& arrays, int axis = 0);
/// Constant padding: `pad_width[d] = {before, after}` per axis (or one pair for all axes).
Array pad(const Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& pad_width,
          double constant_value = 0);

// ---- reductions ---------------------------------------------------------------------------------------------
/// The axes of a reduction: all of them (the default), one (`1`, `-1`) or several (`{0, 2}`).
struct Axes {
  Axes() = default;
  Axes(int axis) : list(std::vector<int>{axis}) {}
  Axes(std::initializer_list<int> axes) : list(std::vector<int>(axes)) {}
  Axes(std::vector<int> axes) : list(std::move(axes)) {}
  std::optional<std::vector<int>> list; ///< nullopt: every axis
};

/// The reductions of the op table (lazyfuse/ops.def), as NumPy's: sum, prod, min, max, any, all, argmin, argmax
/// (and any added there), each `f(a, axes = all, keepdims = false)`, the arg reductions `f(a, axis = none,
/// keepdims = false)` (one axis, or the flattened array). Result types as NumPy's: sums and products of bool and
/// signed integers give int64, of unsigned integers uint64, of floats the same float type; min/max keep the type;
/// any/all give bool; arg reductions an int64 index. Float sums add in a tree order (error ~1e-7 log n in float32).
/// Reductions without an identity (min, max, argmin, argmax) of an empty selection are an Error, as in NumPy.
/// keepdims keeps reduced axes as size 1. argmax/argmin return the first extreme; the first NaN wins, as in NumPy.
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) LAZYFUSE_REDUCE_DECLARE_##kind(name)
#define LAZYFUSE_REDUCE_DECLARE_Combine(name) Array name(const Array& a, Axes axes = {}, bool keepdims = false);
#define LAZYFUSE_REDUCE_DECLARE_Arg(name)                                                                              \
  Array name(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
#include <lazyfuse/ops.def>
#undef LAZYFUSE_REDUCE_DECLARE_Combine
#undef LAZYFUSE_REDUCE_DECLARE_Arg
inline Array amin(const Array& a, Axes axes = {}, bool keepdims = false) {
  return min(a, std::move(axes), keepdims);
}
inline Array amax(const Array& a, Axes axes = {}, bool keepdims = false) {
  return max(a, std::move(axes), keepdims);
}
/// Integer and bool inputs give float64, as in NumPy.
Array mean(const Array& a, Axes axes = {}, bool keepdims = false);
/// Variance with `ddof` delta degrees of freedom, as the mean of squared deviations from the mean (two passes).
Array var(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
/// NumPy's `std` (a C++ function cannot be called std inside namespace lazyfuse).
Array stddev(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
Array count_nonzero(const Array& a, Axes axes = {}, bool keepdims = false);
/// NumPy's NaN-ignoring reductions; on bool and integer arrays (which hold no NaN) they are sum, prod, mean, var
/// and stddev. nansum and nanprod treat NaN as 0 and 1; nanmean, nanvar and nanstd reduce the non-NaN elements
/// and are NaN where there is none (nanvar and nanstd also where count - ddof <= 0). nanmin and nanmax (the op
/// table's, above) skip NaN and give NaN for an all-NaN selection, as NumPy does (NumPy also warns). Result types:
/// those of sum, prod, mean, var and stddev.
Array nansum(const Array& a, Axes axes = {}, bool keepdims = false);
Array nanprod(const Array& a, Axes axes = {}, bool keepdims = false);
Array nanmean(const Array& a, Axes axes = {}, bool keepdims = false);
Array nanvar(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
/// NumPy's nanstd.
Array nanstd(const Array& a, Axes axes = {}, int ddof = 0, bool keepdims = false);
/// log(sum(exp(a))) computed stably: max + log(sum(exp(a - max))).
Array logsumexp(const Array& a, Axes axes = {}, bool keepdims = false);
/// |a - b| <= atol + rtol * |b| elementwise (infinities equal when of the same sign; NaN equal only with equal_nan).
Array isclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// all(isclose(a, b)), materialized.
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
/// Same shape and all elements equal, materialized.
bool array_equal(const Array& a, const Array& b);

namespace linalg {
/// NumPy's linalg.norm: with no axes, the 2-norm of the flattened array. With one axis (or a vector): ord 1, 2,
/// inf, -inf, 0 or any p. With two axes: the Frobenius norm (ord nullopt or "fro"). keepdims as in reductions.
Array norm(const Array& a, std::optional<double> ord = std::nullopt, Axes axes = {}, bool keepdims = false);
Array norm(const Array& a, const char* ord, Axes axes = {}, bool keepdims = false);
/// `norm(x, 1)`, `norm(x, 0)`: a number is an order, never the string overload's null pointer.
template <Scalar S> Array norm(const Array& a, S ord, Axes axes = {}, bool keepdims = false) {
  return norm(a, std::optional<double>(double(ord)), std::move(axes), keepdims);
}
} // namespace linalg

// ---- materialization ----------------------------------------------------------------------------------
void eval_arrays(std::span<const Array* const> arrays);
/// Materializes several arrays together: outputs of one shape become one multi-output kernel.
template <class... A> void eval(const A&... arrays) {
  const Array* list[] = {&arrays...};
  eval_arrays(std::span<const Array* const>(list, sizeof...(A)));
}
/// Prints like NumPy (summarized with "..." when large).
std::ostream& operator<<(std::ostream& os, const Array& a);
/// NumPy-style text of an array's value.
std::string to_string(const Array& a);

// ---- template definitions -----------------------------------------------------------------------------
template <Element T> HostArray<T> Array::get() const {
  detail::require_valid(*this, "get");
  HostArray<T> out(shape());
  get_into(dtype_of<T>(), out.data());
  return out;
}
template <Element T> T Array::item() const {
  check_item();
  return get<T>()[0];
}
template <Scalar S> Array Array::At::set(S value) const {
  return set(detail::scalar_array(detail::weak(value), base_dtype()));
}
template <Scalar S> Array& Array::operator+=(S s) {
  return *this = *this + s;
}
template <Scalar S> Array& Array::operator-=(S s) {
  return *this = *this - s;
}
template <Scalar S> Array& Array::operator*=(S s) {
  return *this = *this * s;
}
template <Scalar S> Array& Array::operator/=(S s) {
  return *this = *this / s;
}
namespace detail {
Array where_weak(const Array& cond, const Array* a, WeakScalar sa, const Array* b, WeakScalar sb);
} // namespace detail
template <Scalar S> Array where(const Array& cond, const Array& a, S b) {
  return detail::where_weak(cond, &a, {}, nullptr, detail::weak(b));
}
template <Scalar S> Array where(const Array& cond, S a, const Array& b) {
  return detail::where_weak(cond, nullptr, detail::weak(a), &b, {});
}
template <Scalar S, Scalar R> Array where(const Array& cond, S a, R b) {
  return detail::where_weak(cond, nullptr, detail::weak(a), nullptr, detail::weak(b));
}

#undef LAZYFUSE_ARRAY_AS_INDEX_MESSAGE

} // namespace lazyfuse
