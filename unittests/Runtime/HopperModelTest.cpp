//===- HopperModelTest.cpp - cleave analyze's models on hand-computed cases -===//
//
// Occupancy limits, Luo's periods from an instruction stream, the L2 rule,
// the hopper model's terms one by one (in-order path with dependences,
// pipes and dispatch, DRAM reads and writes, store packets, L1 reuse, the
// exposed latency of each wave) and both models on a vecadd-like launch
// whose every number is worked out by hand in the comments
// (docs/models.md).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/HopperModel.h"
#include "cleave/rt/Tpsm.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace cleave::rt;
using namespace cleave::rt::model;
using cleave::InstrClass;
using cleave::NumInstrClasses;

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
  G.Latency[unsigned(InstrClass::Fp32)] = 4;
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
  S.Count[unsigned(InstrClass::Other)] = 2;
  S.Count[unsigned(InstrClass::Int)] = 10;
  S.Count[unsigned(InstrClass::Branch)] = 1;
  S.Count[unsigned(InstrClass::GlobalLoad)] = 2;
  S.Count[unsigned(InstrClass::Fp32)] = 1;
  S.Count[unsigned(InstrClass::GlobalStore)] = 1;
  S.Requests = 3;
  S.LanesPerRequest = 32;
  S.BytesPerLane = 4;
  S.SectorsPerRequest = 4;
  S.SegmentsPerRequest = 1;
  S.Stream = {InstrClass::Other, InstrClass::Other};
  for (int I = 0; I < 10; ++I)
    S.Stream.push_back(InstrClass::Int);
  S.Stream.insert(S.Stream.end(), {InstrClass::Branch, InstrClass::GlobalLoad,
                                   InstrClass::GlobalLoad, InstrClass::Fp32,
                                   InstrClass::GlobalStore});
  S.BlockDistinctBytes = 3 * 1024;
  S.FootprintBytes = 3.0 * 4096 * 256 * 4; // a, b, c: 12 MiB
  S.StoreRequests = 1;
  S.StoreSectors = 4;
  S.StoreSegments = 1;
  S.LoadSegments = 2;
  return S;
}

/// vecadd's data dependences (positions in its Stream): the first int uses
/// both special registers, the ints form a chain (the index), the branch
/// and both loads use the last int, the add both loads, the store the
/// address and the add.
void vecaddDeps(LaunchStats &S) {
  std::vector<std::vector<uint32_t>> D(S.Stream.size());
  D[2] = {0, 1};
  for (uint32_t I = 3; I <= 11; ++I)
    D[I] = {I - 1};
  D[12] = D[13] = D[14] = {11};
  D[15] = {13, 14};
  D[16] = {11, 15};
  S.DepBegin = {0};
  for (const std::vector<uint32_t> &E : D) {
    S.Deps.insert(S.Deps.end(), E.begin(), E.end());
    S.DepBegin.push_back(uint32_t(S.Deps.size()));
  }
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
  Cost[unsigned(InstrClass::Int)] = 6;
  Cost[unsigned(InstrClass::Fp32)] = 4;
  auto Task = [](unsigned L, unsigned S, const void *) {
    return 100.0 * L + 10.0 * S;
  };
  // int int ld ld fp32 st int: (12, 200) (4, 10) (6, 0)
  std::vector<InstrClass> Stream = {
      InstrClass::Int,        InstrClass::Int,  InstrClass::GlobalLoad,
      InstrClass::GlobalLoad, InstrClass::Fp32, InstrClass::GlobalStore,
      InstrClass::Int};
  std::vector<luo::Period> P = periodsOf(Stream, Cost, Task, nullptr);
  ASSERT_EQ(P.size(), 3u);
  EXPECT_DOUBLE_EQ(P[0].Compute, 12);
  EXPECT_DOUBLE_EQ(P[0].Memory, 200);
  EXPECT_DOUBLE_EQ(P[1].Compute, 4);
  EXPECT_DOUBLE_EQ(P[1].Memory, 10);
  EXPECT_DOUBLE_EQ(P[2].Compute, 6);
  EXPECT_DOUBLE_EQ(P[2].Memory, 0);
  // A stream that starts with memory: a period without computation.
  P = periodsOf({InstrClass::GlobalLoad, InstrClass::Fp32}, Cost, Task,
                nullptr);
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

TEST(HopperModelTest, DependentPathInOrder) {
  GpuParams G = h100();
  LaunchStats S = vecadd();
  vecaddDeps(S);
  // In order, one clock apart, each waiting for what it uses: the special
  // registers at 0 and 1 (ready at 6, 7); the int chain at 7, 13, ..., 61
  // (ready 67); the branch at 67; the loads at 68 and 69 (one round: the
  // second issues before the first's data is back), ready at 753 and 754;
  // the add at 754 (ready 758); the store at 758. 759 clocks.
  double Issued = 0, Rounds = 0;
  EXPECT_DOUBLE_EQ(dependentPath(G, S, 685, &Issued, &Rounds), 759);
  EXPECT_DOUBLE_EQ(Issued, 17);
  EXPECT_DOUBLE_EQ(Rounds, 1);
  // Without dependences every instruction waits for the one before: 13 x
  // 6 = 78 to the branch, the loads one after the other (two rounds, ready
  // at 763 and 1448), the add (1452), the store issued at 1452: 1453.
  LaunchStats Chain = vecadd();
  EXPECT_DOUBLE_EQ(dependentPath(G, Chain, 685, nullptr, &Rounds), 1453);
  EXPECT_DOUBLE_EQ(Rounds, 2);
  // A trace cut short scales: twice the instructions, twice the path.
  S.StreamScale = 2;
  EXPECT_DOUBLE_EQ(dependentPath(G, S, 685, &Issued, &Rounds), 1518);
  EXPECT_DOUBLE_EQ(Issued, 34);
  EXPECT_DOUBLE_EQ(Rounds, 2);
  // A load whose address is the data of the load before it: two rounds.
  LaunchStats P;
  P.Stream = {InstrClass::GlobalLoad, InstrClass::GlobalLoad, InstrClass::Fp32};
  P.DepBegin = {0, 0, 1, 2};
  P.Deps = {0, 1};
  EXPECT_DOUBLE_EQ(dependentPath(G, P, 100, nullptr, &Rounds), 204);
  EXPECT_DOUBLE_EQ(Rounds, 2);
  EXPECT_DOUBLE_EQ(dependentPath(G, LaunchStats(), 100), 0);
}

TEST(HopperModelTest, DramReadsAndWrites) {
  GpuParams G = h100();
  // No copy bandwidth: writes at the read bandwidth.
  EXPECT_NEAR(dramSeconds(G, 3e9, 2e9), 5e9 / 3000e9, 1e-15);
  // A copy at 2400 GB/s (read + written) with reads at 3000: 1 / write =
  // 2 / 2400 - 1 / 3000 = 1 / 2000.
  G.DramCopyGBps = 2400;
  EXPECT_NEAR(dramSeconds(G, 3e9, 2e9), 1e-3 + 1e-3, 1e-15);
  EXPECT_NEAR(dramSeconds(G, 0, 2e9), 1e-3, 1e-15);
  // A copy at least twice the read bandwidth implies no write limit: the
  // read bandwidth is used.
  G.DramCopyGBps = 6000;
  EXPECT_NEAR(dramSeconds(G, 3e9, 2e9), 5e9 / 3000e9, 1e-15);
}

TEST(HopperModelTest, PipesAndDispatch) {
  GpuParams G = h100();
  EXPECT_EQ(pipeOf(InstrClass::Fp32), Pipe::Fma);
  EXPECT_EQ(pipeOf(InstrClass::Int), Pipe::Alu);
  EXPECT_EQ(pipeOf(InstrClass::Fp64), Pipe::Fp64);
  EXPECT_EQ(pipeOf(InstrClass::Sfu), Pipe::Xu);
  EXPECT_EQ(pipeOf(InstrClass::SharedLoad), Pipe::Mio);
  // 132 blocks of one warp: one warp per SM, 1 / 4 of the per-warp
  // cycles. 400 fp32 + 100 int: FMA 400, ALU 200, dispatch 500: dispatch.
  LaunchStats S;
  S.Blocks = 132;
  S.ThreadsPerBlock = 32;
  S.Count[unsigned(InstrClass::Fp32)] = 400;
  S.Count[unsigned(InstrClass::Int)] = 100;
  Prediction P = predictHopper(G, S, {16, 0, 0});
  EXPECT_EQ(P.IssueLimit, "dispatch");
  EXPECT_NEAR(P.ComputeSeconds, 500 / 4 / 1.98e9, 1e-15);
  // 300 int: ALU 600 > dispatch 700? no: dispatch 700 still.
  S.Count[unsigned(InstrClass::Int)] = 300;
  EXPECT_EQ(predictHopper(G, S, {16, 0, 0}).IssueLimit, "dispatch");
  // 100 sfu (8 clocks each, XU) with 100 fp32: XU 800 > dispatch 200.
  S.Count = ClassArray{};
  S.Count[unsigned(InstrClass::Sfu)] = 100;
  S.Count[unsigned(InstrClass::Fp32)] = 100;
  P = predictHopper(G, S, {16, 0, 0});
  EXPECT_EQ(P.IssueLimit, "xu");
  EXPECT_NEAR(P.ComputeSeconds, 800 / 4 / 1.98e9, 1e-15);
  // 100 shared loads and 100 global loads that touch 4 lines each: MIO
  // 100 x 4 + 400 x 4 = 2000.
  S.Count = ClassArray{};
  S.Count[unsigned(InstrClass::SharedLoad)] = 100;
  S.Count[unsigned(InstrClass::GlobalLoad)] = 100;
  S.LoadSegments = 400;
  P = predictHopper(G, S, {16, 0, 0});
  EXPECT_EQ(P.IssueLimit, "mio");
  EXPECT_NEAR(P.ComputeSeconds, 2000 / 4 / 1.98e9, 1e-15);
  // A division sequence dispatches its cost: 10 fp32.div = 160.
  S.Count = ClassArray{};
  S.Count[unsigned(InstrClass::Fp32Div)] = 10;
  P = predictHopper(G, S, {16, 0, 0});
  EXPECT_NEAR(P.ComputeSeconds, 160 / 4 / 1.98e9, 1e-15);
}

TEST(HopperModelTest, HopperVecadd) {
  GpuParams G = h100();
  LaunchStats S = vecadd();
  vecaddDeps(S);
  Prediction P = predictHopper(G, S, {16, 0, 0});
  // 8 blocks per SM (threads); busiest SM: ceil(4096 / 132) = 32 blocks;
  // N_act = min(8, 32) x 8 warps; waves ceil(4096 / 1056) = 4.
  EXPECT_EQ(P.Occ.BlocksPerSm, 8u);
  EXPECT_DOUBLE_EQ(P.NAct, 64);
  EXPECT_EQ(P.Waves, 4u);
  // Pipes per warp: ALU 10 x 2 + 1 x 2 + 2 x 1 = 24; FMA 1; MIO 2 loads x
  // 1 line x 4 + 1 store x 4 = 12; dispatch 17. 32 blocks x 8 warps x 24 /
  // 4 sub-partitions = 1536 clocks.
  EXPECT_EQ(P.IssueLimit, "alu");
  EXPECT_NEAR(P.ComputeSeconds, 1536 / 1.98e9, 1e-15);
  // 4096 x 8 x 3 requests x 4 sectors x 32 B = 12582912 B, all from DRAM
  // (the 12 MiB footprint fits in L2 and is read once), a third of it
  // written: 12582912 B / 3000 GB/s (no copy bandwidth).
  EXPECT_DOUBLE_EQ(P.RequestedBytes, 12582912);
  EXPECT_DOUBLE_EQ(P.DramBytes, 12582912);
  EXPECT_DOUBLE_EQ(P.L2HitBytes, 0);
  EXPECT_NEAR(P.DramSeconds, 12582912 / 3000e9, 1e-15);
  // L2: the loads' 8388608 B (no block reads a sector twice: no L1 hits)
  // and one 128-B packet per store request: 4096 x 8 x 128 = 4194304 B.
  EXPECT_DOUBLE_EQ(P.L1HitBytes, 0);
  EXPECT_DOUBLE_EQ(P.L2Bytes, 12582912);
  // Path (DependentPathInOrder): 759 clocks, one round; 4 waves.
  EXPECT_DOUBLE_EQ(P.PathCycles, 759);
  EXPECT_DOUBLE_EQ(P.Rounds, 1);
  EXPECT_NEAR(P.LatencySeconds, 4 * 759 / 1.98e9, 1e-15);
  // Luo's periods for the breakdown: (2x6 + 10x6 + 6 = 78, 685 + 2x4 =
  // 693), (4, 0 + 4).
  EXPECT_EQ(P.PeriodCount[1], 1u); // type 2: c < m after a compute period
  EXPECT_EQ(P.PeriodCount[2], 1u); // type 3: c >= m after a memory period
  EXPECT_DOUBLE_EQ(P.PeriodCycles[1], 771);
  EXPECT_DOUBLE_EQ(P.PeriodCycles[2], 8);
  EXPECT_DOUBLE_EQ(P.ComputeCycles, 82);
  EXPECT_DOUBLE_EQ(P.MemoryCycles, 697);
  // Memory: DRAM 4.194 us plus one round of each wave exposed (4 x 759
  // clocks = 1.533 us) = 5.727 us, above the 5.7 us launch.
  double Memory = 12582912 / 3000e9 + 4 * 759 / 1.98e9;
  EXPECT_NEAR(P.MemorySeconds, Memory, 1e-15);
  EXPECT_NEAR(P.KernelSeconds, Memory, 1e-18);
  EXPECT_NEAR(P.Seconds, Memory + 5.7e-6, 1e-15);
  EXPECT_EQ(P.Bound, Bottleneck::Memory);
  // A dearer launch is the bottleneck.
  G.LaunchUs = 6;
  EXPECT_EQ(predictHopper(G, S, {16, 0, 0}).Bound, Bottleneck::Launch);
  G.LaunchUs = 5.7;
  // One block per SM of one warp: the wave's round (0.383 us) dwarfs its
  // 50688 B of DRAM traffic: latency bound.
  LaunchStats One = S;
  One.Blocks = 132;
  One.ThreadsPerBlock = 32;
  One.FootprintBytes = 132 * 3 * 128;
  One.BlockDistinctBytes = 3 * 128;
  G.LaunchUs = 0.1;
  Prediction L = predictHopper(G, One, {16, 0, 0});
  EXPECT_EQ(L.Waves, 1u);
  EXPECT_NEAR(L.LatencySeconds, 759 / 1.98e9, 1e-15);
  EXPECT_NEAR(L.MemorySeconds, 50688 / 3000e9 + 759 / 1.98e9, 1e-15);
  EXPECT_EQ(L.Bound, Bottleneck::Latency);
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
  vecaddDeps(S);
  // A 3 MiB footprint beyond a 2 MiB L2, each block re-reading its 768
  // distinct bytes four times: DRAM = 4096 x 768 B = a quarter of the
  // requests.
  G.L2Bytes = 2u << 20;
  S.FootprintBytes = 3145728;
  S.BlockDistinctBytes = 768;
  Prediction P = predictHopper(G, S, {16, 0, 0});
  EXPECT_DOUBLE_EQ(P.DramBytes, 12582912 / 4.0);
  EXPECT_DOUBLE_EQ(P.L2HitBytes, 12582912 * 0.75);
  // The block's 768 distinct bytes are less than its 1024 B of stores:
  // every load sector comes again from L1. But the first round of loads
  // cannot hit L1 (a block's re-reads come after it): both loads wait the
  // L2 rule's 0.75 x 276 + 0.25 x 685 = 378.25 clocks.
  EXPECT_DOUBLE_EQ(P.L1HitBytes, 8388608);
  EXPECT_DOUBLE_EQ(P.PathCycles, 759 - 685 + 378.25);
  // Luo's periods (the breakdown) wait the mean latency: all L1 hits, at
  // L2's latency when the profile has no L1 latency.
  EXPECT_DOUBLE_EQ(P.MemoryCycles, 276 + 8 + 4);
  G.LatencyL1 = 40;
  S.BlockDistinctBytes = 2048; // 1024 B of loads a block reads twice
  P = predictHopper(G, S, {16, 0, 0});
  // L2 loads 4096 x (2048 - 1024) = 4 MiB of the 8 MiB: half hit L1, the
  // others L2 or DRAM (the rule: DRAM 8 MiB of 12 for this block size).
  EXPECT_DOUBLE_EQ(P.L1HitBytes, 4194304);
  EXPECT_DOUBLE_EQ(P.DramBytes, 4096 * 2048.0);
  double Hit = 1 - 8388608.0 / 12582912;
  double Beyond = Hit * 276 + (1 - Hit) * 685;
  EXPECT_NEAR(P.PathCycles, 759 - 685 + Beyond, 1e-9);
  EXPECT_NEAR(P.MemoryCycles, 0.5 * 40 + 0.5 * Beyond + 8 + 4, 1e-9);
  // A second round of loads (a chain) waits the mean latency.
  LaunchStats Two;
  Two.Stream = {InstrClass::GlobalLoad, InstrClass::GlobalLoad};
  Two.DepBegin = {0, 0, 1};
  Two.Deps = {0};
  EXPECT_DOUBLE_EQ(dependentPath(G, Two, 100, nullptr, nullptr, 300), 400);
}

TEST(HopperModelTest, UncoalescedStoresGoToL2ByTheLine) {
  GpuParams G = h100();
  // A transpose's store: 32 lanes x 4 B in 32 sectors of 32 lines; the
  // load coalesced (4 sectors, 1 line). 65536 blocks of 8 warps.
  LaunchStats S;
  S.Blocks = 65536;
  S.ThreadsPerBlock = 256;
  S.Count[unsigned(InstrClass::GlobalLoad)] = 1;
  S.Count[unsigned(InstrClass::GlobalStore)] = 1;
  S.Requests = 2;
  S.SectorsPerRequest = 18;
  S.SegmentsPerRequest = 16.5;
  S.StoreRequests = 1;
  S.StoreSectors = 32;
  S.StoreSegments = 32;
  S.LoadSegments = 1;
  S.BlockDistinctBytes = 8 * 128 + 8 * 32 * 32; // loads + stores
  S.FootprintBytes = 2.0 * 65536 * 256 * 4;    // 128 MiB
  Prediction P = predictHopper(G, S, {16, 0, 0});
  // Requested sectors: 524288 warps x 36 x 32 B; L2 takes 128 B of loads
  // and 32 packets of 128 B per warp: 524288 x 4224 B = 2.2 GB, 4x the
  // stores' sector bytes.
  EXPECT_DOUBLE_EQ(P.RequestedBytes, 524288.0 * 36 * 32);
  EXPECT_DOUBLE_EQ(P.L2Bytes, 524288.0 * (128 + 32 * 128));
  // DRAM: every block's distinct bytes, 65536 x 9216; the L2 packets
  // bound the time.
  EXPECT_DOUBLE_EQ(P.DramBytes, 65536.0 * 9216);
  EXPECT_NEAR(P.MemorySeconds, 524288.0 * 4224 / 7400e9, 1e-12);
  EXPECT_EQ(P.Bound, Bottleneck::Memory);
}

TEST(HopperModelTest, ExposedLatencyPerWave) {
  GpuParams G = h100();
  G.LaunchUs = 0;
  // 1056 blocks x 8 warps (one wave), each warp 4 rounds of one load whose
  // address is the data of the load before it: the path is 4 x 685.
  LaunchStats S;
  S.Blocks = 1056;
  S.ThreadsPerBlock = 256;
  S.Count[unsigned(InstrClass::GlobalLoad)] = 4;
  S.Requests = 4;
  S.SectorsPerRequest = 4;
  S.SegmentsPerRequest = 1;
  S.LoadSegments = 4;
  S.Stream.assign(4, InstrClass::GlobalLoad);
  S.DepBegin = {0, 0, 1, 2, 3};
  S.Deps = {0, 1, 2};
  S.BlockDistinctBytes = 4 * 8 * 128;
  S.FootprintBytes = 1056.0 * 4 * 8 * 128; // 4.3 MB: fits L2
  Prediction P = predictHopper(G, S, {16, 0, 0});
  EXPECT_DOUBLE_EQ(P.PathCycles, 4 * 685);
  EXPECT_DOUBLE_EQ(P.Rounds, 4);
  // Only one of the four rounds is exposed on top of the DRAM time:
  // 4325376 B / 3000 GB/s + 2740 / 4 clocks = 1.79 us; the path (1.38 us)
  // is shorter: memory, mostly waiting (the exposed round, 0.35 us, is
  // less than the DRAM time): memory.
  EXPECT_NEAR(P.MemorySeconds, 4325376 / 3000e9 + 685 / 1.98e9, 1e-15);
  EXPECT_NEAR(P.LatencySeconds, 4 * 685 / 1.98e9, 1e-15);
  EXPECT_NEAR(P.KernelSeconds, P.MemorySeconds, 1e-18);
  EXPECT_EQ(P.Bound, Bottleneck::Memory);
  // The same loads on ten times the DRAM bandwidth: the path bounds it.
  G.DramGBps = 30000;
  P = predictHopper(G, S, {16, 0, 0});
  EXPECT_NEAR(P.KernelSeconds, 4 * 685 / 1.98e9, 1e-15);
  EXPECT_EQ(P.Bound, Bottleneck::Latency);
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

// TPSM's kernel time of a chunk (cleave/rt/Tpsm.h): the hopper model on
// the chunk's blocks, the whole launch giving the model's own prediction.
TEST(HopperModelTest, KernelTimeOfATpsmChunk) {
  GpuParams G = h100();
  LaunchStats S = vecadd();
  tpsm::KernelTime K = tpsm::hopperKernelTime(G, S, {16, 0, 0});
  EXPECT_DOUBLE_EQ(K(S.Blocks), predictHopper(G, S, {16, 0, 0}).Seconds);
  EXPECT_EQ(K(0), 0);
  // A wave's worth: the model on 1056 blocks and a quarter-ish footprint.
  LaunchStats Wave = S;
  Wave.Blocks = 1056;
  Wave.FootprintBytes = S.FootprintBytes * 1056 / 4096;
  EXPECT_DOUBLE_EQ(K(1056), predictHopper(G, Wave, {16, 0, 0}).Seconds);
  EXPECT_LT(K(1056), K(4096));
  double Prev = 0;
  for (uint64_t B : {1056u, 2112u, 4096u, 8192u}) {
    EXPECT_GE(K(B), Prev) << B;
    Prev = K(B);
  }
  // One wave of 132 SMs x 8 blocks of 256 threads.
  EXPECT_EQ(tpsm::waveBlocks(132, occupancy(G, {16, 0, 0}, 256).BlocksPerSm),
            1056u);
}

} // namespace
