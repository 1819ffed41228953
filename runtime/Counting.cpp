#include "runtime/Counting.h"

#include "runtime/CubReductions.h"
#include "runtime/CudaApi.h"
#include "runtime/DeviceCount.h"
#include "runtime/Executor.h"
#include "runtime/FixedPointSum.h"
#include "runtime/HostSlots.h"
#include "runtime/Materialize.h"
#include "runtime/Streams.h"
#include "runtime/ThreadPool.h"

#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"
#include "graph/HostOps.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

namespace lazyfuse::runtime {

namespace {

// Elements per chunk of the CPU backend's count.
constexpr std::int64_t kCountGrain = std::int64_t(1) << 18;

// A negative element converts to 2^64 + it: above any number of bins, not counted. With `range`, also the smallest
// and largest element as int64 (range[0], range[1]), combined with what range holds.
template <class U>
void count_into(const U* x, std::int64_t n, std::int64_t bins, std::int64_t* counts, std::int64_t* range) {
  for (std::int64_t i = 0; i < n; ++i)
    if (const auto v = std::uint64_t(x[i]); v < std::uint64_t(bins)) ++counts[v];
  if (range && n > 0) { // in an order that converts to int64's monotonically (DeviceCount.cu's Seen)
    using T = std::conditional_t<std::is_same_v<U, std::uint64_t>, std::int64_t, U>;
    const auto [lo, hi] = std::minmax_element(x, x + n, [](U a, U b) { return T(a) < T(b); });
    range[0] = std::min(range[0], std::int64_t(*lo));
    range[1] = std::max(range[1], std::int64_t(*hi));
  }
}

template <class U>
void host_bincount(const U* x, std::int64_t n, std::int64_t bins, std::int64_t* counts, std::int64_t* range) {
  std::fill(counts, counts + bins, std::int64_t(0));
  if (range) {
    range[0] = std::numeric_limits<std::int64_t>::max();
    range[1] = std::numeric_limits<std::int64_t>::lowest();
  }
  const std::int64_t chunks = (n + kCountGrain - 1) / kCountGrain;
  const int threads = ThreadPool::resolve_threads(config::snapshot().cpu_threads);
  // Counters of its own per chunk cost clearing and adding `bins` each: worth it when bins are few beside a chunk.
  if (chunks < 2 || threads < 2 || bins > kCountGrain / 4) return count_into(x, n, bins, counts, range);
  std::vector<std::vector<std::int64_t>> partial(static_cast<std::size_t>(chunks));
  std::vector<std::array<std::int64_t, 2>> ranges(static_cast<std::size_t>(chunks));
  ThreadPool::instance().parallel_for(chunks, 1, 0, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) {
      auto& mine = partial[std::size_t(c)];
      mine.assign(std::size_t(bins), 0);
      auto& my_range = ranges[std::size_t(c)];
      my_range = {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::lowest()};
      const std::int64_t first = c * kCountGrain;
      count_into(x + first, std::min(kCountGrain, n - first), bins, mine.data(), range ? my_range.data() : nullptr);
    }
  });
  for (const auto& mine : partial)
    for (std::int64_t b = 0; b < bins; ++b) counts[b] += mine[std::size_t(b)];
  if (range)
    for (const auto& r : ranges) {
      range[0] = std::min(range[0], r[0]);
      range[1] = std::max(range[1], r[1]);
    }
}

// bool as an unsigned byte, every integer type as itself.
template <class F> void visit_countable(DType t, F&& f) {
  if (t == DType::Bool) return f.template operator()<std::uint8_t>();
  LAZYFUSE_ASSERT(is_integer(t), "a count of elements that are not integers");
  graph::visit_dtype(t, [&]<class T>() {
    if constexpr (std::is_integral_v<T>) f.template operator()<T>();
  });
}

} // namespace

std::string bincount_paths() {
  return "CUDA: lazyfuse's kernel (shared-memory counters per block up to the shared memory's capacity, else global "
         "atomics), weights by integer atomics (floats up to float32 in fixed point), float64 weights by "
         "cub::DeviceRadixSort::SortPairs and cub::DeviceReduce::ReduceByKey; CPU: counters per chunk on the thread "
         "pool, weights in the same fixed point or added in order";
}

namespace {

// Counts the n elements of `dtype` of `input` into `bins` counters at `storage`'s start, on the backend in use.
// Returns the storage, which a device without the CUB kernels' code replaces by an upload. With `range_keys` (three
// words: host memory every device maps, runtime/HostSlots.h, on the CUDA backend), also the range's two order keys
// (DeviceCount.h) and then 1 in the third word, written by the device or here.
std::shared_ptr<graph::Storage> count_elements(DType dtype, const graph::BufferView& input, std::int64_t n,
                                               std::int64_t bins, std::uint64_t* range_keys) {
  Executor& ex = executor();
  const std::size_t width = itemsize(dtype);
  // The device's range words follow the counts (cleared with them).
  const bool device_range = range_keys && ex.kind() == Backend::Cuda;
  const std::size_t slots = std::size_t(bins) + (device_range ? device_count::kRangeWords : 0);
  auto storage = ex.allocate(slots * sizeof(std::int64_t));
  const auto* x = static_cast<const std::byte*>(input.storage->data) + std::size_t(input.offset) * width;
  const auto count_on_host = [&](const std::byte* values, std::int64_t* counts) {
    std::int64_t range[2];
    visit_countable(dtype, [&]<class U>() {
      host_bincount(reinterpret_cast<const U*>(values), n, bins, counts, range_keys ? range : nullptr);
    });
    if (range_keys) {
      device_count::encode_range(range[0], range[1], range_keys);
      range_keys[2] = 1;
    }
  };
  if (ex.kind() == Backend::Cpu) {
    count_on_host(x, static_cast<std::int64_t*>(storage->data));
    return storage;
  }
  // The count is compiled with the CUB kernels, for the same devices: their probe answers for it.
  if (!cub_kernels::usable_on_current_device()) {
    std::vector<std::byte> values(std::size_t(n) * width);
    std::vector<std::int64_t> counts(slots);
    ex.download(*input.storage, std::size_t(input.offset) * width, values.data(), values.size());
    count_on_host(values.data(), counts.data());
    return ex.upload(counts.data(), counts.size() * sizeof(std::int64_t));
  }
  use_on_current_stream(*input.storage);
  device_count::BinCount c;
  c.width = int(width);
  c.is_signed = is_signed_integer(dtype);
  c.x = x;
  c.n = n;
  c.bins = bins;
  c.counts = static_cast<std::int64_t*>(storage->data);
  if (device_range) {
    c.range = reinterpret_cast<std::uint64_t*>(c.counts + bins);
    c.range_to_host = range_keys;
  }
  const device_count::Report report = device_count::run(c, current_stream());
  counters().kernels_launched += std::uint64_t(report.kernels);
  if (config::log_enabled("launch"))
    config::log("launch", "bincount " + std::string(dtype_name(dtype)) + " n=" + std::to_string(n) +
                              " bins=" + std::to_string(bins) + ": " + report.steps);
  return storage;
}

} // namespace

namespace {

// The format of the floats summed in fixed point (fixed_sum::finish); digits 0 for the other types.
template <class W> constexpr fixed_sum::Format fixed_point_format() {
  if constexpr (std::is_same_v<W, float>)
    return fixed_sum::kFloat32;
  else if constexpr (std::is_same_v<W, lazyfuse_opmath::lf_f16>)
    return fixed_sum::kFloat16;
  else if constexpr (std::is_same_v<W, lazyfuse_opmath::lf_bf16>)
    return fixed_sum::kBFloat16;
  else
    return {0, 0};
}

// sums[b] = the weights of x's elements equal to b. Float16, bfloat16 and float32 as the device sums them
// (runtime/FixedPointSum.h), to the bit; integers and float64 added one by one in x's order onto the additive
// identity (0, or -0.0, which the first weight replaces exactly): integers wrap to the same sums as the device's
// atomics, float64 sums can differ from the device's reduce-by-key in the last bits.
template <class U, class W>
void host_weighted_bincount(const U* x, const W* weights, std::int64_t n, std::int64_t bins, W* sums) {
  constexpr auto format = fixed_point_format<W>();
  if constexpr (format.digits != 0) {
    const auto value = [&](std::int64_t i) { return lazyfuse_opmath::lf_cast<float, W>(weights[i]); };
    std::vector<std::uint32_t> words(std::size_t(bins), fixed_sum::kNothing);
    std::vector<std::int64_t> fixed(std::size_t(bins), 0);
    for (std::int64_t i = 0; i < n; ++i)
      if (const auto b = std::uint64_t(x[i]); b < std::uint64_t(bins))
        words[b] = std::max(words[b], fixed_sum::scale_code(value(i)));
    const int fraction = fixed_sum::fraction_bits(n);
    for (std::int64_t i = 0; i < n; ++i)
      if (const auto b = std::uint64_t(x[i]); b < std::uint64_t(bins)) {
        const float v = value(i);
        if (const std::uint32_t flag = fixed_sum::special_flag(v); flag != 0)
          words[b] |= flag;
        else
          fixed[b] += fixed_sum::term(v, words[b], fraction); // below 2^62 in magnitude: fraction_bits
      }
    for (std::int64_t b = 0; b < bins; ++b)
      sums[b] = lazyfuse_opmath::lf_cast<W, float>(
          fixed_sum::finish(fixed[std::size_t(b)], words[std::size_t(b)], fraction, format));
  } else {
    std::fill(sums, sums + bins, lazyfuse_opmath::lf_cast<W, double>(-0.0));
    for (std::int64_t i = 0; i < n; ++i)
      if (const auto v = std::uint64_t(x[i]); v < std::uint64_t(bins))
        sums[v] = lazyfuse_opmath::lf_add(sums[v], weights[i]);
  }
}

// The weighted count of `count` (graph/Count.h) on the backend in use: a new storage of bins sums.
std::shared_ptr<graph::Storage> sum_weights(const graph::Node& count, const graph::BufferView& input,
                                            const graph::BufferView& weights) {
  Executor& ex = executor();
  const graph::Node& xs = *count.sources_unlocked()[0];
  const DType wtype = count.dtype;
  const std::int64_t n = xs.size(), bins = count.shape[0];
  const std::size_t xwidth = itemsize(xs.dtype), wwidth = itemsize(wtype);
  auto storage = ex.allocate(std::size_t(bins) * wwidth);
  const auto* x = static_cast<const std::byte*>(input.storage->data) + std::size_t(input.offset) * xwidth;
  const auto* w = static_cast<const std::byte*>(weights.storage->data) + std::size_t(weights.offset) * wwidth;
  const auto sum_on_host = [&](const std::byte* xv, const std::byte* wv, std::byte* out) {
    visit_countable(xs.dtype, [&]<class U>() {
      graph::visit_opmath_type(wtype, [&]<class W>() {
        host_weighted_bincount(reinterpret_cast<const U*>(xv), reinterpret_cast<const W*>(wv), n, bins,
                               reinterpret_cast<W*>(out));
      });
    });
  };
  if (ex.kind() == Backend::Cpu) {
    sum_on_host(x, w, static_cast<std::byte*>(storage->data));
    return storage;
  }
  if (!cub_kernels::usable_on_current_device() || std::uint64_t(bins) >= 0xFFFFFFFFull) {
    std::vector<std::byte> xv(std::size_t(n) * xwidth), wv(std::size_t(n) * wwidth), sums(std::size_t(bins) * wwidth);
    ex.download(*input.storage, std::size_t(input.offset) * xwidth, xv.data(), xv.size());
    ex.download(*weights.storage, std::size_t(weights.offset) * wwidth, wv.data(), wv.size());
    sum_on_host(xv.data(), wv.data(), sums.data());
    return ex.upload(sums.data(), sums.size());
  }
  use_on_current_stream(*input.storage);
  use_on_current_stream(*weights.storage);
  device_count::WeightedBinCount c;
  c.width = int(xwidth);
  c.is_signed = is_signed_integer(xs.dtype);
  c.x = x;
  c.n = n;
  c.bins = bins;
  c.weight_type = wtype;
  c.weights = w;
  c.sums = storage->data;
  // Scratch goes back to the pool when this returns, stream-ordered: the queued work keeps it until it is done.
  std::vector<std::shared_ptr<graph::Storage>> scratch;
  const device_count::Report report = device_count::run_weighted(
      c,
      [&](std::size_t bytes) {
        scratch.push_back(ex.allocate(bytes));
        return scratch.back()->data;
      },
      current_stream());
  counters().library_calls += std::uint64_t(report.library_calls);
  counters().kernels_launched += std::uint64_t(report.kernels);
  if (config::log_enabled("launch"))
    config::log("launch", "weighted bincount " + std::string(dtype_name(xs.dtype)) + " -> " +
                              std::string(dtype_name(wtype)) + " n=" + std::to_string(n) +
                              " bins=" + std::to_string(bins) + ": " + report.steps);
  return storage;
}

} // namespace

std::shared_ptr<graph::BufferView> run_bincount(const graph::Node& count, const graph::BufferView& input,
                                                const graph::BufferView* weights) {
  LAZYFUSE_ASSERT(count.kind == graph::NodeKind::BinCount, "run_bincount of a node that is not a count");
  LAZYFUSE_ASSERT((weights != nullptr) == (count.sources_unlocked().size() == 2),
                  "run_bincount: weights given for a count, or none for a weighted count");
  const graph::Node& src = *count.sources_unlocked()[0];
  auto out = std::make_shared<graph::BufferView>();
  out->strides = graph::contiguous_strides(count.shape);
  out->storage = weights ? sum_weights(count, input, *weights)
                         : count_elements(src.dtype, input, src.size(), count.shape[0], nullptr);
  return out;
}

CountsAndRange count_with_range(const graph::NodePtr& x, std::int64_t bins) {
  LAZYFUSE_ASSERT(x->ndim() == 1 && x->size() >= 1 && bins >= 1, "count_with_range needs a 1-D x and a bin");
  LAZYFUSE_ASSERT(x->dtype == DType::Bool || is_integer(x->dtype), "count_with_range of a type that is not an integer");
  std::lock_guard lock(evaluation_mutex());
  const std::shared_ptr<const graph::BufferView> input = contiguous_buffer(x);
  const bool on_device = executor().kind() != Backend::Cpu;
  if (on_device) cuda::require_context("bincount");
  // The range is the one answer the host waits for: on the device it lands in mapped host memory, no copy queued,
  // and the host polls the word written after it.
  std::optional<HostSlot> slot;
  std::uint64_t keys[3];
  if (on_device) {
    slot.emplace();
    slot->expect(std::uint64_t(0), 2 * sizeof(std::uint64_t));
  }
  auto storage = count_elements(x->dtype, *input, x->size(), bins, slot ? slot->as<std::uint64_t>() : keys);
  if (slot) {
    (void)slot->wait_until_written(std::uint64_t(0), current_stream(), 2 * sizeof(std::uint64_t));
    std::memcpy(keys, slot->data(), 2 * sizeof(std::uint64_t));
  }
  CountsAndRange out;
  out.smallest = device_count::decode_smallest(keys);
  out.largest = device_count::decode_largest(keys);
  out.counts = graph::make_buffer(std::move(storage), DType::Int64, {bins}, 0, {1});
  return out;
}

} // namespace lazyfuse::runtime
