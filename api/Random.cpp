// Random numbers (random.hpp): generators hand out counters; each draw is a Random graph node (graph/Random.h),
// with location and scale applied by ordinary elementwise nodes, which fuse with it.
#include <lazyfuse/error.hpp>
#include <lazyfuse/random.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <random>
#include <string>

namespace lazyfuse::random {

using graph::NodePtr;
using graph::RandomDist;

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Words per element of a float distribution (every float distribution takes one word a float32 element).
int float_width(DType t) {
  return graph::random_width(RandomDist::Random, t, 0);
}

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

void require_float_type(DType t, const char* op) {
  if (t != DType::Float32 && t != DType::Float64)
    throw DTypeError(std::string(op) + ": type must be float32 or float64, not " + std::string(dtype_name(t)));
}

void require(bool ok, const char* op, const std::string& what) {
  if (!ok) throw ValueError(std::string(op) + ": " + what);
}

// `a op fill(value)` in a's type: location and scale as kernel arguments of the draw's kernel.
NodePtr with_scalar(graph::BinaryOp op, const NodePtr& a, double value) {
  return graph::make_binary(op, graph::make_fill_like(a->shape, a->dtype, value), a);
}
// a * scale + shift (uniform and normal from their standard draws).
NodePtr scaled_shifted(const NodePtr& a, double scale, double shift) {
  return with_scalar(graph::BinaryOp::Add, with_scalar(graph::BinaryOp::Multiply, a, scale), shift);
}

} // namespace

Generator::Generator(std::uint64_t seed) {
  state_.key = splitmix64(seed);
}

std::uint64_t Generator::checked_seed(std::int64_t seed) {
  if (seed < 0)
    throw ValueError("Generator: seed must be non-negative, got " + std::to_string(seed) +
                     " (a seed is an integer in [0, 2^64))");
  return std::uint64_t(seed);
}

std::vector<Generator> Generator::spawn(std::size_t n) {
  std::vector<Generator> children;
  children.reserve(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint64_t number = state_.spawned + j + 1;
    children.emplace_back(GeneratorState{splitmix64(state_.key ^ splitmix64(number * 0x9E3779B97F4A7C15ull)), 0, 0});
  }
  state_.spawned += n;
  return children;
}

std::uint64_t Generator::take(const Shape& shape, int width, const char* op) {
  for (auto d : shape)
    if (d < 0)
      throw ShapeError(std::string(op) + ": negative dimensions are not allowed: shape " + graph::format_shape(shape));
  // Whole Philox blocks of 4 / width elements each (graph/RandomMath.inc's layout).
  const std::uint64_t lanes = std::uint64_t(4 / width);
  const std::uint64_t first = state_.counter;
  state_.counter += (std::uint64_t(graph::shape_size(shape)) + lanes - 1) / lanes;
  return first;
}

// ---- distributions ----

namespace {
Array draw(std::uint64_t key, std::uint64_t counter, const Shape& shape, DType t, RandomDist d, double p0 = 0,
           double p1 = 0, std::uint64_t range = 0) {
  return detail::wrap_node(graph::make_random(shape, t, d, key, counter, p0, p1, range));
}
} // namespace

Array Generator::random(Shape shape, DType type) {
  require_float_type(type, "random");
  const auto c = take(shape, float_width(type), "random");
  return draw(state_.key, c, shape, type, RandomDist::Random);
}

Array Generator::uniform(double low, double high, Shape shape, DType type) {
  require_float_type(type, "uniform");
  require(std::isfinite(low), "uniform", "low must be finite, got " + number(low));
  require(std::isfinite(high), "uniform", "high must be finite, got " + number(high));
  require(low <= high, "uniform", "high must be at least low, got low " + number(low) + ", high " + number(high));
  require(std::isfinite(high - low), "uniform",
          "high - low overflows, got low " + number(low) + ", high " + number(high));
  const auto c = take(shape, float_width(type), "uniform");
  NodePtr u = graph::make_random(shape, type, RandomDist::Random, state_.key, c, 0, 0, 0);
  return detail::wrap_node(scaled_shifted(u, high - low, low));
}

Array Generator::integers(std::int64_t low, std::optional<std::int64_t> high, Shape shape, DType type, bool endpoint) {
  if (!high) {
    high = low;
    low = 0;
  }
  if (!is_integer(type))
    throw DTypeError("integers: type must be an integer type, not " + std::string(dtype_name(type)));
  if (endpoint)
    require(*high >= low, "integers",
            "high must be at least low with endpoint, got low " + std::to_string(low) + ", high " +
                std::to_string(*high));
  else
    require(*high > low, "integers",
            "high must be above low (high <= low), got low " + std::to_string(low) + ", high " + std::to_string(*high));
  const std::int64_t last = endpoint ? *high : *high - 1;
  // is_integer(type) holds: only the integer types' bounds are looked at.
  graph::visit_dtype(type, [&]<class T>() {
    if constexpr (std::is_integral_v<T>) {
      using L = std::numeric_limits<T>;
      const bool fits =
          low >= std::int64_t(L::min()) && (std::is_same_v<T, std::uint64_t> || last <= std::int64_t(L::max()));
      require(fits, "integers",
              "low " + std::to_string(low) + " and high " + std::to_string(*high) + " do not fit " +
                  std::string(dtype_name(type)));
    }
  });
  const std::uint64_t range = std::uint64_t(last) - std::uint64_t(low);
  const auto c = take(shape, graph::random_width(RandomDist::Integers, DType::UInt64, range), "integers");
  NodePtr r = graph::make_random(shape, DType::UInt64, RandomDist::Integers, state_.key, c, 0, 0, range);
  if (low != 0) r = graph::make_binary(graph::BinaryOp::Add, r, graph::make_fill(shape, DType::UInt64, 0, low));
  return detail::wrap_node(graph::make_cast(r, type));
}

Array Generator::standard_normal(Shape shape, DType type) {
  require_float_type(type, "standard_normal");
  const auto c = take(shape, float_width(type), "standard_normal");
  return draw(state_.key, c, shape, type, RandomDist::StandardNormal);
}

Array Generator::normal(double loc, double scale, Shape shape, DType type) {
  require_float_type(type, "normal");
  require(std::isfinite(loc), "normal", "loc must be finite, got " + number(loc));
  require(std::isfinite(scale) && scale >= 0, "normal", "scale must be finite and >= 0, got " + number(scale));
  const auto c = take(shape, float_width(type), "normal");
  NodePtr z = graph::make_random(shape, type, RandomDist::StandardNormal, state_.key, c, 0, 0, 0);
  return detail::wrap_node(scaled_shifted(z, scale, loc));
}

Array Generator::lognormal(double mean, double sigma, Shape shape, DType type) {
  require_float_type(type, "lognormal");
  require(std::isfinite(mean), "lognormal", "mean must be finite, got " + number(mean));
  require(std::isfinite(sigma) && sigma >= 0, "lognormal", "sigma must be finite and >= 0, got " + number(sigma));
  const auto c = take(shape, float_width(type), "lognormal");
  return draw(state_.key, c, shape, type, RandomDist::Lognormal, mean, sigma);
}

Array Generator::standard_exponential(Shape shape, DType type) {
  require_float_type(type, "standard_exponential");
  const auto c = take(shape, float_width(type), "standard_exponential");
  return draw(state_.key, c, shape, type, RandomDist::StandardExponential);
}

Array Generator::exponential(double scale, Shape shape, DType type) {
  require_float_type(type, "exponential");
  require(std::isfinite(scale) && scale >= 0, "exponential", "scale must be finite and >= 0, got " + number(scale));
  const auto c = take(shape, float_width(type), "exponential");
  NodePtr e = graph::make_random(shape, type, RandomDist::StandardExponential, state_.key, c, 0, 0, 0);
  return detail::wrap_node(with_scalar(graph::BinaryOp::Multiply, e, scale));
}

Array Generator::standard_gamma(double k, Shape shape, DType type) {
  require_float_type(type, "standard_gamma");
  require(std::isfinite(k) && k >= 0, "standard_gamma", "shape must be finite and >= 0, got " + number(k));
  const auto c = take(shape, float_width(type), "standard_gamma");
  return draw(state_.key, c, shape, type, RandomDist::StandardGamma, k);
}

Array Generator::gamma(double k, double scale, Shape shape, DType type) {
  require_float_type(type, "gamma");
  require(std::isfinite(k) && k >= 0, "gamma", "shape must be finite and >= 0, got " + number(k));
  require(std::isfinite(scale) && scale >= 0, "gamma", "scale must be finite and >= 0, got " + number(scale));
  const auto c = take(shape, float_width(type), "gamma");
  NodePtr g = graph::make_random(shape, type, RandomDist::StandardGamma, state_.key, c, k, 0, 0);
  return detail::wrap_node(with_scalar(graph::BinaryOp::Multiply, g, scale));
}

Array Generator::beta(double a, double b, Shape shape, DType type) {
  require_float_type(type, "beta");
  require(std::isfinite(a) && a > 0, "beta", "a must be finite and > 0, got " + number(a));
  require(std::isfinite(b) && b > 0, "beta", "b must be finite and > 0, got " + number(b));
  const auto c = take(shape, float_width(type), "beta");
  return draw(state_.key, c, shape, type, RandomDist::Beta, a, b);
}

Array Generator::chisquare(double df, Shape shape, DType type) {
  require_float_type(type, "chisquare");
  require(std::isfinite(df) && df > 0, "chisquare", "df must be finite and > 0, got " + number(df));
  const auto c = take(shape, float_width(type), "chisquare");
  NodePtr g = graph::make_random(shape, type, RandomDist::StandardGamma, state_.key, c, df / 2, 0, 0);
  return detail::wrap_node(with_scalar(graph::BinaryOp::Multiply, g, 2.0));
}

Array Generator::standard_t(double df, Shape shape, DType type) {
  require_float_type(type, "standard_t");
  require(std::isfinite(df) && df > 0, "standard_t", "df must be finite and > 0, got " + number(df));
  const auto c = take(shape, float_width(type), "standard_t");
  return draw(state_.key, c, shape, type, RandomDist::StandardT, df);
}

Array Generator::poisson(double lam, Shape shape) {
  // NumPy's bound is about 9.2e18; the PTRS loop's cost does not grow with lam, but float64 cannot tell the
  // counts apart near there, so the bound is lower.
  require(lam >= 0 && lam <= 1e10, "poisson", "lam must be in [0, 1e10], got " + number(lam));
  const auto c = take(shape, graph::random_width(RandomDist::Poisson, DType::Int64, 0), "poisson");
  return draw(state_.key, c, shape, DType::Int64, RandomDist::Poisson, lam);
}

Array Generator::binomial(std::int64_t n, double p, Shape shape) {
  require(n >= 0, "binomial", "n must be >= 0, got " + std::to_string(n));
  require(n <= (std::int64_t(1) << 53), "binomial", "n must be at most 2^53, got " + std::to_string(n));
  require(p >= 0 && p <= 1, "binomial", "p must be in [0, 1], got " + number(p));
  const auto c = take(shape, graph::random_width(RandomDist::Binomial, DType::Int64, 0), "binomial");
  return draw(state_.key, c, shape, DType::Int64, RandomDist::Binomial, double(n), p);
}

// ---- the default generator ----

namespace {

std::mutex& default_mutex() {
  static std::mutex m;
  return m;
}

std::uint64_t seed_from_setting() {
  const std::string text = config::snapshot().seed;
  if (text.empty()) {
    std::random_device rd;
    return (std::uint64_t(rd()) << 32) ^ std::uint64_t(rd());
  }
  std::uint64_t v = 0;
  bool ok = text.size() <= 20;
  for (char ch : text) {
    if (ch < '0' || ch > '9') {
      ok = false;
      break;
    }
    const std::uint64_t d = std::uint64_t(ch - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) {
      ok = false;
      break;
    }
    v = v * 10 + d;
  }
  if (!ok)
    throw ValueError("LAZYFUSE_SEED: \"" + text + "\" is not a seed; a seed is an integer in [0, 2^64) (or empty: " +
                     "from the operating system's entropy)");
  return v;
}

Generator& default_locked() {
  static Generator* g = new Generator(seed_from_setting()); // never destroyed: draws may run during static teardown
  return *g;
}

} // namespace

Generator& default_generator() {
  std::lock_guard lock(default_mutex());
  return default_locked();
}

void seed(std::uint64_t s) {
  std::lock_guard lock(default_mutex());
  default_locked() = Generator(s);
}

Array random(Shape shape, DType type) {
  std::lock_guard lock(default_mutex());
  return default_locked().random(std::move(shape), type);
}
Array uniform(double low, double high, Shape shape, DType type) {
  std::lock_guard lock(default_mutex());
  return default_locked().uniform(low, high, std::move(shape), type);
}
Array integers(std::int64_t low, std::optional<std::int64_t> high, Shape shape, DType type, bool endpoint) {
  std::lock_guard lock(default_mutex());
  return default_locked().integers(low, high, std::move(shape), type, endpoint);
}
Array standard_normal(Shape shape, DType type) {
  std::lock_guard lock(default_mutex());
  return default_locked().standard_normal(std::move(shape), type);
}
Array normal(double loc, double scale, Shape shape, DType type) {
  std::lock_guard lock(default_mutex());
  return default_locked().normal(loc, scale, std::move(shape), type);
}

} // namespace lazyfuse::random
