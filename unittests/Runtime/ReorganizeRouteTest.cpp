//===- ReorganizeRouteTest.cpp - Routing the sorted order over GPUs -------===//
//
// Part of Cleave. The engine's side of routing a reorganized launch
// (runtime/lib/engine/ReorganizeRoute.cpp, docs/reorganize.md "Routing")
// over two null GPUs (cleave/rt/NullGpu.h): the inspector's counts are
// written by the test at its launch, each GPU's range of the sorted order
// runs as a launch of its own blocks with perm advanced to the range, and
// the model routes only where its measured rates predict a gain. What the
// kernels compute when routed is checked on CPU devices
// (test/Reorganize/runtime-step.test).
//
//===----------------------------------------------------------------------===//
#include "../TestInputs.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

using namespace cleave::rt;

namespace {

constexpr uint32_t Grid = 400, Block = 128;
constexpr uint32_t Threads = Grid * Block;

int32_t countOf(uint32_t I) { return I % 37 == 0 ? 1000 : 1 + I % 3; }

class ReorganizeRouteTest : public ::testing::Test {
protected:
  /// Two null GPUs, gpu1 \p Slower times slower; the whole grid on gpu0.
  void start(RouteMode Route, double Slower,
             PartitionPolicy Policy = PartitionPolicy::SingleDevice) {
    Eng.reset();
    Bufs.reset();
    for (int G = 0; G < 2; ++G) {
      NullGpu::Options O;
      O.Ordinal = G;
      // The whole grid takes 10 ms on gpu0.
      O.BlocksPerMs = Grid / 10.0 / (G ? Slower : 1);
      O.OnLaunch = [this, G](const uint32_t Gr[3], const uint32_t Bl[3],
                             void **Params) {
        int32_t *Extra = reinterpret_cast<int32_t *>(
            uintptr_t(*static_cast<DeviceAddr *>(Params[3])));
        if (Seen.empty()) {
          // The inspector: every launched thread's count.
          for (uint32_t I = 0; I < Gr[0] * Bl[0]; ++I)
            Extra[I] = I + ZeroTail * Block >= Threads ? 0 : countOf(I);
        }
        Seen.push_back({G, Gr[0], Seen.empty() ? -1 : Extra[0]});
      };
      Gpus[G] = std::make_unique<NullGpu>(std::move(O));
    }
    Bufs = std::make_unique<BufferManager>(
        std::vector<Device *>{Gpus[0].get(), Gpus[1].get()});
    Options O;
    O.Tune.Reorganize = ReorganizeMode::Force;
    O.Tune.Route = Route;
    O.CacheDir.clear();
    Eng = std::make_unique<Engine>(*Bufs, Exec, Policy, O);
    static const std::string Bytes =
        cleave::test::testBundle("reorganize_test");
    ASSERT_TRUE(Eng->addProgram(Bytes.data(), Bytes.size(), {}).ok());
    K = Eng->findKernel("paths");
    ASSERT_NE(K, nullptr);
    for (void **P : {&Seeds, &Out})
      ASSERT_TRUE(Bufs->allocate(4 * Threads, *P).ok());
  }
  LaunchPlan launch() {
    Seen.clear();
    int N = Threads;
    void *Args[] = {&Seeds, &Out, &N};
    KernelLaunchRequest Req;
    Req.Kernel = K;
    Req.Grid[0] = Grid;
    Req.Block[0] = Block;
    Req.Args = Args;
    LaunchPlan Plan;
    EXPECT_TRUE(Eng->launch(Req, Plan).ok());
    return Plan;
  }
  static std::string lines(const LaunchPlan &P) {
    std::string S;
    for (const std::string &L : P.Reorganize)
      S += L + "\n";
    return S;
  }
  static bool says(const LaunchPlan &P, const char *What) {
    return lines(P).find(What) != std::string::npos;
  }
  /// The sorted order: largest count first, ties in thread order.
  static std::vector<int32_t> sorted() {
    std::vector<int32_t> P(Threads);
    std::iota(P.begin(), P.end(), 0);
    std::stable_sort(P.begin(), P.end(), [](int32_t A, int32_t B) {
      return countOf(A) > countOf(B);
    });
    return P;
  }

  struct Launch {
    int Gpu;
    uint32_t Blocks;
    int32_t FirstItem; ///< perm[0] of the launch (-1: the inspector)
  };
  std::vector<Launch> Seen;
  /// Blocks at the grid's end whose threads the inspector counts 0 (past
  /// the last item).
  uint32_t ZeroTail = 0;
  CpuExecutor Exec{1};
  std::unique_ptr<NullGpu> Gpus[2];
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
  const KernelHandle *K = nullptr;
  void *Seeds = nullptr, *Out = nullptr;
};

TEST_F(ReorganizeRouteTest, EachGpuRunsItsRangeOfTheSortedOrder) {
  start(RouteMode::Force, 1);
  LaunchPlan P = launch();
  ASSERT_TRUE(says(P, "): forced")) << lines(P);
  // The inspector on gpu0, then one launch per GPU of its range's blocks.
  ASSERT_EQ(Seen.size(), 3u) << lines(P);
  EXPECT_EQ(Seen[0].Gpu, 0);
  EXPECT_EQ(Seen[0].Blocks, Grid);
  EXPECT_EQ(Seen[1].Gpu, 0);
  EXPECT_EQ(Seen[2].Gpu, 1);
  EXPECT_EQ(Seen[1].Blocks + Seen[2].Blocks, Grid);
  EXPECT_GT(Seen[1].Blocks, 0u);
  EXPECT_GT(Seen[2].Blocks, 0u);
  // Each launch's perm starts at its range: the range at the head of the
  // sorted order reads its first item, the other the item its first block
  // would run in the whole launch.
  std::vector<int32_t> S = sorted();
  const Launch &Head = Seen[1].FirstItem == S[0] ? Seen[1] : Seen[2];
  const Launch &Tail = &Head == &Seen[1] ? Seen[2] : Seen[1];
  EXPECT_EQ(Head.FirstItem, S[0]);
  EXPECT_EQ(Tail.FirstItem, S[Head.Blocks * Block]) << lines(P);
}

TEST_F(ReorganizeRouteTest, AGpu100xSlowerGetsNothingOnceMeasured) {
  start(RouteMode::On, 100);
  // gpu1 has no rate yet: a sliver of the light tail measures it.
  LaunchPlan P = launch();
  EXPECT_TRUE(says(P, "probing the unmeasured devices")) << lines(P);
  ASSERT_EQ(Seen.size(), 3u);
  EXPECT_EQ(Seen[2].Gpu, 1);
  EXPECT_EQ(Seen[2].Blocks, 1u);
  // Measured 100x slower, it gains nothing: the whole step on gpu0.
  P = launch();
  EXPECT_TRUE(says(P, ": whole on gpu0\n")) << lines(P);
  ASSERT_EQ(Seen.size(), 2u) << lines(P);
  EXPECT_EQ(Seen[1].Gpu, 0);
  EXPECT_EQ(Seen[1].Blocks, Grid);
}

TEST_F(ReorganizeRouteTest, TheRouteIsTakenWhereTheModelSaysItPays) {
  start(RouteMode::On, 1);
  LaunchPlan P = launch();
  EXPECT_TRUE(says(P, "probing the unmeasured devices")) << lines(P);
  // Two equal GPUs: each takes about half the work (the model's: the
  // warp maxima, most of them in the few blocks of heavy items).
  P = launch();
  EXPECT_TRUE(says(P, "): routed\n")) << lines(P);
  ASSERT_EQ(Seen.size(), 3u) << lines(P);
  EXPECT_GT(Seen[1].Blocks, 0u);
  EXPECT_GT(Seen[2].Blocks, 0u);
  EXPECT_TRUE(says(P, "route: gpu0 sorted blocks [")) << lines(P);
  EXPECT_TRUE(says(P, "route: gpu1 sorted blocks [")) << lines(P);
}

TEST_F(ReorganizeRouteTest, AProbeReachesBackPastThreadsWithoutItems) {
  // The last 10 blocks' threads have no item (count 0): they sort last, so
  // a sliver of one block would measure nothing. The probe takes them and
  // one block of work, and the next launch decides on the measured rate
  // (a null GPU's time is per block, empty ones included, so gpu1 looks
  // slow: what matters is that the routed time is a measured one).
  start(RouteMode::On, 1);
  ZeroTail = 10;
  LaunchPlan P = launch();
  EXPECT_TRUE(says(P, "probing the unmeasured devices")) << lines(P);
  ASSERT_EQ(Seen.size(), 3u);
  EXPECT_EQ(Seen[2].Gpu, 1);
  EXPECT_EQ(Seen[2].Blocks, 11u);
  P = launch();
  size_t At = lines(P).find(" ms, routed ");
  ASSERT_NE(At, std::string::npos) << lines(P);
  double Routed = std::atof(lines(P).c_str() + At + 12);
  EXPECT_GT(Routed, 0);
  EXPECT_LT(Routed, 20) << lines(P); // the whole grid takes 10 ms on gpu0
}

TEST_F(ReorganizeRouteTest, APolicySplitGivesWayToARoutedStepThatWasFaster) {
  // Two equal GPUs: the model policy splits the original order; routing
  // runs only in a step on one device. Forced, the split gives way.
  start(RouteMode::Force, 1, PartitionPolicy::Model);
  LaunchPlan P;
  for (int I = 0; I < 8 && !says(P, "gives way"); ++I)
    P = launch();
  EXPECT_TRUE(says(P, "route: the policy's split (predicted ")) << lines(P);
  EXPECT_TRUE(says(P, "gives way to the step on gpu")) << lines(P);
  EXPECT_TRUE(says(P, "route: gpu1 sorted blocks [")) << lines(P);
  ASSERT_EQ(P.Runs.size(), 1u);
  EXPECT_EQ(P.Runs[0].Count, Grid);
  // Under the model, the split gives way only to a routed step measured
  // faster than it is predicted to be: never before one has run.
  start(RouteMode::On, 1, PartitionPolicy::Model);
  P = launch();
  EXPECT_FALSE(says(P, "gives way")) << lines(P);
}

} // namespace
