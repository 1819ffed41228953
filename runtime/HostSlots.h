// Small answers a device writes for the host (a kernel's failed checks, a count, a range, a flag): slots of pinned
// host memory that every device maps. A kernel or a CUB call writes its answer straight into host memory, so that
// reading it back queues no copy (and clearing it, where it must start at zero, is a host store): the reader waits
// for its stream and reads. On an H100 a bincount-like call of 2^25 elements took 0.0686 ms with the copy into
// pageable memory this replaced and 0.0642 ms with a slot (docs/performance.md, "Thirty-second session"); the
// gathers' error words saved 21-26 us a call, the two copies they replaced.
#pragma once

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
  static constexpr std::size_t kBytes = 16;

  HostSlot();
  ~HostSlot();
  HostSlot(HostSlot&& other) noexcept : data_(other.data_), unwinding_(other.unwinding_) { other.data_ = nullptr; }
  HostSlot& operator=(HostSlot&&) = delete;
  HostSlot(const HostSlot&) = delete;
  HostSlot& operator=(const HostSlot&) = delete;

  /// Where a kernel, a CUB call or a copy writes the answer (a host address every device may use).
  void* data() const { return data_; }
  template <class T> T* as() const {
    static_assert(sizeof(T) <= kBytes, "a host slot holds 16 bytes");
    return static_cast<T*>(data_);
  }
  /// The answer, read once the stream that writes it has been waited for.
  template <class T> T read() const {
    static_assert(sizeof(T) <= kBytes, "a host slot holds 16 bytes");
    T value;
    std::memcpy(&value, const_cast<const void*>(static_cast<volatile void*>(data_)), sizeof value);
    return value;
  }

private:
  void* data_;
  int unwinding_; // std::uncaught_exceptions() when taken
};

} // namespace lazyfuse::runtime
