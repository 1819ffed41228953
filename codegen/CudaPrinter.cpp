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

enum class Mode { Vector, Scalar };

std::string v(int id) { return "v" + std::to_string(id); }

void print_body(std::ostringstream& os, const KernelIR& ir, Mode mode, const std::string& indent) {
  for (std::size_t n = 0; n < ir.code.size(); ++n) {
    const Instr& in = ir.code[n];
    const std::string lhs = v(int(n));
    const char* t = cuda_type(in.dtype);
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
    case IrOp::Store: break;
    }
    os << ";\n";
  }
}

} // namespace

std::string render_cuda(const KernelIR& ir) {
  std::ostringstream os;
  os << "// lazyfuse kernel " << ir.name << " (generated; self-contained: it includes no header)\n";
  os << "#define LF_HD __device__ __forceinline__\n";
  os << "typedef int lf_i32;\ntypedef long long lf_i64;\n";
  os << kPrelude << "\n";
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
  os << ") {\n";
  constexpr int V = kElementsPerThread;
  os << "  const idx_t step = (idx_t)gridDim.x * blockDim.x * " << V << ";\n";
  os << "  for (idx_t base = ((idx_t)blockIdx.x * blockDim.x + threadIdx.x) * " << V
     << "; base < n; base += step) {\n";
  os << "    if (base + " << V << " <= n) {\n";
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
  for (std::size_t k = 0; k < ir.outputs.size(); ++k) os << "      lf_vec<" << cuda_type(ir.outputs[k]) << "> s" << k << ";\n";
  os << "#pragma unroll\n";
  os << "      for (int j = 0; j < " << V << "; ++j) {\n";
  os << "        const idx_t i = base + j;\n";
  print_body(os, ir, Mode::Vector, "        ");
  os << "      }\n";
  for (std::size_t k = 0; k < ir.outputs.size(); ++k)
    os << "      *reinterpret_cast<lf_vec<" << cuda_type(ir.outputs[k]) << ">*>(out" << k << " + base) = s" << k
       << ";\n";
  os << "    } else {\n";
  os << "      for (idx_t i = base; i < n; ++i) {\n";
  print_body(os, ir, Mode::Scalar, "        ");
  os << "      }\n";
  os << "    }\n";
  os << "  }\n";
  os << "}\n";
  return os.str();
}

} // namespace lazyfuse::codegen
