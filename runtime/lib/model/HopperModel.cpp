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

double ceilDiv(double A, double B) { return std::ceil(A / B); }

double clockHz(const GpuParams &G) { return G.ClockMHz * 1e6; }

/// GB/s as bytes per SM clock.
double bytesPerClock(const GpuParams &G, double GBps) {
  return GBps * 1e9 / clockHz(G);
}

bool isLoad(InstrClass C) {
  return C == InstrClass::GlobalLoad || C == InstrClass::GlobalAtomic ||
         C == InstrClass::Local;
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

ClassArray hopperIssueCosts() {
  ClassArray A{};
  auto Set = [&](InstrClass C, double V) { A[unsigned(C)] = V; };
  Set(InstrClass::Int, 2);        // 16 INT32 lanes per sub-partition
  Set(InstrClass::IntDiv, 40);    // ~18 integer instructions + MUFU.RCP
  Set(InstrClass::Fp32, 1);       // 32 FP32 lanes per sub-partition
  Set(InstrClass::Fp32Div, 16);   // ~10 instructions + MUFU.RCP
  Set(InstrClass::Fp64, 2);       // 16 FP64 lanes per sub-partition
  Set(InstrClass::Fp64Div, 40);   // ~20 FP64 instructions
  Set(InstrClass::Sfu, 8);        // 4 SFU lanes per sub-partition
  Set(InstrClass::Conversion, 8); // 16 conversions per SM and clock
  Set(InstrClass::GlobalLoad, 4); // 8 LSUs per sub-partition
  Set(InstrClass::GlobalStore, 4);
  Set(InstrClass::GlobalAtomic, 4);
  Set(InstrClass::SharedLoad, 4);
  Set(InstrClass::SharedStore, 4);
  Set(InstrClass::SharedAtomic, 4);
  Set(InstrClass::Local, 4);
  Set(InstrClass::ConstLoad, 2);
  Set(InstrClass::Branch, 2);
  Set(InstrClass::Barrier, 2);
  Set(InstrClass::Warp, 4); // shuffles: 32 lanes per SM and clock
  Set(InstrClass::Other, 1);
  return A;
}

Pipe pipeOf(InstrClass C) {
  switch (C) {
  case InstrClass::Fp32:
  case InstrClass::Fp32Div:
    return Pipe::Fma;
  case InstrClass::Fp64:
  case InstrClass::Fp64Div:
    return Pipe::Fp64;
  case InstrClass::Sfu:
  case InstrClass::Conversion:
    return Pipe::Xu;
  case InstrClass::GlobalLoad:
  case InstrClass::GlobalStore:
  case InstrClass::GlobalAtomic:
  case InstrClass::SharedLoad:
  case InstrClass::SharedStore:
  case InstrClass::SharedAtomic:
  case InstrClass::Local:
  case InstrClass::ConstLoad:
  case InstrClass::Warp:
    return Pipe::Mio;
  default:
    return Pipe::Alu;
  }
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
periodsOf(const std::vector<InstrClass> &Stream, const ClassArray &Cost,
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
  for (InstrClass C : Stream) {
    if (isMemoryClass(C)) {
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

double dependentPath(const GpuParams &G, const LaunchStats &S,
                     double MemLatency, double *Issued, double *Rounds,
                     double FirstLatency) {
  if (FirstLatency < 0)
    FirstLatency = MemLatency;
  bool Known = S.DepBegin.size() == S.Stream.size() + 1;
  std::vector<double> Ready(S.Stream.size(), 0);
  double At = 0, End = 0, NRounds = 0, RoundEnd = -1;
  for (size_t I = 0; I < S.Stream.size(); ++I) {
    // In order: one clock after the instruction before it, and once the
    // results it uses are ready.
    if (I)
      At += 1;
    if (Known) {
      for (uint32_t K = S.DepBegin[I]; K < S.DepBegin[I + 1]; ++K)
        if (S.Deps[K] < I)
          At = std::max(At, Ready[S.Deps[K]]);
    } else if (I) {
      At = std::max(At, Ready[I - 1]);
    }
    InstrClass C = S.Stream[I];
    double Latency = G.Latency[unsigned(C)];
    if (C == InstrClass::GlobalLoad || C == InstrClass::GlobalAtomic ||
        C == InstrClass::Local) {
      if (At >= RoundEnd) {
        ++NRounds;
        RoundEnd = At + (NRounds == 1 ? FirstLatency : MemLatency);
      }
      Latency = NRounds == 1 ? FirstLatency : MemLatency;
    } else if (C == InstrClass::GlobalStore) {
      Latency = 0;
    }
    Ready[I] = At + Latency;
    End = std::max({End, Ready[I], At + 1});
  }
  if (Issued)
    *Issued = double(S.Stream.size()) * S.StreamScale;
  if (Rounds)
    *Rounds = NRounds * S.StreamScale;
  return End * S.StreamScale;
}

double dramSeconds(const GpuParams &G, double Read, double Written) {
  double R = G.DramGBps * 1e9;
  double W = R;
  if (G.DramCopyGBps > 0) {
    double InvW = 2 / (G.DramCopyGBps * 1e9) - 1 / R;
    if (InvW > 0)
      W = 1 / InvW;
  }
  return Read / R + Written / W;
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

  // Issue: the busiest SM's warps over its sub-partitions. Each pipe takes
  // its classes' instructions at their issue cost; global loads occupy the
  // load/store path once per 128-byte line they touch (L1 handles one line
  // per clock), stores once per request. The sub-partition dispatches one
  // instruction per clock (a division sequence: its cost in instructions).
  std::array<double, NumPipes> PipeCycles{};
  double Dispatch = 0;
  for (unsigned C = 0; C < NumInstrClasses; ++C) {
    InstrClass K = InstrClass(C);
    double Cycles = S.Count[C] * G.Issue[C];
    if (K == InstrClass::GlobalLoad || K == InstrClass::GlobalAtomic) {
      double Loads = S.Count[unsigned(InstrClass::GlobalLoad)] +
                     S.Count[unsigned(InstrClass::GlobalAtomic)];
      double Lines = std::max(S.LoadSegments, Loads);
      Cycles = Loads > 0 ? S.Count[C] / Loads * Lines * G.Issue[C] : 0;
    }
    PipeCycles[unsigned(pipeOf(K))] += Cycles;
    bool Sequence = K == InstrClass::IntDiv || K == InstrClass::Fp32Div ||
                    K == InstrClass::Fp64Div;
    Dispatch += S.Count[C] * (Sequence ? G.Issue[C] : 1.0);
  }
  static const char *const PipeNames[NumPipes] = {"fma", "alu", "fp64", "xu",
                                                   "mio"};
  double IssuePerWarp = Dispatch;
  P.IssueLimit = "dispatch";
  for (unsigned I = 0; I < NumPipes; ++I)
    if (PipeCycles[I] > IssuePerWarp) {
      IssuePerWarp = PipeCycles[I];
      P.IssueLimit = PipeNames[I];
    }
  double ComputeCycles =
      BlocksOnBusiestSm * Warps * IssuePerWarp / std::max(1u, G.SubPartitions);
  P.ComputeSeconds = ComputeCycles / Hz;

  // Memory traffic: every requested sector passes through L2; DRAM moves
  // what the L2 rule leaves, reads and writes in the requests' proportion.
  P.RequestedBytes = Blocks * Warps * S.Requests * S.SectorsPerRequest * 32;
  double StoreBytes = Blocks * Warps * S.StoreSectors * 32;
  P.DramBytes = dramBytes(P.RequestedBytes, S.BlockDistinctBytes, S.Blocks,
                          S.FootprintBytes, G.L2Bytes);
  P.L2HitBytes = P.RequestedBytes - P.DramBytes;
  double WriteShare =
      P.RequestedBytes > 0 ? std::min(1.0, StoreBytes / P.RequestedBytes) : 0;
  P.DramSeconds = dramSeconds(G, P.DramBytes * (1 - WriteShare),
                              P.DramBytes * WriteShare);
  // L1: a sector a block reads again comes from its SM's L1 (the block's
  // warps run there together); L2 serves the rest of the loads by the
  // sector and takes stores (written through L1) as one packet per
  // 128-byte line they touch, data and byte mask.
  double LoadBytes = P.RequestedBytes - StoreBytes;
  double L2Loads = std::min(
      LoadBytes, std::max(0.0, S.BlockDistinctBytes * Blocks - StoreBytes));
  P.L1HitBytes = LoadBytes - L2Loads;
  P.L2Bytes = L2Loads + Blocks * Warps * S.StoreSegments * G.LineBytes;
  double L2Seconds = P.L2Bytes / (G.L2GBps * 1e9);

  // Latency: the representative warp running its stream (dependentPath); a
  // load waits one memory latency (L1 hits, L2 hits and DRAM in the
  // proportions above).
  // Without dependences: Luo's periods, a memory task with loads waits one
  // latency and issues the rest, stores do not wait.
  double Hit = P.RequestedBytes > 0 ? P.L2HitBytes / P.RequestedBytes : 0;
  double L1Hit = LoadBytes > 0 ? P.L1HitBytes / LoadBytes : 0;
  double Beyond = Hit * G.LatencyL2 + (1 - Hit) * G.LatencyDram;
  struct MemCtx {
    double Latency, Issue;
  } Ctx{L1Hit * (G.LatencyL1 > 0 ? G.LatencyL1 : G.LatencyL2) +
            (1 - L1Hit) * Beyond,
        G.Issue[unsigned(InstrClass::GlobalLoad)]};
  std::vector<luo::Period> Periods = periodsOf(
      S.Stream, G.Latency,
      [](unsigned L, unsigned St, const void *X) {
        auto *M = static_cast<const MemCtx *>(X);
        return (L ? M->Latency : 0.0) + (L + St) * M->Issue;
      },
      &Ctx);
  breakdown(P, Periods, S.StreamScale, P.NAct, 0, 0, nullptr);
  if (S.DepBegin.size() == S.Stream.size() + 1 && !S.Stream.empty()) {
    // The first round cannot hit L1: a block's re-reads come after it.
    P.PathCycles =
        dependentPath(G, S, Ctx.Latency, nullptr, &P.Rounds, Beyond);
  } else {
    P.PathCycles = P.ComputeCycles + P.MemoryCycles;
    for (const luo::Period &Q : Periods)
      P.Rounds += Q.Memory > 0 ? S.StreamScale : 0;
  }
  P.LatencySeconds = double(P.Waves) * P.PathCycles / Hz;

  // A wave's blocks issue their first loads together and wait for them:
  // one round of each wave does not overlap the data's transfer (the
  // pipeline fills and drains once per wave); later rounds do.
  double Exposed = P.Rounds > 0 ? P.LatencySeconds / std::max(1.0, P.Rounds)
                                : 0;
  P.MemorySeconds = 0;
  if (P.RequestedBytes > 0)
    P.MemorySeconds = std::max(P.DramSeconds + Exposed, L2Seconds);

  P.KernelSeconds =
      std::max({P.ComputeSeconds, P.LatencySeconds, P.MemorySeconds});
  P.LaunchSeconds = G.LaunchUs * 1e-6;
  P.Seconds = P.KernelSeconds + P.LaunchSeconds;
  if (P.LaunchSeconds >= P.KernelSeconds)
    P.Bound = Bottleneck::Launch;
  else if (P.KernelSeconds == P.MemorySeconds)
    // Mostly moving bytes, or mostly waiting for the first ones.
    P.Bound = P.MemorySeconds > L2Seconds && Exposed > P.DramSeconds
                  ? Bottleneck::Latency
                  : Bottleneck::Memory;
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
