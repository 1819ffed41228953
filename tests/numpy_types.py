#!/usr/bin/env python3
"""NumPy's answers for tests/test_numpy_types.cpp: type promotion, weak scalars, and the values of every op, cast
and reduction on every dtype lazyfuse has, computed by NumPy itself (never a hand-written table); bfloat16, which
NumPy lacks, by ml_dtypes (which registers it with NumPy: its casts, promotion and ufunc loops).

Run by the test through the interpreter that LAZYFUSE_TEST_PYTHON names (it needs NumPy 2 and ml_dtypes). Prints
one case per line, fields separated by " | ", values by spaces (bools 0/1, integers in decimal, floats as
float.hex(), complex numbers as <real hex>,<imaginary hex>):

  P a b r                        np.promote_types(a, b)
  W t s r                        np.result_type(array of t, Python scalar s); s is b:<0|1>, i:<int>, f:<hex> or
                                 c:<hex>,<hex>
  U op t r | x... | y...         y = op(x) for x of dtype t; r is NumPy's result dtype. 
  UE op t                        op(x of dtype t) raises TypeError
  B op a b r | x... | y... | z...   z = op(x, y)
  BE op a b                      op(x of dtype a, y of dtype b) raises TypeError
  S op t s side r | x... | z...  z = op(x, s) (side R) or op(s, x) (side L)
  SE op t s side error           that raises error (TypeError or OverflowError)
  C a b | x... | y...            y = x.astype(b)
  R op t axis r | shape | x... | y...   y = op(x.reshape(shape), axis) (axis "all": every axis)
  T t | x... | text              np.array2string(x, separator=", ") for a bool, integer, half or complex dtype t
  OU operator op, OB operator op  Python's unary or binary operator (operator-, operator<<, ...) on NumPy arrays
                                 is the ufunc op:
                                 the same values and dtype, or the same exception, for every dtype and dtype pair
                                 and every scalar on either side (the test then checks that the C++ operator builds
                                 the same graph as lazyfuse's op)

The only substitutions are lazyfuse's documented differences from NumPy (docs/semantics.md):
  - reductions of float16 and bfloat16 accumulate in float32 and round once: the values are NumPy's reduction of
    the operand as float32, rounded to NumPy's result type (NumPy's float16 reductions along a strided axis, and
    ml_dtypes' bfloat16 ones, round every partial sum).
  - reciprocal of bool and integers computes in a float type (NumPy: integer division 1 / x).
  - integer power with a negative exponent is not compared (NumPy raises ValueError; lazyfuse gives 0 or +-1).
  - float -> integer casts are compared only where the value fits the target (lazyfuse saturates and maps NaN to 0,
    NumPy's result is platform-dependent there).
  - complex expm1, log1p and exp2 (docs/semantics.md, "Complex numbers"): lazyfuse's expm1 and log1p have the
    special values of exp(z) - 1 and log(1 + z), and its exp2 computes the angle y ln 2 more accurately than NumPy:
    their values are NumPy's exp(z) - 1, log(1 + z) and exp(z ln 2) in extended precision (np.clongdouble).
  - complex power is compared where |b log a| <= 8: its error grows with |b log a| (docs/semantics.md), NumPy's
    as lazyfuse's.
  - printing: bfloat16 arrays print as float16 ones do (ml_dtypes prints them as C++ streams do), so only float16
    and complex values are compared, one value at a time (NumPy pads an array's values to a common width).
  - lazyfuse's erf and rsqrt are not NumPy functions: math.erf and 1 / sqrt in NumPy's sqrt type, of real types
    only (lazyfuse refuses them for complex numbers).
"""
import math
from fractions import Fraction
import operator
import sys
import warnings

import ml_dtypes
import numpy as np

TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128"]
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)


def dtype(t):
    """NumPy's dtype of a lazyfuse type name (bfloat16 is ml_dtypes', which NumPy has no name for)."""
    return BFLOAT16 if t == "bfloat16" else np.dtype(t)


def kind(d):
    """d.kind, with bfloat16 (an ml_dtypes type, kind "V") a float."""
    return "f" if d == BFLOAT16 else d.kind


def finfo(d):
    return ml_dtypes.finfo(d) if d == BFLOAT16 else np.finfo(d)


REAL_SPECIALS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 3.0, -7.25, 100.0, 1e5, math.inf, -math.inf, math.nan]
# Both parts' specials and signs, a pure imaginary, a large part and NaN in either part.
COMPLEX_SPECIALS = [0j, complex(-0.0, 0.0), 1 + 0j, -1 + 0j, 1j, -0.5j, 1 + 2j, -1.5 - 0.5j, 3 - 7.25j, 100 + 1e5j,
                    complex(math.inf, 0), complex(-math.inf, math.inf), complex(1, math.inf),
                    complex(math.nan, 0), complex(0, math.nan)]


def values(t):
    """Edge values of dtype t: extremes, signs, shift counts around the width, specials of floats."""
    d = dtype(t)
    if kind(d) == "c":
        return COMPLEX_SPECIALS
    if d.itemsize == 2 and kind(d) == "f":
        # The half types' own extremes (largest, smallest normal and subnormal) and values that must round.
        i = finfo(d)
        return REAL_SPECIALS + [float(i.max), -float(i.max), float(i.smallest_normal), float(i.smallest_subnormal),
                                0.1, 1 / 3]
    if d.kind == "b":
        return [False, True]
    if d.kind in "iu":
        info = np.iinfo(d)
        bits = info.bits
        v = [0, 1, 2, 3, 7, 100, bits - 1, bits, bits + 1, info.max - 1, info.max, info.max // 2, info.max // 2 + 1]
        if d.kind == "i":
            v += [-1, -2, -7, -100, info.min, info.min + 1, -bits]
        out = []
        for x in v:
            if info.min <= x <= info.max and x not in out:
                out.append(x)
        return out
    return REAL_SPECIALS


def fmt(x, dt):
    k = kind(np.dtype(dt))
    if k == "b":
        return "1" if bool(x) else "0"
    if k in "iu":
        return str(int(x))
    if k == "c":
        return float(x.real).hex() + "," + float(x.imag).hex()
    return float(x).hex()


def fmt_all(a):
    return " ".join(fmt(x, a.dtype) for x in a.ravel())


def scalar_text(s):
    if isinstance(s, bool):
        return "b:" + ("1" if s else "0")
    if isinstance(s, int):
        return "i:" + str(s)
    if isinstance(s, complex):
        return "c:" + s.real.hex() + "," + s.imag.hex()
    return "f:" + float(s).hex()


def real_only(x):
    if x.dtype.kind == "c":
        raise TypeError("lazyfuse's erf and rsqrt take real numbers")


def erf(x):
    real_only(x)
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(np.sqrt(x).dtype)


def gelu(x):
    """x/2 erfc(-x/sqrt(2)), -0 at -inf (the limit), in NumPy's sqrt type. erfc's argument is carried with its
    rounding error (fed back through erfc's derivative), which erfc would otherwise amplify x^2 times."""
    real_only(x)

    def one(v):
        if math.isnan(v) or math.isinf(v):
            return v if v > 0 or math.isnan(v) else -0.0
        y = -v * 0.7071067811865476
        d = float(-Fraction(v) * (Fraction(0.7071067811865476) + Fraction(-4.833646656726457e-17)) - Fraction(y))
        return 0.5 * v * (math.erfc(y) - d * 2 / math.sqrt(math.pi) * math.exp(-y * y))
    return np.vectorize(one, otypes=[np.float64])(x.astype(np.float64)).astype(np.sqrt(x).dtype)


def gelu_tanh(x):
    """x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3) in exact rationals (exp amplifies u's error 2|u| times),
    in NumPy's sqrt type; the limits x and -0 beyond |x| = 1e100."""
    real_only(x)

    def one(v):
        if math.isnan(v) or abs(v) > 1e100:
            return v if not v < 0 else -0.0
        c = Fraction(0.7978845608028654) + Fraction(-4.98465440455546e-17)
        u = c * (Fraction(v) + Fraction("0.044715") * Fraction(v) ** 3)
        hi = float(u)
        lo = float(u - Fraction(hi))
        if hi < 0:
            e = math.exp(2 * hi) * (1 + 2 * lo) if 2 * hi > -745 else 0.0
            return v * e / (1 + e)
        return v / (1 + math.exp(-2 * hi) * (1 - 2 * lo))
    return np.vectorize(one, otypes=[np.float64])(x.astype(np.float64)).astype(np.sqrt(x).dtype)


def rsqrt(x):
    real_only(x)
    return np.reciprocal(np.sqrt(x))


def complex_in_long_double(f):
    """f on complex operands in extended precision, rounded back to the operand's type; f(x) for real ones."""
    def g(x):
        if x.dtype.kind != "c":
            return getattr(np, f.__name__)(x)
        return f(x.astype(np.clongdouble)).astype(x.dtype)
    return g


def expm1(z):
    return np.exp(z) - 1


def log1p(z):
    return np.log(1 + z)


def exp2(z):
    w = np.empty_like(z)  # z ln 2 part by part (a complex product would make inf * 0 a NaN part)
    w.real, w.imag = z.real * np.log(np.longdouble(2)), z.imag * np.log(np.longdouble(2))
    return np.exp(w)


def power_compared(x, y):
    """Where complex power is compared: |b log a| <= 8."""
    r = np.power(x, y)
    if r.dtype.kind != "c":
        return np.ones(r.shape, dtype=bool)
    with np.errstate(all="ignore"):
        return ~(np.abs(np.asarray(y, dtype=np.complex128) * np.log(np.asarray(x, dtype=np.complex128))) > 8)


def reciprocal(x):
    # Documented difference: a float result for bool and integers (the type sqrt gives them).
    if x.dtype.kind in "biu":
        x = x.astype(np.sqrt(np.zeros(1, x.dtype)).dtype)
    return np.reciprocal(x)


UNARY = {
    "negative": np.negative, "abs": np.absolute, "sign": np.sign, "square": np.square, "sqrt": np.sqrt,
    "rsqrt": rsqrt, "reciprocal": reciprocal, "exp": np.exp, "exp2": complex_in_long_double(exp2),
    "expm1": complex_in_long_double(expm1), "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": complex_in_long_double(log1p), "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "erf": erf, "gelu": gelu, "gelu_tanh": gelu_tanh, "floor": np.floor, "ceil": np.ceil, "rint": np.rint, "trunc": np.trunc, "isnan": np.isnan,
    "isinf": np.isinf, "isfinite": np.isfinite, "logical_not": np.logical_not, "invert": np.invert,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "conj": np.conjugate, "real": np.real,
    "imag": np.imag, "angle": np.angle,
}
BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "true_divide": np.true_divide,
    "floor_divide": np.floor_divide, "remainder": np.remainder, "power": np.power, "minimum": np.minimum,
    "maximum": np.maximum, "atan2": np.arctan2, "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift, "right_shift": np.right_shift, "hypot": np.hypot, "logaddexp": np.logaddexp,
}
# The C++ operators, as Python applies them to NumPy arrays (ndarray.__lshift__ and its kin), and the op each one
# is. Named operator<symbol>: a bare "|" would read as the field separator.
UNARY_OPERATORS = {"operator-": ("negative", operator.neg), "operator~": ("invert", operator.invert)}
BINARY_OPERATORS = {
    "operator+": ("add", operator.add), "operator-": ("subtract", operator.sub),
    "operator*": ("multiply", operator.mul), "operator/": ("true_divide", operator.truediv),
    "operator%": ("remainder", operator.mod), "operator==": ("equal", operator.eq),
    "operator!=": ("not_equal", operator.ne), "operator<": ("less", operator.lt),
    "operator<=": ("less_equal", operator.le), "operator>": ("greater", operator.gt),
    "operator>=": ("greater_equal", operator.ge), "operator&": ("bitwise_and", operator.and_),
    "operator|": ("bitwise_or", operator.or_), "operator^": ("bitwise_xor", operator.xor),
    "operator<<": ("left_shift", operator.lshift), "operator>>": ("right_shift", operator.rshift),
}
REDUCE = {
    "sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "argmin": np.argmin, "argmax": np.argmax,
    "any": np.any, "all": np.all, "mean": np.mean, "var": np.var, "std": np.std, "count_nonzero": np.count_nonzero,
    "nansum": np.nansum, "nanprod": np.nanprod, "nanmin": np.nanmin, "nanmax": np.nanmax, "nanmean": np.nanmean,
    "nanvar": np.nanvar, "nanstd": np.nanstd,
    "var_ddof1": lambda x, axis=None: np.var(x, axis=axis, ddof=1),
    "nanvar_ddof1": lambda x, axis=None: np.nanvar(x, axis=axis, ddof=1),
    "nanstd_ddof1": lambda x, axis=None: np.nanstd(x, axis=axis, ddof=1),
}
NAN_REDUCE = ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanvar_ddof1", "nanstd_ddof1")
SCALARS = [True, 3, -3, 200, 300, 70000, 2**40, 2**63, 2**64 - 1, -(2**63), 2.5, 1j, 2.5 - 1j]

out = []


def outcome(f, args):
    """f(*args), or the type of the exception it raises."""
    try:
        return f(*args)
    except Exception as e:  # noqa: BLE001 (any exception, compared by type)
        return type(e)


def same_outcome(f, g, args):
    r, s = outcome(f, args), outcome(g, args)
    if isinstance(r, type) or isinstance(s, type):
        return r is s
    r, s = np.asarray(r), np.asarray(s)
    return r.dtype == s.dtype and np.array_equal(r, s, equal_nan=kind(r.dtype) in "fc")


def emit(*fields):
    out.append(" | ".join(fields))


def reduce_halves_in_float32(f, x, axis):
    """NumPy's reduction f of x, or for float16 and bfloat16 (lazyfuse's documented accumulation in float32, rounded
    once) f of x as float32, rounded to the type NumPy's f gives x."""
    r = np.asarray(f(x) if axis == "all" else f(x, axis=axis))
    if x.dtype.itemsize == 2 and kind(x.dtype) == "f":
        w = x.astype(np.float32)
        r = np.asarray(f(w) if axis == "all" else f(w, axis=axis)).astype(r.dtype)
    return r


def main():
    for a in TYPES:
        for b in TYPES:
            emit("P %s %s %s" % (a, b, np.promote_types(dtype(a), dtype(b)).name))
    for t in TYPES:
        arr = np.array(values(t), dtype=dtype(t))
        for s in SCALARS + [False, 0, 1, -1, 127, 128, 255, 256, -129, 32767, 32768, 65535, 65536, -32769,
                            2**31 - 1, 2**31, 2**32, -(2**31) - 1, 2**63 - 1, -0.5, 1e300]:
            emit("W %s %s %s" % (t, scalar_text(s), np.result_type(arr, s).name))

    for name, f in UNARY.items():
        for t in TYPES:
            x = np.array(values(t), dtype=dtype(t))
            try:
                r = np.asarray(f(x))
            except TypeError:
                emit("UE %s %s" % (name, t))
                continue
            emit("U %s %s %s" % (name, t, r.dtype.name), fmt_all(x), fmt_all(r))

    for name, f in BINARY.items():
        for a in TYPES:
            for b in TYPES:
                va, vb = values(a), values(b)
                if name == "power" and dtype(b).kind == "i":
                    vb = [v for v in vb if v >= 0]  # documented: negative integer exponents are not compared
                x = np.array([p for p in va for _ in vb], dtype=dtype(a))
                y = np.array([q for _ in va for q in vb], dtype=dtype(b))
                try:
                    r = f(x, y)
                except TypeError:
                    emit("BE %s %s %s" % (name, a, b))
                    continue
                if name == "power":
                    keep = power_compared(x, y)
                    x, y, r = x[keep], y[keep], r[keep]
                emit("B %s %s %s %s" % (name, a, b, r.dtype.name), fmt_all(x), fmt_all(y), fmt_all(r))

    for name, f in BINARY.items():
        for t in TYPES:
            x = np.array(values(t), dtype=dtype(t))
            for s in SCALARS:
                for side in "LR":
                    args = [s, x] if side == "L" else [x, s]
                    try:
                        r = f(*args)
                    except (TypeError, OverflowError) as e:
                        emit("SE %s %s %s %s %s" % (name, t, scalar_text(s), side, type(e).__name__))
                        continue
                    except ValueError:
                        continue  # integer power with a negative exponent: documented difference
                    if name == "power":
                        keep = power_compared(*[np.broadcast_to(np.asarray(a, dtype=x.dtype if a is x else None),
                                                                x.shape) for a in args])
                        if not keep.all():
                            continue
                    emit("S %s %s %s %s %s" % (name, t, scalar_text(s), side, r.dtype.name), fmt_all(x), fmt_all(r))

    for a in TYPES:
        for b in TYPES:
            x = np.array(values(a), dtype=dtype(a))
            if kind(x.dtype) in "fc" and np.dtype(dtype(b)).kind in "iu":
                # A complex number converts its real part.
                info = np.iinfo(b)
                v = np.real(x).astype(np.float64)
                x = x[np.isfinite(v) & (v > info.min - 1) & (v < info.max + 1)]
                # The float's own rounding of the bounds: keep values that truncate into the range.
                v = np.trunc(np.real(x).astype(np.float64))
                x = x[(v >= info.min) & (v <= info.max)]
            emit("C %s %s" % (a, b), fmt_all(x), fmt_all(x.astype(dtype(b))))

    for name, f in REDUCE.items():
        for t in TYPES:
            v = values(t)
            cols = 4
            v = (v * cols)[: (len(v) // cols + 1) * cols]
            if kind(dtype(t)) in "fc":
                # All-NaN rows, and a row with one number (nanvar with ddof=1 has no degree of freedom there).
                v = v + [math.nan] * cols + [math.nan] * (cols - 1) + [2.0]
            x = np.array(v, dtype=dtype(t)).reshape(-1, cols)
            sums = ("sum", "prod", "mean", "var", "std", "var_ddof1") + NAN_REDUCE
            if name in sums:
                # Moderate values where sums are rounded: lazyfuse adds pairwise, NumPy in its own order, and with
                # values like 2**63 the order decides the result. Infinities would only compare NaN with NaN; NaN
                # stays for the NaN-ignoring reductions.
                keep = np.isfinite(x) & (np.abs(x.astype(np.complex128)) < 1e4)
                if name in NAN_REDUCE:
                    keep |= np.isnan(x)
                x = np.where(keep, x, np.array(3, dtype=x.dtype)).astype(dtype(t))
            for axis in ("all", 0, 1):
                r = reduce_halves_in_float32(f, x, axis)
                emit("R %s %s %s %s" % (name, t, axis, r.dtype.name), "%d %d" % x.shape, fmt_all(x), fmt_all(r))

    for t in TYPES:
        x = np.array(values(t), dtype=dtype(t))
        if x.dtype.kind in "biu":
            emit("T %s" % t, fmt_all(x), np.array2string(x, separator=", ", max_line_width=1 << 30))
        elif x.dtype in (np.float16, np.complex64, np.complex128):
            extra = [1000, 2048, 12345, 0.0001, 0.00012, 0.0999] if x.dtype == np.float16 else []
            for v in np.concatenate([x, np.array(extra, dtype=x.dtype)]):
                emit("T %s" % t, fmt(v, x.dtype), np.array2string(np.array([v]), separator=", "))

    for name, (op, f) in UNARY_OPERATORS.items():
        if all(same_outcome(f, UNARY[op], [np.array(values(t), dtype=dtype(t))]) for t in TYPES):
            emit("OU %s %s" % (name, op))
    for name, (op, f) in BINARY_OPERATORS.items():
        cases = []
        for a in TYPES:
            for b in TYPES:
                n = min(len(values(a)), len(values(b)))
                cases.append([np.array(values(a)[:n], dtype=dtype(a)), np.array(values(b)[:n], dtype=dtype(b))])
        for t in TYPES:
            x = np.array(values(t), dtype=dtype(t))
            cases += [[x, s] for s in SCALARS] + [[s, x] for s in SCALARS]
        if all(same_outcome(f, BINARY[op], args) for args in cases):
            emit("OB %s %s" % (name, op))

    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if int(np.__version__.split(".")[0]) != 2:
        sys.exit("numpy_types.py needs NumPy 2, found NumPy " + np.__version__)
    # NumPy warns about what lazyfuse documents (division by zero, all-NaN slices, ddof >= n): answers only.
    warnings.simplefilter("ignore")
    with np.errstate(all="ignore"):
        main()
