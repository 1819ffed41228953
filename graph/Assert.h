// Internal invariants: a failed LAZYFUSE_ASSERT is a bug in lazyfuse, never a user error, so it aborts with
// a message instead of throwing (user errors are the exceptions of <lazyfuse/error.hpp>).
//
// LAZYFUSE_ASSERT(cond, msg) checks a condition. Where the condition compares two values, the comparison asserts
// (LAZYFUSE_ASSERT_EQ, _NE, _LT, _LE, _GT, _GE: (a, b, msg)) also print both values, which is usually what the
// bug report needs. Integers compare by value whatever their signedness (std::cmp_less and friends), so
// `LAZYFUSE_ASSERT_LT(index, v.size(), ...)` needs no cast. Each operand is evaluated exactly once.
#pragma once

#include <cinttypes>
#include <concepts>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#define LAZYFUSE_ASSERT(cond, msg)                                                                                     \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      std::fprintf(stderr, "lazyfuse internal error at %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond);             \
      std::abort();                                                                                                    \
    }                                                                                                                  \
  } while (0)

namespace lazyfuse::graph::assert_detail {

template <class T>
concept Integer = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char> && !std::same_as<T, char8_t> &&
                  !std::same_as<T, char16_t> && !std::same_as<T, char32_t> && !std::same_as<T, wchar_t>;

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };

template <Cmp op, class A, class B> constexpr bool compare(const A& a, const B& b) {
  if constexpr (Integer<A> && Integer<B>) {
    if constexpr (op == Cmp::Eq) return std::cmp_equal(a, b);
    if constexpr (op == Cmp::Ne) return std::cmp_not_equal(a, b);
    if constexpr (op == Cmp::Lt) return std::cmp_less(a, b);
    if constexpr (op == Cmp::Le) return std::cmp_less_equal(a, b);
    if constexpr (op == Cmp::Gt) return std::cmp_greater(a, b);
    if constexpr (op == Cmp::Ge) return std::cmp_greater_equal(a, b);
  } else {
    if constexpr (op == Cmp::Eq) return a == b;
    if constexpr (op == Cmp::Ne) return a != b;
    if constexpr (op == Cmp::Lt) return a < b;
    if constexpr (op == Cmp::Le) return a <= b;
    if constexpr (op == Cmp::Gt) return a > b;
    if constexpr (op == Cmp::Ge) return a >= b;
  }
}

/// An operand as text, in a buffer of the caller's: numbers, bools, enums (their underlying value) and pointers;
/// anything else prints as "?", the expression text still says what it was.
template <class T> void print_value(char (&out)[48], const T& v) {
  if constexpr (std::same_as<T, bool>)
    std::snprintf(out, sizeof out, "%s", v ? "true" : "false");
  else if constexpr (std::is_enum_v<T>)
    print_value(out, static_cast<std::underlying_type_t<T>>(v));
  else if constexpr (std::integral<T> && std::is_signed_v<T>)
    std::snprintf(out, sizeof out, "%" PRIdMAX, static_cast<std::intmax_t>(v));
  else if constexpr (std::integral<T>)
    std::snprintf(out, sizeof out, "%" PRIuMAX, static_cast<std::uintmax_t>(v));
  else if constexpr (std::floating_point<T>)
    std::snprintf(out, sizeof out, "%.17g", static_cast<double>(v));
  else if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>)
    std::snprintf(out, sizeof out, "%p", static_cast<const volatile void*>(v));
  else
    std::snprintf(out, sizeof out, "?");
}

template <class A, class B>
[[noreturn]] void comparison_failed(const char* file, int line, const char* msg, const char* expr, const A& a,
                                    const B& b) {
  char a_text[48], b_text[48];
  print_value(a_text, a);
  print_value(b_text, b);
  std::fprintf(stderr, "lazyfuse internal error at %s:%d: %s (%s failed: %s vs %s)\n", file, line, msg, expr, a_text,
               b_text);
  std::abort();
}

} // namespace lazyfuse::graph::assert_detail

#define LAZYFUSE_ASSERT_CMP_(op, op_text, a, b, msg)                                                                   \
  do {                                                                                                                 \
    const auto& lazyfuse_assert_a_ = (a);                                                                              \
    const auto& lazyfuse_assert_b_ = (b);                                                                              \
    if (!::lazyfuse::graph::assert_detail::compare<::lazyfuse::graph::assert_detail::Cmp::op>(lazyfuse_assert_a_,      \
                                                                                              lazyfuse_assert_b_))     \
      ::lazyfuse::graph::assert_detail::comparison_failed(__FILE__, __LINE__, msg, #a " " op_text " " #b,              \
                                                          lazyfuse_assert_a_, lazyfuse_assert_b_);                     \
  } while (0)

#define LAZYFUSE_ASSERT_EQ(a, b, msg) LAZYFUSE_ASSERT_CMP_(Eq, "==", a, b, msg)
#define LAZYFUSE_ASSERT_NE(a, b, msg) LAZYFUSE_ASSERT_CMP_(Ne, "!=", a, b, msg)
#define LAZYFUSE_ASSERT_LT(a, b, msg) LAZYFUSE_ASSERT_CMP_(Lt, "<", a, b, msg)
#define LAZYFUSE_ASSERT_LE(a, b, msg) LAZYFUSE_ASSERT_CMP_(Le, "<=", a, b, msg)
#define LAZYFUSE_ASSERT_GT(a, b, msg) LAZYFUSE_ASSERT_CMP_(Gt, ">", a, b, msg)
#define LAZYFUSE_ASSERT_GE(a, b, msg) LAZYFUSE_ASSERT_CMP_(Ge, ">=", a, b, msg)
