#include "graph/Ops.h"

#include <lazyfuse/error.hpp>

#include <optional>
#include <string>

namespace lazyfuse {

namespace {
// The type of a kind and width, if the type table has one.
std::optional<DType> find_dtype(DTypeKind kind, int bits) {
  for (int k = 0; k < kNumDTypes; ++k)
    if (dtype_kind(DType(k)) == kind && dtype_bits(DType(k)) == bits) return DType(k);
  return std::nullopt;
}
// Significand bits (with the implicit one) of a float type.
int float_digits(DType t) {
  return dtype_bits(t) == 64 ? 53 : (dtype_bits(t) == 32 ? 24 : 11);
}
// NumPy's float for an integer type: the smallest float whose significand holds every value of the type, or the
// widest float when none does (int64 -> float64).
DType float_holding(DType t) {
  const int value_bits = dtype_bits(t) - (is_signed_integer(t) ? 1 : 0);
  DType best = DType::Float64;
  for (int k = 0; k < kNumDTypes; ++k) {
    const DType f = DType(k);
    if (is_floating(f) && float_digits(f) >= value_bits && dtype_bits(f) < dtype_bits(best)) best = f;
  }
  return best;
}
} // namespace

// NumPy 2's rules, from the kinds and widths of the type table (tests/test_numpy_types.cpp checks every pair
// against NumPy itself).
DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const DTypeKind ka = dtype_kind(a), kb = dtype_kind(b);
  if (ka == DTypeKind::Bool) return b;
  if (kb == DTypeKind::Bool) return a;
  if (ka == kb) return dtype_bits(a) >= dtype_bits(b) ? a : b;
  if (ka == DTypeKind::Float || kb == DTypeKind::Float) {
    const DType f = ka == DTypeKind::Float ? a : b, i = ka == DTypeKind::Float ? b : a;
    const DType g = float_holding(i);
    return dtype_bits(f) >= dtype_bits(g) ? f : g;
  }
  // A signed and an unsigned integer: the signed type wider than the unsigned one, or float64 past int64.
  const DType s = ka == DTypeKind::Signed ? a : b, u = ka == DTypeKind::Signed ? b : a;
  if (dtype_bits(s) > dtype_bits(u)) return s;
  if (auto wider = find_dtype(DTypeKind::Signed, 2 * dtype_bits(u))) return *wider;
  return DType::Float64;
}

DType promote_weak(DType t, ScalarKind s) {
  switch (s) {
  case ScalarKind::Bool: return t;
  case ScalarKind::Int: return t == DType::Bool ? DType::Int64 : t;
  case ScalarKind::Float: return is_floating(t) ? t : DType::Float64;
  }
  return t;
}

} // namespace lazyfuse

namespace lazyfuse::graph {

namespace {
// The values of the table's `empty` column.
constexpr bool Identity = true, NoIdentity = false;
} // namespace

// Each accessor is a switch generated from the table.
// clang-format off
ResultRule rule_of(UnaryOp op) {
  switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) case UnaryOp::Enum: return ResultRule::rule;
#include <lazyfuse/ops.def>
  }
  return ResultRule::Arith;
}
ResultRule rule_of(BinaryOp op) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) case BinaryOp::Enum: return ResultRule::rule;
#include <lazyfuse/ops.def>
  }
  return ResultRule::Arith;
}
ReduceRule rule_of(ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) case ReduceOp::Enum: return ReduceRule::rule;
#include <lazyfuse/ops.def>
  }
  return ReduceRule::Same;
}
std::string_view name_of(UnaryOp op) {
  switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) case UnaryOp::Enum: return #name;
#include <lazyfuse/ops.def>
  }
  return "?";
}
std::string_view name_of(BinaryOp op) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) case BinaryOp::Enum: return #name;
#include <lazyfuse/ops.def>
  }
  return "?";
}
std::string_view name_of(ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) case ReduceOp::Enum: return #name;
#include <lazyfuse/ops.def>
  }
  return "?";
}
int cost_of(UnaryOp op) {
  switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) case UnaryOp::Enum: return cost;
#include <lazyfuse/ops.def>
  }
  return 1;
}
int cost_of(BinaryOp op) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) case BinaryOp::Enum: return cost;
#include <lazyfuse/ops.def>
  }
  return 1;
}
int cost_of(ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) case ReduceOp::Enum: return cost;
#include <lazyfuse/ops.def>
  }
  return 1;
}
ReduceKind kind_of(ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) case ReduceOp::Enum: return ReduceKind::kind;
#include <lazyfuse/ops.def>
  }
  return ReduceKind::Combine;
}
bool has_identity(ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) case ReduceOp::Enum: return empty;
#include <lazyfuse/ops.def>
  }
  return false;
}
// clang-format on

DType reduce_result_type(ReduceOp op, DType t) {
  switch (rule_of(op)) {
  case ReduceRule::Sum:
    // NumPy's accumulator: the platform integer of the same signedness (bool sums as int64).
    if (is_floating(t)) return t;
    return is_unsigned_integer(t) ? DType::UInt64 : DType::Int64;
  case ReduceRule::Same: return t;
  case ReduceRule::Index: return DType::Int64;
  case ReduceRule::Logical: return DType::Bool;
  }
  return t;
}

DType reduce_input_type(ReduceOp op, DType t) {
  switch (rule_of(op)) {
  case ReduceRule::Same:
  case ReduceRule::Index: return t;
  default: return reduce_result_type(op, t);
  }
}

DType float_type_of(DType t) {
  return is_floating(t) ? t : float_holding(t);
}

namespace {
// The types of `rule` for operand type t (the promoted type of a binary op's operands).
std::optional<OpTypes> types_for(ResultRule rule, DType t) {
  switch (rule) {
  case ResultRule::Arith: return OpTypes{t, t};
  case ResultRule::ArithNoBool:
    if (t == DType::Bool) return std::nullopt;
    return OpTypes{t, t};
  case ResultRule::ArithBoolToInt:
    if (t == DType::Bool) return OpTypes{DType::Int8, DType::Int8};
    return OpTypes{t, t};
  case ResultRule::Float: return OpTypes{float_type_of(t), float_type_of(t)};
  case ResultRule::Divide:
    if (is_floating(t)) return OpTypes{t, t};
    return OpTypes{DType::Float64, DType::Float64};
  case ResultRule::Predicate:
  case ResultRule::Compare: return OpTypes{t, DType::Bool};
  case ResultRule::Logical: return OpTypes{DType::Bool, DType::Bool};
  case ResultRule::Bitwise:
    if (is_floating(t)) return std::nullopt;
    return OpTypes{t, t};
  case ResultRule::Shift:
    if (is_floating(t)) return std::nullopt;
    if (t == DType::Bool) return OpTypes{DType::Int8, DType::Int8};
    return OpTypes{t, t};
  }
  return std::nullopt;
}
} // namespace

std::optional<OpTypes> unary_types(UnaryOp op, DType t) {
  return types_for(rule_of(op), t);
}

std::optional<OpTypes> binary_types(BinaryOp op, DType a, DType b) {
  // NumPy picks a float function's loop by casting each operand safely (not by promoting them first): int8 with
  // uint8 computes in float16 (float32 here), not in float32 by way of int16.
  if (rule_of(op) == ResultRule::Float) {
    const DType f = promote_types(float_type_of(a), float_type_of(b));
    return OpTypes{f, f};
  }
  return types_for(rule_of(op), promote_types(a, b));
}

std::string valid_types(ResultRule rule) {
  std::string out;
  for (int k = 0; k < kNumDTypes; ++k)
    if (types_for(rule, DType(k))) out += (out.empty() ? "" : ", ") + std::string(dtype_name(DType(k)));
  return out;
}

} // namespace lazyfuse::graph
