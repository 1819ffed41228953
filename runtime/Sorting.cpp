#include "runtime/Sorting.h"

#include "runtime/CubReductions.h"
#include "runtime/CubSort.h"
#include "runtime/Executor.h"
#include "runtime/HostSlots.h"
#include "runtime/Streams.h"
#include "runtime/ThreadPool.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"
#include "graph/Sort.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <numeric>
#include <optional>
#include <type_traits>
#include <vector>

namespace lazyfuse::runtime {

namespace {

// Lines below this many elements in all run on the calling thread.
constexpr std::int64_t kMinParallelSort = std::int64_t(1) << 15;

template <class T> struct IsComplex : std::false_type {};
template <class T> struct IsComplex<std::complex<T>> : std::true_type {};

// NumPy's order (numpy/_core/src/npysort/npysort_common.h): a strict weak order with NaNs after every number.
template <class T> bool numpy_less(const T& a, const T& b) {
  if constexpr (IsComplex<T>::value) {
    const auto ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
    if (ar < br) return ai == ai || bi != bi;
    if (ar > br) return bi != bi && ai == ai;
    if (ar == br || (ar != ar && br != br)) return ai < bi || (bi != bi && ai == ai);
    return br != br;
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    // Sign and magnitude bits: the magnitude as a signed integer orders the numbers (-0 and +0 both 0), and a
    // magnitude above the infinity's is a NaN.
    constexpr int inf = std::is_same_v<T, float16> ? 0x7c00 : 0x7f80;
    std::uint16_t x, y;
    std::memcpy(&x, &a, 2);
    std::memcpy(&y, &b, 2);
    const int mx = x & 0x7fff, my = y & 0x7fff;
    if (mx > inf || my > inf) return mx <= inf && my > inf;
    return (x & 0x8000 ? -mx : mx) < (y & 0x8000 ? -my : my);
  } else if constexpr (std::is_floating_point_v<T>) {
    return a < b || (b != b && a == a);
  } else {
    return a < b;
  }
}

// The CUDA backend's sort: cub::DeviceRadixSort (runtime/CubSort.h) from `input` into a new device buffer; the NaN
// check's answer goes to `nan_answer`.
std::shared_ptr<graph::BufferView> device_sort(const graph::Node& sort, const graph::BufferView& input,
                                               std::int64_t outer, std::int64_t len, std::int64_t inner,
                                               cub_sort::Sort::Nans nans, const HostSlot& nan_answer) {
  Executor& ex = executor();
  const graph::Node& src = *sort.sources_unlocked()[0];
  auto out = std::make_shared<graph::BufferView>();
  out->strides = graph::contiguous_strides(sort.shape);
  out->storage = ex.allocate(std::size_t(sort.size()) * itemsize(sort.dtype));
  cub_sort::Sort s;
  s.dtype = src.dtype;
  s.indices = graph::SortResult(sort.op) == graph::SortResult::Indices;
  s.in = static_cast<const std::byte*>(input.storage->data) + std::size_t(input.offset) * itemsize(src.dtype);
  s.out = out->storage->data;
  s.outer = outer;
  s.len = len;
  s.inner = inner;
  s.nan_answer = &nan_answer;
  s.nans = nans;
  use_on_current_stream(*input.storage);
  // Scratch goes back to the pool when this returns, stream-ordered: the queued sort keeps it until it is done.
  std::vector<std::shared_ptr<graph::Storage>> scratch;
  const cub_sort::Report report = cub_sort::run(
      s,
      [&](std::size_t bytes) {
        scratch.push_back(ex.allocate(bytes));
        return scratch.back()->data;
      },
      current_stream());
  counters().library_calls += std::uint64_t(report.library_calls);
  counters().kernels_launched += std::uint64_t(report.kernels);
  if (config::log_enabled("launch"))
    config::log("launch", std::string("cub::DeviceRadixSort ") + (s.indices ? "argsort " : "sort ") +
                              std::string(dtype_name(s.dtype)) + " [" + std::to_string(outer) + ", " +
                              std::to_string(len) + ", " + std::to_string(inner) + "]: " + report.steps + " (" +
                              std::to_string(report.library_calls) + " CUB calls, " + std::to_string(report.kernels) +
                              " kernels)");
  return out;
}

} // namespace

std::string sort_paths() {
  return "CUDA: cub::DeviceRadixSort (bool, integers, float16, bfloat16, float32, float64; NaNs by a second sort), "
         "complex on the host (std::stable_sort between a download and an upload); CPU: std::stable_sort on the "
         "thread pool";
}

void host_sort(DType dtype, bool indices, const void* in, void* out, std::int64_t outer, std::int64_t len,
               std::int64_t inner) {
  const std::int64_t lines = outer * inner;
  const std::size_t out_item = indices ? sizeof(std::int64_t) : itemsize(dtype);
  std::byte* result = static_cast<std::byte*>(out);
  graph::visit_dtype(dtype, [&]<class T>() {
    const T* x = static_cast<const T*>(in);
    const std::int64_t grain = std::max<std::int64_t>(1, kMinParallelSort / std::max<std::int64_t>(len, 1));
    ThreadPool::instance().parallel_for(lines, grain, 0, [&](std::int64_t b, std::int64_t e) {
      std::vector<std::int64_t> order(static_cast<std::size_t>(len));
      for (std::int64_t line = b; line < e; ++line) {
        const std::int64_t first = line / inner * len * inner + line % inner;
        std::iota(order.begin(), order.end(), std::int64_t(0));
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t p, std::int64_t q) {
          return numpy_less(x[first + p * inner], x[first + q * inner]);
        });
        for (std::int64_t r = 0; r < len; ++r) {
          const std::int64_t at = first + r * inner;
          if (indices)
            std::memcpy(result + std::size_t(at) * out_item, &order[std::size_t(r)], out_item);
          else
            std::memcpy(result + std::size_t(at) * out_item, &x[first + order[std::size_t(r)] * inner], out_item);
        }
      }
    });
  });
}

std::shared_ptr<graph::BufferView> run_sort(const graph::Node& sort, const graph::BufferView& input) {
  LAZYFUSE_ASSERT(sort.kind == graph::NodeKind::Sort, "run_sort of a node that is not a sort");
  const graph::Node& src = *sort.sources_unlocked()[0];
  const auto axis = std::size_t(sort.ivalue);
  const std::int64_t n = src.size(), len = src.shape[axis];
  std::int64_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= src.shape[d];
  for (std::size_t d = axis + 1; d < src.shape.size(); ++d) inner *= src.shape[d];
  const bool indices = graph::SortResult(sort.op) == graph::SortResult::Indices;
  const std::size_t in_item = itemsize(src.dtype), out_item = itemsize(sort.dtype);

  Executor& ex = executor();
  const bool host = ex.kind() == Backend::Cpu;
  // CUB's sorts and reductions are one object library, built for the same devices: one probe answers for both.
  if (!host && cub_sort::supported(src.dtype) && cub_kernels::usable_on_current_device())
    return device_sort(sort, input, outer, len, inner, cub_sort::Sort::Nans::Check, HostSlot());
  auto out = std::make_shared<graph::BufferView>();
  out->strides = graph::contiguous_strides(sort.shape);
  std::vector<std::byte> in_copy, out_copy;
  const std::byte* in = nullptr;
  std::byte* result = nullptr;
  if (host) {
    in = static_cast<const std::byte*>(input.storage->data) + std::size_t(input.offset) * in_item;
    out->storage = ex.allocate(std::size_t(n) * out_item);
    result = static_cast<std::byte*>(out->storage->data);
  } else {
    in_copy.resize(std::size_t(n) * in_item);
    if (n > 0) ex.download(*input.storage, std::size_t(input.offset) * in_item, in_copy.data(), in_copy.size());
    in = in_copy.data();
    out_copy.resize(std::size_t(n) * out_item);
    result = out_copy.data();
  }
  host_sort(src.dtype, indices, in, result, outer, len, inner);
  if (!host) out->storage = ex.upload(out_copy.data(), out_copy.size());
  return out;
}

bool PendingSort::had_nans() const {
  return nan_answer.wait_until_written(cub_sort::kNanUnwritten, current_stream()) != 0;
}

std::optional<PendingSort> queue_sort_unchecked(const graph::Node& sort, const graph::BufferView& input) {
  LAZYFUSE_ASSERT(sort.kind == graph::NodeKind::Sort, "queue_sort_unchecked of a node that is not a sort");
  const graph::Node& src = *sort.sources_unlocked()[0];
  if (executor().kind() != Backend::Cuda || src.ndim() != 1 || src.size() < 1 || !is_floating(src.dtype) ||
      graph::SortResult(sort.op) != graph::SortResult::Values || !cub_sort::supported(src.dtype) ||
      !cub_kernels::usable_on_current_device())
    return std::nullopt;
  PendingSort p;
  p.value = device_sort(sort, input, 1, src.size(), 1, cub_sort::Sort::Nans::CheckLater, p.nan_answer);
  return p;
}

std::shared_ptr<graph::BufferView> finish_sort(PendingSort& pending, const graph::Node& sort,
                                               const graph::BufferView& input) {
  if (!pending.had_nans()) return std::move(pending.value);
  return device_sort(sort, input, 1, sort.size(), 1, cub_sort::Sort::Nans::Present, pending.nan_answer);
}

} // namespace lazyfuse::runtime
