#include "graph/Ops.h"

#include <lazyfuse/error.hpp>

#include <string>

namespace lazyfuse {

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_integer(a) && is_integer(b)) return DType::Int64;
  if (is_floating(a) && is_floating(b)) return DType::Float64;
  // An integer with a float: NumPy picks a float that holds both, which for int32/int64 is float64.
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

ResultRule rule_of(UnaryOp op) {
  switch (op) {
// clang-format off
#define LAZYFUSE_UNARY(Enum, name, rule) case UnaryOp::Enum: return ResultRule::rule;
#include <lazyfuse/ops.def>
    // clang-format on
  }
  return ResultRule::Arith;
}

ResultRule rule_of(BinaryOp op) {
  switch (op) {
// clang-format off
#define LAZYFUSE_BINARY(Enum, name, rule) case BinaryOp::Enum: return ResultRule::rule;
#include <lazyfuse/ops.def>
    // clang-format on
  }
  return ResultRule::Arith;
}

std::string_view name_of(UnaryOp op) {
  switch (op) {
// clang-format off
#define LAZYFUSE_UNARY(Enum, name, rule) case UnaryOp::Enum: return #name;
#include <lazyfuse/ops.def>
    // clang-format on
  }
  return "?";
}

std::string_view name_of(BinaryOp op) {
  switch (op) {
// clang-format off
#define LAZYFUSE_BINARY(Enum, name, rule) case BinaryOp::Enum: return #name;
#include <lazyfuse/ops.def>
    // clang-format on
  }
  return "?";
}

std::string_view name_of(ReduceOp op) {
  switch (op) {
// clang-format off
#define LAZYFUSE_REDUCE(Enum, name) case ReduceOp::Enum: return #name;
#include <lazyfuse/ops.def>
    // clang-format on
  }
  return "?";
}

DType reduce_result_type(ReduceOp op, DType t) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Prod: return is_floating(t) ? t : DType::Int64;
  case ReduceOp::Min:
  case ReduceOp::Max: return t;
  case ReduceOp::ArgMin:
  case ReduceOp::ArgMax: return DType::Int64;
  case ReduceOp::Any:
  case ReduceOp::All: return DType::Bool;
  }
  return t;
}

DType reduce_input_type(ReduceOp op, DType t) {
  switch (op) {
  case ReduceOp::ArgMin:
  case ReduceOp::ArgMax:
  case ReduceOp::Min:
  case ReduceOp::Max: return t;
  default: return reduce_result_type(op, t);
  }
}

namespace {
std::optional<OpTypes> types_for(ResultRule rule, DType t, DType bool_float) {
  switch (rule) {
  case ResultRule::Arith: return OpTypes{t, t};
  case ResultRule::ArithNoBool:
    if (t == DType::Bool) return std::nullopt;
    return OpTypes{t, t};
  case ResultRule::ArithBoolToInt:
    if (t == DType::Bool) return OpTypes{DType::Int32, DType::Int32};
    return OpTypes{t, t};
  case ResultRule::Float:
    if (is_floating(t)) return OpTypes{t, t};
    if (t == DType::Bool) return OpTypes{bool_float, bool_float};
    return OpTypes{DType::Float64, DType::Float64};
  case ResultRule::Rounding:
    if (t == DType::Bool) return OpTypes{bool_float, bool_float};
    return OpTypes{t, t};
  case ResultRule::Predicate:
  case ResultRule::Compare: return OpTypes{t, DType::Bool};
  case ResultRule::Logical: return OpTypes{DType::Bool, DType::Bool};
  }
  return std::nullopt;
}
} // namespace

std::optional<OpTypes> unary_types(UnaryOp op, DType t) {
  return types_for(rule_of(op), t, DType::Float32);
}
std::optional<OpTypes> binary_types(BinaryOp op, DType t) {
  return types_for(rule_of(op), t, DType::Float64);
}

} // namespace lazyfuse::graph
