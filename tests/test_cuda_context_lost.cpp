// A kernel that faults loses the CUDA context for the rest of the process. The error that reports the fault, and
// every later GPU operation, raise a BackendError that says so (naming the first error and that only a restart
// helps); nothing crashes or hangs, and arrays, streams and pools can still be dropped without a throw or an abort.
//
// A lost context cannot be undone, so each fault happens in a child process: this binary again, started by the
// parent tests (ContextLost.*) with LAZYFUSE_TEST_FAULT_CHILD=<fault> and --gtest_filter=ContextLostChild.Run. The
// faulting kernel is compiled here with NVRTC and launched through the runtime's internal launch call: no public
// API can fault on purpose. The child checks the errors; the parent checks the child's exit status and output.
// compute-sanitizer's memcheck reports the deliberate faults as errors, so scripts/gpu-check.sh leaves this program
// out of its memcheck stage.
#include "tests/child_process.h"
#include "tests/gpu_test.h"

#include "codegen/Nvrtc.h"
#include "runtime/CudaApi.h"

#include <lazyfuse/lazyfuse.hpp>

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace lf = lazyfuse;
namespace cu = lazyfuse::runtime::cuda;
using lf::Array;
using lf::DType;

constexpr const char* kChildVariable = "LAZYFUSE_TEST_FAULT_CHILD";
constexpr const char* kChildDone = "lazyfuse-test: the lost context was reported by every operation after ";

// ---- classification (no GPU needed) ---------------------------------------------------------------------------

TEST(ContextLost, StickyErrorsAreTheOnesCudaDocumentsAsNeedingARestart) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorLaunchTimeout, cudaErrorAssert, cudaErrorHardwareStackError,
                        cudaErrorIllegalInstruction, cudaErrorMisalignedAddress, cudaErrorInvalidAddressSpace,
                        cudaErrorInvalidPc, cudaErrorLaunchFailure, cudaErrorTensorMemoryLeak, cudaErrorContained,
                        cudaErrorMpsClientTerminated, cudaErrorExternalDevice}) {
    EXPECT_TRUE(cu::is_sticky(e)) << cudaGetErrorName(e);
    // The driver's code of the same failure has the same number.
    EXPECT_TRUE(cu::is_sticky(static_cast<CUresult>(e))) << cudaGetErrorName(e);
  }
  // Errors a process recovers from: a full device, a bad argument, a launch too large, "not ready".
  for (cudaError_t e : {cudaSuccess, cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorLaunchOutOfResources,
                        cudaErrorNotReady, cudaErrorInvalidDevice, cudaErrorNoDevice, cudaErrorInsufficientDriver,
                        cudaErrorPeerAccessNotEnabled, cudaErrorInvalidResourceHandle}) {
    EXPECT_FALSE(cu::is_sticky(e)) << cudaGetErrorName(e);
    EXPECT_FALSE(cu::is_sticky(static_cast<CUresult>(e))) << cudaGetErrorName(e);
  }
  EXPECT_FALSE(cu::context_lost()) << "this process has faulted nothing";
  EXPECT_NO_THROW(cu::require_context("a test"));
}

// ---- the child: fault, then check every operation ---------------------------------------------------------------

struct Fault {
  const char* name;   // LAZYFUSE_TEST_FAULT_CHILD's value
  const char* kernel; // in kSource
  // The error names CUDA may report for it; the first is the documented one.
  std::vector<std::string> errors;
};

const std::vector<Fault>& faults() {
  static const std::vector<Fault> f = {
      {"illegal-address", "lf_test_store", {"cudaErrorIllegalAddress"}},
      {"misaligned-address", "lf_test_store", {"cudaErrorMisalignedAddress"}},
      // __trap() ends the kernel with an exception whose name the architecture decides.
      {"trap", "lf_test_trap", {"cudaErrorLaunchFailure", "cudaErrorIllegalInstruction"}},
  };
  return f;
}

const Fault* fault_named(const std::string& name) {
  for (const Fault& f : faults())
    if (name == f.name) return &f;
  return nullptr;
}

const char* const kSource = R"(
extern "C" __global__ void lf_test_store(unsigned long long address) { *(volatile int*)address = 1; }
extern "C" __global__ void lf_test_trap(unsigned long long) { __trap(); }
)";

// Queues the faulting kernel on the current stream; the fault happens on the device, after this returns.
void launch_fault(const Fault& f, unsigned long long address) {
  const int device = lf::current_device();
  const auto& info = cu::device_info(device);
  lf::codegen::CompileOptions opt;
  opt.arch = info.cc_major * 10 + info.cc_minor;
  const auto compiled = lf::codegen::compile_cuda(kSource, "lf_test_fault", opt);
  // The module stays loaded for the rest of the (doomed) process: unloading it would race with the faulting launch.
  static cu::Module module;
  module = cu::Module::load(compiled.image.data());
  void* args[] = {&address};
  cu::launch(module.function(f.kernel), 1, 1, 0, static_cast<cudaStream_t>(lf::current_stream_native()), args);
}

// "" when `op` throws a BackendError saying that the context is lost and naming `first` (the error that lost it);
// else what happened instead.
std::string lost_by(const std::function<void()>& op, const std::string& first) {
  try {
    op();
    return "no error";
  } catch (const lf::BackendError& e) {
    const std::string m = e.what();
    for (const std::string& part : {std::string("the CUDA context is lost"), first, std::string("Restart the process")})
      if (m.find(part) == std::string::npos) return "no '" + part + "' in the BackendError: " + m;
    return "";
  } catch (const std::exception& e) {
    return std::string("not a BackendError: ") + e.what();
  }
}

// Without a GPU: sticky errors handed to the checking functions, as the CUDA calls would return them, from several
// threads at once. Exactly one of them is the first; every message after it names that one.
void check_simulated_loss() {
  EXPECT_FALSE(cu::context_lost());
  EXPECT_NO_THROW(cu::require_context("before"));
  // A recoverable error does not lose the context.
  try {
    cu::throw_cuda_error(cudaErrorInvalidValue, "a recoverable call", __FILE__, __LINE__);
  } catch (const lf::BackendError& e) {
    EXPECT_EQ(std::string(e.what()).find("context is lost"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(cu::context_lost());

  const cudaError_t sticky[] = {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorMisalignedAddress,
                                cudaErrorAssert};
  std::vector<std::string> messages(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < messages.size(); ++t)
    threads.emplace_back([&, t] {
      try {
        if (t % 2)
          cu::throw_cuda_error(sticky[t % 4], "a simulated call", __FILE__, __LINE__);
        else
          cu::throw_driver_error(static_cast<CUresult>(sticky[t % 4]), "a simulated driver call", __FILE__, __LINE__);
      } catch (const lf::BackendError& e) {
        messages[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(cu::context_lost());
  int firsts = 0;
  for (const std::string& m : messages) {
    EXPECT_NE(m.find("the CUDA context is lost"), std::string::npos) << m;
    EXPECT_NE(m.find("Restart the process"), std::string::npos) << m;
    if (m.find("the CUDA context is lost since") == std::string::npos) {
      ++firsts;
      std::printf("the error that lost the context: %s\n", m.c_str());
    }
  }
  EXPECT_EQ(firsts, 1) << "exactly one error is the one that lost the context";

  // Later: the operation's name, then the first error's text (its name and where it was reported).
  std::string later;
  try {
    cu::require_context("an operation after the loss");
    ADD_FAILURE() << "require_context did not throw after the loss";
  } catch (const lf::BackendError& e) {
    later = e.what();
  }
  std::printf("an error after the loss: %s\n", later.c_str());
  EXPECT_EQ(later.rfind("an operation after the loss: the CUDA context is lost since ", 0), 0u) << later;
  EXPECT_NE(later.find("simulated"), std::string::npos) << later;
  // A recoverable error after the loss says so too.
  try {
    cu::throw_cuda_error(cudaErrorInvalidValue, "a call after the loss", __FILE__, __LINE__);
  } catch (const lf::BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("the CUDA context is lost since"), std::string::npos) << e.what();
  }
  std::printf("%s%s\n", kChildDone, "simulated errors");
  std::fflush(stdout);
}

TEST(ContextLostChild, Run) {
  const char* which = std::getenv(kChildVariable);
  if (!which) GTEST_SKIP() << "runs only in the child processes of the ContextLost tests";
  if (std::string(which) == "simulated") return check_simulated_loss();
  const Fault* fault = fault_named(which);
  ASSERT_NE(fault, nullptr) << kChildVariable << "=" << which;
  ASSERT_EQ(lazyfuse_test::why_no_gpu(), "");

  // Work done before the fault, and objects that must be dropped after it.
  constexpr std::int64_t n = std::int64_t{1} << 20;
  Array kept = (lf::arange(0.0, double(n), 1.0, DType::Float32) * 2.0f).eval();
  ASSERT_EQ(kept(std::int64_t(12345)).item<float>(), 24690.0f);
  Array pending = kept + 1.0f;
  auto stream = std::make_unique<lf::Stream>();
  void* scratch = nullptr;
  ASSERT_EQ(cudaMalloc(&scratch, 4096), cudaSuccess);
  Array wrapped = lf::from_pointer(scratch, {1024}, DType::Float32);

  const unsigned long long address = std::string(which) == "misaligned-address"
                                         ? reinterpret_cast<unsigned long long>(scratch) + 1
                                         : 0x10; // the null page: mapped on no device
  launch_fault(*fault, address);

  // The first operation that waits for the device reports the fault itself.
  std::string first;
  try {
    lf::sync();
    ADD_FAILURE() << "sync() after the faulting kernel did not throw";
  } catch (const lf::BackendError& e) {
    const std::string m = e.what();
    std::printf("the fault's error: %s\n", m.c_str());
    for (const std::string& name : fault->errors)
      if (m.find(name) != std::string::npos) first = name;
    EXPECT_FALSE(first.empty()) << "none of the expected errors (" << fault->errors.front() << "...) in: " << m;
    EXPECT_NE(m.find("the CUDA context is lost"), std::string::npos) << m;
    EXPECT_NE(m.find("Restart the process"), std::string::npos) << m;
  }
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(cu::context_lost());

  // Every later operation of the CUDA backend: the same BackendError, naming the first error.
  const std::vector<std::pair<const char*, std::function<void()>>> ops = {
      {"sync again", [] { lf::sync(); }},
      {"evaluating an array", [&] { (void)pending.get<float>(); }},
      {"downloading a computed array", [&] { (void)kept.get<float>(); }},
      {"a new expression", [] { (void)(lf::arange(0.0, 64.0, 1.0, DType::Float32) * 3.0f).eval(); }},
      {"asarray (an upload)",
       [] {
         (void)lf::asarray(std::vector<float>{1, 2, 3});
       }},
      {"data_ptr of a lazy array", [&] { (void)(pending * 2.0f).data_ptr(); }},
      {"reading a wrapped pointer", [&] { (void)lf::sum(wrapped).item<float>(); }},
      {"from_pointer", [&] { (void)lf::from_pointer(scratch, {16}, DType::Float32); }},
      {"a new stream", [] { lf::Stream s; }},
      {"synchronizing a stream", [&] { stream->synchronize(); }},
      {"memory::free_all_blocks", [] { lf::memory::free_all_blocks(); }},
      {"set_device", [] { lf::set_device(0); }},
  };
  for (const auto& [what, op] : ops) EXPECT_EQ(lost_by(op, first), "") << what;

  // From several threads at once, each on its own.
  std::vector<std::string> results(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < results.size(); ++t)
    threads.emplace_back([&, t] { results[t] = lost_by([&] { (void)(kept * float(t)).get<float>(); }, first); });
  for (auto& th : threads) th.join();
  for (std::size_t t = 0; t < results.size(); ++t) EXPECT_EQ(results[t], "") << "thread " << t;

  // Dropping everything neither throws nor aborts (a throw from a destructor would terminate this process).
  kept = Array();
  pending = Array();
  wrapped = Array();
  stream.reset();
  (void)cudaFree(scratch);
  std::printf("%s%s\n", kChildDone, first.c_str());
  std::fflush(stdout);
}

// ---- the parents -------------------------------------------------------------------------------------------------

void run_fault_child(const char* name) {
  LAZYFUSE_SKIP_WITHOUT_GPU();
  if (std::getenv(kChildVariable)) GTEST_SKIP() << "the child itself";
  const Fault* fault = fault_named(name);
  ASSERT_NE(fault, nullptr);
  const auto r = lazyfuse_test::run_self("ContextLostChild.Run", {std::string(kChildVariable) + "=" + name});
  EXPECT_TRUE(r.ok()) << "the child with " << kChildVariable << "=" << name << ": " << r.describe();
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.describe();
  const auto done = r.output.find(kChildDone);
  ASSERT_NE(done, std::string::npos) << "the child did not get to its end: " << r.describe();
  // The name of the error that lost the context, as the child printed it.
  const std::string first = r.output.substr(done + std::string(kChildDone).size(),
                                            r.output.find('\n', done) - done - std::string(kChildDone).size());
  bool expected = false;
  for (const std::string& e : fault->errors) expected = expected || first == e;
  EXPECT_TRUE(expected) << "the child's first error: '" << first << "'";
}

TEST(ContextLost, SimulatedStickyErrorsLoseTheContextOnce) {
  if (std::getenv(kChildVariable)) GTEST_SKIP() << "the child itself";
  const auto r = lazyfuse_test::run_self("ContextLostChild.Run", {std::string(kChildVariable) + "=simulated"});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.describe();
  EXPECT_NE(r.output.find(std::string(kChildDone) + "simulated errors"), std::string::npos) << r.describe();
}

TEST(ContextLost, IllegalAddress) {
  run_fault_child("illegal-address");
}

TEST(ContextLost, MisalignedAddress) {
  run_fault_child("misaligned-address");
}

TEST(ContextLost, Trap) {
  run_fault_child("trap");
}

} // namespace
