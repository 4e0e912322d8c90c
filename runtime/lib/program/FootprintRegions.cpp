//===- FootprintRegions.cpp - Coalesce and expand byte regions -----------===//
//
// Part of Cleave's runtime. Rewrites the regions of a footprint into an
// equivalent shorter list (docs/footprints.md, "Coalescing") and expands
// regions into sorted intervals for the callers that copy byte ranges.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Footprint.h"

#include <algorithm>

namespace cleave {
namespace rt {

namespace {

using i64 = int64_t;

void canonicalize(ByteRegion &R) {
  for (;;) {
    if (R.Planes > 1 && R.Rows == 1) {
      R.Rows = R.Planes;
      R.Pitch = R.PlanePitch;
      R.Planes = 1;
    }
    if (R.Planes == 1)
      R.PlanePitch = 0;
    if (R.Rows == 1) {
      R.Pitch = 0;
      return;
    }
    if (R.Bytes >= R.Pitch) {
      R.Bytes += R.Pitch * (R.Rows - 1);
      R.Rows = 1;
      continue;
    }
    if (R.Planes > 1 && R.Rows * R.Pitch == R.PlanePitch) {
      R.Rows *= R.Planes;
      R.Planes = 1;
      continue;
    }
    return;
  }
}

/// Merges B into A when their union is one region.
bool tryMerge(ByteRegion &A, const ByteRegion &B) {
  const ByteRegion *X = &A, *Y = &B;
  if (Y->Base < X->Base)
    std::swap(X, Y);
  // Side by side (or overlapping) in every row and plane.
  if (X->Rows == Y->Rows && X->Pitch == Y->Pitch && X->Planes == Y->Planes &&
      X->PlanePitch == Y->PlanePitch && Y->Base <= X->Base + X->Bytes) {
    ByteRegion R = *X;
    R.Bytes = std::max(X->Base + X->Bytes, Y->Base + Y->Bytes) - X->Base;
    canonicalize(R);
    A = R;
    return true;
  }
  if (X->Planes > 1 || Y->Planes > 1 || X->Bytes != Y->Bytes)
    return false;
  // Stacked rows of one pitch: Y starts at or before the row after X's last.
  if (X->Rows > 1 || Y->Rows > 1) {
    i64 P = X->Rows > 1 ? X->Pitch : Y->Pitch;
    if ((X->Rows == 1 || X->Pitch == P) && (Y->Rows == 1 || Y->Pitch == P)) {
      i64 D = Y->Base - X->Base;
      if (D % P == 0 && D / P <= X->Rows) {
        ByteRegion R = *X;
        R.Pitch = P;
        R.Rows = std::max(X->Rows, D / P + Y->Rows);
        canonicalize(R);
        A = R;
        return true;
      }
    }
  }
  // Interleaved rows: Y's rows fall halfway between X's.
  if (X->Rows == Y->Rows && X->Rows > 1 && X->Pitch == Y->Pitch &&
      2 * (Y->Base - X->Base) == X->Pitch) {
    ByteRegion R = *X;
    R.Rows = 2 * X->Rows;
    R.Pitch = X->Pitch / 2;
    canonicalize(R);
    A = R;
    return true;
  }
  return false;
}

} // namespace

bool ByteRegion::operator==(const ByteRegion &O) const {
  return Base == O.Base && Bytes == O.Bytes && Rows == O.Rows &&
         Pitch == O.Pitch && Planes == O.Planes && PlanePitch == O.PlanePitch;
}

void coalesceRegions(std::vector<ByteRegion> &Regions) {
  for (ByteRegion &R : Regions)
    canonicalize(R);
  Regions.erase(std::remove_if(Regions.begin(), Regions.end(),
                               [](const ByteRegion &R) {
                                 return R.Bytes <= 0 || R.Rows <= 0 ||
                                        R.Planes <= 0;
                               }),
                Regions.end());
  // Pairwise merging is quadratic; past a few thousand regions only sorting
  // happens.
  if (Regions.size() <= 2048) {
    bool Changed = true;
    while (Changed) {
      Changed = false;
      for (size_t I = 0; I < Regions.size() && !Changed; ++I)
        for (size_t J = I + 1; J < Regions.size() && !Changed; ++J)
          if (tryMerge(Regions[I], Regions[J])) {
            Regions.erase(Regions.begin() + J);
            Changed = true;
          }
    }
  }
  std::sort(Regions.begin(), Regions.end(),
            [](const ByteRegion &A, const ByteRegion &B) {
              return A.Base < B.Base || (A.Base == B.Base && A.Bytes < B.Bytes);
            });
}

bool toIntervals(const std::vector<ByteRegion> &Regions,
                 std::vector<ByteInterval> &Out, size_t MaxIntervals) {
  Out.clear();
  std::vector<ByteInterval> All;
  for (const ByteRegion &R : Regions)
    for (i64 P = 0; P < R.Planes; ++P)
      for (i64 Row = 0; Row < R.Rows; ++Row) {
        if (All.size() >= MaxIntervals)
          return false;
        i64 Lo = R.Base + P * R.PlanePitch + Row * R.Pitch;
        All.push_back({Lo, Lo + R.Bytes});
      }
  auto ByLo = [](const ByteInterval &A, const ByteInterval &B) {
    return A.Lo < B.Lo;
  };
  // One region with positive pitches comes out in order already.
  if (!std::is_sorted(All.begin(), All.end(), ByLo))
    std::sort(All.begin(), All.end(), ByLo);
  for (const ByteInterval &I : All) {
    if (!Out.empty() && I.Lo <= Out.back().Hi)
      Out.back().Hi = std::max(Out.back().Hi, I.Hi);
    else
      Out.push_back(I);
  }
  return true;
}

} // namespace rt
} // namespace cleave
