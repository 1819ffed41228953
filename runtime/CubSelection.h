// The positions of the true elements of a boolean mask on the device (runtime/CubSelection.cu, compiled ahead of time
// by nvcc like runtime/CubReductions.cu): a count, cub::DeviceReduce over the flags, and the positions,
// cub::DeviceSelect::Flagged over the flat positions 0, 1, ... in ascending order (NumPy's C order), or the flagged
// elements themselves, copied as bits of their width. The count comes
// first so that the positions buffer can be allocated at its exact size: the worst case (every element true) would
// hold 8 bytes per mask element for as long as the positions live. This header is plain C++ (no CUB).
#pragma once

#include "runtime/CubReductions.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace lazyfuse::runtime::cub_kernels {

/// What counting the true elements of `size` flags takes: scratch bytes (at least 1) and kernels (1 when the flags
/// fit CUB's single-tile reduction, else 2). Needs size >= 1. Throws BackendError when CUB fails.
Requirements count_requirements(std::int64_t size);

/// Queues *count = the number of nonzero bytes among flags[0, size) on `stream` (an int64 on the device), using
/// `temp` (at least count_requirements(size).temp_bytes bytes). Throws BackendError when a launch fails.
void run_count(const void* flags, std::int64_t size, std::int64_t* count, void* temp, std::size_t temp_bytes,
               cudaStream_t stream);

/// What listing the positions of the true elements of `size` flags takes: scratch bytes (at least 1) and kernels
/// (2 per 2^31 - 1 flags: CUB's tile-state initialization and its select pass, per partition of 32-bit offsets).
/// Needs size >= 1. Throws BackendError when CUB fails.
Requirements select_requirements(std::int64_t size);

/// Queues positions[0, k) = the ascending j in [0, size) with flags[j] != 0, and *selected = k, on `stream`. The
/// caller allocates `positions` for the count that run_count found (k equals it). `temp` as for run_count, from
/// select_requirements. Throws BackendError when a launch fails.
void run_select(const void* flags, std::int64_t size, std::int64_t* positions, std::int64_t* selected, void* temp,
                std::size_t temp_bytes, cudaStream_t stream);

/// What copying the flagged elements of `size` values of `width` bytes (1, 2, 4, 8 or 16) takes: scratch bytes (at
/// least 1) and kernels (as select_requirements). Needs size >= 1. Throws BackendError when CUB fails, Error for
/// another width.
Requirements select_values_requirements(int width, std::int64_t size);

/// Queues out[0, k) = values[j] for the ascending j in [0, size) with flags[j] != 0 (their bits, `width` bytes each;
/// values and out aligned to the width), and *selected = k, on `stream`. The caller allocates `out` for the count
/// that run_count found. `temp` from select_values_requirements. Throws BackendError when a launch fails.
void run_select_values(int width, const void* values, const void* flags, std::int64_t size, void* out,
                       std::int64_t* selected, void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// How unique_sorted compares neighbours: as bits (integers, bool), or as values of an IEEE format of the width
/// (equal bits, both zeros of either sign, or both NaN: NumPy's unique with equal_nan).
enum class UniqueEquality { Bits, Float16, BFloat16, Float32, Float64 };

/// What keeping the first element of each run of equal neighbours among `size` sorted values of `width` bytes (1, 2,
/// 4 or 8) takes: scratch bytes (at least 1) and kernels (as select_requirements). Needs size >= 1. Throws
/// BackendError when CUB fails, Error for another width or a float format of another width.
Requirements unique_requirements(int width, UniqueEquality equality, std::int64_t size);

/// Queues out[0, k) = the first element of each run of equal neighbours (cub::DeviceSelect::Unique with `equality`)
/// among values[0, size), and *selected = k, on `stream`. `out` holds `size` elements (the count is known only after
/// the pass). `temp` from unique_requirements. Throws BackendError when a launch fails.
void run_unique(int width, UniqueEquality equality, const void* values, std::int64_t size, void* out,
                std::int64_t* selected, void* temp, std::size_t temp_bytes, cudaStream_t stream);

} // namespace lazyfuse::runtime::cub_kernels
