// The reductions' host functions (runtime/ReduceHostFunctions.h). Built with -O3 (runtime/CMakeLists.txt): the
// column fold's levels vectorize there, and the fold is on the path of every element a compiled reduction reads.
#include "runtime/ReduceHostFunctions.h"
#include "runtime/ReduceTree.h"

#include "graph/HostOps.h"
#include "graph/Ops.h"

#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LAZYFUSE_FOLD_AVX2 1
#define LAZYFUSE_FOLD_CHOICE(fold, T, Combine)                                                                         \
  (avx2 ? reinterpret_cast<void*>(&fold##_avx2<T, Combine>) : reinterpret_cast<void*>(&fold<T, Combine>))
#else
#define LAZYFUSE_FOLD_AVX2 0
#define LAZYFUSE_FOLD_CHOICE(fold, T, Combine) reinterpret_cast<void*>(&fold<T, Combine>)
#endif

namespace lazyfuse::runtime {

namespace {

// A reduction's column fold, finish and the arg reductions' steps: the interpreter's own template code
// (runtime/ReduceTree.h, lf_<op>_combine / lf_<op>_better), compiled by the host compiler and called by the kernels
// (once per column of kReduceColumn elements) instead of being inlined into every module, which tripled compile times.
template <class T, class Combine> void host_fold(const void* column, int len, void* levels, void* used) {
  constexpr Combine combine{};
  reduce_carry(static_cast<T*>(levels), static_cast<bool*>(used),
               reduce_column(static_cast<const T*>(column), len, combine), 0, combine);
}
#if LAZYFUSE_FOLD_AVX2
// The same fold for AVX2: a full column's halving tree then combines 8 float32 at a time instead of SSE2's 4 (a
// 2^26 float32 sum on two cores: 14.3 against 17.1 ms, docs/performance.md). `flatten` inlines every call, so no
// out-of-line copy of an op built for AVX2 can stand in for the baseline one.
template <class T, class Combine>
__attribute__((target("avx2"), flatten)) void host_fold_avx2(const void* column, int len, void* levels, void* used) {
  constexpr Combine combine{};
  reduce_carry(static_cast<T*>(levels), static_cast<bool*>(used),
               reduce_column(static_cast<const T*>(column), len, combine), 0, combine);
}
#endif
template <class T, class Combine, T (*Identity)()> void host_finish(const void* levels, const void* used, void* out) {
  const T result = reduce_finish(static_cast<const T*>(levels), static_cast<const bool*>(used), Identity(), Combine{});
  std::memcpy(out, &result, sizeof result);
}
// Carries a block's counter (block_levels, block_used) into the counter of the columns before it, as the interpreter's
// Pairwise::absorb does: the split's absorb step (CompiledSplit).
template <class T, class Combine>
void host_absorb(void* levels, void* used, const void* block_levels, const void* block_used) {
  reduce_absorb(static_cast<T*>(levels), static_cast<bool*>(used), static_cast<const T*>(block_levels),
                static_cast<const bool*>(block_used), Combine{});
}
template <class T, T (*Identity)()> void host_arg_init(void* best, void* best_index) {
  const T identity = Identity();
  const std::int64_t none = INT64_MAX;
  std::memcpy(best, &identity, sizeof identity);
  std::memcpy(best_index, &none, sizeof none);
}
template <class T, class Better>
void host_arg_fold(const void* column, const void* index, int len, void* best, void* best_index) {
  const T* v = static_cast<const T*>(column);
  const std::int64_t* idx = static_cast<const std::int64_t*>(index);
  T b;
  std::int64_t bi;
  std::memcpy(&b, best, sizeof b);
  std::memcpy(&bi, best_index, sizeof bi);
  for (int e = 0; e < len; ++e)
    if (Better{}(v[e], idx[e], b, bi)) b = v[e], bi = idx[e];
  std::memcpy(best, &b, sizeof b);
  std::memcpy(best_index, &bi, sizeof bi);
}

} // namespace

const char* reduction_fold_isa() {
#if LAZYFUSE_FOLD_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return "avx2";
#endif
  return "baseline";
}

std::vector<std::pair<std::string, void*>> reduction_host_functions() {
  [[maybe_unused]] const bool avx2 = reduction_fold_isa() == std::string_view("avx2");
  std::vector<std::pair<std::string, void*>> out;
  auto add = [&](std::string name, auto* fn) { out.emplace_back(std::move(name), reinterpret_cast<void*>(fn)); };
  for (DType t : {
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) DType::Enum,
#include <lazyfuse/dtypes.def>
       }) {
    const std::string type(dtype_name(t));
    graph::visit_opmath_type(t, [&]<class T>() {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost)                                                           \
  if constexpr (graph::ReduceRule::rule != graph::ReduceRule::Logical || std::is_same_v<T, bool>) {                    \
    LFJIT_HOST_##kind(name)                                                                                            \
  }
#define LFJIT_HOST_Combine(name)                                                                                       \
  struct name##_combine {                                                                                              \
    T operator()(T a, T b) const { return lazyfuse_opmath::lf_##name##_combine(a, b); }                                \
  };                                                                                                                   \
  add("lfhost_reduce_fold_" #name "_" + type, LAZYFUSE_FOLD_CHOICE(host_fold, T, name##_combine));                     \
  add("lfhost_reduce_finish_" #name "_" + type,                                                                        \
      &host_finish<T, name##_combine, &lazyfuse_opmath::lf_##name##_identity<T>>);                                     \
  add("lfhost_reduce_absorb_" #name "_" + type, &host_absorb<T, name##_combine>);
#define LFJIT_HOST_Arg(name)                                                                                           \
  struct name##_better {                                                                                               \
    bool operator()(T v, std::int64_t i, T b, std::int64_t j) const {                                                  \
      return lazyfuse_opmath::lf_##name##_better(v, i, b, j);                                                          \
    }                                                                                                                  \
  };                                                                                                                   \
  add("lfhost_arg_init_" #name "_" + type, &host_arg_init<T, &lazyfuse_opmath::lf_##name##_identity<T>>);              \
  add("lfhost_arg_fold_" #name "_" + type, &host_arg_fold<T, name##_better>);
#include <lazyfuse/ops.def>
#undef LFJIT_HOST_Combine
#undef LFJIT_HOST_Arg
    });
  }
  return out;
}

} // namespace lazyfuse::runtime
