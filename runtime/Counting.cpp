#include "runtime/Counting.h"

#include "runtime/CubReductions.h"
#include "runtime/DeviceCount.h"
#include "runtime/Executor.h"
#include "runtime/Streams.h"
#include "runtime/ThreadPool.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace lazyfuse::runtime {

namespace {

// Elements per chunk of the CPU backend's count.
constexpr std::int64_t kCountGrain = std::int64_t(1) << 18;

// A negative element converts to 2^64 + it: above any number of bins, not counted.
template <class U> void count_into(const U* x, std::int64_t n, std::int64_t bins, std::int64_t* counts) {
  for (std::int64_t i = 0; i < n; ++i)
    if (const auto v = std::uint64_t(x[i]); v < std::uint64_t(bins)) ++counts[v];
}

template <class U> void host_bincount(const U* x, std::int64_t n, std::int64_t bins, std::int64_t* counts) {
  std::fill(counts, counts + bins, std::int64_t(0));
  const std::int64_t chunks = (n + kCountGrain - 1) / kCountGrain;
  const int threads = ThreadPool::resolve_threads(config::snapshot().cpu_threads);
  // Counters of its own per chunk cost clearing and adding `bins` each: worth it when bins are few beside a chunk.
  if (chunks < 2 || threads < 2 || bins > kCountGrain / 4) return count_into(x, n, bins, counts);
  std::vector<std::vector<std::int64_t>> partial(static_cast<std::size_t>(chunks));
  ThreadPool::instance().parallel_for(chunks, 1, 0, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) {
      auto& mine = partial[std::size_t(c)];
      mine.assign(std::size_t(bins), 0);
      const std::int64_t first = c * kCountGrain;
      count_into(x + first, std::min(kCountGrain, n - first), bins, mine.data());
    }
  });
  for (const auto& mine : partial)
    for (std::int64_t b = 0; b < bins; ++b) counts[b] += mine[std::size_t(b)];
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
         "atomics); CPU: counters per chunk on the thread pool";
}

std::shared_ptr<graph::BufferView> run_bincount(const graph::Node& count, const graph::BufferView& input) {
  LAZYFUSE_ASSERT(count.kind == graph::NodeKind::BinCount, "run_bincount of a node that is not a count");
  const graph::Node& src = *count.sources_unlocked()[0];
  const std::size_t width = itemsize(src.dtype);
  const std::int64_t n = src.size(), bins = count.shape[0];
  Executor& ex = executor();
  auto out = std::make_shared<graph::BufferView>();
  out->strides = graph::contiguous_strides(count.shape);
  out->storage = ex.allocate(std::size_t(bins) * sizeof(std::int64_t));
  const auto* x = static_cast<const std::byte*>(input.storage->data) + std::size_t(input.offset) * width;
  const auto count_on_host = [&](const std::byte* values, std::int64_t* counts) {
    visit_countable(src.dtype, [&]<class U>() { host_bincount(reinterpret_cast<const U*>(values), n, bins, counts); });
  };
  if (ex.kind() == Backend::Cpu) {
    count_on_host(x, static_cast<std::int64_t*>(out->storage->data));
    return out;
  }
  // The count is compiled with the CUB kernels, for the same devices: their probe answers for it.
  if (!cub_kernels::usable_on_current_device()) {
    std::vector<std::byte> values(std::size_t(n) * width);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(bins));
    ex.download(*input.storage, std::size_t(input.offset) * width, values.data(), values.size());
    count_on_host(values.data(), counts.data());
    out->storage = ex.upload(counts.data(), counts.size() * sizeof(std::int64_t));
    return out;
  }
  use_on_current_stream(*input.storage);
  device_count::BinCount c;
  c.width = int(width);
  c.is_signed = is_signed_integer(src.dtype);
  c.x = x;
  c.n = n;
  c.bins = bins;
  c.counts = static_cast<std::int64_t*>(out->storage->data);
  const device_count::Report report = device_count::run(c, current_stream());
  counters().kernels_launched += std::uint64_t(report.kernels);
  if (config::log_enabled("launch"))
    config::log("launch", "bincount " + std::string(dtype_name(src.dtype)) + " n=" + std::to_string(n) +
                              " bins=" + std::to_string(bins) + ": " + report.steps);
  return out;
}

} // namespace lazyfuse::runtime
