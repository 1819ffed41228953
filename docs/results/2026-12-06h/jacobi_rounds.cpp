// Session 35's experiment: where bench_loops' BM_JacobiSolver (2048^2, 100 steps, a norm read every 10) spends the
// time it takes beyond 100 evaluated steps. Variants, each the median of 7 solves after 2 warm-up solves:
//   item   the benchmark: every 10 steps the norm is read on the host (item(): a wait for the device)
//   eval   the same, the norm evaluated and not read (no wait: the host runs ahead), one wait at the end
//   step   100 steps, each evaluated and waited for
//   evalstep  every step evaluated (not waited for), the norm read every 10 steps: what evaluating the steps as
//          they are recorded would give
// each with CUDA graph replays on (LAZYFUSE_CUDA_GRAPH_KERNELS=2, the default) and off (0). For `item`, the host's
// time recording the steps and the time inside item() are summed over the solve. A second argument `trace` runs
// only the default `item` solve, 3 times (for nsys).
//   build: g++ -std=c++20 -O2 -I include jacobi_rounds.cpp -L<libs> -llazyfuse ...   (see run1.sh)
#include <lazyfuse/lazyfuse.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace lazyfuse;
using Clock = std::chrono::steady_clock;

namespace {

Array jacobi_step(const Array& u, const Array& h2f) {
  const Slice in = slice(1, -1);
  return u.at(in, in).set(0.25f * (u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(0, -2)) +
                                   u(in, slice(2, none)) + h2f(in, in)));
}

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Solve {
  double total = 0, record = 0, check = 0;
};

Solve solve(const Array& u0, const Array& f, const std::string& mode) {
  Solve s;
  const auto t0 = Clock::now();
  Array u = u0;
  float norm = 0;
  for (int k = 1; k <= 100; ++k) {
    const auto a = Clock::now();
    Array next = jacobi_step(u, f);
    const auto b = Clock::now();
    s.record += seconds(a, b);
    if (mode == "step") {
      next.eval();
      lazyfuse::sync();
    } else if (mode == "evalstep") {
      next.eval();
      if (k % 10 == 0) norm += linalg::norm(next - u).item<float>();
    } else if (k % 10 == 0) {
      Array r = linalg::norm(next - u);
      if (mode == "item")
        norm += r.item<float>();
      else
        r.eval();
      s.check += seconds(b, Clock::now());
    }
    u = next;
  }
  u.eval();
  lazyfuse::sync();
  s.total = seconds(t0, Clock::now());
  if (norm < 0) std::printf("impossible\n");
  return s;
}

} // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 2048;
  const Array u0 = random::uniform(0.0, 1.0, {n, n}, DType::Float32).eval();
  const Array f = random::uniform(0.0, 1.0, {n, n}, DType::Float32).eval();
  std::printf("n=%lld backend=%s\n", (long long)n, backend() == Backend::Cuda ? "cuda" : "cpu");
  if (argc > 2 && std::string(argv[2]) == "trace") {
    for (int r = 0; r < 3; ++r) std::printf("item solve %.1f us\n", solve(u0, f, "item").total * 1e6);
    return 0;
  }
  for (const char* graphs : {"2", "0"}) {
    config::set("LAZYFUSE_CUDA_GRAPH_KERNELS", graphs);
    for (const std::string mode : {"item", "eval", "step", "evalstep"}) {
      std::vector<Solve> runs;
      for (int r = 0; r < 9; ++r) runs.push_back(solve(u0, f, mode));
      runs.erase(runs.begin(), runs.begin() + 2);
      std::sort(runs.begin(), runs.end(), [](const Solve& a, const Solve& b) { return a.total < b.total; });
      const Solve& m = runs[runs.size() / 2];
      std::printf("graphs=%s %-4s total %8.1f us (min %8.1f)  per step %6.2f us  recording %6.1f us  checks %7.1f us\n",
                  graphs, mode.c_str(), m.total * 1e6, runs.front().total * 1e6, m.total * 1e4, m.record * 1e6,
                  m.check * 1e6);
    }
  }
}
