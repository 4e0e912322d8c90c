//===- RangeSet.cpp - A set of byte ranges, kept coalesced ----------------===//
//
// Part of Cleave's runtime (no LLVM).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/RangeSet.h"

#include <algorithm>

namespace cleave {
namespace rt {

namespace {

/// Below this many ranges in the other set, whole-set operations go range
/// by range (binary searches) instead of merging both sets.
constexpr size_t MergeThreshold = 8;

/// Appends [Lo, Hi) to sorted \p Out, merging with its last range when they
/// overlap or touch (Lo must not be below the last range's Lo).
void appendCoalesced(std::vector<ByteRange> &Out, uint64_t Lo, uint64_t Hi) {
  if (Lo >= Hi)
    return;
  if (!Out.empty() && Lo <= Out.back().Hi) {
    Out.back().Hi = std::max(Out.back().Hi, Hi);
    return;
  }
  Out.push_back({Lo, Hi});
}

} // namespace

size_t RangeSet::firstEndingAfter(uint64_t Lo, bool Touching) const {
  auto It = std::partition_point(
      Ranges.begin(), Ranges.end(), [&](const ByteRange &R) {
        return Touching ? R.Hi < Lo : R.Hi <= Lo;
      });
  return size_t(It - Ranges.begin());
}

void RangeSet::insert(uint64_t Lo, uint64_t Hi) {
  if (Lo >= Hi)
    return;
  if (Ranges.empty() || Lo > Ranges.back().Hi) {
    Ranges.push_back({Lo, Hi});
    return;
  }
  // Absorb every range that overlaps or touches [Lo, Hi).
  size_t I = firstEndingAfter(Lo, /*Touching=*/true), J = I;
  while (J < Ranges.size() && Ranges[J].Lo <= Hi) {
    Lo = std::min(Lo, Ranges[J].Lo);
    Hi = std::max(Hi, Ranges[J].Hi);
    ++J;
  }
  if (I == J) {
    Ranges.insert(Ranges.begin() + I, {Lo, Hi});
    return;
  }
  Ranges[I] = {Lo, Hi};
  Ranges.erase(Ranges.begin() + I + 1, Ranges.begin() + J);
}

void RangeSet::insert(const RangeSet &Other) {
  if (Ranges.empty()) {
    Ranges = Other.Ranges;
    return;
  }
  if (Other.Ranges.size() < MergeThreshold) {
    for (ByteRange R : Other.Ranges)
      insert(R.Lo, R.Hi);
    return;
  }
  std::vector<ByteRange> Out;
  Out.reserve(Ranges.size() + Other.Ranges.size());
  size_t I = 0, J = 0;
  while (I < Ranges.size() || J < Other.Ranges.size()) {
    bool Mine = J == Other.Ranges.size() ||
                (I < Ranges.size() && Ranges[I].Lo <= Other.Ranges[J].Lo);
    const ByteRange &R = Mine ? Ranges[I++] : Other.Ranges[J++];
    appendCoalesced(Out, R.Lo, R.Hi);
  }
  Ranges = std::move(Out);
}

void RangeSet::insertSorted(const std::vector<ByteRange> &Sorted) {
  // Past everything so far (the common case: a set being built): append.
  if (Ranges.empty() || Sorted.empty() || Sorted.front().Lo >= Ranges.back().Lo) {
    for (ByteRange R : Sorted)
      appendCoalesced(Ranges, R.Lo, R.Hi);
    return;
  }
  RangeSet Add;
  for (ByteRange R : Sorted)
    appendCoalesced(Add.Ranges, R.Lo, R.Hi);
  insert(Add);
}

void RangeSet::erase(uint64_t Lo, uint64_t Hi) {
  if (Lo >= Hi)
    return;
  size_t I = firstEndingAfter(Lo, /*Touching=*/false);
  if (I == Ranges.size() || Ranges[I].Lo >= Hi)
    return;
  size_t J = I;
  while (J < Ranges.size() && Ranges[J].Lo < Hi)
    ++J;
  // [I, J) meet [Lo, Hi): keep the head of the first and the tail of the
  // last.
  ByteRange Keep[2];
  size_t NumKeep = 0;
  if (Ranges[I].Lo < Lo)
    Keep[NumKeep++] = {Ranges[I].Lo, Lo};
  if (Ranges[J - 1].Hi > Hi)
    Keep[NumKeep++] = {Hi, Ranges[J - 1].Hi};
  size_t Old = J - I;
  if (NumKeep > Old) { // one range split in two
    Ranges[I] = Keep[0];
    Ranges.insert(Ranges.begin() + I + 1, Keep[1]);
    return;
  }
  for (size_t K = 0; K < NumKeep; ++K)
    Ranges[I + K] = Keep[K];
  Ranges.erase(Ranges.begin() + I + NumKeep, Ranges.begin() + J);
}

void RangeSet::erase(const RangeSet &Other) {
  if (Other.Ranges.size() < MergeThreshold) {
    for (ByteRange R : Other.Ranges)
      erase(R.Lo, R.Hi);
    return;
  }
  std::vector<ByteRange> Out;
  Out.reserve(Ranges.size());
  const std::vector<ByteRange> &O = Other.Ranges;
  size_t J = 0;
  for (const ByteRange &A : Ranges) {
    uint64_t Cur = A.Lo;
    while (J < O.size() && O[J].Hi <= Cur)
      ++J;
    // O[K] from J on start before A ends: cut them out of A. The last one
    // may reach into the next range of this set, so J stays on it.
    size_t K = J;
    while (K < O.size() && O[K].Lo < A.Hi) {
      if (O[K].Lo > Cur)
        Out.push_back({Cur, O[K].Lo});
      Cur = std::max(Cur, O[K].Hi);
      if (Cur >= A.Hi)
        break;
      ++K;
    }
    if (Cur < A.Hi)
      Out.push_back({Cur, A.Hi});
    J = K;
  }
  Ranges = std::move(Out);
}

bool RangeSet::contains(uint64_t Lo, uint64_t Hi) const {
  if (Lo >= Hi)
    return true;
  size_t I = firstEndingAfter(Lo, /*Touching=*/false);
  // Ranges are coalesced, so [Lo, Hi) is covered only by a single range.
  return I < Ranges.size() && Ranges[I].Lo <= Lo && Ranges[I].Hi >= Hi;
}

bool RangeSet::intersects(uint64_t Lo, uint64_t Hi) const {
  if (Lo >= Hi)
    return false;
  size_t I = firstEndingAfter(Lo, /*Touching=*/false);
  return I < Ranges.size() && Ranges[I].Lo < Hi;
}

std::vector<ByteRange> RangeSet::intersection(uint64_t Lo, uint64_t Hi) const {
  std::vector<ByteRange> Out;
  if (Lo >= Hi)
    return Out;
  for (size_t I = firstEndingAfter(Lo, /*Touching=*/false);
       I < Ranges.size() && Ranges[I].Lo < Hi; ++I)
    Out.push_back({std::max(Lo, Ranges[I].Lo), std::min(Hi, Ranges[I].Hi)});
  return Out;
}

RangeSet RangeSet::intersection(const RangeSet &Other) const {
  RangeSet Out;
  if (Other.Ranges.size() < MergeThreshold) {
    for (ByteRange R : Other.Ranges)
      for (ByteRange X : intersection(R.Lo, R.Hi))
        Out.Ranges.push_back(X);
    return Out;
  }
  // Pieces of two coalesced sets' overlap are never adjacent.
  size_t I = 0, J = 0;
  const std::vector<ByteRange> &O = Other.Ranges;
  while (I < Ranges.size() && J < O.size()) {
    uint64_t Lo = std::max(Ranges[I].Lo, O[J].Lo);
    uint64_t Hi = std::min(Ranges[I].Hi, O[J].Hi);
    if (Lo < Hi)
      Out.Ranges.push_back({Lo, Hi});
    if (Ranges[I].Hi < O[J].Hi)
      ++I;
    else
      ++J;
  }
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
  for (ByteRange R : Ranges)
    N += R.Hi - R.Lo;
  return N;
}

std::vector<ByteRange> RangeSet::ranges() const { return Ranges; }

std::string RangeSet::toString() const {
  std::string S = "{";
  for (ByteRange R : Ranges) {
    if (S.size() > 1)
      S += ' ';
    S += '[' + std::to_string(R.Lo) + ',' + std::to_string(R.Hi) + ')';
  }
  return S + '}';
}

} // namespace rt
} // namespace cleave
