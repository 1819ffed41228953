// The components of an index, as NumPy's: `x(1, slice(2, none), newaxis, ellipsis)` is `x[1, 2:, None, ...]`.
#pragma once

#include <cstdint>
#include <optional>
#include <variant>

namespace lazyfuse {

/// `none` in a slice is an omitted bound (`slice(none, 4)` is `:4`); as an index component it is `newaxis`.
struct None {};
inline constexpr None none{};

/// `x(slice(1, none))` is NumPy's `x[1:]`; `slice(none, none, -1)` is `x[::-1]`.
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

} // namespace lazyfuse
