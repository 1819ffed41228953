// Internal stream and event helpers behind the public Stream/StreamGuard of include/lazyfuse/runtime.hpp.
#pragma once

#include "runtime/CudaApi.h"

#include <lazyfuse/runtime.hpp>

#include <cstdint>
#include <functional>

namespace lazyfuse::runtime {

/// The handle that stands for "the default stream": cudaStreamPerThread with
/// LAZYFUSE_PER_THREAD_DEFAULT_STREAM=1 (read once per process), else the legacy stream (nullptr). nullptr
/// without CUDA.
cudaStream_t default_stream();

/// The calling thread's current stream, typed: the innermost StreamGuard's, else default_stream().
cudaStream_t current_stream();

/// A CUDA event for ordering work across streams (RAII, move-only). Created without timing, which makes
/// record and wait cheaper; not for measuring time.
/// A stream as it was when a buffer used it: streams lazyfuse owns carry a generation, so that a handle the driver
/// reuses after a destroy is not mistaken for the old stream. Streams lazyfuse does not own have generation 0.
struct StreamTag {
  cudaStream_t stream = nullptr;
  std::uint64_t generation = 0;
};
StreamTag tag_of(cudaStream_t stream);
/// False once the owned stream the tag names was destroyed. Its work is then complete (a Stream synchronizes
/// before it is destroyed), so nothing needs to wait for it, and nothing may be queued on it.
bool is_live(const StreamTag& tag);
/// Runs `f(live)` while no owned stream can be destroyed, so that work queued on the tag's stream inside `f` (when
/// `live`) cannot race with its destruction.
void with_stream_state(const StreamTag& tag, const std::function<void(bool live)>& f);
/// is_live for code running inside with_stream_state's `f` (which holds the lock is_live takes).
bool is_live_locked(const StreamTag& tag);

class Event {
public:
  /// Creates an event on the current device. Throws BackendError without CUDA.
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  /// Captures the work queued on `stream` so far (the stream must be on the event's device).
  void record(cudaStream_t stream);
  /// Makes work queued on `waiter` after this call wait until the recorded work is done; the host does not
  /// block. Works across devices.
  void wait_on(cudaStream_t waiter) const;
  /// True when the recorded work is done (or nothing was recorded). Never blocks.
  bool query() const;
  /// Blocks the host until the recorded work is done.
  void synchronize() const;

  cudaEvent_t native() const noexcept { return event_; }

private:
  cudaEvent_t event_ = nullptr;
};

} // namespace lazyfuse::runtime
