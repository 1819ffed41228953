// Hand-written CUDA kernels for the workloads of shared/PERF_TARGETS.md and of issue 14's element types (float16,
// bfloat16, complex64; section "The element types" below): the practical limit lazyfuse's generated
// kernels are measured against. Each workload is registered in several variants (elements per thread, grid shape,
// streaming cache hints, threads per row) so the fastest shows up in the table; the peers' timing method and the
// counters are those of bench/timing.h (20 back-to-back launches + one synchronize, manual time, `event_ms`,
// `GB_per_s`, `pct_of_copy` against BM_CopyReference measured first). This program does not use lazyfuse at all,
// so that the limit cannot inherit a runtime overhead.
//
// Honesty: every variant runs once on poisoned (NaN) outputs before it is timed; every output element must be
// finite and a sample must match a float64 host reference (relative L2 error), else the benchmark fails with
// SkipWithError. Inputs come from a counter-based generator that the host evaluates bit-identically, so the host
// reference needs no copy of the inputs. No fast-math: precise sinf/cosf/expf/logf/erff, as lazyfuse generates.
#include "timing.h"

#include <benchmark/benchmark.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace lazyfuse_bench;

constexpr int kThreads = 256; // elementwise and sumsq blocks

// ---------------------------------------------------------------------------------------------------------------
// Inputs: splitmix64 of (seed, index) -> uniform float in [lo, hi). The host evaluates the same function for its
// reference; the device side uses _rn intrinsics so that nvcc cannot contract the affine map into an FMA (the host
// compiler for x86-64 without -mfma cannot either), keeping both bit-identical. The check verifies that too.
// ---------------------------------------------------------------------------------------------------------------
__host__ __device__ inline float uniform_at(std::uint64_t seed, std::uint64_t i, float lo, float hi) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + i * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const float u = float(z >> 40) * 0x1p-24f; // exact: 24 bits
#ifdef __CUDA_ARCH__
  return __fadd_rn(lo, __fmul_rn(hi - lo, u));
#else
  const float scaled = (hi - lo) * u;
  return lo + scaled;
#endif
}

struct InputSpec {
  std::uint64_t seed;
  float lo, hi;
  float at(std::int64_t i) const { return uniform_at(seed, std::uint64_t(i), lo, hi); }
};

__global__ void fill_uniform(float* p, std::int64_t n, std::uint64_t seed, float lo, float hi) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = uniform_at(seed, std::uint64_t(i), lo, hi);
}

__device__ inline bool finite_element(float v) {
  return isfinite(v);
}
__device__ inline bool finite_element(__half v) {
  return isfinite(__half2float(v));
}
__device__ inline bool finite_element(__nv_bfloat16 v) {
  return isfinite(__bfloat162float(v));
}
__device__ inline bool finite_element(float2 v) { // a complex64 element
  return isfinite(v.x) && isfinite(v.y);
}

template <class T> __global__ void count_nonfinite(const T* p, std::int64_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    local += !finite_element(p[i]);
  if (local) atomicAdd(count, local);
}

__global__ void gather_strided(const float* src, std::int64_t start, std::int64_t stride, std::int64_t count,
                               float* dst) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < count;
       k += std::int64_t(gridDim.x) * blockDim.x)
    dst[k] = src[start + k * stride];
}

// ---------------------------------------------------------------------------------------------------------------
// Host-side plumbing: errors, the stream, buffers that live for the whole process.
// ---------------------------------------------------------------------------------------------------------------
struct CudaFailure {
  std::string what;
};

void check_cuda(cudaError_t e, const char* where) {
  if (e != cudaSuccess) throw CudaFailure{std::string(where) + ": " + cudaGetErrorString(e)};
}

cudaStream_t stream() {
  static cudaStream_t s = [] {
    cudaStream_t t = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking), "cudaStreamCreate");
    return t;
  }();
  return s;
}

struct DeviceInfo {
  int sms = 0;
  std::string error; // why benchmarks cannot run
};

const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    DeviceInfo d;
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
      d.error = std::string("needs a CUDA device (") + cudaGetErrorString(e) + ")";
      return d;
    }
    if (count < 1) {
      d.error = "needs a CUDA device (none visible)";
      return d;
    }
    cudaDeviceProp p{};
    if (cudaError_t e = cudaGetDeviceProperties(&p, 0); e != cudaSuccess) {
      d.error = std::string("needs a CUDA device (") + cudaGetErrorString(e) + ")";
      return d;
    }
    d.sms = p.multiProcessorCount;
    return d;
  }();
  return info;
}

bool has_gpu(benchmark::State& state) {
  const auto& d = device_info();
  if (d.error.empty()) return true;
  state.SkipWithError(d.error.c_str());
  return false;
}

// Buffers are allocated once per name and kept until the process exits: repetitions and variants share inputs,
// and freeing during static destruction would race the runtime's own teardown. A request for more elements than a
// name holds replaces its buffer (only ever between launches, after a synchronize).
void* raw_buffer(const std::string& name, std::size_t bytes) {
  struct Held {
    void* p;
    std::size_t bytes;
  };
  static auto* buffers = new std::map<std::string, Held>;
  auto it = buffers->find(name);
  if (it != buffers->end() && it->second.bytes >= bytes) return it->second.p;
  if (it != buffers->end()) {
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    cudaFree(it->second.p);
    buffers->erase(it);
  }
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), ("cudaMalloc " + name).c_str());
  buffers->emplace(name, Held{p, bytes});
  return p;
}

template <class T> T* typed_buffer(const std::string& name, std::int64_t n) {
  return static_cast<T*>(raw_buffer(name, std::size_t(n) * sizeof(T)));
}

float* buffer(const std::string& name, std::int64_t n) {
  return typed_buffer<float>(name, n);
}

float* input(const std::string& name, std::int64_t n, const InputSpec& spec) {
  static auto* filled = new std::map<std::string, bool>;
  float* p = buffer(name, n);
  if (!(*filled)[name]) {
    fill_uniform<<<4 * device_info().sms, 256, 0, stream()>>>(p, n, spec.seed, spec.lo, spec.hi);
    check_cuda(cudaGetLastError(), "fill_uniform");
    check_cuda(cudaStreamSynchronize(stream()), "fill_uniform");
    // The reference relies on the host generating the same bits: check a few.
    for (std::int64_t i : {std::int64_t(0), n / 3, n - 1}) {
      float got = 0;
      check_cuda(cudaMemcpy(&got, p + i, sizeof got, cudaMemcpyDeviceToHost), "cudaMemcpy");
      if (got != spec.at(i)) throw CudaFailure{"host and device input generators disagree at " + name};
    }
    (*filled)[name] = true;
  }
  return p;
}

// All bits set is a NaN in every floating type here (float, float16, bfloat16, both parts of a complex).
template <class T> void poison(T* p, std::int64_t n) {
  check_cuda(cudaMemsetAsync(p, 0xFF, std::size_t(n) * sizeof(T), stream()), "cudaMemset");
}

template <class T> std::string nonfinite_error(const T* p, std::int64_t n, const char* what) {
  unsigned long long* count = nullptr;
  check_cuda(cudaMalloc(&count, sizeof *count), "cudaMalloc");
  check_cuda(cudaMemsetAsync(count, 0, sizeof *count, stream()), "cudaMemset");
  count_nonfinite<<<4 * device_info().sms, 256, 0, stream()>>>(p, n, count);
  check_cuda(cudaGetLastError(), "count_nonfinite");
  unsigned long long host = 0;
  check_cuda(cudaMemcpyAsync(&host, count, sizeof host, cudaMemcpyDeviceToHost, stream()), "cudaMemcpy");
  check_cuda(cudaStreamSynchronize(stream()), "count_nonfinite");
  cudaFree(count);
  if (host == 0) return "";
  return std::string(what) + ": " + std::to_string(host) + " of " + std::to_string(n) +
         " elements not finite (unwritten or wrong)";
}

template <class T> std::vector<T> download(const T* p, std::int64_t start, std::int64_t count) {
  std::vector<T> h(static_cast<std::size_t>(count));
  check_cuda(cudaMemcpy(h.data(), p + start, std::size_t(count) * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return h;
}

std::vector<float> download_strided(const float* p, std::int64_t start, std::int64_t stride, std::int64_t count) {
  float* tmp = buffer("gather.tmp", std::max<std::int64_t>(count, 1 << 21));
  gather_strided<<<4 * device_info().sms, 256, 0, stream()>>>(p, start, stride, count, tmp);
  check_cuda(cudaGetLastError(), "gather_strided");
  check_cuda(cudaStreamSynchronize(stream()), "gather_strided");
  return download(tmp, 0, count);
}

// Relative L2 error; infinity for any non-finite element, so NaN never passes.
struct L2 {
  double num = 0, den = 0;
  bool finite = true;
  void add(double got, double want) {
    if (!std::isfinite(got)) finite = false;
    num += (got - want) * (got - want);
    den += want * want;
  }
  double rel() const { return finite ? std::sqrt(num) / (den > 0 ? std::sqrt(den) : 1.0) : INFINITY; }
};

std::string l2_error(const L2& l2, double tol, const char* what) {
  const double e = l2.rel();
  if (e <= tol) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s: wrong result, relative L2 error %.3g > %.1g against float64", what, e, tol);
  return buf;
}

// Runs `call` as the peers were timed (bench/timing.h), on this program's stream; an iteration whose launches
// failed fails the benchmark.
template <class F> void measure(benchmark::State& state, F&& call, double bytes) {
  for (int w = 0; w < kWarmup; ++w) call();
  check_cuda(cudaStreamSynchronize(stream()), "warm-up");
  time_calls(
      state, stream(), call, [] { cudaStreamSynchronize(stream()); },
      []() -> std::string {
        const cudaError_t e = cudaGetLastError();
        return e == cudaSuccess ? "" : std::string("launch failed: ") + cudaGetErrorString(e);
      },
      1, bytes);
}

// Checks a variant once per process (repetitions reuse the verdict), then times it. `check` returns "" or what
// is wrong; CudaFailure anywhere becomes the benchmark's error.
template <class Launch, class Check>
void run_limit(benchmark::State& state, const std::string& variant, Launch&& launch, Check&& check, double bytes) {
  static auto* verdicts = new std::map<std::string, std::string>;
  try {
    auto it = verdicts->find(variant);
    if (it == verdicts->end()) it = verdicts->emplace(variant, check()).first;
    if (!it->second.empty()) {
      state.SkipWithError(it->second.c_str());
      return;
    }
    measure(state, launch, bytes);
  } catch (const CudaFailure& f) {
    (*verdicts)[variant] = f.what;
    state.SkipWithError(f.what.c_str());
  }
}

template <class Kernel> void kernel_counters(benchmark::State& state, Kernel kernel, int block) {
  cudaFuncAttributes attr{};
  int per_sm = 0;
  if (cudaFuncGetAttributes(&attr, kernel) == cudaSuccess) state.counters["regs"] = attr.numRegs;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0) == cudaSuccess)
    state.counters["blocks_per_sm"] = per_sm;
}

// ---------------------------------------------------------------------------------------------------------------
// Device helpers.
// ---------------------------------------------------------------------------------------------------------------
// Streaming hints (evict-first) keep single-use data from displacing anything useful in L2; without them, the
// read-only path (LDG.CONSTANT) is the default.
template <bool kStream> __device__ __forceinline__ float4 load4(const float* p) {
  if constexpr (kStream)
    return __ldcs(reinterpret_cast<const float4*>(p));
  else
    return __ldg(reinterpret_cast<const float4*>(p));
}
template <bool kStream> __device__ __forceinline__ void store4(float* p, float4 v) {
  if constexpr (kStream)
    __stcs(reinterpret_cast<float4*>(p), v);
  else
    *reinterpret_cast<float4*>(p) = v;
}
__device__ __forceinline__ float& lane(float4& v, int c) {
  return reinterpret_cast<float*>(&v)[c];
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread gets the block's result; the order of combination is fixed, so results are deterministic.
template <int kBlock, class Op> __device__ float block_reduce(float v, Op op, float identity) {
  for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  if constexpr (kBlock > 32) {
    constexpr int kWarps = kBlock / 32;
    __shared__ float partial[kWarps];
    const int warp = threadIdx.x / 32, ln = threadIdx.x % 32;
    if (ln == 0) partial[warp] = v;
    __syncthreads();
    // Over all 32 lanes (not just kWarps), so that every lane, not only the first kWarps, ends with the result.
    v = ln < kWarps ? partial[ln] : identity;
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads(); // partial[] may be reused by the next reduction
  }
  return v;
}

// ---------------------------------------------------------------------------------------------------------------
// Elementwise: each thread handles V float4s per input. All loads of a chunk are issued before any arithmetic so
// that V*inputs 16-byte requests per thread are in flight. grid == chunks gives one block per chunk; a smaller
// grid strides over chunks.
// ---------------------------------------------------------------------------------------------------------------
template <int N> struct In { const float* p[N]; };
template <int N> struct Out { float* p[N]; };

template <class Op, int V>
__device__ __forceinline__ void apply4(float4 (&a)[Op::kIn][V], float4 (&r)[Op::kOut][V], int v) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    float x[Op::kIn], y[Op::kOut];
#pragma unroll
    for (int i = 0; i < Op::kIn; ++i) x[i] = lane(a[i][v], c);
    Op::apply(x, y);
#pragma unroll
    for (int o = 0; o < Op::kOut; ++o) lane(r[o][v], c) = y[o];
  }
}

template <class Op, int V, bool kStream>
__global__ void __launch_bounds__(kThreads) elementwise(In<Op::kIn> in, Out<Op::kOut> out, std::int64_t n) {
  const std::int64_t n4 = n / 4;
  const std::int64_t chunks = (n4 + kThreads * V - 1) / (kThreads * V);
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const std::int64_t first = chunk * (kThreads * V) + threadIdx.x;
    float4 a[Op::kIn][V], r[Op::kOut][V];
    if (first + std::int64_t(V - 1) * kThreads < n4) {
#pragma unroll
      for (int v = 0; v < V; ++v)
#pragma unroll
        for (int i = 0; i < Op::kIn; ++i) a[i][v] = load4<kStream>(in.p[i] + 4 * (first + v * kThreads));
#pragma unroll
      for (int v = 0; v < V; ++v) {
        apply4<Op, V>(a, r, v);
#pragma unroll
        for (int o = 0; o < Op::kOut; ++o) store4<kStream>(out.p[o] + 4 * (first + v * kThreads), r[o][v]);
      }
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const std::int64_t k = first + v * kThreads;
        if (k >= n4) break;
#pragma unroll
        for (int i = 0; i < Op::kIn; ++i) a[i][v] = load4<kStream>(in.p[i] + 4 * k);
        apply4<Op, V>(a, r, v);
#pragma unroll
        for (int o = 0; o < Op::kOut; ++o) store4<kStream>(out.p[o] + 4 * k, r[o][v]);
      }
    }
  }
  // The last n % 4 elements, if any.
  if (blockIdx.x == 0 && threadIdx.x < n - 4 * n4) {
    const std::int64_t k = 4 * n4 + threadIdx.x;
    float x[Op::kIn], y[Op::kOut];
    for (int i = 0; i < Op::kIn; ++i) x[i] = in.p[i][k];
    Op::apply(x, y);
    for (int o = 0; o < Op::kOut; ++o) out.p[o][k] = y[o];
  }
}

struct CopyOp {
  static constexpr int kIn = 1, kOut = 1;
  static constexpr const char* kName = "copy";
  __device__ static void apply(const float (&x)[1], float (&y)[1]) { y[0] = x[0]; }
  static void reference(const double (&x)[1], double (&y)[1]) { y[0] = x[0]; }
};

struct ChainOp {
  static constexpr int kIn = 2, kOut = 1;
  static constexpr const char* kName = "chain";
  __device__ static void apply(const float (&in)[2], float (&y)[1]) {
    const float x = in[0], z = in[1];
    y[0] = sqrtf(fabsf(sinf(x) * cosf(z) + x * z * 0.5f - expf(-x * x)));
  }
  static void reference(const double (&in)[2], double (&y)[1]) {
    const double x = in[0], z = in[1];
    y[0] = std::sqrt(std::fabs(std::sin(x) * std::cos(z) + x * z * 0.5 - std::exp(-x * x)));
  }
};

// Call and put from S, K, T (r = 0.02, v = 0.30), the normal CDF through erf. cdf(-d) is computed as
// 0.5*(1 - erf(d/sqrt2)): erff is odd, so this is the same value with two erff instead of four.
struct BlackScholesOp {
  static constexpr int kIn = 3, kOut = 2;
  static constexpr const char* kName = "blackscholes";
  __device__ static void apply(const float (&in)[3], float (&y)[2]) {
    const float S = in[0], K = in[1], T = in[2], r = 0.02f, v = 0.30f;
    const float sqrtT = sqrtf(T);
    const float d1 = (logf(S / K) + (r + 0.5f * v * v) * T) / (v * sqrtT);
    const float d2 = d1 - v * sqrtT;
    const float e1 = erff(d1 * 0.70710678f), e2 = erff(d2 * 0.70710678f);
    const float disc = K * expf(-r * T);
    y[0] = S * (0.5f * (1.0f + e1)) - disc * (0.5f * (1.0f + e2));
    y[1] = disc * (0.5f * (1.0f - e2)) - S * (0.5f * (1.0f - e1));
  }
  static void reference(const double (&in)[3], double (&y)[2]) {
    const double S = in[0], K = in[1], T = in[2], r = 0.02, v = 0.30;
    const double sqrtT = std::sqrt(T);
    const double d1 = (std::log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT);
    const double d2 = d1 - v * sqrtT;
    auto cdf = [](double d) { return 0.5 * (1.0 + std::erf(d / std::sqrt(2.0))); };
    const double disc = K * std::exp(-r * T);
    y[0] = S * cdf(d1) - disc * cdf(d2);
    y[1] = disc * cdf(-d2) - S * cdf(-d1);
  }
};

// A time loop's small update applied 1,000 times to each element (bench_loops' BM_UpdateLoop): multiply and add
// rounded separately, as lazyfuse's kernels compute them (--fmad=false).
struct UpdateLoopOp {
  static constexpr int kIn = 1, kOut = 1, kSteps = 1000;
  static constexpr const char* kName = "update_loop";
  __device__ static void apply(const float (&x)[1], float (&y)[1]) {
    float v = x[0];
    for (int s = 0; s < kSteps; ++s) v = __fadd_rn(__fmul_rn(v, 0.999f), 0.001f);
    y[0] = v;
  }
  static void reference(const double (&x)[1], double (&y)[1]) {
    double v = x[0];
    for (int s = 0; s < kSteps; ++s) v = v * double(0.999f) + double(0.001f);
    y[0] = v;
  }
};

template <class Op> using ElementwiseKernel = void (*)(In<Op::kIn>, Out<Op::kOut>, std::int64_t);

template <class Op> ElementwiseKernel<Op> pick_elementwise(int ept, bool cs) {
  switch (ept) {
  case 4: return cs ? elementwise<Op, 1, true> : elementwise<Op, 1, false>;
  case 8: return cs ? elementwise<Op, 2, true> : elementwise<Op, 2, false>;
  case 12: return cs ? elementwise<Op, 3, true> : elementwise<Op, 3, false>;
  case 16: return cs ? elementwise<Op, 4, true> : elementwise<Op, 4, false>;
  case 32: return cs ? elementwise<Op, 8, true> : elementwise<Op, 8, false>;
  default: return nullptr;
  }
}

// grid 0: one block per chunk; k > 0: k blocks per SM, striding over the chunks.
unsigned grid_for(std::int64_t chunks, int grid) {
  if (grid <= 0) return unsigned(std::max<std::int64_t>(chunks, 1));
  return unsigned(
      std::clamp<std::int64_t>(std::int64_t(grid) * device_info().sms, 1, std::max<std::int64_t>(chunks, 1)));
}

std::string variant_name(benchmark::State& state, const char* workload, int args) {
  std::string s = workload;
  for (int i = 0; i < args; ++i) {
    const auto a = state.range(i);
    s += '/'; // appended separately: g++ 12 warns (-Wrestrict, falsely) on "/" + std::to_string(a)
    s += std::to_string(a);
  }
  return s;
}

// Args: grid (0 = a block per chunk, k = k blocks per SM), ept (floats per thread per input: 4, 8, 12, 16, 32), cs
// (streaming cache hints).
template <class Op>
void elementwise_limit(benchmark::State& state, std::int64_t n, const std::array<InputSpec, Op::kIn>& specs) {
  if (!has_gpu(state)) return;
  const int grid_arg = int(state.range(0)), ept = int(state.range(1));
  const bool cs = state.range(2) != 0;
  const auto kernel = pick_elementwise<Op>(ept, cs);
  if (!kernel) {
    state.SkipWithError("ept must be 4, 8, 12, 16 or 32");
    return;
  }
  const std::string name = Op::kName;
  In<Op::kIn> in{};
  Out<Op::kOut> out{};
  try {
    for (int i = 0; i < Op::kIn; ++i) in.p[i] = input(name + ".in" + std::to_string(i), n, specs[i]);
    for (int o = 0; o < Op::kOut; ++o) out.p[o] = buffer(name + ".out" + std::to_string(o), n);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  const std::int64_t chunks = (n / 4 + std::int64_t(kThreads) * (ept / 4) - 1) / (std::int64_t(kThreads) * (ept / 4));
  const unsigned grid = grid_for(chunks, grid_arg);
  auto launch = [&] { kernel<<<grid, kThreads, 0, stream()>>>(in, out, n); };
  auto check = [&]() -> std::string {
    for (int o = 0; o < Op::kOut; ++o) poison(out.p[o], n);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    for (int o = 0; o < Op::kOut; ++o)
      if (auto e = nonfinite_error(out.p[o], n, Op::kName); !e.empty()) return e;
    // A strided sample over the whole range, plus the last elements (the tail path).
    const std::int64_t stride = 61, count = n / stride, tail = std::min<std::int64_t>(n, 4099);
    L2 l2;
    for (int o = 0; o < Op::kOut; ++o) {
      const auto got = download_strided(out.p[o], 0, stride, count);
      const auto last = download(out.p[o], n - tail, tail);
      auto ref_at = [&](std::int64_t i) {
        double x[Op::kIn], y[Op::kOut];
        for (int k = 0; k < Op::kIn; ++k) x[k] = specs[k].at(i);
        Op::reference(x, y);
        return y[o];
      };
      for (std::int64_t k = 0; k < count; ++k) l2.add(got[k], ref_at(k * stride));
      for (std::int64_t k = 0; k < tail; ++k) l2.add(last[k], ref_at(n - tail + k));
    }
    return l2_error(l2, 1e-5, Op::kName);
  };
  kernel_counters(state, kernel, kThreads);
  run_limit(state, variant_name(state, Op::kName, 3), launch, check, 4.0 * double(Op::kIn + Op::kOut) * double(n));
}

void BM_LimitUpdateLoop(benchmark::State& state) {
  elementwise_limit<UpdateLoopOp>(state, std::int64_t(1) << 20, {InputSpec{11, -1, 1}});
}

void BM_CopyReference(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(64) << 20; // 256 MiB
  try {
    float* a = input("copyref.in", n, {99, -1, 1});
    float* b = buffer("copyref.out", n);
    const std::size_t bytes = std::size_t(n) * sizeof(float);
    measure(
        state, [&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream()); }, 2.0 * double(bytes));
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  record_copy_reference(state, 2.0 * double(n) * sizeof(float));
}

// A float4 copy kernel: what a kernel (rather than the copy engine path of cudaMemcpy) reaches.
void BM_LimitCopyKernel(benchmark::State& state) {
  elementwise_limit<CopyOp>(state, std::int64_t(64) << 20, {InputSpec{98, -1, 1}});
}

void BM_LimitChain(benchmark::State& state) {
  elementwise_limit<ChainOp>(state, std::int64_t(1) << 26, {InputSpec{1, -2, 2}, InputSpec{2, -2, 2}});
}

void BM_LimitBlackScholes(benchmark::State& state) {
  elementwise_limit<BlackScholesOp>(state, std::int64_t(1) << 25,
                                    {InputSpec{3, 10, 100}, InputSpec{4, 10, 100}, InputSpec{5, 0.1f, 2}});
}

// ---------------------------------------------------------------------------------------------------------------
// heat2d: one explicit step, out = c + 0.1*(N+S+E+W-4c) inside, border copied. A thread owns one float4 column
// group and R consecutive rows; it loads all R+2 rows (its halo rows included) before computing, so each element
// comes from DRAM about once (the halo rows are read again by the neighbouring block, mostly from L2). East and
// west neighbours come from the adjacent lanes by shuffle; only the warp's edge lanes load one extra float.
// ---------------------------------------------------------------------------------------------------------------
constexpr int kHeatThreads = 256;

template <int R, bool kStream>
__global__ void __launch_bounds__(kHeatThreads) heat_step(const float* __restrict__ u, float* __restrict__ out, int n) {
  const int n4 = n / 4;
  const int c4 = blockIdx.x * kHeatThreads + threadIdx.x;
  const bool col_ok = c4 < n4;
  const int r0 = blockIdx.y * R;
  const int ln = threadIdx.x % 32;
  float4 w[R + 2];
  float edge[R + 2]; // lane 0: the element west of its float4; lane 31: the one east of it
#pragma unroll
  for (int k = 0; k < R + 2; ++k) {
    const int row = r0 - 1 + k;
    const bool in = col_ok && row >= 0 && row < n;
    const std::int64_t at = std::int64_t(row) * n + 4 * c4;
    w[k] = in ? load4<kStream>(u + at) : make_float4(0, 0, 0, 0);
    edge[k] = 0;
    if (in && ln == 0 && c4 > 0) edge[k] = u[at - 1];
    if (in && ln == 31 && c4 + 1 < n4) edge[k] = u[at + 4];
  }
#pragma unroll
  for (int k = 1; k <= R; ++k) {
    const int row = r0 - 1 + k;
    // Every lane takes part in the shuffles, also those outside the matrix, before anyone skips the row.
    float west = __shfl_up_sync(0xffffffffu, w[k].w, 1);
    float east = __shfl_down_sync(0xffffffffu, w[k].x, 1);
    if (ln == 0) west = edge[k];
    if (ln == 31) east = edge[k];
    if (!col_ok || row >= n) continue;
    const std::int64_t at = std::int64_t(row) * n + 4 * c4;
    if (row == 0 || row == n - 1) {
      store4<kStream>(out + at, w[k]);
      continue;
    }
    const float4 c = w[k], up = w[k - 1], dn = w[k + 1];
    auto step = [](float cc, float nn, float ss, float ee, float ww) {
      return cc + 0.1f * (nn + ss + ee + ww - 4.0f * cc);
    };
    float4 r;
    r.x = c4 == 0 ? c.x : step(c.x, up.x, dn.x, c.y, west);
    r.y = step(c.y, up.y, dn.y, c.z, c.x);
    r.z = step(c.z, up.z, dn.z, c.w, c.y);
    r.w = c4 == n4 - 1 ? c.w : step(c.w, up.w, dn.w, east, c.z);
    store4<kStream>(out + at, r);
  }
}

using HeatKernel = void (*)(const float*, float*, int);
HeatKernel pick_heat(int rows, bool cs) {
  switch (rows) {
  case 2: return cs ? heat_step<2, true> : heat_step<2, false>;
  case 4: return cs ? heat_step<4, true> : heat_step<4, false>;
  case 6: return cs ? heat_step<6, true> : heat_step<6, false>;
  case 8: return cs ? heat_step<8, true> : heat_step<8, false>;
  default: return nullptr;
  }
}

// Args: rows per thread (2, 4, 6, 8; more costs occupancy: 16 rows reached 75-84% of the copy on the H200), cs.
void BM_LimitHeat2d(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const int n = 8192, rows = int(state.range(0));
  const bool cs = state.range(1) != 0;
  const auto kernel = pick_heat(rows, cs);
  if (!kernel) {
    state.SkipWithError("rows must be 2, 4, 6 or 8");
    return;
  }
  const InputSpec spec{6, 0, 1};
  const std::int64_t nn = std::int64_t(n) * n;
  float *u = nullptr, *out = nullptr;
  try {
    u = input("heat.u", nn, spec);
    out = buffer("heat.out", nn);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  const dim3 grid((n / 4 + kHeatThreads - 1) / kHeatThreads, (n + rows - 1) / rows);
  auto launch = [&] { kernel<<<grid, kHeatThreads, 0, stream()>>>(u, out, n); };
  auto check = [&]() -> std::string {
    poison(out, nn);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    if (auto e = nonfinite_error(out, nn, "heat2d"); !e.empty()) return e;
    std::vector<int> sample = {0, 1, 2, rows - 1, rows, rows + 1, n / 2, n - 3, n - 2, n - 1};
    for (int r = 5; r < n; r += 61) sample.push_back(r);
    L2 l2;
    auto at = [&](int i, int j) { return double(spec.at(std::int64_t(i) * n + j)); };
    for (int i : sample) {
      const auto got = download(out, std::int64_t(i) * n, n);
      for (int j = 0; j < n; ++j) {
        const double c = at(i, j);
        const bool border = i == 0 || i == n - 1 || j == 0 || j == n - 1;
        l2.add(got[j], border ? c : c + 0.1 * (at(i - 1, j) + at(i + 1, j) + at(i, j + 1) + at(i, j - 1) - 4.0 * c));
      }
    }
    return l2_error(l2, 1e-5, "heat2d");
  };
  kernel_counters(state, kernel, kHeatThreads);
  run_limit(state, variant_name(state, "heat2d", 2), launch, check, 2.0 * 4.0 * double(nn));
}

// ---------------------------------------------------------------------------------------------------------------
// sumsq: sum((x-y)^2) in one launch. Each block writes its partial; the last block to finish (an integer ticket,
// no floating-point atomics) adds the partials in index order, so the result has the same bits on every run.
// ---------------------------------------------------------------------------------------------------------------
template <int V, bool kStream>
__global__ void __launch_bounds__(kThreads)
    sumsq(const float* __restrict__ x, const float* __restrict__ y, std::int64_t n, float* __restrict__ partials,
          unsigned* __restrict__ ticket, float* __restrict__ result) {
  const std::int64_t n4 = n / 4;
  const std::int64_t chunks = (n4 + kThreads * V - 1) / (kThreads * V);
  float acc[V] = {};
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const std::int64_t first = chunk * (kThreads * V) + threadIdx.x;
    float4 a[V], b[V];
    if (first + std::int64_t(V - 1) * kThreads < n4) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        a[v] = load4<kStream>(x + 4 * (first + v * kThreads));
        b[v] = load4<kStream>(y + 4 * (first + v * kThreads));
      }
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const std::int64_t k = first + v * kThreads;
        a[v] = k < n4 ? load4<kStream>(x + 4 * k) : make_float4(0, 0, 0, 0);
        b[v] = k < n4 ? load4<kStream>(y + 4 * k) : make_float4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v)
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const float d = lane(a[v], c) - lane(b[v], c);
        acc[v] = fmaf(d, d, acc[v]);
      }
  }
  float s = 0;
#pragma unroll
  for (int v = 0; v < V; ++v) s += acc[v];
  if (blockIdx.x == 0 && threadIdx.x < n - 4 * n4) {
    const float d = x[4 * n4 + threadIdx.x] - y[4 * n4 + threadIdx.x];
    s = fmaf(d, d, s);
  }
  s = block_reduce<kThreads>(s, SumOp{}, 0.0f);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = s;
    __threadfence(); // the partial is visible before the ticket says so
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  float t = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kThreads) t += __ldcg(partials + i);
  t = block_reduce<kThreads>(t, SumOp{}, 0.0f);
  if (threadIdx.x == 0) {
    *result = t;
    *ticket = 0; // ready for the next launch, which is ordered after this one on the stream
  }
}

using SumSqKernel = void (*)(const float*, const float*, std::int64_t, float*, unsigned*, float*);
SumSqKernel pick_sumsq(int ept, bool cs) {
  switch (ept) {
  case 8: return cs ? sumsq<2, true> : sumsq<2, false>;
  case 16: return cs ? sumsq<4, true> : sumsq<4, false>;
  case 32: return cs ? sumsq<8, true> : sumsq<8, false>;
  default: return nullptr;
  }
}

// Args: grid (0 = a block per chunk, k = k blocks per SM), ept (8, 16, 32), cs.
void BM_LimitSumSq(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 26;
  const int grid_arg = int(state.range(0)), ept = int(state.range(1));
  const bool cs = state.range(2) != 0;
  const auto kernel = pick_sumsq(ept, cs);
  if (!kernel) {
    state.SkipWithError("ept must be 8, 16 or 32");
    return;
  }
  const InputSpec sx{11, -2, 2}, sy{12, -2, 2};
  const std::int64_t chunks = (n / 4 + std::int64_t(kThreads) * (ept / 4) - 1) / (std::int64_t(kThreads) * (ept / 4));
  const unsigned grid = grid_for(chunks, grid_arg);
  float *x = nullptr, *y = nullptr, *partials = nullptr, *result = nullptr;
  unsigned* ticket = nullptr;
  try {
    x = input("sumsq.x", n, sx);
    y = input("sumsq.y", n, sy);
    partials = buffer("sumsq.partials", grid);
    result = buffer("sumsq.result", 1);
    static unsigned* t = [] {
      unsigned* p = nullptr;
      check_cuda(cudaMalloc(&p, sizeof *p), "cudaMalloc");
      check_cuda(cudaMemset(p, 0, sizeof *p), "cudaMemset");
      return p;
    }();
    ticket = t;
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  auto launch = [&] { kernel<<<grid, kThreads, 0, stream()>>>(x, y, n, partials, ticket, result); };
  auto check = [&]() -> std::string {
    static const double want = [&] {
      double s = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double d = double(sx.at(i)) - double(sy.at(i));
        s += d * d;
      }
      return s;
    }();
    float got[2];
    for (float& g : got) {
      poison(result, 1);
      launch();
      check_cuda(cudaGetLastError(), "launch");
      check_cuda(cudaStreamSynchronize(stream()), "kernel");
      g = download(result, 0, 1)[0];
    }
    if (std::memcmp(&got[0], &got[1], sizeof(float)) != 0) return "sumsq: two runs gave different bits";
    L2 l2;
    l2.add(got[0], want);
    return l2_error(l2, 1e-5, "sumsq");
  };
  kernel_counters(state, kernel, kThreads);
  state.counters["grid"] = grid;
  run_limit(state, variant_name(state, "sumsq", 3), launch, check, 2.0 * 4.0 * double(n));
}

// ---------------------------------------------------------------------------------------------------------------
// Rows of 16384 x 4096: softmax keeps a whole row in registers (one read, one write); rowvar reads each row once
// and keeps both sums. kBlock threads per row (one block per row), or for rowvar also a warp per row.
// ---------------------------------------------------------------------------------------------------------------
constexpr std::int64_t kRows = 16384;
constexpr int kCols = 4096;

template <int kBlock, bool kStream>
__global__ void __launch_bounds__(kBlock) softmax_rows(const float* __restrict__ m, float* __restrict__ out) {
  constexpr int V = kCols / (4 * kBlock);
  const std::int64_t row = blockIdx.x;
  const float* src = m + row * kCols;
  float4 a[V];
#pragma unroll
  for (int v = 0; v < V; ++v) a[v] = load4<kStream>(src + 4 * (threadIdx.x + v * kBlock));
  float mx = -INFINITY;
#pragma unroll
  for (int v = 0; v < V; ++v)
#pragma unroll
    for (int c = 0; c < 4; ++c) mx = fmaxf(mx, lane(a[v], c));
  mx = block_reduce<kBlock>(mx, MaxOp{}, -INFINITY);
  float s = 0;
#pragma unroll
  for (int v = 0; v < V; ++v)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      lane(a[v], c) = expf(lane(a[v], c) - mx);
      s += lane(a[v], c);
    }
  s = block_reduce<kBlock>(s, SumOp{}, 0.0f);
  const float inv = 1.0f / s;
  float* dst = out + row * kCols;
#pragma unroll
  for (int v = 0; v < V; ++v) {
#pragma unroll
    for (int c = 0; c < 4; ++c) lane(a[v], c) *= inv;
    store4<kStream>(dst + 4 * (threadIdx.x + v * kBlock), a[v]);
  }
}

// kTpr threads per row: 32 = a warp per row (8 rows per block of 256), else one row per block of kTpr threads.
template <int kTpr, bool kStream>
__global__ void __launch_bounds__(kTpr >= 128 ? kTpr : 256)
    rowvar_rows(const float* __restrict__ m, float* __restrict__ out, std::int64_t rows) {
  constexpr int kRowsPerBlock = kTpr >= 128 ? 1 : 256 / kTpr;
  constexpr int V = kCols / (4 * kTpr); // float4 per thread per row
  constexpr int U = V < 8 ? V : 8;      // float4 loads in flight per step
  const std::int64_t row = std::int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kTpr;
  const int t = threadIdx.x % kTpr;
  float4 s = make_float4(0, 0, 0, 0), q = make_float4(0, 0, 0, 0);
  if (row < rows) {
    const float* src = m + row * kCols;
#pragma unroll
    for (int step = 0; step < V; step += U) {
      float4 a[U];
#pragma unroll
      for (int u = 0; u < U; ++u) a[u] = load4<kStream>(src + 4 * (t + (step + u) * kTpr));
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          lane(s, c) += lane(a[u], c);
          lane(q, c) = fmaf(lane(a[u], c), lane(a[u], c), lane(q, c));
        }
    }
  }
  float sum = (s.x + s.y) + (s.z + s.w), sq = (q.x + q.y) + (q.z + q.w);
  if constexpr (kTpr == 32) {
    for (int o = 16; o > 0; o >>= 1) {
      sum += __shfl_xor_sync(0xffffffffu, sum, o);
      sq += __shfl_xor_sync(0xffffffffu, sq, o);
    }
  } else {
    sum = block_reduce<kTpr>(sum, SumOp{}, 0.0f);
    sq = block_reduce<kTpr>(sq, SumOp{}, 0.0f);
  }
  if (t == 0 && row < rows) {
    const float mean = sum * (1.0f / kCols);
    out[row] = sq * (1.0f / kCols) - mean * mean;
  }
}

using RowKernel = void (*)(const float*, float*);
RowKernel pick_softmax(int block, bool cs) {
  switch (block) {
  case 128: return cs ? softmax_rows<128, true> : softmax_rows<128, false>;
  case 256: return cs ? softmax_rows<256, true> : softmax_rows<256, false>;
  case 512: return cs ? softmax_rows<512, true> : softmax_rows<512, false>;
  case 1024: return cs ? softmax_rows<1024, true> : softmax_rows<1024, false>;
  default: return nullptr;
  }
}

using RowVarKernel = void (*)(const float*, float*, std::int64_t);
RowVarKernel pick_rowvar(int tpr, bool cs) {
  switch (tpr) {
  case 32: return cs ? rowvar_rows<32, true> : rowvar_rows<32, false>;
  case 128: return cs ? rowvar_rows<128, true> : rowvar_rows<128, false>;
  case 256: return cs ? rowvar_rows<256, true> : rowvar_rows<256, false>;
  case 512: return cs ? rowvar_rows<512, true> : rowvar_rows<512, false>;
  default: return nullptr;
  }
}

// Args: threads per row (128, 256, 512, 1024), cs.
void BM_LimitSoftmax(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const int block = int(state.range(0));
  const bool cs = state.range(1) != 0;
  const auto kernel = pick_softmax(block, cs);
  if (!kernel) {
    state.SkipWithError("threads per row must be 128, 256, 512 or 1024");
    return;
  }
  const InputSpec spec{13, -3, 3};
  const std::int64_t nn = kRows * kCols;
  float *m = nullptr, *out = nullptr;
  try {
    m = input("rows.softmax", nn, spec);
    out = buffer("softmax.out", nn);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  auto launch = [&] { kernel<<<unsigned(kRows), block, 0, stream()>>>(m, out); };
  auto check = [&]() -> std::string {
    poison(out, nn);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    if (auto e = nonfinite_error(out, nn, "softmax"); !e.empty()) return e;
    L2 l2;
    std::vector<double> e(kCols);
    std::vector<std::int64_t> sample;
    for (std::int64_t r = 0; r < kRows; r += 61) sample.push_back(r);
    sample.push_back(kRows - 1);
    for (std::int64_t r : sample) {
      const auto got = download(out, r * kCols, kCols);
      double mx = -INFINITY, s = 0;
      for (int j = 0; j < kCols; ++j) mx = std::max(mx, double(spec.at(r * kCols + j)));
      for (int j = 0; j < kCols; ++j) s += e[j] = std::exp(double(spec.at(r * kCols + j)) - mx);
      for (int j = 0; j < kCols; ++j) l2.add(got[j], e[j] / s);
    }
    return l2_error(l2, 1e-5, "softmax");
  };
  kernel_counters(state, kernel, block);
  run_limit(state, variant_name(state, "softmax", 2), launch, check, 2.0 * 4.0 * double(nn));
}

// Args: threads per row (32 = a warp per row, 128, 256, 512), cs.
void BM_LimitRowVar(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const int tpr = int(state.range(0));
  const bool cs = state.range(1) != 0;
  const auto kernel = pick_rowvar(tpr, cs);
  if (!kernel) {
    state.SkipWithError("threads per row must be 32, 128, 256 or 512");
    return;
  }
  const InputSpec spec{14, -3, 3};
  const std::int64_t nn = kRows * kCols;
  float *m = nullptr, *out = nullptr;
  try {
    m = input("rows.rowvar", nn, spec);
    out = buffer("rowvar.out", kRows);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  const int block = tpr >= 128 ? tpr : 256;
  const unsigned grid = unsigned((kRows * tpr + block - 1) / block);
  auto launch = [&] { kernel<<<grid, block, 0, stream()>>>(m, out, kRows); };
  auto check = [&]() -> std::string {
    static const std::vector<double> want = [&] {
      std::vector<double> w(kRows);
      for (std::int64_t r = 0; r < kRows; ++r) {
        double s = 0, q = 0;
        for (int j = 0; j < kCols; ++j) {
          const double v = spec.at(r * kCols + j);
          s += v;
          q += v * v;
        }
        w[std::size_t(r)] = q / kCols - (s / kCols) * (s / kCols);
      }
      return w;
    }();
    poison(out, kRows);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    const auto got = download(out, 0, kRows);
    L2 l2;
    for (std::int64_t r = 0; r < kRows; ++r) l2.add(got[std::size_t(r)], want[std::size_t(r)]);
    return l2_error(l2, 1e-5, "rowvar");
  };
  kernel_counters(state, kernel, block);
  run_limit(state, variant_name(state, "rowvar", 2), launch, check, 4.0 * double(nn) + 4.0 * kRows);
}

// ---------------------------------------------------------------------------------------------------------------
// The element types of issue 14: float16 and bfloat16 chains and sums, complex64 multiply-add.
//
// Halves follow lazyfuse's semantics (docs/semantics.md): every op computes in float32 and rounds its result to the
// storage type, so the chain is computed op by op with __float2half_rn / __float2bfloat16_rn after each function
// and the _rn forms of multiply, add and subtract (which ptxas may not contract into an FMA: lazyfuse's kernels
// round every product too). Pairs of elements may use the paired instructions (__hmul2_rn...): the same rounding of
// each element, half the instructions. Sums accumulate in float32 and round once.
// ---------------------------------------------------------------------------------------------------------------
__host__ __device__ inline float to_float(__half h) {
  return __half2float(h);
}
__host__ __device__ inline float to_float(__nv_bfloat16 h) {
  return __bfloat162float(h);
}
template <class H> __host__ __device__ inline H round_to(float f) {
  if constexpr (std::is_same_v<H, __half>)
    return __float2half_rn(f);
  else
    return __float2bfloat16_rn(f);
}
template <class H> using Pair = std::conditional_t<std::is_same_v<H, __half>, __half2, __nv_bfloat162>;
__device__ inline __half2 pair_of(__half a, __half b) {
  return __halves2half2(a, b);
}
__device__ inline __nv_bfloat162 pair_of(__nv_bfloat16 a, __nv_bfloat16 b) {
  return __halves2bfloat162(a, b);
}

template <class H> constexpr const char* half_name() {
  return std::is_same_v<H, __half> ? "float16" : "bfloat16";
}

// The value of element i of a half input: the float input rounded to the type, on both sides.
template <class H> __global__ void fill_uniform_half(H* p, std::int64_t n, std::uint64_t seed, float lo, float hi) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    p[i] = round_to<H>(uniform_at(seed, std::uint64_t(i), lo, hi));
}

template <class H> H* half_input(const std::string& name, std::int64_t n, const InputSpec& spec) {
  static auto* filled = new std::map<std::string, bool>;
  H* p = typed_buffer<H>(name, n);
  if (!(*filled)[name]) {
    fill_uniform_half<H><<<4 * device_info().sms, 256, 0, stream()>>>(p, n, spec.seed, spec.lo, spec.hi);
    check_cuda(cudaGetLastError(), "fill_uniform_half");
    check_cuda(cudaStreamSynchronize(stream()), "fill_uniform_half");
    for (std::int64_t i : {std::int64_t(0), n / 3, n - 1}) {
      const H got = download(p, i, 1)[0];
      if (to_float(got) != to_float(round_to<H>(spec.at(i))))
        throw CudaFailure{"host and device input generators disagree at " + name};
    }
    (*filled)[name] = true;
  }
  return p;
}

template <bool kStream> __device__ __forceinline__ uint4 load16(const void* p) {
  if constexpr (kStream)
    return __ldcs(reinterpret_cast<const uint4*>(p));
  else
    return __ldg(reinterpret_cast<const uint4*>(p));
}
template <bool kStream> __device__ __forceinline__ void store16(void* p, uint4 v) {
  if constexpr (kStream)
    __stcs(reinterpret_cast<uint4*>(p), v);
  else
    *reinterpret_cast<uint4*>(p) = v;
}

template <bool kPaired, class P> __device__ __forceinline__ P mul_rn(P a, P b) {
  if constexpr (kPaired)
    return __hmul2_rn(a, b);
  else
    return pair_of(__hmul_rn(a.x, b.x), __hmul_rn(a.y, b.y));
}
template <bool kPaired, class P> __device__ __forceinline__ P add_rn(P a, P b) {
  if constexpr (kPaired)
    return __hadd2_rn(a, b);
  else
    return pair_of(__hadd_rn(a.x, b.x), __hadd_rn(a.y, b.y));
}
template <bool kPaired, class P> __device__ __forceinline__ P sub_rn(P a, P b) {
  if constexpr (kPaired)
    return __hsub2_rn(a, b);
  else
    return pair_of(__hsub_rn(a.x, b.x), __hsub_rn(a.y, b.y));
}

// sqrt(abs(sin(x)*cos(y) + x*y*0.5 - exp(-x*x))) on two elements, each op rounded to the half type.
template <bool kPaired, class P> __device__ __forceinline__ P half_chain_pair(P x, P y) {
  using H = decltype(x.x);
  auto each = [](P v, auto f) { return pair_of(round_to<H>(f(to_float(v.x))), round_to<H>(f(to_float(v.y)))); };
  const P s = each(x, [](float v) { return sinf(v); });
  const P c = each(y, [](float v) { return cosf(v); });
  const H h = round_to<H>(0.5f);
  const P xyh = mul_rn<kPaired>(mul_rn<kPaired>(x, y), pair_of(h, h));
  const P sum = add_rn<kPaired>(mul_rn<kPaired>(s, c), xyh);
  const P e = each(mul_rn<kPaired>(__hneg2(x), x), [](float v) { return expf(v); });
  return each(sub_rn<kPaired>(sum, e), [](float v) { return sqrtf(fabsf(v)); });
}

// V 16-byte vectors (8 elements) of each input per thread, all loads of a chunk issued before the arithmetic.
template <class H, int V, bool kStream, bool kPaired>
__global__ void __launch_bounds__(kThreads)
    half_chain(const H* __restrict__ x, const H* __restrict__ y, H* __restrict__ out, std::int64_t n) {
  using P = Pair<H>;
  const std::int64_t n8 = n / 8;
  const std::int64_t chunks = (n8 + kThreads * V - 1) / (kThreads * V);
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const std::int64_t first = chunk * (kThreads * V) + threadIdx.x;
    uint4 a[V], b[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t k = first + v * kThreads;
      if (k < n8) {
        a[v] = load16<kStream>(x + 8 * k);
        b[v] = load16<kStream>(y + 8 * k);
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t k = first + v * kThreads;
      if (k >= n8) break;
      uint4 r;
      const P* pa = reinterpret_cast<const P*>(&a[v]);
      const P* pb = reinterpret_cast<const P*>(&b[v]);
      P* pr = reinterpret_cast<P*>(&r);
#pragma unroll
      for (int c = 0; c < 4; ++c) pr[c] = half_chain_pair<kPaired>(pa[c], pb[c]);
      store16<kStream>(out + 8 * k, r);
    }
  }
  // The last n % 8 elements, if any (as a pair with itself).
  if (blockIdx.x == 0 && threadIdx.x < n - 8 * n8) {
    const std::int64_t k = 8 * n8 + threadIdx.x;
    out[k] = half_chain_pair<kPaired>(pair_of(x[k], x[k]), pair_of(y[k], y[k])).x;
  }
}

// The host's version of the chain with the same per-op rounding: each op exact (or correctly rounded) in double,
// then rounded to float and to the half type, as the kernel's float32 op and its rounding. The two roundings give
// the once-rounded value for +, -, * of halves (float's 24 bits are at least twice a half's plus 2); for sin, cos,
// exp CUDA's float functions may differ from the correctly rounded float by an ulp, which rarely changes the half.
template <class H> double half_chain_reference(float xf, float yf) {
  auto r = [](double v) { return double(to_float(round_to<H>(float(v)))); };
  const double x = xf, y = yf;
  const double s = r(std::sin(x)), c = r(std::cos(y));
  const double sum = r(r(s * c) + r(r(x * y) * 0.5));
  const double e = r(std::exp(r(-x * x)));
  return r(std::sqrt(std::fabs(r(sum - e))));
}

template <class H> using HalfChainKernel = void (*)(const H*, const H*, H*, std::int64_t);

template <class H, bool kPaired> HalfChainKernel<H> pick_half_chain_paired(int ept, bool cs) {
  switch (ept) {
  case 8: return cs ? half_chain<H, 1, true, kPaired> : half_chain<H, 1, false, kPaired>;
  case 16: return cs ? half_chain<H, 2, true, kPaired> : half_chain<H, 2, false, kPaired>;
  case 32: return cs ? half_chain<H, 4, true, kPaired> : half_chain<H, 4, false, kPaired>;
  default: return nullptr;
  }
}
template <class H> HalfChainKernel<H> pick_half_chain(int ept, bool cs, bool paired) {
  return paired ? pick_half_chain_paired<H, true>(ept, cs) : pick_half_chain_paired<H, false>(ept, cs);
}

// Args: grid (0 = a block per chunk, k = k blocks per SM), ept (elements per thread per input: 8, 16, 32), cs,
// paired (1: the paired half instructions for *, +, -).
template <class H> void half_chain_limit(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 26;
  const int grid_arg = int(state.range(0)), ept = int(state.range(1));
  const bool cs = state.range(2) != 0, paired = state.range(3) != 0;
  const auto kernel = pick_half_chain<H>(ept, cs, paired);
  if (!kernel) {
    state.SkipWithError("ept must be 8, 16 or 32");
    return;
  }
  const std::string name = std::string("chain_") + half_name<H>();
  const InputSpec sx{1, -2, 2}, sy{2, -2, 2}; // the float32 chain's inputs, rounded to the type
  H *x = nullptr, *y = nullptr, *out = nullptr;
  try {
    x = half_input<H>(name + ".x", n, sx);
    y = half_input<H>(name + ".y", n, sy);
    out = typed_buffer<H>(name + ".out", n);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  const std::int64_t chunks = (n / 8 + std::int64_t(kThreads) * (ept / 8) - 1) / (std::int64_t(kThreads) * (ept / 8));
  const unsigned grid = grid_for(chunks, grid_arg);
  auto launch = [&] { kernel<<<grid, kThreads, 0, stream()>>>(x, y, out, n); };
  auto check = [&]() -> std::string {
    poison(out, n);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    if (auto e = nonfinite_error(out, n, name.c_str()); !e.empty()) return e;
    // Every element is compared (the whole output fits the host easily): bit-identical to the per-op reference
    // but for rare one-ulp differences of CUDA's sinf/cosf/expf, and close to it in any case.
    const auto got = download(out, 0, n);
    std::int64_t differ = 0;
    L2 l2;
    for (std::int64_t i = 0; i < n; i += (i < n - 4099 ? 61 : 1)) {
      const double want = half_chain_reference<H>(to_float(round_to<H>(sx.at(i))), to_float(round_to<H>(sy.at(i))));
      const double g = to_float(got[std::size_t(i)]);
      differ += g != want;
      l2.add(g, want);
    }
    const std::int64_t checked = n / 61 + 4099;
    if (differ * 100 > checked) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "%s: %lld of ~%lld checked elements differ from the per-op rounded reference (more than 1%%)",
                    name.c_str(), (long long)differ, (long long)checked);
      return buf;
    }
    return l2_error(l2, std::is_same_v<H, __half> ? 1e-3 : 1e-2, name.c_str());
  };
  kernel_counters(state, kernel, kThreads);
  run_limit(state, variant_name(state, name.c_str(), 4), launch, check, 3.0 * 2.0 * double(n));
}

void BM_LimitChainF16(benchmark::State& state) {
  half_chain_limit<__half>(state);
}
void BM_LimitChainBF16(benchmark::State& state) {
  half_chain_limit<__nv_bfloat16>(state);
}

// sum of a half array: float32 accumulation, one launch; the last block (integer ticket) adds the partials in index
// order and rounds once, so the result has the same bits on every run.
template <class H, int V, bool kStream>
__global__ void __launch_bounds__(kThreads)
    half_sum(const H* __restrict__ x, std::int64_t n, float* __restrict__ partials, unsigned* __restrict__ ticket,
             H* __restrict__ result) {
  using P = Pair<H>;
  const std::int64_t n8 = n / 8;
  const std::int64_t chunks = (n8 + kThreads * V - 1) / (kThreads * V);
  float acc[V] = {};
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const std::int64_t first = chunk * (kThreads * V) + threadIdx.x;
    uint4 a[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t k = first + v * kThreads;
      a[v] = k < n8 ? load16<kStream>(x + 8 * k) : make_uint4(0, 0, 0, 0); // all-zero bits: +0 in both types
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const P* pa = reinterpret_cast<const P*>(&a[v]);
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[v] += to_float(pa[c].x) + to_float(pa[c].y);
    }
  }
  float s = 0;
#pragma unroll
  for (int v = 0; v < V; ++v) s += acc[v];
  if (blockIdx.x == 0 && threadIdx.x < n - 8 * n8) s += to_float(x[8 * n8 + threadIdx.x]);
  s = block_reduce<kThreads>(s, SumOp{}, 0.0f);
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = s;
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  float t = 0;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += kThreads) t += __ldcg(partials + i);
  t = block_reduce<kThreads>(t, SumOp{}, 0.0f);
  if (threadIdx.x == 0) {
    *result = round_to<H>(t);
    *ticket = 0;
  }
}

template <class H> using HalfSumKernel = void (*)(const H*, std::int64_t, float*, unsigned*, H*);
template <class H> HalfSumKernel<H> pick_half_sum(int ept, bool cs) {
  switch (ept) {
  case 16: return cs ? half_sum<H, 2, true> : half_sum<H, 2, false>;
  case 32: return cs ? half_sum<H, 4, true> : half_sum<H, 4, false>;
  case 64: return cs ? half_sum<H, 8, true> : half_sum<H, 8, false>;
  default: return nullptr;
  }
}

// Args: grid (0 = a block per chunk, k = k blocks per SM), ept (16, 32, 64), cs. Inputs in [-1, 1): the sum of
// 2^26 of them stays far inside float16's range (a sum of [0, 1) values would overflow it).
template <class H> void half_sum_limit(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 26;
  const int grid_arg = int(state.range(0)), ept = int(state.range(1));
  const bool cs = state.range(2) != 0;
  const auto kernel = pick_half_sum<H>(ept, cs);
  if (!kernel) {
    state.SkipWithError("ept must be 16, 32 or 64");
    return;
  }
  const std::string name = std::string("sum_") + half_name<H>();
  const InputSpec spec{16, -1, 1};
  const std::int64_t chunks = (n / 8 + std::int64_t(kThreads) * (ept / 8) - 1) / (std::int64_t(kThreads) * (ept / 8));
  const unsigned grid = grid_for(chunks, grid_arg);
  H *x = nullptr, *result = nullptr;
  float* partials = nullptr;
  unsigned* ticket = nullptr;
  try {
    x = half_input<H>(name + ".x", n, spec);
    partials = buffer(name + ".partials", grid);
    result = typed_buffer<H>(name + ".result", 1);
    ticket = static_cast<unsigned*>(raw_buffer(name + ".ticket", sizeof(unsigned)));
    check_cuda(cudaMemset(ticket, 0, sizeof(unsigned)), "cudaMemset");
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  auto launch = [&] { kernel<<<grid, kThreads, 0, stream()>>>(x, n, partials, ticket, result); };
  auto check = [&]() -> std::string {
    static const std::pair<double, double> reference = [&] { // once per type, not per variant: 2^26 conversions
      double w = 0, m = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = to_float(round_to<H>(spec.at(i)));
        w += v;
        m += std::fabs(v);
      }
      return std::pair<double, double>(w, m);
    }();
    const double want = reference.first, magnitude = reference.second;
    H got[2];
    for (H& g : got) {
      poison(result, 1);
      launch();
      check_cuda(cudaGetLastError(), "launch");
      check_cuda(cudaStreamSynchronize(stream()), "kernel");
      g = download(result, 0, 1)[0];
    }
    if (std::memcmp(&got[0], &got[1], sizeof(H)) != 0) return name + ": two runs gave different bits";
    // The float32 accumulation's error plus the final rounding to the type (half an ulp: 2^-11 or 2^-8 relative).
    const double g = to_float(got[0]), eps = std::is_same_v<H, __half> ? 0x1p-11 : 0x1p-8;
    const double tol = eps * std::fabs(want) + 1e-6 * magnitude;
    if (std::isfinite(g) && std::fabs(g - want) <= tol) return "";
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s: got %.9g, want %.9g (float64 of the same inputs), tolerance %.3g", name.c_str(),
                  g, want, tol);
    return buf;
  };
  kernel_counters(state, kernel, kThreads);
  state.counters["grid"] = grid;
  run_limit(state, variant_name(state, name.c_str(), 3), launch, check, 2.0 * double(n));
}

void BM_LimitSumF16(benchmark::State& state) {
  half_sum_limit<__half>(state);
}
void BM_LimitSumBF16(benchmark::State& state) {
  half_sum_limit<__nv_bfloat16>(state);
}

// complex64 a * b + c: a float4 holds two elements (re, im, re, im). The product is (ar*br - ai*bi, ar*bi + ai*br)
// with every product rounded (the _rn intrinsics: no FMA contraction, as lazyfuse compiles with --fmad=false).
__device__ __forceinline__ float2 complex_madd(float2 a, float2 b, float2 c) {
  const float re = __fsub_rn(__fmul_rn(a.x, b.x), __fmul_rn(a.y, b.y));
  const float im = __fadd_rn(__fmul_rn(a.x, b.y), __fmul_rn(a.y, b.x));
  return make_float2(__fadd_rn(re, c.x), __fadd_rn(im, c.y));
}

template <int V, bool kStream>
__global__ void __launch_bounds__(kThreads)
    complex_madd_kernel(const float2* __restrict__ a, const float2* __restrict__ b, const float2* __restrict__ c,
                        float2* __restrict__ out, std::int64_t n) {
  const std::int64_t n2 = n / 2; // float4s
  const std::int64_t chunks = (n2 + kThreads * V - 1) / (kThreads * V);
  for (std::int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const std::int64_t first = chunk * (kThreads * V) + threadIdx.x;
    float4 va[V], vb[V], vc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t k = first + v * kThreads;
      if (k < n2) {
        va[v] = load4<kStream>(reinterpret_cast<const float*>(a + 2 * k));
        vb[v] = load4<kStream>(reinterpret_cast<const float*>(b + 2 * k));
        vc[v] = load4<kStream>(reinterpret_cast<const float*>(c + 2 * k));
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t k = first + v * kThreads;
      if (k >= n2) break;
      const float2 r0 =
          complex_madd(make_float2(va[v].x, va[v].y), make_float2(vb[v].x, vb[v].y), make_float2(vc[v].x, vc[v].y));
      const float2 r1 =
          complex_madd(make_float2(va[v].z, va[v].w), make_float2(vb[v].z, vb[v].w), make_float2(vc[v].z, vc[v].w));
      store4<kStream>(reinterpret_cast<float*>(out + 2 * k), make_float4(r0.x, r0.y, r1.x, r1.y));
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && n % 2) out[n - 1] = complex_madd(a[n - 1], b[n - 1], c[n - 1]);
}

using ComplexMaddKernel = void (*)(const float2*, const float2*, const float2*, float2*, std::int64_t);
ComplexMaddKernel pick_complex_madd(int ept, bool cs) {
  switch (ept) {
  case 2: return cs ? complex_madd_kernel<1, true> : complex_madd_kernel<1, false>;
  case 4: return cs ? complex_madd_kernel<2, true> : complex_madd_kernel<2, false>;
  case 8: return cs ? complex_madd_kernel<4, true> : complex_madd_kernel<4, false>;
  default: return nullptr;
  }
}

// Args: grid (0 = a block per chunk, k = k blocks per SM), ept (complex elements per thread per input: 2, 4, 8), cs.
void BM_LimitComplexMaddC64(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 25;
  const int grid_arg = int(state.range(0)), ept = int(state.range(1));
  const bool cs = state.range(2) != 0;
  const auto kernel = pick_complex_madd(ept, cs);
  if (!kernel) {
    state.SkipWithError("ept must be 2, 4 or 8");
    return;
  }
  // Interleaved parts: element i is (spec.at(2i), spec.at(2i + 1)).
  const InputSpec sa{21, -2, 2}, sb{22, -2, 2}, sc{23, -2, 2};
  float2 *a = nullptr, *b = nullptr, *c = nullptr, *out = nullptr;
  try {
    a = reinterpret_cast<float2*>(input("cmadd.a", 2 * n, sa));
    b = reinterpret_cast<float2*>(input("cmadd.b", 2 * n, sb));
    c = reinterpret_cast<float2*>(input("cmadd.c", 2 * n, sc));
    out = typed_buffer<float2>("cmadd.out", n);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  const std::int64_t chunks = (n / 2 + std::int64_t(kThreads) * (ept / 2) - 1) / (std::int64_t(kThreads) * (ept / 2));
  const unsigned grid = grid_for(chunks, grid_arg);
  auto launch = [&] { kernel<<<grid, kThreads, 0, stream()>>>(a, b, c, out, n); };
  auto check = [&]() -> std::string {
    poison(out, n);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    if (auto e = nonfinite_error(out, n, "complex64 madd"); !e.empty()) return e;
    const auto got = download(out, 0, n);
    L2 l2;
    for (std::int64_t i = 0; i < n; i += (i < n - 4099 ? 61 : 1)) {
      const double ar = sa.at(2 * i), ai = sa.at(2 * i + 1), br = sb.at(2 * i), bi = sb.at(2 * i + 1);
      l2.add(got[std::size_t(i)].x, ar * br - ai * bi + double(sc.at(2 * i)));
      l2.add(got[std::size_t(i)].y, ar * bi + ai * br + double(sc.at(2 * i + 1)));
    }
    return l2_error(l2, 1e-5, "complex64 madd");
  };
  kernel_counters(state, kernel, kThreads);
  run_limit(state, variant_name(state, "cmadd_c64", 3), launch, check, 4.0 * 8.0 * double(n));
}

// (grid, ept) pairs, each with and without streaming hints.
void elementwise_args(benchmark::internal::Benchmark* b, std::initializer_list<std::pair<int, int>> grid_ept) {
  b->ArgNames({"grid", "ept", "cs"});
  for (auto [g, e] : grid_ept)
    for (int cs : {0, 1}) b->Args({g, e, cs});
}

// ---------------------------------------------------------------------------------------------------------------
// Write-only: the bandwidth a kernel that only stores reaches, the reference of random-number generation (a draw
// written to memory reads nothing). Each element gets a value that depends on its index, so no store can be
// merged or skipped; float4 stores, `V` per thread per chunk, optionally with streaming hints.
// ---------------------------------------------------------------------------------------------------------------
template <int V, bool CS>
__global__ void __launch_bounds__(kThreads) write_only(float* __restrict__ out, std::int64_t n) {
  const std::int64_t per_block = std::int64_t(kThreads) * V * 4;
  for (std::int64_t base = std::int64_t(blockIdx.x) * per_block; base < n;
       base += std::int64_t(gridDim.x) * per_block) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t i = base + (std::int64_t(v) * kThreads + threadIdx.x) * 4;
      if (i + 3 < n) {
        const float4 x = make_float4(float(i), float(i + 1), float(i + 2), float(i + 3));
        if constexpr (CS)
          __stcs(reinterpret_cast<float4*>(out + i), x);
        else
          *reinterpret_cast<float4*>(out + i) = x;
      } else {
        for (std::int64_t k = i; k < n; ++k) out[k] = float(k);
      }
    }
  }
}

using WriteKernel = void (*)(float*, std::int64_t);
WriteKernel pick_write_only(int ept, bool cs) {
  switch (ept) {
  case 4: return cs ? write_only<1, true> : write_only<1, false>;
  case 8: return cs ? write_only<2, true> : write_only<2, false>;
  case 16: return cs ? write_only<4, true> : write_only<4, false>;
  default: return nullptr;
  }
}

// 2^26 float32 written, as bench/bench_random.cpp's BM_Random. Args: grid, ept (4, 8, 16), cs.
void BM_LimitWriteOnly(benchmark::State& state) {
  if (!has_gpu(state)) return;
  const std::int64_t n = std::int64_t(1) << 26;
  const int grid_arg = int(state.range(0)), ept = int(state.range(1));
  const bool cs = state.range(2) != 0;
  const auto kernel = pick_write_only(ept, cs);
  if (!kernel) {
    state.SkipWithError("ept must be 4, 8 or 16");
    return;
  }
  float* out = nullptr;
  try {
    out = buffer("write_only.out", n);
  } catch (const CudaFailure& f) {
    state.SkipWithError(f.what.c_str());
    return;
  }
  const std::int64_t chunks = (n / 4 + std::int64_t(kThreads) * (ept / 4) - 1) / (std::int64_t(kThreads) * (ept / 4));
  const unsigned grid = grid_for(chunks, grid_arg);
  auto launch = [&] { kernel<<<grid, kThreads, 0, stream()>>>(out, n); };
  auto check = [&]() -> std::string {
    poison(out, n);
    launch();
    check_cuda(cudaGetLastError(), "launch");
    check_cuda(cudaStreamSynchronize(stream()), "kernel");
    if (auto e = nonfinite_error(out, n, "write_only"); !e.empty()) return e;
    const auto last = download(out, n - 4099, 4099);
    for (std::int64_t k = 0; k < 4099; ++k)
      if (last[std::size_t(k)] != float(n - 4099 + k))
        return "write_only: wrong value at " + std::to_string(n - 4099 + k);
    return "";
  };
  kernel_counters(state, kernel, kThreads);
  run_limit(state, variant_name(state, "write_only", 3), launch, check, 4.0 * double(n));
}

} // namespace

BENCHMARK(BM_CopyReference)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitCopyKernel)->Apply([](auto* b) {
                               elementwise_args(b, {{0, 4}, {0, 16}, {8, 4}});
                             }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitChain)
    ->Apply([](auto* b) {
      elementwise_args(b, {{0, 4}, {0, 8}, {0, 12}, {0, 16}, {0, 32}, {8, 4}, {8, 8}});
    }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitUpdateLoop)->Apply([](auto* b) {
                               elementwise_args(b, {{0, 4}, {0, 16}, {8, 4}});
                             }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitBlackScholes)
    ->Apply([](auto* b) {
      elementwise_args(b, {{0, 4}, {0, 8}, {0, 12}, {0, 16}, {8, 8}});
    }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitHeat2d)
    ->ArgNames({"rows", "cs"})
    ->ArgsProduct({{2, 4, 6, 8}, {0, 1}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitSumSq)
    ->Apply([](auto* b) {
      elementwise_args(b, {{0, 32}, {4, 8}, {4, 16}, {4, 32}, {8, 8}, {8, 16}, {8, 32}});
    }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitSoftmax)
    ->ArgNames({"tpr", "cs"})
    ->ArgsProduct({{128, 256, 512, 1024}, {0, 1}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitRowVar)
    ->ArgNames({"tpr", "cs"})
    ->ArgsProduct({{32, 128, 256, 512}, {0, 1}})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_LimitChainF16)
    ->ArgNames({"grid", "ept", "cs", "paired"})
    ->ArgsProduct({{0}, {8, 16, 32}, {0, 1}, {0, 1}})
    ->Args({8, 16, 1, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitChainBF16)
    ->ArgNames({"grid", "ept", "cs", "paired"})
    ->ArgsProduct({{0}, {8, 16, 32}, {0, 1}, {0, 1}})
    ->Args({8, 16, 1, 1})
    ->UseManualTime()
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitSumF16)
    ->Apply([](auto* b) {
      elementwise_args(b, {{0, 64}, {4, 32}, {4, 64}, {8, 16}, {8, 32}, {8, 64}});
    }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitSumBF16)
    ->Apply([](auto* b) {
      elementwise_args(b, {{0, 64}, {4, 32}, {4, 64}, {8, 16}, {8, 32}, {8, 64}});
    }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitComplexMaddC64)->Apply([](auto* b) {
                                   elementwise_args(b, {{0, 2}, {0, 4}, {0, 8}, {8, 4}});
                                 }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);
BENCHMARK(BM_LimitWriteOnly)->Apply([](auto* b) {
                              elementwise_args(b, {{0, 4}, {0, 8}, {0, 16}, {8, 4}, {8, 8}});
                            }) -> UseManualTime() -> Iterations(1) -> Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
