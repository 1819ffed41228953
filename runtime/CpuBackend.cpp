#include "runtime/CpuBackend.h"

#include "graph/Assert.h"
#include "graph/Ops.h"
#include "runtime/HostOps.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace lazyfuse::runtime {

using codegen::Instr;
using codegen::IrOp;
using codegen::KernelArgs;
using codegen::KernelIR;

namespace {

// Elements evaluated together: each instruction runs over a column of this many values, so the interpreter's
// dispatch is paid once per column, not once per element.
constexpr int kChunk = 256;

template <class F> void with_type(DType t, F&& f) {
  switch (t) {
  case DType::Bool: f.template operator()<bool>(); return;
  case DType::Int32: f.template operator()<std::int32_t>(); return;
  case DType::Int64: f.template operator()<std::int64_t>(); return;
  case DType::Float32: f.template operator()<float>(); return;
  case DType::Float64: f.template operator()<double>(); return;
  }
}

class Interpreter {
public:
  Interpreter(const KernelIR& ir, const KernelArgs& args)
      : ir_(ir), args_(args), columns_(ir.code.size() * kChunk * sizeof(std::int64_t)) {}

  void run(std::int64_t begin, std::int64_t end) {
    for (std::int64_t i0 = begin; i0 < end; i0 += kChunk) chunk(i0, int(std::min<std::int64_t>(kChunk, end - i0)));
  }

private:
  template <class T> T* col(int id) {
    return reinterpret_cast<T*>(columns_.data() + std::size_t(id) * kChunk * sizeof(std::int64_t));
  }

  void chunk(std::int64_t i0, int len) {
    const auto& code = ir_.code;
    for (std::size_t id = 0; id < code.size(); ++id) {
      const Instr& in = code[id];
      const int j = int(id);
      switch (in.op) {
      case IrOp::LinearIndex: {
        auto* o = col<std::int64_t>(j);
        for (int e = 0; e < len; ++e) o[e] = i0 + e;
        break;
      }
      case IrOp::IndexParam: std::fill_n(col<std::int64_t>(j), len, args_.params[std::size_t(in.slot)].i); break;
      case IrOp::IndexConst: std::fill_n(col<std::int64_t>(j), len, in.imm); break;
      case IrOp::IAdd: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return a + b; }); break;
      case IrOp::ISub: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return a - b; }); break;
      case IrOp::IMul: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return a * b; }); break;
      case IrOp::IDiv: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return b ? a / b : 0; }); break;
      case IrOp::IMod: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return b ? a % b : 0; }); break;
      case IrOp::ILt: predicate(j, in, len, [](std::int64_t a, std::int64_t b) { return a < b; }); break;
      case IrOp::IGe: predicate(j, in, len, [](std::int64_t a, std::int64_t b) { return a >= b; }); break;
      case IrOp::IEq: predicate(j, in, len, [](std::int64_t a, std::int64_t b) { return a == b; }); break;
      case IrOp::PAnd: {
        auto *a = col<bool>(in.a), *b = col<bool>(in.b);
        auto* o = col<bool>(j);
        for (int e = 0; e < len; ++e) o[e] = a[e] && b[e];
        break;
      }
      case IrOp::Load:
      case IrOp::LoadLinear:
        with_type(in.dtype, [&]<class T>() {
          const T* p = static_cast<const T*>(args_.inputs[std::size_t(in.slot)]);
          T* o = col<T>(j);
          if (in.op == IrOp::LoadLinear) {
            for (int e = 0; e < len; ++e) o[e] = p[i0 + e];
            return;
          }
          const std::int64_t* off = col<std::int64_t>(in.a);
          if (in.b < 0) {
            for (int e = 0; e < len; ++e) o[e] = p[off[e]];
          } else {
            const bool* pred = col<bool>(in.b);
            for (int e = 0; e < len; ++e) o[e] = pred[e] ? p[off[e]] : T(0);
          }
        });
        break;
      case IrOp::ScalarParam:
        with_type(in.dtype, [&]<class T>() {
          const auto& pv = args_.params[std::size_t(in.slot)];
          T v = is_floating(in.dtype) ? T(pv.f) : T(pv.i);
          std::fill_n(col<T>(j), len, v);
        });
        break;
      case IrOp::IndexToValue:
        with_type(in.dtype, [&]<class T>() {
          const std::int64_t* a = col<std::int64_t>(in.a);
          T* o = col<T>(j);
          for (int e = 0; e < len; ++e) o[e] = T(a[e]);
        });
        break;
      case IrOp::Unary: unary(j, in, len); break;
      case IrOp::Binary: binary(j, in, len); break;
      case IrOp::Cast: cast(j, in, len); break;
      case IrOp::Select:
        with_type(in.dtype, [&]<class T>() {
          const bool* c = col<bool>(in.a);
          const T *b = col<T>(in.b), *d = col<T>(in.c);
          T* o = col<T>(j);
          for (int e = 0; e < len; ++e) o[e] = c[e] ? b[e] : d[e];
        });
        break;
      case IrOp::Store:
        with_type(in.dtype, [&]<class T>() {
          T* out = static_cast<T*>(args_.outputs[std::size_t(in.slot)]);
          const T* v = col<T>(in.a);
          std::copy_n(v, len, out + i0);
        });
        break;
      }
    }
  }

  template <class F> void index_binary(int j, const Instr& in, int len, F f) {
    auto *a = col<std::int64_t>(in.a), *b = col<std::int64_t>(in.b);
    auto* o = col<std::int64_t>(j);
    for (int e = 0; e < len; ++e) o[e] = f(a[e], b[e]);
  }
  template <class F> void predicate(int j, const Instr& in, int len, F f) {
    auto *a = col<std::int64_t>(in.a), *b = col<std::int64_t>(in.b);
    auto* o = col<bool>(j);
    for (int e = 0; e < len; ++e) o[e] = f(a[e], b[e]);
  }

  DType type_of(int id) const { return ir_.code[std::size_t(id)].dtype; }

  void unary(int j, const Instr& in, int len) {
    switch (graph::UnaryOp(in.fn)) {
#define LAZYFUSE_UNARY(Enum, name, rule)                                                                       \
  case graph::UnaryOp::Enum:                                                                                   \
    with_type(type_of(in.a), [&]<class T>() {                                                                  \
      if constexpr (requires(T x) { lazyfuse_opmath::lf_##name(x); }) {                                                 \
        using R = decltype(lazyfuse_opmath::lf_##name(T{}));                                                            \
        LAZYFUSE_ASSERT(dtype_of<R>() == in.dtype, "unary result type differs from the IR's");                 \
        const T* a = col<T>(in.a);                                                                             \
        R* o = col<R>(j);                                                                                      \
        for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_##name(a[e]);                                          \
      } else {                                                                                                 \
        LAZYFUSE_ASSERT(false, "unary op not defined for its compute type");                                   \
      }                                                                                                        \
    });                                                                                                        \
    break;
#include <lazyfuse/ops.def>
    }
  }

  void binary(int j, const Instr& in, int len) {
    switch (graph::BinaryOp(in.fn)) {
#define LAZYFUSE_BINARY(Enum, name, rule)                                                                      \
  case graph::BinaryOp::Enum:                                                                                  \
    with_type(type_of(in.a), [&]<class T>() {                                                                  \
      if constexpr (requires(T x) { lazyfuse_opmath::lf_##name(x, x); }) {                                              \
        using R = decltype(lazyfuse_opmath::lf_##name(T{}, T{}));                                                       \
        LAZYFUSE_ASSERT(dtype_of<R>() == in.dtype, "binary result type differs from the IR's");                \
        const T *a = col<T>(in.a), *b = col<T>(in.b);                                                          \
        R* o = col<R>(j);                                                                                      \
        for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_##name(a[e], b[e]);                                    \
      } else {                                                                                                 \
        LAZYFUSE_ASSERT(false, "binary op not defined for its compute type");                                  \
      }                                                                                                        \
    });                                                                                                        \
    break;
#include <lazyfuse/ops.def>
    }
  }

  void cast(int j, const Instr& in, int len) {
    with_type(type_of(in.a), [&]<class From>() {
      with_type(in.dtype, [&]<class To>() {
        const From* a = col<From>(in.a);
        To* o = col<To>(j);
        for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_cast<To, From>(a[e]);
      });
    });
  }

  const KernelIR& ir_;
  const KernelArgs& args_;
  std::vector<std::byte> columns_;
};

} // namespace

void run_on_cpu(const KernelIR& ir, const KernelArgs& args, int threads) {
  if (args.n <= 0) return;
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  constexpr std::int64_t kMinPerThread = 1 << 15;
  threads = int(std::min<std::int64_t>(threads, (args.n + kMinPerThread - 1) / kMinPerThread));
  if (threads <= 1) {
    Interpreter(ir, args).run(0, args.n);
    return;
  }
  // Ranges are multiples of the chunk so every thread works on whole columns.
  std::int64_t per = (args.n + threads - 1) / threads;
  per = (per + kChunk - 1) / kChunk * kChunk;
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    std::int64_t b = t * per, e = std::min(args.n, b + per);
    if (b < e) pool.emplace_back([&ir, &args, b, e] { Interpreter(ir, args).run(b, e); });
  }
  Interpreter(ir, args).run(0, std::min(args.n, per));
  for (auto& th : pool) th.join();
}

} // namespace lazyfuse::runtime
