// A two-layer perceptron, forward and training, on matrix products with their epilogues folded in:
//   forward:  y = gelu(x @ w1 + b1) @ w2 + b2          (erf GELU: one library call + one kernel, then one call)
//   training: h = maximum(x @ w1 + b1, 0), y = h @ w2 + b2, mean squared error against a teacher's outputs, and
//             plain gradient descent with the gradients written out (dy @ w2.T, h.T @ dy, sums over the batch).
// The forward pass is checked against a double-precision host loop; training must cut the loss at least tenfold.
// Prints the library calls (cuBLASLt on a GPU, BLAS on the CPU) and generated kernels of each step.
//
// usage: mlp [batch=256] [steps=200]
#include <lazyfuse/lazyfuse.hpp>

#include "common.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace lazyfuse;

namespace {

constexpr std::int64_t kIn = 64, kHidden = 128, kOut = 16;

std::vector<float> normal_values(std::size_t n, float scale, std::mt19937& gen) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(gen);
  return v;
}

struct Counts {
  std::uint64_t library, kernels;
};
Counts counts() {
  const auto s = kernel_cache_stats();
  return {s.library_calls, s.kernels_launched};
}

int run(int argc, char** argv) {
  const std::int64_t batch = argc > 1 ? std::atoll(argv[1]) : 256;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  if (batch < 1 || steps < 1) {
    std::fprintf(stderr, "usage: mlp [batch>=1] [steps>=1]\n");
    return 2;
  }
  std::printf("mlp: %lld x %lld -> %lld -> %lld float32, on the %s\n", (long long)batch, (long long)kIn,
              (long long)kHidden, (long long)kOut, backend() == Backend::Cuda ? "CUDA GPU" : "CPU backend");
  std::mt19937 gen(15);
  const auto hx = normal_values(std::size_t(batch * kIn), 1.0f, gen);
  const auto hw1 = normal_values(std::size_t(kIn * kHidden), 1.0f / std::sqrt(float(kIn)), gen);
  const auto hb1 = normal_values(std::size_t(kHidden), 0.1f, gen);
  const auto hw2 = normal_values(std::size_t(kHidden * kOut), 1.0f / std::sqrt(float(kHidden)), gen);
  const auto hb2 = normal_values(std::size_t(kOut), 0.1f, gen);
  const auto hteacher = normal_values(std::size_t(kIn * kOut), 1.0f / std::sqrt(float(kIn)), gen);
  Array x = asarray(hx, {batch, kIn}), w1 = asarray(hw1, {kIn, kHidden}), b1 = asarray(hb1);
  Array w2 = asarray(hw2, {kHidden, kOut}), b2 = asarray(hb2);

  // ---- forward with the exact GELU, against a host loop in double ----
  const Counts f0 = counts();
  Array y = matmul(gelu(matmul(x, w1) + b1), w2) + b2;
  y.eval();
  const Counts f1 = counts();
  const auto got = y.get<float>();
  double worst = 0;
  std::vector<double> h(kHidden);
  for (std::int64_t i = 0; i < batch; ++i) {
    for (std::int64_t j = 0; j < kHidden; ++j) {
      double s = hb1[std::size_t(j)];
      for (std::int64_t l = 0; l < kIn; ++l)
        s += double(hx[std::size_t(i * kIn + l)]) * hw1[std::size_t(l * kHidden + j)];
      h[std::size_t(j)] = s / 2 * std::erfc(-s / std::sqrt(2.0));
    }
    for (std::int64_t j = 0; j < kOut; ++j) {
      double s = hb2[std::size_t(j)];
      for (std::int64_t l = 0; l < kHidden; ++l) s += h[std::size_t(l)] * hw2[std::size_t(l * kOut + j)];
      worst = std::max(worst, std::abs(got[std::size_t(i * kOut + j)] - s) / (1e-4 + 1e-4 * std::abs(s)));
    }
  }
  const bool forward_ok = worst <= 1;
  std::printf("  forward gelu(x @ w1 + b1) @ w2 + b2: %llu library calls, %llu kernels; %s (err/tol %.1e)\n",
              (unsigned long long)(f1.library - f0.library), (unsigned long long)(f1.kernels - f0.kernels),
              forward_ok ? "ok" : "WRONG", worst);

  // ---- training with ReLU: the teacher is a linear map, the loss the mean squared error ----
  Array target = matmul(x, asarray(hteacher, {kIn, kOut}));
  target.eval();
  const float lr = 0.2f, scale = 2.0f / float(batch * kOut);
  double first_loss = 0, loss = 0;
  Counts per_step{0, 0};
  for (int step = 0; step < steps; ++step) {
    const Counts s0 = counts();
    Array hidden = maximum(matmul(x, w1) + b1, 0.0f); // one library call: the RELU_BIAS epilogue
    Array out = matmul(hidden, w2) + b2;              // one library call: the BIAS epilogue
    Array err = out - target;
    Array dy = err * scale;
    Array dh = matmul(dy, w2.transpose()) * (hidden > 0.0f);
    Array nw1 = w1 - lr * matmul(x.transpose(), dh), nb1 = b1 - lr * sum(dh, 0);
    Array nw2 = w2 - lr * matmul(hidden.transpose(), dy), nb2 = b2 - lr * sum(dy, 0);
    Array l = mean(square(err));
    eval(nw1, nb1, nw2, nb2, l);
    w1 = nw1, b1 = nb1, w2 = nw2, b2 = nb2;
    loss = l.item<float>();
    if (step == 0) first_loss = loss;
    const Counts s1 = counts();
    per_step = {s1.library - s0.library, s1.kernels - s0.kernels};
    if (step % 50 == 0 || step == steps - 1) std::printf("  step %4d: loss %.6f\n", step, loss);
  }
  std::printf("  one training step: %llu library calls, %llu kernels\n", (unsigned long long)per_step.library,
              (unsigned long long)per_step.kernels);
  const bool training_ok = std::isfinite(loss) && loss < first_loss / 10;
  std::printf("  loss %.6f -> %.6f: %s\n", first_loss, loss, training_ok ? "ok" : "did not fall tenfold");
  const bool ok = forward_ok && training_ok;
  std::printf("%s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  return examples::run_example(argc, argv, run);
}
