// SpinLock: the lock of the tables that every recorded node passes through (the intern table, the node block pool),
// held for a few dozen instructions. An uncontended std::mutex costs a lock and an unlock call through pthreads (about
// 90 instructions a pair, 3 pairs per node recorded and released); this costs two atomic instructions.
#pragma once

#include <atomic>
#include <thread>

namespace lazyfuse::graph {

/// A test-and-test-and-set lock (BasicLockable, for std::lock_guard). A waiting thread yields, so a holder that was
/// preempted gets the core back. Hold it for short work only.
class SpinLock {
public:
  void lock() noexcept {
    while (busy_.exchange(true, std::memory_order_acquire))
      while (busy_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() noexcept { busy_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> busy_{false};
};

} // namespace lazyfuse::graph
