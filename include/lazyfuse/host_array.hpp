// The host-side result of Array::get(): data and shape, owned.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace lazyfuse {

/// A C-contiguous array in host memory. Unlike std::vector<bool>, HostArray<bool> holds real bools, so
/// data() works for every element type.
template <Element T> class HostArray {
public:
  HostArray() = default;
  explicit HostArray(std::vector<std::int64_t> shape) : shape_(std::move(shape)) {
    size_ = 1;
    for (auto d : shape_) size_ *= static_cast<std::size_t>(d);
    data_ = std::make_unique<T[]>(size_);
  }
  HostArray(HostArray&&) noexcept = default;
  HostArray& operator=(HostArray&&) noexcept = default;
  HostArray(const HostArray& other) : HostArray(other.shape_) {
    for (std::size_t i = 0; i < size_; ++i) data_[i] = other.data_[i];
  }
  HostArray& operator=(const HostArray& other) {
    if (this != &other) *this = HostArray(other);
    return *this;
  }

  const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  std::size_t ndim() const noexcept { return shape_.size(); }
  std::size_t size() const noexcept { return size_; }
  T* data() noexcept { return data_.get(); }
  const T* data() const noexcept { return data_.get(); }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  /// Element at a multi-index (row-major), e.g. h(i, j).
  template <class... I> const T& operator()(I... index) const noexcept {
    return data_[offset({std::int64_t(index)...})];
  }
  template <class... I> T& operator()(I... index) noexcept { return data_[offset({std::int64_t(index)...})]; }
  T* begin() noexcept { return data_.get(); }
  T* end() noexcept { return data_.get() + size_; }
  const T* begin() const noexcept { return data_.get(); }
  const T* end() const noexcept { return data_.get() + size_; }
  std::span<const T> span() const noexcept { return {data_.get(), size_}; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

private:
  std::size_t offset(std::initializer_list<std::int64_t> index) const noexcept {
    std::size_t off = 0, k = 0;
    for (auto i : index) off = off * static_cast<std::size_t>(shape_[k++]) + static_cast<std::size_t>(i);
    return off;
  }
  std::vector<std::int64_t> shape_;
  std::size_t size_ = 0;
  std::unique_ptr<T[]> data_;
};

} // namespace lazyfuse
