// cub::DeviceRadixSort for runtime/CubSort.h, compiled by nvcc for sm_90 (machine code) and compute_90 (PTX). One
// SortKeys and two SortPairs (32- and 64-bit positions) per key type: 36 instantiations, about a minute of this file's
// compile time on CI's two cores (docs/design.md, "Device sorts").
#include "runtime/CubSort.h"

#include "runtime/CudaApi.h"

// (the half types first: CUB and libcu++ count them as floating point only when they are declared)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace lazyfuse::runtime::cub_sort {

namespace {

// CUB treats -0.0 and +0.0 as one key only for the types it counts as floating point.
static_assert(::cuda::is_floating_point_v<__half> && ::cuda::is_floating_point_v<__nv_bfloat16>,
              "CUB must see the half types as floating point (their -0.0 and +0.0 equal)");

template <class K> constexpr bool kFloatKey = ::cuda::is_floating_point_v<K>;

// The element's bits (values are moved as these, so they stay exact).
template <class K>
using Bits = std::conditional_t<sizeof(K) == 1, std::uint8_t,
                                std::conditional_t<sizeof(K) == 2, std::uint16_t,
                                                   std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>>>;

// A NaN's bits: above the infinity's once the sign is dropped. The canonical NaN key (all bits but the sign) is the
// largest key CUB's twiddle makes, so every NaN lands after +inf, all of them tied.
template <class K> struct FloatBits;
template <> struct FloatBits<float> { static constexpr std::uint32_t magnitude = 0x7fffffffu, inf = 0x7f800000u; };
template <> struct FloatBits<double> {
  static constexpr std::uint64_t magnitude = 0x7fffffffffffffffull, inf = 0x7ff0000000000000ull;
};
template <> struct FloatBits<__half> { static constexpr std::uint16_t magnitude = 0x7fff, inf = 0x7c00; };
template <> struct FloatBits<__nv_bfloat16> { static constexpr std::uint16_t magnitude = 0x7fff, inf = 0x7f80; };

template <class K> __device__ bool is_nan_bits(Bits<K> b) {
  return Bits<K>(b & FloatBits<K>::magnitude) > FloatBits<K>::inf;
}

constexpr int kBlock = 256;

int blocks_for(std::int64_t n) {
  return int(std::min<std::int64_t>((n + kBlock - 1) / kBlock, std::int64_t(1) << 20));
}

#define LF_GRID_STRIDE(i, n)                                                                                           \
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);                                  \
       i += std::int64_t(gridDim.x) * blockDim.x)

template <class I> __global__ void lf_sort_iota(I* v, std::int64_t n) {
  LF_GRID_STRIDE(i, n) v[i] = I(i);
}

// The keys of the NaN pass: the element, or the canonical NaN for every NaN (whatever its sign and payload).
template <class K, class I>
__global__ void lf_sort_canonical_keys(const Bits<K>* x, Bits<K>* keys, I* v, std::int64_t n) {
  LF_GRID_STRIDE(i, n) {
    const Bits<K> b = x[i];
    keys[i] = is_nan_bits<K>(b) ? FloatBits<K>::magnitude : b;
    v[i] = I(i);
  }
}

// CUB puts NaNs at the ends of its order (negative ones first, positive ones last): there are some iff an end is one.
template <class K> __global__ void lf_sort_nan_ends(const Bits<K>* sorted, std::int64_t n, unsigned* flag) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *flag = is_nan_bits<K>(sorted[0]) || is_nan_bits<K>(sorted[n - 1]) ? 1 : 0;
}

// The line of the element at flat position p of [outer, len, inner]: lines are numbered in C order of (outer, inner).
template <class I> __device__ I line_of(I p, std::int64_t len, std::int64_t inner) {
  const std::int64_t q = std::int64_t(p);
  return I(q / (len * inner) * inner + q % inner);
}

template <class I>
__global__ void lf_sort_line_keys(const I* p, I* keys, std::int64_t n, std::int64_t len, std::int64_t inner) {
  LF_GRID_STRIDE(i, n) keys[i] = line_of(p[i], len, inner);
}

// Entry i of the grouped order is element i % len of line i / len: its place in the [outer, len, inner] output.
__device__ std::int64_t place_of(std::int64_t i, std::int64_t len, std::int64_t inner) {
  if (inner == 1) return i;
  const std::int64_t line = i / len, r = i % len;
  return line / inner * len * inner + line % inner + r * inner;
}

template <class I>
__global__ void lf_sort_scatter_indices(const I* p, std::int64_t* out, std::int64_t n, std::int64_t len,
                                        std::int64_t inner) {
  LF_GRID_STRIDE(i, n) {
    const std::int64_t q = std::int64_t(p[i]);
    out[place_of(i, len, inner)] = len == n ? q : q / inner % len;
  }
}

template <class B, class I>
__global__ void lf_sort_gather_values(const B* x, const I* p, B* out, std::int64_t n, std::int64_t len,
                                      std::int64_t inner) {
  LF_GRID_STRIDE(i, n) out[place_of(i, len, inner)] = x[p[i]];
}

void check_launch() {
  LAZYFUSE_CUDA_CHECK(cudaGetLastError());
}

template <class K, class I> struct Runner {
  using B = Bits<K>;
  const Sort& s;
  const Scratch& scratch;
  cudaStream_t stream;
  std::int64_t n;
  Report report;

  template <class T> T* take(std::int64_t count) {
    return static_cast<T*>(scratch(scratch_bytes(sizeof(T) * std::size_t(count))));
  }

  void note(const std::string& step) { report.steps += (report.steps.empty() ? "" : ", ") + step; }

  template <class Call> void cub_call(const char* name, Call&& call) {
    std::size_t bytes = 0;
    LAZYFUSE_CUDA_CHECK(call(nullptr, bytes));
    void* temp = scratch(scratch_bytes(bytes));
    LAZYFUSE_CUDA_CHECK(call(temp, bytes));
    report.library_calls++;
    note(name);
  }

  void sort_keys(const K* in, K* out) {
    cub_call("SortKeys", [&](void* t, std::size_t& b) {
      return ::cub::DeviceRadixSort::SortKeys(t, b, in, out, n, 0, int(sizeof(K) * 8), stream);
    });
  }

  template <class Key>
  void sort_pairs(const char* name, const Key* keys_in, Key* keys_out, const I* v_in, I* v_out, int end_bit) {
    cub_call(name, [&](void* t, std::size_t& b) {
      return ::cub::DeviceRadixSort::SortPairs(t, b, keys_in, keys_out, v_in, v_out, n, 0, end_bit, stream);
    });
  }

  // Queues the NaN check of the sorted keys (its answer into Sort::nan_answer, which holds kNanUnwritten until then).
  void check_nans(const K* sorted) {
    s.nan_answer->expect(kNanUnwritten);
    lf_sort_nan_ends<K><<<1, 1, 0, stream>>>(reinterpret_cast<const B*>(sorted), n, s.nan_answer->as<unsigned>());
    check_launch();
    report.kernels++;
    note("nan check");
  }

  // Queues the NaN check and polls for its answer.
  bool has_nans(const K* sorted) {
    check_nans(sorted);
    return s.nan_answer->wait_until_written(kNanUnwritten, stream) != 0;
  }

  // SortPairs of (key, flat position) over all elements, the keys either the input or its canonical-NaN copy; then
  // grouping by line and the final scatter or gather. Returns the sorted keys (for the NaN check).
  const K* sort_and_place(bool canonical_nans) {
    const K* x = static_cast<const K*>(s.in);
    const int grid = blocks_for(n);
    const K* keys = x;
    I* positions_in = take<I>(n);
    if constexpr (kFloatKey<K>) {
      if (canonical_nans) {
        K* canonical = take<K>(n);
        lf_sort_canonical_keys<K, I><<<grid, kBlock, 0, stream>>>(reinterpret_cast<const B*>(x),
                                                                  reinterpret_cast<B*>(canonical), positions_in, n);
        check_launch();
        report.kernels++;
        report.nan_pass = true;
        note("canonical NaN keys");
        keys = canonical;
      }
    }
    if (!canonical_nans) {
      lf_sort_iota<I><<<grid, kBlock, 0, stream>>>(positions_in, n);
      check_launch();
      report.kernels++;
      note("positions");
    }
    K* keys_out = take<K>(n);
    I* positions = take<I>(n);
    sort_pairs<K>("SortPairs", keys, keys_out, positions_in, positions, int(sizeof(K) * 8));

    const std::int64_t lines = s.outer * s.inner;
    if (lines > 1) {
      // Group by line, stably: within a line the elements stay in key order, ties in position order.
      I* line_keys = positions_in;
      I* line_keys_out = take<I>(n);
      I* grouped = take<I>(n);
      lf_sort_line_keys<I><<<grid, kBlock, 0, stream>>>(positions, line_keys, n, s.len, s.inner);
      check_launch();
      report.kernels++;
      note("line keys");
      sort_pairs<I>("SortPairs by line", line_keys, line_keys_out, positions, grouped,
                    std::bit_width(std::uint64_t(lines - 1)));
      positions = grouped;
    }

    if (s.indices) {
      lf_sort_scatter_indices<I>
          <<<grid, kBlock, 0, stream>>>(positions, static_cast<std::int64_t*>(s.out), n, s.len, s.inner);
      note("indices");
    } else {
      lf_sort_gather_values<B, I><<<grid, kBlock, 0, stream>>>(reinterpret_cast<const B*>(x), positions,
                                                               static_cast<B*>(s.out), n, s.len, s.inner);
      note("gather");
    }
    check_launch();
    report.kernels++;
    return keys_out;
  }

  void run() {
    // One line of values: keys only, straight into the output, which is the answer unless there are NaNs.
    if (!s.indices && s.outer * s.inner == 1) {
      if constexpr (kFloatKey<K>) {
        if (s.nans == Sort::Nans::Present) {
          sort_and_place(true);
          return;
        }
      }
      sort_keys(static_cast<const K*>(s.in), static_cast<K*>(s.out));
      if constexpr (kFloatKey<K>) {
        if (s.nans == Sort::Nans::CheckLater)
          check_nans(static_cast<const K*>(s.out));
        else if (has_nans(static_cast<const K*>(s.out)))
          sort_and_place(true);
      }
      return;
    }
    if (s.nans != Sort::Nans::Check) throw Error("cub_sort: only a 1-D values sort takes Sort::nans other than Check");
    // The first sort's keys stay in their scratch buffer: the NaN check reads them after the final kernel is queued,
    // so that the common case (no NaNs) waits once, at the end. With NaNs the whole sort runs again on canonical keys.
    const K* sorted = sort_and_place(false);
    if constexpr (kFloatKey<K>) {
      if (has_nans(sorted)) sort_and_place(true);
    } else {
      (void)sorted;
    }
  }
};

template <class K> Report run_key(const Sort& s, const Scratch& scratch, cudaStream_t stream, std::int64_t n) {
  // 32-bit positions halve the values' traffic of every radix pass; 64-bit ones only past 2^32 elements.
  if (n <= (std::int64_t(1) << 32)) {
    Runner<K, std::uint32_t> r{s, scratch, stream, n, {}};
    r.run();
    return r.report;
  }
  Runner<K, std::uint64_t> r{s, scratch, stream, n, {}};
  r.run();
  return r.report;
}

} // namespace

bool supported(DType dtype) {
  return !is_complex(dtype);
}

Report run(const Sort& s, const Scratch& scratch, cudaStream_t stream) {
  if (!supported(s.dtype) || s.len < 1 || s.outer < 0 || s.inner < 0)
    throw Error("cub_sort: unsupported sort (" + std::string(dtype_name(s.dtype)) + ", [" + std::to_string(s.outer) +
                ", " + std::to_string(s.len) + ", " + std::to_string(s.inner) + "])");
  const std::int64_t n = s.outer * s.len * s.inner;
  if (n == 0) return {};
  if (is_floating(s.dtype) && !s.nan_answer) throw Error("cub_sort: a floating-point sort needs Sort::nan_answer");
  switch (s.dtype) {
  case DType::Bool:
  case DType::UInt8: return run_key<std::uint8_t>(s, scratch, stream, n);
  case DType::Int8: return run_key<std::int8_t>(s, scratch, stream, n);
  case DType::Int16: return run_key<std::int16_t>(s, scratch, stream, n);
  case DType::UInt16: return run_key<std::uint16_t>(s, scratch, stream, n);
  case DType::Int32: return run_key<std::int32_t>(s, scratch, stream, n);
  case DType::UInt32: return run_key<std::uint32_t>(s, scratch, stream, n);
  case DType::Int64: return run_key<std::int64_t>(s, scratch, stream, n);
  case DType::UInt64: return run_key<std::uint64_t>(s, scratch, stream, n);
  case DType::Float16: return run_key<__half>(s, scratch, stream, n);
  case DType::BFloat16: return run_key<__nv_bfloat16>(s, scratch, stream, n);
  case DType::Float32: return run_key<float>(s, scratch, stream, n);
  case DType::Float64: return run_key<double>(s, scratch, stream, n);
  case DType::Complex64:
  case DType::Complex128: break;
  }
  throw Error("cub_sort: no device sort for " + std::string(dtype_name(s.dtype)));
}

} // namespace lazyfuse::runtime::cub_sort
