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
  EXPECT_NEAR(F.ReorganizedMs, 10 * S.WarpMaxSorted / S.WarpMaxOriginal,
              1e-9);
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

TEST(ReorganizeModel, NeverForAGridOfOneWarpOrWhenOff) {
  ReorganizeHistory H = measured(1);
  H.Explored = H.Pays = true;
  for (ReorganizeMode M :
       {ReorganizeMode::On, ReorganizeMode::Force, ReorganizeMode::Off}) {
    EXPECT_EQ(chooseReorganizeAction(M, H, 32, 32), ReorganizeAction::Original);
    EXPECT_EQ(chooseReorganizeAction(M, H, 20, 1), ReorganizeAction::Original);
  }
  EXPECT_EQ(chooseReorganizeAction(ReorganizeMode::Off, H, 1 << 20, 32),
            ReorganizeAction::Original);
  EXPECT_EQ(chooseReorganizeAction(ReorganizeMode::On, H, 33, 32),
            ReorganizeAction::Step);
  // Lanes of one thread (a CPU device): only when forced.
  EXPECT_EQ(chooseReorganizeAction(ReorganizeMode::On, H, 1 << 20, 1),
            ReorganizeAction::Original);
  EXPECT_EQ(chooseReorganizeAction(ReorganizeMode::Force, H, 1 << 20, 1),
            ReorganizeAction::Step);
}

TEST(ReorganizeModel, LaunchByLaunchAndTheLossSwitch) {
  const ReorganizeMode On = ReorganizeMode::On;
  const uint64_t N = 1 << 20;
  ReorganizeHistory H;
  // The original is timed first, then one step explores.
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32),
            ReorganizeAction::MeasureOriginal);
  H.OriginalMs = 10;
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32), ReorganizeAction::Step);
  // The model's verdict decides from then on.
  H.Explored = true;
  H.Pays = false;
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32), ReorganizeAction::Original);
  H.Pays = true;
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32), ReorganizeAction::Step);
  // A step that gained stays on ...
  TripStats S;
  S.WarpMaxOriginal = 100;
  S.WarpMaxSorted = 60;
  EXPECT_NEAR(noteReorganizeStep(H, S, 1, 0.5, 7, false), 1.5, 1e-12);
  EXPECT_FALSE(H.Off);
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32), ReorganizeAction::Step);
  // ... a measured loss turns it off, unless forced.
  ReorganizeHistory Forced = H;
  EXPECT_NEAR(noteReorganizeStep(H, S, 3, 0.5, 7, false), -0.5, 1e-12);
  EXPECT_TRUE(H.Off);
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32), ReorganizeAction::Original);
  noteReorganizeStep(Forced, S, 3, 0.5, 7, true);
  EXPECT_FALSE(Forced.Off);
  EXPECT_EQ(chooseReorganizeAction(ReorganizeMode::Force, H, N, 32),
            ReorganizeAction::Step);
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
  EXPECT_EQ(chooseReorganizeAction(On, H, N, 32), ReorganizeAction::Original);
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
  EXPECT_EQ(chooseReorganizeAction(On, G, N, 32), ReorganizeAction::Step);
}

} // namespace
