#include "runtime/CpuRandom.h"

#include "graph/Assert.h"
#include "graph/HostOps.h"

namespace lazyfuse::runtime {

namespace {

template <class T, class F> void fill(const RandomColumn& c, void* out, int len, F f) {
  T* o = static_cast<T*>(out);
  for (int e = 0; e < len; ++e) o[e] = f(c.key[e], c.counter[e] + std::uint64_t(c.index[e]));
}

} // namespace

void random_column(const RandomColumn& c, void* out, int len) {
  namespace m = lazyfuse_opmath;
  using graph::RandomDist;
  const bool f32 = c.type == DType::Float32;
  LAZYFUSE_ASSERT(!graph::is_float_dist(c.dist) || f32 || c.type == DType::Float64,
                  "a float distribution of a type other than float32 and float64");
// The float distributions in both widths, by the function names of graph/RandomMath.inc.
#define LAZYFUSE_RANDOM_FLOAT(Enum, name, ...)                                                                         \
  case RandomDist::Enum:                                                                                               \
    if (f32)                                                                                                           \
      fill<float>(c, out, len,                                                                                         \
                  [&](std::uint64_t k, std::uint64_t n) { return m::lf_rand_##name##_f32(k, n __VA_ARGS__); });        \
    else                                                                                                               \
      fill<double>(c, out, len,                                                                                        \
                   [&](std::uint64_t k, std::uint64_t n) { return m::lf_rand_##name##_f64(k, n __VA_ARGS__); });       \
    return;
  switch (c.dist) {
    LAZYFUSE_RANDOM_FLOAT(Random, random)
    LAZYFUSE_RANDOM_FLOAT(StandardNormal, standard_normal)
    LAZYFUSE_RANDOM_FLOAT(StandardExponential, standard_exponential)
    LAZYFUSE_RANDOM_FLOAT(Lognormal, lognormal, , c.p0, c.p1)
    LAZYFUSE_RANDOM_FLOAT(StandardGamma, standard_gamma, , c.p0)
    LAZYFUSE_RANDOM_FLOAT(Beta, beta, , c.p0, c.p1)
    LAZYFUSE_RANDOM_FLOAT(StandardT, standard_t, , c.p0)
  case RandomDist::Integers:
    fill<std::uint64_t>(c, out, len,
                        [&](std::uint64_t k, std::uint64_t n) { return m::lf_rand_integers(k, n, c.range); });
    return;
  case RandomDist::Poisson:
    fill<std::int64_t>(c, out, len, [&](std::uint64_t k, std::uint64_t n) { return m::lf_rand_poisson(k, n, c.p0); });
    return;
  case RandomDist::Binomial:
    fill<std::int64_t>(c, out, len,
                       [&](std::uint64_t k, std::uint64_t n) { return m::lf_rand_binomial(k, n, c.p0, c.p1); });
    return;
  }
#undef LAZYFUSE_RANDOM_FLOAT
  LAZYFUSE_ASSERT(false, "unknown random distribution");
}

} // namespace lazyfuse::runtime
