//===- HopperModelTest.cpp - cleave analyze's models on hand-computed cases -===//
//
// Occupancy limits, Luo's periods from an instruction stream, the L2 rule,
// and both models on a vecadd-like launch whose every number is worked out
// by hand in the comments (docs/analyze.md).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/HopperModel.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace cleave::rt;
using namespace cleave::rt::model;

namespace {

GpuParams h100() {
  GpuParams G;
  G.Name = "test H100";
  G.Sms = 132;
  G.ClockMHz = 1980;
  G.MaxWarpsPerSm = 64;
  G.MaxBlocksPerSm = 32;
  G.MaxThreadsPerSm = 2048;
  G.MaxThreadsPerBlock = 1024;
  G.RegistersPerSm = 65536;
  G.SharedPerSm = 233472;
  G.SharedPerBlockMax = 232448;
  G.SharedReservedPerBlock = 1024;
  G.DramGBps = 3000;
  G.L2GBps = 7400;
  G.L2Bytes = 50u << 20;
  G.LatencyL2 = 276;
  G.LatencyDram = 685;
  G.LaunchUs = 5.7;
  for (double &L : G.Latency)
    L = 6;
  G.Latency[unsigned(OpClass::Fp32)] = 4;
  G.Issue = hopperIssueCosts();
  G.Cpd = luo::CpdFit(); // GTX 260's a = 3, b = 11, c = 0.5, d = 80, m = 32
  return G;
}

/// vecadd with 4096 blocks of 256 threads: per warp 2 special-register
/// reads (other), 10 integer instructions, a branch, two 4-byte loads, an
/// add and a store; each request touches 4 sectors in 1 segment.
LaunchStats vecadd() {
  LaunchStats S;
  S.Blocks = 4096;
  S.ThreadsPerBlock = 256;
  S.Count[unsigned(OpClass::Other)] = 2;
  S.Count[unsigned(OpClass::Int)] = 10;
  S.Count[unsigned(OpClass::Branch)] = 1;
  S.Count[unsigned(OpClass::GlobalLoad)] = 2;
  S.Count[unsigned(OpClass::Fp32)] = 1;
  S.Count[unsigned(OpClass::GlobalStore)] = 1;
  S.Requests = 3;
  S.LanesPerRequest = 32;
  S.BytesPerLane = 4;
  S.SectorsPerRequest = 4;
  S.SegmentsPerRequest = 1;
  S.Stream = {OpClass::Other, OpClass::Other};
  for (int I = 0; I < 10; ++I)
    S.Stream.push_back(OpClass::Int);
  S.Stream.insert(S.Stream.end(),
                  {OpClass::Branch, OpClass::GlobalLoad, OpClass::GlobalLoad,
                   OpClass::Fp32, OpClass::GlobalStore});
  S.BlockDistinctBytes = 3 * 1024;
  S.FootprintBytes = 3.0 * 4096 * 256 * 4; // a, b, c: 12 MiB
  return S;
}

TEST(HopperModelTest, OccupancyLimiters) {
  GpuParams G = h100();
  // 16 registers: 512 per warp, 128 warps -> 16 blocks; threads allow 8.
  Occupancy O = occupancy(G, {16, 0, 0}, 256);
  EXPECT_EQ(O.BlocksPerSm, 8u);
  EXPECT_EQ(O.WarpsPerSm, 64u);
  EXPECT_EQ(O.ByRegisters, 16u);
  EXPECT_EQ(O.Limit, Limiter::Threads);
  EXPECT_DOUBLE_EQ(O.Fraction, 1.0);
  // 128 registers: 4096 per warp, 16 warps -> 2 blocks of 8 warps.
  O = occupancy(G, {128, 0, 0}, 256);
  EXPECT_EQ(O.BlocksPerSm, 2u);
  EXPECT_EQ(O.Limit, Limiter::Registers);
  EXPECT_DOUBLE_EQ(O.Fraction, 0.25);
  // 33 registers round up to 40 per thread (1280 per warp): 51 warps, 12
  // blocks of 4 warps.
  O = occupancy(G, {33, 0, 0}, 128);
  EXPECT_EQ(O.ByRegisters, 12u);
  // 48 KiB static shared + 1 KiB reserved: 233472 / 50176 -> 4 blocks.
  O = occupancy(G, {32, 49152, 0}, 128);
  EXPECT_EQ(O.BySharedMemory, 4u);
  EXPECT_EQ(O.BlocksPerSm, 4u);
  EXPECT_EQ(O.Limit, Limiter::SharedMemory);
  // Dynamic shared counts the same: 20000 + 4000 + 1024 -> 25088 -> 9.
  O = occupancy(G, {32, 20000, 4000}, 128);
  EXPECT_EQ(O.BySharedMemory, 9u);
  // One warp per block: the 32-block limit.
  O = occupancy(G, {8, 0, 0}, 32);
  EXPECT_EQ(O.BlocksPerSm, 32u);
  EXPECT_EQ(O.Limit, Limiter::Blocks);
  // 255 registers x 1024 threads: 8192 per warp, 8 warps < 32: none fits.
  O = occupancy(G, {255, 0, 0}, 1024);
  EXPECT_EQ(O.BlocksPerSm, 0u);
  EXPECT_NE(O.Error.find("registers"), std::string::npos);
  // More shared memory than a block may have.
  O = occupancy(G, {32, 240000, 0}, 128);
  EXPECT_EQ(O.BlocksPerSm, 0u);
  EXPECT_NE(O.Error.find("shared memory"), std::string::npos);
}

TEST(HopperModelTest, PeriodsOfAStream) {
  ClassArray Cost{};
  Cost[unsigned(OpClass::Int)] = 6;
  Cost[unsigned(OpClass::Fp32)] = 4;
  auto Task = [](unsigned L, unsigned S, const void *) {
    return 100.0 * L + 10.0 * S;
  };
  // int int ld ld fp32 st int: (12, 200) (4, 10) (6, 0)
  std::vector<OpClass> Stream = {
      OpClass::Int,  OpClass::Int,         OpClass::GlobalLoad,
      OpClass::GlobalLoad, OpClass::Fp32, OpClass::GlobalStore,
      OpClass::Int};
  std::vector<luo::Period> P = periodsOf(Stream, Cost, Task, nullptr);
  ASSERT_EQ(P.size(), 3u);
  EXPECT_DOUBLE_EQ(P[0].Compute, 12);
  EXPECT_DOUBLE_EQ(P[0].Memory, 200);
  EXPECT_DOUBLE_EQ(P[1].Compute, 4);
  EXPECT_DOUBLE_EQ(P[1].Memory, 10);
  EXPECT_DOUBLE_EQ(P[2].Compute, 6);
  EXPECT_DOUBLE_EQ(P[2].Memory, 0);
  // A stream that starts with memory: a period without computation.
  P = periodsOf({OpClass::GlobalLoad, OpClass::Fp32}, Cost, Task, nullptr);
  ASSERT_EQ(P.size(), 2u);
  EXPECT_DOUBLE_EQ(P[0].Compute, 0);
  EXPECT_DOUBLE_EQ(P[0].Memory, 100);
  EXPECT_TRUE(periodsOf({}, Cost, Task, nullptr).empty());
}

TEST(HopperModelTest, L2Rule) {
  // The footprint fits in L2: each byte once from DRAM.
  EXPECT_DOUBLE_EQ(dramBytes(1000, 100, 100, 400, 1000), 400);
  // It does not: every block's distinct bytes.
  EXPECT_DOUBLE_EQ(dramBytes(100000, 300, 100, 20000, 1000), 30000);
  // Never more than requested, never less than the footprint.
  EXPECT_DOUBLE_EQ(dramBytes(10000, 300, 100, 20000, 1000), 10000);
  EXPECT_DOUBLE_EQ(dramBytes(100000, 100, 100, 20000, 1000), 20000);
}

TEST(HopperModelTest, HopperVecadd) {
  GpuParams G = h100();
  LaunchStats S = vecadd();
  Prediction P = predictHopper(G, S, {16, 0, 0});
  // 8 blocks per SM (threads); busiest SM: ceil(4096 / 132) = 32 blocks;
  // N_act = min(8, 32) x 8 warps; waves ceil(4096 / 1056) = 4.
  EXPECT_EQ(P.Occ.BlocksPerSm, 8u);
  EXPECT_DOUBLE_EQ(P.NAct, 64);
  EXPECT_EQ(P.Waves, 4u);
  // Issue per warp: 10x2 + 1x1 + 2x4 + 1x4 + 1x2 + 2x1 = 37 clocks;
  // 32 blocks x 8 warps x 37 / 4 sub-partitions = 2368 clocks.
  EXPECT_NEAR(P.ComputeSeconds, 2368 / 1.98e9, 1e-15);
  // 4096 x 8 x 3 requests x 4 sectors x 32 B = 12582912 B, all from DRAM
  // (the 12 MiB footprint fits in L2 and is read once).
  EXPECT_DOUBLE_EQ(P.RequestedBytes, 12582912);
  EXPECT_DOUBLE_EQ(P.DramBytes, 12582912);
  EXPECT_DOUBLE_EQ(P.L2HitBytes, 0);
  EXPECT_NEAR(P.MemorySeconds, 12582912 / 3000e9, 1e-15);
  // Latency path: (2x6 + 10x6 + 6 = 78, 685 + 2x4 = 693), (4, 0 + 4):
  // 779 clocks per wave, 4 waves.
  EXPECT_EQ(P.PeriodCount[1], 1u); // type 2: c < m after a compute period
  EXPECT_EQ(P.PeriodCount[2], 1u); // type 3: c >= m after a memory period
  EXPECT_DOUBLE_EQ(P.PeriodCycles[1], 771);
  EXPECT_DOUBLE_EQ(P.PeriodCycles[2], 8);
  EXPECT_DOUBLE_EQ(P.ComputeCycles, 82);
  EXPECT_DOUBLE_EQ(P.MemoryCycles, 697);
  EXPECT_NEAR(P.LatencySeconds, 4 * 779 / 1.98e9, 1e-15);
  // Memory bound (4.19 us), below the 5.7 us launch: bottleneck launch.
  EXPECT_NEAR(P.KernelSeconds, P.MemorySeconds, 1e-18);
  EXPECT_NEAR(P.Seconds, P.MemorySeconds + 5.7e-6, 1e-15);
  EXPECT_EQ(P.Bound, Bottleneck::Launch);
  // A cheaper launch leaves memory as the bottleneck.
  G.LaunchUs = 1;
  EXPECT_EQ(predictHopper(G, S, {16, 0, 0}).Bound, Bottleneck::Memory);
  // Latency bound: one block per SM of one warp that waits on DRAM.
  LaunchStats One = S;
  One.Blocks = 132;
  One.ThreadsPerBlock = 32;
  One.FootprintBytes = 132 * 3 * 128;
  One.BlockDistinctBytes = 3 * 128;
  Prediction L = predictHopper(G, One, {16, 0, 0});
  EXPECT_EQ(L.Waves, 1u);
  EXPECT_NEAR(L.LatencySeconds, 779 / 1.98e9, 1e-15);
  EXPECT_EQ(L.Bound, Bottleneck::Launch); // 0.39 us < 1 us launch
  G.LaunchUs = 0.1;
  EXPECT_EQ(predictHopper(G, One, {16, 0, 0}).Bound, Bottleneck::Latency);
  // Too many registers: refused, not guessed.
  LaunchStats Big = S;
  Big.ThreadsPerBlock = 1024;
  Prediction R = predictHopper(G, Big, {255, 0, 0});
  EXPECT_EQ(R.Occ.BlocksPerSm, 0u);
  EXPECT_TRUE(std::isnan(R.Seconds));
}

TEST(HopperModelTest, HopperL2HitsShortenTheLatency) {
  GpuParams G = h100();
  LaunchStats S = vecadd();
  // A 3 MiB footprint beyond a 2 MiB L2, each block re-reading its 768
  // distinct bytes four times: DRAM = 4096 x 768 B = a quarter of the
  // requests.
  G.L2Bytes = 2u << 20;
  S.FootprintBytes = 3145728;
  S.BlockDistinctBytes = 768;
  Prediction P = predictHopper(G, S, {16, 0, 0});
  EXPECT_DOUBLE_EQ(P.DramBytes, 12582912 / 4.0);
  EXPECT_DOUBLE_EQ(P.L2HitBytes, 12582912 * 0.75);
  // The memory task waits 0.75 x 276 + 0.25 x 685 = 378.25 clocks.
  EXPECT_DOUBLE_EQ(P.MemoryCycles, 378.25 + 8 + 4);
  // L2 bandwidth now bounds the traffic time.
  EXPECT_NEAR(P.MemorySeconds, 12582912 / 7400e9, 1e-15);
}

TEST(HopperModelTest, PaperVecaddAsPrinted) {
  GpuParams G = h100();
  LaunchStats S = vecadd();
  Prediction P = predictPaper(G, S, {16, 0, 0}, luo::Corrections::paper());
  // N_act = the block's 8 warps. Periods with t_mem = 685 per ld/st:
  // (78, 1370), (4, 685); P = 82 / 2137.
  EXPECT_DOUBLE_EQ(P.NAct, 8);
  EXPECT_NEAR(P.P, 82.0 / 2137.0, 1e-12);
  // CPD = min(CPD1, CPD2) = (0.5 - P)(8 - 11) + 3 = 1.6151...
  EXPECT_NEAR(P.Cpd, (0.5 - 82.0 / 2137.0) * (8 - 11) + 3, 1e-12);
  // (3.1) Warp_bwt = 32 x 4 / (1 x 685); (3.2) as printed:
  // floor(1515.15 / (8 x 132 x 0.18686)) = floor(7.68) = 7.
  EXPECT_NEAR(P.WarpBandwidth, 128.0 / 685, 1e-12);
  EXPECT_DOUBLE_EQ(P.Mpd, 7);
  // T_1 (type 2) = ceil(8 x 78 / CPD) + (1370 - 7 x 78) = 387 + 824;
  // T_2 (type 4: the store costs t_mem too) = ceil(8 x 4 / CPD) + T_p + T_c
  // = 20 + max(1370 floor(8/7 - 1) - 28, 0) + (685 - (7 x 4 + 0))
  // = 20 + 0 + 657. One block on one SM: 1888 clocks.
  EXPECT_DOUBLE_EQ(P.PeriodCycles[1], 1211);
  EXPECT_DOUBLE_EQ(P.PeriodCycles[3], 677);
  EXPECT_DOUBLE_EQ(P.BlockCycles, 1888);
  EXPECT_NEAR(P.Seconds, 1888 / 1.98e9, 1e-15);
  EXPECT_EQ(P.Bound, Bottleneck::Memory);
  // Waves as the thesis's one block per SM: ceil(4096 / 132) = 32.
  luo::Corrections C = luo::Corrections::paper();
  C.Waves = true;
  Prediction W = predictPaper(G, S, {16, 0, 0}, C);
  EXPECT_EQ(W.Waves, 32u);
  EXPECT_NEAR(W.Seconds, 32 * 1888 / 1.98e9, 1e-15);
  // Every correction: N_act = 64 resident warps, 4 waves, launch added;
  // MPD with one division: min(64, floor(1515.15 / (132 x 0.18686))) = 61.
  Prediction F = predictPaper(G, S, {16, 0, 0}, luo::Corrections::fixed());
  EXPECT_DOUBLE_EQ(F.NAct, 64);
  EXPECT_EQ(F.Waves, 4u);
  EXPECT_DOUBLE_EQ(F.Mpd, 61);
  EXPECT_NEAR(F.Seconds, F.KernelSeconds + 5.7e-6, 1e-15);
  EXPECT_NEAR(F.KernelSeconds, 4 * F.BlockCycles / 1.98e9, 1e-15);
}

TEST(HopperModelTest, PaperMpdZeroIsReported) {
  // (3.2) as printed falls to 0 with many warps: T_p becomes infinite and
  // the model says so instead of dividing quietly.
  GpuParams G = h100();
  G.DramGBps = 300; // 151.5 B/clk
  LaunchStats S = vecadd();
  S.ThreadsPerBlock = 1024; // 32 warps: 151.5 / (32 x 132 x 0.187) < 1
  Prediction P = predictPaper(G, S, {16, 0, 0}, luo::Corrections::paper());
  EXPECT_DOUBLE_EQ(P.Mpd, 0);
  bool Said = false;
  for (const std::string &N : P.Notes)
    Said |= N.find("MPD = 0") != std::string::npos;
  EXPECT_TRUE(Said);
  // T_p = m floor(N_act / 0 - 1) is infinite and (3.14)'s T_c minus it:
  // no finite time, as printed.
  EXPECT_FALSE(std::isfinite(P.Seconds));
  luo::Corrections C = luo::Corrections::paper();
  C.MpdSingleDivision = true;
  EXPECT_GE(predictPaper(G, S, {16, 0, 0}, C).Mpd, 1);
}

TEST(HopperModelTest, ClassNamesRoundTrip) {
  for (unsigned I = 0; I < NumOpClasses; ++I) {
    OpClass C;
    ASSERT_TRUE(opClassByName(opClassName(OpClass(I)), C));
    EXPECT_EQ(unsigned(C), I);
  }
  OpClass C;
  EXPECT_FALSE(opClassByName("fp16", C));
  EXPECT_TRUE(isMemoryOp(OpClass::GlobalLoad));
  EXPECT_FALSE(isMemoryOp(OpClass::SharedLoad));
}

} // namespace
