// Scratch (not built; run from examples/ as in the eighteenth session): registers of generated kernels against estimates.
#include "api/ApiAccess.h"
#include "codegen/Analyze.h"
#include "codegen/CudaPrinter.h"
#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include <cstdio>
#include <fstream>
#include <functional>
#include <lazyfuse/lazyfuse.hpp>
#include <map>
using namespace lazyfuse;
using lazyfuse::detail::graph_node;

static void emit(const std::string& name, const Array& root) {
  auto plans = fusion::partition({graph_node(root)}, {});
  if (plans.size() != 1) {
    std::printf("%s: %zu plans\n", name.c_str(), plans.size());
  }
  auto k = codegen::lower(plans.back());
  codegen::analyze(k.ir);
  const auto& code = k.ir.code;
  std::vector<int> last(code.size(), -1);
  for (int i = 0; i < int(code.size()); ++i)
    for (int o : {code[i].a, code[i].b, code[i].c})
      if (o >= 0) last[o] = i;
  int live = 0, peak = 0, peak_words = 0, words = 0;
  std::vector<std::vector<int>> dying(code.size());
  for (int i = 0; i < int(code.size()); ++i)
    if (last[i] >= 0) dying[last[i]].push_back(i);
  for (int i = 0; i < int(code.size()); ++i) {
    if (last[i] >= 0) {
      ++live;
      words += itemsize(code[i].dtype) > 4 ? 2 : 1;
    }
    peak = std::max(peak, live);
    peak_words = std::max(peak_words, words);
    for (int d : dying[i]) {
      --live;
      words -= itemsize(code[d].dtype) > 4 ? 2 : 1;
    }
  }
  std::string src = codegen::render_cuda(k.ir);
  std::ofstream("/tmp/regs/" + name + ".cu") << src;
  std::printf("%s instrs=%zu inputs=%zu peak_live=%d peak_words=%d bytes=%zu\n", name.c_str(), code.size(),
              k.ir.inputs.size(), peak, peak_words, src.size());
}

int main() {
  const std::int64_t n = 1 << 20;
  std::vector<Array> xs;
  for (int k = 0; k < 48; ++k) xs.push_back(random::uniform(-1, 1, {n}, DType::Float32).eval());
  for (int k : {4, 8, 16, 32, 47}) { // k distinct inputs, products summed
    Array s = xs[0] * xs[1];
    for (int j = 2; j < k; ++j) s = s + xs[j] * xs[(j + 1) % k];
    emit("wide_inputs_" + std::to_string(k), s);
  }
  Array g = random::uniform(-1, 1, {1024, 1024}, DType::Float32).eval();
  for (int r : {1, 2, 3, 4, 6}) { // (2r+1)^2 stencil of shifted views
    Array s = g * 0.0f;
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) s = s + roll(roll(g, dy, 0), dx, 1) * float(1 + dy + 2 * dx);
    emit("stencil_r" + std::to_string(r), s);
  }
  for (int d : {16, 64, 128, 250}) { // deep chain of transcendental ops
    Array s = xs[0];
    for (int j = 0; j < d; ++j) s = (j % 3 == 0) ? sin(s) : (j % 3 == 1 ? s * 1.5f + xs[1] : exp(-s * s));
    emit("chain_" + std::to_string(d), s);
  }
  for (int k : {4, 16, 47}) { // many inputs each transcendental, then summed: values kept live
    Array s = sin(xs[0]);
    std::vector<Array> t;
    for (int j = 0; j < k; ++j) t.push_back(exp(xs[j]) * cos(xs[(j + 5) % 48]));
    for (int j = 0; j < k; ++j) s = s * t[j] + t[(j * 7) % k];
    emit("tangle_" + std::to_string(k), s);
  }
  for (int k : {4, 16, 40}) { // float64
    Array s = xs[0].astype(DType::Float64);
    for (int j = 1; j < k; ++j)
      s = s + xs[j].astype(DType::Float64) * log1p(abs(xs[(j + 3) % k].astype(DType::Float64)));
    emit("f64_" + std::to_string(k), s);
  }
}
