// Elementwise functions and the operators, with NumPy's names, types and broadcasting.
//
// Every function whose name is a row of the op table (lazyfuse/ops.def) is declared here once, by hand, with its
// documentation; api/Elementwise.cpp defines them all from the table, and that definition does not compile for a
// row whose function is not declared here with exactly this signature (docs/design.md, "Adding an op").
// docs/semantics.md gives each op's result type (its rule in ops.def) and the integer and float corner cases.
//
// A binary function takes two Operands: Arrays, or C++ numbers as NumPy 2's weak scalars (`x * 2.0` keeps a
// float32 array float32). Its operands broadcast to a common shape; an op the operands' types do not allow throws
// DTypeError when the expression is built, where NumPy raises TypeError.
#pragma once

#include <lazyfuse/array.hpp>

namespace lazyfuse {

// ---- arithmetic -----------------------------------------------------------------------------------------------
/// a + b (on bools: or).
Array add(Operand a, Operand b);
/// a - b (a DTypeError on bools, as in NumPy).
Array subtract(Operand a, Operand b);
/// a * b (on bools: and).
Array multiply(Operand a, Operand b);
/// a / b, always true division: integers and bools divide in float64.
Array true_divide(Operand a, Operand b);
/// true_divide(a, b).
Array divide(Operand a, Operand b);
/// floor(a / b); integer division by zero gives 0.
Array floor_divide(Operand a, Operand b);
/// a - floor_divide(a, b) * b: Python's remainder, with the sign of b; integer remainder by zero gives 0.
Array remainder(Operand a, Operand b);
/// remainder(a, b).
Array mod(Operand a, Operand b);
/// a to the power b; an integer base with a negative integer exponent gives 0, or +-1 for a base of +-1.
Array power(Operand a, Operand b);
/// power(a, b).
Array pow(Operand a, Operand b);
/// The smaller of a and b; NaN when either is NaN.
Array minimum(Operand a, Operand b);
/// The larger of a and b; NaN when either is NaN.
Array maximum(Operand a, Operand b);
/// -a (a DTypeError on bools; wraps on unsigned types).
Array negative(const Array& a);
/// |a| (the identity on unsigned types); of a complex number its magnitude, of its parts' type (complex64 ->
/// float32), without overflow.
Array abs(const Array& a);
/// abs(a).
Array absolute(const Array& a);
/// abs(a).
Array fabs(const Array& a);
/// -1, 0 or 1 by the sign of a; NaN for NaN (a DTypeError on bools).
Array sign(const Array& a);
/// a * a.
Array square(const Array& a);
/// 1 / a, in a float type for bool and integer arrays (NumPy divides integers).
Array reciprocal(const Array& a);

// ---- comparisons: bool arrays ---------------------------------------------------------------------------------
/// a == b.
Array equal(Operand a, Operand b);
/// a != b.
Array not_equal(Operand a, Operand b);
/// a < b.
Array less(Operand a, Operand b);
/// a <= b.
Array less_equal(Operand a, Operand b);
/// a > b.
Array greater(Operand a, Operand b);
/// a >= b.
Array greater_equal(Operand a, Operand b);
/// True where a is NaN.
Array isnan(const Array& a);
/// True where a is +inf or -inf.
Array isinf(const Array& a);
/// True where a is neither NaN nor infinite.
Array isfinite(const Array& a);

// ---- logical: operands taken as bools (nonzero is true), bool results -----------------------------------------
/// a && b.
Array logical_and(Operand a, Operand b);
/// a || b.
Array logical_or(Operand a, Operand b);
/// a != b as bools.
Array logical_xor(Operand a, Operand b);
/// !a.
Array logical_not(const Array& a);

// ---- bitwise: integers and bools (where they are logical); a DTypeError on floats ----------------------------
/// a & b.
Array bitwise_and(Operand a, Operand b);
/// a | b.
Array bitwise_or(Operand a, Operand b);
/// a ^ b.
Array bitwise_xor(Operand a, Operand b);
/// ~a (on bools: not).
Array invert(const Array& a);
/// invert(a).
Array bitwise_not(const Array& a);
/// a << b; 0 for a count below 0 or of the type's width or more (bools shift as int8).
Array left_shift(Operand a, Operand b);
/// a >> b, arithmetic on signed types; the sign (0 or -1) for a count below 0 or of the width or more.
Array right_shift(Operand a, Operand b);

// ---- exponents, logarithms and roots: bools and integers compute in a float type (docs/semantics.md) ----------
/// Square root; NaN below 0.
Array sqrt(const Array& a);
/// 1 / sqrt(a) (not a NumPy function).
Array rsqrt(const Array& a);
/// e to the power a.
Array exp(const Array& a);
/// 2 to the power a.
Array exp2(const Array& a);
/// exp(a) - 1, accurate near 0.
Array expm1(const Array& a);
/// Natural logarithm; -inf at 0, NaN below 0.
Array log(const Array& a);
/// Base-2 logarithm.
Array log2(const Array& a);
/// Base-10 logarithm.
Array log10(const Array& a);
/// log(1 + a), accurate near 0.
Array log1p(const Array& a);
/// log(exp(a) + exp(b)) without overflow.
Array logaddexp(Operand a, Operand b);
/// sqrt(a * a + b * b) without overflow.
Array hypot(Operand a, Operand b);

// ---- trigonometric, hyperbolic and special functions (radians) ------------------------------------------------
/// Sine.
Array sin(const Array& a);
/// Cosine.
Array cos(const Array& a);
/// Tangent.
Array tan(const Array& a);
/// Inverse sine (NumPy's arcsin), in [-pi/2, pi/2].
Array asin(const Array& a);
/// Inverse cosine (NumPy's arccos), in [0, pi].
Array acos(const Array& a);
/// Inverse tangent (NumPy's arctan), in [-pi/2, pi/2].
Array atan(const Array& a);
/// The angle of the point (b, a) (NumPy's arctan2(a, b)), in [-pi, pi].
Array atan2(Operand a, Operand b);
/// Hyperbolic sine.
Array sinh(const Array& a);
/// Hyperbolic cosine.
Array cosh(const Array& a);
/// Hyperbolic tangent.
Array tanh(const Array& a);
/// Inverse hyperbolic sine (NumPy's arcsinh).
Array asinh(const Array& a);
/// Inverse hyperbolic cosine (NumPy's arccosh), NaN below 1 for real numbers.
Array acosh(const Array& a);
/// Inverse hyperbolic tangent (NumPy's arctanh), NaN outside [-1, 1] for real numbers.
Array atanh(const Array& a);
/// The error function (SciPy's special.erf).
Array erf(const Array& a);
/// GELU, x * Phi(x) = x/2 * erfc(-x/sqrt(2)) with the normal distribution's CDF Phi (PyTorch's gelu,
/// approximate='none'); -inf gives -0. Float types as erf (docs/semantics.md, accuracy table).
Array gelu(const Array& a);
/// GELU's tanh approximation x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (PyTorch's approximate='tanh', the
/// GELU of cuBLASLt's epilogues), evaluated as x * sigmoid(2u) without cancellation; -inf gives -0.
Array gelu_tanh(const Array& a);
/// Which GELU gelu(a, approximate) computes: the exact one (erf) or the tanh approximation.
enum class GeluApproximate { None, Tanh };
/// gelu(a) for GeluApproximate::None, gelu_tanh(a) for GeluApproximate::Tanh (PyTorch's gelu(x, approximate=...)).
Array gelu(const Array& a, GeluApproximate approximate);

// ---- complex numbers (docs/semantics.md, "Complex numbers") -----------------------------------------------------
/// The complex conjugate; a real array itself.
Array conj(const Array& a);
/// The real part, of the parts' type (complex64 -> float32); a real array itself. Computed where it is used: no
/// copy is made unless it is evaluated on its own.
Array real(const Array& a);
/// The imaginary part, of the parts' type; zeros of a real array's type.
Array imag(const Array& a);
/// The angle of a complex number in radians, atan2(imag, real), of the parts' type; of a real number 0 or pi
/// (NumPy's angle: bool and integers give float types as float functions do).
Array angle(const Array& a);

// ---- rounding -------------------------------------------------------------------------------------------------
/// Rounds toward -inf (keeps integers and bools as they are).
Array floor(const Array& a);
/// Rounds toward +inf (keeps integers and bools as they are).
Array ceil(const Array& a);
/// Rounds to the nearest integer, ties to even; a float result for every input, as in NumPy.
Array rint(const Array& a);
/// Rounds toward 0 (keeps integers and bools as they are).
Array trunc(const Array& a);

// ---- selection and conversion ---------------------------------------------------------------------------------
/// `cond ? a : b` elementwise, broadcasting all three; cond is taken as bool, a and b promote.
Array where(const Array& cond, Operand a, Operand b);
/// minimum(maximum(a, lo), hi), NaN-propagating.
Array clip(const Array& a, Operand lo, Operand hi);
/// a.astype(type).
Array astype(const Array& a, DType type);

// ---- operators ------------------------------------------------------------------------------------------------
// `+ - * / %` are add, subtract, multiply, true_divide and remainder (so `/` always divides truly and `%` has
// Python's sign). Comparisons give bool arrays, not a C++ bool. `& | ^ ~ << >>` are NumPy's bitwise_and,
// bitwise_or, bitwise_xor, invert, left_shift and right_shift. `&& || !` are logical on every type and do not
// short-circuit.

/// add(a, b).
Array operator+(Operand a, Operand b);
/// subtract(a, b).
Array operator-(Operand a, Operand b);
/// multiply(a, b).
Array operator*(Operand a, Operand b);
/// true_divide(a, b).
Array operator/(Operand a, Operand b);
/// remainder(a, b).
Array operator%(Operand a, Operand b);
/// equal(a, b).
Array operator==(Operand a, Operand b);
/// not_equal(a, b).
Array operator!=(Operand a, Operand b);
/// less(a, b).
Array operator<(Operand a, Operand b);
/// less_equal(a, b).
Array operator<=(Operand a, Operand b);
/// greater(a, b).
Array operator>(Operand a, Operand b);
/// greater_equal(a, b).
Array operator>=(Operand a, Operand b);
/// logical_and(a, b).
Array operator&&(Operand a, Operand b);
/// logical_or(a, b).
Array operator||(Operand a, Operand b);
/// bitwise_and(a, b).
Array operator&(Operand a, Operand b);
/// bitwise_or(a, b).
Array operator|(Operand a, Operand b);
/// bitwise_xor(a, b).
Array operator^(Operand a, Operand b);
/// left_shift(a, b). `std::cout << x` still prints x (array.hpp).
Array operator<<(Operand a, Operand b);
/// right_shift(a, b).
Array operator>>(Operand a, Operand b);
/// negative(a).
Array operator-(const Array& a);
/// a itself.
Array operator+(const Array& a);
/// logical_not(a).
Array operator!(const Array& a);
/// invert(a).
Array operator~(const Array& a);

} // namespace lazyfuse
