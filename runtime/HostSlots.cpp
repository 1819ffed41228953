#include "runtime/HostSlots.h"

#include "runtime/CudaApi.h"

#include "graph/Assert.h"

#include <exception>
#include <mutex>
#include <vector>

namespace lazyfuse::runtime {

namespace {

class SlotPool {
public:
  void* take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      void* page = nullptr;
      LAZYFUSE_CUDA_CHECK(cudaHostAlloc(&page, kPageBytes, cudaHostAllocMapped | cudaHostAllocPortable));
      for (std::size_t k = 0; k < kPageBytes / HostSlot::kBytes; ++k)
        free_.push_back(static_cast<unsigned char*>(page) + k * HostSlot::kBytes);
    }
    void* slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void give_back(void* slot) {
    std::lock_guard lock(mutex_);
    free_.push_back(slot);
  }

private:
  static constexpr std::size_t kPageBytes = 4096;
  std::mutex mutex_;
  std::vector<void*> free_;
};

// Never destroyed: a slot may be given back from another static's destructor, and freeing pinned pages at exit races
// the CUDA runtime's own teardown.
SlotPool& pool() {
  static SlotPool* p = new SlotPool;
  return *p;
}

} // namespace

namespace {

// Polls `word` (written by a device) until it is not `unwritten`; every kQueryEvery polls asks the stream whether it
// failed (throws) or finished without writing the word (a bug).
template <class U> U poll(const void* at, cudaStream_t stream, U unwritten) {
  constexpr int kQueryEvery = 256;
  // Acquire loads: a word seen written brings every write the device fenced before it. (Not a
  // volatile load and a fence: ThreadSanitizer does not take fences.)
  const auto* word = static_cast<const U*>(at);
  for (int polls = 1;; ++polls) {
    const U seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if (seen != unwritten) return seen;
    if (polls % kQueryEvery == 0) {
      const cudaError_t state = cudaStreamQuery(stream);
      if (state == cudaErrorNotReady) continue;
      LAZYFUSE_CUDA_CHECK(state);
      const U last = __atomic_load_n(word, __ATOMIC_ACQUIRE); // the stream is done: its writes are all visible now
      LAZYFUSE_ASSERT(last != unwritten, "a stream finished without writing the answer its host slot waits for");
      return last;
    }
  }
}

} // namespace

std::uint32_t HostSlot::poll32(std::size_t offset, cudaStream_t stream, std::uint32_t unwritten) const {
  return poll(static_cast<const unsigned char*>(data_) + offset, stream, unwritten);
}
std::uint64_t HostSlot::poll64(std::size_t offset, cudaStream_t stream, std::uint64_t unwritten) const {
  return poll(static_cast<const unsigned char*>(data_) + offset, stream, unwritten);
}

HostSlot::HostSlot() : data_(pool().take()), unwinding_(std::uncaught_exceptions()) {}

HostSlot::~HostSlot() {
  if (data_ && std::uncaught_exceptions() <= unwinding_) pool().give_back(data_);
}

} // namespace lazyfuse::runtime
