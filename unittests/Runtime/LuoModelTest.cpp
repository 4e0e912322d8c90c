//===- LuoModelTest.cpp - Luo's equations against the digest's numbers ----===//

#include "cleave/rt/LuoModel.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace cleave::rt::luo;

namespace {

// GTX 260 (digest 000 §1.4): 111.9 GB/s at 1.242 GHz, 24 SMs, coalesced
// 4-byte loads (2 transactions per instruction), ld/st 200 clocks.
constexpr double Gtx260Bwt = 111.9 / 1.242;

TEST(LuoModel, WarpBandwidthOfTheWorkedExample) {
  EXPECT_DOUBLE_EQ(warpBandwidth(32, 4, 2, 200), 0.32);
}

TEST(LuoModel, MpdAsPrintedCollapsesToZero) {
  double W = warpBandwidth(32, 4, 2, 200);
  const double Expected[] = {1, 2, 2, 1, 0}; // the digest's table
  const double NAct[] = {1, 2, 4, 8, 16};
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(memoryParallelDegree(NAct[I], 24, Gtx260Bwt, W,
                                   Corrections::paper()),
              Expected[I])
        << "N_act = " << NAct[I];
}

TEST(LuoModel, MpdCorrectedIsBoundedByTheDevice) {
  double W = warpBandwidth(32, 4, 2, 200);
  Corrections C = Corrections::fixed();
  // floor(90.1 / (24 * 0.32)) = 11 ("about 11" in the digest).
  EXPECT_EQ(memoryParallelDegree(16, 24, Gtx260Bwt, W, C), 11);
  EXPECT_EQ(memoryParallelDegree(4, 24, Gtx260Bwt, W, C), 4);
  EXPECT_EQ(memoryParallelDegree(1, 24, Gtx260Bwt, W, C), 1);
  // A device too slow for even one warp still has one in flight.
  EXPECT_EQ(memoryParallelDegree(8, 24, 1.0, W, C), 1);
}

TEST(LuoModel, CpdOfTheWorkedExamples) {
  CpdFit F; // GTX 260: a=3, b=11, c=0.5, d=80, m=32
  Corrections Paper = Corrections::paper();
  // Matrix, P = 0.282: CPD1 = 0.82 at N = 1 (below one warp).
  EXPECT_NEAR(computeParallelDegree(1, 0.282, F, Paper), 0.82, 1e-9);
  // Black-Scholes, P = 0.87.
  EXPECT_NEAR(computeParallelDegree(1, 0.87, F, Paper), 3.0, 1e-9);
  EXPECT_NEAR(computeParallelDegree(16, 0.87, F, Paper), 1.15, 1e-9);
  EXPECT_GT(cpd1(19, 0.87, F), 0);
  EXPECT_LT(cpd1(20, 0.87, F), 0); // negative from N = 20 on
  // CPD2 is a quarter ellipse from a at N = 1 to n + a at N = m.
  double N = F.D * (0.87 - F.C) * (0.87 - F.C);
  EXPECT_NEAR(cpd2(1, 0.87, F), F.A, 1e-9);
  EXPECT_NEAR(cpd2(32, 0.87, F), N + F.A, 1e-9);
  // Clamped to [1, N_act].
  Corrections Fixed = Corrections::fixed();
  EXPECT_EQ(computeParallelDegree(1, 0.282, F, Fixed), 1.0);
  EXPECT_EQ(computeParallelDegree(20, 0.87, F, Fixed), 1.0);
  EXPECT_EQ(computeParallelDegree(1, 0.87, F, Fixed), 1.0);
  EXPECT_NEAR(computeParallelDegree(16, 0.87, F, Fixed), 1.15, 1e-9);
  EXPECT_NEAR(computeFraction(87, 13), 0.87, 1e-12);
}

TEST(LuoModel, PeriodTypesAndTheirCosts) {
  // N_act = 4, CPD = 2, MPD = 2; each period's cost worked by hand.
  std::vector<Period> Ps = {{10, 4},  // type 1: ceil(40/2) = 20
                            {2, 50},  // type 2: 4 + (50 - 3*2) = 48
                            {30, 5},  // type 3: 60 + max(50*1 - 90, 0) = 60
                            {1, 20},  // type 2: 2 + (20 - 3) = 19
                            {1, 100}, // type 4: 2 + 17 + (100 - 20) = 99
                            {5, 6}};  // type 4: T_c = 6 - (15 + 85) < 0
  const int Types[] = {1, 2, 3, 2, 4, 4};
  for (size_t I = 0; I < Ps.size(); ++I)
    EXPECT_EQ(periodType(I ? &Ps[I - 1] : nullptr, Ps[I]), Types[I]);
  Corrections Paper = Corrections::paper(), Fixed = Corrections::fixed();
  const double Paper5[] = {20, 48, 60, 19, 99, 1};
  for (size_t I = 0; I < Ps.size(); ++I)
    EXPECT_EQ(periodCycles(I ? &Ps[I - 1] : nullptr, Ps[I], 4, 2, 2, Paper),
              Paper5[I])
        << "period " << I;
  // (3.14) without its ", 0": the last period costs 1 clock as printed and
  // 10 + 85 = 95 with the max restored.
  EXPECT_EQ(periodCycles(&Ps[4], Ps[5], 4, 2, 2, Fixed), 95);
  EXPECT_EQ(kernelCycles(Ps, 4, 2, 2, Paper), 20 + 48 + 60 + 19 + 99 + 1);
  EXPECT_EQ(kernelCycles(Ps, 4, 2, 2, Fixed), 20 + 48 + 60 + 19 + 99 + 95);
  // MPD = 0 (the literal (3.2) at large N_act) makes waiting unbounded.
  EXPECT_TRUE(std::isinf(periodCycles(&Ps[1], Ps[2], 16, 2, 0, Paper)));
}

TEST(LuoModel, Accuracy) {
  EXPECT_DOUBLE_EQ(accuracy(10, 8), 0.8);
  EXPECT_DOUBLE_EQ(accuracy(8, 10), 0.8);
  EXPECT_DOUBLE_EQ(accuracy(0, 0), 1.0);
}

// Table 4.2 (dual Tesla C2075), every state as total send / receive GB/s.
std::vector<LinkState> dualC2075() {
  return {{"S/N", 5.99, 0},           {"R/N", 0, 6.48},
          {"SR/N", 3.86, 4.2},        {"S/S", 10.22, 0},
          {"S/R", 3.79, 4.26},        {"S/SR", 2.99 + 2.9, 2.99},
          {"R/R", 0, 6.76},           {"R/SR", 2.41, 2.42 + 2.76},
          {"SR/SR", 2.05 + 2.05, 2.06 + 2.06}};
}

TEST(LuoModel, TransferLpReproducesTheCorrectedG) {
  auto States = dualC2075();
  std::vector<std::pair<size_t, double>> Used;
  // X_r / X_s <= 0.5076: 0.0978 X_s + 0.1417 X_r (the thesis prints "-").
  double T = optimalTransferTime(States, 2.0, 0.5, &Used);
  EXPECT_NEAR(T, 0.0978 * 2.0 + 0.1417 * 0.5, 1e-3);
  ASSERT_EQ(Used.size(), 2u);
  EXPECT_EQ(States[Used[0].first].Name, "S/S");
  EXPECT_EQ(States[Used[1].first].Name, "S/SR");
  // Above the ratio: 0.0947 X_s + 0.1479 X_r, mixing S/SR and R/R.
  T = optimalTransferTime(States, 1.0, 2.0, &Used);
  EXPECT_NEAR(T, 0.0947 * 1.0 + 0.1479 * 2.0, 1e-3);
  ASSERT_EQ(Used.size(), 2u);
  EXPECT_EQ(States[Used[0].first].Name, "S/SR");
  EXPECT_EQ(States[Used[1].first].Name, "R/R");
  // One direction only: the best single state.
  EXPECT_NEAR(optimalTransferTime(States, 10.22, 0), 1.0, 1e-12);
  EXPECT_NEAR(optimalTransferTime(States, 0, 6.76), 1.0, 1e-12);
  EXPECT_EQ(optimalTransferTime(States, 0, 0), 0.0);
  EXPECT_TRUE(std::isinf(optimalTransferTime({{"S", 5, 0}}, 0, 1)));
}

TEST(LuoModel, BidirectionalTimeIsTheOneGpuLp) {
  // One C2075 alone (G0's column of Table 4.2): S 5.99, R 6.48, SR 3.86/4.2.
  std::vector<LinkState> One = {{"S", 5.99, 0}, {"R", 0, 6.48},
                                {"SR", 3.86, 4.2}};
  std::mt19937 Rng(7);
  std::uniform_real_distribution<double> X(0.01, 4.0);
  for (int I = 0; I < 200; ++I) {
    double Xs = X(Rng), Xr = X(Rng);
    EXPECT_NEAR(bidirectionalTime(Xs, Xr, 5.99, 6.48, 3.86, 4.2),
                optimalTransferTime(One, Xs, Xr), 1e-9)
        << Xs << " " << Xr;
  }
}

TEST(LuoModel, OptimalChunkCount) {
  // (4.53): m* = sqrt(2 (D_s/S_S + D_r/R_R - H(D_s, D_r)) / t_str).
  double Ds = 4, Dr = 2, TStr = 1e-4;
  double H = bidirectionalTime(Ds, Dr, 5.99, 6.48, 3.86, 4.2);
  double M = optimalChunkCount(Ds, Dr, 5.99, 6.48, 3.86, 4.2, TStr);
  EXPECT_NEAR(M, std::sqrt(2 * (Ds / 5.99 + Dr / 6.48 - H) / TStr), 1e-9);
  // It minimises W(m) of (4.52) over integers (H is homogeneous).
  auto W = [&](double Mm) {
    return 2 * Ds / (Mm * 5.99) + 2 * Dr / (Mm * 6.48) +
           (Mm - 2) * bidirectionalTime(Ds / Mm, Dr / Mm, 5.99, 6.48, 3.86,
                                        4.2) +
           TStr * (Mm + 2);
  };
  double Lo = std::floor(M), Hi = std::ceil(M);
  double BestInt = std::min(W(Lo), W(Hi));
  for (double Mm = 3; Mm < 4 * M; Mm += 1)
    EXPECT_GE(W(Mm) + 1e-12, BestInt) << Mm;
}

} // namespace
