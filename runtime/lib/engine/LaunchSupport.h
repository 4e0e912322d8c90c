//===- LaunchSupport.h - Arguments, footprints and byte ranges --*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal to the engine: resolved
// pointer arguments, what a block range does to each buffer, and footprint
// regions as byte ranges.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_LAUNCHSUPPORT_H
#define CLEAVE_RT_LIB_LAUNCHSUPPORT_H

#include "cleave/rt/Buffers.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/Footprint.h"
#include "cleave/rt/RangeSet.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace launch {

inline Result invalid(std::string Msg) {
  return Result::error(ErrorCode::InvalidValue, std::move(Msg));
}

inline std::string blocksText(uint64_t First, uint64_t Count) {
  return "blocks [" + std::to_string(First) + ", " +
         std::to_string(First + Count) + ")";
}

/// A non-null pointer argument, resolved.
struct PtrArg {
  unsigned ArgNo = 0;
  std::shared_ptr<Buffer> Buf;
  uint64_t Offset = 0;
};

/// What one range does to one buffer (all arguments pointing into it).
///
/// Footprints with many rows (a 2-D or 3-D block of a grid that skips a
/// boundary, a tile of columns) would make thousands of intervals per
/// launch; the engine asks for them *coarse*: reads become the regions'
/// hull (a superset: reading more only moves more, and only bytes that are
/// not valid yet), writes become their hull too, with the exact regions
/// kept. A coarse write hull may stand for the writes only where no other
/// device writes inside it (otherwise refineWrites() makes the set exact),
/// and once its own device holds valid copies of the bytes between the
/// rows (the engine moves them there first): then marking the whole hull
/// written changes no byte's value anywhere.
struct BufferUse {
  RangeSet Reads;
  RangeSet Writes;
  /// Every write footprint of every argument into this buffer was Exact.
  bool WritesExact = true;
  /// Why not, for the plan.
  std::string NotExact;
  /// Writes is a hull of exact regions, not the exact set.
  bool WritesCoarse = false;
  /// Every write footprint added (for refineWrites), while WritesCoarse.
  struct WriteRegions {
    std::vector<ByteRegion> Regions;
    uint64_t Offset = 0;
  };
  std::vector<WriteRegions> Pending;
};

/// Per buffer id.
using RangeUse = std::map<uint64_t, BufferUse>;

/// Rows (intervals before coalescing) of \p Regions, saturating.
inline uint64_t countRows(const std::vector<ByteRegion> &Regions) {
  uint64_t N = 0;
  for (const ByteRegion &R : Regions) {
    uint64_t Rows = uint64_t(std::max<int64_t>(R.Rows, 0));
    uint64_t Planes = uint64_t(std::max<int64_t>(R.Planes, 0));
    uint64_t RP;
    if (__builtin_mul_overflow(Rows, Planes, &RP) ||
        __builtin_add_overflow(N, RP, &N))
      return UINT64_MAX;
  }
  return N;
}

/// The hull of \p Regions, relative to a pointer at \p Offset of a buffer
/// of \p Size bytes, clipped to the buffer ([0, 0) when empty there).
/// False when an offset overflows.
inline bool regionsHull(const std::vector<ByteRegion> &Regions,
                        uint64_t Offset, uint64_t Size, ByteRange &Out) {
  Out = {0, 0};
  if (Offset > uint64_t(INT64_MAX))
    return false;
  int64_t Lo = INT64_MAX, Hi = INT64_MIN;
  for (const ByteRegion &R : Regions) {
    if (R.Bytes <= 0 || R.Rows <= 0 || R.Planes <= 0)
      continue;
    int64_t RowSpan, PlaneSpan, A, B;
    if (__builtin_mul_overflow(R.Rows - 1, R.Pitch, &RowSpan) ||
        __builtin_mul_overflow(R.Planes - 1, R.PlanePitch, &PlaneSpan) ||
        __builtin_add_overflow(R.Base, std::min<int64_t>(RowSpan, 0), &A) ||
        __builtin_add_overflow(A, std::min<int64_t>(PlaneSpan, 0), &A) ||
        __builtin_add_overflow(R.Base, std::max<int64_t>(RowSpan, 0), &B) ||
        __builtin_add_overflow(B, std::max<int64_t>(PlaneSpan, 0), &B) ||
        __builtin_add_overflow(B, R.Bytes, &B))
      return false;
    Lo = std::min(Lo, A);
    Hi = std::max(Hi, B);
  }
  if (Lo >= Hi)
    return true;
  int64_t Off = static_cast<int64_t>(Offset);
  if (__builtin_add_overflow(Lo, Off, &Lo) ||
      __builtin_add_overflow(Hi, Off, &Hi))
    return false;
  int64_t End = Size > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(Size);
  Lo = std::max<int64_t>(Lo, 0);
  Hi = std::min<int64_t>(Hi, End);
  if (Lo < Hi)
    Out = {uint64_t(Lo), uint64_t(Hi)};
  return true;
}

/// Adds \p Regions, relative to a pointer at \p Offset of a buffer of
/// \p Size bytes, to \p Out, clipped to the buffer. With \p CoarseRows
/// non-zero, regions of more rows than that add their hull instead and
/// \p Coarse is set. False (adding nothing) when they cannot be expanded or
/// their offsets overflow.
inline bool addRegions(const std::vector<ByteRegion> &Regions,
                       uint64_t Offset, uint64_t Size, RangeSet &Out,
                       uint64_t CoarseRows = 0, bool *Coarse = nullptr) {
  if (Regions.empty())
    return true;
  if (CoarseRows && countRows(Regions) > CoarseRows) {
    ByteRange H;
    if (!regionsHull(Regions, Offset, Size, H))
      return false;
    Out.insert(H);
    if (Coarse)
      *Coarse = true;
    return true;
  }
  std::vector<ByteInterval> Iv;
  if (!toIntervals(Regions, Iv, size_t(1) << 20))
    return false;
  if (Offset > uint64_t(INT64_MAX))
    return false;
  int64_t Off = static_cast<int64_t>(Offset);
  int64_t End = Size > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(Size);
  std::vector<ByteRange> Add;
  Add.reserve(Iv.size());
  for (const ByteInterval &I : Iv) {
    int64_t Lo, Hi;
    if (__builtin_add_overflow(I.Lo, Off, &Lo) ||
        __builtin_add_overflow(I.Hi, Off, &Hi))
      return false;
    Lo = std::max<int64_t>(Lo, 0);
    Hi = std::min<int64_t>(Hi, End);
    if (Lo < Hi)
      Add.push_back({uint64_t(Lo), uint64_t(Hi)});
  }
  Out.insertSorted(Add);
  return true;
}

/// Adds what the blocks [First, First + Count) do through pointer argument
/// \p P to \p U, from its evaluated footprint \p PF (null: the kernel's
/// footprints do not describe it, so everything is read and, when
/// \p MayWrite, written). Writes that are not Exact (or cannot be expanded)
/// cover the whole buffer and make U.WritesExact false, with the reason.
/// \p CoarseRows: see BufferUse (0: always exact).
inline void addArgumentUse(const PtrArg &P, const ParamFootprint *PF,
                           bool MayWrite, uint64_t First, uint64_t Count,
                           BufferUse &U, uint64_t CoarseRows = 0) {
  uint64_t Size = P.Buf->size();
  std::string Arg = "argument " + std::to_string(P.ArgNo);
  if (!PF) {
    U.Reads.insert(0, Size);
    if (MayWrite) {
      U.Writes.insert(0, Size);
      U.WritesExact = false;
      U.NotExact = Arg + " has no footprint";
    }
    return;
  }
  if (PF->ReadClass == FootprintClass::Unknown ||
      !addRegions(PF->Reads, P.Offset, Size, U.Reads, CoarseRows))
    U.Reads.insert(0, Size);
  bool Exact = PF->WriteClass == FootprintClass::Exact;
  bool Coarse = false;
  if (PF->WriteClass == FootprintClass::Unknown ||
      !addRegions(PF->Writes, P.Offset, Size, U.Writes,
                  Exact ? CoarseRows : 0, &Coarse)) {
    U.Writes.insert(0, Size);
    Exact = false;
  }
  if (!Exact && U.WritesExact) {
    U.WritesExact = false;
    U.NotExact = Arg + "'s write footprint is " +
                 getFootprintClassName(PF->WriteClass) + " for " +
                 blocksText(First, Count);
  }
  if (Exact && CoarseRows)
    U.Pending.push_back({PF->Writes, P.Offset});
  U.WritesCoarse |= Coarse;
}

/// Makes \p U's writes exact (see BufferUse); \p Size is the buffer's.
/// A set too large to expand becomes the whole buffer, not exact.
inline void refineWrites(BufferUse &U, uint64_t Size) {
  if (!U.WritesCoarse)
    return;
  U.WritesCoarse = false;
  if (!U.WritesExact) // the whole buffer already
    return;
  RangeSet Exact;
  for (const BufferUse::WriteRegions &W : U.Pending)
    if (!addRegions(W.Regions, W.Offset, Size, Exact)) {
      U.Writes = RangeSet();
      U.Writes.insert(0, Size);
      U.WritesExact = false;
      U.NotExact = "a write footprint has too many rows to expand";
      return;
    }
  U.Writes = std::move(Exact);
}

/// "host", or the device's name ("cpu1", "gpu0").
inline std::string locationName(const BufferManager &Bufs, Location L) {
  return L == HostLocation ? std::string("host") : Bufs.device(L).name();
}

} // namespace launch
} // namespace rt
} // namespace cleave

#endif
