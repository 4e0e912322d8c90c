//===- CoSchedulerTest.cpp - Kernelet's scheduling decisions --------------===//
//
// Synthetic kernels on a small synthetic GPU: pair choice, slice ratio,
// priority order, stream and event order, and the §3.4 slice-size search.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoScheduler.h"

#include <gtest/gtest.h>

#include <map>

using namespace cleave::rt;

namespace {

/// 4 SMs of one scheduler and 16 warps, constant latency 400.
corun::SmLimits smallGpu() {
  corun::SmLimits S;
  S.Sms = 4;
  S.MaxWarps = 16;
  S.MaxBlocks = 16;
  S.Schedulers = 1;
  S.Memory.Base = 400;
  S.Memory.SectorsPerCycle = 2; // for MUR only: far above what is used
  return S;
}

corun::KernelModelInput kernel(double Rm, double InstrPerBlock) {
  corun::KernelModelInput K;
  K.MemRatio = Rm;
  K.WarpsPerBlock = 1;
  K.InstrPerBlock = InstrPerBlock;
  return K;
}

/// Compute-bound and memory-bound kernels (the digest's 0.005 / 0.2).
const corun::KernelModelInput Compute = kernel(0.005, 1000);
const corun::KernelModelInput Compute2 = kernel(0.004, 1000);
const corun::KernelModelInput Memory = kernel(0.2, 100);

PendingLaunch launch(uint64_t Id, const std::string &Kernel, uint64_t Stream,
                     uint64_t Blocks,
                     std::optional<corun::KernelModelInput> M = {}) {
  PendingLaunch L;
  L.Id = Id;
  L.Kernel = Kernel;
  L.Stream = Stream;
  L.Blocks = Blocks;
  L.Model = M;
  return L;
}

/// Runs the scheduler to the end, finishing every slice at once after each
/// co-schedule; the co-schedules in order.
std::vector<std::vector<Slice>> drain(CoScheduler &S) {
  std::vector<std::vector<Slice>> Steps;
  while (!S.done()) {
    std::vector<Slice> Out;
    EXPECT_TRUE(S.next(Out).ok());
    if (Out.empty()) {
      ADD_FAILURE() << "nothing to issue but launches remain";
      break;
    }
    for (const Slice &Sl : Out)
      EXPECT_TRUE(S.finished(Sl.Launch, Sl.End - Sl.Begin).ok());
    Steps.push_back(Out);
  }
  return Steps;
}

TEST(CoScheduler, PairsComplementaryKernels) {
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "c1", 1, 1000, Compute)).ok());
  ASSERT_TRUE(S.submit(launch(2, "c2", 2, 1000, Compute2)).ok());
  ASSERT_TRUE(S.submit(launch(3, "m", 3, 1000, Memory)).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  const CoSchedulePlan &P = S.plan();
  ASSERT_EQ(P.Launches.size(), 2u);
  // c1-c2 are alike on both axes and pruned; a compute kernel with the
  // memory kernel is chosen.
  EXPECT_EQ(P.Pruned, 1u);
  EXPECT_EQ(P.Evaluated, 2u);
  EXPECT_EQ(P.Launches[1], 3u);
  EXPECT_GT(P.Pair.Profit, 0.1);
  // The slices follow the model's ratio: P_i x SMs blocks from block 0.
  ASSERT_EQ(Out.size(), 2u);
  for (int I = 0; I < 2; ++I) {
    EXPECT_EQ(Out[I].Launch, P.Launches[I]);
    EXPECT_EQ(Out[I].Begin, 0u);
    EXPECT_EQ(Out[I].End, uint64_t(P.Pair.Blocks[I]) * 4);
    EXPECT_EQ(Out[I].BlocksPerSm, P.Pair.Blocks[I]);
  }
}

TEST(CoScheduler, AlikeKernelsRunAloneOldestFirst) {
  // Two memory-bound kernels gain nothing together.
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "m1", 1, 8, Memory)).ok());
  ASSERT_TRUE(S.submit(launch(2, "m2", 2, 8, Memory)).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 1u);
  EXPECT_EQ(Out[0].End, 8u); // no minimum slice: the whole grid
}

TEST(CoScheduler, EveryBlockIssuedOnceInOrder) {
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "c", 1, 1003, Compute)).ok());
  ASSERT_TRUE(S.submit(launch(2, "m", 2, 517, Memory)).ok());
  std::map<uint64_t, uint64_t> Next;
  for (auto &Step : drain(S))
    for (const Slice &Sl : Step) {
      EXPECT_EQ(Sl.Begin, Next[Sl.Launch]) << "launch " << Sl.Launch;
      EXPECT_LT(Sl.Begin, Sl.End);
      Next[Sl.Launch] = Sl.End;
    }
  EXPECT_EQ(Next[1], 1003u);
  EXPECT_EQ(Next[2], 517u);
}

TEST(CoScheduler, MinimumSliceBatchesRounds) {
  CoScheduler S(smallGpu());
  PendingLaunch C = launch(1, "c", 1, 10000, Compute);
  C.MinSliceBlocks = 40;
  ASSERT_TRUE(S.submit(C).ok());
  ASSERT_TRUE(S.submit(launch(2, "m", 2, 10000, Memory)).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 2u);
  const corun::PairPrediction &P = S.plan().Pair;
  uint64_t PerC = uint64_t(P.Blocks[0]) * 4, PerM = uint64_t(P.Blocks[1]) * 4;
  uint64_t Rounds = (40 + PerC - 1) / PerC;
  EXPECT_GE((Out[0].End - Out[0].Begin), 40u);
  EXPECT_EQ(Out[0].End - Out[0].Begin, Rounds * PerC);
  EXPECT_EQ(Out[1].End - Out[1].Begin, Rounds * PerM);
}

TEST(CoScheduler, StreamOrderIsKept) {
  // Launch 2 follows launch 1 on stream 1: it is not issued until launch 1
  // has finished, even while launch 1's last slice is running.
  CoScheduler S(smallGpu());
  PendingLaunch A = launch(1, "c", 1, 20, Compute);
  A.MinSliceBlocks = 10;
  ASSERT_TRUE(S.submit(A).ok());
  ASSERT_TRUE(S.submit(launch(2, "m", 1, 20, Memory)).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 1u);
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 1u);
  EXPECT_EQ(Out[0].End, 20u);
  ASSERT_TRUE(S.next(Out).ok());
  EXPECT_TRUE(Out.empty()) << "launch 2 issued before launch 1 finished";
  ASSERT_TRUE(S.finished(1, 10).ok());
  ASSERT_TRUE(S.next(Out).ok());
  EXPECT_TRUE(Out.empty());
  ASSERT_TRUE(S.finished(1, 10).ok());
  EXPECT_TRUE(S.complete(1));
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 2u);
}

TEST(CoScheduler, EventWaitIsKept) {
  // Launch 3 on stream 2 waits for an event recorded after launch 1: it is
  // neither issued nor paired before launch 1 finishes.
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "c", 1, 8, Compute)).ok());
  PendingLaunch W = launch(3, "m", 2, 8, Memory);
  W.WaitsFor = {1};
  ASSERT_TRUE(S.submit(W).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 1u);
  ASSERT_TRUE(S.next(Out).ok());
  EXPECT_TRUE(Out.empty());
  ASSERT_TRUE(S.finished(1, 8).ok());
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 3u);
}

TEST(CoScheduler, HigherPriorityFirst) {
  // A high-priority (lower number) arrival takes the next slice from a
  // long low-priority grid, which resumes after it.
  CoScheduler S(smallGpu());
  PendingLaunch Low = launch(1, "c", 1, 100, Compute);
  Low.MinSliceBlocks = 10;
  Low.Priority = 0;
  ASSERT_TRUE(S.submit(Low).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].End, 10u);
  PendingLaunch High = launch(2, "m", 2, 4, Memory);
  High.Priority = -1;
  ASSERT_TRUE(S.submit(High).ok());
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u) << "high priority must not share";
  EXPECT_EQ(Out[0].Launch, 2u);
  ASSERT_TRUE(S.finished(2, 4).ok());
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 1u);
  EXPECT_EQ(Out[0].Begin, 10u);
}

TEST(CoScheduler, PlanKeptUntilTheReadySetChanges) {
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "c", 1, 100000, Compute)).ok());
  ASSERT_TRUE(S.submit(launch(2, "m", 2, 100000, Memory)).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  std::vector<uint64_t> First = S.plan().Launches;
  ASSERT_TRUE(S.next(Out).ok());
  EXPECT_EQ(S.plan().Launches, First);
  // An arrival re-plans: the new compute kernel is as good a partner, so the
  // pair may change, but the plan is recomputed over three launches.
  ASSERT_TRUE(S.submit(launch(3, "c2", 3, 100000, Compute2)).ok());
  ASSERT_TRUE(S.next(Out).ok());
  EXPECT_EQ(S.plan().Evaluated + S.plan().Pruned, 3u);
}

TEST(CoScheduler, LaunchWithoutModelRunsAlone) {
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "x", 1, 8)).ok());
  ASSERT_TRUE(S.submit(launch(2, "m", 2, 8, Memory)).ok());
  std::vector<Slice> Out;
  ASSERT_TRUE(S.next(Out).ok());
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Launch, 1u);
}

TEST(CoScheduler, RejectsBadSubmissions) {
  CoScheduler S(smallGpu());
  ASSERT_TRUE(S.submit(launch(1, "c", 1, 8, Compute)).ok());
  EXPECT_FALSE(S.submit(launch(1, "c", 1, 8, Compute)).ok());
  EXPECT_FALSE(S.submit(launch(2, "c", 1, 0, Compute)).ok());
  PendingLaunch W = launch(3, "c", 1, 8);
  W.WaitsFor = {42};
  EXPECT_FALSE(S.submit(W).ok());
  EXPECT_FALSE(S.finished(1, 1).ok()); // nothing issued yet
}

/// A synthetic overhead curve: 25 % at one block per SM, falling as 1/k.
Result curve(uint64_t Blocks, double &Overhead, unsigned Sms,
             std::vector<uint64_t> &Asked) {
  Asked.push_back(Blocks);
  Overhead = 0.25 / double(Blocks / Sms);
  return Result::success();
}

TEST(SliceSize, SmallestMultipleOfTheSmsWithinTwoPercent) {
  std::vector<uint64_t> Asked;
  uint64_t Size = 0;
  ASSERT_TRUE(findSliceSize(
                  14, 8, 100000,
                  [&](uint64_t B, double &O) { return curve(B, O, 14, Asked); },
                  Size)
                  .ok());
  // 0.25 / k <= 0.02 first at k = 13 > 8: no slice size passes.
  EXPECT_EQ(Size, 100000u);
  EXPECT_EQ(Asked.size(), 8u);
  Asked.clear();
  ASSERT_TRUE(findSliceSize(
                  14, 16, 100000,
                  [&](uint64_t B, double &O) { return curve(B, O, 14, Asked); },
                  Size)
                  .ok());
  EXPECT_EQ(Size, 13u * 14u);
  EXPECT_EQ(Asked.back(), 13u * 14u);
  EXPECT_EQ(Asked.size(), 13u);
}

TEST(SliceSize, SmallGridsAndErrors) {
  uint64_t Size = 0;
  int Calls = 0;
  auto Never = [&](uint64_t, double &O) {
    ++Calls;
    O = 1;
    return Result::success();
  };
  ASSERT_TRUE(findSliceSize(132, 32, 100, Never, Size).ok());
  EXPECT_EQ(Size, 100u);
  EXPECT_EQ(Calls, 0);
  auto Fails = [](uint64_t, double &) {
    return Result::error(ErrorCode::LaunchFailure, "measurement failed");
  };
  EXPECT_EQ(findSliceSize(4, 8, 1000, Fails, Size).code(),
            ErrorCode::LaunchFailure);
  EXPECT_FALSE(findSliceSize(0, 8, 1000, Never, Size).ok());
}

/// 16 SMs of the small GPU's kind, split in groups of 4.
corun::SmLimits splitGpu() {
  corun::SmLimits S = smallGpu();
  S.Sms = 16;
  S.SharedBytes = 1000;
  return S;
}

TEST(CoRunPartition, SoloCyclesAndTheBestSplit) {
  corun::SmLimits G = splitGpu();
  corun::SoloPrediction S;
  ASSERT_TRUE(corun::predictSolo(Compute, G, S).ok());
  ASSERT_EQ(S.BlocksPerSm, 16u);
  // 1000 blocks on 16 SMs of 16 blocks: 4 waves of 16 x 1000 / IPC.
  EXPECT_DOUBLE_EQ(corun::soloCycles(Compute, S, 1000, 16),
                   4 * 16 * 1000 / S.Ipc);
  EXPECT_DOUBLE_EQ(corun::soloCycles(Compute, S, 0, 16), 0);
  // Two alike kernels, three times the blocks for the first: 12 SMs and 4.
  corun::PartitionPrediction P;
  uint64_t Blocks[2] = {3 * 16 * 12, 16 * 4};
  ASSERT_TRUE(
      corun::predictPartition(Compute, Compute, S, S, Blocks, 16, 4, P).ok());
  EXPECT_EQ(P.Sms[0], 12u);
  EXPECT_EQ(P.Sms[1], 4u);
  EXPECT_DOUBLE_EQ(P.Cycles[0], corun::soloCycles(Compute, S, Blocks[0], 12));
  EXPECT_DOUBLE_EQ(P.PairCycles, std::max(P.Cycles[0], P.Cycles[1]));
  // A split needs two groups.
  EXPECT_FALSE(
      corun::predictPartition(Compute, Compute, S, S, Blocks, 7, 4, P).ok());
  EXPECT_FALSE(
      corun::predictPartition(Compute, Compute, S, S, Blocks, 16, 0, P).ok());
}

/// A kernel whose block holds most of an SM's shared memory: two of them
/// never share an SM, so interleaving cannot pair them. Launches of 8
/// blocks fill half the GPU: on a split each takes what it takes alone
/// (the compute-bound one two waves on 4 SMs, within the other's one).
corun::KernelModelInput hogsShared(double Rm) {
  corun::KernelModelInput K = kernel(Rm, 1000);
  K.SharedPerBlock = 600;
  return K;
}

TEST(CoScheduler, SplitsTheSmsWhenThePairCannotShareAnSm) {
  for (auto Rule : {CoScheduleOptions::PartitionRule::Never,
                    CoScheduleOptions::PartitionRule::Better}) {
    CoScheduleOptions O;
    O.PartitionGranularity = 4;
    O.Partition = Rule;
    CoScheduler S(splitGpu(), O);
    ASSERT_TRUE(S.submit(launch(1, "a", 1, 8, hogsShared(0.005))).ok());
    ASSERT_TRUE(S.submit(launch(2, "b", 2, 8, hogsShared(0.2))).ok());
    std::vector<Slice> Out;
    ASSERT_TRUE(S.next(Out).ok());
    if (Rule == CoScheduleOptions::PartitionRule::Never) {
      // Without partitions: no pair, the oldest alone.
      EXPECT_EQ(S.plan().Launches.size(), 1u);
      EXPECT_FALSE(S.plan().Partitioned);
      continue;
    }
    const CoSchedulePlan &P = S.plan();
    ASSERT_EQ(P.Launches.size(), 2u);
    EXPECT_TRUE(P.Partitioned);
    EXPECT_EQ(P.Split.Sms[0] + P.Split.Sms[1], 16u);
    EXPECT_EQ(P.Split.Sms[0] % 4, 0u);
    // One wave each side by side: the longer kernel's time, not the sum.
    EXPECT_DOUBLE_EQ(P.Split.PairCycles,
                     std::max(P.Split.Cycles[0], P.Split.Cycles[1]));
    // The memory-bound kernel's wave is the pair's time; one after the
    // other, the compute-bound one's wave is added.
    EXPECT_LT(P.Split.PairCycles, P.SerialCycles);
    EXPECT_DOUBLE_EQ(P.Split.Cycles[1], P.SerialCycles - P.Split.Cycles[0] / 2);
    // Each launch's blocks at once, unsliced, on its side of the split.
    ASSERT_EQ(Out.size(), 2u);
    for (unsigned I = 0; I < 2; ++I) {
      EXPECT_EQ(Out[I].Begin, 0u);
      EXPECT_EQ(Out[I].End, 8u);
      EXPECT_EQ(Out[I].Side, I + 1);
      EXPECT_EQ(Out[I].SplitSms, P.Split.Sms[0]);
    }
  }
}

TEST(CoScheduler, ChoosesTheShorterOfInterleavingAndASplit) {
  // A complementary pair: interleaving is predicted shorter than a split
  // here, so Better interleaves; Always splits all the same; without a
  // granularity (the driver offers no partitions) nothing is split.
  struct Case {
    CoScheduleOptions::PartitionRule Rule;
    unsigned Granularity;
  };
  for (Case C : {Case{CoScheduleOptions::PartitionRule::Better, 4},
                 Case{CoScheduleOptions::PartitionRule::Always, 4},
                 Case{CoScheduleOptions::PartitionRule::Always, 0}}) {
    CoScheduleOptions O;
    O.PartitionGranularity = C.Granularity;
    O.Partition = C.Rule;
    CoScheduler S(splitGpu(), O);
    ASSERT_TRUE(S.submit(launch(1, "c", 1, 4000, Compute)).ok());
    ASSERT_TRUE(S.submit(launch(2, "m", 2, 4000, Memory)).ok());
    std::vector<Slice> Out;
    ASSERT_TRUE(S.next(Out).ok());
    const CoSchedulePlan &P = S.plan();
    ASSERT_EQ(P.Launches.size(), 2u);
    EXPECT_GT(P.InterleaveCycles, 0);
    EXPECT_LT(P.InterleaveCycles, P.SerialCycles);
    if (!C.Granularity) {
      EXPECT_FALSE(P.Partitioned);
      EXPECT_EQ(P.Split.PairCycles, 0);
      continue;
    }
    ASSERT_GT(P.Split.PairCycles, 0);
    EXPECT_LT(P.InterleaveCycles, P.Split.PairCycles);
    EXPECT_EQ(P.Partitioned,
              C.Rule == CoScheduleOptions::PartitionRule::Always);
    EXPECT_EQ(Out[0].Side, P.Partitioned ? 1u : 0u);
    EXPECT_EQ(Out[0].End - Out[0].Begin, P.Partitioned ? 4000u : 
              uint64_t(P.Pair.Blocks[0]) * 16);
  }
}

TEST(CoScheduler, AForcedRatioPairsAtItWhateverTheProfit) {
  // Two alike compute-bound kernels: the model predicts no profit, so the
  // pair does not run; forced at 1:3 (the oracle's runs) it runs at the
  // filling ratio nearest a quarter of the SM's blocks for the first.
  for (bool Forced : {false, true}) {
    CoScheduleOptions O;
    if (Forced) {
      O.Pair.Forced[0] = 1;
      O.Pair.Forced[1] = 3;
    }
    CoScheduler S(smallGpu(), O);
    ASSERT_TRUE(S.submit(launch(1, "c1", 1, 1000, Compute)).ok());
    ASSERT_TRUE(S.submit(launch(2, "c2", 2, 1000, Compute2)).ok());
    std::vector<Slice> Out;
    ASSERT_TRUE(S.next(Out).ok());
    const CoSchedulePlan &P = S.plan();
    if (!Forced) {
      EXPECT_EQ(P.Launches.size(), 1u);
      continue;
    }
    ASSERT_EQ(P.Launches.size(), 2u);
    EXPECT_LT(P.Pair.Profit, O.MinProfit);
    // 16 one-warp blocks fill the SM: 4 and 12.
    EXPECT_EQ(P.Pair.Blocks[0], 4u);
    EXPECT_EQ(P.Pair.Blocks[1], 12u);
  }
}

} // namespace
