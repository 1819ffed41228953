#!/usr/bin/env python3
"""variants.py generated.cu <folder>: writes the variants of generated.cu that main.cu times (each takes one stage of the element's work out, to find
what the time is spent on), each with its own kernel name and a launcher `launch_<variant>`:
  v0  as generated
  v1  the remainder as unsigned (the signs' handling left out)
  v2  __sinf instead of sinf (the precise sine's cost)
  v3  the multiplier and the modulus as compile-time constants (what jax.jit compiles), nvcc's own % by a constant
  v4  the remainder cast to float through int32 (I2F of 32 bits instead of 64)
  v5  v3 and v4
  v6  (session 25) the printer's new lf_floor_divide_by and lf_remainder_by: a non-negative dividend over a positive
      divisor first, without the signs' handling
  v7  v6 with the test marked likely (__builtin_expect)
"""
import re, sys
src = open(sys.argv[1]).read()
out_dir = sys.argv[2]  # where the variants are written
name = re.search(r"__global__ void __launch_bounds__\(256\) (lf_k[0-9a-f]+)\(", src).group(1)
REM = "lf_remainder_by<lf_i64, unsigned long long, lf_vdiv64>(v5, v6, lf_vd2)"
CAST = "lf_cast<float, lf_i64>(v7)"
assert REM in src and CAST in src and "lf_sin(v14)" in src
# codegen/KernelAbi.cpp's magnitude_divisor64 for the modulus (Granlund and Montgomery).
MODULUS = 1000003
SHIFT = (MODULUS - 1).bit_length()
MUL = (((1 << SHIFT) - MODULUS) << 64) // MODULUS + 1
def v3(s):
    s = s.replace("const lf_i64 v4 = p1;", "const lf_i64 v4 = 1103515245LL;")
    s = s.replace("const lf_i64 v6 = p2;", "const lf_i64 v6 = 1000003LL;")
    return s.replace(REM, "(v5 % 1000003LL)")
OLD_FLOOR = "template <class T, class U, class D> __device__ __forceinline__ T lf_floor_divide_by(T a, T b, D d) {\n  if (b == 0) return 0;\n"
OLD_REM = "template <class T, class U, class D> __device__ __forceinline__ T lf_remainder_by(T a, T b, D d) {\n  if (b == 0) return 0;\n"
assert OLD_FLOOR in src and OLD_REM in src
def v6(s, test="a >= 0 && b > 0"):
    s = s.replace(OLD_FLOOR, OLD_FLOOR.replace("  if (b == 0)", f"  if ({test}) return (T)lf_udiv((U)a, d);\n  if (b == 0)"))
    return s.replace(OLD_REM, OLD_REM.replace("  if (b == 0)", f"  if ({test}) return (T)((U)a - lf_udiv((U)a, d) * (U)b);\n  if (b == 0)"))
variants = {
    "v0": lambda s: s,
    "v1": lambda s: s.replace(REM, "(lf_i64)((unsigned long long)v5 - lf_udiv((unsigned long long)v5, lf_vd2) * (unsigned long long)v6)"),
    "v2": lambda s: s.replace("lf_sin(v14)", "__sinf(v14)"),
    "v3": v3,
    "v4": lambda s: s.replace(CAST, "(float)(int)v7"),
    "v5": lambda s: v3(s).replace(CAST, "(float)(int)v7"),
    "v6": v6,
    "v7": lambda s: v6(s, "__builtin_expect(a >= 0 && b > 0, 1)"),
}
for v, f in variants.items():
    body = f(src).replace(name, "kernel_" + v)
    body += f"""
void launch_{v}(int grid, float* out, long long n, float* partials, unsigned* tickets, int splits) {{
  const lf_vdiv64 d = {{{MUL}ull, {SHIFT}u}};
  kernel_{v}<<<grid, 256>>>(out, 1, (idx_t)n, 1103515245LL, 1000003LL, 1.0f / 1000003.0f, 0.25f, 6.2831853f, 0.0f, d,
                            (unsigned char*)partials, tickets, splits);
}}
int blocks_per_sm_{v}() {{
  int b = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel_{v}, 256, 0);
  return b;
}}
"""
    open(f"{out_dir}/gen_{v}.cu", "w").write(body)
