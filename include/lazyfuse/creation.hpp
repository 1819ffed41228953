// Creating arrays: from host data, constants, ranges, and memory the caller owns.
#pragma once

#include <lazyfuse/array.hpp>

#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace lazyfuse {

// ---- from host data (copied before the function returns) ----------------------------------------------------
/// Copies `data` (row-major, `shape`'s size) into a new array.
template <Element T> Array asarray(std::span<const T> data, Shape shape);
/// Copies a vector into an array of `shape`.
template <Element T>
requires(!std::is_same_v<T, bool>) Array asarray(const std::vector<T>& data, Shape shape) {
  return asarray(std::span<const T>(data.data(), data.size()), std::move(shape));
}
/// Copies a vector into a 1-d array.
template <Element T>
requires(!std::is_same_v<T, bool>) Array asarray(const std::vector<T>& data) {
  return asarray(std::span<const T>(data.data(), data.size()), Shape{std::int64_t(data.size())});
}
/// Small literals: `asarray({1.0, 2.0})`, `asarray({{1, 2}, {3, 4}})`.
template <Element T> Array asarray(std::initializer_list<T> v) {
  return asarray(std::span<const T>(v.begin(), v.end()), Shape{std::int64_t(v.size())});
}
/// A bool array from a std::vector<bool> (which has no contiguous data to span).
Array asarray(const std::vector<bool>& data, Shape shape);
/// A 2-d literal: `asarray({{1, 2}, {3, 4}})`; ragged rows are a ShapeError.
template <Element T> Array asarray(std::initializer_list<std::initializer_list<T>> v);
/// A 3-d literal; ragged rows are a ShapeError.
template <Element T> Array asarray(std::initializer_list<std::initializer_list<std::initializer_list<T>>> v);
/// Copies `values` (any element type) into an array of type `type`.
Array asarray_as(DType type, std::span<const double> values, Shape shape);

// ---- constants and ranges -----------------------------------------------------------------------------------
/// An array of zeros.
Array zeros(Shape shape, DType type = DType::Float64);
/// An array of ones.
Array ones(Shape shape, DType type = DType::Float64);
/// `value` converted to `type`. A NaN, infinite or out-of-range value for an integer type throws DTypeError (NumPy
/// fills INT_MIN with a RuntimeWarning; docs/semantics.md lists the difference); a fraction truncates toward zero.
Array full(Shape shape, double value, DType type = DType::Float64);
/// Uninitialized in NumPy; here filled with zeros on creation is not promised either — treat as garbage.
Array empty(Shape shape, DType type = DType::Float64);
/// zeros(a.shape(), a.dtype()).
Array zeros_like(const Array& a);
/// ones(a.shape(), a.dtype()).
Array ones_like(const Array& a);
/// full(a.shape(), value, a.dtype()), with full's DTypeError for integer types.
Array full_like(const Array& a, double value);
/// empty(a.shape(), a.dtype()).
Array empty_like(const Array& a);
/// 0, 1, ..., stop - 1 as int64.
Array arange(std::int64_t stop);
/// NumPy arange: int64 for integer arguments unless `type` says otherwise, else float64.
Array arange(double start, double stop, double step = 1, std::optional<DType> type = std::nullopt);
/// `num` evenly spaced values from start to stop (stop included when `endpoint`).
Array linspace(double start, double stop, std::int64_t num = 50, bool endpoint = true, DType type = DType::Float64);
/// An n x m matrix with ones on diagonal k (0: the main one, > 0 above it) and zeros elsewhere.
Array eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt, std::int64_t k = 0,
          DType type = DType::Float64);

// ---- memory the caller owns -----------------------------------------------------------------------------------
/// Wraps memory the caller owns as an array, without copying. Strides are in elements (C-contiguous when empty) and
/// must not be negative. `owner` is kept alive as long as any array reads the memory, then released (put your
/// deleter in it).
///
/// The memory is checked when it is wrapped, so that no kernel can fault on it later (a fault would lose the CUDA
/// context for the whole process): `data` must be aligned to the element size, and the driver is asked what it is.
/// - CUDA backend: accepts memory of the current device (cudaMalloc, pools, virtual-memory mappings), managed memory
///   (cudaMallocManaged), and another device's memory that the current device can access (peer access enabled with
///   cudaDeviceEnablePeerAccess, or access granted to its pool). The elements' span, from `data` to the end of the
///   highest-addressed element, must lie inside one allocation (or consecutive mappings of one reservation). Refuses
///   host memory: pageable (malloc, new, std::vector) and pinned (cudaMallocHost, cudaHostAlloc, cudaHostRegister)
///   alike, since kernels would read pinned memory across the host link at every use; copy with asarray instead.
/// - CPU backend: accepts host, pinned and managed memory; refuses device memory when a driver is loaded to tell
///   (without one, no device memory can exist).
///
/// A zero-size array reads nothing: its pointer is not checked and may be null. Throws ShapeError for a bad shape or
/// strides (too many or too few, negative, a span larger than the address space), Error for memory it refuses
/// (naming its kind, or the bytes asked for and the allocation's range), BackendError when the CUDA context is lost.
Array from_pointer(void* data, Shape shape, DType type, std::vector<std::int64_t> strides = {},
                   std::shared_ptr<void> owner = nullptr);

} // namespace lazyfuse
