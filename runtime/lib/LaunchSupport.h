//===- LaunchSupport.h - What the two launch paths share -------*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM); internal. Helpers of launchOnCpuDevices
// (Launch.cpp) and the engine (Engine.cpp): resolved pointer arguments, what
// a block range does to each buffer, and footprint regions as byte ranges.
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
struct BufferUse {
  RangeSet Reads;
  RangeSet Writes;
  /// Every write footprint of every argument into this buffer was Exact.
  bool WritesExact = true;
  /// Why not, for the plan.
  std::string NotExact;
};

/// Per buffer id.
using RangeUse = std::map<uint64_t, BufferUse>;

/// Adds \p Regions, relative to a pointer at \p Offset of a buffer of
/// \p Size bytes, to \p Out, clipped to the buffer. False (adding nothing)
/// when they cannot be expanded or their offsets overflow.
inline bool addRegions(const std::vector<ByteRegion> &Regions,
                       uint64_t Offset, uint64_t Size, RangeSet &Out) {
  if (Regions.empty())
    return true;
  std::vector<ByteInterval> Iv;
  if (!toIntervals(Regions, Iv, size_t(1) << 20))
    return false;
  if (Offset > uint64_t(INT64_MAX))
    return false;
  int64_t Off = static_cast<int64_t>(Offset);
  int64_t End = Size > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(Size);
  RangeSet Add;
  for (const ByteInterval &I : Iv) {
    int64_t Lo, Hi;
    if (__builtin_add_overflow(I.Lo, Off, &Lo) ||
        __builtin_add_overflow(I.Hi, Off, &Hi))
      return false;
    Lo = std::max<int64_t>(Lo, 0);
    Hi = std::min<int64_t>(Hi, End);
    if (Lo < Hi)
      Add.insert(uint64_t(Lo), uint64_t(Hi));
  }
  Out.insert(Add);
  return true;
}

/// Adds what the blocks [First, First + Count) do through pointer argument
/// \p P to \p U, from its evaluated footprint \p PF (null: the kernel's
/// footprints do not describe it, so everything is read and, when
/// \p MayWrite, written). Writes that are not Exact (or cannot be expanded)
/// cover the whole buffer and make U.WritesExact false, with the reason.
inline void addArgumentUse(const PtrArg &P, const ParamFootprint *PF,
                           bool MayWrite, uint64_t First, uint64_t Count,
                           BufferUse &U) {
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
      !addRegions(PF->Reads, P.Offset, Size, U.Reads))
    U.Reads.insert(0, Size);
  bool Exact = PF->WriteClass == FootprintClass::Exact;
  if (PF->WriteClass == FootprintClass::Unknown ||
      !addRegions(PF->Writes, P.Offset, Size, U.Writes)) {
    U.Writes.insert(0, Size);
    Exact = false;
  }
  if (!Exact && U.WritesExact) {
    U.WritesExact = false;
    U.NotExact = Arg + "'s write footprint is " +
                 getFootprintClassName(PF->WriteClass) + " for " +
                 blocksText(First, Count);
  }
}

/// "host", or the device's name ("cpu1", "gpu0").
inline std::string locationName(const BufferManager &Bufs, Location L) {
  return L == HostLocation ? std::string("host") : Bufs.device(L).name();
}

} // namespace launch
} // namespace rt
} // namespace cleave

#endif
