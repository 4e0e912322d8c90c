//===- CoRunTime.cpp - A pair's time: interleaved or on split SMs ---------===//
//
// Part of Cleave's runtime (no LLVM). See cleave/rt/CoRun.h: the cycles a
// kernel takes alone, a pair interleaved at the model's ratio (Eq. 8's
// rounds, then the longer kernel's rest alone), and a pair on an SM
// partition (green contexts), each kernel at its own occupancy on its
// share of the SMs.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRun.h"

#include <algorithm>
#include <cmath>

namespace cleave {
namespace rt {
namespace corun {

double soloCycles(const KernelModelInput &K, const SoloPrediction &S,
                  uint64_t Blocks, unsigned Sms) {
  if (!Blocks || !Sms || !S.BlocksPerSm || !(S.Ipc > 0))
    return 0;
  uint64_t PerWave = uint64_t(S.BlocksPerSm) * Sms;
  uint64_t Waves = (Blocks + PerWave - 1) / PerWave;
  return double(Waves) * S.BlocksPerSm * K.InstrPerBlock / S.Ipc;
}

double interleaveCycles(const KernelModelInput &A, const KernelModelInput &B,
                        const SoloPrediction &SoloA,
                        const SoloPrediction &SoloB, const PairPrediction &P,
                        const uint64_t Blocks[2], unsigned Sms) {
  if (!Sms || !P.Blocks[0] || !P.Blocks[1] || !(P.CoIpc[0] > 0) ||
      !(P.CoIpc[1] > 0))
    return 0;
  const KernelModelInput *K[2] = {&A, &B};
  const SoloPrediction *S[2] = {&SoloA, &SoloB};
  double Round = 0, Rounds = 1e300;
  for (int I = 0; I < 2; ++I) {
    Round = std::max(Round, K[I]->InstrPerBlock * P.Blocks[I] / P.CoIpc[I]);
    Rounds = std::min(Rounds, double(Blocks[I]) / (double(P.Blocks[I]) * Sms));
  }
  double Cycles = Rounds * Round;
  for (int I = 0; I < 2; ++I) {
    double Left = double(Blocks[I]) - Rounds * P.Blocks[I] * Sms;
    if (Left >= 1)
      Cycles += soloCycles(*K[I], *S[I], uint64_t(std::ceil(Left)), Sms);
  }
  return Cycles;
}

Result predictPartition(const KernelModelInput &A, const KernelModelInput &B,
                        const SoloPrediction &SoloA,
                        const SoloPrediction &SoloB, const uint64_t Blocks[2],
                        unsigned Sms, unsigned Granularity,
                        PartitionPrediction &Out) {
  if (!Granularity || Sms < 2 * Granularity)
    return Result::error(ErrorCode::NotSupported,
                         "co-run model: " + std::to_string(Sms) +
                             " SMs cannot be split in groups of " +
                             std::to_string(Granularity));
  Out = {};
  for (unsigned N = Granularity; Sms - N >= Granularity; N += Granularity) {
    PartitionPrediction P;
    P.Sms[0] = N;
    P.Sms[1] = Sms - N;
    P.Cycles[0] = soloCycles(A, SoloA, Blocks[0], P.Sms[0]);
    P.Cycles[1] = soloCycles(B, SoloB, Blocks[1], P.Sms[1]);
    P.PairCycles = std::max(P.Cycles[0], P.Cycles[1]);
    if (!Out.Sms[0] || P.PairCycles < Out.PairCycles)
      Out = P;
  }
  return Result::success();
}

} // namespace corun
} // namespace rt
} // namespace cleave
