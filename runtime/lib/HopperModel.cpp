//===- HopperModel.cpp - Kernel time from counted instructions -----------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/HopperModel.h and
// docs/analyze.md.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/HopperModel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace cleave {
namespace rt {
namespace model {

namespace {

const char *const ClassNames[NumOpClasses] = {
    "int",       "int.div",   "fp32",        "fp32.div",  "fp64",
    "fp64.div",  "sfu",       "cvt",         "ld.global", "st.global",
    "atom.global", "ld.shared", "st.shared", "atom.shared", "local",
    "ld.const",  "branch",    "barrier",     "warp",      "other"};

double ceilDiv(double A, double B) { return std::ceil(A / B); }

double clockHz(const GpuParams &G) { return G.ClockMHz * 1e6; }

/// GB/s as bytes per SM clock.
double bytesPerClock(const GpuParams &G, double GBps) {
  return GBps * 1e9 / clockHz(G);
}

bool isLoad(OpClass C) {
  return C == OpClass::GlobalLoad || C == OpClass::GlobalAtomic ||
         C == OpClass::Local;
}

/// Period types and cycles of the breakdown (the same classification as
/// (3.7)-(3.14)).
void breakdown(Prediction &P, const std::vector<luo::Period> &Periods,
               double Scale, double NAct, double Cpd, double Mpd,
               const luo::Corrections *Paper) {
  for (size_t I = 0; I < Periods.size(); ++I) {
    const luo::Period *Prev = I ? &Periods[I - 1] : nullptr;
    int T = luo::periodType(Prev, Periods[I]);
    double Cycles =
        Paper ? luo::periodCycles(Prev, Periods[I], NAct, Cpd, Mpd, *Paper)
              : Periods[I].Compute + Periods[I].Memory;
    ++P.PeriodCount[T - 1];
    P.PeriodCycles[T - 1] += Cycles * Scale;
    P.ComputeCycles += Periods[I].Compute * Scale;
    P.MemoryCycles += Periods[I].Memory * Scale;
  }
}

} // namespace

const char *opClassName(OpClass C) {
  return unsigned(C) < NumOpClasses ? ClassNames[unsigned(C)] : "?";
}

bool opClassByName(const std::string &Name, OpClass &Out) {
  for (unsigned I = 0; I < NumOpClasses; ++I)
    if (Name == ClassNames[I]) {
      Out = OpClass(I);
      return true;
    }
  return false;
}

bool isMemoryOp(OpClass C) {
  return C == OpClass::GlobalLoad || C == OpClass::GlobalStore ||
         C == OpClass::GlobalAtomic || C == OpClass::Local;
}

ClassArray hopperIssueCosts() {
  ClassArray A{};
  auto Set = [&](OpClass C, double V) { A[unsigned(C)] = V; };
  Set(OpClass::Int, 2);         // 16 INT32 lanes per sub-partition
  Set(OpClass::IntDiv, 40);     // ~18 integer instructions + MUFU.RCP
  Set(OpClass::Fp32, 1);        // 32 FP32 lanes per sub-partition
  Set(OpClass::Fp32Div, 16);    // ~10 instructions + MUFU.RCP
  Set(OpClass::Fp64, 2);        // 16 FP64 lanes per sub-partition
  Set(OpClass::Fp64Div, 40);    // ~20 FP64 instructions
  Set(OpClass::Sfu, 8);         // 4 SFU lanes per sub-partition
  Set(OpClass::Conversion, 8);  // 16 conversions per SM and clock
  Set(OpClass::GlobalLoad, 4);  // 8 LSUs per sub-partition
  Set(OpClass::GlobalStore, 4);
  Set(OpClass::GlobalAtomic, 4);
  Set(OpClass::SharedLoad, 4);
  Set(OpClass::SharedStore, 4);
  Set(OpClass::SharedAtomic, 4);
  Set(OpClass::Local, 4);
  Set(OpClass::ConstLoad, 2);
  Set(OpClass::Branch, 2);
  Set(OpClass::Barrier, 2);
  Set(OpClass::Warp, 4);        // shuffles: 32 lanes per SM and clock
  Set(OpClass::Other, 1);
  return A;
}

const char *limiterName(Limiter L) {
  switch (L) {
  case Limiter::Registers:
    return "registers";
  case Limiter::SharedMemory:
    return "shared memory";
  case Limiter::Threads:
    return "threads";
  case Limiter::Blocks:
    return "blocks";
  }
  return "?";
}

const char *bottleneckName(Bottleneck B) {
  switch (B) {
  case Bottleneck::Memory:
    return "memory";
  case Bottleneck::Compute:
    return "compute";
  case Bottleneck::Latency:
    return "latency";
  case Bottleneck::Launch:
    return "launch";
  }
  return "?";
}

Occupancy occupancy(const GpuParams &G, const KernelResources &R,
                    unsigned ThreadsPerBlock) {
  Occupancy O;
  constexpr unsigned Unlimited = std::numeric_limits<unsigned>::max();
  unsigned Warps = (ThreadsPerBlock + 31) / 32;
  if (Warps == 0 || ThreadsPerBlock > G.MaxThreadsPerBlock) {
    O.Error = "a block of " + std::to_string(ThreadsPerBlock) +
              " threads cannot run (1 to " +
              std::to_string(G.MaxThreadsPerBlock) + ")";
    return O;
  }
  // Registers: per warp, rounded up to the allocation unit.
  O.ByRegisters = Unlimited;
  if (R.Registers > 0) {
    unsigned Unit = std::max(1u, G.RegisterUnitPerWarp);
    unsigned PerWarp = (R.Registers * 32 + Unit - 1) / Unit * Unit;
    O.ByRegisters = G.RegistersPerSm / PerWarp / Warps;
  }
  // Shared memory: static + dynamic + the reserved bytes, in units.
  O.BySharedMemory = Unlimited;
  uint64_t Shared = R.StaticShared + R.DynamicShared;
  if (Shared > 0) {
    if (G.SharedPerBlockMax && Shared > G.SharedPerBlockMax) {
      O.Error = std::to_string(Shared) +
                " bytes of shared memory per block exceed the device's " +
                std::to_string(G.SharedPerBlockMax);
      return O;
    }
    uint64_t Unit = std::max<uint64_t>(1, G.SharedUnit);
    uint64_t PerBlock =
        (Shared + G.SharedReservedPerBlock + Unit - 1) / Unit * Unit;
    O.BySharedMemory = unsigned(G.SharedPerSm / PerBlock);
  }
  O.ByThreads = std::min(G.MaxThreadsPerSm / (Warps * 32),
                         G.MaxWarpsPerSm / Warps);
  O.ByBlocks = G.MaxBlocksPerSm;
  O.BlocksPerSm = std::min({O.ByRegisters, O.BySharedMemory, O.ByThreads,
                            O.ByBlocks});
  if (O.BlocksPerSm == O.ByRegisters)
    O.Limit = Limiter::Registers;
  else if (O.BlocksPerSm == O.BySharedMemory)
    O.Limit = Limiter::SharedMemory;
  else if (O.BlocksPerSm == O.ByThreads)
    O.Limit = Limiter::Threads;
  else
    O.Limit = Limiter::Blocks;
  if (O.BlocksPerSm == 0) {
    O.Error = std::string("not one block fits on an SM (limited by ") +
              limiterName(O.Limit) + ")";
    return O;
  }
  O.WarpsPerSm = O.BlocksPerSm * Warps;
  O.Fraction = double(O.WarpsPerSm) / std::max(1u, G.MaxWarpsPerSm);
  return O;
}

std::vector<luo::Period>
periodsOf(const std::vector<OpClass> &Stream, const ClassArray &Cost,
          double (*MemoryTask)(unsigned, unsigned, const void *),
          const void *Ctx) {
  std::vector<luo::Period> Out;
  double Compute = 0;
  unsigned Loads = 0, Stores = 0;
  bool Open = false;
  auto Close = [&] {
    luo::Period P;
    P.Compute = Compute;
    P.Memory = (Loads + Stores) ? MemoryTask(Loads, Stores, Ctx) : 0;
    Out.push_back(P);
    Compute = 0;
    Loads = Stores = 0;
  };
  for (OpClass C : Stream) {
    if (isMemoryOp(C)) {
      (isLoad(C) ? Loads : Stores) += 1;
      Open = true;
      continue;
    }
    // A computation instruction after a memory task starts a new period.
    if (Loads + Stores)
      Close();
    Compute += Cost[unsigned(C)];
    Open = true;
  }
  if (Open)
    Close();
  return Out;
}

double dramBytes(double Requested, double BlockDistinct, uint64_t Blocks,
                 double Footprint, uint64_t L2Bytes) {
  double Unique = std::min(Requested, Footprint);
  if (Footprint <= double(L2Bytes))
    return Unique;
  return std::min(Requested,
                  std::max(Unique, BlockDistinct * double(Blocks)));
}

Prediction predictPaper(const GpuParams &G, const LaunchStats &S,
                        const KernelResources &R, const luo::Corrections &C) {
  Prediction P;
  unsigned Warps = (S.ThreadsPerBlock + 31) / 32;
  P.Occ = occupancy(G, R, S.ThreadsPerBlock);
  double BlocksPerSm = 1;
  P.NAct = Warps;
  if (C.Occupancy) {
    if (P.Occ.BlocksPerSm == 0) {
      P.Notes.push_back(P.Occ.Error);
      P.Seconds = P.KernelSeconds = std::numeric_limits<double>::quiet_NaN();
      return P;
    }
    BlocksPerSm = std::min<double>(P.Occ.BlocksPerSm,
                                   ceilDiv(double(S.Blocks), G.Sms));
    P.NAct = BlocksPerSm * Warps;
  }
  // Costs (§1.2): the profile's dependent-chain clocks; every global or
  // local ld/st costs t_mem (the thesis's "ld/st" row, here the DRAM
  // latency), summed over the memory task (the digest's reading of m_i).
  struct MemCtx {
    double TMem;
  } Ctx{G.LatencyDram};
  std::vector<luo::Period> Periods = periodsOf(
      S.Stream, G.Latency,
      [](unsigned L, unsigned St, const void *X) {
        return (L + St) * static_cast<const MemCtx *>(X)->TMem;
      },
      &Ctx);
  double TCmp = 0, TMem = 0;
  for (const luo::Period &Q : Periods) {
    TCmp += Q.Compute;
    TMem += Q.Memory;
  }
  P.P = TCmp + TMem > 0 ? luo::computeFraction(TCmp, TMem) : 1;
  P.Cpd = luo::computeParallelDegree(P.NAct, P.P, G.Cpd, C);
  if (P.Cpd < 1)
    P.Notes.push_back("CPD < 1 (eqs. 3.4-3.6 as printed, with this "
                      "profile's fit): --paper-fix=cpd clamps it to "
                      "[1, N_act]");
  // (3.1): N_thread the active lanes, D_mem the bytes per lane, N_trans the
  // 128-byte segments of a request.
  double GpuBwt = bytesPerClock(G, G.DramGBps);
  if (S.Requests > 0 && S.SegmentsPerRequest > 0) {
    P.WarpBandwidth = luo::warpBandwidth(S.LanesPerRequest, S.BytesPerLane,
                                         S.SegmentsPerRequest, G.LatencyDram);
    P.Mpd = luo::memoryParallelDegree(P.NAct, G.Sms, GpuBwt, P.WarpBandwidth,
                                      C);
  } else {
    P.Mpd = P.NAct; // no global memory: nothing waits for a memory slot
  }
  if (P.Mpd <= 0)
    P.Notes.push_back("MPD = 0 (eq. 3.2 as printed divides by N_act twice): "
                      "T_p is infinite; --paper-fix=mpd corrects it");
  breakdown(P, Periods, S.StreamScale, P.NAct, P.Cpd, P.Mpd, &C);
  P.BlockCycles =
      luo::kernelCycles(Periods, P.NAct, P.Cpd, P.Mpd, C) * S.StreamScale;
  // One block per SM as in the thesis, or the resident blocks.
  double Resident = C.Occupancy ? double(P.Occ.BlocksPerSm) : 1.0;
  P.Waves = uint64_t(ceilDiv(double(S.Blocks), double(G.Sms) * Resident));
  double Cycles = P.BlockCycles * (C.Waves ? double(P.Waves) : 1.0);
  P.KernelSeconds = Cycles / clockHz(G);
  P.LaunchSeconds = G.LaunchUs * 1e-6;
  P.Seconds = P.KernelSeconds + (C.Launch ? P.LaunchSeconds : 0);
  double Base = 0, Stall = 0;
  for (size_t I = 0; I < Periods.size(); ++I) {
    double B = std::ceil(P.NAct * Periods[I].Compute / P.Cpd);
    Base += B;
    Stall += luo::periodCycles(I ? &Periods[I - 1] : nullptr, Periods[I],
                               P.NAct, P.Cpd, P.Mpd, C) -
             B;
  }
  if (C.Launch && P.LaunchSeconds >= P.KernelSeconds)
    P.Bound = Bottleneck::Launch;
  else
    P.Bound = Stall > Base ? Bottleneck::Memory : Bottleneck::Compute;
  if (!C.Waves)
    P.Notes.push_back("one block on one SM (§1.6 as printed); "
                      "--paper-fix=waves scales by the waves");
  return P;
}

Prediction predictHopper(const GpuParams &G, const LaunchStats &S,
                         const KernelResources &R) {
  Prediction P;
  P.Occ = occupancy(G, R, S.ThreadsPerBlock);
  if (P.Occ.BlocksPerSm == 0) {
    P.Notes.push_back(P.Occ.Error);
    P.Seconds = P.KernelSeconds = std::numeric_limits<double>::quiet_NaN();
    return P;
  }
  double Warps = (S.ThreadsPerBlock + 31) / 32;
  double Blocks = double(S.Blocks);
  double BlocksOnBusiestSm = ceilDiv(Blocks, G.Sms);
  P.NAct = std::min<double>(P.Occ.BlocksPerSm, BlocksOnBusiestSm) * Warps;
  P.Waves = uint64_t(ceilDiv(Blocks, double(G.Sms) * P.Occ.BlocksPerSm));
  double Hz = clockHz(G);

  // Issue: the busiest SM issues all its warps' instructions over its
  // sub-partitions.
  double IssuePerWarp = 0;
  for (unsigned C = 0; C < NumOpClasses; ++C)
    IssuePerWarp += S.Count[C] * G.Issue[C];
  double ComputeCycles =
      BlocksOnBusiestSm * Warps * IssuePerWarp / std::max(1u, G.SubPartitions);
  P.ComputeSeconds = ComputeCycles / Hz;

  // Memory traffic: every requested sector passes through L2; DRAM moves
  // what the L2 rule leaves.
  P.RequestedBytes = Blocks * Warps * S.Requests * S.SectorsPerRequest * 32;
  P.DramBytes = dramBytes(P.RequestedBytes, S.BlockDistinctBytes, S.Blocks,
                          S.FootprintBytes, G.L2Bytes);
  P.L2HitBytes = P.RequestedBytes - P.DramBytes;
  P.MemorySeconds = 0;
  if (P.RequestedBytes > 0)
    P.MemorySeconds = std::max(P.DramBytes / (G.DramGBps * 1e9),
                               P.RequestedBytes / (G.L2GBps * 1e9));

  // Latency: one warp's path through its periods, compute at the
  // dependent-chain clocks, a memory task with loads waits one memory
  // latency (L2 hits and DRAM in the rule's proportion) and issues the
  // rest; stores do not wait. Each wave waits its own path.
  double Hit = P.RequestedBytes > 0 ? P.L2HitBytes / P.RequestedBytes : 0;
  struct MemCtx {
    double Latency, Issue;
  } Ctx{Hit * G.LatencyL2 + (1 - Hit) * G.LatencyDram,
        G.Issue[unsigned(OpClass::GlobalLoad)]};
  std::vector<luo::Period> Periods = periodsOf(
      S.Stream, G.Latency,
      [](unsigned L, unsigned St, const void *X) {
        auto *M = static_cast<const MemCtx *>(X);
        return (L ? M->Latency : 0.0) + (L + St) * M->Issue;
      },
      &Ctx);
  breakdown(P, Periods, S.StreamScale, P.NAct, 0, 0, nullptr);
  double Path = P.ComputeCycles + P.MemoryCycles;
  P.LatencySeconds = double(P.Waves) * Path / Hz;

  P.KernelSeconds =
      std::max({P.ComputeSeconds, P.LatencySeconds, P.MemorySeconds});
  P.LaunchSeconds = G.LaunchUs * 1e-6;
  P.Seconds = P.KernelSeconds + P.LaunchSeconds;
  if (P.LaunchSeconds >= P.KernelSeconds)
    P.Bound = Bottleneck::Launch;
  else if (P.KernelSeconds == P.MemorySeconds)
    P.Bound = Bottleneck::Memory;
  else if (P.KernelSeconds == P.ComputeSeconds)
    P.Bound = Bottleneck::Compute;
  else
    P.Bound = Bottleneck::Latency;

  // Luo's degrees for reference, corrected: MPD with bytes moved (sectors)
  // and one division by N_act, CPD clamped.
  double TCmp = P.ComputeCycles, TMem = P.MemoryCycles;
  P.P = TCmp + TMem > 0 ? luo::computeFraction(TCmp, TMem) : 1;
  luo::Corrections Fixed = luo::Corrections::fixed();
  P.Cpd = luo::computeParallelDegree(P.NAct, P.P, G.Cpd, Fixed);
  if (S.Requests > 0 && S.SectorsPerRequest > 0 && Ctx.Latency > 0) {
    P.WarpBandwidth = S.SectorsPerRequest * 32 / Ctx.Latency;
    P.Mpd = luo::memoryParallelDegree(P.NAct, G.Sms,
                                      bytesPerClock(G, G.DramGBps),
                                      P.WarpBandwidth, Fixed);
  } else {
    P.Mpd = P.NAct;
  }
  return P;
}

} // namespace model
} // namespace rt
} // namespace cleave
