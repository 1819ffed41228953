// Internal invariants: a failed LAZYFUSE_ASSERT is a bug in lazyfuse, never a user error, so it aborts with
// a message instead of throwing (user errors are the exceptions of <lazyfuse/error.hpp>).
#pragma once

#include <cstdio>
#include <cstdlib>

#define LAZYFUSE_ASSERT(cond, msg)                                                                                     \
  do {                                                                                                                 \
    if (!(cond)) {                                                                                                     \
      std::fprintf(stderr, "lazyfuse internal error at %s:%d: %s (%s)\n", __FILE__, __LINE__, msg, #cond);             \
      std::abort();                                                                                                    \
    }                                                                                                                  \
  } while (0)
