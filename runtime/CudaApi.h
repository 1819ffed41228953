// Thin, checked access to CUDA for the runtime layer: whether CUDA is usable at all, per-device facts, error
// checking, and the few driver-API calls (modules, launches, occupancy) that the runtime API lacks.
//
// The library never links libcuda: the static CUDA runtime dlopens the driver, and driver-API functions are
// fetched through cudaGetDriverEntryPointByVersion. So every binary starts on a machine without a driver and
// reports "CUDA not available" there instead of failing to load.
#pragma once

#include <lazyfuse/error.hpp>

#include <cuda.h> // types only: nothing from libcuda is linked
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace lazyfuse::runtime::cuda {

/// Whether CUDA can be used in this process.
struct Availability {
  bool ok = false;
  /// Why not, when `ok` is false (e.g. no driver, no device); empty otherwise.
  std::string reason;
  /// Visible devices (CUDA_VISIBLE_DEVICES applies); 0 when `ok` is false.
  int device_count = 0;
};

/// Probes once, on first call (thread-safe): the driver loads and at least one device is visible. Never throws.
const Availability& availability();

/// "CUDA not available: <reason>", the text every "no CUDA" error starts with.
std::string unavailable_message();

/// Throws BackendError(unavailable_message()) when CUDA is not usable; `what` names the caller's operation.
void require_available(const char* what);

/// Facts about one device, read once.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::size_t total_memory = 0;
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int warp_size = 0;
  std::int64_t max_grid_blocks = 0;             ///< gridDim.x
  std::size_t shared_bytes_per_block = 0;       ///< without opting in
  std::size_t shared_bytes_per_block_optin = 0; ///< after cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  int driver_version = 0;                       ///< e.g. 13000 for CUDA 13.0 (cudaDriverGetVersion)
  int runtime_version = 0;                      ///< the static runtime linked in (cudaRuntimeGetVersion)
  std::size_t l2_bytes = 0;
};

/// Cached per device; the reference stays valid for the process. Throws BackendError when CUDA is not available
/// or `ordinal` is not a visible device.
const DeviceInfo& device_info(int ordinal);

/// True for the errors after which the CUDA context cannot be used again: CUDA documents each as leaving the
/// process "in an inconsistent state" that only a restart clears. They are a kernel that faulted (illegal or
/// misaligned address, illegal instruction, invalid PC or address space, hardware stack error, unspecified
/// launch failure), a device-side assert, a launch timeout, a tensor-memory leak, an error the GPU contained,
/// a terminated MPS client and an external device's error.
bool is_sticky(cudaError_t e) noexcept;
bool is_sticky(CUresult r) noexcept;

/// Whether a sticky error was seen in this process (one atomic load). Set by throw_cuda_error and
/// throw_driver_error, never cleared.
bool context_lost() noexcept;

/// Throws BackendError("<what>: the CUDA context is lost ...", naming the sticky error, where it was reported, and
/// that only a restart helps) once context_lost(); nothing otherwise. Every entry point of the CUDA backend calls it
/// first, so that after a fault each operation fails the same way instead of with whatever error its first CUDA
/// call happens to return, or not at all when it needs no CUDA call (a pool hit).
void require_context(const char* what);

/// Throws BackendError naming the error (cudaGetErrorName and cudaGetErrorString), the call's text and its
/// place. Clears the thread's last-error state first, so a handled error does not resurface in a later
/// cudaGetLastError. A sticky error marks the context lost (see require_context), and once it is lost every
/// message says so. Use through LAZYFUSE_CUDA_CHECK.
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line);
/// Same for a driver-API result (cuGetErrorName and cuGetErrorString).
[[noreturn]] void throw_driver_error(CUresult r, const char* what, const char* file, int line);

/// Does nothing on cudaSuccess, else throw_cuda_error.
inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) [[unlikely]]
    throw_cuda_error(e, what, file, line);
}
/// Does nothing on CUDA_SUCCESS, else throw_driver_error.
inline void check_driver(CUresult r, const char* what, const char* file, int line) {
  if (r != CUDA_SUCCESS) [[unlikely]]
    throw_driver_error(r, what, file, line);
}

#define LAZYFUSE_CUDA_CHECK(expr) ::lazyfuse::runtime::cuda::check((expr), #expr, __FILE__, __LINE__)
#define LAZYFUSE_CU_CHECK(expr) ::lazyfuse::runtime::cuda::check_driver((expr), #expr, __FILE__, __LINE__)

/// Makes `device` current on this thread for a scope and the previous device current again at its end, switching
/// only when they differ (then it costs one cudaGetDevice). For code that may run on a thread whose current device
/// is another: cudaMalloc, cudaFree, cudaEventCreate, cuModuleUnload and the driver's pointer queries all act on the
/// current device. Restoring drops errors: the previous device was current a moment ago, and a destructor has
/// nobody to report to. (include/lazyfuse/runtime.hpp's DeviceGuard is the user's, checked like set_device.)
class DeviceScope {
public:
  /// Throws BackendError when the current device cannot be read or `device` cannot be made current.
  explicit DeviceScope(int device);
  /// Never throws, for destructors and cleanup: when the switch fails, active() is false, the thread's device is as
  /// it was and no error is left pending (cudaGetLastError); the caller decides whether to go on.
  DeviceScope(int device, std::nothrow_t) noexcept;
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  /// Whether `device` is current (always true after the throwing constructor).
  bool active() const noexcept { return active_; }

private:
  int previous_ = -1;
  bool switched_ = false;
  bool active_ = false;
};

/// Driver-API entry points, resolved once through cudaGetDriverEntryPointByVersion (ABI of CUDA 12.0, which
/// every driver new enough for the CUDA 13 runtime provides). The member names are the driver's without "cu".
struct DriverApi {
  decltype(&::cuModuleLoadData) ModuleLoadData = nullptr;
  decltype(&::cuModuleLoadDataEx) ModuleLoadDataEx = nullptr;
  decltype(&::cuModuleUnload) ModuleUnload = nullptr;
  decltype(&::cuModuleGetFunction) ModuleGetFunction = nullptr;
  decltype(&::cuLaunchKernel) LaunchKernel = nullptr;
  decltype(&::cuOccupancyMaxActiveBlocksPerMultiprocessor) OccupancyMaxActiveBlocksPerMultiprocessor = nullptr;
  decltype(&::cuFuncGetAttribute) FuncGetAttribute = nullptr;
  decltype(&::cuFuncSetAttribute) FuncSetAttribute = nullptr;
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
  decltype(&::cuGetErrorName) GetErrorName = nullptr;
  decltype(&::cuPointerGetAttributes) PointerGetAttributes = nullptr;
  decltype(&::cuPointerGetAttribute) PointerGetAttribute = nullptr;
  decltype(&::cuMemGetAddressRange) MemGetAddressRange = nullptr; // cuMemGetAddressRange_v2
  decltype(&::cuGraphCreate) GraphCreate = nullptr;
  decltype(&::cuGraphAddKernelNode) GraphAddKernelNode = nullptr; // cuGraphAddKernelNode_v2
  decltype(&::cuGraphInstantiateWithFlags) GraphInstantiateWithFlags = nullptr;
  decltype(&::cuGraphExecKernelNodeSetParams) GraphExecKernelNodeSetParams = nullptr; // _v2
  decltype(&::cuGraphLaunch) GraphLaunch = nullptr;
  decltype(&::cuGraphExecDestroy) GraphExecDestroy = nullptr;
  decltype(&::cuGraphDestroy) GraphDestroy = nullptr;
};

/// The entry points, loaded on first use (thread-safe). Throws BackendError when CUDA is not available or the
/// driver lacks one of them.
const DriverApi& driver();

/// Makes the current device's primary context current on this thread, which driver-API calls need and the
/// runtime only does lazily. Cheap after the first call per thread and device.
void ensure_context();

/// A loaded CUDA module (RAII over CUmodule; move-only). It belongs to the device that was current at `load`.
class Module {
public:
  Module() noexcept = default;
  /// Loads a cubin or a NUL-terminated PTX text into the current device's primary context. Throws BackendError
  /// with the driver's message and, for PTX, the JIT compiler's error log.
  static Module load(const void* image);
  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The kernel `name` (its extern "C" or mangled name). Throws BackendError when absent.
  CUfunction function(const char* name) const;
  CUmodule native() const noexcept { return module_; }
  int device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return module_ != nullptr; }

private:
  Module(CUmodule m, int device) noexcept : module_(m), device_(device) {}
  void reset() noexcept;
  CUmodule module_ = nullptr;
  int device_ = -1;
};

/// Launches `f` with a 1-D grid on `stream`; `args` points to one pointer per kernel parameter (cuLaunchKernel's
/// kernelParams). A grid of 0 blocks launches nothing: it is what an empty array asks for. Kernels needing more
/// than 48 KiB of dynamic shared memory must first get set_max_dynamic_shared_bytes.
void launch(CUfunction f, unsigned grid, unsigned block, unsigned shared_bytes, cudaStream_t stream, void** args);

/// One kernel launch as a graph node takes it: 1-D grid, `args` as for launch() (copied when the node is set).
struct KernelLaunch {
  CUfunction function = nullptr;
  unsigned grid = 1;
  unsigned block = 1;
  unsigned shared_bytes = 0;
  void** args = nullptr;
};

/// A chain of kernel launches, each after the one before, instantiated as one CUDA graph of the current device
/// (RAII over the CUgraph and its CUgraphExec; move-only). Launching it costs the host one call however many
/// kernels it holds, and a node's arguments can be changed in place between launches (set), which is how a plan
/// cache replay points it at new buffers and scalars.
class KernelGraph {
public:
  KernelGraph() noexcept = default;
  /// Builds and instantiates the chain. Every launch needs a grid of at least one block. Throws BackendError.
  static KernelGraph build(const KernelLaunch* launches, std::size_t count);
  ~KernelGraph();
  KernelGraph(KernelGraph&& other) noexcept;
  KernelGraph& operator=(KernelGraph&& other) noexcept;
  KernelGraph(const KernelGraph&) = delete;
  KernelGraph& operator=(const KernelGraph&) = delete;

  /// Replaces launch `index` (same function) for the next launches of the graph. Throws BackendError.
  void set(std::size_t index, const KernelLaunch& launch);
  /// Queues the whole chain on `stream`. Throws BackendError.
  void launch(cudaStream_t stream);

private:
  void reset() noexcept;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  std::vector<CUgraphNode> nodes_;
  int device_ = -1;
};

/// Blocks of `block` threads (with `shared_bytes` dynamic shared memory) that fit on one SM at once.
int max_active_blocks_per_sm(CUfunction f, int block, std::size_t shared_bytes);

/// A kernel attribute (registers, max threads per block, static shared bytes, ...), via cuFuncGetAttribute.
int function_attribute(CUfunction f, CUfunction_attribute attribute);

/// Allows `f` to be launched with up to `bytes` of dynamic shared memory (needed above 48 KiB).
void set_max_dynamic_shared_bytes(CUfunction f, int bytes);

/// Refuses memory that from_pointer must not wrap, before a kernel can read it, by asking the driver what the
/// memory is. On the CUDA backend (`cuda_backend`) it accepts memory of the current device, managed memory, and
/// memory of another device that the current one can access (peer access enabled, or access granted to its
/// pool), and only when the `bytes` bytes at `data` lie inside one allocation (or consecutive mappings of one
/// virtual-memory reservation). It refuses host memory, pageable or pinned. On the CPU backend it refuses device
/// memory (when a driver is loaded to ask; without one there is none). Throws Error naming `what`, the memory kind,
/// the bytes asked for and the allocation's range; BackendError when the context is lost or the driver cannot
/// answer. Nothing is checked for `bytes == 0`.
void check_wrappable(const void* data, std::size_t bytes, bool cuda_backend, const char* what);

} // namespace lazyfuse::runtime::cuda
