// Which executor serves materializations (decided once per process), and the counters they share.
#include "runtime/Executor.h"

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

} // namespace lazyfuse::runtime
