// Gathers: reading an array at positions held by integer index arrays (NumPy's take, take_along_axis; advanced
// indexing itself is `x(...)` with Arrays among the components, array.hpp).
//
// A gather is lazy and elementwise in its result's index space: it fuses with the work that produces its index
// arrays (`arange(n) * 3 % m` is computed inside the kernel) and with the work that consumes it (`take(x, idx) * a - b`
// is one kernel, and the gathered array is never stored). Negative indices count from the end of their axis. An
// index out of range is an IndexError naming the index, the axis and its size, as in NumPy ("index 7 is out of
// bounds for axis 0 with size 5"), raised when the array that reads it is materialized (get, eval, item, printing),
// not when the expression is built: no kernel reads out of bounds (it reads element 0 instead and flags the error).
// A kernel that checks indices reads its 4-byte error word back after it runs, so materializing a gather waits for
// the device. The result is the same after the error: every later materialization of that array raises it again.
#pragma once

#include <lazyfuse/array.hpp>

#include <optional>

namespace lazyfuse {

/// NumPy's take (mode "raise"): `a` read at `indices` along `axis` (the result's shape is a's with that axis replaced
/// by indices' shape), or along the flattened `a` when axis is nullopt. `indices`: an integer array (IndexError for
/// any other type).
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt);

/// NumPy's take_along_axis: `indices` has a's number of dimensions; along `axis` it selects, and the other axes of a
/// and indices broadcast together (result[i, j] = a[i, indices[i, j]] for axis 1 of 2-D arrays). With axis nullopt,
/// `a` is flattened and `indices` must be 1-D. ValueError when the dimensions differ; IndexError for index arrays
/// that are not integers or shapes that do not broadcast. At most 7 dimensions.
Array take_along_axis(const Array& a, const Array& indices, std::optional<int> axis);

} // namespace lazyfuse
