//===- HostLinkStatesTest.cpp - Link-state tables, G() and the LP ---------===//
//
// Digest 000 §3.4-3.5. The oracles: the corrected G() coefficients and hull
// vertices the digest rebuilt from the thesis's tables of dual C2075 (Table
// 4.2), dual C2070 (A.2), dual M2090 (A.3) and four M2090 (A.4), whose
// per-GPU rates are below; and the profiles measured on 2x and 4x H200.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/LinkStates.h"
#include "cleave/rt/LuoModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

using namespace cleave::rt;
using namespace cleave::rt::links;

namespace {

/// Rows "SR/S: 2.9,2.99 2.99,0": a state and each GPU's send,receive.
StateTable table(unsigned Gpus, const std::vector<std::string> &Rows) {
  StateTable T(Gpus);
  for (const std::string &Line : Rows) {
    std::string Name = Line.substr(0, Line.find(':'));
    SystemState S;
    std::stringstream N(Name);
    for (std::string L; std::getline(N, L, '/');) {
      Link X;
      EXPECT_TRUE(parseLink(L, X)) << Line;
      S.push_back(X);
    }
    std::vector<Rates> R;
    std::stringstream In(Line.substr(Line.find(':') + 1));
    for (std::string P; In >> P;)
      R.push_back({std::stod(P.substr(0, P.find(','))),
                   std::stod(P.substr(P.find(',') + 1))});
    R.resize(Gpus);
    EXPECT_EQ(S.size(), Gpus) << Line;
    T.add(S, R);
  }
  return T;
}

// Each 2-GPU table lists one of every mirrored pair ("G0/G1"); the other
// comes from its permutation class.
StateTable dualC2075() {
  return table(2, {"S/N: 5.99,0", "R/N: 0,6.48", "SR/N: 3.86,4.2",
                   "S/S: 5.11,0 5.11,0", "S/R: 3.79,0 0,4.26",
                   "SR/S: 2.9,2.99 2.99,0", "R/R: 0,3.38 0,3.38",
                   "SR/R: 2.41,2.42 0,2.76", "SR/SR: 2.05,2.06 2.05,2.06"});
}
StateTable dualC2070() {
  return table(2, {"S/N: 5.2,0", "R/N: 0,4.5", "SR/N: 3.03,3.16",
                   "S/S: 3.5,0 3.5,0", "S/R: 3.08,0 0,3.15",
                   "SR/S: 1.97,2.36 2.85,0", "R/R: 0,2.28 0,2.28",
                   "SR/R: 1.69,1.72 0,2.03", "SR/SR: 1.56,1.59 1.56,1.59"});
}
StateTable dualM2090() {
  return table(2, {"S/N: 6.12,0", "R/N: 0,5.8", "SR/N: 5.13,5.06",
                   "S/S: 6.09,0 6.09,0", "S/R: 5.92,0 0,5.75",
                   "SR/S: 4.44,4.33 5.84,0", "R/R: 0,5.71 0,5.71",
                   "SR/R: 4.42,4.31 0,5.68", "SR/SR: 4.12,4.08 4.12,4.08"});
}
/// Table A.4, per GPU; its row SR/S/R/N prints the total send 0.71 for
/// 4.6 + 6.11 = 10.71.
StateTable fourM2090() {
  return table(4, {"S/N/N/N: 6.14,0",
                   "R/N/N/N: 0,4.98",
                   "SR/N/N/N: 4.55,3.86",
                   "S/S/N/N: 6.11,0 6.11,0",
                   "S/R/N/N: 6.12,0 0,4.96",
                   "R/R/N/N: 0,4.84 0,4.84",
                   "SR/S/N/N: 4.61,4.17 6.05,0",
                   "SR/R/N/N: 4.39,3.97 0,4.8",
                   "SR/SR/N/N: 4.4,3.83 4.4,3.83",
                   "S/S/S/N: 6.1,0 6.1,0 6.1,0",
                   "S/S/R/N: 6.09,0 6.09,0 0,5.22",
                   "S/R/R/N: 6.12,0 0,4.74 0,4.74",
                   "R/R/R/N: 0,4.77 0,4.77 0,4.77",
                   "SR/S/S/N: 4.66,4.12 6.06,0 6.06,0",
                   "SR/S/R/N: 4.6,4.19 6.11,0 0,4.86",
                   "SR/R/R/N: 4.56,4.17 0,4.34 0,4.34",
                   "SR/SR/S/N: 3.98,4.14 3.98,4.14 6.1,0",
                   "SR/SR/R/N: 4.42,4.2 4.42,4.2 0,4.12",
                   "SR/SR/SR/N: 4.49,3.89 4.49,3.89 4.49,3.89",
                   "S/S/S/S: 6.08,0 6.08,0 6.08,0 6.08,0",
                   "S/S/S/R: 6.07,0 6.07,0 6.07,0 0,4.76",
                   "S/S/R/R: 6.04,0 6.04,0 0,4.85 0,4.85",
                   "S/R/R/R: 6.08,0 0,4.54 0,4.54 0,4.54",
                   "R/R/R/R: 0,4.42 0,4.42 0,4.42 0,4.42",
                   "SR/S/S/S: 4.51,3.97 5.99,0 5.99,0 5.99,0",
                   "SR/S/S/R: 4.15,3.96 6.08,0 6.08,0 0,4.39",
                   "SR/S/R/R: 4.34,3.95 6.1,0 0,4.31 0,4.31",
                   "SR/R/R/R: 4.34,4.15 0,4.39 0,4.39 0,4.39",
                   "SR/SR/S/S: 4.08,4.03 4.08,4.03 6.03,0 6.03,0",
                   "SR/SR/S/R: 4.15,4.28 4.15,4.28 6.09,0 0,4.85",
                   "SR/SR/R/R: 4.18,4.08 4.18,4.08 0,4.22 0,4.22",
                   "SR/SR/SR/S: 4.04,3.58 4.04,3.58 4.04,3.58 5.79,0",
                   "SR/SR/SR/R: 3.92,3.83 3.92,3.83 3.92,3.83 0,4.03",
                   "SR/SR/SR/SR: 3.9,3.81 3.9,3.81 3.9,3.81 3.9,3.81"});
}

/// A state's permutation class: its links sorted ("S/S/SR/SR").
std::string canonical(const std::string &Name) {
  SystemState S;
  std::stringstream N(Name);
  for (std::string L; std::getline(N, L, '/');) {
    Link X;
    parseLink(L, X);
    S.push_back(X);
  }
  std::sort(S.begin(), S.end());
  return stateName(S);
}

std::vector<std::string> vertexClasses(const SymmetricLinks &G) {
  std::vector<std::string> Out;
  for (const Point &P : G.vertices())
    Out.push_back(canonical(P.Name));
  return Out;
}

/// The digest's oracle piece: PerSend X_s + PerReceive X_r up to the ratio
/// Hi (to 4 decimals, as printed).
void expectPiece(const SymmetricLinks::Piece &P, double PerSend,
                 double PerReceive, double Hi) {
  EXPECT_NEAR(P.C.PerSend, PerSend, 6e-5);
  EXPECT_NEAR(P.C.PerReceive, PerReceive, 6e-5);
  if (std::isfinite(Hi))
    EXPECT_NEAR(P.Hi, Hi, 6e-5);
  else
    EXPECT_TRUE(std::isinf(P.Hi));
}

std::vector<std::string> classes(std::vector<std::string> Names) {
  for (std::string &N : Names)
    N = canonical(N);
  return Names;
}

} // namespace

TEST(HostLinkStatesTest, PermutationClassesFillTheTable) {
  StateTable T = dualC2075();
  EXPECT_TRUE(T.missingClasses().empty());
  EXPECT_EQ(T.allStates().size(), 15u);
  std::vector<Rates> R;
  // R/SR was not listed: its GPU in SR takes SR/R's SR rates.
  ASSERT_TRUE(T.rates({Link::R, Link::SR}, R));
  EXPECT_DOUBLE_EQ(R[0].Receive, 2.76);
  EXPECT_DOUBLE_EQ(R[1].Send, 2.41);
  EXPECT_DOUBLE_EQ(R[1].Receive, 2.42);
  StateTable F = fourM2090();
  EXPECT_TRUE(F.missingClasses().empty());
  EXPECT_EQ(F.allStates().size(), 255u);
  ASSERT_TRUE(F.rates({Link::N, Link::R, Link::S, Link::SR}, R));
  EXPECT_DOUBLE_EQ(R[3].Send + R[2].Send, 10.71); // A.4's misprint fixed
  StateTable Half(4);
  Half.add({Link::S, Link::S, Link::S, Link::S}, std::vector<Rates>(4));
  EXPECT_EQ(Half.missingClasses().size(), 33u);
  EXPECT_FALSE(Half.rates({Link::S, Link::N, Link::N, Link::N}, R));
}

TEST(HostLinkStatesTest, CorrectedTwoStateMixOf468) {
  // C2075's first hull edge, S/S (10.22, 0) to SR/S (5.89, 2.99): (4.68)
  // with its sign fixed gives the digest's 0.0978 and 0.1417, both
  // positive (the printed order of terms negates both).
  Coefficients C =
      twoStateCoefficients({"S/S", 10.22, 0}, {"SR/S", 5.89, 2.99});
  EXPECT_NEAR(C.PerSend, 0.0978, 6e-5);
  EXPECT_NEAR(C.PerReceive, 0.1417, 6e-5);
  // The mix meets the demand exactly.
  double Xs = 3, Xr = 1;
  double T = C.PerSend * Xs + C.PerReceive * Xr;
  double Det = 10.22 * 2.99;
  double Tp = (Xs * 2.99 - Xr * 5.89) / Det, Tq = (10.22 * Xr) / Det;
  EXPECT_NEAR(T, Tp + Tq, 1e-12);
}

TEST(HostLinkStatesTest, DualC2075Oracle470) {
  SymmetricLinks G = symmetricLinks(statePoints(dualC2075()));
  EXPECT_EQ(vertexClasses(G), classes({"S/S", "SR/S", "R/R"}));
  ASSERT_EQ(G.pieces().size(), 2u);
  expectPiece(G.pieces()[0], 0.0978, 0.1417, 0.5076);
  expectPiece(G.pieces()[1], 0.0947, 0.1479, HUGE_VAL);
  EXPECT_NEAR(G.seconds(2, 0.5), 0.0978 * 2 + 0.1417 * 0.5, 1e-3);
  EXPECT_NEAR(G.seconds(1, 2), 0.0947 + 0.1479 * 2, 1e-3);
  EXPECT_NEAR(G.seconds(10.22, 0), 1, 1e-12);
  EXPECT_NEAR(G.seconds(0, 6.76), 1, 1e-12);
}

TEST(HostLinkStatesTest, DualC2070Oracle) {
  SymmetricLinks G = symmetricLinks(statePoints(dualC2070()));
  EXPECT_EQ(vertexClasses(G), classes({"S/S", "SR/S", "SR/SR", "R/R"}));
  ASSERT_EQ(G.pieces().size(), 3u);
  expectPiece(G.pieces()[0], 0.1429, 0.1320, 0.4896);
  expectPiece(G.pieces()[1], 0.1030, 0.2134, 1.0192);
  expectPiece(G.pieces()[2], 0.0970, 0.2193, HUGE_VAL);
}

TEST(HostLinkStatesTest, DualM2090Oracle) {
  SymmetricLinks G = symmetricLinks(statePoints(dualM2090()));
  EXPECT_EQ(vertexClasses(G), classes({"S/S", "SR/S", "SR/SR", "SR/R", "R/R"}));
  ASSERT_EQ(G.pieces().size(), 4u);
  expectPiece(G.pieces()[0], 0.0821, 0.0360, 0.4212);
  expectPiece(G.pieces()[1], 0.0795, 0.0423, 0.9903);
  expectPiece(G.pieces()[2], 0.0396, 0.0826, 2.2602);
  expectPiece(G.pieces()[3], 0.0283, 0.0876, HUGE_VAL);
}

/// Table A.4's total columns (send, receive), with 0.71 read as 10.71. The
/// per-GPU columns (fourM2090()) disagree with them in three more rows:
/// SR/S/S/S sends 4.51 + 3 x 5.99 = 22.48, not 16.49; SR/R/R/R receives
/// 4.15 + 3 x 4.39 = 17.32, not 17.23; SR/SR/SR/SR receives 4 x 3.81 =
/// 15.24, not 14.24. The digest's G (the oracle) is the totals'.
std::vector<Point> fourM2090Totals() {
  std::vector<Point> Out;
  StateTable T = fourM2090();
  for (const MeasuredState &M : T.measured())
    Out.push_back({stateName(M.State), M.totalSend(), M.totalReceive()});
  for (Point &P : Out) {
    if (P.Name == "SR/S/S/S")
      P.Send = 16.49;
    if (P.Name == "SR/R/R/R")
      P.Receive = 17.23;
    if (P.Name == "SR/SR/SR/SR")
      P.Receive = 14.24;
  }
  return Out;
}

TEST(HostLinkStatesTest, FourM2090Oracle) {
  SymmetricLinks G = symmetricLinks(fourM2090Totals());
  EXPECT_EQ(vertexClasses(G),
            classes({"S/S/S/S", "SR/SR/S/S", "SR/SR/SR/SR", "SR/SR/SR/R",
                     "SR/SR/R/R", "SR/R/R/R", "R/R/R/R"}));
  ASSERT_EQ(G.pieces().size(), 6u);
  expectPiece(G.pieces().front(), 0.0411, 0.0209, 0.3986);
  expectPiece(G.pieces().back(), 0.0059, 0.0566, HUGE_VAL);
  EXPECT_NEAR(G.pieces().back().Lo, 3.97, 5e-3);
}

TEST(HostLinkStatesTest, GIsTheTotalsLinearProgram) {
  // G() from the hull against luo::optimalTransferTime's vertex search over
  // the same points, on random demands, for every oracle table.
  std::mt19937 Rng(3);
  std::uniform_real_distribution<double> U(0, 5);
  for (const StateTable &T :
       {dualC2075(), dualC2070(), dualM2090(), fourM2090()}) {
    std::vector<Point> Pts = statePoints(T);
    std::vector<luo::LinkState> Ls;
    for (const Point &P : Pts)
      Ls.push_back({P.Name, P.Send, P.Receive});
    SymmetricLinks G = symmetricLinks(Pts);
    for (int I = 0; I < 200; ++I) {
      double Xs = I % 7 ? U(Rng) : 0, Xr = I % 5 ? U(Rng) : 0;
      double Want = luo::optimalTransferTime(Ls, Xs, Xr);
      EXPECT_NEAR(G.seconds(Xs, Xr), Want, 1e-9 * (1 + Want))
          << Xs << " " << Xr;
    }
  }
}

TEST(HostLinkStatesTest, UnequalDemandsSolvedDirectly) {
  StateTable T = dualC2070();
  std::vector<MeasuredState> All = T.allStates();
  // Equal per-GPU demands on a permutation-symmetric table: the per-GPU LP
  // is G of the totals.
  SymmetricLinks G = symmetricLinks(statePoints(T));
  Schedule S = optimalSchedule(All, {1, 1}, {0.5, 0.5});
  ASSERT_TRUE(S.Feasible);
  EXPECT_NEAR(S.Seconds, G.seconds(2, 1), 1e-9);
  // Only GPU 0 has work: its link alone, both ways at once or one after the
  // other, is H() of (4.35) with its alone rates (SR/N 3.03 / 3.16).
  S = optimalSchedule(All, {1, 0}, {1, 0});
  ASSERT_TRUE(S.Feasible);
  EXPECT_NEAR(S.Seconds, luo::bidirectionalTime(1, 1, 5.2, 4.5, 3.03, 3.16),
              1e-9);
  // Unequal: GPU 1 only receives while GPU 0 only sends; the schedule's
  // states move at least the demands.
  S = optimalSchedule(All, {2, 0}, {0, 1});
  ASSERT_TRUE(S.Feasible);
  double S0 = 0, R1 = 0, Total = 0;
  for (auto &[M, Sec] : S.Used) {
    S0 += Sec * M.PerGpu[0].Send;
    R1 += Sec * M.PerGpu[1].Receive;
    Total += Sec;
  }
  EXPECT_GE(S0, 2 - 1e-9);
  EXPECT_GE(R1, 1 - 1e-9);
  EXPECT_NEAR(Total, S.Seconds, 1e-12);
  // S/R alone (3.08 and 3.15 at once) would take 2 / 3.08; mixing it with
  // S/N and N/R does better, and no better than each GPU alone.
  EXPECT_LT(S.Seconds, 2 / 3.08 - 0.1);
  EXPECT_GE(S.Seconds, std::max(2 / 5.2, 1 / 4.5));
  // A GPU with demand that no state serves.
  StateTable Only(2);
  Only.add({Link::S, Link::N}, {{5, 0}, {0, 0}});
  EXPECT_TRUE(optimalSchedule(Only.allStates(), {0, 1}, {0, 0}).Feasible);
  EXPECT_FALSE(optimalSchedule(Only.allStates(), {0, 0}, {0, 1}).Feasible);
}

namespace {
DeviceProfile profile(const char *Name) {
  DeviceProfile P;
  Result R = loadDeviceProfile(
      std::string(CLEAVE_TEST_SOURCE_ROOT) + "/profiles/" + Name, P);
  EXPECT_TRUE(R.ok()) << R.message();
  return P;
}
} // namespace

TEST(HostLinkStatesTest, TwoH200Profile) {
  DeviceProfile P = profile("h200x2-all.json");
  EXPECT_EQ(P.LinkStates.size(), 15u);
  StateTable T = tableFromProfile(P, {0, 1});
  ASSERT_EQ(T.gpus(), 2u);
  EXPECT_EQ(T.measured().size(), 15u);
  EXPECT_TRUE(T.missingClasses().empty());
  std::vector<Rates> R;
  ASSERT_TRUE(T.rates({Link::SR, Link::SR}, R));
  EXPECT_NEAR(R[0].Send, 34.97, 0.01);
  EXPECT_NEAR(R[1].Receive, 51.69, 0.01);
  SymmetricLinks G = symmetricLinks(statePoints(T));
  // Sending only: S/S at 110.28 GB/s in all; receiving only: R/R, 110.37.
  EXPECT_NEAR(G.seconds(110.284, 0), 1, 1e-4);
  EXPECT_NEAR(G.seconds(0, 110.365), 1, 1e-4);
  EXPECT_EQ(canonical(G.vertices().front().Name), "S/S");
  EXPECT_EQ(canonical(G.vertices().back().Name), "R/R");
  // Both ways: better than one after the other, no better than the sum of
  // the two GPUs' alone links.
  double Both = G.seconds(10, 10);
  EXPECT_LT(Both, 10 / 110.284 + 10 / 110.365);
  EXPECT_GT(Both, 10 / 110.284);
  // Equal per-GPU demands: the per-GPU LP is G up to the measured
  // asymmetry of the two links.
  Schedule S = optimalSchedule(T.allStates(), {5, 5}, {5, 5});
  ASSERT_TRUE(S.Feasible);
  EXPECT_GE(S.Seconds, Both - 1e-12);
  EXPECT_LE(S.Seconds, Both * 1.01);
  // One GPU of the two.
  StateTable One = tableFromProfile(P, {1});
  EXPECT_EQ(One.measured().size(), 3u);
}

TEST(HostLinkStatesTest, FourH200Profile) {
  DeviceProfile P = profile("h200x4-all.json");
  StateTable T = tableFromProfile(P, {0, 1, 2, 3});
  ASSERT_EQ(T.gpus(), 4u);
  EXPECT_TRUE(T.missingClasses().empty());
  EXPECT_EQ(T.allStates().size(), 255u);
  SymmetricLinks G = symmetricLinks(statePoints(T));
  // The host link saturates: four senders move 152.5 GB/s, four receivers
  // 130.1 GB/s, against 4 x 55 alone.
  EXPECT_NEAR(G.seconds(152.458, 0), 1, 1e-4);
  EXPECT_NEAR(G.seconds(0, 130.131), 1, 1e-4);
  EXPECT_EQ(canonical(G.vertices().front().Name), "S/S/S/S");
  EXPECT_EQ(canonical(G.vertices().back().Name), "R/R/R/R");
  // Every G piece's coefficients are positive and the pieces tile the
  // ratios.
  for (size_t I = 0; I < G.pieces().size(); ++I) {
    const SymmetricLinks::Piece &Pc = G.pieces()[I];
    EXPECT_GE(Pc.C.PerSend, 0);
    EXPECT_GE(Pc.C.PerReceive, 0);
    if (I)
      EXPECT_DOUBLE_EQ(Pc.Lo, G.pieces()[I - 1].Hi);
  }
  // Two of the four GPUs: their states with the others idle. The
  // calibrator lays each class out over the first GPUs, so GPUs 0 and 1
  // have every 2-GPU class and GPUs 2 and 3 only their alone states.
  EXPECT_TRUE(tableFromProfile(P, {0, 1}).missingClasses().empty());
  StateTable Two = tableFromProfile(P, {2, 3});
  EXPECT_EQ(Two.gpus(), 2u);
  EXPECT_EQ(Two.missingClasses().size(), 6u);
  Schedule S = optimalSchedule(T.allStates(), {4, 4, 4, 4}, {2, 2, 2, 2});
  ASSERT_TRUE(S.Feasible);
  EXPECT_GE(S.Seconds, G.seconds(16, 8) - 1e-12);
  EXPECT_LE(S.Seconds, G.seconds(16, 8) * 1.02);
}

TEST(HostLinkStatesTest, EightGpusFromTheirClasses) {
  // A host link of 250 GB/s each way shared evenly, 55 GB/s per GPU and
  // direction at most, 45 when a GPU does both: one state per class, as
  // the calibrator measures with 8 GPUs.
  StateTable T(8);
  for (unsigned SR = 0; SR <= 8; ++SR)
    for (unsigned S = 0; SR + S <= 8; ++S)
      for (unsigned R = 0; SR + S + R <= 8; ++R) {
        if (SR + S + R == 0)
          continue;
        SystemState State;
        State.insert(State.end(), SR, Link::SR);
        State.insert(State.end(), S, Link::S);
        State.insert(State.end(), R, Link::R);
        State.resize(8, Link::N);
        double Senders = SR + S, Receivers = SR + R;
        std::vector<Rates> Per(8);
        for (size_t I = 0; I < 8; ++I) {
          double Own = State[I] == Link::SR ? 45 : 55;
          if (State[I] == Link::S || State[I] == Link::SR)
            Per[I].Send = std::min(Own, 250 / Senders);
          if (State[I] == Link::R || State[I] == Link::SR)
            Per[I].Receive = std::min(Own, 250 / Receivers);
        }
        T.add(State, Per);
      }
  EXPECT_EQ(T.measured().size(), 164u);
  EXPECT_TRUE(T.missingClasses().empty());
  std::vector<MeasuredState> All = T.allStates();
  ASSERT_EQ(All.size(), 65535u);
  SymmetricLinks G = symmetricLinks(statePoints(T));
  // All eight sending: 250 GB/s; both ways at once, 250 + 250.
  EXPECT_NEAR(G.seconds(250, 0), 1, 1e-12);
  EXPECT_NEAR(G.seconds(250, 250), 1, 1e-12);
  // Equal per-GPU demands: the 16-row LP over 65,535 states is G.
  Schedule S = optimalSchedule(All, std::vector<double>(8, 10),
                               std::vector<double>(8, 5));
  ASSERT_TRUE(S.Feasible);
  EXPECT_NEAR(S.Seconds, G.seconds(80, 40), 1e-9);
  // One GPU's demand alone: its own link, 55 GB/s.
  std::vector<double> One(8, 0);
  One[5] = 11;
  S = optimalSchedule(All, One, std::vector<double>(8, 0));
  EXPECT_NEAR(S.Seconds, 0.2, 1e-9);
}
