#include "graph/Count.h"

#include "graph/Assert.h"
#include "graph/Build.h"

namespace lazyfuse::graph {

NodePtr make_bincount(const NodePtr& x, std::int64_t bins) {
  LAZYFUSE_ASSERT(x->ndim() == 1 && x->size() >= 1 && bins >= 1, "make_bincount needs a 1-D x and at least one bin");
  LAZYFUSE_ASSERT(x->dtype == DType::Bool || is_integer(x->dtype), "make_bincount of a type that is not an integer");
  NodeSpec n;
  n.kind = NodeKind::BinCount;
  n.dtype = DType::Int64;
  n.shape = {bins};
  return intern(std::move(n), {x});
}

} // namespace lazyfuse::graph
