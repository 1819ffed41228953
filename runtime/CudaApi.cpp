#include "runtime/CudaApi.h"

#include "graph/Config.h"

#include "graph/Assert.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cctype>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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

// The first sticky error of the process. Never destroyed: destructors of static objects may still ask.
struct LostContext {
  std::atomic<bool> lost{false};
  std::mutex mutex;
  std::string cause; // "cudaErrorIllegalAddress (...) in `call` at file:line"
};

LostContext& lost_context() {
  static auto* l = new LostContext;
  return *l;
}

// Records `cause` unless an earlier error did; true when this call was the first.
bool mark_context_lost(const std::string& cause) noexcept {
  LostContext& l = lost_context();
  try {
    std::lock_guard lock(l.mutex);
    if (l.lost.load(std::memory_order_relaxed)) return false; // the first error is the one that explains the rest
    l.cause = cause;
  } catch (...) {
    // Without the text (no memory, a failed lock) the context is still lost: the flag matters more.
  }
  l.lost.store(true, std::memory_order_release);
  return true;
}

// What every error says once the context is lost, after naming its own operation or call. `first`: said by the
// error that lost it, which has just named the cause itself.
std::string lost_text(bool first = false) {
  std::string since;
  if (!first) {
    LostContext& l = lost_context();
    std::lock_guard lock(l.mutex);
    since = " since " + (l.cause.empty() ? std::string("a sticky CUDA error") : l.cause);
  }
  return "the CUDA context is lost" + since +
         ". A kernel or copy failed on the device (CUDA reports such a failure at the next call that launches work "
         "or waits for the device, which may belong to a later operation), and after such an error CUDA refuses all "
         "further work in this process: every later GPU operation raises a BackendError like this one. Restart the "
         "process to use the GPU again.";
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
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&d.max_threads_per_block, cudaDevAttrMaxThreadsPerBlock, ordinal));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&d.warp_size, cudaDevAttrWarpSize, ordinal));
  int grid_x = 0, shared = 0, shared_optin = 0;
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&grid_x, cudaDevAttrMaxGridDimX, ordinal));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlock, ordinal));
  LAZYFUSE_CUDA_CHECK(cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal));
  d.max_grid_blocks = grid_x;
  d.shared_bytes_per_block = static_cast<std::size_t>(shared);
  d.shared_bytes_per_block_optin = static_cast<std::size_t>(shared_optin);
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
  load_entry_point(api.PointerGetAttributes, "cuPointerGetAttributes");
  load_entry_point(api.PointerGetAttribute, "cuPointerGetAttribute");
  load_entry_point(api.MemGetAddressRange, "cuMemGetAddressRange");
  load_entry_point(api.GraphCreate, "cuGraphCreate");
  load_entry_point(api.GraphAddKernelNode, "cuGraphAddKernelNode");
  // By name, not through cuda.h's macros: the driver's "cuGraphInstantiate" is the old five-argument function.
  load_entry_point(api.GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  load_entry_point(api.GraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams");
  load_entry_point(api.GraphLaunch, "cuGraphLaunch");
  load_entry_point(api.GraphExecDestroy, "cuGraphExecDestroy");
  load_entry_point(api.GraphDestroy, "cuGraphDestroy");
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

bool is_sticky(cudaError_t e) noexcept {
  switch (e) {
  case cudaErrorIllegalAddress:
  case cudaErrorLaunchTimeout:
  case cudaErrorAssert:
  case cudaErrorHardwareStackError:
  case cudaErrorIllegalInstruction:
  case cudaErrorMisalignedAddress:
  case cudaErrorInvalidAddressSpace:
  case cudaErrorInvalidPc:
  case cudaErrorLaunchFailure:
  case cudaErrorTensorMemoryLeak:
  case cudaErrorContained:
  case cudaErrorMpsClientTerminated:
  case cudaErrorExternalDevice: return true;
  default: return false;
  }
}

bool is_sticky(CUresult r) noexcept {
  switch (r) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_LAUNCH_TIMEOUT:
  case CUDA_ERROR_ASSERT:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
  case CUDA_ERROR_TENSOR_MEMORY_LEAK:
  case CUDA_ERROR_CONTAINED:
  case CUDA_ERROR_MPS_CLIENT_TERMINATED:
  case CUDA_ERROR_EXTERNAL_DEVICE: return true;
  default: return false;
  }
}

bool context_lost() noexcept {
  return lost_context().lost.load(std::memory_order_acquire);
}

void require_context(const char* what) {
  if (context_lost()) [[unlikely]]
    throw BackendError(std::string(what) + ": " + lost_text());
}

void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  // Non-sticky errors stay in the thread's last-error slot; clear it so the caller can recover and go on.
  (void)cudaGetLastError();
  std::string msg = std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")" +
                    format_location(what, file, line);
  const bool first = is_sticky(e) && mark_context_lost(msg.substr(std::strlen("CUDA error ")));
  if (context_lost()) msg += "; " + lost_text(first);
  throw BackendError(msg);
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
  std::string error = name ? name : ("CUresult " + std::to_string(static_cast<int>(r)));
  if (text) error += std::string(" (") + text + ")";
  error += format_location(what, file, line);
  const bool first = is_sticky(r) && mark_context_lost(error);
  std::string msg = "CUDA driver error " + error;
  if (context_lost()) msg += "; " + lost_text(first);
  throw BackendError(msg);
}

const DriverApi& driver() {
  // A function-local static retries on the next call if loading threw, which is what a caller that caught
  // the BackendError expects.
  static const DriverApi api = load_driver_api();
  return api;
}

DeviceScope::DeviceScope(int device) {
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) {
    LAZYFUSE_CUDA_CHECK(cudaSetDevice(device));
    switched_ = true;
  }
  active_ = true;
}

DeviceScope::DeviceScope(int device, std::nothrow_t) noexcept {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  if (previous_ != device) {
    if (cudaSetDevice(device) != cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    switched_ = true;
  }
  active_ = true;
}

DeviceScope::~DeviceScope() {
  if (switched_ && cudaSetDevice(previous_) != cudaSuccess) (void)cudaGetLastError();
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
  // After a fault the load fails for that reason, not for anything in the image.
  if (is_sticky(r) || (r != CUDA_SUCCESS && context_lost()))
    throw_driver_error(r, "cuModuleLoadDataEx", __FILE__, __LINE__);
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
  {
    const DeviceScope on(device_, std::nothrow);
    (void)driver().ModuleUnload(module_);
  }
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
  require_context("launching a kernel");
  if (grid == 0) return;
  const DriverApi& api = driver();
  ensure_context();
  // cudaStream_t and CUstream are the same handle, including the legacy (0) and per-thread (0x2) ones.
  LAZYFUSE_CU_CHECK(
      api.LaunchKernel(f, grid, 1, 1, block, 1, 1, shared_bytes, reinterpret_cast<CUstream>(stream), args, nullptr));
}

namespace {

CUDA_KERNEL_NODE_PARAMS node_params(const KernelLaunch& l) {
  LAZYFUSE_ASSERT(l.function != nullptr && l.grid > 0 && l.block > 0, "a graph node needs a function and a grid");
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = l.function;
  p.gridDimX = l.grid;
  p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = l.block;
  p.blockDimY = p.blockDimZ = 1;
  p.sharedMemBytes = l.shared_bytes;
  p.kernelParams = l.args;
  return p;
}

} // namespace

KernelGraph KernelGraph::build(const KernelLaunch* launches, std::size_t count) {
  require_context("building a CUDA graph");
  const DriverApi& api = driver();
  ensure_context();
  KernelGraph g;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&g.device_));
  LAZYFUSE_CU_CHECK(api.GraphCreate(&g.graph_, 0));
  g.nodes_.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    const CUDA_KERNEL_NODE_PARAMS p = node_params(launches[k]);
    CUgraphNode node = nullptr;
    const CUgraphNode* after = g.nodes_.empty() ? nullptr : &g.nodes_.back();
    LAZYFUSE_CU_CHECK(api.GraphAddKernelNode(&node, g.graph_, after, after ? 1 : 0, &p));
    g.nodes_.push_back(node);
  }
  LAZYFUSE_CU_CHECK(api.GraphInstantiateWithFlags(&g.exec_, g.graph_, 0));
  return g;
}

KernelGraph::~KernelGraph() {
  reset();
}

KernelGraph::KernelGraph(KernelGraph&& other) noexcept
    : graph_(std::exchange(other.graph_, nullptr)), exec_(std::exchange(other.exec_, nullptr)),
      nodes_(std::move(other.nodes_)), device_(other.device_) {}

KernelGraph& KernelGraph::operator=(KernelGraph&& other) noexcept {
  if (this != &other) {
    reset();
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
    nodes_ = std::move(other.nodes_);
    device_ = other.device_;
  }
  return *this;
}

void KernelGraph::reset() noexcept {
  if (!graph_ && !exec_) return;
  // As Module::reset: on the graph's device, results ignored (a destructor has nobody to report to, and at exit
  // the context may be gone). A graph exists only if driver() loaded.
  {
    const DeviceScope on(device_, std::nothrow);
    if (exec_) (void)driver().GraphExecDestroy(exec_);
    if (graph_) (void)driver().GraphDestroy(graph_);
  }
  (void)cudaGetLastError();
  exec_ = nullptr;
  graph_ = nullptr;
  nodes_.clear();
}

void KernelGraph::set(std::size_t index, const KernelLaunch& launch) {
  LAZYFUSE_ASSERT(exec_ != nullptr && index < nodes_.size(), "KernelGraph::set past the graph's nodes");
  require_context("updating a CUDA graph");
  const CUDA_KERNEL_NODE_PARAMS p = node_params(launch);
  LAZYFUSE_CU_CHECK(driver().GraphExecKernelNodeSetParams(exec_, nodes_[index], &p));
}

void KernelGraph::launch(cudaStream_t stream) {
  LAZYFUSE_ASSERT(exec_ != nullptr, "launch of an empty KernelGraph");
  require_context("launching a CUDA graph");
  ensure_context();
  LAZYFUSE_CU_CHECK(driver().GraphLaunch(exec_, reinterpret_cast<CUstream>(stream)));
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

// ---- what from_pointer may wrap ------------------------------------------------------------------------------

namespace {

// Pointer attributes are bool, int or unsigned values that the driver writes into our storage: each goes into a
// zeroed 64-bit word and is read from its low bytes, whichever size the driver writes.
static_assert(std::endian::native == std::endian::little, "pointer attributes are read from the low bytes");

std::string hex(std::uint64_t p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, p);
  return buf;
}

std::string range_text(std::uint64_t begin, std::uint64_t end) {
  return "[" + hex(begin) + ", " + hex(end) + ")";
}

std::string driver_error_text(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.GetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.GetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  std::string s = name ? name : "CUresult " + std::to_string(static_cast<int>(r));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

struct PointerKind {
  unsigned type = 0; // CUmemorytype; 0 for memory CUDA does not know
  bool managed = false;
  int device = -1;
};

// cuPointerGetAttributes answers for any address, with type 0 for memory that CUDA does not know (pageable host
// memory). Its documentation also allows CUDA_ERROR_INVALID_VALUE or CUDA_ERROR_INVALID_CONTEXT for such memory:
// both are mapped to the same answer. Needs no current context, so it does not create one on the CPU backend.
CUresult query_kind(const DriverApi& api, CUdeviceptr p, PointerKind& k) {
  std::uint64_t type = 0, managed = 0, device = 0;
  CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* data[] = {&type, &managed, &device};
  const CUresult r = api.PointerGetAttributes(3, attributes, data, p);
  k = PointerKind{};
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_CONTEXT) return CUDA_SUCCESS;
  if (r != CUDA_SUCCESS) return r;
  k.type = unsigned(type & 0xffffffffu);
  k.managed = managed != 0;
  k.device = int(std::int32_t(std::uint32_t(device & 0xffffffffu)));
  return CUDA_SUCCESS;
}

// Memory of device `owner`, read by kernels of device `current`: the driver says whether the current context may
// access it, which covers peer access (cudaDeviceEnablePeerAccess) and access granted to a memory pool alike.
void check_peer_access(const DriverApi& api, CUdeviceptr p, int owner, int current, const std::string& where) {
  std::uint64_t flags = 0;
  const CUresult r = api.PointerGetAttribute(&flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, p);
  if (r == CUDA_SUCCESS && (flags & 0xffffffffu) != CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE) return;
  if (is_sticky(r))
    throw_driver_error(r, "cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS)", __FILE__, __LINE__);
  int possible = 0;
  if (cudaDeviceCanAccessPeer(&possible, current, owner) != cudaSuccess) {
    (void)cudaGetLastError();
    possible = 0;
  }
  const std::string o = std::to_string(owner), c = std::to_string(current);
  std::string msg = where + " is memory of device " + o + ", which the current device, " + c + ", cannot read";
  if (r != CUDA_SUCCESS) msg += " (the driver cannot say: " + driver_error_text(api, r) + ")";
  if (possible)
    msg += ": peer access from device " + c + " to device " + o +
           " is possible but not enabled. Enable it with "
           "cudaDeviceEnablePeerAccess(" +
           o + ", 0) while device " + c + " is current";
  else
    msg += ": these devices have no peer access. Copy the data to device " + c;
  throw Error(msg + ", or make device " + o + " current before wrapping and computing.");
}

// [p, p + bytes) must lie inside the allocation holding p, or inside consecutive mappings of one virtual-memory
// reservation (cuMemAddressReserve with several cuMemMap, as PyTorch's expandable segments make), whose each
// mapping cuMemGetAddressRange reports on its own. The walk never crosses into another allocation: it runs only
// when the reservation (CU_POINTER_ATTRIBUTE_RANGE_START_ADDR and _SIZE) is larger than the mapping holding p, which
// for cudaMalloc memory it is not, and stops where the reservation ends or changes.
void check_range(const DriverApi& api, CUdeviceptr p, std::size_t bytes, const std::string& where) {
  if (bytes > std::numeric_limits<CUdeviceptr>::max() - p)
    throw Error(where + ": " + std::to_string(bytes) + " bytes from here pass the end of the address space");
  const CUdeviceptr end = p + bytes;
  CUdeviceptr base = 0;
  std::size_t size = 0;
  const CUresult r = api.MemGetAddressRange(&base, &size, p);
  if (r != CUDA_SUCCESS) {
    if (is_sticky(r)) throw_driver_error(r, "cuMemGetAddressRange", __FILE__, __LINE__);
    throw Error(where + " is in no allocation that the driver knows (cuMemGetAddressRange: " +
                driver_error_text(api, r) + "), so kernels reading it would fault.");
  }
  CUdeviceptr covered = base + size;
  // Only a reservation larger than the mapping holding p can continue it; the walk stays inside that reservation.
  CUdeviceptr reservation = 0;
  std::uint64_t reservation_size = 0;
  if (covered < end) {
    CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void* data[] = {&reservation, &reservation_size};
    if (api.PointerGetAttributes(2, attributes, data, p) != CUDA_SUCCESS) reservation = reservation_size = 0;
  }
  const bool larger = reservation != 0 && reservation <= base && reservation_size > size &&
                      reservation_size <= std::numeric_limits<CUdeviceptr>::max() - reservation;
  const CUdeviceptr reservation_end = larger ? reservation + reservation_size : 0;
  while (larger && covered < end && covered < reservation_end) {
    CUdeviceptr next_base = 0, next_reservation = 0;
    std::size_t next_size = 0;
    if (api.MemGetAddressRange(&next_base, &next_size, covered) != CUDA_SUCCESS || next_base != covered ||
        next_size == 0 || next_size > reservation_end - covered)
      break;
    if (api.PointerGetAttribute(&next_reservation, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, covered) != CUDA_SUCCESS ||
        next_reservation != reservation)
      break;
    covered = next_base + next_size;
  }
  if (covered >= end) return;
  std::string held =
      "the allocation holding it is " + range_text(base, base + size) + " (" + std::to_string(size) + " bytes)";
  if (covered != base + size) held += ", continued by mappings of its reservation up to " + hex(covered);
  throw Error(where + ": the array's elements span " + std::to_string(bytes) + " bytes, " + range_text(p, end) +
              ", but " + held + ": the last " + std::to_string(end - covered) +
              " bytes lie outside it, where kernels would fault or read another allocation. Check the shape, the "
              "strides (in elements) and the dtype.");
}

} // namespace

void check_wrappable(const void* data, std::size_t bytes, bool cuda_backend, const char* what) {
  if (bytes == 0) return;
  const auto p = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(data));
  const std::string where = std::string(what) + ": " + hex(p);
  if (!cuda_backend) {
    // Without a driver there is no device memory to refuse; with one that cannot answer, nothing is refused
    // either, as before these checks existed.
    if (!availability().ok) return;
    const DriverApi* api = nullptr;
    try {
      api = &driver();
    } catch (const BackendError&) {
      return;
    }
    PointerKind k;
    if (query_kind(*api, p, k) != CUDA_SUCCESS) return;
    if (!k.managed && k.type == CU_MEMORYTYPE_DEVICE)
      throw Error(where + " is memory of CUDA device " + std::to_string(k.device) +
                  ", but the backend in use is the CPU backend (LAZYFUSE_BACKEND=cpu, or CUDA was not usable when the "
                  "backend was chosen), whose kernels read host memory. Copy the data to host memory first, or use "
                  "the CUDA backend.");
    return;
  }

  require_context(what);
  const DriverApi& api = driver();
  ensure_context();
  PointerKind k;
  if (const CUresult r = query_kind(api, p, k); r != CUDA_SUCCESS) {
    if (is_sticky(r)) throw_driver_error(r, "cuPointerGetAttributes", __FILE__, __LINE__);
    throw BackendError(where + ": the driver cannot say what memory this is: " + driver_error_text(api, r));
  }
  int current = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&current));
  const char* copy = " Copy the data into device memory instead: asarray copies host data to the current device.";
  if (k.type == 0 && !k.managed)
    throw Error(where +
                " is host memory that CUDA does not know (pageable: malloc, new, a std::vector, the stack), "
                "which kernels of the CUDA backend cannot read." +
                copy);
  if (k.type == CU_MEMORYTYPE_HOST && !k.managed)
    throw Error(where +
                " is pinned host memory (cudaMallocHost, cudaHostAlloc or cudaHostRegister). Kernels could "
                "read it across the host link, but at a fraction of device memory's bandwidth, again at "
                "every use, so from_pointer does not wrap it." +
                copy);
  if (k.type != CU_MEMORYTYPE_DEVICE && !k.managed)
    throw Error(where + " is memory of a kind that from_pointer does not wrap (CUmemorytype " + std::to_string(k.type) +
                "); it wraps device memory and managed memory.");
  // Managed memory migrates to whichever device reads it; another device's memory needs access to it.
  const bool foreign = !k.managed && k.device != current;
  if (foreign) check_peer_access(api, p, k.device, current, where);
  if (foreign) {
    // The range query acts on the owner's context.
    const DeviceScope on(k.device);
    ensure_context();
    check_range(api, p, bytes, where);
  } else {
    check_range(api, p, bytes, where);
  }
}

} // namespace lazyfuse::runtime::cuda
