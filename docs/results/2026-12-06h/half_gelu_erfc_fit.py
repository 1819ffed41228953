"""Session 35, a lead for issue 15 (not measured on a GPU): a cheaper erfc for the half types' GELU.

erfc(y) = t * exp(P(t) - y^2), t = 1 / (1 + y/2), y >= 0 (erfc(-y) = 2 - erfc(y)), with P fitted here by iteratively
reweighted least squares (Lawson) to the logarithm, i.e. to the relative error, over [0, 10.5] (beyond it bfloat16's
GELU is 0). Printed: the degree, the largest relative error, the coefficients (lowest first). Degree 8 gives 2.5e-7,
degree 7 6.6e-7: far below half a unit of float16 (4.9e-4) and bfloat16 (3.9e-3). half_gelu_erfc.cu has the form
beside CUDA's erfcf; `nvcc -arch=sm_90 -fmad=false -ptx` gives 71 PTX instructions for it against 96 for erfcf's
kernel (the GELU kernel of 2^27 bfloat16 was bound by erfcf's arithmetic: docs/performance.md, issue 15). Needs
mpmath and NumPy.
"""
import numpy as np
from math import erfc
import mpmath
mpmath.mp.dps = 30
ys = np.concatenate([np.linspace(0, 10.5, 20001)])
def target(y, a):
    t = 1/(1+a*y)
    return t, float(mpmath.log(mpmath.erfc(y)/t) + mpmath.mpf(y)**2)
for a in [0.5]:
  T=[];G=[]
  for y in ys:
    t,g = target(y,a); T.append(t); G.append(g)
  T=np.array(T); G=np.array(G)
  for d in [6,7,8,9,10]:
    # least squares then simple minimax via IRLS (Lawson)
    V = np.vander(T, d+1, increasing=True)
    w = np.ones_like(T)
    for it in range(60):
        c,*_ = np.linalg.lstsq(V*np.sqrt(w)[:,None], G*np.sqrt(w), rcond=None)
        e = V@c - G
        w = w*np.abs(e); w /= w.sum()
        w = np.maximum(w, 1e-12)
    print(a, d, np.max(np.abs(V@c-G)), list(c))
