// Sorting (sorting.hpp): one graph::NodeKind::Sort node each, run by the runtime (runtime/Sorting.h).
#include <lazyfuse/sorting.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Sort.h"

namespace lazyfuse {

namespace {

Array sorted(graph::SortResult result, const char* name, const Array& a, std::optional<int> axis) {
  detail::require_valid(a, name);
  graph::NodePtr x = detail::graph_node(a);
  if (!axis) x = graph::reshape(x, {x->size()});
  return detail::wrap_node(graph::make_sort(x, axis.value_or(0), result, name));
}

} // namespace

Array sort(const Array& a, std::optional<int> axis) {
  return sorted(graph::SortResult::Values, "sort", a, axis);
}
Array argsort(const Array& a, std::optional<int> axis) {
  return sorted(graph::SortResult::Indices, "argsort", a, axis);
}

} // namespace lazyfuse
