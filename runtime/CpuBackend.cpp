#include "runtime/CpuBackend.h"

#include "runtime/CpuRandom.h"
#include "runtime/CpuScan.h"
#include "runtime/LlvmCodegen.h"
#include "runtime/ReduceTree.h"
#include "runtime/ThreadPool.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/DTypeVisit.h"
#include "graph/HostOps.h"
#include "graph/Ops.h"

#include <lazyfuse/error.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace lazyfuse::runtime {

using codegen::Instr;
using codegen::IrOp;
using codegen::KernelArgs;
using codegen::KernelIR;

namespace {

// Elements evaluated together: each instruction runs over a column of this many values, so the interpreter's
// dispatch is paid once per column, not once per element.
constexpr int kChunk = kReduceColumn;
// A reduction loop split over threads is cut into blocks of 2^kBlockLevel columns (16384 elements): the unit of work
// whose partial the binary counter of Pairwise carries at one level, so the split does not change the order.
constexpr int kBlockLevel = 6;
constexpr std::int64_t kBlockColumns = std::int64_t(1) << kBlockLevel;
// Elements (reduced or not) below which a kernel run stays on the calling thread.
constexpr std::int64_t kMinParallelWork = std::int64_t(1) << 15;
// `elements` rounded up to whole columns.
std::int64_t ceil_chunks(std::int64_t elements) {
  return (elements + kChunk - 1) / kChunk * kChunk;
}
// Bytes of one element of a column: 8 (an index, and every type up to 64 bits), or 16 in kernels with a complex128
// value. Narrow columns keep the common kernels' working set as it was before complex128.
std::size_t slot_bytes_of(const KernelIR& ir) {
  for (const Instr& in : ir.code)
    if (!codegen::is_index_op(in.op) && !is_predicate_op(in.op) && itemsize(in.dtype) > 8) return 16;
  return sizeof(std::int64_t);
}

// What an index column is known to hold, so that a Load through a column of consecutive offsets copies a run instead
// of gathering: Uniform (one value everywhere), Unit (its first value plus the position), or Varying.
enum class Stride : std::uint8_t { Varying, Uniform, Unit };

// The stride of the column that index op `op` (IAdd, ISub, IMul, IDiv, IMod) makes from columns of strides x and y.
Stride combined_stride(IrOp op, Stride x, Stride y) {
  if (x == Stride::Uniform && y == Stride::Uniform) return Stride::Uniform;
  if (op == IrOp::IAdd && ((x == Stride::Unit && y == Stride::Uniform) || (x == Stride::Uniform && y == Stride::Unit)))
    return Stride::Unit;
  if (op == IrOp::ISub && x == Stride::Unit && y == Stride::Uniform) return Stride::Unit;
  return Stride::Varying;
}

class Interpreter {
public:
  Interpreter(const KernelIR& ir, const KernelArgs& args)
      : ir_(ir), args_(args), slot_bytes_(slot_bytes_of(ir)), stride_(ir.code.size(), Stride::Varying) {}

  void run(std::int64_t begin, std::int64_t end) {
    // Columns no longer than the range: a long kernel over a few elements (a time loop on a small state) would
    // otherwise clear kChunk values a column for each of its thousands of instructions at every run. Loops read
    // whole columns, so kernels with one keep them whole.
    const bool has_loop =
        std::any_of(ir_.code.begin(), ir_.code.end(), [](const Instr& in) { return in.op == IrOp::LoopBegin; });
    allocate_columns(has_loop ? kChunk : int(std::min<std::int64_t>(kChunk, end - begin)));
    for (std::int64_t i0 = begin; i0 < end; i0 += kChunk) chunk(i0, int(std::min<std::int64_t>(kChunk, end - i0)));
  }

private:
  void allocate_columns(int column_length) {
    column_length_ = std::size_t(std::max(column_length, 1));
    columns_.assign(ir_.code.size() * column_length_ * slot_bytes_, std::byte{0});
  }

  template <class T> T* col(int id) {
    return reinterpret_cast<T*>(columns_.data() + std::size_t(id) * column_length_ * slot_bytes_);
  }

  void chunk(std::int64_t i0, int len) {
    for (std::size_t id = 0; id < ir_.code.size(); ++id) exec(id, len, i0);
  }

public:
  // ---- reduction kernels: one outer element at a time; loops over the reduced elements in columns ----
  void run_outer(std::int64_t begin, std::int64_t end) {
    allocate_columns(kChunk);
    const auto& code = ir_.code;
    // Parameters and constants are the same everywhere: fill their columns once.
    for (std::size_t id = 0; id < code.size(); ++id)
      if (code[id].op == IrOp::IndexParam || code[id].op == IrOp::ScalarParam || code[id].op == IrOp::IndexConst)
        exec(id, kChunk, 0);
    for (outer_ = begin; outer_ < end; ++outer_) {
      for (std::size_t id = 0; id < code.size(); ++id) {
        const Instr& in = code[id];
        if (in.op == IrOp::IndexParam || in.op == IrOp::ScalarParam || in.op == IrOp::IndexConst) continue;
        if (in.op == IrOp::LoopBegin) {
          id = run_loop(id);
          continue;
        }
        if (in.op == IrOp::Store) {
          exec(id, 1, outer_);
          continue;
        }
        exec(id, 1, 0);
        broadcast(id);
      }
    }
  }

  // Threads each reduction loop may be split over (set when the outer elements run on one thread).
  int split_threads_ = 1;

  // The longest reduction loop of the kernel, in elements (0 without loops).
  std::int64_t longest_loop() const {
    std::int64_t longest = 0;
    for (const Instr& in : ir_.code)
      if (in.op == IrOp::LoopBegin) longest = std::max(longest, param_of(in.a));
    return longest;
  }

private:
  std::int64_t outer_ = 0;
  std::int64_t loop_base_ = 0;

  // Makes an outer value readable at every position of a column, as loop instructions read it.
  void broadcast(std::size_t id) {
    stride_[id] = Stride::Uniform;
    auto* c = columns_.data() + id * column_length_ * slot_bytes_;
    const std::size_t w = value_width(ir_.code[id]);
    for (int e = 1; e < kChunk; ++e) std::memcpy(c + std::size_t(e) * w, c, w);
  }
  std::size_t value_width(const Instr& in) const {
    if (is_predicate_op(in.op)) return sizeof(bool);
    if (codegen::is_index_op(in.op)) return sizeof(std::int64_t);
    return itemsize(in.dtype);
  }

  // One accumulator of a loop: folds columns of values in; gives the reduction's result at the end. A loop split
  // over threads folds each block of kBlockColumns columns into a fresh() accumulator and absorbs the blocks in order.
  struct Accumulator {
    virtual ~Accumulator() = default;
    virtual void fold(Interpreter& in, const Instr& acc, int len) = 0;
    virtual void finish(void* out) = 0; // the Result's value (T, or int64 for arg reductions)
    virtual std::unique_ptr<Accumulator> fresh() const = 0;
    // Folds in `block`, the accumulator of the columns that follow this one's (a whole block, or the last part).
    virtual void absorb(const Accumulator& block) = 0;
  };

  // A combining reduction in the CPU backend's tree order (runtime/ReduceTree.h, shared with the LLVM code
  // generator): a halving tree inside each column, and a binary counter of column partials.
  // The counter's state after whole blocks of 2^kBlockLevel columns is one partial per block, carried at level
  // kBlockLevel; so blocks folded separately and absorbed in order give the same bits as one sequential fold.
  template <class T, class Combine> struct Pairwise final : Accumulator {
    Pairwise(Combine combine, T identity) : combine(combine), identity(identity) {}
    Combine combine;
    T identity;
    T levels[64];
    bool used[64] = {};
    void fold(Interpreter& in, const Instr& acc, int len) override {
      carry_in(reduce_column(in.col<T>(acc.a), len, combine), 0);
    }
    void carry_in(T partial, int level) { reduce_carry(levels, used, partial, level, combine); }
    void finish(void* out) override {
      const T result = reduce_finish(levels, used, identity, combine);
      std::memcpy(out, &result, sizeof(T));
    }
    std::unique_ptr<Accumulator> fresh() const override { return std::make_unique<Pairwise>(combine, identity); }
    void absorb(const Accumulator& other) override {
      // This accumulator holds whole blocks (no level below kBlockLevel in use) and `block` at most one block:
      // carrying its levels in from the lowest is what folding its columns here would have done.
      const auto& block = static_cast<const Pairwise&>(other);
      for (int level = kBlockLevel + 1; level < 64; ++level)
        LAZYFUSE_ASSERT(!block.used[level], "a reduction block of more than 2^kBlockLevel columns");
      reduce_absorb(levels, used, block.levels, block.used, combine);
    }
  };

  // An arg reduction: the best (value, index) in lf_arg*_better's order, which picks one element whatever the
  // scanning order (the first NaN, else the first extreme).
  template <class T, class Better> struct Arg final : Accumulator {
    Arg(Better better, T identity) : better(better), identity(identity), best(identity) {}
    Better better;
    T identity;
    T best;
    std::int64_t best_index = INT64_MAX;
    void fold(Interpreter& in, const Instr& acc, int len) override {
      const T* v = in.col<T>(acc.a);
      const std::int64_t* idx = in.col<std::int64_t>(acc.b);
      for (int e = 0; e < len; ++e)
        if (better(v[e], idx[e], best, best_index)) best = v[e], best_index = idx[e];
    }
    void finish(void* out) override {
      const std::int64_t index = best_index == INT64_MAX ? 0 : best_index;
      std::memcpy(out, &index, sizeof index);
    }
    std::unique_ptr<Accumulator> fresh() const override { return std::make_unique<Arg>(better, identity); }
    void absorb(const Accumulator& other) override {
      const auto& block = static_cast<const Arg&>(other);
      if (block.best_index != INT64_MAX && better(block.best, block.best_index, best, best_index))
        best = block.best, best_index = block.best_index;
    }
  };

  // The accumulator of `op` over T, with its combining (or comparing) function inlined into its fold.
  template <class T> static std::unique_ptr<Accumulator> make_accumulator(graph::ReduceOp op) {
    switch (op) {
// (Logical reductions combine bools only: no other type instantiates theirs.)
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost)                                                           \
  case graph::ReduceOp::Enum:                                                                                          \
    if constexpr (graph::ReduceRule::rule != graph::ReduceRule::Logical || std::is_same_v<T, bool>) {                  \
      LAZYFUSE_MAKE_##kind(name)                                                                                       \
    }                                                                                                                  \
    break;
#define LAZYFUSE_MAKE_Combine(name)                                                                                    \
  auto combine = [](T a, T b) { return lazyfuse_opmath::lf_##name##_combine(a, b); };                                  \
  return std::make_unique<Pairwise<T, decltype(combine)>>(combine, lazyfuse_opmath::lf_##name##_identity<T>());
#define LAZYFUSE_MAKE_Arg(name)                                                                                        \
  auto better = [](T v, std::int64_t i, T b, std::int64_t j) {                                                         \
    return lazyfuse_opmath::lf_##name##_better(v, i, b, j);                                                            \
  };                                                                                                                   \
  return std::make_unique<Arg<T, decltype(better)>>(better, lazyfuse_opmath::lf_##name##_identity<T>());
#include <lazyfuse/ops.def>
#undef LAZYFUSE_MAKE_Combine
#undef LAZYFUSE_MAKE_Arg
    }
    LAZYFUSE_ASSERT(false, "a reduction the CPU backend has no accumulator for");
    return nullptr;
  }

  // Results of the last loops, by accumulator, 16 bytes each (read by Result instructions).
  std::vector<std::array<std::byte, 16>> results_;

  // Runs the loop that starts at `begin`; returns the position of its LoopEnd. With split_threads_ > 1 and more
  // than one block of columns, the blocks run in parallel and their partials are absorbed in block order.
  std::size_t run_loop(std::size_t begin) {
    const auto& code = ir_.code;
    const Instr& head = code[begin];
    std::size_t end = begin + 1;
    while (!(code[end].op == IrOp::LoopEnd && code[end].slot == head.slot)) ++end;
    const std::int64_t n = param_of(head.a);
    std::vector<std::size_t> acc_at; // the Accumulate instructions
    Accumulators accs;
    for (std::size_t k = begin + 1; k < end; ++k) {
      const Instr& acc = code[k];
      if (acc.op != IrOp::Accumulate) continue;
      acc_at.push_back(k);
      graph::visit_opmath_type(acc.dtype,
                               [&]<class T>() { accs.push_back(make_accumulator<T>(graph::ReduceOp(acc.fn))); });
    }
    const std::int64_t columns = (n + kChunk - 1) / kChunk;
    const std::int64_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
    if (split_threads_ > 1 && blocks > 1) {
      std::vector<Accumulators> partials(static_cast<std::size_t>(blocks));
      const std::int64_t grain = std::max<std::int64_t>(1, blocks / (4 * std::int64_t(split_threads_)));
      ThreadPool::instance().parallel_for(blocks, grain, split_threads_, [&](std::int64_t b0, std::int64_t b1) {
        Interpreter worker(*this); // the outer element's columns and the earlier loops' results
        worker.split_threads_ = 1;
        for (std::int64_t b = b0; b < b1; ++b) {
          Accumulators& part = partials[std::size_t(b)];
          for (const auto& acc : accs) part.push_back(acc->fresh());
          worker.fold_columns(begin, end, n, b * kBlockColumns, std::min(columns, (b + 1) * kBlockColumns), acc_at,
                              part);
        }
      });
      for (const Accumulators& part : partials)
        for (std::size_t a = 0; a < accs.size(); ++a) accs[a]->absorb(*part[a]);
    } else {
      fold_columns(begin, end, n, 0, columns, acc_at, accs);
    }
    for (std::size_t a = 0; a < accs.size(); ++a) {
      const auto slot = std::size_t(code[acc_at[a]].slot);
      if (results_.size() <= slot) results_.resize(slot + 1);
      accs[a]->finish(results_[slot].data());
    }
    return end;
  }

  using Accumulators = std::vector<std::unique_ptr<Accumulator>>;

  // Runs the loop body over columns [c0, c1) of the n reduced elements, folding into `accs` (one per acc_at).
  void fold_columns(std::size_t begin, std::size_t end, std::int64_t n, std::int64_t c0, std::int64_t c1,
                    const std::vector<std::size_t>& acc_at, Accumulators& accs) {
    for (std::int64_t c = c0; c < c1; ++c) {
      loop_base_ = c * kChunk;
      const int len = int(std::min<std::int64_t>(kChunk, n - loop_base_));
      body(begin, end, len);
      for (std::size_t a = 0; a < accs.size(); ++a) accs[a]->fold(*this, ir_.code[acc_at[a]], len);
    }
  }

  void body(std::size_t begin, std::size_t end, int len) {
    exec(begin, len, 0); // the loop index first: the body reads it
    for (std::size_t k = begin + 1; k < end; ++k) {
      const IrOp op = ir_.code[k].op;
      if (op == IrOp::Accumulate || op == IrOp::IndexParam || op == IrOp::ScalarParam || op == IrOp::IndexConst)
        continue;
      exec(k, len, 0);
    }
  }

  void exec(std::size_t id, int len, std::int64_t i0) {
    const auto& code = ir_.code;
    {
      const Instr& in = code[id];
      const int j = int(id);
      stride_[id] = Stride::Varying;
      switch (in.op) {
      case IrOp::LinearIndex: {
        stride_[id] = Stride::Unit;
        auto* o = col<std::int64_t>(j);
        for (int e = 0; e < len; ++e) o[e] = i0 + e;
        break;
      }
      case IrOp::IndexParam:
        stride_[id] = Stride::Uniform;
        std::fill_n(col<std::int64_t>(j), len, args_.params[std::size_t(in.slot)].i);
        break;
      case IrOp::IndexConst:
        stride_[id] = Stride::Uniform;
        std::fill_n(col<std::int64_t>(j), len, in.imm);
        break;
      case IrOp::IAdd: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return a + b; }); break;
      case IrOp::ISub: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return a - b; }); break;
      case IrOp::IMul: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return a * b; }); break;
      case IrOp::IDiv: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return b ? a / b : 0; }); break;
      case IrOp::IMod: index_binary(j, in, len, [](std::int64_t a, std::int64_t b) { return b ? a % b : 0; }); break;
      case IrOp::Coord: {
        // Coordinate k: divide by the dimensions after it, then reduce modulo its own (not for the first).
        const auto& dims = ir_.unravels[std::size_t(in.slot)];
        const std::int64_t* lin = col<std::int64_t>(in.a);
        auto* o = col<std::int64_t>(j);
        std::int64_t after = 1;
        for (std::size_t d = dims.size(); d-- > std::size_t(in.imm) + 1;) after *= param_of(dims[d]);
        const std::int64_t size = param_of(dims[std::size_t(in.imm)]);
        for (int e = 0; e < len; ++e) {
          std::int64_t t = after ? lin[e] / after : 0;
          o[e] = in.imm == 0 ? t : (size ? t % size : 0);
        }
        break;
      }
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
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          const T* p = static_cast<const T*>(args_.inputs[std::size_t(in.slot)]);
          T* o = col<T>(j);
          if (in.op == IrOp::LoadLinear) {
            for (int e = 0; e < len; ++e) o[e] = p[i0 + e];
            return;
          }
          const std::int64_t* off = col<std::int64_t>(in.a);
          if (in.b < 0 && stride_[std::size_t(in.a)] == Stride::Unit) {
            std::copy_n(p + off[0], len, o);
          } else if (in.b < 0) {
            for (int e = 0; e < len; ++e) o[e] = p[off[e]];
          } else {
            const bool* pred = col<bool>(in.b);
            for (int e = 0; e < len; ++e) o[e] = pred[e] ? p[off[e]] : T{};
          }
        });
        break;
      case IrOp::ScalarParam:
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          const auto& pv = args_.params[std::size_t(in.slot)];
          const T v = graph::opmath_value<T>(pv.f, pv.i, pv.im);
          std::fill_n(col<T>(j), len, v);
        });
        break;
      case IrOp::IndexToValue:
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          const std::int64_t* a = col<std::int64_t>(in.a);
          T* o = col<T>(j);
          for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_cast<T, std::int64_t>(a[e]);
        });
        break;
      case IrOp::Unary: unary(j, in, len); break;
      case IrOp::Binary: binary(j, in, len); break;
      case IrOp::Cast: cast(j, in, len); break;
      case IrOp::Select:
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          const bool* c = col<bool>(in.a);
          const T *b = col<T>(in.b), *d = col<T>(in.c);
          T* o = col<T>(j);
          for (int e = 0; e < len; ++e) o[e] = c[e] ? b[e] : d[e];
        });
        break;
      case IrOp::Store:
      case IrOp::ScanStore: // the scan's input; scan_in_place scans it afterwards
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          T* out = static_cast<T*>(args_.outputs[std::size_t(in.slot)]);
          const T* v = col<T>(in.a);
          std::copy_n(v, len, out + i0);
        });
        break;
      case IrOp::StoreAt:
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          T* out = static_cast<T*>(args_.outputs[std::size_t(in.slot)]);
          const std::int64_t* at = col<std::int64_t>(in.a);
          const T* v = col<T>(in.b);
          for (int e = 0; e < len; ++e) out[at[e]] = v[e];
        });
        break;
      case IrOp::OuterIndex:
        stride_[id] = Stride::Uniform;
        std::fill_n(col<std::int64_t>(j), len, outer_);
        break;
      case IrOp::LoopBegin: {
        stride_[id] = Stride::Unit;
        auto* o = col<std::int64_t>(j);
        for (int e = 0; e < len; ++e) o[e] = loop_base_ + e;
        break;
      }
      case IrOp::Result:
        graph::visit_opmath_type(in.dtype, [&]<class T>() {
          T value;
          std::memcpy(&value, results_[std::size_t(in.slot)].data(), sizeof(T));
          std::fill_n(col<T>(j), len, value);
        });
        break;
      case IrOp::Accumulate:
      case IrOp::LoopEnd: LAZYFUSE_ASSERT(false, "reduction instruction outside a reduction loop"); break;
      case IrOp::Random: random(j, in, len); break;
      case IrOp::CheckedIndex: checked_index(j, in, len); break;
      }
    }
  }

  template <class F> void index_binary(int j, const Instr& in, int len, F f) {
    stride_[std::size_t(j)] = combined_stride(in.op, stride_[std::size_t(in.a)], stride_[std::size_t(in.b)]);
    auto *a = col<std::int64_t>(in.a), *b = col<std::int64_t>(in.b);
    auto* o = col<std::int64_t>(j);
    if (stride_[std::size_t(j)] == Stride::Uniform) {
      // Row offsets (outer index times row length) in every column of a loop: one multiply, not len scalar ones.
      std::fill_n(o, len, f(a[0], b[0]));
      return;
    }
    for (int e = 0; e < len; ++e) o[e] = f(a[e], b[e]);
  }
  template <class F> void predicate(int j, const Instr& in, int len, F f) {
    auto *a = col<std::int64_t>(in.a), *b = col<std::int64_t>(in.b);
    auto* o = col<bool>(j);
    for (int e = 0; e < len; ++e) o[e] = f(a[e], b[e]);
  }

  DType type_of(int id) const {
    return ir_.code[std::size_t(id)].dtype;
  }
  std::int64_t param_of(int instr) const {
    return args_.params[std::size_t(ir_.code[std::size_t(instr)].slot)].i;
  }

  void unary(int j, const Instr& in, int len) {
    switch (graph::UnaryOp(in.fn)) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  case graph::UnaryOp::Enum:                                                                                           \
    graph::visit_opmath_type(type_of(in.a), [&]<class T>() {                                                           \
      if constexpr (requires(T x) { lazyfuse_opmath::lf_##name(x); }) {                                                \
        using R = decltype(lazyfuse_opmath::lf_##name(T{}));                                                           \
        LAZYFUSE_ASSERT(graph::opmath_dtype<R>() == in.dtype, "unary result type differs from the IR's");              \
        const T* a = col<T>(in.a);                                                                                     \
        R* o = col<R>(j);                                                                                              \
        for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_##name(a[e]);                                         \
      } else {                                                                                                         \
        LAZYFUSE_ASSERT(false, "unary op not defined for its compute type");                                           \
      }                                                                                                                \
    });                                                                                                                \
    break;
#include <lazyfuse/ops.def>
    }
  }

  void binary(int j, const Instr& in, int len) {
    switch (graph::BinaryOp(in.fn)) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  case graph::BinaryOp::Enum:                                                                                          \
    graph::visit_opmath_type(type_of(in.a), [&]<class T>() {                                                           \
      if constexpr (requires(T x) { lazyfuse_opmath::lf_##name(x, x); }) {                                             \
        using R = decltype(lazyfuse_opmath::lf_##name(T{}, T{}));                                                      \
        LAZYFUSE_ASSERT(graph::opmath_dtype<R>() == in.dtype, "binary result type differs from the IR's");             \
        const T *a = col<T>(in.a), *b = col<T>(in.b);                                                                  \
        R* o = col<R>(j);                                                                                              \
        for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_##name(a[e], b[e]);                                   \
      } else {                                                                                                         \
        LAZYFUSE_ASSERT(false, "binary op not defined for its compute type");                                          \
      }                                                                                                                \
    });                                                                                                                \
    break;
#include <lazyfuse/ops.def>
    }
  }

  void cast(int j, const Instr& in, int len) {
    graph::visit_opmath_type(type_of(in.a), [&]<class From>() {
      graph::visit_opmath_type(in.dtype, [&]<class To>() {
        const From* a = col<From>(in.a);
        To* o = col<To>(j);
        for (int e = 0; e < len; ++e) o[e] = lazyfuse_opmath::lf_cast<To, From>(a[e]);
      });
    });
  }

  // IrOp::CheckedIndex: NumPy's wrap of negative indices, out-of-range ones read element 0 and set the error bit.
  void checked_index(int j, const Instr& in, int len) {
    const std::int64_t* size = col<std::int64_t>(in.b);
    const bool* pred = in.c >= 0 ? col<bool>(in.c) : nullptr;
    std::int64_t* o = col<std::int64_t>(j);
    bool failed = false;
    graph::visit_opmath_type(type_of(in.a), [&]<class T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        const T* a = col<T>(in.a);
        for (int e = 0; e < len; ++e) {
          std::int64_t v = std::int64_t(a[e]);
          if constexpr (std::is_signed_v<T>) {
            if (v < 0) v += size[e];
          } else if (a[e] > T(INT64_MAX)) {
            v = -1;
          }
          if (std::uint64_t(v) >= std::uint64_t(size[e])) {
            failed = failed || !pred || pred[e];
            v = 0;
          }
          o[e] = v;
        }
      } else {
        LAZYFUSE_ASSERT(false, "checked_index of a value that is not an integer");
      }
    });
    if (failed)
      std::atomic_ref<std::uint32_t>(*static_cast<std::uint32_t*>(args_.error_word))
          .fetch_or(std::uint32_t(1) << (in.slot % 32), std::memory_order_relaxed);
  }

  void random(int j, const Instr& in, int len) {
    RandomColumn c;
    c.dist = graph::RandomDist(in.fn);
    c.type = in.dtype;
    c.index = col<std::int64_t>(in.a);
    c.key = col<std::uint64_t>(in.b);
    c.counter = col<std::uint64_t>(in.c);
    if (in.slot >= 0) {
      const auto& p = args_.params[std::size_t(ir_.code[std::size_t(in.slot)].slot)];
      c.p0 = p.f;
      c.range = std::uint64_t(p.i);
    }
    if (in.imm >= 0) c.p1 = args_.params[std::size_t(ir_.code[std::size_t(in.imm)].slot)].f;
    random_column(c, col<std::byte>(j), len);
  }

  const KernelIR& ir_;
  const KernelArgs& args_;
  const std::size_t slot_bytes_;  // of one element of a column (slot_bytes_of)
  std::size_t column_length_ = 0; // elements a column holds: kChunk, or fewer for a short run without loops
  std::vector<std::byte> columns_;
  std::vector<Stride> stride_; // of each instruction's column as last computed
};

// The compiled code LAZYFUSE_CPU_CODEGEN chooses for this launch (runtime/LlvmCodegen.h), or null: interpret it.
CompiledKernel compiled_code(const KernelIR& ir, const KernelArgs& args) {
  const std::string& mode = config::snapshot().cpu_codegen;
  if (mode == "interpreter") return nullptr;
  if (mode == "llvm") {
    if (!llvm_codegen_built())
      throw Error("LAZYFUSE_CPU_CODEGEN=llvm: this build has no LLVM code generator (" + cpu_codegen_description() +
                  "); use auto or interpreter");
    return llvm_compiled_kernel(ir);
  }
  if (!llvm_codegen_built()) return nullptr;
  // Elements a run reads or writes: the output's, or every reduced element of every outer one.
  std::int64_t work = args.n;
  for (const Instr& in : ir.code)
    if (in.op == IrOp::LoopBegin)
      work = std::max(work, args.n * args.params[std::size_t(ir.code[std::size_t(in.a)].slot)].i);
  if (work < kMinCompiledElements && !llvm_kernel_cached(ir)) {
    count_interpreted(true);
    return nullptr;
  }
  return llvm_compiled_kernel(ir);
}

// The interpreter's split of each loop over `threads` (Interpreter::run_loop) in compiled code: the outer elements one
// by one; each loop's blocks of kBlockColumns columns folded in parallel, absorbed here in block order, finished.
void run_split(const CompiledSplit& split, const KernelIR& ir, const KernelArgs& args,
               const std::vector<CompiledParam>& params, int threads) {
  std::vector<std::int64_t> lengths; // of the loops, in order
  for (const Instr& in : ir.code)
    if (in.op == IrOp::LoopBegin) lengths.push_back(args.params[std::size_t(ir.code[std::size_t(in.a)].slot)].i);
  LAZYFUSE_ASSERT(lengths.size() == split.loops.size(), "a compiled split of another kernel's loops");
  // States are 16-byte aligned (max_align_t) for the host's lf_c128 levels.
  const std::size_t words = (split.state_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  std::vector<std::max_align_t> total(words), states;
  for (std::int64_t outer = 0; outer < args.n; ++outer) {
    std::memset(total.data(), 0, words * sizeof(std::max_align_t));
    for (std::size_t l = 0; l < lengths.size(); ++l) {
      const CompiledSplit::Loop& loop = split.loops[l];
      const std::int64_t columns = (lengths[l] + kChunk - 1) / kChunk;
      const std::int64_t blocks = (columns + kBlockColumns - 1) / kBlockColumns;
      // (Zeroed bytewise: a value-initialized max_align_t may leave its padding bytes, where counters live, as is.)
      states.resize(std::size_t(blocks) * words);
      std::memset(states.data(), 0, states.size() * sizeof(std::max_align_t));
      auto run_blocks = [&](std::int64_t b0, std::int64_t b1) {
        for (std::int64_t b = b0; b < b1; ++b)
          loop.block(args.inputs.data(), args.outputs.data(), params.data(), outer, b * kBlockColumns,
                     std::min(columns, (b + 1) * kBlockColumns), &states[std::size_t(b) * words], total.data());
      };
      if (blocks > 1)
        ThreadPool::instance().parallel_for(blocks, std::max<std::int64_t>(1, blocks / (4 * std::int64_t(threads))),
                                            threads, run_blocks);
      else
        run_blocks(0, blocks);
      for (std::int64_t b = 0; b < blocks; ++b) loop.absorb(total.data(), &states[std::size_t(b) * words]);
      loop.finish(args.inputs.data(), args.outputs.data(), params.data(), outer, total.data());
    }
  }
}

} // namespace

void run_on_cpu(const KernelIR& ir, const KernelArgs& args, int threads) {
  if (args.n <= 0) return;
  threads = ThreadPool::resolve_threads(threads);
  ThreadPool& pool = ThreadPool::instance();
  if (ir.schedule == codegen::Schedule::Scan) {
    const std::int64_t grain = std::max(ceil_chunks((args.n + 4 * threads - 1) / (4 * threads)), kMinParallelWork);
    pool.parallel_for(args.n, grain, threads, [&](std::int64_t b, std::int64_t e) { Interpreter(ir, args).run(b, e); });
    scan_in_place(ir, args, threads);
    return;
  }
  if (CompiledKernel fn = compiled_code(ir, args)) {
    std::vector<CompiledParam> params;
    compiled_params(ir, args, params);
    auto run_range = [&](std::int64_t b, std::int64_t e) {
      fn(args.inputs.data(), args.outputs.data(), params.data(), b, e);
    };
    if (ir.schedule == codegen::Schedule::Elementwise) {
      // The interpreter's split: whole columns, at least kMinParallelWork elements, about four ranges per thread.
      std::int64_t grain = std::max((args.n + 4 * threads - 1) / (4 * threads), kMinParallelWork);
      grain = (grain + kChunk - 1) / kChunk * kChunk;
      pool.parallel_for(args.n, grain, threads, run_range);
      return;
    }
    // Reductions: the outer elements split over the threads as the interpreter splits them, below.
    const std::int64_t reduced = Interpreter(ir, args).longest_loop();
    if (threads == 1 || args.n * std::max<std::int64_t>(reduced, 1) < kMinParallelWork) {
      run_range(0, args.n);
      return;
    }
    if (args.n >= 8 * std::int64_t(threads) || reduced < 2 * kBlockColumns * kChunk) {
      const std::int64_t per_thread = (args.n + 4 * threads - 1) / (4 * threads);
      const std::int64_t grain = std::max(per_thread, kMinParallelWork / std::max<std::int64_t>(reduced, 1));
      pool.parallel_for(args.n, grain, threads, run_range);
      return;
    }
    // The interpreter's split of the long loops, compiled where llvm_compiled_split handles the kernel.
    const CompiledSplit split = llvm_compiled_split(ir);
    if (!split.loops.empty()) {
      run_split(split, ir, args, params, threads);
      return;
    }
  }
  if (ir.schedule != codegen::Schedule::Elementwise) {
    Interpreter outer(ir, args);
    const std::int64_t reduced = outer.longest_loop();
    if (threads == 1 || args.n * std::max<std::int64_t>(reduced, 1) < kMinParallelWork) {
      outer.run_outer(0, args.n);
      return;
    }
    // Enough outer elements to keep every thread busy, or loops too short to split: each outer element runs on
    // one thread. Else the outer elements run here one by one, each loop split over the threads in blocks.
    if (args.n >= 8 * std::int64_t(threads) || reduced < 2 * kBlockColumns * kChunk) {
      const std::int64_t per_thread = (args.n + 4 * threads - 1) / (4 * threads);
      const std::int64_t grain = std::max(per_thread, kMinParallelWork / std::max<std::int64_t>(reduced, 1));
      pool.parallel_for(args.n, grain, threads,
                        [&](std::int64_t b, std::int64_t e) { Interpreter(ir, args).run_outer(b, e); });
      return;
    }
    outer.split_threads_ = threads;
    outer.run_outer(0, args.n);
    return;
  }
  // Chunks are whole columns, at least kMinParallelWork elements, about four per thread.
  const std::int64_t grain = std::max(ceil_chunks((args.n + 4 * threads - 1) / (4 * threads)), kMinParallelWork);
  pool.parallel_for(args.n, grain, threads, [&](std::int64_t b, std::int64_t e) { Interpreter(ir, args).run(b, e); });
}

} // namespace lazyfuse::runtime
