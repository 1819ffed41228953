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

bool weighted_bincount_type(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64 ||
         t == DType::Int64 || t == DType::UInt64;
}

NodePtr make_weighted_bincount(const NodePtr& x, std::int64_t bins, const NodePtr& weights) {
  LAZYFUSE_ASSERT(x->ndim() == 1 && x->size() >= 1 && bins >= 1, "make_weighted_bincount needs a 1-D x and a bin");
  LAZYFUSE_ASSERT(x->dtype == DType::Bool || is_integer(x->dtype), "make_weighted_bincount of x that is not integers");
  LAZYFUSE_ASSERT(weights->shape == x->shape, "make_weighted_bincount of weights of another shape than x's");
  LAZYFUSE_ASSERT(weighted_bincount_type(weights->dtype), "make_weighted_bincount of weights of an unsummed type");
  NodeSpec n;
  n.kind = NodeKind::BinCount;
  n.dtype = weights->dtype;
  n.shape = {bins};
  return intern(std::move(n), {x, weights});
}

} // namespace lazyfuse::graph
