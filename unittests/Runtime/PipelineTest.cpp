//===- PipelineTest.cpp - Transfer pipelining on a null GPU ---------------===//
//
// Part of Cleave. A launch on one GPU whose inputs are in the host copy
// runs as chunks on the GPU's send, kernel and receive streams
// (engine/Pipeline.cpp, docs/runtime.md, "Transfer pipelining"). The null
// GPU (cleave/rt/NullGpu.h) runs each launch as the test's emulation of the
// kernel over the whole replica, so a chunk that ran before its inputs
// arrived computes from the NaNs the replica was filled with, and records
// every copy, launch, event record and wait with its stream: the tests
// check the order the streams and events impose, every input byte sent
// once, results received eagerly only when the program reads them back,
// and a device fault mid-pipeline recovered on the CPU.
//
//===----------------------------------------------------------------------===//
#include "../../runtime/lib/scheduler/ChunkPlan.h"
#include "../TestInputs.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/Fault.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include <unistd.h>

using namespace cleave::rt;

namespace {

const std::string &bundleBytes() {
  static const std::string Bytes =
      cleave::test::testBundle("engine_model_test");
  return Bytes;
}

/// blur (unittests/Inputs/engine_model_test.ll): out[i] = in[i-1] + in[i] +
/// in[i+1] inside (0, n - 1), over elements [Lo, Hi).
void blurRange(const float *In, float *Out, int64_t N, int64_t Lo, int64_t Hi) {
  for (int64_t I = std::max<int64_t>(Lo, 1); I < std::min<int64_t>(Hi, N - 1);
       ++I)
    Out[I] = In[I - 1] + In[I] + In[I + 1];
}

void blurCpu(void **Args, const cleave_cpu_launch *L, uint64_t First,
             uint64_t Count, void *) {
  const float *In = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  blurRange(In, Out, N, int64_t(First) * L->block[0],
            int64_t(First + Count) * L->block[0]);
}
const cleave_cpu_kernel_desc BlurDesc = {"blur", blurCpu, 0, 0, 3, 0};

/// Which operations of \p Ops are complete before each one starts, as its
/// stream and the events it waited for order them (not as the null GPU
/// happened to run them: at once).
std::vector<std::set<size_t>>
orderedBefore(const std::vector<NullGpu::Op> &Ops) {
  std::map<StreamHandle, std::set<size_t>> Done;
  std::map<EventHandle, std::set<size_t>> Recorded;
  std::vector<std::set<size_t>> Before(Ops.size());
  for (size_t I = 0; I < Ops.size(); ++I) {
    std::set<size_t> &D = Done[Ops[I].Stream];
    switch (Ops[I].What) {
    case NullGpu::Op::Record:
      Recorded[Ops[I].Event] = D;
      break;
    case NullGpu::Op::Wait:
      D.insert(Recorded[Ops[I].Event].begin(), Recorded[Ops[I].Event].end());
      break;
    default:
      Before[I] = D;
      D.insert(I);
    }
  }
  return Before;
}

/// One null GPU (after the CPU when WithCpu), blur over N floats, its
/// kernel emulated over the whole replica at every launch.
class PipelineTest : public ::testing::Test {
protected:
  void SetUp() override { FaultInjector::global().clear(); }
  void TearDown() override {
    FaultInjector::global().clear();
    Eng.reset();
    Bufs.reset();
    Gpu.reset();
    Gpu2.reset();
    GpuIn = GpuOut = Gpu2In = Gpu2Out = nullptr;
    Reg.reset();
    if (!ProfileFile.empty())
      std::remove(ProfileFile.c_str());
  }

  /// With \p TwoGpus a second null GPU, gpu1, after the first.
  void start(bool WithCpu = false, PipelineOptions Opt = {},
             const std::string &Profile = "", bool TwoGpus = false) {
    std::vector<Device *> Devs;
    if (WithCpu) {
      ASSERT_TRUE(
          DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
      Devs = Reg->devices();
    }
    Gpu = nullGpu(0, GpuIn, GpuOut);
    Devs.push_back(Gpu.get());
    G = Location(Devs.size() - 1);
    if (TwoGpus) {
      Gpu2 = nullGpu(1, Gpu2In, Gpu2Out);
      Devs.push_back(Gpu2.get());
      G2 = Location(Devs.size() - 1);
    }
    Bufs = std::make_unique<BufferManager>(Devs);
    // The program's copies land in the host copy: the launch finds its
    // inputs there.
    Bufs->setDirectHostCopies(false);
    Options EO;
    if (!Profile.empty()) {
      ProfileFile = ::testing::TempDir() + "pipeline-profile-" +
                    std::to_string(::getpid()) + ".json";
      std::FILE *F = std::fopen(ProfileFile.c_str(), "w");
      ASSERT_NE(F, nullptr);
      std::fputs(Profile.c_str(), F);
      std::fclose(F);
      EO.ProfilePath = ProfileFile;
    }
    Eng = std::make_unique<Engine>(*Bufs, Exec, Policy, EO);
    Eng->setPipelining(Opt);
    ASSERT_TRUE(Eng->addProgram(bundleBytes().data(), bundleBytes().size(),
                                {{"__cleave_cpu_blur_desc", (void *)&BlurDesc}})
                    .ok());
    Blur = Eng->findKernel("blur");
    ASSERT_NE(Blur, nullptr);
    for (float **P : {&In, &Out}) {
      void *V = nullptr;
      ASSERT_TRUE(Bufs->allocate(N * sizeof(float), V).ok());
      *P = static_cast<float *>(V);
    }
    // The replicas, full of NaNs: a chunk that runs before its inputs
    // arrive computes NaNs.
    GpuIn = replica(In, G);
    GpuOut = replica(Out, G);
    if (TwoGpus) {
      Gpu2In = replica(In, G2);
      Gpu2Out = replica(Out, G2);
    }
    for (float *R : {GpuIn, GpuOut, Gpu2In, Gpu2Out})
      if (R)
        std::memset(R, 0xff, N * sizeof(float));
  }
  /// A traced null GPU whose launches run blur over the whole replicas
  /// \p ReplicaIn and \p ReplicaOut (set once the buffers exist).
  std::unique_ptr<NullGpu> nullGpu(int Ordinal, float *&ReplicaIn,
                                   float *&ReplicaOut) {
    NullGpu::Options O;
    O.Ordinal = Ordinal;
    O.Trace = true;
    O.BlocksPerMs = GpuBlocksPerMs;
    O.OnLaunch = [this, &ReplicaIn, &ReplicaOut](const uint32_t *,
                                                 const uint32_t *, void **) {
      blurRange(ReplicaIn, ReplicaOut, N, 0, N);
    };
    return std::make_unique<NullGpu>(std::move(O));
  }
  float *replica(float *P, Location Dev) {
    BufferManager::Resolved R;
    EXPECT_TRUE(Bufs->resolve(P, R).ok());
    DeviceAddr A = 0;
    EXPECT_TRUE(Bufs->addressOn(*R.Buf, Dev, 0, A).ok());
    return reinterpret_cast<float *>(A);
  }
  Buffer &buffer(float *P) {
    BufferManager::Resolved R;
    EXPECT_TRUE(Bufs->resolve(P, R).ok());
    return *R.Buf;
  }
  /// New random inputs, copied in by the program.
  void upload() {
    Host.resize(N);
    for (float &X : Host)
      X = float(Rng() % 1000) / 8;
    ASSERT_TRUE(Bufs->memcpy(In, Host.data(), N * sizeof(float),
                             MemcpyKind::HostToDevice)
                    .ok());
  }
  LaunchPlan launch(std::vector<PartitionRange> Partition = {}) {
    KernelLaunchRequest Req;
    Req.Partition = std::move(Partition);
    Req.Kernel = Blur;
    Req.Grid[0] = unsigned(N + 127) / 128;
    Req.Block[0] = 128;
    int Num = N;
    void *Args[] = {&In, &Out, &Num};
    Req.Args = Args;
    LaunchPlan Plan;
    Result R = Eng->launch(Req, Plan);
    EXPECT_TRUE(R.ok()) << R.toString();
    return Plan;
  }
  /// The program's copy of the results back, checked against blur of the
  /// current inputs.
  std::vector<float> expectResults(const char *What) {
    std::vector<float> Got(N), Want(N, 0.0f);
    EXPECT_TRUE(Bufs->memcpy(Got.data(), Out, N * sizeof(float),
                             MemcpyKind::DeviceToHost)
                    .ok());
    blurRange(Host.data(), Want.data(), N, 0, N);
    for (int I = 1; I < N - 1; ++I)
      if (Got[I] != Want[I]) {
        ADD_FAILURE() << What << ": element " << I << " is " << Got[I]
                      << ", not " << Want[I];
        break;
      }
    return std::vector<float>(Got.begin() + 1, Got.end() - 1);
  }

  int N = 1 << 22; // 32768 blocks of 128, 16 MiB per buffer
  /// The null GPU's kernel rate, as its events time the chunks.
  double GpuBlocksPerMs = 1e6;
  PartitionPolicy Policy = PartitionPolicy::SingleDevice;
  std::string ProfileFile;
  std::mt19937 Rng{2027};
  std::vector<float> Host;
  CpuExecutor Exec{2};
  std::unique_ptr<DeviceRegistry> Reg;
  std::unique_ptr<NullGpu> Gpu, Gpu2;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
  Location G = 0, G2 = 0;
  const KernelHandle *Blur = nullptr;
  float *In = nullptr, *Out = nullptr;
  float *GpuIn = nullptr, *GpuOut = nullptr;
  float *Gpu2In = nullptr, *Gpu2Out = nullptr;
};

TEST(ChunkPlanTest, ChunksOfAnEighthOrAWaveCutAtTheAlignment) {
  ChunkQuery Q;
  Q.Blocks = 32768;
  Q.WaveBlocks = waveBlocks(132, 128);
  EXPECT_EQ(Q.WaveBlocks, 132u * 16);
  EXPECT_EQ(provisionalChunks(Q), std::vector<uint64_t>(8, 4096));
  // A wave is more than an eighth: chunks of a wave, the remainder joins
  // the last whole one when it is smaller than a wave.
  Q.Blocks = 5000;
  Q.WaveBlocks = 2112;
  EXPECT_EQ(provisionalChunks(Q), (std::vector<uint64_t>{2112, 2888}));
  Q.Blocks = 3000;
  EXPECT_EQ(provisionalChunks(Q).size(), 1u); // not worth pipelining
  // Whole slabs of 100 blocks.
  Q.Blocks = 10000;
  Q.WaveBlocks = 1;
  Q.Align = 100;
  std::vector<uint64_t> C = provisionalChunks(Q);
  ASSERT_EQ(C.size(), 8u);
  uint64_t Sum = 0;
  for (size_t I = 0; I < C.size(); ++I) {
    if (I + 1 < C.size())
      EXPECT_EQ(C[I] % 100, 0u);
    Sum += C[I];
  }
  EXPECT_EQ(Sum, 10000u);
}

TEST_F(PipelineTest, PipelinedResultsMatchUnpipelinedOnes) {
  std::vector<std::vector<float>> Got[2];
  for (bool On : {false, true}) {
    PipelineOptions O;
    O.On = On;
    start(false, O);
    Rng.seed(7);
    for (int Step = 0; Step < 3; ++Step) {
      upload();
      LaunchPlan P = launch();
      EXPECT_EQ(P.chunks().empty(), !On) << P.describe();
      Got[On].push_back(expectResults(On ? "pipelined" : "unpipelined"));
    }
    TearDown();
  }
  EXPECT_TRUE(Got[0] == Got[1]);
}

TEST_F(PipelineTest, EveryInputByteIsSentOnceAndBeforeItsChunkRuns) {
  start();
  upload();
  Gpu->clearTrace();
  LaunchPlan P = launch();
  ASSERT_EQ(P.chunks().size(), 8u) << P.describe();
  EXPECT_NE(P.describe().find("pipelined on gpu0 in 8 chunks"),
            std::string::npos)
      << P.describe();
  std::vector<NullGpu::Op> Ops = Gpu->ops();
  std::vector<std::set<size_t>> Before = orderedBefore(Ops);
  StreamHandle Kernel = Gpu->internalStream(0), Send = Gpu->internalStream(1);
  // Every byte of the input, once, on the send stream; nothing received
  // (the program has not read the results back yet).
  DeviceAddr Base = reinterpret_cast<DeviceAddr>(GpuIn);
  RangeSet Sent;
  uint64_t Bytes = 0;
  for (const NullGpu::Op &O : Ops) {
    EXPECT_NE(O.What, NullGpu::Op::CopyOut);
    if (O.What != NullGpu::Op::CopyIn)
      continue;
    EXPECT_EQ(O.Stream, Send);
    ASSERT_GE(O.Addr, Base);
    EXPECT_FALSE(Sent.intersects(O.Addr - Base, O.Addr - Base + O.Bytes))
        << "bytes sent twice at " << O.Addr - Base;
    Sent.insert(O.Addr - Base, O.Addr - Base + O.Bytes);
    Bytes += O.Bytes;
  }
  EXPECT_EQ(Bytes, uint64_t(N) * sizeof(float));
  EXPECT_TRUE(Sent.contains(0, uint64_t(N) * sizeof(float)));
  uint64_t Planned = 0;
  for (const LaunchPlan::Chunk &C : P.chunks())
    Planned += C.BytesSent;
  EXPECT_EQ(Planned, Bytes);
  // The k-th launch is chunk k; every copy of bytes it reads (its blocks'
  // elements and one on each side) is done before it starts.
  size_t K = 0;
  for (size_t I = 0; I < Ops.size(); ++I) {
    if (Ops[I].What != NullGpu::Op::Launch)
      continue;
    ASSERT_LT(K, P.chunks().size());
    EXPECT_EQ(Ops[I].Stream, Kernel);
    const LaunchPlan::Chunk &C = P.chunks()[K++];
    uint64_t Lo = C.First * 128 ? (C.First * 128 - 1) * 4 : 0;
    uint64_t Hi = std::min<uint64_t>(N, (C.First + C.Count) * 128 + 1) * 4;
    for (size_t J = 0; J < Ops.size(); ++J)
      if (Ops[J].What == NullGpu::Op::CopyIn && Ops[J].Addr - Base < Hi &&
          Ops[J].Addr - Base + Ops[J].Bytes > Lo)
        EXPECT_TRUE(Before[I].count(J))
            << "chunk " << K - 1 << " may start before the copy of bytes ["
            << Ops[J].Addr - Base << ", +" << Ops[J].Bytes << ") arrives";
  }
  EXPECT_EQ(K, P.chunks().size());
  // The input is valid on the GPU (and still on the host), the results
  // on the GPU alone.
  EXPECT_TRUE(buffer(In).holds(G, {0, uint64_t(N) * 4}));
  EXPECT_TRUE(buffer(In).holds(HostLocation, {0, uint64_t(N) * 4}));
  EXPECT_FALSE(buffer(Out).holds(HostLocation, {4, uint64_t(N - 1) * 4}));
  expectResults("first launch");
}

TEST_F(PipelineTest, ResultsTheProgramReadsBackAreReceivedAfterTheirChunk) {
  start();
  // The first launch's results are read back: from the second launch on,
  // every chunk's results go back as soon as it ran.
  for (int Step = 0; Step < 4; ++Step) {
    upload();
    Gpu->clearTrace();
    LaunchPlan P = launch();
    ASSERT_FALSE(P.chunks().empty()) << P.describe();
    uint64_t Back = 0;
    for (const LaunchPlan::Chunk &C : P.chunks())
      Back += C.BytesReceived;
    if (Step == 0) {
      EXPECT_EQ(Back, 0u);
      expectResults("first launch");
      continue;
    }
    EXPECT_EQ(Back, uint64_t(N - 2) * 4) << "launch " << Step;
    // The results are valid on the host only once the launch is done,
    // and then the program's read-back moves nothing.
    EXPECT_TRUE(buffer(Out).holds(HostLocation, {4, uint64_t(N - 1) * 4}));
    std::vector<NullGpu::Op> Ops = Gpu->ops();
    std::vector<std::set<size_t>> Before = orderedBefore(Ops);
    StreamHandle Receive = Gpu->internalStream(2);
    DeviceAddr Base = reinterpret_cast<DeviceAddr>(GpuOut);
    std::vector<size_t> Launches;
    for (size_t I = 0; I < Ops.size(); ++I)
      if (Ops[I].What == NullGpu::Op::Launch)
        Launches.push_back(I);
    ASSERT_EQ(Launches.size(), P.chunks().size());
    uint64_t Received = 0;
    for (size_t J = 0; J < Ops.size(); ++J) {
      if (Ops[J].What != NullGpu::Op::CopyOut)
        continue;
      EXPECT_EQ(Ops[J].Stream, Receive);
      Received += Ops[J].Bytes;
      // After the launch of every chunk that writes its bytes.
      for (size_t K = 0; K < P.chunks().size(); ++K) {
        uint64_t Lo = P.chunks()[K].First * 128 * 4,
                 Hi = (P.chunks()[K].First + P.chunks()[K].Count) * 128 * 4;
        if (Ops[J].Addr - Base < Hi && Ops[J].Addr - Base + Ops[J].Bytes > Lo)
          EXPECT_TRUE(Before[J].count(Launches[K]))
              << "results of chunk " << K << " received before it ran";
      }
    }
    EXPECT_EQ(Received, Back);
    Gpu->clearTrace();
    expectResults("eagerly received");
    for (const NullGpu::Op &O : Gpu->ops())
      EXPECT_NE(O.What, NullGpu::Op::CopyOut) << "read back again";
  }
}

TEST_F(PipelineTest, ResultsNobodyReadsAreNotReceived) {
  start();
  upload();
  launch();
  expectResults("first"); // read back once
  // Received eagerly and not read, then the guess carries over one more
  // write (Buffer::readBackBytes: read back at the last write or since).
  std::vector<uint64_t> Back;
  for (int Step = 0; Step < 4; ++Step) {
    upload();
    LaunchPlan P = launch();
    Back.push_back(0);
    for (const LaunchPlan::Chunk &C : P.chunks())
      Back.back() += C.BytesReceived;
  }
  EXPECT_EQ(Back, (std::vector<uint64_t>{uint64_t(N - 2) * 4,
                                         uint64_t(N - 2) * 4, 0, 0}));
}

TEST_F(PipelineTest, InputsAlreadyOnTheGpuOrSmallUploadsAreNotPipelined) {
  start();
  upload();
  ASSERT_FALSE(launch().chunks().empty());
  // The inputs are on the GPU now: as a program that copies its own
  // chunks before its launches, nothing to upload.
  LaunchPlan P = launch();
  EXPECT_TRUE(P.chunks().empty()) << P.describe();
  EXPECT_EQ(P.BytesMoved, 0u);
  // Below PipelineOptions::MinBytes.
  TearDown();
  PipelineOptions O;
  O.MinBytes = uint64_t(N) * 4 + 1;
  start(false, O);
  upload();
  P = launch();
  EXPECT_TRUE(P.chunks().empty()) << P.describe();
  expectResults("small");
}

TEST_F(PipelineTest, AFaultMidPipelineIsRecoveredWithNothingLost) {
  // The whole grid goes to the GPU; its third chunk's launch fails, and
  // the blocks run again on the CPU.
  start(/*WithCpu=*/true);
  upload();
  ASSERT_TRUE(FaultInjector::global().configure("gpu0:launch:3").ok());
  LaunchPlan P = launch();
  ASSERT_EQ(P.Recoveries.size(), 1u) << P.describe();
  EXPECT_EQ(P.Recoveries[0].Device, "gpu0");
  EXPECT_EQ(P.Recoveries[0].To, "cpu0");
  EXPECT_EQ(P.chunks().size(), 8u) << P.describe();
  expectResults("recovered");
  // And again once results are received eagerly: what came back before
  // the fault is not claimed, and the CPU's run rewrites it.
  FaultInjector::global().clear();
  upload();
  launch();
  expectResults("second");
  upload();
  ASSERT_TRUE(FaultInjector::global().configure("gpu0:launch:5").ok());
  P = launch();
  ASSERT_EQ(P.Recoveries.size(), 1u) << P.describe();
  expectResults("recovered after eager receives");
  // A send that fails: the first (nothing ran yet: the attempt starts
  // again without the GPU), or the second (after the first chunk ran).
  for (const char *Spec : {"gpu0:copy:1", "gpu0:copy:2"}) {
    FaultInjector::global().clear();
    upload();
    ASSERT_TRUE(FaultInjector::global().configure(Spec).ok());
    P = launch();
    ASSERT_EQ(P.Recoveries.size(), 1u) << Spec << "\n" << P.describe();
    EXPECT_EQ(P.Recoveries[0].To, "cpu0");
    expectResults(Spec);
  }
}

/// A device profile for the null GPU: DRAM read rate (the roofline seed of
/// the kernel's time), host-link rates alone and both ways (GB/s), t_str
/// (us); \p Both false leaves the both-ways rates out (pageable, and the
/// pinned ones of the state SR).
std::string profileJson(double Dram, double Send, double Receive,
                        double StepUs = 10, bool Both = true) {
  auto Num = [](double V) { return std::to_string(V); };
  std::string Link = "\"h2d_gbps\": " + Num(Send) +
                     ", \"d2h_gbps\": " + Num(Receive);
  return R"({"schema": "cleave-device-profile", "schema_version": 1,
    "gpus": [{"index": 0, "name": "null", "sm_count": 132,
              "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
              "async_engines": 2,
              "bandwidth": {"dram": {"read_gbps": )" +
         Num(Dram) + R"(}},
              "sync": {"step_sync_3_streams_us": )" +
         Num(StepUs) + R"(}}],
    "host_links": {
      "alone": [{"gpu": 0, "pinned": {)" +
         Link + R"(}, "pageable": {)" + Link +
         (Both ? ", \"both\": {" + Link + "}" : std::string()) + R"(}}],
      "states": [)" +
         (Both ? R"({"name": "SR", "gpus": [{"gpu": 0, "state": "SR",
                  "send_gbps": )" +
                     Num(Send) + ", \"receive_gbps\": " + Num(Receive) +
                     "}]}"
               : std::string()) +
         "]}}";
}

/// tr (unittests/Inputs/engine_test.ll) on a 2-D grid of 16 x 2048 blocks
/// of 128 threads, out[x * h + y] = in[y * w + x], launched twice on a null
/// GPU with the program's copies in and out around each launch, with the
/// device profile \p Profile (none if empty), the null GPU's events timing
/// \p BlocksPerMs; \p Check sees each plan.
void runTranspose(const std::string &Profile, double BlocksPerMs,
                  const std::function<void(const LaunchPlan &, int)> &Check) {
  const int W = 2048, H = 2048;
  float *GpuIn = nullptr, *GpuOut = nullptr;
  NullGpu::Options O;
  O.BlocksPerMs = BlocksPerMs;
  O.OnLaunch = [&](const uint32_t *, const uint32_t *, void **) {
    for (int Y = 0; Y < H; ++Y)
      for (int X = 0; X < W; ++X)
        GpuOut[int64_t(X) * H + Y] = GpuIn[int64_t(Y) * W + X];
  };
  NullGpu Gpu(std::move(O));
  BufferManager Bufs({&Gpu});
  Bufs.setDirectHostCopies(false);
  CpuExecutor Exec(1);
  Options EO;
  std::string File;
  if (!Profile.empty()) {
    File = ::testing::TempDir() + "pipeline-tr-profile-" +
           std::to_string(::getpid()) + ".json";
    std::FILE *F = std::fopen(File.c_str(), "w");
    ASSERT_NE(F, nullptr);
    std::fputs(Profile.c_str(), F);
    std::fclose(F);
    EO.ProfilePath = File;
  }
  Engine Eng(Bufs, Exec, PartitionPolicy::SingleDevice, EO);
  const std::string Bundle = cleave::test::testBundle("engine_test");
  ASSERT_TRUE(Eng.addProgram(Bundle.data(), Bundle.size(), {}).ok());
  const KernelHandle *Tr = Eng.findKernel("tr");
  ASSERT_NE(Tr, nullptr);
  void *In = nullptr, *Out = nullptr;
  ASSERT_TRUE(Bufs.allocate(uint64_t(W) * H * 4, In).ok());
  ASSERT_TRUE(Bufs.allocate(uint64_t(W) * H * 4, Out).ok());
  for (auto [P, R] : {std::pair{In, &GpuIn}, std::pair{Out, &GpuOut}}) {
    BufferManager::Resolved Res;
    ASSERT_TRUE(Bufs.resolve(P, Res).ok());
    DeviceAddr A = 0;
    ASSERT_TRUE(Bufs.addressOn(*Res.Buf, 0, 0, A).ok());
    *R = reinterpret_cast<float *>(A);
    std::memset(*R, 0xff, uint64_t(W) * H * 4);
  }
  std::mt19937 Rng(5);
  std::vector<float> Host(size_t(W) * H), Got(Host.size());
  for (int Step = 0; Step < 2; ++Step) {
    for (float &X : Host)
      X = float(Rng() % 4096);
    ASSERT_TRUE(
        Bufs.memcpy(In, Host.data(), Host.size() * 4, MemcpyKind::HostToDevice)
            .ok());
    KernelLaunchRequest Req;
    Req.Kernel = Tr;
    Req.Grid[0] = W / 128;
    Req.Grid[1] = H;
    Req.Block[0] = 128;
    int Wv = W, Hv = H;
    void *Args[] = {&In, &Out, &Wv, &Hv};
    Req.Args = Args;
    LaunchPlan P;
    ASSERT_TRUE(Eng.launch(Req, P).ok());
    Check(P, Step);
    ASSERT_TRUE(
        Bufs.memcpy(Got.data(), Out, Got.size() * 4, MemcpyKind::DeviceToHost)
            .ok());
    for (int Y = 0; Y < H; ++Y)
      for (int X = 0; X < W; ++X)
        ASSERT_EQ(Got[size_t(X) * H + Y], Host[size_t(Y) * W + X])
            << "step " << Step << " (" << X << ", " << Y << ")";
  }
  if (!File.empty())
    std::remove(File.c_str());
}

TEST(PipelineTwoDimensionalTest, ChunksAreWholeRowsAndStridedResultsStay) {
  // Chunks are whole rows of blocks; each chunk's results are 2048 columns
  // of the output, too many copies to send back eagerly even once the
  // program reads them.
  runTranspose("", 1e6, [](const LaunchPlan &P, int) {
    ASSERT_GE(P.chunks().size(), 2u) << P.describe();
    for (const LaunchPlan::Chunk &C : P.chunks()) {
      EXPECT_EQ(C.First % (2048 / 128), 0u) << P.describe();
      EXPECT_EQ(C.BytesReceived, 0u) << P.describe();
    }
  });
}

TEST(PipelineTwoDimensionalTest, AReceiveNoChunkCanMakeIsNotPlanned) {
  // Once the program reads the transpose back, the model would overlap its
  // results' receive with the next chunks' kernels (about 3 ms of kernel,
  // 1.7 ms each way); no chunk can send them back eagerly, so the plan is
  // made again without them: a send-only case, its receive 0.
  auto Check = [](const LaunchPlan &P, int Step) {
    ASSERT_EQ(P.Pipelines.size(), 1u) << P.describe();
    const LaunchPlan::Pipelined &PP = P.Pipelines[0];
    if (Step == 0) {
      EXPECT_EQ(PP.Plan.find("planned again"), std::string::npos) << PP.Plan;
      return;
    }
    EXPECT_NE(PP.Plan.find("planned again without receiving"),
              std::string::npos)
        << PP.Plan;
    EXPECT_NE(PP.Plan.find("+SH"), std::string::npos) << PP.Plan;
    EXPECT_EQ(PP.ReceiveMs, 0) << PP.Plan;
    EXPECT_GE(PP.Chunks.size(), 2u) << P.describe();
    for (const LaunchPlan::Chunk &C : PP.Chunks)
      EXPECT_EQ(C.BytesReceived, 0u) << P.describe();
  };
  runTranspose(profileJson(10, 10, 10), 10000, Check);
}

/// The CPU's blocks [0, 8192) on the host copy, the GPU's pipelined.
std::vector<PartitionRange> cpuAndGpu(Location Gpu) {
  return {{0, 0, 8192}, {Gpu, 8192, 32768 - 8192}};
}

TEST_F(PipelineTest, CpuBesidePipelinedGpuMatchesUnpipelined) {
  std::vector<std::vector<float>> Got[2];
  for (bool On : {false, true}) {
    PipelineOptions O;
    O.On = On;
    start(/*WithCpu=*/true, O);
    Rng.seed(11);
    for (int Step = 0; Step < 3; ++Step) {
      upload();
      Gpu->clearTrace();
      LaunchPlan P = launch(cpuAndGpu(G));
      EXPECT_EQ(P.chunks().empty(), !On) << P.describe();
      uint64_t Sent = 0;
      for (const LaunchPlan::Run &R : P.Runs)
        if (R.DeviceName == "cpu0") // computes on the host copy
          EXPECT_EQ(R.BytesIn, 0u) << P.describe();
      if (On) {
        EXPECT_EQ(P.chunks().front().First, 8192u) << P.describe();
        EXPECT_EQ(P.chunks().back().First + P.chunks().back().Count, 32768u);
        // The GPU gets what its blocks read, nothing of the CPU's.
        for (const NullGpu::Op &Op : Gpu->ops())
          if (Op.What == NullGpu::Op::CopyIn)
            Sent += Op.Bytes;
        EXPECT_EQ(Sent, (32768u - 8192u) * 512u + 4u) << P.describe();
      }
      Got[On].push_back(expectResults(On ? "cpu + pipelined gpu" : "split"));
    }
    TearDown();
  }
  EXPECT_TRUE(Got[0] == Got[1]);
}

/// The committed profile of the 2x H200 machine, with its host-link states.
std::string h200x2Profile() {
  std::ifstream F(std::string(CLEAVE_TEST_SOURCE_ROOT) +
                  "/profiles/h200x2-all.json");
  std::stringstream S;
  S << F.rdbuf();
  return S.str();
}

TEST_F(PipelineTest, TwoGpusPipelineAtOnceOnTheirSharedLinks) {
  // 64 MiB per buffer: on H200 rates, the steps' fixed costs of smaller
  // copies outweigh their overlap.
  N = 1 << 24;
  const uint64_t Half = uint64_t(N) / 128 / 2;
  std::vector<std::vector<float>> Got[2];
  for (bool On : {false, true}) {
    PipelineOptions O;
    O.On = On;
    start(/*WithCpu=*/false, O, h200x2Profile(), /*TwoGpus=*/true);
    Rng.seed(12);
    for (int Step = 0; Step < 3; ++Step) {
      upload();
      Gpu->clearTrace();
      Gpu2->clearTrace();
      LaunchPlan P = launch({{G, 0, Half}, {G2, Half, Half}});
      std::string T = P.describe();
      // From the second launch, once the program read results back and
      // the send and receive overlap (on H200 rates a first launch with
      // nothing to receive and a blur's kernel is not worth it).
      if (On && Step > 0) {
        // Each GPU's range ran as chunks of its own, planned on its rates
        // among the two GPUs (the profile's link states).
        ASSERT_EQ(P.Pipelines.size(), 2u) << T;
        uint64_t End[2] = {Half, 2 * Half};
        for (size_t I = 0; I < 2; ++I) {
          const LaunchPlan::Pipelined &PP = P.Pipelines[I];
          EXPECT_EQ(PP.Device, I ? "gpu1" : "gpu0");
          ASSERT_GE(PP.Chunks.size(), 2u) << T;
          EXPECT_EQ(PP.Chunks.front().First, I * Half) << T;
          EXPECT_EQ(PP.Chunks.back().First + PP.Chunks.back().Count, End[I]);
          EXPECT_NE(PP.Plan.find("host links shared by 2 GPUs"),
                    std::string::npos)
              << T;
        }
        // Each GPU gets what its blocks read, once; its launches are its
        // chunks, each after its inputs' send.
        for (NullGpu *Dev : {Gpu.get(), Gpu2.get()}) {
          uint64_t Sent = 0;
          size_t Launches = 0;
          std::vector<NullGpu::Op> Ops = Dev->ops();
          std::vector<std::set<size_t>> Before = orderedBefore(Ops);
          for (size_t K = 0; K < Ops.size(); ++K) {
            if (Ops[K].What == NullGpu::Op::CopyIn)
              Sent += Ops[K].Bytes;
            if (Ops[K].What != NullGpu::Op::Launch)
              continue;
            ++Launches;
            bool AfterASend = false;
            for (size_t B : Before[K])
              AfterASend |= Ops[B].What == NullGpu::Op::CopyIn;
            EXPECT_TRUE(AfterASend) << T;
          }
          EXPECT_EQ(Sent, Half * 512u + 4u) << T;
          EXPECT_EQ(Launches, P.Pipelines[Dev == Gpu2.get()].Chunks.size());
        }
      } else if (!On) {
        EXPECT_TRUE(P.chunks().empty()) << T;
      }
      Got[On].push_back(expectResults(On ? "two pipelined gpus" : "split"));
    }
    TearDown();
  }
  EXPECT_TRUE(Got[0] == Got[1]);
}

TEST_F(PipelineTest, AFaultMidPipelineBesideTheCpuIsRecovered) {
  start(/*WithCpu=*/true);
  for (const char *Spec : {"gpu0:launch:3", "gpu0:copy:1", "cpu0:launch:1"}) {
    FaultInjector::global().clear();
    upload();
    ASSERT_TRUE(FaultInjector::global().configure(Spec).ok());
    LaunchPlan P = launch(cpuAndGpu(G));
    ASSERT_EQ(P.Recoveries.size(), 1u) << Spec << "\n" << P.describe();
    // The GPU's chunks ran (a send failing first leaves nothing run: the
    // attempt starts again without the GPU).
    EXPECT_EQ(P.chunks().empty(), std::string(Spec) == "gpu0:copy:1")
        << Spec << "\n" << P.describe();
    expectResults(Spec);
  }
}

bool nonIncreasing(const std::vector<uint64_t> &C) {
  return std::is_sorted(C.rbegin(), C.rend());
}
bool nonDecreasing(const std::vector<uint64_t> &C) {
  return std::is_sorted(C.begin(), C.end());
}
/// Grows to one peak, then shrinks.
bool unimodal(const std::vector<uint64_t> &C) {
  size_t Peak = std::max_element(C.begin(), C.end()) - C.begin();
  return std::is_sorted(C.begin(), C.begin() + Peak + 1) &&
         std::is_sorted(C.rbegin(), C.rend() - Peak);
}

/// The chunk plan of each of TPSM's six cases, through the engine (the
/// footprints' bytes, the performance table's kernel time, the profile's
/// rates): the case the plan names, the shape of its chunks, results
/// right. SH cases are the first launch (the program has read nothing
/// back: nothing to receive); the others the second, after a read-back.
struct CaseSpec {
  const char *Name;
  double Dram, Send, Receive, BlocksPerMs;
  bool Receives;
  std::function<bool(const std::vector<uint64_t> &)> Shape;
};

void PrintTo(const CaseSpec &C, std::ostream *OS) { *OS << C.Name; }

class PipelineCaseTest : public PipelineTest,
                         public ::testing::WithParamInterface<CaseSpec> {};

TEST_P(PipelineCaseTest, ChunksFollowTheCase) {
  const CaseSpec &C = GetParam();
  // Kernel-bound: about 1 us per block (32 ms), on the seed (1 GB/s over
  // 1 KiB per block) as on the null GPU's timed chunks; transfer-bound:
  // about 1 ns per block.
  GpuBlocksPerMs = C.BlocksPerMs;
  start(false, {}, profileJson(C.Dram, C.Send, C.Receive));
  upload();
  LaunchPlan P = launch();
  if (C.Receives) {
    expectResults("first launch");
    upload();
    P = launch();
  }
  std::vector<uint64_t> Sizes;
  uint64_t Sum = 0, Back = 0;
  for (const LaunchPlan::Chunk &Ch : P.chunks()) {
    EXPECT_EQ(Ch.First, Sum);
    Sizes.push_back(Ch.Count);
    Sum += Ch.Count;
    Back += Ch.BytesReceived;
  }
  std::string Text = P.describe();
  EXPECT_NE(Text.find(std::string("tpsm ") + C.Name), std::string::npos)
      << Text;
  ASSERT_GE(Sizes.size(), 2u) << Text;
  EXPECT_EQ(Sum, 32768u);
  EXPECT_TRUE(C.Shape(Sizes)) << Text;
  EXPECT_EQ(Back != 0, C.Receives) << Text;
  expectResults(C.Name);
}

INSTANTIATE_TEST_SUITE_P(
    SixCases, PipelineCaseTest,
    ::testing::Values(
        CaseSpec{"KB+SH", 1, 10, 10, 1000, false, nonDecreasing},
        CaseSpec{"KB+RH", 1, 40, 2, 1000, true, nonIncreasing},
        CaseSpec{"KB+GH", 1, 10, 10, 1000, true, unimodal},
        // A kernel of about 1 ms beside 1.7 ms of sends (a faster one
        // would gain nothing from overlap, and is not pipelined).
        CaseSpec{"DB+SH", 35, 10, 10, 33000, false, nonIncreasing},
        CaseSpec{"DB+RH", 1000, 40, 2, 1e6, true,
                 [](const std::vector<uint64_t> &) { return true; }},
        CaseSpec{"DB+GH", 1000, 10, 10, 1e6, true,
                 [](const std::vector<uint64_t> &C) {
                   // m equal chunks; the last takes the remainder.
                   return std::all_of(C.begin(), C.end() - 1,
                                      [&](uint64_t X) { return X == C[0]; });
                 }}),
    [](const ::testing::TestParamInfo<CaseSpec> &I) {
      std::string N = I.param.Name;
      N.erase(N.find('+'), 1);
      return N;
    });

TEST_F(PipelineTest, ThePlanExplainsTheCaseStepsAndBound) {
  // A kernel of about 1 ms, 1.7 ms each way: DB+GH once results go back
  // (DB+SH before), pipelined from the first launch.
  GpuBlocksPerMs = 33000;
  start(false, {}, profileJson(35, 10, 10));
  upload();
  LaunchPlan First = launch();
  std::string T1 = First.describe();
  // Before any chunk was timed: the roofline seed. The engine's staged
  // copies from a pageable host copy move at the pinned rates.
  EXPECT_NE(T1.find("kernel time the profile's roofline seed"),
            std::string::npos)
      << T1;
  EXPECT_NE(T1.find("pinned host link rates"), std::string::npos) << T1;
  EXPECT_FALSE(First.chunks().empty()) << T1;
  expectResults("first");
  for (int Step = 0; Step < 2; ++Step) {
    upload();
    LaunchPlan P = launch();
    std::string T = P.describe();
    // The case, the chunks, predicted per step and in all, the measured
    // time against the bound.
    for (const char *Want :
         {"tpsm DB+GH (send ", "chunks [", "; predicted ",
          "predicted per step [", "kernel time measured (",
          "measured / bound ", "bound max(send "})
      EXPECT_NE(T.find(Want), std::string::npos) << Want << "\n" << T;
    EXPECT_GT(P.Pipelines.at(0).KernelMeasuredMs, 0) << T;
    EXPECT_GT(P.Pipelines.at(0).SendMs, 0);
    expectResults("explained");
  }
}

TEST_F(PipelineTest, AProfileWithoutTheRatesLeavesTheProvisionalRule) {
  start(false, {}, profileJson(1000, 10, 10, 10, /*Both=*/false));
  upload();
  LaunchPlan P = launch();
  EXPECT_EQ(P.chunks().size(), 8u) << P.describe();
  EXPECT_NE(P.describe().find("provisional chunks"), std::string::npos)
      << P.describe();
  EXPECT_NE(P.describe().find("lacks pinned S_SR"), std::string::npos)
      << P.describe();
  expectResults("provisional");
}

TEST_F(PipelineTest, APlanPredictedNotToWinIsNotPipelined) {
  // A step's synchronization of 0.1 s outweighs any overlap.
  start(false, {}, profileJson(1000, 10, 10, 1e5));
  upload();
  LaunchPlan P = launch();
  EXPECT_TRUE(P.chunks().empty()) << P.describe();
  EXPECT_NE(P.describe().find("not pipelined on gpu0: tpsm"),
            std::string::npos)
      << P.describe();
  EXPECT_NE(P.describe().find("not under the"), std::string::npos)
      << P.describe();
  expectResults("unpipelined");
}

} // namespace
