// Random numbers in NumPy's Generator style, generated inside the fused kernels that use them.
//
// A draw is an Array like any other: a graph node that computes element i from the generator's key and counter
// alone (Philox4x32-10), so it fuses with what consumes it, is never written to memory unless it is materialized
// itself, and gives the same bits on the CPU and the GPU, fused or not, lazy or eager. docs/semantics.md
// ("Random numbers") describes every distribution's algorithm and accuracy.
#pragma once

#include <lazyfuse/array.hpp>
#include <lazyfuse/error.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <vector>

namespace lazyfuse::random {

/// Everything a Generator's future draws depend on (NumPy's bit_generator.state): restore it with set_state to
/// repeat them.
struct GeneratorState {
  std::uint64_t key = 0;     ///< the Philox key (64 bits: key words 0-1)
  std::uint64_t counter = 0; ///< the next draw's first Philox block counter
  std::uint64_t spawned = 0; ///< children spawned so far (the next child's number)
  bool operator==(const GeneratorState&) const = default;
};

/// A source of random arrays. A Philox block (one counter) serves four elements of a float32 draw, two of a float64
/// one (docs/semantics.md, "Counters"): a draw of `size` elements takes the next ceil(size / 4) or ceil(size / 2)
/// counters, and element i of a draw starting at counter C is a function of (key, C, i) alone. Two draws never
/// overlap (until the 64-bit counter wraps), and evaluating one drawn Array twice gives the same numbers. A Generator
/// is a value: copies draw the same numbers. Not thread-safe: give each thread its own (spawn) or guard one.
class Generator {
public:
  /// Seeded with `seed`: the key is a 64-bit mix (splitmix64) of the seed, the counter 0. Equal seeds give equal
  /// numbers, also across lazyfuse versions that keep docs/semantics.md's promise.
  explicit Generator(std::uint64_t seed);
  /// A seed of a signed type: a negative one throws ValueError (NumPy's "expected non-negative integer").
  template <std::signed_integral S> explicit Generator(S seed) : Generator(checked_seed(std::int64_t(seed))) {}
  /// Resumes at `state` (from state()).
  explicit Generator(const GeneratorState& state) : state_(state) {}

  /// The state before the next draw.
  GeneratorState state() const { return state_; }
  void set_state(const GeneratorState& state) { state_ = state; }
  /// Skips `blocks` counters (Philox blocks), as if a float32 draw of 4 * blocks elements had been made (NumPy's
  /// Philox.advance, which also counts blocks).
  void advance(std::uint64_t blocks) { state_.counter += blocks; }
  /// `n` new generators, independent of this one and of each other: child j of this call gets the key
  /// splitmix64(key ^ splitmix64((spawned + j + 1) * 0x9E3779B97F4A7C15)) and counter 0, and `spawned` grows by n,
  /// so the next call gives other children. Deterministic: equal states spawn equal children.
  std::vector<Generator> spawn(std::size_t n);

  // ---- distributions: `type` is float32 or float64 (else DTypeError) -----------------------------------------
  /// Uniform on [0, 1): float64 from 53 random bits, float32 from 24.
  Array random(Shape shape, DType type = DType::Float64);
  /// Uniform on [low, high): low + (high - low) * random(). ValueError unless low and high are finite and
  /// low <= high (NumPy allows high < low).
  Array uniform(double low, double high, Shape shape, DType type = DType::Float64);
  /// Integers in [low, high) (or [low, high] with `endpoint`), every value equally likely (no modulo bias), of an
  /// integer type. `high` omitted: [0, low). ValueError when the interval is empty or does not fit the type.
  Array integers(std::int64_t low, std::optional<std::int64_t> high, Shape shape, DType type = DType::Int64,
                 bool endpoint = false);
  /// Normal with mean 0 and variance 1.
  Array standard_normal(Shape shape, DType type = DType::Float64);
  /// loc + scale * standard_normal(); ValueError for a negative or non-finite scale or a non-finite loc.
  Array normal(double loc, double scale, Shape shape, DType type = DType::Float64);
  /// exp(mean + sigma * standard_normal()); ValueError for a negative sigma.
  Array lognormal(double mean, double sigma, Shape shape, DType type = DType::Float64);
  /// Exponential with mean 1.
  Array standard_exponential(Shape shape, DType type = DType::Float64);
  /// scale * standard_exponential(); ValueError for a negative scale.
  Array exponential(double scale, Shape shape, DType type = DType::Float64);
  /// Gamma of shape `k` and scale 1; ValueError for a negative k.
  Array standard_gamma(double k, Shape shape, DType type = DType::Float64);
  /// scale * standard_gamma(k); ValueError for a negative k or scale.
  Array gamma(double k, double scale, Shape shape, DType type = DType::Float64);
  /// Beta(a, b); ValueError unless a > 0 and b > 0.
  Array beta(double a, double b, Shape shape, DType type = DType::Float64);
  /// Chi-square with `df` degrees of freedom: 2 * standard_gamma(df / 2); ValueError unless df > 0.
  Array chisquare(double df, Shape shape, DType type = DType::Float64);
  /// Student's t with `df` degrees of freedom; ValueError unless df > 0.
  Array standard_t(double df, Shape shape, DType type = DType::Float64);
  /// Poisson with mean `lam` as int64; ValueError for a negative lam or one above 1e10.
  Array poisson(double lam, Shape shape);
  /// Binomial: successes in n trials of probability p, as int64; ValueError for n < 0 or p outside [0, 1] (or NaN).
  Array binomial(std::int64_t n, double p, Shape shape);

  // ---- permutations and sampling (NumPy's Generator.permutation, permuted and choice) ------------------------
  // A random order is the stable argsort of fresh, independent uniform 64-bit integer keys (integers over the whole
  // int64 range): every order is equally likely up to ties between keys, which need two equal 64-bit draws among n
  // (probability below n^2 / 2^65). The numbers are lazyfuse's own: the same distributions as NumPy, not its bits.

  /// The integers 0 .. n-1 in a random order, as int64 (NumPy's permutation(n)). ValueError for a negative n.
  Array permutation(std::int64_t n);
  /// `x` with its entries along `axis` in a random order, one order for all of them (NumPy's permutation(x, axis)):
  /// take(x, permutation(x.shape()[axis]), axis). ValueError for a 0-d x (NumPy: "x must be an integer or at least
  /// 1-dimensional"); IndexError for an axis out of range (NumPy's AxisError).
  Array permutation(const Array& x, int axis = 0);
  /// `x` with each 1-D slice along `axis` in its own random order (NumPy's permuted, which returns a new array
  /// rather than shuffling in place here too); no axis: the flattened array shuffled, in x's shape.
  Array permuted(const Array& x, std::optional<int> axis = std::nullopt);
  /// A random sample of shape `size` from the integers 0 .. a-1, as int64 (NumPy's choice(a, size, replace, p)):
  ///  - with replacement, no p: integers(0, a);
  ///  - with replacement and p: NumPy's method, u = random() against the cumulative sum of p (normalized by its
  ///    last entry, summed on the host in float64, one after another as NumPy does) by searchsorted(side "right");
  ///  - without replacement, no p: the first prod(size) entries of permutation(a);
  ///  - without replacement and p: the prod(size) smallest of E_i / p_i (E_i standard exponentials: weighted
  ///    sampling without replacement as a race, in the order the items are drawn), entries with p_i = 0 never.
  /// p is a 1-D array of a's length; it is materialized and read to check it, which synchronizes (ValueError when
  /// it is not 1-D, has another length, holds a NaN or a negative entry, or does not sum to 1 within
  /// sqrt(float64 epsilon), as NumPy checks; without replacement also when it has fewer non-zero entries than the
  /// sample). ValueError for a < 0, a = 0 with a non-empty sample, or a sample larger than a without replacement.
  Array choice(std::int64_t a, Shape size, bool replace = true, const std::optional<Array>& p = std::nullopt);
  /// As choice(a.shape()[axis], ...) over the entries of `a` along `axis`: take(a, indices, axis), so the result's
  /// shape is a's with that axis replaced by `size` (NumPy's choice of an array). ValueError for a 0-d a.
  Array choice(const Array& a, Shape size, bool replace = true, const std::optional<Array>& p = std::nullopt,
               int axis = 0);

private:
  static std::uint64_t checked_seed(std::int64_t seed);
  /// The counter of a draw of `shape` with `width` words per element (graph::random_width), advancing the state
  /// past its blocks (at record time: the kernel runs later).
  std::uint64_t take(const Shape& shape, int width, const char* op);
  GeneratorState state_;
};

/// The process's generator, made at first use from LAZYFUSE_SEED (docs/configuration.md) or, when that is empty,
/// from the operating system's entropy (std::random_device). Throws ValueError naming LAZYFUSE_SEED for a value
/// that is not a non-negative integer below 2^64. The free functions below draw from it under a lock; calls from
/// several threads each get their own counters, in the order they take the lock.
Generator& default_generator();
/// Reseeds the default generator (NumPy's legacy np.random.seed).
void seed(std::uint64_t seed);

/// default_generator().random(shape, type), under the default generator's lock.
Array random(Shape shape, DType type = DType::Float64);
/// default_generator().uniform(...), under the default generator's lock.
Array uniform(double low, double high, Shape shape, DType type = DType::Float64);
/// default_generator().integers(...), under the default generator's lock.
Array integers(std::int64_t low, std::optional<std::int64_t> high, Shape shape, DType type = DType::Int64,
               bool endpoint = false);
/// default_generator().standard_normal(shape, type), under the default generator's lock.
Array standard_normal(Shape shape, DType type = DType::Float64);
/// default_generator().normal(loc, scale, shape, type), under the default generator's lock.
Array normal(double loc, double scale, Shape shape, DType type = DType::Float64);

} // namespace lazyfuse::random
