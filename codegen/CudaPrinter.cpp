#include "codegen/CudaPrinter.h"

#include "codegen/CodeWriter.h"
#include "codegen/FunctionLibrary.h"
#include "codegen/KernelAbi.h"
#include "codegen/ValueDivisors.h"
#include "graph/Assert.h"
#include "graph/Ops.h"
#include "graph/Random.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string_view>

namespace lazyfuse::codegen {

const char* cuda_type(DType t) {
  switch (t) {
// clang-format off
#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits) \
  case DType::Enum: return #kernel_type;
#include <lazyfuse/dtypes.def>
    // clang-format on
  }
  return "?";
}

namespace {

enum class Mode { Vector, Scalar };

// What graph/OpMath.inc expects each side to define (graph/HostOps.h is the host's): LF_HD, the infinities, and a
// typedef for each integer type of the type table.
constexpr const char* kPreludeDefinitions = "#define LF_HD __device__ __forceinline__\n"
                                            "#define LF_INF_F __int_as_float(0x7f800000)\n"
                                            "#define LF_INF_D __longlong_as_double(0x7ff0000000000000LL)\n"

#define LAZYFUSE_DTYPE(Enum, name, host_type, kernel_type, kernel_c_type, kind, bits)                                  \
  LAZYFUSE_KERNEL_TYPEDEF_##kind(kernel_type, kernel_c_type)
#define LAZYFUSE_KERNEL_TYPEDEF_Bool(kernel_type, kernel_c_type)
#define LAZYFUSE_KERNEL_TYPEDEF_Float(kernel_type, kernel_c_type)
#define LAZYFUSE_KERNEL_TYPEDEF_Complex(kernel_type, kernel_c_type)
#define LAZYFUSE_KERNEL_TYPEDEF_Signed(kernel_type, kernel_c_type) "typedef " #kernel_c_type " " #kernel_type ";\n"
#define LAZYFUSE_KERNEL_TYPEDEF_Unsigned(kernel_type, kernel_c_type) "typedef " #kernel_c_type " " #kernel_type ";\n"
#include <lazyfuse/dtypes.def>
#undef LAZYFUSE_KERNEL_TYPEDEF_Bool
#undef LAZYFUSE_KERNEL_TYPEDEF_Float
#undef LAZYFUSE_KERNEL_TYPEDEF_Complex
#undef LAZYFUSE_KERNEL_TYPEDEF_Signed
#undef LAZYFUSE_KERNEL_TYPEDEF_Unsigned
    ;

// The bit casts of graph/OpMath.inc (the half types' conversions), only in kernels whose functions use them.
constexpr const char* kBitCastDefinitions = "#define LF_F32_BITS(x) __float_as_uint(x)\n"
                                            "#define LF_F32_FROM_BITS(u) __uint_as_float(u)\n"
                                            "#define LF_F64_BITS(x) ((unsigned long long)__double_as_longlong(x))\n"
                                            "#define LF_F64_FROM_BITS(u) __longlong_as_double((long long)(u))\n";

// Whether the type's kernel type is one of graph/OpMath.inc's structs (half and complex types), which C casts do
// not convert to.
bool has_struct_kernel_type(DType t) {
  return is_complex(t) || is_half(t);
}

// The zero of a type, as kernel text.
std::string zero_of(DType t) {
  return has_struct_kernel_type(t) ? std::string(cuda_type(t)) + "{}" : "(" + std::string(cuda_type(t)) + ")0";
}

std::string v(int id) {
  return "v" + std::to_string(id);
}

// Coordinate k of linear index `lin` in unravel group g, computed from scratch (the divisions by the dimensions
// through their constants: lf_div).
std::string coord_expr(const KernelIR& ir, const Instr& in) {
  const auto& dims = ir.unravels[std::size_t(in.slot)];
  auto slot = [&](std::size_t d) { return std::to_string(ir.code[std::size_t(dims[d])].slot); };
  std::string e = v(in.a);
  for (std::size_t d = dims.size(); d-- > std::size_t(in.imm) + 1;) e = "lf_div(" + e + ", lf_d" + slot(d) + ")";
  if (in.imm > 0) {
    const std::string k = slot(std::size_t(in.imm));
    e = "lf_mod(" + e + ", p" + k + ", lf_d" + k + ")";
  }
  return e;
}

// The device library of reduction kernels; each kernel takes the functions it calls (device_library()), without
// the comment lines. The block-reduction tree is written out here (not CUB: its headers cost NVRTC over a second per
// kernel), one tree for every reduction: S is the state of one loop's accumulators (values, and indices for arg
// reductions), a struct the printer writes per loop (print_loop_state): combine(o) folds another thread's state into
// it, shfl_down(off) is the state of the lane `off` above, identity() the state every reduction starts from. The
// tree is fixed (warp shuffles, then one warp over the warps' results), so results are the same bits every run. It
// tests threadIdx.x itself, not lane and warp ints computed before the first barrier: with those, NVCC kept
// threadIdx.x live across the barriers and, at the 32 registers the softmax kernel gets, spilled it (2 STL and 2
// LDL more on each row's path than the per-reduction trees before; softmax of 16384 x 4096 measured 0.159 instead
// of 0.147 ms on the H200). Written this way, that kernel's SASS is the old one's less three empty barriers.
constexpr const char* kReductionHelpers = R"(
template <class T> __device__ __forceinline__ T lf_shfl_down(T v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
template <> __device__ __forceinline__ bool lf_shfl_down<bool>(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
// Every thread gets the result. `shared` holds at least 32 states.
template <class S> __device__ __forceinline__ S lf_block_reduce(S s, S* shared) {
  for (int off = 16; off > 0; off >>= 1) s.combine(s.shfl_down(off));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < (blockDim.x >> 5) ? shared[threadIdx.x] : S::identity();
    for (int off = 16; off > 0; off >>= 1) s.combine(s.shfl_down(off));
    if (threadIdx.x == 0) shared[0] = s;
  }
  __syncthreads();
  return shared[0];
}
// Any trivially copyable type (the complex structs), 32 bits at a time.
template <class T> __device__ __forceinline__ T lf_shfl_down_words(T v, int off) {
  unsigned int w[sizeof(T) / 4];
  memcpy(w, &v, sizeof(T));
  for (int k = 0; k < (int)(sizeof(T) / 4); ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], off);
  memcpy(&v, w, sizeof(T));
  return v;
}
// Partials of other blocks: read from L2 (cache-global), never from a stale L1 line.
template <class T> __device__ __forceinline__ T lf_load_partial(const unsigned char* p) { return __ldcg(reinterpret_cast<const T*>(p)); }
template <> __device__ __forceinline__ bool lf_load_partial<bool>(const unsigned char* p) { return *reinterpret_cast<const volatile bool*>(p); }
template <class T> __device__ __forceinline__ T lf_load_partial_words(const unsigned char* p) {
  unsigned int w[sizeof(T) / 4];
  for (int k = 0; k < (int)(sizeof(T) / 4); ++k) w[k] = __ldcg(reinterpret_cast<const unsigned int*>(p) + k);
  T v;
  memcpy(&v, w, sizeof(T));
  return v;
}
)";

bool is_arg(std::uint8_t fn) {
  return graph::is_arg(graph::ReduceOp(fn));
}

// The accumulators of loop `slot` (Accumulate instructions of the loop), in order.
std::vector<const Instr*> loop_accumulators(const KernelIR& ir, int slot) {
  std::vector<const Instr*> accs;
  for (auto& in : ir.code)
    if (in.op == IrOp::Accumulate && in.c == slot) accs.push_back(&in);
  return accs;
}

std::string loop_state_name(int slot) {
  return "lf_loop" + std::to_string(slot);
}

// The state lf_block_reduce combines for the loop starting at instruction k: a member a<slot> per accumulator (and
// a<slot>_i for the index of an arg reduction), combined as the reduction's combining function (or comparison) says.
void print_loop_state(std::ostringstream& os, const KernelIR& ir, std::size_t k) {
  const auto accs = loop_accumulators(ir, ir.code[k].slot);
  if (accs.empty()) return;
  const std::string S = loop_state_name(ir.code[k].slot);
  CodeWriter w;
  w.line("struct ", S, " {");
  auto members = w.indent();
  for (const Instr* acc : accs) {
    w.line(cuda_type(acc->dtype), " a", acc->slot, ";");
    if (is_arg(acc->fn)) w.line("lf_i64 a", acc->slot, "_i;");
  }
  {
    auto f = w.block("static __device__ __forceinline__ ", S, " identity()");
    w.line(S, " s;");
    for (const Instr* acc : accs) {
      w.line("s.a", acc->slot, " = lf_", graph::name_of(graph::ReduceOp(acc->fn)), "_identity<", cuda_type(acc->dtype),
             ">();");
      if (is_arg(acc->fn)) w.line("s.a", acc->slot, "_i = 9223372036854775807LL;");
    }
    w.line("return s;");
  }
  {
    auto f = w.block("__device__ __forceinline__ ", S, " shfl_down(int off) const");
    w.line(S, " o;");
    for (const Instr* acc : accs) {
      // (__shfl_down_sync takes the built-in types; the complex structs go word by word)
      const bool words = is_complex(acc->dtype);
      w.line("o.a", acc->slot, " = lf_shfl_down", words ? "_words" : "", "(a", acc->slot, ", off);");
      if (is_arg(acc->fn)) w.line("o.a", acc->slot, "_i = lf_shfl_down(a", acc->slot, "_i, off);");
    }
    w.line("return o;");
  }
  {
    auto f = w.block("__device__ __forceinline__ void combine(const ", S, "& o)");
    for (const Instr* acc : accs) {
      const std::string name(graph::name_of(graph::ReduceOp(acc->fn)));
      const std::string a = "a" + std::to_string(acc->slot);
      if (is_arg(acc->fn))
        w.line("if (lf_", name, "_better(o.", a, ", o.", a, "_i, ", a, ", ", a, "_i)) { ", a, " = o.", a, "; ", a,
               "_i = o.", a, "_i; }");
      else
        w.line(a, " = lf_", name, "_combine(", a, ", o.", a, ");");
    }
  }
  os << w.str() << "};\n";
}

const FunctionLibrary& device_library() {
  static const FunctionLibrary library(kReductionHelpers);
  return library;
}

// The text before the kernel's own definitions: what graph/OpMath.inc expects, then only the functions of the op
// semantics and of the device library that `kernel` (the rest of the text: loop states, signature, body) uses.
std::string print_prelude(const KernelIR& ir, const std::string& kernel) {
  std::string out = "// lazyfuse kernel " + ir.name + " (generated; self-contained: it includes no header)\n";
  out += kPreludeDefinitions;
  const std::string library = device_library().select(kernel);
  const std::string functions = op_library().select(library + kernel);
  if (functions.find("LF_F32_") != std::string::npos || functions.find("LF_F64_") != std::string::npos)
    out += kBitCastDefinitions;
  out += functions + "\n";
  if (ir.schedule != Schedule::Elementwise) out += library;
  return out;
}

// The loop states of a reduction kernel (print_loop_state), then a blank line.
std::string print_loop_states(const KernelIR& ir) {
  std::ostringstream os;
  if (ir.schedule == Schedule::Elementwise) return {};
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (ir.code[k].op == IrOp::LoopBegin) print_loop_state(os, ir, k);
  os << "\n";
  return os.str();
}

// The text before a kernel's body: the signature up to its last parameter (codegen/KernelAbi.h), after the vector
// type and the index type it uses.
void print_header(std::ostringstream& os, const KernelIR& ir) {
  os << "template <class T> struct alignas(sizeof(T) * " << kElementsPerThread << ") lf_vec { T v["
     << kElementsPerThread << "]; };\n\n";
  // Vector types are aligned to their size, so they load as whole 16-, 8- or 4-byte words.
  if (streams_vector_loads(ir))
    os << "template <class V> __device__ __forceinline__ V lf_load_stream(const V* p) {\n"
          "  V v;\n"
          "  if constexpr (sizeof(V) % 16 == 0) {\n"
          "#pragma unroll\n"
          "    for (int k = 0; k < (int)(sizeof(V) / 16); ++k)\n"
          "      reinterpret_cast<uint4*>(&v)[k] = __ldcs(reinterpret_cast<const uint4*>(p) + k);\n"
          "  } else if constexpr (sizeof(V) == 8) {\n"
          "    *reinterpret_cast<uint2*>(&v) = __ldcs(reinterpret_cast<const uint2*>(p));\n"
          "  } else if constexpr (sizeof(V) == 4) {\n"
          "    *reinterpret_cast<unsigned*>(&v) = __ldcs(reinterpret_cast<const unsigned*>(p));\n"
          "  } else {\n"
          "    v = *p;\n"
          "  }\n"
          "  return v;\n"
          "}\n\n";
  if (streams_stores(ir))
    os << "template <class V> __device__ __forceinline__ void lf_store_stream(V* p, const V& v) {\n"
          "  if constexpr (sizeof(V) % 16 == 0) {\n"
          "#pragma unroll\n"
          "    for (int k = 0; k < (int)(sizeof(V) / 16); ++k)\n"
          "      __stcs(reinterpret_cast<uint4*>(p) + k, reinterpret_cast<const uint4*>(&v)[k]);\n"
          "  } else if constexpr (sizeof(V) == 8) {\n"
          "    __stcs(reinterpret_cast<uint2*>(p), *reinterpret_cast<const uint2*>(&v));\n"
          "  } else if constexpr (sizeof(V) == 4) {\n"
          "    __stcs(reinterpret_cast<unsigned*>(p), *reinterpret_cast<const unsigned*>(&v));\n"
          "  } else {\n"
          "    *p = v;\n"
          "  }\n"
          "}\n\n";
  os << "typedef " << (ir.index32 ? "int" : "long long") << " idx_t;\n\n";
  // Unravelling divides by dimensions; the host computes each one's constants (codegen/KernelAbi.h: FastDivisor32,
  // FastDivisor64, whose layouts these are).
  if (has_divisor_params(ir)) {
    if (ir.index32)
      os << "struct lf_divisor { unsigned mul; unsigned shift; };\n"
            "__device__ __forceinline__ idx_t lf_div(idx_t n, lf_divisor d) { return (idx_t)((__umulhi((unsigned)n, "
            "d.mul) + (unsigned)n) >> d.shift); }\n";
    else
      os << "struct lf_divisor { unsigned long long mul; unsigned shift; };\n"
            "__device__ __forceinline__ idx_t lf_div(idx_t n, lf_divisor d) { return (idx_t)((__umul64hi((unsigned "
            "long long)n, d.mul) + (unsigned long long)n) >> d.shift); }\n";
    os << "__device__ __forceinline__ idx_t lf_mod(idx_t n, idx_t p, lf_divisor d) { return n - lf_div(n, d) * p; "
          "}\n\n";
  }
  // Divisions of values by a scalar (codegen/ValueDivisors.h): the magnitudes are divided with the host's constants
  // (codegen/KernelAbi.h: fast_value_divisor64/32, whose layouts these are), then signed as NumPy's floor division and
  // remainder are (graph/OpMath.inc: toward -inf, the remainder with the divisor's sign, 0 for a divisor of 0; MIN //
  // -1 wraps to MIN). A non-negative dividend over a positive divisor (an index scrambled by a multiply and a modulus)
  // needs none of the signs' handling: that test first (the divisor's sign is the same for the whole kernel, so a
  // warp branches apart only where its dividends' signs differ).
  if (!ir.value_divisors.empty())
    os << "struct lf_vdiv64 { unsigned long long mul; unsigned shift; };\n"
          "struct lf_vdiv32 { unsigned mul; unsigned shift; };\n"
          "__device__ __forceinline__ unsigned long long lf_udiv(unsigned long long n, lf_vdiv64 d) { return "
          "(__umul64hi(n, d.mul) + n) >> d.shift; }\n"
          "__device__ __forceinline__ unsigned lf_udiv(unsigned n, lf_vdiv32 d) { return (__umulhi(n, d.mul) + n) >> "
          "d.shift; }\n"
          "template <class T, class U, class D> __device__ __forceinline__ T lf_floor_divide_by(T a, T b, D d) {\n"
          "  if (a >= 0 && b > 0) return (T)lf_udiv((U)a, d);\n"
          "  if (b == 0) return 0;\n"
          "  const U ua = a < 0 ? (U)0 - (U)a : (U)a, ub = b < 0 ? (U)0 - (U)b : (U)b, q = lf_udiv(ua, d);\n"
          "  return (a < 0) != (b < 0) ? (T)((U)0 - q - (U)(ua != q * ub)) : (T)q;\n"
          "}\n"
          "template <class T, class U, class D> __device__ __forceinline__ T lf_remainder_by(T a, T b, D d) {\n"
          "  if (a >= 0 && b > 0) return (T)((U)a - lf_udiv((U)a, d) * (U)b);\n"
          "  if (b == 0) return 0;\n"
          "  const U ua = a < 0 ? (U)0 - (U)a : (U)a, ub = b < 0 ? (U)0 - (U)b : (U)b, r = ua - lf_udiv(ua, d) * ub;\n"
          "  const U m = r != 0 && (a < 0) != (b < 0) ? ub - r : r;\n"
          "  return b < 0 ? (T)((U)0 - m) : (T)m;\n"
          "}\n\n";
  // The repeated steps' parameters (codegen/KernelAbi.h: RepeatedParams, step_params_layout).
  if (const RepeatedSteps& steps = ir.repeated_steps; steps.params_per_step > 0) {
    os << "struct lf_steps_t {";
    for (int k = 0; k < steps.params_per_step; ++k)
      os << " " << cuda_type(ir.params[std::size_t(steps.first_param + k)].dtype) << " a" << k << "[" << steps.count
         << "];";
    os << " };\n";
    os << "static_assert(sizeof(lf_steps_t) == " << step_params_layout(ir).size
       << ", \"the host packs the steps' parameters in this layout\");\n\n";
  }
  // A row held in registers needs them: with fewer resident blocks asked for, ptxas keeps it there instead of
  // spilling to reach full occupancy. A scan asks for more blocks than ptxas would give it (its tiles wait on
  // each other, so more of them at once hide the waits).
  os << "extern \"C\" __global__ void __launch_bounds__(" << kBlockSize;
  if (const int blocks = ir.schedule == Schedule::Scan ? scan_min_blocks(ir) : register_row_min_blocks(ir))
    os << ", " << blocks;
  os << ") " << ir.name << "(";
  const char* separator = "";
  for_each_abi_param(ir, [&](const AbiParam& p) {
    os << separator << abi_declaration(ir, p);
    separator = ", ";
  });
}

// The expression of a value op (Unary, Binary, Cast, Select) of operands named a, b, c.
std::string op_expression(const KernelIR& ir, const Instr& in, const std::string& a, const std::string& b,
                          const std::string& c) {
  switch (in.op) {
  case IrOp::Unary: return "lf_" + std::string(graph::name_of(graph::UnaryOp(in.fn))) + "(" + a + ")";
  case IrOp::Binary:
    if (const int slot = value_divisor_of(ir, in); slot >= 0)
      return "lf_" + std::string(graph::name_of(graph::BinaryOp(in.fn))) + "_by<" + cuda_type(in.dtype) + ", " +
             (in.dtype == DType::Int64 ? "unsigned long long" : "unsigned") + ", " +
             (in.dtype == DType::Int64 ? "lf_vdiv64" : "lf_vdiv32") + ">(" + a + ", " + b + ", lf_vd" +
             std::to_string(slot) + ")";
    return "lf_" + std::string(graph::name_of(graph::BinaryOp(in.fn))) + "(" + a + ", " + b + ")";
  case IrOp::Cast:
    return std::string("lf_cast<") + cuda_type(in.dtype) + ", " + cuda_type(ir.code[std::size_t(in.a)].dtype) + ">(" +
           a + ")";
  case IrOp::Select: return a + " ? " + b + " : " + c;
  default: break;
  }
  LAZYFUSE_ASSERT(false, (std::string("op_expression: not a value op: ") + ir_op_name(in.op)).c_str());
  return {};
}

// The type of an instruction's value in kernel text.
std::string value_type(const Instr& in) {
  return is_index_op(in.op) ? "idx_t" : is_predicate_op(in.op) ? "bool" : cuda_type(in.dtype);
}

// One instruction as a statement: `const T vN = <expression>;` (or a store). `root_lin`: the LinearIndex
// instruction; in vector mode its unravelled coordinates come from u<g>_c<k>, computed once per vector, with the
// last one stepped by j. `gathered` (vector mode): the Load instructions whose values were read as vectors before
// the loop over j, into lf_g<instruction>. `grouped`: the Random instructions whose four values were computed
// before a loop over four elements j, into lf_r<instruction>: read where lf_rg<instruction> (the group check)
// holds, always where the index is `root_lin` (the elementwise kernel's own index, or a reduction loop's r whose
// groups are aligned). `errors_in_register`: a failed index check ors its bit into the thread's lf_err, which the
// kernel reports once at its end, instead of an atomic behind a branch at each check.
void print_instruction(CodeWriter& w, const KernelIR& ir, std::size_t n, Mode mode, int root_lin,
                       const std::vector<bool>* gathered = nullptr, const std::vector<bool>* grouped = nullptr,
                       bool errors_in_register = false) {
  const Instr& in = ir.code[n];
  const char* t = cuda_type(in.dtype);
  if (in.op == IrOp::StoreAt) {
    w.line("out", in.slot, "[", v(in.a), "] = ", v(in.b), ";");
    return;
  }
  if (in.op == IrOp::CheckedIndex) {
    // 64-bit whatever the index width, so that no index value wraps into range; unsigned values never count from
    // the end. Out of range: report (where the predicate holds) and read element 0 instead.
    const bool is_unsigned = is_unsigned_integer(ir.code[std::size_t(in.a)].dtype);
    const std::string bit = std::to_string(1u << (in.slot % 32)) + "u";
    w.line("idx_t ", v(int(n)), ";");
    w.line("{");
    if (errors_in_register) {
      // No branch: the loads that follow stay free to be issued together.
      auto ind = w.indent();
      w.line("long long lf_t = (long long)", v(in.a), ";");
      if (!is_unsigned) w.line("if (lf_t < 0) lf_t += (long long)", v(in.b), ";");
      w.line("const bool lf_bad = (unsigned long long)lf_t >= (unsigned long long)", v(in.b), ";");
      w.line("lf_err |= ", in.c >= 0 ? "lf_bad && " + v(in.c) : std::string("lf_bad"), " ? ", bit, " : 0u;");
      w.line(v(int(n)), " = lf_bad ? (idx_t)0 : (idx_t)lf_t;");
      w.line("}");
      return;
    }
    {
      auto ind = w.indent();
      w.line("long long lf_t = (long long)", v(in.a), ";");
      if (!is_unsigned) w.line("if (lf_t < 0) lf_t += (long long)", v(in.b), ";");
      w.line("if ((unsigned long long)lf_t >= (unsigned long long)", v(in.b), ") {");
      {
        auto ind2 = w.indent();
        const std::string flag = "atomicOr(lf_error, " + bit + ");";
        if (in.c >= 0)
          w.line("if (", v(in.c), ") ", flag);
        else
          w.line(flag);
        w.line("lf_t = 0;");
      }
      w.line("}");
      w.line(v(int(n)), " = (idx_t)lf_t;");
    }
    w.line("}");
    return;
  }
  if (in.op == IrOp::Store) {
    if (mode == Mode::Vector)
      w.line("s", in.slot, ".v[j] = ", v(in.a), ";");
    else
      w.line("out", in.slot, "[i] = ", v(in.a), ";");
    return;
  }
  std::ostringstream e;
  switch (in.op) {
  case IrOp::LinearIndex: e << "i"; break;
  case IrOp::IndexParam:
  case IrOp::ScalarParam: e << "p" << in.slot; break;
  case IrOp::IndexConst: e << "(idx_t)" << in.imm; break;
  case IrOp::IAdd: e << v(in.a) << " + " << v(in.b); break;
  case IrOp::ISub: e << v(in.a) << " - " << v(in.b); break;
  case IrOp::IMul: e << v(in.a) << " * " << v(in.b); break;
  case IrOp::IDiv: e << v(in.a) << " / " << v(in.b); break;
  case IrOp::IMod: e << v(in.a) << " % " << v(in.b); break;
  case IrOp::Coord:
    if (mode == Mode::Vector && in.a == root_lin) {
      e << "u" << in.slot << "_c" << in.imm;
      if (std::size_t(in.imm) + 1 == ir.unravels[std::size_t(in.slot)].size()) e << " + j";
    } else {
      e << coord_expr(ir, in);
    }
    break;
  case IrOp::ILt: e << v(in.a) << " < " << v(in.b); break;
  case IrOp::IGe: e << v(in.a) << " >= " << v(in.b); break;
  case IrOp::IEq: e << v(in.a) << " == " << v(in.b); break;
  case IrOp::PAnd: e << v(in.a) << " && " << v(in.b); break;
  case IrOp::Load:
    if (gathered && (*gathered)[n])
      e << "lf_g" << n << ".v[j]";
    else if (in.b >= 0)
      e << v(in.b) << " ? in" << in.slot << "[" << v(in.a) << "] : " << zero_of(in.dtype);
    else
      e << "in" << in.slot << "[" << v(in.a) << "]";
    break;
  case IrOp::LoadLinear:
    if (mode == Mode::Vector)
      e << "l" << in.slot << ".v[j]";
    else
      e << "in" << in.slot << "[i]";
    break;
  case IrOp::IndexToValue:
    if (has_struct_kernel_type(in.dtype))
      e << "lf_cast<" << t << ", lf_i64>((lf_i64)" << v(in.a) << ")";
    else
      e << "(" << t << ")" << v(in.a);
    break;
  case IrOp::Unary:
  case IrOp::Binary:
  case IrOp::Cast:
  case IrOp::Select: e << op_expression(ir, in, v(in.a), v(in.b), v(in.c)); break;
  case IrOp::Random:
    if (grouped && n < grouped->size() && (*grouped)[n]) {
      if (in.a == root_lin) {
        e << "lf_r" << n << "[j]";
        break;
      }
      e << "lf_rg" << n << " ? lf_r" << n << "[j] : ";
    }
    e << graph::random_function(graph::RandomDist(in.fn), in.dtype) << "(" << v(in.b) << ", " << v(in.c) << ", (lf_u64)"
      << v(in.a);
    if (in.slot >= 0) e << ", " << v(in.slot);
    if (in.imm >= 0) e << ", " << v(int(in.imm));
    e << ")";
    break;
  case IrOp::Store:
  case IrOp::StoreAt:
  case IrOp::OuterIndex:
  case IrOp::LoopBegin:
  case IrOp::Accumulate:
  case IrOp::LoopEnd:
  case IrOp::Result:
  case IrOp::CheckedIndex: break;
  case IrOp::ScanStore: break;
  }
  w.line("const ", value_type(in), " ", v(int(n)), " = ", e.str(), ";");
}

// ---- Elementwise kernels ----
// Each thread runs a grid-stride loop over chunks of blockDim.x * kVectorsPerThread vectors; whole chunks take
// the vector path (all loads first, then the body for each element j of each vector, then vector stores), the
// rest the scalar tail.
class ElementwisePrinter {
public:
  explicit ElementwisePrinter(const KernelIR& ir)
      : ir_(ir), gathered_(ir.unit_step_loads), grouped_(ir.unit_step_randoms), dependent_(data_dependent_indices(ir)) {
    for (std::size_t k = 0; k < ir.code.size(); ++k)
      if (ir.code[k].op == IrOp::LinearIndex) root_lin_ = int(k);
    root_group_.assign(ir.unravels.size(), false);
    for (auto& in : ir.code)
      if (in.op == IrOp::Coord && in.a == root_lin_) root_group_[std::size_t(in.slot)] = true;
    unravelled_ = std::find(root_group_.begin(), root_group_.end(), true) != root_group_.end();
    linear_.assign(ir.inputs.size(), false);
    for (auto& in : ir.code)
      if (in.op == IrOp::LoadLinear) linear_[std::size_t(in.slot)] = true;
    any_gathered_ = std::find(gathered_.begin(), gathered_.end(), true) != gathered_.end();
    for (std::size_t k = 0; k < grouped_.size(); ++k)
      if (grouped_[k] && ir.code[k].a != root_lin_) any_grouped_elsewhere_ = true;
  }

  std::string print() {
    std::ostringstream header;
    print_header(header, ir_);
    w_.text(header.str()).text(") {\n");
    {
      auto in = w_.indent();
      if (checks_) w_.line("unsigned lf_err = 0u;");
      step_params_to_shared();
      if (tiles_.any())
        tiled_or_chunks();
      else
        chunk_loop();
      if (checks_) w_.line("if (lf_err != 0u) atomicOr(lf_error, lf_err);");
    }
    w_.line("}");
    return w_.str();
  }

private:
  static constexpr int V = kElementsPerThread;

  // A block's chunk is U * blockDim vectors; the thread's vector u starts at lf_first + u * blockDim * V, so each
  // of the U loads of a warp reads one contiguous 512-byte run (float32).
  static std::string vector_start() { return "lf_first + (idx_t)u * blockDim.x * " + std::to_string(V); }
  std::string param(int instr) const { return "p" + std::to_string(ir_.code[std::size_t(instr)].slot); }

  void chunk_loop() {
    w_.line("const idx_t lf_chunk = (idx_t)blockDim.x * ", V * U, ";");
    auto loop = w_.block("for (idx_t lf_first = (idx_t)blockIdx.x * lf_chunk + (idx_t)threadIdx.x * ", V,
                         "; lf_first < n; lf_first += (idx_t)gridDim.x * lf_chunk)");
    // The vector path needs all U vectors whole and each inside one row, so the last coordinate steps by j.
    w_.line("bool lf_whole = lf_first + (idx_t)", U - 1, " * blockDim.x * ", V, " + ", V, " <= n;");
    unravel_vectors();
    w_.line("if (lf_whole) {");
    {
      auto in = w_.indent();
      linear_loads();
      gathered_loads();
      vector_body();
    }
    w_.line("} else {");
    {
      auto in = w_.indent();
      scalar_tail();
    }
    w_.line("}");
  }

  // ---- The tiled path (KernelIR::transpose_tiles) ----
  // Where both tile axes are long enough (transpose_tile_units), each block takes units of tiles; per tile, the
  // threads first read the staged loads' elements with the lanes walking the staged axis (the loads' unit step) into
  // shared memory, then compute the tile's elements with the lanes walking the last axis (the output's and the other
  // loads' unit step), reading the staged values back across. Else the chunk loop, the staged loads read in place.
  // A tile spans kTransposeTile elements of the staged axis and tile_last_ of the last (kTransposeTileWide with
  // KernelIR::transpose_tiles_wide, whose planes pair no tiles); each phase covers it in passes_ passes.
  static_assert(kTransposeTile % kWarpSize == 0 && kTransposeTileWide % kTransposeTile == 0 &&
                    kTransposeTile * kTransposeTile % kBlockSize == 0 && kBlockSize % kTransposeTileWide == 0,
                "a tile row is whole warps; the block covers a tile in whole passes");

  std::string tile_param(int axis) const { return param(ir_.unravels[std::size_t(tiles_.group)][std::size_t(axis)]); }
  // A phase whose lanes walk `lanes_axis`: its lane, and its row in pass e. kTransposeTile lanes walk the staged
  // axis, tile_last_ the last.
  std::string lane(int lanes_axis) const { return wide_ && lanes_axis != tiles_.axis ? "lf_wlane" : "lf_lane"; }
  std::string row(int lanes_axis) const {
    const bool along_last = wide_ && lanes_axis != tiles_.axis;
    return std::string(along_last ? "lf_wrow" : "lf_row") + " + " +
           std::to_string(kBlockSize / (along_last ? tile_last_ : kTransposeTile)) + " * e";
  }
  int tile_rank() const { return int(ir_.unravels[std::size_t(tiles_.group)].size()); }

  void tiled_or_chunks() {
    const int last = tile_rank() - 1, axis = tiles_.axis;
    w_.line("const idx_t lf_da = ", tile_param(axis), ", lf_db = ", tile_param(last), ";");
    w_.line("if (lf_da >= ", kTransposeTileMinExtent, " && lf_db >= ", kTransposeTileMinExtent, ") {");
    {
      auto ind = w_.indent();
      tiled();
    }
    w_.line("} else {");
    {
      auto ind = w_.indent();
      chunk_loop();
    }
    w_.line("}");
  }

  void tiled() {
    const int last = tile_rank() - 1;
    for (std::size_t k = 0; k < ir_.code.size(); ++k) {
      if (!tiles_.staged[k]) continue;
      const std::string t = cuda_type(ir_.code[k].dtype);
      // Raw bytes: the half and complex kernel types have constructors, which __shared__ variables may not run.
      w_.line("__shared__ __align__(16) unsigned char lf_tb", k, "[", tile_last_ * (kTransposeTile + 1), " * sizeof(",
              t, ")];");
      w_.line(t, " (*const lf_t", k, ")[", kTransposeTile + 1, "] = reinterpret_cast<", t, " (*)[", kTransposeTile + 1,
              "]>(lf_tb", k, ");");
    }
    w_.line("const idx_t lf_na = (lf_da + ", kTransposeTile - 1, ") / ", kTransposeTile, ", lf_nb = (lf_db + ",
            tile_last_ - 1, ") / ", tile_last_, ";");
    if (wide_) {
      w_.line("const idx_t lf_per_plane = lf_na * lf_nb;");
    } else {
      w_.line("const bool lf_pairs = lf_na == lf_nb;");
      w_.line("const idx_t lf_per_plane = lf_pairs ? lf_na * (lf_na + 1) / 2 : lf_na * lf_nb;");
    }
    w_.line("const idx_t lf_units = n / (lf_da * lf_db) * lf_per_plane;");
    // C-order strides of the tiles' group: the linear index of a tile element from its coordinates.
    w_.line("const idx_t lf_st", last, " = 1;");
    for (int j = last; j-- > 0;) w_.line("const idx_t lf_st", j, " = lf_st", j + 1, " * ", tile_param(j + 1), ";");
    w_.line("const int lf_lane = threadIdx.x % ", kTransposeTile, ", lf_row = threadIdx.x / ", kTransposeTile, ";");
    if (wide_)
      w_.line("const int lf_wlane = threadIdx.x % ", tile_last_, ", lf_wrow = threadIdx.x / ", tile_last_, ";");
    auto units = w_.block("for (idx_t lf_unit = blockIdx.x; lf_unit < lf_units; lf_unit += gridDim.x)");
    w_.line("const idx_t lf_plane = lf_unit / lf_per_plane, lf_q = lf_unit % lf_per_plane;");
    if (wide_)
      w_.line("const idx_t lf_r = lf_q / lf_nb, lf_c = lf_q % lf_nb;");
    else
      pair_or_tile();
    plane_base();
    if (wide_) {
      w_.line("const idx_t lf_a0 = lf_r * ", kTransposeTile, ", lf_b0 = lf_c * ", tile_last_, ";");
      tile_body();
      return;
    }
    w_.line("const int lf_tiles = lf_pairs && lf_r != lf_c ? 2 : 1;");
    auto tiles = w_.block("for (int lf_s = 0; lf_s < lf_tiles; ++lf_s)");
    w_.line("const idx_t lf_a0 = (lf_s == 0 ? lf_r : lf_c) * ", kTransposeTile,
            ", lf_b0 = (lf_s == 0 ? lf_c : lf_r) * ", kTransposeTile, ";");
    tile_body();
  }

  // The unit's tiles: a pair (r, c), (c, r) in a square plane of tiles, else tile (r, c).
  void pair_or_tile() {
    // A pair's number q = c (c + 1) / 2 + r with r <= c: c from a floating-point root, corrected in integers.
    w_.line("idx_t lf_r, lf_c;");
    w_.line("if (lf_pairs) {");
    {
      auto ind = w_.indent();
      w_.line("lf_c = (idx_t)((sqrt(8.0 * (double)lf_q + 1.0) - 1.0) * 0.5);");
      w_.line("while (lf_c > 0 && lf_c * (lf_c + 1) / 2 > lf_q) --lf_c;");
      w_.line("while ((lf_c + 1) * (lf_c + 2) / 2 <= lf_q) ++lf_c;");
      w_.line("lf_r = lf_q - lf_c * (lf_c + 1) / 2;");
    }
    w_.line("} else {");
    {
      auto ind = w_.indent();
      w_.line("lf_r = lf_q / lf_nb;");
      w_.line("lf_c = lf_q % lf_nb;");
    }
    w_.line("}");
  }

  // The plane's coordinates on the other axes, and its first element.
  void plane_base() {
    const int rank = tile_rank(), last = rank - 1, axis = tiles_.axis;
    std::string base = "(idx_t)0";
    if (rank > 2) w_.line("idx_t lf_rest = lf_plane;");
    for (int j = last; j-- > 0;) {
      if (j == axis) continue;
      w_.line("const idx_t lf_tc", j, " = lf_rest % ", tile_param(j), ";");
      w_.line("lf_rest = lf_rest / ", tile_param(j), ";");
      base += " + lf_tc" + std::to_string(j) + " * lf_st" + std::to_string(j);
    }
    w_.line("const idx_t lf_base = ", base, ";");
  }

  // One tile from (lf_a0, lf_b0): staged, then computed.
  void tile_body() {
    stage_tile();
    w_.line("__syncthreads();");
    compute_tile();
    // The next tile's staging overwrites what this one reads.
    w_.line("__syncthreads();");
  }

  // The element of pass e: its coordinates on the tile axes (the lanes walk `lanes_axis`), its linear index, and
  // whether it lies inside the array.
  void tile_element(int lanes_axis) {
    const int last = tile_rank() - 1, axis = tiles_.axis;
    const int rows_axis = lanes_axis == axis ? last : axis;
    w_.line("const idx_t lf_tc", lanes_axis, " = lf_", lanes_axis == axis ? "a0" : "b0", " + ", lane(lanes_axis), ";");
    w_.line("const idx_t lf_tc", rows_axis, " = lf_", rows_axis == axis ? "a0" : "b0", " + ", row(lanes_axis), ";");
    w_.line("const bool lf_in = lf_tc", axis, " < lf_da && lf_tc", last, " < lf_db;");
    w_.line("const idx_t i = lf_base + lf_tc", axis, " * lf_st", axis, " + lf_tc", last, ";");
  }

  // The staged loads' values of the tile, lanes along the staged axis, all loaded before any is stored; with them
  // the tile's early loads (lanes along the last axis), so that both are in flight together.
  void stage_tile() {
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (tiles_.staged[k] || tiles_.early[k]) {
        std::string zeros;
        for (int e = 0; e < passes_; ++e) zeros += (e ? ", " : "") + zero_of(ir_.code[k].dtype);
        w_.line(cuda_type(ir_.code[k].dtype), tiles_.staged[k] ? " lf_sv" : " lf_pv", k, "[", passes_, "] = {", zeros,
                "};");
      }
    load_passes(tiles_.axis, tiles_.staged, "lf_sv");
    load_passes(tile_rank() - 1, tiles_.early, "lf_pv");
    w_.directive("#pragma unroll");
    auto passes = w_.block("for (int e = 0; e < ", passes_, "; ++e)");
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (tiles_.staged[k]) w_.line("lf_t", k, "[", row(tiles_.axis), "][lf_lane] = lf_sv", k, "[e];");
  }

  // The loads `which` of the tile's elements, lanes along `lanes_axis`, into <prefix><instruction>[e].
  void load_passes(int lanes_axis, const std::vector<bool>& which, const char* prefix) {
    if (std::find(which.begin(), which.end(), true) == which.end()) return;
    std::vector<bool> needed(ir_.code.size(), false);
    for (std::size_t k = ir_.code.size(); k-- > 0;) {
      if (!which[k] && !needed[k]) continue;
      const Instr& in = ir_.code[k];
      for (int a : {in.a, in.b, in.c})
        if (a >= 0) needed[std::size_t(a)] = true;
    }
    w_.directive("#pragma unroll");
    auto passes = w_.block("for (int e = 0; e < ", passes_, "; ++e)");
    tile_element(lanes_axis);
    auto inside = w_.block("if (lf_in)");
    for (std::size_t n = 0; n < ir_.code.size(); ++n)
      if (needed[n] && !which[n]) tile_instruction(n);
    for (std::size_t k = 0; k < ir_.code.size(); ++k) {
      if (!which[k]) continue;
      const Instr& in = ir_.code[k];
      if (in.op == IrOp::LoadLinear) {
        w_.line(prefix, k, "[e] = in", in.slot, "[i];");
        continue;
      }
      const std::string at = "in" + std::to_string(in.slot) + "[" + v(in.a) + "]";
      w_.line(prefix, k, "[e] = ", in.b >= 0 ? v(in.b) + " ? " + at + " : " + zero_of(in.dtype) : at, ";");
    }
  }

  // The tile's elements, lanes along the last axis: the whole body, the staged loads read from the tiles.
  void compute_tile() {
    w_.directive("#pragma unroll");
    auto passes = w_.block("for (int e = 0; e < ", passes_, "; ++e)");
    tile_element(tile_rank() - 1);
    auto inside = w_.block("if (lf_in)");
    for (std::size_t n = 0; n < ir_.code.size(); ++n) {
      if (tiles_.staged[n])
        w_.line("const ", cuda_type(ir_.code[n].dtype), " ", v(int(n)), " = lf_t", n, "[", lane(tile_rank() - 1), "][",
                row(tile_rank() - 1), "];");
      else if (tiles_.early[n])
        w_.line("const ", cuda_type(ir_.code[n].dtype), " ", v(int(n)), " = lf_pv", n, "[e];");
      else
        tile_instruction(n);
    }
  }

  // One instruction at a tile element: the output's coordinates in the tiles' group are the element's own.
  void tile_instruction(std::size_t n) {
    const Instr& in = ir_.code[n];
    if (in.op == IrOp::Coord && in.a == root_lin_ && in.slot == tiles_.group)
      w_.line("const idx_t ", v(int(n)), " = lf_tc", in.imm, ";");
    else
      print_instruction(w_, ir_, n, Mode::Scalar, root_lin_, nullptr, nullptr, checks_);
  }

  // The coordinates of each vector's first element in the output's unravel groups, and whether each vector stays
  // in its row.
  void unravel_vectors() {
    for (std::size_t g = 0; g < ir_.unravels.size(); ++g)
      if (root_group_[g])
        for (std::size_t k = 0; k < ir_.unravels[g].size(); ++k) w_.line("idx_t lf_u", g, "_c", k, "[", U, "];");
    if (!unravelled_) return;
    w_.directive("#pragma unroll");
    auto loop = w_.block("for (int u = 0; u < ", U, "; ++u)");
    w_.line("idx_t lf_rest, lf_next;");
    for (std::size_t g = 0; g < ir_.unravels.size(); ++g) {
      if (!root_group_[g]) continue;
      const auto& dims = ir_.unravels[g];
      const std::string c = "lf_u" + std::to_string(g) + "_c";
      w_.line("lf_rest = ", vector_start(), ";");
      for (std::size_t k = dims.size(); k-- > 0;) {
        if (k == 0) {
          w_.line(c, "0[u] = lf_rest;");
        } else {
          const std::string slot = std::to_string(ir_.code[std::size_t(dims[k])].slot);
          w_.line("lf_next = lf_div(lf_rest, lf_d", slot, ");");
          w_.line(c, k, "[u] = lf_rest - lf_next * p", slot, ";");
          w_.line("lf_rest = lf_next;");
        }
      }
      w_.line("lf_whole = lf_whole && ", c, dims.size() - 1, "[u] + ", V, " <= ", param(dims.back()), ";");
    }
  }

  // Inside a loop over u, the names the body uses (base, u<g>_c<k>, l<k>, lf_g<k>) bound to vector u's values.
  void vector_bindings(bool values) {
    w_.line("const idx_t base = ", vector_start(), ";");
    for (std::size_t g = 0; g < ir_.unravels.size(); ++g)
      if (root_group_[g])
        for (std::size_t k = 0; k < ir_.unravels[g].size(); ++k)
          w_.line("const idx_t u", g, "_c", k, " = lf_u", g, "_c", k, "[u];");
    if (!values) return;
    for (std::size_t k = 0; k < ir_.inputs.size(); ++k)
      if (linear_[k]) w_.line("const lf_vec<", cuda_type(ir_.inputs[k].dtype), ">& l", k, " = lf_l", k, "[u];");
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (gathered_[k]) w_.line("const lf_vec<", cuda_type(ir_.code[k].dtype), ">& lf_g", k, " = lf_gv", k, "[u];");
  }

  // All loads of all U vectors first, so they are in flight together before any arithmetic. Measured on the H200
  // (2026-11-30), two vectors against one: chain 2^26 0.198 vs 0.217 ms, blackscholes 2^25 0.182 vs 0.187 ms,
  // heat2d 8192^2 0.155 vs 0.165 ms.
  void linear_loads() {
    for (std::size_t k = 0; k < ir_.inputs.size(); ++k) {
      if (!linear_[k]) continue;
      const char* t = cuda_type(ir_.inputs[k].dtype);
      w_.line("lf_vec<", t, "> lf_l", k, "[", U, "];");
      w_.directive("#pragma unroll");
      w_.line("for (int u = 0; u < ", U, "; ++u) lf_l", k, "[u] = *reinterpret_cast<const lf_vec<", t, ">*>(in", k,
              " + ", vector_start(), ");");
    }
  }

  // Loads through index arithmetic (views, broadcasts) whose address steps by one with j (KernelIR::
  // unit_step_loads) read their four values at once where the row allows it. Element by element, a warp's loads
  // would be kElementsPerThread elements apart: four times the L1 traffic (measured: heat2d's kernel L1-bound at
  // 98% on the H200).
  void gathered_loads() {
    if (!any_gathered_) return;
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (gathered_[k]) w_.line("lf_vec<", cuda_type(ir_.code[k].dtype), "> lf_gv", k, "[", U, "];");
    w_.directive("#pragma unroll");
    auto loop = w_.block("for (int u = 0; u < ", U, "; ++u)");
    vector_bindings(false);
    for (std::size_t k = 0; k < ir_.code.size(); ++k) {
      if (!gathered_[k]) continue;
      w_.line("idx_t lf_a", k, " = 0;");
      if (ir_.code[k].b >= 0) w_.line("bool lf_p", k, "[", V, "];");
    }
    {
      // The first element's address, and each element's predicate, from the index arithmetic and the values it
      // goes through (addresses_ahead_).
      w_.directive("#pragma unroll");
      auto elements = w_.block("for (int j = 0; j < ", V, "; ++j)");
      w_.line("const idx_t i = base + j;");
      for (std::size_t n = 0; n < ir_.code.size(); ++n)
        if (pure_index(n) || addresses_ahead_[n])
          print_instruction(w_, ir_, n, Mode::Vector, root_lin_, nullptr, nullptr, checks_);
      for (std::size_t k = 0; k < ir_.code.size(); ++k) {
        if (!gathered_[k]) continue;
        w_.line("if (j == 0) lf_a", k, " = ", v(ir_.code[k].a), ";");
        if (ir_.code[k].b >= 0) w_.line("lf_p", k, "[j] = ", v(ir_.code[k].b), ";");
      }
    }
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (gathered_[k]) gathered_load(k);
  }

  // One gathered load: a vector read where every element is wanted and the address is aligned, else four reads.
  void gathered_load(std::size_t k) {
    const Instr& in = ir_.code[k];
    const std::string t = cuda_type(in.dtype), g = "lf_gv" + std::to_string(k) + "[u]";
    const std::string at = "in" + std::to_string(in.slot) + " + lf_a" + std::to_string(k);
    const std::string p = "lf_p" + std::to_string(k);
    std::string all_wanted;
    if (in.b >= 0)
      for (int j = 0; j < V; ++j) all_wanted += p + "[" + std::to_string(j) + "] && ";
    w_.line("if (", all_wanted, "(unsigned long long)(", at, ") % sizeof(lf_vec<", t, ">) == 0) {");
    {
      auto ind = w_.indent();
      w_.line(g, " = *reinterpret_cast<const lf_vec<", t, ">*>(", at, ");");
    }
    w_.line("} else {");
    {
      auto ind = w_.indent();
      w_.directive("#pragma unroll");
      const std::string element = "in" + std::to_string(in.slot) + "[lf_a" + std::to_string(k) + " + j]";
      if (in.b >= 0)
        w_.line("for (int j = 0; j < ", V, "; ++j) ", g, ".v[j] = ", p, "[j] ? ", element, " : ", zero_of(in.dtype),
                ";");
      else
        w_.line("for (int j = 0; j < ", V, "; ++j) ", g, ".v[j] = ", element, ";");
    }
    w_.line("}");
  }

  // The random draws whose vector of V elements is one group of the Philox layout (graph/RandomMath.inc): one
  // call computes all V from one block (float32) or two (float64), where element by element each would run its
  // own. A draw read at the kernel's own index starts every vector on a multiple of V; one read through a view
  // (KernelIR::unit_step_randoms: index a + j) is checked at run time, falling back to the element functions.
  bool is_grouped(std::size_t k) const { return k < grouped_.size() && grouped_[k]; }

  // Only the instructions in [lo, hi) (the passes around repeated steps print their own).
  void grouped_randoms(std::size_t lo = 0, std::size_t hi = std::size_t(-1)) {
    auto wanted = [&](std::size_t k) { return is_grouped(k) && k >= lo && k < hi; };
    if (any_grouped_elsewhere_) {
      for (std::size_t k = 0; k < ir_.code.size(); ++k)
        if (wanted(k) && ir_.code[k].a != root_lin_) w_.line("idx_t lf_ra", k, " = 0;");
      w_.line("{");
      auto first = w_.indent();
      w_.line("const int j = 0;");
      w_.line("const idx_t i = base;");
      for (std::size_t n = 0; n < ir_.code.size(); ++n)
        if (pure_index(n)) print_instruction(w_, ir_, n, Mode::Vector, root_lin_);
      for (std::size_t k = 0; k < ir_.code.size(); ++k)
        if (wanted(k) && ir_.code[k].a != root_lin_) w_.line("lf_ra", k, " = ", v(ir_.code[k].a), ";");
    }
    if (any_grouped_elsewhere_) w_.line("}");
    for (std::size_t k = 0; k < ir_.code.size(); ++k) {
      if (!wanted(k)) continue;
      const Instr& in = ir_.code[k];
      std::string call = graph::random_function(graph::RandomDist(in.fn), in.dtype) + "_x4(" + param(in.b) + ", " +
                         param(in.c) + ", (lf_u64)";
      call += in.a == root_lin_ ? "base" : "lf_ra" + std::to_string(k);
      if (in.slot >= 0) call += ", " + param(in.slot);
      if (in.imm >= 0) call += ", " + param(int(in.imm));
      call += ", lf_r" + std::to_string(k) + ")";
      w_.line(cuda_type(in.dtype), " lf_r", k, "[", V, "];");
      if (in.a == root_lin_) {
        w_.line(call, ";");
      } else {
        w_.line("const bool lf_rg", k, " = lf_ra", k, " % ", V, " == 0;");
        w_.line("if (lf_rg", k, ") ", call, ";");
      }
    }
  }

  // The body for each element of each vector, into vectors of the outputs, stored whole.
  void vector_body() {
    if (steps_.any()) return vector_body_with_steps();
    w_.directive("#pragma unroll");
    auto loop = w_.block("for (int u = 0; u < ", U, "; ++u)");
    vector_bindings(true);
    grouped_randoms();
    for (std::size_t k = 0; k < ir_.outputs.size(); ++k) w_.line("lf_vec<", cuda_type(ir_.outputs[k]), "> s", k, ";");
    {
      w_.directive("#pragma unroll");
      auto elements = w_.block("for (int j = 0; j < ", V, "; ++j)");
      w_.line("const idx_t i = base + j;");
      for (std::size_t n = 0; n < ir_.code.size(); ++n)
        print_instruction(w_, ir_, n, Mode::Vector, root_lin_, &gathered_, &grouped_, checks_);
    }
    store_vectors();
  }

  void store_vectors() {
    for (std::size_t k = 0; k < ir_.outputs.size(); ++k)
      if (streams_stores(ir_))
        w_.line("lf_store_stream(reinterpret_cast<lf_vec<", cuda_type(ir_.outputs[k]), ">*>(out", k, " + base), s", k,
                ");");
      else
        w_.line("*reinterpret_cast<lf_vec<", cuda_type(ir_.outputs[k]), ">*>(out", k, " + base) = s", k, ";");
  }

  // The chunk's elements one at a time (the end of the output, and vectors crossing a row).
  void scalar_tail() {
    auto loop = w_.block("for (int u = 0; u < ", U, "; ++u)");
    w_.line("const idx_t base = ", vector_start(), ";");
    w_.line("const idx_t end = base + ", V, " < n ? base + ", V, " : n;");
    auto elements = w_.block("for (idx_t i = base; i < end; ++i)");
    if (!steps_.any()) {
      for (std::size_t n = 0; n < ir_.code.size(); ++n)
        print_instruction(w_, ir_, n, Mode::Scalar, root_lin_, nullptr, nullptr, checks_);
      return;
    }
    // The steps as a loop, element by element.
    const std::size_t S = std::size_t(steps_.start);
    for (std::size_t n = 0; n < S; ++n)
      print_instruction(w_, ir_, n, Mode::Scalar, root_lin_, nullptr, nullptr, checks_);
    for (int k = 0; k < steps_.period; ++k) {
      if (!steps_.kept(k)) continue;
      const int init = steps_.initial[std::size_t(k)];
      const Instr& in = ir_.code[S + std::size_t(k)];
      w_.line(value_type(in), " lf_c", k, " = ", init >= 0 ? v(init) : zero_of(in.dtype), ";");
    }
    steps_loop("");
    print_after_steps(Mode::Scalar, "");
  }

  // ---- Repeated steps (KernelIR::repeated_steps, codegen/Reroll.h) ----
  // The vector path in three passes over the thread's U * V elements: the code before the steps, element by element;
  // the steps, each copy's parameters read once and applied to every element, so that a parameter read costs
  // 1 / (U * V) per element and the elements' chains run side by side; the code after the steps, element by element.
  // Values crossing from one pass to the next live in arrays over the elements (registers once unrolled): lf_x<n> for
  // a value from before the steps, lf_c<k> for step value k (the previous copy's inside the loop, the last after it).
  static constexpr int kStepsUnroll = 4;
  /// Most bytes of step parameters copied into shared memory (the partitioner keeps a plan's scalars under 16 KiB).
  static constexpr std::size_t kMaxSharedStepParamBytes = 16 * 1024;

  // The steps' parameters, read by every thread at every copy, copied once per block into shared memory. Read from the
  // parameter space at a counter (an indexed constant load), the 1,000-step loop's kernel took 300 us against the
  // hand-written kernel's 92 (Nsight Compute, H200): each SM's warps walk 8 KB of parameters at different copies, more
  // than the constant cache keeps. The barrier is reached by every thread (nothing returns before it).
  bool steps_in_shared() const {
    return steps_.params_per_step > 0 && step_params_layout(ir_).size <= kMaxSharedStepParamBytes;
  }
  void step_params_to_shared() {
    if (!steps_in_shared()) return;
    const std::size_t bytes = step_params_layout(ir_).size;
    const char* word = bytes % 4 == 0 ? "unsigned" : "unsigned char";
    const std::size_t words = bytes % 4 == 0 ? bytes / 4 : bytes;
    w_.line("__shared__ __align__(16) unsigned char lf_steps_sm[", bytes, "];");
    w_.line("for (int lf_i = threadIdx.x; lf_i < ", words, "; lf_i += blockDim.x) reinterpret_cast<", word,
            "*>(lf_steps_sm)[lf_i] = reinterpret_cast<const ", word, "*>(&lf_steps)[lf_i];");
    w_.line("__syncthreads();");
    w_.line("const lf_steps_t& lf_steps_in = *reinterpret_cast<const lf_steps_t*>(lf_steps_sm);");
  }
  std::string step_params() const { return steps_in_shared() ? "lf_steps_in" : "lf_steps"; }

  static bool reprinted(const Instr& in) {
    return in.op == IrOp::ScalarParam || in.op == IrOp::IndexParam || in.op == IrOp::IndexConst ||
           in.op == IrOp::LinearIndex;
  }

  // Per instruction before the steps: a value that a later pass reads from an lf_x array (the steps read it in every
  // copy, or the code after them reads it), unless that pass prints it again (parameters, constants, the index).
  std::vector<bool> crossing_values() const {
    const std::size_t S = std::size_t(steps_.start), E = std::size_t(steps_.end()), P = std::size_t(steps_.period);
    std::vector<bool> crossing(S, false);
    auto mark = [&](int a) {
      if (a >= 0 && std::size_t(a) < S && !reprinted(ir_.code[std::size_t(a)])) crossing[std::size_t(a)] = true;
    };
    for (std::size_t k = 0; k < P; ++k) {
      const Instr& x = ir_.code[S + k];
      const Instr& y = ir_.code[S + P + k];
      for (auto [xa, ya] : {std::pair{x.a, y.a}, std::pair{x.b, y.b}, std::pair{x.c, y.c}})
        if (xa == ya) mark(xa); // read by every copy
    }
    for (std::size_t n = E; n < ir_.code.size(); ++n) {
      const Instr& in = ir_.code[n];
      for (int a : {in.a, in.b, in.c}) mark(a);
      if (in.op == IrOp::Random) {
        mark(in.slot);
        mark(int(in.imm));
      }
    }
    return crossing;
  }

  // The loop over the copies. `lane`: "[lf_e]" in the vector path, whose copy applies to every element lf_e; "" in
  // the tail, where the arrays are single values.
  void steps_loop(const std::string& lane) {
    const std::size_t S = std::size_t(steps_.start), P = std::size_t(steps_.period);
    // Parameters that every copy reads (not the copies' own): declared once, before the loop (in the tail they are in
    // scope already).
    std::vector<int> shared_params;
    for (std::size_t k = 0; k < P && !lane.empty(); ++k) {
      const Instr& x = ir_.code[S + k];
      const Instr& y = ir_.code[S + P + k];
      for (auto [xa, ya] : {std::pair{x.a, y.a}, std::pair{x.b, y.b}, std::pair{x.c, y.c}})
        if (xa >= 0 && xa == ya && ir_.code[std::size_t(xa)].op == IrOp::ScalarParam &&
            std::find(shared_params.begin(), shared_params.end(), xa) == shared_params.end())
          shared_params.push_back(xa);
    }
    std::sort(shared_params.begin(), shared_params.end());
    for (int x : shared_params) print_instruction(w_, ir_, std::size_t(x), Mode::Scalar, root_lin_);
    // Unrolled a little, never whole: a constant trip count invites NVCC to unroll a thousand copies (seconds of
    // compile time, the very text this loop saves).
    w_.directive("#pragma unroll ", kStepsUnroll);
    auto loop = w_.block("for (int lf_r = 0; lf_r < ", steps_.count, "; ++lf_r)");
    for (std::size_t k = 0; k < P; ++k) {
      const Instr& in = ir_.code[S + k];
      if (in.op == IrOp::ScalarParam)
        w_.line("const ", cuda_type(in.dtype), " ", v(int(S + k)), " = ", step_params(), ".a",
                in.slot - steps_.first_param, "[lf_r];");
    }
    if (lane.empty()) return step_body(lane);
    w_.directive("#pragma unroll");
    auto elements = w_.block("for (int lf_e = 0; lf_e < ", U * V, "; ++lf_e)");
    step_body(lane);
  }

  // One copy of the steps (for element lf_e in the vector path), the values it keeps stored last.
  void step_body(const std::string& lane) {
    const std::size_t S = std::size_t(steps_.start), P = std::size_t(steps_.period);
    for (std::size_t k = 0; k < P; ++k) {
      const Instr& x = ir_.code[S + k];
      if (x.op == IrOp::ScalarParam) continue;
      const Instr& y = ir_.code[S + P + k];
      auto name = [&](int xa, int ya) -> std::string {
        if (xa < 0) return {};
        if (std::size_t(xa) >= S) return v(xa);                                       // this copy's
        if (xa != ya) return "lf_c" + std::to_string(std::size_t(xa) + P - S) + lane; // the previous copy's
        // Read by every copy: in the tail, the value itself; in the vector path its array, or a parameter.
        return lane.empty() || ir_.code[std::size_t(xa)].op == IrOp::ScalarParam ? v(xa)
                                                                                 : "lf_x" + std::to_string(xa) + lane;
      };
      w_.line("const ", value_type(x), " ", v(int(S + k)), " = ",
              op_expression(ir_, x, name(x.a, y.a), name(x.b, y.b), name(x.c, y.c)), ";");
    }
    for (int k = 0; k < steps_.period; ++k)
      if (steps_.kept(k)) w_.line("lf_c", k, lane, " = ", v(int(S) + k), ";");
  }

  // The code after the steps for one element: the last copy's values it reads, the values from before the steps it
  // reads (`lane`: from their arrays, at "[u * V + j]"; "": in scope already), then its instructions.
  void print_after_steps(Mode mode, const std::string& lane) {
    const std::size_t S = std::size_t(steps_.start), E = std::size_t(steps_.end());
    if (!lane.empty()) {
      const std::vector<bool> crossing = crossing_values();
      std::vector<bool> read(E, false);
      for (std::size_t n = E; n < ir_.code.size(); ++n) {
        const Instr& in = ir_.code[n];
        for (int a : {in.a, in.b, in.c})
          if (a >= 0 && std::size_t(a) < E) read[std::size_t(a)] = true;
        if (in.op == IrOp::Random) {
          if (in.slot >= 0) read[std::size_t(in.slot)] = true;
          if (in.imm >= 0) read[std::size_t(in.imm)] = true;
        }
      }
      for (std::size_t x = 0; x < S; ++x) {
        if (!read[x]) continue;
        if (crossing[x])
          w_.line("const ", value_type(ir_.code[x]), " ", v(int(x)), " = lf_x", x, lane, ";");
        else
          print_instruction(w_, ir_, x, mode, root_lin_);
      }
    }
    for (int k = 0; k < steps_.period; ++k)
      if (steps_.exported[std::size_t(k)])
        w_.line("const ", value_type(ir_.code[S + std::size_t(k)]), " ", v(int(E) - steps_.period + k), " = lf_c", k,
                lane, ";");
    for (std::size_t n = E; n < ir_.code.size(); ++n)
      print_instruction(w_, ir_, n, mode, root_lin_, &gathered_, &grouped_, checks_);
  }

  void vector_body_with_steps() {
    const std::size_t S = std::size_t(steps_.start), E = std::size_t(steps_.end());
    const std::vector<bool> crossing = crossing_values();
    for (std::size_t x = 0; x < S; ++x)
      if (crossing[x]) w_.line(value_type(ir_.code[x]), " lf_x", x, "[", U * V, "];");
    for (int k = 0; k < steps_.period; ++k)
      if (steps_.kept(k)) w_.line(value_type(ir_.code[S + std::size_t(k)]), " lf_c", k, "[", U * V, "];");
    {
      w_.directive("#pragma unroll");
      auto loop = w_.block("for (int u = 0; u < ", U, "; ++u)");
      vector_bindings(true);
      grouped_randoms(0, S);
      w_.directive("#pragma unroll");
      auto elements = w_.block("for (int j = 0; j < ", V, "; ++j)");
      w_.line("const idx_t i = base + j;");
      for (std::size_t n = 0; n < S; ++n)
        print_instruction(w_, ir_, n, Mode::Vector, root_lin_, &gathered_, &grouped_, checks_);
      for (std::size_t x = 0; x < S; ++x)
        if (crossing[x]) w_.line("lf_x", x, "[u * ", V, " + j] = ", v(int(x)), ";");
      for (int k = 0; k < steps_.period; ++k)
        if (steps_.initial[std::size_t(k)] >= 0)
          w_.line("lf_c", k, "[u * ", V, " + j] = ", v(steps_.initial[std::size_t(k)]), ";");
    }
    steps_loop("[lf_e]");
    w_.directive("#pragma unroll");
    auto loop = w_.block("for (int u = 0; u < ", U, "; ++u)");
    vector_bindings(true);
    grouped_randoms(E);
    for (std::size_t k = 0; k < ir_.outputs.size(); ++k) w_.line("lf_vec<", cuda_type(ir_.outputs[k]), "> s", k, ";");
    {
      w_.directive("#pragma unroll");
      auto elements = w_.block("for (int j = 0; j < ", V, "; ++j)");
      w_.line("const idx_t i = base + j;");
      print_after_steps(Mode::Vector, "[u * " + std::to_string(V) + " + j]");
    }
    store_vectors();
  }

  // Index arithmetic that needs no loaded value, which the vector path computes ahead of the values.
  bool pure_index(std::size_t n) const {
    return (is_index_op(ir_.code[n].op) || is_predicate_op(ir_.code[n].op)) && !dependent_[n];
  }

  // Per instruction: not pure index arithmetic, but needed for the address or predicate of a gathered load (a
  // gather index and its check, for a row gather's vectors). The body computes these again with the values: the
  // loads hit the same addresses, and a failed check sets the same bit.
  std::vector<bool> addresses_ahead() const {
    std::vector<bool> ahead(ir_.code.size(), false);
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (gathered_[k]) ahead[k] = true;
    for (std::size_t k = ir_.code.size(); k-- > 0;) {
      if (!ahead[k]) continue;
      const Instr& in = ir_.code[k];
      for (int a : {in.a, in.b, in.c})
        if (a >= 0 && !pure_index(std::size_t(a))) ahead[std::size_t(a)] = true;
    }
    for (std::size_t k = 0; k < ir_.code.size(); ++k)
      if (gathered_[k]) ahead[k] = false;
    return ahead;
  }

  const KernelIR& ir_;
  const int U = vectors_per_thread(ir_); // vectors per thread and trip (declared after ir_, which it reads)
  const std::vector<bool>& gathered_;
  const std::vector<bool>& grouped_;
  const std::vector<bool> dependent_; // data_dependent_indices
  const std::vector<bool> addresses_ahead_ = addresses_ahead();
  const bool checks_ = has_bounds_checks(ir_); // failed checks collect in lf_err, reported at the end
  CodeWriter w_;
  int root_lin_ = -1;
  std::vector<bool> root_group_; // unravel groups of the output's own linear index: unravelled once per vector
  bool unravelled_ = false;
  std::vector<bool> linear_; // inputs read by LoadLinear
  bool any_gathered_ = false;
  bool any_grouped_elsewhere_ = false; // a grouped Random read at another index than the kernel's own
  const TransposeTiles& tiles_ = ir_.transpose_tiles;
  const bool wide_ = ir_.transpose_tiles_wide;
  const int tile_last_ = wide_ ? kTransposeTileWide : kTransposeTile; // a tile's extent along the last axis
  const int passes_ = kTransposeTile * tile_last_ / kBlockSize;       // of each phase over a tile
  const RepeatedSteps& steps_ = ir_.repeated_steps;
};

// ---- Reduction kernels ----
// The outer loop (a block per outer index, a part of one, or a thread per outer index), then the IR in order: each
// loop over r with its accumulators, unrolled, folded and combined over the block; in split kernels, the last block
// to finish combines the blocks' partials and runs what depends on the results.
class ReductionPrinter {
public:
  explicit ReductionPrinter(const KernelIR& ir)
      : ir_(ir), split_(is_split(ir.schedule)), column_(is_column(ir.schedule)), streams_(streams_vector_loads(ir)),
        partial_bytes_(partial_bytes_of(ir)), cache_(ir.row_cache), registers_(ir.register_row_vectors),
        dependent_(data_dependent_indices(ir)), w_(0) {}

  std::string print() {
    std::ostringstream header;
    print_header(header, ir_);
    w_.text(header.str()).text(") {\n");
    {
      auto in = w_.indent();
      shared_memory();
      parameters();
      outer_loop();
    }
    w_.line("}");
    return w_.str();
  }

private:
  // What one loop over r prints with.
  struct Loop {
    std::size_t begin = 0, end = 0;   // LoopBegin, LoopEnd
    std::vector<const Instr*> accs;   // its accumulators
    const RowLoop* row = nullptr;     // Row and Split schedules only
    std::string unroll, r, step, len; // unroll count, the reduced index, the scalar loop's step, the loop's length
  };

  // Block reductions: 32 states of a loop (lf_block_reduce), each at most 8 bytes per accumulator (16 for arg
  // reductions); at least 64 slots of 8 bytes.
  void shared_memory() {
    std::map<int, int> slots_per_loop;
    for (auto& in : ir_.code)
      if (in.op == IrOp::Accumulate) slots_per_loop[in.c] += is_arg(in.fn) ? 2 : 1;
    int slots = 2;
    for (auto& [loop, n] : slots_per_loop) slots = std::max(slots, n);
    w_.line("__shared__ double lf_shared[", 32 * slots, "];");
  }

  // Parameters and constants first: they are visible in every loop.
  void parameters() {
    for (std::size_t k = 0; k < ir_.code.size(); ++k) {
      const Instr& in = ir_.code[k];
      if (in.op == IrOp::IndexParam) w_.line("const idx_t ", v(int(k)), " = p", in.slot, ";");
      if (in.op == IrOp::ScalarParam) w_.line("const ", cuda_type(in.dtype), " ", v(int(k)), " = p", in.slot, ";");
      if (in.op == IrOp::IndexConst) w_.line("const idx_t ", v(int(k)), " = (idx_t)", in.imm, ";");
    }
  }

  // Where the partial of accumulator `acc` for split `q` of this thread's outer element lives: next to the other
  // splits of the same row (a row's combining block reads them with consecutive threads), or next to the
  // neighbouring columns' partials of the same split (consecutive threads write and read consecutive columns).
  std::string partial_index(int acc, const std::string& q) const {
    const std::string a = "(idx_t)" + std::to_string(acc);
    if (column_) return "((" + a + " * lf_splits + " + q + ") * n + lf_o)";
    return "(" + a + " * n * lf_splits + lf_o * lf_splits + " + q + ")";
  }

  void outer_loop() {
    if (column_) {
      // Blocks: lf_tiles groups of blockDim.x outer indices, times lf_splits parts of the reduced range.
      w_.line("const idx_t lf_tiles = (n + blockDim.x - 1) / blockDim.x;");
      w_.line("const idx_t lf_tile = blockIdx.x % lf_tiles;");
      w_.line("const idx_t lf_s = blockIdx.x / lf_tiles;");
      if (!split_) w_.line("const idx_t lf_splits = 1;");
      // Threads past the end compute on the last element (every read stays in bounds) and store nothing.
      w_.line("const bool lf_active = lf_tile * blockDim.x + threadIdx.x < n;");
      w_.line("const idx_t lf_o = lf_active ? lf_tile * blockDim.x + threadIdx.x : n - 1;");
      w_.line(split_ ? "{" : "if (lf_active) {");
    } else if (split_) {
      w_.line("const idx_t lf_o = blockIdx.x / lf_splits;");
      w_.line("const idx_t lf_s = blockIdx.x % lf_splits;");
      w_.line("if (lf_o >= n) return;");
      w_.line("{");
    } else {
      w_.line("for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {");
    }
    {
      auto in = w_.indent();
      row_cache_declarations();
      statements();
      if (split_) split_combine();
    }
    w_.line("}");
  }

  // The row cache: in registers (KernelIR::register_row_vectors: a fully unrolled array of vectors per group, for
  // rows of the length the kernel was lowered for), else one row per region of shared memory, the widest types
  // first (every region starts on a whole vector), used only where the launch gave enough dynamic shared memory.
  void row_cache_declarations() {
    if (cache_.region.empty()) return;
    if (registers_ > 0) {
      for (std::size_t g = 0; g < cache_.region.size(); ++g) {
        w_.line("lf_vec<", cuda_type(group_type(int(g))), "> lf_reg", g, "[", registers_, "];");
        w_.line("bool lf_cached", g, " = false;");
      }
      return;
    }
    const std::string len = v(ir_.code[cache_.loops.front().begin].a);
    w_.line("extern __shared__ __align__(16) unsigned char lf_row_cache[];");
    w_.line("unsigned lf_cache_bytes;");
    w_.line("asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(lf_cache_bytes));");
    w_.line("const unsigned long long lf_cache_row = ((unsigned long long)", len, " + ", kElementsPerThread - 1, ") / ",
            kElementsPerThread, " * ", kElementsPerThread, ";");
    std::vector<std::size_t> order(cache_.region_type.size());
    for (std::size_t q = 0; q < order.size(); ++q) order[q] = q;
    auto size_of = [&](std::size_t q) { return itemsize(cache_.region_type[q]); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return size_of(a) > size_of(b); });
    std::vector<std::size_t> offset(order.size());
    std::size_t bytes = 0;
    for (std::size_t q : order) {
      offset[q] = bytes;
      bytes += size_of(q);
    }
    for (std::size_t g = 0; g < cache_.region.size(); ++g) {
      const std::size_t q = std::size_t(cache_.region[g]);
      const char* t = cuda_type(cache_.region_type[q]);
      w_.line(t, "* const lf_cache", g, " = reinterpret_cast<", t, "*>(lf_row_cache + lf_cache_row * ", offset[q],
              ");");
      w_.line("bool lf_cached", g, " = false;");
    }
    w_.line("const bool lf_cache_fits = lf_cache_row * ", bytes, " <= lf_cache_bytes;");
  }

  // The type of cache group g: its writer's.
  DType group_type(int g) const {
    for (const RowLoop& loop : cache_.loops)
      for (std::size_t b = loop.begin + 1; b < loop.end; ++b)
        if (loop.writes[b] == g) return ir_.code[b].dtype;
    LAZYFUSE_ASSERT(false, "a row cache group that no loop writes");
    return DType::Float32;
  }

  // The IR in order; in a split kernel, what depends on a reduction's result waits for the last block.
  void statements() {
    after_reduction_.assign(ir_.code.size(), false);
    if (split_)
      for (std::size_t k = 0; k < ir_.code.size(); ++k) {
        const Instr& in = ir_.code[k];
        bool dep = in.op == IrOp::Result || in.op == IrOp::Store;
        for (int a : {in.a, in.b, in.c})
          if (a >= 0 && after_reduction_[std::size_t(a)] && in.op != IrOp::LoopBegin) dep = true;
        after_reduction_[k] = dep;
      }
    for (std::size_t k = 0; k < ir_.code.size(); ++k) {
      if (ir_.code[k].op == IrOp::LoopBegin) {
        k = loop(k);
        continue;
      }
      if (split_ && after_reduction_[k]) {
        deferred_.push_back(k);
        continue;
      }
      statement(k);
    }
  }

  // One instruction outside the loops' own constructs.
  void statement(std::size_t k) {
    const Instr& in = ir_.code[k];
    switch (in.op) {
    case IrOp::IndexParam:
    case IrOp::ScalarParam:
    case IrOp::IndexConst: return;
    case IrOp::OuterIndex: w_.line("const idx_t ", v(int(k)), " = lf_o;"); return;
    case IrOp::Result:
      w_.line("const ", cuda_type(in.dtype), " ", v(int(k)), " = lf_acc", in.slot, is_arg(in.fn) ? "_vi" : "_v", ";");
      return;
    case IrOp::Store:
      w_.line(column_ ? "if (lf_active) out" : "if (threadIdx.x == 0) out", in.slot, "[lf_o] = ", v(in.a), ";");
      return;
    default: break;
    }
    // Everything else prints as in elementwise kernels, one instruction at a time.
    print_instruction(w_, ir_, k, Mode::Scalar, aligned_index_, nullptr, grouped_now_);
  }

  // The loop starting at instruction k; returns its LoopEnd.
  std::size_t loop(std::size_t k) {
    const Instr& in = ir_.code[k];
    Loop L;
    L.begin = k;
    for (L.end = k + 1; L.end < ir_.code.size(); ++L.end) {
      if (ir_.code[L.end].op == IrOp::Accumulate && ir_.code[L.end].c == in.slot) L.accs.push_back(&ir_.code[L.end]);
      if (ir_.code[L.end].op == IrOp::LoopEnd && ir_.code[L.end].slot == in.slot) break;
    }
    for (auto& row : cache_.loops)
      if (row.begin == k) L.row = &row;
    // Unrolled with independent accumulators, so that each thread has several loads in flight (the count is a
    // schedule rule: reduction_unroll); the accumulators are combined in a fixed order afterwards (deterministic).
    L.unroll = std::to_string(reduction_unroll(ir_, L.row));
    L.r = v(int(k));
    L.step = "lf_step" + std::to_string(in.slot);
    L.len = v(in.a);
    accumulators(L);
    if (L.row) {
      // Index arithmetic that does not depend on r, once per row (the vector path's alignment test needs it).
      for (std::size_t b = k + 1; b < L.end; ++b)
        if (!L.row->varies[b] && pure_index(b)) statement(b);
    }
    if (L.row && L.row->vector) {
      vector_path(L);
      w_.line("} else {");
    }
    // Every row loop sums in the vector path's order (grouped_loop: four consecutive elements per thread), with
    // scalar accesses where its accesses are not aligned or not vectors: the bits of a reduction must not depend
    // on where its operands happen to start (a view's offset) or on how its values are made (a draw summed where
    // it is generated, with no vector access at all, or the same draw stored and read with vectors).
    if (!column_)
      grouped_loop(L);
    else
      scalar_loop(L);
    if (L.row && L.row->vector) w_.line("}");
    fold_unrolled(L);
    // Column kernels: each thread holds its own outer element's reduction, nothing to combine across the block.
    if (!column_) block_combine(L);
    if (split_) store_partials(L);
    return L.end;
  }

  void accumulators(const Loop& L) {
    for (const Instr* acc : L.accs) {
      const std::string a = "lf_acc" + std::to_string(acc->slot);
      const char* t = cuda_type(acc->dtype);
      const std::string name(graph::name_of(graph::ReduceOp(acc->fn)));
      w_.line(t, " ", a, "[", L.unroll, "];");
      if (is_arg(acc->fn)) w_.line("lf_i64 ", a, "_i[", L.unroll, "];");
      auto init = w_.block("for (int lf_u = 0; lf_u < ", L.unroll, "; ++lf_u)");
      w_.line(a, "[lf_u] = lf_", name, "_identity<", t, ">();");
      if (is_arg(acc->fn)) w_.line(a, "_i[lf_u] = 9223372036854775807LL;");
    }
  }

  // The loop's body, for the element r. `vec`: in the vector path, where vector loads hold the values (element j
  // of each); `cached`: the version that reads values from the row cache (their operands are not computed).
  void loop_body(const Loop& L, bool vec, bool cached) {
    const RowLoop* row = L.row;
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      const Instr& bi = ir_.code[b];
      if (row && !row->varies[b] && pure_index(b)) continue; // hoisted
      if (cached && !row->live[b]) continue;
      if (bi.op == IrOp::Accumulate || (masked_ && bi.op == IrOp::StoreAt && !(vec && row->base[b] != -1))) {
        // A masked trip (register_loops) computes its clamped duplicate elements but neither adds nor stores them.
        if (masked_) w_.line("if (lf_live) {");
        {
          auto in = w_.indent(masked_ ? 2 : 0);
          if (bi.op == IrOp::Accumulate)
            accumulate(bi);
          else
            statement(b);
        }
        if (masked_) w_.line("}");
        continue;
      }
      if (cached && row->reads[b] >= 0) {
        w_.line("const ", cuda_type(bi.dtype), " ", v(int(b)), " = lf_c", b, ".v[j];");
      } else if (vec && row->base[b] != -1) {
        if (bi.op == IrOp::Load)
          w_.line("const ", cuda_type(bi.dtype), " ", v(int(b)), " = lf_l", b, ".v[j];");
        else
          w_.line("lf_s", b, ".v[j] = ", v(bi.b), ";");
      } else {
        statement(b);
      }
      if (vec && row->writes[b] >= 0 && !(bi.op == IrOp::Load && row->base[b] != -1))
        w_.line("lf_w", b, ".v[j] = ", v(int(b)), ";");
    }
  }

  void accumulate(const Instr& bi) {
    const std::string a = "lf_acc" + std::to_string(bi.slot);
    const std::string name(graph::name_of(graph::ReduceOp(bi.fn)));
    if (is_arg(bi.fn))
      w_.line("if (lf_", name, "_better(", v(bi.a), ", (lf_i64)", v(bi.b), ", ", a, "[lf_u], ", a, "_i[lf_u])) { ", a,
              "[lf_u] = ", v(bi.a), "; ", a, "_i[lf_u] = (lf_i64)", v(bi.b), "; }");
    else
      w_.line(a, "[lf_u] = lf_", name, "_combine(", a, "[lf_u], ", v(bi.a), ");");
  }

  // The address of vector access b at element lf_rb, and its vector type.
  std::string vector_address(const Loop& L, std::size_t b) const {
    const Instr& bi = ir_.code[b];
    const std::string base = bi.op == IrOp::Load ? "in" + std::to_string(bi.slot) : "out" + std::to_string(bi.slot);
    return base + (L.row->base[b] == RowLoop::kNoBase ? std::string() : " + " + v(L.row->base[b])) + " + lf_rb";
  }
  std::string vector_type(std::size_t b) const {
    const Instr& bi = ir_.code[b];
    return "lf_vec<" + std::string(cuda_type(bi.op == IrOp::StoreAt ? ir_.outputs[std::size_t(bi.slot)] : bi.dtype)) +
           ">";
  }

  // Vectors when every vector access of this row is aligned. Each group of the row cache is stored by one loop in
  // its vector path and read back by later loops in theirs, over the same elements of the same threads.
  void vector_path(const Loop& L) {
    const RowLoop* row = L.row;
    const std::string ok = "lf_vector" + std::to_string(ir_.code[L.begin].slot);
    std::string aligned = "const bool " + ok + " = true";
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      if (row->base[b] == -1) continue;
      std::string addr = vector_address(L, b);
      addr.resize(addr.size() - std::string(" + lf_rb").size());
      aligned += " && (unsigned long long)(" + addr + ") % sizeof(" + vector_type(b) + ") == 0";
    }
    w_.line(aligned, ";");
    bool writes = false;
    for (std::size_t b = L.begin + 1; b < L.end; ++b) writes = writes || row->writes[b] >= 0;
    for (std::size_t b = L.begin + 1; b < L.end; ++b)
      if (row->writes[b] >= 0)
        w_.line("lf_cached", row->writes[b], " = ", ok, registers_ > 0 ? "" : " && lf_cache_fits", ";");
    w_.line("if (", ok, ") {");
    auto in = w_.indent();
    // A loop that stores or reads cached values walks a row held in registers trip by trip, fully unrolled, so
    // that each trip's vectors are registers of their own.
    cache_versions(L, registers_ > 0 && (writes || row->reads_cache));
  }

  // The loop's vector loops, in a version reading the cache where every group it reads was cached and one
  // computing everything where not.
  void cache_versions(const Loop& L, bool registers) {
    const RowLoop* row = L.row;
    auto loops = [&](bool cached) {
      if (registers)
        register_loops(L, cached);
      else
        vector_loops(L, cached);
    };
    if (!row->reads_cache) {
      loops(false);
      return;
    }
    std::string all = "true";
    for (std::size_t b = L.begin + 1; b < L.end; ++b)
      if (row->reads[b] >= 0) all += " && lf_cached" + std::to_string(row->reads[b]);
    w_.line("if (", all, ") {");
    {
      auto cached = w_.indent();
      loops(true);
    }
    w_.line("} else {");
    {
      auto uncached = w_.indent();
      loops(false);
    }
    w_.line("}");
  }

  // The register path (rows of register_row_vectors trips of blockDim.x * V elements, or of whole vectors ending in
  // the last trip: the launch checks): trip k of thread t at element (t + k * blockDim.x) * V adds into accumulator
  // k % unroll, as trip k of vector_loops does. No test stands between the trips' loads, so all are in flight at
  // once. (A test per trip held each load until the trip before had used its own: on the H100 the layer norm of
  // rows of 8192 took 0.317 ms against 0.191 ms with the shared-memory cache.) A partial last trip therefore loads
  // too, from a start clamped into the row (the row's last vector, which some thread also loads), and masks what it
  // adds and stores with lf_live.
  void register_loops(const Loop& L, bool cached) {
    const std::string V = std::to_string(kElementsPerThread);
    const int whole = ir_.register_row_partial ? registers_ - 1 : registers_;
    if (whole > 0) {
      w_.directive("#pragma unroll");
      auto trips = w_.block("for (int lf_k = 0; lf_k < ", whole, "; ++lf_k)");
      w_.line("const int lf_u = lf_k % ", L.unroll, ";");
      w_.line("const idx_t lf_rb = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * ", V, ";");
      vector_trip(L, cached, true);
    }
    if (!ir_.register_row_partial) return;
    w_.line("{");
    {
      auto in = w_.indent();
      w_.line("const int lf_k = ", registers_ - 1, ";");
      w_.line("const int lf_u = lf_k % ", L.unroll, ";");
      w_.line("const idx_t lf_rt = ((idx_t)threadIdx.x + (idx_t)lf_k * blockDim.x) * ", V, ";");
      w_.line("const bool lf_live = lf_rt < ", L.len, ";");
      w_.line("const idx_t lf_rb = lf_live ? lf_rt : ", L.len, " - ", V, ";");
      masked_ = true;
      vector_trip(L, cached, true);
      masked_ = false;
    }
    w_.line("}");
  }

  // Whole trips first, with no test between their vector loads (so all are in flight at once), then the last,
  // partial trip. The cached and the uncached versions are separate loops for the same reason.
  void vector_loops(const Loop& L, bool cached) {
    const std::string V = std::to_string(kElementsPerThread);
    // The threads walking one row: the block's, or in split kernels those of all the row's blocks.
    const std::string threads = split_ ? "lf_splits * blockDim.x" : "blockDim.x";
    const std::string stride = L.unroll + " * " + threads + " * " + V;
    w_.line("idx_t lf_r0 = (idx_t)", split_ ? "(lf_s * blockDim.x + threadIdx.x)" : "threadIdx.x", " * ", V, ";");
    {
      auto whole = w_.block("for (; lf_r0 + ", stride, " - ", threads, " * ", V, " + ", V, " <= ", L.len,
                            "; lf_r0 += ", stride, ")");
      w_.directive("#pragma unroll");
      auto trips = w_.block("for (int lf_u = 0; lf_u < ", L.unroll, "; ++lf_u)");
      w_.line("const idx_t lf_rb = lf_r0 + lf_u * ", threads, " * ", V, ";");
      vector_trip(L, cached, false);
    }
    auto last = w_.block("if (lf_r0 < ", L.len, ")");
    w_.directive("#pragma unroll");
    auto trips = w_.block("for (int lf_u = 0; lf_u < ", L.unroll, "; ++lf_u)");
    w_.line("const idx_t lf_rb = lf_r0 + lf_u * ", threads, " * ", V, ";");
    w_.line("if (lf_rb + ", V, " <= ", L.len, ") {");
    {
      auto in = w_.indent();
      vector_trip(L, cached, false);
    }
    w_.line("} else {");
    {
      auto in = w_.indent();
      auto elements = w_.block("for (idx_t ", L.r, " = lf_rb; ", L.r, " < ", L.len, "; ++", L.r, ")");
      loop_body(L, false, false);
    }
    w_.line("}");
  }

  // One trip of the vector path over lf_rb .. lf_rb + V - 1: vector loads (or cache reads), the body per element,
  // vector stores and the cache's stores; `registers`: the register path's trip lf_k, whose cache is lf_reg<g>[lf_k].
  void vector_trip(const Loop& L, bool cached, bool registers) {
    const RowLoop* row = L.row;
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      const Instr& bi = ir_.code[b];
      const std::string vt = vector_type(b);
      if (cached && row->reads[b] >= 0 && registers)
        w_.line("const ", vt, " lf_c", b, " = lf_reg", row->reads[b], "[lf_k];");
      else if (cached && row->reads[b] >= 0)
        w_.line("const ", vt, " lf_c", b, " = *reinterpret_cast<const ", vt, "*>(lf_cache", row->reads[b],
                " + lf_rb);");
      else if (row->base[b] != -1 && bi.op == IrOp::StoreAt)
        w_.line(vt, " lf_s", b, ";");
      else if (row->base[b] != -1 && (!cached || row->live[b]))
        w_.line("const ", vt, " lf_l", b, " = ", streams_ ? "lf_load_stream(" : "*", "reinterpret_cast<const ", vt,
                "*>(", vector_address(L, b), ")", streams_ ? ")" : "", ";");
      if (row->writes[b] >= 0 && !(bi.op == IrOp::Load && row->base[b] != -1)) w_.line(vt, " lf_w", b, ";");
    }
    group_calls(L, true);
    {
      w_.directive("#pragma unroll");
      auto elements = w_.block("for (int j = 0; j < ", kElementsPerThread, "; ++j)");
      w_.line("const idx_t ", L.r, " = lf_rb + j;");
      loop_body(L, true, cached);
    }
    end_groups();
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      const Instr& bi = ir_.code[b];
      if (row->base[b] != -1 && bi.op == IrOp::StoreAt)
        w_.line(masked_ ? "if (lf_live) " : "", "*reinterpret_cast<", vector_type(b), "*>(", vector_address(L, b),
                ") = lf_s", b, ";");
      const char* value = bi.op == IrOp::Load && row->base[b] != -1 ? "lf_l" : "lf_w";
      if (row->writes[b] >= 0 && registers) // (this path is taken only where lf_cached<g> is true)
        w_.line("lf_reg", row->writes[b], "[lf_k] = ", value, b, ";");
      else if (row->writes[b] >= 0)
        w_.line("if (lf_cached", row->writes[b], ") *reinterpret_cast<", vector_type(b), "*>(lf_cache", row->writes[b],
                " + lf_rb) = ", value, b, ";");
    }
  }

  // The loop's Random instructions computed four at a time (KernelIR::unit_step_randoms) use the groups of four
  // consecutive r that grouped_loop and the vector path give each thread: one Philox block serves four float32
  // elements.
  bool is_grouped(std::size_t k) const { return k < ir_.unit_step_randoms.size() && ir_.unit_step_randoms[k]; }

  // Before the loop over the four elements lf_rb + j: the group calls of the loop's grouped Random instructions,
  // into lf_r<k>. An index other than r itself is evaluated at r = lf_rb and checked for a group start at run time.
  // `aligned`: lf_rb is a multiple of four, so an index equal to r needs no check.
  void group_calls(const Loop& L, bool aligned) {
    std::vector<std::size_t> checked;
    for (std::size_t b = L.begin + 1; b < L.end; ++b)
      if (is_grouped(b) && !(aligned && ir_.code[b].a == int(L.begin))) checked.push_back(b);
    bool any = false;
    for (std::size_t b = L.begin + 1; b < L.end; ++b) any = any || is_grouped(b);
    if (!any) return;
    if (!checked.empty()) {
      for (std::size_t b : checked) w_.line("idx_t lf_ra", b, " = 0;");
      w_.line("{");
      {
        auto first = w_.indent();
        w_.line("const idx_t ", L.r, " = lf_rb;");
        for (std::size_t b = L.begin + 1; b < L.end; ++b) {
          if (L.row && !L.row->varies[b]) continue; // hoisted before the loop
          if (pure_index(b)) print_instruction(w_, ir_, b, Mode::Scalar, -1);
        }
        for (std::size_t b : checked) w_.line("lf_ra", b, " = ", v(ir_.code[b].a), ";");
      }
      w_.line("}");
    }
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      if (!is_grouped(b)) continue;
      const Instr& in = ir_.code[b];
      const bool check = std::find(checked.begin(), checked.end(), b) != checked.end();
      std::string call = graph::random_function(graph::RandomDist(in.fn), in.dtype) + "_x4(" + v(in.b) + ", " +
                         v(in.c) + ", (lf_u64)" + (check ? "lf_ra" + std::to_string(b) : std::string("lf_rb"));
      if (in.slot >= 0) call += ", " + v(in.slot);
      if (in.imm >= 0) call += ", " + v(int(in.imm));
      call += ", lf_r" + std::to_string(b) + ")";
      w_.line(cuda_type(in.dtype), " lf_r", b, "[", kElementsPerThread, "];");
      if (check) {
        w_.line("const bool lf_rg", b, " = lf_ra", b, " % ", kElementsPerThread, " == 0;");
        w_.line("if (lf_rg", b, ") ", call, ";");
      } else {
        w_.line(call, ";");
      }
    }
    grouped_now_ = &ir_.unit_step_randoms;
    aligned_index_ = aligned ? int(L.begin) : -1;
  }
  void end_groups() {
    grouped_now_ = nullptr;
    aligned_index_ = -1;
  }

  // Row loops (all but column kernels): thread t's trips start at 4 t (times the splits' stride), each takes r = lf_rb
  // .. lf_rb + 3; the row's last, partial group element by element.
  void grouped_loop(const Loop& L) {
    const std::string V = std::to_string(kElementsPerThread);
    std::string start;
    if (split_) {
      start = "lf_s * blockDim.x + threadIdx.x";
      w_.line("const idx_t ", L.step, " = lf_splits * blockDim.x * ", V, ";");
    } else {
      start = "threadIdx.x";
      w_.line("const idx_t ", L.step, " = blockDim.x * ", V, ";");
    }
    w_.line("for (idx_t lf_r0 = (", start, ") * ", V, "; lf_r0 < ", L.len, "; lf_r0 += ", L.unroll, " * ", L.step,
            ") {");
    {
      auto body = w_.indent();
      w_.directive("#pragma unroll");
      auto trips = w_.block("for (int lf_u = 0; lf_u < ", L.unroll, "; ++lf_u)");
      w_.line("const idx_t lf_rb = lf_r0 + lf_u * ", L.step, ";");
      w_.line("if (lf_rb + ", V, " <= ", L.len, ") {");
      {
        auto whole = w_.indent();
        group_calls(L, true);
        w_.directive("#pragma unroll");
        auto elements = w_.block("for (int j = 0; j < ", V, "; ++j)");
        w_.line("const idx_t ", L.r, " = lf_rb + j;");
        loop_body(L, false, false);
      }
      end_groups();
      w_.line("} else {");
      {
        auto partial = w_.indent();
        auto elements = w_.block("for (idx_t ", L.r, " = lf_rb; ", L.r, " < ", L.len, "; ++", L.r, ")");
        loop_body(L, false, false);
      }
      w_.line("}");
    }
    w_.line("}");
  }

  // Column kernels: each split strides over r (its own column), kUnroll elements a trip.
  void scalar_loop(const Loop& L) {
    LAZYFUSE_ASSERT(column_, "rows sum in the vector path's order (grouped_loop)");
    w_.line("const idx_t ", L.step, " = lf_splits;");
    w_.line("if (lf_active) for (idx_t lf_r0 = lf_s; lf_r0 < ", L.len, "; lf_r0 += ", L.unroll, " * ", L.step, ") {");
    w_.directive("#pragma unroll");
    {
      auto trips = w_.block("for (int lf_u = 0; lf_u < ", L.unroll, "; ++lf_u)");
      w_.line("const idx_t ", L.r, " = lf_r0 + lf_u * ", L.step, ";");
      auto inside = w_.block("if (", L.r, " < ", L.len, ")");
      loop_body(L, false, false);
    }
    w_.line("}");
  }

  // Fold the unrolled accumulators into the first, in order.
  void fold_unrolled(const Loop& L) {
    for (const Instr* acc : L.accs) {
      const std::string a = "lf_acc" + std::to_string(acc->slot);
      const std::string name(graph::name_of(graph::ReduceOp(acc->fn)));
      const char* t = cuda_type(acc->dtype);
      {
        auto fold = w_.block("for (int lf_u = 1; lf_u < ", L.unroll, "; ++lf_u)");
        if (is_arg(acc->fn))
          w_.line("if (lf_", name, "_better(", a, "[lf_u], ", a, "_i[lf_u], ", a, "[0], ", a, "_i[0])) { ", a,
                  "[0] = ", a, "[lf_u]; ", a, "_i[0] = ", a, "_i[lf_u]; }");
        else
          w_.line(a, "[0] = lf_", name, "_combine(", a, "[0], ", a, "[lf_u]);");
      }
      w_.line(t, " ", a, "_v = ", a, "[0];");
      if (is_arg(acc->fn)) w_.line("lf_i64 ", a, "_vi = ", a, "_i[0];");
    }
  }

  // The loop's accumulators combined over the block together, by the one tree (lf_block_reduce over the loop's
  // state): one set of barriers for all of them.
  void block_combine(const Loop& L) {
    if (L.accs.empty()) return;
    const int slot = ir_.code[L.begin].slot;
    const std::string S = loop_state_name(slot), st = "lf_st" + std::to_string(slot);
    w_.line(S, " ", st, ";");
    for (const Instr* acc : L.accs) {
      w_.line(st, ".a", acc->slot, " = lf_acc", acc->slot, "_v;");
      if (is_arg(acc->fn)) w_.line(st, ".a", acc->slot, "_i = lf_acc", acc->slot, "_vi;");
    }
    w_.line(st, " = lf_block_reduce(", st, ", reinterpret_cast<", S, "*>(lf_shared));");
    for (const Instr* acc : L.accs) {
      w_.line("lf_acc", acc->slot, "_v = ", st, ".a", acc->slot, ";");
      if (is_arg(acc->fn)) w_.line("lf_acc", acc->slot, "_vi = ", st, ".a", acc->slot, "_i;");
    }
  }

  // Partial of this block: partial_bytes_of(ir) bytes (value, then index) per (accumulator, outer, split); see
  // partial_index.
  void store_partials(const Loop& L) {
    for (const Instr* acc : L.accs) {
      const std::string a = "lf_acc" + std::to_string(acc->slot);
      auto writer = w_.block(column_ ? "if (lf_active)" : "if (threadIdx.x == 0)");
      w_.line("unsigned char* lf_p = lf_partials + ", partial_index(acc->slot, "lf_s"), " * ", partial_bytes_, ";");
      w_.line("*reinterpret_cast<", cuda_type(acc->dtype), "*>(lf_p) = ", a, "_v;");
      if (is_arg(acc->fn)) w_.line("*reinterpret_cast<lf_i64*>(lf_p + ", partial_bytes_ / 2, ") = ", a, "_vi;");
    }
  }

  // The last block to finish combines the partials in split order (fixed, so deterministic) and runs the rest.
  void split_combine() {
    const char* ticket = column_ ? "lf_tile" : "lf_o";
    w_.line("__shared__ bool lf_last;");
    w_.line("__threadfence();");
    w_.line("__syncthreads();");
    w_.line("if (threadIdx.x == 0) lf_last = atomicAdd(lf_tickets + ", ticket, ", 1u) == (unsigned)(lf_splits - 1);");
    w_.line("__syncthreads();");
    w_.line("if (!lf_last) return;");
    w_.line("__threadfence();");
    for (std::size_t k : deferred_) {
      if (ir_.code[k].op == IrOp::Result)
        fold_partials(k);
      else
        statement(k);
    }
    w_.line("if (threadIdx.x == 0) lf_tickets[", ticket, "] = 0u;");
  }

  // Result k of a split kernel. At the first result of a loop, the blocks' partials of all its accumulators are
  // folded in split order into the loop's state lf_fin<loop>, then (row splits) combined over the block by the one
  // tree.
  void fold_partials(std::size_t k) {
    const Instr& in = ir_.code[k];
    int loop = -1;
    for (auto& c : ir_.code)
      if (c.op == IrOp::Accumulate && c.slot == in.slot) loop = c.c;
    const std::string S = loop_state_name(loop), fin = "lf_fin" + std::to_string(loop);
    if (std::find(folded_.begin(), folded_.end(), loop) == folded_.end()) {
      folded_.push_back(loop);
      const auto accs = loop_accumulators(ir_, loop);
      w_.line(S, " ", fin, " = ", S, "::identity();");
      if (column_) {
        // This thread's outer element: its partials in split order, all loads in flight at once (the fold is the
        // kernel's tail: every other block has finished).
        w_.directive("#pragma unroll ", kMaxColumnSplits);
        w_.line("for (idx_t lf_q = 0; lf_q < lf_splits; ++lf_q) {");
      } else {
        // Each thread folds the partials q = threadIdx.x, + blockDim.x, ... in order, then the block tree.
        w_.line("for (idx_t lf_q = threadIdx.x; lf_q < lf_splits; lf_q += blockDim.x) {");
      }
      {
        auto in_loop = w_.indent();
        w_.line(S, " lf_v;");
        for (const Instr* acc : accs) {
          const char* at = cuda_type(acc->dtype);
          const std::string p = "lf_p" + std::to_string(acc->slot);
          w_.line("const unsigned char* ", p, " = lf_partials + ", partial_index(acc->slot, "lf_q"), " * ",
                  partial_bytes_, ";");
          if (is_complex(acc->dtype)) // (__ldcg takes the built-in types: the complex structs word by word)
            w_.line("lf_v.a", acc->slot, " = lf_load_partial_words<", at, ">(", p, ");");
          else
            w_.line("lf_v.a", acc->slot, " = lf_load_partial<", at, ">(", p, ");");
          if (is_arg(acc->fn))
            w_.line("lf_v.a", acc->slot, "_i = lf_load_partial<lf_i64>(", p, " + ", partial_bytes_ / 2, ");");
        }
        w_.line(fin, ".combine(lf_v);");
      }
      w_.line("}");
      if (!column_) w_.line(fin, " = lf_block_reduce(", fin, ", reinterpret_cast<", S, "*>(lf_shared));");
    }
    w_.line("const ", cuda_type(in.dtype), " ", v(int(k)), " = ", fin, ".a", in.slot, is_arg(in.fn) ? "_i" : "", ";");
  }

  // Index arithmetic that needs no loaded value, which loops hoist and the vector paths compute ahead of the values.
  bool pure_index(std::size_t n) const {
    return (is_index_op(ir_.code[n].op) || is_predicate_op(ir_.code[n].op)) && !dependent_[n];
  }

  const KernelIR& ir_;
  const bool split_, column_, streams_;
  const std::int64_t partial_bytes_; // of one partial (split schedules)
  const RowCache& cache_;
  const int registers_;               // KernelIR::register_row_vectors
  bool masked_ = false;               // printing the register path's partial last trip (lf_live masks it)
  const std::vector<bool> dependent_; // data_dependent_indices
  CodeWriter w_;
  std::vector<bool> after_reduction_; // split kernels: instructions that wait for the last block
  std::vector<std::size_t> deferred_;
  const std::vector<bool>* grouped_now_ = nullptr; // while printing a group's elements: the grouped Randoms
  int aligned_index_ =
      -1; // while printing a group's elements: the loop variable, when its groups are aligned // ... in order
  std::vector<int> folded_; // split kernels: loops whose partials the last block has folded
};

// ---- Scan kernels (Schedule::Scan) ----
// codegen/Schedule.h's scan order, as CUDA. Tiled (a contiguous scan axis of at least kScanTileMinLength): a block per
// tile, tile blockIdx.x (blocks start in that order, so a tile waits only on tiles held by blocks that started before
// it, as in CUB's look-back); each tile publishes its aggregate (flag 1) and a group's last tile then its group's
// inclusive value (flag 2), tagged with the launch's epoch (lf_epoch), so that the statuses earlier launches left in
// the tickets read as unpublished and nothing clears them (Executor::tagged_tickets). Otherwise a thread per line
// walks the scan axis.
constexpr const char* kScanHelpers = R"(// Any type up to 16 bytes, 32 bits at a time.
template <class T, class S> __device__ __forceinline__ T lf_scan_shuffle(T v, S shuffle_word) {
  unsigned int w[(sizeof(T) + 3) / 4] = {};
  memcpy(w, &v, sizeof(T));
  for (int k = 0; k < (int)((sizeof(T) + 3) / 4); ++k) w[k] = shuffle_word(w[k]);
  memcpy(&v, w, sizeof(T));
  return v;
}
template <class T> __device__ __forceinline__ T lf_scan_shfl_up(T v, int off) {
  return lf_scan_shuffle(v, [off](unsigned int w) { return __shfl_up_sync(0xffffffffu, w, off); });
}
// A tile's status value for other blocks: written to and read from L2, never a stale L1 line.
template <class T> __device__ __forceinline__ void lf_scan_publish(unsigned char* p, T v) {
  static_assert(sizeof(T) <= 16, "a scan's status value takes at most 16 bytes");
  unsigned int w[4] = {};
  memcpy(w, &v, sizeof(T));
  for (int k = 0; k < 4; ++k) __stcg(reinterpret_cast<unsigned int*>(p) + k, w[k]);
}
template <class T> __device__ __forceinline__ T lf_scan_read(const unsigned char* p) {
  unsigned int w[4];
  for (int k = 0; k < 4; ++k) w[k] = __ldcg(reinterpret_cast<const unsigned int*>(p) + k);
  T v;
  memcpy(&v, w, sizeof(T));
  return v;
}
// A tile's status as one word (values up to 4 bytes): the flag in the high half, the value's bits in the low.
template <class T> __device__ __forceinline__ unsigned long long lf_scan_word(unsigned int flag, T v) {
  static_assert(sizeof(T) <= 4, "a packed scan status holds at most 4 bytes of value");
  unsigned int bits = 0u;
  memcpy(&bits, &v, sizeof(T));
  return (unsigned long long)flag << 32 | bits;
}
template <class T> __device__ __forceinline__ T lf_scan_value(unsigned long long word) {
  const unsigned int bits = (unsigned int)word;
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}
template <class T> __device__ __forceinline__ T lf_scan_shfl_from(T v, int lane) {
  return lf_scan_shuffle(v, [lane](unsigned int w) { return __shfl_sync(0xffffffffu, w, lane); });
}
// Kogge-Stone over the warp's lanes (offsets 1, 2, 4, 8, 16): lane l's value depends on lanes 0 ... l only.
template <class T, class F> __device__ __forceinline__ T lf_scan_warp(T v, int lane, F combine) {
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const T y = lf_scan_shfl_up(v, off);
    if (lane >= off) v = combine(y, v);
  }
  return v;
}
// A flag word of a tiled scan's status: the launch's epoch above the flag's two bits. A word of another epoch (an
// earlier launch's) reads as flag 0, unpublished.
__device__ __forceinline__ unsigned int lf_scan_flag(unsigned int word, unsigned int epoch) {
  return word >> 2 == epoch ? (word & 3u) : 0u;
}
// A tiled scan's tile status: flag 1 with the tile's aggregate, then (a group's last tile) flag 2 with the group's
// inclusive value. Values of at most 4 bytes: one 64-bit word per tile in the tickets, flag and value stored and
// loaded whole, so no fence orders the value before its flag.
template <class T> struct lf_scan_words {
  volatile unsigned long long* words;
  unsigned int epoch;
  typedef unsigned long long raw;
  __device__ raw load(long long t) const { return words[t]; }
  __device__ unsigned int flag(raw r) const { return lf_scan_flag((unsigned int)(r >> 32), epoch); }
  __device__ void acquire() const {}
  __device__ T value(long long, raw r) const { return lf_scan_value<T>(r); }
  __device__ void publish(long long t, unsigned int f, T v) const { words[t] = lf_scan_word(epoch << 2 | f, v); }
};
// Wider values: the flags in the tickets, the values in the partials (32 bytes a tile: the aggregate, then the
// group's inclusive value), each written before its flag with a fence between, and read after one.
template <class T> struct lf_scan_slots {
  volatile unsigned int* flags;
  unsigned char* values;
  unsigned int epoch;
  typedef unsigned int raw;
  __device__ raw load(long long t) const { return flags[t]; }
  __device__ unsigned int flag(raw r) const { return lf_scan_flag(r, epoch); }
  __device__ void acquire() const { __threadfence(); }
  __device__ T value(long long t, raw r) const {
    return lf_scan_read<T>(values + (size_t)t * 32 + (flag(r) == 2u ? 16 : 0));
  }
  __device__ void publish(long long t, unsigned int f, T v) const {
    lf_scan_publish(values + (size_t)t * 32 + (f == 2u ? 16 : 0), v);
    __threadfence();
    flags[t] = epoch << 2 | f;
  }
};
// Waits until tile t has published, pausing between reads: polling without a pause loads the L2 slices that hold the
// status, and with them every tile's publishing (CUB's scan waits likewise).
template <class S> __device__ __forceinline__ typename S::raw lf_scan_wait(const S& s, long long t, int poll_ns) {
  typename S::raw r = s.load(t);
  while (s.flag(r) == 0u) {
    __nanosleep(poll_ns);
    r = s.load(t);
  }
  return r;
}
// The whole group of 32 tiles from `first`, read by the warp (a tile a lane): its sum pre(g, 31), or, where its last
// tile has published it, its inclusive value (*inclusive).
template <class T, class S, class F>
__device__ __forceinline__ T lf_scan_group(const S& s, long long first, int lane, F combine, int poll_ns,
                                           bool* inclusive) {
  const typename S::raw r = lf_scan_wait(s, first + lane, poll_ns);
  s.acquire();
  const T own = s.value(first + lane, r);
  const T sum = lf_scan_warp(own, lane, combine);
  *inclusive = __shfl_sync(0xffffffffu, s.flag(r), 31) == 2u;
  return lf_scan_shfl_from(*inclusive ? own : sum, 31);
}
// The look-back of tile t, the tr-th of its row, by the tile's warp 0 once its aggregate is known (codegen/Schedule.h,
// "The scan order"): publishes the aggregate and, for a group's last tile, the group's inclusive value; returns the
// tile's prefix E in every lane (for tr > 0). The group's earlier tiles' aggregates and the tile's own go through one
// Kogge-Stone; GI(g-1) is the nearest inclusive value a group's last tile has published (or group 0's sum), walking
// back a group at a time, with the sums of the groups after it folded forward. The first kSaved sums the walk passes
// stay in `saved` (shared memory); a walk longer than that reads the rest again.
template <int kSaved, class T, class S, class F>
__device__ T lf_scan_look_back(const S& s, long long t, long long tr, T agg, int lane, F combine, T* saved,
                               int first_ns, int poll_ns) {
  if (lane == 0) s.publish(t, 1u, agg);
  if (tr == 0) return agg;
  __nanosleep(first_ns);
  const long long row0 = t - tr, g = tr / 32;
  const int gl = (int)(tr % 32);
  T v = agg;
  if (lane < gl) {
    const typename S::raw r = lf_scan_wait(s, row0 + g * 32 + lane, poll_ns);
    s.acquire();
    v = s.value(row0 + g * 32 + lane, r);
  }
  v = lf_scan_warp(v, lane, combine);
  const T before = lf_scan_shfl_from(v, gl > 0 ? gl - 1 : 0), upto = lf_scan_shfl_from(v, gl);
  T prefix = before, inclusive = upto;
  if (g > 0) {
    long long d = 0; // the walk is at group g - 1 - d
    bool found = false;
    T p;
    for (;; ++d) {
      p = lf_scan_group<T>(s, row0 + (g - 1 - d) * 32, lane, combine, poll_ns, &found);
      if (found || d == g - 1) break;
      if (d < kSaved && lane == 0) saved[d] = p;
    }
    __syncwarp();
    for (--d; d >= 0; --d) {
      if (d < kSaved) {
        p = combine(p, saved[d]);
      } else {
        const T sum = lf_scan_group<T>(s, row0 + (g - 1 - d) * 32, lane, combine, poll_ns, &found);
        p = found ? sum : combine(p, sum);
      }
    }
    prefix = gl > 0 ? combine(p, before) : p;
    inclusive = combine(p, upto);
  }
  if (gl == 31 && lane == 0) s.publish(t, 2u, inclusive);
  return prefix;
}

)";

static_assert(kScanStatusBytes == 32 && kScanGroupTiles == 32 && kWarpSize == 32,
              "kScanHelpers is written for groups of 32 tiles (a warp's lanes) and 32 bytes of status a tile");

class ScanPrinter {
public:
  explicit ScanPrinter(const KernelIR& ir)
      : ir_(ir), st_(ir.code.back()), I(scan_items(itemsize(st_.dtype))), kTile(std::int64_t(kBlockSize) * I),
        packed_(itemsize(st_.dtype) <= kScanPackedBytes) {
    LAZYFUSE_ASSERT(st_.op == IrOp::ScanStore, "a scan kernel ends with its ScanStore");
    for (std::size_t k = 0; k < ir.code.size(); ++k)
      if (ir.code[k].op == IrOp::LinearIndex) root_lin_ = int(k);
    t_ = cuda_type(st_.dtype);
  }

  std::string print() {
    std::ostringstream header;
    print_header(header, ir_);
    w_.text(kScanHelpers).text(header.str()).text(") {\n");
    {
      auto in = w_.indent();
      w_.line("const idx_t lf_len = p", ir_.code[std::size_t(st_.b)].slot, ";");
      if (contiguous()) {
        auto tiles = w_.block("if (lf_len >= ", kScanTileMinLength, ")");
        tiled();
        w_.line("return;");
      }
      columns();
    }
    w_.line("}");
    return w_.str();
  }

private:
  static constexpr int kWarps = kBlockSize / kWarpSize, E = kElementsPerThread;
  // Nanoseconds the look-back sleeps after publishing the tile's aggregate, before it first reads its predecessors'
  // status, and between two reads of a status not yet published. Measured on an H100 for 2^25 float32 in a replica
  // of this kernel with streaming loads and stores (docs/results/2026-12-07d, call 3): first pause 700 ns 0.1085 ms,
  // 900 0.1084, 1100 0.1045, 1500 0.1041; polls of 700 ns as 300 (0.1046). Without a first pause the tiles' reads of
  // statuses not yet published load the L2 slices that hold them (0.191 against 0.154 ms in session 31).
  static constexpr int kFirstLookNs = 1100, kPollNs = 300;
  // Group sums the look-back keeps in shared memory: a walk back over more groups (a lag of 2,048 tiles, more than
  // an H200 holds at once) reads the rest again.
  static constexpr int kSavedGroups = 64;

  bool contiguous() const { return ir_.code[std::size_t(st_.c)].op == IrOp::IndexConst; }
  std::string combine(const std::string& a, const std::string& b) const {
    const char* f = graph::ReduceOp(st_.fn) == graph::ReduceOp::Prod ? "lf_multiply" : "lf_add";
    return std::string(f) + "(" + a + ", " + b + ")";
  }
  // The combining function as a lambda, for the helpers (kScanHelpers).
  std::string combiner() const {
    return "[](" + t_ + " lf_a, " + t_ + " lf_b) { return " + combine("lf_a", "lf_b") + "; }";
  }
  // The kernel's instructions for the element at `i`, the scan's input value going to `sink` ("<sink> = value;").
  // `vectors`: inside the tile loop over lf_k, where a whole vector's contiguous inputs (LoadLinear) were read at once.
  void element(const std::function<void(const std::string&)>& sink, bool vectors = false) {
    for (std::size_t n = 0; n + 1 < ir_.code.size(); ++n) {
      const Instr& in = ir_.code[n];
      if (vectors && in.op == IrOp::LoadLinear && staged(in.slot))
        w_.line("const ", cuda_type(in.dtype), " ", v(int(n)), " = lf_whole ? lf_l", in.slot, "[lf_k / ", E,
                "].v[lf_k % ", E, "] : in", in.slot, "[i];");
      else
        print_instruction(w_, ir_, n, Mode::Scalar, root_lin_);
    }
    sink(v(st_.a));
  }
  // Input slots read with LoadLinear (contiguous, aligned to a whole vector, at the kernel's own index) whose tile
  // fits the transpose buffer: kMaxScanStageBytes of static shared memory. A wider input (complex128 read by a float
  // scan's prologue: 66 KiB, past the 48 KiB a block may use) is read in place, element by element.
  static constexpr std::int64_t kMaxScanStageBytes = 40 * 1024;
  bool staged(int slot) const {
    return (kTile + kTile / kWarpSize) * std::int64_t(itemsize(ir_.inputs[std::size_t(slot)].dtype)) <=
           kMaxScanStageBytes;
  }
  std::vector<int> linear_inputs() const {
    std::vector<int> slots;
    for (const Instr& in : ir_.code)
      if (in.op == IrOp::LoadLinear && staged(in.slot) && std::find(slots.begin(), slots.end(), in.slot) == slots.end())
        slots.push_back(in.slot);
    return slots;
  }

  void tiled() {
    const std::string T = t_;
    const int V = I / E; // vectors per thread
    w_.line("__shared__ __align__(16) unsigned char lf_incl_sm[", kBlockSize, " * sizeof(", T, ")];");
    w_.line("__shared__ __align__(16) unsigned char lf_warp_sm[", kWarps, " * sizeof(", T, ")];");
    w_.line("__shared__ __align__(16) unsigned char lf_prefix_sm[sizeof(", T, ")];");
    w_.line("__shared__ __align__(16) unsigned char lf_saved_sm[", kSavedGroups, " * sizeof(", T, ")];");
    w_.line(T, "* lf_incl = reinterpret_cast<", T, "*>(lf_incl_sm);");
    w_.line(T, "* lf_warps = reinterpret_cast<", T, "*>(lf_warp_sm);");
    w_.line(T, "* lf_prefix = reinterpret_cast<", T, "*>(lf_prefix_sm);");
    w_.line("const idx_t lf_tiles_per_row = (lf_len + ", kTile - 1, ") / ", kTile, ";");
    w_.line("const idx_t lf_t = (idx_t)blockIdx.x;");
    w_.line("const idx_t lf_tr = lf_t % lf_tiles_per_row;");
    w_.line("const idx_t lf_base = lf_t / lf_tiles_per_row * lf_len + lf_tr * ", kTile, ";");
    w_.line("const int lf_count = (int)(lf_len - lf_tr * ", kTile, " < ", kTile, " ? lf_len - lf_tr * ", kTile, " : ",
            kTile, ");");
    w_.line("const int lf_first = (int)threadIdx.x * ", I, ";");
    w_.line("const int lf_items = lf_count - lf_first;");
    w_.line("const int lf_lane = threadIdx.x & 31, lf_warp = threadIdx.x >> 5;");
    // A warp's elements (32 threads' I each, contiguous) move as vectors where they are all there and start on a
    // whole vector. They cross global memory warp-striped, so that each vector instruction of a warp covers 32
    // consecutive vectors (coalesced), and are transposed through shared memory into each thread's own I
    // consecutive elements, the order the scan needs (CUB's BLOCK_LOAD_WARP_TRANSPOSE). The buffer holds a tile of
    // the widest value moved, padded by one element per 32 so that neither order's accesses conflict in banks.
    static_assert(kScanThreadBytes % kElementsPerThread == 0, "a tiled scan thread's elements are whole vectors");
    w_.line("const bool lf_whole = lf_count - lf_warp * ", kWarpSize * I, " >= ", kWarpSize * I, " && lf_base % ", E,
            " == 0;");
    std::size_t widest = itemsize(st_.dtype);
    for (int k : linear_inputs()) widest = std::max(widest, itemsize(ir_.inputs[std::size_t(k)].dtype));
    w_.line("__shared__ __align__(16) unsigned char lf_xpose_sm[", (kTile + kTile / kWarpSize) * std::int64_t(widest),
            "];");
    w_.line("const int lf_xw = lf_warp * ", kWarpSize * I, ";");
    const bool stream = streams_vector_loads(ir_);
    for (int k : linear_inputs()) {
      const char* t = cuda_type(ir_.inputs[std::size_t(k)].dtype);
      w_.line("lf_vec<", t, "> lf_l", k, "[", V, "];");
      auto whole = w_.block("if (lf_whole)");
      w_.line(t, "* lf_xp = reinterpret_cast<", t, "*>(lf_xpose_sm);");
      w_.directive("#pragma unroll");
      {
        auto loop = w_.block("for (int lf_u = 0; lf_u < ", V, "; ++lf_u)");
        w_.line("const int lf_o = lf_xw + (lf_u * 32 + lf_lane) * ", E, ";");
        w_.line("const lf_vec<", t, "> lf_g = ", stream ? "lf_load_stream(" : "*", "reinterpret_cast<const lf_vec<", t,
                ">*>(in", k, " + lf_base + lf_o)", stream ? ")" : "", ";");
        w_.directive("#pragma unroll");
        w_.line("for (int lf_e = 0; lf_e < ", E, "; ++lf_e) lf_xp[(lf_o + lf_e) + (lf_o + lf_e) / 32] = lf_g.v[lf_e];");
      }
      w_.line("__syncwarp();");
      w_.directive("#pragma unroll");
      w_.line("for (int lf_j = 0; lf_j < ", I, "; ++lf_j) lf_l", k, "[lf_j / ", E, "].v[lf_j % ", E,
              "] = lf_xp[(lf_first + lf_j) + (lf_first + lf_j) / 32];");
      w_.line("__syncwarp();");
    }
    w_.line(T, " lf_s[", I, "];");
    {
      w_.directive("#pragma unroll");
      auto loop = w_.block("for (int lf_k = 0; lf_k < ", I, "; ++lf_k)");
      auto valid = w_.block("if (lf_k < lf_items)");
      w_.line("const idx_t i = lf_base + lf_first + lf_k;");
      element([&](const std::string& value) { w_.line("lf_s[lf_k] = ", value, ";"); }, true);
    }
    // The thread's own scan, then Kogge-Stone over the warp's threads and over the warps.
    w_.line(T, " lf_w = ", zero_of(st_.dtype), ";");
    {
      w_.directive("#pragma unroll");
      auto loop = w_.block("for (int lf_k = 0; lf_k < ", I, "; ++lf_k)");
      auto valid = w_.block("if (lf_k < lf_items)");
      w_.line("if (lf_k > 0) lf_s[lf_k] = ", combine("lf_s[lf_k - 1]", "lf_s[lf_k]"), ";");
      w_.line("lf_w = lf_s[lf_k];");
    }
    w_.line("lf_w = lf_scan_warp(lf_w, lf_lane, ", combiner(), ");");
    w_.line("if (lf_lane == ", kWarpSize - 1, ") lf_warps[lf_warp] = lf_w;");
    w_.line("__syncthreads();");
    {
      auto first = w_.block("if (lf_warp == 0)");
      w_.line(T, " lf_p = lf_lane < ", kWarps, " ? lf_warps[lf_lane] : lf_w;");
      w_.directive("#pragma unroll");
      {
        auto loop = w_.block("for (int lf_off = 1; lf_off < ", kWarps, "; lf_off <<= 1)");
        w_.line("const ", T, " lf_y = lf_scan_shfl_up(lf_p, lf_off);");
        w_.line("if (lf_lane >= lf_off) lf_p = ", combine("lf_y", "lf_p"), ";");
      }
      w_.line("if (lf_lane < ", kWarps, ") lf_warps[lf_lane] = lf_p;");
    }
    w_.line("__syncthreads();");
    w_.line("lf_incl[threadIdx.x] = lf_warp > 0 ? ", combine("lf_warps[lf_warp - 1]", "lf_w"), " : lf_w;");
    w_.line("__syncthreads();");
    look_back();
    w_.line("__syncthreads();");
    w_.line("const ", T, " lf_excl = threadIdx.x > 0 ? lf_incl[threadIdx.x - 1] : lf_w;");
    w_.line("const ", T, " lf_pre = lf_tr > 0 ? *lf_prefix : lf_w;");
    w_.line("lf_vec<", T, "> lf_out[", V, "];");
    {
      w_.directive("#pragma unroll");
      auto loop = w_.block("for (int lf_k = 0; lf_k < ", I, "; ++lf_k)");
      auto valid = w_.block("if (lf_k < lf_items)");
      w_.line(T, " lf_r = threadIdx.x > 0 ? ", combine("lf_excl", "lf_s[lf_k]"), " : lf_s[lf_k];");
      w_.line("if (lf_tr > 0) lf_r = ", combine("lf_pre", "lf_r"), ";");
      w_.line("lf_out[lf_k / ", E, "].v[lf_k % ", E, "] = lf_r;");
      w_.line("if (!lf_whole) out", st_.slot, "[lf_base + lf_first + lf_k] = lf_r;");
    }
    {
      // The warp's results back to warp-striped vectors through the buffer (the loads' last use of it was before
      // the block's barriers).
      auto whole = w_.block("if (lf_whole)");
      w_.line(T, "* lf_xp = reinterpret_cast<", T, "*>(lf_xpose_sm);");
      w_.directive("#pragma unroll");
      w_.line("for (int lf_j = 0; lf_j < ", I,
              "; ++lf_j) lf_xp[(lf_first + lf_j) + (lf_first + lf_j) / 32] = lf_out[lf_j / ", E, "].v[lf_j % ", E,
              "];");
      w_.line("__syncwarp();");
      w_.directive("#pragma unroll");
      auto loop = w_.block("for (int lf_u = 0; lf_u < ", V, "; ++lf_u)");
      w_.line("const int lf_o = lf_xw + (lf_u * 32 + lf_lane) * ", E, ";");
      w_.line("lf_vec<", T, "> lf_g;");
      w_.directive("#pragma unroll");
      w_.line("for (int lf_e = 0; lf_e < ", E, "; ++lf_e) lf_g.v[lf_e] = lf_xp[(lf_o + lf_e) + (lf_o + lf_e) / 32];");
      if (streams_stores(ir_))
        w_.line("lf_store_stream(reinterpret_cast<lf_vec<", T, ">*>(out", st_.slot, " + lf_base + lf_o), lf_g);");
      else
        w_.line("*reinterpret_cast<lf_vec<", T, ">*>(out", st_.slot, " + lf_base + lf_o) = lf_g;");
    }
  }

  // Warp 0 publishes the tile's status and finds its prefix (lf_scan_look_back).
  void look_back() {
    const std::string T = t_;
    auto lead = w_.block("if (lf_warp == 0)");
    w_.line("const ", T, " lf_agg = lf_incl[(lf_count - 1) / ", I, "];");
    const std::string status =
        packed_ ? "lf_scan_words<" + T + ">{reinterpret_cast<volatile unsigned long long*>(lf_tickets), lf_epoch}"
                : "lf_scan_slots<" + T + ">{lf_tickets, lf_partials, lf_epoch}";
    w_.line("const ", T, " lf_p = lf_scan_look_back<", kSavedGroups, ">(", status,
            ", (long long)lf_t, (long long)lf_tr, lf_agg, lf_lane, ", combiner(), ", reinterpret_cast<", T,
            "*>(lf_saved_sm), ", kFirstLookNs, ", ", kPollNs, ");");
    w_.line("if (lf_lane == 0) *lf_prefix = lf_p;");
  }

  void columns() {
    const std::string inner = contiguous() ? "(idx_t)1" : "p" + std::to_string(ir_.code[std::size_t(st_.c)].slot);
    w_.line("const idx_t lf_inner = ", inner, ";");
    w_.line("const idx_t lf_columns = n / lf_len;");
    auto loop = w_.block("for (idx_t lf_c = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; lf_c < lf_columns; ",
                         "lf_c += (idx_t)gridDim.x * blockDim.x)");
    w_.line("const idx_t lf_o = lf_c / lf_inner;");
    w_.line("const idx_t lf_line = lf_o * lf_len * lf_inner + (lf_c - lf_o * lf_inner);");
    w_.line(t_, " lf_acc = ", zero_of(st_.dtype), ";");
    auto walk = w_.block("for (idx_t lf_r = 0; lf_r < lf_len; ++lf_r)");
    w_.line("const idx_t i = lf_line + lf_r * lf_inner;");
    element([&](const std::string& value) {
      w_.line("lf_acc = lf_r == 0 ? ", value, " : ", combine("lf_acc", value), ";");
      w_.line("out", st_.slot, "[i] = lf_acc;");
    });
  }

  const KernelIR& ir_;
  const Instr& st_;
  const int I;              // elements per thread (scan_items)
  const std::int64_t kTile; // elements per tile
  const bool packed_;       // a tile's status is one word (codegen/Schedule.h, kScanPackedBytes)
  std::string t_;
  CodeWriter w_;
  int root_lin_ = -1;
};

} // namespace

std::string render_cuda(const KernelIR& ir) {
  LAZYFUSE_ASSERT(ir.analyzed, "render_cuda of kernel IR that codegen::analyze has not run on");
  if (ir.schedule == Schedule::Scan) {
    const std::string kernel = ScanPrinter(ir).print();
    return print_prelude(ir, kernel) + kernel;
  }
  const std::string kernel =
      print_loop_states(ir) +
      (ir.schedule == Schedule::Elementwise ? ElementwisePrinter(ir).print() : ReductionPrinter(ir).print());
  return print_prelude(ir, kernel) + kernel;
}

} // namespace lazyfuse::codegen
