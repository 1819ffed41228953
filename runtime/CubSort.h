// The device sorts compiled ahead of time by nvcc (runtime/CubSort.cu): cub::DeviceRadixSort on the CUDA backend
// for sort and argsort (runtime/Sorting.h), in NumPy's order (graph/Sort.h) and bit for bit the CPU backend's result.
// This header is plain C++ (no CUB, no CUDA language) so that it can be included anywhere.
//
// How, in short (docs/design.md, "Device sorts", says why):
//  - the keys are the elements themselves, of their own type: CUB's radix traits map every real type to an
//    order-preserving unsigned key in registers (no transform pass), and treat -0.0 and +0.0 as one key (stable, so
//    they keep their input order and their bits), as NumPy does;
//  - NaNs are where CUB differs (it orders them by their bits, negative NaNs first): after the first sort the ends of
//    the sorted keys tell whether the input had any, and only then is it sorted again with every NaN's key made the
//    largest (one key for all, so they keep their input order), the values gathered from the input by position;
//  - one line (a 1-D sort): a values sort is cub::DeviceRadixSort::SortKeys straight into the output; an argsort is
//    SortPairs of (element, position);
//  - several lines (any axis of an N-D array, no transpose): SortPairs of (element, position) over all elements, then
//    a stable SortPairs of (line of the position, position), so that each line's elements are together and in order;
//    a last kernel writes the positions along the axis (argsort) or gathers the elements (sort) into place.
#pragma once

#include "runtime/HostSlots.h"

#include <lazyfuse/dtype.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace lazyfuse::runtime::cub_sort {

/// A stable sort along one axis of a C-contiguous array of outer * len * inner elements (shape [outer, len, inner],
/// the axis in the middle): `in` and `out` are device pointers, `out` of `dtype` (values) or int64 (indices).
struct Sort {
  DType dtype = DType::Float32;
  bool indices = false;
  const void* in = nullptr;
  void* out = nullptr;
  std::int64_t outer = 1, len = 0, inner = 1;
  /// For a floating-point type: where the NaN check writes its answer (a 32-bit word: 1 when the input has NaNs, else
  /// 0) for the host to read with no copy queued.
  const HostSlot* nan_answer = nullptr;
  /// What to do about NaNs (floating-point types; only a 1-D values sort takes other than Check): Check as above;
  /// CheckLater queues the keys sort and the NaN check and returns without waiting (the caller waits, reads
  /// nan_answer, and when it is non-zero runs the sort again with Present); Present sorts on canonical NaN keys at
  /// once.
  enum class Nans { Check, CheckLater, Present } nans = Nans::Check;
};

/// Sort::nan_answer's word until the NaN check writes it.
inline constexpr unsigned kNanUnwritten = ~0u;

/// Whether `dtype` is compiled in: bool and every integer and floating-point type; not the complex types (their
/// order is two keys with NumPy's NaN rules: runtime/Sorting.cpp sorts them on the host).
bool supported(DType dtype);

/// Device memory for one run: `bytes` bytes (256-byte aligned), usable by work queued on the stream passed to run,
/// and kept by the caller until run returns (it may then go back to a stream-ordered pool).
using Scratch = std::function<void*(std::size_t bytes)>;

/// What to ask a Scratch for, for `bytes`: a whole number of 256-byte units, at least one.
inline std::size_t scratch_bytes(std::size_t bytes) {
  return bytes <= 256 ? 256 : (bytes + 255) / 256 * 256;
}

/// What a run did, for the counters and the logs.
struct Report {
  int library_calls = 0; ///< cub::DeviceRadixSort calls (each launches several kernels of CUB's choosing)
  int kernels = 0;       ///< lazyfuse's own kernels (positions, NaN check, line keys, the final scatter or gather)
  bool nan_pass = false; ///< the input had NaNs: it was sorted again with canonical NaN keys
  std::string steps;     ///< the calls in order, e.g. "SortKeys float32 n=33554432, nan check"
};

/// Queues `s` on `stream`, with scratch from `scratch`. For a floating-point type it then reads one flag back from the
/// device (a wait for the stream, after every step is queued), and when the input had NaNs queues the sort again on
/// canonical NaN keys (unless Sort::nans says otherwise). Needs a supported dtype and len >= 1; nothing runs for an
/// empty array. Throws BackendError when CUDA fails.
Report run(const Sort& s, const Scratch& scratch, cudaStream_t stream);

} // namespace lazyfuse::runtime::cub_sort
