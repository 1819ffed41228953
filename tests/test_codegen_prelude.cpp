// The pruned prelude: codegen/FunctionLibrary.h splits a text of functions into declarations and selects what a
// kernel uses, transitively; generated kernels carry only the op semantics they call.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CodeWriter.h"
#include "codegen/CudaPrinter.h"
#include "codegen/FunctionLibrary.h"
#include "codegen/Lower.h"
#include "graph/Ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace lazyfuse;
using codegen::FunctionLibrary;
using lazyfuse::detail::graph_node;

namespace {

const char* kLibrary = R"(
// a comment line (dropped, even with a parenthesis: f(x))
LD int lf_a(int x) { return x + 1; } LD float lf_a(float x) { return x + 1; }
LD int lf_b(int x) {
  if (x > 0) { return lf_a(x); }
  return 0;
}
template <class T> LD T lf_c();
template <> LD int lf_c<int>() { return lf_b(2); }
template <class T> LD T lf_d(T x) { return lf_c<T>() + x; }
LD int lf_unused(int x) { return lf_unused2(x); }
LD int lf_unused2(int x) { return x; }
struct lf_e { int v; };
)";

codegen::LoweredKernel lowered_last(const Array& result) {
  auto plans = fusion::partition({graph_node(result)}, {});
  for (std::size_t p = 0; p + 1 < plans.size(); ++p) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  return codegen::lower(plans.back());
}

} // namespace

TEST(CodegenPrelude, SelectsWhatASourceUsesWithItsDependenciesInLibraryOrder) {
  const FunctionLibrary lib(kLibrary);
  // lf_a twice, lf_b, lf_c twice, lf_d, lf_unused, lf_unused2, the struct lf_e.
  EXPECT_EQ(lib.size(), 9u);
  // lf_d needs lf_c (both declarations), which needs lf_b, which needs lf_a (both overloads).
  EXPECT_EQ(lib.select_names("x = lf_d<int>(3);"), (std::vector<std::string>{"lf_a", "lf_b", "lf_c", "lf_d"}));
  const std::string text = lib.select("x = lf_d<int>(3);");
  EXPECT_EQ(text, "LD int lf_a(int x) { return x + 1; }\n"
                  "LD float lf_a(float x) { return x + 1; }\n"
                  "LD int lf_b(int x) {\n  if (x > 0) { return lf_a(x); }\n  return 0;\n}\n"
                  "template <class T> LD T lf_c();\n"
                  "template <> LD int lf_c<int>() { return lf_b(2); }\n"
                  "template <class T> LD T lf_d(T x) { return lf_c<T>() + x; }\n");
  EXPECT_EQ(lib.select_names("lf_a(1) + lf_unused(2)"), (std::vector<std::string>{"lf_a", "lf_unused", "lf_unused2"}));
  // Names that are not functions of the library (types, other identifiers, the library's comment) select nothing.
  EXPECT_EQ(lib.select("lf_vec<float> lf_x; f(x); lf_ax(1);"), "");
  EXPECT_EQ(lib.select("lf_e e;"), "struct lf_e { int v; };\n");
  EXPECT_EQ(lib.select(""), "");
}

// Every op of the table and every reduction finds its functions in graph/OpMath.inc as the kernels see it.
TEST(CodegenPrelude, EveryOpAndReductionHasItsFunctions) {
  const FunctionLibrary& ops = codegen::op_library();
  auto expect_defined = [&](const std::string& name) {
    const std::string text = ops.select(name + "(x)");
    EXPECT_NE(text.find(" " + name + "("), std::string::npos) << name << " is not in the op library";
  };
  const std::vector<std::string> elementwise = {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) "lf_" #name,
#define LAZYFUSE_BINARY(Enum, name, rule, cost) "lf_" #name,
#include <lazyfuse/ops.def>

  };
  EXPECT_GT(elementwise.size(), 50u);
  for (const auto& name : elementwise) expect_defined(name);
  for (int k = 0; k < graph::kNumReduceOps; ++k) {
    const std::string name = "lf_" + std::string(graph::name_of(graph::ReduceOp(k)));
    EXPECT_NE(ops.select(name + "_identity<float>()").find(name + "_identity"), std::string::npos) << name;
    const std::string step = graph::is_arg(graph::ReduceOp(k)) ? "_better" : "_combine";
    EXPECT_NE(ops.select(name + step + "(a, b)").find(name + step), std::string::npos) << name;
  }
  // Integer powers use lf_ipow, sums lf_add: found from the text, not listed by hand.
  const auto power = ops.select_names("lf_power(a, b)");
  EXPECT_NE(std::find(power.begin(), power.end(), "lf_ipow"), power.end());
  const auto sum = ops.select_names("lf_sum_combine(a, b)");
  EXPECT_NE(std::find(sum.begin(), sum.end(), "lf_add"), sum.end());
}

// A kernel's prelude holds the op functions its body calls and no others, and the device library's functions only
// where it reduces over a block or folds partials.
TEST(CodegenPrelude, KernelsCarryOnlyTheFunctionsTheyCall) {
  auto x = asarray(std::vector<float>(1024, 1.5f), {1024});
  const std::string chain = codegen::render_cuda(lowered_last(sin(x) * cos(x) + x).ir);
  for (const char* used : {"lf_sin(float x)", "lf_cos(float x)", "lf_multiply(float a", "lf_add(float a"})
    EXPECT_NE(chain.find(used), std::string::npos) << used;
  for (const char* unused : {"lf_tan(", "lf_atan2(", "lf_cast", "lf_power(", "lf_block_reduce", "lf_sum_identity"})
    EXPECT_EQ(chain.find(unused), std::string::npos) << unused;

  auto m = asarray(std::vector<float>(300 * 64, 1.5f), {300, 64});
  const std::string rows = codegen::render_cuda(lowered_last(sum(m, 1)).ir);
  for (const char* used :
       {"lf_sum_identity()", "lf_sum_combine(T a", "lf_add(float a", "lf_block_reduce(S s", "lf_shfl_down(T v"})
    EXPECT_NE(rows.find(used), std::string::npos) << used;
  for (const char* unused : {"lf_sin(", "lf_load_partial", "lf_argmax_better", "lf_prod_combine"})
    EXPECT_EQ(rows.find(unused), std::string::npos) << unused;
}

// The printers' writer: lines at the current indentation, raised by indent() and block() for their scope;
// directives at column 0.
TEST(CodegenPrelude, CodeWriterIndentsByScope) {
  codegen::CodeWriter w(2);
  w.line("int a = ", 1, ";");
  {
    auto loop = w.block("for (int i = 0; i < ", 4, "; ++i)");
    w.directive("#pragma unroll");
    {
      auto more = w.indent(4);
      w.line("deeper();");
    }
    w.line("a += i;");
  }
  w.text("verbatim\n").line("done();");
  EXPECT_EQ(w.str(), "  int a = 1;\n"
                     "  for (int i = 0; i < 4; ++i) {\n"
                     "#pragma unroll\n"
                     "        deeper();\n"
                     "    a += i;\n"
                     "  }\n"
                     "verbatim\n"
                     "  done();\n");
}
