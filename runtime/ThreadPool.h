// The CPU backend's persistent worker threads: started on first use, shared by every kernel run (the interpreter's,
// and the compiled CPU code's when there is a code generator), stopped at process exit.
//
// Work is cut into chunks that depend only on the call's arguments (the count and the grain), never on how many
// threads run them or which thread takes which chunk: a caller whose chunks write disjoint results, or results
// combined afterwards in chunk order, gets the same bits with any thread count.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace lazyfuse::runtime {

class ThreadPool {
public:
  /// Workers are capped here whatever LAZYFUSE_CPU_THREADS asks for (the caller is one more thread).
  static constexpr int kMaxWorkers = 255;

  /// The process' pool, created on first use and never destroyed (a static guard stops its workers at exit; later
  /// calls run on the calling thread). Thread-safe.
  static ThreadPool& instance();

  ThreadPool() = default;
  /// Stops and joins the workers; chunks already claimed finish first.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// LAZYFUSE_CPU_THREADS' meaning of a thread count: `requested`, or all hardware threads for 0 (at least 1).
  static int resolve_threads(int requested);

  /// Calls body(begin, end) for each chunk [k * grain, min(n, (k + 1) * grain)) of [0, n), on up to `threads` threads
  /// at once (the caller and threads - 1 workers; resolve_threads' meaning of 0), and returns when every chunk is
  /// done. Chunks are claimed in increasing order but may finish in any order. May be called from several threads
  /// at once, and from inside a chunk (the nested call's chunks then run with whatever threads are free; at worst on
  /// the calling thread alone, never a deadlock). If chunks throw, the chunks not yet claimed are skipped and the
  /// exception of the lowest-numbered chunk that threw is rethrown here, after the others have finished.
  /// Requires grain >= 1; n <= 0 does nothing.
  void parallel_for(std::int64_t n, std::int64_t grain, int threads,
                    const std::function<void(std::int64_t begin, std::int64_t end)>& body);

  /// Stops the workers (joining them) and makes later parallel_for calls run on the calling thread. Idempotent.
  void shutdown() noexcept;

  /// Workers started so far (they start on demand, up to the largest `threads - 1` asked for).
  int workers() const;

private:
  struct Job;

  void ensure_workers(int wanted);
  void worker_loop();
  static void run_chunks(Job& job);

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_; // jobs with chunks left to claim, oldest first
  std::vector<std::thread> workers_;
  bool stopping_ = false;
};

} // namespace lazyfuse::runtime
