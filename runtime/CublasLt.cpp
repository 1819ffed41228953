#include "runtime/CublasLt.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "runtime/CudaApi.h"

#include <lazyfuse/error.hpp>

#include <cublasLt.h> // types only: the libraries are loaded with dlopen
#include <cublas_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#ifndef LAZYFUSE_CUBLASLT_DIR
#define LAZYFUSE_CUBLASLT_DIR ""
#endif

namespace lazyfuse::runtime::cublaslt {

namespace {

// The entry points used, resolved from the loaded library. Member names are cuBLASLt's without "cublasLt".
struct Api {
  decltype(&::cublasLtCreate) Create = nullptr;
  decltype(&::cublasLtDestroy) Destroy = nullptr;
  decltype(&::cublasLtGetVersion) GetVersion = nullptr;
  decltype(&::cublasLtGetStatusString) GetStatusString = nullptr;
  decltype(&::cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmul) Matmul = nullptr;
};

struct Library {
  bool ok = false;
  std::string why_not;
  std::string path;
  std::size_t version = 0;
  Api api;
};

template <class F> bool resolve(void* lib, const char* name, F& f, std::string& why_not) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f && why_not.empty()) why_not = std::string("the library has no ") + name;
  return f != nullptr;
}

// dlopen of a CUDA library by its soname, then from the toolkit's library folder; null with the loaders' messages in
// `why_not` when neither loads.
void* open_toolkit_library(const std::string& soname, std::string& path, std::string& why_not) {
  void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  path = soname;
  std::string errors = h ? "" : dlerror();
  if (!h && std::string(LAZYFUSE_CUBLASLT_DIR).size()) {
    path = std::string(LAZYFUSE_CUBLASLT_DIR) + "/" + soname;
    h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) errors += std::string("; ") + dlerror();
  }
  if (!h) why_not = errors;
  return h;
}

// Loaded once and never closed: handles and cached descriptors belong to it for the life of the process.
const Library& library() {
  static const Library* lib = [] {
    auto* l = new Library;
    void* h = open_toolkit_library("libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), l->path, l->why_not);
    if (!h) return l;
    Api& a = l->api;
    std::string& w = l->why_not;
    bool ok = resolve(h, "cublasLtCreate", a.Create, w) && resolve(h, "cublasLtDestroy", a.Destroy, w) &&
              resolve(h, "cublasLtGetVersion", a.GetVersion, w) &&
              resolve(h, "cublasLtGetStatusString", a.GetStatusString, w) &&
              resolve(h, "cublasLtMatmulDescCreate", a.MatmulDescCreate, w) &&
              resolve(h, "cublasLtMatmulDescDestroy", a.MatmulDescDestroy, w) &&
              resolve(h, "cublasLtMatmulDescSetAttribute", a.MatmulDescSetAttribute, w) &&
              resolve(h, "cublasLtMatrixLayoutCreate", a.MatrixLayoutCreate, w) &&
              resolve(h, "cublasLtMatrixLayoutDestroy", a.MatrixLayoutDestroy, w) &&
              resolve(h, "cublasLtMatrixLayoutSetAttribute", a.MatrixLayoutSetAttribute, w) &&
              resolve(h, "cublasLtMatmulPreferenceCreate", a.MatmulPreferenceCreate, w) &&
              resolve(h, "cublasLtMatmulPreferenceDestroy", a.MatmulPreferenceDestroy, w) &&
              resolve(h, "cublasLtMatmulPreferenceSetAttribute", a.MatmulPreferenceSetAttribute, w) &&
              resolve(h, "cublasLtMatmulAlgoGetHeuristic", a.MatmulAlgoGetHeuristic, w) &&
              resolve(h, "cublasLtMatmul", a.Matmul, w);
    if (ok) {
      l->version = a.GetVersion();
      l->ok = true;
    }
    return l;
  }();
  return *lib;
}

// cuBLAS itself, for one routine: the strided-batched GEMM, the call CuPy's and PyTorch's batched matmul make, which
// chooses its kernel by cuBLAS's own heuristics. On the H200, lazyfuse's 2048 float32 products of 128 x 128 x 128 took
// 0.281-0.302 ms through cublasLtMatmul (the Lt heuristic's first answer) and 0.236 ms through this call
// (docs/performance.md).
struct BlasApi {
  decltype(&::cublasCreate_v2) Create = nullptr;
  decltype(&::cublasDestroy_v2) Destroy = nullptr;
  decltype(&::cublasSetStream_v2) SetStream = nullptr;
  decltype(&::cublasSetWorkspace_v2) SetWorkspace = nullptr;
  decltype(&::cublasGetStatusString) GetStatusString = nullptr;
  // The library's entry, not the header's inline overload taking a cudaDataType compute type.
  cublasStatus_t (*GemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                         const void*, const void*, cudaDataType, int, long long, const void*,
                                         cudaDataType, int, long long, const void*, void*, cudaDataType, int, long long,
                                         int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};
struct BlasLibrary {
  bool ok = false;
  std::string why_not, path;
  BlasApi api;
};
const BlasLibrary& blas_library() {
  static const BlasLibrary* lib = [] {
    auto* l = new BlasLibrary;
    void* h = open_toolkit_library("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), l->path, l->why_not);
    if (!h) return l;
    BlasApi& a = l->api;
    std::string& w = l->why_not;
    l->ok = resolve(h, "cublasCreate_v2", a.Create, w) && resolve(h, "cublasDestroy_v2", a.Destroy, w) &&
            resolve(h, "cublasSetStream_v2", a.SetStream, w) &&
            resolve(h, "cublasSetWorkspace_v2", a.SetWorkspace, w) &&
            resolve(h, "cublasGetStatusString", a.GetStatusString, w) &&
            resolve(h, "cublasGemmStridedBatchedEx", a.GemmStridedBatchedEx, w);
    return l;
  }();
  return *lib;
}

const Api& api() {
  return library().api;
}

void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) [[likely]]
    return;
  throw BackendError(std::string("cuBLASLt: ") + what + " failed: " + api().GetStatusString(s) + " (status " +
                     std::to_string(int(s)) + ")");
}

// RAII over each kind of cuBLASLt object.
struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { api().MatmulDescDestroy(d); }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { api().MatrixLayoutDestroy(l); }
};
struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { api().MatmulPreferenceDestroy(p); }
};
using Desc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter>;

class Handle {
public:
  Handle() { check(api().Create(&h_), "cublasLtCreate"); }
  ~Handle() {
    if (h_) api().Destroy(h_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  cublasLtHandle_t get() const { return h_; }

private:
  cublasLtHandle_t h_ = nullptr;
};

void check_blas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) [[likely]]
    return;
  throw BackendError(std::string("cuBLAS: ") + what + " failed: " + blas_library().api.GetStatusString(s) +
                     " (status " + std::to_string(int(s)) + ")");
}

class BlasHandle {
public:
  BlasHandle() { check_blas(blas_library().api.Create(&h_), "cublasCreate"); }
  ~BlasHandle() {
    if (h_) blas_library().api.Destroy(h_);
  }
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  cublasHandle_t get() const { return h_; }
  // Points the handle at `stream` and `workspace`, calling cuBLAS only for what changed since the last call:
  // cublasSetStream resets the workspace to cuBLAS's own pool, so it is followed by cublasSetWorkspace.
  void bind(cudaStream_t stream, void* workspace) {
    if (stream != stream_ || !bound_) {
      check_blas(blas_library().api.SetStream(h_, stream), "cublasSetStream");
      workspace_ = nullptr;
    }
    if (workspace != workspace_)
      check_blas(blas_library().api.SetWorkspace(h_, workspace, kWorkspaceBytes), "cublasSetWorkspace");
    stream_ = stream;
    workspace_ = workspace;
    bound_ = true;
  }

private:
  cublasHandle_t h_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* workspace_ = nullptr;
  bool bound_ = false;
};

struct Types {
  cudaDataType_t data;
  cudaDataType_t scale;
  cublasComputeType_t compute;
};

std::optional<Types> types_of(DType t, bool tf32) {
  switch (t) {
  case DType::Float32: return Types{CUDA_R_32F, CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
  case DType::Float64: return Types{CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
  case DType::Float16: return Types{CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  case DType::BFloat16: return Types{CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  case DType::Complex64: return Types{CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F};
  case DType::Complex128: return Types{CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F};
  default: return std::nullopt;
  }
}

// The largest power of two (at most 256) that divides the address: cuBLASLt's heuristics pick vectorized kernels
// only for operands aligned as they were told.
std::uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::uint32_t align = 256;
  while (align > 1 && a % align != 0) align /= 2;
  return align;
}

// Everything the algorithm and the descriptors depend on: the exact problem.
struct Key {
  int device = 0;
  DType type = DType::Float32;
  bool tf32 = false;
  std::int64_t batch = 0, m = 0, n = 0, k = 0;
  graph::GemmLayout la, lb;
  std::uint32_t align_a = 0, align_b = 0, align_c = 0;
  // The epilogue: an input C (its layout and alignment; 0: none), a bias (its alignment; 0: none), the activation.
  graph::GemmLayout lc;
  std::uint32_t align_c_in = 0, align_bias = 0;
  GemmActivation activation = GemmActivation::None;
  auto tie() const {
    return std::tie(device, type, tf32, batch, m, n, k, la.transposed, la.ld, la.batch_stride, lb.transposed, lb.ld,
                    lb.batch_stride, align_a, align_b, align_c, lc.ld, lc.batch_stride, align_c_in, align_bias,
                    activation);
  }
  bool operator<(const Key& o) const { return tie() < o.tie(); }
};

// A problem ready to run: descriptors and algorithm (or found = false: cuBLASLt has none for it).
struct Prepared {
  bool found = false;
  Desc desc;
  Layout a, b, c, c_in; // c_in: C when it is not D (else null)
  cublasLtMatmulAlgo_t algo{};
};

struct State {
  std::map<int, std::unique_ptr<Handle>> handles;
  std::map<int, std::unique_ptr<BlasHandle>> blas_handles;
  std::map<Key, Prepared> problems;
};
// Never destroyed: handles outliving main would be destroyed after the driver may have gone.
State& state() {
  static auto* s = new State;
  return *s;
}

std::atomic<std::uint64_t> g_queries{0};

Layout make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch,
                   std::int64_t batch_stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check(api().MatrixLayoutCreate(&l, type, std::uint64_t(rows), std::uint64_t(cols), ld), "cublasLtMatrixLayoutCreate");
  Layout owned(l);
  if (batch > 1) {
    const std::int32_t count = std::int32_t(batch);
    check(api().MatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
          "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    check(api().MatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride,
                                         sizeof batch_stride),
          "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
  return owned;
}

// cuBLASLt is column-major. A row-major C (m x n) is a column-major C^T (n x m), and C^T = B^T A^T: cuBLASLt's first
// operand is our b, its second our a. A row-major operand read column-major is its own transpose, so it goes in as
// it is (N); a column-major one (GemmLayout::transposed) goes in transposed (T).
Prepared prepare(const Key& key, const Types& t, cublasLtHandle_t handle) {
  Prepared p;
  cublasLtMatmulDesc_t d = nullptr;
  check(api().MatmulDescCreate(&d, t.compute, t.scale), "cublasLtMatmulDescCreate");
  p.desc.reset(d);
  const cublasOperation_t op_first = key.lb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = key.la.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(api().MatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof op_first),
        "cublasLtMatmulDescSetAttribute(TRANSA)");
  check(api().MatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof op_second),
        "cublasLtMatmulDescSetAttribute(TRANSB)");
  // Stored shapes (rows x cols, column-major) before the op.
  if (key.lb.transposed)
    p.a = make_layout(t.data, key.k, key.n, key.lb.ld, key.batch, key.lb.batch_stride);
  else
    p.a = make_layout(t.data, key.n, key.k, key.lb.ld, key.batch, key.lb.batch_stride);
  if (key.la.transposed)
    p.b = make_layout(t.data, key.m, key.k, key.la.ld, key.batch, key.la.batch_stride);
  else
    p.b = make_layout(t.data, key.k, key.m, key.la.ld, key.batch, key.la.batch_stride);
  p.c = make_layout(t.data, key.n, key.m, key.n, key.batch, key.m * key.n);
  // A row-major C (m x n, rows ld apart) is the column-major n x m matrix with the same leading dimension.
  if (key.align_c_in) p.c_in = make_layout(t.data, key.n, key.m, key.lc.ld, key.batch, key.lc.batch_stride);
  // The epilogue, in cuBLASLt's terms: its D is our D transposed, so our bias along n is its bias along D's rows.
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const bool bias = key.align_bias != 0;
  switch (key.activation) {
  case GemmActivation::None: epilogue = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT; break;
  case GemmActivation::Relu: epilogue = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU; break;
  case GemmActivation::GeluTanh: epilogue = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU; break;
  }
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT)
    check(api().MatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
          "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  if (bias) {
    // The heuristic reads the bias pointer's alignment from its value: a stand-in of the key's alignment here, the
    // real pointer before each call.
    const void* stand_in = reinterpret_cast<const void*>(std::uintptr_t(key.align_bias));
    check(api().MatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &stand_in, sizeof stand_in),
          "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }

  cublasLtMatmulPreference_t pref_raw = nullptr;
  check(api().MatmulPreferenceCreate(&pref_raw), "cublasLtMatmulPreferenceCreate");
  Preference pref(pref_raw);
  const std::uint64_t ws = kWorkspaceBytes;
  check(api().MatmulPreferenceSetAttribute(pref_raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_b}, // cuBLASLt's A is our b
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
       key.align_c_in ? std::min(key.align_c_in, key.align_c) : key.align_c},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_c}};
  for (auto& [attr, value] : aligns)
    check(api().MatmulPreferenceSetAttribute(pref_raw, attr, &value, sizeof value),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  g_queries++;
  const cublasStatus_t s = api().MatmulAlgoGetHeuristic(
      handle, d, p.a.get(), p.b.get(), p.c_in ? p.c_in.get() : p.c.get(), p.c.get(), pref_raw, 1, &result, &found);
  // A problem cuBLASLt declines (no kernel for these types, layouts or alignments) is computed another way; only a
  // failure of the library itself is an error.
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE ||
      (s == CUBLAS_STATUS_SUCCESS && found == 0))
    return p;
  check(s, "cublasLtMatmulAlgoGetHeuristic");
  p.algo = result.algo;
  p.found = true;
  return p;
}

// alpha and beta in the scale type (float, double, or their complex pairs: the imaginary part stays 0). It points
// into itself, so it is never copied.
struct Scales {
  double alpha_d[2], beta_d[2];
  float alpha_f[2], beta_f[2];
  const void* alpha;
  const void* beta;
  Scales(const Types& t, double alpha_value, double beta_value)
      : alpha_d{alpha_value, 0}, beta_d{beta_value, 0}, alpha_f{float(alpha_value), 0}, beta_f{float(beta_value), 0} {
    const bool scale_double = t.scale == CUDA_R_64F || t.scale == CUDA_C_64F;
    alpha = scale_double ? static_cast<const void*>(alpha_d) : alpha_f;
    beta = scale_double ? static_cast<const void*>(beta_d) : beta_f;
  }
  Scales(const Scales&) = delete;
  Scales& operator=(const Scales&) = delete;
};

// A batched product with nothing after it but a scale, as cuBLAS's cublasGemmStridedBatchedEx (operands as in
// prepare: our b first). False, having queued nothing, when cuBLAS is not loadable, a size exceeds its int
// arguments, or it declines the problem.
bool run_strided_batched(const Gemm& g, const Types& t, int device, void* workspace, cudaStream_t stream) {
  const BlasLibrary& l = blas_library();
  if (!l.ok) return false;
  for (std::int64_t v : {g.batch, g.m, g.n, g.k, g.la.ld, g.lb.ld})
    if (v > std::int64_t(INT32_MAX)) return false;
  auto& handle = state().blas_handles[device];
  if (!handle) handle = std::make_unique<BlasHandle>();
  handle->bind(stream, workspace);
  const Scales scales(t, g.alpha, 0);
  const cublasStatus_t s = l.api.GemmStridedBatchedEx(
      handle->get(), g.lb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, g.la.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n),
      int(g.m), int(g.k), scales.alpha, g.b, t.data, int(g.lb.ld), g.lb.batch_stride, g.a, t.data, int(g.la.ld),
      g.la.batch_stride, scales.beta, g.c, t.data, int(g.n), g.m * g.n, int(g.batch), t.compute, CUBLAS_GEMM_DEFAULT);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED) return false;
  check_blas(s, "cublasGemmStridedBatchedEx");
  return true;
}

} // namespace

bool supports(DType type) {
  return types_of(type, false).has_value();
}

bool available(std::string* why_not) {
  const Library& l = library();
  if (!l.ok && why_not) *why_not = l.why_not;
  return l.ok;
}

std::string description() {
  const Library& l = library();
  if (!l.ok) return "cuBLASLt not loadable: " + l.why_not;
  const BlasLibrary& blas = blas_library();
  return "cuBLASLt " + std::to_string(l.version) + " (" + l.path + "); batched products: " +
         (blas.ok ? "cuBLAS (" + blas.path + ")" : "cuBLASLt (cuBLAS not loadable: " + blas.why_not + ")");
}

std::uint64_t heuristic_queries() {
  return g_queries.load();
}

bool run(const Gemm& g, void* workspace, cudaStream_t stream) {
  LAZYFUSE_ASSERT(available() && supports(g.type), "cublaslt::run without the library or for an unsupported type");
  if (g.batch > std::int64_t(INT32_MAX)) return false;
  const bool tf32 = config::snapshot().tf32;
  const Types t = *types_of(g.type, tf32);
  Key key;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&key.device));
  if (g.batch > 1 && !g.c_in && !g.bias && g.activation == GemmActivation::None &&
      run_strided_batched(g, t, key.device, workspace, stream))
    return true;
  key.type = g.type;
  key.tf32 = tf32 && g.type == DType::Float32;
  key.batch = g.batch;
  key.m = g.m;
  key.n = g.n;
  key.k = g.k;
  key.la = g.la;
  key.lb = g.lb;
  key.align_a = alignment_of(g.a);
  key.align_b = alignment_of(g.b);
  key.align_c = alignment_of(g.c);
  if (g.c_in) {
    key.lc = g.lc;
    key.align_c_in = alignment_of(g.c_in);
  }
  if (g.bias) key.align_bias = alignment_of(g.bias);
  key.activation = g.activation;
  State& st = state();
  auto& handle = st.handles[key.device];
  if (!handle) handle = std::make_unique<Handle>();
  auto it = st.problems.find(key);
  if (it == st.problems.end()) it = st.problems.emplace(key, prepare(key, t, handle->get())).first;
  const Prepared& p = it->second;
  if (!p.found) return false;
  if (g.bias)
    check(api().MatmulDescSetAttribute(p.desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof g.bias),
          "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  const Scales scales(t, g.alpha, g.c_in ? g.beta : 0);
  const void* c_in = g.c_in ? g.c_in : g.c;
  check(api().Matmul(handle->get(), p.desc.get(), scales.alpha, g.b, p.a.get(), g.a, p.b.get(), scales.beta, c_in,
                     p.c_in ? p.c_in.get() : p.c.get(), g.c, p.c.get(), &p.algo, workspace, kWorkspaceBytes, stream),
        "cublasLtMatmul");
  return true;
}

} // namespace lazyfuse::runtime::cublaslt
