// The elementwise functions and operators (elementwise.hpp). The functions of the op table are defined here from
// lazyfuse/ops.def, by qualified name: such a definition compiles only where elementwise.hpp declares the function
// with the same signature, so a row added to the table without its documented declaration fails to build.
#include <lazyfuse/elementwise.hpp>
#include <lazyfuse/error.hpp>

#include "api/ApiAccess.h"
#include "graph/Build.h"

namespace lazyfuse::detail {
namespace {

using graph::BinaryOp;
using graph::NodePtr;
using graph::UnaryOp;

// The op's name (a literal from ops.def) and the operand's label are looked up only when the check fails.
template <class Op> const NodePtr& operand_of(const Array& a, Op op, const char* operand) {
  if (!a.valid()) [[unlikely]]
    require_valid(a, graph::name_of(op).data(), operand);
  return ApiAccess::node(a);
}

// The type two numbers promote to between themselves, as NumPy's np.add(1, 2.5): bool, int64, float64 or
// complex128.
DType type_of_two_scalars(ScalarKind a, ScalarKind b) {
  auto type_of = [](ScalarKind k) {
    switch (k) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int: return DType::Int64;
    case ScalarKind::Float: return DType::Float64;
    case ScalarKind::Complex: return DType::Complex128;
    }
    return DType::Float64;
  };
  return promote_types(type_of(a), type_of(b));
}

Array unary(UnaryOp op, const Array& a) {
  return wrap_node(graph::make_unary(op, operand_of(a, op, "the array")));
}

Array binary(BinaryOp op, const Operand& a, const Operand& b) {
  const Array* x = ApiAccess::array(a);
  const Array* y = ApiAccess::array(b);
  if (x && y) {
    operand_of(*x, op, "operand a"); // in order: the first empty operand is the one reported
    operand_of(*y, op, "operand b");
    if (x == y) return wrap_node(graph::make_binary(op, ApiAccess::node(*x), ApiAccess::node(*x))); // moved twice
    return wrap_node(graph::make_binary(op, ApiAccess::take_node(a), ApiAccess::take_node(b)));
  }
  if (x) {
    operand_of(*x, op, "operand a");
    return wrap_node(graph::make_binary_weak(op, ApiAccess::take_node(a), ApiAccess::scalar(b), false));
  }
  if (y) {
    operand_of(*y, op, "operand b");
    return wrap_node(graph::make_binary_weak(op, ApiAccess::take_node(b), ApiAccess::scalar(a), true));
  }
  const WeakScalar &sa = ApiAccess::scalar(a), &sb = ApiAccess::scalar(b);
  const DType t = type_of_two_scalars(sa.kind, sb.kind);
  const std::string_view name = graph::name_of(op);
  return wrap_node(graph::make_binary(op, graph::make_weak_fill(sa, t, name), graph::make_weak_fill(sb, t, name)));
}

// A weak scalar of `where` as a fill of type t.
NodePtr where_operand(const Operand& o, DType t, const char* label) {
  if (const Array* a = ApiAccess::array(o)) return node_of(*a, "where", label);
  return graph::make_weak_fill(ApiAccess::scalar(o), t, "where");
}

} // namespace
} // namespace lazyfuse::detail

// ---- the op table's functions -------------------------------------------------------------------------------------

#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  lazyfuse::Array lazyfuse::name(const Array& a) {                                                                     \
    return detail::unary(graph::UnaryOp::Enum, a);                                                                     \
  }
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  lazyfuse::Array lazyfuse::name(Operand a, Operand b) {                                                               \
    return detail::binary(graph::BinaryOp::Enum, a, b);                                                                \
  }
#include <lazyfuse/ops.def>

namespace lazyfuse {

Array gelu(const Array& a, GeluApproximate approximate) {
  return approximate == GeluApproximate::Tanh ? gelu_tanh(a) : gelu(a);
}

// ---- other names ------------------------------------------------------------------------------------------------

// The aliases and operators below call detail::binary and detail::unary themselves rather than the function they
// equal: a forwarding call costs a call and a copy of each 40-byte Operand per op, a measurable share of building a
// small expression (bench_workloads' BM_TinyChainBuildOnly).

Array divide(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::TrueDivide, a, b);
}
Array mod(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Remainder, a, b);
}
Array pow(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Power, a, b);
}
Array absolute(const Array& a) {
  return detail::unary(graph::UnaryOp::Abs, a);
}
Array fabs(const Array& a) {
  return detail::unary(graph::UnaryOp::Abs, a);
}
Array bitwise_not(const Array& a) {
  return detail::unary(graph::UnaryOp::Invert, a);
}

// ---- selection and conversion -----------------------------------------------------------------------------------

Array where(const Array& cond, Operand a, Operand b) {
  const graph::NodePtr& nc = detail::node_of(cond, "where", "operand cond"); // the first empty operand is reported
  const Array* x = detail::ApiAccess::array(a);
  const Array* y = detail::ApiAccess::array(b);
  if (x) detail::node_of(*x, "where", "operand a");
  if (y) detail::node_of(*y, "where", "operand b");
  // The numbers take the type the array operand gives them (NumPy 2's weak scalars); two numbers promote between
  // themselves.
  const detail::WeakScalar &sa = detail::ApiAccess::scalar(a), &sb = detail::ApiAccess::scalar(b);
  DType t = DType::Bool; // unused when both are arrays
  if (x && !y)
    t = promote_weak(x->dtype(), sb.kind);
  else if (y && !x)
    t = promote_weak(y->dtype(), sa.kind);
  else if (!x && !y)
    t = detail::type_of_two_scalars(sa.kind, sb.kind);
  return detail::wrap_node(
      graph::make_where(nc, detail::where_operand(a, t, "operand a"), detail::where_operand(b, t, "operand b")));
}

Array clip(const Array& a, Operand lo, Operand hi) {
  const Array* l = detail::ApiAccess::array(lo);
  const Array* h = detail::ApiAccess::array(hi);
  detail::node_of(a, "clip", l || h ? "operand a" : "the array"); // "the array" when it is the only one
  if (l) detail::node_of(*l, "clip", "operand lo");
  if (h) detail::node_of(*h, "clip", "operand hi");
  return minimum(maximum(a, lo), hi);
}

Array astype(const Array& a, DType type) {
  return a.astype(type);
}

// ---- operators --------------------------------------------------------------------------------------------------

Array operator+(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Add, a, b);
}
Array operator-(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Subtract, a, b);
}
Array operator*(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Multiply, a, b);
}
Array operator/(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::TrueDivide, a, b);
}
Array operator%(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Remainder, a, b);
}
Array operator==(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Equal, a, b);
}
Array operator!=(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::NotEqual, a, b);
}
Array operator<(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Less, a, b);
}
Array operator<=(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::LessEqual, a, b);
}
Array operator>(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::Greater, a, b);
}
Array operator>=(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::GreaterEqual, a, b);
}
Array operator&&(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::LogicalAnd, a, b);
}
Array operator||(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::LogicalOr, a, b);
}
Array operator&(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::BitwiseAnd, a, b);
}
Array operator|(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::BitwiseOr, a, b);
}
Array operator^(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::BitwiseXor, a, b);
}
Array operator<<(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::LeftShift, a, b);
}
Array operator>>(Operand a, Operand b) {
  return detail::binary(graph::BinaryOp::RightShift, a, b);
}
Array operator-(const Array& a) {
  return detail::unary(graph::UnaryOp::Negative, a);
}
Array operator+(const Array& a) {
  detail::require_valid(a, "unary +");
  return a;
}
Array operator!(const Array& a) {
  return detail::unary(graph::UnaryOp::LogicalNot, a);
}
Array operator~(const Array& a) {
  return detail::unary(graph::UnaryOp::Invert, a);
}

} // namespace lazyfuse
