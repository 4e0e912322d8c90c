//===- ReorganizeModelTest.cpp - Sorting by trip count, and when it pays --===//
//
// Part of Cleave. The reorganization step's arithmetic (ReorganizeModel.h,
// docs/reorganize.md) on synthetic counts: the sort, the statistics against
// the digest's closed form, the lane-max model's gate (no on uniform counts
// and on one-warp grids, yes on a wide spread), the decisions launch after
// launch and the loss switch, and the loss kept in the performance cache.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/scheduler/ReorganizeModel.h"

#include "cleave/rt/PerfCache.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace cleave::rt;

namespace {

std::vector<int32_t> geometricCounts(size_t N, double P, unsigned Seed) {
  std::mt19937 G(Seed);
  std::geometric_distribution<int32_t> D(P);
  std::vector<int32_t> C(N);
  for (int32_t &X : C)
    X = 1 + D(G);
  return C;
}

void expectSorted(const std::vector<int32_t> &Counts,
                  const std::vector<int32_t> &Perm) {
  ASSERT_EQ(Perm.size(), Counts.size());
  std::vector<char> Seen(Counts.size(), 0);
  for (int32_t P : Perm) {
    ASSERT_GE(P, 0);
    ASSERT_LT(size_t(P), Counts.size());
    ASSERT_FALSE(Seen[P]) << "thread " << P << " twice";
    Seen[P] = 1;
  }
  for (size_t I = 1; I < Perm.size(); ++I) {
    int32_t A = std::max(0, Counts[Perm[I - 1]]);
    int32_t B = std::max(0, Counts[Perm[I]]);
    ASSERT_GE(A, B) << "at " << I;
    if (A == B)
      ASSERT_LT(Perm[I - 1], Perm[I]) << "ties keep thread order, at " << I;
  }
}

TEST(ReorganizeModel, ExpectedMaximumOfThirtyTwoNormals) {
  // Digest 004 §2.4 [D]: e32 = 2.07.
  EXPECT_NEAR(expectedNormalMax(32), 2.07, 0.01);
  EXPECT_NEAR(expectedNormalMax(2), 1 / std::sqrt(M_PI), 1e-3);
  EXPECT_EQ(expectedNormalMax(1), 0);
}

TEST(ReorganizeModel, TheSortIsAStableDescendingPermutation) {
  for (unsigned Seed = 1; Seed <= 5; ++Seed) {
    std::vector<int32_t> C = geometricCounts(5000 + Seed, 0.02, Seed);
    C[7] = -3; // a negative count sorts as 0
    std::vector<int32_t> Perm;
    unsigned Bits = 0;
    sortByTripCount(C.data(), C.size(), Perm, Bits);
    expectSorted(C, Perm);
    int32_t Max = *std::max_element(C.begin(), C.end());
    EXPECT_GE(1u << Bits, unsigned(Max) + 1);
    EXPECT_LT(1u << (Bits - 1), unsigned(Max) + 1);
  }
}

TEST(ReorganizeModel, WideKeysSortInRadixPasses) {
  // Past 16 key bits the sort runs 11-bit passes.
  std::mt19937 G(7);
  std::vector<int32_t> C(20000);
  for (int32_t &X : C)
    X = int32_t(G() % (1u << 26));
  C[3] = C[4] = C[9] = 1 << 20; // ties
  std::vector<int32_t> Perm;
  unsigned Bits = 0;
  sortByTripCount(C.data(), C.size(), Perm, Bits);
  EXPECT_GT(Bits, 16u);
  expectSorted(C, Perm);
  // All zero: no key bits, the identity.
  std::vector<int32_t> Z(100, 0);
  sortByTripCount(Z.data(), Z.size(), Perm, Bits);
  EXPECT_EQ(Bits, 0u);
  for (size_t I = 0; I < Z.size(); ++I)
    EXPECT_EQ(Perm[I], int32_t(I));
}

TEST(ReorganizeModel, StatisticsMatchTheBootstrapsClosedForm) {
  // Digest 004 §2.4 [D]: N = 1 + Binomial(l - 1, p); at l = 12000, p = 0.1
  // the predicted warp execution efficiency is 0.946 (measured 94.5 %).
  std::mt19937 G(3);
  std::binomial_distribution<int32_t> D(11999, 0.1);
  std::vector<int32_t> C(1 << 18);
  for (int32_t &X : C)
    X = 1 + D(G);
  std::vector<int32_t> Perm;
  unsigned Bits = 0;
  sortByTripCount(C.data(), C.size(), Perm, Bits);
  TripStats S = tripStats(C.data(), C.size(), Perm.data(), 32, 256);
  EXPECT_NEAR(S.Mean, 1201, 1);
  EXPECT_NEAR(S.StdDev, 32.9, 0.5);
  EXPECT_NEAR(S.Cv, 0.027, 0.001);
  EXPECT_NEAR(S.ExpectedWarpMax, 1269.4, 1.5);
  EXPECT_NEAR(S.PredictedWee, 0.946, 0.002);
  EXPECT_NEAR(S.WeeOriginal, 0.946, 0.003);
  EXPECT_GT(S.WeeSorted, 0.9999);
  EXPECT_EQ(S.KeyBits, Bits);
}

TEST(ReorganizeModel, WarpsNeverSpanTwoBlocks) {
  // Blocks of 48 threads in warps of 32: warps of 32 and 16 threads.
  std::vector<int32_t> C(96, 1);
  C[40] = 9; // the second warp of block 0
  TripStats S = tripStats(C.data(), C.size(), nullptr, 32, 48);
  EXPECT_EQ(S.WarpMaxOriginal, 1 + 9 + 1 + 1);
  EXPECT_EQ(S.WarpMaxSorted, S.WarpMaxOriginal);
}

ReorganizeHistory measured(double OriginalMs) {
  ReorganizeHistory H;
  H.OriginalMs = OriginalMs;
  return H;
}

TEST(ReorganizeModel, TheGateSaysNoOnUniformCounts) {
  std::vector<int32_t> C(1 << 16, 500), Perm;
  unsigned Bits = 0;
  sortByTripCount(C.data(), C.size(), Perm, Bits);
  TripStats S = tripStats(C.data(), C.size(), Perm.data(), 32, 256);
  EXPECT_EQ(S.Cv, 0);
  EXPECT_EQ(S.WeeOriginal, 1);
  ReorganizeForecast F = forecastReorganize(S, measured(10), 0.001);
  EXPECT_EQ(F.GainMs, 0);
  EXPECT_FALSE(F.Pays);
}

TEST(ReorganizeModel, TheGateSaysYesOnAWideSpreadThatCoversItsCost) {
  std::vector<int32_t> C = geometricCounts(1 << 16, 0.05, 11), Perm;
  unsigned Bits = 0;
  sortByTripCount(C.data(), C.size(), Perm, Bits);
  TripStats S = tripStats(C.data(), C.size(), Perm.data(), 32, 256);
  EXPECT_GT(S.Cv, 0.9);
  EXPECT_LT(S.WeeOriginal, 0.5);
  EXPECT_GT(S.WeeSorted, 0.95);
  // Loop-only bound: the reorganized kernel takes WeeOriginal / WeeSorted
  // of the original's time.
  ReorganizeForecast F = forecastReorganize(S, measured(10), 1.0);
  EXPECT_FALSE(F.TwoPoint);
  EXPECT_NEAR(F.ReorganizedMs, 10 * S.WarpMaxSorted / S.WarpMaxOriginal, 1e-9);
  EXPECT_TRUE(F.Pays);
  // The same gain does not cover a cost it exceeds by less than the
  // margin.
  EXPECT_FALSE(forecastReorganize(S, measured(10), F.GainMs / 1.2).Pays);
  // Nothing to go on without the original's time.
  EXPECT_FALSE(forecastReorganize(S, ReorganizeHistory(), 0).Pays);
}

TEST(ReorganizeModel, TwoPointsCalibrateTheLaneMaxModel) {
  // Times made by t = 0.4 + 2e-5 S: the fit recovers both constants.
  std::vector<int32_t> C = geometricCounts(1 << 15, 0.05, 5), Perm;
  unsigned Bits = 0;
  sortByTripCount(C.data(), C.size(), Perm, Bits);
  TripStats S = tripStats(C.data(), C.size(), Perm.data(), 32, 128);
  ReorganizeHistory H;
  H.OriginalMs = 0.4 + 2e-5 * S.WarpMaxOriginal;
  H.ReorganizedMs = 0.4 + 2e-5 * S.WarpMaxSorted;
  H.WarpMaxOriginal = S.WarpMaxOriginal;
  H.WarpMaxSorted = S.WarpMaxSorted;
  ReorganizeForecast F = forecastReorganize(S, H, 0);
  EXPECT_TRUE(F.TwoPoint);
  EXPECT_NEAR(F.FixedMs, 0.4, 1e-9);
  EXPECT_NEAR(F.PerWarpIterMs, 2e-5, 1e-12);
  EXPECT_NEAR(F.GainMs, H.OriginalMs - H.ReorganizedMs, 1e-9);
}

/// A budget that allows whatever the model wants to learn: ten seconds of
/// the program so far, nothing spent, the sort's kernels loaded.
const ReorganizeBudget Ample{1e4, 0, 0};

/// The action for a launch of a kernel the program has launched often.
ReorganizeAction act(ReorganizeMode M, ReorganizeHistory H, uint64_t Threads,
                     unsigned Lanes) {
  H.Launches = std::max<uint64_t>(H.Launches, 100);
  return chooseReorganizeAction(M, H, Threads, Lanes, (Threads + 255) / 256,
                                Ample);
}

TEST(ReorganizeModel, NeverForAGridOfOneWarpOrWhenOff) {
  ReorganizeHistory H = measured(1);
  H.Explored = H.Pays = true;
  for (ReorganizeMode M :
       {ReorganizeMode::On, ReorganizeMode::Force, ReorganizeMode::Off}) {
    EXPECT_EQ(act(M, H, 32, 32), ReorganizeAction::Original);
    EXPECT_EQ(act(M, H, 20, 1), ReorganizeAction::Original);
  }
  EXPECT_EQ(act(ReorganizeMode::Off, H, 1 << 20, 32),
            ReorganizeAction::Original);
  EXPECT_EQ(act(ReorganizeMode::On, H, 33, 32), ReorganizeAction::Step);
  // Lanes of one thread (a CPU device): only when forced.
  EXPECT_EQ(act(ReorganizeMode::On, H, 1 << 20, 1), ReorganizeAction::Original);
  EXPECT_EQ(act(ReorganizeMode::Force, H, 1 << 20, 1), ReorganizeAction::Step);
}

TEST(ReorganizeModel, LaunchByLaunchAndTheLossSwitch) {
  const ReorganizeMode On = ReorganizeMode::On;
  const uint64_t N = 1 << 20;
  ReorganizeHistory H;
  // The original is timed first, then one step explores.
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::MeasureOriginal);
  H.OriginalMs = 10;
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::Step);
  // The model's verdict decides from then on.
  H.Explored = true;
  H.Pays = false;
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::Original);
  H.Pays = true;
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::Step);
  // A step that gained stays on ...
  TripStats S;
  S.WarpMaxOriginal = 100;
  S.WarpMaxSorted = 60;
  EXPECT_NEAR(noteReorganizeStep(H, S, 1, 0.5, 7, false), 1.5, 1e-12);
  EXPECT_FALSE(H.Off);
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::Step);
  // ... a measured loss turns it off, unless forced.
  ReorganizeHistory Forced = H;
  EXPECT_NEAR(noteReorganizeStep(H, S, 3, 0.5, 7, false), -0.5, 1e-12);
  EXPECT_TRUE(H.Off);
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::Original);
  noteReorganizeStep(Forced, S, 3, 0.5, 7, true);
  EXPECT_FALSE(Forced.Off);
  EXPECT_EQ(act(ReorganizeMode::Force, H, N, 32), ReorganizeAction::Step);
}

TEST(ReorganizeModel, TheLossIsKeptInThePerformanceCache) {
  PerfCache C;
  EXPECT_FALSE(C.reorganizeOff("NVIDIA H200", "k#1"));
  C.recordReorganizeOff("NVIDIA H200", "k#1");
  EXPECT_TRUE(C.dirty());
  PerfCache D;
  ASSERT_TRUE(D.parse(C.serialize()).ok()) << C.serialize();
  EXPECT_TRUE(D.reorganizeOff("NVIDIA H200", "k#1"));
  EXPECT_FALSE(D.reorganizeOff("NVIDIA H200", "k#2"));
  EXPECT_FALSE(D.reorganizeOff("cpu", "k#1"));
  Result Bad = D.parse(R"({"schema": "cleave-perf-cache", "version": 1,
      "devices": {}, "reorganize_off": {"gpu": {"k": "yes"}}})");
  EXPECT_FALSE(Bad.ok());
  // A refused file leaves the contents as they were.
  EXPECT_TRUE(D.reorganizeOff("NVIDIA H200", "k#1"));
}

} // namespace

namespace {

TEST(ReorganizeModel, TheMeasuredKernelGainDecidesAfterTheExploringStep) {
  const ReorganizeMode On = ReorganizeMode::On;
  const uint64_t N = 1 << 20;
  TripStats S;
  S.WarpMaxOriginal = 100;
  S.WarpMaxSorted = 60;
  // The lane-max prediction said yes (the exploring step ran the
  // reorganized kernel), but the kernel gained 1.5 ms, short of the
  // inspector and sort (1.5 ms) by the margin: the original from now on,
  // though the step as a whole did not lose.
  ReorganizeHistory H;
  H.OriginalMs = 10;
  H.Explored = H.Pays = true;
  EXPECT_NEAR(noteReorganizeStep(H, S, 1, 0.5, 8.5, false), 0, 1e-12);
  EXPECT_FALSE(H.Pays);
  EXPECT_FALSE(H.Off);
  EXPECT_EQ(act(On, H, N, 32), ReorganizeAction::Original);
  // A reorganized kernel slower than the original (sorted SpMV rows):
  // off, kept as a loss, whatever the cost.
  ReorganizeHistory L;
  L.OriginalMs = 10;
  L.Explored = L.Pays = true;
  noteReorganizeStep(L, S, 0, 0, 10.5, false);
  EXPECT_TRUE(L.Off);
  EXPECT_FALSE(L.Pays);
  // A gain that covers the cost keeps the step on.
  ReorganizeHistory G;
  G.OriginalMs = 10;
  G.Explored = G.Pays = true;
  noteReorganizeStep(G, S, 0.5, 0.5, 6, false);
  EXPECT_TRUE(G.Pays);
  EXPECT_FALSE(G.Off);
  EXPECT_EQ(act(On, G, N, 32), ReorganizeAction::Step);
}

} // namespace

namespace {

// The rules that keep exploring within what it can pay for, with the H200's
// figures (bench/results/reorganize/reorganize-2026-11-29-h200-fde4062*):
// 2M threads in blocks of 256, option pricing at 4 mean steps 0.072 ms a
// launch, at 512 steps 7.895 ms.
constexpr uint64_t BenchThreads = 1 << 21, BenchBlocks = BenchThreads / 256;

ReorganizeAction actAt(const ReorganizeHistory &H, double ElapsedMs,
                       double LoadMs = 0) {
  return chooseReorganizeAction(ReorganizeMode::On, H, BenchThreads, 32,
                                BenchBlocks, {ElapsedMs, 0, LoadMs});
}

TEST(ReorganizeModel, TheExpectedWarpMaximumIsIntegratedOncePerWidth) {
  // Each step asks for it (the statistics and the plan); an integration
  // costs about 0.6 ms of host time.
  double E = expectedNormalMax(32);
  uint64_t Before = expectedNormalMaxIntegrations();
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(expectedNormalMax(32), E);
  TripStats S = tripStatsFromSums(1 << 20, 32, 1e6, 5e6, 40, 1e5, 5e4);
  EXPECT_NEAR(S.ExpectedWarpMax, S.Mean + E * S.StdDev, 1e-9);
  EXPECT_EQ(expectedNormalMaxIntegrations(), Before);
}

TEST(ReorganizeModel, AFirstLaunchNeverPaysForATrial) {
  ReorganizeHistory H;
  EXPECT_EQ(actAt(H, 1e6), ReorganizeAction::Original);
  H.Launches = 1;
  EXPECT_EQ(actAt(H, 1e6), ReorganizeAction::MeasureOriginal);
}

TEST(ReorganizeModel, TimingTheOriginalWaitsForTheBudget) {
  // The engine's path and a wait (ReorganizeMeasureMs) must fit in
  // ReorganizeLearnShare of the program's time so far.
  ReorganizeHistory H;
  H.Launches = 4;
  EXPECT_EQ(actAt(H, 0.5 * ReorganizeMeasureMs / ReorganizeLearnShare),
            ReorganizeAction::Original);
  EXPECT_EQ(actAt(H, 2 * ReorganizeMeasureMs / ReorganizeLearnShare),
            ReorganizeAction::MeasureOriginal);
}

TEST(ReorganizeModel, AShortKernelIsNotExploredWhereItCannotPay) {
  // Option pricing at 4 mean steps: the most sorting could save over the
  // launches so far stays short of the exploring step's cost, however
  // long the program has run.
  ReorganizeHistory H;
  H.OriginalMs = 0.072;
  H.Launches = 4;
  std::string Why;
  EXPECT_FALSE(explorationPays(H, BenchBlocks, BenchThreads, Ample, &Why));
  EXPECT_NE(Why.find("exploring does not pay yet"), std::string::npos) << Why;
  EXPECT_EQ(actAt(H, 1e6), ReorganizeAction::Original);
  // A program that keeps launching it pays for it in the end.
  H.Launches = 400;
  EXPECT_EQ(actAt(H, 1e6), ReorganizeAction::Step);
}

TEST(ReorganizeModel, ExploringFitsTheBudgetOfTheProgramSoFar) {
  // Option pricing at 512 steps, five launches (the bench's programs): the
  // gain would cover exploring, but a program the step could not help
  // would lose more than ReorganizeLearnShare of its time to it.
  ReorganizeHistory H;
  H.OriginalMs = 7.895;
  H.Launches = 4;
  double Cost =
      explorationCostMs(H, BenchBlocks, BenchThreads, ReorganizeSortLoadMs);
  EXPECT_LT(Cost, 4 * ReorganizeMaxGain * H.OriginalMs);
  EXPECT_EQ(actAt(H, 5 * 7.895, ReorganizeSortLoadMs),
            ReorganizeAction::Original);
  EXPECT_EQ(actAt(H, 1.01 * Cost / ReorganizeLearnShare, ReorganizeSortLoadMs),
            ReorganizeAction::Step);
  // The sampled inspector: its share of the grid, at least 8192 threads.
  EXPECT_EQ(reorganizeSampleBlocks(BenchBlocks, 256), BenchBlocks / 32);
  EXPECT_EQ(reorganizeSampleBlocks(79, 128), 64u);
  EXPECT_EQ(reorganizeSampleBlocks(10, 128), 10u);
}

// The footprints of bench/reorganize/reorganize.cu's kernels as the
// compiler writes them (cleave-bundle-info), shortened to the lines that
// matter.
const char *SpmvFootprints = R"(cleave-footprint 1
kernel _Z4spmvPKiS0_PKfS2_Pfi
arg 0 ptr rowptr
arg 1 ptr cols
arg 2 ptr vals
arg 3 ptr x
arg 4 ptr y
arg 5 int 32 rows
unknown 2 read # offset {(4 * (sext i32 %3 to i64))<nsw>,+,4}<nsw><%for.body.prol> is not affine: value %3 is not bounded
unknown 1 read # offset {(4 * (sext i32 %3 to i64))<nsw>,+,4}<nsw><%for.body.prol> is not affine: value %3 is not bounded
unknown 3 read # offset (4 * (sext i32 %7 to i64))<nsw> is not affine: value %3 is not bounded
unknown 2 read # offset {(4 * (sext i32 %k.027.unr to i64))<nsw>,+,16}<nsw><%for.body> is not affine: value %3 is not bounded
access 0 read 4 exact
  check (affine 0 (tid.x 1) (ctaid.x block.x)) -2147483648 2147483647
  le (affine (- 1 arg5) (tid.x 1) (ctaid.x block.x))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
access 4 write 4 exact
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
end
)";

const char *BootstrapFootprints = R"(cleave-footprint 1
kernel _Z9bootstrapPKfifPKjPfPii
arg 0 ptr c
arg 1 int 32 l
arg 2 other logq
arg 3 ptr seeds
arg 4 ptr means
arg 5 ptr windows
arg 6 int 32 n
unknown 0 read # offset ((4 * (zext i32 %xor3.i.i to i64))<nuw><nsw> + (-4 * (zext i32 %l to i64) * ((zext i32 %xor3.i.i to i64) /u (zext i32 %l to i64)))) is not affine: value %xor3.i.i is not bounded
access 3 read 4 exact
  le (affine (- 1 arg6) (tid.x 1) (ctaid.x block.x))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
access 4 write 4 exact
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
end
)";

const char *OptionFootprints = R"(cleave-footprint 1
kernel _Z6option12OptionParamsPKjPfPii
arg 0 other p
arg 1 ptr seeds
arg 2 ptr payoff
arg 3 ptr steps
arg 4 int 32 n
access 1 read 4 exact
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
access 2 write 4 exact
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
end
)";

TEST(ReorganizeModel, AnSpmvLikeKernelIsRefusedByTheModel) {
  // CSR rows: the loop walks vals and cols from the row's start.
  EXPECT_EQ(itemStreamParams(SpmvFootprints),
            (std::vector<std::string>{"vals", "cols"}));
  // The bootstrap's reads of its series are random, in launch order as
  // sorted; option pricing reads nothing in its loop.
  EXPECT_TRUE(itemStreamParams(BootstrapFootprints).empty());
  EXPECT_TRUE(itemStreamParams(OptionFootprints).empty());
  // A loop over a column-major per-item array: coalesced across
  // neighbouring items, scattered once sorted.
  EXPECT_EQ(itemStreamParams("arg 0 ptr a\naccess 0 read 4 exact\n  at "
                             "(affine 0 (tid.x 4) (ctaid.x (* 4 block.x)) "
                             "(L0 (* 4 arg1)))\nend\n"),
            (std::vector<std::string>{"a"}));
  // Refused whatever the budget and the launches.
  ReorganizeHistory H;
  H.OriginalMs = 0.592;
  H.Launches = 1000;
  EXPECT_EQ(actAt(H, 1e7), ReorganizeAction::Step);
  H.Refused = "per-item streams";
  EXPECT_EQ(actAt(H, 1e7), ReorganizeAction::Original);
  H.OriginalMs = -1;
  EXPECT_EQ(actAt(H, 1e7), ReorganizeAction::Original);
}

TEST(ReorganizeModel, TheOptionPricingGainIsStillTaken) {
  // The sampled inspector's counts (geometric, mean 512: cv ~1) scaled to
  // the grid: the loop-only bound predicts a gain far above the whole
  // inspector (the sample's 1/32 scaled up) and the sort.
  std::vector<int32_t> C = geometricCounts(BenchThreads / 32, 1.0 / 512, 3),
                       Perm;
  unsigned Bits = 0;
  sortByTripCount(C.data(), C.size(), Perm, Bits);
  TripStats Sample = tripStats(C.data(), C.size(), Perm.data(), 32, 256);
  TripStats S = scaleTripStats(Sample, BenchThreads);
  EXPECT_EQ(S.Threads, BenchThreads);
  EXPECT_NEAR(S.WarpMaxOriginal, 32 * Sample.WarpMaxOriginal, 1e-6);
  EXPECT_GT(S.Cv, 0.9);
  ReorganizeHistory H;
  H.OriginalMs = 7.895;
  H.Launches = 200;
  double Cost = 32 * 0.006 + predictedSortMs(BenchThreads, Bits);
  ReorganizeForecast F = forecastReorganize(S, H, Cost);
  EXPECT_TRUE(F.Pays);
  EXPECT_GT(F.GainMs, 4 * Cost);
  // A program long enough explores it.
  EXPECT_EQ(actAt(H, 2000, ReorganizeSortLoadMs), ReorganizeAction::Step);
}

} // namespace
