#include "runtime/Selection.h"

#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "graph/Ops.h"
#include "runtime/CubSelection.h"
#include "runtime/CudaApi.h"
#include "runtime/DeviceSelect.h"
#include "runtime/Executor.h"
#include "runtime/HostSlots.h"
#include "runtime/Materialize.h"
#include "runtime/Sorting.h"
#include "runtime/Streams.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace lazyfuse::runtime {

namespace {

// A 1-D Buffer node of `count` elements of `dtype` over `storage`: the positions (int64) or the selected values.
graph::NodePtr vector_node(std::shared_ptr<graph::Storage> storage, DType dtype, std::int64_t count) {
  return graph::make_buffer(std::move(storage), dtype, {count}, 0, {1});
}

// The positions of the true bytes among `data[0, n)`, written without a branch (a mask of random bits would
// mispredict every other element: 2^25 of them took 0.2 s on one core with the branch): every element's index is
// written, and the cursor moves past it only when the element is true. One spare slot takes the write after the last
// true element.
std::vector<std::int64_t> list_on_host(const std::uint8_t* data, std::int64_t n) {
  const std::int64_t count = std::count_if(data, data + n, [](std::uint8_t f) { return f != 0; });
  std::vector<std::int64_t> out(std::size_t(count) + 1);
  std::size_t found = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    out[found] = e;
    found += data[e] != 0 ? 1 : 0;
  }
  out.resize(std::size_t(count));
  return out;
}

// The `count` elements of `width` bytes at `view`'s offset, on the host: in place, or copied from the device.
const std::uint8_t* host_elements(Executor& ex, const graph::BufferView& view, std::size_t width, std::int64_t count,
                                  std::vector<std::uint8_t>& copy) {
  const std::size_t start = std::size_t(view.offset) * width;
  if (!view.storage->on_device) return static_cast<const std::uint8_t*>(view.storage->data) + start;
  copy.resize(std::size_t(count) * width);
  ex.download(*view.storage, start, copy.data(), copy.size());
  return copy.data();
}

graph::NodePtr on_host(Executor& ex, const graph::BufferView& mask, std::int64_t n) {
  std::vector<std::uint8_t> copy;
  const std::uint8_t* data = host_elements(ex, mask, 1, n, copy);
  const std::vector<std::int64_t> listed = list_on_host(data, n);
  const std::int64_t count = std::int64_t(listed.size());
  return vector_node(ex.upload(listed.data(), listed.size() * sizeof(std::int64_t)), DType::Int64, count);
}

const void* mask_flags(const graph::BufferView& mask) {
  return static_cast<const std::uint8_t*>(mask.storage->data) + mask.offset;
}

// The number of true bytes among the n flags on the device (cub::DeviceReduce), read back: the synchronization.
std::int64_t count_on_device(Executor& ex, const void* flags, std::int64_t n, cudaStream_t stream, int& kernels) {
  const cub_kernels::Requirements need = cub_kernels::count_requirements(n);
  const HostSlot total; // CUB writes the count straight into host memory: no copy to queue
  // Scratch goes back to the pool on this stream as soon as it is released: stream order keeps it for CUB.
  const auto temp = ex.allocate(need.temp_bytes);
  cub_kernels::run_count(flags, n, total.as<std::int64_t>(), temp->data, need.temp_bytes, stream);
  counters().kernels_launched += std::uint64_t(need.kernels);
  kernels += need.kernels;
  if (config::log_enabled("launch"))
    config::log("launch",
                "cub::DeviceReduce (mask count) n=" + std::to_string(n) + " kernels=" + std::to_string(need.kernels));
  LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(stream)); // CUB's first kernel writes a 0 there: no word to poll
  const auto count = total.read<std::int64_t>();
  LAZYFUSE_ASSERT(count >= 0 && count <= n, "a mask count outside [0, size]");
  return count;
}

// The CUB path of true_positions (the header says what it does).
graph::NodePtr on_device(Executor& ex, const graph::BufferView& mask, std::int64_t n) {
  const void* flags = mask_flags(mask);
  const cudaStream_t stream = current_stream();
  use_on_current_stream(*mask.storage);
  const bool logging = config::log_enabled("launch");

  int kernels = 0;
  const std::int64_t count = count_on_device(ex, flags, n, stream, kernels);
  if (count == 0) return vector_node(ex.allocate(0), DType::Int64, 0);

  const cub_kernels::Requirements need = cub_kernels::select_requirements(n);
  auto positions = ex.allocate(std::size_t(count) * sizeof(std::int64_t));
  const auto selected = ex.allocate(sizeof(std::int64_t));
  const auto temp = ex.allocate(need.temp_bytes);
  cub_kernels::run_select(flags, n, static_cast<std::int64_t*>(positions->data),
                          static_cast<std::int64_t*>(selected->data), temp->data, need.temp_bytes, stream);
  counters().kernels_launched += std::uint64_t(need.kernels);
  kernels += need.kernels;
  if (logging)
    config::log("launch", "cub::DeviceSelect::Flagged (mask positions) n=" + std::to_string(n) +
                              " selected=" + std::to_string(count) + " kernels=" + std::to_string(need.kernels));
  if (config::log_enabled("accelerator"))
    config::log("accelerator", "mask of " + std::to_string(n) + " elements: " + std::to_string(count) +
                                   " positions listed on the device by CUB, " + std::to_string(kernels) + " kernels");
  return vector_node(std::move(positions), DType::Int64, count);
}

// masked_values on the host: the flagged elements copied in order, from host copies of device buffers.
graph::NodePtr values_on_host(Executor& ex, const graph::BufferView& values, DType dtype, const graph::BufferView& mask,
                              std::int64_t n) {
  const std::size_t width = itemsize(dtype);
  std::vector<std::uint8_t> value_copy, flag_copy;
  const std::uint8_t* data = host_elements(ex, values, width, n, value_copy);
  const std::uint8_t* flags = host_elements(ex, mask, 1, n, flag_copy);
  std::vector<std::uint8_t> out;
  out.reserve(std::size_t(std::count_if(flags, flags + n, [](std::uint8_t f) { return f != 0; })) * width);
  for (std::int64_t e = 0; e < n; ++e)
    if (flags[e] != 0) out.insert(out.end(), data + std::size_t(e) * width, data + std::size_t(e + 1) * width);
  const std::int64_t count = std::int64_t(out.size() / width);
  return vector_node(ex.upload(out.data(), out.size()), dtype, count);
}

// The CUB path of masked_values (the header says what it does).
graph::NodePtr values_on_device(Executor& ex, const graph::BufferView& values, DType dtype,
                                const graph::BufferView& mask, std::int64_t n) {
  const void* flags = mask_flags(mask);
  const int width = int(itemsize(dtype));
  const void* data =
      static_cast<const std::uint8_t*>(values.storage->data) + std::size_t(values.offset) * std::size_t(width);
  const cudaStream_t stream = current_stream();
  use_on_current_stream(*mask.storage);
  use_on_current_stream(*values.storage);
  int kernels = 0;
  const std::int64_t count = count_on_device(ex, flags, n, stream, kernels);
  if (count == 0) return vector_node(ex.allocate(0), dtype, 0);
  const cub_kernels::Requirements need = cub_kernels::select_values_requirements(width, n);
  auto out = ex.allocate(std::size_t(count) * std::size_t(width));
  const auto selected = ex.allocate(sizeof(std::int64_t));
  const auto temp = ex.allocate(need.temp_bytes);
  cub_kernels::run_select_values(width, data, flags, n, out->data, static_cast<std::int64_t*>(selected->data),
                                 temp->data, need.temp_bytes, stream);
  counters().kernels_launched += std::uint64_t(need.kernels);
  kernels += need.kernels;
  if (config::log_enabled("launch"))
    config::log("launch", "cub::DeviceSelect::Flagged (masked values, " + std::to_string(width) +
                              " bytes each) n=" + std::to_string(n) + " selected=" + std::to_string(count) +
                              " kernels=" + std::to_string(need.kernels));
  if (config::log_enabled("accelerator"))
    config::log("accelerator", "mask of " + std::to_string(n) + " elements: " + std::to_string(count) +
                                   " values copied on the device by CUB, " + std::to_string(kernels) + " kernels");
  return vector_node(std::move(out), dtype, count);
}

// The `count` elements a selection wrote at the start of `out`, which holds the worst case (`n` elements of `width`
// bytes, CUB's count known only after its pass): in `out`, or, when they take less than a quarter of it, in a buffer
// of their own, so that the result holds at most four times its size.
std::shared_ptr<graph::Storage> right_sized(Executor& ex, std::shared_ptr<graph::Storage> out, std::int64_t count,
                                            std::int64_t n, int width, cudaStream_t stream) {
  if (count >= n / 4) return out;
  auto own = ex.allocate(std::size_t(count) * std::size_t(width));
  if (count > 0)
    LAZYFUSE_CUDA_CHECK(cudaMemcpyAsync(own->data, out->data, std::size_t(count) * std::size_t(width),
                                        cudaMemcpyDeviceToDevice, stream));
  return own;
}

// x[x op s] where the mask is, unevaluated, a comparison of x with a scalar of x's type (NumPy's x[x > t]): what
// device_select needs to select in one pass over x, without writing the mask.
struct ScalarComparison {
  device_select::Comparison comparison;
  device_select::ComparedType type;
  device_select::Threshold threshold;
};

std::optional<ScalarComparison> comparison_with_scalar(const graph::NodePtr& values, const graph::NodePtr& mask) {
  using device_select::Comparison;
  if (mask->materialized() || mask->kind != graph::NodeKind::Binary) return std::nullopt;
  const std::vector<graph::NodePtr> operands = mask->sources();
  if (operands.size() != 2) return std::nullopt;
  Comparison comparison;
  using graph::BinaryOp;
  switch (BinaryOp(mask->op)) {
  case BinaryOp::Equal: comparison = Comparison::Equal; break;
  case BinaryOp::NotEqual: comparison = Comparison::NotEqual; break;
  case BinaryOp::Less: comparison = Comparison::Less; break;
  case BinaryOp::LessEqual: comparison = Comparison::LessEqual; break;
  case BinaryOp::Greater: comparison = Comparison::Greater; break;
  case BinaryOp::GreaterEqual: comparison = Comparison::GreaterEqual; break;
  default: return std::nullopt;
  }
  const bool scalar_first = operands[1] == values;
  const graph::NodePtr& scalar = scalar_first ? operands[0] : operands[1];
  if ((scalar_first ? operands[1] : operands[0]) != values || scalar->kind != graph::NodeKind::Fill ||
      scalar->dtype != values->dtype)
    return std::nullopt;
  if (scalar_first) { // s op x is x op' s
    switch (comparison) {
    case Comparison::Less: comparison = Comparison::Greater; break;
    case Comparison::LessEqual: comparison = Comparison::GreaterEqual; break;
    case Comparison::Greater: comparison = Comparison::Less; break;
    case Comparison::GreaterEqual: comparison = Comparison::LessEqual; break;
    default: break;
    }
  }
  ScalarComparison c{comparison, device_select::ComparedType::Float32, {scalar->fvalue, scalar->ivalue}};
  switch (values->dtype) {
  case DType::Float32: c.type = device_select::ComparedType::Float32; break;
  case DType::Float64: c.type = device_select::ComparedType::Float64; break;
  case DType::Int32: c.type = device_select::ComparedType::Int32; break;
  case DType::Int64: c.type = device_select::ComparedType::Int64; break;
  default: return std::nullopt;
  }
  return c;
}

// A CUB selection queued into a buffer of the worst case's size, its count on the way into host memory.
struct QueuedSelection {
  std::shared_ptr<graph::Storage> out;
  HostSlot selected; // CUB writes the count straight into host memory: no copy to queue and wait for
  DType dtype;
  std::int64_t n;
  int kernels;
  std::string what;

  // Waits for the stream and reads the count (the synchronization). No polling: CUB's first kernel writes a 0 there
  // (DeviceCompactInitKernel), so no value of the word says the count is final.
  std::int64_t count() const {
    LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(current_stream()));
    const auto c = selected.read<std::int64_t>();
    LAZYFUSE_ASSERT(c >= 0 && c <= n, "a selected count outside [0, size]");
    return c;
  }
};

// Queues a CUB selection of at most `n` elements of `dtype` from `input` (a device buffer): run(in, out, selected,
// temp). `what` names it in the launch log.
template <class Run>
QueuedSelection queue_selection(Executor& ex, const graph::BufferView& input, DType dtype, std::int64_t n,
                                const cub_kernels::Requirements& need, std::string what, Run&& run) {
  const int width = int(itemsize(dtype));
  const void* in =
      static_cast<const std::uint8_t*>(input.storage->data) + std::size_t(input.offset) * std::size_t(width);
  use_on_current_stream(*input.storage);
  QueuedSelection q{
      ex.allocate(std::size_t(n) * std::size_t(width)), HostSlot(), dtype, n, need.kernels, std::move(what)};
  const auto temp = ex.allocate(need.temp_bytes);
  run(in, q.out->data, q.selected.as<std::int64_t>(), temp->data, current_stream());
  counters().kernels_launched += std::uint64_t(need.kernels);
  return q;
}

// The selection once its count is read back, right-sized.
graph::NodePtr finish_selection(Executor& ex, QueuedSelection q) {
  const std::int64_t count = q.count();
  const int width = int(itemsize(q.dtype));
  if (config::log_enabled("launch"))
    config::log("launch", q.what + " (" + std::to_string(width) + " bytes each) n=" + std::to_string(q.n) +
                              " selected=" + std::to_string(count) + " kernels=" + std::to_string(q.kernels));
  return vector_node(right_sized(ex, std::move(q.out), count, q.n, width, current_stream()), q.dtype, count);
}

// One pass of lazyfuse's own kernel (runtime/DeviceSelect.h) into a buffer of the worst case's size; its last tile
// writes the count into host memory, then the word after it, which the host polls (the synchronization).
graph::NodePtr compared_on_device(Executor& ex, const graph::BufferView& values, DType dtype, std::int64_t n,
                                  const ScalarComparison& c) {
  const int width = int(itemsize(dtype));
  use_on_current_stream(*values.storage);
  auto out = ex.allocate(std::size_t(n) * std::size_t(width));
  const device_select::Compared selection{
      c.type,
      c.comparison,
      c.threshold,
      static_cast<const std::uint8_t*>(values.storage->data) + std::size_t(values.offset) * std::size_t(width),
      n,
      out->data};
  const HostSlot count;
  count.expect(std::uint64_t(0), sizeof(std::uint64_t));
  const Executor::Tickets status =
      ex.tagged_tickets(device_select::status_bytes(selection), device_select::epoch_limit());
  device_select::select_compared(selection, {status.data, status.epoch}, count.as<std::uint64_t>(), current_stream());
  counters().kernels_launched += 1;
  (void)count.wait_until_written(std::uint64_t(0), current_stream(), sizeof(std::uint64_t));
  const auto k = count.read<std::int64_t>();
  LAZYFUSE_ASSERT(k >= 0 && k <= n, "a selected count outside [0, size]");
  if (config::log_enabled("launch"))
    config::log("launch", "lf_select_compared (x[x op scalar], " + std::to_string(width) +
                              " bytes each) n=" + std::to_string(n) + " selected=" + std::to_string(k) + " kernels=1");
  return vector_node(right_sized(ex, std::move(out), k, n, width, current_stream()), dtype, k);
}

// How neighbours of `dtype` are compared (unique_sorted).
cub_kernels::UniqueEquality unique_equality(DType dtype) {
  switch (dtype) {
  case DType::Float16: return cub_kernels::UniqueEquality::Float16;
  case DType::BFloat16: return cub_kernels::UniqueEquality::BFloat16;
  case DType::Float32: return cub_kernels::UniqueEquality::Float32;
  case DType::Float64: return cub_kernels::UniqueEquality::Float64;
  default:
    LAZYFUSE_ASSERT(!is_floating(dtype) && !is_complex(dtype), "unique_sorted of a type it does not compare");
    return cub_kernels::UniqueEquality::Bits;
  }
}

// The host's unique_sorted over the bits U of `n` elements: the same comparison as the device's (CubSelection.cu).
template <class U>
std::vector<std::uint8_t> unique_on_host(const std::uint8_t* data, std::int64_t n, cub_kernels::UniqueEquality eq) {
  U sign = 0, infinity = 0;
  switch (eq) {
  case cub_kernels::UniqueEquality::Bits: break;
  case cub_kernels::UniqueEquality::Float16: sign = U(0x8000u), infinity = U(0x7C00u); break;
  case cub_kernels::UniqueEquality::BFloat16: sign = U(0x8000u), infinity = U(0x7F80u); break;
  case cub_kernels::UniqueEquality::Float32: sign = U(0x80000000u), infinity = U(0x7F800000u); break;
  case cub_kernels::UniqueEquality::Float64:
    sign = U(0x8000000000000000ull), infinity = U(0x7FF0000000000000ull);
    break;
  }
  const bool as_float = eq != cub_kernels::UniqueEquality::Bits;
  const auto same = [&](U a, U b) {
    if (a == b) return true;
    if (!as_float) return false;
    const U magnitude_a = a & U(~sign), magnitude_b = b & U(~sign);
    return (magnitude_a == 0 && magnitude_b == 0) || (magnitude_a > infinity && magnitude_b > infinity);
  };
  std::vector<U> values(static_cast<std::size_t>(n));
  std::memcpy(values.data(), data, values.size() * sizeof(U));
  std::vector<std::uint8_t> out;
  for (std::int64_t e = 0; e < n; ++e)
    if (e == 0 || !same(values[std::size_t(e - 1)], values[std::size_t(e)]))
      out.insert(out.end(), data + std::size_t(e) * sizeof(U), data + std::size_t(e + 1) * sizeof(U));
  return out;
}

QueuedSelection queue_unique(Executor& ex, const graph::BufferView& sorted, DType dtype, std::int64_t n) {
  const int width = int(itemsize(dtype));
  const cub_kernels::UniqueEquality eq = unique_equality(dtype);
  const cub_kernels::Requirements need = cub_kernels::unique_requirements(width, eq, n);
  return queue_selection(ex, sorted, dtype, n, need, "cub::DeviceSelect::Unique",
                         [&](const void* in, void* out, std::int64_t* selected, void* temp, cudaStream_t stream) {
                           cub_kernels::run_unique(width, eq, in, n, out, selected, temp, need.temp_bytes, stream);
                         });
}

// The unique values of a lazy 1-D floating-point sort with one wait: the sort's NaN check and the unique's count are
// read together. Without NaNs (the common case) the keys-only sort was the answer and so is its unique; with NaNs
// the sort runs again on canonical NaN keys and std::nullopt sends the caller to the usual path. std::nullopt also
// for a sort queue_sort_unchecked does not take.
std::optional<graph::NodePtr> unique_of_unchecked_sort(Executor& ex, const graph::NodePtr& sorted) {
  if (sorted->materialized() || sorted->kind != graph::NodeKind::Sort) return std::nullopt;
  const std::shared_ptr<const graph::BufferView> input = contiguous_buffer(sorted->sources()[0]);
  std::optional<PendingSort> pending = queue_sort_unchecked(*sorted, *input);
  if (!pending) return std::nullopt;
  QueuedSelection unique = queue_unique(ex, *pending->value, sorted->dtype, sorted->size());
  const bool had_nans = pending->had_nans();
  sorted->set_buffer(finish_sort(*pending, *sorted, *input));
  if (!had_nans) return finish_selection(ex, std::move(unique));
  (void)unique.count(); // the dropped pass's count must land before its slot goes back
  return std::nullopt;
}

} // namespace

graph::NodePtr true_positions(const graph::NodePtr& mask) {
  LAZYFUSE_ASSERT(mask->dtype == DType::Bool, "true_positions of a mask that is not bool");
  std::lock_guard lock(evaluation_mutex());
  const std::int64_t n = mask->size();
  Executor& ex = executor();
  if (n == 0) return vector_node(ex.allocate(0), DType::Int64, 0);
  const std::shared_ptr<const graph::BufferView> buffer = contiguous_buffer(mask);
  if (ex.kind() != Backend::Cuda || !cub_kernels::usable_on_current_device()) return on_host(ex, *buffer, n);
  cuda::require_context("boolean mask selection");
  try {
    return on_device(ex, *buffer, n);
  } catch (const BackendError& e) {
    throw BackendError("boolean mask selection of " + graph::describe("a mask", *mask) + " on the device: " + e.what());
  }
}

graph::NodePtr masked_values(const graph::NodePtr& values, const graph::NodePtr& mask) {
  LAZYFUSE_ASSERT(mask->dtype == DType::Bool, "masked_values with a mask that is not bool");
  LAZYFUSE_ASSERT(values->shape == mask->shape, "masked_values with a mask of another shape than the values");
  std::lock_guard lock(evaluation_mutex());
  const std::int64_t n = mask->size();
  Executor& ex = executor();
  if (n == 0) return vector_node(ex.allocate(0), values->dtype, 0);
  const std::shared_ptr<const graph::BufferView> data = contiguous_buffer(values);
  const bool cub = ex.kind() == Backend::Cuda && cub_kernels::usable_on_current_device();
  // A mask that is a comparison of x with a scalar is never written: the selection tests the elements itself.
  const std::optional<ScalarComparison> compared = cub ? comparison_with_scalar(values, mask) : std::nullopt;
  const std::shared_ptr<const graph::BufferView> flags = compared ? nullptr : contiguous_buffer(mask);
  if (!cub) return values_on_host(ex, *data, values->dtype, *flags, n);
  cuda::require_context("boolean mask selection");
  try {
    return compared ? compared_on_device(ex, *data, values->dtype, n, *compared)
                    : values_on_device(ex, *data, values->dtype, *flags, n);
  } catch (const BackendError& e) {
    throw BackendError("boolean mask selection of " + graph::describe("an array", *values) +
                       " on the device: " + e.what());
  }
}

graph::NodePtr unique_sorted(const graph::NodePtr& sorted) {
  LAZYFUSE_ASSERT(sorted->ndim() == 1 && sorted->size() >= 1, "unique_sorted needs a 1-D array of an element");
  std::lock_guard lock(evaluation_mutex());
  const std::int64_t n = sorted->size();
  const DType dtype = sorted->dtype;
  Executor& ex = executor();
  if (ex.kind() != Backend::Cuda || !cub_kernels::usable_on_current_device()) {
    const std::shared_ptr<const graph::BufferView> data = contiguous_buffer(sorted);
    const std::size_t width = itemsize(dtype);
    std::vector<std::uint8_t> copy;
    const std::uint8_t* values = host_elements(ex, *data, width, n, copy);
    const cub_kernels::UniqueEquality eq = unique_equality(dtype);
    std::vector<std::uint8_t> out;
    switch (width) {
    case 1: out = unique_on_host<std::uint8_t>(values, n, eq); break;
    case 2: out = unique_on_host<std::uint16_t>(values, n, eq); break;
    case 4: out = unique_on_host<std::uint32_t>(values, n, eq); break;
    default: out = unique_on_host<std::uint64_t>(values, n, eq); break;
    }
    return vector_node(ex.upload(out.data(), out.size()), dtype, std::int64_t(out.size() / width));
  }
  cuda::require_context("unique");
  try {
    if (std::optional<graph::NodePtr> unique = unique_of_unchecked_sort(ex, sorted)) return *unique;
    return finish_selection(ex, queue_unique(ex, *contiguous_buffer(sorted), dtype, n));
  } catch (const BackendError& e) {
    throw BackendError("unique of " + graph::describe("an array", *sorted) + " on the device: " + e.what());
  }
}

} // namespace lazyfuse::runtime
