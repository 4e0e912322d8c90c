//===- RangeSet.cpp - A set of byte ranges, kept coalesced ----------------===//
//
// Part of Cleave's runtime (no LLVM).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/RangeSet.h"

#include <algorithm>

namespace cleave {
namespace rt {

void RangeSet::insert(uint64_t Lo, uint64_t Hi) {
  if (Lo >= Hi)
    return;
  // The first range that could touch [Lo, Hi) is the last one starting at or
  // before Lo (it may end at or after Lo), else the first starting after Lo.
  auto It = Ranges.upper_bound(Lo);
  if (It != Ranges.begin()) {
    auto Prev = std::prev(It);
    if (Prev->second >= Lo)
      It = Prev;
  }
  // Absorb every range that overlaps or touches [Lo, Hi).
  while (It != Ranges.end() && It->first <= Hi) {
    Lo = std::min(Lo, It->first);
    Hi = std::max(Hi, It->second);
    It = Ranges.erase(It);
  }
  Ranges.emplace_hint(It, Lo, Hi);
}

void RangeSet::insert(const RangeSet &Other) {
  if (Ranges.empty()) {
    Ranges = Other.Ranges;
    return;
  }
  for (const auto &[Lo, Hi] : Other.Ranges)
    insert(Lo, Hi);
}

void RangeSet::insertSorted(const std::vector<ByteRange> &Sorted) {
  for (ByteRange R : Sorted) {
    if (R.Lo >= R.Hi)
      continue;
    // Past everything so far: append (or extend the last range) in O(1).
    if (Ranges.empty() || R.Lo > std::prev(Ranges.end())->second) {
      Ranges.emplace_hint(Ranges.end(), R.Lo, R.Hi);
      continue;
    }
    auto Last = std::prev(Ranges.end());
    if (R.Lo >= Last->first) {
      Last->second = std::max(Last->second, R.Hi);
      continue;
    }
    insert(R.Lo, R.Hi);
  }
}

void RangeSet::erase(uint64_t Lo, uint64_t Hi) {
  if (Lo >= Hi)
    return;
  auto It = Ranges.upper_bound(Lo);
  if (It != Ranges.begin()) {
    auto Prev = std::prev(It);
    if (Prev->second > Lo) {
      // Prev starts at or before Lo and reaches into [Lo, Hi): keep its head
      // (if any), and its tail when it also extends past Hi.
      uint64_t PrevLo = Prev->first, PrevHi = Prev->second;
      if (PrevLo < Lo)
        Prev->second = Lo;
      else
        Ranges.erase(Prev);
      if (PrevHi > Hi) {
        Ranges.emplace_hint(It, Hi, PrevHi);
        return;
      }
    }
  }
  while (It != Ranges.end() && It->first < Hi) {
    uint64_t RHi = It->second;
    It = Ranges.erase(It);
    if (RHi > Hi) {
      Ranges.emplace_hint(It, Hi, RHi);
      return;
    }
  }
}

void RangeSet::erase(const RangeSet &Other) {
  for (const auto &[Lo, Hi] : Other.Ranges)
    erase(Lo, Hi);
}

bool RangeSet::contains(uint64_t Lo, uint64_t Hi) const {
  if (Lo >= Hi)
    return true;
  auto It = Ranges.upper_bound(Lo);
  if (It == Ranges.begin())
    return false;
  --It;
  // Ranges are coalesced, so [Lo, Hi) is covered only by a single range.
  return It->first <= Lo && It->second >= Hi;
}

bool RangeSet::intersects(uint64_t Lo, uint64_t Hi) const {
  if (Lo >= Hi)
    return false;
  auto It = Ranges.upper_bound(Lo);
  if (It != Ranges.begin() && std::prev(It)->second > Lo)
    return true;
  return It != Ranges.end() && It->first < Hi;
}

std::vector<ByteRange> RangeSet::intersection(uint64_t Lo, uint64_t Hi) const {
  std::vector<ByteRange> Out;
  if (Lo >= Hi)
    return Out;
  auto It = Ranges.upper_bound(Lo);
  if (It != Ranges.begin() && std::prev(It)->second > Lo)
    --It;
  for (; It != Ranges.end() && It->first < Hi; ++It)
    Out.push_back({std::max(Lo, It->first), std::min(Hi, It->second)});
  return Out;
}

RangeSet RangeSet::intersection(const RangeSet &Other) const {
  RangeSet Out;
  for (const auto &[Lo, Hi] : Other.Ranges)
    for (ByteRange R : intersection(Lo, Hi))
      Out.Ranges.emplace_hint(Out.Ranges.end(), R.Lo, R.Hi);
  return Out;
}

std::vector<ByteRange> RangeSet::gaps(uint64_t Lo, uint64_t Hi) const {
  std::vector<ByteRange> Out;
  uint64_t Cur = Lo;
  for (ByteRange R : intersection(Lo, Hi)) {
    if (R.Lo > Cur)
      Out.push_back({Cur, R.Lo});
    Cur = R.Hi;
  }
  if (Cur < Hi)
    Out.push_back({Cur, Hi});
  return Out;
}

uint64_t RangeSet::totalBytes() const {
  uint64_t N = 0;
  for (const auto &[Lo, Hi] : Ranges)
    N += Hi - Lo;
  return N;
}

std::vector<ByteRange> RangeSet::ranges() const {
  std::vector<ByteRange> Out;
  Out.reserve(Ranges.size());
  for (const auto &[Lo, Hi] : Ranges)
    Out.push_back({Lo, Hi});
  return Out;
}

std::string RangeSet::toString() const {
  std::string S = "{";
  for (const auto &[Lo, Hi] : Ranges) {
    if (S.size() > 1)
      S += ' ';
    S += '[' + std::to_string(Lo) + ',' + std::to_string(Hi) + ')';
  }
  return S + '}';
}

} // namespace rt
} // namespace cleave
