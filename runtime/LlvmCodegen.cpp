// The LLVM CPU code generator (runtime/LlvmCodegen.h): kernel IR lowered to LLVM IR, linked with the op library's
// bitcode, optimized at -O3 for the host CPU and compiled by ORC's LLJIT.
#include "runtime/LlvmCodegen.h"
#include "runtime/DiskCache.h"
#include "runtime/ReduceHostFunctions.h"
#include "runtime/ReduceTree.h"

#include "graph/Assert.h"
#include "graph/Config.h"
#include "graph/HostOps.h"
#include "graph/Ops.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SmallVectorMemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

// The op library's bitcode (runtime/LlvmOpLibrary.cc, embedded by cmake/EmbedBitcode.cmake).
extern const unsigned char lazyfuse_llvm_op_library[];
extern const std::size_t lazyfuse_llvm_op_library_size;

#ifndef LAZYFUSE_VERSION
#define LAZYFUSE_VERSION "dev"
#endif

namespace lazyfuse::runtime {

using codegen::Instr;
using codegen::IrOp;
using codegen::KernelIR;

namespace {

using Clock = std::chrono::steady_clock;

std::string ms(Clock::duration d) {
  return std::to_string(std::chrono::duration<double, std::milli>(d).count()) + " ms";
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- What the generator handles ----

bool unary_defined(graph::UnaryOp op, DType t) {
  switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  case graph::UnaryOp::Enum:                                                                                           \
    return graph::visit_opmath_type(t, [&]<class T>() {                                                                \
      return requires(T x) {                                                                                           \
        lazyfuse_opmath::lf_##name(x);                                                                                 \
      };                                                                                                               \
    });
#include <lazyfuse/ops.def>
  }
  return false;
}

bool binary_defined(graph::BinaryOp op, DType t) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  case graph::BinaryOp::Enum:                                                                                          \
    return graph::visit_opmath_type(t, [&]<class T>() {                                                                \
      return requires(T x) {                                                                                           \
        lazyfuse_opmath::lf_##name(x, x);                                                                              \
      };                                                                                                               \
    });
#include <lazyfuse/ops.def>
  }
  return false;
}

const char* unary_name(graph::UnaryOp op) {
  switch (op) {
#define LAZYFUSE_UNARY(Enum, name, rule, cost)                                                                         \
  case graph::UnaryOp::Enum: {                                                                                         \
    return #name;                                                                                                      \
  }
#include <lazyfuse/ops.def>
  }
  return nullptr;
}

const char* binary_name(graph::BinaryOp op) {
  switch (op) {
#define LAZYFUSE_BINARY(Enum, name, rule, cost)                                                                        \
  case graph::BinaryOp::Enum: {                                                                                        \
    return #name;                                                                                                      \
  }
#include <lazyfuse/ops.def>
  }
  return nullptr;
}

// Why the generator leaves `ir` to the interpreter, or "" when it lowers it. Every IrOp it does not know (including
// ones added after it) lands here through the switch's default: never a wrong answer.
std::string unsupported_reason(const KernelIR& ir) {
  const bool reduction = ir.schedule != codegen::Schedule::Elementwise;
  int open_loop = -1; // the loop being read (loops do not nest)
  for (const Instr& in : ir.code) {
    switch (in.op) {
    case IrOp::LinearIndex:
    case IrOp::LoadLinear:
      if (reduction) return "a linear index in a reduction kernel";
      break;
    case IrOp::Store:
      if (open_loop >= 0) return "a store inside a loop";
      break;
    case IrOp::OuterIndex:
    case IrOp::Result:
      if (!reduction) return "a reduction instruction in an elementwise kernel";
      break;
    case IrOp::LoopBegin:
      if (!reduction || open_loop >= 0) return "nested loops";
      open_loop = in.slot;
      break;
    case IrOp::LoopEnd:
      if (open_loop != in.slot) return "a loop end without its begin";
      open_loop = -1;
      break;
    case IrOp::Accumulate:
    case IrOp::StoreAt:
      if (open_loop < 0) return "a loop instruction outside a loop";
      break;
    case IrOp::IndexParam:
    case IrOp::IndexConst:
    case IrOp::IAdd:
    case IrOp::ISub:
    case IrOp::IMul:
    case IrOp::IDiv:
    case IrOp::IMod:
    case IrOp::Coord:
    case IrOp::ILt:
    case IrOp::IGe:
    case IrOp::IEq:
    case IrOp::PAnd:
    case IrOp::Load:
    case IrOp::ScalarParam:
    case IrOp::IndexToValue:
    case IrOp::Cast:
    case IrOp::Select: break;
    case IrOp::Unary:
      if (!unary_name(graph::UnaryOp(in.fn)) || !unary_defined(graph::UnaryOp(in.fn), ir.code[std::size_t(in.a)].dtype))
        return "an undefined unary op";
      break;
    case IrOp::Binary:
      if (!binary_name(graph::BinaryOp(in.fn)) ||
          !binary_defined(graph::BinaryOp(in.fn), ir.code[std::size_t(in.a)].dtype))
        return "an undefined binary op";
      break;
    default: return std::string("IrOp ") + codegen::ir_op_name(in.op);
    }
  }
  if (open_loop >= 0) return "a loop without its end";
  return "";
}

bool is_arg_reduction(graph::ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost)                                                           \
  case graph::ReduceOp::Enum: {                                                                                        \
    return std::string_view(#kind) == "Arg";                                                                           \
  }
#include <lazyfuse/ops.def>
  }
  return false;
}

const char* reduce_name(graph::ReduceOp op) {
  switch (op) {
#define LAZYFUSE_REDUCE(Enum, name, rule, kind, empty, cost)                                                           \
  case graph::ReduceOp::Enum: {                                                                                        \
    return #name;                                                                                                      \
  }
#include <lazyfuse/ops.def>
  }
  return "?";
}

// ---- Lowering ----

// The number of reduction loops of `ir`.
int loop_count(const KernelIR& ir) {
  return int(std::count_if(ir.code.begin(), ir.code.end(), [](const Instr& in) { return in.op == IrOp::LoopBegin; }));
}

// Why the compiled split (CompiledSplit) leaves `ir` to the interpreter's split, or "" when it handles it. Arg
// reductions keep the interpreter's: their state is a (value, index) pair, not a counter of levels.
std::string split_unsupported_reason(const KernelIR& ir) {
  if (ir.schedule == codegen::Schedule::Elementwise || loop_count(ir) == 0) return "no reduction loop";
  for (const Instr& in : ir.code)
    if (in.op == IrOp::Accumulate && is_arg_reduction(graph::ReduceOp(in.fn))) return "an arg reduction";
  return unsupported_reason(ir);
}

// Which function of a module Lowering builds: the CompiledKernel, or a step of the CompiledSplit of one loop.
enum class Part { Kernel, SplitBlock, SplitAbsorb, SplitFinish };

class Lowering {
public:
  Lowering(const KernelIR& ir, llvm::Module& module, const std::string& name, Part part = Part::Kernel, int loop = 0)
      : ir_(ir), module_(module), ctx_(module.getContext()), b_(ctx_), part_(part), loop_(loop),
        loops_(loop_count(ir)) {
    i1_ = llvm::Type::getInt1Ty(ctx_);
    i8_ = llvm::Type::getInt8Ty(ctx_);
    i64_ = llvm::Type::getInt64Ty(ctx_);
    ptr_ = llvm::PointerType::get(ctx_, 0);
    std::vector<llvm::Type*> params;
    switch (part) {
    case Part::Kernel: params = {ptr_, ptr_, ptr_, i64_, i64_}; break;
    case Part::SplitBlock: params = {ptr_, ptr_, ptr_, i64_, i64_, i64_, ptr_, ptr_}; break;
    case Part::SplitAbsorb: params = {ptr_, ptr_}; break;
    case Part::SplitFinish: params = {ptr_, ptr_, ptr_, i64_, ptr_}; break;
    }
    auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
    if (part != Part::Kernel) lay_out_state();
  }

  llvm::Function* function() const { return fn_; }
  // Bytes of one state of the split (CompiledSplit::state_bytes).
  std::size_t state_bytes() const { return state_bytes_; }

  void lower() {
    if (part_ == Part::SplitAbsorb) {
      lower_absorb();
      return;
    }
    llvm::Argument* args = fn_->arg_begin();
    llvm::Value *inputs = args + 0, *outputs = args + 1, *params = args + 2, *begin = args + 3, *end = nullptr;
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    auto* preheader = llvm::BasicBlock::Create(ctx_, "preheader", fn_);
    auto* loop = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.SetInsertPoint(entry);
    entry_ = entry;
    preheader_ = preheader;
    if (part_ == Part::Kernel) {
      end = args + 4;
    } else {
      // A step of the split runs one outer element.
      end = b_.CreateAdd(begin, b_.getInt64(1));
      if (part_ == Part::SplitBlock) {
        first_column_ = args + 4;
        last_column_ = args + 5;
        state_ = args + 6;
        total_ = args + 7;
      } else {
        total_ = args + 4;
      }
    }
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), preheader, exit);

    const std::size_t n = ir_.code.size();
    values_.assign(n, nullptr);
    invariant_.assign(n, false);
    for (std::size_t id = 0; id < n; ++id) invariant_[id] = is_invariant(id);

    // Everything that does not depend on the element: parameters, buffer addresses, Coord's divisors, and the values
    // computed from them only (evaluated once per range, as the CUDA printer hoists them).
    b_.SetInsertPoint(preheader);
    input_ptrs_.resize(ir_.inputs.size());
    for (std::size_t s = 0; s < ir_.inputs.size(); ++s)
      input_ptrs_[s] = b_.CreateLoad(ptr_, b_.CreateConstGEP1_64(ptr_, inputs, s));
    output_ptrs_.resize(ir_.outputs.size());
    for (std::size_t s = 0; s < ir_.outputs.size(); ++s)
      output_ptrs_[s] = b_.CreateLoad(ptr_, b_.CreateConstGEP1_64(ptr_, outputs, s));
    params_ = params;
    for (std::size_t id = 0; id < n; ++id)
      if (invariant_[id]) values_[id] = emit(id, nullptr);
    b_.CreateBr(loop);

    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, "i");
    i->addIncoming(begin, preheader);
    if (ir_.schedule == codegen::Schedule::Elementwise) {
      start_odometers(begin, i);
      for (std::size_t id = 0; id < n; ++id)
        if (!invariant_[id]) values_[id] = emit(id, i);
      step_odometers();
    } else {
      // i is the outer index; the instructions run in order, a loop at a time. A step of the split of loop loop_
      // reads the results of the loops before it from the total state, and stores nothing but in the last finish.
      const bool stores = part_ == Part::Kernel || (part_ == Part::SplitFinish && loop_ + 1 == loops_);
      int loop_number = 0;
      for (std::size_t id = 0; id < n; ++id) {
        if (invariant_[id]) continue;
        const Instr& in = ir_.code[id];
        if (in.op == IrOp::LoopBegin) {
          if (part_ == Part::Kernel) {
            id = lower_loop(id);
            continue;
          }
          const int k = loop_number++;
          if (k < loop_) {
            id = results_in_total(id, false);
            continue;
          }
          if (part_ == Part::SplitBlock) {
            lower_loop(id);
            break;
          }
          id = results_in_total(id, true);
          if (!stores) break;
        } else if (in.op == IrOp::OuterIndex) {
          values_[id] = i;
        } else if (in.op != IrOp::Store || stores) {
          values_[id] = emit(id, i);
        }
      }
    }
    llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, exit);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
  }

private:
  // The coordinates of the element index i in each unravelled shape whose Coord instructions read i, as loop
  // variables: unravelled from `begin` once (in the preheader), then stepped like an odometer each iteration (the last
  // coordinate + 1, carried where it reaches its dimension), so the loop divides nothing to find them.
  struct Odometer {
    std::vector<llvm::Value*> dims;
    std::vector<llvm::PHINode*> coords;
  };
  void start_odometers(llvm::Value* begin, llvm::PHINode* i) {
    const auto& code = ir_.code;
    odometers_.assign(ir_.unravels.size(), {});
    for (std::size_t id = 0; id < code.size(); ++id) {
      const Instr& in = code[id];
      if (in.op != IrOp::Coord || code[std::size_t(in.a)].op != IrOp::LinearIndex) continue;
      Odometer& o = odometers_[std::size_t(in.slot)];
      if (!o.coords.empty()) continue;
      const auto& dims = ir_.unravels[std::size_t(in.slot)];
      if (!std::all_of(dims.begin(), dims.end(), [&](int d) { return bool(invariant_[std::size_t(d)]); })) continue;
      llvm::IRBuilder<> pre(ctx_);
      set_to_preheader(pre);
      llvm::Value* rest = begin;
      std::vector<llvm::Value*> first(dims.size());
      for (std::size_t k = dims.size(); k-- > 0;) {
        o.dims.insert(o.dims.begin(), values_[std::size_t(dims[k])]);
        if (k == 0) {
          first[k] = rest;
          break;
        }
        // begin's coordinates: 0 <= begin < the shape's size, and every dimension is at least 1 when there are
        // elements.
        llvm::Value* d =
            pre.CreateSelect(pre.CreateICmpEQ(o.dims.front(), pre.getInt64(0)), pre.getInt64(1), o.dims.front());
        first[k] = pre.CreateSRem(rest, d);
        rest = pre.CreateSDiv(rest, d);
      }
      for (std::size_t k = 0; k < dims.size(); ++k) {
        llvm::PHINode* c = b_.CreatePHI(i64_, 2, "coord");
        c->addIncoming(first[k], i->getIncomingBlock(0));
        o.coords.push_back(c);
      }
    }
  }
  // The odometers' coordinates for i + 1, at the end of the loop body.
  void step_odometers() {
    for (Odometer& o : odometers_) {
      if (o.coords.empty()) continue;
      llvm::Value* carry = b_.getTrue();
      for (std::size_t k = o.coords.size(); k-- > 0;) {
        llvm::Value* next = b_.CreateAdd(o.coords[k], b_.CreateZExt(carry, i64_));
        if (k > 0) {
          carry = b_.CreateICmpEQ(next, o.dims[k]);
          next = b_.CreateSelect(carry, b_.getInt64(0), next);
        }
        o.coords[k]->addIncoming(next, b_.GetInsertBlock());
      }
    }
  }

  // One Accumulate of a loop: its column of values (and indices) and its state, in stack slots (a split's block: in
  // the block's state).
  struct Acc {
    std::size_t id;
    bool arg;
    llvm::Type* type;
    llvm::AllocaInst *column, *index, *best, *best_index;
    llvm::Value *levels, *used;
    std::string suffix; // "<op>_<type>"
  };

  // "<op>_<type>" of Accumulate `id`.
  std::string suffix_of(std::size_t id) const {
    const Instr& in = ir_.code[id];
    return std::string(reduce_name(graph::ReduceOp(in.fn))) + "_" + std::string(dtype_name(in.dtype));
  }

  // The split's state: each Accumulate's counter (levels[64] of its type, then used[64]) and each loop result (16
  // bytes), at offsets aligned to 32 as entry_alloca's slots (the host's lf_c128 is alignas(16)). A block's state and
  // the total have the same layout; a block uses its loop's counters only.
  void lay_out_state() {
    std::size_t offset = 0;
    auto take = [&](std::size_t bytes) {
      offset = (offset + 31) / 32 * 32;
      const std::size_t at = offset;
      offset += bytes;
      return at;
    };
    const llvm::DataLayout& layout = module_.getDataLayout();
    std::size_t slots = 0;
    for (std::size_t id = 0; id < ir_.code.size(); ++id) {
      const Instr& in = ir_.code[id];
      if (in.op != IrOp::Accumulate) continue;
      level_bytes_[id] = layout.getTypeAllocSize(value_type(in.dtype));
      counter_at_[id] = take(64 * level_bytes_[id] + 64);
      slots = std::max(slots, std::size_t(in.slot) + 1);
    }
    for (std::size_t slot = 0; slot < slots; ++slot) result_at_.push_back(take(16));
    state_bytes_ = (offset + 63) / 64 * 64;
  }
  llvm::Value* at(llvm::Value* state, std::size_t offset) { return b_.CreateConstGEP1_64(i8_, state, offset); }
  llvm::Value* levels_in(llvm::Value* state, std::size_t id) { return at(state, counter_at_.at(id)); }
  llvm::Value* used_in(llvm::Value* state, std::size_t id) {
    return at(state, counter_at_.at(id) + 64 * level_bytes_.at(id));
  }

  // The loop at `begin`'s results as the split keeps them, in the total state: finished there first with `finish`.
  // Returns the position of its LoopEnd.
  std::size_t results_in_total(std::size_t begin, bool finish) {
    const auto& code = ir_.code;
    std::size_t end = begin + 1;
    while (!(code[end].op == IrOp::LoopEnd && code[end].slot == code[begin].slot)) ++end;
    for (std::size_t k = begin + 1; k < end; ++k) {
      if (code[k].op != IrOp::Accumulate) continue;
      const auto slot = std::size_t(code[k].slot);
      if (results_.size() <= slot) results_.resize(slot + 1, nullptr);
      results_[slot] = at(total_, result_at_.at(slot));
      if (finish)
        void_call("lfhost_reduce_finish_" + suffix_of(k), {levels_in(total_, k), used_in(total_, k), results_[slot]});
    }
    return end;
  }

  // The split's absorb of loop loop_: each counter of the block (argument 1) carried into the total's (argument 0).
  void lower_absorb() {
    llvm::Argument* args = fn_->arg_begin();
    llvm::Value *total = args + 0, *block = args + 1;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    int loop_number = -1;
    for (std::size_t id = 0; id < ir_.code.size(); ++id) {
      const Instr& in = ir_.code[id];
      if (in.op == IrOp::LoopBegin) ++loop_number;
      if (in.op != IrOp::Accumulate || loop_number != loop_) continue;
      void_call("lfhost_reduce_absorb_" + suffix_of(id),
                {levels_in(total, id), used_in(total, id), levels_in(block, id), used_in(block, id)});
    }
    b_.CreateRetVoid();
  }

  // Lowers the loop starting at `begin` (in the interpreter's order: columns of kReduceColumn elements, each folded by
  // the host's tree functions, runtime/ReduceTree.h); returns the position of its LoopEnd.
  std::size_t lower_loop(std::size_t begin) {
    const auto& code = ir_.code;
    const Instr& head = code[begin];
    std::size_t end = begin + 1;
    while (!(code[end].op == IrOp::LoopEnd && code[end].slot == head.slot)) ++end;
    llvm::Type* i32 = b_.getInt32Ty();
    std::vector<Acc> accs;
    for (std::size_t k = begin + 1; k < end; ++k) {
      const Instr& in = code[k];
      if (in.op != IrOp::Accumulate) continue;
      Acc a{};
      a.id = k;
      a.arg = is_arg_reduction(graph::ReduceOp(in.fn));
      a.type = value_type(in.dtype);
      a.suffix = suffix_of(k);
      a.column = entry_alloca(llvm::ArrayType::get(a.type, kReduceColumn));
      if (part_ == Part::SplitBlock) {
        // A block's counter: in its state, zeroed by the caller.
        LAZYFUSE_ASSERT(!a.arg, "an arg reduction in the compiled split");
        a.levels = levels_in(state_, k);
        a.used = used_in(state_, k);
      } else if (a.arg) {
        a.index = entry_alloca(llvm::ArrayType::get(i64_, kReduceColumn));
        a.best = entry_alloca(a.type);
        a.best_index = entry_alloca(i64_);
        void_call("lfhost_arg_init_" + a.suffix, {a.best, a.best_index});
      } else {
        a.levels = entry_alloca(llvm::ArrayType::get(a.type, 64));
        a.used = entry_alloca(llvm::ArrayType::get(i8_, 64));
        b_.CreateMemSet(a.used, b_.getInt8(0), 64, llvm::MaybeAlign(1));
      }
      accs.push_back(a);
    }
    llvm::Value* n = values_[std::size_t(head.a)];
    // The elements [first, limit) this function folds: all, or a split's block of whole columns.
    llvm::Value *first = b_.getInt64(0), *limit = n;
    if (part_ == Part::SplitBlock) {
      first = b_.CreateMul(first_column_, b_.getInt64(kReduceColumn));
      llvm::Value* block_end = b_.CreateMul(last_column_, b_.getInt64(kReduceColumn));
      limit = b_.CreateSelect(b_.CreateICmpSLT(block_end, n), block_end, n);
    }
    auto* columns = llvm::BasicBlock::Create(ctx_, "columns", fn_);
    auto* elements = llvm::BasicBlock::Create(ctx_, "elements", fn_);
    auto* fold = llvm::BasicBlock::Create(ctx_, "fold", fn_);
    auto* done = llvm::BasicBlock::Create(ctx_, "loop_done", fn_);
    llvm::BasicBlock* before = b_.GetInsertBlock();
    b_.CreateCondBr(b_.CreateICmpSLT(first, limit), columns, done);

    b_.SetInsertPoint(columns);
    llvm::PHINode* c0 = b_.CreatePHI(i64_, 2, "c0");
    c0->addIncoming(first, before);
    llvm::Value* left = b_.CreateSub(n, c0);
    llvm::Value* len =
        b_.CreateSelect(b_.CreateICmpSLT(left, b_.getInt64(kReduceColumn)), left, b_.getInt64(kReduceColumn));
    b_.CreateBr(elements);

    b_.SetInsertPoint(elements);
    llvm::PHINode* e = b_.CreatePHI(i64_, 2, "e");
    e->addIncoming(b_.getInt64(0), columns);
    values_[begin] = b_.CreateAdd(c0, e); // the reduced index r
    for (std::size_t k = begin + 1; k < end; ++k) {
      if (invariant_[k]) continue;
      const Instr& in = code[k];
      if (in.op == IrOp::Accumulate) {
        const Acc& a = *std::find_if(accs.begin(), accs.end(), [&](const Acc& x) { return x.id == k; });
        b_.CreateStore(as_value(in.a), b_.CreateGEP(a.type, a.column, e));
        if (a.arg) b_.CreateStore(value(in.b), b_.CreateGEP(i64_, a.index, e));
      } else if (in.op == IrOp::StoreAt) {
        llvm::Type* t = value_type(in.dtype);
        b_.CreateAlignedStore(as_value(in.b), b_.CreateGEP(t, output_ptrs_[std::size_t(in.slot)], value(in.a)),
                              align_of(in.dtype));
      } else {
        values_[k] = emit(k, nullptr);
      }
    }
    llvm::Value* e_next = b_.CreateAdd(e, b_.getInt64(1));
    e->addIncoming(e_next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(e_next, len), elements, fold);

    b_.SetInsertPoint(fold);
    llvm::Value* len32 = b_.CreateTrunc(len, i32);
    for (const Acc& a : accs) {
      if (a.arg)
        void_call("lfhost_arg_fold_" + a.suffix, {a.column, a.index, len32, a.best, a.best_index});
      else
        void_call("lfhost_reduce_fold_" + a.suffix, {a.column, len32, a.levels, a.used});
    }
    llvm::Value* c_next = b_.CreateAdd(c0, b_.getInt64(kReduceColumn));
    c0->addIncoming(c_next, fold);
    b_.CreateCondBr(b_.CreateICmpSLT(c_next, limit), columns, done);

    b_.SetInsertPoint(done);
    if (part_ == Part::SplitBlock) return end; // the block's counters are its result
    for (const Acc& a : accs) {
      const auto slot = std::size_t(code[a.id].slot);
      if (results_.size() <= slot) results_.resize(slot + 1, nullptr);
      if (a.arg) {
        // The index of the best element; 0 when there was none (an empty reduction).
        results_[slot] = entry_alloca(i64_);
        llvm::Value* bi = b_.CreateLoad(i64_, a.best_index);
        b_.CreateStore(b_.CreateSelect(b_.CreateICmpEQ(bi, b_.getInt64(INT64_MAX)), b_.getInt64(0), bi),
                       results_[slot]);
      } else {
        results_[slot] = entry_alloca(a.type);
        void_call("lfhost_reduce_finish_" + a.suffix, {a.levels, a.used, results_[slot]});
      }
    }
    return end;
  }

  void void_call(const std::string& name, const std::vector<llvm::Value*>& args) {
    std::vector<llvm::Type*> types;
    for (llvm::Value* v : args) types.push_back(v->getType());
    b_.CreateCall(module_.getOrInsertFunction(name, llvm::FunctionType::get(b_.getVoidTy(), types, false)), args);
  }

  bool is_invariant(std::size_t id) const {
    const Instr& in = ir_.code[id];
    switch (in.op) {
    case IrOp::IndexParam:
    case IrOp::IndexConst:
    case IrOp::ScalarParam: return true;
    case IrOp::LinearIndex:
    case IrOp::Load:
    case IrOp::LoadLinear:
    case IrOp::Store:
    case IrOp::OuterIndex:
    case IrOp::LoopBegin:
    case IrOp::LoopEnd:
    case IrOp::Accumulate:
    case IrOp::Result:
    case IrOp::StoreAt: return false;
    default: break;
    }
    for (int operand : {in.a, in.b, in.c})
      if (operand >= 0 && !invariant_[std::size_t(operand)]) return false;
    return true;
  }

  // The LLVM type of a value of `t` (its op-math type's layout; bool as a byte, the half types as their bits).
  llvm::Type* value_type(DType t) {
    switch (t) {
    case DType::Bool:
    case DType::Int8:
    case DType::UInt8: return i8_;
    case DType::Int16:
    case DType::UInt16:
    case DType::Float16:
    case DType::BFloat16: return llvm::Type::getInt16Ty(ctx_);
    case DType::Int32:
    case DType::UInt32: return llvm::Type::getInt32Ty(ctx_);
    case DType::Int64:
    case DType::UInt64: return i64_;
    case DType::Float32: return llvm::Type::getFloatTy(ctx_);
    case DType::Float64: return llvm::Type::getDoubleTy(ctx_);
    case DType::Complex64: {
      llvm::Type* f = llvm::Type::getFloatTy(ctx_);
      return llvm::StructType::get(ctx_, {f, f});
    }
    case DType::Complex128: {
      llvm::Type* d = llvm::Type::getDoubleTy(ctx_);
      return llvm::StructType::get(ctx_, {d, d});
    }
    }
    LAZYFUSE_ASSERT(false, "value_type: not a DType of the type table");
    return nullptr;
  }
  static llvm::Align align_of(DType t) { return llvm::Align(is_complex(t) ? itemsize(t) / 2 : itemsize(t)); }

  DType type_of(int id) const { return ir_.code[std::size_t(id)].dtype; }
  bool is_predicate(int id) const { return codegen::is_predicate_op(ir_.code[std::size_t(id)].op); }
  llvm::Value* value(int id) const { return values_[std::size_t(id)]; }

  // A bool operand as an i1: predicates are i1 already; bool values are bytes.
  llvm::Value* condition(int id) {
    llvm::Value* v = value(id);
    return v->getType() == i1_ ? v : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  // An operand as a value of its dtype's layout: a predicate read as a bool value becomes a byte.
  llvm::Value* as_value(int id) {
    llvm::Value* v = value(id);
    return v->getType() == i1_ ? b_.CreateZExt(v, i8_) : v;
  }

  // A call of the op library's `name` on values `operands`, its result of type `result`: through stack slots, the
  // library's uniform signature; after inlining, SROA leaves plain values.
  llvm::Value* call(const std::string& name, const std::vector<llvm::Value*>& operands, llvm::Type* result) {
    std::vector<llvm::Type*> params(operands.size() + 1, ptr_);
    llvm::FunctionCallee callee =
        module_.getOrInsertFunction(name, llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), params, false));
    std::vector<llvm::Value*> args;
    for (llvm::Value* operand : operands) {
      llvm::AllocaInst* slot = entry_alloca(operand->getType());
      b_.CreateStore(operand, slot);
      args.push_back(slot);
    }
    llvm::AllocaInst* out = entry_alloca(result);
    args.push_back(out);
    b_.CreateCall(callee, args);
    return b_.CreateLoad(result, out);
  }
  llvm::AllocaInst* entry_alloca(llvm::Type* t) {
    llvm::IRBuilder<> at(entry_, entry_->getFirstInsertionPt());
    llvm::AllocaInst* slot = at.CreateAlloca(t);
    // The host's types may be aligned beyond their LLVM layout (lf_c128 is alignas(16)): the host functions that
    // read these slots assume it.
    if (slot->getAlign() < llvm::Align(32)) slot->setAlignment(llvm::Align(32));
    return slot;
  }

  llvm::Value* param_record(int slot_instr, llvm::Type* t) {
    llvm::Value* address =
        b_.CreateConstGEP1_64(llvm::ArrayType::get(i8_, sizeof(CompiledParam)), params_, std::uint64_t(slot_instr));
    return b_.CreateAlignedLoad(t, address, llvm::Align(t == i64_ ? 8 : 1));
  }
  llvm::Value* index_param(int instr) { return param_record(instr, i64_); }

  llvm::Value* guarded_div(llvm::Value* a, llvm::Value* b, bool remainder) {
    // b ? a / b : 0 (and %), as the interpreter: the divisor replaced by 1 where it is 0, so nothing traps.
    llvm::Value* zero = b_.getInt64(0);
    llvm::Value* is_zero = b_.CreateICmpEQ(b, zero);
    llvm::Value* safe = b_.CreateSelect(is_zero, b_.getInt64(1), b);
    llvm::Value* q = remainder ? b_.CreateSRem(a, safe) : b_.CreateSDiv(a, safe);
    return b_.CreateSelect(is_zero, zero, q);
  }

  // Points `pre` into the preheader (before its branch, once it has one): for what does not depend on the element.
  void set_to_preheader(llvm::IRBuilder<>& pre) const {
    if (b_.GetInsertBlock() == preheader_)
      pre.SetInsertPoint(preheader_);
    else
      pre.SetInsertPoint(preheader_->getTerminator());
  }

  // A divisor's multiply-shift constants (Granlund and Montgomery 1994, as codegen::fast_divisor64 computes them for
  // the CUDA kernels): for d = |divisor| (1 where it is 0), shift = ceil(log2 d), mul = floor(2^64 (2^shift - d) / d)
  // + 1; then n / d = (mulhi(n, mul) + n) >> shift for every n < 2^63.
  struct Divisor {
    llvm::Value *divisor, *is_zero, *negative, *mul, *shift;
  };
  // Computed once, in the preheader (the divisor does not depend on the element).
  const Divisor& divisor_constants(llvm::Value* divisor) {
    auto found = divisors_.find(divisor);
    if (found != divisors_.end()) return found->second;
    llvm::IRBuilder<> pre(ctx_);
    set_to_preheader(pre);
    llvm::Type* i128 = llvm::Type::getInt128Ty(ctx_);
    Divisor c{};
    c.divisor = divisor;
    c.is_zero = pre.CreateICmpEQ(divisor, pre.getInt64(0));
    c.negative = pre.CreateICmpSLT(divisor, pre.getInt64(0));
    llvm::Value* magnitude = pre.CreateSelect(c.negative, pre.CreateNeg(divisor), divisor);
    llvm::Value* d = pre.CreateSelect(c.is_zero, pre.getInt64(1), magnitude);
    llvm::Value* leading = pre.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, pre.CreateSub(d, pre.getInt64(1)),
                                                     pre.getFalse()); // 64 for d = 1
    c.shift = pre.CreateSub(pre.getInt64(64), leading);
    llvm::Value* d128 = pre.CreateZExt(d, i128);
    llvm::Value* excess = pre.CreateSub(pre.CreateShl(llvm::ConstantInt::get(i128, 1), pre.CreateZExt(c.shift, i128)),
                                        d128); // 2^shift - d < d <= 2^63
    llvm::Value* quotient = pre.CreateUDiv(pre.CreateShl(excess, llvm::ConstantInt::get(i128, 64)), d128);
    c.mul = pre.CreateAdd(pre.CreateTrunc(quotient, i64_), pre.getInt64(1));
    return divisors_.emplace(divisor, c).first->second;
  }

  // b ? a / b : 0 (and %), truncating as the interpreter's, for a divisor b computed before the loop: by
  // multiply-shift on |a|, its sign put back. A 64-bit division is some 15-40 cycles on x86-64 against 4 here, and
  // unravelling a view's index and rolling an axis divide every element.
  llvm::Value* invariant_div(llvm::Value* a, llvm::Value* b, bool remainder) {
    const Divisor& c = divisor_constants(b);
    llvm::Type* i128 = llvm::Type::getInt128Ty(ctx_);
    llvm::Value* a_negative = b_.CreateICmpSLT(a, b_.getInt64(0));
    llvm::Value* n = b_.CreateSelect(a_negative, b_.CreateNeg(a), a);
    llvm::Value* high = b_.CreateTrunc(b_.CreateLShr(b_.CreateMul(b_.CreateZExt(n, i128), b_.CreateZExt(c.mul, i128)),
                                                     llvm::ConstantInt::get(i128, 64)),
                                       i64_);
    llvm::Value* q = b_.CreateLShr(b_.CreateAdd(high, n), c.shift);
    q = b_.CreateSelect(b_.CreateXor(a_negative, c.negative), b_.CreateNeg(q), q);
    llvm::Value* result = remainder ? b_.CreateSub(a, b_.CreateMul(q, c.divisor)) : q;
    return b_.CreateSelect(c.is_zero, b_.getInt64(0), result);
  }

  // a / b or a % b: by the divisor's constants where b is computed before the loop and a is not.
  llvm::Value* divide(int a, int b, bool remainder) {
    if (!invariant_[std::size_t(b)] || invariant_[std::size_t(a)]) return guarded_div(value(a), value(b), remainder);
    if (!remainder) return invariant_div(value(a), value(b), false);
    return wrapped_remainder(value(a), value(b));
  }

  // a % b where b > 0 and 0 <= a < 2b is one conditional subtraction: a rolled coordinate, IMod's use (codegen/
  // Lower.cpp), is always such an a. Any other a takes a branch to the general remainder, which is never taken
  // there.
  llvm::Value* wrapped_remainder(llvm::Value* a, llvm::Value* b) {
    llvm::Value* twice = wrap_limits_[b];
    if (!twice) {
      llvm::IRBuilder<> pre(ctx_);
      set_to_preheader(pre);
      // 2b for 0 < b < 2^62, else 0: no a is then in range.
      llvm::Value* usable = pre.CreateAnd(pre.CreateICmpSGT(b, pre.getInt64(0)),
                                          pre.CreateICmpSLT(b, pre.getInt64(std::int64_t(1) << 62)));
      twice = wrap_limits_[b] = pre.CreateSelect(usable, pre.CreateShl(b, 1), pre.getInt64(0));
    }
    llvm::BasicBlock* from = b_.GetInsertBlock();
    auto* general = llvm::BasicBlock::Create(ctx_, "remainder", fn_);
    auto* merge = llvm::BasicBlock::Create(ctx_, "remainder_done", fn_);
    llvm::Value* wrapped = b_.CreateSelect(b_.CreateICmpSGE(a, b), b_.CreateSub(a, b), a);
    b_.CreateCondBr(b_.CreateICmpULT(a, twice), merge, general, llvm::MDBuilder(ctx_).createBranchWeights(1000, 1));
    b_.SetInsertPoint(general);
    llvm::Value* r = invariant_div(a, b, true);
    llvm::BasicBlock* general_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    llvm::PHINode* phi = b_.CreatePHI(i64_, 2);
    phi->addIncoming(wrapped, from);
    phi->addIncoming(r, general_end);
    return phi;
  }

  llvm::Value* emit(std::size_t id, llvm::Value* i) {
    const Instr& in = ir_.code[id];
    switch (in.op) {
    case IrOp::LinearIndex: return i;
    case IrOp::IndexParam: return index_param(int(id));
    case IrOp::IndexConst: return b_.getInt64(std::uint64_t(in.imm));
    case IrOp::IAdd: return b_.CreateAdd(value(in.a), value(in.b));
    case IrOp::ISub: return b_.CreateSub(value(in.a), value(in.b));
    case IrOp::IMul: return b_.CreateMul(value(in.a), value(in.b));
    case IrOp::IDiv: return divide(in.a, in.b, false);
    case IrOp::IMod: return divide(in.a, in.b, true);
    case IrOp::Coord: {
      // Coordinate k: divide by the dimensions after it, then reduce modulo its own (not for the first).
      const auto& dims = ir_.unravels[std::size_t(in.slot)];
      llvm::Value* after = b_.getInt64(1);
      {
        // The divisors do not depend on the element: computed in the preheader.
        llvm::IRBuilder<> pre(ctx_);
        set_to_preheader(pre);
        for (std::size_t d = dims.size(); d-- > std::size_t(in.imm) + 1;)
          after = pre.CreateMul(after, values_[std::size_t(dims[d])]);
      }
      if (!odometers_.empty() && !odometers_[std::size_t(in.slot)].coords.empty() &&
          ir_.code[std::size_t(in.a)].op == IrOp::LinearIndex)
        return odometers_[std::size_t(in.slot)].coords[std::size_t(in.imm)];
      if (invariant_[std::size_t(in.a)]) {
        llvm::Value* t = guarded_div(value(in.a), after, false);
        if (in.imm == 0) return t;
        return guarded_div(t, values_[std::size_t(dims[std::size_t(in.imm)])], true);
      }
      llvm::Value* t = invariant_div(value(in.a), after, false);
      if (in.imm == 0) return t;
      return invariant_div(t, values_[std::size_t(dims[std::size_t(in.imm)])], true);
    }
    case IrOp::ILt: return b_.CreateICmpSLT(value(in.a), value(in.b));
    case IrOp::IGe: return b_.CreateICmpSGE(value(in.a), value(in.b));
    case IrOp::IEq: return b_.CreateICmpEQ(value(in.a), value(in.b));
    case IrOp::PAnd: return b_.CreateAnd(condition(in.a), condition(in.b));
    case IrOp::Load: {
      llvm::Type* t = value_type(in.dtype);
      llvm::Value* base = input_ptrs_[std::size_t(in.slot)];
      if (in.b < 0) return b_.CreateAlignedLoad(t, b_.CreateGEP(t, base, value(in.a)), align_of(in.dtype));
      // Only where the predicate holds (else 0): the address may be out of bounds elsewhere.
      llvm::Value* pred = condition(in.b);
      llvm::BasicBlock* from = b_.GetInsertBlock();
      auto* then = llvm::BasicBlock::Create(ctx_, "load", fn_);
      auto* merge = llvm::BasicBlock::Create(ctx_, "loaded", fn_);
      b_.CreateCondBr(pred, then, merge);
      b_.SetInsertPoint(then);
      llvm::Value* loaded = b_.CreateAlignedLoad(t, b_.CreateGEP(t, base, value(in.a)), align_of(in.dtype));
      b_.CreateBr(merge);
      b_.SetInsertPoint(merge);
      llvm::PHINode* phi = b_.CreatePHI(t, 2);
      phi->addIncoming(loaded, then);
      phi->addIncoming(llvm::Constant::getNullValue(t), from);
      return phi;
    }
    case IrOp::LoadLinear: {
      llvm::Type* t = value_type(in.dtype);
      return b_.CreateAlignedLoad(t, b_.CreateGEP(t, input_ptrs_[std::size_t(in.slot)], i), align_of(in.dtype));
    }
    case IrOp::ScalarParam: return param_record(int(id), value_type(in.dtype));
    case IrOp::IndexToValue:
      return call(std::string("lfjit_cast_") + std::string(dtype_name(in.dtype)) + "_int64", {value(in.a)},
                  value_type(in.dtype));
    case IrOp::Unary:
      return call(std::string("lfjit_unary_") + unary_name(graph::UnaryOp(in.fn)) + "_" +
                      std::string(dtype_name(type_of(in.a))),
                  {as_value(in.a)}, value_type(in.dtype));
    case IrOp::Binary:
      return call(std::string("lfjit_binary_") + binary_name(graph::BinaryOp(in.fn)) + "_" +
                      std::string(dtype_name(type_of(in.a))),
                  {as_value(in.a), as_value(in.b)}, value_type(in.dtype));
    case IrOp::Cast:
      return call(std::string("lfjit_cast_") + std::string(dtype_name(in.dtype)) + "_" +
                      std::string(dtype_name(type_of(in.a))),
                  {as_value(in.a)}, value_type(in.dtype));
    case IrOp::Select: return b_.CreateSelect(condition(in.a), as_value(in.b), as_value(in.c));
    case IrOp::Result: return b_.CreateLoad(value_type(in.dtype), results_[std::size_t(in.slot)]);
    case IrOp::Store: {
      llvm::Type* t = value_type(in.dtype);
      b_.CreateAlignedStore(as_value(in.a), b_.CreateGEP(t, output_ptrs_[std::size_t(in.slot)], i), align_of(in.dtype));
      return nullptr;
    }
    default: break;
    }
    LAZYFUSE_ASSERT(false, "LLVM lowering of an IrOp unsupported_reason accepted");
    return nullptr;
  }

  const KernelIR& ir_;
  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock *entry_ = nullptr, *preheader_ = nullptr;
  llvm::Type *i1_ = nullptr, *i8_ = nullptr, *i64_ = nullptr, *ptr_ = nullptr;
  llvm::Value* params_ = nullptr;
  std::vector<llvm::Value*> values_, input_ptrs_, output_ptrs_;
  std::vector<bool> invariant_;
  // Looked up, never iterated: the output stays deterministic.
  std::unordered_map<llvm::Value*, Divisor> divisors_;
  std::unordered_map<llvm::Value*, llvm::Value*> wrap_limits_;
  std::vector<Odometer> odometers_;   // by unravel group; elementwise kernels
  std::vector<llvm::Value*> results_; // reduction kernels: each accumulator's result, by slot
  // The split (Part other than Kernel): the step, its loop, and the state's layout.
  const Part part_;
  const int loop_, loops_;
  llvm::Value *first_column_ = nullptr, *last_column_ = nullptr, *state_ = nullptr, *total_ = nullptr;
  std::unordered_map<std::size_t, std::size_t> counter_at_, level_bytes_; // by Accumulate
  std::vector<std::size_t> result_at_;                                    // by result slot
  std::size_t state_bytes_ = 0;
};

// ---- The JIT ----

std::string to_string(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << error;
  return os.str();
}

class Jit {
public:
  // Null with `error` set when the host target cannot be set up.
  static Jit* instance(std::string& error) {
    static std::once_flag once;
    static std::unique_ptr<Jit> jit;
    static std::string setup_error;
    std::call_once(once, [] {
      const auto t0 = Clock::now();
      jit = std::unique_ptr<Jit>(new Jit());
      setup_error = jit->setup();
      if (!setup_error.empty()) jit.reset();
      setup_seconds().store(seconds_since(t0));
    });
    error = setup_error;
    return jit.get();
  }
  static std::atomic<double>& setup_seconds() {
    static std::atomic<double> s{0};
    return s;
  }

  const std::string& cpu() const { return cpu_; }
  // Whether the last compile loaded its object code from the disk cache instead of compiling (compiles are
  // serialized by the cache's mutex).
  bool last_loaded_from_disk() const { return last_from_disk_; }

  // Compiles `ir` as function `name`; throws std::runtime_error with LLVM's message on failure.
  CompiledKernel compile(const KernelIR& ir, const std::string& name) {
    std::size_t state_bytes = 0;
    return reinterpret_cast<CompiledKernel>(compile_parts(ir, name, {{Part::Kernel, 0, name}}, state_bytes)[0]);
  }

  // Compiles the split of `ir`'s loops (CompiledSplit), its functions named after `name`, in one module.
  CompiledSplit compile_split(const KernelIR& ir, const std::string& name) {
    std::vector<PartSpec> parts;
    for (int loop = 0; loop < loop_count(ir); ++loop) {
      const std::string at = name + "_split" + std::to_string(loop);
      parts.push_back({Part::SplitBlock, loop, at + "_block"});
      parts.push_back({Part::SplitAbsorb, loop, at + "_absorb"});
      parts.push_back({Part::SplitFinish, loop, at + "_finish"});
    }
    CompiledSplit split;
    const std::vector<void*> fns = compile_parts(ir, name, parts, split.state_bytes);
    for (std::size_t p = 0; p < fns.size(); p += 3)
      split.loops.push_back({reinterpret_cast<CompiledSplit::Block>(fns[p]),
                             reinterpret_cast<CompiledSplit::Absorb>(fns[p + 1]),
                             reinterpret_cast<CompiledSplit::Finish>(fns[p + 2])});
    return split;
  }

private:
  struct PartSpec {
    Part part;
    int loop;
    std::string name;
  };

  // Compiles the functions `parts` of `ir` in one module; their addresses, in order. Sets `state_bytes` (the split's).
  std::vector<void*> compile_parts(const KernelIR& ir, const std::string& name, const std::vector<PartSpec>& parts,
                                   std::size_t& state_bytes) {
    const auto t0 = Clock::now();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>(name, *ctx);
    module->setDataLayout(layout_);
    module->setTargetTriple(triple_);
    std::vector<llvm::Function*> fns;
    for (const PartSpec& part : parts) {
      Lowering lowering(ir, *module, part.name, part.part, part.loop);
      lowering.lower();
      state_bytes = lowering.state_bytes();
      llvm::Function* fn = lowering.function();
      fn->addFnAttr("target-cpu", cpu_);
      fn->addFnAttr("target-features", features_);
      fn->addFnAttr(llvm::Attribute::NoUnwind);
      fns.push_back(fn);
    }

    // The op library: only the functions this kernel calls are read (a lazy module) and linked.
    auto buffer = llvm::MemoryBuffer::getMemBuffer(
        llvm::StringRef(reinterpret_cast<const char*>(lazyfuse_llvm_op_library), lazyfuse_llvm_op_library_size),
        "lazyfuse-op-library", false);
    auto library = llvm::getOwningLazyBitcodeModule(std::move(buffer), *ctx);
    if (!library) throw std::runtime_error("reading the op library's bitcode: " + to_string(library.takeError()));
    (*library)->setDataLayout(layout_);
    (*library)->setTargetTriple(triple_);
    if (llvm::Linker::linkModules(*module, std::move(*library), llvm::Linker::Flags::LinkOnlyNeeded))
      throw std::runtime_error("linking the op library failed");
    for (llvm::Function& f : *module)
      if (!f.isDeclaration() && std::find(fns.begin(), fns.end(), &f) == fns.end())
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
    std::string verify;
    llvm::raw_string_ostream verify_os(verify);
    if (llvm::verifyModule(*module, &verify_os)) throw std::runtime_error("invalid module: " + verify_os.str());

    const auto t_linked = Clock::now();
    // The disk cache (the kernel cache's directory, beside the CUDA binaries): the object code by the text of the
    // unoptimized module with the op library linked, the functions' names, the host CPU and its features, the LLVM
    // version and lazyfuse's. The text names no address: the host functions are symbols, resolved when the object
    // is linked into this process.
    const auto& cfg = config::snapshot();
    std::optional<DiskCache> disk;
    if (!cfg.cache_in_memory) disk.emplace(cfg.cache_dir);
    std::string key;
    std::unique_ptr<llvm::MemoryBuffer> object;
    if (disk && disk->enabled()) {
      std::string text;
      llvm::raw_string_ostream text_os(text);
      text_os << *module;
      std::vector<std::string> options = {
          "llvm object", triple_,          cpu_, features_, std::string("LLVM ") + LLVM_VERSION_STRING,
          "-O3",         "fp-contract=off"};
      for (const PartSpec& part : parts) options.push_back(part.name);
      key = kernel_cache_key(text_os.str(), options, 0, 0, LAZYFUSE_VERSION);
      if (auto hit = disk->load(key)) {
        object = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(hit->data(), hit->size()), name);
        config::log("cache", "llvm: disk hit " + name + " (" + key + ")");
      }
    }
    last_from_disk_ = object != nullptr;
    if (!object) {
      optimize(*module);
      llvm::SmallVector<char, 0> bytes;
      llvm::raw_svector_ostream os(bytes);
      llvm::legacy::PassManager emit;
      if (machine_->addPassesToEmitFile(emit, os, nullptr, llvm::CodeGenFileType::ObjectFile))
        throw std::runtime_error("the target machine cannot emit an object file");
      emit.run(*module);
      if (!key.empty()) disk->store(key, std::span<const char>(bytes.data(), bytes.size()));
      object = std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(bytes), name, false);
    }
    const auto t_optimized = Clock::now();

    const std::string dylib_name = name + "_" + std::to_string(++modules_);
    auto& dylib = [&]() -> llvm::orc::JITDylib& {
      // One JITDylib per kernel: a name may repeat (a structure compiled again after forget) without clashing.
      auto created = jit_->createJITDylib(dylib_name);
      if (!created) throw std::runtime_error(to_string(created.takeError()));
      created->addToLinkOrder(jit_->getMainJITDylib());
      return *created;
    }();
    if (auto error = jit_->addObjectFile(dylib, std::move(object)))
      throw std::runtime_error(to_string(std::move(error)));
    std::vector<void*> addresses;
    for (const PartSpec& part : parts) {
      auto symbol = jit_->lookup(dylib, part.name);
      if (!symbol) throw std::runtime_error(to_string(symbol.takeError()));
      addresses.push_back(symbol->toPtr<void*>());
    }
    if (config::log_enabled("codegen"))
      config::log("codegen", "llvm: " + name + ": lower+link " + ms(t_linked - t0) +
                                 (last_from_disk_ ? ", from the disk cache " : ", optimize and machine code ") +
                                 ms(t_optimized - t_linked) + ", load " + ms(Clock::now() - t_optimized));
    return addresses;
  }

  std::string setup() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!builder) return to_string(builder.takeError());
    builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    // Every + - * / rounds, as in the interpreter (built with -ffp-contract=off): never fused into an FMA.
    builder->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
    auto machine = builder->createTargetMachine();
    if (!machine) return to_string(machine.takeError());
    machine_ = std::move(*machine);
    cpu_ = machine_->getTargetCPU().str();
    features_ = machine_->getTargetFeatureString().str();
    layout_ = machine_->createDataLayout();
    triple_ = machine_->getTargetTriple().str();
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*builder).create();
    if (!jit) return to_string(jit.takeError());
    jit_ = std::move(*jit);
    // The C library's math functions (expf, sin, ...) the op library calls: the process' own, the interpreter's.
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(layout_.getGlobalPrefix());
    if (!process) return to_string(process.takeError());
    jit_->getMainJITDylib().addGenerator(std::move(*process));
    llvm::orc::SymbolMap host;
    for (const auto& [name, address] : reduction_host_functions())
      host[jit_->mangleAndIntern(name)] =
          llvm::orc::ExecutorSymbolDef(llvm::orc::ExecutorAddr(reinterpret_cast<std::uint64_t>(address)),
                                       llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
    if (auto error = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(host))))
      return to_string(std::move(error));
    return "";
  }

  void optimize(llvm::Module& module) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(machine_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(module, mam);
  }

  std::unique_ptr<llvm::TargetMachine> machine_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string cpu_, features_, triple_;
  llvm::DataLayout layout_{""};
  std::uint64_t modules_ = 0;
  bool last_from_disk_ = false;
};

// ---- The cache ----

// The in-memory cache: compiled code by structure. The hash is the key; the structure itself is compared on a hit,
// so that a hash collision compiles instead of running another kernel's code. The process' CPU and LLVM version are
// fixed, so they are no part of an in-memory key.
struct Entry {
  KernelIR structure; // the IR without its analyses
  CompiledKernel fn = nullptr;
  std::string unsupported; // why it is interpreted ("" when fn is set), or the compile error
  // The split, compiled on the first launch that splits loops over threads (split_tried); without loops where the
  // interpreter splits them.
  bool split_tried = false;
  CompiledSplit split;
};

bool same_structure(const KernelIR& a, const KernelIR& b) {
  return a.schedule == b.schedule && a.code == b.code && a.inputs == b.inputs && a.outputs == b.outputs &&
         a.params == b.params && a.unravels == b.unravels && a.index32 == b.index32;
}

struct Cache {
  std::mutex mutex; // held while compiling: one compile at a time
  std::unordered_multimap<std::uint64_t, Entry> entries;
  std::atomic<std::uint64_t> compiled{0}, disk_hits{0}, hits{0}, unsupported{0}, small{0}, failures{0}, split{0},
      split_interpreted{0};
  std::atomic<double> compile_seconds{0}, disk_load_seconds{0};

  // Under `mutex`.
  void count_compile(bool from_disk, double seconds) {
    (from_disk ? disk_hits : compiled)++;
    auto& total = from_disk ? disk_load_seconds : compile_seconds;
    total.store(total.load() + seconds);
  }
};
Cache& cache() {
  static Cache* c = new Cache(); // never destroyed: compiled code may run during static destruction
  return *c;
}

Entry* find_locked(const KernelIR& ir) {
  auto [first, last] = cache().entries.equal_range(ir.hash);
  for (auto it = first; it != last; ++it)
    if (same_structure(it->second.structure, ir)) return &it->second;
  return nullptr;
}

} // namespace

bool llvm_codegen_built() {
  return true;
}

void llvm_forget_kernels() {
  std::lock_guard lock(cache().mutex);
  cache().entries.clear();
}

bool llvm_kernel_cached(const KernelIR& ir) {
  std::lock_guard lock(cache().mutex);
  const Entry* e = find_locked(ir);
  return e && e->fn;
}

CompiledSplit llvm_compiled_split(const KernelIR& ir) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  Entry* entry = find_locked(ir);
  if (entry && entry->fn && !entry->split_tried) {
    entry->split_tried = true;
    const std::string reason = split_unsupported_reason(ir);
    std::string error;
    Jit* jit = reason.empty() ? Jit::instance(error) : nullptr;
    if (jit) {
      const auto t0 = Clock::now();
      try {
        entry->split = jit->compile_split(ir, ir.name.empty() ? std::string("lf_kernel") : ir.name);
        const double took = seconds_since(t0);
        c.count_compile(jit->last_loaded_from_disk(), took);
        config::log("codegen", std::string("llvm: ") + (jit->last_loaded_from_disk() ? "loaded" : "compiled") +
                                   " the split of " + ir.name + " in " + std::to_string(took * 1e3) + " ms");
      } catch (const std::exception& e) {
        config::log("codegen", "llvm: the split of " + ir.name + " interpreted (compile failed: " + e.what() + ")");
        c.failures++;
      }
    } else {
      config::log("codegen", "llvm: the split of " + ir.name + " interpreted (" +
                                 (reason.empty() ? "JIT setup failed: " + error : reason) + ")");
    }
  }
  if (entry && !entry->split.loops.empty()) {
    c.split++;
    return entry->split;
  }
  c.split_interpreted++;
  return {};
}

CompiledKernel llvm_compiled_kernel(const KernelIR& ir) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  if (const Entry* e = find_locked(ir)) {
    if (e->fn)
      c.hits++;
    else
      c.unsupported++;
    return e->fn;
  }
  Entry entry;
  entry.structure.schedule = ir.schedule;
  entry.structure.code = ir.code;
  entry.structure.inputs = ir.inputs;
  entry.structure.outputs = ir.outputs;
  entry.structure.params = ir.params;
  entry.structure.unravels = ir.unravels;
  entry.structure.index32 = ir.index32;
  entry.unsupported = unsupported_reason(ir);
  if (entry.unsupported.empty()) {
    std::string error;
    if (Jit* jit = Jit::instance(error)) {
      const auto t0 = Clock::now();
      try {
        entry.fn = jit->compile(ir, ir.name.empty() ? std::string("lf_kernel") : ir.name);
        const double took = seconds_since(t0);
        c.count_compile(jit->last_loaded_from_disk(), took);
        config::log("codegen", std::string("llvm: ") + (jit->last_loaded_from_disk() ? "loaded " : "compiled ") +
                                   ir.name + " in " + std::to_string(took * 1e3) + " ms");
      } catch (const std::exception& e) {
        entry.unsupported = std::string("compile failed: ") + e.what();
        c.failures++;
      }
    } else {
      entry.unsupported = "JIT setup failed: " + error;
      c.failures++;
    }
  }
  if (!entry.fn) {
    config::log("codegen", "llvm: " + ir.name + " interpreted (" + entry.unsupported + ")");
    c.unsupported++;
  }
  CompiledKernel fn = entry.fn;
  c.entries.emplace(ir.hash, std::move(entry));
  return fn;
}

void compiled_params(const KernelIR& ir, const codegen::KernelArgs& args, std::vector<CompiledParam>& out) {
  out.assign(ir.code.size(), CompiledParam{});
  for (std::size_t id = 0; id < ir.code.size(); ++id) {
    const Instr& in = ir.code[id];
    if (in.op == IrOp::IndexParam) {
      std::memcpy(out[id].bytes, &args.params[std::size_t(in.slot)].i, sizeof(std::int64_t));
    } else if (in.op == IrOp::ScalarParam) {
      graph::visit_opmath_type(in.dtype, [&]<class T>() {
        const auto& pv = args.params[std::size_t(in.slot)];
        const T v = graph::opmath_value<T>(pv.f, pv.i, pv.im);
        static_assert(sizeof(T) <= sizeof(CompiledParam));
        std::memcpy(out[id].bytes, &v, sizeof v);
      });
    }
  }
}

CpuCodegenStats cpu_codegen_stats() {
  Cache& c = cache();
  CpuCodegenStats s;
  s.compiled = c.compiled.load();
  s.disk_hits = c.disk_hits.load();
  s.cache_hits = c.hits.load();
  s.unsupported = c.unsupported.load();
  s.small = c.small.load();
  s.failures = c.failures.load();
  s.split = c.split.load();
  s.split_interpreted = c.split_interpreted.load();
  s.compile_seconds = c.compile_seconds.load();
  s.disk_load_seconds = c.disk_load_seconds.load();
  s.setup_seconds = Jit::setup_seconds().load();
  return s;
}

void count_interpreted(bool small) {
  if (small) cache().small++;
}

std::string cpu_codegen_description() {
  const std::string& mode = config::snapshot().cpu_codegen;
  const std::string llvm = std::string("LLVM ") + LLVM_VERSION_STRING + ", host cpu " +
                           llvm::sys::getHostCPUName().str() + ", reduction folds " + reduction_fold_isa();
  if (mode == "interpreter") return "interpreter (LAZYFUSE_CPU_CODEGEN=interpreter; " + llvm + " built in)";
  if (mode == "llvm") return "llvm (" + llvm + "; LAZYFUSE_CPU_CODEGEN=llvm: every kernel it handles compiled)";
  return "llvm (" + llvm + "; LAZYFUSE_CPU_CODEGEN=auto: kernels under " + std::to_string(kMinCompiledElements) +
         " elements and random numbers interpreted)";
}

} // namespace lazyfuse::runtime
