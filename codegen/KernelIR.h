// The kernel IR: what one fused kernel does for one element of its output index space.
//
// A kernel is a straight-line list of instructions in SSA form, evaluated for every linear index i in [0, n):
// integer index arithmetic (from i to coordinates, from coordinates to buffer offsets), loads, elementwise ops
// from the op table, selects, and stores of the outputs at i. Every backend consumes this one IR: the CPU
// backend interprets it (so CI checks fused semantics without a GPU) and the CUDA printer renders it.
//
// The IR holds no sizes, strides, offsets or scalar values: those are parameters (slots), so the IR's hash is the
// kernel's structural cache key and a new shape or scalar reuses the compiled kernel. Unit strides and zero starts
// are the exception: they are structure (see Lower), so that the printer can see an address step by one element.
#pragma once

#include <lazyfuse/dtype.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace lazyfuse::codegen {

enum class IrOp : std::uint8_t {
  // Index arithmetic (type: the kernel's index type, 32 or 64 bits).
  LinearIndex, // the element's linear index i
  IndexParam,  // parameter `slot`
  IndexConst,  // the constant `imm` (structural: 0 and 1)
  IAdd,        // a + b
  ISub,        // a - b
  IMul,        // a * b
  IDiv,        // a / b, truncating (operands are non-negative where it matters)
  IMod,        // a % b, truncating
  Coord,       // coordinate `imm` of linear index a in the shape of unravel group `slot` (see KernelIR::unravels)
  // Predicates (bool).
  ILt,  // a < b (index operands)
  IGe,  // a >= b
  IEq,  // a == b
  PAnd, // a && b (bool operands)
  // Values (type: `dtype`).
  Load,         // inputs[slot][a]; with b >= 0, only where predicate b holds (else 0)
  LoadLinear,   // inputs[slot][i]: contiguous, 16-byte aligned, read in vectors by the CUDA printer
  ScalarParam,  // parameter `slot` of type dtype
  IndexToValue, // index a converted to dtype
  Unary,        // fn = UnaryOp; a has the op's compute type
  Binary,       // fn = BinaryOp; a, b have the op's compute type
  Cast,         // a converted to dtype (astype semantics: see lf_cast)
  Select,       // a ? b : c
  Store,        // outputs[slot][i] = a (reduction kernels: at the outer index)
  // Reduction kernels (KernelIR::schedule != Elementwise).
  OuterIndex, // the outer (kept-axes) linear index o
  LoopBegin,  // starts loop `slot` over the reduced elements r in [0, IndexParam a); the value is r
  Accumulate, // combines value a (with index b for arg reductions) into accumulator `slot` of loop c; fn = ReduceOp
  LoopEnd,    // ends loop `slot`
  Result,     // the value (of dtype) of accumulator `slot` over all r; fn = ReduceOp
  StoreAt,    // outputs[slot][a] = b (full-shape outputs, inside a loop)
  // Random numbers (type: `dtype`, fn = graph::RandomDist): element a of a draw with key b and counter c (uint64
  // values), i.e. graph/RandomMath.inc's function for fn and dtype at (b, c, a). The distribution's real
  // parameters are the float64 ScalarParam instructions `slot` and `imm` (-1: none), its integer range the uint64
  // ScalarParam `slot`.
  Random,
  // Gathers (type: the index type). The index into an axis of size b (an IndexParam) that the integer value a (any
  // integer dtype: code[a].dtype) names, NumPy's way: a + b when a < 0, else a, taken in 64 bits whatever the index
  // width. When that is outside [0, b), the result is 0 (so the load it addresses stays in bounds; b > 0 is
  // guaranteed by graph::make_gather whenever the kernel has elements) and bit (slot % 32) of the kernel's error word
  // is set (an atomic or: the word is the ABI's last parameter, AbiRole::ErrorWord, present exactly when the IR has
  // a CheckedIndex). With c >= 0 the check happens only where predicate c holds. `slot`: the check's number in the
  // kernel, in order of emission (LoweredKernel::checks says which gather axis it is).
  CheckedIndex,
  // Scan kernels (KernelIR::schedule == Schedule::Scan; the kernel's last instruction, its only store): the kernel's
  // index space is a C-order shape (outer, len, inner) whose middle axis is scanned, and value a (of dtype) is the
  // scan's input at the linear index i. outputs[slot][i] = the inclusive scan along that axis, fn = ReduceOp (Sum or
  // Prod): the values at (o, 0, c) ... (o, r, c) combined for i = (o * len + r) * inner + c, in the order of
  // codegen/Schedule.h's "scan order" (tiles and an in-tile tree where inner is 1 and len is long enough, else one
  // after another). b: the index value len (an IndexParam); c: inner (an IndexParam, or IndexConst 1: a contiguous
  // scan axis, which a kernel scans in tiles).
  ScanStore,
};

const char* ir_op_name(IrOp op);
bool is_index_op(IrOp op);     // produces an index (CheckedIndex included)
bool is_predicate_op(IrOp op); // produces a bool from index arithmetic

struct Instr {
  IrOp op = IrOp::LinearIndex;
  DType dtype = DType::Int64;
  std::uint8_t fn = 0;
  std::int32_t a = -1, b = -1, c = -1;
  std::int32_t slot = -1;
  std::int64_t imm = 0;
  bool operator==(const Instr&) const = default;
};

struct InputSlot {
  DType dtype;
  bool operator==(const InputSlot&) const = default;
};

struct ParamSlot {
  bool is_index = true; // else a value of `dtype`
  DType dtype = DType::Int64;
  bool operator==(const ParamSlot&) const = default;
};

/// How a kernel walks its index space.
enum class Schedule : std::uint8_t {
  Elementwise, // every output element independently: grid-stride over i
  Row,         // a block per outer index: reductions loop over r with the block's threads, then a block reduce
  Split,       // each outer index's reductions split over several blocks, combined by the last block to finish
  Column,      // a thread per outer index (the kept innermost axis walks with the threads: coalesced), looping
               // over all r itself
  ColumnSplit, // as Column, with r split over several blocks per group of outer indices, combined by the last
  Scan,        // a scan (IrOp::ScanStore): tiles of a contiguous scan axis, chained by a decoupled look-back over
               // per-tile status words; or a thread per column walking the scan axis (codegen/Schedule.h)
};

/// True for the schedules whose reductions are split over blocks (their loops must be independent).
inline bool is_split(Schedule s) {
  return s == Schedule::Split || s == Schedule::ColumnSplit;
}
/// True for the schedules whose launches get the block scratch of codegen/KernelAbi.h (partials, zeroed tickets).
inline bool has_block_scratch(Schedule s) {
  return is_split(s) || s == Schedule::Scan;
}
inline bool is_column(Schedule s) {
  return s == Schedule::Column || s == Schedule::ColumnSplit;
}

/// The shared-memory row cache of a Row-schedule kernel and the vector paths of its loops, and of a Split-schedule
/// kernel's (codegen/RowCache.h).
///
/// In a Row- or Split-schedule loop over r, a load at address X + r (X invariant in the loop) reads kElementsPerThread
/// consecutive elements of a row at once; so does a StoreAt. Each thread then takes groups of elements starting at
/// multiples of kElementsPerThread, the same groups in every loop of the kernel, which is what lets a later loop
/// read back (from shared memory) the very values the same thread stored there in an earlier loop: no
/// synchronization. A value a later loop needs that an earlier loop computed (the row itself; softmax's
/// exponentials) is such a value: the earlier loop stores it, the later one reads it instead of reading and
/// computing it again.
struct RowLoop {
  /// RowLoop::base of an access whose address is r itself.
  static constexpr int kNoBase = -2;
  std::size_t begin = 0, end = 0; // LoopBegin, LoopEnd
  std::vector<bool> varies;       // per instruction: inside this loop and depends on r
  std::vector<int> base;          // per vector Load/StoreAt: the X of X + r (kNoBase: the address is r), else -1
  std::vector<int> reads;         // per instruction: the cache group the cached version reads it from, or -1
  std::vector<int> writes;        // per instruction: the cache group this loop stores it into, or -1
  std::vector<bool> live;         // per instruction: computed in the cached version
  bool vector = false;            // has a vector path: vector accesses or cache reads
  bool reads_cache = false;
  bool operator==(const RowLoop&) const = default;
};

struct RowCache {
  std::vector<RowLoop> loops;     // every loop of a Row- or Split-schedule kernel, in order (none for others)
  std::vector<int> region;        // per group: its region of shared memory (groups whose lives do not overlap share)
  std::vector<DType> region_type; // per region
  /// Bytes of the cache per reduced element (0: the kernel has no cache): the sum of the regions' item sizes.
  std::int64_t bytes_per_element() const;
  bool operator==(const RowCache&) const = default;
};

/// Where the tiles of an elementwise kernel lie. A tile spans `axis` and the last axis of unravel group `group` (a
/// shape the output's own linear index unravels in): the staged loads step by one element along `axis`, the output
/// and the other loads along the last axis. The printer reads each staged load's tile with the threads walking
/// `axis`, then computes the tile's elements with the threads walking the last axis (codegen/Schedule.h, the tiled
/// elementwise path).
struct TransposeTiles {
  int group = -1;           ///< the unravel group the tiles span; -1: the kernel stages nothing
  int axis = -1;            ///< the axis of `group` along which the staged loads' addresses step by one
  std::vector<bool> staged; ///< per instruction: a Load read through a tile
  /// Per instruction: a load read in place whose address (and predicate) is index arithmetic alone, which the tiled
  /// path reads with the staged loads, before its barrier, so that both are in flight together.
  std::vector<bool> early;
  bool any() const { return group >= 0; }
  bool operator==(const TransposeTiles&) const = default;
};

/// The stretch of an elementwise kernel that repeats one step (codegen/Reroll.h): instructions [start, end()) are
/// `count` copies of the `period` instructions from `start`. The printer prints the first copy once, as the body of a
/// loop over the copies.
struct RepeatedSteps {
  int start = 0, period = 0, count = 0;
  /// The copies' ScalarParam slots are [first_param, first_param + params_per_step * count): copy r's are
  /// first_param + r * params_per_step + 0 .. params_per_step - 1.
  int first_param = 0, params_per_step = 0;
  /// Per instruction k of a step: the instruction before the stretch that the first copy reads where later copies
  /// read the previous copy's k (the loop-carried value's initial value), or -1 (no copy reads the previous one's k).
  std::vector<int> initial;
  /// Per instruction k of a step: read after the stretch (from the last copy).
  std::vector<bool> exported;
  bool any() const { return count > 0; }
  int end() const { return start + period * count; }
  /// Whether the loop keeps step value k from one copy to the next or past the loop.
  bool kept(int k) const { return initial[std::size_t(k)] >= 0 || exported[std::size_t(k)]; }
  bool operator==(const RepeatedSteps&) const = default;
};

struct KernelIR {
  Schedule schedule = Schedule::Elementwise;
  std::vector<Instr> code;
  std::vector<InputSlot> inputs;
  std::vector<DType> outputs;
  std::vector<ParamSlot> params;
  /// Unravel groups: the IndexParam instructions holding each dimension of a shape that Coord instructions
  /// unravel linear indices in. Kept explicit (not as div/mod chains) so that the CUDA printer can unravel a
  /// thread's first element once and step the last coordinate for the others.
  std::vector<std::vector<std::int32_t>> unravels;
  bool index32 = true;
  /// Row schedule: vectors of kElementsPerThread elements of each cached group a thread keeps in registers
  /// (codegen/Schedule.h, choose_register_row_vectors), or 0: the row cache is in shared memory only. Chosen for the
  /// lowered row length, so kernels for rows of other lengths may differ in it.
  int register_row_vectors = 0;
  /// With register_row_vectors: the rows end inside the last trip (codegen/Schedule.h, register_rows_partial), whose
  /// start each thread clamps into the row and whose accumulations and stores it masks.
  bool register_row_partial = false;
  /// Elementwise with staged loads: their tiles span kTransposeTileWide elements of the last axis, with no mirrored
  /// pairs (codegen/Schedule.h, choose_wide_transpose_tiles). Chosen for the lowered shape, like the row path above.
  bool transpose_tiles_wide = false;
  /// Structural hash of everything above: the in-process kernel cache key.
  std::uint64_t hash = 0;
  /// "lf_k<16 hex digits of hash>": the same structure gets the same name in every process.
  std::string name;

  /// Computes `hash` and `name`; call once the IR is complete.
  void finalize();

  // ---- Analyses: functions of the structure above, computed once by codegen::analyze (codegen/Analyze.h) at the
  // end of lowering and read by the printer, the CUDA executor and the CPU backend. Not in the hash: equal
  // structures give equal results.
  /// Per instruction: a Load of an elementwise kernel whose address steps by one element with the thread's
  /// elements, read in vectors by the CUDA printer (codegen/VectorAccess.h).
  std::vector<bool> unit_step_loads;
  /// Per instruction: a Random whose element index steps by one with the thread's elements (elementwise) or the
  /// reduced index (Row, Split), computed four at a time by the CUDA printer (codegen/VectorAccess.h).
  std::vector<bool> unit_step_randoms;
  /// Row and Split schedules: the loops' vector paths; Row: the shared-memory row cache (codegen/RowCache.h). Its
  /// bytes_per_element() times row_cache_elements(reduced) is the launch's dynamic shared memory.
  RowCache row_cache;
  /// Elementwise: the loads staged through tiles of shared memory (codegen/TransposeTiles.h).
  TransposeTiles transpose_tiles;
  /// Elementwise: the steps printed as a loop (codegen/Reroll.h).
  RepeatedSteps repeated_steps;
  /// The parameters that values are divided by with multiply-shift constants (codegen/ValueDivisors.h).
  std::vector<int> value_divisors;
  /// Set by codegen::analyze: the fields above hold its results.
  bool analyzed = false;
};

/// One parameter's value: an index, or a scalar stored as double (float types; complex: f + im i) or int64
/// (integer and bool).
struct ParamValue {
  std::int64_t i = 0;
  double f = 0;
  double im = 0;
};

/// What one launch of a kernel reads and writes (besides its structure).
struct KernelArgs {
  std::vector<const void*> inputs; // first element of each input (offsets already applied)
  std::vector<void*> outputs;      // C-contiguous outputs of n elements
  std::vector<ParamValue> params;
  std::int64_t n = 0;       // output elements (elementwise) or outer elements (reductions)
  std::int64_t reduced = 0; // reduction kernels: elements each reduction combines per outer element; scans: the axis
  /// Kernels with bounds checks (has_bounds_checks): a zeroed 32-bit word the kernel ors failed checks into, in
  /// the executor's memory; set by the runtime for each launch.
  void* error_word = nullptr;
};

/// Whether the kernel checks gather indices (has a CheckedIndex), and so takes an error word.
bool has_bounds_checks(const KernelIR& ir);
/// Whether parameter `slot` is a dimension that the CUDA printer divides linear indices by to unravel them: dimension
/// k >= 1 of an unravel group (dimension 0 is what is left). The kernel then also takes its fast-division constants
/// (codegen/KernelAbi.h: AbiRole::Divisor).
bool is_divisor_param(const KernelIR& ir, int slot);
/// Whether any parameter is (is_divisor_param).
bool has_divisor_params(const KernelIR& ir);
/// Per instruction: an index or predicate computed from a loaded value (a CheckedIndex and what is computed from
/// it). The CUDA printer computes pure index arithmetic ahead of the values in places (vector addresses, hoisting
/// out of loops); these it prints in order with the values instead.
std::vector<bool> data_dependent_indices(const KernelIR& ir);

/// The instructions the printers print: a stretch of repeated steps (KernelIR::repeated_steps) counts one copy.
int printed_instruction_count(const KernelIR& ir);
/// The most instructions one kernel may print. A plan lowering to more is split (runtime/Materialize.cpp): past it,
/// ptxas ran out of registers and spilled, and its time grew faster than the text (a 49-point stencil, 632
/// instructions: 255 registers, 1.6 KB of spills, 4.1 s; 81 points, 1,062: 5.6 KB, 11.9 s; 2,258: 19 KB, 150 s;
/// the calibration is in docs/design.md, "Printed instructions").
inline constexpr int kMaxPrintedInstructions = 512;

/// Human-readable listing (LAZYFUSE_LOG=lower, tests).
std::string to_string(const KernelIR& k);

} // namespace lazyfuse::codegen
