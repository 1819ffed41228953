// Schedules: how a kernel walks its index space and how it is launched. Every schedule rule lives here (or, where
// partitioning must know it too, in fusion/ScheduleRules.h): the constants the printed kernels are written for,
// the choice of a reduction kernel's schedule (lowering asks choose_reduction_schedule) and the launch shape (the
// CUDA executor asks launch_shape). The printer, lowering and the executor read these and decide nothing of their
// own about block sizes, splits or shared memory.
#pragma once

#include "codegen/KernelIR.h"
#include "fusion/ScheduleRules.h"

#include <cstddef>
#include <cstdint>

namespace lazyfuse::codegen {

// ---- Constants the printed kernels are written for --------------------------------------------------------------

/// Elements each thread handles per loop trip; contiguous inputs and the outputs move in vectors of this many
/// elements (16 bytes for float32).
inline constexpr int kElementsPerThread = 4;
/// Vectors of kElementsPerThread elements each thread of an elementwise kernel loads before it computes any: its
/// block covers kBlockSize * kVectorsPerThread vectors per loop trip.
inline constexpr int kVectorsPerThread = 2;
/// Vectors per thread of an elementwise kernel that reads no memory (it generates its values: random numbers,
/// index arithmetic), whose time is arithmetic: more of it in flight per thread. Measured on the H200
/// (2026-12-02, 2^26 float32 draws, docs/results/2026-12-02c/random-experiment): uniform 0.0672 ms with 2 vectors,
/// 0.0636 with 4, 0.0621 with 4 and streaming stores; standard_normal 0.1375, 0.1309, 0.1286 ms.
inline constexpr int kGeneratorVectorsPerThread = 4;
/// Threads per block the printed kernels are written for (__launch_bounds__).
inline constexpr int kBlockSize = 256;
/// Threads per warp the printed block reductions are written for (shuffles over 32 lanes).
inline constexpr int kWarpSize = 32;
/// Reduction loops run this many iterations per trip (column kernels twice as many), with as many independent
/// accumulators.
inline constexpr int kUnroll = 4;
/// Bytes of vector loads each thread of a split reduction's vector path keeps in flight per trip: its unroll count is
/// raised above kUnroll until its vectors of the narrowest types reach this (16 halves: eight trips of 8 bytes), as
/// the hand-written half sum of bench/bench_limits.cu needs to approach the copy bandwidth. Calibrated on the H200
/// (2026-12-02, bfloat16/float16 sums of 2^26): 32 bytes 85.9% of copy, 64 bytes 87.5% (both with a ticket memset
/// per launch, since removed); without it 64 bytes 88.7%, 128 bytes 80.8%.
inline constexpr int kSplitBytesInFlight = 64;
/// Most blocks one outer element's reduction is split over (Split schedule). Measured on the H200 (2026-12-02,
/// half sums of 2^26 with streaming loads): 34.3-34.9 us with 1024 splits, 35.5-35.6 us with the resident grid's
/// 1056 (docs/results/2026-12-02c/split-experiment).
inline constexpr int kMaxSplits = 1024;
/// Most blocks a column tile's reductions are split over (ColumnSplit): one thread of the last block folds each
/// column's partials.
inline constexpr int kMaxColumnSplits = 64;
/// Elements per group of a row cache for rows of `reduced` elements (each group starts on a whole vector): the
/// launch's dynamic shared memory is ir.row_cache.bytes_per_element() * row_cache_elements(reduced).
inline std::int64_t row_cache_elements(std::int64_t reduced) {
  return (reduced + kElementsPerThread - 1) / kElementsPerThread * kElementsPerThread;
}
/// Elements on each side of a square tile of an elementwise kernel with staged loads (KernelIR::transpose_tiles): a
/// tile row is two warps' contiguous run (256 bytes of float32) on either side. A block's kBlockSize threads cover a
/// tile in kTransposeTile * kTransposeTile / kBlockSize passes of kBlockSize / kTransposeTile rows. Measured on the
/// H200 (2026-12-03, float32, medians of 3, docs/results/2026-12-03d run 2): 64 against 32, a + b.T of 8192^2 0.196 vs
/// 0.206 ms, the (2, 1, 0) permute of 256 x 1024 x 1024 0.556 vs 0.730 ms, of 255 x 1000 x 1001 0.805 vs 0.766 ms.
inline constexpr int kTransposeTile = 64;
/// Elements of the last axis in a wide tile (KernelIR::transpose_tiles_wide): a tile of kTransposeTile elements of
/// the staged axis by kTransposeTileWide of the last, whose rows are four warps' contiguous run on the output's side.
inline constexpr int kTransposeTileWide = 128;
/// Bytes of the memory system's write unit (an L2 sector) that output rows are compared with to choose wide tiles.
inline constexpr std::int64_t kSectorBytes = 32;
/// Shortest extent of either tile axis for which a launch takes the tiled path (the kernel's other path reads the
/// staged operands element by element): below it most of each tile's threads would idle.
inline constexpr std::int64_t kTransposeTileMinExtent = 16;
/// Most static shared memory the tiles of one kernel take (kTransposeTile x (kTransposeTile + 1) elements per staged
/// load: the padding column keeps a warp's reads of a tile column on distinct banks): two float32 tiles (16.25 KiB
/// each) or one float64 tile, within the 48 KiB a block may use without opting in. A complex128 tile (65 KiB) never
/// fits: those loads read in place.
inline constexpr std::int64_t kMaxTransposeTileBytes = 40 * 1024;
/// Most dynamic shared memory a launch gives a row cache (the default per-block limit, no opt-in needed).
inline constexpr std::int64_t kMaxRowCacheBytes = 48 * 1024;
/// Bytes of a Row kernel's cached row each thread may hold in registers instead of the row cache (32 registers):
/// rows of up to kRegisterRowBytes * kBlockSize / ir.row_cache.bytes_per_element() elements (8,192 float32, 4,096
/// float64) then never touch shared memory. Measured on session 25's hand-written layer norms of 8192^2 float32
/// (docs/results/2026-12-05f/layernorm): rows in registers 0.181 ms against 0.190 with the row in shared memory on
/// the H100 (99.7% against 94.9% of copy), 0.142 against 0.147 ms on the H200.
inline constexpr std::int64_t kRegisterRowBytes = 128;
/// Bytes of scratch per partial result of a split reduction (a value and, for arg reductions, its index at
/// kPartialBytes / 2), or kWidePartialBytes in kernels with a 16-byte (complex128) accumulator (the index then at
/// 16): see partial_bytes_of.
inline constexpr std::int64_t kPartialBytes = 16;
inline constexpr std::int64_t kWidePartialBytes = 32;

// ---- The scan order (Schedule::Scan) -----------------------------------------------------------------------------
//
// A scan's association is fixed, the same on every run and on both backends (the CPU backend computes exactly this
// order, so that its floating-point results equal the GPU's bit for bit), written here with (+) for the scan's
// combining function and x the scan's input along one line of the scan axis:
//  - Tiled (a contiguous scan axis, inner == 1, of at least kScanTileMinLength elements): each row is cut into tiles
//    of kBlockSize * I elements, I = scan_items(the scan's itemsize) (16 for 4-byte types, 8 for 8-byte, 4 for
//    complex128); thread j of a tile's block owns elements j*I ... j*I+I-1 of it.
//    s_k: the thread's own inclusive scan, one element after another (s_0 = x_0, s_k = s_{k-1} (+) x_k); T_j its last
//    s. Kogge-Stone over the 32 T of each warp (for offsets 1, 2, 4, 8, 16 at once: w_l = w_{l-off} (+) w_l where
//    l >= off) gives w_j; Kogge-Stone over the 8 warps' last w (offsets 1, 2, 4) gives P_q; incl_j = P_{q-1} (+) w_j
//    for the thread's warp q > 0, else w_j. The tile's local value of element k of thread j is incl_{j-1} (+) s_k
//    (j > 0), else s_k; its aggregate agg is incl of the thread holding its last element.
//    Across the tiles of a row, in groups of kScanGroupTiles (32) consecutive tiles (group g: tiles 32g ... 32g+31):
//    pre(g, l) is lane l's value after Kogge-Stone over the group's aggregates (lane l holding tile 32g+l's; offsets
//    1, 2, 4, 8, 16 as above; lane l's value depends on lanes 0 ... l only); a whole group's sum is pre(g, 31), and
//    the groups' inclusive values chain: GI(0) = pre(0, 31), GI(g) = GI(g-1) (+) pre(g, 31). Tile 32g+l's prefix is
//    E = pre(0, l-1) in group 0 (none for tile 0), GI(g-1) for l == 0, else GI(g-1) (+) pre(g, l-1), and a result
//    is E (+) local (local alone in the row's first tile). On the GPU a tile waits only for aggregates: it finds
//    GI(g-1) by walking back over whole groups to the nearest whose last tile has published its inclusive value (or
//    to group 0) and folding the later groups' sums FORWARD from it, which is GI(g-1) bit for bit wherever the walk
//    stops, so the result does not depend on timing, and a tile's look-back combines once per group it passes, not
//    once per tile (docs/design.md, "Scans").
//  - Columns (any other scan): one element after another along the axis.

/// Bytes of scan values each thread of a tiled scan owns: four 16-byte vectors of 4-byte values, all loaded before
/// any is used, so that a tile's block has 16 KiB in flight and a tile's fixed costs (the look-back above all)
/// are spread over 4,096 float32 elements.
inline constexpr int kScanThreadBytes = 64;
/// Elements each thread of a tiled scan owns for scan values of `itemsize` bytes: kScanThreadBytes of them, a whole
/// number of vectors (at least one), and at most 16 (registers: a thread holds all of them at once).
constexpr int scan_items(std::size_t itemsize) {
  const int items = int(kScanThreadBytes / std::int64_t(itemsize));
  return items < kElementsPerThread ? kElementsPerThread : items > 16 ? 16 : items;
}
/// Shortest contiguous scan axis scanned in tiles; shorter rows are walked by a thread each.
inline constexpr std::int64_t kScanTileMinLength = 128;
/// Tiles of a tiled scan's group (a lane of the look-back's warp each): see "The scan order".
inline constexpr int kScanGroupTiles = kWarpSize;
/// Bytes of a tile's status values in a tiled scan's partials: its aggregate, then (a group's last tile) the group's
/// inclusive value, 16 bytes each (scan values wider than kScanPackedBytes; narrower ones keep their status in the
/// tickets, see ScanGeometry).
inline constexpr std::int64_t kScanStatusBytes = 32;
/// The largest epoch a tiled scan's status flag holds: a 32-bit flag word, the epoch above the flag's two bits.
inline constexpr std::uint32_t kScanEpochLimit = (std::uint32_t(1) << 30) - 1;
/// Widest scan value whose tile status is one 64-bit word: the value's bits and its flag, written with one store and
/// read with one load, so the look-back finds and reads a predecessor's value in one round trip.
inline constexpr std::size_t kScanPackedBytes = 4;

/// The shape of a scan kernel's index space (KernelIR::schedule == Schedule::Scan) for one launch.
struct ScanGeometry {
  std::int64_t len = 0;   ///< elements along the scan axis
  std::int64_t inner = 1; ///< product of the axes after it
  bool tiled = false;     ///< scanned in tiles (inner == 1 structurally, len >= kScanTileMinLength)
  int items = 0;          ///< tiled: elements per thread (scan_items of the scan's itemsize)
  std::int64_t tile = 0;  ///< tiled: elements per tile, kBlockSize * items
  bool packed = false;    ///< tiled: a tile's status is one 64-bit word in the tickets (itemsize <= kScanPackedBytes)
  std::int64_t tiles_per_row = 0, tiles = 0;
  std::int64_t columns = 0; ///< untiled: the lines scanned, one per thread
};
/// The geometry of the scan kernel `ir` over `args` (read from its IrOp::ScanStore and the parameters).
ScanGeometry scan_geometry(const KernelIR& ir, const KernelArgs& args);

// ---- Device capabilities ----------------------------------------------------------------------------------------

/// What the launch shape needs to know about the device (and, for resident_blocks_per_sm and static_shared_bytes,
/// about the compiled kernel). The CUDA runtime fills it from the device (runtime/KernelCache.cpp); the CPU backend and
/// the tests use reference().
struct DeviceCaps {
  int warp_size = kWarpSize;
  int max_threads_per_block = 1024;
  int sm_count = 1;
  /// Blocks of kBlockSize threads of one kernel that fit on an SM at once (its occupancy; at least 1).
  int resident_blocks_per_sm = 1;
  /// The kernel's static shared memory (its block reductions' slots), which counts against the per-block limit.
  std::int64_t static_shared_bytes = 0;
  /// Most blocks of a one-dimensional grid (gridDim.x).
  std::int64_t max_grid_blocks = 2147483647;
  /// Dynamic shared memory a block may use without opting in, and the most it may use after opting in.
  std::int64_t shared_bytes_per_block = 48 * 1024;
  std::int64_t shared_bytes_per_block_optin = 48 * 1024;

  /// Blocks that run at once on the whole device: what a grid of resident blocks holds.
  std::int64_t grid_limit() const { return std::int64_t(sm_count) * resident_blocks_per_sm; }

  /// A fixed device for the CPU backend and the tests: an H200 (132 SMs, 8 resident blocks of 256 threads each).
  static DeviceCaps reference();
  bool operator==(const DeviceCaps&) const = default;
};

// ---- The reduction schedule -------------------------------------------------------------------------------------

/// What lowering knows of a reduction kernel when it chooses its schedule.
struct ReductionFacts {
  std::int64_t outer = 0;    ///< outer (kept) elements
  bool inner_kept = false;   ///< the innermost axis of the domain is kept (the threads can walk it: coalesced)
  bool full_outputs = false; ///< an output has the domain's input shape (a second loop writes it)
  bool dependent = false;    ///< a reduction reads another reduction of the kernel (a later loop)
};

/// The schedule of a reduction kernel. Columns when the innermost axis is kept and there are enough outer elements
/// for a warp (fusion::walks_columns), split over blocks unless a loop needs another's result or writes full-shape
/// outputs (a split kernel combines its partials only at the end); else split rows when there are few outer
/// elements (fusion::prefers_split) and nothing prevents it; else a block per row. Deterministic, device-independent.
Schedule choose_reduction_schedule(const ReductionFacts& facts);

/// Vectors of kElementsPerThread elements each thread of the elementwise kernel `ir` handles per loop trip:
/// kGeneratorVectorsPerThread in kernels that read no memory, else kVectorsPerThread.
int vectors_per_thread(const KernelIR& ir);

/// Whether the kernel `ir` writes its output vectors with streaming stores (st.global.cs: evict first): elementwise
/// kernels that read no memory, which write large outputs at the rate they compute them (measured with
/// kGeneratorVectorsPerThread above), and scans, whose tiles write each result once (see streams_vector_loads).
bool streams_stores(const KernelIR& ir);

/// Whether `ir` has vector loads in its reduction loops and they are streaming loads (ld.global.cs: evict first):
/// in split kernels, which read their rows once and are sized to stream through memory. Measured on the H200
/// (2026-12-02, sums of 2^26 float16/bfloat16, medians of 5, docs/results/2026-12-02c/split-experiment): 88.0-89.5%
/// of copy with plain loads, 94.2-95.4% with streaming ones. Row and column kernels may read a row again (row
/// caches, two-pass statistics) and keep plain loads. Scans: their tiles' whole-vector loads of contiguous inputs
/// (LoadLinear), which each tile reads once. Measured on an H100 for cumsum of 2^25 float32 in a replica of the
/// tiled kernel (docs/results/2026-12-07d, calls 1 and 3): 78.3% of a copy kernel with plain loads and stores,
/// 90.0% with streaming ones (rows of 8,192: 92.0% and 104.0%); in the library (docs/results/2026-12-07e, call 1)
/// 0.1206 -> 0.1084 ms, rows of 8,192 0.1014 -> 0.0965 ms.
bool streams_vector_loads(const KernelIR& ir);

/// Vectors of kElementsPerThread elements of each cached group a thread of the Row kernel `ir` keeps in registers
/// for rows of `reduced` elements (KernelIR::register_row_vectors): the trips that cover the row, K = ceil(reduced /
/// (kBlockSize * kElementsPerThread)), where the row is a whole number of vectors and the row cache's K vectors take
/// at most kRegisterRowBytes; else 0 (kernels without a row cache, other lengths: the shared-memory cache). No test
/// stands between the trips' loads, because a test per trip kept each trip's loads waiting on the trip before
/// (measured on the H100, docs/performance.md, twenty-seventh session): trips 0 .. K - 2 are whole, and the last,
/// where the row ends inside it (register_rows_partial), loads from a start clamped into the row and masks what it
/// adds and stores. The register path walks trips k = 0 .. K - 1 at elements (threadIdx.x + k * blockDim.x) *
/// kElementsPerThread, the trips and accumulators of the strided vector loops (trip k adds into accumulator k %
/// unroll), so that a row's bits do not depend on the path. Needs the analyses (KernelIR::row_cache).
int choose_register_row_vectors(const KernelIR& ir, std::int64_t reduced);

/// Whether rows of `reduced` elements end inside the last of the register path's trips
/// (KernelIR::register_row_partial).
bool register_rows_partial(std::int64_t reduced);

/// Blocks per SM the __launch_bounds__ of a kernel with a register path asks for (ptxas then keeps its registers
/// within 65536 / (blocks * kBlockSize)), or 0 for other kernels: the most that hold the row's registers without
/// spilling, estimated as 44 registers plus 1.5 per 4-byte word of the row a thread holds. Calibrated with ptxas
/// (-O3, sm_90, --fmad=false, 2026-12-05) on the softmax and layer-norm kernels of float32 rows of 1024 to 8192 and
/// float64 rows of 4096. The most blocks without a spill: K = 1 float32 vector 5 (48 registers), K = 2 5 (48), K = 4
/// 3 for softmax (78) and 4 for the layer norm, K = 8 2 for softmax (128) and 3 for the layer norm (80), float64
/// K = 4 2 (110); the rule asks for 5, 4, 3, 2 and 2. With no minimum ptxas aimed at high occupancy and spilled in
/// six of the nine.
int register_row_min_blocks(const KernelIR& ir);

/// Blocks per SM the __launch_bounds__ of a scan kernel asks for, or 0 for other kernels: 5 (ptxas then keeps a
/// thread within 48 registers, where it takes 64 unasked) when the scan's values and every input take at most
/// kScanPackedBytes, else none. Measured on an H100 (docs/results/2026-12-06d): 2^25 float32 0.139 -> 0.132 ms; ptxas
/// (sm_90, 2026-12-06) spills nothing for float32 scans of fused prologues up to exp, sin, tanh and erf, 4 bytes for an
/// int32 scan of a float32 cast; a float64 input staged beside the float32 tile spilled 308 bytes, so it asks none.
int scan_min_blocks(const KernelIR& ir);

/// Iterations per trip (and independent accumulators) of the reduction loop `loop` of `ir`: kUnroll; twice that in
/// column kernels (one element per thread and row); in a split kernel's loop with a vector path, enough for
/// kSplitBytesInFlight bytes of its widest vector loads.
int reduction_unroll(const KernelIR& ir, const RowLoop* loop);

// ---- The launch shape -------------------------------------------------------------------------------------------

/// The work units of the tiled path of an elementwise kernel with `n` elements whose tiles span axes of `a` and
/// `b` elements (the last): 0 when the launch takes the kernel's untiled path (an axis shorter than
/// kTransposeTileMinExtent). A unit is one tile, or, where the tiles of a plane form a square, the pair of tiles
/// (r, c) and (c, r) (one tile on the diagonal): one block then reads both tiles of the pair, and `x + x.T` reads
/// each part of x from memory once. The printed kernel enumerates the same units.
/// With `wide` (KernelIR::transpose_tiles_wide) the tiles span kTransposeTileWide elements of the last axis and a
/// unit is always one tile.
std::int64_t transpose_tile_units(std::int64_t n, std::int64_t a, std::int64_t b, bool wide = false);

/// Whether the staged loads of `ir`, lowered for `args`, go through wide tiles (KernelIR::transpose_tiles_wide):
/// where the output's rows along the last axis do not start on kSectorBytes (some output's row is not a whole number
/// of sectors), the tiles of a plane are not square (no mirrored pairs to keep) and the wide tiles of the staged
/// loads fit kMaxTransposeTileBytes. Each tile row then writes 512 bytes of float32 instead of 256, and a row of the
/// output is split between fewer blocks, whose writes share its sectors at the splits. Measured on the H100
/// (2026-12-06, docs/results/2026-12-06c: permute_experiment.cu, a replica of the printed tiles): the (2, 1, 0)
/// permute of 255 x 1000 x 1001 float32 0.889 ms against 1.050 ms (77% of copy against 65%); with rows padded to
/// sectors the square tiles took 0.820 ms; on sector-aligned rows wide tiles gained nothing (256 x 1024 x 1024: 0.762
/// against 0.763 ms) or lost (rows of 1000: 0.764 against 0.698 ms). Chosen for the lowered shape; any launch of
/// the kernel enumerates the tiles it prints (transpose_tile_units with the flag).
bool choose_wide_transpose_tiles(const KernelIR& ir, const KernelArgs& args);

/// Facts of a kernel's IR that its launches need, found once per kernel (runtime/KernelCache.h) rather than at
/// every launch.
struct KernelLaunchFacts {
  /// Elementwise: launch only the resident blocks, each striding over the chunks, instead of a block per chunk. Set
  /// for kernels that read a view through index arithmetic, unless every such read is of a broadcast operand
  /// (reads_broadcast_operand), which streams like a contiguous kernel.
  bool resident_grid = false;
  std::int64_t row_cache_bytes_per_element = 0; ///< KernelIR::row_cache.bytes_per_element()
  /// The longest row the register path holds (KernelIR::register_row_vectors * kBlockSize * kElementsPerThread), with
  /// no dynamic shared memory; 0 without a register path. Such a kernel is launched only for rows of that length, or,
  /// with a partial last trip (KernelIR::register_row_partial), for rows of whole vectors ending inside that trip.
  std::int64_t register_row_elements = 0;
  bool register_row_partial = false;          ///< KernelIR::register_row_partial
  std::int64_t accumulators = 0;              ///< split kernels: one partial per accumulator
  std::int64_t partial_bytes = kPartialBytes; ///< split kernels: bytes of one partial (partial_bytes_of)
  /// Elementwise kernels with staged loads: the parameter slots of the tiles' two axes' extents, else -1.
  std::int32_t tile_axis_slot = -1, tile_last_slot = -1;
  bool tile_wide = false; ///< KernelIR::transpose_tiles_wide
};

/// Bytes of one partial of `ir`'s split reductions: kPartialBytes, or kWidePartialBytes when an accumulator's value
/// takes 16 bytes.
std::int64_t partial_bytes_of(const KernelIR& ir);

/// Whether Load `load` of an elementwise kernel reads an operand broadcast along some axis of the output (a bias row,
/// a per-row scale): its address and predicate are index arithmetic that reaches some of the coordinates the kernel's
/// own index unravels in, but not all of any one shape's, and neither the index itself nor a loaded value. Such an
/// operand is small and stays in the caches.
bool reads_broadcast_operand(const KernelIR& ir, std::size_t load);

/// Computes the facts of `ir`.
KernelLaunchFacts launch_facts(const KernelIR& ir);

/// How to launch one kernel: grid and block, dynamic shared memory, and for split schedules the sizes of its
/// partials and tickets (the arguments after the IR's parameters, see codegen/KernelAbi.h: three, four for scans).
struct LaunchShape {
  std::int64_t grid = 0; ///< blocks; may be 0 for an empty index space (launch at least one). Tiled scans: one per tile
  int block = kBlockSize;
  unsigned shared_bytes = 0;
  std::int64_t splits = 0;        ///< split schedules: blocks per outer element (rows) or per column tile
  std::int64_t partial_bytes = 0; ///< split schedules: scratch for the partials
  /// Split schedules: one counter per group, zero when the launch starts; the kernel leaves them zero (the CUDA
  /// executor keeps them in a zeroed buffer per stream). Tiled scans: per tile a status word (ScanGeometry::packed: 8
  /// bytes, its flag and value) or a status flag (4 bytes, the values in the partials: kScanStatusBytes per tile),
  /// each flag tagged with the launch's epoch (SplitArgs::epoch, at most kScanEpochLimit), so that what earlier
  /// launches left there reads as unpublished (the CUDA executor's Executor::tagged_tickets).
  std::int64_t ticket_bytes = 0;
  bool operator==(const LaunchShape&) const = default;
};

/// The launch of `ir` over `args` on a device with `caps` (resident_blocks_per_sm: this kernel's). Pure: the CUDA
/// executor launches exactly this, and the tests check it on the CPU for every schedule.
LaunchShape launch_shape(const KernelIR& ir, const KernelArgs& args, const DeviceCaps& caps,
                         const KernelLaunchFacts& facts);

} // namespace lazyfuse::codegen
