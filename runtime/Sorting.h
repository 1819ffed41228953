// Sorts (graph::NodeKind::Sort, a library plan of fusion::partition): stable, in NumPy's order (graph/Sort.h).
#pragma once

#include "graph/Node.h"
#include "runtime/HostSlots.h"

#include <memory>
#include <optional>
#include <string>

namespace lazyfuse::runtime {

/// The value of `sort` (a Sort node) from `input`, its source's value as a C-contiguous buffer: a new C-contiguous
/// buffer on the backend in use, the same bits on both. The CPU backend sorts each line along the sort axis with
/// std::stable_sort by NumPy's order, on the threads of ThreadPool::instance(). The CUDA backend sorts on the device
/// with cub::DeviceRadixSort (runtime/CubSort.h), counting its CUB calls in KernelCacheStats::library_calls and its
/// own kernels in kernels_launched (the `launch` log channel lists them); complex types, and devices the CUB code
/// cannot run on, take the host sort between a download and an upload. Call under the evaluation lock
/// (runtime/Materialize.h).
std::shared_ptr<graph::BufferView> run_sort(const graph::Node& sort, const graph::BufferView& input);

/// A values sort queued on the CUDA backend whose NaN check is still to be read (unique's sort: work that reads the
/// sorted values is queued behind it, and one wait serves both).
struct PendingSort {
  std::shared_ptr<graph::BufferView> value; ///< the sorted values, the answer unless the input had NaNs
  HostSlot nan_answer;                      ///< the check's answer (cub_sort::Sort::nan_answer)

  /// Polls for the NaN check's answer (the current stream's work up to it done).
  bool had_nans() const;
};

/// For a Sort node of the values of a 1-D floating-point array on the CUDA backend (where one keys-only CUB sort is the
/// answer unless the input has NaNs): queues that sort of `input` (the source's value, C-contiguous) and its NaN check
/// without waiting. std::nullopt for any other sort, backend or device. Call under the evaluation lock.
std::optional<PendingSort> queue_sort_unchecked(const graph::Node& sort, const graph::BufferView& input);

/// Waits for `pending`'s NaN check: its sorted values when the input had no NaNs; else the sort queued again on
/// canonical NaN keys (NumPy's order), into a new buffer. Call under the evaluation lock.
std::shared_ptr<graph::BufferView> finish_sort(PendingSort& pending, const graph::Node& sort,
                                               const graph::BufferView& input);

/// The CPU backend's sort of the C-contiguous [outer, len, inner] array at `in` (host memory, `dtype`) along its
/// middle axis into `out` (host memory, int64 positions along the axis when `indices`, else `dtype`): what run_sort
/// does on the CPU backend, for tests that compare the device's sorts with it bit for bit.
void host_sort(DType dtype, bool indices, const void* in, void* out, std::int64_t outer, std::int64_t len,
               std::int64_t inner);

/// What runs sorts on each backend, for lazyfuse-info: one line.
std::string sort_paths();

} // namespace lazyfuse::runtime
