// cub::DeviceReduce (the count) and cub::DeviceSelect::Flagged (the positions, or the flagged elements) over a
// boolean mask, for runtime/CubSelection.h; compiled by nvcc for the targets of runtime/CubReductions.cu, whose probe
// kernel stands for these too (usable_on_current_device).
#include "runtime/CubSelection.h"

#include "runtime/CudaApi.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <limits>
#include <string>

namespace lazyfuse::runtime::cub_kernels {

namespace {

// A bool buffer holds 0 or 1 per byte, but any nonzero byte counts as true (what the select pass reads too).
struct FlagValue {
  __host__ __device__ std::int64_t operator()(std::uint8_t f) const { return f != 0 ? 1 : 0; }
};

cudaError_t count(const void* flags, std::int64_t size, std::int64_t* out, void* temp, std::size_t& bytes,
                  cudaStream_t stream) {
  return ::cub::DeviceReduce::TransformReduce(temp, bytes, static_cast<const std::uint8_t*>(flags), out, size,
                                              ::cuda::std::plus<std::int64_t>{}, FlagValue{}, std::int64_t(0), stream);
}

cudaError_t select(const void* flags, std::int64_t size, std::int64_t* positions, std::int64_t* selected, void* temp,
                   std::size_t& bytes, cudaStream_t stream) {
  return ::cub::DeviceSelect::Flagged(temp, bytes, thrust::make_counting_iterator<std::int64_t>(0),
                                      static_cast<const std::uint8_t*>(flags), positions, selected, size, stream);
}

// The bits of a 16-byte element (complex128).
struct alignas(16) Bits16 {
  unsigned long long lo, hi;
};

template <class U>
cudaError_t select_values(const void* values, const void* flags, std::int64_t size, void* out, std::int64_t* selected,
                          void* temp, std::size_t& bytes, cudaStream_t stream) {
  return ::cub::DeviceSelect::Flagged(temp, bytes, static_cast<const U*>(values),
                                      static_cast<const std::uint8_t*>(flags), static_cast<U*>(out), selected, size,
                                      stream);
}

cudaError_t select_values_of_width(int width, const void* values, const void* flags, std::int64_t size, void* out,
                                   std::int64_t* selected, void* temp, std::size_t& bytes, cudaStream_t stream) {
  switch (width) {
  case 1: return select_values<std::uint8_t>(values, flags, size, out, selected, temp, bytes, stream);
  case 2: return select_values<std::uint16_t>(values, flags, size, out, selected, temp, bytes, stream);
  case 4: return select_values<std::uint32_t>(values, flags, size, out, selected, temp, bytes, stream);
  case 8: return select_values<std::uint64_t>(values, flags, size, out, selected, temp, bytes, stream);
  case 16: return select_values<Bits16>(values, flags, size, out, selected, temp, bytes, stream);
  default: throw Error("cub_kernels: no selection of " + std::to_string(width) + "-byte elements");
  }
}

// Neighbours that NumPy's unique (equal_nan) counts as one value, compared as the bits U of an IEEE format with the
// given sign bit and infinity: the same bits, two zeros, or two NaNs.
template <class U, U kSign, U kInfinity> struct SameFloat {
  __host__ __device__ bool operator()(U a, U b) const {
    const U magnitude_a = a & U(~kSign), magnitude_b = b & U(~kSign);
    return a == b || (magnitude_a == 0 && magnitude_b == 0) || (magnitude_a > kInfinity && magnitude_b > kInfinity);
  }
};

// cub::DeviceSelect::Unique with an equality of one's own (Unique itself compares with ==): its own dispatch.
template <class U, class Equal>
cudaError_t unique_of(const void* values, std::int64_t size, void* out, std::int64_t* selected, void* temp,
                      std::size_t& bytes, cudaStream_t stream) {
  using Dispatch = ::cub::DispatchSelectIf<const U*, ::cub::NullType*, U*, std::int64_t*, ::cub::NullType, Equal,
                                           std::int64_t, ::cub::SelectImpl::Select>;
  return Dispatch::Dispatch(temp, bytes, static_cast<const U*>(values), nullptr, static_cast<U*>(out), selected,
                            ::cub::NullType(), Equal(), size, stream);
}

cudaError_t unique_of_width(int width, UniqueEquality equality, const void* values, std::int64_t size, void* out,
                            std::int64_t* selected, void* temp, std::size_t& bytes, cudaStream_t stream) {
  using Eq8 = ::cuda::std::equal_to<std::uint8_t>;
  using Eq16 = ::cuda::std::equal_to<std::uint16_t>;
  using Eq32 = ::cuda::std::equal_to<std::uint32_t>;
  using Eq64 = ::cuda::std::equal_to<std::uint64_t>;
  using Half = SameFloat<std::uint16_t, 0x8000u, 0x7C00u>;
  using BHalf = SameFloat<std::uint16_t, 0x8000u, 0x7F80u>;
  using Single = SameFloat<std::uint32_t, 0x80000000u, 0x7F800000u>;
  using Double = SameFloat<std::uint64_t, 0x8000000000000000ull, 0x7FF0000000000000ull>;
  const auto args = [&]<class U, class Equal>() {
    return unique_of<U, Equal>(values, size, out, selected, temp, bytes, stream);
  };
  switch (equality) {
  case UniqueEquality::Bits:
    switch (width) {
    case 1: return args.template operator()<std::uint8_t, Eq8>();
    case 2: return args.template operator()<std::uint16_t, Eq16>();
    case 4: return args.template operator()<std::uint32_t, Eq32>();
    case 8: return args.template operator()<std::uint64_t, Eq64>();
    default: break;
    }
    break;
  case UniqueEquality::Float16:
    if (width == 2) return args.template operator()<std::uint16_t, Half>();
    break;
  case UniqueEquality::BFloat16:
    if (width == 2) return args.template operator()<std::uint16_t, BHalf>();
    break;
  case UniqueEquality::Float32:
    if (width == 4) return args.template operator()<std::uint32_t, Single>();
    break;
  case UniqueEquality::Float64:
    if (width == 8) return args.template operator()<std::uint64_t, Double>();
    break;
  }
  throw Error("cub_kernels: no unique of " + std::to_string(width) + "-byte elements in that format");
}

void check_size(std::int64_t size) {
  if (size < 1) throw Error("cub_kernels: a selection needs at least one flag, got " + std::to_string(size));
}

// DispatchSelectIf runs partitions of at most 2^31 - 1 items (its 32-bit tile offsets), two launches each.
int select_kernels(std::int64_t size) {
  const std::int64_t partition = std::numeric_limits<std::int32_t>::max();
  return int(2 * ((size + partition - 1) / partition));
}

} // namespace

Requirements count_requirements(std::int64_t size) {
  check_size(size);
  std::size_t bytes = 0;
  LAZYFUSE_CUDA_CHECK(count(nullptr, size, nullptr, nullptr, bytes, nullptr));
  Requirements q;
  q.temp_bytes = std::max<std::size_t>(bytes, 1);
  // As for CubReductions' requirements: CUB asks for 1 byte exactly when its single-tile kernel does it all.
  q.kernels = bytes <= 1 ? 1 : 2;
  return q;
}

void run_count(const void* flags, std::int64_t size, std::int64_t* out, void* temp, std::size_t temp_bytes,
               cudaStream_t stream) {
  check_size(size);
  std::size_t bytes = temp_bytes;
  LAZYFUSE_CUDA_CHECK(count(flags, size, out, temp, bytes, stream));
}

Requirements select_requirements(std::int64_t size) {
  check_size(size);
  std::size_t bytes = 0;
  LAZYFUSE_CUDA_CHECK(select(nullptr, size, nullptr, nullptr, nullptr, bytes, nullptr));
  Requirements q;
  q.temp_bytes = std::max<std::size_t>(bytes, 1);
  q.kernels = select_kernels(size);
  return q;
}

void run_select(const void* flags, std::int64_t size, std::int64_t* positions, std::int64_t* selected, void* temp,
                std::size_t temp_bytes, cudaStream_t stream) {
  check_size(size);
  std::size_t bytes = temp_bytes;
  LAZYFUSE_CUDA_CHECK(select(flags, size, positions, selected, temp, bytes, stream));
}

Requirements select_values_requirements(int width, std::int64_t size) {
  check_size(size);
  std::size_t bytes = 0;
  LAZYFUSE_CUDA_CHECK(select_values_of_width(width, nullptr, nullptr, size, nullptr, nullptr, nullptr, bytes, nullptr));
  Requirements q;
  q.temp_bytes = std::max<std::size_t>(bytes, 1);
  q.kernels = select_kernels(size);
  return q;
}

void run_select_values(int width, const void* values, const void* flags, std::int64_t size, void* out,
                       std::int64_t* selected, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  check_size(size);
  std::size_t bytes = temp_bytes;
  LAZYFUSE_CUDA_CHECK(select_values_of_width(width, values, flags, size, out, selected, temp, bytes, stream));
}

Requirements unique_requirements(int width, UniqueEquality equality, std::int64_t size) {
  check_size(size);
  std::size_t bytes = 0;
  LAZYFUSE_CUDA_CHECK(unique_of_width(width, equality, nullptr, size, nullptr, nullptr, nullptr, bytes, nullptr));
  Requirements q;
  q.temp_bytes = std::max<std::size_t>(bytes, 1);
  q.kernels = select_kernels(size);
  return q;
}

void run_unique(int width, UniqueEquality equality, const void* values, std::int64_t size, void* out,
                std::int64_t* selected, void* temp, std::size_t temp_bytes, cudaStream_t stream) {
  check_size(size);
  std::size_t bytes = temp_bytes;
  LAZYFUSE_CUDA_CHECK(unique_of_width(width, equality, values, size, out, selected, temp, bytes, stream));
}

} // namespace lazyfuse::runtime::cub_kernels
