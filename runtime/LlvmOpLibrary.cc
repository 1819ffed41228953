// The op library of the LLVM CPU code generator (runtime/LlvmCodegen.h): graph/OpMath.inc's functions, the very text
// the interpreter and the CUDA kernels run, wrapped as one C function per (op, type) with a uniform by-pointer
// signature. The build compiles this file with clang-19 to LLVM bitcode (-O2 -ffp-contract=off, no fast-math: see
// runtime/CMakeLists.txt), embeds the bitcode in the library, and links it into every generated module, whose
// calls inline away. So an op has one meaning in every backend, and no second definition in IR builder calls.
//
// Not compiled by the host compiler (a .cc, outside the runtime folder's *.cpp).
//
// Names (what runtime/LlvmCodegen.cpp calls; deterministic, from the op and type tables):
//   lfjit_unary_<op>_<type>(const void* a, void* out)            out = lf_<op>(a), a of <type>'s op-math type
//   lfjit_binary_<op>_<type>(const void* a, const void* b, void* out)
//   lfjit_cast_<to>_<from>(const void* a, void* out)              out = lf_cast<to, from>(a)
// (A reduction's column folds are host functions the kernels call, not inlined: runtime/LlvmCodegen.cpp.)
// <type> is the type table's name (float32, complex64, ...). A pair the op table leaves undefined traps: the
// generator never calls one (it checks the same `requires` as the interpreter).
#include "graph/HostOps.h"

#include <cstring>

namespace {

using namespace lazyfuse_opmath;

#define LFJIT_INLINE __attribute__((always_inline)) inline

template <class T> LFJIT_INLINE T read(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> LFJIT_INLINE void write(void* p, const T& v) {
  std::memcpy(p, &v, sizeof v);
}

#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  template <class T> LFJIT_INLINE void unary_##name(const void* a, void* out) {                                        \
    if constexpr (requires(T x) { lf_##name(x); })                                                                     \
      write(out, lf_##name(read<T>(a)));                                                                               \
    else                                                                                                               \
      __builtin_trap();                                                                                                \
  }
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  template <class T> LFJIT_INLINE void binary_##name(const void* a, const void* b, void* out) {                        \
    if constexpr (requires(T x) { lf_##name(x, x); })                                                                  \
      write(out, lf_##name(read<T>(a), read<T>(b)));                                                                   \
    else                                                                                                               \
      __builtin_trap();                                                                                                \
  }
#include <lazyfuse/ops.def>

template <class To, class From> LFJIT_INLINE void cast(const void* a, void* out) {
  write(out, lf_cast<To, From>(read<From>(a)));
}

} // namespace

// The type table's (name, op-math type) pairs, twice (a macro cannot expand itself, and casts need two nested loops).
// The static_assert below checks them against lazyfuse/dtypes.def.
#define LFJIT_EACH_TYPE(X, ...)                                                                                        \
  X(bool, bool, __VA_ARGS__)                                                                                           \
  X(int32, lf_i32, __VA_ARGS__)                                                                                        \
  X(int64, lf_i64, __VA_ARGS__)                                                                                        \
  X(float32, float, __VA_ARGS__)                                                                                       \
  X(float64, double, __VA_ARGS__)                                                                                      \
  X(int8, lf_i8, __VA_ARGS__)                                                                                          \
  X(int16, lf_i16, __VA_ARGS__)                                                                                        \
  X(uint8, lf_u8, __VA_ARGS__)                                                                                         \
  X(uint16, lf_u16, __VA_ARGS__)                                                                                       \
  X(uint32, lf_u32, __VA_ARGS__)                                                                                       \
  X(uint64, lf_u64, __VA_ARGS__)                                                                                       \
  X(float16, lf_f16, __VA_ARGS__)                                                                                      \
  X(bfloat16, lf_bf16, __VA_ARGS__)                                                                                    \
  X(complex64, lf_c64, __VA_ARGS__)                                                                                    \
  X(complex128, lf_c128, __VA_ARGS__)
#define LFJIT_EACH_TYPE_B(X, ...)                                                                                      \
  X(bool, bool, __VA_ARGS__)                                                                                           \
  X(int32, lf_i32, __VA_ARGS__)                                                                                        \
  X(int64, lf_i64, __VA_ARGS__)                                                                                        \
  X(float32, float, __VA_ARGS__)                                                                                       \
  X(float64, double, __VA_ARGS__)                                                                                      \
  X(int8, lf_i8, __VA_ARGS__)                                                                                          \
  X(int16, lf_i16, __VA_ARGS__)                                                                                        \
  X(uint8, lf_u8, __VA_ARGS__)                                                                                         \
  X(uint16, lf_u16, __VA_ARGS__)                                                                                       \
  X(uint32, lf_u32, __VA_ARGS__)                                                                                       \
  X(uint64, lf_u64, __VA_ARGS__)                                                                                       \
  X(float16, lf_f16, __VA_ARGS__)                                                                                      \
  X(bfloat16, lf_bf16, __VA_ARGS__)                                                                                    \
  X(complex64, lf_c64, __VA_ARGS__)                                                                                    \
  X(complex128, lf_c128, __VA_ARGS__)

#define LFJIT_COUNT(tname, T, unused) +1
static_assert(0 LFJIT_EACH_TYPE(LFJIT_COUNT, ) == 0
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) +1
#include <lazyfuse/dtypes.def>
              ,
              "LFJIT_EACH_TYPE must list every type of lazyfuse/dtypes.def");
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits)                                  \
  static_assert(std::is_same_v<lazyfuse::graph::opmath_t<host_type>, LFJIT_OPMATH_TYPE_##name>);
#define LFJIT_ALIAS(tname, T, unused) using LFJIT_OPMATH_TYPE_##tname = T;
namespace lazyfuse_opmath {
LFJIT_EACH_TYPE(LFJIT_ALIAS, )
#include <lazyfuse/dtypes.def>
} // namespace lazyfuse_opmath

// Exported definitions (not `inline`, which would emit only the used ones), inlined into every caller.
#define LFJIT_EXPORT extern "C" __attribute__((always_inline))
#define LFJIT_UNARY_OF(tname, T, name)                                                                                 \
  LFJIT_EXPORT void lfjit_unary_##name##_##tname(const void* a, void* out) {                                           \
    unary_##name<T>(a, out);                                                                                           \
  }
#define LFJIT_BINARY_OF(tname, T, name)                                                                                \
  LFJIT_EXPORT void lfjit_binary_##name##_##tname(const void* a, const void* b, void* out) {                           \
    binary_##name<T>(a, b, out);                                                                                       \
  }
#define LAZYFUSE_UNARY(Enum, name, rule, cost) LFJIT_EACH_TYPE(LFJIT_UNARY_OF, name)
#define LAZYFUSE_BINARY(Enum, name, rule, cost) LFJIT_EACH_TYPE(LFJIT_BINARY_OF, name)
#include <lazyfuse/ops.def>

#define LFJIT_CAST_TO(to_name, To, from_name, From)                                                                    \
  LFJIT_EXPORT void lfjit_cast_##to_name##_##from_name(const void* a, void* out) {                                     \
    cast<To, From>(a, out);                                                                                            \
  }
#define LFJIT_CAST_FROM(from_name, From, unused) LFJIT_EACH_TYPE_B(LFJIT_CAST_TO, from_name, From)
LFJIT_EACH_TYPE(LFJIT_CAST_FROM, )
