#include "runtime/Selection.h"

#include "graph/Assert.h"
#include "graph/Build.h"
#include "graph/Config.h"
#include "runtime/CubSelection.h"
#include "runtime/CudaApi.h"
#include "runtime/Executor.h"
#include "runtime/Materialize.h"
#include "runtime/Streams.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace lazyfuse::runtime {

namespace {

graph::NodePtr positions_node(std::shared_ptr<graph::Storage> storage, std::int64_t count) {
  return graph::make_buffer(std::move(storage), DType::Int64, {count}, 0, {1});
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

graph::NodePtr on_host(Executor& ex, const graph::BufferView& mask, std::int64_t n) {
  std::vector<std::uint8_t> copy;
  const std::uint8_t* data = nullptr;
  if (mask.storage->on_device) {
    copy.resize(std::size_t(n));
    ex.download(*mask.storage, std::size_t(mask.offset), copy.data(), copy.size());
    data = copy.data();
  } else {
    data = static_cast<const std::uint8_t*>(mask.storage->data) + mask.offset;
  }
  const std::vector<std::int64_t> listed = list_on_host(data, n);
  const std::int64_t count = std::int64_t(listed.size());
  return positions_node(ex.upload(listed.data(), listed.size() * sizeof(std::int64_t)), count);
}

// The CUB path of true_positions (the header says what it does).
graph::NodePtr on_device(Executor& ex, const graph::BufferView& mask, std::int64_t n) {
  const void* flags = static_cast<const std::uint8_t*>(mask.storage->data) + mask.offset;
  const cudaStream_t stream = current_stream();
  use_on_current_stream(*mask.storage);
  const bool logging = config::log_enabled("launch");

  std::int64_t count = 0;
  int kernels = 0;
  {
    const cub_kernels::Requirements need = cub_kernels::count_requirements(n);
    const auto total = ex.allocate(sizeof(std::int64_t));
    // Scratch goes back to the pool on this stream as soon as it is released: stream order keeps it for CUB.
    const auto temp = ex.allocate(need.temp_bytes);
    cub_kernels::run_count(flags, n, static_cast<std::int64_t*>(total->data), temp->data, need.temp_bytes, stream);
    counters().kernels_launched += std::uint64_t(need.kernels);
    kernels += need.kernels;
    if (logging)
      config::log("launch",
                  "cub::DeviceReduce (mask count) n=" + std::to_string(n) + " kernels=" + std::to_string(need.kernels));
    ex.download(*total, 0, &count, sizeof count);
  }
  LAZYFUSE_ASSERT(count >= 0 && count <= n, "a mask count outside [0, size]");
  if (count == 0) return positions_node(ex.allocate(0), 0);

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
  return positions_node(std::move(positions), count);
}

} // namespace

graph::NodePtr true_positions(const graph::NodePtr& mask) {
  LAZYFUSE_ASSERT(mask->dtype == DType::Bool, "true_positions of a mask that is not bool");
  std::lock_guard lock(evaluation_mutex());
  const std::int64_t n = mask->size();
  Executor& ex = executor();
  if (n == 0) return positions_node(ex.allocate(0), 0);
  const std::shared_ptr<const graph::BufferView> buffer = contiguous_buffer(mask);
  if (ex.kind() != Backend::Cuda || !cub_kernels::usable_on_current_device()) return on_host(ex, *buffer, n);
  cuda::require_context("boolean mask selection");
  try {
    return on_device(ex, *buffer, n);
  } catch (const BackendError& e) {
    throw BackendError("boolean mask selection of " + graph::describe("a mask", *mask) + " on the device: " + e.what());
  }
}

} // namespace lazyfuse::runtime
