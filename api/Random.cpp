// Random numbers (random.hpp): generators hand out counters; each draw is a Random graph node (graph/Random.h),
// with location and scale applied by ordinary elementwise nodes, which fuse with it.
#include <lazyfuse/creation.hpp>
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>
#include <lazyfuse/indexing.hpp>
#include <lazyfuse/random.hpp>
#include <lazyfuse/sorting.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"

#include <algorithm>
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

// ---- permutations and sampling ----

namespace {

// Keys whose stable argsort is a uniformly random order: every 64-bit pattern equally likely.
Array order_keys(Generator& g, const Shape& shape) {
  return g.integers(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), shape,
                    DType::Int64, true);
}

std::int64_t sample_size(const Shape& size) {
  for (auto d : size)
    if (d < 0) throw ShapeError("choice: negative dimensions are not allowed: size " + graph::format_shape(size));
  return graph::shape_size(size);
}

// p read and checked as NumPy's Generator.choice checks it: the values as float64.
std::vector<double> checked_probabilities(const Array& p, std::int64_t a) {
  if (p.ndim() != 1) throw ValueError("choice: p must be 1-dimensional, got shape " + graph::format_shape(p.shape()));
  if (p.size() != a)
    throw ValueError("choice: a and p must have the same size, got " + std::to_string(a) + " and " +
                     std::to_string(p.size()));
  if (!is_floating(p.dtype()) && !is_integer(p.dtype()) && p.dtype() != DType::Bool)
    throw DTypeError("choice: p must be real, not " + std::string(dtype_name(p.dtype())));
  const HostArray<double> host = p.astype(DType::Float64).get<double>();
  std::vector<double> v(host.begin(), host.end());
  // NumPy's tolerance: sqrt of float64's epsilon, or of p's own type's where that is coarser.
  double atol = std::sqrt(std::numeric_limits<double>::epsilon());
  if (p.dtype() == DType::Float32) atol = std::max(atol, std::sqrt(double(std::numeric_limits<float>::epsilon())));
  if (p.dtype() == DType::Float16 || p.dtype() == DType::BFloat16) atol = std::max(atol, std::sqrt(0.0078125));
  double total = 0, carry = 0; // Kahan, as NumPy sums p for this check
  for (double x : v) {
    if (std::isnan(x)) throw ValueError("choice: probabilities contain NaN");
    if (x < 0) throw ValueError("choice: probabilities are not non-negative");
    const double y = x - carry, t = total + y;
    carry = (t - total) - y;
    total = t;
  }
  if (!(std::abs(total - 1) <= atol))
    throw ValueError("choice: probabilities do not sum to 1 (they sum to " + number(total) + ")");
  return v;
}

} // namespace

Array Generator::permutation(std::int64_t n) {
  require(n >= 0, "permutation", "n must be non-negative, got " + std::to_string(n));
  return argsort(order_keys(*this, {n}));
}

Array Generator::permutation(const Array& x, int axis) {
  require(x.ndim() > 0, "permutation", "x must be an integer or at least 1-dimensional");
  const int ax = graph::normalize_axis("permutation", axis, x.ndim());
  return lazyfuse::take(x, permutation(x.shape()[std::size_t(ax)]), ax);
}

Array Generator::permuted(const Array& x, std::optional<int> axis) {
  if (!axis) {
    const Array flat = x.reshape({x.size()});
    return lazyfuse::take(flat, argsort(order_keys(*this, {x.size()}))).reshape(x.shape());
  }
  const int ax = graph::normalize_axis("permuted", *axis, x.ndim());
  return take_along_axis(x, argsort(order_keys(*this, x.shape()), ax), ax);
}

Array Generator::choice(std::int64_t a, Shape size, bool replace, const std::optional<Array>& p) {
  const std::int64_t k = sample_size(size);
  require(a >= 0, "choice", "a must be a positive integer unless no samples are taken, got " + std::to_string(a));
  require(a > 0 || k == 0, "choice", "a cannot be empty unless no samples are taken");
  std::vector<double> probabilities;
  if (p) probabilities = checked_probabilities(*p, a);
  if (!replace) {
    require(k <= a, "choice",
            "cannot take a larger sample than the population when replace is false (sample " + std::to_string(k) +
                ", population " + std::to_string(a) + ")");
    if (p) {
      const auto nonzero = std::count_if(probabilities.begin(), probabilities.end(), [](double x) { return x > 0; });
      require(nonzero >= k, "choice", "fewer non-zero entries in p than the sample's size");
    }
  }
  if (k == 0) return zeros(size, DType::Int64);
  if (replace && !p) return integers(0, a, size);
  if (replace) {
    // NumPy's method: the cumulative sum, normalized by its last entry, searched for uniform numbers.
    std::vector<double> cdf(probabilities.size());
    double running = 0;
    for (std::size_t i = 0; i < cdf.size(); ++i) cdf[i] = running += probabilities[i];
    for (double& c : cdf) c /= running;
    return searchsorted(asarray(cdf), random(size), "right");
  }
  if (!p) return permutation(a)(slice(0, k)).reshape(size);
  // A race of exponential clocks E_i / p_i: the k first to ring are a weighted sample without replacement, in the
  // order a sequential draw would take them. p_i = 0 never rings (its key is +inf; enough others ring first).
  const Array weights = asarray(probabilities);
  const Array keys = where(weights > 0.0, standard_exponential({a}) / weights, std::numeric_limits<double>::infinity());
  return argsort(keys)(slice(0, k)).reshape(size);
}

Array Generator::choice(const Array& a, Shape size, bool replace, const std::optional<Array>& p, int axis) {
  require(a.ndim() > 0, "choice", "a must be 1-dimensional or an integer");
  const int ax = graph::normalize_axis("choice", axis, a.ndim());
  return lazyfuse::take(a, choice(a.shape()[std::size_t(ax)], std::move(size), replace, p), ax);
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
