#include "runtime/HostSlots.h"

#include "runtime/CudaApi.h"

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

HostSlot::HostSlot() : data_(pool().take()), unwinding_(std::uncaught_exceptions()) {}

HostSlot::~HostSlot() {
  if (data_ && std::uncaught_exceptions() <= unwinding_) pool().give_back(data_);
}

} // namespace lazyfuse::runtime
