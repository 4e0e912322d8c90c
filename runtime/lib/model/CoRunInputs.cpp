//===- CoRunInputs.cpp - The co-run model's inputs from a profile ---------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRun.h: a kernel's
// inputs from an instrumented run's counts, an SM's from a device profile.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRun.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {
namespace corun {

namespace {

/// The coalesced fraction f with f Sc + (1 - f) Su = Measured.
double coalescedFraction(double Sc, double Su, double Measured) {
  if (!(Su > Sc))
    return 1;
  return std::min(1.0, std::max(0.0, (Su - Measured) / (Su - Sc)));
}

} // namespace

Result kernelInputs(const model::LaunchStats &S,
                    const model::KernelResources &R, const model::GpuParams &G,
                    KernelModelInput &Out) {
  double Instr = 0;
  for (double C : S.Count)
    Instr += C;
  if (!(Instr > 0) || !S.ThreadsPerBlock)
    return Result::error(ErrorCode::InvalidValue,
                         "co-run model: the profile counted no instructions "
                         "or no threads");
  Out = {};
  Out.WarpsPerBlock = (S.ThreadsPerBlock + 31) / 32;
  Out.MemRatio = std::min(1.0, std::max(0.0, S.Requests / Instr));
  double Lanes = S.LanesPerRequest > 0 ? S.LanesPerRequest : 32;
  Out.CoalescedSectors =
      std::max(1.0, std::ceil(Lanes * std::max(S.BytesPerLane, 1.0) / 32));
  Out.UncoalescedSectors = std::max(Out.CoalescedSectors, Lanes);
  Out.CoalescedFraction =
      S.SectorsPerRequest > 0
          ? coalescedFraction(Out.CoalescedSectors, Out.UncoalescedSectors,
                              S.SectorsPerRequest)
          : 1;
  Out.InstrPerBlock = Instr * Out.WarpsPerBlock;
  unsigned Unit = std::max(1u, G.RegisterUnitPerWarp);
  Out.RegistersPerBlock =
      (R.Registers * 32 + Unit - 1) / Unit * Unit * Out.WarpsPerBlock;
  uint64_t Shared = R.StaticShared + R.DynamicShared;
  uint64_t SUnit = std::max<uint64_t>(1, G.SharedUnit);
  Out.SharedPerBlock =
      Shared ? (Shared + G.SharedReservedPerBlock + SUnit - 1) / SUnit * SUnit
             : 0;
  return Result::success();
}

Result smLimits(const model::GpuParams &G, SmLimits &Out) {
  if (!G.Sms || !(G.ClockMHz > 0) || !(G.LatencyDram > 0))
    return Result::error(ErrorCode::InvalidValue,
                         "co-run model: the GPU profile lacks SMs, a clock "
                         "or a DRAM latency");
  Out = {};
  Out.Sms = G.Sms;
  Out.MaxWarps = std::min(G.MaxWarpsPerSm, G.MaxThreadsPerSm / 32);
  Out.MaxBlocks = G.MaxBlocksPerSm;
  Out.Registers = G.RegistersPerSm;
  Out.SharedBytes = G.SharedPerSm;
  Out.Schedulers = std::max(1u, G.SubPartitions);
  Out.Memory.Base = G.LatencyDram;
  Out.Memory.SectorsPerCycle =
      G.DramGBps > 0 ? G.DramGBps * 1e9 / 32 / (G.ClockMHz * 1e6) / G.Sms : 0;
  return Result::success();
}

} // namespace corun
} // namespace rt
} // namespace cleave
