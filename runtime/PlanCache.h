// The plan cache: a materialization of a graph equal to one seen before reuses its kernel plans and lowered
// kernels, skipping partitioning and lowering. This is the fast path of a loop that rebuilds the same expression
// every iteration (tiny arrays, where the host's work is the whole cost).
//
// Two graphs are equal when partitioning and lowering cannot tell them apart: the same nodes (kind, dtype, op,
// shape, view arguments) wired the same way, over leaves of the same dtype, shape and strides, with the same
// alignment class (codegen::alignment_class), the same index-width class (codegen::fits_index32) and the same pattern
// of leaves sharing a buffer, under the same partitioning options. The classes are lowering's own functions, so a
// change in lowering's rules changes the signature with it. Only buffer addresses and the values of Fill nodes
// (scalars) may differ; lowering makes those kernel arguments (LoweredKernel::input_sources, scalar_sources), which a
// replay substitutes.
#pragma once

#include "codegen/Lower.h"
#include "fusion/Partition.h"
#include "runtime/Executor.h"

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

namespace lazyfuse::runtime {

/// The equality key of a graph, and its unmaterialized and leaf nodes numbered in a fixed (post-)order.
struct GraphSignature {
  /// Everything equality compares.
  std::span<const std::uint64_t> words() const { return {buffer.data(), word_count}; }
  std::uint64_t hash = 0;
  std::vector<graph::Node*> nodes; // by id
  std::uint64_t epoch = 0;         // of the walk that numbered them (Node::walk_epoch)

  /// The id of `n`, or -1 when the walk did not reach it.
  int id_of(const graph::Node* n) const { return n->walk_epoch == epoch ? n->walk_id : -1; }

  // The words are written through a pointer into storage that only grows (std::vector's push_back reloads and
  // stores its end for every word: the walk runs for every node of every plan-cache hit).
  std::vector<std::uint64_t> buffer;
  std::size_t word_count = 0;
};

/// Walks the graph of `roots` (stopping at materialized nodes) into `out` (whose buffers are reused). Runs under
/// the runtime's evaluation lock, like partitioning.
void compute_signature(const std::vector<graph::NodePtr>& roots, const fusion::PartitionOptions& options,
                       GraphSignature& out);

/// One recorded kernel: the lowered kernel of the first graph, and where each varying argument comes from.
struct RecordedKernel {
  codegen::LoweredKernel kernel; // its input_nodes, input_sources, scalar_sources and checks' index arrays cleared
  Shape shape;                   // of each output
  std::vector<int> input_ids;    // per input slot: the node whose buffer it reads
  std::vector<int> read_ids;     // the nodes whose buffers the kernel reads (LoweredKernel::input_nodes)
  std::vector<std::pair<std::size_t, int>> scalars; // (parameter slot, Fill node)
  std::vector<int> output_ids;                      // the nodes the outputs are attached to
  std::vector<int> check_ids; // per bounds check: the index array it names in an IndexError (LoweredKernel::checks)
};

/// The kernels of one materialization, in run order.
struct Recipe {
  std::vector<RecordedKernel> kernels;
  bool bounds_checked = false; // a kernel checks gather indices: each such launch may have to be waited for
  std::unique_ptr<ReplayState> replay_state; // the backend's, between replays (Executor::run_replay)
};

/// Records `kernel` (lowered from `plan` of the graph `sig` describes). False when a varying argument comes from
/// a node the signature does not number (the graph is then not cached).
bool record(const GraphSignature& sig, const fusion::KernelPlan& plan, const codegen::LoweredKernel& kernel,
            Recipe& recipe);

/// Fills `rk.kernel`'s arguments for the graph of `sig` (an equal graph). An input node without a buffer takes
/// `pending[id]` (by signature id): an output of an earlier kernel of the same replay, allocated but not attached.
void bind(RecordedKernel& rk, const GraphSignature& sig, std::span<const graph::BufferView* const> pending = {});

/// Process-wide map from signatures to recipes (bounded; used under the evaluation lock).
class PlanCache {
public:
  /// The recipe of a graph equal to `sig`'s, or null. Shared: a replay keeps it while a materialization nested in
  /// it (an IndexError's reading of its index array) inserts into the cache, which may clear it.
  std::shared_ptr<Recipe> find(const GraphSignature& sig);
  void insert(const GraphSignature& sig, Recipe recipe);
  void clear();

private:
  struct Entry {
    std::vector<std::uint64_t> words;
    std::shared_ptr<Recipe> recipe;
  };
  std::unordered_multimap<std::uint64_t, Entry> entries_;
};

PlanCache& plan_cache();

} // namespace lazyfuse::runtime
