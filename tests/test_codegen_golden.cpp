// Golden kernels: the CUDA source the printer generates for a fixed set of expressions, compared byte for byte
// with tests/golden/kernels/*.cu. A refactor of lowering or printing must leave these unchanged; a change that
// alters kernels on purpose updates the files in the same commit, whose message explains the diff:
//
//   LAZYFUSE_TEST_UPDATE_GOLDEN=1 build/default/tests/test_codegen_golden   (then review `git diff tests/golden`)
//
// The op prelude (the functions of graph/OpMath.inc the kernel uses, as the host preprocessor expands them) is
// replaced by one marker line naming those functions, so that a file shows what is particular to its kernel and
// does not depend on the preprocessor's spacing. Each file holds every plan partitioning gives for its expression, in
// order; earlier plans are materialized before later ones are lowered, as the runtime does.
#include <lazyfuse/lazyfuse.hpp>

#include "api/ApiAccess.h"
#include "codegen/CudaPrinter.h"
#include "codegen/FunctionLibrary.h"
#include "codegen/KernelAbi.h"
#include "codegen/Lower.h"
#include "graph/DTypeVisit.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

using namespace lazyfuse;
using lazyfuse::detail::graph_node;

namespace {

// Values do not reach kernel text; shapes, dtypes and the structure do.
Array input(Shape shape, DType t) {
  std::vector<double> v(std::size_t(graph::shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + double(i % 7) * 0.25;
  return asarray(v, shape).astype(t).eval();
}

std::string render_plans(const Array& result) {
  std::ostringstream os;
  auto plans = fusion::partition({graph_node(result)}, {});
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const auto kernel = codegen::lower(plans[p]);
    std::string src = codegen::render_cuda(kernel.ir);
    const std::string prelude = codegen::op_library().select(src);
    std::string marker = "// <the op prelude: graph/OpMath.inc's";
    for (const auto& name : codegen::op_library().select_names(src)) marker += " " + name;
    const auto at = src.find(prelude);
    if (at != std::string::npos) src.replace(at, prelude.size(), marker + ">\n");
    os << "// ===== plan " << p << " of " << plans.size() << ": " << plans[p].reason << "\n" << src << "\n";
    if (p + 1 < plans.size()) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
  }
  return os.str();
}

struct GoldenCase {
  const char* name;
  std::function<Array()> build;
};

Array chain(const Array& x, const Array& y) {
  return sqrt(abs(sin(x) * cos(y) + x * y * 0.5 - exp(-x * x)));
}

std::vector<GoldenCase> golden_cases() {
  return {
      {"chain_f32", [] { return chain(input({4096}, DType::Float32), input({4096}, DType::Float32)); }},
      {"chain_f64", [] { return chain(input({4096}, DType::Float64), input({4096}, DType::Float64)); }},
      {"int32_arithmetic",
       [] {
         auto x = input({1000}, DType::Int32) * 3, y = input({1000}, DType::Int32) + 2;
         return where(x > y, floor_divide(x, y), remainder(x, y) - x * y);
       }},
      {"casts_and_logic",
       [] {
         auto x = input({64, 64}, DType::Float32);
         auto b = (x > 1.0f) && !(x < 0.75f);
         return b.astype(DType::Float64) + x.astype(DType::Int64).astype(DType::Float64);
       }},
      {"heat_step",
       [] {
         auto u = input({64, 64}, DType::Float32);
         auto in = slice(1, -1);
         auto c = u(in, in);
         auto lap =
             u(slice(0, -2), in) + u(slice(2, none), in) + u(in, slice(2, none)) + u(in, slice(0, -2)) - 4.0f * c;
         return u.at(in, in).set(c + 0.1f * lap);
       }},
      {"transposed_add",
       [] {
         auto m = input({96, 64}, DType::Float32);
         return m(slice(0, 64)).T() + m(slice(32, none));
       }},
      {"transposed_wide_tiles", // output rows of 70 float32, off 32-byte sectors: tiles of 64 x 128
       [] {
         return input({70, 300}, DType::Float32).T() * 0.5f + input({300, 70}, DType::Float32);
       }},
      {"roll_pad_concatenate",
       [] {
         auto x = input({50}, DType::Float64);
         return concatenate({roll(x, 3), pad(x(slice(none, none, 2)), {{2, 3}}, 1.5), flip(x)});
       }},
      {"broadcast_row_and_column",
       [] {
         auto m = input({128, 96}, DType::Float32);
         return m * input({128, 1}, DType::Float32) + input({96}, DType::Float32);
       }},
      {"softmax_rows", // rows of a length not a whole number of vectors: the row cache in shared memory
       [] {
         auto m = input({300, 66}, DType::Float32);
         auto e = exp(m - max(m, 1, true));
         return e / sum(e, 1, true);
       }},
      {"softmax_rows_in_registers", // a whole number of the block's vectors: the row cache in registers
       [] {
         auto m = input({300, 2048}, DType::Float32);
         auto e = exp(m - max(m, 1, true));
         return e / sum(e, 1, true);
       }},
      {"layer_norm",
       [] {
         auto m = input({400, 50}, DType::Float32);
         return (m - mean(m, 1, true)) / sqrt(var(m, 1, 0, true) + 1e-5f) * input({50}, DType::Float32);
       }},
      {"layer_norm_in_registers_partial", // rows ending inside the register path's last trip
       [] {
         auto m = input({400, 1000}, DType::Float32);
         return (m - mean(m, 1, true)) / sqrt(var(m, 1, 0, true) + 1e-5f) * input({1000}, DType::Float32);
       }},
      {"column_sum_tall",
       [] {
         return sum(input({4096, 64}, DType::Float32), 0);
       }},
      {"column_var_dependent",
       [] {
         return var(input({4096, 64}, DType::Float32), 0);
       }},
      {"full_sum_of_squares", [] { return sum(square(input({100000}, DType::Float32) - 1.0f)); }},
      {"full_reduction_into_other_shape",
       [] {
         auto x = input({1000}, DType::Float64);
         return x(slice(1, none)) + sum(x);
       }},
      {"row_argmax_and_column_argmin",
       [] {
         auto m = input({300, 40}, DType::Float32);
         return argmax(m, 1) + argmin(m.T(), 0);
       }},
      {"logsumexp_rows",
       [] {
         return logsumexp(input({256, 102}, DType::Float64), 1);
       }},
      {"any_all_count",
       [] {
         auto m = input({260, 33}, DType::Float32);
         return any(m > 1.5f, 1).astype(DType::Int64) + all(m > 0.6f, 1) + count_nonzero(m > 1.0f, 1);
       }},
      {"int64_sum_and_product",
       [] {
         auto m = input({20, 30}, DType::Int64);
         return sum(m, 0) * prod(m(slice(none, 3)), 0);
       }},
      {"min_max_full", [] { return max(input({5000}, DType::Float32)) - min(input({5000}, DType::Float32)); }},
      {"strided_and_reversed_views",
       [] {
         auto m = input({64, 64}, DType::Float64);
         return m(slice(none, none, -2), slice(1, none, 3)) * m(slice(0, 32), slice(0, 21));
       }},
  };
}

std::string golden_path(const std::string& name) {
  return std::string(LAZYFUSE_TEST_SOURCE_DIR) + "/golden/kernels/" + name + ".cu";
}

bool updating() {
  const char* v = std::getenv("LAZYFUSE_TEST_UPDATE_GOLDEN");
  return v && std::string(v) == "1";
}

} // namespace

TEST(CodegenGolden, KernelsMatchTheGoldenFiles) {
  int compared = 0;
  for (const auto& c : golden_cases()) {
    SCOPED_TRACE(c.name);
    const std::string text = render_plans(c.build());
    const std::string path = golden_path(c.name);
    if (updating()) {
      std::ofstream(path, std::ios::binary) << text;
      continue;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "no golden file " << path << " (write it with LAZYFUSE_TEST_UPDATE_GOLDEN=1)";
    std::stringstream want;
    want << in.rdbuf();
    if (want.str() != text) {
      std::size_t line = 1, k = 0;
      const std::string& w = want.str();
      while (k < w.size() && k < text.size() && w[k] == text[k]) line += w[k++] == '\n';
      ADD_FAILURE() << path << " differs from the generated kernels from line " << line
                    << " on; if the change is intended, rerun with LAZYFUSE_TEST_UPDATE_GOLDEN=1 and commit the "
                       "files with an explanation. Generated:\n"
                    << text;
    }
    ++compared;
  }
  if (updating()) GTEST_SKIP() << "golden files rewritten (LAZYFUSE_TEST_UPDATE_GOLDEN=1): nothing was compared";
  EXPECT_EQ(compared, int(golden_cases().size()));
}

// The kernel text depends on the graph's structure alone: the same expressions built twice, over other buffers,
// give the same files (so that the comparison above is meaningful and kernel names are stable).
TEST(CodegenGolden, RenderingDoesNotDependOnBuffersOrBuildOrder) {
  auto cases = golden_cases();
  std::vector<std::string> first;
  for (const auto& c : cases) first.push_back(render_plans(c.build()));
  for (std::size_t k = cases.size(); k-- > 0;) EXPECT_EQ(render_plans(cases[k].build()), first[k]) << cases[k].name;
}

// The kernel's ABI (codegen/KernelAbi.h): for every golden kernel, the signature the printer wrote and the arguments
// the executor packs agree parameter by parameter: the same count and order, each value as wide as its C type,
// each holding what the parameter's name says.
TEST(CodegenGolden, PrintedSignaturesAndPackedArgumentsAgree) {
  int kernels = 0, split_kernels = 0;
  for (const auto& c : golden_cases()) {
    SCOPED_TRACE(c.name);
    auto plans = fusion::partition({graph_node(c.build())}, {});
    for (std::size_t p = 0; p < plans.size(); ++p) {
      const auto kernel = codegen::lower(plans[p]);
      const auto& ir = kernel.ir;
      const std::string src = codegen::render_cuda(ir);
      const std::string head = ir.name + "(";
      const auto open = src.find(head), close = src.find(") {", open);
      ASSERT_NE(open, std::string::npos);
      ASSERT_NE(close, std::string::npos);
      std::vector<std::string> printed;
      const std::string list = src.substr(open + head.size(), close - open - head.size());
      for (std::size_t at = 0;;) {
        const auto comma = list.find(", ", at);
        printed.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 2;
      }
      // Distinct, recognizable values for every argument, so that a swapped pair shows.
      std::vector<void*> outputs;
      for (std::size_t k = 0; k < ir.outputs.size(); ++k) outputs.push_back(reinterpret_cast<void*>(0x7000 + 16 * k));
      codegen::SplitArgs split{reinterpret_cast<void*>(0x9000), reinterpret_cast<void*>(0xa000), 7};
      auto packed = codegen::pack_kernel_args(ir, kernel.args, outputs, &split);
      const auto abi = codegen::kernel_abi(ir);
      ASSERT_EQ(printed.size(), abi.size());
      ASSERT_EQ(packed.count(), abi.size());
      const std::size_t index_bytes = ir.index32 ? 4 : 8;
      for (std::size_t k = 0; k < abi.size(); ++k) {
        SCOPED_TRACE(printed[k]);
        EXPECT_EQ(printed[k], codegen::abi_declaration(ir, abi[k]));
        const std::string name = printed[k].substr(printed[k].rfind(' ') + 1);
        EXPECT_EQ(name, codegen::abi_name(abi[k]));
        // The width of the printed type, read from the text alone.
        const std::string type = printed[k].substr(0, printed[k].rfind(' '));
        std::size_t width = 0;
        if (type.find('*') != std::string::npos) {
          width = sizeof(void*);
        } else if (type == "const idx_t") {
          width = index_bytes;
        } else if (type == "const lf_divisor") {
          width = ir.index32 ? 8 : 16;
        } else {
          for (DType t : {
// clang-format off
#define LAZYFUSE_DTYPE(Enum, ...) DType::Enum,
#include <lazyfuse/dtypes.def>
                   // clang-format on
               })
            if (type == std::string("const ") + codegen::cuda_type(t)) width = itemsize(t);
        }
        EXPECT_EQ(packed.size_of(k), width);
        EXPECT_EQ(codegen::abi_size(ir, abi[k]), width);
        // The value: pointers by role and slot, n, parameters by slot.
        auto as_int = [&]() -> std::int64_t {
          if (packed.size_of(k) == 4) {
            std::int32_t v;
            std::memcpy(&v, packed.data(k), 4);
            return v;
          }
          std::int64_t v;
          std::memcpy(&v, packed.data(k), 8);
          return v;
        };
        const auto slot = std::size_t(abi[k].slot);
        switch (abi[k].role) {
        case codegen::AbiRole::Input: EXPECT_EQ(as_int(), std::int64_t(kernel.args.inputs[slot])); break;
        case codegen::AbiRole::Output: EXPECT_EQ(as_int(), std::int64_t(outputs[slot])); break;
        case codegen::AbiRole::Count: EXPECT_EQ(as_int(), kernel.args.n); break;
        case codegen::AbiRole::Param: {
          const auto& pv = kernel.args.params[slot];
          const DType t = ir.params[slot].dtype;
          if (ir.params[slot].is_index) {
            EXPECT_EQ(as_int(), pv.i);
            break;
          }
          graph::visit_dtype(t, [&]<class T>() {
            T v;
            std::memcpy(&v, packed.data(k), sizeof(T));
            EXPECT_EQ(v, is_floating(t) ? T(pv.f) : T(pv.i));
          });
          break;
        }
        case codegen::AbiRole::Divisor: {
          // The constants of the parameter's value, which divide as the kernel will.
          const std::int64_t d = kernel.args.params[slot].i;
          EXPECT_TRUE(ir.params[slot].is_index);
          for (std::int64_t n : {std::int64_t(0), d - 1, d, 7 * d + 3, std::int64_t(kernel.args.n) - 1}) {
            if (n < 0) continue;
            if (ir.index32) {
              codegen::FastDivisor32 fd;
              std::memcpy(&fd, packed.data(k), sizeof fd);
              EXPECT_EQ(fd.divide(std::uint32_t(n)), std::uint32_t(n / d)) << n << " / " << d;
            } else {
              codegen::FastDivisor64 fd;
              std::memcpy(&fd, packed.data(k), sizeof fd);
              EXPECT_EQ(fd.divide(std::uint64_t(n)), std::uint64_t(n / d)) << n << " / " << d;
            }
          }
          break;
        }
        case codegen::AbiRole::SplitPartials: EXPECT_EQ(as_int(), 0x9000); break;
        case codegen::AbiRole::SplitTickets: EXPECT_EQ(as_int(), 0xa000); break;
        case codegen::AbiRole::SplitCount: EXPECT_EQ(as_int(), 7); break;
        default: ADD_FAILURE() << "a parameter role the test does not know"; break;
        }
      }
      ++kernels;
      split_kernels += codegen::is_split(ir.schedule);
      if (p + 1 < plans.size()) detail::ApiAccess::adopt(plans[p].outputs[0]).eval();
    }
  }
  EXPECT_GE(kernels, int(golden_cases().size()));
  EXPECT_GE(split_kernels, 2) << "the golden set should hold split kernels (three more parameters)";
}
