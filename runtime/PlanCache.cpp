#include "runtime/PlanCache.h"

#include "graph/Assert.h"
#include "graph/Hash.h"

#include <algorithm>

namespace lazyfuse::runtime {

namespace {

using graph::Node;
using graph::NodeKind;

// Each record of the signature starts with its kind (a node's in the top byte of its header word), so that no
// sequence of one kind of record reads as another.
enum class Record : std::uint64_t {
  Options,
  Leaf,
  Node,
  Roots,
};

// Room for `count` more words after the signature's last: the caller writes at most that many through the pointer
// and sets word_count past the last it wrote.
inline std::uint64_t* room(GraphSignature& sig, std::size_t count) {
  if (sig.buffer.size() < sig.word_count + count) [[unlikely]]
    sig.buffer.resize(std::max(2 * sig.buffer.size(), sig.word_count + count + 1024));
  return sig.buffer.data() + sig.word_count;
}

void advance(GraphSignature& sig, const std::uint64_t* end) {
  sig.word_count = std::size_t(end - sig.buffer.data());
}

// Lists of varying length are preceded by their length, so that two lists never run together.
std::uint64_t* add_shape(std::uint64_t* o, const Shape& s) {
  *o++ = s.size();
  for (auto d : s) *o++ = std::uint64_t(d);
  return o;
}

} // namespace

void compute_signature(const std::vector<graph::NodePtr>& roots, const fusion::PartitionOptions& options,
                       GraphSignature& out) {
  out.word_count = 0;
  out.nodes.clear();
  static std::uint64_t epochs = 0; // walks run one at a time, under the evaluation lock
  out.epoch = ++epochs;
  {
    std::uint64_t* o = room(out, 5);
    *o++ = std::uint64_t(Record::Options);
    *o++ = options.eager;
    *o++ = std::uint64_t(options.max_nodes);
    *o++ = std::uint64_t(options.max_inputs);
    *o++ = options.loops_for_repeated_steps;
    advance(out, o);
  }
  auto number = [&](Node* n) {
    n->walk_epoch = out.epoch;
    n->walk_id = int(out.nodes.size());
    out.nodes.push_back(n);
  };
  // Leaves reading the same buffer at the same offset share one kernel input: that pattern is structure.
  struct LeafKey {
    std::uint64_t serial;
    std::int64_t offset;
    int id;
  };
  // Kept between walks (under the evaluation lock) so that a walk allocates nothing once they have grown.
  static std::vector<LeafKey> leaves;
  static std::vector<std::pair<Node*, bool>> stack; // (node, sources pushed)
  leaves.clear();
  stack.clear();
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.emplace_back(it->get(), false);
  while (!stack.empty()) {
    auto [n, expanded] = stack.back();
    if (out.id_of(n) >= 0) {
      stack.pop_back();
      continue;
    }
    if (const graph::BufferView* buf = n->buffer_unlocked()) {
      stack.pop_back();
      const std::size_t item = itemsize(n->dtype);
      const void* first = static_cast<const char*>(buf->storage->data) + buf->offset * std::int64_t(item);
      int same = -1;
      for (auto& l : leaves)
        if (l.serial == buf->storage->serial && l.offset == buf->offset) same = l.id;
      std::uint64_t* o = room(out, 7 + 2 * n->shape.size());
      *o++ = std::uint64_t(Record::Leaf);
      *o++ = std::uint64_t(n->kind);
      *o++ = std::uint64_t(n->dtype);
      o = add_shape(o, n->shape);
      for (auto s : buf->strides) *o++ = std::uint64_t(s);
      // What lowering decides from the buffer itself, asked of lowering: whether it reads it in vectors, and
      // whether its allocation allows 32-bit indices.
      *o++ = std::uint64_t(codegen::alignment_class(first, n->dtype));
      *o++ = codegen::fits_index32(std::int64_t(buf->storage->bytes / item));
      *o++ = std::uint64_t(std::int64_t(same));
      advance(out, o);
      leaves.push_back({buf->storage->serial, buf->offset, int(out.nodes.size())});
      number(n);
      continue;
    }
    const auto& srcs = n->sources_unlocked();
    if (!expanded) {
      stack.back().second = true;
      for (auto it = srcs.rbegin(); it != srcs.rend(); ++it)
        if (out.id_of(it->get()) < 0) stack.emplace_back(it->get(), false);
      continue;
    }
    stack.pop_back();
    // One header word for what every node has and which of the rest it has (most have none of it), computed when
    // the node was built: the walk runs for every node of every plan-cache hit, and its words are hashed and
    // compared. A fill's value is a kernel argument.
    const std::uint64_t summary =
        n->kind == NodeKind::Fill ? n->summary & ~(Node::kHasIvalue | Node::kHasFvalue | Node::kHasFstep) : n->summary;
    const bool has_ivalue = summary & Node::kHasIvalue, has_fvalue = summary & Node::kHasFvalue,
               has_fstep = summary & Node::kHasFstep, has_shift = summary & Node::kHasShift;
    std::size_t words = 5 + n->shape.size() + srcs.size();
    if (summary & (Node::kHasAxes | Node::kHasRegion | Node::kHasReduceAxes))
      words += 3 + 3 * n->axes.size() + 3 * n->region.size() + n->reduce_axes.size();
    std::uint64_t* o = room(out, words);
    *o++ = std::uint64_t(Record::Node) << 56 | summary;
    for (auto d : n->shape) *o++ = std::uint64_t(d);
    if (has_ivalue) *o++ = std::uint64_t(n->ivalue);
    if (has_fvalue) *o++ = graph::bits_of(n->fvalue);
    if (has_fstep) *o++ = graph::bits_of(n->fstep);
    if (has_shift) *o++ = std::uint64_t(n->shift);
    if (summary & Node::kHasAxes) {
      *o++ = n->axes.size();
      for (auto& a : n->axes) {
        *o++ = std::uint64_t(std::int64_t(a.view_axis));
        *o++ = std::uint64_t(a.start);
        *o++ = std::uint64_t(a.step);
      }
    }
    if (summary & Node::kHasRegion) {
      *o++ = n->region.size();
      for (auto& r : n->region) {
        *o++ = std::uint64_t(r.start);
        *o++ = std::uint64_t(r.step);
        *o++ = std::uint64_t(r.count);
      }
    }
    if (summary & Node::kHasReduceAxes) {
      *o++ = n->reduce_axes.size();
      for (auto ax : n->reduce_axes) *o++ = std::uint64_t(ax);
    }
    for (auto& s : srcs) *o++ = std::uint64_t(out.id_of(s.get()));
    advance(out, o);
    number(n);
  }
  std::uint64_t* o = room(out, 1 + roots.size());
  *o++ = std::uint64_t(Record::Roots);
  for (auto& r : roots) *o++ = std::uint64_t(out.id_of(r.get()));
  advance(out, o);
  graph::FastHasher h; // a bucket index: find compares the words
  for (auto x : out.words()) h.add(x);
  out.hash = h.value();
}

bool record(const GraphSignature& sig, const fusion::KernelPlan& plan, const codegen::LoweredKernel& kernel,
            Recipe& recipe) {
  RecordedKernel rk;
  rk.shape = plan.shape;
  for (const Node* n : kernel.input_sources) {
    rk.input_ids.push_back(sig.id_of(n));
    if (rk.input_ids.back() < 0) return false;
  }
  for (auto& n : kernel.input_nodes) {
    rk.read_ids.push_back(sig.id_of(n.get()));
    if (rk.read_ids.back() < 0) return false;
  }
  for (std::size_t slot = 0; slot < kernel.scalar_sources.size(); ++slot) {
    if (!kernel.scalar_sources[slot]) continue;
    const int id = sig.id_of(kernel.scalar_sources[slot]);
    if (id < 0) return false;
    rk.scalars.emplace_back(slot, id);
  }
  for (auto& o : plan.outputs) {
    rk.output_ids.push_back(sig.id_of(o.get()));
    if (rk.output_ids.back() < 0) return false;
  }
  for (const auto& check : kernel.checks) {
    rk.check_ids.push_back(sig.id_of(check.index.get()));
    if (rk.check_ids.back() < 0) return false;
    rk.kernel.checks.push_back({nullptr, check.axis, check.size, check.covers_all}); // structure
  }
  rk.kernel.ir = kernel.ir;
  rk.kernel.args = kernel.args;
  recipe.bounds_checked = recipe.bounds_checked || codegen::has_bounds_checks(kernel.ir);
  recipe.kernels.push_back(std::move(rk));
  return true;
}

void bind(RecordedKernel& rk, const GraphSignature& sig, std::span<const graph::BufferView* const> pending) {
  auto& k = rk.kernel;
  for (std::size_t s = 0; s < rk.input_ids.size(); ++s) {
    const std::size_t id = std::size_t(rk.input_ids[s]);
    const Node* n = sig.nodes[id];
    const graph::BufferView* buf = n->buffer_unlocked();
    if (!buf && id < pending.size()) buf = pending[id];
    LAZYFUSE_ASSERT(buf != nullptr, "plan cache: an input of a replayed kernel is not materialized");
    k.args.inputs[s] = static_cast<const char*>(buf->storage->data) + buf->offset * std::int64_t(itemsize(n->dtype));
  }
  k.input_nodes.clear();
  for (int id : rk.read_ids) k.input_nodes.emplace_back(sig.nodes[std::size_t(id)]);
  for (auto [slot, id] : rk.scalars) {
    const Node* fill = sig.nodes[std::size_t(id)];
    k.args.params[slot] = {fill->ivalue, fill->fvalue, fill->fimag};
  }
  for (std::size_t c = 0; c < rk.check_ids.size(); ++c)
    k.checks[c].index = graph::NodePtr(sig.nodes[std::size_t(rk.check_ids[c])]);
}

std::shared_ptr<Recipe> PlanCache::find(const GraphSignature& sig) {
  auto [b, e] = entries_.equal_range(sig.hash);
  for (auto it = b; it != e; ++it)
    if (std::ranges::equal(it->second.words, sig.words())) return it->second.recipe;
  return nullptr;
}

void PlanCache::insert(const GraphSignature& sig, Recipe recipe) {
  // Bounded: a program that never repeats a graph must not grow the cache without end.
  constexpr std::size_t kMaxEntries = 1024;
  if (entries_.size() >= kMaxEntries) entries_.clear();
  const auto words = sig.words();
  entries_.emplace(sig.hash, Entry{{words.begin(), words.end()}, std::make_shared<Recipe>(std::move(recipe))});
}

void PlanCache::clear() {
  entries_.clear();
}

PlanCache& plan_cache() {
  static auto* c = new PlanCache; // used under the evaluation lock; outlives static destruction
  return *c;
}

} // namespace lazyfuse::runtime
