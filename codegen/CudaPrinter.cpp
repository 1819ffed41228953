#include "codegen/CudaPrinter.h"

#include "graph/Assert.h"
#include "graph/Ops.h"

#include <sstream>
#include <string_view>

namespace lazyfuse::codegen {

extern const std::string_view kPrelude; // graph/OpMath.inc, embedded at build time

const char* cuda_type(DType t) {
  switch (t) {
  case DType::Bool: return "bool";
  case DType::Int32: return "lf_i32";
  case DType::Int64: return "lf_i64";
  case DType::Float32: return "float";
  case DType::Float64: return "double";
  }
  return "?";
}

namespace {

// Vector: elements base + j of the vector path; Scalar: element i, from scratch; Strip: element i of the strip path.
enum class Mode { Vector, Scalar, Strip };

// What graph/OpMath.inc expects each side to define (runtime/../graph/HostOps.h is the host's).
constexpr const char* kPreludeDefinitions = "#define LF_HD __device__ __forceinline__\n"
                                            "#define LF_INF_F __int_as_float(0x7f800000)\n"
                                            "#define LF_INF_D __longlong_as_double(0x7ff0000000000000LL)\n"
                                            "typedef int lf_i32;\ntypedef long long lf_i64;\n";

std::string v(int id) {
  return "v" + std::to_string(id);
}

// Coordinate k of linear index `lin` in unravel group g, computed from scratch.
std::string coord_expr(const KernelIR& ir, const Instr& in) {
  const auto& dims = ir.unravels[std::size_t(in.slot)];
  std::string e = v(in.a);
  for (std::size_t d = dims.size(); d-- > std::size_t(in.imm) + 1;)
    e = "(" + e + " / p" + std::to_string(ir.code[std::size_t(dims[d])].slot) + ")";
  if (in.imm > 0) e = "(" + e + " % p" + std::to_string(ir.code[std::size_t(dims[std::size_t(in.imm)])].slot) + ")";
  return e;
}

int root_linear_index(const KernelIR& ir) {
  int root_lin = -1;
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (ir.code[k].op == IrOp::LinearIndex) root_lin = int(k);
  return root_lin;
}

// The unravel group of the output's linear index that the strip path walks (the first, so that the choice depends
// only on the IR), or -1 when the kernel has no strip path (see has_strip_path).
int strip_group(const KernelIR& ir) {
  if (ir.schedule != Schedule::Elementwise) return -1;
  const int root_lin = root_linear_index(ir);
  bool loads = false;
  int group = -1;
  for (auto& in : ir.code) {
    loads = loads || in.op == IrOp::Load;
    if (in.op == IrOp::Coord && in.a == root_lin && ir.unravels[std::size_t(in.slot)].size() >= 2 &&
        (group < 0 || in.slot < group))
      group = in.slot;
  }
  return loads ? group : -1;
}

// `root_lin`: the LinearIndex instruction; in vector mode its unravelled coordinates come from u<g>_c<k>, computed
// once per thread for `base`, with the last one stepped by j. In strip mode those of the strip group are u<g>_c<k>,
// kept by the strip loop; other shapes the output's index is unravelled in are unravelled from i.
void print_body(std::ostringstream& os, const KernelIR& ir, Mode mode, const std::string& indent, int root_lin,
                std::size_t only = std::size_t(-1)) {
  const int strip_g = mode == Mode::Strip ? strip_group(ir) : -1;
  for (std::size_t n = only == std::size_t(-1) ? 0 : only; n < ir.code.size(); ++n) {
    if (only != std::size_t(-1) && n != only) break;
    const Instr& in = ir.code[n];
    const std::string lhs = v(int(n));
    const char* t = cuda_type(in.dtype);
    if (in.op == IrOp::StoreAt) {
      os << indent << "out" << in.slot << "[" << v(in.a) << "] = " << v(in.b) << ";\n";
      continue;
    }
    if (in.op == IrOp::Store) {
      if (mode == Mode::Vector)
        os << indent << "s" << in.slot << ".v[j] = " << v(in.a) << ";\n";
      else
        os << indent << "out" << in.slot << "[i] = " << v(in.a) << ";\n";
      continue;
    }
    if (is_index_op(in.op))
      os << indent << "const idx_t " << lhs << " = ";
    else if (is_predicate_op(in.op))
      os << indent << "const bool " << lhs << " = ";
    else
      os << indent << "const " << t << " " << lhs << " = ";
    switch (in.op) {
    case IrOp::LinearIndex: os << "i"; break;
    case IrOp::IndexParam:
    case IrOp::ScalarParam: os << "p" << in.slot; break;
    case IrOp::IndexConst: os << "(idx_t)" << in.imm; break;
    case IrOp::IAdd: os << v(in.a) << " + " << v(in.b); break;
    case IrOp::ISub: os << v(in.a) << " - " << v(in.b); break;
    case IrOp::IMul: os << v(in.a) << " * " << v(in.b); break;
    case IrOp::IDiv: os << v(in.a) << " / " << v(in.b); break;
    case IrOp::IMod: os << v(in.a) << " % " << v(in.b); break;
    case IrOp::Coord:
      if (mode == Mode::Vector && in.a == root_lin) {
        os << "u" << in.slot << "_c" << in.imm;
        if (std::size_t(in.imm) + 1 == ir.unravels[std::size_t(in.slot)].size()) os << " + j";
      } else if (mode == Mode::Strip && in.a == root_lin && in.slot == strip_g) {
        os << "u" << in.slot << "_c" << in.imm;
      } else {
        os << coord_expr(ir, in);
      }
      break;
    case IrOp::ILt: os << v(in.a) << " < " << v(in.b); break;
    case IrOp::IGe: os << v(in.a) << " >= " << v(in.b); break;
    case IrOp::IEq: os << v(in.a) << " == " << v(in.b); break;
    case IrOp::PAnd: os << v(in.a) << " && " << v(in.b); break;
    case IrOp::Load:
      if (in.b >= 0)
        os << v(in.b) << " ? in" << in.slot << "[" << v(in.a) << "] : (" << t << ")0";
      else
        os << "in" << in.slot << "[" << v(in.a) << "]";
      break;
    case IrOp::LoadLinear:
      if (mode == Mode::Vector)
        os << "l" << in.slot << ".v[j]";
      else
        os << "in" << in.slot << "[i]";
      break;
    case IrOp::IndexToValue: os << "(" << t << ")" << v(in.a); break;
    case IrOp::Unary: os << "lf_" << graph::name_of(graph::UnaryOp(in.fn)) << "(" << v(in.a) << ")"; break;
    case IrOp::Binary:
      os << "lf_" << graph::name_of(graph::BinaryOp(in.fn)) << "(" << v(in.a) << ", " << v(in.b) << ")";
      break;
    case IrOp::Cast:
      os << "lf_cast<" << t << ", " << cuda_type(ir.code[std::size_t(in.a)].dtype) << ">(" << v(in.a) << ")";
      break;
    case IrOp::Select: os << v(in.a) << " ? " << v(in.b) << " : " << v(in.c); break;
    case IrOp::Store:
    case IrOp::StoreAt:
    case IrOp::OuterIndex:
    case IrOp::LoopBegin:
    case IrOp::Accumulate:
    case IrOp::LoopEnd:
    case IrOp::Result: break;
    }
    os << ";\n";
  }
}

// Block-wide reductions written out here (not CUB: its headers cost NVRTC over a second per kernel). Each is a
// fixed tree (warp shuffles, then one warp over the warps' results), so results are the same bits every run.
constexpr const char* kReductionHelpers = R"(
template <class T> __device__ __forceinline__ T lf_shfl_down(T v, int off) { return __shfl_down_sync(0xffffffffu, v, off); }
template <> __device__ __forceinline__ bool lf_shfl_down<bool>(bool v, int off) { return __shfl_down_sync(0xffffffffu, (int)v, off) != 0; }
#define LF_REDUCE_OP(name) struct lf_##name##_op { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return lf_##name##_combine(a, b); } };
LF_REDUCE_OP(sum) LF_REDUCE_OP(prod) LF_REDUCE_OP(min) LF_REDUCE_OP(max) LF_REDUCE_OP(any) LF_REDUCE_OP(all)
// Every thread gets the result. `shared` holds at least 32 values of T.
template <class T, class Op> __device__ __forceinline__ T lf_block_reduce(T v, Op op, T identity, T* shared) {
  for (int off = 16; off > 0; off >>= 1) v = op(v, lf_shfl_down(v, off));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < (int)(blockDim.x >> 5) ? shared[lane] : identity;
    for (int off = 16; off > 0; off >>= 1) v = op(v, lf_shfl_down(v, off));
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  return shared[0];
}
// Partials of other blocks: read from L2 (cache-global), never from a stale L1 line.
template <class T> __device__ __forceinline__ T lf_load_partial(const unsigned char* p) { return __ldcg(reinterpret_cast<const T*>(p)); }
template <> __device__ __forceinline__ bool lf_load_partial<bool>(const unsigned char* p) { return *reinterpret_cast<const volatile bool*>(p); }
struct lf_argmax_op { template <class T> __device__ __forceinline__ bool operator()(T v, lf_i64 i, T b, lf_i64 j) const { return lf_argmax_better(v, i, b, j); } };
struct lf_argmin_op { template <class T> __device__ __forceinline__ bool operator()(T v, lf_i64 i, T b, lf_i64 j) const { return lf_argmin_better(v, i, b, j); } };
template <class T, class Better> __device__ __forceinline__ void lf_block_argreduce(T& v, lf_i64& i, Better better, T identity, T* shared, lf_i64* shared_index) {
  for (int off = 16; off > 0; off >>= 1) {
    T ov = lf_shfl_down(v, off);
    lf_i64 oi = lf_shfl_down(i, off);
    if (better(ov, oi, v, i)) { v = ov; i = oi; }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) { shared[warp] = v; shared_index[warp] = i; }
  __syncthreads();
  if (warp == 0) {
    const bool live = lane < (int)(blockDim.x >> 5);
    v = live ? shared[lane] : identity;
    i = live ? shared_index[lane] : 9223372036854775807LL;
    for (int off = 16; off > 0; off >>= 1) {
      T ov = lf_shfl_down(v, off);
      lf_i64 oi = lf_shfl_down(i, off);
      if (better(ov, oi, v, i)) { v = ov; i = oi; }
    }
    if (lane == 0) { shared[0] = v; shared_index[0] = i; }
  }
  __syncthreads();
  v = shared[0];
  i = shared_index[0];
}
)";

bool is_arg(std::uint8_t fn) {
  return graph::ReduceOp(fn) == graph::ReduceOp::ArgMax || graph::ReduceOp(fn) == graph::ReduceOp::ArgMin;
}

// The text before a kernel's body: the prelude and the signature up to its last parameter (inputs, outputs, n,
// then the IR's parameters in slot order).
void print_header(std::ostringstream& os, const KernelIR& ir, bool reduction) {
  os << "// lazyfuse kernel " << ir.name << " (generated; self-contained: it includes no header)\n";
  os << kPreludeDefinitions;
  os << kPrelude << "\n";
  if (reduction) os << kReductionHelpers << "\n";
  if (!reduction)
    os << "template <class T> struct alignas(sizeof(T) * " << kElementsPerThread << ") lf_vec { T v["
       << kElementsPerThread << "]; };\n\n";
  os << "typedef " << (ir.index32 ? "int" : "long long") << " idx_t;\n\n";
  os << "extern \"C\" __global__ void __launch_bounds__(" << kBlockSize << ") " << ir.name << "(";
  bool first = true;
  auto sep = [&] {
    if (!first) os << ", ";
    first = false;
  };
  for (std::size_t k = 0; k < ir.inputs.size(); ++k) {
    sep();
    os << "const " << cuda_type(ir.inputs[k].dtype) << "* __restrict__ in" << k;
  }
  for (std::size_t k = 0; k < ir.outputs.size(); ++k) {
    sep();
    os << cuda_type(ir.outputs[k]) << "* __restrict__ out" << k;
  }
  sep();
  os << "const idx_t n";
  for (std::size_t k = 0; k < ir.params.size(); ++k) {
    sep();
    os << "const " << (ir.params[k].is_index ? "idx_t" : cuda_type(ir.params[k].dtype)) << " p" << k;
  }
}

std::string render_reduction(const KernelIR& ir) {
  std::ostringstream os;
  const bool split = is_split(ir.schedule);
  const bool column = is_column(ir.schedule);
  print_header(os, ir, true);
  if (split)
    os << ", unsigned char* __restrict__ lf_partials, unsigned int* __restrict__ lf_tickets, const idx_t lf_splits";
  os << ") {\n";
  os << "  __shared__ double lf_shared[64];\n";
  // Parameters and constants first: they are visible in every loop.
  std::ostringstream hoisted;
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    if (in.op == IrOp::IndexParam) os << "  const idx_t " << v(int(k)) << " = p" << in.slot << ";\n";
    if (in.op == IrOp::ScalarParam)
      os << "  const " << cuda_type(in.dtype) << " " << v(int(k)) << " = p" << in.slot << ";\n";
    if (in.op == IrOp::IndexConst) os << "  const idx_t " << v(int(k)) << " = (idx_t)" << in.imm << ";\n";
  }
  // In a split kernel, what depends on a reduction's result waits for the last block.
  std::vector<bool> after_reduction(ir.code.size(), false);
  if (split)
    for (std::size_t k = 0; k < ir.code.size(); ++k) {
      const Instr& in = ir.code[k];
      bool dep = in.op == IrOp::Result || in.op == IrOp::Store;
      for (int a : {in.a, in.b, in.c})
        if (a >= 0 && after_reduction[std::size_t(a)] && in.op != IrOp::LoopBegin) dep = true;
      after_reduction[k] = dep;
    }
  if (column) {
    // Blocks: lf_tiles groups of blockDim.x outer indices, times lf_splits parts of the reduced range.
    os << "  const idx_t lf_tiles = (n + blockDim.x - 1) / blockDim.x;\n";
    os << "  const idx_t lf_tile = blockIdx.x % lf_tiles;\n";
    os << "  const idx_t lf_s = blockIdx.x / lf_tiles;\n";
    if (!split) os << "  const idx_t lf_splits = 1;\n";
    // Threads past the end compute on the last element (every read stays in bounds) and store nothing.
    os << "  const bool lf_active = lf_tile * blockDim.x + threadIdx.x < n;\n";
    os << "  const idx_t lf_o = lf_active ? lf_tile * blockDim.x + threadIdx.x : n - 1;\n";
    os << (split ? "  {\n" : "  if (lf_active) {\n");
  } else if (split) {
    os << "  const idx_t lf_o = blockIdx.x / lf_splits;\n  const idx_t lf_s = blockIdx.x % lf_splits;\n";
    os << "  if (lf_o >= n) return;\n  {\n";
  } else {
    os << "  for (idx_t lf_o = blockIdx.x; lf_o < n; lf_o += gridDim.x) {\n";
  }
  std::string indent = "    ";
  std::vector<const Instr*> loop_accumulate(ir.code.size(), nullptr);
  std::vector<std::size_t> deferred;
  auto print_one = [&](std::size_t k, const std::string& ind) {
    const Instr& in = ir.code[k];
    switch (in.op) {
    case IrOp::IndexParam:
    case IrOp::ScalarParam:
    case IrOp::IndexConst: return;
    case IrOp::OuterIndex: os << ind << "const idx_t " << v(int(k)) << " = lf_o;\n"; return;
    case IrOp::Result:
      os << ind << "const " << cuda_type(in.dtype) << " " << v(int(k)) << " = lf_acc" << in.slot
         << (is_arg(in.fn) ? "_vi" : "_v") << ";\n";
      return;
    case IrOp::Store:
      os << ind << (column ? "if (lf_active) out" : "if (threadIdx.x == 0) out") << in.slot << "[lf_o] = " << v(in.a)
         << ";\n";
      return;
    default: break;
    }
    // Everything else prints as in elementwise kernels, one instruction at a time.
    print_body(os, ir, Mode::Scalar, ind, -1, k);
  };
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    const Instr& in = ir.code[k];
    if (in.op == IrOp::LoopBegin) {
      // This loop's accumulators and end.
      std::vector<const Instr*> accs;
      std::size_t end = k + 1;
      for (; end < ir.code.size(); ++end) {
        if (ir.code[end].op == IrOp::Accumulate && ir.code[end].c == in.slot) accs.push_back(&ir.code[end]);
        if (ir.code[end].op == IrOp::LoopEnd && ir.code[end].slot == in.slot) break;
      }
      // Unrolled kUnroll times with independent accumulators, so that each thread has several loads in flight;
      // the accumulators are combined in a fixed order afterwards (deterministic).
      // Column kernels read one element per thread and row: twice the loads in flight.
      const std::string U = std::to_string(column ? 2 * kUnroll : kUnroll);
      const std::string r = v(int(k)), step = "lf_step" + std::to_string(in.slot);
      for (const Instr* acc : accs) {
        const std::string a = "lf_acc" + std::to_string(acc->slot);
        const char* t = cuda_type(acc->dtype);
        const std::string name(graph::name_of(graph::ReduceOp(acc->fn)));
        os << indent << t << " " << a << "[" << U << "];\n";
        if (is_arg(acc->fn)) os << indent << "lf_i64 " << a << "_i[" << U << "];\n";
        os << indent << "for (int lf_u = 0; lf_u < " << U << "; ++lf_u) {\n";
        os << indent << "  " << a << "[lf_u] = lf_" << name << "_identity<" << t << ">();\n";
        if (is_arg(acc->fn)) os << indent << "  " << a << "_i[lf_u] = 9223372036854775807LL;\n";
        os << indent << "}\n";
      }
      std::string start;
      if (column) {
        start = "lf_s";
        os << indent << "const idx_t " << step << " = lf_splits;\n";
      } else if (split) {
        start = "lf_s * blockDim.x + threadIdx.x";
        os << indent << "const idx_t " << step << " = lf_splits * blockDim.x;\n";
      } else {
        start = "threadIdx.x";
        os << indent << "const idx_t " << step << " = blockDim.x;\n";
      }
      os << indent << (column ? "if (lf_active) " : "") << "for (idx_t lf_r0 = " << start << "; lf_r0 < " << v(in.a)
         << "; lf_r0 += " << U << " * " << step << ") {\n";
      os << "#pragma unroll\n";
      os << indent << "for (int lf_u = 0; lf_u < " << U << "; ++lf_u) {\n";
      os << indent << "  const idx_t " << r << " = lf_r0 + lf_u * " << step << ";\n";
      os << indent << "  if (" << r << " < " << v(in.a) << ") {\n";
      for (std::size_t b = k + 1; b < end; ++b) {
        const Instr& bi = ir.code[b];
        if (bi.op == IrOp::Accumulate) {
          const std::string a = "lf_acc" + std::to_string(bi.slot);
          const std::string name(graph::name_of(graph::ReduceOp(bi.fn)));
          if (is_arg(bi.fn))
            os << indent << "    if (lf_" << name << "_better(" << v(bi.a) << ", (lf_i64)" << v(bi.b) << ", " << a
               << "[lf_u], " << a << "_i[lf_u])) { " << a << "[lf_u] = " << v(bi.a) << "; " << a
               << "_i[lf_u] = (lf_i64)" << v(bi.b) << "; }\n";
          else
            os << indent << "    " << a << "[lf_u] = lf_" << name << "_combine(" << a << "[lf_u], " << v(bi.a)
               << ");\n";
          continue;
        }
        print_one(b, indent + "    ");
      }
      os << indent << "  }\n" << indent << "}\n" << indent << "}\n";
      for (const Instr* acc : accs) {
        const std::string a = "lf_acc" + std::to_string(acc->slot);
        const std::string name(graph::name_of(graph::ReduceOp(acc->fn)));
        const char* t = cuda_type(acc->dtype);
        // Fold the unrolled accumulators into the first, in order.
        os << indent << "for (int lf_u = 1; lf_u < " << U << "; ++lf_u) {\n";
        if (is_arg(acc->fn))
          os << indent << "  if (lf_" << name << "_better(" << a << "[lf_u], " << a << "_i[lf_u], " << a << "[0], " << a
             << "_i[0])) { " << a << "[0] = " << a << "[lf_u]; " << a << "_i[0] = " << a << "_i[lf_u]; }\n";
        else
          os << indent << "  " << a << "[0] = lf_" << name << "_combine(" << a << "[0], " << a << "[lf_u]);\n";
        os << indent << "}\n";
        os << indent << t << " " << a << "_v = " << a << "[0];\n";
        if (is_arg(acc->fn)) os << indent << "lf_i64 " << a << "_vi = " << a << "_i[0];\n";
        const std::string shared = "reinterpret_cast<" + std::string(t) + "*>(lf_shared)";
        if (column) {
          // Each thread holds its own outer element's reduction: nothing to combine across the block.
        } else if (is_arg(acc->fn)) {
          os << indent << "lf_block_argreduce(" << a << "_v, " << a << "_vi, lf_" << name << "_op(), lf_" << name
             << "_identity<" << t << ">(), " << shared << ", reinterpret_cast<lf_i64*>(lf_shared + 32));\n";
        } else {
          os << indent << a << "_v = lf_block_reduce(" << a << "_v, lf_" << name << "_op(), lf_" << name << "_identity<"
             << t << ">(), " << shared << ");\n";
        }
        if (split) {
          // Partial of this block: 16 bytes (value, then index) per (accumulator, outer, split).
          os << indent << (column ? "if (lf_active) {\n" : "if (threadIdx.x == 0) {\n");
          os << indent << "  unsigned char* lf_p = lf_partials + ((idx_t)" << acc->slot
             << " * n * lf_splits + lf_o * lf_splits + lf_s) * 16;\n";
          os << indent << "  *reinterpret_cast<" << t << "*>(lf_p) = " << a << "_v;\n";
          if (is_arg(acc->fn)) os << indent << "  *reinterpret_cast<lf_i64*>(lf_p + 8) = " << a << "_vi;\n";
          os << indent << "}\n";
        }
      }
      k = end;
      continue;
    }
    if (split && after_reduction[k]) {
      deferred.push_back(k);
      continue;
    }
    print_one(k, indent);
  }
  if (split) {
    // The last block to finish combines the partials in split order (fixed, so deterministic) and runs the rest.
    os << "    __shared__ bool lf_last;\n";
    os << "    __threadfence();\n    __syncthreads();\n";
    os << "    if (threadIdx.x == 0) lf_last = atomicAdd(lf_tickets + " << (column ? "lf_tile" : "lf_o")
       << ", 1u) == (unsigned)(lf_splits - 1);\n";
    os << "    __syncthreads();\n    if (!lf_last) return;\n    __threadfence();\n";
    for (std::size_t k : deferred) {
      const Instr& in = ir.code[k];
      if (in.op == IrOp::Result) {
        const char* t = cuda_type(ir.code[std::size_t(k)].dtype);
        const Instr* acc = nullptr;
        for (auto& c : ir.code)
          if (c.op == IrOp::Accumulate && c.slot == in.slot) acc = &c;
        const char* at = cuda_type(acc->dtype);
        const std::string name(graph::name_of(graph::ReduceOp(acc->fn)));
        const std::string a = "lf_fin" + std::to_string(in.slot);
        os << "    " << at << " " << a << " = lf_" << name << "_identity<" << at << ">();\n";
        if (is_arg(acc->fn)) os << "    lf_i64 " << a << "_i = 9223372036854775807LL;\n";
        if (column) {
          // This thread's outer element: its partials in split order.
          os << "#pragma unroll 8\n";
          os << "    for (idx_t lf_q = 0; lf_q < lf_splits; ++lf_q) {\n";
        } else {
          // Each thread folds the partials q = threadIdx.x, + blockDim.x, ... in order, then the block tree.
          os << "    for (idx_t lf_q = threadIdx.x; lf_q < lf_splits; lf_q += blockDim.x) {\n";
        }
        os << "      const unsigned char* lf_p = lf_partials + ((idx_t)" << in.slot
           << " * n * lf_splits + lf_o * lf_splits + lf_q) * 16;\n";
        os << "      const " << at << " lf_v = lf_load_partial<" << at << ">(lf_p);\n";
        if (is_arg(acc->fn)) {
          os << "      const lf_i64 lf_vi = lf_load_partial<lf_i64>(lf_p + 8);\n";
          os << "      if (lf_" << name << "_better(lf_v, lf_vi, " << a << ", " << a << "_i)) { " << a << " = lf_v; "
             << a << "_i = lf_vi; }\n";
        } else {
          os << "      " << a << " = lf_" << name << "_combine(" << a << ", lf_v);\n";
        }
        os << "    }\n";
        if (column) {
          os << "    const " << t << " " << v(int(k)) << " = " << a << (is_arg(acc->fn) ? "_i" : "") << ";\n";
          continue;
        }
        const std::string shared = "reinterpret_cast<" + std::string(at) + "*>(lf_shared)";
        if (is_arg(acc->fn))
          os << "    lf_block_argreduce(" << a << ", " << a << "_i, lf_" << name << "_op(), lf_" << name << "_identity<"
             << at << ">(), " << shared << ", reinterpret_cast<lf_i64*>(lf_shared + 32));\n";
        else
          os << "    " << a << " = lf_block_reduce(" << a << ", lf_" << name << "_op(), lf_" << name << "_identity<"
             << at << ">(), " << shared << ");\n";
        os << "    const " << t << " " << v(int(k)) << " = " << a << (is_arg(acc->fn) ? "_i" : "") << ";\n";
        continue;
      }
      print_one(k, "    ");
    }
    os << "    if (threadIdx.x == 0) lf_tickets[" << (column ? "lf_tile" : "lf_o") << "] = 0u;\n";
  }
  os << "  }\n}\n";
  return os.str();
}

std::string param_of(const KernelIR& ir, int instr) {
  return "p" + std::to_string(ir.code[std::size_t(instr)].slot);
}

// The strip path (see has_strip_path): the output as H x W, tiles of kBlockSize columns by kStripRows rows, a
// thread per column of a tile. Ends the kernel when taken.
void print_strip_path(std::ostringstream& os, const KernelIR& ir, int root_lin, int g) {
  const auto& dims = ir.unravels[std::size_t(g)];
  const std::size_t last = dims.size() - 1;
  const std::string u = "u" + std::to_string(g), B = std::to_string(kBlockSize), R = std::to_string(kStripRows);
  os << "  const idx_t lf_w = " << param_of(ir, dims[last]) << ";\n";
  os << "  if (lf_w >= " << kStripMinWidth << ") {\n";
  os << "    const idx_t lf_h = n / lf_w;\n";
  os << "    const idx_t lf_col_tiles = (lf_w + " << B << " - 1) / " << B << ";\n";
  os << "    const idx_t lf_tiles = lf_col_tiles * ((lf_h + " << R << " - 1) / " << R << ");\n";
  os << "    for (idx_t lf_t = (idx_t)blockIdx.x; lf_t < lf_tiles; lf_t += (idx_t)gridDim.x) {\n";
  os << "      const idx_t " << u << "_c" << last << " = lf_t % lf_col_tiles * " << B << " + (idx_t)threadIdx.x;\n";
  os << "      const idx_t lf_row0 = lf_t / lf_col_tiles * " << R << ";\n";
  // The leading coordinates of the tile's first row, unravelled once; the rows below step them.
  os << "      idx_t lf_rest = lf_row0;\n";
  for (std::size_t k = last; k-- > 0;) {
    if (k == 0) {
      os << "      idx_t " << u << "_c0 = lf_rest;\n";
    } else {
      os << "      idx_t " << u << "_c" << k << " = lf_rest % " << param_of(ir, dims[k]) << ";\n";
      os << "      lf_rest = lf_rest / " << param_of(ir, dims[k]) << ";\n";
    }
  }
  // Next row: the innermost leading coordinate steps, carrying into the ones above it when it wraps (the first
  // never wraps: past the last row nothing is read).
  std::string step = "++" + u + "_c0;";
  for (std::size_t k = 1; k < last; ++k) {
    const std::string c = u + "_c" + std::to_string(k);
    step = "if (++" + c + " == " + param_of(ir, dims[k]) + ") { " + c + " = 0; " + step + " }";
  }
  const std::string col = u + "_c" + std::to_string(last);
  // A tile whose rows all exist runs them with no guard in between, so that every row's loads can be in flight
  // at once; only the last strip of rows checks each row.
  os << "      if (" << col << " < lf_w && lf_row0 + " << R << " <= lf_h) {\n";
  os << "#pragma unroll\n";
  os << "        for (int lf_r = 0; lf_r < " << R << "; ++lf_r) {\n";
  os << "          const idx_t i = (lf_row0 + lf_r) * lf_w + " << col << ";\n";
  print_body(os, ir, Mode::Strip, "          ", root_lin);
  os << "          " << step << "\n";
  os << "        }\n";
  // Not unrolled: it runs for one strip of rows in H / kStripRows, and unrolling it costs NVRTC time.
  os << "      } else if (" << col << " < lf_w) {\n";
  os << "#pragma unroll 1\n";
  os << "        for (idx_t lf_rho = lf_row0; lf_rho < lf_h; ++lf_rho) {\n";
  os << "          const idx_t i = lf_rho * lf_w + " << col << ";\n";
  print_body(os, ir, Mode::Strip, "          ", root_lin);
  os << "          " << step << "\n";
  os << "        }\n";
  os << "      }\n";
  os << "    }\n";
  os << "    return;\n";
  os << "  }\n";
}

} // namespace

bool has_strip_path(const KernelIR& ir) {
  return strip_group(ir) >= 0;
}

int strip_width_slot(const KernelIR& ir) {
  const int g = strip_group(ir);
  return g < 0 ? -1 : ir.code[std::size_t(ir.unravels[std::size_t(g)].back())].slot;
}

std::string render_cuda(const KernelIR& ir) {
  if (ir.schedule != Schedule::Elementwise) return render_reduction(ir);
  std::ostringstream os;
  print_header(os, ir, false);
  os << ") {\n";
  constexpr int V = kElementsPerThread;
  const int root_lin = root_linear_index(ir);
  if (const int g = strip_group(ir); g >= 0) print_strip_path(os, ir, root_lin, g);
  // Unravel groups of the output's own linear index: unravelled once per thread in the vector path.
  std::vector<bool> root_group(ir.unravels.size(), false);
  for (auto& in : ir.code)
    if (in.op == IrOp::Coord && in.a == root_lin) root_group[std::size_t(in.slot)] = true;
  auto param = [&](int instr) { return param_of(ir, instr); };
  os << "  const idx_t step = (idx_t)gridDim.x * blockDim.x * " << V << ";\n";
  os << "  for (idx_t base = ((idx_t)blockIdx.x * blockDim.x + threadIdx.x) * " << V << "; base < n; base += step) {\n";
  std::string vector_ok = "base + " + std::to_string(V) + " <= n";
  for (std::size_t g = 0; g < ir.unravels.size(); ++g) {
    if (!root_group[g]) continue;
    const auto& dims = ir.unravels[g];
    const std::string u = "u" + std::to_string(g);
    os << "    idx_t " << u << "_rest = base;\n";
    for (std::size_t k = dims.size(); k-- > 0;) {
      if (k == 0) {
        os << "    const idx_t " << u << "_c0 = " << u << "_rest;\n";
      } else {
        os << "    const idx_t " << u << "_c" << k << " = " << u << "_rest % " << param(dims[k]) << ";\n";
        os << "    " << u << "_rest = " << u << "_rest / " << param(dims[k]) << ";\n";
      }
    }
    // The thread's elements must not wrap into the next row for the last coordinate to step by j.
    vector_ok +=
        " && " + u + "_c" + std::to_string(dims.size() - 1) + " + " + std::to_string(V) + " <= " + param(dims.back());
  }
  os << "    if (" << vector_ok << ") {\n";
  // Vector loads of the contiguous inputs first, so all of them are in flight before any arithmetic.
  std::vector<bool> linear(ir.inputs.size(), false);
  for (auto& in : ir.code)
    if (in.op == IrOp::LoadLinear) linear[std::size_t(in.slot)] = true;
  for (std::size_t k = 0; k < ir.inputs.size(); ++k)
    if (linear[k]) {
      const char* t = cuda_type(ir.inputs[k].dtype);
      os << "      const lf_vec<" << t << "> l" << k << " = *reinterpret_cast<const lf_vec<" << t << ">*>(in" << k
         << " + base);\n";
    }
  for (std::size_t k = 0; k < ir.outputs.size(); ++k)
    os << "      lf_vec<" << cuda_type(ir.outputs[k]) << "> s" << k << ";\n";
  os << "#pragma unroll\n";
  os << "      for (int j = 0; j < " << V << "; ++j) {\n";
  os << "        const idx_t i = base + j;\n";
  print_body(os, ir, Mode::Vector, "        ", root_lin);
  os << "      }\n";
  for (std::size_t k = 0; k < ir.outputs.size(); ++k)
    os << "      *reinterpret_cast<lf_vec<" << cuda_type(ir.outputs[k]) << ">*>(out" << k << " + base) = s" << k
       << ";\n";
  os << "    } else {\n";
  os << "      const idx_t end = base + " << V << " < n ? base + " << V << " : n;\n";
  os << "      for (idx_t i = base; i < end; ++i) {\n";
  print_body(os, ir, Mode::Scalar, "        ", root_lin);
  os << "      }\n";
  os << "    }\n";
  os << "  }\n";
  os << "}\n";
  return os.str();
}

} // namespace lazyfuse::codegen
