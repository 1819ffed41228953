// Folding the work around a matrix product into its library call: a partition step (fusion/PartitionSteps.h).
#pragma once

#include "fusion/PartitionSteps.h"

namespace lazyfuse::fusion::steps {

/// Step 3a. Finds, above each matrix product of a float type (float32, float64, float16, bfloat16), the work a GEMM
/// library does in the same call, and marks it: the last node of that work gets Info::epilogue (its plan becomes the
/// library call, computing the product and everything between) and the nodes between, the product included, get
/// Info::folded. Folded, in this order, each step optional:
///  - scalars multiplying an operand, (x * s) @ w, or the product, s * (a @ b): alpha (a scalar: a Fill node of the
///    product's type, or a broadcast of one);
///  - an addend of the product's shape and type: c with beta = 1, t * c with beta = t, or subtracted with beta = -1;
///    or, added, a row of n values broadcast over the other axes: the bias (not for n = 1; a scalar addend never);
///  - maximum(x, 0) (ReLU) or gelu_tanh(x) on the result.
/// Every folded node but the product's operands has exactly one consumer and is neither a root nor stored, so no
/// one else reads a value the library call does not write; a product with nothing to fold is left alone. Eager mode
/// stores every node first, so it folds nothing. Run after store_shared_or_eager and before store_products, which
/// then stores the epilogue's last node (and what its operands, c and bias need) instead of the product.
void fold_product_epilogues(Subgraph& g);

} // namespace lazyfuse::fusion::steps
