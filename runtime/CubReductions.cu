// cub::DeviceReduce and cub::DeviceSegmentedReduce for the cases of runtime/CubReductions.h, compiled by nvcc for
// sm_90 (machine code) and compute_90 (PTX). Only the combinations that runtime/Accelerators.cpp dispatches are
// instantiated: every one costs compile time on CI's two cores.
#include "runtime/CubReductions.h"

#include "runtime/CudaApi.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <math.h>
#include <mutex>
#include <tuple>
#include <vector>

// The op semantics of the fused kernels (graph/OpMath.inc), here for host and device: the same identities and
// combining functions, so that min/max propagate NaN and integer sums wrap exactly as in a generated kernel.
namespace lazyfuse_cub_opmath {
#define LF_HD __host__ __device__ inline
#define LF_INF_F __builtin_huge_valf()
#define LF_INF_D __builtin_huge_val()
// (nvcc compiles the text twice: for the device with CUDA's intrinsics, for the host with GCC's builtin)
#ifdef __CUDA_ARCH__
#define LF_F32_BITS(x) __float_as_uint(x)
#define LF_F32_FROM_BITS(u) __uint_as_float(u)
#define LF_F64_BITS(x) ((unsigned long long)__double_as_longlong(x))
#define LF_F64_FROM_BITS(u) __longlong_as_double((long long)(u))
#else
#define LF_F32_BITS(x) __builtin_bit_cast(unsigned int, (float)(x))
#define LF_F32_FROM_BITS(u) __builtin_bit_cast(float, (unsigned int)(u))
#define LF_F64_BITS(x) __builtin_bit_cast(unsigned long long, (double)(x))
#define LF_F64_FROM_BITS(u) __builtin_bit_cast(double, (unsigned long long)(u))
#endif
#include "graph/OpMathTypes.inc"
// (before the op semantics, which use these names)
// nvcc hands the host compiler expanded macros, so GCC sees LF_ORDERED's NaN test `a != a` on integers (which it
// accepts silently inside a macro, as in graph/HostOps.h) as a plain self-comparison.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtautological-compare"
#include "graph/OpMath.inc"
#pragma GCC diagnostic pop
#undef LF_HD
#undef LF_INF_F
#undef LF_INF_D
#undef LF_F32_BITS
#undef LF_F32_FROM_BITS
#undef LF_F64_BITS
#undef LF_F64_FROM_BITS
} // namespace lazyfuse_cub_opmath

namespace lazyfuse::runtime::cub_kernels {

namespace {

namespace om = lazyfuse_cub_opmath;

struct SumOp {
  template <class T> __host__ __device__ T operator()(T a, T b) const { return om::lf_sum_combine(a, b); }
  template <class T> static T identity() { return om::lf_sum_identity<T>(); }
};
struct ProdOp {
  template <class T> __host__ __device__ T operator()(T a, T b) const { return om::lf_prod_combine(a, b); }
  template <class T> static T identity() { return om::lf_prod_identity<T>(); }
};
struct MinOp {
  template <class T> __host__ __device__ T operator()(T a, T b) const { return om::lf_min_combine(a, b); }
  template <class T> static T identity() { return om::lf_min_identity<T>(); }
};
struct MaxOp {
  template <class T> __host__ __device__ T operator()(T a, T b) const { return om::lf_max_combine(a, b); }
  template <class T> static T identity() { return om::lf_max_identity<T>(); }
};

// The reduction's input cast (astype semantics): int32 -> int64 for sums, the identity otherwise.
template <class In, class Out> struct Convert {
  __host__ __device__ Out operator()(In x) const { return om::lf_cast<Out, In>(x); }
};

// Row r starts at r * row_size; row r ends where row r + 1 starts.
struct RowStart {
  std::int64_t row_size;
  __host__ __device__ std::int64_t operator()(std::int64_t r) const { return r * row_size; }
};

// One CUB call: a size query when `temp` is null (CUB's convention), else the launches.
template <class In, class Out, class ROp>
cudaError_t reduce(const Reduction& r, void* temp, std::size_t& bytes, cudaStream_t stream) {
  const In* in = static_cast<const In*>(r.in);
  Out* out = static_cast<Out*>(r.out);
  const Out init = ROp::template identity<Out>();
  if (r.rows == 1)
    return ::cub::DeviceReduce::TransformReduce(temp, bytes, in, out, r.row_size, ROp{}, Convert<In, Out>{}, init,
                                                stream);
  const auto offsets =
      thrust::make_transform_iterator(thrust::make_counting_iterator<std::int64_t>(0), RowStart{r.row_size});
  if constexpr (std::is_same_v<In, Out>) {
    return ::cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, r.rows, offsets, offsets + 1, ROp{}, init,
                                                stream);
  } else {
    const auto converted = thrust::make_transform_iterator(in, Convert<In, Out>{});
    return ::cub::DeviceSegmentedReduce::Reduce(temp, bytes, converted, out, r.rows, offsets, offsets + 1, ROp{}, init,
                                                stream);
  }
}

template <class ROp> cudaError_t reduce_typed(const Reduction& r, void* temp, std::size_t& bytes, cudaStream_t s) {
  switch (r.in_type) {
  case DType::Float32: return reduce<float, float, ROp>(r, temp, bytes, s);
  case DType::Float64: return reduce<double, double, ROp>(r, temp, bytes, s);
  case DType::Int64: return reduce<std::int64_t, std::int64_t, ROp>(r, temp, bytes, s);
  case DType::Int32:
    if constexpr (std::is_same_v<ROp, SumOp> || std::is_same_v<ROp, ProdOp>)
      return reduce<std::int32_t, std::int64_t, ROp>(r, temp, bytes, s);
    else
      return reduce<std::int32_t, std::int32_t, ROp>(r, temp, bytes, s);
  default: break; // bool and the other integer types: generated kernels only (see supported)
  }
  return cudaErrorInvalidValue;
}

cudaError_t call(const Reduction& r, void* temp, std::size_t& bytes, cudaStream_t stream) {
  switch (r.op) {
  case Op::Sum: return reduce_typed<SumOp>(r, temp, bytes, stream);
  case Op::Prod: return reduce_typed<ProdOp>(r, temp, bytes, stream);
  case Op::Min: return reduce_typed<MinOp>(r, temp, bytes, stream);
  case Op::Max: return reduce_typed<MaxOp>(r, temp, bytes, stream);
  }
  return cudaErrorInvalidValue;
}

void check_request(const Reduction& r) {
  if (!supported(r.op, r.in_type, r.out_type) || r.rows < 1 || r.row_size < 1)
    throw Error("cub_kernels: unsupported reduction (" + std::string(dtype_name(r.in_type)) + " -> " +
                std::string(dtype_name(r.out_type)) + ", " + std::to_string(r.rows) + " rows of " +
                std::to_string(r.row_size) + ")");
}

// A kernel with no work: whether it has an image for a device tells whether every kernel of this file has one (they
// are all compiled for the same targets).
__global__ void lf_cub_probe() {}

} // namespace

bool supported(Op op, DType in, DType out) {
  switch (in) {
  case DType::Float32:
  case DType::Float64:
  case DType::Int64: return out == in;
  case DType::Int32: return out == (op == Op::Sum || op == Op::Prod ? DType::Int64 : DType::Int32);
  default: return false; // bool, and the integer types added after CUB's were measured: generated kernels
  }
}

Requirements requirements(const Reduction& r) {
  check_request(r);
  Requirements q;
  std::size_t bytes = 0;
  LAZYFUSE_CUDA_CHECK(call(r, nullptr, bytes, nullptr));
  q.temp_bytes = std::max<std::size_t>(bytes, 1);
  if (r.rows == 1) {
    // CUB asks for exactly 1 byte when the input fits its single-tile kernel (one launch); the two-pass path asks
    // for one partial per block of the first pass (two launches).
    q.kernels = bytes <= 1 ? 1 : 2;
  } else {
    // DeviceSegmentedReduce launches one block per row, at most 2^31 - 1 rows per launch.
    const std::int64_t per_launch = std::numeric_limits<std::int32_t>::max();
    q.kernels = int((r.rows + per_launch - 1) / per_launch);
  }
  return q;
}

std::int64_t single_tile_elements(Op op, DType in, DType out) {
  static std::mutex mutex;
  static std::map<std::tuple<int, Op, DType, DType>, std::int64_t> known;
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard lock(mutex);
  const auto key = std::make_tuple(device, op, in, out);
  if (auto it = known.find(key); it != known.end()) return it->second;
  // One launch for n elements iff n <= the tile: double until two launches, then bisect (size queries only).
  Reduction r;
  r.op = op;
  r.in_type = in;
  r.out_type = out;
  auto one_launch = [&](std::int64_t n) {
    r.row_size = n;
    return requirements(r).kernels == 1;
  };
  std::int64_t lo = 1, hi = 2; // one_launch(lo) holds; one_launch(hi) is to be found false
  while (hi <= (std::int64_t(1) << 30) && one_launch(hi)) lo = hi, hi *= 2;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (one_launch(mid) ? lo : hi) = mid;
  }
  known[key] = lo;
  return lo;
}

void run(const Reduction& r, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  check_request(r);
  std::size_t bytes = temp_bytes;
  LAZYFUSE_CUDA_CHECK(call(r, temp, bytes, stream));
}

bool usable_on_current_device() {
  static std::mutex mutex;
  static std::vector<signed char> known; // per device ordinal: -1 unknown, 0 no, 1 yes
  int device = 0;
  LAZYFUSE_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard lock(mutex);
  if (std::size_t(device) >= known.size()) known.resize(std::size_t(device) + 1, -1);
  if (known[std::size_t(device)] < 0) {
    cudaFuncAttributes attributes{};
    const cudaError_t e = cudaFuncGetAttributes(&attributes, lf_cub_probe);
    // A sticky error says nothing about CUB (and must not be remembered as "unusable"): report it as the lost context.
    if (cuda::is_sticky(e)) LAZYFUSE_CUDA_CHECK(e);
    if (e != cudaSuccess) (void)cudaGetLastError(); // not sticky: forget it, so no later check reports it
    known[std::size_t(device)] = e == cudaSuccess ? 1 : 0;
  }
  return known[std::size_t(device)] == 1;
}

const char* function_name(const Reduction& r) {
  return r.rows == 1 ? "cub::DeviceReduce" : "cub::DeviceSegmentedReduce";
}

} // namespace lazyfuse::runtime::cub_kernels
