// Which executor serves materializations (decided once per process), and the counters they share.
#include "runtime/Executor.h"

#include "graph/Assert.h"
#include "graph/Config.h"

#include <lazyfuse/error.hpp>

#include <cstdio>
#include <string>

namespace lazyfuse::runtime {

namespace {

struct Selected {
  Executor* executor = nullptr;
  std::unique_ptr<Executor> owned;
};

Selected select_backend() {
  Selected s;
  const std::string& want = config::snapshot().backend;
  if (want != "cpu") {
    std::string reason;
    s.owned = make_cuda_executor(reason);
    if (s.owned) {
      s.executor = s.owned.get();
      return s;
    }
    if (want == "cuda") throw BackendError("LAZYFUSE_BACKEND=cuda, but CUDA is not usable: " + reason);
    std::fprintf(stderr, "lazyfuse: no usable CUDA device (%s); running on the CPU backend\n", reason.c_str());
  }
  s.executor = &cpu_executor();
  return s;
}

} // namespace

Counters& counters() {
  static Counters c;
  return c;
}

Executor& cpu_executor() {
  static Executor* e = make_cpu_executor().release(); // outlives every array's storage
  return *e;
}

Executor& executor() {
  static Selected s = select_backend();
  return *s.executor;
}

void Executor::run_with_error_word(codegen::LoweredKernel& kernel, const std::vector<void*>& outputs, void* word) {
  struct Clear {
    codegen::KernelArgs& args;
    ~Clear() { args.error_word = nullptr; }
  } clear{kernel.args};
  kernel.args.error_word = word;
  run(kernel, outputs);
}

std::uint32_t Executor::run_checked(codegen::LoweredKernel& kernel, const std::vector<void*>& outputs) {
  const std::uint32_t zero = 0;
  const auto error_word = upload(&zero, sizeof zero);
  run_with_error_word(kernel, outputs, error_word->data);
  std::uint32_t word = 0;
  download(*error_word, 0, &word, sizeof word);
  return word;
}

void Executor::run_replay(std::span<ReplayLaunch> launches, std::unique_ptr<ReplayState>&) {
  for (ReplayLaunch& l : launches) run(*l.kernel, l.outputs);
}

Executor::Tickets Executor::tagged_tickets(std::size_t, std::uint32_t) {
  LAZYFUSE_ASSERT(false, "tagged_tickets on a backend without device kernels");
  return {};
}

void Executor::run_passing_checks(codegen::LoweredKernel& kernel, const std::vector<void*>& outputs) {
  // The CPU backend runs kernels synchronously anyway: reading the word costs it nothing.
  (void)run_checked(kernel, outputs);
}

} // namespace lazyfuse::runtime
