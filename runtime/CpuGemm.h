// Matrix products on the CPU backend: BLAS (found by CMake's find_package(BLAS); OpenBLAS on Debian when installed)
// for float32, float64, complex64 and complex128, and a blocked loop for the types BLAS lacks (float16, bfloat16:
// float32 accumulation, one rounding at the end; integers: exact, wrapping as NumPy's; bool: or of ands) and for
// builds without BLAS (LAZYFUSE_BLAS=OFF, or none found).
#pragma once

#include "runtime/Gemm.h"

#include <string>

namespace lazyfuse::runtime::cpu_gemm {

/// Computes `g` (host pointers) now. Returns true when BLAS ran it, false when the blocked loop did. BLAS runs on up
/// to LAZYFUSE_CPU_THREADS threads where the library lets that be set (OpenBLAS), and so does the blocked loop. The
/// epilogue (float types only): BLAS takes alpha and beta (c_in copied into c first), the blocked loop applies them
/// after the product; then the bias and the activation with graph/OpMath.inc's lf_add, lf_maximum and lf_gelu_tanh,
/// rounding to the type after each, as the unfused ops do.
bool run(const Gemm& g);

/// "OpenBLAS 0.3.21 ..." (openblas_get_config), "BLAS (<libraries>)" or "blocked loop (built without BLAS)", for
/// lazyfuse-info.
std::string description();

/// Whether this process has opened the BLAS library yet: it is opened at the first product that BLAS can run (or
/// by description()), never when lazyfuse loads, since OpenBLAS' threads spin for about 0.1 s after it loads.
bool blas_opened();

} // namespace lazyfuse::runtime::cpu_gemm
