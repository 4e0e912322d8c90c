//===- TpsmTest.cpp - Luo's transfer pipelining against the digest --------===//

#include "cleave/rt/Tpsm.h"
#include "cleave/rt/DeviceProfile.h"
#include "cleave/rt/LuoModel.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace cleave::rt;
using namespace cleave::rt::tpsm;

namespace {

constexpr double GB = 1e9;

/// Table 4.2's one Tesla C2075 alone: S_S 5.99, R_R 6.48, S_SR 3.86, R_SR
/// 4.2 GB/s; t_str \p TStr seconds.
LinkRates c2075(double TStr = 1e-4) {
  LinkRates L;
  L.SendAlone = 5.99 * GB;
  L.ReceiveAlone = 6.48 * GB;
  L.SendBoth = 3.86 * GB;
  L.ReceiveBoth = 4.2 * GB;
  L.StepSync = TStr;
  return L;
}

/// \p N blocks sending \p Sigma and receiving \p Rho bytes each, \p Kappa
/// kernel seconds per block, waves of \p Wave blocks.
Workload work(uint64_t N, double Sigma, double Rho, double Kappa,
              uint64_t Wave = 64) {
  Workload W;
  W.Blocks = N;
  W.Send.PerBlock = Sigma;
  W.Receive.PerBlock = Rho;
  W.Kernel = proportionalKernelTime(Kappa);
  W.MinChunk = Wave;
  return W;
}

/// A workload whose send, kernel and receive take \p Send, \p Kernel and
/// \p Receive seconds alone on \p L (Table 4.1 gives them as shares).
Workload fromTimes(double Send, double Kernel, double Receive,
                   const LinkRates &L, uint64_t N = 1 << 16) {
  return work(N, Send * L.SendAlone / N, Receive * L.ReceiveAlone / N,
              Kernel / N);
}

/// What every pipelined plan must satisfy.
void expectSound(const Plan &P, const Workload &W, const LinkRates &L) {
  ASSERT_TRUE(P.Pipelined) << P.Why;
  EXPECT_EQ(checkSteps(P.Steps, W.Blocks), "");
  EXPECT_LT(P.PipelinedSeconds, P.UnpipelinedSeconds);
  EXPECT_GE(P.PipelinedSeconds, P.BoundSeconds);
  EXPECT_DOUBLE_EQ(P.PipelinedSeconds, stepsTime(P.Steps, W, L));
}

// The equations. ----------------------------------------------------------

TEST(Tpsm, TransferTimeIsHOf435) {
  LinkRates L = c2075();
  // 1 GB each way: both move at the shared rates until the receive ends
  // (1/4.2 s), then the send's rest alone.
  double Expected = 1 / 4.2 + (1 - 3.86 / 4.2) / 5.99;
  EXPECT_NEAR(transferTime(GB, GB, L), Expected, 1e-12);
  EXPECT_NEAR(transferTime(GB, 0, L), 1 / 5.99, 1e-12);
  EXPECT_NEAR(transferTime(0, GB, L), 1 / 6.48, 1e-12);
  EXPECT_EQ(transferTime(0, 0, L), 0);
}

// (4.19)-(4.20): the base a of KB+GH's send phase is the largest a for which
// a step's transfer H(sigma a^2, rho) fits under its kernel kappa a, with
// (4.17)'s receive of chunk i-2 (a^(i-3)); with the printed a^(i-2) the
// receive is a times larger and that a no longer fits.
TEST(Tpsm, KernelBoundGeneralBaseIsTheLargestFit) {
  LinkRates Lb = c2075();
  Lb.SendAlone = 5.33 * GB, Lb.ReceiveAlone = 5.38 * GB;
  Lb.SendBoth = 5.22 * GB, Lb.ReceiveBoth = 2.04 * GB;
  struct {
    LinkRates L;
    double Sigma, Rho, Kappa;
    bool InB; // the receive outlasts the send at a (a <= delta)
  } Cases[] = {{c2075(), 1000, 1000, 1e-5, false},
               {c2075(), 1000, 30000, 2e-5, false},
               {c2075(), 4000, 2000, 5e-6, false},
               {Lb, 1000, 57868, 2.298e-6, true}};
  for (auto &C : Cases) {
    const LinkRates &L = C.L;
    double A = kernelBoundGeneralBase(C.Sigma, C.Rho, C.Kappa, L);
    ASSERT_GT(A, 1) << C.Sigma << " " << C.Rho;
    double Delta = std::sqrt(C.Rho * L.SendBoth / (C.Sigma * L.ReceiveBoth));
    EXPECT_EQ(A <= Delta, C.InB) << A << " " << Delta;
    EXPECT_NEAR(transferTime(C.Sigma * A * A, C.Rho, L), C.Kappa * A,
                1e-9 * C.Kappa * A);
    for (double X = A * 1.001; X < A * 1000; X *= 1.01)
      ASSERT_GT(transferTime(C.Sigma * X * X, C.Rho, L), C.Kappa * X) << X;
    // As printed, (4.17) receives rho a^(i-2): the step no longer fits.
    EXPECT_GT(transferTime(C.Sigma * A * A, C.Rho * A, L),
              C.Kappa * A * (1 + 1e-6));
  }
  // No a fits a kernel shorter than the transfers.
  EXPECT_EQ(kernelBoundGeneralBase(1e6, 1e6, 1e-9, c2075()), 0);
}

TEST(Tpsm, KernelBoundBasesOf44And411) {
  // a = S_S T_k / D_s per block: 5.99 GB/s * 1 ms / 1 MB = 5.99.
  EXPECT_NEAR(kernelBoundBase(5.99 * GB, 1e-3, 1e6), 5.99, 1e-12);
  EXPECT_EQ(kernelBoundBase(5.99 * GB, 1e-3, 0), 0);
}

/// Algorithm 1 as printed (digest 000 §3.3): the update rules of the
/// left and right cases are swapped.
double algorithm1AsPrinted(const std::function<double(double)> &W, double B,
                           unsigned N) {
  double A1 = std::min(1.0, B / 2), A2 = B, A3 = 2 * B;
  for (unsigned I = 0; I < N; ++I) {
    double W1 = W(A1), W2 = W(A2), W3 = W(A3);
    if (W1 < W2 && W1 < W3) {
      A1 = A2;
      A2 = (A1 + A3) / 2;
    } else if (W2 < W1 && W2 < W3) {
      A2 = (A1 + A3) / 2;
    } else if (W3 < W1 && W3 < W2) {
      A3 = A2;
      A2 = (A1 + A3) / 2;
    }
  }
  return A2;
}

TEST(Tpsm, GoldenSectionFindsWhatAlgorithm1AsPrintedWalksAwayFrom) {
  for (double Best : {1.3, 5.5}) {
    auto W = [Best](double A) { return (A - Best) * (A - Best) + 1; };
    EXPECT_NEAR(goldenSection(W, 1.0, 6.0, 48), Best, 1e-6);
    EXPECT_GT(std::fabs(algorithm1AsPrinted(W, 3.0, 20) - Best), 1.0);
  }
}

// §3.1's classification, Table 4.1 (shares of one run as seconds, C2075).
TEST(Tpsm, ClassifiesTable41) {
  LinkRates L = c2075();
  struct {
    const char *Name;
    double Send, Kernel, Receive;
    const char *Case;
  } Rows[] = {{"linear filter", .037, .921, .042, "KB+GH"},
              {"sepia filter", .142, .695, .163, "KB+GH"},
              {"black-scholes", .485, .453, .062, "DB+SH"},
              {"matrix 358400x512x14", .119, .877, .004, "KB+SH"},
              {"matrix 16384x4x7168", .006, .793, .201, "KB+RH"},
              // H(D_s, D_r) = 0.619 s: a kernel under send + receive but
              // over H hides both; one over each alone but under H does not.
              {"between H and send + receive", .4, .7, .4, "KB+GH"},
              {"between send alone and H", .4, .5, .4, "DB+GH"}};
  for (auto &R : Rows) {
    Workload W = fromTimes(R.Send, R.Kernel, R.Receive, L);
    Totals T = totals(W, L);
    EXPECT_NEAR(T.Send, R.Send, 1e-9);
    EXPECT_NEAR(T.Kernel, R.Kernel, 1e-9);
    EXPECT_EQ(caseName(classify(T)), R.Case) << R.Name;
    EXPECT_EQ(caseName(plan(W, L).C), R.Case) << R.Name;
  }
}

// The six cases' plans. ---------------------------------------------------

TEST(Tpsm, KernelBoundSendHeavyGrowsByAAndReceivesAtTheEnd) {
  LinkRates L = c2075();
  Workload W = fromTimes(.119, .877, .004, L);
  Plan P = plan(W, L);
  expectSound(P, W, L);
  EXPECT_EQ(caseName(P.C), "KB+SH");
  EXPECT_NEAR(P.A, .877 / .119, 1e-9); // (4.4)
  std::vector<uint64_t> C = P.chunks();
  ASSERT_GE(C.size(), 3u);
  EXPECT_EQ(C[0], 64u);
  for (size_t I = 1; I + 1 < C.size(); ++I)
    EXPECT_NEAR(double(C[I]) / C[I - 1], P.A, P.A * 0.2) << I;
  for (size_t I = 0; I + 1 < P.Steps.size(); ++I)
    EXPECT_EQ(P.Steps[I].Receive, 0u);
  EXPECT_EQ(P.Steps.back().Receive, W.Blocks);
  // (4.5): one smallest send, the kernel, all of the receive, the syncs.
  double T45 = 64 * W.Send.PerBlock / L.SendAlone + .877 + .004 +
               L.StepSync * double(P.Steps.size());
  EXPECT_NEAR(P.PipelinedSeconds, T45, 0.01 * T45);
}

TEST(Tpsm, KernelBoundReceiveHeavySendsFirstAndShrinks) {
  LinkRates L = c2075();
  Workload W = fromTimes(.006, .793, .201, L);
  Plan P = plan(W, L);
  expectSound(P, W, L);
  EXPECT_EQ(caseName(P.C), "KB+RH");
  EXPECT_NEAR(P.A, .793 / .201, 1e-9); // (4.11)
  EXPECT_EQ(P.Steps[0].Send, W.Blocks);
  std::vector<uint64_t> C = P.chunks();
  ASSERT_GE(C.size(), 3u);
  EXPECT_EQ(C.back(), 64u);
  for (size_t I = 2; I < C.size(); ++I)
    EXPECT_LE(C[I], C[I - 1]);
  // (4.12): all of the send, the kernel, the smallest receive, the syncs.
  double T412 = .006 + .793 + 64 * W.Receive.PerBlock / L.ReceiveAlone +
                L.StepSync * double(P.Steps.size());
  EXPECT_NEAR(P.PipelinedSeconds, T412, 0.01 * T412);
}

TEST(Tpsm, KernelBoundGeneralHeavyHasThreePhases) {
  LinkRates L = c2075();
  Workload W = fromTimes(.142, .695, .163, L); // sepia
  Plan P = plan(W, L);
  expectSound(P, W, L);
  EXPECT_EQ(caseName(P.C), "KB+GH");
  EXPECT_NEAR(P.B, .695 / .163, 1e-9); // (4.26)
  std::vector<uint64_t> C = P.chunks();
  ASSERT_GE(C.size(), 5u);
  EXPECT_EQ(C.front(), 64u);
  EXPECT_EQ(C.back(), 64u);
  // The send phase grows by a, up to the middle step (the last that
  // sends); the receive phase shrinks after its first step, which takes
  // what the series leaves.
  size_t Mid = 0;
  for (size_t I = 0; I < P.Steps.size(); ++I)
    if (P.Steps[I].Send)
      Mid = I;
  ASSERT_GE(Mid, 3u);
  for (size_t I = 2; I < Mid; ++I)
    EXPECT_NEAR(double(P.Steps[I].Kernel) / P.Steps[I - 1].Kernel, P.A,
                0.2 * P.A);
  for (size_t I = Mid + 3; I + 1 < P.Steps.size(); ++I)
    EXPECT_LE(P.Steps[I].Kernel, P.Steps[I - 1].Kernel);
  // The middle step sends the rest and runs what its transfer takes time
  // for (tcom_p2 / kappa blocks, tcom_p2 = H(d_s, d_r)), within a wave.
  const Step &M = P.Steps[Mid];
  double Tcom =
      transferTime(M.Send * W.Send.PerBlock, M.Receive * W.Receive.PerBlock, L);
  double Kappa = .695 / W.Blocks;
  EXPECT_NEAR(M.Kernel * Kappa, Tcom, 64 * Kappa);
  // (4.27): T_total is within its bound.
  double T427 = 64 * W.Send.PerBlock / L.SendAlone + .695 +
                64 * W.Receive.PerBlock / L.ReceiveAlone +
                L.StepSync * double(P.Steps.size());
  EXPECT_LE(P.PipelinedSeconds, T427 * 1.01);
}

TEST(Tpsm, TransferBoundSendHeavyShrinksWithTheSearchedBase) {
  LinkRates L = c2075();
  Workload W = fromTimes(.485, .453, .062, L); // black-scholes
  Plan P = plan(W, L);
  expectSound(P, W, L);
  EXPECT_EQ(caseName(P.C), "DB+SH");
  std::vector<uint64_t> C = P.chunks();
  ASSERT_GE(C.size(), 3u);
  EXPECT_EQ(C.back(), 64u);
  for (size_t I = 2; I < C.size(); ++I)
    EXPECT_LE(C[I], C[I - 1]);
  // Within 2% of H(D_s, D_r), the optimum (4.37).
  EXPECT_LT(P.PipelinedSeconds, P.T.Both * 1.02);
}

TEST(Tpsm, TransferBoundReceiveHeavyGrowsThroughThreePhases) {
  LinkRates L = c2075();
  Workload W = fromTimes(.05, .3, .65, L);
  Plan P = plan(W, L);
  expectSound(P, W, L);
  EXPECT_EQ(caseName(P.C), "DB+RH");
  EXPECT_GT(P.A, 1);
  // (4.43)-(4.46): the receive phase grows by D_r / (T_k R_R).
  EXPECT_NEAR(P.B, .65 / .3, 1e-9);
  std::vector<uint64_t> C = P.chunks();
  ASSERT_GE(C.size(), 3u);
  EXPECT_EQ(C.front(), 64u);
  EXPECT_LT(P.PipelinedSeconds, P.T.Both * 1.05); // (4.48)
}

TEST(Tpsm, TransferBoundGeneralHeavyUsesTheClosedForm) {
  LinkRates L = c2075(1e-4);
  // 1 GB each way, a short kernel: m* = sqrt(2 (1/5.99 + 1/6.48 -
  // H(1, 1)) / 1e-4) = 37.32 (4.53).
  uint64_t N = 1 << 16;
  Workload W = work(N, GB / N, GB / N, 0.01 / N, 16);
  Plan P = plan(W, L);
  expectSound(P, W, L);
  EXPECT_EQ(caseName(P.C), "DB+GH");
  double H11 = 1 / 4.2 + (1 - 3.86 / 4.2) / 5.99;
  double MStar = std::sqrt(2 * (1 / 5.99 + 1 / 6.48 - H11) / 1e-4);
  EXPECT_NEAR(MStar, 37.32, 0.01);
  EXPECT_NEAR(P.EqualChunks, MStar, 1e-9);
  std::vector<uint64_t> C = P.chunks();
  EXPECT_TRUE(C.size() == 37 || C.size() == 38) << C.size();
  for (size_t I = 1; I + 1 < C.size(); ++I)
    EXPECT_EQ(C[I], C[0]);
  // (4.52) at m*, and no whole m nearby does better than the plan.
  auto W452 = [&](double M) {
    return 2 * GB / (M * L.SendAlone) + 2 * GB / (M * L.ReceiveAlone) +
           (M - 2) * transferTime(GB / M, GB / M, L) + L.StepSync * (M + 2);
  };
  EXPECT_NEAR(P.PipelinedSeconds, W452(double(C.size())), 2e-3);
  for (double M = 20; M < 60; ++M)
    EXPECT_GE(W452(M), W452(MStar) - 1e-12);
}

// Sanity on random workloads. ----------------------------------------------

TEST(Tpsm, RandomPlansCoverEveryBlockOnceAndStayBetweenTheBounds) {
  std::mt19937_64 Rng(27);
  auto U = [&](double Lo, double Hi) {
    return std::uniform_real_distribution<double>(Lo, Hi)(Rng);
  };
  unsigned Cases[6] = {}, Pipelined = 0;
  for (int I = 0; I < 600; ++I) {
    LinkRates L;
    L.SendAlone = U(1, 60) * GB;
    L.ReceiveAlone = U(1, 60) * GB;
    L.SendBoth = L.SendAlone * U(0.4, 1);
    L.ReceiveBoth = L.ReceiveAlone * U(0.4, 1);
    L.StepSync = std::pow(10, U(-6, -4));
    L.SendLatency = U(0, 1e-5);
    L.ReceiveLatency = U(0, 1e-5);
    uint64_t Wave = uint64_t(U(1, 1000));
    Workload W;
    W.Blocks = uint64_t(std::pow(10, U(std::log10(2.0 * Wave), 6.5)));
    W.MinChunk = Wave;
    W.Send.PerBlock = U(0, 1) < 0.1 ? 0 : std::pow(10, U(1, 6));
    W.Receive.PerBlock = U(0, 1) < 0.1 ? 0 : std::pow(10, U(1, 6));
    W.Send.Fixed = U(0, 1) < 0.3 ? std::pow(10, U(3, 8)) : 0;
    W.Receive.Fixed = U(0, 1) < 0.1 ? std::pow(10, U(3, 6)) : 0;
    W.SendCopies = 1 + unsigned(U(0, 3));
    W.Kernel = waveKernelTime(std::pow(10, U(-7, -2)), Wave, U(0, 1e-5));
    Plan P = plan(W, L);
    SCOPED_TRACE(P.describe());
    if (W.Send.total(W.Blocks) + W.Receive.total(W.Blocks) == 0) {
      EXPECT_FALSE(P.Pipelined);
      continue;
    }
    ASSERT_TRUE(P.Why.find("internal") == std::string::npos) << P.Why;
    EXPECT_LE(P.seconds(), P.UnpipelinedSeconds);
    EXPECT_GE(P.seconds(), P.BoundSeconds * (1 - 1e-12));
    if (!P.Pipelined)
      continue;
    ++Pipelined;
    ++Cases[int(P.C.B) * 3 + int(P.C.H)];
    EXPECT_EQ(checkSteps(P.Steps, W.Blocks), "");
    EXPECT_LE(P.chunks().size(), Options().MaxChunks + 1);
    for (uint64_t C : P.chunks())
      EXPECT_GE(C, std::min<uint64_t>(Wave, W.Blocks));
  }
  EXPECT_GT(Pipelined, 300u);
  for (unsigned C : Cases)
    EXPECT_GT(C, 0u); // every case was planned at least once
}

TEST(Tpsm, CheckStepsNamesWhatIsWrong) {
  EXPECT_EQ(checkSteps({{4, 0, 0}, {0, 4, 0}, {0, 0, 4}}, 4), "");
  EXPECT_NE(checkSteps({{4, 4, 0}, {0, 0, 4}}, 4).find("not yet sent"),
            std::string::npos);
  EXPECT_NE(checkSteps({{4, 0, 0}, {0, 4, 4}}, 4).find("not yet run"),
            std::string::npos);
  EXPECT_NE(checkSteps({{4, 0, 0}, {0, 3, 0}, {0, 0, 3}}, 4).find("of 4"),
            std::string::npos);
}

TEST(Tpsm, FixedBytesMoveOnce) {
  LinkRates L = c2075(0);
  Workload W = work(4, 0, 0, 0, 1);
  W.Send.Fixed = 5.99 * GB; // one second alone
  W.Receive.Fixed = 6.48 * GB;
  std::vector<Step> S = {{2, 0, 0}, {2, 2, 0}, {0, 2, 2}, {0, 0, 2}};
  EXPECT_NEAR(stepsTime(S, W, L), 2.0, 1e-12);
}

// Refusals. -----------------------------------------------------------------

TEST(Tpsm, RefusesWithAReason) {
  LinkRates L = c2075();
  Workload W = fromTimes(.5, .1, .4, L);
  LinkRates NoBoth = L;
  NoBoth.Missing = "pageable S_SR";
  Plan P = plan(W, NoBoth);
  EXPECT_FALSE(P.Pipelined);
  EXPECT_NE(P.Why.find("lacks pageable S_SR"), std::string::npos) << P.Why;
  EXPECT_NE(P.describe().find("not pipelined"), std::string::npos);

  Workload Small = work(100, 1e6, 1e6, 1e-6, 64);
  EXPECT_NE(plan(Small, L).Why.find("two waves"), std::string::npos);
  Workload Nothing = work(1 << 16, 0, 0, 1e-6, 64);
  EXPECT_NE(plan(Nothing, L).Why.find("nothing to transfer"),
            std::string::npos);
  // A kernel a thousand times longer than its transfers, with a step sync
  // that dwarfs the transfers: not worth cutting.
  LinkRates Slow = c2075(1.0);
  Plan Q = plan(fromTimes(.001, 1, .001, Slow), Slow);
  EXPECT_FALSE(Q.Pipelined);
  EXPECT_NE(Q.Why.find("predicted"), std::string::npos) << Q.Why;
  EXPECT_EQ(Q.seconds(), Q.UnpipelinedSeconds);
}

// The profile's rates. ------------------------------------------------------

TEST(Tpsm, LinkRatesOfTheShippedH200Profile) {
  DeviceProfile Prof;
  Result R = loadDeviceProfile(
      std::string(CLEAVE_TEST_SOURCE_ROOT) + "/profiles/h200x1-all.json", Prof);
  ASSERT_TRUE(R.ok()) << R.message();
  const GpuProfile *G = Prof.gpu(0);
  ASSERT_TRUE(G);
  EXPECT_EQ(G->AsyncEngines, 3u);
  LinkRates P = linkRates(*G, HostMemory::Pinned);
  EXPECT_EQ(P.Missing, "");
  EXPECT_NEAR(P.SendAlone, 53.846e9, 1e6);
  EXPECT_NEAR(P.ReceiveAlone, 54.814e9, 1e6);
  EXPECT_NEAR(P.SendBoth, 48.284e9, 1e6); // state "SR"
  EXPECT_NEAR(P.ReceiveBoth, 50.864e9, 1e6);
  EXPECT_NEAR(P.StepSync, 8.5955e-6, 1e-9);
  LinkRates Pg = linkRates(*G, HostMemory::Pageable);
  EXPECT_NEAR(Pg.SendAlone, 8.7228e9, 1e6);
  EXPECT_NE(Pg.Missing.find("pageable S_SR"), std::string::npos);

  // The issue's vecadd in host mode: 4 GB up, 2 GB down, a 1.9 ms kernel
  // on 132 SMs x 8 blocks: transfer-bound, general-heavy, pipelined close
  // to H(D_s, D_r) and well under send + kernel + receive.
  uint64_t N = 1ull << 22;
  Workload W = work(N, 4e9 / N, 2e9 / N, 1.9e-3 / N, waveBlocks(132, 8));
  Plan V = plan(W, P);
  expectSound(V, W, P);
  EXPECT_EQ(caseName(V.C), "DB+GH");
  EXPECT_NEAR(V.UnpipelinedSeconds, 4 / 53.846 + 1.9e-3 + 2 / 54.814, 1e-4);
  EXPECT_LT(V.PipelinedSeconds, V.T.Both * 1.03);
}

TEST(Tpsm, LinkRatesReadTheNewProfileKeys) {
  const char *Text = R"({
    "schema": "cleave-device-profile", "schema_version": 1,
    "gpus": [{"index": 0, "name": "G", "sm_count": 2,
              "sync": {"step_sync_3_streams_us": {"median": 9.0}}},
             {"index": 1, "name": "G", "sm_count": 2}],
    "host_links": {
      "alone": [{"gpu": 1,
                 "pinned": {"h2d_gbps": 50, "d2h_gbps": 51},
                 "pageable": {"h2d_gbps": {"median": 9},
                              "d2h_gbps": {"median": 16},
                              "both": {"h2d_gbps": {"median": 7},
                                       "d2h_gbps": {"median": 12}}},
                 "latency": {"pinned": {"h2d_us": {"median": 2.5},
                                        "d2h_us": {"median": 3.0}},
                             "pageable": {"h2d_us": {"median": 11},
                                          "d2h_us": {"median": 13}}}}],
      "states": [
        {"name": "SR/N", "gpus": [
          {"gpu": 0, "state": "SR", "send_gbps": 40, "receive_gbps": 41},
          {"gpu": 1, "state": "N"}]},
        {"name": "SR/SR", "gpus": [
          {"gpu": 0, "state": "SR", "send_gbps": 20, "receive_gbps": 21},
          {"gpu": 1, "state": "SR", "send_gbps": 22, "receive_gbps": 23}]},
        {"name": "N/SR", "gpus": [
          {"gpu": 0, "state": "N"},
          {"gpu": 1, "state": "SR", "send_gbps": 52, "receive_gbps": 44}]}]
    }})";
  DeviceProfile Prof;
  ASSERT_TRUE(parseDeviceProfile(Text, Prof).ok());
  const GpuProfile &G0 = *Prof.gpu(0), &G1 = *Prof.gpu(1);
  EXPECT_EQ(G0.StepSyncUs, 9.0);
  EXPECT_EQ(G0.PinnedBothH2DGBps, 40);
  EXPECT_EQ(G0.PinnedBothD2HGBps, 41);
  EXPECT_EQ(G0.PinnedH2DLatencyUs, -1);
  EXPECT_EQ(G1.PinnedBothH2DGBps, 52); // not SR/SR's shared 22
  EXPECT_EQ(G1.PageableBothD2HGBps, 12);
  EXPECT_EQ(G1.PageableD2HLatencyUs, 13);

  LinkRates P1 = linkRates(G1, HostMemory::Pinned);
  EXPECT_NE(P1.Missing.find("t_str"), std::string::npos); // gpu1 has no sync
  EXPECT_EQ(P1.SendBoth, 50e9); // 52 measured above 50 alone: capped
  EXPECT_EQ(P1.ReceiveBoth, 44e9);
  EXPECT_DOUBLE_EQ(P1.SendLatency, 2.5e-6);
  EXPECT_TRUE(P1.Notes.empty());
  LinkRates Pg1 = linkRates(G1, HostMemory::Pageable);
  EXPECT_EQ(Pg1.SendBoth, 7e9);
  EXPECT_DOUBLE_EQ(Pg1.ReceiveLatency, 13e-6);
  GpuProfile OneEngine = G1;
  OneEngine.AsyncEngines = 1;
  EXPECT_NE(linkRates(OneEngine, HostMemory::Pinned)
                .Missing.find("a second copy engine"),
            std::string::npos);
  LinkRates P0 = linkRates(G0, HostMemory::Pinned);
  EXPECT_NE(P0.Missing.find("pinned S_S"), std::string::npos);
  ASSERT_EQ(P0.Notes.size(), 1u);
  EXPECT_NE(P0.Notes[0].find("latency"), std::string::npos);
}

} // namespace
