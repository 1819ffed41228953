// NumPy's x[x op s] on the device in one pass over x (runtime/DeviceSelect.cu, compiled ahead of time by nvcc with
// the CUB kernels): a kernel of lazyfuse's own rather than cub::DeviceSelect::If, because it writes its count into
// host memory after everything else (so the host polls one word instead of waiting for the stream: CUB's first
// kernel zeroes its count before its last writes it) and needs no tile-state kernel before it (docs/design.md,
// "Selecting"). This header is plain C++ (no CUDA language) so that it can be included anywhere.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace lazyfuse::runtime::device_select {

/// The comparisons and element types select_compared applies and reads (C++'s comparisons, NumPy's: a NaN compares
/// false but for NotEqual).
enum class Comparison { Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual };
enum class ComparedType { Float32, Float64, Int32, Int64 };
/// The scalar compared with: `real` for the float types, `integer` for the integer ones (converted to the type).
struct Threshold {
  double real = 0;
  std::int64_t integer = 0;
};

/// out[0, k) = the values v of values[0, n) with `v comparison threshold`, in order; `out` holds n elements (the
/// count is known only after the pass). Device pointers, aligned to the element.
struct Compared {
  ComparedType type = ComparedType::Float32;
  Comparison comparison = Comparison::Greater;
  Threshold threshold;
  const void* values = nullptr;
  std::int64_t n = 0;
  void* out = nullptr;
};

/// Bytes of tickets select_compared(c) uses: zero when it starts, left zero when it ends (the CUDA executor's
/// per-stream tickets). Needs c.n >= 1.
std::size_t ticket_bytes(const Compared& c);

/// Queues the selection on `stream`: one kernel of one block per tile of 16 KiB of x, chained by a decoupled
/// look-back over the tiles' counts. Its last block writes k into count_to_host[0] and then 1 into count_to_host[1]
/// (host memory every device maps, runtime/HostSlots.h), so that the host polls the second word.
/// Throws BackendError when the launch fails.
void select_compared(const Compared& c, unsigned char* tickets, std::uint64_t* count_to_host, cudaStream_t stream);

} // namespace lazyfuse::runtime::device_select
