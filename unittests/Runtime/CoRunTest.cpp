//===- CoRunTest.cpp - Kernelet's Markov-chain co-run model ---------------===//
//
// The golden values are digest 003 §4.11's (its reference model, constant
// latency), to three decimals.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/CoRun.h"

#include <gtest/gtest.h>

using namespace cleave::rt;
using namespace cleave::rt::corun;

namespace {

MemoryModel constantLatency(double L) {
  MemoryModel M;
  M.Base = L;
  return M;
}

double homo(unsigned W, double Rm, double L) {
  double Ipc = -1;
  Result R = homogeneousIpc(W, Rm, constantLatency(L), Ipc);
  EXPECT_TRUE(R.ok()) << R.message();
  return Ipc;
}

std::vector<double> hetero(unsigned W1, unsigned W2, double Rm1, double Rm2,
                           double L) {
  Population A, B;
  A.Units = W1;
  A.MemRatio = Rm1;
  B.Units = W2;
  B.MemRatio = Rm2;
  ChainResult Out;
  Result R = solveChain({A, B}, constantLatency(L), Out);
  EXPECT_TRUE(R.ok()) << R.message();
  EXPECT_EQ(Out.States, (W1 + 1) * (W2 + 1));
  return Out.Ipc;
}

TEST(CoRunModel, HomogeneousSanityValues) {
  EXPECT_NEAR(homo(8, 0.05, 400), 0.373066, 5e-4);
  EXPECT_NEAR(homo(16, 0.05, 400), 0.708468, 5e-4);
  EXPECT_NEAR(homo(24, 0.10, 500), 0.463827, 5e-4);
  EXPECT_NEAR(homo(48, 0.20, 400), 0.583979, 5e-4);
}

TEST(CoRunModel, NoMemoryMeansFullIssue) {
  EXPECT_NEAR(homo(4, 0.0, 400), 1.0, 1e-9);
}

TEST(CoRunModel, HeterogeneousOfEqualKernelsIsHomogeneous) {
  std::vector<double> Ipc = hetero(8, 8, 0.05, 0.05, 400);
  EXPECT_NEAR(Ipc[0] + Ipc[1], homo(16, 0.05, 400), 1e-9);
  EXPECT_NEAR(Ipc[0], Ipc[1], 1e-9);
}

TEST(CoRunModel, ProfitBySplitFavoursMemoryKernelWarps) {
  double A = homo(16, 0.005, 400), B = homo(16, 0.20, 400);
  EXPECT_NEAR(A, 1.0, 1e-3);
  EXPECT_NEAR(B, 0.197, 1e-3);
  struct {
    unsigned W1;
    double Cp;
  } Splits[] = {{2, 0.2915}, {4, 0.3450}, {8, 0.2707}, {14, 0.0805}};
  for (auto S : Splits)
    EXPECT_NEAR(
        coSchedulingProfit(hetero(S.W1, 16 - S.W1, 0.005, 0.2, 400), {A, B}),
        S.Cp, 1e-3)
        << "w1 = " << S.W1;
}

TEST(CoRunModel, ProfitEquation) {
  EXPECT_NEAR(coSchedulingProfit({0.5, 0.5}, {1, 1}), 0.0, 1e-12);
  EXPECT_NEAR(coSchedulingProfit({0.65, 0.65}, {1, 1}), 1 - 1 / 1.3, 1e-12);
  EXPECT_EQ(coSchedulingProfit({1}, {0}), 0.0);
}

TEST(CoRunModel, UncoalescedAccessLowersIpc) {
  // §4.6: with bandwidth, an uncoalesced request (32 sectors) waits longer
  // than a coalesced one (4), so the same Rm issues less.
  MemoryModel M;
  M.Base = 400;
  M.SectorsPerCycle = 0.15;
  Population P;
  P.Units = 8;
  P.MemRatio = 0.05;
  ChainResult Coalesced, Mixed, Uncoalesced;
  ASSERT_TRUE(solveChain({P}, M, Coalesced).ok());
  P.CoalescedFraction = 0.5;
  ASSERT_TRUE(solveChain({P}, M, Mixed).ok());
  EXPECT_EQ(Mixed.States, 9u * 10u / 2u);
  P.CoalescedFraction = 0;
  ASSERT_TRUE(solveChain({P}, M, Uncoalesced).ok());
  EXPECT_EQ(Uncoalesced.States, 9u);
  EXPECT_GT(Coalesced.Ipc[0], Mixed.Ipc[0] + 0.02);
  EXPECT_GT(Mixed.Ipc[0], Uncoalesced.Ipc[0] + 0.02);
}

TEST(CoRunModel, ThreeStateChainWithEqualLatenciesIsTwoState) {
  // Both kinds of request taking the same time, the split of the idle warps
  // between them cannot change the IPC.
  Population P;
  P.Units = 6;
  P.MemRatio = 0.1;
  P.CoalescedFraction = 0.3;
  ChainResult R;
  ASSERT_TRUE(solveChain({P}, constantLatency(300), R).ok());
  EXPECT_NEAR(R.Ipc[0], homo(6, 0.1, 300), 1e-9);
}

TEST(CoRunModel, DirectAndIterativeSolutionsAgree) {
  Population A, B;
  A.Units = 5;
  A.MemRatio = 0.02;
  B.Units = 7;
  B.MemRatio = 0.3;
  ChainResult Direct, Iterative;
  ASSERT_TRUE(solveChain({A, B}, constantLatency(400), Direct).ok());
  ChainOptions O;
  O.DirectLimit = 0;
  ASSERT_TRUE(solveChain({A, B}, constantLatency(400), Iterative, O).ok());
  EXPECT_EQ(Direct.Iterations, 0u);
  EXPECT_GT(Iterative.Iterations, 0u);
  EXPECT_NEAR(Direct.Ipc[0], Iterative.Ipc[0], 1e-6);
  EXPECT_NEAR(Direct.Ipc[1], Iterative.Ipc[1], 1e-6);
}

TEST(CoRunModel, ContentionRaisesLatency) {
  MemoryModel M = constantLatency(400);
  EXPECT_EQ(M.latency(4, 1000), 400);
  M.SectorsPerCycle = 0.5;
  M.Slope = 2;
  EXPECT_NEAR(M.latency(4, 96), 400 + 2 * 100 / 0.5, 1e-9);
}

TEST(CoRunModel, RejectsBadInputs) {
  ChainResult R;
  EXPECT_FALSE(solveChain({}, constantLatency(400), R).ok());
  Population P;
  EXPECT_FALSE(solveChain({P}, constantLatency(400), R).ok());
  P.Units = 4;
  P.MemRatio = 1.5;
  EXPECT_FALSE(solveChain({P}, constantLatency(400), R).ok());
}

/// One warp scheduler of 16 warps, the digest's W = 16 setting, with
/// one-warp blocks.
SmLimits sixteenWarpSm() {
  SmLimits S;
  S.MaxWarps = 16;
  S.MaxBlocks = 16;
  S.Schedulers = 1;
  S.Memory = constantLatency(400);
  return S;
}

KernelModelInput oneWarpKernel(double Rm, double InstrPerBlock) {
  KernelModelInput K;
  K.MemRatio = Rm;
  K.WarpsPerBlock = 1;
  K.InstrPerBlock = InstrPerBlock;
  return K;
}

TEST(CoRunPair, MaxProfitRatioIsTheDigestsBestSplit) {
  SmLimits S = sixteenWarpSm();
  KernelModelInput A = oneWarpKernel(0.005, 1000), B = oneWarpKernel(0.2, 1000);
  SoloPrediction SA, SB;
  ASSERT_TRUE(predictSolo(A, S, SA).ok());
  ASSERT_TRUE(predictSolo(B, S, SB).ok());
  EXPECT_EQ(SA.BlocksPerSm, 16u);
  EXPECT_NEAR(SA.Ipc, 1.0, 1e-3);
  EXPECT_NEAR(SB.Ipc, 0.197, 1e-3);
  PairOptions O;
  O.Rule = RatioRule::MaxProfit;
  PairPrediction P;
  ASSERT_TRUE(predictPair(A, B, SA, SB, S, P, O).ok());
  EXPECT_EQ(P.Blocks[0], 4u);
  EXPECT_EQ(P.Blocks[1], 12u);
  EXPECT_NEAR(P.Profit, 0.345, 1e-3);
  // Every split of the 16 warps with a block of each was weighed.
  EXPECT_EQ(P.Ratios, 15u);
}

TEST(CoRunPair, BalancedRatioEqualisesSliceTimes) {
  // A memory-bound kernel issuing a tenth of the compute kernel's
  // instructions per block: the balanced ratio is the one at which both
  // slices finish together (Eq. 8), not the most profitable one.
  SmLimits S = sixteenWarpSm();
  KernelModelInput A = oneWarpKernel(0.005, 1000), B = oneWarpKernel(0.2, 100);
  SoloPrediction SA, SB;
  ASSERT_TRUE(predictSolo(A, S, SA).ok());
  ASSERT_TRUE(predictSolo(B, S, SB).ok());
  PairPrediction P;
  ASSERT_TRUE(predictPair(A, B, SA, SB, S, P).ok());
  EXPECT_LT(P.Imbalance, 0.1);
  double TA = 1000.0 * P.Blocks[0] / P.CoIpc[0];
  double TB = 100.0 * P.Blocks[1] / P.CoIpc[1];
  EXPECT_NEAR(TA / TB, 1.0, 0.1);
  EXPECT_GT(P.Profit, 0.0);
  PairOptions O;
  O.Rule = RatioRule::MaxProfit;
  PairPrediction Max;
  ASSERT_TRUE(predictPair(A, B, SA, SB, S, Max, O).ok());
  EXPECT_GT(Max.Imbalance, P.Imbalance);
  EXPECT_GE(Max.Profit, P.Profit);
}

TEST(CoRunPair, VirtualSmDividesWarpsAndBandwidth) {
  SmLimits S;
  S.Schedulers = 4;
  S.MaxStates = 100000;
  KernelModelInput K = oneWarpKernel(0.05, 1);
  K.WarpsPerBlock = 8;
  std::vector<Population> P = virtualSm({&K}, {8}, S);
  ASSERT_EQ(P.size(), 1u);
  EXPECT_EQ(P[0].Units, 16u);
  EXPECT_EQ(P[0].WarpsPerUnit, 1u);
  // 4 schedulers of 16 warps issue 4x what one does (§4.7).
  SoloPrediction Solo;
  S.Memory = constantLatency(400);
  ASSERT_TRUE(predictSolo(K, S, Solo).ok());
  EXPECT_EQ(Solo.BlocksPerSm, 8u);
  EXPECT_NEAR(Solo.Ipc, 4 * homo(16, 0.05, 400), 1e-9);
}

TEST(CoRunPair, OnlineShortcutLumpsWarpsWithinTheBudget) {
  SmLimits S;
  S.Schedulers = 1;
  S.MaxStates = 100;
  KernelModelInput A = oneWarpKernel(0.01, 1), B = oneWarpKernel(0.2, 1);
  std::vector<Population> P = virtualSm({&A, &B}, {24, 24}, S);
  EXPECT_LE(chainStates(P), 100u);
  EXPECT_GT(P[0].WarpsPerUnit, 1u);
  EXPECT_EQ(P[0].WarpsPerUnit, P[1].WarpsPerUnit);
  // The lumped chain stays near the warp-level one (§4.8's trade).
  ChainResult Lumped;
  ASSERT_TRUE(solveChain(P, constantLatency(400), Lumped).ok());
  std::vector<double> Exact = hetero(24, 24, 0.01, 0.2, 400);
  EXPECT_NEAR(Lumped.Ipc[0] + Lumped.Ipc[1], Exact[0] + Exact[1], 0.05);
}

TEST(CoRunPair, ResourcesLimitTheRatios) {
  SmLimits S = sixteenWarpSm();
  KernelModelInput A = oneWarpKernel(0.005, 1), B = oneWarpKernel(0.2, 1);
  A.SharedPerBlock = S.SharedBytes / 2;
  EXPECT_EQ(blocksPerSm(A, S), 2u);
  A.SharedPerBlock = S.SharedBytes;
  B.SharedPerBlock = 1;
  SoloPrediction SA, SB;
  ASSERT_TRUE(predictSolo(A, S, SA).ok());
  ASSERT_TRUE(predictSolo(B, S, SB).ok());
  PairPrediction P;
  Result R = predictPair(A, B, SA, SB, S, P);
  EXPECT_FALSE(R.ok());
  EXPECT_EQ(R.code(), ErrorCode::NotSupported);
}

} // namespace

namespace {

model::GpuParams h200() {
  model::GpuParams G;
  G.Sms = 132;
  G.ClockMHz = 1980;
  G.SharedPerSm = 228 * 1024;
  G.SharedReservedPerBlock = 1024;
  G.DramGBps = 4800;
  G.LatencyDram = 600;
  return G;
}

TEST(CoRunInputs, FromInstrumentedCounts) {
  model::LaunchStats S;
  S.ThreadsPerBlock = 256;
  S.Count[unsigned(cleave::InstrClass::Fp32)] = 90;
  S.Count[unsigned(cleave::InstrClass::GlobalLoad)] = 10;
  S.Requests = 10;
  S.LanesPerRequest = 32;
  S.BytesPerLane = 4;
  // Half the requests take 4 sectors, half 32.
  S.SectorsPerRequest = 18;
  model::KernelResources R;
  R.Registers = 33;
  R.StaticShared = 1000;
  KernelModelInput K;
  ASSERT_TRUE(kernelInputs(S, R, h200(), K).ok());
  EXPECT_DOUBLE_EQ(K.MemRatio, 0.1);
  EXPECT_EQ(K.WarpsPerBlock, 8u);
  EXPECT_DOUBLE_EQ(K.InstrPerBlock, 800);
  EXPECT_DOUBLE_EQ(K.CoalescedSectors, 4);
  EXPECT_DOUBLE_EQ(K.UncoalescedSectors, 32);
  EXPECT_DOUBLE_EQ(K.CoalescedFraction, 0.5);
  EXPECT_EQ(K.RegistersPerBlock, 40u * 32u * 8u); // 33 -> 40 per thread
  EXPECT_EQ(K.SharedPerBlock, 2048u);             // 1000 + 1024, 128 units
  S.Count = {};
  EXPECT_FALSE(kernelInputs(S, R, h200(), K).ok());
}

TEST(CoRunInputs, SmFromDeviceProfile) {
  SmLimits S;
  ASSERT_TRUE(smLimits(h200(), S).ok());
  EXPECT_EQ(S.Sms, 132u);
  EXPECT_EQ(S.MaxWarps, 64u);
  EXPECT_EQ(S.Schedulers, 4u);
  EXPECT_DOUBLE_EQ(S.Memory.Base, 600);
  // The digest's order of magnitude: ~0.57 sectors per SM and cycle.
  EXPECT_NEAR(S.Memory.SectorsPerCycle, 0.574, 0.001);
  model::GpuParams G = h200();
  G.LatencyDram = 0;
  EXPECT_FALSE(smLimits(G, S).ok());
}

TEST(CoRunInputs, HopperPairIsCheap) {
  // A compute-bound and a memory-bound kernel of 8 warps per block on an
  // H200-like SM: every ratio solves within the state budget.
  SmLimits S;
  ASSERT_TRUE(smLimits(h200(), S).ok());
  KernelModelInput A = oneWarpKernel(0.01, 8000), B = oneWarpKernel(0.3, 800);
  A.WarpsPerBlock = B.WarpsPerBlock = 8;
  B.CoalescedFraction = 0.5;
  SoloPrediction SA, SB;
  ASSERT_TRUE(predictSolo(A, S, SA).ok());
  ASSERT_TRUE(predictSolo(B, S, SB).ok());
  EXPECT_GT(SA.Pur, SB.Pur + 0.4);
  EXPECT_GT(SB.Mur, SA.Mur);
  PairPrediction P;
  ASSERT_TRUE(predictPair(A, B, SA, SB, S, P).ok());
  EXPECT_EQ(P.Ratios, 7u); // the 8 blocks' splits
  EXPECT_GT(P.Profit, 0.0);
}

} // namespace
