// The LLVM CPU code generator (runtime/LlvmCodegen.h) against the interpreter, which defines the CPU results: the
// same kernel IR run both ways must give the same bits. Every unary and binary op of lazyfuse/ops.def on every type
// it is defined for, every cast, views (Coord, predicated loads), selects and scalar parameters, and fused programs
// built through the public API. Skips where the build has no LLVM (LAZYFUSE_LLVM=OFF), except the test that such a
// build refuses LAZYFUSE_CPU_CODEGEN=llvm with an Error.
#include "codegen/KernelIR.h"
#include "graph/HostOps.h"
#include "graph/Ops.h"
#include "runtime/CpuBackend.h"
#include "runtime/LlvmCodegen.h"
#include "runtime/ReduceHostFunctions.h"

#include <lazyfuse/lazyfuse.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace lf = lazyfuse;
namespace cg = lazyfuse::codegen;
namespace rt = lazyfuse::runtime;
using lf::DType;

namespace {

const std::vector<DType> kTypes = {
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) DType::Enum,
#include <lazyfuse/dtypes.def>
};

// Sets LAZYFUSE_CPU_CODEGEN for one scope.
struct Codegen {
  explicit Codegen(const char* mode) { lf::config::set("LAZYFUSE_CPU_CODEGEN", mode); }
  ~Codegen() { lf::config::reset("LAZYFUSE_CPU_CODEGEN"); }
};

#define SKIP_WITHOUT_LLVM()                                                                                            \
  if (!rt::llvm_codegen_built()) GTEST_SKIP() << "built without the LLVM code generator"

// Random bytes for n elements of t: every bit pattern (NaNs, infinities, subnormals, extremes), bool as 0 or 1.
std::vector<unsigned char> random_bytes(DType t, std::int64_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> bytes(std::size_t(n) * lf::itemsize(t));
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  if (t == DType::Bool)
    for (auto& b : bytes) b &= 1;
  // A quarter of the elements small integers as the type's values: the ordinary domain (exact results, zero, one).
  lf::graph::visit_opmath_type(t, [&]<class T>() {
    for (std::int64_t e = 0; e < n; e += 4) {
      const T v = lf::graph::opmath_value<T>(double(std::int64_t(rng() % 7) - 3), std::int64_t(rng() % 7) - 3, 0.5);
      std::memcpy(bytes.data() + std::size_t(e) * sizeof(T), &v, sizeof v);
    }
  });
  return bytes;
}

struct Buffers {
  std::vector<std::vector<unsigned char>> inputs, outputs;
};

// Runs `ir` over n elements with LAZYFUSE_CPU_CODEGEN=mode; returns the outputs' bytes.
std::vector<std::vector<unsigned char>> run(const char* mode, const cg::KernelIR& ir, const Buffers& in,
                                            std::vector<cg::ParamValue> params, std::int64_t n) {
  Codegen scope(mode);
  cg::KernelArgs args;
  for (const auto& b : in.inputs) args.inputs.push_back(b.data());
  std::vector<std::vector<unsigned char>> outputs;
  for (DType t : ir.outputs) outputs.emplace_back(std::size_t(n) * lf::itemsize(t), 0xAB);
  for (auto& o : outputs) args.outputs.push_back(o.data());
  args.params = std::move(params);
  args.n = n;
  rt::run_on_cpu(ir, args, 0);
  return outputs;
}

// True when the float (bits 32) or double (64) at p is a NaN.
bool is_nan_bits(const unsigned char* p, int bits) {
  if (bits == 32) {
    float f;
    std::memcpy(&f, p, 4);
    return f != f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d != d;
}

// The same bits, except that any two NaNs are equal: IEEE 754 leaves a NaN result's sign and payload open (which
// operand's NaN an x86 instruction passes on depends on the operand order a compiler picks; libm's floorf returns a
// signaling NaN unquieted, SSE4.1's roundss quiets it), and neither backend promises them.
bool same_value(DType t, const unsigned char* a, const unsigned char* b) {
  if (std::memcmp(a, b, lf::itemsize(t)) == 0) return true;
  auto nan = [&](const unsigned char* p, int bits) {
    if (bits != 16) return is_nan_bits(p, bits);
    std::uint16_t u;
    std::memcpy(&u, p, 2);
    return t == DType::Float16 ? (u & 0x7c00) == 0x7c00 && (u & 0x3ff) : (u & 0x7f80) == 0x7f80 && (u & 0x7f);
  };
  switch (t) {
  case DType::Float16:
  case DType::BFloat16: return nan(a, 16) && nan(b, 16);
  case DType::Float32: return nan(a, 32) && nan(b, 32);
  case DType::Float64: return nan(a, 64) && nan(b, 64);
  case DType::Complex64:
  case DType::Complex128: {
    const int bits = t == DType::Complex64 ? 32 : 64;
    const std::size_t half = lf::itemsize(t) / 2;
    for (std::size_t part : {std::size_t(0), half})
      if (std::memcmp(a + part, b + part, half) != 0 && !(nan(a + part, bits) && nan(b + part, bits))) return false;
    return true;
  }
  default: return false;
  }
}

// Element e of `bytes` in hex, most significant byte first.
std::string hex(const std::vector<unsigned char>& bytes, std::int64_t e, std::size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string text = "0x";
  for (std::size_t k = size; k-- > 0;) {
    const unsigned char b = bytes[std::size_t(e) * size + k];
    text += digits[b >> 4];
    text += digits[b & 15];
  }
  return text;
}

// Runs both ways and compares bit for bit; checks that the compiled code ran.
void expect_same_bits(const cg::KernelIR& ir, const Buffers& in, const std::vector<cg::ParamValue>& params,
                      std::int64_t n, const std::vector<std::string>& labels) {
  const auto interpreted = run("interpreter", ir, in, params, n);
  const auto before = rt::cpu_codegen_stats();
  const auto compiled = run("llvm", ir, in, params, n);
  const auto after = rt::cpu_codegen_stats();
  EXPECT_EQ(after.compiled + after.disk_hits + after.cache_hits,
            before.compiled + before.disk_hits + before.cache_hits + 1)
      << "the kernel was not compiled:\n"
      << cg::to_string(ir);
  ASSERT_EQ(interpreted.size(), compiled.size());
  for (std::size_t o = 0; o < compiled.size(); ++o) {
    const std::size_t size = lf::itemsize(ir.outputs[o]);
    for (std::int64_t e = 0; e < n; ++e)
      if (!same_value(ir.outputs[o], interpreted[o].data() + std::size_t(e) * size,
                      compiled[o].data() + std::size_t(e) * size)) {
        const std::string input =
            in.inputs.empty() ? "" : "input " + hex(in.inputs[0], e, lf::itemsize(ir.inputs[0].dtype)) + ", ";
        ADD_FAILURE() << labels[o] << ": element " << e << " differs between the interpreter and LLVM: " << input
                      << hex(interpreted[o], e, size) << " vs " << hex(compiled[o], e, size);
        break;
      }
  }
}

cg::Instr instr(cg::IrOp op, DType t, int a = -1, int b = -1, int c = -1, int slot = -1, std::int64_t imm = 0,
                std::uint8_t fn = 0) {
  cg::Instr in;
  in.op = op;
  in.dtype = t;
  in.a = a;
  in.b = b;
  in.c = c;
  in.slot = slot;
  in.imm = imm;
  in.fn = fn;
  return in;
}

int add(cg::KernelIR& ir, const cg::Instr& in) {
  ir.code.push_back(in);
  return int(ir.code.size()) - 1;
}
void store(cg::KernelIR& ir, int value) {
  add(ir, instr(cg::IrOp::Store, ir.code[std::size_t(value)].dtype, value, -1, -1, int(ir.outputs.size())));
  ir.outputs.push_back(ir.code[std::size_t(value)].dtype);
}

// The result type of unary op `op` on t, if the op table defines it (the interpreter's own test).
std::optional<DType> unary_result(lf::graph::UnaryOp op, DType t) {
  switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  case lf::graph::UnaryOp::Enum:                                                                                       \
    return lf::graph::visit_opmath_type(t, [&]<class T>() -> std::optional<DType> {                                    \
      if constexpr (requires(T x) { lazyfuse_opmath::lf_##name(x); })                                                  \
        return lf::graph::opmath_dtype<decltype(lazyfuse_opmath::lf_##name(T{}))>();                                   \
      else                                                                                                             \
        return std::nullopt;                                                                                           \
    });
#include <lazyfuse/ops.def>
  }
  return std::nullopt;
}
std::optional<DType> binary_result(lf::graph::BinaryOp op, DType t) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  case lf::graph::BinaryOp::Enum:                                                                                      \
    return lf::graph::visit_opmath_type(t, [&]<class T>() -> std::optional<DType> {                                    \
      if constexpr (requires(T x) { lazyfuse_opmath::lf_##name(x, x); })                                               \
        return lf::graph::opmath_dtype<decltype(lazyfuse_opmath::lf_##name(T{}, T{}))>();                              \
      else                                                                                                             \
        return std::nullopt;                                                                                           \
    });
#include <lazyfuse/ops.def>
  }
  return std::nullopt;
}

struct OpName {
  int fn;
  const char* name;
};
const std::vector<OpName> kUnaryOps = {
#define LAZYFUSE_UNARY(Enum, name, rule, cost) {int(lf::graph::UnaryOp::Enum), #name},
#include <lazyfuse/ops.def>
};
const std::vector<OpName> kBinaryOps = {
#define LAZYFUSE_BINARY(Enum, name, rule, cost) {int(lf::graph::BinaryOp::Enum), #name},
#include <lazyfuse/ops.def>
};

// An array of type t holding `bytes`.
lf::Array array_of(DType t, const std::vector<unsigned char>& bytes, lf::Shape shape) {
  if (t == DType::Bool) {
    std::vector<bool> v(bytes.size());
    for (std::size_t e = 0; e < v.size(); ++e) v[e] = bytes[e] != 0;
    return lf::asarray(v, std::move(shape));
  }
  return lf::graph::visit_dtype(t, [&]<class H>() {
    if constexpr (std::is_same_v<H, bool>) {
      return lf::Array(); // (handled above)
    } else {
      std::vector<H> v(bytes.size() / sizeof(H));
      std::memcpy(static_cast<void*>(v.data()), bytes.data(), bytes.size());
      return lf::asarray(v, std::move(shape));
    }
  });
}

// Sizes: not a multiple of the vector width, so that the compiled loops' remainders run too.
constexpr std::int64_t kN = 4099;

} // namespace

TEST(LlvmCodegen, EveryUnaryOpOnEveryTypeGivesTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(1);
  int kernels = 0;
  for (DType t : kTypes) {
    // One multi-output kernel per type: every op defined on it.
    cg::KernelIR ir;
    ir.inputs.push_back({t});
    const int x = add(ir, instr(cg::IrOp::LoadLinear, t, -1, -1, -1, 0));
    std::vector<std::string> labels;
    for (const OpName& op : kUnaryOps)
      if (auto r = unary_result(lf::graph::UnaryOp(op.fn), t)) {
        store(ir, add(ir, instr(cg::IrOp::Unary, *r, x, -1, -1, -1, 0, std::uint8_t(op.fn))));
        labels.push_back(std::string(op.name) + "(" + std::string(lf::dtype_name(t)) + ")");
      }
    if (ir.outputs.empty()) continue;
    ir.finalize();
    Buffers in;
    in.inputs.push_back(random_bytes(t, kN, rng));
    expect_same_bits(ir, in, {}, kN, labels);
    ++kernels;
  }
  EXPECT_EQ(kernels, int(kTypes.size()));
}

TEST(LlvmCodegen, EveryBinaryOpOnEveryTypeGivesTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(2);
  for (DType t : kTypes) {
    cg::KernelIR ir;
    ir.inputs.push_back({t});
    ir.inputs.push_back({t});
    const int x = add(ir, instr(cg::IrOp::LoadLinear, t, -1, -1, -1, 0));
    const int y = add(ir, instr(cg::IrOp::LoadLinear, t, -1, -1, -1, 1));
    std::vector<std::string> labels;
    for (const OpName& op : kBinaryOps)
      if (auto r = binary_result(lf::graph::BinaryOp(op.fn), t)) {
        store(ir, add(ir, instr(cg::IrOp::Binary, *r, x, y, -1, -1, 0, std::uint8_t(op.fn))));
        labels.push_back(std::string(op.name) + "(" + std::string(lf::dtype_name(t)) + ")");
      }
    if (ir.outputs.empty()) continue;
    ir.finalize();
    Buffers in;
    in.inputs.push_back(random_bytes(t, kN, rng));
    in.inputs.push_back(random_bytes(t, kN, rng));
    expect_same_bits(ir, in, {}, kN, labels);
  }
}

TEST(LlvmCodegen, EveryCastAndIndexConversionGivesTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(3);
  for (DType from : kTypes) {
    cg::KernelIR ir;
    ir.inputs.push_back({from});
    const int x = add(ir, instr(cg::IrOp::LoadLinear, from, -1, -1, -1, 0));
    const int i = add(ir, instr(cg::IrOp::LinearIndex, DType::Int64));
    std::vector<std::string> labels;
    for (DType to : kTypes) {
      store(ir, add(ir, instr(cg::IrOp::Cast, to, x)));
      labels.push_back("astype(" + std::string(lf::dtype_name(from)) + " -> " + std::string(lf::dtype_name(to)) + ")");
    }
    store(ir, add(ir, instr(cg::IrOp::IndexToValue, from, i)));
    labels.push_back("index as " + std::string(lf::dtype_name(from)));
    ir.finalize();
    Buffers in;
    in.inputs.push_back(random_bytes(from, kN, rng));
    expect_same_bits(ir, in, {}, kN, labels);
  }
}

// A transposed, padded view: Coord unravels the output index, a predicated load reads inside the bounds only, a
// select and scalar parameters of every type combine the values.
TEST(LlvmCodegen, ViewsPredicatedLoadsSelectsAndScalarsGiveTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(4);
  const std::int64_t rows = 61, cols = 67; // output rows x cols; the input is cols-1 x rows (transposed, one short)
  for (DType t : kTypes) {
    using cg::IrOp;
    cg::KernelIR ir;
    ir.inputs.push_back({t});
    const int rows_p = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 0));
    const int cols_p = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 1));
    ir.params.push_back({true, DType::Int64});
    ir.params.push_back({true, DType::Int64});
    ir.unravels.push_back({rows_p, cols_p});
    const int i = add(ir, instr(IrOp::LinearIndex, DType::Int64));
    const int r = add(ir, instr(IrOp::Coord, DType::Int64, i, -1, -1, 0, 0));
    const int c = add(ir, instr(IrOp::Coord, DType::Int64, i, -1, -1, 0, 1));
    const int one = add(ir, instr(IrOp::IndexConst, DType::Int64, -1, -1, -1, -1, 1));
    const int c_limit = add(ir, instr(IrOp::ISub, DType::Int64, cols_p, one));
    const int inside = add(ir, instr(IrOp::ILt, DType::Int64, c, c_limit));
    const int offset = add(ir, instr(IrOp::IAdd, DType::Int64, add(ir, instr(IrOp::IMul, DType::Int64, c, rows_p)), r));
    const int v = add(ir, instr(IrOp::Load, t, offset, inside, -1, 0));
    const int s = add(ir, instr(IrOp::ScalarParam, t, -1, -1, -1, 2));
    ir.params.push_back({false, t});
    const int parity = add(ir, instr(IrOp::IEq, DType::Int64, add(ir, instr(IrOp::IMod, DType::Int64, i, cols_p)),
                                     add(ir, instr(IrOp::IDiv, DType::Int64, i, cols_p))));
    store(ir, add(ir, instr(IrOp::Select, t, parity, s, v)));
    store(ir, v);
    ir.finalize();
    Buffers in;
    in.inputs.push_back(random_bytes(t, (cols - 1) * rows, rng));
    std::vector<cg::ParamValue> params(3);
    params[0].i = rows;
    params[1].i = cols;
    params[2].f = -2.75;
    params[2].i = -3;
    params[2].im = 1.5;
    expect_same_bits(
        ir, in, params, rows * cols,
        {"select(" + std::string(lf::dtype_name(t)) + ")", "view(" + std::string(lf::dtype_name(t)) + ")"});
  }
}

// Index division and remainder by a divisor fixed for the whole kernel, which compiled code does by multiply-shift
// constants (and a rolled coordinate's remainder by one conditional subtraction): every sign of dividend and divisor,
// a zero divisor, dividends inside and outside [0, 2 * divisor), and divisors and dividends up to 2^62, against the
// interpreter's C++ division. Also the coordinates of a shape unravelled by such divisors.
TEST(LlvmCodegen, IndexDivisionsByKernelParametersGiveTheInterpretersIndices) {
  SKIP_WITHOUT_LLVM();
  using cg::IrOp;
  cg::KernelIR ir;
  for (int k = 0; k < 5; ++k) ir.params.push_back({true, DType::Int64});
  const int divisor = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 0));
  const int scale = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 1));
  const int offset = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 2));
  const int rows = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 3));
  const int cols = add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, 4));
  ir.unravels.push_back({rows, cols});
  const int i = add(ir, instr(IrOp::LinearIndex, DType::Int64));
  const int x = add(ir, instr(IrOp::IAdd, DType::Int64, add(ir, instr(IrOp::IMul, DType::Int64, i, scale)), offset));
  auto as_value = [&](int index) { return add(ir, instr(IrOp::IndexToValue, DType::Int64, index)); };
  store(ir, as_value(add(ir, instr(IrOp::IDiv, DType::Int64, x, divisor))));
  store(ir, as_value(add(ir, instr(IrOp::IMod, DType::Int64, x, divisor))));
  store(ir, as_value(add(ir, instr(IrOp::Coord, DType::Int64, i, -1, -1, 0, 0))));
  store(ir, as_value(add(ir, instr(IrOp::Coord, DType::Int64, i, -1, -1, 0, 1))));
  ir.finalize();
  const std::int64_t n = 3000;
  const std::int64_t big = std::int64_t(1) << 62;
  struct Case {
    std::int64_t divisor, scale, offset, cols;
  };
  for (const Case& c : std::vector<Case>{
           {7, 1, 0, 7},         // dividends 0 .. 2999: in [0, 14) first, then beyond
           {1000, 1, 500, 1},    // the rolled coordinate's range [0, 2000) and past it
           {1000, 1, -1500, 3},  // negative dividends
           {-7, 3, -4000, 1000}, // a negative divisor
           {0, 5, 17, 2999},     // a zero divisor: 0
           {1, -1, 0, 3000},     // the divisor one
           {(std::int64_t(1) << 31) + 1, std::int64_t(1) << 32, -(std::int64_t(1) << 40), 61},
           {(std::int64_t(1) << 40) - 3, big / n, -big, 64},
           {big + 5, big / n * 2, -big, 97}, // past the conditional subtraction's limit (2^62)
           {-big, big / n, 12345, 1024},
       }) {
    std::vector<cg::ParamValue> params(5);
    params[0].i = c.divisor;
    params[1].i = c.scale;
    params[2].i = c.offset;
    params[3].i = (n + c.cols - 1) / c.cols;
    params[4].i = c.cols;
    const std::string what = "divisor " + std::to_string(c.divisor) + ", x = i * " + std::to_string(c.scale) + " + " +
                             std::to_string(c.offset);
    expect_same_bits(ir, Buffers{}, params, n,
                     {"x / divisor, " + what, "x % divisor, " + what, "row, " + what, "column, " + what});
  }
}

// The coordinates of the element index in shapes of 1 to 3 dimensions, dimensions of 1 among them, which compiled
// code steps from one element to the next instead of dividing: over ranges that start inside a row (the kernel split
// over 3 threads) and from 0 (1 thread).
TEST(LlvmCodegen, CoordinatesSteppedAlongTheLoopGiveTheInterpretersIndices) {
  SKIP_WITHOUT_LLVM();
  using cg::IrOp;
  const std::int64_t n = 61 * 3 * 1093;
  const std::vector<std::vector<std::int64_t>> shapes = {{61, 3, 1093}, {1, 1, n}, {n, 1}, {n}, {7, 1, n / 7 + 1}};
  cg::KernelIR ir;
  std::vector<cg::ParamValue> params;
  for (const auto& shape : shapes) {
    std::vector<int> dims;
    for (std::int64_t d : shape) {
      dims.push_back(add(ir, instr(IrOp::IndexParam, DType::Int64, -1, -1, -1, int(ir.params.size()))));
      ir.params.push_back({true, DType::Int64});
      params.emplace_back();
      params.back().i = d;
    }
    ir.unravels.push_back(dims);
  }
  const int i = add(ir, instr(IrOp::LinearIndex, DType::Int64));
  std::vector<std::string> labels;
  for (std::size_t g = 0; g < shapes.size(); ++g)
    for (std::size_t k = 0; k < shapes[g].size(); ++k) {
      store(ir, add(ir, instr(IrOp::IndexToValue, DType::Int64,
                              add(ir, instr(IrOp::Coord, DType::Int64, i, -1, -1, int(g), std::int64_t(k))))));
      labels.push_back("coordinate " + std::to_string(k) + " of shape " + std::to_string(g));
    }
  ir.finalize();
  for (const char* threads : {"1", "3"}) {
    lf::config::set("LAZYFUSE_CPU_THREADS", threads);
    expect_same_bits(ir, Buffers{}, params, n, labels);
  }
  lf::config::reset("LAZYFUSE_CPU_THREADS");
}

// Fused programs through the public API: chains on views with broadcasting, several outputs, run with the generator
// and the interpreter.
TEST(LlvmCodegen, FusedProgramsGiveTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(5);
  for (int round = 0; round < 12; ++round) {
    const std::int64_t m = 37 + std::int64_t(rng() % 50), n = 29 + std::int64_t(rng() % 70);
    std::vector<float> a(static_cast<std::size_t>(m * n)), b(static_cast<std::size_t>(n));
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (auto& x : a) x = normal(rng);
    for (auto& x : b) x = normal(rng);
    std::vector<std::int32_t> k(static_cast<std::size_t>(m));
    for (auto& x : k) x = std::int32_t(rng() % 200) - 100;
    auto program = [&](std::vector<lf::Array>& outs) {
      lf::Array x = lf::asarray(a, {m, n}), y = lf::asarray(b, {n}), z = lf::asarray(k, {m, 1});
      lf::Array t = lf::transpose(x);
      lf::Array e = lf::where(x > 0.0f, lf::sqrt(x) * 2.0f, lf::exp(x) - 1.0f) + y;
      lf::Array f = lf::astype(z, DType::Float64) / (lf::abs(x) + 1.0) - lf::sin(y);
      lf::Array g = lf::maximum(t, 0.5f) * lf::astype(lf::transpose(z) % 7, DType::Float32);
      outs = {e, f, g, lf::astype(e, DType::Float16), (z * 3 + 1) ^ 5};
      std::vector<const lf::Array*> all;
      for (const auto& o : outs) all.push_back(&o);
      lf::eval_arrays(all);
    };
    std::vector<lf::Array> interpreted, compiled;
    {
      Codegen scope("interpreter");
      program(interpreted);
    }
    const auto before = rt::cpu_codegen_stats();
    {
      Codegen scope("llvm");
      program(compiled);
    }
    const auto after = rt::cpu_codegen_stats();
    EXPECT_GT(after.compiled + after.disk_hits + after.cache_hits,
              before.compiled + before.disk_hits + before.cache_hits)
        << "no kernel was compiled";
    for (std::size_t o = 0; o < compiled.size(); ++o) {
      const lf::Array &p = interpreted[o], &q = compiled[o];
      ASSERT_EQ(p.dtype(), q.dtype());
      ASSERT_EQ(p.shape(), q.shape());
      EXPECT_EQ(std::memcmp(p.data_ptr(), q.data_ptr(), std::size_t(p.size()) * lf::itemsize(p.dtype())), 0)
          << "output " << o << " of round " << round;
    }
  }
}

// Reductions of every kind on every type they are defined for, rows of several lengths (one element, a partial
// column, several columns and a partial one) and several loops in one kernel, through the public API.
TEST(LlvmCodegen, ReductionsGiveTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  std::mt19937_64 rng(6);
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Float16, DType::Bool,
                  DType::Complex64, DType::Complex128, DType::UInt8}) {
    for (std::int64_t cols : {1, 100, 256, 1000, 5000}) {
      const std::int64_t rows = 7;
      const std::vector<unsigned char> bytes = random_bytes(t, rows * cols, rng);
      auto program = [&](std::vector<lf::Array>& outs) {
        lf::Array x = array_of(t, bytes, {rows, cols});
        outs.clear();
        if (t == DType::Bool) {
          outs = {lf::any(x, {1}), lf::all(x, {0}), lf::sum(x, {1})};
        } else {
          outs = {lf::sum(x, {1}), lf::sum(x * x, {0}), lf::prod(x, {1})};
          if (!lf::is_complex(t)) {
            lf::Array y = lf::astype(x, DType::Float64);
            outs.push_back(lf::max(x, {1}));
            outs.push_back(lf::min(x, {0}));
            outs.push_back(lf::argmax(x, 1));
            outs.push_back(lf::argmin(x, 0));
            outs.push_back(lf::exp(y - lf::max(y, {1}, true)) / lf::sum(lf::exp(y - lf::max(y, {1}, true)), {1}, true));
            outs.push_back(lf::sum(y));
          }
        }
        std::vector<const lf::Array*> all;
        for (const auto& o : outs) all.push_back(&o);
        lf::eval_arrays(all);
      };
      std::vector<lf::Array> interpreted, compiled;
      {
        Codegen scope("interpreter");
        program(interpreted);
      }
      const auto before = rt::cpu_codegen_stats();
      {
        Codegen scope("llvm");
        program(compiled);
      }
      const auto after = rt::cpu_codegen_stats();
      EXPECT_GT(after.compiled + after.disk_hits + after.cache_hits,
                before.compiled + before.disk_hits + before.cache_hits)
          << "no kernel was compiled";
      for (std::size_t o = 0; o < compiled.size(); ++o) {
        SCOPED_TRACE("output " + std::to_string(o) + ", " + std::string(lf::dtype_name(t)) + " 7x" +
                     std::to_string(cols));
        const lf::Array &p = interpreted[o], &q = compiled[o];
        ASSERT_EQ(p.dtype(), q.dtype());
        ASSERT_EQ(p.shape(), q.shape());
        const auto* pb = static_cast<const unsigned char*>(p.data_ptr());
        const auto* qb = static_cast<const unsigned char*>(q.data_ptr());
        const std::size_t size = lf::itemsize(p.dtype());
        for (std::int64_t e = 0; e < p.size(); ++e)
          if (!same_value(p.dtype(), pb + std::size_t(e) * size, qb + std::size_t(e) * size)) {
            ADD_FAILURE() << "element " << e << " differs";
            break;
          }
      }
    }
  }
}

// Sets LAZYFUSE_CPU_THREADS for one scope.
struct Threads {
  explicit Threads(const char* n) { lf::config::set("LAZYFUSE_CPU_THREADS", n); }
  ~Threads() { lf::config::reset("LAZYFUSE_CPU_THREADS"); }
};

// Full reductions (and a few long rows) whose loops run split over threads in blocks of 16384 elements: compiled
// (CompiledSplit) with the interpreter's bits, whatever the thread count, at lengths around block boundaries; fused
// expressions before the reduction and kernels of several loops (standardize, then the mean of a comparison) too.
// Arg reductions keep the interpreter's split: counted, and the same bits.
TEST(LlvmCodegen, ReductionsSplitOverThreadsGiveTheInterpretersBits) {
  SKIP_WITHOUT_LLVM();
  lf::config::set("LAZYFUSE_BACKEND", "cpu");
  std::mt19937_64 rng(7);
  constexpr std::int64_t kBlock = 16384;
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    for (std::int64_t n : {2 * kBlock + 1, 3 * kBlock - 1, 3 * kBlock, 4 * kBlock + 1, (std::int64_t(1) << 20) + 3}) {
      std::vector<unsigned char> bytes(std::size_t(n) * lf::itemsize(t));
      lf::graph::visit_opmath_type(t, [&]<class T>() {
        // Near 1 (floats) or small (integers): products neither overflow at once nor stay exact.
        std::normal_distribution<double> normal(1.0, 0.01);
        for (std::int64_t e = 0; e < n; ++e) {
          const T v = std::is_floating_point_v<T> ? T(normal(rng)) : T(std::int64_t(rng() % 7) - 3);
          std::memcpy(bytes.data() + std::size_t(e) * sizeof(T), &v, sizeof v);
        }
      });
      const std::int64_t rows = 3, cols = n / rows;
      const std::vector<unsigned char> rows_bytes(bytes.begin(),
                                                  bytes.begin() + std::ptrdiff_t(rows * cols * lf::itemsize(t)));
      auto compiled_split = [&](std::vector<lf::Array>& outs) {
        lf::Array x = array_of(t, bytes, {n});
        lf::Array y = lf::astype(x, DType::Float64);
        lf::Array z = (y - lf::mean(y)) / lf::stddev(y);
        outs = {lf::sum(x), lf::mean(x), lf::max(x), lf::min(x), lf::prod(x)};
        outs.push_back(lf::sum(lf::exp(y) * 2.0 - y));
        outs.push_back(lf::mean(z > 0.5));
        outs.push_back(lf::sum(array_of(t, rows_bytes, {rows, cols}), {1}));
        std::vector<const lf::Array*> all;
        for (const auto& o : outs) all.push_back(&o);
        lf::eval_arrays(all);
      };
      auto interpreted_split = [&](std::vector<lf::Array>& outs) {
        outs = {lf::argmax(array_of(t, bytes, {n}))};
        outs[0].eval();
      };
      for (bool arg : {false, true}) {
        std::vector<lf::Array> interpreted;
        {
          Codegen scope("interpreter");
          Threads one("1");
          arg ? interpreted_split(interpreted) : compiled_split(interpreted);
        }
        for (const char* threads : {"1", "2", "3"}) {
          std::vector<lf::Array> compiled;
          const auto before = rt::cpu_codegen_stats();
          {
            Codegen scope("llvm");
            Threads split(threads);
            arg ? interpreted_split(compiled) : compiled_split(compiled);
          }
          const auto after = rt::cpu_codegen_stats();
          const std::string what = std::string(lf::dtype_name(t)) + ", n = " + std::to_string(n) + ", " + threads +
                                   " threads" + (arg ? ", argmax" : "");
          if (std::string(threads) != "1") {
            if (arg) {
              EXPECT_GT(after.split_interpreted, before.split_interpreted) << what;
              EXPECT_EQ(after.split, before.split) << what;
            } else {
              EXPECT_GT(after.split, before.split) << what << ": no loop was split by compiled code";
              EXPECT_EQ(after.split_interpreted, before.split_interpreted) << what;
            }
          }
          ASSERT_EQ(interpreted.size(), compiled.size());
          for (std::size_t o = 0; o < compiled.size(); ++o) {
            const lf::Array &p = interpreted[o], &q = compiled[o];
            ASSERT_EQ(p.dtype(), q.dtype());
            ASSERT_EQ(p.shape(), q.shape());
            EXPECT_EQ(std::memcmp(p.data_ptr(), q.data_ptr(), std::size_t(p.size()) * lf::itemsize(p.dtype())), 0)
                << "output " << o << ", " << what;
          }
        }
      }
    }
  }
  lf::config::reset("LAZYFUSE_BACKEND");
}

// Compiled code goes into the kernel cache's directory like CUDA binaries: after the in-memory cache is emptied (as
// in a new process), an elementwise kernel and a reduction's split load their object code from the disk instead of
// compiling, and give the same bits. LAZYFUSE_CACHE_IN_MEMORY=1 keeps the disk out of it.
TEST(LlvmCodegen, CompiledCodeComesBackFromTheDiskCache) {
  SKIP_WITHOUT_LLVM();
  std::string dir = "/tmp/lazyfuse_llvm_cache_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  lf::config::set("LAZYFUSE_BACKEND", "cpu");
  lf::config::set("LAZYFUSE_CACHE_DIR", dir);
  Codegen scope("llvm");
  std::mt19937_64 rng(11);
  std::vector<float> values(std::size_t(1) << 16);
  std::uniform_real_distribution<float> uniform(-2, 2);
  for (float& v : values) v = uniform(rng);
  auto run_both = [&] {
    lf::Array x = lf::asarray(values, {std::int64_t(values.size())});
    lf::Array e = lf::where(x > 0, lf::sqrt(x) * 2.0f, lf::exp(x) - 1.0f), r = lf::sum(x * 2.0f + 1.0f);
    e.eval();
    r.eval();
    return std::pair{e.get<float>().to_vector(), r.item<float>()};
  };
  auto count = [](const rt::CpuCodegenStats& s) { return std::pair{s.compiled, s.disk_hits}; };

  lf::clear_kernel_cache();
  const auto cold_before = count(rt::cpu_codegen_stats());
  const auto cold = run_both();
  const auto cold_after = count(rt::cpu_codegen_stats());
  EXPECT_GE(cold_after.first - cold_before.first, 2u) << "the kernels were not compiled";
  EXPECT_EQ(cold_after.second, cold_before.second);

  lf::clear_kernel_cache();
  const auto warm = run_both();
  const auto warm_after = count(rt::cpu_codegen_stats());
  EXPECT_EQ(warm_after.first, cold_after.first) << "compiled again instead of loading from the disk";
  EXPECT_EQ(warm_after.second - cold_after.second, cold_after.first - cold_before.first);
  EXPECT_EQ(warm.first, cold.first);
  EXPECT_EQ(std::memcmp(&warm.second, &cold.second, sizeof(float)), 0);

  lf::config::set("LAZYFUSE_CACHE_IN_MEMORY", "1");
  lf::clear_kernel_cache();
  (void)run_both();
  const auto memory_only = count(rt::cpu_codegen_stats());
  EXPECT_EQ(memory_only.second, warm_after.second) << "LAZYFUSE_CACHE_IN_MEMORY=1 read the disk";
  EXPECT_GT(memory_only.first, warm_after.first);

  lf::config::reset("LAZYFUSE_CACHE_IN_MEMORY");
  lf::config::reset("LAZYFUSE_CACHE_DIR");
  lf::config::reset("LAZYFUSE_BACKEND");
  lf::clear_kernel_cache();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST(LlvmCodegen, AutoInterpretsSmallKernels) {
  SKIP_WITHOUT_LLVM();
  Codegen scope("auto");
  const auto before = rt::cpu_codegen_stats();
  lf::Array x = lf::asarray({1.0f, 2.0f, 3.0f}) * 3.0f - 0.25f;
  x.eval();
  EXPECT_GT(rt::cpu_codegen_stats().small, before.small);
}

TEST(LlvmCodegen, DescriptionNamesTheGenerator) {
  Codegen scope("interpreter");
  EXPECT_NE(rt::cpu_codegen_description().find("interpreter"), std::string::npos) << rt::cpu_codegen_description();
  if (!rt::llvm_codegen_built()) return;
  // Which build of the column folds the compiled reductions call (runtime/ReduceHostFunctions.h).
  EXPECT_NE(rt::cpu_codegen_description().find(std::string("reduction folds ") + rt::reduction_fold_isa()),
            std::string::npos)
      << rt::cpu_codegen_description();
}

TEST(LlvmCodegen, LlvmModeWithoutLlvmIsAnError) {
  if (rt::llvm_codegen_built()) GTEST_SKIP() << "this build has the LLVM code generator";
  // The CPU backend's kernel runner itself (a GPU machine's backend would never call it for an eval).
  cg::KernelIR ir;
  ir.inputs.push_back({DType::Float32});
  store(ir, add(ir, instr(cg::IrOp::LoadLinear, DType::Float32, -1, -1, -1, 0)));
  ir.finalize();
  Buffers in;
  in.inputs.emplace_back(2 * sizeof(float), 0);
  EXPECT_THROW(run("llvm", ir, in, {}, 2), lf::Error);
}
