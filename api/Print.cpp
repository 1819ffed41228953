// Printing arrays as NumPy does (array.hpp: operator<< and to_string).
#include <lazyfuse/array.hpp>

#include "graph/DTypeVisit.h"
#include "graph/Node.h"

#include <cmath>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace lazyfuse {

namespace {

std::string format_element(bool v) {
  return v ? "True" : "False";
}
// A float with `digits` significant digits, NumPy-style ("1." for a whole number).
std::string format_float(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::ostringstream s;
  s << std::setprecision(digits) << v;
  std::string t = s.str();
  if (t.find_first_of(".e") == std::string::npos) t += ".";
  return t;
}
// A half value with the fewest digits that read back as the same value (NumPy's repr of float16): positional
// ("100.", "0.1") from 1e-4 up to 1e3 (NumPy's bound for float16, whose values have 3 to 4 digits), else scientific
// with NumPy's mantissa ("6.e-08", "6.104e-05", "2.048e+03").
template <class H> std::string format_half(H v) {
  const float x = float(v);
  if (std::isnan(x) || std::isinf(x) || x == 0) return format_float(x, 1);
  int digits = 1;
  std::string shortest;
  for (; digits < 9; ++digits) {
    std::ostringstream s;
    s << std::setprecision(digits - 1) << std::scientific << x;
    shortest = s.str();
    if (H(std::stod(shortest)).bits == v.bits) break;
  }
  std::ostringstream s;
  if (std::fabs(x) < 1e-4f || std::fabs(x) >= 1e3f) {
    s << std::setprecision(digits - 1) << std::scientific << x;
    std::string t = s.str();
    if (digits == 1) t.insert(t.find('e'), ".");
    return t;
  }
  const int exponent = std::stoi(shortest.substr(shortest.find('e') + 1)); // of the rounded digits
  s << std::setprecision(std::max(0, digits - 1 - exponent)) << std::fixed << x;
  std::string t = s.str();
  if (t.find('.') == std::string::npos) t += ".";
  return t;
}
std::string format_element(float16 v) {
  return format_half(v);
}
std::string format_element(bfloat16 v) {
  return format_half(v);
}
template <class T> std::string format_element(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return format_float(v, 8);
  } else if constexpr (detail::is_std_complex<T>) {
    // NumPy's "1.+2.j": the imaginary part with its sign (NaN's as "+nanj").
    const bool negative = std::signbit(v.imag()) && !std::isnan(v.imag());
    return format_float(v.real(), 8) + (negative ? "-" : "+") + format_float(std::fabs(v.imag()), 8) + "j";
  } else {
    return std::to_string(v);
  }
}

// NumPy's layout: elements padded to one width (floats aligned on the decimal point), rows separated by one
// newline per remaining dimension, and more than 1000 elements summarized with "..." (3 at each edge).
template <class T> void print_array(std::ostream& os, const HostArray<T>& h) {
  const auto& shape = h.shape();
  std::vector<std::string> text(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) text[i] = format_element(h[i]);
  if (shape.empty()) {
    os << text[0];
    return;
  }
  std::size_t width = 0, int_width = 0, frac_width = 0;
  bool decimal_align = std::is_floating_point_v<T>;
  for (auto& t : text) {
    width = std::max(width, t.size());
    if (t.find('e') != std::string::npos) decimal_align = false;
    auto dot = t.find('.');
    if (dot != std::string::npos) {
      int_width = std::max(int_width, dot);
      frac_width = std::max(frac_width, t.size() - dot - 1);
    }
  }
  if (decimal_align && int_width + frac_width > 0) {
    width = std::max(width, int_width + 1 + frac_width);
    for (auto& t : text) {
      auto dot = t.find('.');
      if (dot == std::string::npos) continue; // nan, inf: right-aligned below
      t = std::string(int_width - dot, ' ') + t + std::string(frac_width - (t.size() - dot - 1), ' ');
    }
  }
  for (auto& t : text)
    if (t.size() < width) t = std::string(width - t.size(), ' ') + t;

  const bool summarize = h.size() > 1000;
  constexpr std::int64_t edge = 3;
  const auto strides = graph::contiguous_strides(shape);
  const std::size_t ndim = shape.size();
  std::function<void(std::size_t, std::int64_t)> rec = [&](std::size_t axis, std::int64_t base) {
    os << '[';
    const std::int64_t n = shape[axis];
    const std::string separator =
        axis + 1 == ndim ? ", " : "," + std::string(ndim - axis - 1, '\n') + std::string(axis + 1, ' ');
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * edge && i == edge) {
        os << "..." << separator;
        i = n - edge;
      }
      if (axis + 1 == ndim)
        os << text[std::size_t(base + i)];
      else
        rec(axis + 1, base + i * strides[axis]);
      if (i + 1 < n) os << separator;
    }
    os << ']';
  };
  rec(0, 0);
}
} // namespace

std::string to_string(const Array& a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Array& a) {
  if (!a.valid()) return os << "Array(<empty>)";
  graph::visit_dtype(a.dtype(), [&]<class T>() { print_array(os, a.get<T>()); });
  return os;
}

} // namespace lazyfuse
