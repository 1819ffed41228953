// The exceptions lazyfuse throws for user errors. Internal bugs are asserts, not these.
#pragma once

#include <stdexcept>
#include <string>

namespace lazyfuse {

/// Base of every user-facing error. The message names the operation, the operands' shapes and
/// dtypes and what would have been valid.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Shapes that do not broadcast, a reshape to a different size, a bad axis.
class ShapeError : public Error {
public:
  using Error::Error;
};

/// An operation that is not defined for the operands' element types.
class DTypeError : public Error {
public:
  using Error::Error;
};

/// An index or slice outside an array's bounds, or too many indices.
class IndexError : public Error {
public:
  using Error::Error;
};

/// An argument with a value the operation does not accept (a negative scale, high <= low, a probability outside
/// [0, 1]); the message names the argument.
class ValueError : public Error {
public:
  using Error::Error;
};

/// The device memory pool could not satisfy a request, even after freeing its cached blocks.
class OutOfMemoryError : public Error {
public:
  using Error::Error;
};

/// NVRTC rejected a generated kernel. `log()` holds NVRTC's whole log, `options()` the options, and
/// `source()` the numbered source when LAZYFUSE_DUMP_CUDA_SOURCE_ON_ERROR=1.
class CompileError : public Error {
public:
  CompileError(const std::string& message, std::string log, std::string options, std::string source)
      : Error(message), log_(std::move(log)), options_(std::move(options)), source_(std::move(source)) {}
  const std::string& log() const noexcept { return log_; }
  const std::string& options() const noexcept { return options_; }
  const std::string& source() const noexcept { return source_; }

private:
  std::string log_, options_, source_;
};

/// The requested backend is not available (no driver, no device, a failing CUDA call).
class BackendError : public Error {
public:
  using Error::Error;
};

} // namespace lazyfuse
