// The library reductions compiled ahead of time by nvcc (runtime/CubReductions.cu): cub::DeviceReduce for a whole
// contiguous buffer, cub::DeviceSegmentedReduce for the contiguous rows of one. runtime/Accelerators.cpp decides
// which plans they serve; this header is plain C++ (no CUB, no CUDA language) so that it can be included anywhere.
//
// The combining functions are those of graph/OpMath.inc (the fused kernels' own): sums wrap for integers, min and
// max propagate NaN. No floating-point atomics: CUB's reductions combine in an order fixed by the input size and
// the device, so the same input gives the same bits on every run on one device.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace lazyfuse::runtime::cub_kernels {

enum class Op : std::uint8_t { Sum, Prod, Min, Max };

/// out[r] = op over in[r * row_size + j], j in [0, row_size), for r in [0, rows): `rows` contiguous rows, and one
/// row (rows == 1) is a full reduction. `in` and `out` are device pointers of `in_type` and `out_type`.
struct Reduction {
  Op op = Op::Sum;
  DType in_type = DType::Float32;
  DType out_type = DType::Float32;
  const void* in = nullptr;
  void* out = nullptr;
  std::int64_t rows = 1;
  std::int64_t row_size = 0;
};

/// Whether (op, in_type, out_type) is compiled in: sum and prod of float32, float64 and int64 (same type out) and of
/// int32 (int64 out, as NumPy sums int32); min and max of float32, float64, int32 and int64.
bool supported(Op op, DType in_type, DType out_type);

/// What running `r` takes: scratch bytes (at least 1) and the kernels it launches. One row: cub::DeviceReduce,
/// 1 kernel when the row fits one tile of CUB's single-tile kernel, else 2 (a reduce pass and a single-tile pass).
/// Several rows: cub::DeviceSegmentedReduce, 1 kernel per 2^31 - 1 rows. Needs rows >= 1 and row_size >= 1 and
/// a supported combination. Throws BackendError when CUB fails.
struct Requirements {
  std::size_t temp_bytes = 1;
  int kernels = 0;
};
Requirements requirements(const Reduction& r);

/// The most elements cub::DeviceReduce reduces in one launch (its single-tile kernel) for `op` from `in_type` to
/// `out_type` on the current device: found once per device and types from CUB's size queries (requirements), then
/// cached. Needs a supported combination.
std::int64_t single_tile_elements(Op op, DType in_type, DType out_type);

/// Queues `r` on `stream`, using `temp` (at least requirements(r).temp_bytes bytes of device memory, which may be
/// released, stream-ordered, right after this returns). Throws BackendError when a launch fails.
void run(const Reduction& r, void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// True when these kernels have code the current device can run (sm_90 machine code, or compute_90 PTX that the
/// driver compiles for a newer device). Checked once per device.
bool usable_on_current_device();

/// "cub::DeviceReduce" or "cub::DeviceSegmentedReduce" for `r` (logs).
const char* function_name(const Reduction& r);

} // namespace lazyfuse::runtime::cub_kernels
