// NumPy's x[x op s] on the device in one pass over x (runtime/DeviceSelect.cu, compiled ahead of time by nvcc with
// the CUB kernels): a kernel of lazyfuse's own rather than cub::DeviceSelect::If, because its last tile writes the
// count into host memory (so the host polls one word instead of waiting for the stream: CUB's first kernel zeroes its
// count before its last writes it), it needs no tile-state kernel before it, and it is faster (docs/design.md,
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

/// Bytes of status words select_compared(c) uses. Needs 1 <= c.n <= 2^40 (Error otherwise).
std::size_t status_bytes(const Compared& c);

/// The largest epoch a status word holds.
std::uint32_t epoch_limit();

/// The status words of a launch and its epoch, from Executor::tagged_tickets(status_bytes(c), epoch_limit()): every
/// word is zero or written by an earlier launch on the stream, with a smaller epoch.
struct Statuses {
  unsigned char* data = nullptr;
  std::uint32_t epoch = 0;
};

/// Queues the selection on `stream`: one kernel of one block per tile of 32 KiB of x, chained by a decoupled
/// look-back over the tiles' counts. Its last tile writes k into count_to_host[0] and then 1 into count_to_host[1]
/// (host memory every device maps, runtime/HostSlots.h), so that the host polls the second word. Throws
/// BackendError when the launch fails.
void select_compared(const Compared& c, Statuses status, std::uint64_t* count_to_host, cudaStream_t stream);

} // namespace lazyfuse::runtime::device_select
