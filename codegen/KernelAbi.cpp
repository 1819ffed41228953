#include "codegen/KernelAbi.h"

#include "codegen/CudaPrinter.h"

#include "graph/Assert.h"
#include "graph/DTypeVisit.h"
#include "graph/HostOps.h"

namespace lazyfuse::codegen {

namespace {

__extension__ typedef unsigned __int128 Uint128; // GCC and Clang; the products of 64-bit divisors need 128 bits

int ceil_log2(std::uint64_t d) {
  int l = 0;
  while (l < 64 && (std::uint64_t(1) << l) < d) ++l;
  return l;
}

// Granlund and Montgomery's constants for a divisor 1 <= d <= 2^(N-1) of N-bit magnitudes; 0 and 1 divide by one.
FastDivisor32 magnitude_divisor32(std::uint64_t d) {
  if (d <= 1) return {1, 0}; // mulhi(n, 1) = 0 for every 32-bit n
  const int l = ceil_log2(d);
  return {std::uint32_t((((std::uint64_t(1) << l) - d) << 32) / d + 1), std::uint32_t(l)};
}

FastDivisor64 magnitude_divisor64(std::uint64_t d) {
  if (d <= 1) return {1, 0};
  const int l = ceil_log2(d);
  return {std::uint64_t((Uint128((std::uint64_t(1) << l) - d) << 64) / d + 1), std::uint32_t(l)};
}

} // namespace

FastDivisor32 fast_divisor32(std::int64_t d) {
  LAZYFUSE_ASSERT(d < (std::int64_t(1) << 31), "fast_divisor32: the divisor does not fit a 32-bit index");
  return magnitude_divisor32(d <= 1 ? 1 : std::uint64_t(d));
}

FastDivisor64 fast_divisor64(std::int64_t d) {
  return magnitude_divisor64(d <= 1 ? 1 : std::uint64_t(d));
}

FastDivisor32 fast_value_divisor32(std::int32_t d) {
  return magnitude_divisor32(d < 0 ? std::uint64_t(0) - std::uint64_t(std::int64_t(d)) : std::uint64_t(d));
}

FastDivisor64 fast_value_divisor64(std::int64_t d) {
  return magnitude_divisor64(d < 0 ? std::uint64_t(0) - std::uint64_t(d) : std::uint64_t(d));
}

std::uint64_t FastDivisor64::divide(std::uint64_t n) const {
  return (std::uint64_t(Uint128(n) * mul >> 64) + n) >> shift;
}

StepParamsLayout step_params_layout(const KernelIR& ir) {
  const RepeatedSteps& steps = ir.repeated_steps;
  StepParamsLayout layout;
  for (int k = 0; k < steps.params_per_step; ++k) {
    const std::size_t item = itemsize(ir.params[std::size_t(steps.first_param + k)].dtype);
    layout.size = (layout.size + item - 1) / item * item;
    layout.offsets.push_back(layout.size);
    layout.size += item * std::size_t(steps.count);
    layout.align = std::max(layout.align, item);
  }
  layout.size = (layout.size + layout.align - 1) / layout.align * layout.align;
  return layout;
}

std::vector<AbiParam> kernel_abi(const KernelIR& ir) {
  std::vector<AbiParam> abi;
  for_each_abi_param(ir, [&](const AbiParam& p) { abi.push_back(p); });
  return abi;
}

std::string abi_name(const AbiParam& p) {
  switch (p.role) {
  case AbiRole::Input: return "in" + std::to_string(p.slot);
  case AbiRole::Output: return "out" + std::to_string(p.slot);
  case AbiRole::Count: return "n";
  case AbiRole::Param: return "p" + std::to_string(p.slot);
  case AbiRole::Divisor: return "lf_d" + std::to_string(p.slot);
  case AbiRole::SplitPartials: return "lf_partials";
  case AbiRole::SplitTickets: return "lf_tickets";
  case AbiRole::SplitCount: return "lf_splits";
  case AbiRole::ScanEpoch: return "lf_epoch";
  case AbiRole::ErrorWord: return "lf_error";
  case AbiRole::RepeatedParams: return "lf_steps";
  case AbiRole::ValueDivisor: return "lf_vd" + std::to_string(p.slot);
  }
  LAZYFUSE_ASSERT(false, ("abi_name: unknown parameter role " + std::to_string(int(p.role))).c_str());
  return {};
}

std::string abi_declaration(const KernelIR& ir, const AbiParam& p) {
  const std::string name = abi_name(p);
  switch (p.role) {
  case AbiRole::Input:
    return std::string("const ") + cuda_type(ir.inputs[std::size_t(p.slot)].dtype) + "* __restrict__ " + name;
  case AbiRole::Output: return std::string(cuda_type(ir.outputs[std::size_t(p.slot)])) + "* __restrict__ " + name;
  case AbiRole::Count:
  case AbiRole::SplitCount: return "const idx_t " + name;
  case AbiRole::Param: {
    const ParamSlot& slot = ir.params[std::size_t(p.slot)];
    return std::string("const ") + (slot.is_index ? "idx_t" : cuda_type(slot.dtype)) + " " + name;
  }
  case AbiRole::Divisor: return "const lf_divisor " + name;
  case AbiRole::ScanEpoch: return "const unsigned int " + name;
  case AbiRole::SplitPartials: return "unsigned char* __restrict__ " + name;
  case AbiRole::SplitTickets:
  case AbiRole::ErrorWord: return "unsigned int* __restrict__ " + name;
  case AbiRole::RepeatedParams: return "const __grid_constant__ lf_steps_t " + name;
  case AbiRole::ValueDivisor:
    return std::string(ir.params[std::size_t(p.slot)].dtype == DType::Int64 ? "const lf_vdiv64 " : "const lf_vdiv32 ") +
           name;
  }
  LAZYFUSE_ASSERT(false, ("abi_declaration: unknown parameter role " + std::to_string(int(p.role))).c_str());
  return {};
}

std::size_t abi_size(const KernelIR& ir, const AbiParam& p) {
  const std::size_t index_bytes = ir.index32 ? 4 : 8;
  switch (p.role) {
  case AbiRole::Input:
  case AbiRole::Output:
  case AbiRole::SplitPartials:
  case AbiRole::SplitTickets:
  case AbiRole::ErrorWord: return sizeof(void*);
  case AbiRole::Count:
  case AbiRole::SplitCount: return index_bytes;
  case AbiRole::Param: {
    const ParamSlot& slot = ir.params[std::size_t(p.slot)];
    return slot.is_index ? index_bytes : itemsize(slot.dtype);
  }
  case AbiRole::Divisor: return ir.index32 ? sizeof(FastDivisor32) : sizeof(FastDivisor64);
  case AbiRole::ScanEpoch: return sizeof(std::uint32_t);
  case AbiRole::RepeatedParams: return step_params_layout(ir).size;
  case AbiRole::ValueDivisor:
    return ir.params[std::size_t(p.slot)].dtype == DType::Int64 ? sizeof(FastDivisor64) : sizeof(FastDivisor32);
  }
  LAZYFUSE_ASSERT(false, ("abi_size: unknown parameter role " + std::to_string(int(p.role))).c_str());
  return 0;
}

std::vector<void*> PackedArgs::pointers() {
  std::vector<void*> p;
  p.reserve(offsets_.size());
  for (auto off : offsets_) p.push_back(bytes_.data() + off);
  return p;
}

void PackedArgs::reserve(std::size_t count) {
  // Up to 8 bytes each, so that pushing them does not reallocate (a launch is on the host path of every
  // materialization).
  bytes_.reserve(count * 8);
  offsets_.reserve(count);
  sizes_.reserve(count);
}

PackedArgs pack_kernel_args(const KernelIR& ir, const KernelArgs& args, const std::vector<void*>& outputs,
                            const SplitArgs* split) {
  LAZYFUSE_ASSERT(args.inputs.size() == ir.inputs.size() && outputs.size() == ir.outputs.size() &&
                      args.params.size() == ir.params.size(),
                  ("kernel " + ir.name + ": " + std::to_string(args.inputs.size()) + " inputs, " +
                   std::to_string(outputs.size()) + " outputs and " + std::to_string(args.params.size()) +
                   " parameters for a kernel of " + std::to_string(ir.inputs.size()) + ", " +
                   std::to_string(ir.outputs.size()) + " and " + std::to_string(ir.params.size()))
                      .c_str());
  LAZYFUSE_ASSERT(!has_block_scratch(ir.schedule) || split,
                  ("kernel " + ir.name + ": a split launch without its scratch").c_str());
  PackedArgs packed;
  // A divisor's constants take up to 16 bytes and their alignment: three 8-byte places with its parameter's.
  packed.reserve(ir.inputs.size() + ir.outputs.size() + 1 + 3 * ir.params.size() + 4);
  auto push_index = [&](std::int64_t v) {
    if (ir.index32)
      packed.push(std::int32_t(v));
    else
      packed.push(static_cast<long long>(v));
  };
  for_each_abi_param(ir, [&](const AbiParam& p) {
    switch (p.role) {
    case AbiRole::Input: packed.push(args.inputs[std::size_t(p.slot)]); break;
    case AbiRole::Output: packed.push(outputs[std::size_t(p.slot)]); break;
    case AbiRole::Count: push_index(args.n); break;
    case AbiRole::Param: {
      const ParamSlot& slot = ir.params[std::size_t(p.slot)];
      const ParamValue& pv = args.params[std::size_t(p.slot)];
      if (slot.is_index) {
        push_index(pv.i);
        break;
      }
      // The kernel's parameter has the layout of the type's host type (bool: != 0; integers: the low bits).
      graph::visit_opmath_type(slot.dtype, [&]<class T>() { packed.push(graph::opmath_value<T>(pv.f, pv.i, pv.im)); });
      break;
    }
    case AbiRole::Divisor: {
      const std::int64_t d = args.params[std::size_t(p.slot)].i;
      if (ir.index32)
        packed.push(fast_divisor32(d));
      else
        packed.push(fast_divisor64(d));
      break;
    }
    case AbiRole::RepeatedParams: {
      const RepeatedSteps& steps = ir.repeated_steps;
      const StepParamsLayout layout = step_params_layout(ir);
      std::vector<unsigned char> bytes(layout.size, 0);
      for (int k = 0; k < steps.params_per_step; ++k) {
        const DType t = ir.params[std::size_t(steps.first_param + k)].dtype;
        graph::visit_opmath_type(t, [&]<class T>() {
          for (int r = 0; r < steps.count; ++r) {
            const ParamValue& pv = args.params[std::size_t(steps.first_param + r * steps.params_per_step + k)];
            const T value = graph::opmath_value<T>(pv.f, pv.i, pv.im);
            std::memcpy(bytes.data() + layout.offsets[std::size_t(k)] + std::size_t(r) * sizeof(T), &value, sizeof(T));
          }
        });
      }
      packed.push_bytes(bytes.data(), bytes.size(), layout.align);
      break;
    }
    case AbiRole::ValueDivisor: {
      const std::int64_t d = args.params[std::size_t(p.slot)].i;
      if (ir.params[std::size_t(p.slot)].dtype == DType::Int64)
        packed.push(fast_value_divisor64(d));
      else
        packed.push(fast_value_divisor32(std::int32_t(d))); // the kernel's int32 parameter: the low bits
      break;
    }
    case AbiRole::SplitPartials: packed.push(split->partials); break;
    case AbiRole::SplitTickets: packed.push(split->tickets); break;
    case AbiRole::SplitCount: push_index(split->splits); break;
    case AbiRole::ScanEpoch: packed.push(split->epoch); break;
    case AbiRole::ErrorWord:
      LAZYFUSE_ASSERT(args.error_word != nullptr,
                      ("kernel " + ir.name + ": bounds checks without an error word").c_str());
      packed.push(args.error_word);
      break;
    }
  });
  return packed;
}

} // namespace lazyfuse::codegen
