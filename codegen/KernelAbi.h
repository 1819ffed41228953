// The kernel's ABI: its parameters in order, each with its C type and name. The CUDA printer prints the signature
// from it (codegen/CudaPrinter.cpp) and the CUDA executor packs the launch's arguments by it (pack_kernel_args),
// so the two cannot disagree about the order, the count or the width of a parameter.
#pragma once

#include "codegen/KernelIR.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lazyfuse::codegen {

/// What a parameter holds.
enum class AbiRole : std::uint8_t {
  Input,         ///< `const T* __restrict__ in<slot>`: first element of input `slot`
  Output,        ///< `T* __restrict__ out<slot>`: output `slot`
  Count,         ///< `const idx_t n`: output elements (elementwise) or outer elements (reductions)
  Param,         ///< `const idx_t p<slot>` or `const T p<slot>`: parameter `slot` of the IR
  Divisor,       ///< `const lf_divisor lf_d<slot>`: the fast-division constants of parameter `slot` (FastDivisor)
  SplitPartials, ///< split schedules: `unsigned char* __restrict__ lf_partials`, the blocks' partial results
  SplitTickets,  ///< split schedules: `unsigned int* __restrict__ lf_tickets`, a counter per group (zeroed)
  SplitCount,    ///< split schedules: `const idx_t lf_splits`, blocks per group (LaunchShape::splits)
  /// scans: `const unsigned int lf_epoch`, the launch's epoch, which tags the tiles' statuses in the tickets
  /// (SplitArgs::epoch)
  ScanEpoch,
  ErrorWord, ///< kernels with bounds checks: `unsigned int* __restrict__ lf_error` (KernelArgs::error_word)
  /// Kernels with repeated steps (KernelIR::repeated_steps with parameters): `const __grid_constant__ lf_steps_t
  /// lf_steps`, the steps' parameters, in place of their Param slots (step_params_layout). Read in the kernel's
  /// parameter space, indexed by the loop's counter.
  RepeatedParams,
  /// `const lf_vdiv64 lf_vd<slot>` (int64) or `const lf_vdiv32 lf_vd<slot>` (int32): multiply-shift constants of the
  /// magnitude of parameter `slot`, a divisor of values (KernelIR::value_divisors; fast_value_divisor64/32)
  ValueDivisor,
};

struct AbiParam {
  AbiRole role = AbiRole::Count;
  int slot = -1; ///< Input, Output, Param: the IR's slot
  bool operator==(const AbiParam&) const = default;
};

/// Calls `f(AbiParam)` for every parameter of `ir`'s kernel, in order: inputs, outputs, n, the IR's parameters in
/// slot order (the repeated steps' as one RepeatedParams where the first of them would be), the divisors' constants
/// (is_divisor_param) in slot order, the value divisors' constants (KernelIR::value_divisors) in slot order, then for
/// split and scan schedules the partials, the tickets and the split count (and for scans the epoch), then for kernels
/// with bounds checks (has_bounds_checks) the error word. Allocates nothing (the executor packs arguments on the host
/// path of every launch).
template <class F> void for_each_abi_param(const KernelIR& ir, F&& f) {
  for (std::size_t k = 0; k < ir.inputs.size(); ++k) f(AbiParam{AbiRole::Input, int(k)});
  for (std::size_t k = 0; k < ir.outputs.size(); ++k) f(AbiParam{AbiRole::Output, int(k)});
  f(AbiParam{AbiRole::Count, -1});
  const RepeatedSteps& steps = ir.repeated_steps;
  const int first_step_param = steps.first_param,
            end_step_params = steps.first_param + steps.params_per_step * steps.count;
  for (int k = 0; k < int(ir.params.size()); ++k) {
    if (k >= first_step_param && k < end_step_params) {
      if (k == first_step_param) f(AbiParam{AbiRole::RepeatedParams, -1});
      continue;
    }
    f(AbiParam{AbiRole::Param, k});
  }
  if (has_divisor_params(ir))
    for (std::size_t k = 0; k < ir.params.size(); ++k)
      if (is_divisor_param(ir, int(k))) f(AbiParam{AbiRole::Divisor, int(k)});
  for (int slot : ir.value_divisors) f(AbiParam{AbiRole::ValueDivisor, slot});
  if (has_block_scratch(ir.schedule)) {
    f(AbiParam{AbiRole::SplitPartials, -1});
    f(AbiParam{AbiRole::SplitTickets, -1});
    f(AbiParam{AbiRole::SplitCount, -1});
    if (ir.schedule == Schedule::Scan) f(AbiParam{AbiRole::ScanEpoch, -1});
  }
  if (has_bounds_checks(ir)) f(AbiParam{AbiRole::ErrorWord, -1});
}

/// The layout of the RepeatedParams struct: per parameter k of a step (slot first_param + k), an array of `count`
/// values of its type at offsets[k]; each at its type's alignment, which is its size (plain C types only).
struct StepParamsLayout {
  std::vector<std::size_t> offsets;
  std::size_t size = 0, align = 1;
};
StepParamsLayout step_params_layout(const KernelIR& ir);

/// The parameters of `ir`'s kernel, in order.
std::vector<AbiParam> kernel_abi(const KernelIR& ir);

/// The parameter's name in the kernel ("in0", "n", "p3", "lf_splits").
std::string abi_name(const AbiParam& p);
/// The parameter's declaration in the kernel's signature ("const float* __restrict__ in0", "const idx_t n").
std::string abi_declaration(const KernelIR& ir, const AbiParam& p);
/// Bytes of the parameter's value in the argument buffer (pointers 8, idx_t 4 or 8, scalars their item size).
std::size_t abi_size(const KernelIR& ir, const AbiParam& p);

/// The constants with which a kernel divides an index n >= 0 by a divisor d >= 1 without a division instruction:
/// q = (mulhi(n, mul) + n) >> shift, mulhi the high half of the product in the index width of N bits (Granlund and
/// Montgomery, "Division by invariant integers using multiplication", PLDI 1994, section 4: shift = ceil(log2 d),
/// mul = floor(2^N (2^shift - d) / d) + 1). Exact for n < 2^(N-1), where the sum cannot overflow: a kernel's indices
/// are non-negative values of a signed type. A division by a run-time value costs about twenty dependent
/// instructions on the GPU; this costs three, and an unravelled coordinate sits on the address path of every load.
/// The layouts are the kernel's `lf_divisor` (CudaPrinter.cpp) for 32- and 64-bit indices.
struct FastDivisor32 {
  std::uint32_t mul = 0, shift = 0;
  /// n / d, computed as the kernel does.
  std::uint32_t divide(std::uint32_t n) const { return std::uint32_t(((std::uint64_t(n) * mul >> 32) + n) >> shift); }
};
struct FastDivisor64 {
  std::uint64_t mul = 0;
  std::uint32_t shift = 0;
  std::uint64_t divide(std::uint64_t n) const;
};
/// The constants for divisor `d` (1 <= d < 2^31, resp. 2^63). d <= 0, which only a kernel with no elements can be
/// given (an empty dimension), gets constants that divide by one.
FastDivisor32 fast_divisor32(std::int64_t d);
FastDivisor64 fast_divisor64(std::int64_t d);
/// The constants for dividing magnitudes n <= 2^31 (2^63) by the magnitude of a value divisor `d` (the kernel's
/// lf_vdiv32, lf_vdiv64): |d| <= 2^31 (2^63), so the sum mulhi + n cannot overflow; d = 0, for which the kernel gives
/// 0 without dividing, gets constants that divide by one.
FastDivisor32 fast_value_divisor32(std::int32_t d);
FastDivisor64 fast_value_divisor64(std::int64_t d);

/// The scratch of a split launch (codegen::LaunchShape): where the partials and the tickets live.
struct SplitArgs {
  void* partials = nullptr;
  void* tickets = nullptr;
  std::int64_t splits = 0;
  /// Scans: the launch's epoch, 1 ... kScanEpochLimit, from the tickets' Executor::tagged_tickets.
  std::uint32_t epoch = 0;
};

/// Kernel arguments laid out as cuLaunchKernel wants them: one pointer per parameter into a byte buffer, each value
/// aligned to its size.
class PackedArgs {
public:
  /// Pointers to the values, in parameter order (valid while this object lives and is not moved).
  std::vector<void*> pointers();
  std::size_t count() const { return offsets_.size(); }
  std::size_t size_of(std::size_t k) const { return sizes_[k]; }
  /// The bytes of value `k`.
  const unsigned char* data(std::size_t k) const { return bytes_.data() + offsets_[k]; }
  /// Every value's bytes, laid out by their alignment with zeroed padding: equal arguments give equal bytes.
  const std::vector<unsigned char>& bytes() const { return bytes_; }

  void reserve(std::size_t count);
  /// `size` bytes as one value aligned to `align`.
  void push_bytes(const void* data, std::size_t size, std::size_t align) {
    const std::size_t at = (bytes_.size() + align - 1) / align * align;
    bytes_.resize(at + size);
    std::memcpy(bytes_.data() + at, data, size);
    offsets_.push_back(at);
    sizes_.push_back(size);
  }
  template <class T> void push(T value) {
    const std::size_t at = (bytes_.size() + alignof(T) - 1) / alignof(T) * alignof(T);
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &value, sizeof(T));
    offsets_.push_back(at);
    sizes_.push_back(sizeof(T));
  }

private:
  std::vector<unsigned char> bytes_;
  std::vector<std::size_t> offsets_, sizes_;
};

/// Packs the arguments of one launch of `ir` by its ABI: `args` (inputs, n, parameters), `outputs`, and for split
/// schedules `split` (which must then be non-null).
PackedArgs pack_kernel_args(const KernelIR& ir, const KernelArgs& args, const std::vector<void*>& outputs,
                            const SplitArgs* split);

} // namespace lazyfuse::codegen
