// Small answers a device writes for the host (a kernel's failed checks, a count, a range, a flag): slots of pinned
// host memory that every device maps. A kernel or a CUB call writes its answer straight into host memory, so that
// reading it back queues no copy (and clearing it, where it must start at zero, is a host store). The reader either
// waits for its stream or, where one write of the device's own kernel comes after everything else the host needs
// (the sort's NaN flag, the count's range with its arrival word), polls that word until it leaves a value the device
// never writes there, which returns about 2 us sooner than the stream's wait. (CUB's counts are waited for: CUB's
// first kernel writes a 0 into the count before its last writes the count.) Measured on an H100 against the copy into
// pageable memory that these replaced (docs/results/2026-12-06e/sync_experiment.cu, docs/performance.md, "Thirty-second
// session"): 4.4 us less a call with the stream's wait, 6.0 us with the poll; the gathers' error words, 21-26 us less
// per call for the two copies they replaced.
#pragma once

#include <cuda_runtime_api.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lazyfuse::runtime {

/// One slot of kBytes, leased from a process-wide pool of mapped pinned pages and given back when the lease dies,
/// unless it dies while an exception unwinds: then a write queued before the failure may still land, and the slot is
/// never used again. 64-bit CUDA maps pinned memory at the same address on every device (unified addressing), so the
/// pointer serves kernels and the host alike. Taking one needs CUDA (it may allocate a page); the pages live until
/// the process ends.
class HostSlot {
public:
  static constexpr std::size_t kBytes = 32;

  HostSlot();
  ~HostSlot();
  HostSlot(HostSlot&& other) noexcept : data_(other.data_), unwinding_(other.unwinding_) { other.data_ = nullptr; }
  HostSlot& operator=(HostSlot&&) = delete;
  HostSlot(const HostSlot&) = delete;
  HostSlot& operator=(const HostSlot&) = delete;

  /// Where a kernel, a CUB call or a copy writes the answer (a host address every device may use).
  void* data() const { return data_; }
  template <class T> T* as() const {
    static_assert(sizeof(T) <= kBytes, "a host slot holds 32 bytes");
    return static_cast<T*>(data_);
  }
  /// The answer, read once the stream that writes it has been waited for.
  template <class T> T read() const {
    static_assert(sizeof(T) <= kBytes, "a host slot holds 32 bytes");
    T value;
    std::memcpy(&value, const_cast<const void*>(static_cast<volatile void*>(data_)), sizeof value);
    return value;
  }

  /// Before the work that answers is queued: the word at `offset` (bytes) holds `unwritten`, a value the device never
  /// writes there.
  template <class T> void expect(T unwritten, std::size_t offset = 0) const {
    std::memcpy(static_cast<unsigned char*>(data_) + offset, &unwritten, sizeof unwritten);
  }
  /// Polls the word at `offset` until it holds something else than `unwritten` (expect's) and returns it, with every
  /// write the device made before it. Asks `stream` now and then: a failure there throws BackendError, and a stream
  /// that finished without writing the word is a bug in lazyfuse (an assert).
  template <class T> T wait_until_written(T unwritten, cudaStream_t stream, std::size_t offset = 0) const {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a polled word is 4 or 8 bytes");
    const auto bits = [&] {
      if constexpr (sizeof(T) == 4)
        return poll32(offset, stream, std::bit_cast<std::uint32_t>(unwritten));
      else
        return poll64(offset, stream, std::bit_cast<std::uint64_t>(unwritten));
    }();
    return std::bit_cast<T>(bits);
  }

private:
  std::uint32_t poll32(std::size_t offset, cudaStream_t stream, std::uint32_t unwritten) const;
  std::uint64_t poll64(std::size_t offset, cudaStream_t stream, std::uint64_t unwritten) const;

  void* data_;
  int unwinding_; // std::uncaught_exceptions() when taken
};

} // namespace lazyfuse::runtime
