#include "graph/Random.h"

#include "graph/Assert.h"

namespace lazyfuse::graph {

std::string_view name_of(RandomDist d) {
  switch (d) {
  case RandomDist::Random: return "random";
  case RandomDist::StandardNormal: return "standard_normal";
  case RandomDist::StandardExponential: return "standard_exponential";
  case RandomDist::Lognormal: return "lognormal";
  case RandomDist::StandardGamma: return "standard_gamma";
  case RandomDist::Beta: return "beta";
  case RandomDist::StandardT: return "standard_t";
  case RandomDist::Integers: return "integers";
  case RandomDist::Poisson: return "poisson";
  case RandomDist::Binomial: return "binomial";
  }
  LAZYFUSE_ASSERT(false, "unknown random distribution");
  return "?";
}

int real_params(RandomDist d) {
  switch (d) {
  case RandomDist::Lognormal:
  case RandomDist::Beta:
  case RandomDist::Binomial: return 2;
  case RandomDist::StandardGamma:
  case RandomDist::StandardT:
  case RandomDist::Poisson: return 1;
  default: return 0;
  }
}

bool is_float_dist(RandomDist d) {
  return d != RandomDist::Integers && d != RandomDist::Poisson && d != RandomDist::Binomial;
}

DType integer_result(RandomDist d) {
  return d == RandomDist::Integers ? DType::UInt64 : DType::Int64;
}

std::string random_function(RandomDist d, DType t) {
  std::string f = "lf_rand_" + std::string(name_of(d));
  if (is_float_dist(d)) f += t == DType::Float32 ? "_f32" : "_f64";
  return f;
}

int random_width(RandomDist d, DType t, std::uint64_t range) {
  switch (d) {
  case RandomDist::Integers: return range > 0xFFFFFFFFull ? 2 : 1;
  case RandomDist::Poisson:
  case RandomDist::Binomial: return 2;
  default: return t == DType::Float32 ? 1 : 2;
  }
}

bool has_group_function(RandomDist d) {
  return d == RandomDist::Random || d == RandomDist::StandardNormal || d == RandomDist::StandardExponential ||
         d == RandomDist::Lognormal;
}

} // namespace lazyfuse::graph
