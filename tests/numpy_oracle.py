#!/usr/bin/env python3
"""NumPy as the second oracle of tests/test_random_graphs.cpp.

    numpy_oracle.py BATCH.jsonl      (exit 0: every program agrees; 1: some disagree; 2: the batch is unreadable)
    numpy_oracle.py --serve          (reads "BATCH.jsonl REPORT" lines on stdin, writes each batch's report to
                                      REPORT and answers "exit N" on stdout, until stdin ends: the test keeps one
                                      such process, since importing NumPy and ml_dtypes takes most of a second)

Each line of BATCH.jsonl is one random program that lazyfuse has run:
    {"case": N, "seed": "<how to rerun it>", "data": [[...], ...],        # the leaves' exact values (D[k])
     "py": ["v0 = np.array(D[0], dtype=np.float32).reshape((2, 3))", ...], # the same program in NumPy
     "checks": [{"name": "v5", "dtype": "float32", "shape": [2, 3],
                 "got": [...], "bound": [...]}]}                           # lazyfuse's results, C order
where "bound" is the test's float64 reference's error bound per element (Infinity: uncertain, skipped).

NumPy decides dtypes, shapes, promotion, indexing and NaN rules: the dtype and the shape must be equal, and the
values, upcast to float64, must satisfy |lazyfuse - numpy| <= bound_lazyfuse + bound_numpy, NumPy's own error
taken as the reference's bound (a few ulps per op: NumPy's float32 SIMD functions and summation orders are not
bit-exact); NaN must be at the same places, infinities equal. Each disagreement is reported with the program as
Python that reproduces it.

`nx` below is NumPy with exactly the differences docs/semantics.md documents for lazyfuse, and nothing more:
  * float -> int conversions (astype, and at().set of float values into an integer array) truncate toward zero,
    saturate at the integer type's limits and map NaN to 0 (docs/semantics.md, "Integer and conversion corner
    cases"), where NumPy's result is platform-dependent; values in range convert as NumPy converts them;
  * erf, which NumPy lacks: math.erf per element, in the dtype of NumPy's float functions (as sqrt's);
  * sum, prod, mean, var and std of float16 and bfloat16 arrays accumulate in float32 and round once at the end
    (docs/semantics.md, "Half-precision types"), where NumPy's float16 reductions along a strided axis and
    ml_dtypes' bfloat16 ones round every partial sum;
  * cumsum, cumprod and nancumsum of float16 and bfloat16 arrays accumulate in float32 and round each result once
    (docs/semantics.md, "Scans"), where NumPy rounds after every step; ml_dtypes' bfloat16 is not a subclass of
    np.inexact, so NumPy's nancumsum does not see its NaNs: they are taken as 0 here, as nancumsum does for others;
  * x.at(index).add(v) (nx.add_at) is np.add.at with the values meeting at one element summed first (in the type
    of v promoted with x's; float32 for the half types, rounded once) and then added to x once and converted to x's
    type (docs/semantics.md, "Writes with value semantics"), where np.add.at adds them one by one in x's type;
  * where and clip with a bfloat16 array and Python scalars keep bfloat16, as every other op does (NEP 50's weak
    scalars, docs/semantics.md); NumPy's np.where(c, 2.5, x) and np.clip(x, 1, 2.5) make those float32.
Complex -> real conversions take the real part in both (NumPy warns, ComplexWarning, which is ignored here); to
an integer type the real part then converts as a float does (the first difference above).
bfloat16 is ml_dtypes' (`ml_dtypes.bfloat16`), whose ufunc loops compute in float32 and round every result, as
lazyfuse. Complex leaves come as interleaved real and imaginary parts (nx.complex_array); a complex result's
record has "got_im" besides "got", and its bound is on the modulus: |lazyfuse - numpy| <= 2 * bound, with NaN
and infinities per part at the same places.
Everything else in the programs is plain NumPy (np.*).
"""
import contextlib
import json
import math
import sys
import traceback
import time
import warnings

import ml_dtypes
import numpy as np

_HALVES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _bfloat16_promotes_as_lazyfuse():
    """Whether this ml_dtypes promotes bfloat16 with NumPy's types as lazyfuse documents (ml_dtypes 0.7 does; older
    versions, such as the GPU machine's, raise DTypePromotionError for bfloat16 with integers or float16)."""
    try:
        return (np.result_type(ml_dtypes.bfloat16, np.int32) == np.float64
                and np.result_type(ml_dtypes.bfloat16, np.float16) == np.float32
                and np.result_type(ml_dtypes.bfloat16, np.int8) == ml_dtypes.bfloat16)
    except Exception:
        return False


# Without it, programs with bfloat16 values cannot be written in NumPy: they are counted as unchecked (SUMMARY's
# unchecked=), never as agreeing.
_BFLOAT16_PROMOTES = _bfloat16_promotes_as_lazyfuse()


def _wrap(name):
    f = getattr(np, name)

    def call(*args):
        return np.asarray(f(*args))

    call.__name__ = name
    return call


def _to_int(value, dtype):
    """value converted to integer dtype: NumPy's conversion, except lazyfuse's documented NaN and saturation."""
    v = np.asarray(value)
    if v.dtype.kind == "c":
        v = v.real
    if v.dtype.kind != "f":
        return v.astype(dtype)
    info = np.iinfo(dtype)
    inside = ~np.isnan(v) & (v > float(info.min) - 1) & (v < float(info.max) + 1)
    out = np.where(inside, v, 0).astype(dtype)
    out = np.where(np.isnan(v), 0, np.where(v >= float(info.max) + 1, info.max, out))
    return np.where(v <= float(info.min) - 1, info.min, out).astype(dtype)


class _NX:
    """NumPy with lazyfuse's documented differences (see the module's docstring)."""

    def __getattr__(self, name):
        fn = _wrap(name)
        setattr(self, name, fn)
        return fn

    def erf(self, x):
        x = np.asarray(x)
        dtype = self.sqrt(x).dtype
        return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(dtype)

    @staticmethod
    def astype(x, dtype):
        if np.dtype(dtype).kind == "i":
            return _to_int(x, dtype)
        return np.asarray(x).astype(dtype)

    @staticmethod
    def where(cond, a, b):
        a_bf, b_bf = (np.asarray(v).dtype == ml_dtypes.bfloat16 for v in (a, b))
        if a_bf and isinstance(b, (bool, int, float)):
            b = np.asarray(b).astype(ml_dtypes.bfloat16)
        if b_bf and isinstance(a, (bool, int, float)):
            a = np.asarray(a).astype(ml_dtypes.bfloat16)
        return np.asarray(np.where(cond, a, b))

    @staticmethod
    def clip(x, lo, hi):
        x = np.asarray(x)
        if x.dtype == ml_dtypes.bfloat16:
            return np.asarray(np.minimum(np.maximum(x, lo), hi))
        return np.asarray(np.clip(x, lo, hi))

    @staticmethod
    def complex_array(parts, dtype):
        """A complex array from interleaved real and imaginary parts."""
        parts = np.asarray(parts, dtype=np.float64)
        out = np.empty(parts.size // 2, dtype=dtype)
        out.real = parts[0::2]
        out.imag = parts[1::2]
        return out

    @staticmethod
    def _accumulating(name, x, **kw):
        x = np.asarray(x)
        if x.dtype in _HALVES:
            return np.asarray(getattr(np, name)(x, dtype=np.float32, **kw)).astype(x.dtype)
        return np.asarray(getattr(np, name)(x, **kw))

    def sum(self, x, **kw):
        return self._accumulating("sum", x, **kw)

    def prod(self, x, **kw):
        return self._accumulating("prod", x, **kw)

    def mean(self, x, **kw):
        return self._accumulating("mean", x, **kw)

    def var(self, x, **kw):
        return self._accumulating("var", x, **kw)

    def std(self, x, **kw):
        return self._accumulating("std", x, **kw)

    @staticmethod
    def _scan(name, x, axis=None, dtype=None):
        x = np.asarray(x)
        half = dtype is None and x.dtype in _HALVES
        if name == "nancumsum" and (x.dtype == ml_dtypes.bfloat16):
            x, name = np.where(np.isnan(x), np.zeros((), x.dtype), x), "cumsum"
        if half:
            return np.asarray(getattr(np, name)(x, axis=axis, dtype=np.float32)).astype(x.dtype)
        return np.asarray(getattr(np, name)(x, axis=axis, dtype=dtype))

    def cumsum(self, x, axis=None, dtype=None):
        return self._scan("cumsum", x, axis, dtype)

    def cumprod(self, x, axis=None, dtype=None):
        return self._scan("cumprod", x, axis, dtype)

    def nancumsum(self, x, axis=None, dtype=None):
        return self._scan("nancumsum", x, axis, dtype)

    @staticmethod
    def add_at(base, index, value):
        """lazyfuse's base.at(index).add(value): np.add.at of the values into zeros of the promoted type (float32 for
        the half types), then added to base once where the index reaches, converted to base's type."""
        base, value = np.asarray(base), np.asarray(value)
        p = np.result_type(base, value)
        acc = np.zeros(base.shape, dtype=np.float32 if p in _HALVES else p)
        # The values broadcast here: NumPy 2.4's np.add.at reads garbage when it broadcasts a value against a 2-D
        # index array itself (np.add.at(np.zeros(4), [[1, 2], [3, 0]], [1., 2.])).
        np.add.at(acc, index, np.array(np.broadcast_to(value, base[index].shape), dtype=acc.dtype))
        touched = np.zeros(base.shape, dtype=bool)
        touched[index] = True
        total = np.add(base.astype(p), acc.astype(p))
        total = _to_int(total, base.dtype) if base.dtype.kind == "i" else total.astype(base.dtype)
        return np.where(touched, total, base)

    @staticmethod
    def set(base, index, value):
        """lazyfuse's base.at(index).set(value): a new array (NumPy's setitem casting, 'unsafe')."""
        out = np.array(base, copy=True)
        if out.dtype.kind == "i" and np.asarray(value).dtype.kind in "fc":
            value = _to_int(value, out.dtype)
        out[index] = value
        return out

    @staticmethod
    def expect_error(fn):
        try:
            fn()
        except (ValueError, IndexError, TypeError):
            return
        raise AssertionError("NumPy gave a result where lazyfuse threw lazyfuse::Error")


nx = _NX()


class Mismatch(Exception):
    pass


def _show(values, limit=64):
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    return "[" + text + (", ... (%d values)" % len(values) if len(values) > limit else "") + "]"


def reproduction(rec):
    """The program as standalone Python (inputs inline when small)."""
    lines = ["import ml_dtypes, numpy as np", "import sys; sys.path.insert(0, 'tests'); from numpy_oracle import nx"]
    lines.append("D = [" + ", ".join(_show(d, 10**9) if len(d) <= 64 else "<%d values: see the batch file>" % len(d)
                                     for d in rec["data"]) + "]")
    lines += rec["py"]
    return "\n".join("    " + l for l in lines)


def compare(rec, chk, value):
    """Empty when lazyfuse's recorded result agrees with NumPy's value, else what differs."""
    a = np.asarray(value)
    if str(a.dtype) != chk["dtype"]:
        return ["dtype: lazyfuse %s, NumPy %s" % (chk["dtype"], a.dtype)]
    if list(a.shape) != chk["shape"]:
        return ["shape: lazyfuse %s, NumPy %s" % (tuple(chk["shape"]), a.shape)]
    complex_ = "got_im" in chk
    got = np.array(chk["got"], dtype=np.float64)
    got_im = np.array(chk["got_im"] if complex_ else np.zeros(got.size), dtype=np.float64)
    bound = np.array(chk["bound"], dtype=np.float64)
    ref = (a.real if complex_ else a).astype(np.float64).ravel()
    ref_im = a.imag.astype(np.float64).ravel() if complex_ else np.zeros(ref.size)
    if got.size != ref.size or bound.size != ref.size or got_im.size != ref.size:
        return ["the record has %d values and %d bounds for %d elements" % (got.size, bound.size, ref.size)]
    certain = np.isfinite(bound)
    bad = np.zeros(ref.size, dtype=bool)
    diff2 = np.zeros(ref.size)
    with np.errstate(all="ignore"):
        # Per part: NaN at the same places, the same infinities; the finite parts' difference (its modulus for
        # complex values) within bound_lazyfuse + bound_numpy, NumPy's error taken as the reference's bound.
        for g, r in ((got, ref), (got_im, ref_im)):
            nan_g, nan_r = np.isnan(g), np.isnan(r)
            bad |= certain & (nan_g != nan_r)
            inf = ~nan_g & ~nan_r & (np.isinf(g) | np.isinf(r))
            bad |= certain & inf & (g != r)
            fin = ~nan_g & ~nan_r & ~inf
            diff2 += np.where(fin, (g - r) ** 2, 0.0)
        bad |= certain & ~(np.sqrt(diff2) <= 2 * bound)
    if not bad.any():
        return []
    out = ["%d of %d elements differ (%d certain):" % (int(bad.sum()), ref.size, int(certain.sum()))]
    for flat in np.flatnonzero(bad)[:8]:
        idx = np.unravel_index(flat, a.shape) if a.shape else ()
        g = complex(got[flat], got_im[flat]) if complex_ else float(got[flat])
        r = complex(ref[flat], ref_im[flat]) if complex_ else float(ref[flat])
        out.append("  [%s] lazyfuse %r, NumPy %r, |diff| %r, allowed %r" % (
            ", ".join(str(int(i)) for i in idx), g, r, float(np.sqrt(diff2[flat])), float(2 * bound[flat])))
    return out


def run_program(rec):
    """Runs one program; returns (elements compared, problems)."""
    ns = {"np": np, "nx": nx, "ml_dtypes": ml_dtypes, "D": rec["data"]}
    for line in rec["py"]:
        try:
            exec(line, ns)
        except Exception as e:  # NumPy refused what lazyfuse accepted
            return 0, ["NumPy raised %s: %s\n  at: %s" % (type(e).__name__, e, line)] + [
                "LABEL " + chk["label"] for chk in rec["checks"] if "label" in chk]
        target = line.split(" = ", 1)[0] if " = " in line else None
        if target and target.isidentifier():
            ns[target] = np.asarray(ns[target])
    problems, elements = [], 0
    for chk in rec["checks"]:
        diff = compare(rec, chk, ns[chk["name"]])
        elements += len(chk["got"])
        if diff:
            problems.append("%s: %s" % (chk["name"], "\n".join(diff)))
            if "label" in chk:
                problems.append("LABEL " + chk["label"])
    return elements, problems


def serve():
    """Checks batches named on stdin, one at a time (see the module's docstring)."""
    for line in sys.stdin:
        batch, report = line.split()
        with open(report, "w", encoding="utf-8") as out:
            try:
                with contextlib.redirect_stdout(out):
                    rc = check_batch(batch)
            except Exception:  # a broken batch: its report says why, and the next batch still runs
                traceback.print_exc(file=out)
                rc = 2
        print("exit %d" % rc, flush=True)
    return 0


def main(argv):
    if argv[1:] == ["--serve"]:
        return serve()
    if len(argv) != 2:
        print(__doc__)
        return 2
    return check_batch(argv[1])


def check_batch(path):
    """Checks every program of the batch file; 0 when all agree with NumPy, 1 when some do not."""
    t0 = time.time()
    np.seterr(all="ignore")
    warnings.simplefilter("ignore")
    programs = elements = bad = unchecked = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            if not _BFLOAT16_PROMOTES and any("bfloat16" in py for py in rec["py"]):
                unchecked += 1
                continue
            programs += 1
            n, problems = run_program(rec)
            elements += n
            if problems:
                bad += 1
                print("MISMATCH %d" % rec["case"])
                print("rerun: %s" % rec["seed"])
                for p in problems:
                    print(p)
                print("NumPy program (nx: numpy with lazyfuse's documented differences, tests/numpy_oracle.py):")
                print(reproduction(rec))
                print("END")
    print("SUMMARY programs=%d elements=%d mismatches=%d unchecked=%d seconds=%.2f numpy=%s ml_dtypes=%s" % (
        programs, elements, bad, unchecked, time.time() - t0, np.__version__, ml_dtypes.__version__))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
