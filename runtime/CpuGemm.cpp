#include "runtime/CpuGemm.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"
#include "graph/HostOps.h"
#include "runtime/ThreadPool.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

namespace lazyfuse::runtime::cpu_gemm {

namespace {

int thread_count() {
  return ThreadPool::resolve_threads(config::snapshot().cpu_threads);
}

// ---- the blocked loop ------------------------------------------------------------------------------------------

// What a product of T accumulates in: float for the half types (one rounding at the end, as cuBLASLt's float32
// accumulation), unsigned integers of at least 32 bits for the integer types (wrapping, as NumPy's integer matmul,
// with no signed overflow in between), T itself otherwise.
template <class T> struct Accumulator { using type = T; };
template <> struct Accumulator<bool> { using type = std::uint8_t; }; // not std::vector<bool>'s proxies
template <> struct Accumulator<lazyfuse_opmath::lf_f16> { using type = float; };
template <> struct Accumulator<lazyfuse_opmath::lf_bf16> { using type = float; };
template <class T>
requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) struct Accumulator<T> {
  using type = std::conditional_t<(sizeof(T) > 4), std::uint64_t, std::uint32_t>;
};

// The half types as graph/OpMath.inc's structs (their conversions live in the graph layer), the rest as they are.
template <class Host>
using Element =
    std::conditional_t<std::is_same_v<Host, float16> || std::is_same_v<Host, bfloat16>, graph::opmath_t<Host>, Host>;

template <class Host> void blocked_rows(const Gemm& g, std::int64_t first, std::int64_t last) {
  using T = Element<Host>;
  using Acc = typename Accumulator<T>::type;
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  // Element (r, s) of a matrix at `base` read through layout l.
  auto at = [](const T* base, const graph::GemmLayout& l, std::int64_t r, std::int64_t s) {
    return l.transposed ? base[s * l.ld + r] : base[r * l.ld + s];
  };
  auto value = [](T x) {
    if constexpr (std::is_same_v<Acc, T>)
      return x;
    else if constexpr (std::is_integral_v<Acc>)
      return Acc(x); // two's complement: the low bits are what wrapping arithmetic needs
    else
      return lazyfuse_opmath::lf_cast<float, T>(x);
  };
  std::vector<Acc> acc(std::size_t(g.n));
  // k in blocks, so that a block of b's rows stays in cache while every row of a in the range uses it.
  constexpr std::int64_t kBlock = 256;
  for (std::int64_t row = first; row < last; ++row) {
    const std::int64_t batch = row / g.m, i = row % g.m;
    const T* ab = a + batch * g.la.batch_stride;
    const T* bb = b + batch * g.lb.batch_stride;
    std::fill(acc.begin(), acc.end(), Acc{});
    for (std::int64_t l0 = 0; l0 < g.k; l0 += kBlock) {
      const std::int64_t l1 = std::min(g.k, l0 + kBlock);
      for (std::int64_t l = l0; l < l1; ++l) {
        const Acc x = value(at(ab, g.la, i, l));
        if constexpr (std::is_same_v<T, bool>) {
          if (!x) continue;
          for (std::int64_t j = 0; j < g.n; ++j) acc[std::size_t(j)] |= std::uint8_t(at(bb, g.lb, l, j));
        } else if (!g.lb.transposed) {
          const T* brow = bb + l * g.lb.ld;
          for (std::int64_t j = 0; j < g.n; ++j) acc[std::size_t(j)] += x * value(brow[j]);
        } else {
          for (std::int64_t j = 0; j < g.n; ++j) acc[std::size_t(j)] += x * value(at(bb, g.lb, l, j));
        }
      }
    }
    T* crow = c + row * g.n;
    for (std::int64_t j = 0; j < g.n; ++j) {
      if constexpr (std::is_same_v<Acc, T>)
        crow[j] = acc[std::size_t(j)];
      else if constexpr (std::is_same_v<Acc, float>)
        crow[j] = lazyfuse_opmath::lf_cast<T, float>(acc[std::size_t(j)]);
      else
        crow[j] = T(acc[std::size_t(j)]);
    }
  }
}

// ---- the epilogue ------------------------------------------------------------------------------------------------

// After the product is in g.c: alpha and beta * c_in (unless BLAS applied them), the bias, the activation, each
// rounded to the type as the unfused ops would round it (half types compute in float32, as every op does).
template <class Host> void epilogue_rows(const Gemm& g, bool scaled, std::int64_t first, std::int64_t last) {
  using T = Element<Host>;
  using W = std::conditional_t<std::is_same_v<T, double>, double, float>;
  namespace op = lazyfuse_opmath;
  auto wide = [](T x) {
    if constexpr (std::is_same_v<T, W>)
      return x;
    else
      return op::lf_cast<W, T>(x);
  };
  auto narrow = [](W x) {
    if constexpr (std::is_same_v<T, W>)
      return x;
    else
      return op::lf_cast<T, W>(x);
  };
  T* c = static_cast<T*>(g.c);
  const T* c_in = static_cast<const T*>(g.c_in);
  const T* bias = static_cast<const T*>(g.bias);
  for (std::int64_t row = first; row < last; ++row) {
    const std::int64_t batch = row / g.m, i = row % g.m;
    T* crow = c + row * g.n;
    const T* in_row = c_in ? c_in + batch * g.lc.batch_stride + i * g.lc.ld : nullptr;
    for (std::int64_t j = 0; j < g.n; ++j) {
      W v = wide(crow[j]);
      if (!scaled && (g.alpha != 1 || in_row)) {
        v = W(g.alpha) * v;
        if (in_row) v = v + W(g.beta) * wide(in_row[j]);
        v = wide(narrow(v));
      }
      if (bias) v = wide(narrow(op::lf_add(v, wide(bias[j]))));
      if (g.activation == GemmActivation::Relu) v = op::lf_maximum(v, W(0));
      if (g.activation == GemmActivation::GeluTanh) v = op::lf_gelu_tanh(v);
      crow[j] = narrow(v);
    }
  }
}

// `scaled`: alpha and beta * c_in are already in g.c (BLAS took them).
void epilogue(const Gemm& g, bool scaled) {
  const std::int64_t rows = g.batch * g.m;
  const std::int64_t threads = std::max<std::int64_t>(
      1, std::min<std::int64_t>({thread_count(), rows, std::max<std::int64_t>(1, (rows * g.n) >> 16)}));
  auto run = [&]<class Host>() {
    ThreadPool::instance().parallel_for(
        rows, std::max<std::int64_t>(1, (rows + threads - 1) / threads), int(threads),
        [&g, scaled](std::int64_t first, std::int64_t last) { epilogue_rows<Host>(g, scaled, first, last); });
  };
  switch (g.type) {
  case DType::Float32: run.operator()<float>(); break;
  case DType::Float64: run.operator()<double>(); break;
  case DType::Float16: run.operator()<float16>(); break;
  case DType::BFloat16: run.operator()<bfloat16>(); break;
  default: LAZYFUSE_ASSERT(false, "cpu_gemm: an epilogue on a product of a type without one");
  }
}

void blocked(const Gemm& g) {
  const std::int64_t rows = g.batch * g.m;
  // Threads only where each gets real work (2^20 multiply-adds and more).
  const std::int64_t work = rows * g.n * g.k;
  const std::int64_t threads =
      std::max<std::int64_t>(1, std::min<std::int64_t>({thread_count(), rows, std::max<std::int64_t>(1, work >> 20)}));
  graph::visit_dtype(g.type, [&]<class T>() {
    // Each row's result depends on that row alone, so the chunking changes no bits.
    ThreadPool::instance().parallel_for(
        rows, std::max<std::int64_t>(1, (rows + threads - 1) / threads), int(threads),
        [&g](std::int64_t first, std::int64_t last) { blocked_rows<T>(g, first, last); });
  });
}

// ---- BLAS --------------------------------------------------------------------------------------------------------

#ifdef LAZYFUSE_HAVE_BLAS
template <class T> struct RealOf { using type = T; };
template <class T> struct RealOf<std::complex<T>> { using type = T; };

// The Fortran interface (column-major, every argument by address), which every BLAS has; CBLAS is not always there.
template <class T>
using GemmFn = void (*)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
                        const T*, const int*, const T*, T*, const int*);

// The BLAS that CMake found, opened at the first product (runtime/CMakeLists.txt says why it is not linked), or
// nothing usable: then the blocked loop computes every product.
struct Blas {
  GemmFn<float> sgemm = nullptr;
  GemmFn<double> dgemm = nullptr;
  GemmFn<std::complex<float>> cgemm = nullptr;
  GemmFn<std::complex<double>> zgemm = nullptr;
  void (*set_threads)(int) = nullptr;    // OpenBLAS only
  const char* (*get_config)() = nullptr; // OpenBLAS only
  bool usable() const { return sgemm && dgemm && cgemm && zgemm; }
};

std::atomic<bool> g_blas_opened{false};

const Blas& blas_library() {
  static const Blas blas = [] {
    Blas b;
    // The files in link order, ':'-separated; handles are kept for the process (BLAS' threads outlive any call).
    const std::string files = LAZYFUSE_BLAS_FILES;
    std::vector<void*> handles;
    for (std::size_t start = 0; start <= files.size();) {
      const std::size_t end = std::min(files.find(':', start), files.size());
      if (end > start)
        if (void* h = dlopen(files.substr(start, end - start).c_str(), RTLD_NOW | RTLD_LOCAL)) handles.push_back(h);
      start = end + 1;
    }
    auto find = [&](const char* name) -> void* {
      for (void* h : handles)
        if (void* f = dlsym(h, name)) return f;
      return nullptr;
    };
    b.sgemm = reinterpret_cast<GemmFn<float>>(find("sgemm_"));
    b.dgemm = reinterpret_cast<GemmFn<double>>(find("dgemm_"));
    b.cgemm = reinterpret_cast<GemmFn<std::complex<float>>>(find("cgemm_"));
    b.zgemm = reinterpret_cast<GemmFn<std::complex<double>>>(find("zgemm_"));
    b.set_threads = reinterpret_cast<void (*)(int)>(find("openblas_set_num_threads"));
    b.get_config = reinterpret_cast<const char* (*)()>(find("openblas_get_config"));
    g_blas_opened.store(true, std::memory_order_release);
    return b;
  }();
  return blas;
}

// OpenBLAS' thread count, set from LAZYFUSE_CPU_THREADS.
void set_blas_threads(const Blas& b) {
  static std::atomic<int> current{-1};
  const int want = thread_count();
  if (b.set_threads && current.exchange(want, std::memory_order_relaxed) != want) b.set_threads(want);
}

template <class T> bool blas_call(const Gemm& g, const Blas& library, GemmFn<T> gemm) {
  const std::int64_t limits[] = {g.m, g.n, g.k, g.la.ld, g.lb.ld};
  if (std::any_of(std::begin(limits), std::end(limits), [](std::int64_t v) { return v > INT_MAX; })) return false;
  set_blas_threads(library);
  const char ta = g.lb.transposed ? 'T' : 'N', tb = g.la.transposed ? 'T' : 'N';
  const int m = int(g.n), n = int(g.m), k = int(g.k), lda = int(g.lb.ld), ldb = int(g.la.ld), ldc = int(g.n);
  const T alpha(static_cast<typename RealOf<T>::type>(g.alpha));
  const T beta(static_cast<typename RealOf<T>::type>(g.c_in ? g.beta : 0));
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  // BLAS' C is also its output: c_in is copied into the result first (c_in itself is never written).
  if (g.c_in) {
    const T* in = static_cast<const T*>(g.c_in);
    for (std::int64_t e = 0; e < g.batch; ++e)
      for (std::int64_t i = 0; i < g.m; ++i)
        std::copy_n(in + e * g.lc.batch_stride + i * g.lc.ld, g.n, c + (e * g.m + i) * g.n);
  }
  for (std::int64_t e = 0; e < g.batch; ++e)
    gemm(&ta, &tb, &m, &n, &k, &alpha, b + e * g.lb.batch_stride, &lda, a + e * g.la.batch_stride, &ldb, &beta,
         c + e * g.m * g.n, &ldc);
  return true;
}

bool blas(const Gemm& g) {
  switch (g.type) {
  case DType::Float32:
  case DType::Float64:
  case DType::Complex64:
  case DType::Complex128: break;
  default: return false;
  }
  const Blas& b = blas_library();
  if (!b.usable()) return false;
  switch (g.type) {
  case DType::Float32: return blas_call<float>(g, b, b.sgemm);
  case DType::Float64: return blas_call<double>(g, b, b.dgemm);
  case DType::Complex64: return blas_call<std::complex<float>>(g, b, b.cgemm);
  default: return blas_call<std::complex<double>>(g, b, b.zgemm);
  }
}
#endif

} // namespace

bool run(const Gemm& g) {
  LAZYFUSE_ASSERT(g.batch >= 1 && g.m >= 1 && g.n >= 1 && g.k >= 1, "cpu_gemm::run: an empty product");
#ifdef LAZYFUSE_HAVE_BLAS
  if (blas(g)) {
    if (g.bias || g.activation != GemmActivation::None) epilogue(g, true);
    return true;
  }
#endif
  blocked(g);
  if (g.has_epilogue()) epilogue(g, false);
  return false;
}

std::string description() {
#ifdef LAZYFUSE_HAVE_BLAS
  const Blas& b = blas_library();
  if (!b.usable())
    return std::string("blocked loop (BLAS at ") + LAZYFUSE_BLAS_FILES + " could not be opened or lacks ?gemm_)";
  if (b.get_config)
    return std::string(b.get_config()) +
           " (float32, float64, complex; threads: LAZYFUSE_CPU_THREADS), blocked loop for the rest";
  return std::string("BLAS (") + LAZYFUSE_BLAS_FILES + "; float32, float64, complex), blocked loop for the rest";
#else
  return "blocked loop (built without BLAS)";
#endif
}

bool blas_opened() {
#ifdef LAZYFUSE_HAVE_BLAS
  return g_blas_opened.load(std::memory_order_acquire);
#else
  return false;
#endif
}

} // namespace lazyfuse::runtime::cpu_gemm
