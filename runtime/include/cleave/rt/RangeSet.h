//===- RangeSet.h - A set of byte ranges, kept coalesced --------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). The validity of a buffer replica: a set
// of half-open byte ranges [Lo, Hi) kept disjoint and non-adjacent (inserting
// [0,4) and [4,8) leaves one range [0,8)), so the number of ranges stays the
// number of distinct pieces and two sets with the same bytes compare equal.
// The ranges are a sorted vector: queries are O(log n + k) for k ranges
// touched; inserting or erasing one range is O(log n) at the end of the set
// and moves the ranges after it otherwise; the operations on whole sets
// (insert, erase, intersection) are linear merges, O(n + m).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_RANGESET_H
#define CLEAVE_RT_RANGESET_H

#include <cstdint>
#include <string>
#include <vector>

namespace cleave {
namespace rt {

/// The bytes [Lo, Hi); empty when Lo >= Hi.
struct ByteRange {
  uint64_t Lo = 0;
  uint64_t Hi = 0;

  bool empty() const { return Lo >= Hi; }
  uint64_t size() const { return empty() ? 0 : Hi - Lo; }
  bool operator==(const ByteRange &O) const {
    return Lo == O.Lo && Hi == O.Hi;
  }
  bool operator!=(const ByteRange &O) const { return !(*this == O); }
};

class RangeSet {
public:
  RangeSet() = default;
  /// The set holding [Lo, Hi).
  RangeSet(uint64_t Lo, uint64_t Hi) { insert(Lo, Hi); }

  /// Adds [Lo, Hi), merging with every range it overlaps or touches.
  void insert(uint64_t Lo, uint64_t Hi);
  void insert(ByteRange R) { insert(R.Lo, R.Hi); }
  void insert(const RangeSet &Other);
  /// Adds ranges given in increasing order of Lo (they may touch or
  /// overlap); linear when the set is empty or they all come after it.
  void insertSorted(const std::vector<ByteRange> &Sorted);
  /// Removes [Lo, Hi), splitting a range that contains it.
  void erase(uint64_t Lo, uint64_t Hi);
  void erase(ByteRange R) { erase(R.Lo, R.Hi); }
  void erase(const RangeSet &Other);
  void clear() { Ranges.clear(); }

  /// Whether every byte of [Lo, Hi) is in the set (true for an empty range).
  bool contains(uint64_t Lo, uint64_t Hi) const;
  bool contains(uint64_t Byte) const { return contains(Byte, Byte + 1); }
  /// Whether some byte of [Lo, Hi) is in the set.
  bool intersects(uint64_t Lo, uint64_t Hi) const;

  /// The parts of [Lo, Hi) in the set, in order.
  std::vector<ByteRange> intersection(uint64_t Lo, uint64_t Hi) const;
  RangeSet intersection(const RangeSet &Other) const;
  /// The parts of [Lo, Hi) not in the set, in order: what is missing.
  std::vector<ByteRange> gaps(uint64_t Lo, uint64_t Hi) const;

  bool empty() const { return Ranges.empty(); }
  /// The number of disjoint ranges.
  size_t numRanges() const { return Ranges.size(); }
  /// The number of bytes in the set.
  uint64_t totalBytes() const;
  /// Every range, in order.
  std::vector<ByteRange> ranges() const;
  /// "{[0,8) [16,32)}", for messages and test failures.
  std::string toString() const;

  bool operator==(const RangeSet &O) const { return Ranges == O.Ranges; }
  bool operator!=(const RangeSet &O) const { return !(*this == O); }

private:
  /// Sorted, disjoint and non-adjacent.
  std::vector<ByteRange> Ranges;
  /// The index of the first range ending after \p Lo (ending at or after it
  /// with \p Touching).
  size_t firstEndingAfter(uint64_t Lo, bool Touching) const;
};

} // namespace rt
} // namespace cleave

#endif
