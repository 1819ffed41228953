// Type rules of the op table (lazyfuse/ops.def): what each op computes in and returns.
#pragma once

#include <lazyfuse/array.hpp>
#include <lazyfuse/dtype.hpp>

#include <optional>
#include <string_view>

namespace lazyfuse::graph {

using detail::BinaryOp;
using detail::ReduceOp;
using detail::UnaryOp;

/// How an op's types are derived from its (promoted) operand type t.
enum class ResultRule {
  Arith,          // computes and returns t
  ArithNoBool,    // as Arith; bool operands are a DTypeError (NumPy: negative/subtract of booleans)
  ArithBoolToInt, // as Arith; bool operands compute in int32 (NumPy uses int8, which lazyfuse lacks)
  Float,          // integers compute in float64, bool in float32 (unary) or float64 (binary)
  Rounding,       // floats as Float; integers unchanged
  Predicate,      // computes in t, returns bool
  Compare,        // computes in t, returns bool
  Logical,        // computes and returns bool
};

ResultRule rule_of(UnaryOp op);
ResultRule rule_of(BinaryOp op);
std::string_view name_of(UnaryOp op);
std::string_view name_of(BinaryOp op);
std::string_view name_of(ReduceOp op);
/// NumPy's result type of a reduction of `t` (sum of int32 -> int64, argmax -> int64, any -> bool), which is also
/// the type it accumulates in; the source is cast to it first (argmin/argmax keep the source type).
DType reduce_result_type(ReduceOp op, DType t);
/// The type a reduction reads its elements in.
DType reduce_input_type(ReduceOp op, DType t);

struct OpTypes {
  DType compute; // operands are cast to this
  DType result;
};
/// Types of a unary op on operand type t, or nullopt when the op is not defined for t.
std::optional<OpTypes> unary_types(UnaryOp op, DType t);
/// Types of a binary op on promoted operand type t.
std::optional<OpTypes> binary_types(BinaryOp op, DType t);

} // namespace lazyfuse::graph
