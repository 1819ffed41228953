// Matrix products with NumPy's semantics (numpy.matmul, dot, vdot, inner, outer, tensordot, trace, diagonal) and
// numpy.linalg's functions.
//
// Products are lazy like every other op: a product is a node of its own, computed by cuBLASLt on the GPU and by
// BLAS (or a blocked loop) on the CPU backend when its value is needed, never fused into a kernel. An operand that
// such a library reads in place (a buffer or a transposed, sliced or broadcast view of one: one leading dimension
// and one batch stride) is passed without a copy; pending elementwise work on an operand, or a view no library
// reads, becomes one kernel that writes the operand. docs/semantics.md ("Matrix products") has the rules,
// docs/configuration.md the precision of float32 products on the GPU (LAZYFUSE_TF32).
#pragma once

#include <lazyfuse/reductions.hpp>

#include <optional>
#include <utility>
#include <vector>

namespace lazyfuse {

/// NumPy's matmul (Python's `a @ b`): the matrix product of the last two axes, batch axes broadcast. A 1-D `a` is a
/// row and a 1-D `b` a column, the added axis removed from the result (1-D @ 1-D is a 0-d inner product). Result
/// type promote_types(a, b), computed in it: integers exactly (wrapping as NumPy's), bool as the or of ands,
/// float16/bfloat16 with float32 accumulation. Empty axes give an empty result, a contraction of length 0 zeros.
/// Throws ShapeError for 0-d operands and when a's last axis and b's second-to-last differ (naming both shapes and
/// the axes) or the batch axes do not broadcast.
Array matmul(const Array& a, const Array& b);

/// NumPy's dot: a 0-d operand multiplies (multiply); 1-D and 2-D operands and an N-D `a` with a 1-D `b` are matmul;
/// otherwise the sum over a's last axis and b's second-to-last, the result's axes a's others then b's others.
Array dot(const Array& a, const Array& b);

/// NumPy's vdot: both operands flattened, a conjugated (complex types), their inner product as a 0-d array. Throws
/// ShapeError when their sizes differ.
Array vdot(const Array& a, const Array& b);

/// NumPy's inner: the sum over the last axes of both (a 0-d operand multiplies); the result's axes a's others then
/// b's others. Throws ShapeError when the last axes differ.
Array inner(const Array& a, const Array& b);

/// NumPy's outer: both flattened, out[i, j] = a[i] * b[j] (an elementwise product, no matrix product).
Array outer(const Array& a, const Array& b);

/// NumPy's kron: the Kronecker product, out[i * b.shape + j] = a[i] * b[j] per axis, the shorter operand's shape
/// padded with leading 1s (an elementwise product of broadcast views, no matrix product; a 0-d operand multiplies).
Array kron(const Array& a, const Array& b);

/// NumPy's einsum with explicit labels, "ij,jk->ik", or implicit ("ij,jk": the labels that appear once, in
/// alphabetical order). An ellipsis "..." in a term stands for the axes no letter names; those broadcast across the
/// operands (aligned on the right) and come first in an implicit output, where "..." puts them in an explicit one. A
/// label repeated within one operand takes its diagonal; labels not in the output are summed. Operands are contracted
/// left to right, a pair at a time: on a batched matrix product where labels are contracted (operands permuted and
/// reshaped as matmul's rules allow views, else copied by one kernel), else by an elementwise product. The result type
/// is promote_types of the operands, as NumPy's. Throws Error for a malformed string (naming it; an explicit output
/// without "..." when the ellipsis has axes), ShapeError when a term's length differs from its operand's dimensions or
/// a label's sizes differ.
Array einsum(const std::string& subscripts, const std::vector<Array>& operands);

/// NumPy's tensordot with an integer: the sum over a's last `axes` axes and b's first `axes`.
Array tensordot(const Array& a, const Array& b, int axes = 2);
/// NumPy's tensordot with axis lists: the sum over a's axes `axes.first[i]` against b's `axes.second[i]` (negative
/// axes count from the end); the result's axes are a's others then b's others, each in order. Throws ShapeError when
/// the lists differ in length or paired axes in size, IndexError for an axis out of range or repeated.
Array tensordot(const Array& a, const Array& b, const std::pair<std::vector<int>, std::vector<int>>& axes);

/// NumPy's diagonal: a view (no copy) of the diagonal `offset` (above the main one when positive) of the matrices
/// spanned by axis1 and axis2; those axes are removed and the diagonal becomes the last axis. Throws ShapeError for
/// fewer than 2 dimensions, Error when axis1 and axis2 are the same axis, IndexError when one is out of range.
Array diagonal(const Array& a, std::int64_t offset = 0, int axis1 = 0, int axis2 = 1);

/// NumPy's trace: the sum along diagonal(a, offset, axis1, axis2), with sum's result type (integers and bool as
/// int64 or uint64).
Array trace(const Array& a, std::int64_t offset = 0, int axis1 = 0, int axis2 = 1);

} // namespace lazyfuse

namespace lazyfuse::linalg {

/// NumPy's linalg.matrix_power for n >= 0: the identity (of a's dtype and shape) for 0, else products of repeated
/// squares in NumPy's order (n's binary digits from the lowest; each product's own sums are the library's). a must
/// be a stack of square matrices (ShapeError otherwise). Negative n needs a matrix inverse, which lazyfuse does not
/// have yet: Error.
Array matrix_power(const Array& a, std::int64_t n);

/// NumPy's linalg.norm: with no axes, the 2-norm of the flattened array. With one axis (or a vector): ord 1, 2,
/// inf, -inf, 0 or any p. With two axes: the Frobenius norm (ord nullopt or "fro"). keepdims as in reductions.
Array norm(const Array& a, std::optional<double> ord = std::nullopt, Axes axes = {}, bool keepdims = false);
/// The Frobenius norm for ord "fro"; any other string is an Error.
Array norm(const Array& a, const char* ord, Axes axes = {}, bool keepdims = false);
/// `norm(x, 1)`, `norm(x, 0)`: a number is an order, never the string overload's null pointer.
template <Scalar S> Array norm(const Array& a, S ord, Axes axes = {}, bool keepdims = false) {
  return norm(a, std::optional<double>(double(ord)), std::move(axes), keepdims);
}

} // namespace lazyfuse::linalg
