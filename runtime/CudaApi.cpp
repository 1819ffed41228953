#include "runtime/CudaApi.h"

#include "graph/Config.h"

#include "graph/Assert.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <utility>

namespace lazyfuse::runtime::cuda {
namespace {

// Adds what a user can do about the usual reasons; the bare CUDA text ("driver version is insufficient")
// does not say that a missing libcuda.so.1 reads the same.
std::string explain_probe_error(cudaError_t e) {
  std::string text =
      std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  switch (e) {
  case cudaErrorInsufficientDriver:
    text += "; no NVIDIA driver (libcuda.so.1) was found, or it is older than the CUDA " +
            std::to_string(CUDART_VERSION / 1000) + " runtime";
    break;
  case cudaErrorNoDevice: text += "; no CUDA device is visible (check CUDA_VISIBLE_DEVICES)"; break;
  default: break;
  }
  return text;
}

Availability probe() noexcept {
  Availability a;
  try {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      (void)cudaGetLastError(); // the probe's failure must not show up in a later error check
      a.reason = explain_probe_error(e);
    } else if (count <= 0) {
      a.reason = "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
    } else {
      a.ok = true;
      a.device_count = count;
    }
  } catch (...) {
    // Only std::bad_alloc from the strings can land here; availability() promises not to throw.
    a = Availability{};
    a.reason = "CUDA probe failed";
  }
  return a;
}

std::string format_location(const char* what, const char* file, int line) {
  std::ostringstream os;
  os << " in `" << what << "` at " << file << ':' << line;
  return os.str();
}

// Per-device cache of DeviceInfo. Sized once from the device count, so entries never move and readers need
// no lock after the once_flag.
struct DeviceInfoCache {
  explicit DeviceInfoCache(int n) : once(new std::once_flag[n]), info(new DeviceInfo[n]) {}
  std::unique_ptr<std::once_flag[]> once;
  std::unique_ptr<DeviceInfo[]> info;
};

DeviceInfo read_device_info(int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  cudaDeviceProp prop{};
  LAZYFUSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  d.name = prop.name;
  d.total_memory = prop.totalGlobalMem;
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, ordinal));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, ordinal));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, ordinal));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&d.max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, ordinal));
  int l2 = 0;
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal));
  d.l2_bytes = static_cast<std::size_t>(l2);
  LAZYFUSE_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  LAZYFUSE_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

template <typename Fn> void load_entry_point(Fn& fn, const char* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  // 12000: ask for the CUDA 12.0 ABI of each function, which is the one our decltype signatures describe.
  const cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
    (void)cudaGetLastError();
    std::string msg = std::string("cannot load the driver function ") + symbol + ": ";
    if (e != cudaSuccess)
      msg += std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
    else if (status == cudaDriverEntryPointVersionNotSufficent)
      msg += "the driver is too old";
    else
      msg += "symbol not found in the driver";
    throw BackendError(msg);
  }
  fn = reinterpret_cast<Fn>(p);
}

DriverApi load_driver_api() {
  require_available("loading driver entry points");
  DriverApi api;
  load_entry_point(api.ModuleLoadData, "cuModuleLoadData");
  load_entry_point(api.ModuleLoadDataEx, "cuModuleLoadDataEx");
  load_entry_point(api.ModuleUnload, "cuModuleUnload");
  load_entry_point(api.ModuleGetFunction, "cuModuleGetFunction");
  load_entry_point(api.LaunchKernel, "cuLaunchKernel");
  load_entry_point(api.OccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  load_entry_point(api.FuncGetAttribute, "cuFuncGetAttribute");
  load_entry_point(api.FuncSetAttribute, "cuFuncSetAttribute");
  load_entry_point(api.GetErrorString, "cuGetErrorString");
  load_entry_point(api.GetErrorName, "cuGetErrorName");
  return api;
}

} // namespace

const Availability& availability() {
  static const Availability a = probe();
  return a;
}

std::string unavailable_message() {
  return "CUDA not available: " + availability().reason;
}

void require_available(const char* what) {
  if (!availability().ok) throw BackendError(std::string(what) + ": " + unavailable_message());
}

const DeviceInfo& device_info(int ordinal) {
  require_available("device_info");
  const int n = availability().device_count;
  if (ordinal < 0 || ordinal >= n)
    throw BackendError("device_info: device " + std::to_string(ordinal) + " does not exist (" + std::to_string(n) +
                       " visible)");
  static DeviceInfoCache cache(n);
  std::call_once(cache.once[ordinal], [&] { cache.info[ordinal] = read_device_info(ordinal); });
  return cache.info[ordinal];
}

void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  // Non-sticky errors stay in the thread's last-error slot; clear it so the caller can recover and go on.
  (void)cudaGetLastError();
  throw BackendError(std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")" +
                     format_location(what, file, line));
}

void throw_driver_error(CUresult r, const char* what, const char* file, int line) {
  const char* name = nullptr;
  const char* text = nullptr;
  // driver() is loaded whenever a CUresult exists to report; still, never throw from here for the wrong reason.
  if (availability().ok) {
    try {
      const DriverApi& api = driver();
      if (api.GetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
      if (api.GetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
    } catch (const BackendError&) {
    }
  }
  std::string msg = "CUDA driver error ";
  msg += name ? name : ("CUresult " + std::to_string(static_cast<int>(r)));
  if (text) msg += std::string(" (") + text + ")";
  throw BackendError(msg + format_location(what, file, line));
}

const DriverApi& driver() {
  // A function-local static retries on the next call if loading threw, which is what a caller that caught
  // the BackendError expects.
  static const DriverApi api = load_driver_api();
  return api;
}

void ensure_context() {
  // The device whose primary context this thread last made current. The runtime binds a context to a thread
  // only in its own calls; cudaSetDevice (CUDA >= 12) and cudaFree(0) both do it.
  thread_local int context_device = -1;
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  if (device != context_device) {
    LAZYFUSE_CUDA_CHECK(cudaSetDevice(device));
    LAZYFUSE_CUDA_CHECK(cudaFree(nullptr));
    context_device = device;
  }
}

Module Module::load(const void* image) {
  LAZYFUSE_ASSERT(image != nullptr, "Module::load needs an image");
  const DriverApi& api = driver();
  ensure_context();
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));

  // The JIT's error log is the only place PTX errors are explained; CUresult alone says "invalid PTX".
  std::string log(16 * 1024, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size()))};
  CUmodule m = nullptr;
  const CUresult r = api.ModuleLoadDataEx(&m, image, 2, options, values);
  if (r != CUDA_SUCCESS) {
    log.resize(std::strlen(log.c_str()));
    const char* name = nullptr;
    const char* text = nullptr;
    (void)api.GetErrorName(r, &name);
    (void)api.GetErrorString(r, &text);
    std::string msg = std::string("cannot load a CUDA module on device ") + std::to_string(device) + ": " +
                      (name ? name : "CUresult " + std::to_string(static_cast<int>(r)));
    if (text) msg += std::string(" (") + text + ")";
    if (!log.empty()) msg += "; JIT log:\n" + log;
    throw BackendError(msg);
  }
  return Module(m, device);
}

Module::~Module() {
  reset();
}

Module::Module(Module&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), device_(std::exchange(other.device_, -1)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    reset();
    module_ = std::exchange(other.module_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void Module::reset() noexcept {
  if (!module_) return;
  // cuModuleUnload works on the current context, and a module may die on a thread (or at a moment) where another
  // device is current. Results are ignored: at process exit the context may already be gone
  // (CUDA_ERROR_DEINITIALIZED), and a destructor has nobody to report to. A module exists only if driver()
  // loaded, so driver() cannot throw here.
  int previous = -1;
  const bool switched =
      cudaGetDevice(&previous) == cudaSuccess && previous != device_ && cudaSetDevice(device_) == cudaSuccess;
  (void)driver().ModuleUnload(module_);
  if (switched) (void)cudaSetDevice(previous);
  (void)cudaGetLastError();
  module_ = nullptr;
}

CUfunction Module::function(const char* name) const {
  LAZYFUSE_ASSERT(module_ != nullptr, "Module::function on an empty module");
  CUfunction f = nullptr;
  const CUresult r = driver().ModuleGetFunction(&f, module_, name);
  if (r == CUDA_ERROR_NOT_FOUND) throw BackendError(std::string("kernel '") + name + "' is not in the module");
  LAZYFUSE_CU_CHECK(r);
  return f;
}

void launch(CUfunction f, unsigned grid, unsigned block, unsigned shared_bytes, cudaStream_t stream, void** args) {
  LAZYFUSE_ASSERT(f != nullptr, "launch of a null function");
  LAZYFUSE_ASSERT(block > 0, "launch with an empty block");
  if (grid == 0) return;
  const DriverApi& api = driver();
  ensure_context();
  // cudaStream_t and CUstream are the same handle, including the legacy (0) and per-thread (0x2) ones.
  LAZYFUSE_CU_CHECK(
      api.LaunchKernel(f, grid, 1, 1, block, 1, 1, shared_bytes, reinterpret_cast<CUstream>(stream), args, nullptr));
}

int max_active_blocks_per_sm(CUfunction f, int block, std::size_t shared_bytes) {
  const DriverApi& api = driver();
  ensure_context();
  int blocks = 0;
  LAZYFUSE_CU_CHECK(api.OccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, block, shared_bytes));
  return blocks;
}

int function_attribute(CUfunction f, CUfunction_attribute attribute) {
  const DriverApi& api = driver();
  ensure_context();
  int value = 0;
  LAZYFUSE_CU_CHECK(api.FuncGetAttribute(&value, attribute, f));
  return value;
}

void set_max_dynamic_shared_bytes(CUfunction f, int bytes) {
  const DriverApi& api = driver();
  ensure_context();
  LAZYFUSE_CU_CHECK(api.FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}

} // namespace lazyfuse::runtime::cuda
