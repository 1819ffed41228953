#include "codegen/CudaPrinter.h"

#include "graph/Assert.h"
#include "graph/Ops.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <string_view>

namespace lazyfuse::codegen {

extern const std::string_view kPrelude; // graph/OpMath.inc, embedded at build time

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
#define LAZYFUSE_KERNEL_TYPEDEF_Signed(kernel_type, kernel_c_type) "typedef " #kernel_c_type " " #kernel_type ";\n"
#define LAZYFUSE_KERNEL_TYPEDEF_Unsigned(kernel_type, kernel_c_type) "typedef " #kernel_c_type " " #kernel_type ";\n"
#include <lazyfuse/dtypes.def>
#undef LAZYFUSE_KERNEL_TYPEDEF_Bool
#undef LAZYFUSE_KERNEL_TYPEDEF_Float
#undef LAZYFUSE_KERNEL_TYPEDEF_Signed
#undef LAZYFUSE_KERNEL_TYPEDEF_Unsigned
    ;

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

// `root_lin`: the LinearIndex instruction; in vector mode its unravelled coordinates come from u<g>_c<k>, computed
// once per thread for `base`, with the last one stepped by j.
// `gathered` (vector mode): the Load instructions whose four values were read before the loop over j, into
// lf_g<instruction>; `index_only`: print only index and predicate instructions.
void print_body(std::ostringstream& os, const KernelIR& ir, Mode mode, const std::string& indent, int root_lin,
                std::size_t only = std::size_t(-1), const std::vector<bool>* gathered = nullptr,
                bool index_only = false) {
  for (std::size_t n = only == std::size_t(-1) ? 0 : only; n < ir.code.size(); ++n) {
    if (only != std::size_t(-1) && n != only) break;
    const Instr& in = ir.code[n];
    if (index_only && !is_index_op(in.op) && !is_predicate_op(in.op)) continue;
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
      } else {
        os << coord_expr(ir, in);
      }
      break;
    case IrOp::ILt: os << v(in.a) << " < " << v(in.b); break;
    case IrOp::IGe: os << v(in.a) << " >= " << v(in.b); break;
    case IrOp::IEq: os << v(in.a) << " == " << v(in.b); break;
    case IrOp::PAnd: os << v(in.a) << " && " << v(in.b); break;
    case IrOp::Load:
      if (gathered && (*gathered)[n])
        os << "lf_g" << n << ".v[j]";
      else if (in.b >= 0)
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
// lf_<name>_op: a reduction's combining function (LF_REDUCE_OP) or comparison (LF_ARG_OP) as a functor; each kernel
// defines those of its reductions after these helpers.
#define LF_REDUCE_OP(name) struct lf_##name##_op { template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return lf_##name##_combine(a, b); } };
#define LF_ARG_OP(name) struct lf_##name##_op { template <class T> __device__ __forceinline__ bool operator()(T v, lf_i64 i, T b, lf_i64 j) const { return lf_##name##_better(v, i, b, j); } };
// The warp's result in lane 0.
template <class T, class Op> __device__ __forceinline__ T lf_warp_reduce(T v, Op op) {
  for (int off = 16; off > 0; off >>= 1) v = op(v, lf_shfl_down(v, off));
  return v;
}
template <class T, class Better> __device__ __forceinline__ void lf_warp_argreduce(T& v, lf_i64& i, Better better) {
  for (int off = 16; off > 0; off >>= 1) {
    T ov = lf_shfl_down(v, off);
    lf_i64 oi = lf_shfl_down(i, off);
    if (better(ov, oi, v, i)) { v = ov; i = oi; }
  }
}
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
  return graph::is_arg(graph::ReduceOp(fn));
}

// The text before a kernel's body: the prelude and the signature up to its last parameter (inputs, outputs, n,
// then the IR's parameters in slot order).
void print_header(std::ostringstream& os, const KernelIR& ir, bool reduction) {
  os << "// lazyfuse kernel " << ir.name << " (generated; self-contained: it includes no header)\n";
  os << kPreludeDefinitions;
  os << kPrelude << "\n";
  if (reduction) {
    os << kReductionHelpers;
    // The functors of this kernel's reductions, in table order.
    std::vector<bool> used(std::size_t(graph::kNumReduceOps), false);
    for (auto& in : ir.code)
      if (in.op == IrOp::Accumulate) used[in.fn] = true;
    for (std::size_t op = 0; op < used.size(); ++op)
      if (used[op])
        os << (is_arg(std::uint8_t(op)) ? "LF_ARG_OP(" : "LF_REDUCE_OP(") << graph::name_of(graph::ReduceOp(op))
           << ")\n";
    os << "\n";
  }
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
  // Block reductions: 32 slots of 8 bytes per accumulator of a loop (two for arg reductions), at least 64.
  std::map<int, int> slots_per_loop;
  for (auto& in : ir.code)
    if (in.op == IrOp::Accumulate) slots_per_loop[in.c] += is_arg(in.fn) ? 2 : 1;
  int slots = 2;
  for (auto& [loop, n] : slots_per_loop) slots = std::max(slots, n);
  os << "  __shared__ double lf_shared[" << 32 * slots << "];\n";
  // Parameters and constants first: they are visible in every loop.
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
  // Where the partial of accumulator `acc` for split `q` of this thread's outer element lives: next to the other
  // splits of the same row (a row's combining block reads them with consecutive threads), or next to the
  // neighbouring columns' partials of the same split (consecutive threads write and read consecutive columns).
  auto partial_index = [&](int acc, const std::string& q) {
    const std::string a = "(idx_t)" + std::to_string(acc);
    if (column) return "((" + a + " * lf_splits + " + q + ") * n + lf_o)";
    return "(" + a + " * n * lf_splits + lf_o * lf_splits + " + q + ")";
  };
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
  const RowCache& cache = ir.row_cache;
  const std::vector<RowLoop>& loops = cache.loops;
  if (!cache.region.empty()) {
    // The row cache: one row per region, the widest types first (every region starts on a whole vector). Used
    // only where the launch gave enough dynamic shared memory.
    const std::string len = v(ir.code[loops.front().begin].a);
    os << "    extern __shared__ __align__(16) unsigned char lf_row_cache[];\n";
    os << "    unsigned lf_cache_bytes;\n    asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(lf_cache_bytes));\n";
    os << "    const unsigned long long lf_cache_row = ((unsigned long long)" << len << " + " << kElementsPerThread - 1
       << ") / " << kElementsPerThread << " * " << kElementsPerThread << ";\n";
    std::vector<std::size_t> order(cache.region_type.size());
    for (std::size_t q = 0; q < order.size(); ++q) order[q] = q;
    auto size_of = [&](std::size_t q) { return itemsize(cache.region_type[q]); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return size_of(a) > size_of(b); });
    std::vector<std::size_t> offset(order.size());
    std::size_t bytes = 0;
    for (std::size_t q : order) {
      offset[q] = bytes;
      bytes += size_of(q);
    }
    for (std::size_t g = 0; g < cache.region.size(); ++g) {
      const std::size_t q = std::size_t(cache.region[g]);
      const char* t = cuda_type(cache.region_type[q]);
      os << "    " << t << "* const lf_cache" << g << " = reinterpret_cast<" << t << "*>(lf_row_cache + lf_cache_row * "
         << offset[q] << ");\n";
      os << "    bool lf_cached" << g << " = false;\n";
    }
    os << "    const bool lf_cache_fits = lf_cache_row * " << bytes << " <= lf_cache_bytes;\n";
  }
  std::string indent = "    ";
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
      const RowLoop* row = nullptr; // Row schedule only
      for (auto& L : loops)
        if (L.begin == k) row = &L;
      // The loop's body, for the element r. `vec`: in the vector path, where vector loads hold the values (element j
      // of each); `cached`: the version that reads values from the row cache (their operands are not computed).
      auto print_loop_body = [&](const std::string& ind, bool vec, bool cached) {
        for (std::size_t b = k + 1; b < end; ++b) {
          const Instr& bi = ir.code[b];
          if (row && !row->varies[b] && (is_index_op(bi.op) || is_predicate_op(bi.op))) continue; // hoisted
          if (cached && !row->live[b]) continue;
          if (bi.op == IrOp::Accumulate) {
            const std::string a = "lf_acc" + std::to_string(bi.slot);
            const std::string name(graph::name_of(graph::ReduceOp(bi.fn)));
            if (is_arg(bi.fn))
              os << ind << "if (lf_" << name << "_better(" << v(bi.a) << ", (lf_i64)" << v(bi.b) << ", " << a
                 << "[lf_u], " << a << "_i[lf_u])) { " << a << "[lf_u] = " << v(bi.a) << "; " << a
                 << "_i[lf_u] = (lf_i64)" << v(bi.b) << "; }\n";
            else
              os << ind << a << "[lf_u] = lf_" << name << "_combine(" << a << "[lf_u], " << v(bi.a) << ");\n";
            continue;
          }
          if (cached && row->reads[b] >= 0) {
            os << ind << "const " << cuda_type(bi.dtype) << " " << v(int(b)) << " = lf_c" << b << ".v[j];\n";
          } else if (vec && row->base[b] != -1) {
            if (bi.op == IrOp::Load)
              os << ind << "const " << cuda_type(bi.dtype) << " " << v(int(b)) << " = lf_l" << b << ".v[j];\n";
            else
              os << ind << "lf_s" << b << ".v[j] = " << v(bi.b) << ";\n";
          } else {
            print_one(b, ind);
          }
          if (vec && row->writes[b] >= 0 && !(bi.op == IrOp::Load && row->base[b] != -1))
            os << ind << "lf_w" << b << ".v[j] = " << v(int(b)) << ";\n";
        }
      };
      const std::string len = v(in.a);
      if (row) {
        // Index arithmetic that does not depend on r, once per row (the vector path's alignment test needs it).
        for (std::size_t b = k + 1; b < end; ++b)
          if (!row->varies[b] && (is_index_op(ir.code[b].op) || is_predicate_op(ir.code[b].op))) print_one(b, indent);
      }
      // The address of vector access b at element lf_rb.
      auto vector_address = [&](std::size_t b) {
        const Instr& bi = ir.code[b];
        const std::string base = bi.op == IrOp::Load ? "in" + std::to_string(bi.slot) : "out" + std::to_string(bi.slot);
        return base + (row->base[b] == RowLoop::kNoBase ? std::string() : " + " + v(row->base[b])) + " + lf_rb";
      };
      auto vec_type = [&](std::size_t b) {
        const Instr& bi = ir.code[b];
        return "lf_vec<" +
               std::string(cuda_type(bi.op == IrOp::StoreAt ? ir.outputs[std::size_t(bi.slot)] : bi.dtype)) + ">";
      };
      // One trip of the vector path over lf_rb .. lf_rb + V - 1.
      auto print_vector_trip = [&](const std::string& ind, bool cached) {
        for (std::size_t b = k + 1; b < end; ++b) {
          const Instr& bi = ir.code[b];
          const std::string vt = vec_type(b);
          if (cached && row->reads[b] >= 0)
            os << ind << "const " << vt << " lf_c" << b << " = *reinterpret_cast<const " << vt << "*>(lf_cache"
               << row->reads[b] << " + lf_rb);\n";
          else if (row->base[b] != -1 && bi.op == IrOp::StoreAt)
            os << ind << vt << " lf_s" << b << ";\n";
          else if (row->base[b] != -1 && (!cached || row->live[b]))
            os << ind << "const " << vt << " lf_l" << b << " = *reinterpret_cast<const " << vt << "*>("
               << vector_address(b) << ");\n";
          if (row->writes[b] >= 0 && !(bi.op == IrOp::Load && row->base[b] != -1))
            os << ind << vt << " lf_w" << b << ";\n";
        }
        os << "#pragma unroll\n";
        os << ind << "for (int j = 0; j < " << kElementsPerThread << "; ++j) {\n";
        os << ind << "  const idx_t " << r << " = lf_rb + j;\n";
        print_loop_body(ind + "  ", true, cached);
        os << ind << "}\n";
        for (std::size_t b = k + 1; b < end; ++b) {
          const Instr& bi = ir.code[b];
          if (row->base[b] != -1 && bi.op == IrOp::StoreAt)
            os << ind << "*reinterpret_cast<" << vec_type(b) << "*>(" << vector_address(b) << ") = lf_s" << b << ";\n";
          if (row->writes[b] >= 0)
            os << ind << "if (lf_cached" << row->writes[b] << ") *reinterpret_cast<" << vec_type(b) << "*>(lf_cache"
               << row->writes[b] << " + lf_rb) = " << (bi.op == IrOp::Load && row->base[b] != -1 ? "lf_l" : "lf_w") << b
               << ";\n";
        }
      };
      if (row && row->vector) {
        // Vectors when every vector access of this row is aligned. Each group of the row cache is stored by one loop
        // in its vector path and read back by later loops in theirs, over the same elements of the same threads.
        const std::string ok = "lf_vector" + std::to_string(in.slot);
        os << indent << "const bool " << ok << " = true";
        for (std::size_t b = k + 1; b < end; ++b) {
          if (row->base[b] == -1) continue;
          std::string addr = vector_address(b);
          addr.resize(addr.size() - std::string(" + lf_rb").size());
          os << " && (unsigned long long)(" << addr << ") % sizeof(" << vec_type(b) << ") == 0";
        }
        os << ";\n";
        for (std::size_t b = k + 1; b < end; ++b)
          if (row->writes[b] >= 0)
            os << indent << "lf_cached" << row->writes[b] << " = " << ok << " && lf_cache_fits;\n";
        os << indent << "if (" << ok << ") {\n";
        const std::string V = std::to_string(kElementsPerThread);
        const std::string stride = U + " * blockDim.x * " + V;
        // Whole trips first, with no test between their U vector loads (so all are in flight at once), then the
        // last, partial trip. The cached and the uncached versions are separate loops for the same reason.
        auto print_vector_loops = [&](const std::string& ind, bool cached) {
          os << ind << "idx_t lf_r0 = (idx_t)threadIdx.x * " << V << ";\n";
          os << ind << "for (; lf_r0 + " << stride << " - blockDim.x * " << V << " + " << V << " <= " << len
             << "; lf_r0 += " << stride << ") {\n";
          os << "#pragma unroll\n";
          os << ind << "  for (int lf_u = 0; lf_u < " << U << "; ++lf_u) {\n";
          os << ind << "    const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * " << V << ";\n";
          print_vector_trip(ind + "    ", cached);
          os << ind << "  }\n" << ind << "}\n";
          os << ind << "if (lf_r0 < " << len << ") {\n";
          os << "#pragma unroll\n";
          os << ind << "  for (int lf_u = 0; lf_u < " << U << "; ++lf_u) {\n";
          os << ind << "    const idx_t lf_rb = lf_r0 + lf_u * blockDim.x * " << V << ";\n";
          os << ind << "    if (lf_rb + " << V << " <= " << len << ") {\n";
          print_vector_trip(ind + "      ", cached);
          os << ind << "    } else {\n";
          os << ind << "      for (idx_t " << r << " = lf_rb; " << r << " < " << len << "; ++" << r << ") {\n";
          print_loop_body(ind + "        ", false, false);
          os << ind << "      }\n" << ind << "    }\n" << ind << "  }\n" << ind << "}\n";
        };
        if (row->reads_cache) {
          std::string all = "true";
          for (std::size_t b = k + 1; b < end; ++b)
            if (row->reads[b] >= 0) all += " && lf_cached" + std::to_string(row->reads[b]);
          os << indent << "  if (" << all << ") {\n";
          print_vector_loops(indent + "    ", true);
          os << indent << "  } else {\n";
          print_vector_loops(indent + "    ", false);
          os << indent << "  }\n";
        } else {
          print_vector_loops(indent + "  ", false);
        }
        os << indent << "} else {\n";
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
      os << indent << (column ? "if (lf_active) " : "") << "for (idx_t lf_r0 = " << start << "; lf_r0 < " << len
         << "; lf_r0 += " << U << " * " << step << ") {\n";
      os << "#pragma unroll\n";
      os << indent << "for (int lf_u = 0; lf_u < " << U << "; ++lf_u) {\n";
      os << indent << "  const idx_t " << r << " = lf_r0 + lf_u * " << step << ";\n";
      os << indent << "  if (" << r << " < " << len << ") {\n";
      print_loop_body(indent + "    ", false, false);
      os << indent << "  }\n" << indent << "}\n" << indent << "}\n";
      if (row && row->vector) os << indent << "}\n";
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
      }
      // Column kernels: each thread holds its own outer element's reduction, nothing to combine across the block.
      // Otherwise the loop's accumulators are combined over the block together, each in a fixed tree (warp
      // shuffles, then one warp over the warps' results): one set of barriers for all of them.
      if (!column) {
        struct Combined {
          std::string a, name, t, value, index; // accumulator, op, type, shared slots of values and of indices
          bool arg;
        };
        std::vector<Combined> combined;
        int area = 0; // 32 slots of 8 bytes each: the values, then (arg reductions) the indices
        for (const Instr* acc : accs) {
          const std::string t = cuda_type(acc->dtype);
          combined.push_back(
              {"lf_acc" + std::to_string(acc->slot), std::string(graph::name_of(graph::ReduceOp(acc->fn))), t,
               "reinterpret_cast<" + t + "*>(lf_shared + " + std::to_string(32 * area) + ")",
               "reinterpret_cast<lf_i64*>(lf_shared + " + std::to_string(32 * area + 32) + ")", is_arg(acc->fn)});
          area += is_arg(acc->fn) ? 2 : 1;
        }
        auto warp_reduce = [&](const std::string& ind) {
          for (auto& c : combined) {
            if (c.arg)
              os << ind << "lf_warp_argreduce(" << c.a << "_v, " << c.a << "_vi, lf_" << c.name << "_op());\n";
            else
              os << ind << c.a << "_v = lf_warp_reduce(" << c.a << "_v, lf_" << c.name << "_op());\n";
          }
        };
        warp_reduce(indent);
        os << indent << "__syncthreads();\n";
        os << indent << "if ((threadIdx.x & 31) == 0) {\n";
        for (auto& c : combined) {
          os << indent << "  " << c.value << "[threadIdx.x >> 5] = " << c.a << "_v;\n";
          if (c.arg) os << indent << "  " << c.index << "[threadIdx.x >> 5] = " << c.a << "_vi;\n";
        }
        os << indent << "}\n" << indent << "__syncthreads();\n";
        os << indent << "if (threadIdx.x < 32) {\n";
        os << indent << "  const bool lf_live = threadIdx.x < (blockDim.x >> 5);\n";
        for (auto& c : combined) {
          os << indent << "  " << c.a << "_v = lf_live ? " << c.value << "[threadIdx.x] : lf_" << c.name << "_identity<"
             << c.t << ">();\n";
          if (c.arg)
            os << indent << "  " << c.a << "_vi = lf_live ? " << c.index << "[threadIdx.x] : 9223372036854775807LL;\n";
        }
        warp_reduce(indent + "  ");
        os << indent << "  if (threadIdx.x == 0) {\n";
        for (auto& c : combined) {
          os << indent << "    " << c.value << "[0] = " << c.a << "_v;\n";
          if (c.arg) os << indent << "    " << c.index << "[0] = " << c.a << "_vi;\n";
        }
        os << indent << "  }\n" << indent << "}\n" << indent << "__syncthreads();\n";
        for (auto& c : combined) {
          os << indent << c.a << "_v = " << c.value << "[0];\n";
          if (c.arg) os << indent << c.a << "_vi = " << c.index << "[0];\n";
        }
      }
      for (const Instr* acc : accs) {
        const std::string a = "lf_acc" + std::to_string(acc->slot);
        const char* t = cuda_type(acc->dtype);
        if (split) {
          // Partial of this block: 16 bytes (value, then index) per (accumulator, outer, split); see partial_index.
          os << indent << (column ? "if (lf_active) {\n" : "if (threadIdx.x == 0) {\n");
          os << indent << "  unsigned char* lf_p = lf_partials + " << partial_index(acc->slot, "lf_s") << " * 16;\n";
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
          // This thread's outer element: its partials in split order, all loads in flight at once (the fold is
          // the kernel's tail: every other block has finished).
          os << "#pragma unroll " << kMaxColumnSplits << "\n";
          os << "    for (idx_t lf_q = 0; lf_q < lf_splits; ++lf_q) {\n";
        } else {
          // Each thread folds the partials q = threadIdx.x, + blockDim.x, ... in order, then the block tree.
          os << "    for (idx_t lf_q = threadIdx.x; lf_q < lf_splits; lf_q += blockDim.x) {\n";
        }
        os << "      const unsigned char* lf_p = lf_partials + " << partial_index(in.slot, "lf_q") << " * 16;\n";
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

} // namespace

std::string render_cuda(const KernelIR& ir) {
  LAZYFUSE_ASSERT(ir.analyzed, "render_cuda of kernel IR that codegen::analyze has not run on");
  if (ir.schedule != Schedule::Elementwise) return render_reduction(ir);
  std::ostringstream os;
  print_header(os, ir, false);
  os << ") {\n";
  constexpr int V = kElementsPerThread, U = kVectorsPerThread;
  int root_lin = -1;
  for (std::size_t k = 0; k < ir.code.size(); ++k)
    if (ir.code[k].op == IrOp::LinearIndex) root_lin = int(k);
  // Unravel groups of the output's own linear index: unravelled once per vector in the vector path.
  std::vector<bool> root_group(ir.unravels.size(), false);
  for (auto& in : ir.code)
    if (in.op == IrOp::Coord && in.a == root_lin) root_group[std::size_t(in.slot)] = true;
  auto param = [&](int instr) { return "p" + std::to_string(ir.code[std::size_t(instr)].slot); };
  std::vector<bool> linear(ir.inputs.size(), false);
  for (auto& in : ir.code)
    if (in.op == IrOp::LoadLinear) linear[std::size_t(in.slot)] = true;
  const std::vector<bool>& gathered = ir.unit_step_loads;
  const bool any_gathered = std::find(gathered.begin(), gathered.end(), true) != gathered.end();
  const std::string Vs = std::to_string(V);
  // A block's chunk is U * blockDim vectors; the thread's vector u starts at lf_first + u * blockDim * V, so each
  // of the U loads of a warp reads one contiguous 512-byte run (float32).
  const std::string base_u = "lf_first + (idx_t)u * blockDim.x * " + Vs;
  os << "  const idx_t lf_chunk = (idx_t)blockDim.x * " << V * U << ";\n";
  os << "  for (idx_t lf_first = (idx_t)blockIdx.x * lf_chunk + (idx_t)threadIdx.x * " << V
     << "; lf_first < n; lf_first += (idx_t)gridDim.x * lf_chunk) {\n";
  // The vector path needs all U vectors whole and each inside one row, so the last coordinate steps by j.
  os << "    bool lf_whole = lf_first + (idx_t)" << U - 1 << " * blockDim.x * " << V << " + " << V << " <= n;\n";
  for (std::size_t g = 0; g < ir.unravels.size(); ++g)
    if (root_group[g])
      for (std::size_t k = 0; k < ir.unravels[g].size(); ++k)
        os << "    idx_t lf_u" << g << "_c" << k << "[" << U << "];\n";
  const bool unravelled = std::find(root_group.begin(), root_group.end(), true) != root_group.end();
  if (unravelled) {
    os << "#pragma unroll\n";
    os << "    for (int u = 0; u < " << U << "; ++u) {\n";
    os << "      idx_t lf_rest;\n";
  }
  for (std::size_t g = 0; g < ir.unravels.size(); ++g) {
    if (!root_group[g]) continue;
    const auto& dims = ir.unravels[g];
    const std::string c = "lf_u" + std::to_string(g) + "_c";
    os << "      lf_rest = " << base_u << ";\n";
    for (std::size_t k = dims.size(); k-- > 0;) {
      if (k == 0) {
        os << "      " << c << "0[u] = lf_rest;\n";
      } else {
        os << "      " << c << k << "[u] = lf_rest % " << param(dims[k]) << ";\n";
        os << "      lf_rest = lf_rest / " << param(dims[k]) << ";\n";
      }
    }
    os << "      lf_whole = lf_whole && " << c << dims.size() - 1 << "[u] + " << V << " <= " << param(dims.back())
       << ";\n";
  }
  if (unravelled) os << "    }\n";
  // Inside a loop over u, the names the body uses (base, u<g>_c<k>, l<k>, lf_g<k>) bound to vector u's values.
  auto bind_vector = [&](const std::string& ind, bool values) {
    os << ind << "const idx_t base = " << base_u << ";\n";
    for (std::size_t g = 0; g < ir.unravels.size(); ++g)
      if (root_group[g])
        for (std::size_t k = 0; k < ir.unravels[g].size(); ++k)
          os << ind << "const idx_t u" << g << "_c" << k << " = lf_u" << g << "_c" << k << "[u];\n";
    if (!values) return;
    for (std::size_t k = 0; k < ir.inputs.size(); ++k)
      if (linear[k])
        os << ind << "const lf_vec<" << cuda_type(ir.inputs[k].dtype) << ">& l" << k << " = lf_l" << k << "[u];\n";
    for (std::size_t k = 0; k < ir.code.size(); ++k)
      if (gathered[k])
        os << ind << "const lf_vec<" << cuda_type(ir.code[k].dtype) << ">& lf_g" << k << " = lf_gv" << k << "[u];\n";
  };
  os << "    if (lf_whole) {\n";
  // All loads of all U vectors first, so they are in flight together before any arithmetic. Measured on the H200
  // (2026-11-30), two vectors against one: chain 2^26 0.198 vs 0.217 ms, blackscholes 2^25 0.182 vs 0.187 ms,
  // heat2d 8192^2 0.155 vs 0.165 ms.
  for (std::size_t k = 0; k < ir.inputs.size(); ++k)
    if (linear[k]) {
      const char* t = cuda_type(ir.inputs[k].dtype);
      os << "      lf_vec<" << t << "> lf_l" << k << "[" << U << "];\n";
      os << "#pragma unroll\n";
      os << "      for (int u = 0; u < " << U << "; ++u) lf_l" << k << "[u] = *reinterpret_cast<const lf_vec<" << t
         << ">*>(in" << k << " + " << base_u << ");\n";
    }
  // Loads through index arithmetic (views, broadcasts) whose address steps by one with j read their four values
  // at once where the row allows it. Element by element, a warp's loads would be kElementsPerThread elements
  // apart: four times the L1 traffic (measured: heat2d's kernel L1-bound at 98% on the H200).
  if (any_gathered) {
    for (std::size_t k = 0; k < ir.code.size(); ++k)
      if (gathered[k]) os << "      lf_vec<" << cuda_type(ir.code[k].dtype) << "> lf_gv" << k << "[" << U << "];\n";
    os << "#pragma unroll\n";
    os << "      for (int u = 0; u < " << U << "; ++u) {\n";
    bind_vector("        ", false);
    for (std::size_t k = 0; k < ir.code.size(); ++k) {
      if (!gathered[k]) continue;
      os << "        idx_t lf_a" << k << " = 0;\n";
      if (ir.code[k].b >= 0) os << "        bool lf_p" << k << "[" << V << "];\n";
    }
    os << "#pragma unroll\n";
    os << "        for (int j = 0; j < " << V << "; ++j) {\n";
    os << "          const idx_t i = base + j;\n";
    print_body(os, ir, Mode::Vector, "          ", root_lin, std::size_t(-1), nullptr, true);
    for (std::size_t k = 0; k < ir.code.size(); ++k) {
      if (!gathered[k]) continue;
      os << "          if (j == 0) lf_a" << k << " = " << v(ir.code[k].a) << ";\n";
      if (ir.code[k].b >= 0) os << "          lf_p" << k << "[j] = " << v(ir.code[k].b) << ";\n";
    }
    os << "        }\n";
    for (std::size_t k = 0; k < ir.code.size(); ++k) {
      if (!gathered[k]) continue;
      const Instr& in = ir.code[k];
      const std::string t = cuda_type(in.dtype), g = "lf_gv" + std::to_string(k) + "[u]";
      const std::string at = "in" + std::to_string(in.slot) + " + lf_a" + std::to_string(k);
      const std::string p = "lf_p" + std::to_string(k);
      std::string all_wanted;
      if (in.b >= 0)
        for (int j = 0; j < V; ++j) all_wanted += p + "[" + std::to_string(j) + "] && ";
      os << "        if (" << all_wanted << "(unsigned long long)(" << at << ") % sizeof(lf_vec<" << t
         << ">) == 0) {\n";
      os << "          " << g << " = *reinterpret_cast<const lf_vec<" << t << ">*>(" << at << ");\n";
      os << "        } else {\n";
      os << "#pragma unroll\n";
      os << "          for (int j = 0; j < " << V << "; ++j) " << g << ".v[j] = ";
      if (in.b >= 0) os << p << "[j] ? ";
      os << "in" << in.slot << "[lf_a" << k << " + j]";
      if (in.b >= 0) os << " : (" << t << ")0";
      os << ";\n        }\n";
    }
    os << "      }\n";
  }
  os << "#pragma unroll\n";
  os << "      for (int u = 0; u < " << U << "; ++u) {\n";
  bind_vector("        ", true);
  for (std::size_t k = 0; k < ir.outputs.size(); ++k)
    os << "        lf_vec<" << cuda_type(ir.outputs[k]) << "> s" << k << ";\n";
  os << "#pragma unroll\n";
  os << "        for (int j = 0; j < " << V << "; ++j) {\n";
  os << "          const idx_t i = base + j;\n";
  print_body(os, ir, Mode::Vector, "          ", root_lin, std::size_t(-1), &gathered);
  os << "        }\n";
  for (std::size_t k = 0; k < ir.outputs.size(); ++k)
    os << "        *reinterpret_cast<lf_vec<" << cuda_type(ir.outputs[k]) << ">*>(out" << k << " + base) = s" << k
       << ";\n";
  os << "      }\n";
  os << "    } else {\n";
  os << "      for (int u = 0; u < " << U << "; ++u) {\n";
  os << "        const idx_t base = " << base_u << ";\n";
  os << "        const idx_t end = base + " << V << " < n ? base + " << V << " : n;\n";
  os << "        for (idx_t i = base; i < end; ++i) {\n";
  print_body(os, ir, Mode::Scalar, "          ", root_lin);
  os << "        }\n";
  os << "      }\n";
  os << "    }\n";
  os << "  }\n";
  os << "}\n";
  return os.str();
}

} // namespace lazyfuse::codegen
