//===- EngineTest.cpp - The launch engine over CPU and fake devices -------===//
//
// Part of Cleave. A small device module (unittests/Inputs/engine_test.ll)
// goes through the compiler's bundle writer at build time, so the engine
// sees real metadata and footprints; the CPU variants are hand-written here
// in the CpuKernelABI.h convention (the lit tests in test/Runtime/Engine use compiled ones). Covered: the
// policies' splits, request and partition validation, exact splits,
// merges through a CPU merge variant, kernels that cannot be split,
// devices that cannot run a kernel, recovery from injected launch and
// allocation faults, and symbols.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Engine.h"
#include "../TestInputs.h"
#include "cleave/rt/Options.h"
#include "cleave/rt/PartitionParams.h"

#include "FakeDevice.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>
#include <set>

using namespace cleave::rt;

namespace {

const std::string &bundleBytes() {
  static const std::string Bytes =
      cleave::test::testBundle("engine_test");
  return Bytes;
}

// The CPU copy of @scale that the CPU variants read.
float CpuScale = 1.0f;

void vecaddCpu(void **Args, const cleave_cpu_launch *L,
                          uint64_t First, uint64_t Count, void *) {
  const float *A = *static_cast<const float **>(Args[0]);
  const float *B = *static_cast<const float **>(Args[1]);
  float *C = *static_cast<float **>(Args[2]);
  int N = *static_cast<int *>(Args[3]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N)
        C[I] = (A[I] + B[I]) * CpuScale;
    }
}

void keepCpu(void **Args, const cleave_cpu_launch *L,
                        uint64_t First, uint64_t Count, void *) {
  const float *X = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N && X[I] > 0)
        Out[I] = X[I] * 2;
    }
}

// The merge kernel of keep: (x, out, n, partial_out, 12 partition ints),
// run over blocks [0, count) of a (count, 1, 1) grid.
void keepMergeCpu(void **Args, const cleave_cpu_launch *L,
                             uint64_t First, uint64_t Count, void *) {
  const float *X = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  const float *Partial = *static_cast<const float **>(Args[3]);
  uint32_t P[NumPartitionParams];
  for (unsigned I = 0; I < NumPartitionParams; ++I)
    P[I] = *static_cast<uint32_t *>(Args[4 + I]);
  for (uint64_t C = First; C < First + Count; ++C) {
    BlockIndex B = decodeBlockIndex(uint32_t(C), P);
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(B.X) * L->block[0] + T;
      if (I < N && X[I] > 0)
        Out[I] = Partial[I];
    }
  }
}

void histCpu(void **Args, const cleave_cpu_launch *L,
                        uint64_t First, uint64_t Count, void *) {
  const unsigned char *D = *static_cast<const unsigned char **>(Args[0]);
  unsigned *Bins = *static_cast<unsigned **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N)
        __atomic_fetch_add(&Bins[D[I]], 1u, __ATOMIC_RELAXED);
    }
}

void ticketsCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
                uint64_t Count, void *) {
  unsigned *Next = *static_cast<unsigned **>(Args[0]);
  unsigned *Ticket = *static_cast<unsigned **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I < N)
        Ticket[I] = __atomic_fetch_add(Next, 1u, __ATOMIC_RELAXED);
    }
}

void histmarkCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
                 uint64_t Count, void *) {
  const unsigned char *D = *static_cast<const unsigned char **>(Args[0]);
  unsigned *Bins = *static_cast<unsigned **>(Args[1]);
  unsigned char *Mark = *static_cast<unsigned char **>(Args[2]);
  int N = *static_cast<int *>(Args[3]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk)
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t I = int64_t(Blk) * L->block[0] + T;
      if (I >= N)
        continue;
      __atomic_fetch_add(&Bins[D[I]], 1u, __ATOMIC_RELAXED);
      if (D[I] >= 128)
        Mark[I] = 1;
    }
}

const cleave_cpu_kernel_desc VecaddDesc = {"vecadd", vecaddCpu, 0, 0, 4, 0};
const cleave_cpu_kernel_desc KeepDesc = {"keep", keepCpu, 0, 0, 3, 0};
const cleave_cpu_kernel_desc KeepMergeDesc = {"__cleave_merge_keep",
                                              keepMergeCpu, 0, 0, 16, 0};
// @tr on blocks [First, First + Count) of the grid L->grid; with Swapped,
// as its twin: block (i, j) of that grid is @tr's block (j, i).
void trBlocks(void **Args, const cleave_cpu_launch *L, uint64_t First,
              uint64_t Count, bool Swapped) {
  const float *In = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int W = *static_cast<int *>(Args[2]), H = *static_cast<int *>(Args[3]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk) {
    uint64_t I = Blk % L->grid[0], J = Blk / L->grid[0];
    uint64_t BX = Swapped ? J : I, BY = Swapped ? I : J;
    for (uint32_t T = 0; T < L->block[0]; ++T) {
      int64_t X = int64_t(BX) * L->block[0] + T, Y = int64_t(BY);
      if (X < W && Y < H)
        Out[X * H + Y] = In[Y * W + X];
    }
  }
}
void trCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
           uint64_t Count, void *) {
  trBlocks(Args, L, First, Count, false);
}
void trTwinCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
               uint64_t Count, void *) {
  trBlocks(Args, L, First, Count, true);
}

const cleave_cpu_kernel_desc HistDesc = {"hist", histCpu, 0, 0, 3, 0};
const cleave_cpu_kernel_desc TrDesc = {"tr", trCpu, 0, 0, 4, 0};
const cleave_cpu_kernel_desc TrTwinDesc = {"__cleave_sw_tr", trTwinCpu, 0, 0,
                                           4, 0};
const cleave_cpu_kernel_desc TicketsDesc = {"tickets", ticketsCpu, 0, 0, 3, 0};
const cleave_cpu_kernel_desc HistmarkDesc = {"histmark", histmarkCpu, 0, 0, 4, 0};

std::map<std::string, void *> cpuSymbols(bool WithMerge = true,
                                         bool WithTwin = true) {
  std::map<std::string, void *> S = {
      {"__cleave_cpu_tr_desc", (void *)&TrDesc},
      {"__cleave_cpu_vecadd_desc", (void *)&VecaddDesc},
      {"__cleave_cpu_keep_desc", (void *)&KeepDesc},
      {"__cleave_cpu_hist_desc", (void *)&HistDesc},
      {"__cleave_cpu_tickets_desc", (void *)&TicketsDesc},
      {"__cleave_cpu_histmark_desc", (void *)&HistmarkDesc},
      {"__cleave_cpu_var_scale", (void *)&CpuScale}};
  if (WithMerge)
    S["__cleave_cpu___cleave_merge_keep_desc"] = (void *)&KeepMergeDesc;
  if (WithTwin)
    S["__cleave_cpu___cleave_sw_tr_desc"] = (void *)&TrTwinDesc;
  return S;
}

/// Devices: NumCpu CPU devices (cpu0 on the host copies), then fakes.
class EngineTest : public ::testing::Test {
protected:
  void SetUp() override {
    FaultInjector::global().clear();
    CpuScale = 1.0f;
  }
  void TearDown() override { FaultInjector::global().clear(); }

  void build(unsigned NumCpu, unsigned NumFake = 0, bool WithMerge = true,
             bool WithTwin = true) {
    ASSERT_FALSE(bundleBytes().empty());
    // Buffers go before the devices they live on.
    Eng.reset();
    Bufs.reset();
    Fakes.clear();
    Reg.reset();
    ASSERT_TRUE(DeviceRegistry::create(
                    std::string(NumCpu == 1 ? "cpu"
                                : NumCpu == 2 ? "cpu,cpu"
                                              : "cpu,cpu,cpu"),
                    Reg, RegistryOptions{"none"})
                    .ok());
    std::vector<Device *> Devs = Reg->devices();
    for (unsigned I = 0; I < NumFake; ++I) {
      Fakes.push_back(
          std::make_unique<test::FakeDevice>("fake" + std::to_string(I)));
      Devs.push_back(Fakes.back().get());
    }
    Bufs = std::make_unique<BufferManager>(Devs);
    Exec = std::make_unique<CpuExecutor>(2);
    Eng = std::make_unique<Engine>(*Bufs, *Exec, PartitionPolicy::Even, Opts);
    Result R = Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                               cpuSymbols(WithMerge, WithTwin));
    ASSERT_TRUE(R.ok()) << R.toString();
  }

  template <class T> T *upload(const std::vector<T> &V) {
    void *P = nullptr;
    EXPECT_TRUE(Bufs->allocate(V.size() * sizeof(T), P).ok());
    EXPECT_TRUE(
        Bufs->memcpy(P, V.data(), V.size() * sizeof(T), MemcpyKind::HostToDevice)
            .ok());
    return static_cast<T *>(P);
  }
  template <class T> std::vector<T> download(const T *P, size_t N) {
    std::vector<T> V(N);
    EXPECT_TRUE(
        Bufs->memcpy(V.data(), P, N * sizeof(T), MemcpyKind::DeviceToHost).ok());
    return V;
  }

  /// A launch of hist over 40 blocks of 250 random bytes into 256 bins
  /// that start at \p Start, both uploaded. Not copyable: Args points
  /// into it.
  struct HistLaunch {
    std::vector<unsigned char> Data;
    std::vector<unsigned> Bins;
    unsigned char *PD = nullptr;
    unsigned *PB = nullptr;
    int N = 10000;
    void *Args[3] = {&PD, &PB, &N};
    KernelLaunchRequest Req;
    HistLaunch() = default;
    HistLaunch(const HistLaunch &) = delete;
  };
  void makeHist(HistLaunch &H, unsigned Start) {
    H.Data.resize(H.N);
    for (unsigned char &X : H.Data)
      X = (unsigned char)(Rng() & 255);
    H.Bins.assign(256, Start);
    H.PD = upload(H.Data);
    H.PB = upload(H.Bins);
    H.Req.Kernel = Eng->findKernel("hist");
    H.Req.Grid[0] = 40;
    H.Req.Block[0] = 250;
    H.Req.Args = H.Args;
  }

  // Destroyed in reverse order: the engine, then buffers, then devices.
  std::unique_ptr<DeviceRegistry> Reg;
  std::vector<std::unique_ptr<test::FakeDevice>> Fakes;
  std::unique_ptr<CpuExecutor> Exec;
  std::unique_ptr<BufferManager> Bufs;
  /// The engine's options (build()).
  Options Opts;
  std::unique_ptr<Engine> Eng;
  std::mt19937 Rng{1234};
};

TEST(EnginePolicy, Splits) {
  std::vector<PartitionRange> P;
  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::Even, 10, {0, 1, 2},
                                     {1, 1, 1}, P)
                  .ok());
  ASSERT_EQ(P.size(), 3u);
  EXPECT_EQ(P[0].First, 0u);
  EXPECT_EQ(P[0].Count, 4u);
  EXPECT_EQ(P[1].Count, 3u);
  EXPECT_EQ(P[2].First, 7u);
  EXPECT_EQ(P[2].Count, 3u);

  // A grid smaller than the number of devices gives fewer ranges.
  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::Even, 2, {0, 1, 2},
                                     {1, 1, 1}, P)
                  .ok());
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(P[1].Device, 1);

  // Proportional: 3:1.
  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::Proportional, 100,
                                     {0, 4}, {3, 1}, P)
                  .ok());
  ASSERT_EQ(P.size(), 2u);
  EXPECT_EQ(P[0].Count, 75u);
  EXPECT_EQ(P[1].Device, 4);
  EXPECT_EQ(P[1].First, 75u);
  EXPECT_EQ(P[1].Count, 25u);

  // A device far slower than the others gets nothing.
  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::Proportional, 10,
                                     {0, 1}, {1e-6, 1e6}, P)
                  .ok());
  ASSERT_EQ(P.size(), 1u);
  EXPECT_EQ(P[0].Device, 1);
  EXPECT_EQ(P[0].Count, 10u);

  ASSERT_TRUE(computePolicyPartition(PartitionPolicy::SingleDevice, 9, {2, 0},
                                     {1, 1}, P)
                  .ok());
  ASSERT_EQ(P.size(), 1u);
  EXPECT_EQ(P[0].Device, 2);
  EXPECT_EQ(P[0].Count, 9u);

  // Random sizes and weights: contiguous, covering, in device order.
  std::mt19937 Rng(7);
  for (int Rep = 0; Rep < 500; ++Rep) {
    uint64_t Blocks = 1 + Rng() % 5000;
    unsigned N = 1 + Rng() % 5;
    std::vector<Location> D;
    std::vector<double> W;
    for (unsigned I = 0; I < N; ++I) {
      D.push_back(Location(I));
      W.push_back(double(1 + Rng() % 100));
    }
    for (PartitionPolicy Pol :
         {PartitionPolicy::Even, PartitionPolicy::Proportional}) {
      ASSERT_TRUE(computePolicyPartition(Pol, Blocks, D, W, P).ok());
      uint64_t Next = 0;
      Location Last = -1;
      for (const PartitionRange &R : P) {
        EXPECT_EQ(R.First, Next);
        EXPECT_GT(R.Count, 0u);
        EXPECT_GT(R.Device, Last);
        Last = R.Device;
        Next += R.Count;
      }
      EXPECT_EQ(Next, Blocks);
    }
  }
  PartitionPolicy Pol;
  EXPECT_TRUE(parsePartitionPolicy("proportional", Pol));
  EXPECT_EQ(Pol, PartitionPolicy::Proportional);
  EXPECT_FALSE(parsePartitionPolicy("fastest", Pol));
}

TEST_F(EngineTest, ExactSplitAndResidency) {
  build(3);
  const KernelHandle *K = Eng->findKernel("vecadd");
  ASSERT_NE(K, nullptr);
  EXPECT_EQ(K->Cpu, &VecaddDesc);
  EXPECT_EQ(Eng->findKernel("nope"), nullptr);
  int N = 5000;
  std::vector<float> A(N), B(N), C(N, 0);
  for (int I = 0; I < N; ++I)
    A[I] = float(I), B[I] = float(2 * I);
  float *PA = upload(A), *PB = upload(B), *PC = upload(C);
  void *Args[] = {&PA, &PB, &PC, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = (N + 63) / 64;
  Req.Block[0] = 64;
  Req.Args = Args;
  for (int Rep = 0; Rep < 2; ++Rep) {
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    ASSERT_TRUE(R.ok()) << R.toString();
    EXPECT_TRUE(Plan.Split);
    EXPECT_EQ(Plan.Reconcile, "exact") << Plan.describe();
    EXPECT_EQ(Plan.Runs.size(), 3u);
    if (Rep == 1)
      EXPECT_EQ(Plan.BytesMoved, 0u) << Plan.describe();
    std::vector<float> Got = download(PC, N);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], float(3 * I)) << I;
  }
}

TEST_F(EngineTest, ALaunchThatChangedNothingRepeatsUntilABufferChanges) {
  // cpu1 and cpu2 hold replicas of their own. The first launch moves their
  // inputs there; the second moves nothing and changes no buffer's state;
  // from the third on, the launch repeats the second's runs, until the
  // host writes a buffer it uses. The kernel reads the variable @scale.
  build(3);
  const KernelHandle *K = Eng->findKernel("vecadd");
  int N = 6000;
  std::vector<float> A(N), B(N);
  for (int I = 0; I < N; ++I) {
    A[I] = float(I % 101);
    B[I] = float(I % 13) - 6;
  }
  float *PA = upload(A), *PB = upload(B),
        *PC = upload(std::vector<float>(N, 0));
  void *Args[] = {&PA, &PB, &PC, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = (N + 63) / 64;
  Req.Block[0] = 64;
  Req.Args = Args;
  auto Launch = [&] {
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    EXPECT_TRUE(R.ok()) << R.toString();
    EXPECT_EQ(Plan.Runs.size(), 3u) << Plan.describe();
    return Plan;
  };
  auto Expect = [&](const std::vector<float> &Want) {
    std::vector<float> Got = download(PC, N);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], Want[I]) << I;
  };
  std::vector<float> Sum(N);
  for (int I = 0; I < N; ++I)
    Sum[I] = A[I] + B[I];

  LaunchPlan P = Launch();
  EXPECT_FALSE(P.Repeated);
  EXPECT_GT(P.BytesMoved, 0u);
  P = Launch();
  EXPECT_FALSE(P.Repeated);
  EXPECT_EQ(P.BytesMoved, 0u);
  for (int Rep = 0; Rep < 3; ++Rep) {
    P = Launch();
    EXPECT_TRUE(P.Repeated) << P.describe();
    EXPECT_EQ(P.Reconcile, "exact");
    EXPECT_NE(P.describe().find(", repeated"), std::string::npos);
  }
  Expect(Sum);

  // The host read C back: the next launch makes the devices' copies the
  // only ones again, the one after forgets the read (Buffer::readBackBytes),
  // the third is kept.
  EXPECT_FALSE(Launch().Repeated);
  EXPECT_FALSE(Launch().Repeated);
  EXPECT_FALSE(Launch().Repeated);
  EXPECT_TRUE(Launch().Repeated);

  // The host writes A: its bytes move again.
  for (int I = 0; I < N; ++I) {
    A[I] = float(I % 7);
    Sum[I] = A[I] + B[I];
  }
  ASSERT_TRUE(Bufs->memcpy(PA, A.data(), N * sizeof(float),
                           MemcpyKind::HostToDevice)
                  .ok());
  P = Launch();
  EXPECT_FALSE(P.Repeated);
  EXPECT_GT(P.BytesMoved, 0u);
  EXPECT_FALSE(Launch().Repeated);
  EXPECT_TRUE(Launch().Repeated);
  Expect(Sum);

  // A new value of the variable it reads stops the repeats too: the CPU
  // devices' copy (CpuScale) is written only when a launch syncs it.
  for (int Rep = 0; Rep < 3; ++Rep)
    EXPECT_FALSE(Launch().Repeated) << "after the read: " << Rep;
  EXPECT_TRUE(Launch().Repeated);
  float Two = 2.0f;
  ASSERT_TRUE(Eng->copyToSymbol("scale", 0, &Two, sizeof(Two)).ok());
  EXPECT_FALSE(Launch().Repeated);
  EXPECT_TRUE(Launch().Repeated);
  EXPECT_EQ(CpuScale, 2.0f);
  for (float &X : Sum)
    X *= 2;
  Expect(Sum);

  // In place, C = (C + B) * 2: each repeat computes from the last one's
  // results (after the read, again from the fourth launch on).
  void *InPlace[] = {&PC, &PB, &PC, &N};
  Req.Args = InPlace;
  std::vector<float> C = Sum;
  for (int Rep = 0; Rep < 6; ++Rep) {
    P = Launch();
    EXPECT_EQ(P.Repeated, Rep >= 3) << Rep;
    for (int I = 0; I < N; ++I)
      C[I] = (C[I] + B[I]) * 2;
  }
  Expect(C);
}

TEST_F(EngineTest, RepeatedLaunchesMatchAPlainReference) {
  // Random launches of vecadd over three buffers (an output may be an
  // input), each one to four times in a row, under the policy or one of
  // three partitions, between random host writes, memsets and reads of
  // random ranges. Every read, and every buffer at the end, must equal
  // plain host arithmetic, and launches must repeat.
  build(3);
  const KernelHandle *K = Eng->findKernel("vecadd");
  int N = 3000;
  unsigned Blocks = (N + 63) / 64; // 47
  std::vector<float> Ref[3];
  float *Ptr[3];
  for (int X = 0; X < 3; ++X) {
    Ref[X].resize(N);
    for (float &V : Ref[X])
      V = float(int(Rng() % 17) - 8);
    Ptr[X] = upload(Ref[X]);
  }
  const std::vector<std::vector<PartitionRange>> Partitions = {
      {},
      {{2, 0, Blocks}},
      {{1, 0, 20}, {2, 20, Blocks - 20}},
      {{0, 0, 10}, {1, 10, 20}, {2, 30, Blocks - 30}}};
  auto Same = [](const float *A, const float *B, size_t N) {
    return std::memcmp(A, B, N * sizeof(float)) == 0;
  };
  unsigned Repeats = 0, Launches = 0;
  for (int Step = 0; Step < 400; ++Step) {
    unsigned Op = Rng() % 10;
    int X = int(Rng() % 3);
    int Lo = int(Rng() % N), Hi = Lo + 1 + int(Rng() % (N - Lo));
    if (Op < 6) {
      int In1 = int(Rng() % 3), In2 = int(Rng() % 3);
      void *Args[] = {&Ptr[In1], &Ptr[In2], &Ptr[X], &N};
      KernelLaunchRequest Req;
      Req.Kernel = K;
      Req.Grid[0] = Blocks;
      Req.Block[0] = 64;
      Req.Args = Args;
      Req.Partition = Partitions[Rng() % Partitions.size()];
      for (unsigned Times = 1 + Rng() % 4; Times; --Times) {
        LaunchPlan Plan;
        Result R = Eng->launch(Req, Plan);
        ASSERT_TRUE(R.ok()) << R.toString();
        for (int I = 0; I < N; ++I)
          Ref[X][I] = Ref[In1][I] + Ref[In2][I];
        Repeats += Plan.Repeated;
        ++Launches;
      }
    } else if (Op < 8) {
      std::vector<float> V(Hi - Lo);
      for (float &F : V)
        F = float(int(Rng() % 17) - 8);
      ASSERT_TRUE(Bufs->memcpy(Ptr[X] + Lo, V.data(), V.size() * sizeof(float),
                               MemcpyKind::HostToDevice)
                      .ok());
      std::copy(V.begin(), V.end(), Ref[X].begin() + Lo);
    } else if (Op == 8) {
      ASSERT_TRUE(Bufs->memset(Ptr[X] + Lo, 0, (Hi - Lo) * sizeof(float)).ok());
      std::fill(Ref[X].begin() + Lo, Ref[X].begin() + Hi, 0.0f);
    } else {
      std::vector<float> Got(Hi - Lo);
      ASSERT_TRUE(Bufs->memcpy(Got.data(), Ptr[X] + Lo,
                               Got.size() * sizeof(float),
                               MemcpyKind::DeviceToHost)
                      .ok());
      ASSERT_TRUE(Same(Got.data(), Ref[X].data() + Lo, Got.size()))
          << "step " << Step << ", buffer " << X;
    }
  }
  for (int X = 0; X < 3; ++X)
    EXPECT_TRUE(Same(download(Ptr[X], N).data(), Ref[X].data(), N)) << X;
  EXPECT_GT(Repeats, Launches / 5) << Repeats << " of " << Launches;
}

TEST_F(EngineTest, ARepeatedLaunchWhoseDeviceFailsIsRecovered) {
  // C = C + B in place, repeating; cpu1's launch fails in the fourth: its
  // blocks run on another device, with the footprints the repeat kept.
  build(3);
  const KernelHandle *K = Eng->findKernel("vecadd");
  int N = 4000;
  std::vector<float> B(N), C(N);
  for (int I = 0; I < N; ++I) {
    B[I] = float(I % 9) - 4;
    C[I] = float(I % 5);
  }
  float *PB = upload(B), *PC = upload(C);
  void *Args[] = {&PC, &PB, &PC, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = N / 40;
  Req.Block[0] = 40;
  Req.Args = Args;
  for (int Rep = 0; Rep < 6; ++Rep) {
    if (Rep == 3)
      ASSERT_TRUE(FaultInjector::global().configure("cpu1:launch:1").ok());
    LaunchPlan Plan;
    testing::internal::CaptureStderr();
    Result R = Eng->launch(Req, Plan);
    std::string Err = testing::internal::GetCapturedStderr();
    FaultInjector::global().clear();
    ASSERT_TRUE(R.ok()) << R.toString();
    for (int I = 0; I < N; ++I)
      C[I] += B[I];
    if (Rep == 2 || Rep == 3)
      EXPECT_TRUE(Plan.Repeated) << Rep;
    if (Rep == 3) {
      ASSERT_EQ(Plan.Recoveries.size(), 1u) << Plan.describe();
      EXPECT_EQ(Plan.Recoveries[0].Device, "cpu1");
      EXPECT_NE(Err.find("cleave: cpu1 failed"), std::string::npos) << Err;
    }
    if (Rep == 4) // the recovery changed where C is valid
      EXPECT_FALSE(Plan.Repeated);
  }
  std::vector<float> Got = download(PC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], C[I]) << I;
}

TEST_F(EngineTest, RandomPartitionsWithMerges) {
  build(3);
  const KernelHandle *K = Eng->findKernel("keep");
  ASSERT_NE(K, nullptr);
  ASSERT_EQ(K->CpuMerge, &KeepMergeDesc);
  int N = 3001;
  unsigned Blocks = (N + 31) / 32;
  for (int Rep = 0; Rep < 30; ++Rep) {
    std::vector<float> X(N), Out(N), Want(N);
    std::uniform_real_distribution<float> D(-1, 1);
    for (int I = 0; I < N; ++I) {
      X[I] = D(Rng);
      Out[I] = D(Rng);
      Want[I] = X[I] > 0 ? 2 * X[I] : Out[I];
    }
    float *PX = upload(X), *PO = upload(Out);
    void *Args[] = {&PX, &PO, &N};
    KernelLaunchRequest Req;
    Req.Kernel = K;
    Req.Grid[0] = Blocks;
    Req.Block[0] = 32;
    Req.Args = Args;
    // Random cut points and devices.
    std::vector<uint64_t> Cuts = {0, Blocks};
    unsigned Pieces = 1 + Rng() % 6;
    while (Cuts.size() < Pieces + 1) {
      uint64_t C = 1 + Rng() % (Blocks - 1);
      if (std::find(Cuts.begin(), Cuts.end(), C) == Cuts.end())
        Cuts.push_back(C);
    }
    std::sort(Cuts.begin(), Cuts.end());
    for (size_t I = 0; I + 1 < Cuts.size(); ++I)
      Req.Partition.push_back(
          {Location(Rng() % 3), Cuts[I], Cuts[I + 1] - Cuts[I]});
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    ASSERT_TRUE(R.ok()) << R.toString();
    std::set<Location> Devs;
    for (const PartitionRange &P : Req.Partition)
      Devs.insert(P.Device);
    if (Devs.size() > 1)
      EXPECT_EQ(Plan.Reconcile, "merge") << Plan.describe();
    std::vector<float> Got = download(PO, N);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], Want[I]) << I << "\n" << Plan.describe();
    ASSERT_TRUE(Bufs->free(PX).ok());
    ASSERT_TRUE(Bufs->free(PO).ok());
  }
}

TEST_F(EngineTest, NoMergeVariantRunsWhole) {
  build(2, 0, /*WithMerge=*/false);
  const KernelHandle *K = Eng->findKernel("keep");
  ASSERT_EQ(K->CpuMerge, nullptr);
  int N = 1000;
  std::vector<float> X(N, 1.0f), Out(N, 0);
  float *PX = upload(X), *PO = upload(Out);
  void *Args[] = {&PX, &PO, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 10;
  Req.Block[0] = 100;
  Req.Args = Args;
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_FALSE(Plan.Split);
  EXPECT_NE(Plan.Reason.find("merge kernel"), std::string::npos)
      << Plan.Reason;
  ASSERT_EQ(Plan.Runs.size(), 1u);
  EXPECT_EQ(Plan.Runs[0].Count, 10u);
  for (float V : download(PO, N))
    ASSERT_EQ(V, 2.0f);
}

TEST_F(EngineTest, AtomicsWhoseResultsAreUsedRunWhole) {
  build(3);
  const KernelHandle *K = Eng->findKernel("tickets");
  ASSERT_NE(K, nullptr);
  EXPECT_FALSE(K->Info->CanSplit);
  EXPECT_TRUE(K->Info->Combined.empty());
  int N = 10000;
  std::vector<unsigned> Next(1, 5), Tickets(N, 0);
  unsigned *PN = upload(Next), *PT = upload(Tickets);
  void *Args[] = {&PN, &PT, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 40;
  Req.Block[0] = 250;
  Req.Args = Args;
  Req.Partition = {{1, 0, 10}, {2, 10, 25}, {0, 35, 5}};
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_FALSE(Plan.Split);
  EXPECT_NE(Plan.Reason.find("global-atomic"), std::string::npos)
      << Plan.Reason;
  ASSERT_EQ(Plan.Runs.size(), 1u);
  EXPECT_EQ(Plan.Runs[0].DeviceName, "cpu2"); // the largest share
  // One counter: the tickets are 5, 6, ..., N + 4, each once.
  std::vector<unsigned> Got = download(PT, N);
  std::sort(Got.begin(), Got.end());
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Got[I], unsigned(I + 5)) << I;
  EXPECT_EQ(download(PN, 1)[0], unsigned(N + 5));
}

/// The histogram of \p D added to \p Bins, \p Times times.
std::vector<unsigned> addHistogram(std::vector<unsigned> Bins,
                                   const std::vector<unsigned char> &D,
                                   int Times) {
  for (unsigned char X : D)
    Bins[X] += Times;
  return Bins;
}

TEST_F(EngineTest, CombinedAtomicsSplitAndAddUp) {
  build(3);
  const KernelHandle *K = Eng->findKernel("hist");
  ASSERT_NE(K, nullptr);
  EXPECT_TRUE(K->Info->CanSplit);
  ASSERT_EQ(K->Info->Combined.size(), 1u);
  EXPECT_EQ(K->Info->Combined[0].Arg, 1u);
  EXPECT_EQ(K->Info->Combined[0].Op, CombineOp::Add);
  int N = 10000;
  std::vector<unsigned char> D(N);
  std::vector<unsigned> Bins(256);
  for (int I = 0; I < N; ++I)
    D[I] = (unsigned char)(Rng() & 255);
  // Counts before the launch, which the partial bins add to.
  for (unsigned &B : Bins)
    B = unsigned(Rng() % 100000);
  unsigned char *PD = upload(D);
  unsigned *PB = upload(Bins);
  void *Args[] = {&PD, &PB, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 40;
  Req.Block[0] = 250;
  Req.Args = Args;
  // Two ranges on cpu1: each has its own partial bins.
  Req.Partition = {{1, 0, 10}, {2, 10, 15}, {0, 25, 5}, {1, 30, 10}};
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_TRUE(Plan.Split) << Plan.describe();
  EXPECT_EQ(Plan.Runs.size(), 4u);
  EXPECT_NE(Plan.Combined.find("argument 1 (add i32, 1024 bytes)"),
            std::string::npos)
      << Plan.describe();
  EXPECT_EQ(download(PB, 256), addHistogram(Bins, D, 1));

  // The whole grid on cpu2: the bins are valid there alone. Then a split
  // again, whose partials add to them (fetched to the host first).
  Req.Partition = {{2, 0, 40}};
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_TRUE(Plan.Combined.empty());
  Req.Partition = {{0, 0, 20}, {1, 20, 20}};
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_FALSE(Plan.Combined.empty());
  EXPECT_EQ(download(PB, 256), addHistogram(Bins, D, 3));
}

TEST_F(EngineTest, ALaunchRunsAsItsSwappedTwinOnlyWhenThatIsSafeAndPays) {
  // @tr's twin (x and y swapped) writes whole rows of out per range, @tr
  // itself a column band: the Even policy over three CPU devices runs the
  // twin, the result matches the reference. The kernel itself runs when
  // the twin has no CPU variant, with CLEAVE_TUNE=swap=off, for an explicit
  // partition, and when gx exceeds the twin's y limit (65535).
  auto Run = [&](int W, int H, std::vector<PartitionRange> Part) {
    std::vector<float> In(size_t(W) * H), Want(In.size());
    for (size_t I = 0; I < In.size(); ++I)
      In[I] = float(Rng() % 1000);
    for (int Y = 0; Y < H; ++Y)
      for (int X = 0; X < W; ++X)
        Want[size_t(X) * H + Y] = In[size_t(Y) * W + X];
    float *PI = upload(In), *PO = upload(std::vector<float>(In.size(), -1));
    void *Args[] = {&PI, &PO, &W, &H};
    KernelLaunchRequest Req;
    Req.Kernel = Eng->findKernel("tr");
    EXPECT_NE(Req.Kernel, nullptr);
    Req.Grid[0] = unsigned(W + 15) / 16;
    Req.Grid[1] = unsigned(H);
    Req.Block[0] = 16;
    Req.Args = Args;
    Req.Partition = std::move(Part);
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    EXPECT_TRUE(R.ok()) << R.toString();
    EXPECT_EQ(download(PO, In.size()), Want) << Plan.describe();
    return Plan;
  };
  build(3);
  ASSERT_NE(Eng->findKernel("tr")->Swapped, nullptr);
  LaunchPlan P = Run(200, 90, {});
  EXPECT_TRUE(P.Swapped) << P.describe();
  EXPECT_EQ(P.Runs.size(), 3u) << P.describe();
  EXPECT_EQ(P.Reconcile, "exact") << P.describe();
  EXPECT_NE(P.describe().find("launch tr [x<->y]: split over 3"),
            std::string::npos)
      << P.describe();

  P = Run(200, 90, {{0, 0, 500}, {1, 500, 500}, {2, 1000, 170}}); // 13 x 90
  EXPECT_FALSE(P.Swapped) << P.describe();

  // 65537 x 2 blocks: the twin's grid would be 2 x 65537.
  P = Run(65537 * 16, 2, {});
  EXPECT_FALSE(P.Swapped) << P.describe();

  Opts.Tune.Swap = false; // CLEAVE_TUNE=swap=off
  build(3);
  P = Run(200, 90, {});
  EXPECT_FALSE(P.Swapped) << P.describe();
  Opts.Tune.Swap = true;

  build(3, 0, /*WithMerge=*/true, /*WithTwin=*/false);
  P = Run(200, 90, {});
  EXPECT_FALSE(P.Swapped) << P.describe();
}

TEST_F(EngineTest, TheModelPolicyCombinesOutputsOverCpuDevices) {
  // The options' default CacheDir is empty: no performance cache.
  Opts.Log.Plan = true;
  build(3);
  Eng->setPolicy(PartitionPolicy::Model);
  HistLaunch H;
  makeHist(H, 1);
  LaunchPlan Plan;
  testing::internal::CaptureStderr();
  Result R = Eng->launch(H.Req, Plan);
  std::string Log = testing::internal::GetCapturedStderr();
  Opts.Log.Plan = false;
  ASSERT_TRUE(R.ok()) << R.toString();
  // No GPU, so no wave to fill (EngineNullGpuTest has the GPU case): the
  // planner alone decides, and the counts are right whatever it chose.
  EXPECT_EQ(Log.find("its combined outputs"), std::string::npos) << Log;
  EXPECT_EQ(Plan.Runs.size() > 1, !Plan.Combined.empty()) << Plan.describe();
  EXPECT_EQ(download(H.PB, 256), addHistogram(H.Bins, H.Data, 1));
}

TEST_F(EngineTest, CombinedAtomicsRecoverFromAFailedDevice) {
  for (const char *Spec : {"cpu1:launch:1", "cpu2:alloc:1"}) {
    SCOPED_TRACE(Spec);
    build(3);
    HistLaunch H;
    makeHist(H, 3);
    H.Req.Partition = {{0, 0, 10}, {1, 10, 15}, {2, 25, 15}};
    ASSERT_TRUE(FaultInjector::global().configure(Spec).ok());
    LaunchPlan Plan;
    testing::internal::CaptureStderr();
    Result R = Eng->launch(H.Req, Plan);
    testing::internal::GetCapturedStderr();
    FaultInjector::global().clear();
    ASSERT_TRUE(R.ok()) << R.toString();
    EXPECT_EQ(Plan.Recoveries.size(), 1u) << Plan.describe();
    // The failed device's blocks counted once, by the device they went to.
    EXPECT_EQ(download(H.PB, 256), addHistogram(H.Bins, H.Data, 1));
  }
}

TEST_F(EngineTest, CombinedOutputsBesideAMergedOneRunWhole) {
  build(3);
  const KernelHandle *K = Eng->findKernel("histmark");
  ASSERT_NE(K, nullptr);
  ASSERT_EQ(K->Info->Combined.size(), 1u);
  HistLaunch H;
  makeHist(H, 5);
  std::vector<unsigned char> Mark(H.N, 0), WantMark(H.N, 0);
  for (int I = 0; I < H.N; ++I)
    WantMark[I] = H.Data[I] >= 128;
  unsigned char *PM = upload(Mark);
  void *Args[] = {&H.PD, &H.PB, &PM, &H.N};
  H.Req.Kernel = K;
  H.Req.Args = Args;
  H.Req.Partition = {{0, 0, 10}, {1, 10, 15}, {2, 25, 15}};
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(H.Req, Plan).ok());
  // The mark's bounded writes need the merge kernel, which a launch with
  // combined outputs does not use: the whole grid on one device, the bins
  // updated in place.
  EXPECT_FALSE(Plan.Split);
  EXPECT_NE(Plan.Reason.find("not merged with a merge kernel"),
            std::string::npos)
      << Plan.Reason;
  EXPECT_TRUE(Plan.Combined.empty()) << Plan.describe();
  EXPECT_EQ(download(H.PB, 256), addHistogram(H.Bins, H.Data, 1));
  EXPECT_EQ(download(PM, H.N), WantMark);
}

TEST_F(EngineTest, ACombinedBufferPassedTwiceRunsWhole) {
  build(2);
  const KernelHandle *K = Eng->findKernel("hist");
  // The bins and the data in one allocation: the bins' atomics are not
  // the only accesses to that buffer, so no device may count alone.
  int N = 5000;
  std::vector<unsigned char> Mem(1024 + N, 0);
  for (int I = 0; I < N; ++I)
    Mem[1024 + I] = (unsigned char)(Rng() & 255);
  unsigned char *P = upload(Mem);
  unsigned char *PD = P + 1024;
  unsigned *PB = reinterpret_cast<unsigned *>(P);
  void *Args[] = {&PD, &PB, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 20;
  Req.Block[0] = 250;
  Req.Args = Args;
  Req.Partition = {{0, 0, 10}, {1, 10, 10}};
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_FALSE(Plan.Split);
  EXPECT_NE(Plan.Reason.find("shares its buffer with argument 0"),
            std::string::npos)
      << Plan.Reason;
  std::vector<unsigned> Want(256, 0);
  for (int I = 0; I < N; ++I)
    ++Want[Mem[1024 + I]];
  EXPECT_EQ(download(PB, 256), Want);
}

TEST_F(EngineTest, Validation) {
  build(2, 1);
  const KernelHandle *K = Eng->findKernel("vecadd");
  int N = 100;
  std::vector<float> A(N, 1);
  float *PA = upload(A);
  float *Foreign = A.data();
  void *Args[] = {&PA, &PA, &PA, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 10;
  Req.Block[0] = 10;
  Req.Args = Args;
  LaunchPlan Plan;
  auto Code = [&](KernelLaunchRequest R) { return Eng->launch(R, Plan).code(); };

  KernelLaunchRequest Bad = Req;
  Bad.Kernel = nullptr;
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad = Req;
  Bad.Grid[1] = 0;
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad = Req;
  Bad.Block[0] = 2048;
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad = Req;
  Bad.Partition = {{0, 0, 5}, {1, 6, 4}}; // gap
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 0, 6}, {1, 5, 5}}; // overlap
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 0, 5}, {1, 5, 6}}; // past the grid
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 0, 10}, {1, 10, 0}}; // an empty range
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 0, 5}, {0, 0, 5}, {1, 5, 5}}; // covered twice
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 1, 9}}; // block 0 left out
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 0, UINT64_MAX}};
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);
  Bad.Partition = {{0, 0, 5}, {7, 5, 5}};
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidDevice);
  Bad.Partition = {{-1, 0, 10}};
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidDevice);
  Bad.Partition = {{0, 0, 5}, {2, 5, 5}}; // the fake device runs nothing
  EXPECT_EQ(Code(Bad), ErrorCode::NotSupported);
  Bad = Req;
  void *ForeignArgs[] = {&Foreign, &PA, &PA, &N};
  Bad.Args = ForeignArgs;
  EXPECT_EQ(Code(Bad), ErrorCode::InvalidValue);

  // The policies skip the fake device.
  Result R = Eng->launch(Req, Plan);
  ASSERT_TRUE(R.ok()) << R.toString();
  for (const LaunchPlan::Run &Run : Plan.Runs)
    EXPECT_NE(Run.DeviceName, "fake0");

  EXPECT_EQ(Eng->addProgram("junk", 4, {}).code(),
            ErrorCode::InvalidKernelImage);
}

/// A random partition of [0, Total) over devices [0, NumDevices): 1 to 5
/// ranges in random order.
std::vector<PartitionRange> randomPartition(std::mt19937 &Rng, uint64_t Total,
                                            size_t NumDevices) {
  size_t K = 1 + Rng() % std::min<uint64_t>(Total, 5);
  std::vector<uint64_t> Cuts = {0, Total};
  while (Cuts.size() < K + 1) {
    uint64_t C = 1 + Rng() % (Total - 1);
    if (std::find(Cuts.begin(), Cuts.end(), C) == Cuts.end())
      Cuts.push_back(C);
  }
  std::sort(Cuts.begin(), Cuts.end());
  std::vector<PartitionRange> P;
  for (size_t I = 0; I + 1 < Cuts.size(); ++I)
    P.push_back({Location(Rng() % NumDevices), Cuts[I], Cuts[I + 1] - Cuts[I]});
  std::shuffle(P.begin(), P.end(), Rng);
  return P;
}

// An explicit partition over 1 to 3 CPU devices runs as given: a range on
// cpu1 or cpu2 pulls exactly its slice of each input (cpu0 shares the host
// copy and pulls nothing), and the same launch again moves nothing.
TEST_F(EngineTest, ExplicitRandomPartitionsMoveOnlyTheNeededBytes) {
  for (unsigned NumCpu = 1; NumCpu <= 3; ++NumCpu) {
    build(NumCpu);
    for (int Trial = 0; Trial < 15; ++Trial) {
      int N = 1 + Rng() % 5000;
      uint32_t Block = 1 + Rng() % 128;
      uint32_t Grid = (N + Block - 1) / Block + Rng() % 3;
      std::vector<float> A(N), B(N), C(N, -1);
      for (int I = 0; I < N; ++I)
        A[I] = float(I % 97), B[I] = float(I % 13) * 0.5f;
      float *PA = upload(A), *PB = upload(B), *PC = upload(C);
      void *Args[] = {&PA, &PB, &PC, &N};
      KernelLaunchRequest Req;
      Req.Kernel = Eng->findKernel("vecadd");
      Req.Grid[0] = Grid;
      Req.Block[0] = Block;
      Req.Args = Args;
      Req.Partition = randomPartition(Rng, Grid, NumCpu);
      LaunchPlan Plan;
      Result R = Eng->launch(Req, Plan);
      ASSERT_TRUE(R.ok()) << R.toString();
      EXPECT_TRUE(Plan.Split) << Plan.describe();
      uint64_t Want = 0;
      for (const PartitionRange &P : Req.Partition)
        if (P.Device != 0) {
          uint64_t Lo = std::min<uint64_t>(N, P.First * Block);
          uint64_t Hi = std::min<uint64_t>(N, (P.First + P.Count) * Block);
          Want += 2 * 4 * (Hi - Lo);
        }
      EXPECT_EQ(Plan.BytesMoved, Want) << Plan.describe();
      R = Eng->launch(Req, Plan);
      ASSERT_TRUE(R.ok()) << R.toString();
      EXPECT_EQ(Plan.BytesMoved, 0u) << Plan.describe();
      std::vector<float> Got = download(PC, N);
      for (int I = 0; I < N; ++I)
        ASSERT_EQ(Got[I], A[I] + B[I]) << I << " " << Plan.describe();
      for (void *P : {(void *)PA, (void *)PB, (void *)PC})
        ASSERT_TRUE(Bufs->free(P).ok());
    }
  }
}

// Data stays where a launch left it: the second half of c lives only on
// cpu1 after the first launch, so c = a + c all on cpu1 moves a's and c's
// first halves only. The plan's text names each run's bytes.
TEST_F(EngineTest, ResidencyAcrossLaunchesAndPlanText) {
  build(2);
  const int N = 1024;
  int NArg = N;
  std::vector<float> A(N, 1.0f), B(N, 2.0f);
  float *PA = upload(A), *PB = upload(B), *PC = upload(std::vector<float>(N));
  void *Args[] = {&PA, &PB, &PC, &NArg};
  KernelLaunchRequest Req;
  Req.Kernel = Eng->findKernel("vecadd");
  Req.Grid[0] = 16;
  Req.Block[0] = 64;
  Req.Args = Args;
  Req.Partition = {{0, 0, 8}, {1, 8, 8}};
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_EQ(Plan.BytesMoved, 2u * 512 * 4) << Plan.describe();
  ASSERT_EQ(Plan.Runs.size(), 2u);
  EXPECT_EQ(Plan.Runs[0].BytesIn, 0u);
  EXPECT_EQ(Plan.Runs[1].DeviceName, "cpu1");
  EXPECT_NE(Plan.describe().find("cpu1 blocks [8, 16): 4096 bytes in"),
            std::string::npos)
      << Plan.describe();
  BufferManager::Resolved Res;
  ASSERT_TRUE(Bufs->resolve(PC, Res).ok());
  EXPECT_EQ(Bufs->missingRanges(*Res.Buf, 0, {0, N * 4}).totalBytes(), 2048u);
  void *Args2[] = {&PA, &PC, &PC, &NArg};
  Req.Args = Args2;
  Req.Partition = {{1, 0, 16}};
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_EQ(Plan.BytesMoved, 2u * 512 * 4) << Plan.describe();
  EXPECT_EQ(download(PC, N), std::vector<float>(N, 4.0f));
}

// A 2-D grid under random explicit partitions: rows of blocks cut anywhere,
// the result that of one device, and no input copied twice to a device.
TEST_F(EngineTest, ExplicitRandomPartitionsOfATwoDimensionalGrid) {
  for (unsigned NumCpu = 1; NumCpu <= 3; ++NumCpu) {
    build(NumCpu);
    for (int Trial = 0; Trial < 10; ++Trial) {
      int W = 1 + Rng() % 150, H = 1 + Rng() % 120;
      uint32_t BX = 1 + Rng() % 16;
      std::vector<float> In(size_t(W) * H);
      for (size_t I = 0; I < In.size(); ++I)
        In[I] = float(I % 101);
      float *PIn = upload(In), *POut = upload(std::vector<float>(In.size()));
      void *Args[] = {&PIn, &POut, &W, &H};
      KernelLaunchRequest Req;
      Req.Kernel = Eng->findKernel("tr");
      Req.Grid[0] = (W + BX - 1) / BX;
      Req.Grid[1] = H;
      Req.Block[0] = BX;
      Req.Args = Args;
      Req.Partition =
          randomPartition(Rng, uint64_t(Req.Grid[0]) * H, NumCpu);
      LaunchPlan Plan;
      Result R = Eng->launch(Req, Plan);
      ASSERT_TRUE(R.ok()) << R.toString();
      EXPECT_LE(Plan.BytesMoved, In.size() * 4 * 2 * NumCpu);
      std::vector<float> Got = download(POut, In.size());
      for (int Y = 0; Y < H; ++Y)
        for (int X = 0; X < W; ++X)
          ASSERT_EQ(Got[size_t(X) * H + Y], In[size_t(Y) * W + X])
              << W << "x" << H << " " << Plan.describe();
      ASSERT_TRUE(Bufs->free(PIn).ok());
      ASSERT_TRUE(Bufs->free(POut).ok());
    }
  }
}

TEST_F(EngineTest, KernelWithoutCpuVariantNeedsAGpu) {
  ASSERT_TRUE(DeviceRegistry::create("cpu,cpu", Reg, RegistryOptions{"none"})
                  .ok());
  Bufs = std::make_unique<BufferManager>(Reg->devices());
  Exec = std::make_unique<CpuExecutor>(2);
  Eng = std::make_unique<Engine>(*Bufs, *Exec);
  std::map<std::string, void *> Syms = cpuSymbols();
  Syms.erase("__cleave_cpu_vecadd_desc");
  ASSERT_TRUE(
      Eng->addProgram(bundleBytes().data(), bundleBytes().size(), Syms).ok());
  const KernelHandle *K = Eng->findKernel("vecadd");
  ASSERT_EQ(K->Cpu, nullptr);
  int N = 10;
  std::vector<float> A(N, 1);
  float *PA = upload(A);
  void *Args[] = {&PA, &PA, &PA, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Args = Args;
  LaunchPlan Plan;
  EXPECT_EQ(Eng->launch(Req, Plan).code(), ErrorCode::NoDevice);
  Req.Partition = {{0, 0, 1}};
  EXPECT_EQ(Eng->launch(Req, Plan).code(), ErrorCode::NotSupported);
}

TEST_F(EngineTest, RecoversFromLaunchAndAllocationFaults) {
  for (const char *Spec : {"cpu1:launch:1", "cpu2:alloc:1", "cpu1:copy:1",
                           "cpu0:launch:1"})
    for (const char *Kernel : {"vecadd", "keep"}) {
      SCOPED_TRACE(std::string(Spec) + " " + Kernel);
      build(3);
      const KernelHandle *K = Eng->findKernel(Kernel);
      int N = 4000;
      std::vector<float> A(N), B(N), Out(N, -5), Want(N);
      for (int I = 0; I < N; ++I) {
        A[I] = float(I % 7) - 3;
        B[I] = float(I);
      }
      bool Keep = std::string(Kernel) == "keep";
      for (int I = 0; I < N; ++I)
        Want[I] = Keep ? (A[I] > 0 ? 2 * A[I] : -5) : A[I] + B[I];
      float *PA = upload(A), *PB = upload(B), *PO = upload(Out);
      void *VArgs[] = {&PA, &PB, &PO, &N};
      void *KArgs[] = {&PA, &PO, &N};
      KernelLaunchRequest Req;
      Req.Kernel = K;
      Req.Grid[0] = N / 40;
      Req.Block[0] = 40;
      Req.Args = Keep ? KArgs : VArgs;
      ASSERT_TRUE(FaultInjector::global().configure(Spec).ok());
      LaunchPlan Plan;
      testing::internal::CaptureStderr();
      Result R = Eng->launch(Req, Plan);
      std::string Err = testing::internal::GetCapturedStderr();
      FaultInjector::global().clear();
      ASSERT_TRUE(R.ok()) << R.toString();
      ASSERT_EQ(Plan.Recoveries.size(), 1u) << Plan.describe();
      EXPECT_NE(Err.find("cleave: " + Plan.Recoveries[0].Device + " failed"),
                std::string::npos)
          << Err;
      EXPECT_EQ(std::count(Err.begin(), Err.end(), '\n'), 1) << Err;
      std::vector<float> Got = download(PO, N);
      for (int I = 0; I < N; ++I)
        ASSERT_EQ(Got[I], Want[I]) << I << "\n" << Plan.describe();
    }
}

TEST_F(EngineTest, EveryDeviceFailing) {
  build(2);
  const KernelHandle *K = Eng->findKernel("vecadd");
  int N = 100;
  std::vector<float> A(N, 1);
  float *PA = upload(A);
  void *Args[] = {&PA, &PA, &PA, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 10;
  Req.Block[0] = 10;
  Req.Args = Args;
  ASSERT_TRUE(FaultInjector::global().configure("cpu:launch:1+").ok());
  LaunchPlan Plan;
  testing::internal::CaptureStderr();
  Result R = Eng->launch(Req, Plan);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(R.code(), ErrorCode::LaunchFailure) << R.toString();
  FaultInjector::global().clear();
  // The data is intact.
  for (float V : download(PA, N))
    ASSERT_EQ(V, 1.0f);
}

TEST_F(EngineTest, Symbols) {
  build(2);
  uint64_t Size = 0;
  ASSERT_TRUE(Eng->symbolSize("scale", Size).ok());
  EXPECT_EQ(Size, 4u);
  EXPECT_EQ(Eng->symbolSize("nope", Size).code(), ErrorCode::InvalidValue);
  float V = 0;
  ASSERT_TRUE(Eng->copyFromSymbol("scale", 0, &V, 4).ok());
  EXPECT_EQ(V, 1.0f); // the CPU copy's initial value
  V = 3.0f;
  ASSERT_TRUE(Eng->copyToSymbol("scale", 0, &V, 4).ok());
  EXPECT_EQ(CpuScale, 1.0f); // uploaded only when a kernel needs it
  EXPECT_EQ(Eng->copyToSymbol("scale", 2, &V, 4).code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(Eng->copyToSymbol("nope", 0, &V, 4).code(),
            ErrorCode::InvalidValue);

  const KernelHandle *K = Eng->findKernel("vecadd");
  int N = 256;
  std::vector<float> A(N, 1), B(N, 2), C(N, 0);
  float *PA = upload(A), *PB = upload(B), *PC = upload(C);
  void *Args[] = {&PA, &PB, &PC, &N};
  KernelLaunchRequest Req;
  Req.Kernel = K;
  Req.Grid[0] = 4;
  Req.Block[0] = 64;
  Req.Args = Args;
  LaunchPlan Plan;
  ASSERT_TRUE(Eng->launch(Req, Plan).ok());
  EXPECT_EQ(CpuScale, 3.0f);
  for (float X : download(PC, N))
    ASSERT_EQ(X, 9.0f);
  float Back = 0;
  ASSERT_TRUE(Eng->copyFromSymbol("scale", 0, &Back, 4).ok());
  EXPECT_EQ(Back, 3.0f);
}

} // namespace
