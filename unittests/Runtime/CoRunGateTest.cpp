//===- CoRunGateTest.cpp - Co-scheduled slices in the engine --------------===//
//
// Part of Cleave. The co-scheduling phase (CoRunGate.h, docs/coschedule.md)
// over the engine_test bundle (unittests/Inputs/engine_test.ll) with
// hand-written CPU variants:
//  - on one CPU device, two threads' launches paired at the model's ratio
//    from synthetic profiles, results against plain C++, and a kernel that
//    cannot be sliced running whole with the reason in its plan;
//  - through the CUDA API (streams, events, the legacy stream): the order
//    of every slice, record and wait on a null GPU checked against each
//    dependency the program states; stream priorities; random programs of
//    three streams against a serial reference.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/CoRunGate.h"
#include "CoRunTestKernels.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace cleave::rt;

using namespace cleave_corun_test;

namespace {

class CoRunGateTest : public ::testing::Test {
protected:
  void SetUp() override {
    Runs.clear();
    Hook = nullptr;
    ASSERT_FALSE(bundleBytes().empty());
    ASSERT_TRUE(
        DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
    Bufs = std::make_unique<BufferManager>(Reg->devices());
    Exec = std::make_unique<CpuExecutor>(2);
    Eng = std::make_unique<Engine>(*Bufs, *Exec, PartitionPolicy::Even,
                                   Options());
    Result R = Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                               cpuSymbols());
    ASSERT_TRUE(R.ok()) << R.toString();
  }
  void TearDown() override {
    Hook = nullptr;
    Eng.reset();
    Bufs.reset();
  }
  template <class T> T *upload(const std::vector<T> &V) {
    void *P = nullptr;
    EXPECT_TRUE(Bufs->allocate(V.size() * sizeof(T), P).ok());
    EXPECT_TRUE(Bufs->memcpy(P, V.data(), V.size() * sizeof(T),
                             MemcpyKind::HostToDevice)
                    .ok());
    return static_cast<T *>(P);
  }
  template <class T> std::vector<T> download(const T *P, size_t N) {
    std::vector<T> V(N);
    EXPECT_TRUE(
        Bufs->memcpy(V.data(), P, N * sizeof(T), MemcpyKind::DeviceToHost)
            .ok());
    return V;
  }

  std::unique_ptr<DeviceRegistry> Reg;
  std::unique_ptr<CpuExecutor> Exec;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
};

TEST_F(CoRunGateTest, PairsTwoStreamsLaunchesAtTheModelsRatio) {
  const unsigned Sms = 4;
  CoRunGateOptions O;
  O.UseDeviceSms = false;
  O.Sm.Sms = Sms;
  O.SliceAlone = CoRunGateOptions::AloneRule::Always;
  O.LogPlan = true;
  const KernelHandle *Keep = Eng->findKernel("keep");
  const KernelHandle *Tr = Eng->findKernel("tr");
  ASSERT_TRUE(Keep && Tr);
  O.Inputs = [&](const KernelLaunchRequest &R) {
    return std::optional<corun::KernelModelInput>(
        R.Kernel == Keep ? memoryBound() : computeBound());
  };
  std::mutex TraceMutex;
  std::vector<std::string> Trace;
  O.Trace = [&](const std::string &S) {
    std::lock_guard<std::mutex> L(TraceMutex);
    Trace.push_back(S);
  };
  CoRunGate Gate(*Eng, O);

  // What the gate should find: the model's pair and ratio.
  corun::SmLimits Sm = O.Sm;
  corun::SoloPrediction SM, SC;
  ASSERT_TRUE(corun::predictSolo(memoryBound(), Sm, SM).ok());
  ASSERT_TRUE(corun::predictSolo(computeBound(), Sm, SC).ok());
  corun::PairPrediction Pair;
  ASSERT_TRUE(
      corun::predictPair(memoryBound(), computeBound(), SM, SC, Sm, Pair).ok());
  ASSERT_GT(Pair.Profit, 0.02);

  // keep over 256 blocks of 64 threads; tr of a 64 x 4096 matrix, one
  // block of 64 threads per row.
  const int N = 256 * 64, W = 64, H = 4096;
  std::mt19937 Rng(5);
  std::uniform_real_distribution<float> U(-1, 1);
  std::vector<float> X(N), In(W * H);
  for (float &V : X)
    V = U(Rng);
  for (float &V : In)
    V = U(Rng);
  float *PX = upload(X), *PY = upload(std::vector<float>(N, 7.0f));
  float *PIn = upload(In), *POut = upload(std::vector<float>(W * H, 0.0f));
  int NN = N, WW = W, HH = H;
  void *KeepArgs[] = {&PX, &PY, &NN};
  void *TrArgs[] = {&PIn, &POut, &WW, &HH};
  KernelLaunchRequest KR, TR;
  KR.Kernel = Keep;
  KR.Grid[0] = 256;
  KR.Block[0] = 64;
  KR.Args = KeepArgs;
  TR.Kernel = Tr;
  TR.Grid[0] = 1;
  TR.Grid[1] = H;
  TR.Block[0] = 64;
  TR.Args = TrArgs;

  // The first slice to run waits for the other launch to arrive.
  std::atomic<bool> Waited{false};
  Hook = [&](const void *, uint64_t) {
    if (!Waited.exchange(true))
      EXPECT_TRUE(waitFor([&] { return Gate.pending() == 2; }));
  };
  LaunchPlan PK, PT;
  Result RK, RT;
  ::testing::internal::CaptureStderr();
  std::thread A([&] { RK = Gate.run(KR, 1, 0, PK); });
  std::thread B([&] { RT = Gate.run(TR, 2, 0, PT); });
  A.join();
  B.join();
  std::string Log = ::testing::internal::GetCapturedStderr();
  // CLEAVE_LOG=plan: the decision (pair, ratio, predicted IPC and time) and
  // each launch's measured time.
  // The pair is named in arrival order, keep's ratio first or second.
  std::string KeepFirst = "pair keep (launch 1, priority 0) + tr (launch 2, "
                          "priority 0): " +
                          std::to_string(Pair.Blocks[0]) + ":" +
                          std::to_string(Pair.Blocks[1]) + " blocks per SM";
  std::string TrFirst = "pair tr (launch 1, priority 0) + keep (launch 2, "
                        "priority 0): " +
                        std::to_string(Pair.Blocks[1]) + ":" +
                        std::to_string(Pair.Blocks[0]) + " blocks per SM";
  EXPECT_TRUE(Log.find(KeepFirst) != std::string::npos ||
              Log.find(TrFirst) != std::string::npos)
      << Log;
  EXPECT_NE(Log.find("predicted IPC"), std::string::npos) << Log;
  EXPECT_NE(Log.find("cycles a round"), std::string::npos) << Log;
  EXPECT_NE(Log.find("cleave co-schedule: tr"), std::string::npos) << Log;
  EXPECT_NE(Log.find("measured"), std::string::npos) << Log;
  EXPECT_NE(Log.find("the last decision issued"), std::string::npos) << Log;
  ASSERT_TRUE(RK.ok()) << RK.toString();
  ASSERT_TRUE(RT.ok()) << RT.toString();

  // Results as plain C++ computes them.
  std::vector<float> Y = download(PY, N), Out = download(POut, W * H);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Y[I], X[I] > 0 ? X[I] * 2 : 7.0f) << I;
  for (int R = 0; R < H; ++R)
    for (int C = 0; C < W; ++C)
      ASSERT_EQ(Out[C * H + R], In[R * W + C]);

  // Each launch's slices cover its grid in ascending order.
  std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> Slices;
  std::vector<uint64_t> Order;
  for (const std::string &S : Trace) {
    unsigned long Id, B, E;
    if (std::sscanf(S.c_str(), "start %lu [%lu, %lu)", &Id, &B, &E) == 3) {
      Slices[Id].push_back({B, E});
      Order.push_back(Id);
    }
  }
  ASSERT_EQ(Slices.size(), 2u);
  uint64_t KeepId = 0, TrId = 0;
  for (auto &[Id, V] : Slices) {
    uint64_t Covered = 0;
    for (auto &[B, E] : V) {
      EXPECT_EQ(B, Covered) << "slices go in ascending block order";
      Covered = E;
    }
    (Covered == 256 ? KeepId : TrId) = Id;
  }
  ASSERT_TRUE(KeepId && TrId);
  unsigned Alternations = 0;
  for (size_t I = 1; I < Order.size(); ++I)
    Alternations += Order[I] != Order[I - 1];
  EXPECT_GE(Alternations, 4u) << "the two launches' slices interleave";
  // Paired, each slice is P_i x SMs blocks, times the rounds that make
  // neither smaller than its minimum slice (keep's: 256 blocks in about 8
  // slices, whole waves of 4 SMs: 32).
  uint64_t Rounds = (32 + Pair.Blocks[0] * Sms - 1) / (Pair.Blocks[0] * Sms);
  Rounds = std::max<uint64_t>(Rounds, (512 + Pair.Blocks[1] * Sms - 1) /
                                          (Pair.Blocks[1] * Sms));
  unsigned PairedTr = 0;
  for (auto &[B, E] : Slices[TrId])
    PairedTr += E - B == Pair.Blocks[1] * Sms * Rounds;
  EXPECT_GE(PairedTr, 2u) << "tr's slices at the model's ratio";
  for (auto &[B, E] : Slices[KeepId])
    EXPECT_TRUE(E - B == Pair.Blocks[0] * Sms * Rounds || E == 256)
        << "keep slice [" << B << ", " << E << ")";
  EXPECT_NE(PK.CoSchedule.find("beside another launch"), std::string::npos)
      << PK.CoSchedule;
}

TEST_F(CoRunGateTest, AKernelThatCannotBeSlicedRunsWholeAndSaysWhy) {
  CoRunGateOptions O;
  O.SliceAlone = CoRunGateOptions::AloneRule::Always;
  CoRunGate Gate(*Eng, O);
  const int N = 4096;
  unsigned *PNext = upload(std::vector<unsigned>(1, 0));
  unsigned *PT = upload(std::vector<unsigned>(N, 0));
  int NN = N;
  void *Args[] = {&PNext, &PT, &NN};
  KernelLaunchRequest R;
  R.Kernel = Eng->findKernel("tickets");
  ASSERT_TRUE(R.Kernel);
  R.Grid[0] = N / 64;
  R.Block[0] = 64;
  R.Args = Args;
  LaunchPlan P;
  Result Res = Gate.run(R, 1, 0, P);
  ASSERT_TRUE(Res.ok()) << Res.toString();
  EXPECT_NE(P.CoSchedule.find("1 slice(s)"), std::string::npos) << P.CoSchedule;
  EXPECT_NE(P.CoSchedule.find("runs whole, not sliced: the kernel cannot be "
                              "split"),
            std::string::npos)
      << P.CoSchedule;
  EXPECT_NE(P.describe().find("co-scheduled: "), std::string::npos);
  std::vector<unsigned> T = download(PT, N);
  std::sort(T.begin(), T.end());
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(T[I], unsigned(I));

  // keep, which can be sliced, runs as several.
  float *PX = upload(std::vector<float>(N, 1.0f));
  float *PY = upload(std::vector<float>(N, 0.0f));
  void *KArgs[] = {&PX, &PY, &NN};
  R.Kernel = Eng->findKernel("keep");
  R.Args = KArgs;
  Res = Gate.run(R, 1, 0, P);
  ASSERT_TRUE(Res.ok()) << Res.toString();
  EXPECT_EQ(P.CoSchedule.find("runs whole"), std::string::npos);
  EXPECT_EQ(P.CoSchedule.find("1 slice(s)"), std::string::npos);
  std::vector<float> Y = download(PY, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Y[I], 2.0f);
}

} // namespace

class CoRunGateHoldTest : public CoRunGateTest {
public:
  /// A gate of HoldRule::Predicted on a 4-SM device whose inputs are
  /// \p Inputs.
  CoRunGateOptions options(
      std::function<std::optional<corun::KernelModelInput>(
          const KernelLaunchRequest &)>
          Inputs) {
    CoRunGateOptions O;
    O.UseDeviceSms = false;
    O.Sm.Sms = 4;
    O.SliceAlone = CoRunGateOptions::AloneRule::Always;
    O.Hold = CoRunGateOptions::HoldRule::Predicted;
    O.Inputs = std::move(Inputs);
    return O;
  }
  /// Launches keep (stream 1) and tr (stream 2) through \p Gate from two
  /// threads at once, \p Rounds times; results against plain C++.
  void launchBoth(CoRunGate &Gate, int Rounds) {
    const int N = 256 * 64, W = 64, H = 1024;
    std::mt19937 Rng(11);
    std::uniform_real_distribution<float> U(-1, 1);
    std::vector<float> X(N), In(W * H);
    for (float &V : X)
      V = U(Rng);
    for (float &V : In)
      V = U(Rng);
    float *PX = upload(X), *PY = upload(std::vector<float>(N, 7.0f));
    float *PIn = upload(In), *POut = upload(std::vector<float>(W * H, 0.0f));
    int NN = N, WW = W, HH = H;
    void *KeepArgs[] = {&PX, &PY, &NN};
    void *TrArgs[] = {&PIn, &POut, &WW, &HH};
    KernelLaunchRequest KR, TR;
    KR.Kernel = Eng->findKernel("keep");
    KR.Grid[0] = 256;
    KR.Block[0] = 64;
    KR.Args = KeepArgs;
    TR.Kernel = Eng->findKernel("tr");
    TR.Grid[1] = H;
    TR.Block[0] = 64;
    TR.Args = TrArgs;
    for (int R = 0; R < Rounds; ++R) {
      LaunchPlan PK, PT;
      Result RK, RT;
      std::thread A([&] { RK = Gate.run(KR, 1, 0, PK); });
      std::thread B([&] { RT = Gate.run(TR, 2, 0, PT); });
      A.join();
      B.join();
      ASSERT_TRUE(RK.ok()) << RK.toString();
      ASSERT_TRUE(RT.ok()) << RT.toString();
    }
    std::vector<float> Y = download(PY, N), Out = download(POut, W * H);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Y[I], X[I] > 0 ? X[I] * 2 : 7.0f) << I;
    for (int R = 0; R < H; ++R)
      for (int C = 0; C < W; ++C)
        ASSERT_EQ(Out[C * H + R], In[R * W + C]);
  }
};

TEST_F(CoRunGateHoldTest, LaunchesWithoutModelInputsPassThroughUnsliced) {
  CoRunGate Gate(*Eng, options([](const KernelLaunchRequest &) {
                   return std::optional<corun::KernelModelInput>();
                 }));
  launchBoth(Gate, 3);
  EXPECT_EQ(Gate.passedThrough(), 6u);
  EXPECT_EQ(Gate.slicesRun(), 0u) << "a launch without inputs is never held";
  // Each ran as one plain engine launch: one run over its whole grid.
  EXPECT_EQ(Gate.pending(), 0u);
}

TEST_F(CoRunGateHoldTest, APairPredictedNotToGainPassesThrough) {
  // Two alike compute-bound kernels: the model predicts no profit.
  CoRunGate Gate(*Eng, options([](const KernelLaunchRequest &) {
                   return std::optional<corun::KernelModelInput>(
                       computeBound());
                 }));
  launchBoth(Gate, 1);
  Gate.settlePredictions();
  launchBoth(Gate, 2);
  EXPECT_EQ(Gate.passedThrough(), 6u);
  EXPECT_EQ(Gate.slicesRun(), 0u);
}

TEST_F(CoRunGateHoldTest, APairPredictedToGainIsHeldAndSliced) {
  const KernelHandle *Keep = Eng->findKernel("keep");
  auto Inputs = [Keep](const KernelLaunchRequest &R) {
    return std::optional<corun::KernelModelInput>(
        R.Kernel == Keep ? memoryBound() : computeBound());
  };
  // The model predicts a profit of about 0.04 for this pair on this SM:
  // under a margin of 0.05 it passes through, over 0.03 it is held.
  // The first launches know no partner, or its prediction is being made
  // (off the launches' path): they pass through. Once made, the other
  // stream's last launch is a predicted partner.
  {
    CoRunGateOptions O = options(Inputs);
    O.HoldProfit = 0.05;
    CoRunGate Gate(*Eng, O);
    launchBoth(Gate, 1);
    Gate.settlePredictions();
    launchBoth(Gate, 2);
    EXPECT_EQ(Gate.passedThrough(), 6u);
    EXPECT_EQ(Gate.slicesRun(), 0u);
  }
  CoRunGateOptions O = options(Inputs);
  O.HoldProfit = 0.03;
  CoRunGate Gate(*Eng, O);
  launchBoth(Gate, 1);
  EXPECT_EQ(Gate.passedThrough(), 2u);
  Gate.settlePredictions();
  launchBoth(Gate, 2);
  EXPECT_EQ(Gate.passedThrough(), 2u);
  EXPECT_GT(Gate.slicesRun(), 4u);
  // Every slice is at least the launch's minimum slice (about an eighth of
  // its grid): at most DefaultSlices + 1 a launch (the last may be short),
  // one engine launch each.
  uint64_t Held = 6 - Gate.passedThrough();
  EXPECT_LE(Gate.slicesRun(), Held * (O.DefaultSlices + 1));
  EXPECT_EQ(Gate.engineLaunches(), Held);
}

TEST_F(CoRunGateHoldTest, ALaunchsSliceCountIsBounded) {
  // A lone launch of 4000 blocks on 4 SMs, sliced (coschedule=always): its
  // minimum slice, 500 blocks, bounds it to 8 slices, not 1000 waves.
  CoRunGateOptions O = options(nullptr);
  O.Hold = CoRunGateOptions::HoldRule::All;
  CoRunGate Gate(*Eng, O);
  const int N = 4000 * 64;
  std::vector<float> X(N, 1.0f);
  float *PX = upload(X), *PY = upload(std::vector<float>(N, 0.0f));
  int NN = N;
  void *Args[] = {&PX, &PY, &NN};
  KernelLaunchRequest KR;
  KR.Kernel = Eng->findKernel("keep");
  KR.Grid[0] = 4000;
  KR.Block[0] = 64;
  KR.Args = Args;
  LaunchPlan P;
  Result R = Gate.run(KR, 1, 0, P);
  ASSERT_TRUE(R.ok()) << R.toString();
  EXPECT_GE(Gate.slicesRun(), 2u);
  EXPECT_LE(Gate.slicesRun(), uint64_t(O.DefaultSlices));
  EXPECT_EQ(Gate.engineLaunches(), 1u);
  EXPECT_NE(P.CoSchedule.find(std::to_string(Gate.slicesRun()) + " slice(s)"),
            std::string::npos)
      << P.CoSchedule;
  for (float V : download(PY, N))
    ASSERT_EQ(V, 2.0f);
}

TEST(CoRunBundleInputs, TheBundlesEstimateGivesAPrediction) {
  // engine_test's kernels carry the compiler's co-run estimate; a launch's
  // inputs come from it and the model weighs them.
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
  BufferManager Bufs(Reg->devices());
  CpuExecutor Exec(1);
  Engine E(Bufs, Exec, PartitionPolicy::Even, Options());
  ASSERT_TRUE(E.addProgram(bundleBytes().data(), bundleBytes().size(),
                           cpuSymbols())
                  .ok());
  KernelLaunchRequest R;
  R.Kernel = E.findKernel("tr");
  ASSERT_TRUE(R.Kernel && R.Kernel->Info->CoRun);
  R.Grid[1] = 1024;
  R.Block[0] = 64;
  std::optional<corun::KernelModelInput> M = bundleModelInput(E, R);
  ASSERT_TRUE(M);
  EXPECT_EQ(M->WarpsPerBlock, 2u);
  EXPECT_GT(M->MemRatio, 0);
  EXPECT_LT(M->MemRatio, 1);
  EXPECT_GT(M->InstrPerBlock, 0);
  // tr writes a column: part of its requests are uncoalesced.
  EXPECT_LT(M->CoalescedFraction, 1);
  corun::SoloPrediction S;
  EXPECT_TRUE(corun::predictSolo(*M, corun::SmLimits(), S).ok());
  EXPECT_GT(S.Ipc, 0);
}

namespace {

/// Host time of \p Fn, the least of \p Reps runs (us).
double leastUs(int Reps, const std::function<void()> &Fn) {
  double Best = 1e300;
  for (int I = 0; I < Reps; ++I) {
    auto Start = std::chrono::steady_clock::now();
    Fn();
    Best = std::min(Best, std::chrono::duration<double, std::micro>(
                              std::chrono::steady_clock::now() - Start)
                              .count());
  }
  return Best;
}

} // namespace

TEST(CoRunSliceCost, PiecesCostLessHostTimeThanASliceLaunchEach) {
  // The engine's host work per slice on a null GPU: 64 slices of keep as
  // 64 engine launches of one slice each (decide, footprints, transfers
  // and a wait for the lane every time), against one engine launch that
  // issues 64 pieces back to back (SliceRange::NextPiece). Printed for
  // docs/coschedule.md; the pieces must cost less.
  NullGpu Gpu(0);
  BufferManager Bufs({&Gpu});
  CpuExecutor Exec(1);
  Engine E(Bufs, Exec, PartitionPolicy::Even, Options());
  ASSERT_TRUE(E.addProgram(bundleBytes().data(), bundleBytes().size(),
                           cpuSymbols())
                  .ok());
  const uint32_t Blocks = 64 * 32, Threads = 64, Slices = 64;
  const int N = int(Blocks * Threads);
  void *PX = nullptr, *PY = nullptr;
  ASSERT_TRUE(Bufs.allocate(N * sizeof(float), PX).ok());
  ASSERT_TRUE(Bufs.allocate(N * sizeof(float), PY).ok());
  int NN = N;
  void *Args[] = {&PX, &PY, &NN};
  KernelLaunchRequest Req;
  Req.Kernel = E.findKernel("keep");
  ASSERT_TRUE(Req.Kernel);
  Req.Grid[0] = Blocks;
  Req.Block[0] = Threads;
  Req.Args = Args;
  const uint64_t Per = Blocks / Slices;
  Result Err;
  double Each = leastUs(5, [&] {
    for (uint32_t S = 0; S < Slices; ++S) {
      KernelLaunchRequest SR = Req;
      SR.Slice = KernelLaunchRequest::SliceRange{0, S * Per, Per, 1, 0, {}};
      LaunchPlan P;
      if (Result R = E.launch(SR, P); !R.ok())
        Err = R;
    }
  });
  unsigned Handed = 0;
  double Pieces = leastUs(5, [&] {
    KernelLaunchRequest SR = Req;
    SR.Slice = KernelLaunchRequest::SliceRange{0, 0, Blocks, 1, 0, {}};
    uint32_t Next = 0;
    SR.Slice->NextPiece = [&](StreamHandle Lane, uint64_t &First,
                              uint64_t &Count, StreamHandle &) {
      EXPECT_NE(Lane, nullptr);
      First = uint64_t(Next) * Per;
      Count = Next < Slices ? Per : 0;
      Handed += Count != 0;
      ++Next;
      return Result::success();
    };
    LaunchPlan P;
    if (Result R = E.launch(SR, P); !R.ok())
      Err = R;
  });
  ASSERT_TRUE(Err.ok()) << Err.toString();
  EXPECT_EQ(Handed, 5 * Slices);
  std::printf("host time a slice on a null GPU: %.2f us as an engine launch "
              "each, %.2f us as a piece of one engine launch\n",
              Each / Slices, Pieces / Slices);
  EXPECT_LT(Pieces, Each);
}

TEST(CoRunPieces, APairsPiecesWaitForTheirPartnersOnANullGpu) {
  // keep (memory-bound) and tr (compute-bound) from two threads through a
  // gate on a traced null GPU: each launch is one engine launch, its
  // pieces on its own lane; a paired piece's lane waits for the event the
  // partner's lane recorded after its last piece, and the host waits for
  // each lane once per launch.
  NullGpu::Options NO;
  NO.Trace = true;
  NO.ComputeUnits = 4;
  // The first piece is issued once the other launch is in the gate.
  std::atomic<bool> First{true};
  CoRunGate *G = nullptr;
  NO.OnLaunch = [&](const uint32_t *, const uint32_t *, void **) {
    if (First.exchange(false))
      EXPECT_TRUE(waitFor([&] { return G->pending() == 2; }));
  };
  NullGpu Gpu(NO);
  BufferManager Bufs({&Gpu});
  CpuExecutor Exec(1);
  Engine E(Bufs, Exec, PartitionPolicy::Even, Options());
  ASSERT_TRUE(E.addProgram(bundleBytes().data(), bundleBytes().size(),
                           cpuSymbols())
                  .ok());
  const KernelHandle *Keep = E.findKernel("keep");
  CoRunGateOptions O;
  O.SliceAlone = CoRunGateOptions::AloneRule::Always;
  O.Inputs = [Keep](const KernelLaunchRequest &R) {
    return std::optional<corun::KernelModelInput>(
        R.Kernel == Keep ? memoryBound() : computeBound());
  };
  CoRunGate Gate(E, O);
  G = &Gate;
  ASSERT_EQ(Gate.device(), 0);
  const int N = 256 * 64, W = 64, H = 1024;
  void *PX, *PY, *PIn, *POut;
  for (void **P : {&PX, &PY, &PIn, &POut})
    ASSERT_TRUE(Bufs.allocate(std::max(N, W * H) * sizeof(float), *P).ok());
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
  // Whether the second launch arrives while the first still issues its
  // pieces is up to the threads: a run where it came too late pairs
  // nothing, so the pairing is looked for over a few runs, each of which
  // must keep the lanes and the host waits right.
  unsigned CrossWaits = 0;
  for (int Attempt = 0; Attempt < 20 && !CrossWaits; ++Attempt) {
    SCOPED_TRACE("run " + std::to_string(Attempt));
    First = true;
    Gpu.clearTrace();
    uint64_t Before = Gate.engineLaunches();
    LaunchPlan PK, PT;
    Result RK, RT;
    std::thread A([&] { RK = Gate.run(KR, 1, 0, PK); });
    std::thread B([&] { RT = Gate.run(TR, 2, 0, PT); });
    A.join();
    B.join();
    ASSERT_TRUE(RK.ok()) << RK.toString();
    ASSERT_TRUE(RT.ok()) << RT.toString();
    EXPECT_EQ(Gate.engineLaunches() - Before, 2u);
    std::vector<NullGpu::Op> Ops = Gpu.ops();
    std::map<uint32_t, StreamHandle> LaneOf; // by block size: 64 keep, 32 tr
    std::map<uint32_t, unsigned> PiecesOf;
    for (const NullGpu::Op &Op : Ops)
      if (Op.What == NullGpu::Op::Launch) {
        if (LaneOf.count(Op.BlockX))
          EXPECT_EQ(LaneOf[Op.BlockX], Op.Stream) << "a launch keeps its lane";
        LaneOf[Op.BlockX] = Op.Stream;
        ++PiecesOf[Op.BlockX];
      }
    ASSERT_EQ(LaneOf.size(), 2u);
    EXPECT_NE(LaneOf[64], LaneOf[32]);
    std::map<EventHandle, StreamHandle> RecordedOn;
    unsigned Syncs = 0;
    for (const NullGpu::Op &Op : Ops) {
      if (Op.What == NullGpu::Op::Record)
        RecordedOn[Op.Event] = Op.Stream;
      if (Op.What == NullGpu::Op::Sync)
        Syncs += Op.Stream == LaneOf[64] || Op.Stream == LaneOf[32];
      if (Op.What == NullGpu::Op::Wait) {
        auto It = RecordedOn.find(Op.Event);
        ASSERT_NE(It, RecordedOn.end());
        EXPECT_NE(It->second, Op.Stream) << "a wait for the partner's lane";
        ++CrossWaits;
      }
    }
    EXPECT_GT(PiecesOf[64] + PiecesOf[32], 2u);
    EXPECT_EQ(Syncs, 2u) << "one host wait per launch, not per piece";
  }
  EXPECT_GT(CrossWaits, 0u) << "paired pieces wait for their partner";
}
