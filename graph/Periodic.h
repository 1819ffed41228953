// Periodic stretches of a sequence: the steps of a time loop recorded without eval() repeat one pattern of nodes
// (and, lowered, of kernel instructions) hundreds of times. The partitioner counts such a stretch as one copy of its
// pattern (fusion/Partition.cpp) and the CUDA printer prints it as a loop (codegen/Reroll.h), so a 1,000-step loop is
// one kernel that NVRTC compiles as fast as a one-step kernel.
#pragma once

#include "graph/FlatTable.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lazyfuse::graph {

/// Items [start, start + period * count) of a sequence: `count` copies of the first `period` items.
struct PeriodicRun {
  int start = 0, period = 0, count = 0;
  /// The items a loop over the copies saves: all but one copy.
  int saved() const { return (count - 1) * period; }
  bool operator==(const PeriodicRun&) const = default;
};

/// The longest periodic stretch of a sequence of `size` items with at least `min_count` copies of a period of at most
/// `max_period` items, or a run of count 0 when there is none. `signature(i)` is a cheap summary of item i that equal
/// items share (their operation, say); `repeats(i, p)` says whether item i + p is item i one copy later (the same
/// operation reading the same outside items, or the items p later). Deterministic: ties go to the earlier start,
/// then the shorter period.
///
/// Cost: one pass over the items, then one pass per candidate period. Candidates are the distances between equal
/// signatures that occur at least min_count - 1 times, at most `max_candidates` of them (the most frequent first), so a
/// kernel without repeats costs one pass.
template <class Signature, class Repeats>
PeriodicRun longest_periodic_run(int size, int max_period, int min_count, Signature&& signature, Repeats&& repeats,
                                 int max_candidates = 4) {
  PeriodicRun best;
  if (size < 2 * min_count || max_period < 1 || min_count < 2) return best;
  // Distance from each item to the last earlier item with its signature, counted per distance.
  struct Last {
    std::uint64_t signature = 0;
    int item = -1; // -1: the table's empty slot
    bool operator==(const Last&) const = default;
  };
  FlatTable<Last> last;
  std::vector<int> distances(std::size_t(max_period) + 1, 0);
  for (int i = 0; i < size; ++i) {
    const std::uint64_t sig = signature(i);
    // Signatures may differ only in high bits; the table places entries by the low ones.
    const std::uint64_t hash = (sig ^ (sig >> 29)) * 0x9E3779B97F4A7C15ull;
    bool fresh = false;
    Last& entry = last.find_or_insert(
        hash >> 16 | hash << 48, [sig](const Last& e) { return e.signature == sig; },
        [&] {
          fresh = true;
          return Last{sig, i};
        });
    if (!fresh) {
      const int d = i - entry.item;
      if (d <= max_period) ++distances[std::size_t(d)];
      entry.item = i;
    }
  }
  std::vector<int> candidates;
  for (int p = 1; p <= max_period; ++p)
    if (distances[std::size_t(p)] >= min_count - 1) candidates.push_back(p);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int a, int b) { return distances[std::size_t(a)] > distances[std::size_t(b)]; });
  if (int(candidates.size()) > max_candidates) candidates.resize(std::size_t(max_candidates));
  std::sort(candidates.begin(), candidates.end());
  for (int p : candidates) {
    // A streak of items i with repeats(i, p) over [a, a + len) makes [a, a + len + p) periodic.
    int streak = 0;
    for (int i = 0; i + p <= size; ++i) {
      const bool more = i + p < size && repeats(i, p);
      if (more) {
        ++streak;
        continue;
      }
      const int count = (streak + p) / p;
      const PeriodicRun run{i - streak, p, count};
      if (count >= min_count && (run.saved() > best.saved() || (run.saved() == best.saved() && run.start < best.start)))
        best = run;
      streak = 0;
    }
  }
  return best;
}

} // namespace lazyfuse::graph
