// What every example's main shares: an error a user can meet (no GPU under LAZYFUSE_BACKEND=cuda, a bad shape,
// running out of memory) ends the program with one line on stderr and exit status 1, never with
// std::terminate's abort and core dump.
#pragma once

#include <lazyfuse/error.hpp>

#include <cstdio>
#include <exception>

namespace examples {

/// Returns body(argc, argv), or 1 after printing "error: <what>" to stderr when it throws.
template <class Body> int run_example(int argc, char** argv, Body&& body) {
  try {
    return body(argc, argv);
  } catch (const lazyfuse::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (const std::exception& e) {
    // Not lazyfuse's own (std::bad_alloc from a host vector, say): say so, since the message may be terse.
    std::fprintf(stderr, "error: %s (a C++ standard library exception)\n", e.what());
  }
  return 1;
}

} // namespace examples
