#!/usr/bin/env python3
"""Fits the erfc of the half types' GELU (graph/OpMath.inc, lf_gelu_for_half) and prints its coefficients.

erfc(a) = t * 2^(Q(t) - a^2 log2(e)) for a >= 0, t = 1 / (1 + a/2): Q, of degree 7 (float16's; bfloat16's is of
degree 5: `fit_half_gelu.py 5`), is fitted to
log2(erfc(a) / t) + a^2 log2(e) on [0, 10] (beyond it the GELU of every half type is 0) by iteratively reweighted
least squares (Lawson's algorithm, which tends to the minimax fit). An error of Q is a relative error of erfc, so the
largest one printed, times ln 2, is the fit's relative error. Needs NumPy and mpmath:
    python3 scripts/fit_half_gelu.py [degree]
"""
import sys

import mpmath
import numpy as np

mpmath.mp.dps = 30
DEGREE = int(sys.argv[1]) if len(sys.argv) > 1 else 7
a = np.linspace(0.0, 10.0, 8001)
t = 1.0 / (1.0 + 0.5 * a)
target = np.array([float((mpmath.log(mpmath.erfc(v) * (1 + mpmath.mpf(v) / 2)) + mpmath.mpf(v) ** 2) / mpmath.log(2))
                   for v in a])
basis = np.vander(t, DEGREE + 1, increasing=True)
weights = np.ones_like(t)
for _ in range(80):
    coef, *_ = np.linalg.lstsq(basis * np.sqrt(weights)[:, None], target * np.sqrt(weights), rcond=None)
    weights = np.maximum(weights * np.abs(basis @ coef - target), 1e-300)
    weights /= weights.sum()
coef32 = coef.astype(np.float32)
error = np.max(np.abs(basis @ coef32.astype(np.float64) - target)) * np.log(2)
print(f"degree {DEGREE}: largest relative error of erfc {error:.2e} (float32 coefficients)")
print("highest first:", ", ".join(f"{float(c):.9g}f" for c in coef32[::-1]))
