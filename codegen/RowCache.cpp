#include "codegen/RowCache.h"

#include <algorithm>
#include <string>
#include <utility>

namespace lazyfuse::codegen {

namespace {

// Equal keys: equal values at the same r. Instructions outside the loop are themselves; pure ops inside it are
// keyed by their operands, so that two loops' equal expressions (over their own r) get one key.
std::string loop_key(const KernelIR& ir, const RowLoop& L, int id) {
  const Instr& in = ir.code[std::size_t(id)];
  // Parameters and constants are declared once for the whole kernel wherever they first appear.
  const bool everywhere = in.op == IrOp::IndexParam || in.op == IrOp::ScalarParam || in.op == IrOp::IndexConst;
  if (everywhere || std::size_t(id) <= L.begin || std::size_t(id) >= L.end) return "#" + std::to_string(id);
  std::string k = std::to_string(int(in.op)) + "." + std::to_string(int(in.dtype)) + "." + std::to_string(in.fn) + "." +
                  std::to_string(in.slot) + "." + std::to_string(in.imm) + "(";
  for (int a : {in.a, in.b, in.c})
    if (a >= 0) k += (std::size_t(a) == L.begin ? std::string("r") : loop_key(ir, L, a)) + ",";
  return k + ")";
}

} // namespace

RowCache plan_row_cache(const KernelIR& ir) {
  RowCache rc;
  if (ir.schedule != Schedule::Row && ir.schedule != Schedule::Split) return rc;
  auto& loops = rc.loops;
  // A gathered address (computed from a loaded value) is printed in order with the values, never ahead of them.
  const std::vector<bool> dependent = data_dependent_indices(ir);
  for (std::size_t k = 0; k < ir.code.size(); ++k) {
    if (ir.code[k].op != IrOp::LoopBegin) continue;
    RowLoop L;
    L.begin = k;
    L.varies.assign(ir.code.size(), false);
    L.base.assign(ir.code.size(), -1);
    L.reads.assign(ir.code.size(), -1);
    L.writes.assign(ir.code.size(), -1);
    L.live.assign(ir.code.size(), true);
    L.varies[k] = true;
    for (L.end = k + 1; L.end < ir.code.size(); ++L.end) {
      const Instr& in = ir.code[L.end];
      if (in.op == IrOp::LoopEnd && in.slot == ir.code[k].slot) break;
      for (int a : {in.a, in.b, in.c})
        if (a >= 0 && L.varies[std::size_t(a)]) L.varies[L.end] = true;
    }
    const int r = int(k);
    auto contiguous_base = [&](int addr) {
      if (addr == r) return RowLoop::kNoBase;
      const Instr& a = ir.code[std::size_t(addr)];
      if (a.op != IrOp::IAdd) return -1;
      if (a.b == r && !L.varies[std::size_t(a.a)] && !dependent[std::size_t(a.a)]) return a.a;
      if (a.a == r && !L.varies[std::size_t(a.b)] && !dependent[std::size_t(a.b)]) return a.b;
      return -1;
    };
    for (std::size_t b = k + 1; b < L.end; ++b) {
      const Instr& in = ir.code[b];
      if ((in.op == IrOp::Load && in.b < 0) || in.op == IrOp::StoreAt) L.base[b] = contiguous_base(in.a);
      L.vector = L.vector || L.base[b] != -1;
    }
    loops.push_back(std::move(L));
  }
  // A split kernel's loops are independent and each walks a row over several blocks: vector paths, no cache.
  if (ir.schedule == Schedule::Split) return rc;
  // A value is cached when a later loop needs it and an earlier one with a vector path computed it: the earliest
  // such loop stores it (it computes it there itself: its operands appear no earlier). Values of the element type
  // only (loads and arithmetic; not index arithmetic), and only the largest ones a loop needs.
  std::vector<std::pair<std::string, std::size_t>> first;      // key -> loop that computes it first
  std::vector<std::pair<std::size_t, std::size_t>> group_life; // per group: (writing loop, last reading loop)
  std::vector<std::pair<std::string, int>> groups;             // key -> group
  auto is_value = [&](const Instr& in) {
    return in.op == IrOp::Load || in.op == IrOp::LoadLinear || in.op == IrOp::Unary || in.op == IrOp::Binary ||
           in.op == IrOp::Cast || in.op == IrOp::Select;
  };
  for (std::size_t l = 0; l < loops.size(); ++l) {
    RowLoop& L = loops[l];
    std::vector<std::string> keys(ir.code.size());
    std::vector<int> from(ir.code.size(), -1); // the earlier loop computing the same value
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      if (!L.varies[b] || !is_value(ir.code[b])) continue;
      keys[b] = loop_key(ir, L, int(b));
      for (auto& [key, loop] : first)
        if (key == keys[b] && loops[loop].vector) from[b] = int(loop);
    }
    // Live in the cached version: walk back from the loop's effects; a value from the cache needs no operands.
    std::vector<bool> live(ir.code.size(), false);
    for (std::size_t b = L.end; b-- > L.begin + 1;) {
      const Instr& in = ir.code[b];
      if (in.op == IrOp::Accumulate || in.op == IrOp::StoreAt) live[b] = true;
      if (!live[b] || from[b] >= 0) continue;
      for (int a : {in.a, in.b, in.c})
        if (a > int(L.begin) && std::size_t(a) < L.end) live[std::size_t(a)] = true;
    }
    for (std::size_t b = L.begin + 1; b < L.end; ++b) {
      if (!L.varies[b]) continue; // hoisted (index arithmetic) or invariant: printed as before
      L.live[b] = live[b];
      if (!live[b] || from[b] < 0) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == keys[b]; });
      if (it == groups.end()) {
        it = groups.insert(groups.end(), {keys[b], int(group_life.size())});
        group_life.push_back({std::size_t(from[b]), l});
        // The writing loop's instruction with this key.
        RowLoop& W = loops[std::size_t(from[b])];
        for (std::size_t w = W.begin + 1; w < W.end; ++w)
          if (W.varies[w] && is_value(ir.code[w]) && loop_key(ir, W, int(w)) == keys[b]) {
            W.writes[w] = it->second;
            break;
          }
      }
      group_life[std::size_t(it->second)].second = l;
      L.reads[b] = it->second;
      L.reads_cache = true;
      L.vector = true;
    }
    for (std::size_t b = L.begin + 1; b < L.end; ++b)
      if (L.varies[b] && is_value(ir.code[b]) &&
          std::find_if(first.begin(), first.end(), [&](auto& f) { return f.first == keys[b]; }) == first.end())
        first.push_back({keys[b], l});
  }
  // Regions: a group may take the region of one whose last reader is its writer (each thread reads its elements
  // there before it stores the new ones) or earlier.
  std::vector<std::size_t> region_free_after;
  for (std::size_t g = 0; g < group_life.size(); ++g) {
    DType t = DType::Float32;
    for (auto& L : loops)
      for (std::size_t b = L.begin + 1; b < L.end; ++b)
        if (L.writes[b] == int(g)) t = ir.code[b].dtype;
    int region = -1;
    for (std::size_t q = 0; q < rc.region_type.size() && region < 0; ++q)
      if (itemsize(rc.region_type[q]) == itemsize(t) && region_free_after[q] <= group_life[g].first) region = int(q);
    if (region < 0) {
      region = int(rc.region_type.size());
      rc.region_type.push_back(t);
      region_free_after.push_back(0);
    }
    region_free_after[std::size_t(region)] = group_life[g].second;
    rc.region.push_back(region);
  }
  return rc;
}

} // namespace lazyfuse::codegen
