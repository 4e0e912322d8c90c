//===- CoRunPair.cpp - A kernel alone and a pair on one SM ----------------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRun.h: the virtual SM
// of §4.7 with the lumping of §4.8, the solo prediction and PUR/MUR of
// §5.2, and the pair's ratio (Eq. 8) and profit (Eq. 1).
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRun.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {
namespace corun {

namespace {

MemoryModel virtualMemory(const SmLimits &S) {
  MemoryModel M = S.Memory;
  M.SectorsPerCycle /= std::max(S.Schedulers, 1u);
  return M;
}

double averageSectors(const KernelModelInput &K) {
  return K.CoalescedFraction * K.CoalescedSectors +
         (1 - K.CoalescedFraction) * K.UncoalescedSectors;
}

/// Whether \p Blocks blocks of each kernel fit on one SM together.
bool fits(const std::vector<const KernelModelInput *> &K,
          const std::vector<unsigned> &Blocks, const SmLimits &S) {
  uint64_t Warps = 0, BlockCount = 0, Regs = 0, Shared = 0;
  for (size_t I = 0; I < K.size(); ++I) {
    Warps += uint64_t(Blocks[I]) * K[I]->WarpsPerBlock;
    BlockCount += Blocks[I];
    Regs += uint64_t(Blocks[I]) * K[I]->RegistersPerBlock;
    Shared += uint64_t(Blocks[I]) * K[I]->SharedPerBlock;
  }
  return Warps <= S.MaxWarps && BlockCount <= S.MaxBlocks &&
         Regs <= S.Registers && Shared <= S.SharedBytes;
}

/// Solves the virtual SM of \p K at \p Blocks per SM; the SM's IPC of each.
Result coIpc(const std::vector<const KernelModelInput *> &K,
             const std::vector<unsigned> &Blocks, const SmLimits &S,
             std::vector<double> &Ipc) {
  ChainResult R;
  if (Result E = solveChain(virtualSm(K, Blocks, S), virtualMemory(S), R);
      !E.ok())
    return E;
  Ipc = R.Ipc;
  for (double &V : Ipc)
    V *= std::max(S.Schedulers, 1u);
  return Result::success();
}

/// Eq. 8 in relative form: |T1 - T2| / max(T1, T2), T_i = I_i P_i / cIPC_i.
double imbalance(const KernelModelInput &A, const KernelModelInput &B,
                 const PairPrediction &P) {
  double TA = A.InstrPerBlock * P.Blocks[0] / P.CoIpc[0];
  double TB = B.InstrPerBlock * P.Blocks[1] / P.CoIpc[1];
  double Max = std::max(TA, TB);
  return Max > 0 && std::isfinite(Max) ? std::fabs(TA - TB) / Max : 0;
}

/// Picks among the evaluated co-schedules by \p O's rule.
const PairPrediction *choose(const std::vector<PairPrediction> &C,
                             const PairOptions &O) {
  const PairPrediction *Best = nullptr;
  if (O.Forced[0] && O.Forced[1]) {
    double Share = double(O.Forced[0]) / (O.Forced[0] + O.Forced[1]);
    auto Gap = [&](const PairPrediction &P) {
      return std::fabs(double(P.Blocks[0]) / (P.Blocks[0] + P.Blocks[1]) -
                       Share);
    };
    for (const PairPrediction &P : C)
      if (!Best || Gap(P) < Gap(*Best))
        Best = &P;
    return Best;
  }
  double Least = 2;
  for (const PairPrediction &P : C)
    Least = std::min(Least, P.Imbalance);
  for (const PairPrediction &P : C) {
    if (O.Rule == RatioRule::Balanced && P.Imbalance > Least + O.BalanceSlack)
      continue;
    if (!Best || P.Profit > Best->Profit)
      Best = &P;
  }
  return Best;
}

} // namespace

unsigned blocksPerSm(const KernelModelInput &K, const SmLimits &S) {
  unsigned B = 0;
  while (B < S.MaxBlocks && fits({&K}, {B + 1}, S))
    ++B;
  return B;
}

std::vector<Population>
virtualSm(const std::vector<const KernelModelInput *> &K,
          const std::vector<unsigned> &Blocks, const SmLimits &S) {
  // A block's warps are spread over the schedulers, so the virtual SM holds
  // the SM's warps divided by them (at least one per resident kernel).
  std::vector<double> Warps;
  for (size_t I = 0; I < K.size(); ++I)
    Warps.push_back(
        std::max(1.0, std::round(double(Blocks[I]) * K[I]->WarpsPerBlock /
                                 std::max(S.Schedulers, 1u))));
  std::vector<Population> Pops;
  for (unsigned Unit = 1;; ++Unit) {
    Pops.clear();
    for (size_t I = 0; I < K.size(); ++I) {
      Population P;
      P.WarpsPerUnit = Unit;
      P.Units = unsigned(std::max(1.0, std::round(Warps[I] / Unit)));
      P.MemRatio = K[I]->MemRatio;
      P.CoalescedFraction = K[I]->CoalescedFraction;
      P.CoalescedSectors = K[I]->CoalescedSectors;
      P.UncoalescedSectors = K[I]->UncoalescedSectors;
      Pops.push_back(P);
    }
    bool AllSingle =
        std::all_of(Pops.begin(), Pops.end(),
                    [](const Population &P) { return P.Units == 1; });
    if (chainStates(Pops) <= S.MaxStates || AllSingle)
      return Pops;
  }
}

Result predictSolo(const KernelModelInput &K, const SmLimits &S,
                   SoloPrediction &Out) {
  Out = {};
  Out.BlocksPerSm = blocksPerSm(K, S);
  if (!Out.BlocksPerSm)
    return Result::error(ErrorCode::NotSupported,
                         "co-run model: not one block of the kernel fits "
                         "on an SM");
  std::vector<double> Ipc;
  if (Result E = coIpc({&K}, {Out.BlocksPerSm}, S, Ipc); !E.ok())
    return E;
  Out.Ipc = Ipc[0];
  Out.Pur = Out.Ipc / std::max(S.Schedulers, 1u);
  if (S.Memory.SectorsPerCycle > 0)
    Out.Mur = std::min(1.0, Out.Ipc * K.MemRatio * averageSectors(K) /
                                S.Memory.SectorsPerCycle);
  return Result::success();
}

Result predictPair(const KernelModelInput &A, const KernelModelInput &B,
                   const SoloPrediction &SoloA, const SoloPrediction &SoloB,
                   const SmLimits &S, PairPrediction &Out,
                   const PairOptions &O) {
  std::vector<PairPrediction> Candidates;
  for (unsigned BA = 1; BA < S.MaxBlocks; ++BA) {
    if (!fits({&A, &B}, {BA, 1}, S))
      break;
    for (unsigned BB = 1; fits({&A, &B}, {BA, BB}, S); ++BB) {
      // Only co-schedules that fill the SM: one that leaves room for
      // another block of either kernel gives up throughput for nothing.
      if (fits({&A, &B}, {BA + 1, BB}, S) || fits({&A, &B}, {BA, BB + 1}, S))
        continue;
      PairPrediction P;
      P.Blocks[0] = BA;
      P.Blocks[1] = BB;
      std::vector<double> Ipc;
      if (Result E = coIpc({&A, &B}, {BA, BB}, S, Ipc); !E.ok())
        return E;
      P.CoIpc[0] = Ipc[0];
      P.CoIpc[1] = Ipc[1];
      P.SoloIpc[0] = SoloA.Ipc;
      P.SoloIpc[1] = SoloB.Ipc;
      P.Profit = coSchedulingProfit(Ipc, {SoloA.Ipc, SoloB.Ipc});
      P.Imbalance = imbalance(A, B, P);
      Candidates.push_back(P);
    }
  }
  const PairPrediction *Best = choose(Candidates, O);
  if (!Best)
    return Result::error(ErrorCode::NotSupported,
                         "co-run model: the two kernels do not fit on one "
                         "SM together");
  Out = *Best;
  Out.Ratios = unsigned(Candidates.size());
  return Result::success();
}

} // namespace corun
} // namespace rt
} // namespace cleave
