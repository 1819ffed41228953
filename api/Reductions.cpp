// Reductions (reductions.hpp): the op table's, each one graph node, and those built from them and elementwise ops
// (mean, var, logsumexp, the NaN-ignoring ones, comparisons of whole arrays).
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/manipulation.hpp>
#include <lazyfuse/reductions.hpp>

#include "api/ApiAccess.h"
#include "api/Reductions.h"
#include "graph/Build.h"

#include <cmath>
#include <limits>

namespace lazyfuse {

using graph::ReduceOp;

namespace {

Array reduce(ReduceOp op, const Array& a, const Axes& axes, bool keepdims) {
  if (!a.valid()) [[unlikely]]
    detail::require_valid(a, graph::name_of(op).data());
  return detail::wrap_node(graph::make_reduce(op, detail::graph_node(a), axes.list, keepdims));
}

// Number of elements a reduction over `axes` combines.
std::int64_t reduced_count(const Array& a, const Axes& axes) {
  auto ax = graph::reduction_axes("reduction", axes.list, a.ndim());
  std::int64_t n = 1;
  for (auto d : ax) n *= a.shape()[std::size_t(d)];
  return n;
}

} // namespace

} // namespace lazyfuse

// The table's reductions, each one node (the input is cast to the reduction's input type there: any and all read
// bools). Defined by qualified name: such a definition compiles only where reductions.hpp declares the function
// with the same signature, so a row added to the table without its documented declaration fails to build.
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) LAZYFUSE_REDUCE_DEFINE_##kind(Enum, name)
#define LAZYFUSE_REDUCE_DEFINE_Combine(Enum, name)                                                                     \
  lazyfuse::Array lazyfuse::name(const Array& a, Axes axes, bool keepdims) {                                           \
    return reduce(graph::ReduceOp::Enum, a, axes, keepdims);                                                           \
  }
#define LAZYFUSE_REDUCE_DEFINE_Arg(Enum, name)                                                                         \
  lazyfuse::Array lazyfuse::name(const Array& a, std::optional<int> axis, bool keepdims) {                             \
    return reduce(graph::ReduceOp::Enum, a, axis ? Axes(*axis) : Axes(), keepdims);                                    \
  }
#include <lazyfuse/ops.def>
#undef LAZYFUSE_REDUCE_DEFINE_Combine
#undef LAZYFUSE_REDUCE_DEFINE_Arg

namespace lazyfuse {

Array amin(const Array& a, Axes axes, bool keepdims) {
  return min(a, std::move(axes), keepdims);
}
Array amax(const Array& a, Axes axes, bool keepdims) {
  return max(a, std::move(axes), keepdims);
}

Array count_nonzero(const Array& a, Axes axes, bool keepdims) {
  detail::require_valid(a, "count_nonzero");
  return sum(a.astype(DType::Bool), std::move(axes), keepdims);
}

Array mean(const Array& a, Axes axes, bool keepdims) {
  detail::require_valid(a, "mean");
  const DType t = detail::mean_type(a.dtype());
  const std::int64_t n = reduced_count(a, axes);
  // The division is the reduction kernel's epilogue. The mean of nothing is NaN, as in NumPy.
  const Array m = sum(a.astype(t), axes, keepdims) / (n > 0 ? double(n) : std::numeric_limits<double>::quiet_NaN());
  return m.astype(detail::mean_result_type(a.dtype()));
}

namespace {

// |d|^2: a complex deviation's squared magnitude (real), as NumPy's d * conj(d), re^2 + im^2; else d^2.
Array squared_magnitude(const Array& d) {
  return is_complex(d.dtype()) ? square(real(d)) + square(imag(d)) : square(d);
}

// The variance in the type it is computed in (mean_type; a complex input's parts' type).
Array variance(const Array& a, const Axes& axes, int ddof, bool keepdims) {
  const DType t = detail::mean_type(a.dtype());
  const Array x = a.astype(t);
  const std::int64_t n = reduced_count(a, axes);
  const Array m = mean(x, axes, true);
  // NumPy divides by max(n - ddof, 0): too few elements give inf (or nan for 0/0), with a warning we cannot give.
  const double denom = double(std::max<std::int64_t>(n - ddof, 0));
  return sum(squared_magnitude(x - m), axes, keepdims) / denom;
}

// var's or (root) std's result from a variance v in its compute type: a half input's is rounded once, after the
// square root, so that std of a float16 array whose variance exceeds float16's range is not inf.
Array moment_result(const Array& v, DType input, bool root) {
  const Array r = root ? sqrt(v) : v;
  return is_complex(input) ? r : r.astype(detail::mean_result_type(input));
}

} // namespace

Array var(const Array& a, Axes axes, int ddof, bool keepdims) {
  detail::require_valid(a, "var");
  return moment_result(variance(a, axes, ddof, keepdims), a.dtype(), false);
}

Array stddev(const Array& a, Axes axes, int ddof, bool keepdims) {
  detail::require_valid(a, "stddev");
  return moment_result(variance(a, axes, ddof, keepdims), a.dtype(), true);
}

// ---- NaN-ignoring reductions: NumPy's nansum ... nanstd. On bool and integers (no NaN) they are the plain ones. ----

namespace {
// NaN elements of a float array replaced by `value`.
Array nan_to(const Array& a, double value) {
  return where(isnan(a), value, a);
}
// The number of non-NaN elements reduced (int64).
Array non_nan_count(const Array& a, const Axes& axes, bool keepdims) {
  return sum(!isnan(a), axes, keepdims);
}
} // namespace

Array nansum(const Array& a, Axes axes, bool keepdims) {
  return sum(is_inexact(a.dtype()) ? nan_to(a, 0) : a, std::move(axes), keepdims);
}
Array nanprod(const Array& a, Axes axes, bool keepdims) {
  return prod(is_inexact(a.dtype()) ? nan_to(a, 1) : a, std::move(axes), keepdims);
}

Array nanmean(const Array& a, Axes axes, bool keepdims) {
  const DType t = a.dtype();
  if (!is_inexact(t)) return mean(a, std::move(axes), keepdims);
  // As mean: halves in float32. NumPy divides the sum by the int64 count (in float64) into the array's type; no
  // element gives 0 / 0 = NaN.
  const Array x = a.astype(detail::mean_type(t));
  return (nansum(x, axes, keepdims) / non_nan_count(x, axes, keepdims)).astype(detail::mean_result_type(t));
}

namespace {
// nanvar in its compute type (nanvar and nanstd round a half input's result once, as var and std).
Array nan_variance(const Array& a, const Axes& axes, int ddof, bool keepdims) {
  const DType t = a.dtype();
  // NumPy's two passes: squared deviations from the NaN-ignoring mean, NaN elements as 0, over count - ddof; NaN
  // where that is not positive (NumPy also warns). As var: halves in float32, a complex deviation's squared
  // magnitude (real).
  const Array x = a.astype(detail::mean_type(t));
  const Array m = nanmean(x, axes, true);
  const Array squares = squared_magnitude(nan_to(x - m, 0));
  const Array dof = non_nan_count(x, axes, keepdims) - std::int64_t(ddof);
  // (The int64 count would make the quotient float64: it stays in the squares' type.)
  const Array v = (sum(squares, axes, keepdims) / dof).astype(squares.dtype());
  return where(dof > 0, v, std::numeric_limits<double>::quiet_NaN());
}
} // namespace

Array nanvar(const Array& a, Axes axes, int ddof, bool keepdims) {
  if (!is_inexact(a.dtype())) return var(a, std::move(axes), ddof, keepdims);
  return moment_result(nan_variance(a, axes, ddof, keepdims), a.dtype(), false);
}

Array nanstd(const Array& a, Axes axes, int ddof, bool keepdims) {
  if (!is_inexact(a.dtype())) return stddev(a, std::move(axes), ddof, keepdims);
  return moment_result(nan_variance(a, axes, ddof, keepdims), a.dtype(), true);
}

Array logsumexp(const Array& a, Axes axes, bool keepdims) {
  detail::require_valid(a, "logsumexp");
  const Array x = a.astype(detail::mean_type(a.dtype()));
  const Array m = max(x, axes, true);
  // An infinite maximum would give inf - inf; shift by 0 there instead (NumPy/SciPy do the same).
  const Array shift = where(isfinite(m), m, 0.0);
  Array out = log(sum(exp(x - shift), axes, true)) + shift;
  if (!keepdims) {
    auto ax = graph::reduction_axes("logsumexp", axes.list, a.ndim());
    out = squeeze(out, std::vector<int>(ax.begin(), ax.end()));
  }
  return out;
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  detail::require_valid(a, "isclose", "operand a");
  detail::require_valid(b, "isclose", "operand b");
  const DType t = promote_types(detail::mean_type(a.dtype()), detail::mean_type(b.dtype()));
  const Array x = a.astype(t), y = b.astype(t);
  Array close = where(isfinite(x) && isfinite(y), abs(x - y) <= atol + rtol * abs(y), x == y);
  if (equal_nan) close = close || (isnan(x) && isnan(y));
  return close;
}

bool allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  detail::require_valid(a, "allclose", "operand a");
  detail::require_valid(b, "allclose", "operand b");
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

bool array_equal(const Array& a, const Array& b) {
  detail::require_valid(a, "array_equal", "operand a");
  detail::require_valid(b, "array_equal", "operand b");
  if (a.shape() != b.shape()) return false;
  return all(a == b).item<bool>();
}

} // namespace lazyfuse
