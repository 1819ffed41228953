// The streams of include/lazyfuse/runtime.hpp (its other functions: runtime/Runtime.cpp), and the internal stream
// state and Event of runtime/Streams.h.
#include "runtime/Streams.h"

#include <mutex>
#include <unordered_map>

#include "graph/Config.h"

#include "graph/Assert.h"
#include "runtime/CudaApi.h"
#include "runtime/MemoryPool.h"

#include <lazyfuse/error.hpp>
#include <lazyfuse/runtime.hpp>

#include <string>
#include <utility>

namespace lazyfuse {
namespace {

namespace cu = runtime::cuda;

bool cuda_ok() {
  return cu::availability().ok;
}

// The thread's current stream is "whatever the default is" until a StreamGuard sets one; the default is resolved
// when asked, not captured, so that a guard restoring "no guard" needs no knowledge of the setting. A
// distinct address is the only void* that no stream handle (nullptr, 0x1, 0x2, a real one) can equal.
char no_guard_tag;
void* const kNoGuard = &no_guard_tag;
thread_local void* current_guarded_stream = kNoGuard;

// Owned streams alive now, with their generation.
struct LiveStreams {
  std::mutex mutex;
  std::unordered_map<cudaStream_t, std::uint64_t> generation;
  std::uint64_t next = 1;
};
LiveStreams& live_streams() {
  static auto* l = new LiveStreams;
  return *l;
}

void destroy_stream(void* native, bool owned) noexcept {
  if (!owned || !native) return;
  auto s = static_cast<cudaStream_t>(native);
  // Buffers produced on this stream may still be read elsewhere: finish its work, so that readers (which check
  // is_live) need not wait for a stream that no longer exists.
  (void)cudaStreamSynchronize(s);
  auto& l = live_streams();
  std::lock_guard lock(l.mutex); // held until the handle is gone: see with_stream_state
  l.generation.erase(s);
  // Before the handle is gone: blocks the pool cached for this stream must not be matched to a later stream
  // that the driver hands the same handle value.
  runtime::MemoryPool::stream_destroyed(s);
  // Queued work still completes; the driver releases the stream afterwards. Nothing to report to from here.
  (void)cudaStreamDestroy(s);
  (void)cudaGetLastError();
}

} // namespace

namespace runtime {
StreamTag tag_of(cudaStream_t stream) {
  auto& l = live_streams();
  std::lock_guard lock(l.mutex);
  auto it = l.generation.find(stream);
  return {stream, it == l.generation.end() ? 0 : it->second};
}
bool is_live(const StreamTag& tag) {
  bool live = true;
  with_stream_state(tag, [&](bool l) { live = l; });
  return live;
}
bool is_live_locked(const StreamTag& tag) {
  if (tag.generation == 0) return true;
  auto& l = live_streams();
  auto it = l.generation.find(tag.stream);
  return it != l.generation.end() && it->second == tag.generation;
}
void with_stream_state(const StreamTag& tag, const std::function<void(bool)>& f) {
  std::lock_guard lock(live_streams().mutex);
  f(is_live_locked(tag));
}
} // namespace runtime

Stream::Stream() {
  if (!cuda_ok()) return;
  cu::require_context("creating a stream");
  // Non-blocking: the legacy default stream must not serialize our streams with unrelated work.
  cudaStream_t s = nullptr;
  LAZYFUSE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  native_ = s;
  owned_ = true;
  auto& l = live_streams();
  std::lock_guard lock(l.mutex);
  l.generation[s] = l.next++;
}

Stream Stream::wrap(void* native_stream) {
  return Stream(cuda_ok() ? native_stream : nullptr, false);
}

Stream Stream::null() {
  return Stream(runtime::default_stream(), false);
}

Stream::~Stream() {
  destroy_stream(native_, owned_);
}

Stream::Stream(Stream&& other) noexcept
    : native_(std::exchange(other.native_, nullptr)), owned_(std::exchange(other.owned_, false)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy_stream(native_, owned_);
    native_ = std::exchange(other.native_, nullptr);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

void Stream::synchronize() const {
  if (!cuda_ok()) return;
  cu::require_context("synchronizing a stream");
  LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(native_)));
}

void* current_stream_native() {
  return runtime::current_stream();
}

// Guards nest per thread: each restores exactly what it replaced, so they must end in reverse order of creation
// on the thread that made them, which scoping gives.
StreamGuard::StreamGuard(const Stream& s) : previous_(current_guarded_stream) {
  current_guarded_stream = s.native();
}

StreamGuard::~StreamGuard() {
  current_guarded_stream = previous_;
}

namespace runtime {

cudaStream_t default_stream() {
  if (!cuda_ok()) return nullptr;
  // Read once: a default stream that changed under running work would break stream ordering.
  static const bool per_thread = config::snapshot().per_thread_default_stream;
  return per_thread ? cudaStreamPerThread : nullptr;
}

cudaStream_t current_stream() {
  void* s = current_guarded_stream;
  return s == kNoGuard ? default_stream() : static_cast<cudaStream_t>(s);
}

Event::Event() {
  cuda::require_available("creating a CUDA event");
  cuda::require_context("creating a CUDA event");
  LAZYFUSE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
}

Event::~Event() {
  if (event_) {
    // An event may be destroyed while recorded work is pending; CUDA defers the release.
    (void)cudaEventDestroy(event_);
    (void)cudaGetLastError();
  }
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (event_) {
      (void)cudaEventDestroy(event_);
      (void)cudaGetLastError();
    }
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::record(cudaStream_t stream) {
  LAZYFUSE_ASSERT(event_, "record on a moved-from Event");
  LAZYFUSE_CUDA_CHECK(cudaEventRecord(event_, stream));
}

void Event::wait_on(cudaStream_t waiter) const {
  LAZYFUSE_ASSERT(event_, "wait_on of a moved-from Event");
  LAZYFUSE_CUDA_CHECK(cudaStreamWaitEvent(waiter, event_, 0));
}

bool Event::query() const {
  LAZYFUSE_ASSERT(event_, "query of a moved-from Event");
  const cudaError_t e = cudaEventQuery(event_);
  if (e == cudaErrorNotReady) {
    // "Not ready" is an answer, not a failure; it must not linger as the thread's last error.
    (void)cudaGetLastError();
    return false;
  }
  LAZYFUSE_CUDA_CHECK(e);
  return true;
}

void Event::synchronize() const {
  LAZYFUSE_ASSERT(event_, "synchronize of a moved-from Event");
  LAZYFUSE_CUDA_CHECK(cudaEventSynchronize(event_));
}

} // namespace runtime
} // namespace lazyfuse
