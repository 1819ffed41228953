// Scratch (not committed): where the 1,000-step update loop's time goes on the GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <lazyfuse/lazyfuse.hpp>
#include <vector>
using namespace lazyfuse;
using Clock = std::chrono::steady_clock;
static double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int main() {
  for (std::int64_t n : {std::int64_t(8), std::int64_t(1) << 20}) {
    for (int steps : {1, 1000}) {
      auto x0 = random::uniform(-1, 1, {n}, DType::Float32).eval();
      std::vector<double> rec, ev, wait, total;
      for (int rep = 0; rep < 25; ++rep) {
        lazyfuse::sync();
        auto t0 = Clock::now();
        Array x = x0;
        for (int k = 0; k < steps; ++k) x = x * 0.999f + 0.001f;
        auto t1 = Clock::now();
        x.eval();
        auto t2 = Clock::now();
        lazyfuse::sync();
        auto t3 = Clock::now();
        if (rep < 5) continue;
        rec.push_back(us(t0, t1));
        ev.push_back(us(t1, t2));
        wait.push_back(us(t2, t3));
        total.push_back(us(t0, t3));
      }
      std::printf("n=%lld steps=%d: record %.1f us, eval (host) %.1f us, wait %.1f us, total %.1f us\n", (long long)n,
                  steps, median(rec), median(ev), median(wait), median(total));
    }
  }
}
