// Streams, user memory and the memory pool through the public API, on the CUDA backend.
//
// Every test skips without a CUDA backend, unless LAZYFUSE_TEST_REQUIRE_GPU=1, which turns the skip into a failure.
// All values are checked against references computed here on fresh random data (LAZYFUSE_TEST_SEED fixes it).
#include "graph/Config.h"
#include "tests/child_process.h"
#include "tests/gpu_test.h"
#include "tests/test_util.h"

#include <lazyfuse/config.hpp>
#include <lazyfuse/lazyfuse.hpp>

#include <cuda.h> // types of the virtual-memory calls, fetched through cudaGetDriverEntryPointByVersion
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace lf = lazyfuse;
using lf::Array;
using lf::DType;
using lf::Shape;

constexpr std::size_t kMiB = std::size_t{1} << 20;

using lazyfuse_test::seed;

std::vector<float> random_floats(std::mt19937_64& rng, std::size_t n, float lo = -1, float hi = 1) {
  return lazyfuse_test::uniform_values(rng, n, lo, hi);
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

// A graph the user captures from a stream lazyfuse launches on would replay a scan's or a selection's one epoch and
// read its own last replay's statuses: both refuse the capture with an error that says so, and once the capture
// has ended the stream gives the results it gave before.
TEST_F(CudaStreams, ScansAndSelectionsRefuseAUsersStreamCapture) {
  std::mt19937_64 rng(seed() + 7);
  cudaStream_t user = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
  const auto h = random_floats(rng, std::size_t(1) << 18); // 64 tiles of the scan: two groups
  std::vector<float> selected;
  for (float v : h)
    if (v > 0.25f) selected.push_back(v);
  {
    lf::Stream s = lf::Stream::wrap(user);
    lf::StreamGuard g(s);
    const Array x = lf::asarray(h, {std::int64_t(h.size())});
    x.eval();
    const auto before = lf::cumsum(x).get<float>();
    EXPECT_TRUE(Matches(x(x > 0.25f), selected, 0.0f));
    const std::vector<std::pair<const char*, std::function<void()>>> launches = {
        {"cumsum", [&] { lf::cumsum(x).eval(); }}, {"x[x > t]", [&] { x(x > 0.25f).eval(); }}};
    for (const auto& [name, launch] : launches) {
      CUDA_OK(cudaStreamBeginCapture(user, cudaStreamCaptureModeRelaxed));
      try {
        launch();
        ADD_FAILURE() << name << " was captured without an error";
      } catch (const lf::BackendError& e) {
        EXPECT_NE(std::string(e.what()).find("captured into a CUDA graph"), std::string::npos)
            << name << ": " << e.what();
      }
      cudaGraph_t graph = nullptr;
      CUDA_OK(cudaStreamEndCapture(user, &graph));
      if (graph) CUDA_OK(cudaGraphDestroy(graph));
    }
    const auto after = lf::cumsum(x).get<float>();
    ASSERT_EQ(after.size(), before.size());
    EXPECT_EQ(std::memcmp(after.data(), before.data(), h.size() * sizeof(float)), 0) << "seed " << seed();
    EXPECT_TRUE(Matches(x(x > 0.25f), selected, 0.0f));
  }
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

// ---- what from_pointer accepts and refuses ------------------------------------------------------------------
//
// Refused memory must be refused when it is wrapped, with an Error (not a BackendError: the backend is fine), and
// without any kernel reading it: these tests never evaluate an array whose memory could be refused.

// How the library prints addresses in its messages.
std::string hex(const void* p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, std::uint64_t(reinterpret_cast<std::uintptr_t>(p)));
  return buf;
}

// The message of the lf::Error (and not of a BackendError) that `f` throws, or a failure.
template <class F>::testing::AssertionResult RefusedWith(F&& f, std::vector<std::string> parts) {
  try {
    Array a = f();
    return ::testing::AssertionFailure() << "accepted (shape " << a.shape().size() << "-d)";
  } catch (const lf::BackendError& e) {
    return ::testing::AssertionFailure() << "BackendError instead of an Error about the memory: " << e.what();
  } catch (const lf::Error& e) {
    const std::string m = e.what();
    for (const auto& p : parts)
      if (m.find(p) == std::string::npos) return ::testing::AssertionFailure() << "no '" << p << "' in: " << m;
    return ::testing::AssertionSuccess() << m;
  }
}

// Checks that come before the memory is looked at, the same on every backend (they run in CI too).
TEST(FromPointer, ShapeStridesAlignmentAndZeroSize) {
  std::vector<double> host(64, 1.5);
  void* p = host.data();
  EXPECT_THROW(lf::from_pointer(p, {2, 3}, DType::Float64, {3}), lf::ShapeError);
  EXPECT_THROW(lf::from_pointer(p, {2, -3}, DType::Float64), lf::ShapeError);
  EXPECT_THROW(lf::from_pointer(p, {4, 4}, DType::Float64, {-4, 1}), lf::ShapeError) << "reads before the pointer";
  // Spans that do not fit in an address space: the multiplication, the sum over axes, and the size in bytes overflow.
  EXPECT_THROW(lf::from_pointer(p, {3}, DType::Float64, {INT64_MAX}), lf::ShapeError);
  EXPECT_THROW(lf::from_pointer(p, {2, 2}, DType::Float64, {INT64_MAX, INT64_MAX}), lf::ShapeError);
  EXPECT_THROW(lf::from_pointer(p, {2}, DType::Float64, {INT64_MAX / 4}), lf::ShapeError);
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(nullptr, {4}, DType::Float32); }, {"null"}));
  // Misaligned elements would fault on the GPU: refused on every backend, naming the element size.
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(static_cast<char*>(p) + 2, {4}, DType::Float32); },
                          {"not aligned", "4-byte", "float32"}));
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(static_cast<char*>(p) + 4, {4}, DType::Int64); },
                          {"not aligned", "8-byte", "int64"}));

  // A zero-size array reads nothing: its pointer is not looked at, and may be null or anything else.
  Array empty = lf::from_pointer(nullptr, {0}, DType::Float32);
  EXPECT_EQ(empty.shape(), (Shape{0}));
  EXPECT_EQ(lf::sum(empty).item<float>(), 0.0f);
  Array empty2 = lf::from_pointer(reinterpret_cast<void*>(std::uintptr_t{0x10}), {3, 0}, DType::Float64, {0, 7});
  EXPECT_EQ(empty2.shape(), (Shape{3, 0}));
  EXPECT_EQ((empty2 + 1.0).get<double>().size(), 0u);
  EXPECT_EQ(lf::sum(empty2, 1).get<double>().to_vector(), std::vector<double>(3, 0.0));
}

TEST(FromPointer, CpuBackendWrapsHostMemory) {
  if (lf::backend() != lf::Backend::Cpu) GTEST_SKIP() << "the CUDA backend refuses host memory (tested below)";
  std::mt19937_64 rng(seed() + 10);
  const auto host = random_floats(rng, 6 * 5);
  Array a = lf::from_pointer(const_cast<float*>(host.data()), {6, 5}, DType::Float32);
  std::vector<float> want(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) want[i] = host[i] * 2.0f + 1.0f;
  EXPECT_TRUE(Matches(a * 2.0f + 1.0f, want, 1e-6f));
  // The transpose by strides, (5, 6) with strides (1, 5).
  Array t = lf::from_pointer(const_cast<float*>(host.data()), {5, 6}, DType::Float32, {1, 5});
  std::vector<float> want_t(host.size());
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 6; ++j) want_t[i * 6 + j] = host[j * 5 + i];
  EXPECT_TRUE(Matches(t, want_t, 0.0f));
}

TEST_F(CudaStreams, FromPointerRefusesHostMemory) {
  std::vector<float> host(1024, 1.0f);
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(host.data(), {1024}, DType::Float32); },
                          {"from_pointer", hex(host.data()), "host memory", "pageable", "asarray"}));
  auto heap = std::make_unique<double[]>(100);
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(heap.get(), {10, 10}, DType::Float64); }, {"host memory"}));
  float on_stack[16] = {};
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(on_stack, {16}, DType::Float32); }, {"host memory"}));
  // The refusals left nothing behind: the backend still works.
  EXPECT_EQ((lf::arange(0.0, 8.0, 1.0, DType::Float32) * 2.0f).get<float>()[7], 14.0f);
}

// Pinned memory is refused too, although kernels could read it (over the host link): that would be a silent
// slowdown on every use, and asarray copies it to the device at full speed.
TEST_F(CudaStreams, FromPointerRefusesPinnedHostMemory) {
  void* pinned = nullptr;
  CUDA_OK(cudaMallocHost(&pinned, 4096));
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(pinned, {1024}, DType::Float32); },
                          {hex(pinned), "pinned host memory"}));
  CUDA_OK(cudaFreeHost(pinned));
  void* mapped = nullptr;
  CUDA_OK(cudaHostAlloc(&mapped, 4096, cudaHostAllocMapped));
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(mapped, {512}, DType::Float64); }, {"pinned host memory"}));
  CUDA_OK(cudaFreeHost(mapped));
  std::vector<float> registered(4096);
  CUDA_OK(cudaHostRegister(registered.data(), registered.size() * sizeof(float), cudaHostRegisterDefault));
  EXPECT_TRUE(
      RefusedWith([&] { return lf::from_pointer(registered.data(), {4096}, DType::Float32); }, {"pinned host memory"}));
  CUDA_OK(cudaHostUnregister(registered.data()));
}

// Allocations of 2 MiB in these tests: the driver reports an allocation's exact size whatever page size backs it.
constexpr std::size_t kAllocationFloats = std::size_t{1} << 19;

TEST_F(CudaStreams, FromPointerChecksTheAllocationsRange) {
  std::mt19937_64 rng(seed() + 11);
  constexpr std::size_t n = kAllocationFloats, bytes = n * sizeof(float);
  constexpr std::int64_t rows = 512, cols = 1024;
  const auto host = random_floats(rng, n);
  void* raw = nullptr;
  CUDA_OK(cudaMalloc(&raw, bytes));
  auto* dev = static_cast<float*>(raw);
  CUDA_OK(cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice));
  const std::string allocation = "[" + hex(dev) + ", " + hex(dev + n) + ") (" + std::to_string(bytes) + " bytes)";

  // One element too many: the message names the bytes asked for, their range, the allocation and the excess.
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(dev, {std::int64_t(n) + 1}, DType::Float32); },
                          {hex(dev), std::to_string(bytes + 4) + " bytes",
                           "[" + hex(dev) + ", " + hex(dev + n + 1) + ")", allocation, "the last 4 bytes"}));
  // Views that end exactly at the allocation's end are accepted and read right; one element further is not.
  {
    Array tail = lf::from_pointer(dev + 10, {std::int64_t(n) - 10}, DType::Float32);
    std::vector<float> want(host.begin() + 10, host.end());
    EXPECT_TRUE(Matches(tail, want, 0.0f));
    // The transpose, (cols, rows) with strides (1, cols): its highest element is the last one.
    Array t = lf::from_pointer(dev, {cols, rows}, DType::Float32, {1, cols});
    std::vector<float> want_t(n);
    for (std::int64_t i = 0; i < cols; ++i)
      for (std::int64_t j = 0; j < rows; ++j)
        want_t[std::size_t(i * rows + j)] = host[std::size_t(j * cols + i)] + 1.0f;
    EXPECT_TRUE(Matches(t + 1.0f, want_t, 1e-6f));
    // Every other element of the first half, as int32 bits.
    Array every_other = lf::from_pointer(dev, {std::int64_t(n) / 4}, DType::Int32, {2});
    EXPECT_EQ(every_other.get<std::int32_t>().size(), n / 4);
    lf::sync();
  }
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(dev + 10, {std::int64_t(n) - 9}, DType::Float32); },
                          {allocation, "the last 4 bytes"}));
  EXPECT_TRUE(RefusedWith(
      [&] {
        return lf::from_pointer(dev, {cols, rows + 1}, DType::Float32, {1, cols});
      },
      {allocation, "the last " + std::to_string(cols * 4) + " bytes"}));
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(dev, {std::int64_t(n) / 2 + 1}, DType::Float64); },
                          {allocation, "the last 8 bytes"}));
  // Misaligned for the element type, inside the allocation: refused before any kernel could fault on it.
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(reinterpret_cast<char*>(dev) + 2, {8}, DType::Float32); },
                          {"not aligned"}));
  CUDA_OK(cudaFree(dev));
  // None of this touched the context.
  EXPECT_EQ((lf::arange(0.0, 8.0, 1.0, DType::Float32) + 1.0f).get<float>()[7], 8.0f);
}

// Stream-ordered allocations (cudaMallocAsync) come from the device's memory pool: wrapped like cudaMalloc memory.
TEST_F(CudaStreams, FromPointerAcceptsStreamOrderedAllocations) {
  int pools = 0;
  CUDA_OK(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, lf::current_device()));
  if (!pools) GTEST_SKIP() << "no stream-ordered allocator on this device";
  std::mt19937_64 rng(seed() + 16);
  constexpr std::size_t n = kAllocationFloats;
  const auto host = random_floats(rng, n);
  cudaStream_t s = nullptr;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void* raw = nullptr;
  CUDA_OK(cudaMallocAsync(&raw, n * sizeof(float), s));
  CUDA_OK(cudaMemcpyAsync(raw, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
  CUDA_OK(cudaStreamSynchronize(s));
  {
    Array a = lf::from_pointer(raw, {std::int64_t(n)}, DType::Float32);
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = host[i] - 0.5f;
    EXPECT_TRUE(Matches(a - 0.5f, want, 1e-6f));
  }
  lf::sync();
  CUDA_OK(cudaFreeAsync(raw, s));
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaStreamDestroy(s));
}

TEST_F(CudaStreams, FromPointerAcceptsManagedMemory) {
  std::mt19937_64 rng(seed() + 12);
  constexpr std::size_t n = kAllocationFloats;
  void* raw = nullptr;
  CUDA_OK(cudaMallocManaged(&raw, n * sizeof(float)));
  auto* managed = static_cast<float*>(raw);
  const auto host = random_floats(rng, n);
  std::copy(host.begin(), host.end(), managed);
  {
    Array a = lf::from_pointer(managed, {std::int64_t(n)}, DType::Float32);
    std::vector<float> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = host[i] * 2.0f + 1.0f;
    EXPECT_TRUE(Matches(a * 2.0f + 1.0f, want, 1e-6f));
    Array rows = lf::from_pointer(managed + 16, {511, 1024}, DType::Float32);
    EXPECT_FLOAT_EQ(rows(510, 1023).item<float>(), host[16 + 510 * 1024 + 1023]);
  }
  const auto past = [&] { return lf::from_pointer(managed + 16, {512, 1024}, DType::Float32); };
  EXPECT_TRUE(RefusedWith(past, {hex(managed + 16), "the last 64 bytes"}));
  lf::sync();
  CUDA_OK(cudaFree(managed));
}

// A virtual-memory reservation holding two separate mappings (as PyTorch's expandable segments make): a span
// across the boundary is accepted; a span into the reservation's unmapped rest is not.
template <class F> F driver_function(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(p);
}

#define CU_OK(call)                                                                                                    \
  do {                                                                                                                 \
    const CUresult r_ = (call);                                                                                        \
    ASSERT_EQ(r_, CUDA_SUCCESS) << #call;                                                                              \
  } while (0)

TEST_F(CudaStreams, FromPointerAcrossVirtualMemoryMappings) {
  const int device = lf::current_device();
  const auto device_get = driver_function<decltype(&cuDeviceGet)>("cuDeviceGet");
  const auto attribute = driver_function<decltype(&cuDeviceGetAttribute)>("cuDeviceGetAttribute");
  ASSERT_TRUE(device_get && attribute);
  CUdevice cu_device = 0;
  CU_OK(device_get(&cu_device, device));
  int supported = 0;
  CU_OK(attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cu_device));
  if (!supported) GTEST_SKIP() << "device " << device << " has no virtual memory management";
  const auto granularity = driver_function<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
  const auto reserve = driver_function<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  const auto address_free = driver_function<decltype(&cuMemAddressFree)>("cuMemAddressFree");
  const auto create = driver_function<decltype(&cuMemCreate)>("cuMemCreate");
  const auto release = driver_function<decltype(&cuMemRelease)>("cuMemRelease");
  const auto map = driver_function<decltype(&cuMemMap)>("cuMemMap");
  const auto unmap = driver_function<decltype(&cuMemUnmap)>("cuMemUnmap");
  const auto set_access = driver_function<decltype(&cuMemSetAccess)>("cuMemSetAccess");
  ASSERT_TRUE(granularity && reserve && address_free && create && release && map && unmap && set_access);

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  std::size_t g = 0;
  CU_OK(granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUdeviceptr va = 0;
  CU_OK(reserve(&va, 3 * g, 0, 0, 0));
  CUmemGenericAllocationHandle handles[2] = {};
  // Undone however the test ends, after every array reading the memory is gone and the device is idle.
  struct Cleanup {
    decltype(address_free) free_va;
    decltype(release) release_handle;
    decltype(unmap) unmap_range;
    CUdeviceptr va;
    std::size_t g;
    CUmemGenericAllocationHandle* handles;
    int mapped = 0;
    ~Cleanup() {
      lf::sync();
      for (int i = 0; i < mapped; ++i) (void)unmap_range(va + CUdeviceptr(i) * g, g);
      for (int i = 0; i < 2; ++i)
        if (handles[i]) (void)release_handle(handles[i]);
      (void)free_va(va, 3 * g);
    }
  } cleanup{address_free, release, unmap, va, g, handles};
  for (int i = 0; i < 2; ++i) {
    CU_OK(create(&handles[i], g, &prop, 0));
    CU_OK(map(va + CUdeviceptr(i) * g, g, 0, handles[i], 0));
    cleanup.mapped = i + 1;
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_OK(set_access(va, 2 * g, &access, 1));

  std::mt19937_64 rng(seed() + 13);
  const std::size_t n = 2 * g / sizeof(float), half = g / sizeof(float);
  const auto host = random_floats(rng, n);
  auto* base = reinterpret_cast<float*>(va);
  CUDA_OK(cudaMemcpy(base, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  {
    Array across = lf::from_pointer(base + half - 100, {200}, DType::Float32);
    std::vector<float> want(host.begin() + std::ptrdiff_t(half) - 100, host.begin() + std::ptrdiff_t(half) + 100);
    EXPECT_TRUE(Matches(across, want, 0.0f));
    Array whole = lf::from_pointer(base, {std::int64_t(n)}, DType::Float32);
    EXPECT_TRUE(Matches(whole, host, 0.0f));
  }
  const std::string second = "[" + hex(base + half) + ", " + hex(base + n) + ")";
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(base + half, {std::int64_t(half) + 1}, DType::Float32); },
                          {second, "the last 4 bytes"}));
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(base, {std::int64_t(n) + 2}, DType::Float32); },
                          {"continued by mappings of its reservation up to " + hex(base + n), "the last 8 bytes"}));
}

TEST_F(CudaStreams, FromPointerOfAnotherDeviceNeedsAccess) {
  if (lf::device_count() < 2) GTEST_SKIP() << "needs two visible devices; " << lf::device_count() << " visible";
  const int here = lf::current_device(), other = here == 0 ? 1 : 0;
  std::mt19937_64 rng(seed() + 14);
  constexpr std::size_t n = kAllocationFloats;
  const auto host = random_floats(rng, n);
  float* theirs = nullptr;
  {
    lf::DeviceGuard on(other);
    void* raw = nullptr;
    CUDA_OK(cudaMalloc(&raw, n * sizeof(float)));
    theirs = static_cast<float*>(raw);
    CUDA_OK(cudaMemcpy(theirs, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  }
  int possible = 0;
  CUDA_OK(cudaDeviceCanAccessPeer(&possible, here, other));
  // Starts without peer access from here to there, and leaves it as it found it.
  const bool was_enabled = cudaDeviceDisablePeerAccess(other) == cudaSuccess;
  (void)cudaGetLastError();
  EXPECT_TRUE(RefusedWith(
      [&] { return lf::from_pointer(theirs, {std::int64_t(n)}, DType::Float32); },
      {"memory of device " + std::to_string(other), possible ? "possible but not enabled" : "no peer access"}));
  if (possible) {
    CUDA_OK(cudaDeviceEnablePeerAccess(other, 0));
    {
      Array a = lf::from_pointer(theirs, {std::int64_t(n)}, DType::Float32);
      std::vector<float> want(n);
      for (std::size_t i = 0; i < n; ++i) want[i] = host[i] + 1.0f;
      EXPECT_TRUE(Matches(a + 1.0f, want, 1e-6f));
    }
    EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(theirs + 1, {std::int64_t(n)}, DType::Float32); },
                            {"the last 4 bytes"}));
    lf::sync();
    if (!was_enabled) CUDA_OK(cudaDeviceDisablePeerAccess(other));
  }
  lf::DeviceGuard on(other);
  CUDA_OK(cudaFree(theirs));
}

// The CPU backend in a process that has a GPU (the backend is chosen once per process: a child process).
constexpr const char* kCpuChildMarker = "LAZYFUSE_TEST_STREAMS_CPU_CHILD";

TEST(FromPointerCpuChild, Run) {
  if (!std::getenv(kCpuChildMarker)) GTEST_SKIP() << "runs only in the child process of FromPointerOnTheCpuBackend";
  ASSERT_EQ(lf::backend(), lf::Backend::Cpu);
  std::mt19937_64 rng(seed() + 15);
  constexpr std::size_t n = 4096;
  const auto host = random_floats(rng, n);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = host[i] * 3.0f - 1.0f;

  void* dev = nullptr;
  CUDA_OK(cudaMalloc(&dev, n * sizeof(float)));
  EXPECT_TRUE(RefusedWith([&] { return lf::from_pointer(dev, {std::int64_t(n)}, DType::Float32); },
                          {hex(dev), "memory of CUDA device", "CPU backend"}));
  CUDA_OK(cudaFree(dev));

  // Managed and pinned memory are host-readable: the CPU backend wraps them.
  void* raw = nullptr;
  CUDA_OK(cudaMallocManaged(&raw, n * sizeof(float)));
  auto* managed = static_cast<float*>(raw);
  std::copy(host.begin(), host.end(), managed);
  EXPECT_TRUE(Matches(lf::from_pointer(managed, {std::int64_t(n)}, DType::Float32) * 3.0f - 1.0f, want, 1e-6f));
  CUDA_OK(cudaFree(managed));
  CUDA_OK(cudaMallocHost(&raw, n * sizeof(float)));
  auto* pinned = static_cast<float*>(raw);
  std::copy(host.begin(), host.end(), pinned);
  EXPECT_TRUE(Matches(lf::from_pointer(pinned, {std::int64_t(n)}, DType::Float32) * 3.0f - 1.0f, want, 1e-6f));
  CUDA_OK(cudaFreeHost(pinned));
  EXPECT_TRUE(Matches(
      lf::from_pointer(const_cast<float*>(host.data()), {std::int64_t(n)}, DType::Float32) * 3.0f - 1.0f, want, 1e-6f));
}

TEST_F(CudaStreams, FromPointerOnTheCpuBackend) {
  if (std::getenv(kCpuChildMarker)) GTEST_SKIP() << "the child itself";
  const auto r =
      lazyfuse_test::run_self("FromPointerCpuChild.Run", {"LAZYFUSE_BACKEND=cpu", std::string(kCpuChildMarker) + "=1",
                                                          "LAZYFUSE_TEST_SEED=" + std::to_string(seed())});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.describe();
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
  if (lazyfuse::config::snapshot().pool_enabled) { // the pass-through pool (memcheck's) caches nothing
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
  const auto child =
      lazyfuse_test::run_self("CudaStreams.PerThreadDefaultStreamChild",
                              {"LAZYFUSE_PER_THREAD_DEFAULT_STREAM=1", std::string(kChildMarker) + "=1",
                               "LAZYFUSE_TEST_REQUIRE_GPU=1", "LAZYFUSE_TEST_SEED=" + std::to_string(seed())});
  EXPECT_TRUE(child.ok()) << "the child test with LAZYFUSE_PER_THREAD_DEFAULT_STREAM=1 failed: " << child.describe();
}

} // namespace
