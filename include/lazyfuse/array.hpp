// lazyfuse::Array: a cheap handle to an immutable node of a deferred computation graph.
//
// Every operation records a node and returns at once; nothing runs until a result is needed (get, item,
// eval, sync). Then the graph is fused into as few kernels as possible and run on the GPU, or on the CPU
// backend when there is none. Names and semantics follow NumPy; docs/semantics.md lists the differences.
//
// The functions on arrays are declared by topic: creation.hpp, elementwise.hpp (arithmetic, comparisons, logical
// and bitwise ops, transcendental functions, rounding, the operators), manipulation.hpp (views and shape changes),
// reductions.hpp, linalg.hpp. lazyfuse.hpp includes them all.
#pragma once

#include <lazyfuse/detail/index_check.hpp>
#include <lazyfuse/detail/node_ptr.hpp>
#include <lazyfuse/detail/weak_scalar.hpp>
#include <lazyfuse/dtype.hpp>
#include <lazyfuse/host_array.hpp>
#include <lazyfuse/index.hpp>

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace lazyfuse {

namespace detail {
struct ApiAccess; // the library's own access to an Array's graph node (api/ApiAccess.h)
}

using Shape = std::vector<std::int64_t>;

/// A C++ number usable as a weak scalar in expressions (`x * 2.0` keeps float32 arrays float32; `x * 1i`, a
/// std::complex, makes a float32 x complex64).
template <class S>
concept Scalar = std::is_arithmetic_v<S> || detail::is_std_complex<S>;

class Array;

/// An operand of an elementwise function or operator: an Array, or a C++ number taken as a weak scalar (NumPy 2's
/// rule: `x * 2.0` keeps a float32 x float32, `x + 1` keeps an int8 x int8, and an integer the array's type cannot
/// hold is a DTypeError). Built implicitly from either; it refers to the Array, so it lives only as a parameter.
/// When both operands are numbers, the result is a 0-d array of their promoted type (bool, int64 or float64), as
/// NumPy's `np.add(1, 2.5)`.
class Operand {
public:
  Operand(const Array& a) noexcept : array_(&a) {}
  /// A temporary (or moved) Array: an arithmetic op or comparison takes its node over, leaving it empty, where a
  /// copy would count one more reference and the temporary's end one less (in `x * a + b`, the product).
  Operand(Array&& a) noexcept : array_(&a), temporary_(true) {}
  template <Scalar S> Operand(S value) noexcept : scalar_(detail::weak(value)) {}

private:
  friend struct detail::ApiAccess;
  const Array* array_ = nullptr; // null for a number
  bool temporary_ = false;       // array_ was bound as an rvalue
  detail::WeakScalar scalar_;
};

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
  /// NumPy indexing: `x(1, slice(2, none), newaxis, ellipsis)` is a view. With integer Arrays among the
  /// components it is NumPy's advanced indexing, a gather (`x(idx, all_of)` is `x[idx, :]`): the index arrays
  /// broadcast together; an integer combined with them counts as one more (0-d) index array; the broadcast shape
  /// takes the place of the index arrays when they are adjacent, and goes first when slices, `newaxis` or an ellipsis
  /// separate them (`x(0, all_of, i)` with i of shape (2,) on shape (3, 4, 5, 6) has shape (2, 4, 6)). The gather is
  /// lazy and fuses into the kernel that consumes it; negative indices count from the end; an index out of range is
  /// an IndexError when the result is materialized ("index 7 is out of bounds for axis 0 with size 5"). At most 7
  /// index arrays. A bool Array is a mask (NumPy's `x[mask]`): it covers as many axes as it has and stands for the
  /// index arrays of its true positions, which are computed here: the mask is materialized and its positions listed
  /// (on the GPU, on the device), a synchronization (indexing.hpp); the gather through them stays lazy.
  template <class... I> Array operator()(const I&... index) const {
    if constexpr ((detail::IndexComponent<I> && ...)) {
      return index_with({Index(to_index(index))...});
    } else if constexpr (((detail::IndexComponent<I> || std::same_as<I, Array>)&&...)) {
      return index_arrays({to_index_or_array(index)...});
    } else {
      detail::reject_index<I...>();
      return *this;
    }
  }
  Array index_with(const std::vector<Index>& index) const;
  /// `x(...)` with Arrays among the components, as a list (see operator()).
  Array index_arrays(const std::vector<std::variant<Index, Array>>& index) const;

  /// Slice assignment with value semantics: `x.at(1, slice(2, 5)).set(y)` returns a new array equal to x
  /// except in the region, which holds y (an array or a number) broadcast to the region's shape and converted to
  /// x's type. x and every other handle to x's value are unchanged. `x.set_at({...}, y)` rebinds x itself to the
  /// new version.
  ///
  /// With Arrays among the components (integer arrays, masks: the index of x(...)), `set` writes y broadcast to
  /// x(...)'s shape at the elements x(...) reads; where the index names one element several times, the last write in
  /// C order of x(...) wins (deterministically, on every backend). `add` is NumPy's ufunc.at for add: every
  /// duplicate counts. Its duplicates are summed first (in the type of y promoted with x's; integers in 64 bits,
  /// whose wrapped sum is the narrow type's) and added to x once, converted to x's type: for floats NumPy's
  /// sequential in-place sums can differ in the last bits. For numbers other than bool and complex, `add` stays
  /// lazy and reads nothing on the host: the positions are a gather (an index out of range raises IndexError when
  /// the result is materialized) and the sums a weighted bincount (graph/Count.h): float16, bfloat16 and float32
  /// values in fixed point, the same bits in any order and on every backend; integers exactly; float64 in an order
  /// fixed by the input alone (one by one in C order of x(...) on the CPU backend; sorted stably by element and
  /// combined by CUB's reduce-by-key on the GPU; docs/semantics.md, "at().add"). `set`, `multiply`, `min`, `max` and a
  /// bool or complex `add` read the index's positions on the host (a synchronization, as masks do); the writes are then
  /// lazy wheres and gathers, and the combining ones' order is set by the counts alone: an element's values in C order,
  /// in blocks of at least the mean count per written element, each block reduced in the order of `sum` along an axis
  /// (fixed for a device), then the blocks' results the same way; memory stays linear in the writes however skewed the
  /// counts.
  class At {
  public:
    Array set(Operand value) const;
    /// x + y at the indexed elements (`x[idx] += y` for basic indexes, ufunc.at for advanced ones), as a new array.
    Array add(Operand value) const;
    /// x * y at the indexed elements (NumPy's `np.multiply.at`): every duplicate multiplies in, its values' product
    /// first (in `prod`'s order), then x times it once, converted to x's type.
    Array multiply(Operand value) const;
    /// minimum(x, y) at the indexed elements (NumPy's `np.minimum.at`; a NaN among them wins, as in `minimum`).
    Array min(Operand value) const;
    /// maximum(x, y) at the indexed elements (NumPy's `np.maximum.at`).
    Array max(Operand value) const;

  private:
    friend class Array;
    At(graph::NodePtr base, std::vector<Index> index) : base_(std::move(base)), index_(std::move(index)) {}
    At(graph::NodePtr base, std::vector<std::variant<Index, Array>> advanced);
    enum class Combine { Add, Multiply, Min, Max };
    Array combine(Operand value, Combine how, const char* what) const;
    // add with advanced indices as a lazy weighted bincount; nothing for the types it does not sum (bool, complex).
    std::optional<Array> add_lazily(const Array& x, const graph::NodePtr& value) const;
    graph::NodePtr base_;
    std::vector<Index> index_;
    std::vector<std::variant<Index, Array>> advanced_; // non-empty: an index with Arrays
  };
  template <class... I> At at(const I&... index) const {
    if constexpr ((detail::IndexComponent<I> && ...)) {
      return At(node_, std::vector<Index>{Index(to_index(index))...});
    } else if constexpr (((detail::IndexComponent<I> || std::same_as<I, Array>)&&...)) {
      return At(node_, std::vector<std::variant<Index, Array>>{to_index_or_array(index)...});
    } else {
      detail::reject_index<I...>();
      return At(node_, {});
    }
  }
  Array& set_at(const std::vector<Index>& index, Operand value);

  /// A copy converted to `type` (NumPy's astype; float to integer saturates and maps NaN to 0).
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
  /// into a C-contiguous buffer. Valid while any handle to this array's value lives. The caller may write through
  /// it (every array sharing the buffer sees the change); lazyfuse then remembers nothing about the buffer's values
  /// (a gather through it is checked, and waited for, every time).
  void* data_ptr() const;

  // ---- compound assignment: `x op= y` is `x = x op y` (rebinds this handle, never writes into shared buffers) --
  Array& operator+=(Operand o);
  Array& operator-=(Operand o);
  Array& operator*=(Operand o);
  Array& operator/=(Operand o);
  Array& operator%=(Operand o);
  Array& operator&=(Operand o);
  Array& operator|=(Operand o);
  Array& operator^=(Operand o);
  Array& operator<<=(Operand o);
  Array& operator>>=(Operand o);

  /// Not a conversion: it exists so that an Array passed where an `Index` is expected (`x.index_with({mask})`,
  /// `x.set_at({mask}, v)`) fails to compile with the message below rather than a list of variant constructors.
  template <class T>
  requires std::same_as<T, Index>
  operator T() const {
    static_assert(detail::always_false<T>, LAZYFUSE_ARRAY_AS_INDEX_MESSAGE);
    return T{};
  }

private:
  friend struct detail::ApiAccess;
  explicit Array(graph::NodePtr node) : node_(std::move(node)) {}
  static Index to_index(std::integral auto i) { return Index(std::int64_t(i)); }
  static Index to_index(const Slice& s) { return s; }
  static Index to_index(NewAxis) { return NewAxis{}; }
  static Index to_index(Ellipsis) { return Ellipsis{}; }
  static Index to_index(None) { return NewAxis{}; }
  static Index to_index(const Index& i) { return i; }
  template <class I> static std::variant<Index, Array> to_index_or_array(const I& i) {
    if constexpr (std::same_as<I, Array>)
      return i;
    else
      return to_index(i);
  }
  const Shape& shape_for(const char* op) const; // shape(), naming `op` when the Array is empty
  void get_into(DType as, void* out) const;
  void check_item() const;
  graph::NodePtr node_;
};

// ---- materialization ----------------------------------------------------------------------------------
void eval_arrays(std::span<const Array* const> arrays);
/// Materializes several arrays together: outputs of one shape become one multi-output kernel.
template <class... A> void eval(const A&... arrays) {
  const Array* list[] = {&arrays...};
  eval_arrays(std::span<const Array* const>(list, sizeof...(A)));
}

// ---- printing -----------------------------------------------------------------------------------------
/// Prints like NumPy (summarized with "..." when large); materializes the array.
std::ostream& operator<<(std::ostream& os, const Array& a);
/// NumPy-style text of an array's value.
std::string to_string(const Array& a);

// ---- template definitions -----------------------------------------------------------------------------
template <Element T> HostArray<T> Array::get() const {
  HostArray<T> out(shape_for("get"));
  get_into(dtype_of<T>(), out.data());
  return out;
}
template <Element T> T Array::item() const {
  check_item();
  return get<T>()[0];
}

} // namespace lazyfuse

#undef LAZYFUSE_ARRAY_AS_INDEX_MESSAGE
