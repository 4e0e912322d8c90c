//===- PartitionerTest.cpp - SKMD's partitioner on synthetic tables -------===//

#include "cleave/rt/Partitioner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <numeric>
#include <random>

using namespace cleave::rt;

namespace {

/// A table with the same throughput at every size.
PerfTable flat(double BlocksPerMs, uint64_t MaxBlocks) {
  PerfTable T;
  uint64_t Step = MaxBlocks >= 16 ? MaxBlocks / 16 : 1;
  for (uint64_t B = Step; B <= MaxBlocks; B += Step)
    T.set(B, BlocksPerMs);
  return T;
}

DeviceCost cpu(double BlocksPerMs, uint64_t N) {
  DeviceCost C;
  C.Name = "cpu0";
  C.Perf = flat(BlocksPerMs, N);
  C.SharesHost = true;
  return C;
}

DeviceCost gpu(const char *Name, double BlocksPerMs, uint64_t N,
               double InPerBlock = 0, double OutPerBlock = 0) {
  DeviceCost C;
  C.Name = Name;
  C.Perf = flat(BlocksPerMs, N);
  C.In.PerBlock = InPerBlock;
  C.Out.PerBlock = OutPerBlock;
  C.H2DGBps = 50;
  C.D2HGBps = 50;
  return C;
}

uint64_t sum(const std::vector<uint64_t> &V) {
  return std::accumulate(V.begin(), V.end(), uint64_t(0));
}

TEST(PerfTable, LooksUpTheRangeThatHoldsTheCount) {
  // SKMD's Fig. 2, device 2: efficiency grows with the share.
  PerfTable T;
  T.set(512, 120.23);
  T.set(16, 42.11);
  T.set(48, 80.58);
  T.set(32, 55.12);
  EXPECT_EQ(T.size(), 4u);
  EXPECT_DOUBLE_EQ(T.throughput(1), 42.11);
  EXPECT_DOUBLE_EQ(T.throughput(16), 42.11);
  EXPECT_DOUBLE_EQ(T.throughput(20), 55.12);
  EXPECT_DOUBLE_EQ(T.throughput(100), 120.23);
  EXPECT_DOUBLE_EQ(T.throughput(4096), 120.23); // past the last row
  EXPECT_DOUBLE_EQ(T.timeMs(0), 0.0);
  EXPECT_NEAR(T.timeMs(16), 16 / 42.11, 1e-12);
  T.set(16, 50.0); // replaces
  EXPECT_DOUBLE_EQ(T.throughput(10), 50.0);
  T.set(0, 10.0);  // ignored
  T.set(64, -1.0); // ignored
  EXPECT_EQ(T.size(), 4u);
  EXPECT_TRUE(std::isinf(PerfTable().timeMs(1)));
  EXPECT_EQ(PerfTable().timeMs(0), 0.0);
}

TEST(Partitioner, TwoEqualGpusWithResidentDataSplitEvenly) {
  PartitionProblem P;
  P.TotalBlocks = 8192;
  P.Devices = {gpu("gpu0", 100, 8192), gpu("gpu1", 100, 8192)};
  PartitionDecision D = partition(P);
  ASSERT_EQ(sum(D.Blocks), P.TotalBlocks);
  uint64_t G = (P.TotalBlocks + 2047) / 2048;
  EXPECT_LE(std::llabs(int64_t(D.Blocks[0]) - int64_t(D.Blocks[1])),
            int64_t(G));
  EXPECT_NEAR(D.SingleDeviceMs, 81.92, 1e-9);
  EXPECT_NEAR(D.PredictedMs, 40.96, 0.05);
  EXPECT_GT(D.Steps, 0u);
}

TEST(Partitioner, SplitCostKeepsAShortLaunchWhole) {
  // Two equal GPUs and a grid that runs 0.08 ms on one: splitting would
  // save 0.04 ms of run time but costs the host 0.1 ms of bookkeeping
  // (exact write rows, PartitionProblem::SplitMs), so the launch stays on
  // one device; with a small split cost it splits evenly.
  PartitionProblem P;
  P.TotalBlocks = 8192;
  P.Devices = {gpu("gpu0", 100000, 8192), gpu("gpu1", 100000, 8192)};
  P.SplitMs = 0.1;
  PartitionDecision D = partition(P);
  EXPECT_TRUE(D.Blocks[0] == 8192 || D.Blocks[1] == 8192)
      << D.Blocks[0] << " " << D.Blocks[1];
  EXPECT_DOUBLE_EQ(D.PredictedMs, D.SingleDeviceMs);
  P.SplitMs = 0.001;
  D = partition(P);
  EXPECT_LE(std::llabs(int64_t(D.Blocks[0]) - int64_t(D.Blocks[1])), 8);
  EXPECT_LT(D.PredictedMs, D.SingleDeviceMs);
}

TEST(Partitioner, FourGpusAndACpuShareByThroughput) {
  PartitionProblem P;
  P.TotalBlocks = 1 << 16;
  uint64_t N = P.TotalBlocks;
  P.Devices = {cpu(20, N), gpu("gpu0", 400, N), gpu("gpu1", 400, N),
               gpu("gpu2", 400, N), gpu("gpu3", 400, N)};
  PartitionDecision D = partition(P);
  ASSERT_EQ(sum(D.Blocks), N);
  // Ideal: N / (4 * 400 + 20) ms; every device ends within a step of it.
  double Ideal = double(N) / (4 * 400 + 20);
  EXPECT_NEAR(D.PredictedMs, Ideal, Ideal * 0.02);
  for (size_t I = 1; I < 5; ++I)
    EXPECT_NEAR(double(D.Blocks[I]), 400 * Ideal, 64.0);
  EXPECT_GT(D.Blocks[0], 0u); // the CPU takes its small share
}

TEST(Partitioner, AHelperThatGainsLessThanTheMinimumIsLeftOut) {
  // The same CPU and GPUs as above: the CPU's share cuts the predicted time
  // by about 1.2 %, each GPU's by far more.
  PartitionProblem P;
  P.TotalBlocks = 1 << 16;
  uint64_t N = P.TotalBlocks;
  P.Devices = {cpu(20, N), gpu("gpu0", 400, N), gpu("gpu1", 400, N),
               gpu("gpu2", 400, N), gpu("gpu3", 400, N)};
  P.MinDeviceGain = 0.05;
  PartitionDecision D = partition(P);
  ASSERT_EQ(sum(D.Blocks), N);
  EXPECT_EQ(D.Blocks[0], 0u) << D.describe(P);
  EXPECT_EQ(D.LeftOut, 1u);
  double Ideal = double(N) / (4 * 400);
  EXPECT_NEAR(D.PredictedMs, Ideal, Ideal * 0.02);
  for (size_t I = 1; I < 5; ++I)
    EXPECT_NEAR(double(D.Blocks[I]), double(N) / 4, 64.0) << D.describe(P);
  EXPECT_NE(D.describe(P).find("1 device(s) left out"), std::string::npos);

  // A CPU a quarter as fast as a GPU gains about 6 %: it keeps its share.
  P.Devices[0] = cpu(100, N);
  D = partition(P);
  EXPECT_GT(D.Blocks[0], 0u) << D.describe(P);
  EXPECT_EQ(D.LeftOut, 0u);

  // A helper is never left out when the rest cannot run the kernel alone
  // in the time: two equal GPUs, the second gains half.
  P.Devices = {gpu("gpu0", 400, N), gpu("gpu1", 400, N)};
  P.MinDeviceGain = 0.45;
  D = partition(P);
  EXPECT_GT(D.Blocks[0], 0u);
  EXPECT_GT(D.Blocks[1], 0u);
}

TEST(Partitioner, ACopysLatencyCanMakeASmallShareNotPay) {
  // A 0.25 ms launch on gpu0, whose data is there; cpu0, about a ninth as
  // fast, needs a 4 KB halo from it for any share. Over the link alone the
  // halo costs nothing: without the CPU the launch would take 11.0 % more;
  // with 30 us of issuing and waiting for its copies, 9.6 % more, less than
  // the minimum.
  PartitionProblem P;
  P.TotalBlocks = 1 << 16;
  uint64_t N = P.TotalBlocks;
  DeviceCost C = gpu("cpu0", 29000, N);
  C.In.Fixed = 4096;
  C.H2DGBps = 8;
  P.Devices = {gpu("gpu0", 262144, N), C};
  P.MinDeviceGain = 0.10;
  PartitionDecision D = partition(P);
  EXPECT_GT(D.Blocks[1], 0u) << D.describe(P);
  EXPECT_GT(D.SingleDeviceMs, 1.1 * D.PredictedMs) << D.describe(P);
  P.Devices[1].InLatencyMs = 0.03;
  D = partition(P);
  EXPECT_EQ(D.Blocks[1], 0u) << D.describe(P);
  EXPECT_EQ(D.LeftOut, 1u);
  // Without the minimum it still takes a share: the latency is charged,
  // not forbidden.
  P.MinDeviceGain = 0;
  D = partition(P);
  ASSERT_GT(D.Blocks[1], 0u) << D.describe(P);
  std::vector<double> Times;
  std::vector<uint64_t> Q = D.Blocks;
  (void)predictPartition(P, Q, Times);
  EXPECT_NEAR(Times[1], double(Q[1]) / 29000 + 0.03 + 4096 / 8e6, 1e-9);
}

TEST(Partitioner, TheHeadStartDecidesAsSkmdsSearchDoes) {
  // Random problems: 2-5 devices, fixed costs, bytes in per block, a merge
  // cost now and then. With tables of one throughput at every share, the
  // search with the head start predicts what SKMD's own does (within
  // 0.5 %). With tables whose throughput steps up with the share, a device's
  // time is not monotone in its blocks and the two searches take different
  // paths: the head start's is never more than 10 % worse, and as good
  // (within 1 %) in nine cases out of ten. It takes far fewer steps.
  std::mt19937 Rng(7);
  auto U = [&](double Lo, double Hi) {
    return std::uniform_real_distribution<double>(Lo, Hi)(Rng);
  };
  for (bool Stepped : {false, true}) {
    unsigned FewerSteps = 0, Close = 0;
    const int Cases = 300;
    for (int Case = 0; Case < Cases; ++Case) {
      PartitionProblem P;
      P.TotalBlocks = uint64_t(U(1000, 300000));
      uint64_t N = P.TotalBlocks;
      int K = 2 + int(Rng() % 4);
      for (int D = 0; D < K; ++D) {
        DeviceCost C;
        C.Name = "dev" + std::to_string(D);
        double Top = U(5, 3000);
        for (uint64_t B = N / 64 + 1, I = 0; B < N; B *= 4, ++I)
          C.Perf.set(B, Stepped ? Top * (0.3 + 0.7 * std::min(1.0, I / 4.0))
                                : Top);
        C.Perf.set(N, Top);
        C.FixedMs = U(0, 0.05);
        C.SharesHost = Rng() % 3 == 0;
        C.In.PerBlock = Rng() % 2 ? U(0, 4096) : 0;
        C.H2DGBps = C.D2HGBps = U(10, 60);
        P.Devices.push_back(C);
      }
      if (Rng() % 4 == 0) {
        P.NeedsMerge = true;
        P.MergeMs = U(0, 0.5);
      }
      PartitionDecision Fast = partition(P);
      P.HeadStart = false;
      PartitionDecision Skmd = partition(P);
      ASSERT_EQ(sum(Fast.Blocks), N) << Case;
      EXPECT_LE(Fast.PredictedMs,
                Skmd.PredictedMs * (Stepped ? 1.10 : 1.005))
          << Case << "\n" << Fast.describe(P) << Skmd.describe(P);
      Close += Fast.PredictedMs <= Skmd.PredictedMs * 1.01;
      FewerSteps += Fast.Steps < Skmd.Steps;
    }
    EXPECT_GE(Close, Cases * 9 / 10) << Stepped;
    EXPECT_GT(FewerSteps, unsigned(Cases / 2)) << Stepped;
  }
}

TEST(Partitioner, CpuIsTheBestSingleDeviceWhenGpuDataIsOnTheHost) {
  // A memory-bound kernel whose data starts on the host: the GPU is 10x
  // faster at computing, but every block needs 1 MB over a 50 GB/s link
  // (0.02 ms per block) while the CPU needs 0.01 ms per block in place.
  PartitionProblem P;
  P.TotalBlocks = 4096;
  P.Devices = {cpu(100, 4096), gpu("gpu0", 1000, 4096, 1e6, 0)};
  PartitionDecision D = partition(P);
  EXPECT_EQ(D.BaseDevice, 0u);
  EXPECT_NEAR(D.SingleDeviceMs, 40.96, 1e-9);
  ASSERT_EQ(sum(D.Blocks), P.TotalBlocks);
  // Offloading still pays (the GPU's share overlaps the CPU's), and the
  // partition is better than either device alone.
  EXPECT_GT(D.Blocks[1], 0u);
  EXPECT_LT(D.PredictedMs, D.SingleDeviceMs);
  double GpuPerBlock = 1.0 / 1000 + 1e6 / 50e6;
  double Ideal = 4096.0 / (100 + 1 / GpuPerBlock);
  EXPECT_NEAR(D.PredictedMs, Ideal, Ideal * 0.02);
}

/// Bytes the program copies into and out of a share at every launch, per
/// block, at the given rates; \p OnHost: into the host copy (the CPU).
void programCopies(DeviceCost &C, double InPerBlock, double OutPerBlock,
                   double GBps, bool OnHost) {
  C.HostIn.PerBlock = InPerBlock;
  C.HostOut.PerBlock = OutPerBlock;
  C.HostInGBps = C.HostOutGBps = GBps;
  C.CopiesOnHost = OnHost;
}

TEST(Partitioner, TheProgramsCopiesAreHostCopiesInTurnThenGpusAtOnce) {
  // Per direction: the CPU's copies, then the longest GPU's.
  PartitionProblem P;
  P.TotalBlocks = 1000;
  P.Devices = {cpu(1000, 1000), gpu("gpu0", 1000, 1000),
               gpu("gpu1", 1000, 1000)};
  programCopies(P.Devices[0], 1e6, 5e5, 100, true);
  programCopies(P.Devices[1], 1e6, 5e5, 50, false);
  programCopies(P.Devices[2], 1e6, 5e5, 25, false);
  // In: 200 MB at 100 GB/s (2 ms), then max(300 MB at 50, 500 MB at 25)
  // = 20 ms; out: 1 ms, then max(3, 10) ms.
  std::vector<uint64_t> B = {200, 300, 500};
  EXPECT_NEAR(hostCopyMs(P, B), 2 + 20 + 1 + 10, 1e-9);
  // A device without a share copies nothing.
  EXPECT_NEAR(hostCopyMs(P, {0, 1000, 0}), 20 + 10, 1e-9);
  // They add to the launch's own prediction.
  std::vector<double> Times;
  EXPECT_NEAR(predictPartition(P, B, Times), 0.5 + 33, 1e-9);
}

TEST(Partitioner, TheProgramsCopiesKeepACopyBoundKernelOnTheCpu) {
  // Data from the host at every launch (vecadd on 4x H200's host,
  // the headline run of 2026-11-22): 2 GB in and 1 GB out
  // over 1M blocks. The GPU computes 16x faster but copies at 32 GB/s
  // against the host copy's 85: the CPU alone (25 + 16 + 12 ms) beats the
  // GPU alone (67 + 1 + 33 ms) and any split, since a GPU share's copies
  // come after the CPU's.
  const uint64_t N = 1 << 20;
  PartitionProblem P;
  P.TotalBlocks = N;
  P.Devices = {cpu(N / 16.0, N), gpu("gpu0", N / 1.0, N)};
  programCopies(P.Devices[0], 2048, 1024, 85, true);
  programCopies(P.Devices[1], 2048, 1024, 32, false);
  PartitionDecision D = partition(P);
  EXPECT_EQ(D.BaseDevice, 0u);
  EXPECT_EQ(D.Blocks[0], N);
  EXPECT_NEAR(D.PredictedMs, 16 + 3.0 * 1024 * N / 85e6, 1e-6);
  EXPECT_NE(D.describe(P).find("of which the program's own copies"),
            std::string::npos);
}

TEST(Partitioner, TheProgramsCopiesOverSeveralGpusStartFromTheGpus) {
  // The same kernel with four GPUs, each copying at 20 GB/s while all four
  // do. From the CPU alone no single offload pays (one GPU's copies take
  // longer than the CPU's they replace), but the four GPUs side by side
  // copy the grid in 2 GB / 80 GB/s: the search from the GPUs alone finds
  // it, and the CPU gets nothing.
  const uint64_t N = 1 << 20;
  PartitionProblem P;
  P.TotalBlocks = N;
  P.Devices = {cpu(N / 16.0, N)};
  programCopies(P.Devices[0], 2048, 1024, 85, true);
  for (const char *Name : {"gpu0", "gpu1", "gpu2", "gpu3"}) {
    P.Devices.push_back(gpu(Name, N / 1.0, N));
    programCopies(P.Devices.back(), 2048, 1024, 20, false);
  }
  PartitionDecision D = partition(P);
  EXPECT_EQ(D.BaseDevice, 0u); // the best single device is still the CPU
  EXPECT_EQ(D.Blocks[0], 0u);
  for (size_t G = 1; G <= 4; ++G)
    EXPECT_NEAR(double(D.Blocks[G]), N / 4.0, N * 0.01) << G;
  double Quarter = 3.0 * 1024 * (N / 4) / 20e6;
  EXPECT_NEAR(D.PredictedMs, Quarter + 0.25, Quarter * 0.02);
  EXPECT_LT(D.PredictedMs, D.SingleDeviceMs);
}

TEST(Partitioner, TransferDominatedKernelStaysOnOneDevice) {
  // Data resident on gpu0; any share of gpu1 needs a 1 GB input that every
  // block reads (a fixed footprint, like matmul's B): 20 ms of copying
  // against 4 ms for gpu0 to run the whole grid.
  PartitionProblem P;
  P.TotalBlocks = 2048;
  P.Devices = {gpu("gpu0", 500, 2048), gpu("gpu1", 500, 2048, 1e3, 1e3)};
  P.Devices[1].In.Fixed = 1e9;
  PartitionDecision D = partition(P);
  EXPECT_EQ(D.BaseDevice, 0u);
  EXPECT_EQ(D.Blocks[0], 2048u);
  EXPECT_EQ(D.Blocks[1], 0u);
  EXPECT_EQ(D.Steps, 0u);
  EXPECT_DOUBLE_EQ(D.PredictedMs, D.SingleDeviceMs);
}

TEST(Partitioner, MergeCostKeepsASmallKernelWhole) {
  PartitionProblem P;
  P.TotalBlocks = 1024;
  P.Devices = {gpu("gpu0", 1000, 1024), gpu("gpu1", 1000, 1024)};
  P.NeedsMerge = true;
  P.MergeMs = 0.6; // more than half the kernel (1.024 ms) saves
  PartitionDecision D = partition(P);
  EXPECT_EQ(D.Blocks[D.BaseDevice], 1024u);
  EXPECT_EQ(D.Steps, 0u);
  // A cheaper merge lets it split; the merge is charged once.
  P.MergeMs = 0.1;
  D = partition(P);
  EXPECT_GT(D.Blocks[1 - D.BaseDevice], 0u);
  std::vector<double> Times;
  double T = predictPartition(P, D.Blocks, Times);
  EXPECT_DOUBLE_EQ(T, std::max(Times[0], Times[1]) + 0.1);
  EXPECT_LT(D.PredictedMs, D.SingleDeviceMs);
}

TEST(Partitioner, SmallSharesOfAnInefficientGpuAreSkippedByDoubling) {
  // gpu1 is slow for small shares (SKMD's performance variation): one step
  // of G blocks does not pay, larger trials (2^k G) do.
  PartitionProblem P;
  P.TotalBlocks = 2048;
  P.Granularity = 8;
  DeviceCost G0 = gpu("gpu0", 100, 2048);
  DeviceCost G1 = gpu("gpu1", 100, 2048);
  G1.Perf = PerfTable();
  G1.Perf.set(64, 1.0);   // shares up to 64 blocks: 1 block/ms
  G1.Perf.set(2048, 100); // larger shares: as fast as gpu0
  P.Devices = {G0, G1};
  PartitionDecision D = partition(P);
  EXPECT_GT(D.Blocks[1], 64u);
  EXPECT_LT(D.PredictedMs, D.SingleDeviceMs * 0.6);
}

TEST(Partitioner, ConcurrentLinksShareTheAggregateBandwidth) {
  PartitionProblem P;
  P.TotalBlocks = 4;
  P.Devices = {gpu("gpu0", 1e9, 4, 1e9, 0), gpu("gpu1", 1e9, 4, 1e9, 0)};
  std::vector<double> T;
  // Each GPU alone at 50 GB/s: 1 block = 1 GB = 20 ms.
  double Alone = predictPartition(P, {1, 0}, T);
  EXPECT_NEAR(Alone, 20.0, 1e-3);
  // Both at once, no aggregate limit: still 20 ms each.
  EXPECT_NEAR(predictPartition(P, {1, 1}, T), 20.0, 1e-3);
  // Aggregate 60 GB/s: 30 each, 33.3 ms.
  P.AggregateH2DGBps = 60;
  EXPECT_NEAR(predictPartition(P, {1, 1}, T), 1e9 / 30e6, 1e-3);
  EXPECT_NEAR(T[0], T[1], 1e-9);
  // One link, serialized (SKMD): the second GPU waits for the first's copy.
  P.Links = LinkMode::Serialized;
  EXPECT_NEAR(predictPartition(P, {1, 1}, T), 40.0, 1e-3);
  EXPECT_NEAR(std::min(T[0], T[1]), 20.0, 1e-3);
}

TEST(Partitioner, SerializedOutputsComeBackInFinishingOrder) {
  // gpu0: 2 blocks at 1 block/ms; gpu1: 1 block. Inputs 50 MB per block at
  // 50 GB/s (1 ms each), outputs 100 MB per block (2 ms each).
  PartitionProblem P;
  P.TotalBlocks = 3;
  P.Links = LinkMode::Serialized;
  P.Devices = {gpu("gpu0", 1, 3, 50e6, 100e6), gpu("gpu1", 1, 3, 50e6, 100e6)};
  std::vector<double> T;
  double Total = predictPartition(P, {2, 1}, T);
  // gpu0 fed first: in until 2, kernel until 4. gpu1: in 2..3, kernel
  // until 4. Both finish at 4: gpu0's 4 ms of output until 8, then gpu1's
  // 2 ms until 10.
  EXPECT_NEAR(T[0], 8.0, 1e-9);
  EXPECT_NEAR(T[1], 10.0, 1e-9);
  EXPECT_NEAR(Total, 10.0, 1e-9);
}

TEST(Partitioner, DegenerateProblems) {
  PartitionProblem P;
  EXPECT_TRUE(partition(P).Blocks.empty());
  P.Devices = {gpu("gpu0", 10, 16)};
  PartitionDecision D = partition(P); // no blocks
  EXPECT_EQ(D.Blocks, std::vector<uint64_t>{0});
  P.TotalBlocks = 16;
  D = partition(P);
  EXPECT_EQ(D.Blocks, std::vector<uint64_t>{16});
  // No device can run it: all on device 0, predicted infinite.
  P.Devices[0].Perf = PerfTable();
  D = partition(P);
  EXPECT_EQ(D.Blocks[0], 16u);
  EXPECT_TRUE(std::isinf(D.PredictedMs));
  // A device without a table never gets work.
  P.Devices = {gpu("gpu0", 10, 16), gpu("gpu1", 10, 16)};
  P.Devices[1].Perf = PerfTable();
  D = partition(P);
  EXPECT_EQ(D.Blocks[1], 0u);
  EXPECT_NE(D.describe(P).find("gpu0: 16 blocks"), std::string::npos);
}

} // namespace
