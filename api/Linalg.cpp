// NumPy's linalg functions (linalg.hpp), built from reductions and elementwise ops.
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/linalg.hpp>

#include "api/ApiAccess.h"
#include "api/Reductions.h"

#include <cmath>
#include <string>

namespace lazyfuse {

using detail::mean_type;

namespace linalg {

Array norm(const Array& a, std::optional<double> ord, Axes axes, bool keepdims) {
  detail::require_valid(a, "linalg.norm");
  const Array x = a.astype(mean_type(a.dtype()));
  const std::size_t naxes = axes.list ? axes.list->size() : std::size_t(a.ndim());
  if (naxes == 2 && axes.list) {
    if (ord && *ord != 2 && *ord != 1 && !std::isinf(*ord))
      throw Error("linalg.norm: invalid norm order " + std::to_string(*ord) + " for matrices");
    if (!ord) return sqrt(sum(x * x, axes, keepdims));
    throw Error("linalg.norm: matrix norms other than Frobenius ('fro') are not supported yet");
  }
  if (!axes.list && a.ndim() == 2 && ord)
    throw Error("linalg.norm: matrix norms other than Frobenius ('fro') are not supported yet; pass axes for a "
                "vector norm along one axis");
  if (!ord || *ord == 2) return sqrt(sum(x * x, axes, keepdims));
  const double p = *ord;
  if (p == 1) return sum(abs(x), axes, keepdims);
  if (std::isinf(p)) return p > 0 ? max(abs(x), axes, keepdims) : min(abs(x), axes, keepdims);
  if (p == 0) return sum((x != 0).astype(x.dtype()), axes, keepdims);
  return power(sum(power(abs(x), p), axes, keepdims), 1.0 / p);
}

Array norm(const Array& a, const char* ord, Axes axes, bool keepdims) {
  detail::require_valid(a, "linalg.norm");
  if (!ord) throw Error("linalg.norm: the norm order is a null pointer; pass \"fro\", a number, or nothing");
  if (std::string(ord) != "fro") throw Error(std::string("linalg.norm: unknown norm order '") + ord + "'");
  const Array x = a.astype(mean_type(a.dtype()));
  return sqrt(sum(x * x, axes, keepdims));
}

} // namespace linalg

} // namespace lazyfuse
