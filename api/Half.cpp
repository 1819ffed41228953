// The host half types (half.hpp): their conversions are the op semantics' (graph/OpMath.inc), so a value built on
// the host has the bits a kernel would give it.
#include <lazyfuse/half.hpp>

#include "graph/HostOps.h"

#include <cstdlib>
#include <ostream>
#include <sstream>

namespace lazyfuse {

float16::float16(float value) : bits(lazyfuse_opmath::lf_f32_to_f16(value).bits) {}
float16::float16(double value) : bits(lazyfuse_opmath::lf_f64_to_f16(value).bits) {}
float16::operator float() const {
  return lazyfuse_opmath::lf_f16_to_f32(lazyfuse_opmath::lf_f16_from_bits(bits));
}

bfloat16::bfloat16(float value) : bits(lazyfuse_opmath::lf_f32_to_bf16(value).bits) {}
bfloat16::bfloat16(double value) : bits(lazyfuse_opmath::lf_f64_to_bf16(value).bits) {}
bfloat16::operator float() const {
  return lazyfuse_opmath::lf_bf16_to_f32(lazyfuse_opmath::lf_bf16_from_bits(bits));
}

namespace {
template <class H> std::ostream& print_half(std::ostream& os, H h) {
  const float x = float(h);
  std::ostringstream s;
  s.flags(os.flags());
  // The fewest digits that read back as the same value.
  for (int digits = 1; digits < 9; ++digits) {
    s.str("");
    s.precision(digits);
    s << x;
    if (x != x || H(std::strtod(s.str().c_str(), nullptr)).bits == h.bits) break;
  }
  return os << s.str();
}
} // namespace

std::ostream& operator<<(std::ostream& os, float16 h) {
  return print_half(os, h);
}
std::ostream& operator<<(std::ostream& os, bfloat16 h) {
  return print_half(os, h);
}

} // namespace lazyfuse
