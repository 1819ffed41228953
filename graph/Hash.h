// A small deterministic hash combiner: the same inputs give the same value in every process and run.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace lazyfuse::graph {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// The bit pattern of `d` (so that -0.0 and NaN payloads hash and compare as they are).
inline std::uint64_t bits_of(double d) {
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

struct Hasher {
  std::uint64_t h = 0x6a09e667f3bcc909ULL;
  Hasher& add(std::uint64_t v) {
    h = mix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
    return *this;
  }
  Hasher& add_double(double d) { return add(bits_of(d)); }
  Hasher& add_string(std::string_view s) {
    add(s.size());
    for (unsigned char c : s) add(c);
    return *this;
  }
};

/// Cheaper, for hot paths whose hash only picks a bucket (the table compares candidates in full): one multiply per
/// word, one full mix at the end.
struct FastHasher {
  std::uint64_t h = 0x6a09e667f3bcc909ULL;
  void add(std::uint64_t v) { h = (h ^ v) * 0x100000001b3ULL; }
  void add_double(double d) { add(bits_of(d)); }
  std::uint64_t value() const { return mix64(h); }
};

} // namespace lazyfuse::graph
