// Built against an installed lazyfuse by tests/install_consumer/check.cmake: the public headers and
// lazyfuse::lazyfuse must be enough.
#include <lazyfuse/runtime.hpp>

#include <cstdio>

int main() {
  const auto b = lazyfuse::backend();
  std::printf("lazyfuse backend: %s\n", b == lazyfuse::Backend::Cuda ? "cuda" : "cpu");
  return 0;
}
