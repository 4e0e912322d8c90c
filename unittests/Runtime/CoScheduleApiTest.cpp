//===- CoScheduleApiTest.cpp - Co-scheduling through CUDA streams ---------===//
//
// Part of Cleave. Launches of several CUDA streams, events and the legacy
// stream through the runtime's API with the co-scheduler on
// (docs/coschedule.md), over the engine_test bundle and hand-written CPU
// variants:
//  - on a null GPU, every slice, record, wait and host synchronization is
//    traced, and each dependency the program states (stream order, an event
//    waited for, the legacy stream's implicit synchronization) is checked
//    to order the slices of one launch before those of the next;
//  - on the CPU, a high-priority stream's slices run ahead of a long
//    low-priority launch, and random programs of three streams that pass
//    data through events give the results of the same program run
//    serially.
//
//===----------------------------------------------------------------------===//
#if __has_include(<cuda_runtime_api.h>)
#include "../Api/ApiTestUtil.h"
#include "../TestInputs.h"

#include "cleave/rt/NullGpu.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace cleave::rt;
using cleave::rt::api::Runtime;

namespace {

const std::string &bundleBytes() {
  static const std::string Bytes = cleave::test::testBundle("engine_test");
  return Bytes;
}

/// Every CPU run of keep, in order (its output and first block); Hook, when
/// set, runs first.
std::mutex RunsMutex;
std::vector<std::pair<const void *, uint64_t>> Runs;
std::function<void(const void *, uint64_t)> Hook;

void keepCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
             uint64_t Count, void *) {
  const float *X = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  if (Hook)
    Hook(Out, First);
  {
    std::lock_guard<std::mutex> G(RunsMutex);
    Runs.push_back({Out, First});
  }
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N && X[I] > 0)
        Out[I] = X[I] * 2;
    }
}
const cleave_cpu_kernel_desc KeepDesc = {"keep", keepCpu, 0, 0, 3, 0};

bool waitFor(const std::function<bool()> &Ready) {
  auto End = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!Ready()) {
    if (std::chrono::steady_clock::now() > End)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

class CoScheduleApiTest : public ::testing::Test {
protected:
  void TearDown() override {
    Hook = nullptr;
    cleave_reset();
    Runtime::setDeviceSourceForTesting(nullptr);
    Runtime::setOptionsForTesting(std::nullopt);
    while (cudaGetLastError() != cudaSuccess) {
    }
  }

public:
  /// Starts the runtime over \p Devices (or one traced null GPU) with the
  /// co-scheduler in \p Mode, and adds the engine_test program.
  void start(const char *Devices, CoScheduleMode Mode, bool NullGpuDevice) {
    Runs.clear();
    Hook = nullptr;
    if (NullGpuDevice)
      Runtime::setDeviceSourceForTesting([this] {
        NullGpu::Options O;
        O.Trace = true;
        auto G = std::make_unique<NullGpu>(std::move(O));
        Gpu = G.get();
        std::vector<std::unique_ptr<Device>> V;
        V.push_back(std::move(G));
        return V;
      });
    Options O = cleave_api_test::options(Devices);
    O.CpuThreads = 2;
    O.Tune.CoSchedule = Mode;
    cleave_api_test::restart(O);
    ASSERT_EQ(Runtime::get(RT).code(), ErrorCode::Success);
    Result R = RT->engine().addProgram(
        bundleBytes().data(), bundleBytes().size(),
        {{"__cleave_cpu_keep_desc", (void *)&KeepDesc}});
    ASSERT_TRUE(R.ok()) << R.toString();
  }

  /// keep(x -> out) over \p Blocks blocks of \p Threads on \p S.
  void keep(const float *X, float *Out, int N, uint32_t Blocks,
            uint32_t Threads, cudaStream_t S) {
    void *Args[] = {&X, &Out, &N};
    uint32_t G[3] = {Blocks, 1, 1}, B[3] = {Threads, 1, 1};
    Result R = api::launchKernel("keep", G, B, Args, 0, S);
    ASSERT_TRUE(R.ok()) << R.toString();
  }

  Runtime *RT = nullptr;
  NullGpu *Gpu = nullptr;
};

/// For each op of \p Ops, the ops complete before it starts: what its
/// stream ordered before it, what it waited for through events, and what
/// the host had waited for (a stream or the device synchronized, a
/// blocking copy returned) before it queued it; not the order in which the
/// null GPU happened to run them (at once).
std::vector<std::set<size_t>>
happensBefore(const std::vector<NullGpu::Op> &Ops) {
  std::map<StreamHandle, std::set<size_t>> Done;
  std::map<EventHandle, std::set<size_t>> Recorded;
  std::set<size_t> Host;
  std::vector<std::set<size_t>> Before(Ops.size());
  for (size_t I = 0; I < Ops.size(); ++I) {
    const NullGpu::Op &O = Ops[I];
    std::set<size_t> &D = Done[O.Stream];
    switch (O.What) {
    case NullGpu::Op::Record:
      Recorded[O.Event] = D;
      break;
    case NullGpu::Op::Wait:
      D.insert(Recorded[O.Event].begin(), Recorded[O.Event].end());
      break;
    case NullGpu::Op::Sync:
      if (O.Stream)
        Host.insert(D.begin(), D.end());
      else
        for (size_t J = 0; J < I; ++J)
          Host.insert(J);
      break;
    default:
      Before[I] = D;
      Before[I].insert(Host.begin(), Host.end());
      if (!O.Stream) {
        Host.insert(I); // blocking: complete when the call returns
      } else {
        D.insert(Before[I].begin(), Before[I].end());
        D.insert(I);
      }
    }
  }
  return Before;
}

TEST_F(CoScheduleApiTest, SlicesKeepEveryStreamAndEventDependencyOnANullGpu) {
  start("", CoScheduleMode::Always, true);
  ASSERT_TRUE(Gpu);
  cudaStream_t A, B, C;
  ASSERT_EQ(cudaStreamCreate(&A), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&B), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithPriority(&C, cudaStreamDefault, -2),
            cudaSuccess);
  ASSERT_TRUE(RT->coScheduler());
  cudaEvent_t E;
  ASSERT_EQ(cudaEventCreateWithFlags(&E, cudaEventDisableTiming), cudaSuccess);
  const int N = 2048 * 64;
  float *Buf[6];
  for (float *&P : Buf) {
    ASSERT_EQ(cudaMalloc(&P, N * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(P, 0, N * sizeof(float)), cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Gpu->clearTrace();
  // Each launch's block size names it in the trace.
  keep(Buf[0], Buf[1], N, 2048, 64, A); // K1
  ASSERT_EQ(cudaEventRecord(E, A), cudaSuccess);
  keep(Buf[4], Buf[5], N, 2048, 128, C); // K3, independent
  ASSERT_EQ(cudaStreamWaitEvent(B, E, 0), cudaSuccess);
  keep(Buf[1], Buf[2], N, 2048, 32, B);  // K2 after K1 (the event)
  keep(Buf[2], Buf[3], N, 2048, 96, 0);  // K4: the legacy stream, after all
  keep(Buf[3], Buf[0], N, 2048, 160, A); // K5 after K4 (legacy)
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  std::vector<NullGpu::Op> Ops = Gpu->ops();
  std::vector<std::set<size_t>> Before = happensBefore(Ops);
  std::map<uint32_t, std::vector<size_t>> Launches;
  for (size_t I = 0; I < Ops.size(); ++I)
    if (Ops[I].What == NullGpu::Op::Launch)
      Launches[Ops[I].BlockX].push_back(I);
  ASSERT_EQ(Launches.size(), 5u);
  uint64_t K1Blocks = 0;
  for (size_t I : Launches[64])
    K1Blocks += Ops[I].Blocks;
  EXPECT_EQ(K1Blocks, 2048u);
  EXPECT_GE(Launches[64].size(), 2u) << "K1 runs as slices";
  for (auto &[X, L] : Launches)
    for (size_t I : L)
      EXPECT_NE(Ops[I].Stream, Gpu->internalStream(0))
          << "slices run on co-run lanes";
  // C is the urgent stream: its slices' lanes have its priority, the
  // others' none.
  std::map<StreamHandle, int> Prio = Gpu->streamPriorities();
  for (auto &[X, L] : Launches)
    for (size_t I : L) {
      ASSERT_TRUE(Prio.count(Ops[I].Stream));
      EXPECT_EQ(Prio[Ops[I].Stream], X == 128 ? -2 : 0) << "block " << X;
    }
  // Every slice of each earlier launch is complete before any slice of the
  // later one starts.
  auto After = [&](uint32_t Later, uint32_t Earlier) {
    for (size_t J : Launches[Later])
      for (size_t I : Launches[Earlier])
        EXPECT_TRUE(Before[J].count(I))
            << "launch op " << J << " (block " << Later << ") does not wait "
            << "for op " << I << " (block " << Earlier << ")";
  };
  After(32, 64); // the event
  After(96, 64); // the legacy stream waits for every blocking stream
  After(96, 32);
  After(96, 128);
  After(160, 96); // and they for it
  After(160, 64); // stream order
}

TEST_F(CoScheduleApiTest, AHighPriorityStreamsSlicesRunAheadOfALowOnes) {
  start("cpu", CoScheduleMode::Always, false);
  int Least = 1, Greatest = 1;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&Least, &Greatest), cudaSuccess);
  EXPECT_EQ(Least, 0);
  EXPECT_LT(Greatest, 0);
  cudaStream_t Lo, Hi;
  ASSERT_EQ(cudaStreamCreateWithPriority(&Lo, cudaStreamNonBlocking, Least),
            cudaSuccess);
  ASSERT_EQ(
      cudaStreamCreateWithPriority(&Hi, cudaStreamNonBlocking, Greatest - 3),
      cudaSuccess);
  int P = 0;
  ASSERT_EQ(cudaStreamGetPriority(Hi, &P), cudaSuccess);
  EXPECT_EQ(P, Greatest) << "clamped to the range";
  const int N = 64 * 32;
  std::vector<float> X(N, 1.0f);
  float *PX, *PLo, *PHi;
  ASSERT_EQ(cudaMalloc(&PX, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&PLo, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&PHi, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(PX, X.data(), N * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_TRUE(RT->coScheduler());
  // The high-priority launch comes while the low-priority launch's first
  // slice runs, which waits for it to arrive.
  CoRunGate *G = RT->coScheduler();
  std::atomic<bool> LoStarted{false};
  Hook = [&](const void *Out, uint64_t First) {
    if (Out != PLo || First != 0)
      return;
    LoStarted = true;
    EXPECT_TRUE(waitFor([&] { return G->pending() == 2; }));
  };
  keep(PX, PLo, N, 64, 32, Lo);
  ASSERT_TRUE(waitFor([&] { return LoStarted.load(); }));
  keep(PX, PHi, N, 32, 64, Hi);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // The high-priority launch (8 slices of 4 blocks) runs ahead of the low
  // one's slices after its first (8 blocks): every high slice but the last
  // starts before the second low slice (the last one's start lets the low
  // launch go on, beside it).
  size_t LastEarlyHi = 0, FirstLateLo = Runs.size();
  for (size_t I = 0; I < Runs.size(); ++I) {
    if (Runs[I].first == PHi && Runs[I].second < 28)
      LastEarlyHi = I;
    if (Runs[I].first == PLo && Runs[I].second >= 8 &&
        FirstLateLo == Runs.size())
      FirstLateLo = I;
  }
  EXPECT_EQ(Runs.front().first, PLo);
  EXPECT_LT(LastEarlyHi, FirstLateLo)
      << "a low-priority slice ran while the high-priority launch had "
         "slices left";
  std::vector<float> Y(N);
  for (float *Out : {PLo, PHi}) {
    ASSERT_EQ(
        cudaMemcpy(Y.data(), Out, N * sizeof(float), cudaMemcpyDeviceToHost),
        cudaSuccess);
    for (float V : Y)
      ASSERT_EQ(V, 2.0f);
  }
}

TEST_F(CoScheduleApiTest, ASlicedLaunchIsOneEngineLaunchOnANullGpu) {
  // Two streams' launches of 2048 blocks, every one held and sliced: the
  // engine decides, plans and waits once per launch, not once per slice.
  // The host time per slice is printed (docs/coschedule.md quotes it).
  start("", CoScheduleMode::Always, true);
  ASSERT_TRUE(Gpu);
  cudaStream_t A, B;
  ASSERT_EQ(cudaStreamCreate(&A), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&B), cudaSuccess);
  CoRunGate *G = RT->coScheduler();
  ASSERT_TRUE(G);
  const int N = 2048 * 64, Launches = 20;
  float *Buf[4];
  for (float *&P : Buf) {
    ASSERT_EQ(cudaMalloc(&P, N * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(P, 0, N * sizeof(float)), cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  uint64_t Slices0 = G->slicesRun(), Engine0 = G->engineLaunches();
  Gpu->clearTrace();
  auto Start = std::chrono::steady_clock::now();
  for (int I = 0; I < Launches; ++I) {
    keep(Buf[0], Buf[1], N, 2048, 64, A);
    keep(Buf[2], Buf[3], N, 2048, 64, B);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  double Us = std::chrono::duration<double, std::micro>(
                  std::chrono::steady_clock::now() - Start)
                  .count();
  uint64_t Slices = G->slicesRun() - Slices0;
  uint64_t EngineLaunches = G->engineLaunches() - Engine0;
  std::printf("co-scheduled slices on a null GPU: %llu slice(s) of %d "
              "launch(es), %llu engine launch(es), %.1f us of host time a "
              "slice\n",
              (unsigned long long)Slices, 2 * Launches,
              (unsigned long long)EngineLaunches, Us / double(Slices));
  EXPECT_GT(Slices, uint64_t(2 * Launches));
  EXPECT_EQ(EngineLaunches, uint64_t(2 * Launches));
  // On the trace: the slices' lanes and one host wait for a lane per
  // launch (not per slice); a lane's wait for an event is for one recorded
  // on another lane (a partner's piece; CoRunGateTest checks the pairs).
  std::vector<NullGpu::Op> Ops = Gpu->ops();
  std::set<StreamHandle> Lanes;
  uint64_t Pieces = 0;
  for (const NullGpu::Op &O : Ops)
    if (O.What == NullGpu::Op::Launch) {
      Lanes.insert(O.Stream);
      ++Pieces;
    }
  EXPECT_EQ(Pieces, Slices);
  EXPECT_GE(Lanes.size(), 2u);
  std::map<EventHandle, StreamHandle> RecordedOn;
  unsigned LaneSyncs = 0, CrossWaits = 0;
  for (const NullGpu::Op &O : Ops) {
    if (O.What == NullGpu::Op::Record)
      RecordedOn[O.Event] = O.Stream;
    if (O.What == NullGpu::Op::Sync && Lanes.count(O.Stream))
      ++LaneSyncs;
    if (O.What == NullGpu::Op::Wait && Lanes.count(O.Stream)) {
      auto It = RecordedOn.find(O.Event);
      ASSERT_NE(It, RecordedOn.end()) << "a wait for an event never recorded";
      EXPECT_NE(It->second, O.Stream);
      ++CrossWaits;
    }
  }
  EXPECT_EQ(LaneSyncs, unsigned(2 * Launches));
  (void)CrossWaits;
  cudaStreamDestroy(A);
  cudaStreamDestroy(B);
}

/// Random programs of three streams that pass buffers to each other through
/// events, each step writing a buffer of its own, against the same steps
/// run in program order in plain C++.
void randomPrograms(CoScheduleApiTest &T, unsigned Seed) {
  std::mt19937 Rng(Seed);
  const int N = 64 * 64, Steps = 24;
  cudaStream_t S[3];
  for (cudaStream_t &X : S)
    ASSERT_EQ(cudaStreamCreate(&X), cudaSuccess);
  std::vector<std::vector<float>> Ref;
  std::vector<float *> Bufs;
  std::uniform_real_distribution<float> U(-1, 1);
  int Cur[3];
  for (int I = 0; I < 3; ++I) {
    std::vector<float> V(N);
    for (float &X : V)
      X = U(Rng);
    float *P;
    ASSERT_EQ(cudaMalloc(&P, N * sizeof(float)), cudaSuccess);
    ASSERT_EQ(
        cudaMemcpy(P, V.data(), N * sizeof(float), cudaMemcpyHostToDevice),
        cudaSuccess);
    Cur[I] = int(Bufs.size());
    Bufs.push_back(P);
    Ref.push_back(std::move(V));
  }
  for (int K = 0; K < Steps; ++K) {
    float *P;
    ASSERT_EQ(cudaMalloc(&P, N * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(P, 0, N * sizeof(float)), cudaSuccess);
    Bufs.push_back(P);
    Ref.emplace_back(N, 0.0f);
  }
  std::vector<cudaEvent_t> Events;
  for (int K = 0; K < Steps; ++K) {
    int St = int(Rng() % 3), Src = Cur[St];
    if (Rng() % 3 == 0) { // another stream's latest buffer, through an event
      int From = int(Rng() % 3);
      cudaEvent_t E;
      ASSERT_EQ(cudaEventCreate(&E), cudaSuccess);
      ASSERT_EQ(cudaEventRecord(E, S[From]), cudaSuccess);
      ASSERT_EQ(cudaStreamWaitEvent(S[St], E, 0), cudaSuccess);
      Events.push_back(E);
      Src = Cur[From];
    }
    int Dst = 3 + K;
    uint32_t Threads = Rng() % 2 ? 64 : 32;
    T.keep(Bufs[Src], Bufs[Dst], N, (N + Threads - 1) / Threads, Threads,
           S[St]);
    for (int I = 0; I < N; ++I)
      if (Ref[Src][I] > 0)
        Ref[Dst][I] = Ref[Src][I] * 2;
    Cur[St] = Dst;
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> Y(N);
  for (size_t B = 0; B < Bufs.size(); ++B) {
    ASSERT_EQ(cudaMemcpy(Y.data(), Bufs[B], N * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(Y, Ref[B]) << "buffer " << B << ", seed " << Seed;
  }
  for (cudaEvent_t E : Events)
    cudaEventDestroy(E);
  for (cudaStream_t X : S)
    cudaStreamDestroy(X);
}

TEST_F(CoScheduleApiTest, RandomProgramsOfThreeStreamsGiveTheSerialResults) {
  for (CoScheduleMode M : {CoScheduleMode::Always, CoScheduleMode::On}) {
    for (unsigned Seed = 1; Seed <= 4; ++Seed) {
      start("cpu", M, false);
      randomPrograms(*this, Seed);
      if (HasFatalFailure())
        return;
    }
  }
}

} // namespace
#endif
