// Built against an installed lazyfuse by tests/install_consumer/check.cmake: the public headers (with their detail/
// headers) and lazyfuse::lazyfuse must be enough to build and run an expression.
#include <lazyfuse/lazyfuse.hpp>

#include <cstdio>
#include <iostream>
#include <string>

int main() {
  using namespace lazyfuse;
  const auto b = backend();
  std::printf("lazyfuse backend: %s\n", b == Backend::Cuda ? "cuda" : "cpu");
  Array x = asarray<std::int32_t>({1, 2, 3});
  Array y = (x << 2) + 1;
  Array r = sqrt(y.astype(DType::Float64)) >= 3.0;
  std::cout << y << " " << r << "\n";
  if (to_string(y) != "[ 5,  9, 13]" || to_string(r) != "[False,  True,  True]") {
    std::printf("install_consumer: wrong values\n");
    return 1;
  }
  return 0;
}
