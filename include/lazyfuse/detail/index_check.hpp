// Compile-time checks of the components of `x(...)` and `x.at(...)` (array.hpp), so that a mistake reads as one
// sentence rather than a failed overload resolution. A user never names these.
#pragma once

#include <lazyfuse/index.hpp>

#include <concepts>

namespace lazyfuse {
class Array;
}

// The compile-time error of `x.at(idx)`, `x.index_with({idx})` and `x.set_at({idx}, v)` with an Array `idx`.
#define LAZYFUSE_ARRAY_AS_INDEX_MESSAGE                                                                                \
  "lazyfuse: an Array cannot be used as an index here: index with arrays through x(...) or x.index_arrays({...}) "     \
  "or x.at(...) (integer arrays and boolean masks); index_with and set_at take basic components only. "                \
  "Update under a mask with where(mask, value, x)."

namespace lazyfuse::detail {

/// What `x(...)` and `x.at(...)` accept: the types of `Index`, plus `none` and any integer except bool.
template <class I>
concept IndexComponent =
    (std::integral<I> && !std::same_as<I, bool>) || std::same_as<I, Slice> || std::same_as<I, NewAxis> ||
    std::same_as<I, Ellipsis> || std::same_as<I, None> || std::same_as<I, Index>;

template <class> inline constexpr bool always_false = false;

// Called only when some component is not an IndexComponent: one message per mistake.
template <class... I> constexpr void reject_index() {
  static_assert(!(std::same_as<I, Array> || ...), LAZYFUSE_ARRAY_AS_INDEX_MESSAGE);
  static_assert(!(std::same_as<I, bool> || ...),
                "lazyfuse: a bool is not an index (NumPy reads x[True] as a 0-d boolean mask, which is not supported "
                "yet); pass an integer, slice(...), newaxis/none or ellipsis.");
  // Only when neither assertion above fired.
  static_assert((std::same_as<I, Array> || ...) || (std::same_as<I, bool> || ...),
                "lazyfuse: an index component must be an integer, slice(...), all_of, newaxis/none or ellipsis.");
}

} // namespace lazyfuse::detail
