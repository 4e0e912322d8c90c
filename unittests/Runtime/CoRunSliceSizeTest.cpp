//===- CoRunSliceSizeTest.cpp - A kernel's minimum slice, measured once ---===//
//
// Part of Cleave. The co-scheduling phase measures a kernel's minimum slice
// (digest 003 §3.4) on the launches the program makes, with a fake clock,
// keeps it in the performance cache, and a later run reads it from there;
// every launch runs each block once.
//
//===----------------------------------------------------------------------===//
#include "CoRunTestKernels.h"
#include "cleave/rt/CoRunGate.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace cleave::rt;
using namespace cleave_corun_test;

namespace {

/// The fake clock: a launch of B blocks in P pieces takes B + 0.5 P ms. On
/// 4 SMs, slices of 4k blocks of a 256-block grid cost (64 / k) pieces: the
/// overhead is first within 2 % at k = 6 (24 blocks, 11 pieces: 261.5 ms
/// against 256.5 unsliced), not at k = 5 (20 blocks, 13 pieces).
double fakeMs(uint64_t Blocks, unsigned Pieces, double) {
  return double(Blocks) + 0.5 * Pieces;
}

class CoRunSliceSizeTest : public ::testing::Test {
protected:
  void SetUp() override {
    char Tmpl[] = "/tmp/cleave-slice-cache-XXXXXX";
    ASSERT_NE(mkdtemp(Tmpl), nullptr);
    Dir = Tmpl;
    ASSERT_TRUE(
        DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
    Bufs = std::make_unique<BufferManager>(Reg->devices());
    // One thread: a piece's blocks run in ascending order.
    Exec = std::make_unique<CpuExecutor>(1);
  }
  void TearDown() override {
    Eng.reset();
    Bufs.reset();
    std::string Rm = "rm -rf '" + Dir + "'";
    (void)std::system(Rm.c_str());
  }
  void makeEngine() {
    Options O;
    O.CacheDir = Dir;
    Eng = std::make_unique<Engine>(*Bufs, *Exec, PartitionPolicy::Even, O);
    Result R = Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                               cpuSymbols());
    ASSERT_TRUE(R.ok()) << R.toString();
  }
  CoRunGateOptions options() {
    CoRunGateOptions O;
    O.UseDeviceSms = false;
    O.Sm.Sms = 4;
    O.SliceAlone = CoRunGateOptions::AloneRule::Always;
    O.MeasureSlices = true;
    O.MeasuredMs = fakeMs;
    O.LogPlan = true;
    O.Inputs = [](const KernelLaunchRequest &) {
      return std::optional<corun::KernelModelInput>(memoryBound());
    };
    return O;
  }
  /// One launch of keep over 256 blocks of 64 threads through \p Gate on
  /// stream 1, results against plain C++; its pieces (first blocks, in the
  /// order they ran) must ascend from 0 without overlap, so each block ran
  /// once. Its plan's co-schedule text.
  std::string launchKeep(CoRunGate &Gate) {
    const int N = 256 * 64;
    if (!PX) {
      std::vector<float> X(N);
      for (int I = 0; I < N; ++I)
        X[I] = float(I % 7) - 3;
      EXPECT_TRUE(Bufs->allocate(N * sizeof(float), PX).ok());
      EXPECT_TRUE(Bufs->allocate(N * sizeof(float), PY).ok());
      EXPECT_TRUE(Bufs->memcpy(PX, X.data(), N * sizeof(float),
                               MemcpyKind::HostToDevice)
                      .ok());
    }
    std::vector<float> Y(N, 5.0f);
    EXPECT_TRUE(
        Bufs->memcpy(PY, Y.data(), N * sizeof(float), MemcpyKind::HostToDevice)
            .ok());
    {
      std::lock_guard<std::mutex> L(RunsMutex);
      Runs.clear();
    }
    int NN = N;
    void *Args[] = {&PX, &PY, &NN};
    KernelLaunchRequest R;
    R.Kernel = Eng->findKernel("keep");
    R.Grid[0] = 256;
    R.Block[0] = 64;
    R.Args = Args;
    LaunchPlan P;
    Result Res = Gate.run(R, 1, 0, P);
    EXPECT_TRUE(Res.ok()) << Res.toString();
    std::vector<uint64_t> Firsts;
    {
      std::lock_guard<std::mutex> L(RunsMutex);
      for (auto &[Out, First] : Runs)
        if (Out == PY)
          Firsts.push_back(First);
    }
    EXPECT_FALSE(Firsts.empty());
    EXPECT_EQ(Firsts.empty() ? 1 : Firsts[0], 0u);
    for (size_t I = 1; I < Firsts.size(); ++I)
      EXPECT_GT(Firsts[I], Firsts[I - 1]) << "pieces ascend, none twice";
    EXPECT_TRUE(
        Bufs->memcpy(Y.data(), PY, N * sizeof(float), MemcpyKind::DeviceToHost)
            .ok());
    for (int I = 0; I < N; ++I) {
      float X = float(I % 7) - 3;
      EXPECT_EQ(Y[I], X > 0 ? X * 2 : 5.0f) << I;
    }
    return P.CoSchedule;
  }

  std::string Dir;
  std::unique_ptr<DeviceRegistry> Reg;
  std::unique_ptr<CpuExecutor> Exec;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
  void *PX = nullptr, *PY = nullptr;
};

TEST_F(CoRunSliceSizeTest, MeasuredOnceKeptInTheCacheAndReadByALaterRun) {
  makeEngine();
  std::vector<std::string> Plans;
  {
    CoRunGate Gate(*Eng, options());
    testing::internal::CaptureStderr();
    // The first launch finds the cache not asked yet: the default.
    Plans.push_back(launchKeep(Gate));
    Gate.settlePredictions();
    // Then one unsliced, and k = 1 .. 6 sliced, each measured alone.
    for (int I = 0; I < 7; ++I)
      Plans.push_back(launchKeep(Gate));
    Plans.push_back(launchKeep(Gate));
    std::string Log = testing::internal::GetCapturedStderr();
    EXPECT_NE(Log.find("minimum slice: unsliced 256 blocks in 256.500 ms"),
              std::string::npos)
        << Log;
    EXPECT_NE(Log.find("slices of 20 blocks: 262.500 ms, overhead 0.023"),
              std::string::npos)
        << Log;
    EXPECT_NE(Log.find("slices of 24 blocks: 261.500 ms, overhead 0.019; "
                       "the minimum slice is 24 blocks"),
              std::string::npos)
        << Log;
    Gate.settlePredictions();
  }
  EXPECT_NE(Plans[0].find("minimum slice 32 blocks (default)"),
            std::string::npos)
      << Plans[0];
  EXPECT_NE(Plans[1].find("1 slice(s)"), std::string::npos) << Plans[1];
  EXPECT_NE(Plans[1].find("(measuring: unsliced)"), std::string::npos)
      << Plans[1];
  EXPECT_NE(Plans[2].find("64 slice(s)"), std::string::npos) << Plans[2];
  EXPECT_NE(Plans[8].find("11 slice(s)"), std::string::npos) << Plans[8];
  EXPECT_NE(Plans[8].find("minimum slice 24 blocks (measured now)"),
            std::string::npos)
      << Plans[8];

  // The cache file keeps it; a later run's engine reads it.
  ASSERT_TRUE(Eng->flushPerformanceCache().ok());
  Eng.reset();
  makeEngine();
  CoRunGate Gate(*Eng, options());
  launchKeep(Gate);
  Gate.settlePredictions();
  std::string Plan = launchKeep(Gate);
  EXPECT_NE(Plan.find("minimum slice 24 blocks (cache)"), std::string::npos)
      << Plan;
}

TEST_F(CoRunSliceSizeTest, ALaunchBesideAnotherIsNotMeasured) {
  // A measured launch that another launch joins: its time is not the
  // kernel's alone, so the search does not use it.
  makeEngine();
  CoRunGateOptions O = options();
  unsigned Calls = 0;
  O.MeasuredMs = [&](uint64_t B, unsigned P, double Ms) {
    ++Calls;
    return fakeMs(B, P, Ms);
  };
  CoRunGate Gate(*Eng, O);
  launchKeep(Gate);
  Gate.settlePredictions();
  // The next launch measures the unsliced time; while its first piece
  // runs, a launch of another stream arrives.
  std::thread Other;
  const int W = 64, H = 64;
  const KernelHandle *Tr = Eng->findKernel("tr");
  void *PIn = nullptr, *POut = nullptr;
  ASSERT_TRUE(Bufs->allocate(W * H * sizeof(float), PIn).ok());
  ASSERT_TRUE(Bufs->allocate(W * H * sizeof(float), POut).ok());
  Hook = [&](const void *Out, uint64_t First) {
    if (Out != PY || First != 0 || Other.joinable())
      return;
    Other = std::thread([&] {
      int WW = W, HH = H;
      void *Args[] = {&PIn, &POut, &WW, &HH};
      KernelLaunchRequest R;
      R.Kernel = Tr;
      R.Grid[1] = H;
      R.Block[0] = 64;
      R.Args = Args;
      LaunchPlan P;
      EXPECT_TRUE(Gate.run(R, 2, 0, P).ok());
    });
    EXPECT_TRUE(waitFor([&] { return Gate.pending() == 2; }));
  };
  launchKeep(Gate);
  Hook = nullptr;
  Other.join();
  EXPECT_EQ(Calls, 0u) << "a disturbed measurement is dropped";
  // Alone again, it is measured.
  launchKeep(Gate);
  EXPECT_EQ(Calls, 1u);
}

} // namespace
