// Type rules of the op table (lazyfuse/ops.def): what each op computes in and returns.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace lazyfuse::graph {

/// The operations of the op table (lazyfuse/ops.def); their meaning is in graph/OpMath.inc.
enum class UnaryOp {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) Enum,
#include <lazyfuse/ops.def>
};
enum class BinaryOp {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) Enum,
#include <lazyfuse/ops.def>
};
enum class ReduceOp {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) Enum,
#include <lazyfuse/ops.def>
};

/// How an op's types are derived from its operand type t (for binary ops, the operands' promoted type).
enum class ResultRule {
  Arith,          // computes and returns t
  Real,           // as Arith; a complex t returns its parts' type (abs, real, imag)
  ArithNoBool,    // as Arith; bool operands are a DTypeError (NumPy: negative/subtract/sign of booleans)
  ArithBoolToInt, // as Arith; bool operands compute in int8, as NumPy's do
  Float,          // floats unchanged; bool and integers compute in the smallest float holding them (float_type_of);
                  // a binary op promotes its operands' float types, as NumPy's loop search does
  FloatReal,      // as Float; a complex t returns its parts' type (angle)
  Divide,         // float and complex unchanged; bool and integers compute in float64 (NumPy's true_divide)
  Predicate,      // computes in t, returns bool
  Compare,        // computes in t, returns bool
  Logical,        // computes and returns bool
  Bitwise,        // integers and bool compute and return t; float and complex are a DTypeError (on bool: logical)
  Shift,          // integers compute and return t; bool computes in int8; float and complex are a DTypeError
};

/// A reduction's result type (see lazyfuse/ops.def).
enum class ReduceRule {
  Sum,     // float and complex keep their type; bool and signed integers -> int64; unsigned -> uint64 (NumPy's)
  Same,    // the input's type
  Index,   // int64 (an index into the reduced elements)
  Logical, // bool
};
/// Number of reductions in the op table.
inline constexpr int kNumReduceOps = 0
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost) +1
#include <lazyfuse/ops.def>
    ;
/// How a reduction combines: values in any tree order (Combine), or (value, index) pairs through lf_<name>_better.
enum class ReduceKind { Combine, Arg };

ResultRule rule_of(UnaryOp op);
ResultRule rule_of(BinaryOp op);
ReduceRule rule_of(ReduceOp op);
std::string_view name_of(UnaryOp op);
std::string_view name_of(BinaryOp op);
std::string_view name_of(ReduceOp op);
/// The op table's cost of one element (fusion recomputes a shared value instead of storing it while cheaper).
int cost_of(UnaryOp op);
int cost_of(BinaryOp op);
int cost_of(ReduceOp op);
ReduceKind kind_of(ReduceOp op);
inline bool is_arg(ReduceOp op) {
  return kind_of(op) == ReduceKind::Arg;
}
/// Whether reducing zero elements gives the identity (else it is an Error, as NumPy's ValueError).
bool has_identity(ReduceOp op);
/// NumPy's result type of a reduction of `t` (sum of int32 -> int64, argmax -> int64, any -> bool), which is also
/// the type it accumulates in; the source is cast to it first (argmin/argmax keep the source type).
DType reduce_result_type(ReduceOp op, DType t);
/// The type a reduction reads its elements in.
DType reduce_input_type(ReduceOp op, DType t);

struct OpTypes {
  DType compute; // operands are cast to this
  DType result;
};
/// Types of a unary op on operand type t, or nullopt when the op is not defined for t (its rule refuses t, or
/// graph/OpMath.inc has no lf_<name> for the compute type).
std::optional<OpTypes> unary_types(UnaryOp op, DType t);
/// Types of a binary op on operands of types a and b (the same type for an array with a weak scalar).
std::optional<OpTypes> binary_types(BinaryOp op, DType a, DType b);
/// The type a float function computes an operand of type t in: t itself for float and complex types; for bool and
/// integers the smallest float whose significand holds all their values (NumPy's: float16 for bool, int8 and uint8,
/// float32 for 16 bits, float64 from 32 bits on).
DType float_type_of(DType t);
/// The complex type with parts of float type t (float16 and bfloat16 -> complex64, as NumPy's float16 * 1j); a
/// complex type itself.
DType complex_of(DType t);
/// The type of a complex type's parts (complex64 -> float32); any other type itself.
DType real_type_of(DType t);
/// The operand types an op accepts, as text for error messages ("int8, int16, ...").
std::string valid_types(UnaryOp op);
std::string valid_types(BinaryOp op);

} // namespace lazyfuse::graph
