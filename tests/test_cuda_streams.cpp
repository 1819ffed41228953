// Streams, user memory and the memory pool through the public API, on the CUDA backend.
//
// Every test skips without a CUDA backend, unless LAZYFUSE_REQUIRE_GPU=1, which turns the skip into a failure.
// All values are checked against references computed here on fresh random data (LAZYFUSE_TEST_SEED fixes it).
#include "tests/gpu_test.h"

#include <lazyfuse/config.hpp>
#include <lazyfuse/lazyfuse.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

extern "C" char** environ;

namespace {

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::Shape;

constexpr std::size_t kMiB = std::size_t{1} << 20;

std::uint64_t seed() {
  static const std::uint64_t s = [] {
    if (const char* v = std::getenv("LAZYFUSE_TEST_SEED"); v && *v) return std::uint64_t(std::strtoull(v, nullptr, 10));
    return std::uint64_t(std::random_device{}());
  }();
  return s;
}

std::vector<float> random_floats(std::mt19937_64& rng, std::size_t n, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

#define CUDA_OK(call)                                                                                                  \
  do {                                                                                                                 \
    cudaError_t err_ = (call);                                                                                         \
    ASSERT_EQ(err_, cudaSuccess) << #call << ": " << cudaGetErrorName(err_) << " " << cudaGetErrorString(err_);        \
  } while (0)

// First index where got and want differ beyond rtol, or -1.
// Some references are computed in another order than the kernels (x0 + kSteps for kSteps additions of 1): allow a
// few ulps.
constexpr float kUlps = 4e-7f;

std::int64_t first_mismatch(const float* got, const std::vector<float>& want, float rtol = kUlps) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float g = got[i], w = want[i];
    if (!(std::abs(g - w) <= rtol * std::abs(w) + rtol)) return std::int64_t(i);
  }
  return -1;
}

::testing::AssertionResult Matches(const Array& a, const std::vector<float>& want, float rtol = kUlps) {
  auto got = a.get<float>();
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  if (auto i = first_mismatch(got.data(), want, rtol); i >= 0)
    return ::testing::AssertionFailure() << "element " << i << ": got " << got[std::size_t(i)] << ", want "
                                         << want[std::size_t(i)] << " (seed " << seed() << ")";
  return ::testing::AssertionSuccess();
}

class CudaStreams : public ::testing::Test {
protected:
  void SetUp() override { LAZYFUSE_SKIP_WITHOUT_GPU(); }
};

// Restores the pool limit however the test ends.
struct LimitRestorer {
  std::size_t saved = lf::memory::get_limit();
  ~LimitRestorer() { lf::memory::set_limit(saved); }
};

// ---- cross-stream dependency -----------------------------------------------------------------------------

TEST_F(CudaStreams, ArrayProducedOnStreamAIsConsumedCorrectlyOnStreamB) {
  std::mt19937_64 rng(seed());
  constexpr std::int64_t N = std::int64_t{1} << 26;
  constexpr int kSteps = 200;
  // Small integers as floats: adding 1 kSteps times and doubling are exact, so the check is exact.
  std::vector<float> x0(static_cast<std::size_t>(N)), z(static_cast<std::size_t>(N));
  {
    std::uniform_int_distribution<int> d(0, 1000);
    for (auto& v : x0) v = float(d(rng));
    z = random_floats(rng, std::size_t(N));
  }
  lf::Stream a, b;
  ASSERT_NE(a.native(), nullptr);
  ASSERT_NE(b.native(), nullptr);
  ASSERT_NE(a.native(), b.native());

  Array x;
  {
    lf::StreamGuard g(a);
    EXPECT_EQ(lf::current_stream_native(), a.native());
    x = lf::asarray(x0, {N});
    // A long queue of kernels on A: each step is its own evaluation, so A is still busy when B starts.
    for (int s = 0; s < kSteps; ++s) {
      x = x + 1.0f;
      x.eval();
    }
  }
  Array y;
  {
    lf::StreamGuard g(b);
    EXPECT_EQ(lf::current_stream_native(), b.native());
    Array zb = lf::asarray(z, {N});
    y = x * 2.0f + zb;
    y.eval(); // must wait on A's work (an event recorded on A), not on the host
    b.synchronize();
  }
  std::vector<float> want(static_cast<std::size_t>(N));
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = (x0[i] + float(kSteps)) * 2.0f + z[i];
  {
    lf::StreamGuard g(b);
    EXPECT_TRUE(Matches(y, want));
  }
  // A second consumer on B of a fresh producer on A, this time read straight after without any synchronize.
  Array p, q;
  {
    lf::StreamGuard g(a);
    p = lf::asarray(x0, {N});
    for (int s = 0; s < kSteps / 4; ++s) p = (p * 1.0f + 2.0f).eval();
  }
  {
    lf::StreamGuard g(b);
    q = lf::maximum(p - 1.0f, 0.0f);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = std::max(x0[i] + 2.0f * float(kSteps / 4) - 1.0f, 0.0f);
    EXPECT_TRUE(Matches(q, want));
  }
  a.synchronize();
  b.synchronize();
}

// ---- a stream the user owns -----------------------------------------------------------------------------

TEST_F(CudaStreams, WrappedUserStream) {
  std::mt19937_64 rng(seed() + 1);
  cudaStream_t user = nullptr;
  CUDA_OK(cudaStreamCreate(&user));
  const auto h = random_floats(rng, 1 << 20);
  std::vector<float> want(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) want[i] = std::abs(h[i]) * 3.0f - 0.5f;
  {
    lf::Stream s = lf::Stream::wrap(user);
    EXPECT_EQ(s.native(), static_cast<void*>(user));
    {
      lf::StreamGuard g(s);
      EXPECT_EQ(lf::current_stream_native(), static_cast<void*>(user));
      Array a = lf::asarray(h, {std::int64_t(h.size())});
      Array r = lf::abs(a) * 3.0f - 0.5f;
      r.eval();
      s.synchronize();
      EXPECT_TRUE(r.is_materialized());
      EXPECT_TRUE(Matches(r, want));
      // A moved handle still wraps the same stream and does not own it.
      lf::Stream moved = std::move(s);
      EXPECT_EQ(moved.native(), static_cast<void*>(user));
      moved.synchronize();
    }
    EXPECT_NE(lf::current_stream_native(), static_cast<void*>(user));
  }
  // The Stream handles are gone; the user's stream must still be valid (lazyfuse never destroys it).
  const cudaError_t q = cudaStreamQuery(user);
  EXPECT_TRUE(q == cudaSuccess || q == cudaErrorNotReady) << cudaGetErrorName(q);
  CUDA_OK(cudaStreamSynchronize(user));
  CUDA_OK(cudaStreamDestroy(user));
}

// ---- from_pointer and data_ptr ----------------------------------------------------------------------------

TEST_F(CudaStreams, FromPointerComputesAndReleasesTheOwner) {
  std::mt19937_64 rng(seed() + 2);
  constexpr std::int64_t rows = 64, cols = 48;
  const auto host = random_floats(rng, std::size_t(rows * cols));
  void* dev = nullptr;
  CUDA_OK(cudaMalloc(&dev, host.size() * sizeof(float)));
  CUDA_OK(cudaMemcpy(dev, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  auto released = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<void> owner(dev, [released](void* p) {
    (void)cudaFree(p);
    released->fetch_add(1);
  });

  Array w = lf::from_pointer(dev, {rows, cols}, DType::Float32, {}, owner);
  owner.reset(); // the arrays keep it alive now
  EXPECT_EQ(released->load(), 0);
  EXPECT_EQ(w.shape(), (Shape{rows, cols}));
  EXPECT_EQ(w.dtype(), DType::Float32);
  EXPECT_TRUE(w.is_materialized());

  std::vector<float> want(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) want[i] = host[i] * 2.0f + 1.0f;
  EXPECT_TRUE(Matches(w * 2.0f + 1.0f, want, 1e-6f));
  EXPECT_TRUE(Matches(w, host));

  // Strided wrap of the same memory: the transpose, (cols, rows) with strides (1, cols) in elements.
  Array wt = lf::from_pointer(dev, {cols, rows}, DType::Float32, {1, cols}, nullptr);
  std::vector<float> want_t(host.size());
  for (std::int64_t i = 0; i < cols; ++i)
    for (std::int64_t j = 0; j < rows; ++j) want_t[std::size_t(i * rows + j)] = host[std::size_t(j * cols + i)] + 1.0f;
  EXPECT_TRUE(Matches(wt + 1.0f, want_t, 1e-6f));
  EXPECT_TRUE(Matches(wt - w.T(), std::vector<float>(host.size(), 0.0f)));
  wt = Array(); // wt has no owner; drop it before the memory can go

  // data_ptr() of a computed array (and of a computed non-contiguous view), read back with cudaMemcpy.
  Array y = w * 3.0f;
  void* py = y.data_ptr();
  ASSERT_NE(py, nullptr);
  std::vector<float> back(host.size());
  CUDA_OK(cudaMemcpy(back.data(), py, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < host.size(); ++i) want[i] = host[i] * 3.0f;
  EXPECT_EQ(first_mismatch(back.data(), want, 1e-6f), -1);
  Array yt = (w + 0.25f).T();
  void* pyt = yt.data_ptr();
  CUDA_OK(cudaMemcpy(back.data(), pyt, back.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (std::int64_t i = 0; i < cols; ++i)
    for (std::int64_t j = 0; j < rows; ++j) want[std::size_t(i * rows + j)] = host[std::size_t(j * cols + i)] + 0.25f;
  EXPECT_EQ(first_mismatch(back.data(), want, 1e-6f), -1);

  // The owner goes once every array reading the memory is gone: here a lazy expression outlives w.
  Array lazy = w - 1.0f;
  y = Array();
  yt = Array();
  w = Array();
  lf::sync();
  EXPECT_EQ(released->load(), 0) << "released while a lazy array still reads the memory";
  for (std::size_t i = 0; i < host.size(); ++i) want[i] = host[i] - 1.0f;
  {
    // Evaluating drops the lazy array's sources: the memory is no longer read by anything.
    EXPECT_TRUE(Matches(lazy, want, 1e-6f));
  }
  lazy = Array();
  lf::sync();
  EXPECT_EQ(released->load(), 1);
}

// ---- the memory pool -----------------------------------------------------------------------------------

TEST_F(CudaStreams, MemoryPoolStatsFreeAllBlocksAndLimit) {
  LimitRestorer restore;
  lf::memory::set_limit(0);
  lf::sync();
  lf::memory::free_all_blocks();
  const std::size_t used0 = lf::memory::used_bytes();
  EXPECT_EQ(lf::memory::total_bytes(), used0);

  constexpr std::int64_t N = std::int64_t{1} << 24; // 64 MiB of float32
  const std::size_t bytes = std::size_t(N) * sizeof(float);
  {
    Array big = (lf::arange(0.0, double(N), 1.0, DType::Float32) * 0.5f + 1.0f).eval();
    EXPECT_GE(lf::memory::used_bytes(), used0 + bytes);
    EXPECT_GE(lf::memory::total_bytes(), lf::memory::used_bytes());
    EXPECT_FLOAT_EQ(big(std::int64_t(12345)).item<float>(), 12345 * 0.5f + 1.0f);
  }
  lf::sync();
  EXPECT_LT(lf::memory::used_bytes(), used0 + bytes) << "the freed array's block is still counted as used";
  if (lf::config::get("LAZYFUSE_POOL") != "none") { // the pass-through pool (memcheck's) caches nothing
    EXPECT_GE(lf::memory::total_bytes(), used0 + bytes) << "the freed block should be cached, not released";
  }
  lf::memory::free_all_blocks();
  EXPECT_EQ(lf::memory::total_bytes(), lf::memory::used_bytes());

  // A limit below what the next evaluation needs: OutOfMemoryError naming the request and the limit.
  const std::size_t limit = lf::memory::used_bytes() + kMiB;
  lf::memory::set_limit(limit);
  EXPECT_EQ(lf::memory::get_limit(), limit);
  auto compute = [&] { return (lf::arange(0.0, double(N), 1.0, DType::Float32) * 2.0f - 3.0f).eval(); };
  try {
    Array r = compute();
    lf::sync();
    ADD_FAILURE() << "no OutOfMemoryError with a limit of " << limit << " bytes for a " << bytes << "-byte array";
  } catch (const lf::OutOfMemoryError& e) {
    const std::string m = e.what();
    // The request, in bytes (the pool may round it up a little).
    bool has_request = false;
    static const std::regex number_of_bytes(R"((\d+) bytes)");
    for (std::sregex_iterator it(m.begin(), m.end(), number_of_bytes), end; it != end; ++it) {
      const auto n = std::stoull((*it)[1].str());
      if (n >= bytes && n <= bytes + 2 * kMiB) has_request = true;
    }
    EXPECT_TRUE(has_request) << m;
    EXPECT_NE(m.find("limit"), std::string::npos) << m;
    // The limit, in bytes or as the pool formats it (MiB with two decimals).
    char mib[64];
    std::snprintf(mib, sizeof mib, "%.2f MiB", double(limit) / double(kMiB));
    EXPECT_TRUE(m.find(std::to_string(limit)) != std::string::npos || m.find(mib) != std::string::npos) << m;
  }
  // No limit: the same computation succeeds, and the pool still works.
  lf::memory::set_limit(0);
  EXPECT_EQ(lf::memory::get_limit(), 0u);
  Array r = compute();
  EXPECT_FLOAT_EQ(r(std::int64_t(N - 1)).item<float>(), float(N - 1) * 2.0f - 3.0f);
  EXPECT_FLOAT_EQ(r(std::int64_t(7)).item<float>(), 7 * 2.0f - 3.0f);
}

// ---- LAZYFUSE_PER_THREAD_DEFAULT_STREAM (read once per process: checked in a child process) ------------

constexpr const char* kChildMarker = "LAZYFUSE_TEST_STREAMS_CHILD";

TEST_F(CudaStreams, PerThreadDefaultStreamChild) {
  if (!std::getenv(kChildMarker)) GTEST_SKIP() << "runs only in the child process of PerThreadDefaultStream";
  // Without a guard the current stream is cudaStreamPerThread, in every thread.
  EXPECT_EQ(lf::current_stream_native(), static_cast<void*>(cudaStreamPerThread));
  EXPECT_EQ(lf::Stream::null().native(), static_cast<void*>(cudaStreamPerThread));
  std::mt19937_64 rng(seed() + 3);
  const auto h = random_floats(rng, 1 << 20);
  std::vector<std::string> errors(4u);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      if (lf::current_stream_native() != static_cast<void*>(cudaStreamPerThread)) errors[std::size_t(t)] = "stream";
      Array a = lf::asarray(h, {std::int64_t(h.size())});
      auto got = (a * float(t + 1) + 1.0f).get<float>();
      for (std::size_t i = 0; i < h.size(); ++i) {
        const float w = h[i] * float(t + 1) + 1.0f;
        if (!(std::abs(got[i] - w) <= kUlps * (std::abs(w) + 1))) {
          errors[std::size_t(t)] = "value at " + std::to_string(i);
          break;
        }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_TRUE(errors[std::size_t(t)].empty()) << "thread " << t << ": " << errors[std::size_t(t)];
}

TEST_F(CudaStreams, PerThreadDefaultStream) {
  if (std::getenv(kChildMarker)) GTEST_SKIP() << "the child itself";
  const char* here = std::getenv("LAZYFUSE_PER_THREAD_DEFAULT_STREAM");
  if (!here || std::string(here) != "1") {
    // In this process the default stream is the legacy one.
    EXPECT_EQ(lf::current_stream_native(), nullptr);
  }
  // Everything the child needs is prepared before fork(): after it, only exec.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const char* ours : {"LAZYFUSE_PER_THREAD_DEFAULT_STREAM=", "LAZYFUSE_TEST_STREAMS_CHILD=",
                             "LAZYFUSE_REQUIRE_GPU=", "LAZYFUSE_TEST_SEED=", "GTEST_"})
      if (kv.rfind(ours, 0) == 0) replaced = true;
    if (!replaced) env_text.push_back(kv);
  }
  env_text.push_back("LAZYFUSE_PER_THREAD_DEFAULT_STREAM=1");
  env_text.push_back(std::string(kChildMarker) + "=1");
  env_text.push_back("LAZYFUSE_REQUIRE_GPU=1");
  env_text.push_back("LAZYFUSE_TEST_SEED=" + std::to_string(seed()));
  std::vector<char*> envp;
  for (auto& kv : env_text) envp.push_back(kv.data());
  envp.push_back(nullptr);
  std::string arg0 = "test_cuda_streams", filter = "--gtest_filter=CudaStreams.PerThreadDefaultStreamChild";
  char* argv[] = {arg0.data(), filter.data(), nullptr};
  pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child test with LAZYFUSE_PER_THREAD_DEFAULT_STREAM=1 failed (127: exec)";
}

} // namespace
