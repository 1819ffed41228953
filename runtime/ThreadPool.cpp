#include "runtime/ThreadPool.h"

#include "graph/Assert.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <utility>

namespace lazyfuse::runtime {

// One parallel_for call. Chunks are claimed through `next`; the caller waits until `finished` reaches `chunks`.
struct ThreadPool::Job {
  std::int64_t n = 0, grain = 1, chunks = 0;
  const std::function<void(std::int64_t, std::int64_t)>* body = nullptr;
  int max_helpers = 0; // workers that may join (threads - 1); guarded by the pool's mutex
  int helpers = 0;     // workers that joined; guarded by the pool's mutex
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> failed{false};

  std::mutex mutex; // guards the members below
  std::condition_variable all_done;
  std::int64_t finished = 0;
  std::int64_t error_chunk = -1;
  std::exception_ptr error;

  bool claimable() const { return next.load(std::memory_order_relaxed) < chunks; }
};

namespace {

// Stops the process' pool during static destruction, before the runtime's other statics go away; the pool object
// itself stays (a call after this runs on the calling thread).
struct ShutdownAtExit {
  ThreadPool* pool;
  ~ShutdownAtExit() { pool->shutdown(); }
};

} // namespace

ThreadPool& ThreadPool::instance() {
  static ThreadPool* pool = new ThreadPool;
  static ShutdownAtExit guard{pool};
  return *pool;
}

ThreadPool::~ThreadPool() {
  shutdown();
}

int ThreadPool::resolve_threads(int requested) {
  if (requested > 0) return requested;
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int ThreadPool::workers() const {
  std::lock_guard lock(mutex_);
  return int(workers_.size());
}

void ThreadPool::run_chunks(Job& job) {
  for (;;) {
    const std::int64_t k = job.next.fetch_add(1, std::memory_order_relaxed);
    if (k >= job.chunks) return;
    if (!job.failed.load(std::memory_order_relaxed)) {
      try {
        (*job.body)(k * job.grain, std::min(job.n, (k + 1) * job.grain));
      } catch (...) {
        job.failed.store(true, std::memory_order_relaxed);
        std::lock_guard lock(job.mutex);
        if (job.error_chunk < 0 || k < job.error_chunk) {
          job.error_chunk = k;
          job.error = std::current_exception();
        }
      }
    }
    std::lock_guard lock(job.mutex);
    if (++job.finished == job.chunks) job.all_done.notify_all();
  }
}

void ThreadPool::ensure_workers(int wanted) {
  // Called with mutex_ held.
  wanted = std::min(wanted, kMaxWorkers);
  while (int(workers_.size()) < wanted) workers_.emplace_back([this] { worker_loop(); });
}

void ThreadPool::worker_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    std::shared_ptr<Job> job;
    wake_.wait(lock, [&] {
      if (stopping_) return true;
      for (const auto& j : jobs_)
        if (j->helpers < j->max_helpers && j->claimable()) {
          job = j;
          return true;
        }
      return false;
    });
    if (!job) return; // stopping, and nothing picked
    ++job->helpers;
    lock.unlock();
    run_chunks(*job);
    job.reset();
    lock.lock();
  }
}

void ThreadPool::parallel_for(std::int64_t n, std::int64_t grain, int threads,
                              const std::function<void(std::int64_t, std::int64_t)>& body) {
  LAZYFUSE_ASSERT(grain >= 1, "parallel_for with a grain below 1");
  if (n <= 0) return;
  auto job = std::make_shared<Job>();
  job->n = n;
  job->grain = grain;
  job->chunks = (n - 1) / grain + 1;
  job->body = &body;
  job->max_helpers = int(std::min<std::int64_t>(resolve_threads(threads) - 1, job->chunks - 1));
  bool queued = false;
  if (job->max_helpers > 0) {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      ensure_workers(job->max_helpers);
      jobs_.push_back(job);
      queued = true;
    }
  }
  if (queued) wake_.notify_all();
  run_chunks(*job); // returns once every chunk is claimed
  if (queued) {
    std::lock_guard lock(mutex_);
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), job));
  }
  std::unique_lock lock(job->mutex);
  job->all_done.wait(lock, [&] { return job->finished == job->chunks; });
  if (job->error) {
    // Taken out of the job first: a worker may hold the job's last reference, and the exception must be destroyed
    // by this thread, which reads it (ThreadSanitizer cannot see libstdc++'s own count of an exception's owners, so
    // a worker's delete after this thread's read was reported as a race).
    const std::exception_ptr error = std::exchange(job->error, nullptr);
    lock.unlock();
    std::rethrow_exception(error);
  }
}

void ThreadPool::shutdown() noexcept {
  std::vector<std::thread> stopped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    stopped.swap(workers_);
  }
  wake_.notify_all();
  for (auto& t : stopped) {
    if (t.get_id() == std::this_thread::get_id())
      t.detach(); // exit() called from inside a chunk: this worker cannot join itself
    else
      t.join();
  }
}

} // namespace lazyfuse::runtime
