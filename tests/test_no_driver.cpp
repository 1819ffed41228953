// Behaviour without a CUDA driver (CI's machines): the library reports why and serves from the CPU backend.
// On a machine with a usable device these tests skip: they describe the other case.
#include "runtime/CudaApi.h"
#include "runtime/MemoryPool.h"
#include "runtime/Streams.h"

#include <lazyfuse/error.hpp>
#include <lazyfuse/runtime.hpp>

#include <gtest/gtest.h>

namespace cu = lazyfuse::runtime::cuda;
using lazyfuse::BackendError;
using lazyfuse::runtime::Event;
using lazyfuse::runtime::MemoryPool;

class NoCuda : public ::testing::Test {
protected:
  void SetUp() override {
    if (cu::availability().ok) GTEST_SKIP() << "CUDA is available; these tests check the behaviour without it";
  }
};

TEST_F(NoCuda, AvailabilityExplainsWhy) {
  const cu::Availability& a = cu::availability();
  EXPECT_FALSE(a.ok);
  EXPECT_FALSE(a.reason.empty());
  EXPECT_EQ(a.device_count, 0);
  EXPECT_EQ(&a, &cu::availability()) << "probed once";
  EXPECT_EQ(cu::unavailable_message().rfind("CUDA not available: ", 0), 0u) << cu::unavailable_message();
}

TEST_F(NoCuda, DevicesFallBackToZero) {
  EXPECT_EQ(lazyfuse::device_count(), 0);
  EXPECT_EQ(lazyfuse::current_device(), 0);
  EXPECT_NO_THROW(lazyfuse::set_device(0));
  EXPECT_THROW(lazyfuse::set_device(1), BackendError);
  EXPECT_THROW(lazyfuse::set_device(-1), BackendError);
  try {
    lazyfuse::set_device(2);
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA not available"), std::string::npos) << e.what();
  }
  { lazyfuse::DeviceGuard g(0); }
  EXPECT_THROW(cu::device_info(0), BackendError);
}

TEST_F(NoCuda, StreamsAreNoOps) {
  lazyfuse::Stream s;
  EXPECT_EQ(s.native(), nullptr);
  EXPECT_NO_THROW(s.synchronize());
  EXPECT_EQ(lazyfuse::Stream::null().native(), nullptr);
  int dummy = 0;
  EXPECT_EQ(lazyfuse::Stream::wrap(&dummy).native(), nullptr);
  lazyfuse::Stream moved = std::move(s);
  EXPECT_EQ(moved.native(), nullptr);
  {
    lazyfuse::StreamGuard g(moved);
    EXPECT_EQ(lazyfuse::current_stream_native(), nullptr);
  }
  EXPECT_EQ(lazyfuse::current_stream_native(), nullptr);
  EXPECT_THROW(Event{}, BackendError);
}

TEST_F(NoCuda, MemoryStatsAreZero) {
  EXPECT_EQ(lazyfuse::memory::used_bytes(), 0u);
  EXPECT_EQ(lazyfuse::memory::total_bytes(), 0u);
  EXPECT_NO_THROW(lazyfuse::memory::free_all_blocks());
  EXPECT_NO_THROW(lazyfuse::memory::set_limit(1024));
  EXPECT_EQ(lazyfuse::memory::get_limit(), 0u);
  EXPECT_THROW(MemoryPool::for_device(0), BackendError);
}

TEST_F(NoCuda, DriverApiIsRefused) {
  EXPECT_THROW(cu::driver(), BackendError);
  EXPECT_THROW(cu::Module::load("not a module"), BackendError);
  try {
    cu::Module::load("not a module");
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA not available"), std::string::npos) << e.what();
  }
}
