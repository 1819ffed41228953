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
#include <string>
#include <vector>

namespace lazyfuse {

/// NumPy's take (mode "raise"): `a` read at `indices` along `axis` (the result's shape is a's with that axis replaced
/// by indices' shape), or along the flattened `a` when axis is nullopt. `indices`: an integer array (IndexError for
/// any other type).
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt);

/// NumPy's take_along_axis: `indices` has a's number of dimensions; along `axis` it selects, and the other axes of a
/// and indices broadcast together (result[i, j] = a[i, indices[i, j]] for axis 1 of 2-D arrays). With axis nullopt,
/// `a` is flattened and `indices` must be 1-D. ValueError when the dimensions differ; IndexError for index arrays
/// that are not integers or shapes that do not broadcast. Any rank (docs/semantics.md: the errors' axis beyond 7).
Array take_along_axis(const Array& a, const Array& indices, std::optional<int> axis);

/// NumPy's put, with value semantics: a new array equal to a except that its flattened elements at `indices` hold
/// `values` (flattened, repeated cyclically over the indices, converted to a's type); a is unchanged. `mode`:
/// "raise" (an index out of range is an IndexError; negative ones count from the end), "wrap" (indices taken modulo
/// a's size) or "clip" (clipped to [0, size - 1]). Where an index repeats, the last write wins. Nothing is written
/// when either is empty. The indices' positions are read on the host (a synchronization, as `at().set` does).
Array put(const Array& a, const Array& indices, const Array& values, const std::string& mode = "raise");
/// NumPy's put_along_axis, with value semantics: a new array equal to a except at the elements that
/// take_along_axis(a, indices, axis) reads, which hold `values` broadcast to that result's shape (axis nullopt: the
/// flattened a and 1-D indices). Errors as take_along_axis's; where an element is named twice, the last write in C
/// order wins.
Array put_along_axis(const Array& a, const Array& indices, const Array& values, std::optional<int> axis);

// ---- compositions: views, wheres and gathers (lazy unless said otherwise) ----------------------------------------

/// NumPy's diff: the n-th discrete difference along `axis`, a[1:] - a[:-1] applied n times (not_equal for bool).
/// `prepend`/`append` are joined along the axis first (a 0-d array broadcasts to one slice). ValueError for n < 0 or
/// a 0-d a.
Array diff(const Array& a, int n = 1, int axis = -1, const std::optional<Array>& prepend = std::nullopt,
           const std::optional<Array>& append = std::nullopt);
/// NumPy's tril: a with the elements above the k-th diagonal of its last two axes zeroed (a where; at least 2-D,
/// ValueError otherwise).
Array tril(const Array& a, std::int64_t k = 0);
/// NumPy's triu: a with the elements below the k-th diagonal of its last two axes zeroed.
Array triu(const Array& a, std::int64_t k = 0);
/// NumPy's meshgrid over 1-D arrays (others are flattened): `indexing` "xy" (the first two outputs' axes swapped,
/// NumPy's default) or "ij"; `sparse`: each output keeps size 1 on the other axes. Views of the inputs (broadcasts).
std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing = "xy", bool sparse = false);
/// NumPy's indices: an array of shape (len(dimensions), *dimensions) whose [d] holds coordinate d. Lazy (iotas).
Array indices(const Shape& dimensions, DType type = DType::Int64);
/// NumPy's indices(..., sparse=True): one array per axis, of size 1 except along its own axis.
std::vector<Array> indices_sparse(const Shape& dimensions, DType type = DType::Int64);
/// NumPy's repeat with one count for every element: along `axis`, or over the flattened a (nullopt). A gather at a
/// computed index (position / repeats). ValueError for a negative count.
Array repeat(const Array& a, std::int64_t repeats, std::optional<int> axis = std::nullopt);
/// NumPy's repeat with a count per element (of the axis, or of the flattened a): the counts are host data, so the
/// positions are computed on the host and the result is a gather at them. ValueError for a negative count or a
/// length that is neither 1 nor the axis' length.
Array repeat(const Array& a, const std::vector<std::int64_t>& repeats, std::optional<int> axis = std::nullopt);
/// NumPy's tile: a repeated reps[d] times along each axis (reps shorter than a's dimensions counts from the end; a
/// with fewer dimensions gets leading ones). A broadcast view reshaped: lazy.
Array tile(const Array& a, const std::vector<std::int64_t>& reps);
/// NumPy's choose (mode "raise"): result[i] = choices[a[i]][i], with a and the choices broadcast together; a's values
/// in [0, len(choices)). Others are an IndexError when the result is materialized (NumPy: ValueError "invalid entry
/// in choice array"), which names a negative entry as len(choices). A gather over the stacked choices. At most 6
/// dimensions.
Array choose(const Array& a, const std::vector<Array>& choices);
/// NumPy's compress: the slices of a along `axis` (or of the flattened a) where `condition` (1-D, converted to bool)
/// is true. The condition's true positions are listed when this is called, as a mask's (a synchronization); the
/// result is a gather at the selected positions. A condition longer than the axis is an IndexError where it selects
/// past the end.
Array compress(const Array& condition, const Array& a, std::optional<int> axis = std::nullopt);

// ---- boolean masks ----------------------------------------------------------------------------------------------
// A mask's true positions decide a result's size, so they are computed when the function is called (or when
// `x(mask)` is written): the mask is materialized and its true positions listed, a synchronization. On the GPU the
// listing runs on the device (CUB: a count, then the positions), and what comes back to the host is the count (8
// bytes), not the mask; the CPU backend lists them on the host. The positions are then an ordinary int64 array, and
// what reads the data through them is a lazy gather that fuses with the work after it. `x(mask)` itself is NumPy's
// x[mask] (array.hpp): a mask covering k axes selects the same elements as the k index arrays of its true positions
// (it reads those axes flattened, at the flat positions). nonzero's coordinates are lazy: the flat positions divided
// per axis, computed by whatever reads them.

/// NumPy's nonzero: per axis, the coordinates of the nonzero (true) elements in C order, as int64 arrays. ValueError
/// for a 0-d array.
std::vector<Array> nonzero(const Array& a);
/// NumPy's flatnonzero: the flat (C-order) positions of the nonzero elements.
Array flatnonzero(const Array& a);
/// NumPy's argwhere: an int64 array of shape (count, ndim), the coordinates of each nonzero element.
Array argwhere(const Array& a);
/// NumPy's extract: the elements of the flattened a where the flattened condition is nonzero (ValueError when their
/// sizes differ; NumPy allows a longer array).
Array extract(const Array& condition, const Array& a);

} // namespace lazyfuse
