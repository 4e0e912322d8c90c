//===- EngineModelTest.cpp - The engine's model policy on CPU devices -----===//
//
// Part of Cleave. The model policy (ModelPartitioner.h) inside the engine with real
// buffers and a real bundle (unittests/Inputs/engine_model_test.ll through
// the compiler's bundle writer at build time; a hand-written CPU variant):
// results against a plain reference, CPU devices kept on one device (they
// share the executor), residency
// deciding which device runs, ranges timed into the performance cache and
// persisted, and a corrupt cache file reported once.
//
//===----------------------------------------------------------------------===//
#include "../TestInputs.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/Fault.h"
#include "cleave/rt/ModelPartitioner.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"
#include "cleave/rt/PerfCache.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <unistd.h>

using namespace cleave::rt;

namespace {

const std::string &bundleBytes() {
  static const std::string Bytes =
      cleave::test::testBundle("engine_model_test");
  return Bytes;
}

void vaddCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
             uint64_t Count, void *) {
  const float *A = *static_cast<const float **>(Args[0]);
  const float *B = *static_cast<const float **>(Args[1]);
  float *C = *static_cast<float **>(Args[2]);
  int N = *static_cast<int *>(Args[3]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N)
        C[I] = A[I] + B[I];
    }
}
const cleave_cpu_kernel_desc VaddDesc = {"vadd", vaddCpu, 0, 0, 4, 0};

void columnCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
               uint64_t Count, void *) {
  const float *In = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int Stride = *static_cast<int *>(Args[2]), N = *static_cast<int *>(Args[3]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N)
        Out[I] = In[I * Stride];
    }
}
const cleave_cpu_kernel_desc ColumnDesc = {"column", columnCpu, 0, 0, 4, 0};

/// A fresh directory for the performance cache (Options::CacheDir) for the
/// life of a test, removed after.
class ScopedCacheDir {
public:
  explicit ScopedCacheDir(const std::string &Name)
      : Dir("/tmp/cleave-" + Name + "-" + std::to_string(::getpid())) {
    EXPECT_EQ(std::system(("rm -rf '" + Dir + "'").c_str()), 0);
  }
  ~ScopedCacheDir() { (void)std::system(("rm -rf '" + Dir + "'").c_str()); }
  const std::string Dir;
};

/// The options of an engine whose performance cache is in \p Dir.
Options cacheIn(const std::string &Dir) {
  Options O;
  O.CacheDir = Dir;
  return O;
}

/// The log that CLEAVE_LOG=\p Word sets ("": none).
LogOptions logOf(std::string_view Word) {
  LogOptions L;
  L.Plan = Word == "plan";
  L.Phases = Word == "phases";
  return L;
}

/// The issue mode CLEAVE_TUNE=issue=\p Word sets.
IssueMode issueMode(std::string_view Word) {
  return Word == "parallel" ? IssueMode::Parallel
         : Word == "serial" ? IssueMode::Serial
                            : IssueMode::Auto;
}

class EngineModelTest : public ::testing::Test {
protected:
  void SetUp() override {
    Cache = std::make_unique<ScopedCacheDir>("engine-model");
    Dir = Cache->Dir;
    ASSERT_FALSE(bundleBytes().empty());
    ASSERT_TRUE(DeviceRegistry::create("cpu,cpu,cpu", Reg,
                                       RegistryOptions{"none"})
                    .ok());
    Bufs = std::make_unique<BufferManager>(Reg->devices());
    Exec = std::make_unique<CpuExecutor>(2);
    Eng = std::make_unique<Engine>(*Bufs, *Exec, PartitionPolicy::Model,
                                   cacheIn(Dir));
    ASSERT_TRUE(Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                                {{"__cleave_cpu_vadd_desc", (void *)&VaddDesc}})
                    .ok());
    K = Eng->findKernel("vadd");
    ASSERT_NE(K, nullptr);
  }
  void TearDown() override {
    Eng.reset();
    Bufs.reset();
    Reg.reset();
    Cache.reset();
  }

  float *upload(const std::vector<float> &V) {
    void *P = nullptr;
    EXPECT_TRUE(Bufs->allocate(V.size() * sizeof(float), P).ok());
    EXPECT_TRUE(Bufs->memcpy(P, V.data(), V.size() * sizeof(float),
                             MemcpyKind::HostToDevice)
                    .ok());
    return static_cast<float *>(P);
  }
  std::vector<float> download(const float *P, size_t N) {
    std::vector<float> V(N);
    EXPECT_TRUE(Bufs->memcpy(V.data(), P, N * sizeof(float),
                             MemcpyKind::DeviceToHost)
                    .ok());
    return V;
  }
  /// c = a + b over n elements, with the policy or an explicit partition.
  LaunchPlan run(float *&A, float *&B, float *&C, int &N,
                 std::vector<PartitionRange> Partition = {}) {
    void *Args[] = {&A, &B, &C, &N};
    KernelLaunchRequest Req;
    Req.Kernel = K;
    Req.Grid[0] = unsigned(N + 127) / 128;
    Req.Block[0] = 128;
    Req.Args = Args;
    Req.Partition = std::move(Partition);
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    EXPECT_TRUE(R.ok()) << R.toString();
    return Plan;
  }

  std::unique_ptr<ScopedCacheDir> Cache;
  std::string Dir;
  std::unique_ptr<DeviceRegistry> Reg;
  std::unique_ptr<CpuExecutor> Exec;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
  const KernelHandle *K = nullptr;
};

TEST_F(EngineModelTest, CorrectOnOneCpuDeviceAndTimedIntoTheCache) {
  int N = 100000;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I)
    A[I] = float(I), B[I] = float(3 * I);
  float *PA = upload(A), *PB = upload(B), *PC = upload(std::vector<float>(N));
  testing::internal::CaptureStderr();
  Eng->setLog(logOf("plan"));
  LaunchPlan Plan = run(PA, PB, PC, N);
  Eng->setLog(LogOptions());
  std::string Log = testing::internal::GetCapturedStderr();
  // The CPU devices share the executor: splitting only adds copies.
  ASSERT_EQ(Plan.Runs.size(), 1u) << Plan.describe();
  EXPECT_EQ(Plan.Runs[0].DeviceName, "cpu0");
  EXPECT_EQ(Plan.BytesMoved, 0u);
  std::vector<float> Got = download(PC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], float(4 * I)) << I;
  EXPECT_NE(Log.find("model policy: device profile defaults"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("plan vadd@"), std::string::npos) << Log;
  EXPECT_NE(Log.find("splitting does not pay"), std::string::npos) << Log;

  // The range was timed: after a flush the cache file holds cpu0's row.
  ASSERT_TRUE(Eng->flushPerformanceCache().ok());
  std::string Cmd = "ls '" + Dir + "'/perf-defaults-*.json > /dev/null";
  ASSERT_EQ(std::system(Cmd.c_str()), 0);
  std::string Name;
  {
    std::string L = "ls '" + Dir + "'/perf-defaults-*.json > '" + Dir +
                    "/name'";
    ASSERT_EQ(std::system(L.c_str()), 0);
    std::ifstream In(Dir + "/name");
    std::getline(In, Name);
  }
  PerfCache C;
  ASSERT_TRUE(C.load(Name).ok());
  EXPECT_EQ(C.numTables(), 1u);
  std::string Text = C.serialize();
  // One table for every CPU device: they run on the same executor.
  EXPECT_NE(Text.find("cpu executor (2 threads)"), std::string::npos) << Text;
  EXPECT_NE(Text.find("vadd@"), std::string::npos) << Text;

  // A second launch: the same decision, and its row is now measured.
  testing::internal::CaptureStderr();
  Eng->setLog(logOf("plan"));
  Plan = run(PA, PB, PC, N);
  Eng->setLog(LogOptions());
  Log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(Plan.Runs.size(), 1u);
  EXPECT_NE(Log.find("measured (1 sample(s))"), std::string::npos) << Log;
}

TEST_F(EngineModelTest, PreparedEarlyTheModelStillNamesItsProfileAtTheFirstDecision) {
  // Engine::prepare() loads the profile and the cache before any launch
  // (a runtime does it on a thread at start); CLEAVE_LOG=plan names them
  // at the first decision all the same, and once.
  Eng->prepare();
  int N = 1000;
  float *PA = upload(std::vector<float>(N, 1.0f));
  float *PB = upload(std::vector<float>(N, 2.0f));
  float *PC = upload(std::vector<float>(N));
  for (int Launch = 0; Launch < 2; ++Launch) {
    testing::internal::CaptureStderr();
    Eng->setLog(logOf("plan"));
    run(PA, PB, PC, N);
    Eng->setLog(LogOptions());
    std::string Log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(Log.find("cleave: model policy: device profile") !=
                  std::string::npos,
              Launch == 0)
        << Log;
  }
  EXPECT_EQ(download(PC, N), std::vector<float>(N, 3.0f));
}

TEST_F(EngineModelTest, ResidencyPicksTheDeviceHoldingTheData) {
  int N = 50000;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I)
    A[I] = float(I % 97), B[I] = float(I % 13);
  float *PA = upload(A), *PB = upload(B);
  float *PC = upload(std::vector<float>(N));
  float *PD = upload(std::vector<float>(N));
  // c = a + b runs on cpu2 (explicit): c is valid only there.
  unsigned Blocks = unsigned(N + 127) / 128;
  LaunchPlan P1 = run(PA, PB, PC, N, {{2, 0, Blocks}});
  ASSERT_EQ(P1.Runs.size(), 1u);
  // d = c + c: cpu2 holds c, the others would copy it; the model runs it
  // there, moving nothing.
  LaunchPlan P2 = run(PC, PC, PD, N);
  ASSERT_EQ(P2.Runs.size(), 1u) << P2.describe();
  EXPECT_EQ(P2.Runs[0].DeviceName, "cpu2") << P2.describe();
  EXPECT_EQ(P2.BytesMoved, 0u) << P2.describe();
  std::vector<float> Got = download(PD, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], 2 * (A[I] + B[I])) << I;
}

TEST_F(EngineModelTest, CorruptCacheIsReportedOnce) {
  // The planner is made at the first model launch; its file is the one
  // this engine's devices and the default profile name.
  ASSERT_EQ(std::system(("mkdir -p '" + Dir + "'").c_str()), 0);
  int N = 1000;
  float *PA = upload(std::vector<float>(N, 1.0f));
  float *PB = upload(std::vector<float>(N, 2.0f));
  float *PC = upload(std::vector<float>(N));
  run(PA, PB, PC, N);
  ASSERT_TRUE(Eng->flushPerformanceCache().ok());
  // Corrupt every cache file, then start a new engine over it.
  ASSERT_EQ(std::system(("for f in '" + Dir +
                         "'/perf-*.json; do echo garbage > \"$f\"; done")
                            .c_str()),
            0);
  Eng = std::make_unique<Engine>(*Bufs, *Exec, PartitionPolicy::Model,
                                 cacheIn(Dir));
  ASSERT_TRUE(Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                              {{"__cleave_cpu_vadd_desc", (void *)&VaddDesc}})
                  .ok());
  K = Eng->findKernel("vadd");
  testing::internal::CaptureStderr();
  run(PA, PB, PC, N);
  run(PA, PB, PC, N);
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("ignoring the performance cache"), std::string::npos)
      << Err;
  EXPECT_EQ(std::count(Err.begin(), Err.end(), '\n'), 1) << Err;
  EXPECT_EQ(download(PC, N), std::vector<float>(N, 3.0f));
  // Rewritten valid.
  ASSERT_TRUE(Eng->flushPerformanceCache().ok());
  EXPECT_EQ(std::system(("grep -q cleave-perf-cache '" + Dir +
                         "'/perf-*.json")
                            .c_str()),
            0);
}

TEST_F(EngineModelTest, ALaunchTooShortToSplitIsSearchedRarely) {
  // A search costs far more host time than a launch this short, and cannot
  // split it: launch 1 finds it too short on seeded rows, launch 2 on its
  // measured time, 3-18 keep launch 2's decision, 19 searches again
  // (correct results every time). The bound is 1 ms, not the default
  // 0.1 ms: launch 1's measured time is launch 2's input, and run first in
  // a process it includes starting the CPU executor's threads (0.36 ms on
  // the build VM, the test alone).
  Eng->setMinSplitMs(1.0);
  int N = 512;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I)
    A[I] = float(I), B[I] = float(2 * I);
  float *PA = upload(A), *PB = upload(B), *PC = upload(std::vector<float>(N));
  for (int Launch = 1; Launch <= 19; ++Launch) {
    testing::internal::CaptureStderr();
    Eng->setLog(logOf("plan"));
    (void)run(PA, PB, PC, N);
    Eng->setLog(LogOptions());
    std::string Log = testing::internal::GetCapturedStderr();
    bool Searched = Log.find("  search: ") != std::string::npos;
    EXPECT_EQ(Searched, Launch <= 2 || Launch == 19) << Launch << "\n"
                                                      << Log;
    if (Launch <= 2)
      EXPECT_NE(Log.find("too short to split"), std::string::npos) << Log;
    else if (!Searched)
      EXPECT_NE(Log.find("the decision of launch 2, kept until launch 19"),
                std::string::npos)
          << Launch << "\n" << Log;
    std::vector<float> Got = download(PC, N);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], float(3 * I)) << Launch << " " << I;
  }
}

TEST_F(EngineModelTest, DecisionsAreCachedBetweenPlannedSearches) {
  // Launches 1-4 search, 5-8 run launch 4's decision (correct results
  // every time), 9 searches again. (Large enough not to be too short to
  // split, which is searched more rarely: the test above.)
  int N = 3 << 18;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I)
    A[I] = float(I), B[I] = float(2 * I);
  float *PA = upload(A), *PB = upload(B), *PC = upload(std::vector<float>(N));
  for (int Launch = 1; Launch <= 9; ++Launch) {
    testing::internal::CaptureStderr();
    Eng->setLog(logOf("plan"));
    LaunchPlan Plan = run(PA, PB, PC, N);
    Eng->setLog(LogOptions());
    std::string Log = testing::internal::GetCapturedStderr();
    bool Kept = Log.find("the decision of launch 4, kept until launch 9") !=
                std::string::npos;
    EXPECT_EQ(Kept, Launch >= 5 && Launch <= 8) << Launch << "\n" << Log;
    // A search keeps the launch on one device: splitting does not pay.
    EXPECT_EQ(Log.find("splitting does not pay") != std::string::npos,
              !Kept)
        << Launch << "\n" << Log;
    // A search says what it cost the host; a kept decision costs none.
    EXPECT_EQ(Log.find("  search: ") != std::string::npos, !Kept)
        << Launch << "\n" << Log;
    std::vector<float> Got = download(PC, N);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], float(3 * I)) << Launch << " " << I;
  }
  // The launch shape is the key: another scalar argument with the same
  // grid and buffers keeps launch 9's decision (and is correct).
  auto Logged = [&](float *X, float *Y, float *Z, int Elems) {
    testing::internal::CaptureStderr();
    Eng->setLog(logOf("plan"));
    (void)run(X, Y, Z, Elems);
    Eng->setLog(LogOptions());
    return testing::internal::GetCapturedStderr();
  };
  std::vector<float> Twos(N, 2.0f);
  float *PD = upload(Twos);
  ASSERT_EQ(Bufs->memset(PC, 0, N * sizeof(float)).code(), ErrorCode::Success);
  std::string Log = Logged(PA, PB, PC, N - 1);
  EXPECT_NE(Log.find("the decision of launch 9, kept until launch 19"),
            std::string::npos)
      << Log;
  std::vector<float> Got = download(PC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], I < N - 1 ? float(3 * I) : 0.0f) << I;
  // A grid of the same size class (PerfKey::GridClass) keeps a decision
  // to run whole on one device, at its own block count; a grid of another
  // class, or another buffer, is another entry.
  EXPECT_NE(Logged(PA, PB, PC, N - 1000).find("kept until"),
            std::string::npos);
  Got = download(PC, N);
  for (int I = 0; I < N - 1000; ++I)
    ASSERT_EQ(Got[I], float(3 * I)) << I;
  EXPECT_EQ(Logged(PA, PB, PC, N / 4).find("kept until"), std::string::npos);
  EXPECT_EQ(Logged(PA, PD, PC, N).find("kept until"), std::string::npos);
  Got = download(PC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], float(I + 2)) << I;
}

/// Grids that shrink and grow by one block per launch (elimination loops):
/// every launch runs every block of its grid, under each policy, on one to
/// three CPU devices, with a fresh performance cache and with the one the
/// previous engine wrote. c += b in place over the first n elements, so a
/// dropped or partial launch leaves a wrong count in some element.
TEST(EngineGridTest, GridsThatShrinkAndGrowByOneBlockRunEveryBlock) {
  ASSERT_FALSE(bundleBytes().empty());
  ScopedCacheDir Cache("engine-grid");
  std::mt19937 Rng(25);
  constexpr int Block = 128, MaxBlocks = 120;
  // 40 launches shrinking by one block, 40 growing back, 40 at random.
  std::vector<int> Grids;
  for (int G = MaxBlocks; G > MaxBlocks - 40; --G)
    Grids.push_back(G);
  for (int G = MaxBlocks - 40; G < MaxBlocks; ++G)
    Grids.push_back(G);
  for (int I = 0; I < 40; ++I)
    Grids.push_back(1 + int(Rng() % MaxBlocks));
  for (const char *Devices : {"cpu", "cpu,cpu", "cpu,cpu,cpu"})
    for (PartitionPolicy Policy :
         {PartitionPolicy::Model, PartitionPolicy::Even})
      for (int Round = 0; Round < 2; ++Round) { // fresh cache, then reused
        SCOPED_TRACE(std::string(Devices) + " policy " +
                     std::to_string(int(Policy)) + " round " +
                     std::to_string(Round));
        std::unique_ptr<DeviceRegistry> Reg;
        ASSERT_TRUE(
            DeviceRegistry::create(Devices, Reg, RegistryOptions{"none"})
                .ok());
        BufferManager Bufs(Reg->devices());
        CpuExecutor Exec(2);
        auto Eng = std::make_unique<Engine>(Bufs, Exec, Policy);
        ASSERT_TRUE(
            Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                            {{"__cleave_cpu_vadd_desc", (void *)&VaddDesc}})
                .ok());
        const KernelHandle *K = Eng->findKernel("vadd");
        ASSERT_NE(K, nullptr);
        const int Elems = MaxBlocks * Block;
        std::vector<float> B(Elems), Want(Elems, 0.0f);
        for (float &X : B)
          X = float(1 + Rng() % 9);
        void *PB = nullptr, *PC = nullptr;
        ASSERT_TRUE(Bufs.allocate(Elems * sizeof(float), PB).ok());
        ASSERT_TRUE(Bufs.allocate(Elems * sizeof(float), PC).ok());
        ASSERT_TRUE(Bufs.memcpy(PB, B.data(), Elems * sizeof(float),
                                MemcpyKind::HostToDevice)
                        .ok());
        ASSERT_TRUE(Bufs.memcpy(PC, Want.data(), Elems * sizeof(float),
                                MemcpyKind::HostToDevice)
                        .ok());
        for (size_t L = 0; L < Grids.size(); ++L) {
          int N = Grids[L] * Block;
          float *C = static_cast<float *>(PC), *Bp = static_cast<float *>(PB);
          void *Args[] = {&C, &Bp, &C, &N};
          KernelLaunchRequest Req;
          Req.Kernel = K;
          Req.Grid[0] = unsigned(Grids[L]);
          Req.Block[0] = Block;
          Req.Args = Args;
          LaunchPlan Plan;
          Result R = Eng->launch(Req, Plan);
          ASSERT_TRUE(R.ok()) << "launch " << L << ": " << R.toString();
          uint64_t Ran = 0;
          for (const LaunchPlan::Run &Run : Plan.Runs)
            Ran += Run.Count;
          ASSERT_EQ(Ran, uint64_t(Grids[L])) << "launch " << L;
          for (int I = 0; I < N; ++I)
            Want[I] += B[I];
          if (L % 10 == 9 || L + 1 == Grids.size()) {
            std::vector<float> Got(Elems);
            ASSERT_TRUE(Bufs.memcpy(Got.data(), PC, Elems * sizeof(float),
                                    MemcpyKind::DeviceToHost)
                            .ok());
            for (int I = 0; I < Elems; ++I)
              ASSERT_EQ(Got[I], Want[I]) << "launch " << L << " element "
                                         << I;
          }
        }
        ASSERT_TRUE(Eng->flushPerformanceCache().ok());
      }
}

/// The model policy over null GPUs (cleave/rt/NullGpu.h: nothing runs, the
/// event timings are the test's), for what only GPUs do: their first timed
/// range is dropped, and GPUs of one model share a table.
class EngineNullGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    Cache = std::make_unique<ScopedCacheDir>("engine-nullgpu");
    Dir = Cache->Dir;
    Opts = cacheIn(Dir);
  }
  void TearDown() override {
    Eng.reset();
    Bufs.reset();
    Gpus.clear();
    Reg.reset();
    Cache.reset();
  }
  /// The devices: the host CPU first when \p WithCpu, then null GPUs.
  void start(std::vector<NullGpu::Options> GpuSpecs, bool WithCpu = false) {
    std::vector<Device *> Devs;
    if (WithCpu) {
      ASSERT_TRUE(
          DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
      Devs = Reg->devices();
    }
    for (NullGpu::Options &O : GpuSpecs) {
      O.Trace = TraceGpus;
      Gpus.push_back(std::make_unique<NullGpu>(std::move(O)));
      Devs.push_back(Gpus.back().get());
    }
    Bufs = std::make_unique<BufferManager>(Devs);
    Eng = std::make_unique<Engine>(*Bufs, Exec, PartitionPolicy::Model, Opts);
    // Null GPUs run in nanoseconds: every launch would be too short to
    // split, and these tests are about how splits are decided.
    Eng->setMinSplitMs(0);
    ASSERT_TRUE(Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                                {{"__cleave_cpu_vadd_desc", (void *)&VaddDesc},
                                 {"__cleave_cpu_column_desc",
                                  (void *)&ColumnDesc}})
                    .ok());
    K = Eng->findKernel("vadd");
    ASSERT_NE(K, nullptr);
    for (float *&P : Ptr) {
      void *V = nullptr;
      ASSERT_TRUE(Bufs->allocate(N * sizeof(float), V).ok());
      P = static_cast<float *>(V);
    }
  }
  /// The program's cudaMemcpy of \p In into both inputs.
  void uploadInputs(const std::vector<float> &In) {
    for (int I = 0; I < 2; ++I)
      ASSERT_TRUE(Bufs->memcpy(Ptr[I], In.data(), N * sizeof(float),
                               MemcpyKind::HostToDevice)
                      .ok());
  }
  /// \p Kern over N elements in blocks of 128, which must succeed.
  LaunchPlan launchOver(const KernelHandle *Kern, void **Args) {
    KernelLaunchRequest Req;
    Req.Kernel = Kern;
    Req.Grid[0] = unsigned(N + 127) / 128;
    Req.Block[0] = 128;
    Req.Args = Args;
    Req.MayDefer = MayDefer;
    Req.QueuedBehind = QueuedBehind;
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    EXPECT_TRUE(R.ok()) << R.toString();
    return Plan;
  }
  /// vadd(a, b, c), or on the buffers given.
  LaunchPlan launch(float *A = nullptr, float *B = nullptr,
                    float *C = nullptr) {
    float *X = A ? A : Ptr[0], *Y = B ? B : Ptr[1], *Z = C ? C : Ptr[2];
    void *Args[] = {&X, &Y, &Z, &N};
    return launchOver(K, Args);
  }
  /// The tables written to the cache directory.
  PerfCache flushed() {
    PerfCache C;
    EXPECT_TRUE(Eng->flushPerformanceCache().ok());
    std::string L = "ls '" + Dir + "'/perf-*.json > '" + Dir + "/name'";
    EXPECT_EQ(std::system(L.c_str()), 0);
    std::ifstream In(Dir + "/name");
    std::string Name;
    std::getline(In, Name);
    EXPECT_TRUE(C.load(Name).ok()) << Name;
    return C;
  }

  /// Four null GPUs under the even policy, and two inputs of random
  /// values in \p In written to a and b with cudaMemcpy.
  void startEvenOverFourGpus(std::vector<float> (&In)[2], std::mt19937 &Rng) {
    start({{0}, {1}, {2}, {3}});
    Eng = std::make_unique<Engine>(*Bufs, Exec, PartitionPolicy::Even, Opts);
    ASSERT_TRUE(
        Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                        {{"__cleave_cpu_vadd_desc", (void *)&VaddDesc}})
            .ok());
    K = Eng->findKernel("vadd");
    for (int I = 0; I < 2; ++I) {
      In[I].resize(N);
      for (float &X : In[I])
        X = float(Rng() % 100000);
      ASSERT_TRUE(Bufs->memcpy(Ptr[I], In[I].data(), N * sizeof(float),
                               MemcpyKind::HostToDevice)
                      .ok());
    }
  }
  /// Each run's device holds exactly \p In's bytes of its blocks in both
  /// inputs, and validity says so.
  void expectReplicasHoldInputs(const LaunchPlan &Plan,
                                const std::vector<float> (&In)[2]) {
    for (const LaunchPlan::Run &R : Plan.Runs)
      for (int I = 0; I < 2; ++I) {
        BufferManager::Resolved Res;
        ASSERT_TRUE(Bufs->resolve(Ptr[I], Res).ok());
        DeviceAddr A = 0;
        ASSERT_TRUE(Bufs->addressOn(*Res.Buf, R.Device, 0, A).ok());
        uint64_t Lo = R.First * 128,
                 Hi = std::min<uint64_t>(N, (R.First + R.Count) * 128);
        const float *Got = reinterpret_cast<const float *>(A);
        EXPECT_TRUE(
            std::equal(In[I].begin() + Lo, In[I].begin() + Hi, Got + Lo))
            << R.DeviceName << " input " << I;
        EXPECT_TRUE(Res.Buf->holds(R.Device, {Lo * 4, Hi * 4}));
      }
  }

  /// Four null GPUs, the even policy, and \p In in a, for blur().
  void startBlur(const std::vector<float> &In) {
    start({{0}, {1}, {2}, {3}});
    Eng = std::make_unique<Engine>(*Bufs, Exec, PartitionPolicy::Even, Opts);
    ASSERT_TRUE(
        Eng->addProgram(bundleBytes().data(), bundleBytes().size(), {}).ok());
    Blur = Eng->findKernel("blur");
    ASSERT_NE(Blur, nullptr);
    ASSERT_TRUE(Bufs->memcpy(Ptr[0], In.data(), N * sizeof(float),
                             MemcpyKind::HostToDevice)
                    .ok());
  }
  /// blur(From, To) over N elements.
  LaunchPlan blur(float *From, float *To) {
    void *Args[] = {&From, &To, &N};
    return launchOver(Blur, Args);
  }

  int N = 1 << 22; // 32768 blocks of 128
  /// NullGpu::Options::Trace for start(); KernelLaunchRequest::MayDefer.
  bool TraceGpus = false, MayDefer = false;
  /// KernelLaunchRequest::QueuedBehind.
  std::function<bool()> QueuedBehind;
  std::unique_ptr<ScopedCacheDir> Cache;
  std::string Dir;
  /// The engine's options (start()); SetUp leaves the defaults with the
  /// test's cache.
  Options Opts;
  CpuExecutor Exec{8};
  std::unique_ptr<DeviceRegistry> Reg;
  std::vector<std::unique_ptr<NullGpu>> Gpus;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
  const KernelHandle *K = nullptr, *Blur = nullptr;
  float *Ptr[3] = {};
};

TEST_F(EngineNullGpuTest, TheFirstTimingOfAKernelOnAGpuIsNotRecorded) {
  // Two GPUs of different models (a table each) at 10^6 blocks/ms; gpu0's
  // first timed range takes a second (in CUDA: lazy module loading inside
  // the first launch). Recorded, that outlier would stay in gpu0's table.
  NullGpu::Options G0{0, "model A"}, G1{1, "model B"};
  G0.Timing = [](uint64_t Blocks, unsigned Call) {
    return Call == 0 ? 1000.0f : float(double(Blocks) / 1e6);
  };
  start({G0, G1});
  for (int I = 0; I < 6; ++I)
    (void)launch();
  PerfCache C = flushed();
  ASSERT_EQ(C.tables().size(), 2u) << C.serialize();
  for (const auto &[Dev, Tables] : C.tables())
    for (const auto &[Key, Rows] : Tables) {
      EXPECT_FALSE(Rows.empty()) << Dev;
      for (const auto &[Blocks, S] : Rows)
        EXPECT_NEAR(S.BlocksPerMs, 1e6, 1e4)
            << Dev << " row " << Blocks << "\n" << C.serialize();
    }
  // Both equal GPUs, so the decision is an even split.
  LaunchPlan Plan = launch();
  ASSERT_EQ(Plan.Runs.size(), 2u) << Plan.describe();
  uint64_t Total = uint64_t(N + 127) / 128;
  for (const LaunchPlan::Run &R : Plan.Runs)
    EXPECT_NEAR(double(R.Count), Total / 2.0, Total * 0.1) << Plan.describe();
}

TEST_F(EngineNullGpuTest, ACpuShareIsChargedARoundTripForEveryCopyFromAGpu) {
  // A one-block launch that reads one float of each of 32 rows that only
  // the GPU holds (a dynamic program's diagonal): on the CPU that is 32
  // synchronous copies, not one. The GPU's kernel takes 50 us, longer than
  // the CPU with a single copy's wait would (its run plus about 20 us), far
  // shorter than with 32 of them. On the H200, an edit distance's first
  // and last diagonals went to cpu0 at 45-120 us each against 13 us on
  // gpu0 when only one wait was charged.
  NullGpu::Options G{0, "model A"};
  G.Timing = [](uint64_t, unsigned) { return 0.05f; };
  start({G}, /*WithCpu=*/true);
  const Location Cpu = 0, Gpu = 1;
  {
    KernelLaunchRequest Req; // Ptr[2] = a + b, written on the GPU only
    Req.Kernel = K;
    Req.Grid[0] = unsigned(N + 127) / 128;
    Req.Block[0] = 128;
    void *Args[] = {&Ptr[0], &Ptr[1], &Ptr[2], &N};
    Req.Args = Args;
    Req.Partition = {{Gpu, 0, Req.Grid[0]}};
    LaunchPlan Plan;
    ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  }
  const KernelHandle *Column = Eng->findKernel("column");
  ASSERT_NE(Column, nullptr);
  int Stride = 1024, Rows = 32;
  for (int L = 0; L < 6; ++L) {
    KernelLaunchRequest Req;
    Req.Kernel = Column;
    Req.Grid[0] = 1;
    Req.Block[0] = 128;
    void *Args[] = {&Ptr[2], &Ptr[0], &Stride, &Rows};
    Req.Args = Args;
    LaunchPlan Plan;
    ASSERT_TRUE(Eng->launch(Req, Plan).ok());
    ASSERT_EQ(Plan.Runs.size(), 1u) << Plan.describe();
    EXPECT_NE(Plan.Runs[0].Device, Cpu) << "launch " << L << "\n"
                                        << Plan.describe();
  }
}

TEST_F(EngineNullGpuTest, CombinedOutputsSplitOnlyWhenTheGridFillsAWaveOfEveryGpu) {
  // Two null GPUs at 10^6 blocks/ms. The model policy splits a kernel with
  // combined outputs only when every GPU can get a whole wave: below that,
  // the tables (rows of whole waves) cannot tell what a partial wave costs.
  NullGpu::Options G0{0, "model A"}, G1{1, "model A"};
  for (NullGpu::Options *G : {&G0, &G1})
    G->Timing = [](uint64_t Blocks, unsigned) {
      return float(double(Blocks) / 1e6);
    };
  start({G0, G1});
  const KernelHandle *H = Eng->findKernel("hist");
  ASSERT_NE(H, nullptr);
  ASSERT_EQ(H->Info->Combined.size(), 1u);
  void *PD = nullptr, *PB = nullptr;
  int Elems = 1 << 24;
  ASSERT_TRUE(Bufs->allocate(size_t(Elems), PD).ok());
  ASSERT_TRUE(Bufs->allocate(256 * sizeof(unsigned), PB).ok());
  void *Args[] = {&PD, &PB, &Elems};
  auto PlanOf = [&](unsigned Blocks, std::string &Log) {
    KernelLaunchRequest Req;
    Req.Kernel = H;
    Req.Grid[0] = Blocks;
    Req.Block[0] = 256;
    Req.Args = Args;
    LaunchPlan Plan;
    Eng->setLog(logOf("plan"));
    testing::internal::CaptureStderr();
    Result R = Eng->launch(Req, Plan);
    Log = testing::internal::GetCapturedStderr();
    Eng->setLog(LogOptions());
    EXPECT_TRUE(R.ok()) << R.toString();
    return Plan;
  };
  std::string Log;
  const char *Refusal = "split by the model policy only when the grid fills "
                        "a wave of every GPU";
  // 64 blocks: less than a wave of one GPU (the null GPU's 132 SMs).
  LaunchPlan Small = PlanOf(64, Log);
  EXPECT_NE(Log.find(Refusal), std::string::npos) << Log;
  EXPECT_EQ(Small.Runs.size(), 1u) << Small.describe();
  EXPECT_TRUE(Small.Combined.empty()) << Small.describe();
  // 65536 blocks of 256 bytes: many waves of both; equal GPUs split it.
  LaunchPlan Large = PlanOf(65536, Log);
  EXPECT_EQ(Log.find(Refusal), std::string::npos) << Log;
  EXPECT_EQ(Large.Runs.size(), 2u) << Large.describe() << Log;
  EXPECT_FALSE(Large.Combined.empty()) << Large.describe();
}

TEST_F(EngineNullGpuTest, GpusOfOneModelShareATable) {
  // gpu0 and gpu1 are one model, gpu2 another: two tables, and the first
  // two GPUs' ranges are all recorded in the one they share.
  start({{0, "model A"}, {1, "model A"}, {2, "model B"}});
  for (int I = 0; I < 4; ++I)
    (void)launch();
  PerfCache C = flushed();
  ASSERT_EQ(C.tables().size(), 2u) << C.serialize();
  ASSERT_EQ(C.tables().count("model A"), 1u) << C.serialize();
  ASSERT_EQ(C.tables().count("model B"), 1u) << C.serialize();
  auto Samples = [&](const std::string &Dev) {
    unsigned N = 0;
    for (const auto &[Key, Rows] : C.tables().at(Dev))
      for (const auto &[Blocks, S] : Rows)
        N += S.Samples;
    return N;
  };
  // Launch 1 of each GPU is dropped (first timing); launches 2-4 record a
  // range per GPU: twice as many samples for the shared table.
  EXPECT_EQ(Samples("model A"), 6u) << C.serialize();
  EXPECT_EQ(Samples("model B"), 3u) << C.serialize();
}

TEST_F(EngineNullGpuTest, ALaunchTooShortToPayForASplitRunsWhole) {
  // Two GPUs of one model, which split the launch evenly; predicted to
  // take less than the planner's minimum on one of them, it runs whole,
  // and CLEAVE_LOG=plan says why.
  start({{0, "model A"}, {1, "model A"}});
  LaunchPlan Split = launch();
  EXPECT_EQ(Split.Runs.size(), 2u) << Split.describe();
  Eng->setMinSplitMs(ModelPartitioner::DefaultMinSplitMs);
  for (int I = 0; I < 3; ++I) {
    testing::internal::CaptureStderr();
    Eng->setLog(logOf("plan"));
    LaunchPlan P = launch();
    Eng->setLog(LogOptions());
    std::string Log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(P.Runs.size(), 1u) << P.describe();
    if (I == 0)
      EXPECT_NE(Log.find("too short to split"), std::string::npos) << Log;
  }
}

TEST_F(EngineNullGpuTest, KeptDecisionsTimeOnlyTheLaunchBeforeTheNextSearch) {
  // Launches 1-4 and 9 search and are timed (launch 1's timing dropped),
  // 5-8 run launch 4's decision and only 8 is timed (for the search at 9),
  // 10-12 run launch 9's untimed: 5 timed launches on each of two GPUs of
  // one model.
  start({{0, "model A"}, {1, "model A"}});
  for (int I = 0; I < 12; ++I)
    ASSERT_EQ(launch().Runs.size(), 2u);
  PerfCache C = flushed();
  ASSERT_EQ(C.tables().count("model A"), 1u) << C.serialize();
  unsigned Samples = 0;
  for (const auto &[Key, Rows] : C.tables().at("model A"))
    for (const auto &[Blocks, S] : Rows)
      Samples += S.Samples;
  EXPECT_EQ(Samples, 10u) << C.serialize();
}

TEST_F(EngineNullGpuTest, KeptDecisionsRepeatExceptWhenTimed) {
  // Launches 1-4, 9 and 19 search and 8 and 18 are timed: none of them
  // repeats. An untimed launch repeats the one before it when that one
  // (a search included) moved nothing and changed nothing, until the host
  // writes an input.
  start({{0, "model A"}, {1, "model A"}});
  std::vector<float> In(N, 1.0f);
  uploadInputs(In);
  std::string Seen;
  for (int L = 1; L <= 20; ++L)
    Seen += launch().Repeated ? 'r' : '.';
  EXPECT_EQ(Seen, "...." "rrr.." "rrrrrrrr.." "r") << Seen;
  uploadInputs(In);
  Seen.clear();
  for (int L = 21; L <= 24; ++L)
    Seen += launch().Repeated ? 'r' : '.';
  EXPECT_EQ(Seen, "..rr") << Seen;
}

TEST_F(EngineNullGpuTest, NoisyTimingsDoNotMoveDataBackAndForth) {
  // Four equal GPUs whose timings vary by up to 5 % at random, each with
  // its own table (so the noise reaches the decisions). Once the inputs are
  // on the GPUs, later searches keep each GPU on the blocks whose data it
  // holds.
  std::vector<NullGpu::Options> Specs;
  auto Rng = std::make_shared<std::mt19937>(11);
  for (int G = 0; G < 4; ++G) {
    NullGpu::Options O{G, "model " + std::to_string(G)};
    O.Timing = [Rng](uint64_t Blocks, unsigned) {
      double Noise = std::uniform_real_distribution<double>(0.95, 1.05)(*Rng);
      return float(0.005 + double(Blocks) / 1e5 * Noise);
    };
    Specs.push_back(O);
  }
  start(Specs);
  ASSERT_TRUE(Bufs->memset(Ptr[0], 1, N * sizeof(float)).ok());
  ASSERT_TRUE(Bufs->memset(Ptr[1], 2, N * sizeof(float)).ok());
  // The first launch may leave a GPU out (the seed says a fourth share
  // gains too little, ModelPartitioner::MinDeviceGain); once measurements show it
  // would gain, the steady-state decision may bring it in, moving its data
  // once. Nothing else moves.
  unsigned Moves = 0;
  std::string Log;
  for (int Launch = 1; Launch <= 40; ++Launch) {
    LaunchPlan Plan = launch();
    EXPECT_GE(Plan.Runs.size(), 3u) << Launch << "\n" << Plan.describe();
    if (Launch > 1 && Plan.BytesMoved) {
      ++Moves;
      Log += std::to_string(Launch) + "\n" + Plan.describe();
    }
  }
  EXPECT_LE(Moves, 1u) << Log;
}

TEST_F(EngineNullGpuTest, InputsACudaMemcpyStagedAreNotChargedAtFirst) {
  // The host CPU (8 executor threads, seeded at 24 GB/s) and one GPU (a
  // 10 GB/s host link). The inputs were written by cudaMemcpy: in CUDA they
  // would be on the GPU already, so the first search does not charge their
  // move and the GPU takes nearly everything. Charged, the link (8 bytes
  // per element in) would make the CPU, which streams 12 bytes per element
  // at 24 GB/s, the faster one.
  start({{0, "model A"}}, /*WithCpu=*/true);
  std::vector<float> Ones(N, 1.0f);
  for (int I = 0; I < 2; ++I)
    ASSERT_TRUE(Bufs->memcpy(Ptr[I], Ones.data(), N * sizeof(float),
                             MemcpyKind::HostToDevice)
                    .ok());
  testing::internal::CaptureStderr();
  Eng->setLog(logOf("plan"));
  LaunchPlan Plan = launch();
  Eng->setLog(LogOptions());
  std::string Log = testing::internal::GetCapturedStderr();
  EXPECT_NE(Log.find("or sent to a device not charged (first search"),
            std::string::npos)
      << Log;
  uint64_t Total = uint64_t(N + 127) / 128, OnGpu = 0;
  for (const LaunchPlan::Run &R : Plan.Runs)
    if (R.DeviceName == "gpu0")
      OnGpu += R.Count;
  EXPECT_GT(OnGpu, Total * 9 / 10) << Plan.describe() << Log;
}

TEST_F(EngineNullGpuTest, ResultsTheHostReadsBackAreChargedAsTheProgramsCopies) {
  // The host CPU and one GPU, the inputs resident after the first launch.
  // While the host does not read c back, nothing recurs; once it reads c
  // after a launch, the next search charges c's copy out (4 bytes per
  // element) to the share that writes it, whichever device that is.
  start({{0, "model A"}}, /*WithCpu=*/true);
  std::vector<float> Ones(N, 1.0f), Out(N);
  uploadInputs(Ones);
  auto Logged = [&](bool ReadBack) {
    testing::internal::CaptureStderr();
    Eng->setLog(logOf("plan"));
    (void)launch();
    Eng->setLog(LogOptions());
    std::string Log = testing::internal::GetCapturedStderr();
    if (ReadBack)
      EXPECT_TRUE(Bufs->memcpy(Out.data(), Ptr[2], N * sizeof(float),
                               MemcpyKind::DeviceToHost)
                      .ok());
    return Log;
  };
  const char *Charged = "results the host read back after the last launch";
  const char *Copies = "the program's copies at every launch:";
  (void)Logged(false);               // search 1: the inputs move
  std::string Log = Logged(false);   // search 2
  EXPECT_EQ(Log.find(Charged), std::string::npos) << Log;
  EXPECT_EQ(Log.find(Copies), std::string::npos) << Log;
  Log = Logged(true);                // search 3, then c is read back
  EXPECT_EQ(Log.find(Charged), std::string::npos) << Log;
  Log = Logged(true);                // search 4 expects c back again
  EXPECT_NE(Log.find(Charged), std::string::npos) << Log;
  EXPECT_NE(Log.find("up to 16777216 B"), std::string::npos) << Log;
  EXPECT_NE(Log.find("16.78 MB out at "), std::string::npos) << Log;
  EXPECT_NE(Log.find("of which the program's own copies"), std::string::npos)
      << Log;
  // The copy out was timed (from the host copy or from gpu0, device 1):
  // the next search uses its rate.
  EXPECT_GT(std::max(Bufs->programCopyGBps(HostLocation, false),
                     Bufs->programCopyGBps(Location(1), false)),
            0.0);
}

TEST_F(EngineNullGpuTest, InputsTheHostRewritesBeforeEveryLaunchStayWithTheFasterCopier) {
  // The host CPU and one null GPU behind a slow link (0.5 GB/s), the host
  // writing both 16 MB inputs before every launch. The first search
  // charges them to nobody, and the GPU takes nearly everything. The next
  // upload sends the GPU's bytes straight to it (pushed). From the second
  // search on, they are the program's copies into whichever share reads
  // them: 67 ms over the GPU's link against a copy into the host copy, so
  // the CPU takes the grid, and keeps it however long the launch history
  // (the steady state charges them too). Its uploads then stay in the
  // host copy.
  NullGpu::Options Slow{0, "model A"};
  Slow.HostLinkGBps = 0.5;
  start({Slow}, /*WithCpu=*/true);
  ASSERT_TRUE(Bufs->directHostCopies());
  std::vector<float> In(N, 1.0f);
  auto Upload = [&] { uploadInputs(In); };
  BufferManager::Resolved A;
  ASSERT_TRUE(Bufs->resolve(Ptr[0], A).ok());
  uint64_t Bytes = uint64_t(N) * sizeof(float);
  uint64_t Total = uint64_t(N + 127) / 128;
  auto Blocks = [](const LaunchPlan &P, const char *Dev) {
    uint64_t B = 0;
    for (const LaunchPlan::Run &R : P.Runs)
      if (R.DeviceName == Dev)
        B += R.Count;
    return B;
  };
  Upload(); // nothing holds a replica yet: staged in the host copy
  EXPECT_EQ(A.Buf->pushedBytes({0, Bytes}), 0u);
  LaunchPlan P = launch();
  EXPECT_GT(Blocks(P, "gpu0"), Total * 9 / 10) << P.describe();
  Upload();
  EXPECT_GT(A.Buf->pushedBytes({0, Bytes}), Bytes * 9 / 10);
  // The pushes were timed at about the link's rate.
  EXPECT_GT(Bufs->programCopyGBps(1, true), 0.3);
  EXPECT_LT(Bufs->programCopyGBps(1, true), 0.6);
  Eng->setLog(logOf("plan"));
  testing::internal::CaptureStderr();
  P = launch();
  std::string Log = testing::internal::GetCapturedStderr();
  Eng->setLog(LogOptions());
  EXPECT_NE(Log.find("inputs the host rewrote before this launch charged "
                     "as the program's copies"),
            std::string::npos)
      << Log;
  EXPECT_NE(Log.find("once every 1.0 launches"), std::string::npos) << Log;
  EXPECT_EQ(Blocks(P, "cpu0"), Total) << P.describe() << Log;
  // The launch read what was pushed: nothing pending.
  EXPECT_EQ(A.Buf->pushedBytes({0, Bytes}), 0u);
  Upload();
  EXPECT_TRUE(A.Buf->holds(HostLocation, {0, Bytes}));
  EXPECT_EQ(A.Buf->pushedBytes({0, Bytes}), 0u);
  EXPECT_EQ(A.Buf->stagedBytes({0, Bytes}), Bytes);
  // Many launches later the CPU still has the grid: the steady state
  // charges the copies as well.
  for (int L = 0; L < 12; ++L) {
    P = launch();
    Upload();
  }
  Eng->setLog(logOf("plan"));
  testing::internal::CaptureStderr();
  P = launch();
  Log = testing::internal::GetCapturedStderr();
  Eng->setLog(LogOptions());
  EXPECT_EQ(Blocks(P, "cpu0"), Total) << P.describe() << Log;
}

TEST_F(EngineNullGpuTest, UploadsBeforeTwoLaunchesInARowEndAKeptQuietDecision) {
  // The host CPU and one null GPU behind a slow link (0.5 GB/s), as the
  // test above. The inputs are uploaded once and 20 launches run on them:
  // the GPU holds them and takes the grid; the searches at launches 9 and
  // 19 count no copies since the one before. Then the host writes both
  // inputs before every launch. Launch 21 still runs launch 19's decision
  // (one upload may be an iteration's); launch 22, the second in a row
  // after an upload, searches at once, charges the uploads at every launch
  // (not over the 20 launches since launch 19) and gives the CPU the
  // grid. Without that search launch 19's decision would run until launch
  // 39.
  NullGpu::Options Slow{0, "model A"};
  Slow.HostLinkGBps = 0.5;
  start({Slow}, /*WithCpu=*/true);
  std::vector<float> In(N, 1.0f);
  const uint64_t Total = uint64_t(N + 127) / 128;
  auto OnCpu = [](const LaunchPlan &P) {
    uint64_t B = 0;
    for (const LaunchPlan::Run &R : P.Runs)
      if (R.DeviceName == "cpu0")
        B += R.Count;
    return B;
  };
  uploadInputs(In);
  for (int L = 1; L <= 20; ++L) {
    LaunchPlan P = launch();
    if (L >= 5)
      EXPECT_EQ(OnCpu(P), 0u) << "launch " << L << "\n" << P.describe();
  }
  for (int L = 21; L <= 23; ++L) {
    uploadInputs(In);
    Eng->setLog(logOf("plan"));
    testing::internal::CaptureStderr();
    LaunchPlan P = launch();
    std::string Log = testing::internal::GetCapturedStderr();
    Eng->setLog(LogOptions());
    bool Kept = Log.find("the decision of launch 19, kept until launch 39") !=
                std::string::npos;
    EXPECT_EQ(Kept, L == 21) << "launch " << L << "\n" << Log;
    if (L == 21) {
      EXPECT_EQ(OnCpu(P), 0u) << P.describe();
      continue;
    }
    if (L == 22) {
      EXPECT_NE(Log.find("(model): 32768 blocks"), std::string::npos)
          << "launch 22 searches\n" << Log;
      EXPECT_NE(Log.find("once every 1.0 launches"), std::string::npos)
          << Log;
    }
    EXPECT_EQ(OnCpu(P), Total) << "launch " << L << "\n" << P.describe()
                               << Log;
  }
}

TEST_F(EngineNullGpuTest, UploadsOnceEveryFewLaunchesAreSpreadOverThem) {
  // The host writes both inputs before every other launch (an iteration of
  // two steps). The search at launch 39, which follows an upload, charges
  // the program's copies once every 2 launches: the 20 launches since the
  // search at launch 19, over the 10 uploads since.
  NullGpu::Options G{0, "model A"};
  G.HostLinkGBps = 8;
  start({G}, /*WithCpu=*/true);
  std::vector<float> In(N, 1.0f);
  std::string Log;
  for (int L = 1; L <= 39; ++L) {
    if (L % 2 == 1)
      uploadInputs(In);
    if (L == 39) {
      Eng->setLog(logOf("plan"));
      testing::internal::CaptureStderr();
    }
    (void)launch();
  }
  Log = testing::internal::GetCapturedStderr();
  Eng->setLog(LogOptions());
  EXPECT_NE(Log.find("(model): 32768 blocks"), std::string::npos)
      << "launch 39 searches\n" << Log;
  EXPECT_NE(Log.find("once every 2.0 launches"), std::string::npos) << Log;
  // Half of the 33.5 MB of both inputs per launch, over the GPU's link.
  EXPECT_NE(Log.find("16.78 MB in at"), std::string::npos) << Log;
}

TEST_F(EngineNullGpuTest, ASplitMeasuredToLoseRunsWholeAtTheNextLaunch) {
  // Two GPUs of one model at 10^4 blocks/ms (3.3 ms for the grid, as
  // their events time it): the model splits each launch evenly. gpu1's
  // launches take 40 ms of the host (a slow driver, which its event
  // timings do not show): a split measures far over the best single
  // device's prediction, and the next launch runs whole on that device.
  NullGpu::Options A{0, "model A"}, B{1, "model A"};
  A.BlocksPerMs = B.BlocksPerMs = 1e4;
  B.OnLaunch = [](const uint32_t *, const uint32_t *, void **) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  };
  start({A, B});
  uploadInputs(std::vector<float>(N, 1.0f));
  Eng->setLog(logOf("plan"));
  std::vector<size_t> Runs;
  testing::internal::CaptureStderr();
  for (int L = 0; L < 5; ++L)
    Runs.push_back(launch().Runs.size());
  std::string Log = testing::internal::GetCapturedStderr();
  Eng->setLog(LogOptions());
  size_t Lost = Log.find("a loss against the best single device");
  ASSERT_NE(Lost, std::string::npos) << Log;
  EXPECT_NE(Log.find("whole on the best single device: the last split "
                     "measured",
                     Lost),
            std::string::npos)
      << Log;
  // A split, then one device.
  bool Corrected = false;
  for (size_t L = 0; L + 1 < Runs.size(); ++L)
    Corrected |= Runs[L] == 2 && Runs[L + 1] == 1;
  EXPECT_TRUE(Corrected) << Log;
}

TEST_F(EngineNullGpuTest, AProducerIsChargedForWhatItsReaderFetchesElsewhere) {
  // Two launches of vadd over the host CPU and a null GPU behind a 1 GB/s
  // link, as the steps of an iteration: the host rewrites a before each
  // repetition, c = a + a reads it, and d = c + c runs eight times on c,
  // on the GPU. Charged only for the upload of a over the link, the first
  // would run on the CPU alone from its second search on, and c would
  // cross the link after it at every repetition. Charged also for that
  // copy to its reader's device, it stays on the GPU.
  NullGpu::Options G{0, "model A"};
  G.HostLinkGBps = 1;
  // The profile's link rates (the in-launch copies' and the hand-off's).
  std::string Profile = Dir + "-profile.json";
  {
    std::ofstream P(Profile);
    P << R"({"schema": "cleave-device-profile", "schema_version": 1,
             "gpus": [{"index": 0, "name": "model A", "sm_count": 132}],
             "host_links": {"alone": [{"gpu": 0,
               "pinned": {"h2d_gbps": 1, "d2h_gbps": 1},
               "pageable": {"h2d_gbps": 1, "d2h_gbps": 1}}]}})";
  }
  Opts.ProfilePath = Profile;
  start({G}, /*WithCpu=*/true);
  void *V = nullptr;
  ASSERT_TRUE(Bufs->allocate(N * sizeof(float), V).ok());
  float *D = static_cast<float *>(V);
  auto OnGpu = [](const LaunchPlan &P) {
    uint64_t B = 0;
    for (const LaunchPlan::Run &R : P.Runs)
      if (R.DeviceName == "gpu0")
        B += R.Count;
    return B;
  };
  std::vector<float> In(N, 1.0f);
  const uint64_t Total = uint64_t(N + 127) / 128;
  // The first launch searches at its launches 1-4 and 9.
  for (int Rep = 1; Rep <= 10; ++Rep) {
    ASSERT_TRUE(Bufs->memcpy(Ptr[0], In.data(), N * sizeof(float),
                             MemcpyKind::HostToDevice)
                    .ok());
    LaunchPlan First = launch(Ptr[0], Ptr[0], Ptr[2]);
    EXPECT_GT(OnGpu(First), Total * 9 / 10)
        << "repetition " << Rep << "\n" << First.describe();
    for (int I = 0; I < 8; ++I) {
      LaunchPlan Second = launch(Ptr[2], Ptr[2], D);
      EXPECT_EQ(OnGpu(Second), Total)
          << "repetition " << Rep << "\n" << Second.describe();
      EXPECT_EQ(Second.BytesMoved, 0u) << Second.describe();
    }
  }
  std::remove(Profile.c_str());
}

TEST_F(EngineNullGpuTest, AProfileFieldOfTheWrongTypeIsReportedWithItsFile) {
  std::string Profile = Dir + "-typo-profile.json";
  {
    std::ofstream P(Profile);
    P << R"({"schema": "cleave-device-profile", "schema_version": 1,
             "gpus": [{"index": 0, "name": "model A", "sm_count": "132"}]})";
  }
  Opts.ProfilePath = Profile;
  // The engine loads its profile when it is made (setMinSplitMs in start).
  testing::internal::CaptureStderr();
  start({{0, "model A"}, {1, "model A"}});
  launch();
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("cleave: warning: CLEAVE_PROFILE: device profile " +
                     Profile +
                     ": gpus[0].sm_count is a string, not a number; read "
                     "as missing"),
            std::string::npos)
      << Err;
  std::remove(Profile.c_str());
}

TEST_F(EngineNullGpuTest, GpusOfOneModelPoolTheirCopyRates) {
  // Two null GPUs of one model, one behind a 0.25 GB/s link and one behind
  // 1 GB/s, the host writing both inputs before every launch. Their timed
  // rates differ, but the search charges both the same averaged rate, as
  // they share a table.
  NullGpu::Options Slow{0, "model A"}, Fast{1, "model A"};
  Slow.HostLinkGBps = 0.25;
  Fast.HostLinkGBps = 1;
  start({Slow, Fast});
  std::vector<float> In(N, 1.0f);
  auto Upload = [&] { uploadInputs(In); };
  Upload();
  (void)launch();
  Upload(); // pushed to both: timed on each
  // The slow link bounds gpu0's rate; gpu1's is timed from the copy and
  // falls below its link's 1 GB/s when the machine is busy. They must
  // differ enough for their average to print apart from either.
  double R0 = Bufs->programCopyGBps(0, true), R1 = Bufs->programCopyGBps(1, true);
  EXPECT_LT(R0, 0.3);
  EXPECT_GT(R1, R0 + 0.2);
  Eng->setLog(logOf("plan"));
  testing::internal::CaptureStderr();
  (void)launch();
  std::string Log = testing::internal::GetCapturedStderr();
  Eng->setLog(LogOptions());
  char Rate[64];
  std::snprintf(Rate, sizeof(Rate), " in at %.1f GB/s", (R0 + R1) / 2);
  size_t First = Log.find(Rate);
  ASSERT_NE(First, std::string::npos) << Rate << "\n" << Log;
  EXPECT_NE(Log.find(Rate, First + 1), std::string::npos) << Rate << "\n"
                                                          << Log;
}

TEST_F(EngineNullGpuTest, InputsMoveToSeveralGpusAtOnce) {
  // Four GPUs each fetch their quarter of two 16 MB inputs the host wrote:
  // 32 MB in all, moved by one thread per GPU (the buffer's lock is not
  // held during the copies). Each GPU's replica must hold exactly the
  // host's bytes of its blocks, validity must say so (the next launch
  // moves nothing), and the even policy's plan counts every byte once.
  std::vector<float> In[2];
  std::mt19937 Rng(5);
  ASSERT_NO_FATAL_FAILURE(startEvenOverFourGpus(In, Rng));
  LaunchPlan Plan = launch();
  ASSERT_EQ(Plan.Runs.size(), 4u) << Plan.describe();
  EXPECT_EQ(Plan.BytesMoved, 2 * uint64_t(N) * sizeof(float))
      << Plan.describe();
  EXPECT_EQ(Plan.MovedAtOnce, 4u);
  EXPECT_NE(Plan.describe().find("bytes moved (into 4 devices at once)"),
            std::string::npos)
      << Plan.describe();
  expectReplicasHoldInputs(Plan, In);
  Plan = launch();
  EXPECT_EQ(Plan.BytesMoved, 0u) << Plan.describe();
  EXPECT_EQ(Plan.MovedAtOnce, 0u);
}

TEST_F(EngineNullGpuTest, SmallInputsMoveToSeveralGpusAtOnceThroughTheIssueWorkers) {
  // After a first launch, the host rewrites 4 KB of each GPU's quarter of
  // both inputs: 32 KB to move, too little to start threads for, but with
  // issue workers (CLEAVE_TUNE=issue=parallel) each GPU's copies run on its
  // worker (or here, when it sleeps), at once. Every replica must then hold
  // the host's bytes and the plan count each byte once.
  Opts.Tune.Issue = IssueMode::Parallel;
  std::vector<float> In[2];
  std::mt19937 Rng(7);
  ASSERT_NO_FATAL_FAILURE(startEvenOverFourGpus(In, Rng));
  LaunchPlan Plan = launch();
  ASSERT_EQ(Plan.Runs.size(), 4u) << Plan.describe();
  const uint64_t Piece = 1024; // floats
  for (int I = 0; I < 2; ++I)
    for (const LaunchPlan::Run &R : Plan.Runs) {
      uint64_t At = R.First * 128 + 256;
      for (uint64_t E = At; E < At + Piece; ++E)
        In[I][E] = float(Rng() % 100000);
      ASSERT_TRUE(Bufs->memcpy(Ptr[I] + At,
                               In[I].data() + At, Piece * sizeof(float),
                               MemcpyKind::HostToDevice)
                      .ok());
    }
  Plan = launch();
  ASSERT_EQ(Plan.Runs.size(), 4u) << Plan.describe();
  EXPECT_EQ(Plan.BytesMoved, 2 * 4 * Piece * sizeof(float)) << Plan.describe();
  EXPECT_EQ(Plan.MovedAtOnce, 4u) << Plan.describe();
  expectReplicasHoldInputs(Plan, In);
}

TEST_F(EngineNullGpuTest, HaloRowsAreQueuedAheadOfTheKernelThatReadsThem) {
  // blur(a, b) then blur(b, a), split evenly over four GPUs with issue
  // workers: the second launch needs one element of b from each neighbour
  // band, which the first launch wrote there. Each GPU pulls its halos on
  // its own compute stream (Device::pullFromPeer), where its kernel goes
  // next, instead of waiting for them on the host; they count as valid at
  // once and hold the neighbour's bytes.
  Opts.Tune.Issue = IssueMode::Parallel;
  std::vector<float> In(N);
  std::mt19937 Rng(11);
  for (float &X : In)
    X = float(Rng() % 1000);
  ASSERT_NO_FATAL_FAILURE(startBlur(In));
  LaunchPlan First = blur(Ptr[0], Ptr[1]);
  ASSERT_EQ(First.Runs.size(), 4u) << First.describe();
  for (auto &G : Gpus)
    EXPECT_TRUE(G->pulls().empty()) << "from the host: nothing to pull";
  LaunchPlan Second = blur(Ptr[1], Ptr[0]);
  ASSERT_EQ(Second.Runs.size(), 4u) << Second.describe();
  EXPECT_EQ(Second.BytesMoved, 6 * sizeof(float)) << Second.describe();
  BufferManager::Resolved Res;
  ASSERT_TRUE(Bufs->resolve(Ptr[1], Res).ok());
  for (const LaunchPlan::Run &R : Second.Runs) {
    NullGpu &G = *Gpus[size_t(R.Device)];
    size_t Want = R.Device == 0 || R.Device == 3 ? 1 : 2;
    ASSERT_EQ(G.pulls().size(), Want) << R.DeviceName;
    for (const auto &[Stream, Bytes] : G.pulls()) {
      EXPECT_EQ(Stream, G.internalStream(0)) << R.DeviceName;
      EXPECT_EQ(Bytes, sizeof(float)) << R.DeviceName;
    }
    // The halo elements: valid here and equal to the writer's.
    for (int64_t E : {int64_t(R.First * 128) - 1,
                      int64_t((R.First + R.Count) * 128)}) {
      if (E < 0 || E >= N)
        continue;
      ByteRange Bytes{uint64_t(E) * 4, uint64_t(E) * 4 + 4};
      EXPECT_TRUE(Res.Buf->holds(R.Device, Bytes)) << R.DeviceName << " " << E;
      Location Writer = R.Device + (E < int64_t(R.First * 128) ? -1 : 1);
      DeviceAddr Here = 0, There = 0;
      ASSERT_TRUE(Bufs->addressOn(*Res.Buf, R.Device, Bytes.Lo, Here).ok());
      ASSERT_TRUE(Bufs->addressOn(*Res.Buf, Writer, Bytes.Lo, There).ok());
      EXPECT_EQ(std::memcmp(reinterpret_cast<void *>(Here),
                            reinterpret_cast<void *>(There), 4),
                0)
          << R.DeviceName << " " << E;
    }
  }
}

TEST_F(EngineNullGpuTest, ARunRefusedAfterItsHalosWereQueuedRunsElsewhere) {
  // As above, but gpu2 refuses its second kernel (CLEAVE_FAULT), after its
  // halos were queued on its stream. The launch waits for that stream,
  // keeps what landed, and runs gpu2's blocks on another GPU, which then
  // holds that band of the output; every block runs once.
  Opts.Tune.Issue = IssueMode::Parallel;
  std::vector<float> In(N, 1.0f);
  ASSERT_NO_FATAL_FAILURE(startBlur(In));
  ASSERT_TRUE(FaultInjector::global().configure("gpu2:launch:2").ok());
  blur(Ptr[0], Ptr[1]);
  LaunchPlan Second = blur(Ptr[1], Ptr[0]);
  FaultInjector::global().clear();
  EXPECT_EQ(Gpus[2]->pulls().size(), 2u) << Second.describe();
  ASSERT_EQ(Second.Recoveries.size(), 1u) << Second.describe();
  uint64_t Blocks = 0;
  for (const LaunchPlan::Run &R : Second.Runs)
    Blocks += R.Count;
  for (auto [First, End] : Second.Recoveries[0].Blocks)
    Blocks -= End - First;
  EXPECT_EQ(Blocks, uint64_t(N + 127) / 128) << Second.describe();
  BufferManager::Resolved Res;
  ASSERT_TRUE(Bufs->resolve(Ptr[0], Res).ok());
  for (const LaunchPlan::Run &R : Second.Runs) {
    if (R.Device == 2)
      continue;
    ByteRange Band{R.First * 128 * 4,
                   std::min<uint64_t>(N, (R.First + R.Count) * 128) * 4};
    EXPECT_TRUE(Res.Buf->holds(R.Device, Band)) << R.DeviceName;
  }
}

TEST_F(EngineNullGpuTest, AnIterationThatSwapsItsBuffersIsReplayed) {
  // blur(a, b), blur(b, a), ... over four GPUs: every launch moves halos
  // and changes validity, so none repeats. But from the third step on, each
  // finds its buffers as the same launch two steps before found them (the
  // first found a on the host as well), so from the fifth launch on each
  // replays that one: the same runs and copies, without planning them, and
  // the same state after it. With the issue workers, the replays' halos
  // are queued on the GPUs' streams as the first launches' were.
  for (const char *Issue : {"serial", "parallel"}) {
    SCOPED_TRACE(Issue);
    TearDown();
    SetUp();
    Opts.Tune.Issue = issueMode(Issue);
    std::vector<float> In(N, 1.0f);
    ASSERT_NO_FATAL_FAILURE(startBlur(In));
    BufferManager::Resolved A, B;
    ASSERT_TRUE(Bufs->resolve(Ptr[0], A).ok());
    ASSERT_TRUE(Bufs->resolve(Ptr[1], B).ok());
    // Copies as text without the names: (buffer, source, destination, range).
    auto CopiesOf = [](const LaunchPlan &P) {
      std::vector<std::string> Out;
      for (const LaunchPlan::Run &R : P.Runs)
        for (const LaunchPlan::Run::Copy &C : R.Copies)
          Out.push_back(std::to_string(C.BufferId) + " " + C.From + "->" +
                        C.To + " " + std::to_string(C.T.Offset) + "+" +
                        std::to_string(C.T.Bytes));
      return Out;
    };
    std::vector<LaunchPlan> Plans;
    std::vector<std::pair<Buffer::State, Buffer::State>> After;
    for (int Step = 0; Step < 7; ++Step) {
      Plans.push_back(Step % 2 ? blur(Ptr[1], Ptr[0])
                               : blur(Ptr[0], Ptr[1]));
      After.push_back({A.Buf->state(), B.Buf->state()});
    }
    for (int Step = 0; Step < 7; ++Step) {
      const LaunchPlan &P = Plans[size_t(Step)];
      EXPECT_EQ(P.Replayed, Step >= 4) << "step " << Step << "\n"
                                       << P.describe();
      EXPECT_EQ(P.Runs.size(), 4u) << P.describe();
      if (Step < 4)
        continue;
      const LaunchPlan &Was = Plans[size_t(Step - 2)];
      EXPECT_EQ(CopiesOf(P), CopiesOf(Was)) << P.describe() << Was.describe();
      EXPECT_EQ(P.BytesMoved, Was.BytesMoved);
      EXPECT_GT(P.BytesMoved, 0u);
      EXPECT_NE(P.describe().find(", replayed"), std::string::npos);
      const auto &[NowA, NowB] = After[size_t(Step)];
      const auto &[ThenA, ThenB] = After[size_t(Step - 2)];
      EXPECT_TRUE(NowA.Valid == ThenA.Valid && NowB.Valid == ThenB.Valid)
          << "step " << Step;
      EXPECT_TRUE(NowA.LastReads == ThenA.LastReads &&
                  NowB.LastReads == ThenB.LastReads)
          << "step " << Step;
    }
  }
}

TEST_F(EngineNullGpuTest, EveryStepOfARepeatedIterationIsReplayed) {
  // As the headline's jacobi2d: each repetition runs blur(c, a), then
  // blur(a, b) and blur(b, a) in turn, ten launches. The first launches of
  // a repetition find a and b as the end of the last one left them, not as
  // the same request found them later in the repetition: the engine keeps
  // a launch per request and state found, so from the third repetition on
  // every launch replays.
  std::vector<float> In(N, 1.0f);
  ASSERT_NO_FATAL_FAILURE(startBlur(In));
  for (int Rep = 0; Rep < 4; ++Rep) {
    std::vector<bool> Replayed;
    Replayed.push_back(blur(Ptr[2], Ptr[0]).Replayed);
    for (int S = 1; S < 10; ++S)
      Replayed.push_back(S % 2 ? blur(Ptr[0], Ptr[1]).Replayed
                               : blur(Ptr[1], Ptr[0]).Replayed);
    if (Rep >= 2)
      EXPECT_EQ(std::count(Replayed.begin(), Replayed.end(), true), 10)
          << "repetition " << Rep;
  }
}

TEST_F(EngineNullGpuTest, ADeferredReplayIsQueuedBehindTheLaunchBeforeIt) {
  // blur(a, b), blur(b, a), ... over four GPUs, with and without
  // MayDefer. Deferred, the replays (from the fifth launch) return once
  // their work is queued: each GPU's stream first waits for its
  // neighbours' work of the launch before (it pulls their rows next, and
  // they pulled its rows, which its kernel may overwrite), then pulls,
  // runs and records its own completion; nothing waits on the host until
  // a copy to the host settles every GPU. Without the issue workers the halos are
  // copied, not queued, and so wait for the launch before on the host. The
  // buffers' validity is that of the launches that waited.
  for (const char *Issue : {"serial", "parallel"}) {
    SCOPED_TRACE(Issue);
    std::vector<std::vector<std::vector<RangeSet>>> Valid(2);
    for (bool Defer : {false, true}) {
      TearDown();
      SetUp();
      TraceGpus = true;
      MayDefer = Defer;
      Opts.Tune.Issue = issueMode(Issue);
      std::vector<float> In(N, 1.0f);
      ASSERT_NO_FATAL_FAILURE(startBlur(In));
      BufferManager::Resolved A, B;
      ASSERT_TRUE(Bufs->resolve(Ptr[0], A).ok());
      ASSERT_TRUE(Bufs->resolve(Ptr[1], B).ok());
      for (int Step = 0; Step < 7; ++Step) {
        if (Step == 6)
          for (auto &G : Gpus)
            G->clearTrace();
        LaunchPlan P = Step % 2 ? blur(Ptr[1], Ptr[0]) : blur(Ptr[0], Ptr[1]);
        EXPECT_EQ(P.Deferred, Defer && Step >= 4) << "step " << Step << "\n"
                                                  << P.describe();
        EXPECT_EQ(P.describe().find("completion deferred") != std::string::npos,
                  P.Deferred);
        Valid[Defer].push_back(A.Buf->state().Valid);
        Valid[Defer].push_back(B.Buf->state().Valid);
      }
      EXPECT_EQ(Bufs->hasDeferred(), Defer);
      // The seventh launch, on each GPU: a waited launch synchronizes its
      // stream; a deferred one queues waits for the three other GPUs, its
      // pulls and kernel, and a record.
      for (size_t G = 0; G < Gpus.size(); ++G) {
        std::vector<std::string> T = Gpus[G]->trace();
        std::vector<std::string> Want;
        bool Pulls = std::strcmp(Issue, "parallel") == 0;
        if (Defer) // for the neighbours whose rows it reads
          for (size_t O = G ? G - 1 : 1; O <= G + 1 && O < Gpus.size();
               O += 2)
            Want.push_back("wait gpu" + std::to_string(O));
        if (Pulls)
          Want.insert(Want.end(), G == 0 || G == 3 ? 1 : 2, "pull");
        else if (Defer) // the halos are copied now: after the launch before
          Want.push_back("sync");
        Want.push_back("launch");
        Want.push_back(Defer ? "record" : "sync");
        EXPECT_EQ(T, Want) << "gpu" << G;
        Gpus[G]->clearTrace();
      }
      // A copy to the host waits for every GPU first.
      std::vector<float> Out(N);
      ASSERT_TRUE(Bufs->memcpy(Out.data(), Ptr[0], N * sizeof(float),
                               MemcpyKind::DeviceToHost)
                      .ok());
      EXPECT_FALSE(Bufs->hasDeferred());
      for (size_t G = 0; G < Gpus.size() && Defer; ++G) {
        std::vector<std::string> T = Gpus[G]->trace();
        ASSERT_FALSE(T.empty()) << "gpu" << G;
        EXPECT_EQ(T.front(), "sync") << "gpu" << G;
      }
    }
    EXPECT_TRUE(Valid[0] == Valid[1]);
  }
}

TEST_F(EngineNullGpuTest, AReplayDefersWhenALaunchIsQueuedBehindItByIssueTime) {
  // MayDefer false: the engine asks QueuedBehind once a replay is planned
  // (the fifth launch on), once per launch, and defers the replay when it
  // answers true; the launches before, which plan, never ask.
  for (bool Queued : {false, true}) {
    SCOPED_TRACE(Queued ? "queued behind" : "nothing behind");
    TearDown();
    SetUp();
    Opts.Tune.Issue = IssueMode::Parallel;
    int Asked = 0;
    QueuedBehind = [&] {
      ++Asked;
      return Queued;
    };
    std::vector<float> In(N, 1.0f);
    ASSERT_NO_FATAL_FAILURE(startBlur(In));
    for (int Step = 0; Step < 7; ++Step) {
      int Before = Asked;
      LaunchPlan P = Step % 2 ? blur(Ptr[1], Ptr[0]) : blur(Ptr[0], Ptr[1]);
      EXPECT_EQ(P.Deferred, Queued && Step >= 4) << "step " << Step;
      EXPECT_EQ(Asked - Before, Step >= 4 ? 1 : 0) << "step " << Step;
    }
    EXPECT_EQ(Bufs->hasDeferred(), Queued);
    std::vector<float> Out(N);
    ASSERT_TRUE(Bufs->memcpy(Out.data(), Ptr[0], N * sizeof(float),
                             MemcpyKind::DeviceToHost)
                    .ok());
    EXPECT_FALSE(Bufs->hasDeferred());
  }
  QueuedBehind = nullptr;
}

TEST_F(EngineNullGpuTest, AFailureOfDeferredWorkIsReportedOnceWithItsClaims) {
  // Deferred replays over four GPUs; then gpu2's stream reports an
  // asynchronous error. The next copy to the host returns it, naming gpu2,
  // and gpu2 no longer claims the halo rows it pulled (their sources still
  // hold them); the copy after that succeeds. An armed fault injector
  // turns deferral off, so that recovery can be tested.
  Opts.Tune.Issue = IssueMode::Parallel;
  MayDefer = true;
  std::vector<float> In(N, 1.0f);
  ASSERT_NO_FATAL_FAILURE(startBlur(In));
  LaunchPlan P;
  for (int Step = 0; Step < 6; ++Step)
    P = Step % 2 ? blur(Ptr[1], Ptr[0]) : blur(Ptr[0], Ptr[1]);
  ASSERT_TRUE(P.Deferred) << P.describe();
  // The last launch read b: gpu2 pulled one element of b from each side.
  const LaunchPlan::Run *On2 = nullptr;
  for (const LaunchPlan::Run &R : P.Runs)
    if (R.Device == 2)
      On2 = &R;
  ASSERT_NE(On2, nullptr);
  BufferManager::Resolved B;
  ASSERT_TRUE(Bufs->resolve(Ptr[1], B).ok());
  ByteRange Below{(On2->First * 128 - 1) * 4, On2->First * 128 * 4};
  ASSERT_TRUE(B.Buf->holds(2, Below));
  Gpus[2]->failNextSync(Result::error(ErrorCode::LaunchFailure, "boom"));
  std::vector<float> Out(N);
  Result R = Bufs->memcpy(Out.data(), Ptr[0], N * sizeof(float),
                          MemcpyKind::DeviceToHost);
  ASSERT_FALSE(R.ok());
  EXPECT_NE(R.message().find("gpu2 failed after a launch had returned"),
            std::string::npos)
      << R.message();
  EXPECT_FALSE(B.Buf->holds(2, Below));
  EXPECT_TRUE(B.Buf->holds(1, Below));
  EXPECT_FALSE(Bufs->hasDeferred());
  EXPECT_TRUE(Bufs->memcpy(Out.data(), Ptr[0], N * sizeof(float),
                           MemcpyKind::DeviceToHost)
                  .ok());
  // With a fault armed (one that never fires), nothing is deferred.
  ASSERT_TRUE(FaultInjector::global().configure("gpu9:launch:1").ok());
  for (int Step = 0; Step < 6; ++Step)
    P = Step % 2 ? blur(Ptr[1], Ptr[0]) : blur(Ptr[0], Ptr[1]);
  FaultInjector::global().clear();
  EXPECT_FALSE(P.Deferred) << P.describe();
  EXPECT_FALSE(Bufs->hasDeferred());
}

TEST_F(EngineNullGpuTest, ModulesLoadWhenTheProgramIsAdded) {
  // Each GPU loads the program's module as it is added, not in the first
  // launch of a kernel (which programs time), and only once.
  TraceGpus = true;
  start({{0}, {1}});
  auto Loads = [](const NullGpu &G) {
    std::vector<std::string> T = G.trace();
    return std::count(T.begin(), T.end(), "load");
  };
  for (auto &G : Gpus)
    EXPECT_EQ(Loads(*G), 1);
  (void)launch();
  for (auto &G : Gpus)
    EXPECT_EQ(Loads(*G), 1);
}

TEST_F(EngineNullGpuTest, ALaunchAloneOnOneGpuDefersWhateverItsArguments) {
  // One GPU, launches queued behind each other whose scalar argument
  // changes every time (a row index): none is a repeat, yet each returns
  // once queued, behind the last, with no synchronization between them.
  // The host's next copy waits for them all. A launch on another GPU while
  // one has deferred work waits for it first, and is not deferred.
  TraceGpus = true;
  MayDefer = true;
  start({{0}, {1}});
  // The first launch moves its inputs in whole: pipelined, it would wait
  // for its streams instead of deferring (docs/runtime.md, "Transfer
  // pipelining").
  PipelineOptions NoPipe;
  NoPipe.On = false;
  Eng->setPipelining(NoPipe);
  std::vector<float> In(N, 1.0f);
  uploadInputs(In);
  int Blocks = (N + 127) / 128;
  auto OnGpu = [&](Location G, int Elems) {
    float *X = Ptr[0], *Y = Ptr[1], *Z = Ptr[2];
    void *Args[] = {&X, &Y, &Z, &Elems};
    KernelLaunchRequest Req;
    Req.Kernel = K;
    Req.Grid[0] = unsigned(Blocks);
    Req.Block[0] = 128;
    Req.Args = Args;
    Req.MayDefer = true;
    Req.Partition = {{G, 0, uint64_t(Blocks)}};
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    EXPECT_TRUE(R.ok()) << R.toString();
    return Plan;
  };
  LaunchPlan First = OnGpu(0, N); // moves the inputs in, then defers
  EXPECT_TRUE(First.Deferred) << First.describe();
  Gpus[0]->clearTrace();
  for (int Elems = N - 1; Elems > N - 6; --Elems) {
    LaunchPlan P = OnGpu(0, Elems);
    EXPECT_TRUE(P.Deferred) << P.describe();
    EXPECT_FALSE(P.Repeated) << P.describe();
    EXPECT_EQ(P.BytesMoved, 0u) << P.describe();
    EXPECT_TRUE(Bufs->hasDeferred());
  }
  std::vector<std::string> Trace = Gpus[0]->trace();
  EXPECT_EQ(std::count(Trace.begin(), Trace.end(), "sync"), 0);
  EXPECT_EQ(std::count(Trace.begin(), Trace.end(), "launch"), 5);
  // gpu1 reads c, which gpu0's deferred launches write.
  float *X = Ptr[2], *Y = Ptr[2], *Z = Ptr[0];
  void *Args[] = {&X, &Y, &Z, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = unsigned(Blocks);
  Req.Block[0] = 128;
  Req.Args = Args;
  Req.MayDefer = true;
  Req.Partition = {{1, 0, uint64_t(Blocks)}};
  LaunchPlan Other;
  ASSERT_TRUE(Eng->launch(Req, Other).ok());
  EXPECT_FALSE(Other.Deferred) << Other.describe();
  Trace = Gpus[0]->trace();
  EXPECT_GE(std::count(Trace.begin(), Trace.end(), "sync"), 1);
  std::vector<float> Out(N);
  ASSERT_TRUE(Bufs->memcpy(Out.data(), Ptr[1], N * sizeof(float),
                           MemcpyKind::DeviceToHost)
                  .ok());
  EXPECT_EQ(Out, In);
  EXPECT_FALSE(Bufs->hasDeferred());
}

TEST_F(EngineNullGpuTest, AReplayNeedsTheBuffersAsTheKeptLaunchFoundThem) {
  // As above, then the host rewrites part of a between two steps: the next
  // blur(a, b) finds a in another state, so it plans its copies again (the
  // rewritten bytes go to the GPU that reads them) instead of replaying.
  std::vector<float> In(N, 1.0f);
  ASSERT_NO_FATAL_FAILURE(startBlur(In));
  for (int Step = 0; Step < 4; ++Step)
    Step % 2 ? blur(Ptr[1], Ptr[0]) : blur(Ptr[0], Ptr[1]);
  // 1 KB in the middle of gpu2's band of a.
  std::vector<float> Part(256, 5.0f);
  uint64_t At = uint64_t(N) / 2 + uint64_t(N) / 8;
  ASSERT_TRUE(Bufs->memcpy(Ptr[0] + At, Part.data(), Part.size() * 4,
                           MemcpyKind::HostToDevice)
                  .ok());
  LaunchPlan P = blur(Ptr[0], Ptr[1]);
  EXPECT_FALSE(P.Replayed) << P.describe();
  bool Moved = false;
  for (const LaunchPlan::Run &R : P.Runs)
    for (const LaunchPlan::Run::Copy &C : R.Copies)
      Moved |= C.From == "host" && C.To == "gpu2" &&
               C.T.Offset <= At * 4 && C.T.Offset + C.T.Bytes >= At * 4 + 1024;
  EXPECT_TRUE(Moved) << P.describe();
  BufferManager::Resolved A;
  ASSERT_TRUE(Bufs->resolve(Ptr[0], A).ok());
  EXPECT_TRUE(A.Buf->holds(2, {At * 4, At * 4 + 1024}));
  // The program's copy stays in a's state (Buffer::programWrites), so no
  // launch replays one from before it: the next three are planned too (the
  // host's piece of a is gone after the fifth), then replays resume.
  EXPECT_FALSE(blur(Ptr[1], Ptr[0]).Replayed);
  EXPECT_FALSE(blur(Ptr[0], Ptr[1]).Replayed);
  EXPECT_FALSE(blur(Ptr[1], Ptr[0]).Replayed);
  EXPECT_TRUE(blur(Ptr[0], Ptr[1]).Replayed);
  EXPECT_TRUE(blur(Ptr[1], Ptr[0]).Replayed);
}

TEST_F(EngineNullGpuTest, AHaloThatTheLaunchRewritesIsNotQueued) {
  // blur(a, b) over four GPUs, then blur(b, b): the neighbours' elements
  // of b that each GPU reads are also written by this launch (by the
  // neighbour), so a copy queued behind the kernel could read them after
  // the neighbour's kernel changed them. They are copied and waited for
  // before any kernel starts, as without queueing: none is pulled.
  Opts.Tune.Issue = IssueMode::Parallel;
  std::vector<float> In(N, 1.0f);
  ASSERT_NO_FATAL_FAILURE(startBlur(In));
  blur(Ptr[0], Ptr[1]);
  LaunchPlan InPlace = blur(Ptr[1], Ptr[1]);
  for (auto &G : Gpus)
    EXPECT_TRUE(G->pulls().empty()) << G->name() << "\n" << InPlace.describe();
}

TEST_F(EngineNullGpuTest, AHostReadGathersFromSeveralGpusAtOnce) {
  // Each of four GPUs wrote a quarter of a 16 MB buffer; reading it back
  // copies the quarters from one thread per GPU. The host gets every byte
  // from the GPU that wrote it: straight into the program's memory with
  // direct host copies (the buffer's host copy stays stale), through the
  // host copy without them (which then holds the whole buffer).
  start({{0}, {1}, {2}, {3}});
  BufferManager::Resolved Res;
  ASSERT_TRUE(Bufs->resolve(Ptr[2], Res).ok());
  Buffer &B = *Res.Buf;
  uint64_t Quarter = uint64_t(N) * sizeof(float) / 4;
  std::vector<uint8_t> Want(4 * Quarter);
  std::mt19937 Rng(9);
  for (Location G = 0; G < 4; ++G) {
    DeviceAddr A = 0;
    ASSERT_TRUE(Bufs->addressOn(B, G, 0, A).ok());
    uint8_t *Mem = reinterpret_cast<uint8_t *>(A);
    for (uint64_t I = G * Quarter; I < (G + 1) * Quarter; ++I)
      Want[I] = Mem[I] = uint8_t(Rng());
    ASSERT_TRUE(Bufs->markWritten(B, G, {G * Quarter, (G + 1) * Quarter}).ok());
  }
  ASSERT_TRUE(Bufs->directHostCopies());
  for (bool Direct : {true, false}) {
    Bufs->setDirectHostCopies(Direct);
    std::vector<uint8_t> Got(4 * Quarter);
    ASSERT_TRUE(Bufs->memcpy(Got.data(), Ptr[2], Got.size(),
                             MemcpyKind::DeviceToHost)
                    .ok());
    EXPECT_TRUE(Got == Want) << "direct " << Direct;
    EXPECT_EQ(B.validRanges(HostLocation).totalBytes(),
              Direct ? 0 : 4 * Quarter);
    for (Location G = 0; G < 4; ++G)
      EXPECT_TRUE(B.holds(G, {G * Quarter, (G + 1) * Quarter}));
  }
}

/// Runs \p Launches launches over four null GPUs of one model (issue mode
/// as \p Issue says, CLEAVE_FAULT as \p Fault) and returns each launch's
/// plan, then the tables' sample count; \p Posted counts the ranges handed
/// to issue workers (CLEAVE_LOG=phases' "post:" steps).
struct IssueRun {
  std::vector<std::string> Plans;
  unsigned Samples = 0;
  size_t Posted = 0;
};

TEST_F(EngineNullGpuTest, IssueWorkersDecideAndRecordAsTheLaunchingThreadDoes) {
  auto Run = [&](const char *Issue, const char *Fault, int Launches,
                 bool WithCpu) {
    IssueRun Out;
    TearDown();
    SetUp();
    Opts.Tune.Issue = issueMode(Issue);
    start({{0, "model A"}, {1, "model A"}, {2, "model A"}, {3, "model A"}},
          WithCpu);
    EXPECT_TRUE(FaultInjector::global().configure(Fault).ok());
    Eng->setLog(logOf("phases"));
    testing::internal::CaptureStderr();
    for (int I = 0; I < Launches; ++I) {
      LaunchPlan P = launch();
      // Every block ran once, besides those of a refused range (listed
      // too) that ran again elsewhere.
      uint64_t Blocks = 0;
      for (const LaunchPlan::Run &R : P.Runs)
        Blocks += R.Count;
      for (const LaunchPlan::Recovery &R : P.Recoveries)
        for (auto [First, End] : R.Blocks)
          Blocks -= End - First;
      EXPECT_EQ(Blocks, uint64_t(N + 127) / 128) << P.describe();
      Out.Plans.push_back(P.describe());
    }
    std::string Log = testing::internal::GetCapturedStderr();
    Eng->setLog(LogOptions());
    FaultInjector::global().clear();
    for (size_t At = Log.find(" post:"); At != std::string::npos;
         At = Log.find(" post:", At + 1))
      ++Out.Posted;
    PerfCache C = flushed();
    for (const auto &[Dev, Tables] : C.tables())
      for (const auto &[Key, Rows] : Tables)
        for (const auto &[Blocks, S] : Rows)
          Out.Samples += S.Samples;
    return Out;
  };
  // With the CPU first, the GPUs' locations (the workers' slots) start at
  // 1; the CPU may take a share beside them.
  for (bool WithCpu : {false, true})
  for (const char *Fault : {"", "gpu2:launch:3"}) {
    SCOPED_TRACE(std::string(Fault) + (WithCpu ? " with the CPU" : ""));
    IssueRun Serial = Run("serial", Fault, 12, WithCpu);
    IssueRun Parallel = Run("parallel", Fault, 12, WithCpu);
    EXPECT_EQ(Serial.Posted, 0u);
    // Three GPUs of four go to workers whenever they poll for work; a worker
    // that went to sleep between two launches is issued to inline.
    EXPECT_GT(Parallel.Posted, 0u);
    EXPECT_LE(Parallel.Posted, 3u * 12);
    EXPECT_EQ(Serial.Plans, Parallel.Plans);
    EXPECT_EQ(Serial.Samples, Parallel.Samples);
    if (*Fault) {
      // gpu2's third launch was refused: its blocks ran elsewhere.
      bool Recovered = false;
      for (const std::string &P : Parallel.Plans)
        Recovered |= P.find("gpu2 failed") != std::string::npos;
      EXPECT_TRUE(Recovered);
    }
  }
}

} // namespace
