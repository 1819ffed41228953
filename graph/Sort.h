// Sorting in the graph: the Sort node (a stable sort along one axis, or its permutation) and NumPy's order of
// elements, which the runtime's sorts follow (runtime/Sorting.h).
#pragma once

#include "graph/Node.h"

#include <string_view>

namespace lazyfuse::graph {

/// What a Sort node holds (its `op`).
enum class SortResult : int {
  Values,  ///< the sorted values (the source's type)
  Indices, ///< for each position, the index along the axis of the element that lands there (int64)
};

/// A stable sort of `a` along `axis` (NumPy's numbering, negative from the end) in NumPy's order: NaNs last whatever
/// their sign bit, -0.0 equal to +0.0 (so they keep their order), complex numbers by real part then imaginary part
/// with NumPy's placement of NaNs (a value with a NaN part after those without; see runtime/Sorting.cpp). Returns a
/// Sort node over `a`, or, where there is nothing to sort (an axis of at most one element), `a` itself (Values) or
/// zeros (Indices). Throws IndexError for an axis out of range (0-d arrays have none), naming `op_name`. Called when
/// an expression is built.
NodePtr make_sort(const NodePtr& a, int axis, SortResult result, std::string_view op_name);

} // namespace lazyfuse::graph
