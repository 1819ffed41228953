#include "graph/Ops.h"

#include "graph/Assert.h"
#include "graph/HostOps.h"

#include <lazyfuse/error.hpp>

#include <array>
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
  if (t == DType::BFloat16) return 8;
  return dtype_bits(t) == 64 ? 53 : (dtype_bits(t) == 32 ? 24 : 11);
}
// NumPy's float for an integer type: the smallest float whose significand holds every value of the type, or the
// widest float when none does (int64 -> float64). Of two floats of one width the first in the table wins, so
// float16 (NumPy's) is chosen over bfloat16: int8 -> float16.
DType float_holding(DType t) {
  const int value_bits = dtype_bits(t) - (is_signed_integer(t) ? 1 : 0);
  DType best = DType::Float64;
  for (int k = 0; k < kNumDTypes; ++k) {
    const DType f = DType(k);
    if (is_floating(f) && float_digits(f) >= value_bits && dtype_bits(f) < dtype_bits(best)) best = f;
  }
  return best;
}
// Two float types: the wider, or float32 for float16 with bfloat16 (neither holds the other).
DType promote_floats(DType a, DType b) {
  if (a == b) return a;
  if (dtype_bits(a) == dtype_bits(b)) return DType::Float32;
  return dtype_bits(a) > dtype_bits(b) ? a : b;
}
} // namespace

// NumPy 2's rules, from the kinds and widths of the type table (tests/test_numpy_types.cpp checks every pair
// against NumPy itself).
DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const DTypeKind ka = dtype_kind(a), kb = dtype_kind(b);
  if (ka == DTypeKind::Bool) return b;
  if (kb == DTypeKind::Bool) return a;
  if (ka == DTypeKind::Complex || kb == DTypeKind::Complex)
    return graph::complex_of(
        promote_floats(graph::real_type_of(graph::float_type_of(a)), graph::real_type_of(graph::float_type_of(b))));
  if (ka == DTypeKind::Float && kb == DTypeKind::Float) return promote_floats(a, b);
  if (ka == kb) return dtype_bits(a) >= dtype_bits(b) ? a : b;
  if (ka == DTypeKind::Float || kb == DTypeKind::Float) {
    // A float with an integer: the float, unless the integer needs a wider one (float16 + int16 -> float32).
    // bfloat16 holds int8 and uint8 as float16 does, so it stays (ml_dtypes' rule).
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
  case ScalarKind::Float: return is_inexact(t) ? t : DType::Float64;
  case ScalarKind::Complex:
    // NumPy: a complex scalar keeps an inexact array's precision (float32 * 1j -> complex64), else complex128.
    return is_inexact(t) ? graph::complex_of(t) : DType::Complex128;
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
    if (is_inexact(t)) return t;
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
  return is_inexact(t) ? t : float_holding(t);
}

DType complex_of(DType t) {
  LAZYFUSE_ASSERT(is_inexact(t), "complex_of: not a float or complex type");
  if (is_complex(t)) return t;
  return t == DType::Float64 ? DType::Complex128 : DType::Complex64;
}

DType real_type_of(DType t) {
  if (!is_complex(t)) return t;
  return t == DType::Complex64 ? DType::Float32 : DType::Float64;
}

namespace {
// The types of `rule` for operand type t (the promoted type of a binary op's operands).
std::optional<OpTypes> types_for(ResultRule rule, DType t) {
  switch (rule) {
  case ResultRule::Arith: return OpTypes{t, t};
  case ResultRule::Real: return OpTypes{t, real_type_of(t)};
  case ResultRule::FloatReal: {
    // NumPy's angle of a real x is arctan2(0, x): the Python 0 makes a bool array int64, so float64.
    const DType f = t == DType::Bool ? DType::Float64 : float_type_of(t);
    return OpTypes{f, real_type_of(f)};
  }
  case ResultRule::ArithNoBool:
    if (t == DType::Bool) return std::nullopt;
    return OpTypes{t, t};
  case ResultRule::ArithBoolToInt:
    if (t == DType::Bool) return OpTypes{DType::Int8, DType::Int8};
    return OpTypes{t, t};
  case ResultRule::Float: return OpTypes{float_type_of(t), float_type_of(t)};
  case ResultRule::Divide:
    if (is_inexact(t)) return OpTypes{t, t};
    return OpTypes{DType::Float64, DType::Float64};
  case ResultRule::Predicate:
  case ResultRule::Compare: return OpTypes{t, DType::Bool};
  case ResultRule::Logical: return OpTypes{DType::Bool, DType::Bool};
  case ResultRule::Bitwise:
    if (is_inexact(t)) return std::nullopt;
    return OpTypes{t, t};
  case ResultRule::Shift:
    if (is_inexact(t)) return std::nullopt;
    if (t == DType::Bool) return OpTypes{DType::Int8, DType::Int8};
    return OpTypes{t, t};
  }
  return std::nullopt;
}

// Whether graph/OpMath.inc defines lf_<name> for compute type t: the op semantics decide which types an op has.
bool defined_for(UnaryOp op, DType t) {
  return visit_opmath_type(t, [&]<class T>() {
    switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  case UnaryOp::Enum: return requires(T x) { lazyfuse_opmath::lf_##name(x);                                            \
    };
#include <lazyfuse/ops.def>
    }
    return false;
  });
}
bool defined_for(BinaryOp op, DType t) {
  return visit_opmath_type(t, [&]<class T>() {
    switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  case BinaryOp::Enum: return requires(T x) { lazyfuse_opmath::lf_##name(x, x);                                        \
    };
#include <lazyfuse/ops.def>
    }
    return false;
  });
}
} // namespace

std::optional<OpTypes> unary_types(UnaryOp op, DType t) {
  auto types = types_for(rule_of(op), t);
  if (types && !defined_for(op, types->compute)) return std::nullopt;
  return types;
}

namespace {
constexpr std::size_t kNumBinaryOps = 0
#define LAZYFUSE_BINARY(Enum, name, rule, cost) +1
#include <lazyfuse/ops.def>
    ;

std::optional<OpTypes> derive_binary_types(BinaryOp op, DType a, DType b) {
  // NumPy picks a float function's loop by casting each operand safely (not by promoting them first): int8 with
  // uint8 computes in float16, not in float32 by way of int16.
  std::optional<OpTypes> types;
  if (rule_of(op) == ResultRule::Float) {
    // Where the promoted type is inexact, the loop is its own (bfloat16 with int8 stays bfloat16, as ml_dtypes',
    // though int8 alone computes in float16).
    const DType p = promote_types(a, b);
    const DType f = is_inexact(p) ? p : promote_types(float_type_of(a), float_type_of(b));
    types = OpTypes{f, f};
  } else {
    types = types_for(rule_of(op), promote_types(a, b));
  }
  if (types && !defined_for(op, types->compute)) return std::nullopt;
  return types;
}
} // namespace

std::optional<OpTypes> binary_types(BinaryOp op, DType a, DType b) {
  // Recording asks at every node, nearly always for operands of one type (a scalar takes the array's): those
  // answers are derived once.
  using Row = std::array<std::optional<OpTypes>, kNumDTypes>;
  static const std::array<Row, kNumBinaryOps> same_type = [] {
    std::array<Row, kNumBinaryOps> table;
    for (std::size_t o = 0; o < kNumBinaryOps; ++o)
      for (int k = 0; k < kNumDTypes; ++k)
        table[o][std::size_t(k)] = derive_binary_types(BinaryOp(o), DType(k), DType(k));
    return table;
  }();
  if (a == b) return same_type[std::size_t(op)][std::size_t(a)];
  return derive_binary_types(op, a, b);
}

std::string valid_types(UnaryOp op) {
  std::string out;
  for (int k = 0; k < kNumDTypes; ++k)
    if (unary_types(op, DType(k))) out += (out.empty() ? "" : ", ") + std::string(dtype_name(DType(k)));
  return out;
}

std::string valid_types(BinaryOp op) {
  std::string out;
  for (int k = 0; k < kNumDTypes; ++k)
    if (binary_types(op, DType(k), DType(k))) out += (out.empty() ? "" : ", ") + std::string(dtype_name(DType(k)));
  return out;
}

} // namespace lazyfuse::graph
