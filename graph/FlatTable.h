// FlatTable: the one open-addressing hash table of the host paths that run on every call (interning a node,
// lowering a plan), where std::unordered_map's node allocations and pointer chasing cost more than the work.
#pragma once

#include "graph/Assert.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lazyfuse::graph {

/// A hash table of small, trivially copyable entries stored in one array: linear probing, a power-of-two capacity
/// of at least 64 slots, at most half full. Each slot keeps its entry's hash, so growing and erasing never ask for
/// it again and probes compare hashes before calling the caller's `match`.
///
/// The table knows nothing of keys: the caller passes the hash it computed and a predicate that recognizes the
/// entry it wants. Several entries may match one lookup (lowering's CSE table keeps equal instructions of other
/// loops); a lookup returns the first along the probe sequence, which is the oldest one inserted.
///
/// `kEmpty` marks a free slot and must never be inserted. Erasing shifts the entries after the hole back instead of
/// leaving tombstones, so a loop that inserts and erases the same few entries keeps the table as it was (with
/// tombstones it had to rehash every other call). Entries move on insert and erase: pointers and references into
/// the table are valid until the next change. Not thread-safe; the hash decides only where an entry sits, never
/// which entry is found, so pointer-derived hashes keep the results deterministic.
template <class Entry, Entry kEmpty = Entry{}> class FlatTable {
public:
  /// The number of entries.
  std::size_t size() const { return size_; }

  /// The first entry along `hash`'s probe sequence that `match(entry)` accepts, or null.
  template <class Match> const Entry* find(std::uint64_t hash, Match&& match) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = hash & mask(); !(slots_[i].entry == kEmpty); i = next(i))
      if (slots_[i].hash == hash && match(slots_[i].entry)) return &slots_[i].entry;
    return nullptr;
  }

  /// Adds `entry`, also when an equal one is present (lookups find the older one first).
  void insert(std::uint64_t hash, const Entry& entry) {
    LAZYFUSE_ASSERT(!(entry == kEmpty), "FlatTable::insert of the empty marker");
    reserve_one();
    std::size_t i = hash & mask();
    while (!(slots_[i].entry == kEmpty)) i = next(i);
    slots_[i] = {hash, entry};
    ++size_;
  }

  /// The first entry along `hash`'s probe sequence that `match` accepts; when there is none, inserts `make()` (which
  /// must not return kEmpty) and returns it. One probe either way. The reference is valid until the next change.
  template <class Match, class Make> Entry& find_or_insert(std::uint64_t hash, Match&& match, Make&& make) {
    reserve_one();
    std::size_t i = hash & mask();
    for (; !(slots_[i].entry == kEmpty); i = next(i))
      if (slots_[i].hash == hash && match(slots_[i].entry)) return slots_[i].entry;
    slots_[i] = {hash, make()};
    LAZYFUSE_ASSERT(!(slots_[i].entry == kEmpty), "FlatTable::find_or_insert made the empty marker");
    ++size_;
    return slots_[i].entry;
  }

  /// Removes the first entry along `hash`'s probe sequence that `match` accepts; false when there is none.
  template <class Match> bool erase(std::uint64_t hash, Match&& match) {
    if (slots_.empty()) return false;
    std::size_t hole = hash & mask();
    for (;; hole = next(hole)) {
      if (slots_[hole].entry == kEmpty) return false;
      if (slots_[hole].hash == hash && match(slots_[hole].entry)) break;
    }
    // Entries after the hole up to the next free slot move into it unless their home slot lies cyclically in
    // (hole, j]: then the probe from their home still reaches them without passing the hole.
    for (std::size_t j = next(hole); !(slots_[j].entry == kEmpty); j = next(j)) {
      const std::size_t home = slots_[j].hash & mask();
      const bool reachable = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!reachable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

private:
  struct Slot {
    std::uint64_t hash = 0;
    Entry entry = kEmpty;
  };
  static constexpr std::size_t kMinCapacity = 64;

  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t next(std::size_t i) const { return (i + 1) & mask(); }

  // Keeps the table at most half full after one more insert. Growing to four times the entries (not twice the
  // capacity) leaves room for the next few growths of a table that fills up from empty on every lowering.
  void reserve_one() {
    if ((size_ + 1) * 2 <= slots_.size()) return;
    std::size_t capacity = kMinCapacity;
    while (capacity < (size_ + 1) * 4) capacity *= 2;
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.entry == kEmpty) continue;
      std::size_t i = s.hash & mask();
      while (!(slots_[i].entry == kEmpty)) i = next(i);
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

} // namespace lazyfuse::graph
