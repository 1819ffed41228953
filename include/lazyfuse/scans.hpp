// Cumulative sums and products (scans), as NumPy's cumsum, cumprod, nancumsum and nancumprod.
//
// `axis`: the axis scanned (negative counts from the end); none (the default) scans the array flattened in C order,
// giving a 1-D result. `dtype`: the type the scan accumulates in and returns; by default NumPy's: bool and signed
// integers int64, unsigned integers uint64, floating and complex types themselves (float16 and bfloat16 accumulate
// in float32 and round each result once, where NumPy rounds after every step). The result stays lazy: its elementwise
// input is computed inside the scan's kernel (cumsum(x * x) is one kernel), and consumers read the stored scan.
// Float scans add in a fixed order (tiles of 1,024 elements, a tree inside each; see docs/design.md, "Scans"): the
// same bits on every run, and on the GPU and the CPU backend. An axis out of range is an IndexError.
#pragma once

#include <lazyfuse/array.hpp>

#include <optional>

namespace lazyfuse {

/// The cumulative sum along `axis` (none: of the flattened array).
Array cumsum(const Array& a, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);
/// The cumulative product along `axis` (none: of the flattened array).
Array cumprod(const Array& a, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);
/// cumsum with NaN taken as 0 (so a leading run of NaNs gives zeros). On bool and integers, cumsum.
Array nancumsum(const Array& a, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);
/// cumprod with NaN taken as 1. On bool and integers, cumprod.
Array nancumprod(const Array& a, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt);

} // namespace lazyfuse
