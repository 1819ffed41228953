#include <iostream>
#include <lazyfuse/lazyfuse.hpp>
using namespace lazyfuse;
int main() {
  auto x = asarray<float>({1.f, 2.f, 3.f, 4.f});
  auto y = sqrt(abs(sin(x) * cos(x) + x * x * 0.5 - exp(-x * x)));
  std::cout << y << "\n";
  auto m = arange(12).reshape({3, 4});
  std::cout << m << "\n" << m.T() << "\n" << m(slice(none, none, -1), 1) << "\n";
  std::cout << concatenate({m, m * 2}, 1) << "\n";
  std::cout << pad(m, {{1, 1}}, -1) << "\n";
  std::cout << roll(m, 1, 1) << "\n" << eye(3) << "\n" << linspace(0, 1, 5) << "\n";
  auto z = m.at(1, slice(1, 3)).set(asarray<std::int64_t>({100, 200}));
  std::cout << z << "\n" << m << "\n";
  auto s = kernel_cache_stats();
  std::cout << "launched " << s.kernels_launched << " misses " << s.misses << "\n";
}
