// The CPU backend's executor: host buffers, kernels run by the interpreter of runtime/CpuBackend.h. The counterpart
// of runtime/CudaExecutor.cpp; both are made by their factory in runtime/Executor.h.
#include "graph/Config.h"
#include "runtime/CpuBackend.h"
#include "runtime/Executor.h"
#include "runtime/HostPool.h"
#include "runtime/LlvmCodegen.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>

namespace lazyfuse::runtime {

namespace {

// A buffer of the host pool (runtime/HostPool.h): a reused block's pages are already mapped, so a fresh output
// does not page-fault on every run.
class HostStorage : public graph::Storage {
public:
  explicit HostStorage(std::size_t n) {
    bytes = n;
    data = HostPool::instance().allocate(n);
  }
  ~HostStorage() override { HostPool::instance().deallocate(data); }
};

class CpuExecutor final : public Executor {
public:
  Backend kind() const override { return Backend::Cpu; }
  std::shared_ptr<graph::Storage> allocate(std::size_t bytes) override { return std::make_shared<HostStorage>(bytes); }
  std::shared_ptr<graph::Storage> upload(const void* host, std::size_t bytes) override {
    auto s = std::make_shared<HostStorage>(bytes);
    if (bytes) std::memcpy(s->data, host, bytes);
    return s;
  }
  void download(const graph::Storage& s, std::size_t off, void* host, std::size_t bytes) override {
    if (bytes) std::memcpy(host, static_cast<const char*>(s.data) + off, bytes);
  }
  void run(const codegen::LoweredKernel& k, const std::vector<void*>& outputs) override {
    // The CPU backend has nothing to compile; it still counts structures, so tests of the kernel cache's
    // behaviour (how many distinct kernels a loop needs) run in CI.
    {
      std::lock_guard lock(mutex_);
      if (seen_.insert(k.ir.hash).second)
        counters().misses++;
      else
        counters().memory_hits++;
    }
    codegen::KernelArgs args = k.args;
    args.outputs = outputs;
    run_on_cpu(k.ir, args, config::snapshot().cpu_threads);
    counters().kernels_launched++;
  }
  void synchronize() override {}
  void forget_kernels() override {
    std::lock_guard lock(mutex_);
    seen_.clear();
    llvm_forget_kernels();
  }

private:
  std::mutex mutex_;
  std::unordered_set<std::uint64_t> seen_;
};

} // namespace

std::unique_ptr<Executor> make_cpu_executor() {
  return std::make_unique<CpuExecutor>();
}

} // namespace lazyfuse::runtime
