//===- BalancerTest.cpp - The k-device min-makespan balancer --------------===//
//
// Part of Cleave. Synthetic time models only: the balancer is arithmetic.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/scheduler/Balancer.h"

#include "cleave/rt/Launch.h"
#include "cleave/rt/ModelPartitioner.h"

#include "gtest/gtest.h"

#include <cmath>
#include <numeric>

using namespace cleave::rt;

namespace {

BalanceDevice linear(const char *Name, double Fixed, double PerItem,
                     bool Helper = false) {
  BalanceDevice D;
  D.Name = Name;
  D.Fixed = Fixed;
  D.PerItem = PerItem;
  D.Helper = Helper;
  return D;
}

uint64_t total(const BalanceResult &R) {
  return std::accumulate(R.Items.begin(), R.Items.end(), uint64_t(0));
}

/// The best makespan over every integer split of N between two devices.
double bruteForceTwo(const BalanceDevice &A, const BalanceDevice &B,
                     uint64_t N) {
  double Best = INFINITY;
  for (uint64_t X = 0; X <= N; ++X)
    Best = std::min(Best, std::max(A.time(X), B.time(N - X)));
  return Best;
}

TEST(BalancerTest, LinearTwoDevicesMatchClosedForm) {
  // GPU 4x faster than the CPU, no fixed costs: the CPU gets 1/5.
  std::vector<BalanceDevice> Ds = {linear("cpu", 0, 4e-6),
                                   linear("gpu", 0, 1e-6)};
  BalanceOptions Opt;
  Opt.MinHelperGain = 0;
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 1000000, Opt, R).ok());
  EXPECT_TRUE(R.ClosedForm);
  EXPECT_EQ(total(R), 1000000u);
  EXPECT_EQ(R.Items[0], 200000u);
  EXPECT_EQ(R.Items[1], 800000u);
  EXPECT_NEAR(R.BalanceRatio, 1.0, 1e-9);
}

TEST(BalancerTest, FixedCostsShiftTheSplit) {
  // Digest 004 §4.1's closed form for two linear models:
  // x_cpu = (a_g - a_c + b_g n) / (b_c + b_g).
  BalanceDevice Cpu = linear("cpu", 0.001, 3e-6);
  BalanceDevice Gpu = linear("gpu", 0.004, 1e-6);
  uint64_t N = 10000;
  BalanceOptions Opt;
  Opt.MinHelperGain = 0;
  BalanceResult R;
  ASSERT_TRUE(balance({Cpu, Gpu}, N, Opt, R).ok());
  double XCpu = (0.004 - 0.001 + 1e-6 * N) / (3e-6 + 1e-6);
  EXPECT_NEAR(static_cast<double>(R.Items[0]), XCpu, 1.0);
  EXPECT_DOUBLE_EQ(R.Makespan, bruteForceTwo(Cpu, Gpu, N));
}

TEST(BalancerTest, SlowCpuGetsNothing) {
  // The CPU is 100x slower per item: sharing would gain ~1 %, below the
  // default 5 % threshold, so the GPU runs everything.
  std::vector<BalanceDevice> Ds = {linear("cpu", 0, 100e-6, /*Helper=*/true),
                                   linear("gpu", 20e-6, 1e-6)};
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 1 << 20, BalanceOptions(), R).ok());
  EXPECT_EQ(R.Items[0], 0u);
  EXPECT_EQ(R.Items[1], uint64_t(1) << 20);
  EXPECT_TRUE(R.HelpersDropped);
  EXPECT_DOUBLE_EQ(R.Makespan, Ds[1].time(1 << 20));
}

TEST(BalancerTest, SlowCpuWithoutTheRuleGetsItsShare) {
  // The same models with the rule off: the optimum gives the CPU ~1/101.
  std::vector<BalanceDevice> Ds = {linear("cpu", 0, 100e-6, true),
                                   linear("gpu", 0, 1e-6)};
  BalanceOptions Opt;
  Opt.MinHelperGain = 0;
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 101000, Opt, R).ok());
  EXPECT_FALSE(R.HelpersDropped);
  EXPECT_EQ(R.Items[0], 1000u);
  EXPECT_EQ(R.Items[1], 100000u);
}

TEST(BalancerTest, CpuKeptWhenItPays) {
  std::vector<BalanceDevice> Ds = {linear("cpu", 0, 2e-6, true),
                                   linear("gpu", 0, 1e-6)};
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 300000, BalanceOptions(), R).ok());
  EXPECT_FALSE(R.HelpersDropped);
  EXPECT_EQ(R.Items[0], 100000u);
  EXPECT_EQ(R.Items[1], 200000u);
}

TEST(BalancerTest, HelperOverheadCanOutweighTheGain) {
  std::vector<BalanceDevice> Ds = {linear("cpu", 0, 2e-6, true),
                                   linear("gpu", 0, 1e-6)};
  BalanceOptions Opt;
  Opt.MinHelperGain = 0;
  Opt.HelperOverhead = 0.2; // seconds: more than the 0.1 s the CPU saves
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 300000, Opt, R).ok());
  EXPECT_TRUE(R.HelpersDropped);
  EXPECT_EQ(R.Items[0], 0u);
}

TEST(BalancerTest, TransferTermsCount) {
  // Equal compute, but GPU 1's items cross a link costing as much as the
  // compute: it gets a third.
  std::vector<BalanceDevice> Ds = {linear("gpu0", 0, 1e-6),
                                   linear("gpu1", 0, 1e-6)};
  Ds[1].TransferPerItem = 1e-6;
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 30000, BalanceOptions(), R).ok());
  EXPECT_EQ(R.Items[0], 20000u);
  EXPECT_EQ(R.Items[1], 10000u);
}

TEST(BalancerTest, LargeFixedCostLeavesDeviceIdle) {
  // GPU 1's fixed cost exceeds what GPU 0 needs for everything.
  std::vector<BalanceDevice> Ds = {linear("gpu0", 0, 1e-6),
                                   linear("gpu1", 1.0, 1e-9)};
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 1000, BalanceOptions(), R).ok());
  EXPECT_EQ(R.Items[0], 1000u);
  EXPECT_EQ(R.Items[1], 0u);
  EXPECT_NEAR(R.Makespan, 1e-3, 1e-12);
}

TEST(BalancerTest, EightIdenticalGpusSplitEvenly) {
  std::vector<BalanceDevice> Ds;
  for (int I = 0; I < 8; ++I)
    Ds.push_back(linear("gpu", 1e-5, 1e-7));
  BalanceResult R;
  ASSERT_TRUE(balance(Ds, 8001, BalanceOptions(), R).ok());
  EXPECT_EQ(total(R), 8001u);
  for (uint64_t X : R.Items) {
    EXPECT_GE(X, 1000u);
    EXPECT_LE(X, 1001u);
  }
}

TEST(BalancerTest, NonlinearModelsBisectToTheIntegerOptimum) {
  // A GPU that saturates (time grows as sqrt until it is full, then
  // linearly) against a CPU with a quadratic cache penalty.
  BalanceDevice Gpu;
  Gpu.Name = "gpu";
  Gpu.Fixed = 5e-6;
  Gpu.Curve = [](double X) {
    return X < 1e4 ? 1e-6 * std::sqrt(X) * 100 : 1e-2 + (X - 1e4) * 1e-6;
  };
  BalanceDevice Cpu;
  Cpu.Name = "cpu";
  Cpu.Curve = [](double X) { return 3e-6 * X + 1e-11 * X * X; };
  BalanceOptions Opt;
  Opt.MinHelperGain = 0;
  for (uint64_t N : {1u, 17u, 5000u, 40000u}) {
    BalanceResult R;
    ASSERT_TRUE(balance({Cpu, Gpu}, N, Opt, R).ok());
    EXPECT_FALSE(R.ClosedForm);
    EXPECT_EQ(total(R), N);
    EXPECT_NEAR(R.Makespan, bruteForceTwo(Cpu, Gpu, N),
                1e-8 * R.Makespan + 1e-15)
        << "N = " << N;
  }
}

TEST(BalancerTest, ZeroItems) {
  BalanceResult R;
  ASSERT_TRUE(balance({linear("gpu", 1, 1)}, 0, BalanceOptions(), R).ok());
  EXPECT_EQ(R.Items[0], 0u);
  EXPECT_EQ(R.Makespan, 0);
}

TEST(BalancerTest, RejectsBadModels) {
  BalanceResult R;
  EXPECT_FALSE(balance({}, 10, BalanceOptions(), R).ok());
  EXPECT_FALSE(balance({linear("gpu", -1, 1)}, 10, BalanceOptions(), R).ok());
  BalanceDevice D;
  D.Name = "decreasing";
  D.Curve = [](double X) { return 10 - X; };
  Result E = balance({D}, 10, BalanceOptions(), R);
  ASSERT_FALSE(E.ok());
  EXPECT_NE(E.message().find("decreasing"), std::string::npos);
}

/// A device of the partitioner's problem that runs \p BlocksPerMs blocks a
/// millisecond at any share, with \p FixedMs per launch.
DeviceCost costOf(const char *Name, double BlocksPerMs, double FixedMs,
                  bool Host = false) {
  DeviceCost D;
  D.Name = Name;
  for (uint64_t B : {1ull, 1000ull, 1000000ull})
    D.Perf.set(B, BlocksPerMs);
  D.FixedMs = FixedMs;
  D.SharesHost = Host;
  return D;
}

TEST(BalancerTest, OnThePartitionersProblemEqualGpusShareEvenly) {
  PartitionProblem P;
  P.TotalBlocks = 100000;
  P.Devices = {costOf("gpu0", 1000, 0.02), costOf("gpu1", 1000, 0.02)};
  BalancedPartition B;
  ASSERT_TRUE(balancePartition(P, B).ok());
  ASSERT_EQ(B.Decision.Blocks.size(), 2u);
  EXPECT_EQ(B.Decision.Blocks[0] + B.Decision.Blocks[1], P.TotalBlocks);
  EXPECT_NEAR(double(B.Decision.Blocks[0]), 50000, 1000);
  EXPECT_GT(B.EstimatedRatio, 0.98);
  // Its prediction is the partitioner's own for its blocks, and beats
  // either GPU alone.
  std::vector<double> Times;
  EXPECT_DOUBLE_EQ(B.Decision.PredictedMs,
                   predictPartition(P, B.Decision.Blocks, Times));
  EXPECT_LT(B.Decision.PredictedMs, 0.6 * B.Decision.SingleDeviceMs);
  // The greedy search finds much the same here.
  PartitionDecision G = partition(P);
  EXPECT_NEAR(B.Decision.PredictedMs, G.PredictedMs, 0.02 * G.PredictedMs);
}

TEST(BalancerTest, OnThePartitionersProblemASlowCpuGetsNothing) {
  PartitionProblem P;
  P.TotalBlocks = 100000;
  P.MinDeviceGain = 0.10;
  P.Devices = {costOf("cpu0", 10, 0.01, /*Host=*/true),
               costOf("gpu0", 1000, 0.02)};
  BalancedPartition B;
  ASSERT_TRUE(balancePartition(P, B).ok());
  EXPECT_EQ(B.Decision.Blocks[0], 0u);
  EXPECT_EQ(B.Decision.Blocks[1], P.TotalBlocks);
  EXPECT_EQ(B.Decision.BaseDevice, 1u);
}

/// A model-policy request over two H200-like GPUs holding their data.
SplitRequest twoGpus(bool Irregular) {
  SplitRequest R;
  R.Key.Kernel = Irregular ? "irregular@1" : "regular@1";
  R.Key.Block[0] = 256;
  R.TotalBlocks = 1 << 16;
  R.Key.GridClass = gridClass(R.TotalBlocks);
  R.BytesPerBlock = 4096;
  for (const char *Name : {"gpu0", "gpu1"}) {
    SplitDevice D;
    D.Name = Name;
    D.Identity = "test GPU";
    D.Gpu = true;
    D.Wave = 132 * 8;
    D.SeedGBps = 4000;
    D.SeedMinWaveMs = 0.002;
    D.FixedMs = 0.06;
    D.LinkGBps = 10;
    R.Devices.push_back(D);
  }
  R.Irregular = Irregular;
  return R;
}

TEST(BalancerTest, TheModelPolicyConsultsItForIrregularWorkOnly) {
  ModelPartitioner P(DeviceProfile(), "");
  SplitResult Res = P.split(twoGpus(true));
  ASSERT_TRUE(Res.BalancerTried);
  EXPECT_TRUE(Res.BalancerWhy.empty()) << Res.BalancerWhy;
  EXPECT_GT(Res.BalancerMs, 0);
  EXPECT_GT(Res.EstimatedBalance, 0.9);
  // The faster of the two is what the search decided.
  EXPECT_LE(Res.Decision.PredictedMs,
            std::min(Res.BalancerMs, Res.GreedyMs) * (1 + 1e-9));
  EXPECT_EQ(Res.BalancerKept, Res.BalancerMs < Res.GreedyMs);
  std::string Plan = Res.describe(twoGpus(true));
  EXPECT_NE(Plan.find("balancer (irregular work): predicted"),
            std::string::npos)
      << Plan;
  SplitResult Regular = P.split(twoGpus(false));
  EXPECT_FALSE(Regular.BalancerTried);
  EXPECT_EQ(Regular.describe(twoGpus(false)).find("balancer"),
            std::string::npos);
}

TEST(BalancerTest, ThePlanGivesTheActualBalanceRatioOfTimedRuns) {
  LaunchPlan P;
  P.KernelName = "k";
  P.MeasuredMs = {1.5};
  EXPECT_EQ(P.describe().find("actual balance ratio"), std::string::npos);
  P.MeasuredMs = {2.0, 1.5, 3.0};
  EXPECT_NE(P.describe().find("  actual balance ratio 0.500 (1.500 / 3.000 ms)"),
            std::string::npos)
      << P.describe();
}

} // namespace

//===----------------------------------------------------------------------===//
// Routing the sorted order (digest 004 §9.6)
//===----------------------------------------------------------------------===//

namespace {

/// Counts of \p N threads with a wide spread: mostly short, a few long.
std::vector<int32_t> spreadCounts(uint64_t N, unsigned Seed) {
  std::vector<int32_t> C(N);
  uint32_t X = Seed * 2654435761u + 1;
  for (int32_t &V : C) {
    X = X * 1664525u + 1013904223u;
    V = (X >> 24) < 16 ? int32_t(200 + (X >> 8) % 800)
                       : int32_t(1 + (X >> 8) % 8);
  }
  return C;
}

/// Largest count first, ties in thread order (as sortByTripCount).
std::vector<int32_t> sortedOrder(const std::vector<int32_t> &C) {
  std::vector<int32_t> P(C.size());
  std::iota(P.begin(), P.end(), 0);
  std::stable_sort(P.begin(), P.end(),
                   [&](int32_t A, int32_t B) { return C[A] > C[B]; });
  return P;
}

RouteDevice routeDevice(const char *Name, double Fixed, double PerWork,
                        unsigned Lanes, const std::vector<double> &Prefix,
                        bool Helper = false) {
  RouteDevice D;
  D.Name = Name;
  D.Fixed = Fixed;
  D.PerWork = PerWork;
  D.Lanes = Lanes;
  D.Prefix = &Prefix;
  D.Helper = Helper;
  return D;
}

/// The best makespan over every cut of the order between two devices, each
/// taking either end.
double bruteForceRoute(const RouteDevice &A, const RouteDevice &B,
                       uint64_t Blocks) {
  auto T = [&](const RouteDevice &D, uint64_t F, uint64_t C) {
    return C ? D.Fixed + D.PerWork * ((*D.Prefix)[F + C] - (*D.Prefix)[F])
             : 0.0;
  };
  double Best = INFINITY;
  for (uint64_t K = 0; K <= Blocks; ++K) {
    Best = std::min(Best, std::max(T(A, 0, K), T(B, K, Blocks - K)));
    Best = std::min(Best, std::max(T(B, 0, K), T(A, K, Blocks - K)));
  }
  return Best;
}

} // namespace

TEST(BalancerTest, TheWorkPrefixIsTheWarpMaximaInSortedOrder) {
  std::vector<int32_t> C = {1, 9, 2, 3, 7, 4, 5, 6};
  std::vector<int32_t> P = sortedOrder(C); // 9 7 6 5 4 3 2 1
  // Blocks of 4 threads, lanes of 2: block 0 = {9,7},{6,5}; block 1 =
  // {4,3},{2,1}.
  std::vector<double> W = sortedWorkPrefix(C.data(), P.data(), 8, 4, 2);
  ASSERT_EQ(W.size(), 3u);
  EXPECT_EQ(W[1], 9 + 6);
  EXPECT_EQ(W[2], 9 + 6 + 4 + 2);
  // One lane: the counts' sums; launch order without a permutation.
  std::vector<double> L = sortedWorkPrefix(C.data(), nullptr, 8, 4, 1);
  EXPECT_EQ(L[1], 1 + 9 + 2 + 3);
  EXPECT_EQ(L[2], 37);
}

TEST(BalancerTest, TheRouteMatchesEveryCutOfTheSortedOrder) {
  for (unsigned Seed = 1; Seed <= 6; ++Seed) {
    uint64_t Threads = 64 * 40;
    std::vector<int32_t> C = spreadCounts(Threads, Seed);
    std::vector<int32_t> P = sortedOrder(C);
    std::vector<double> Gpu =
        sortedWorkPrefix(C.data(), P.data(), Threads, 64, 32);
    std::vector<double> Cpu =
        sortedWorkPrefix(C.data(), P.data(), Threads, 64, 1);
    RouteDevice G = routeDevice("gpu0", 0.01 * Seed, 1e-4, 32, Gpu);
    RouteDevice H = routeDevice("cpu0", 0.02, 2e-5 * Seed, 1, Cpu);
    RouteResult R;
    ASSERT_TRUE(routeSorted({G, H}, 40, BalanceOptions(), R).ok());
    EXPECT_EQ(R.Count[0] + R.Count[1], 40u);
    // The two ranges tile the order.
    EXPECT_TRUE(R.First[0] + R.Count[0] == R.First[1] ||
                R.First[1] + R.Count[1] == R.First[0] || !R.Count[0] ||
                !R.Count[1]);
    EXPECT_NEAR(R.Makespan, bruteForceRoute(G, H, 40), 1e-9) << Seed;
  }
}

TEST(BalancerTest, ARoutedCpu100xSlowerGetsNothing) {
  uint64_t Threads = 128 * 64;
  std::vector<int32_t> C = spreadCounts(Threads, 3);
  std::vector<int32_t> P = sortedOrder(C);
  std::vector<double> Gpu =
      sortedWorkPrefix(C.data(), P.data(), Threads, 128, 32);
  std::vector<double> Cpu =
      sortedWorkPrefix(C.data(), P.data(), Threads, 128, 1);
  // Per item the CPU is 100x slower than the GPU's lanes.
  double GpuPerWork = 1e-4, CpuPerWork = 100 * GpuPerWork / 32;
  RouteResult R;
  ASSERT_TRUE(routeSorted({routeDevice("gpu0", 0.01, GpuPerWork, 32, Gpu),
                           routeDevice("cpu0", 0.01, CpuPerWork, 1, Cpu, true)},
                          64, BalanceOptions(), R)
                  .ok());
  EXPECT_EQ(R.Count[0], 64u);
  EXPECT_EQ(R.Count[1], 0u);
}

TEST(BalancerTest,
     RoutingTheSortedOrderBeatsContiguousRangesWhereWarpsDiverge) {
  // Two equal GPUs: the split of the original order leaves each warp with a
  // long lane; the sorted order's ranges run even warps.
  uint64_t Threads = 128 * 64;
  std::vector<int32_t> C = spreadCounts(Threads, 5);
  std::vector<int32_t> P = sortedOrder(C);
  std::vector<double> Sorted =
      sortedWorkPrefix(C.data(), P.data(), Threads, 128, 32);
  std::vector<double> Launch =
      sortedWorkPrefix(C.data(), nullptr, Threads, 128, 32);
  RouteResult Routed, Contiguous;
  ASSERT_TRUE(routeSorted({routeDevice("gpu0", 0.01, 1e-4, 32, Sorted),
                           routeDevice("gpu1", 0.01, 1e-4, 32, Sorted)},
                          64, BalanceOptions(), Routed)
                  .ok());
  ASSERT_TRUE(routeSorted({routeDevice("gpu0", 0.01, 1e-4, 32, Launch),
                           routeDevice("gpu1", 0.01, 1e-4, 32, Launch)},
                          64, BalanceOptions(), Contiguous)
                  .ok());
  EXPECT_GT(Routed.Count[0], 0u);
  EXPECT_GT(Routed.Count[1], 0u);
  EXPECT_LT(Routed.Makespan, 0.5 * Contiguous.Makespan);
}

TEST(BalancerTest, TheRouteRejectsAMissingPrefix) {
  RouteDevice D;
  D.Name = "gpu0";
  RouteResult R;
  EXPECT_FALSE(routeSorted({D}, 4, BalanceOptions(), R).ok());
  std::vector<double> Short = {0, 1};
  EXPECT_FALSE(routeSorted({routeDevice("gpu0", 0, 1, 32, Short)}, 4,
                           BalanceOptions(), R)
                   .ok());
}
