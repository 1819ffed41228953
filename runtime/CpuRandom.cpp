#include "runtime/CpuRandom.h"

#include "graph/Assert.h"
#include "graph/HostOps.h"

namespace lazyfuse::runtime {

namespace {

template <class T, class F> void fill(const RandomColumn& c, void* out, int len, F f) {
  T* o = static_cast<T*>(out);
  for (int e = 0; e < len; ++e) o[e] = f(c.key[e], c.counter[e], std::uint64_t(c.index[e]));
}

// Elements e .. e + 3 are indices 4m .. 4m + 3 of one draw.
bool is_group(const RandomColumn& c, int e) {
  const std::int64_t first = c.index[e];
  if (first % 4 != 0) return false;
  for (int k = 1; k < 4; ++k)
    if (c.index[e + k] != first + k || c.key[e + k] != c.key[e] || c.counter[e + k] != c.counter[e]) return false;
  return true;
}

// As fill, with `group` computing the four elements of a group at once.
template <class T, class F, class G> void fill_grouped(const RandomColumn& c, void* out, int len, F f, G group) {
  T* o = static_cast<T*>(out);
  int e = 0;
  while (e < len) {
    if (e + 4 <= len && is_group(c, e)) {
      group(c.key[e], c.counter[e], std::uint64_t(c.index[e]), o + e);
      e += 4;
    } else {
      o[e] = f(c.key[e], c.counter[e], std::uint64_t(c.index[e]));
      ++e;
    }
  }
}

} // namespace

void random_column(const RandomColumn& c, void* out, int len) {
  namespace m = lazyfuse_opmath;
  using graph::RandomDist;
  const bool f32 = c.type == DType::Float32;
  LAZYFUSE_ASSERT(!graph::is_float_dist(c.dist) || f32 || c.type == DType::Float64,
                  "a float distribution of a type other than float32 and float64");
// The float distributions in both widths, by the function names of graph/RandomMath.inc; GROUPED: with the _x4
// function for whole groups.
#define LAZYFUSE_RANDOM_FLOAT(Enum, name, ...)                                                                         \
  case RandomDist::Enum:                                                                                               \
    if (f32)                                                                                                           \
      fill<float>(c, out, len, [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {                                \
        return m::lf_rand_##name##_f32(k, n, i __VA_ARGS__);                                                           \
      });                                                                                                              \
    else                                                                                                               \
      fill<double>(c, out, len, [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {                               \
        return m::lf_rand_##name##_f64(k, n, i __VA_ARGS__);                                                           \
      });                                                                                                              \
    return;
#define LAZYFUSE_RANDOM_FLOAT_GROUPED(Enum, name, ...)                                                                 \
  case RandomDist::Enum:                                                                                               \
    if (f32)                                                                                                           \
      fill_grouped<float>(                                                                                             \
          c, out, len,                                                                                                 \
          [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {                                                     \
            return m::lf_rand_##name##_f32(k, n, i __VA_ARGS__);                                                       \
          },                                                                                                           \
          [&](std::uint64_t k, std::uint64_t n, std::uint64_t i, float* o) {                                           \
            m::lf_rand_##name##_f32_x4(k, n, i __VA_ARGS__, o);                                                        \
          });                                                                                                          \
    else                                                                                                               \
      fill_grouped<double>(                                                                                            \
          c, out, len,                                                                                                 \
          [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {                                                     \
            return m::lf_rand_##name##_f64(k, n, i __VA_ARGS__);                                                       \
          },                                                                                                           \
          [&](std::uint64_t k, std::uint64_t n, std::uint64_t i, double* o) {                                          \
            m::lf_rand_##name##_f64_x4(k, n, i __VA_ARGS__, o);                                                        \
          });                                                                                                          \
    return;
  switch (c.dist) {
    LAZYFUSE_RANDOM_FLOAT_GROUPED(Random, random)
    LAZYFUSE_RANDOM_FLOAT_GROUPED(StandardNormal, standard_normal)
    LAZYFUSE_RANDOM_FLOAT_GROUPED(StandardExponential, standard_exponential)
    LAZYFUSE_RANDOM_FLOAT_GROUPED(Lognormal, lognormal, , c.p0, c.p1)
    LAZYFUSE_RANDOM_FLOAT(StandardGamma, standard_gamma, , c.p0)
    LAZYFUSE_RANDOM_FLOAT(Beta, beta, , c.p0, c.p1)
    LAZYFUSE_RANDOM_FLOAT(StandardT, standard_t, , c.p0)
  case RandomDist::Integers:
    fill<std::uint64_t>(c, out, len, [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {
      return m::lf_rand_integers(k, n, i, c.range);
    });
    return;
  case RandomDist::Poisson:
    fill<std::int64_t>(c, out, len, [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {
      return m::lf_rand_poisson(k, n, i, c.p0);
    });
    return;
  case RandomDist::Binomial:
    fill<std::int64_t>(c, out, len, [&](std::uint64_t k, std::uint64_t n, std::uint64_t i) {
      return m::lf_rand_binomial(k, n, i, c.p0, c.p1);
    });
    return;
  }
#undef LAZYFUSE_RANDOM_FLOAT
#undef LAZYFUSE_RANDOM_FLOAT_GROUPED
  LAZYFUSE_ASSERT(false, "unknown random distribution");
}

} // namespace lazyfuse::runtime
