// The CUDA layer of the runtime: availability, devices, streams, events, the memory pool and driver-API modules.
//
// Without a driver only the "NoCuda" and plain tests run; the GPU tests skip, unless LAZYFUSE_TEST_REQUIRE_GPU=1,
// which turns a missing device into a failure (for CI machines that must have one).
#include "tests/gpu_test.h"

#include "runtime/CudaApi.h"
#include "runtime/MemoryPool.h"
#include "runtime/Streams.h"

#include <lazyfuse/error.hpp>
#include <lazyfuse/runtime.hpp>

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using lazyfuse_test::require_gpu;

using lazyfuse::BackendError;
using lazyfuse::OutOfMemoryError;
using lazyfuse::runtime::DeviceAllocation;
using lazyfuse::runtime::Event;
using lazyfuse::runtime::MemoryPool;
using lazyfuse::runtime::PoolMode;
using lazyfuse::runtime::PoolOptions;
namespace cu = lazyfuse::runtime::cuda;

constexpr std::size_t kMiB = std::size_t{1} << 20;

// ---- everywhere -----------------------------------------------------------------------------------------

TEST(CudaCheck, ThrowsBackendErrorNamingTheErrorAndTheCall) {
  EXPECT_NO_THROW(LAZYFUSE_CUDA_CHECK(cudaSuccess));
  try {
    cu::check(cudaErrorInvalidValue, "cudaMemcpy(dst, src, n, kind)", "file.cpp", 42);
    FAIL() << "no exception";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cudaErrorInvalidValue"), std::string::npos) << m;
    EXPECT_NE(m.find("invalid argument"), std::string::npos) << m;
    EXPECT_NE(m.find("cudaMemcpy(dst, src, n, kind)"), std::string::npos) << m;
    EXPECT_NE(m.find("file.cpp:42"), std::string::npos) << m;
  }
}

TEST(MemoryLimit, ParsesBytesAndPercent) {
  using lazyfuse::runtime::parse_memory_limit;
  EXPECT_EQ(parse_memory_limit("", 1000), 0u);
  EXPECT_EQ(parse_memory_limit("0", 1000), 0u);
  EXPECT_EQ(parse_memory_limit("8589934592", 0), std::size_t{8589934592});
  EXPECT_EQ(parse_memory_limit(" 4096 ", 0), 4096u);
  EXPECT_EQ(parse_memory_limit("90%", 1000), 900u);
  EXPECT_EQ(parse_memory_limit("12.5%", 1000), 125u);
  EXPECT_EQ(parse_memory_limit("100%", std::size_t{80} << 30), std::size_t{80} << 30);
  for (const char* bad : {"abc", "-5", "12GB", "0%", "120%", "%", "1e9", "99999999999999999999999"})
    EXPECT_THROW(parse_memory_limit(bad, 1000), lazyfuse::Error) << bad;
  try {
    parse_memory_limit("lots", 1000);
  } catch (const lazyfuse::Error& e) {
    EXPECT_NE(std::string(e.what()).find("LAZYFUSE_GPU_MEMORY_LIMIT"), std::string::npos);
  }
}

TEST(MemoryLimit, FormatsBytes) {
  using lazyfuse::runtime::format_bytes;
  EXPECT_EQ(format_bytes(300), "300 bytes");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes(512 * kMiB), "512.00 MiB");
  EXPECT_EQ(format_bytes(1610612736), "1.50 GiB");
}

// ---- without CUDA ---------------------------------------------------------------------------------------

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cu::availability().ok) {
      if (require_gpu()) FAIL() << "LAZYFUSE_TEST_REQUIRE_GPU=1 but " << cu::unavailable_message();
      GTEST_SKIP() << cu::unavailable_message();
    }
    lazyfuse::set_device(0);
  }
};

// Host copy of a device buffer, after the stream's work.
std::vector<unsigned char> read_back(const void* p, std::size_t n, cudaStream_t s) {
  std::vector<unsigned char> h(n);
  LAZYFUSE_CUDA_CHECK(cudaMemcpyAsync(h.data(), p, n, cudaMemcpyDeviceToHost, s));
  LAZYFUSE_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

// Compiles CUDA C++ with NVRTC to a cubin for device 0 (or PTX, NUL-terminated, when `ptx`).
std::string compile(const char* source, bool ptx) {
  const cu::DeviceInfo& d = cu::device_info(0);
  const std::string arch =
      std::string(ptx ? "-arch=compute_" : "-arch=sm_") + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
  nvrtcProgram prog = nullptr;
  EXPECT_EQ(nvrtcCreateProgram(&prog, source, "test.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const char* options[] = {arch.c_str(), "-std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  EXPECT_EQ(r, NVRTC_SUCCESS) << log;
  std::string image;
  std::size_t size = 0;
  if (ptx) {
    EXPECT_EQ(nvrtcGetPTXSize(prog, &size), NVRTC_SUCCESS);
    image.resize(size); // size counts the terminating NUL
    EXPECT_EQ(nvrtcGetPTX(prog, image.data()), NVRTC_SUCCESS);
  } else {
    EXPECT_EQ(nvrtcGetCUBINSize(prog, &size), NVRTC_SUCCESS);
    image.resize(size);
    EXPECT_EQ(nvrtcGetCUBIN(prog, image.data()), NVRTC_SUCCESS);
  }
  nvrtcDestroyProgram(&prog);
  return image;
}

constexpr const char* kKernels = R"(
extern "C" __global__ void fill(float* out, int n, float base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = base + 2.0f * i;
}
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
)";

TEST_F(Gpu, DeviceInfoIsSane) {
  EXPECT_GE(lazyfuse::device_count(), 1);
  const cu::DeviceInfo& d = cu::device_info(0);
  EXPECT_EQ(&d, &cu::device_info(0)) << "cached";
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc_major, 7);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.total_memory, 0u);
  EXPECT_GT(d.max_threads_per_sm, 0);
  EXPECT_GT(d.l2_bytes, 0u);
  EXPECT_GE(d.driver_version, d.runtime_version);
  EXPECT_THROW(cu::device_info(lazyfuse::device_count()), BackendError);
  EXPECT_THROW(lazyfuse::set_device(lazyfuse::device_count()), BackendError);
  { lazyfuse::DeviceGuard g(lazyfuse::device_count() - 1); }
  EXPECT_EQ(lazyfuse::current_device(), 0);
}

TEST_F(Gpu, StreamsWrapMoveAndGuard) {
  cudaStream_t raw = nullptr;
  ASSERT_EQ(cudaStreamCreate(&raw), cudaSuccess);
  {
    lazyfuse::Stream w = lazyfuse::Stream::wrap(raw);
    EXPECT_EQ(w.native(), raw);
    w.synchronize();
    lazyfuse::Stream own;
    ASSERT_NE(own.native(), nullptr);
    unsigned flags = 0;
    ASSERT_EQ(cudaStreamGetFlags(static_cast<cudaStream_t>(own.native()), &flags), cudaSuccess);
    EXPECT_EQ(flags & cudaStreamNonBlocking, unsigned{cudaStreamNonBlocking});
    void* own_native = own.native();
    lazyfuse::Stream moved = std::move(own);
    EXPECT_EQ(own.native(), nullptr);
    EXPECT_EQ(moved.native(), own_native);

    void* const before = lazyfuse::current_stream_native();
    {
      lazyfuse::StreamGuard g1(w);
      EXPECT_EQ(lazyfuse::current_stream_native(), raw);
      {
        lazyfuse::StreamGuard g2(moved);
        EXPECT_EQ(lazyfuse::current_stream_native(), own_native);
      }
      EXPECT_EQ(lazyfuse::current_stream_native(), raw);
      // Guards are per thread.
      void* other = raw;
      std::thread([&] { other = lazyfuse::current_stream_native(); }).join();
      EXPECT_EQ(other, lazyfuse::Stream::null().native());
    }
    EXPECT_EQ(lazyfuse::current_stream_native(), before);
    moved.synchronize();
    lazyfuse::Stream::null().synchronize();
  }
  // The wrapped stream survived its Stream.
  EXPECT_EQ(cudaStreamQuery(raw), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(raw), cudaSuccess);
}

TEST_F(Gpu, EventOrdersStreams) {
  lazyfuse::Stream a, b;
  auto sa = static_cast<cudaStream_t>(a.native());
  auto sb = static_cast<cudaStream_t>(b.native());
  MemoryPool& pool = MemoryPool::for_device(0);
  DeviceAllocation buf = pool.allocate_buffer(64 * kMiB, sa);
  ASSERT_EQ(cudaMemsetAsync(buf.get(), 0x11, 64 * kMiB, sa), cudaSuccess);
  Event e;
  e.record(sa);
  e.wait_on(sb);
  ASSERT_EQ(cudaMemsetAsync(buf.get(), 0x22, 64, sb), cudaSuccess);
  const auto h = read_back(buf.get(), 128, sb);
  EXPECT_EQ(h[0], 0x22);
  EXPECT_EQ(h[127], 0x11);
  e.synchronize();
  EXPECT_TRUE(e.query());
  Event moved = std::move(e);
  EXPECT_EQ(e.native(), nullptr);
  EXPECT_NE(moved.native(), nullptr);
  buf.set_stream(sb);
}

TEST_F(Gpu, PoolReusesBlocksOnTheSameStream) {
  MemoryPool pool(0, PoolOptions{});
  lazyfuse::Stream s;
  auto st = static_cast<cudaStream_t>(s.native());
  void* p = pool.allocate(1000, st);
  EXPECT_EQ(pool.used_bytes(), 1024u);
  EXPECT_EQ(pool.total_bytes(), MemoryPool::kSmallSegment);
  pool.deallocate(p, st);
  EXPECT_EQ(pool.used_bytes(), 0u);
  EXPECT_EQ(pool.total_bytes(), MemoryPool::kSmallSegment) << "freed blocks stay cached";
  void* q = pool.allocate(1000, st);
  EXPECT_EQ(q, p);
  pool.deallocate(q, st);
  void* r = pool.allocate(600, st); // same 1024-byte class
  EXPECT_EQ(r, p);
  pool.deallocate(r, st);

  void* big = pool.allocate(12 * kMiB + 1, st);
  pool.deallocate(big, st);
  EXPECT_EQ(pool.allocate(12 * kMiB, st), big);
  pool.deallocate(big, st);

  const lazyfuse::runtime::PoolStats stats = pool.stats();
  EXPECT_EQ(stats.allocations, 5u);
  EXPECT_EQ(stats.cache_hits, 3u);
  EXPECT_EQ(stats.device_mallocs, 2u);
  EXPECT_EQ(stats.peak_used_bytes, 12 * kMiB + 512);
  pool.free_all_blocks();
  EXPECT_EQ(pool.total_bytes(), 0u);
  EXPECT_EQ(pool.stats().device_frees, 2u);
}

TEST_F(Gpu, PoolPointersAreAlignedAndDistinct) {
  MemoryPool pool(0, PoolOptions{});
  lazyfuse::Stream s1, s2;
  std::vector<std::pair<void*, cudaStream_t>> live;
  std::size_t small_used = 0;
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{255}, std::size_t{511},
                        std::size_t{513}, std::size_t{4097}, kMiB, kMiB + 1, 7 * kMiB + 3, 33 * kMiB}) {
    for (cudaStream_t st : {static_cast<cudaStream_t>(s1.native()), static_cast<cudaStream_t>(s2.native())}) {
      void* p = pool.allocate(n, st);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u) << n;
      live.emplace_back(p, st);
      if (n <= kMiB) small_used += std::max<std::size_t>((n + 511) / 512 * 512, 512);
    }
  }
  std::vector<void*> ptrs;
  for (auto& [p, st] : live) ptrs.push_back(p);
  std::sort(ptrs.begin(), ptrs.end());
  EXPECT_EQ(std::adjacent_find(ptrs.begin(), ptrs.end()), ptrs.end());
  EXPECT_GE(pool.used_bytes(), small_used);
  // Every byte handed out is writable.
  for (auto& [p, st] : live) ASSERT_EQ(cudaMemsetAsync(p, 0, 1, st), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (auto& [p, st] : live) pool.deallocate(p, st);
  EXPECT_EQ(pool.used_bytes(), 0u);
  pool.free_all_blocks();
  EXPECT_EQ(pool.total_bytes(), 0u);
}

TEST_F(Gpu, LimitThrowsOutOfMemoryAndThePoolKeepsWorking) {
  MemoryPool& pool = MemoryPool::for_device(0);
  const std::size_t saved = lazyfuse::memory::get_limit();
  lazyfuse::memory::set_limit(64 * kMiB);
  EXPECT_EQ(lazyfuse::memory::get_limit(), 64 * kMiB);
  lazyfuse::Stream s;
  auto st = static_cast<cudaStream_t>(s.native());
  try {
    DeviceAllocation held = pool.allocate_buffer(16 * kMiB, st);
    (void)pool.allocate(256 * kMiB, st);
    ADD_FAILURE() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("asked for 256.00 MiB (268435456 bytes) on device 0"), std::string::npos) << m;
    EXPECT_NE(m.find("16.00 MiB used"), std::string::npos) << m;
    EXPECT_NE(m.find("cached"), std::string::npos) << m;
    EXPECT_NE(m.find("limit 64.00 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("free of"), std::string::npos) << m;
  }
  EXPECT_GE(pool.stats().out_of_memory, 1u);
  {
    DeviceAllocation small = pool.allocate_buffer(kMiB, st);
    ASSERT_EQ(cudaMemsetAsync(small.get(), 1, kMiB, st), cudaSuccess);
    s.synchronize();
  }
  lazyfuse::memory::set_limit(saved);

  // A real device failure: more than any GPU has, with no limit.
  try {
    (void)pool.allocate(std::size_t{1} << 50, st);
    ADD_FAILURE() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("1125899906842624 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the failed cudaMalloc must not linger";
  void* p = pool.allocate(4096, st);
  ASSERT_EQ(cudaMemsetAsync(p, 0, 4096, st), cudaSuccess);
  s.synchronize();
  pool.deallocate(p, st);
}

TEST_F(Gpu, FreeAllBlocksDropsTotalToUsed) {
  MemoryPool pool(0, PoolOptions{});
  lazyfuse::Stream s;
  auto st = static_cast<cudaStream_t>(s.native());
  // Sizes of their own segments, so that each is freed whole.
  void* a = pool.allocate(16 * kMiB, st);
  void* b = pool.allocate(32 * kMiB, st);
  pool.deallocate(b, st);
  EXPECT_EQ(pool.used_bytes(), 16 * kMiB);
  EXPECT_EQ(pool.total_bytes(), 48 * kMiB);
  pool.free_all_blocks();
  EXPECT_EQ(pool.total_bytes(), pool.used_bytes());
  pool.deallocate(a, st);
  pool.free_all_blocks();
  EXPECT_EQ(pool.total_bytes(), 0u);

  // The same through the public API, on the current device's pool.
  {
    lazyfuse::Stream s2;
    DeviceAllocation x = MemoryPool::for_device(0).allocate_buffer(3 * kMiB, static_cast<cudaStream_t>(s2.native()));
    EXPECT_GE(lazyfuse::memory::used_bytes(), 3 * kMiB);
  }
  lazyfuse::memory::free_all_blocks();
  EXPECT_EQ(lazyfuse::memory::total_bytes(), lazyfuse::memory::used_bytes());
}

TEST_F(Gpu, PassThroughModeMallocsEveryBuffer) {
  MemoryPool pool(0, PoolOptions{PoolMode::PassThrough, 0});
  EXPECT_EQ(pool.mode(), PoolMode::PassThrough);
  lazyfuse::Stream s;
  auto st = static_cast<cudaStream_t>(s.native());
  void* p = pool.allocate(1000, st);
  void* q = pool.allocate(1000, st);
  EXPECT_NE(p, q);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(pool.used_bytes(), 2000u);
  EXPECT_EQ(pool.total_bytes(), 2000u);
  pool.deallocate(p, st);
  EXPECT_EQ(pool.used_bytes(), 1000u);
  EXPECT_EQ(pool.total_bytes(), 1000u);
  pool.set_limit(1500);
  EXPECT_THROW((void)pool.allocate(1000, st), OutOfMemoryError);
  pool.set_limit(0);
  void* r = pool.allocate(1000, st);
  pool.deallocate(q, st);
  pool.deallocate(r, st);
  const lazyfuse::runtime::PoolStats stats = pool.stats();
  EXPECT_EQ(stats.device_mallocs, 3u);
  EXPECT_EQ(stats.device_frees, 3u);
  EXPECT_EQ(stats.used_bytes, 0u);
  EXPECT_EQ(stats.total_bytes, 0u);
  EXPECT_EQ(stats.peak_used_bytes, 2000u);
}

TEST_F(Gpu, BlockFreedOnOneStreamWaitsForItBeforeAnotherStreamReusesIt) {
  cu::Module m = cu::Module::load(compile(kKernels, false).data());
  CUfunction spin = m.function("spin");
  MemoryPool pool(0, PoolOptions{});
  lazyfuse::Stream a, b;
  auto sa = static_cast<cudaStream_t>(a.native());
  auto sb = static_cast<cudaStream_t>(b.native());
  const std::size_t n = 64 * kMiB;

  void* p = pool.allocate(n, sa);
  // About 0.1 s of work on A, then A writes its pattern, and the buffer is freed on A with that still queued.
  long long cycles = 200'000'000;
  void* args[] = {&cycles};
  cu::launch(spin, 1, 1, 0, sa, args);
  ASSERT_EQ(cudaMemsetAsync(p, 0xAA, n, sa), cudaSuccess);
  pool.deallocate(p, sa);

  void* q = pool.allocate(n, sb);
  EXPECT_NE(q, p) << "A is still busy, so its block cannot be ready for B yet";
  ASSERT_EQ(cudaMemsetAsync(q, 0x55, n, sb), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(sb), cudaSuccess);
  a.synchronize();
  const auto h = read_back(q, n, sb);
  EXPECT_EQ(std::count(h.begin(), h.end(), 0x55), static_cast<std::ptrdiff_t>(n)) << "B's data was overwritten";

  // Once A's work is done the block moves over to B without a new cudaMalloc.
  const std::uint64_t mallocs = pool.stats().device_mallocs;
  void* r = pool.allocate(n, sb);
  EXPECT_EQ(r, p);
  EXPECT_EQ(pool.stats().device_mallocs, mallocs);
  pool.deallocate(q, sb);
  pool.deallocate(r, sb);
  ASSERT_EQ(cudaStreamSynchronize(sb), cudaSuccess);
}

TEST_F(Gpu, DestroyedStreamDoesNotPassItsBlocksToANewStream) {
  MemoryPool& pool = MemoryPool::for_device(0);
  void* p = nullptr;
  {
    lazyfuse::Stream s;
    auto st = static_cast<cudaStream_t>(s.native());
    p = pool.allocate(8192, st);
    ASSERT_EQ(cudaMemsetAsync(p, 0, 8192, st), cudaSuccess);
    pool.deallocate(p, st);
  }
  lazyfuse::Stream t;
  auto tt = static_cast<cudaStream_t>(t.native());
  void* q = pool.allocate(8192, tt);
  ASSERT_EQ(cudaMemsetAsync(q, 1, 8192, tt), cudaSuccess);
  t.synchronize();
  pool.deallocate(q, tt);
}

TEST_F(Gpu, ModuleFromCubinAndPtxLaunches) {
  for (bool ptx : {false, true}) {
    SCOPED_TRACE(ptx ? "PTX" : "cubin");
    const std::string image = compile(kKernels, ptx);
    cu::Module m = cu::Module::load(image.data());
    ASSERT_TRUE(m);
    EXPECT_EQ(m.device(), 0);
    CUfunction f = m.function("fill");
    EXPECT_THROW(m.function("no_such_kernel"), BackendError);
    EXPECT_GT(cu::max_active_blocks_per_sm(f, 256, 0), 0);
    EXPECT_GT(cu::function_attribute(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 0);

    lazyfuse::Stream s;
    auto st = static_cast<cudaStream_t>(s.native());
    int n = 1000;
    float base = 3.0f;
    DeviceAllocation out = MemoryPool::for_device(0).allocate_buffer(n * sizeof(float), st);
    void* out_ptr = out.get();
    void* args[] = {&out_ptr, &n, &base};
    cu::launch(f, (n + 255) / 256, 256, 0, st, args);
    cu::launch(f, 0, 256, 0, st, args); // empty grid: nothing
    std::vector<float> h(n);
    ASSERT_EQ(cudaMemcpyAsync(h.data(), out_ptr, n * sizeof(float), cudaMemcpyDeviceToHost, st), cudaSuccess);
    s.synchronize();
    for (int i = 0; i < n; ++i) ASSERT_EQ(h[i], base + 2.0f * i) << i;

    cu::Module moved = std::move(m);
    EXPECT_FALSE(m);
    EXPECT_TRUE(moved);
  }
  try {
    (void)cu::Module::load(".version 9.0\n.target sm_90\n.address_size 64\nthis is not ptx\n");
    ADD_FAILURE() << "bad PTX loaded";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load a CUDA module"), std::string::npos) << e.what();
  }
}

TEST_F(Gpu, ThreadsShareThePool) {
  MemoryPool& pool = MemoryPool::for_device(0);
  const std::size_t used_before = pool.used_bytes();
  std::vector<std::thread> threads;
  std::vector<std::string> failures(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        lazyfuse::set_device(0);
        lazyfuse::Stream s;
        lazyfuse::StreamGuard g(s);
        auto st = static_cast<cudaStream_t>(lazyfuse::current_stream_native());
        std::mt19937 rng(t);
        std::vector<DeviceAllocation> live;
        for (int i = 0; i < 300; ++i) {
          const std::size_t n = std::size_t{1} << (rng() % 24);
          live.push_back(pool.allocate_buffer(n, st));
          LAZYFUSE_CUDA_CHECK(cudaMemsetAsync(live.back().get(), t, std::min<std::size_t>(n, 4096), st));
          if (rng() % 3 == 0) live.erase(live.begin() + rng() % live.size());
        }
        s.synchronize();
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
  EXPECT_EQ(pool.used_bytes(), used_before);
}

} // namespace
