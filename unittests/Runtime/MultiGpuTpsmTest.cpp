//===- MultiGpuTpsmTest.cpp - TPSM over GPUs sharing host links -----------===//
//
// Digest 000 §3.4.2 (symmetric TPSM with G() for H()) and §3.5 (two-layer
// partitioning), on the 2x and 4x H200 profiles.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/MultiGpuTpsm.h"
#include "cleave/rt/DeviceProfile.h"

#include <gtest/gtest.h>

#include <random>

using namespace cleave::rt;
using namespace cleave::rt::tpsm;
using cleave::rt::links::Link;
using cleave::rt::links::MeasuredState;
using cleave::rt::links::StateTable;

namespace {

DeviceProfile profile(const char *Name) {
  DeviceProfile P;
  Result R = loadDeviceProfile(
      std::string(CLEAVE_TEST_SOURCE_ROOT) + "/profiles/" + Name, P);
  EXPECT_TRUE(R.ok()) << R.message();
  return P;
}

/// vecadd in host mode: 4 GB in, 2 GB out, blocks of 1024 floats, a
/// memory-bound kernel (12 KB per block at 4 TB/s), waves of 264 blocks.
Workload vecadd() {
  Workload W;
  W.Blocks = 500000;
  W.Send.PerBlock = 8192;
  W.Receive.PerBlock = 4096;
  W.Kernel = waveKernelTime(264 * 12288 / 4e12, 264, 5e-6);
  W.MinChunk = 264;
  return W;
}

} // namespace

TEST(MultiGpuTpsmTest, GroupRatesFromTheAllAlikeStates) {
  DeviceProfile P = profile("h200x4-all.json");
  GpuGroup G = symmetricGroup(P, {0, 1, 2, 3});
  EXPECT_EQ(G.PerGpu.Missing, "");
  ASSERT_TRUE(bool(G.PerGpu.Transfer));
  // §3.4.2: S_S is one GPU's rate with all four sending, R_R receiving.
  EXPECT_NEAR(G.PerGpu.SendAlone, 152.458e9 / 4, 1e7);
  EXPECT_NEAR(G.PerGpu.ReceiveAlone, 130.131e9 / 4, 1e7);
  EXPECT_NEAR(G.PerGpu.SendBoth, 72.036e9 / 4, 1e7);
  EXPECT_NEAR(G.PerGpu.ReceiveBoth, 95.033e9 / 4, 1e7);
  // t_str: the slowest GPU's (they step together).
  double Slowest = 0;
  for (int O : {0, 1, 2, 3})
    Slowest = std::max(Slowest, P.gpu(O)->StepSyncUs * 1e-6);
  EXPECT_DOUBLE_EQ(G.PerGpu.StepSync, Slowest);
  EXPECT_GT(Slowest, 12e-6);
  // A GPU the profile lacks, and GPUs without their pair states.
  EXPECT_NE(symmetricGroup(P, {0, 7}).PerGpu.Missing, "");
  GpuGroup Upper = symmetricGroup(P, {2, 3});
  EXPECT_NE(Upper.PerGpu.Missing.find("all-S"), std::string::npos);
  EXPECT_FALSE(planSymmetric(vecadd(), Upper).PerGpu.Pipelined);
}

TEST(MultiGpuTpsmTest, StepsTakeGInPlaceOfH) {
  DeviceProfile P = profile("h200x4-all.json");
  GpuGroup G = symmetricGroup(P, {0, 1, 2, 3});
  Workload W = vecadd();
  MultiPlan M = planSymmetric(W, G);
  ASSERT_TRUE(M.PerGpu.Pipelined) << M.describe();
  EXPECT_EQ(M.BlocksPerGpu, 125000u);
  EXPECT_EQ(caseName(M.PerGpu.C), "DB+GH");
  Workload Share = W;
  Share.Blocks = M.BlocksPerGpu;
  // (4.104): a step's transfer is G(4 x_s, 4 x_r) over the totals.
  std::vector<double> Times = stepTimes(M.PerGpu.Steps, Share, G.PerGpu);
  ASSERT_EQ(Times.size(), M.PerGpu.Steps.size());
  for (size_t J = 0; J < Times.size(); ++J) {
    const Step &S = M.PerGpu.Steps[J];
    double Xs = 4 * 8192.0 * S.Send / 1e9, Xr = 4 * 4096.0 * S.Receive / 1e9;
    double K = S.Kernel ? W.Kernel(S.Kernel) : 0;
    EXPECT_NEAR(Times[J], std::max(G.G.seconds(Xs, Xr), K) + G.PerGpu.StepSync,
                1e-9)
        << J;
  }
  // (4.127): m* = sqrt(2 (G(D_s, 0) + G(0, D_r) - G(D_s, D_r)) / t_str).
  double Ds = 4.096, Dr = 2.048;
  double Gain = G.G.seconds(Ds, 0) + G.G.seconds(0, Dr) - G.G.seconds(Ds, Dr);
  EXPECT_NEAR(M.PerGpu.EqualChunks, std::sqrt(2 * Gain / G.PerGpu.StepSync),
              1e-6);
  // The link bound is G(D_s, D_r) here (the kernel is short), and the plan
  // comes within the 1.10x of it.
  EXPECT_NEAR(M.LinkBoundSeconds, G.G.seconds(Ds, Dr), 1e-12);
  EXPECT_GE(M.seconds(), M.LinkBoundSeconds);
  EXPECT_LT(M.seconds(), 1.10 * M.LinkBoundSeconds);
  // Predicted against one GPU unpipelined (the issue asks >= 3.0x on 4).
  LinkRates One = linkRates(*P.gpu(0), HostMemory::Pinned);
  EXPECT_GT(unpipelinedTime(W, One) / M.seconds(), 3.0);
}

TEST(MultiGpuTpsmTest, OneGpuGroupIsTheSingleGpuPlan) {
  // With one GPU, G over its S, R and SR states is H() (§3.4's LP on one
  // link), so the group's plan is the single-GPU plan (up to the profile's
  // two measurements of the alone rates: "alone" and the state S/N).
  DeviceProfile P = profile("h200x2-all.json");
  Workload W = vecadd();
  W.Blocks = 100000;
  MultiPlan M = planHostMode(P, {1}, W);
  Plan One = plan(W, linkRates(*P.gpu(1), HostMemory::Pinned));
  ASSERT_TRUE(M.PerGpu.Pipelined) << M.describe();
  EXPECT_EQ(M.PerGpu.chunks(), One.chunks());
  EXPECT_NEAR(M.seconds(), One.seconds(), 1e-4 * One.seconds());
  EXPECT_NEAR(M.PerGpu.UnpipelinedSeconds, One.UnpipelinedSeconds,
              1e-4 * One.UnpipelinedSeconds);
}

TEST(MultiGpuTpsmTest, TwoGpusScaleUnderTheLinks) {
  DeviceProfile P = profile("h200x2-all.json");
  Workload W = vecadd();
  MultiPlan Two = planHostMode(P, {0, 1}, W);
  MultiPlan One = planHostMode(P, {0}, W);
  ASSERT_TRUE(Two.PerGpu.Pipelined && One.PerGpu.Pipelined);
  // Two links barely contend on this host: close to twice as fast.
  EXPECT_GT(One.seconds() / Two.seconds(), 1.8);
  EXPECT_LT(Two.seconds() / Two.LinkBoundSeconds, 1.10);
}

// Two-layer partitioning. -----------------------------------------------------

namespace {
/// One GPU's link: S 50, R 50, SR 40 / 40 GB/s.
std::vector<MeasuredState> oneLink() {
  StateTable T(1);
  T.add({Link::S}, {{50, 0}});
  T.add({Link::R}, {{0, 50}});
  T.add({Link::SR}, {{40, 40}});
  return T.allStates();
}
} // namespace

TEST(MultiGpuTpsmTest, FirstLayerSplitsByKernelTimes) {
  // §3.5: with sample times a and b, GPU 0 gets b / (a + b).
  std::vector<Worker> W = {{"gpu0", -1, 2e-6}, {"gpu1", -1, 1e-6}};
  LayerSplit S = splitLayer(W, 30000, 0, 0, {});
  ASSERT_TRUE(S.Feasible);
  EXPECT_EQ(S.Blocks[0], 10000u);
  EXPECT_EQ(S.Blocks[1], 20000u);
  EXPECT_NEAR(S.KernelSeconds, 0.02, 1e-12);
}

TEST(MultiGpuTpsmTest, TheCpuTakesWhatTheLinkCannotCarry) {
  // The GPU computes a block in 10 ns but its input takes 1e-5 GB / 50 GB/s
  // = 200 ns to send: per block it costs 200 ns, the CPU 600 ns, so the
  // CPU's share is 200 / (200 + 600).
  std::vector<Worker> W = {{"cpu", -1, 6e-7}, {"gpu0", 0, 1e-8}};
  LayerSplit S = splitLayer(W, 40000, 1e-5, 0, oneLink());
  ASSERT_TRUE(S.Feasible);
  EXPECT_NEAR(double(S.Blocks[0]), 10000, 1);
  EXPECT_NEAR(S.seconds(), 40000 * 1.5e-7, 1e-6);
  EXPECT_NEAR(S.TransferSeconds, 30000 * 2e-7, 1e-6);
}

TEST(MultiGpuTpsmTest, NeverSlowerThanTheBestSingleDevice) {
  std::mt19937 Rng(11);
  std::uniform_real_distribution<double> U(0.1, 10);
  DeviceProfile P = profile("h200x4-all.json");
  std::vector<MeasuredState> States =
      links::tableFromProfile(P, {0, 1, 2, 3}).allStates();
  for (int T = 0; T < 40; ++T) {
    std::vector<Worker> W = {{"cpu", -1, U(Rng) * 1e-6}};
    for (int G = 0; G < 4; ++G)
      W.push_back({"gpu" + std::to_string(G), G, U(Rng) * 1e-7});
    double Send = U(Rng) * 1e-6, Recv = U(Rng) * 1e-6;
    uint64_t N = 100000;
    LayerSplit S = splitLayer(W, N, Send, Recv, States);
    ASSERT_TRUE(S.Feasible);
    uint64_t Sum = 0;
    for (uint64_t B : S.Blocks)
      Sum += B;
    EXPECT_EQ(Sum, N);
    for (size_t D = 0; D < W.size(); ++D) {
      std::vector<uint64_t> Alone(W.size(), 0);
      Alone[D] = N;
      LayerSplit A;
      A.Blocks = Alone;
      A.KernelSeconds = W[D].SecondsPerBlock * double(N);
      std::vector<double> Xs(4, 0), Xr(4, 0);
      if (W[D].TableGpu >= 0) {
        Xs[W[D].TableGpu] = Send * double(N);
        Xr[W[D].TableGpu] = Recv * double(N);
      }
      A.TransferSeconds = links::optimalSchedule(States, Xs, Xr).Seconds;
      // Whole-block rounding moves at most one block per device.
      EXPECT_LE(S.seconds(), A.seconds() * (1 + 1e-3)) << T << " " << D;
    }
  }
}

TEST(MultiGpuTpsmTest, LayersAndRebalancing) {
  std::vector<Worker> W = {{"gpu0", -1, 1e-6}, {"gpu1", -1, 1e-6}};
  // 300 ms in all on the two: ten layers of about 30 ms.
  TwoLayerPlan P = planTwoLayer(W, 600000, 0, 0, {});
  ASSERT_EQ(P.Layers.size(), 10u);
  EXPECT_EQ(P.Layers[0], 60000u);
  EXPECT_EQ(P.First.Blocks[0], 30000u);
  EXPECT_NEAR(P.PredictedSeconds, 0.3, 1e-9);
  // gpu1 measured three times slower than predicted: the next layer gives
  // it a quarter.
  rebalance(W, P.First, {0.03, 0.09});
  EXPECT_NEAR(W[1].SecondsPerBlock, 3e-6, 1e-15);
  LayerSplit Next = splitLayer(W, 60000, 0, 0, {});
  EXPECT_EQ(Next.Blocks[1], 15000u);
  EXPECT_NE(P.describe(W).find("10 layers"), std::string::npos);
}
