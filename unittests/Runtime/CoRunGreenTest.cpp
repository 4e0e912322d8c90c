//===- CoRunGreenTest.cpp - A pair on a split of the SMs ------------------===//
//
// Part of Cleave. The co-scheduler may run a modeled pair on a split of the
// GPU's SMs (green contexts) instead of interleaved slices
// (docs/coschedule.md, "SM partitions"): on a null GPU that offers splits,
// each kernel's launch goes to its side's stream, ordered after its lane
// and its lane after it; on one that offers none, the pair interleaves and
// the plan says why.
//
//===----------------------------------------------------------------------===//
#include "CoRunTestKernels.h"
#include "cleave/rt/CoRunGate.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <atomic>
#include <regex>
#include <set>

using namespace cleave::rt;
using namespace cleave_corun_test;

namespace {

struct Outcome {
  std::vector<NullGpu::Op> Ops;
  std::map<unsigned, std::pair<StreamHandle, StreamHandle>> Splits;
  std::string Log;
};

/// keep (memory-bound, 64 threads a block) and tr (compute-bound, 32) from
/// two threads through a gate on a traced null GPU of 32 SMs (\p Group: its
/// partitions' multiple of SMs, 0 none) under \p Rule; the first piece
/// waits until both launches are in the gate.
Outcome runPair(unsigned Group, CoScheduleOptions::PartitionRule Rule,
                const std::string &Profile = "") {
  NullGpu::Options NO;
  NO.Trace = true;
  NO.ComputeUnits = 32;
  NO.SmGroup = Group;
  std::atomic<bool> First{true};
  CoRunGate *G = nullptr;
  NO.OnLaunch = [&](const uint32_t *, const uint32_t *, void **) {
    if (First.exchange(false))
      EXPECT_TRUE(waitFor([&] { return G->pending() == 2; }));
  };
  NullGpu Gpu(NO);
  BufferManager Bufs({&Gpu});
  CpuExecutor Exec(1);
  Options EO;
  EO.ProfilePath = Profile;
  Engine E(Bufs, Exec, PartitionPolicy::Even, EO);
  EXPECT_TRUE(E.addProgram(bundleBytes().data(), bundleBytes().size(),
                           cpuSymbols())
                  .ok());
  const KernelHandle *Keep = E.findKernel("keep");
  CoRunGateOptions O;
  O.SliceAlone = CoRunGateOptions::AloneRule::Always;
  O.Scheduler.Partition = Rule;
  O.LogPlan = true;
  O.Inputs = [Keep](const KernelLaunchRequest &R) {
    return std::optional<corun::KernelModelInput>(
        R.Kernel == Keep ? memoryBound() : computeBound());
  };
  testing::internal::CaptureStderr();
  {
    CoRunGate Gate(E, O);
    G = &Gate;
    const int N = 256 * 64, W = 64, H = 1024;
    void *PX, *PY, *PIn, *POut;
    for (void **P : {&PX, &PY, &PIn, &POut})
      EXPECT_TRUE(Bufs.allocate(std::max(N, W * H) * sizeof(float), *P).ok());
    int NN = N, WW = W, HH = H;
    void *KeepArgs[] = {&PX, &PY, &NN};
    void *TrArgs[] = {&PIn, &POut, &WW, &HH};
    KernelLaunchRequest KR, TR;
    KR.Kernel = Keep;
    KR.Grid[0] = 256;
    KR.Block[0] = 64;
    KR.Args = KeepArgs;
    TR.Kernel = E.findKernel("tr");
    TR.Grid[1] = H;
    TR.Block[0] = 32;
    TR.Args = TrArgs;
    LaunchPlan PK, PT;
    Result RK, RT;
    std::thread A([&] { RK = Gate.run(KR, 1, 0, PK); });
    std::thread B([&] { RT = Gate.run(TR, 2, 0, PT); });
    A.join();
    B.join();
    EXPECT_TRUE(RK.ok()) << RK.toString();
    EXPECT_TRUE(RT.ok()) << RT.toString();
  }
  Outcome Out;
  Out.Log = testing::internal::GetCapturedStderr();
  Out.Ops = Gpu.ops();
  Out.Splits = Gpu.partitions();
  return Out;
}

TEST(CoRunGreen, EachKernelOfASplitPairRunsOnItsSidesStream) {
  Outcome O = runPair(8, CoScheduleOptions::PartitionRule::Always);
  ASSERT_EQ(O.Splits.size(), 1u) << O.Log;
  unsigned Sms = O.Splits.begin()->first;
  EXPECT_EQ(Sms % 8, 0u);
  StreamHandle Side[2] = {O.Splits.begin()->second.first,
                          O.Splits.begin()->second.second};
  EXPECT_NE(O.Log.find("SM split " + std::to_string(Sms) + " + " +
                       std::to_string(32 - Sms) + " SMs (green contexts)"),
            std::string::npos)
      << O.Log;
  // Every launch on a side's stream is one kernel's, each kernel on one
  // side; the lanes' launches are the pieces before the split.
  std::map<uint32_t, std::set<StreamHandle>> SidesOf;
  for (const NullGpu::Op &Op : O.Ops)
    if (Op.What == NullGpu::Op::Launch &&
        (Op.Stream == Side[0] || Op.Stream == Side[1]))
      SidesOf[Op.BlockX].insert(Op.Stream);
  ASSERT_EQ(SidesOf.size(), 2u) << O.Log;
  ASSERT_EQ(SidesOf[64].size(), 1u);
  ASSERT_EQ(SidesOf[32].size(), 1u);
  EXPECT_NE(*SidesOf[64].begin(), *SidesOf[32].begin());
  // A side's stream waits for an event of the lane before its piece, and
  // its lane waits for an event recorded on it after.
  std::map<EventHandle, StreamHandle> RecordedOn;
  unsigned SideWaits = 0, LaneWaits = 0;
  for (const NullGpu::Op &Op : O.Ops) {
    if (Op.What == NullGpu::Op::Record)
      RecordedOn[Op.Event] = Op.Stream;
    if (Op.What != NullGpu::Op::Wait)
      continue;
    bool OnSide = Op.Stream == Side[0] || Op.Stream == Side[1];
    StreamHandle From = RecordedOn[Op.Event];
    bool FromSide = From == Side[0] || From == Side[1];
    SideWaits += OnSide && !FromSide;
    LaneWaits += !OnSide && FromSide;
  }
  EXPECT_EQ(SideWaits, 2u);
  EXPECT_EQ(LaneWaits, 2u);
  // Both launches done: the pair's predicted time against its measured
  // (the pair is named in the order the launches reached the scheduler,
  // which two streams' threads do not fix).
  EXPECT_TRUE(
      O.Log.find("cleave co-schedule: co-run keep + tr: predicted") !=
          std::string::npos ||
      O.Log.find("cleave co-schedule: co-run tr + keep: predicted") !=
          std::string::npos)
      << O.Log;
}

TEST(CoRunGreen, WithoutPartitionsThePairInterleavesAndThePlanSaysWhy) {
  Outcome O = runPair(0, CoScheduleOptions::PartitionRule::Always);
  EXPECT_TRUE(O.Splits.empty());
  EXPECT_NE(O.Log.find("no SM partitions (the device has no SM "
                       "partitions): pairs run interleaved"),
            std::string::npos)
      << O.Log;
  EXPECT_EQ(O.Log.find("SM split"), std::string::npos) << O.Log;
}

TEST(CoRunGreen, ThePairsPredictedTimeIsAtTheProfilesSmClock) {
  // With the H200's device profile the model runs on its SM (132 SMs,
  // 1980 MHz) and a pair's predicted cycles become time, printed against
  // the measured co-run time once both launches are done.
  Outcome O = runPair(0, CoScheduleOptions::PartitionRule::Never,
                      std::string(CLEAVE_TEST_SOURCE_ROOT) +
                          "/profiles/h200x1-all.json");
  std::smatch M;
  ASSERT_TRUE(std::regex_search(
      O.Log, M,
      std::regex("the pair: interleaved ([0-9]+) cycles, one after the other "
                 "[0-9]+; predicted ([0-9.]+) ms at 1980 MHz")))
      << O.Log;
  double Cycles = std::stod(M[1]), Ms = std::stod(M[2]);
  EXPECT_NEAR(Ms, Cycles / 1980e3, 0.0005);
  ASSERT_TRUE(std::regex_search(
      O.Log, M,
      std::regex("co-run keep \\+ tr: predicted ([0-9.]+) ms, measured "
                 "[0-9.]+ ms, error [-+][0-9.]+ %")))
      << O.Log;
  EXPECT_NEAR(std::stod(M[1]), Ms, 0.0005);
}

} // namespace
