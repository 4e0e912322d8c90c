//===- ReorganizeEngineTest.cpp - The reorganization step on a null GPU ---===//
//
// Part of Cleave. The engine's side of the reorganization step on a GPU
// (runtime/lib/engine/Reorganize.cpp) over a null GPU (cleave/rt/NullGpu.h:
// launches run nothing, memory is host memory): which launches the step
// queues, in which shapes, and what the plan says, for a kernel that
// cleave-reorganize gave its variants (unittests/Inputs/reorganize_test.ll,
// through the compiler's bundle writer). What the kernels compute is
// checked on CPU devices (test/Reorganize).
//
//===----------------------------------------------------------------------===//
#include "../TestInputs.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <array>
#include <chrono>
#include <thread>

using namespace cleave::rt;

namespace {

/// A launch's grid x and block x.
using Shape = std::array<uint32_t, 2>;

class ReorganizeEngineTest : public ::testing::Test {
protected:
  /// \p Kernel: rowsum (a CSR row sum) or paths (random paths).
  void start(ReorganizeMode Mode, const char *Kernel = "rowsum") {
    Eng.reset();
    Bufs.reset();
    NullGpu::Options G;
    G.OnLaunch = [this](const uint32_t Grid[3], const uint32_t Block[3],
                        void **) {
      Launches.push_back({Grid[0], Block[0]});
      if (Grid[0] == SlowGrid)
        std::this_thread::sleep_for(std::chrono::milliseconds(SlowMs));
    };
    Gpu = std::make_unique<NullGpu>(std::move(G));
    Bufs = std::make_unique<BufferManager>(std::vector<Device *>{Gpu.get()});
    Options O;
    O.Tune.Reorganize = Mode;
    Eng = std::make_unique<Engine>(*Bufs, Exec, PartitionPolicy::Model, O);
    static const std::string Bytes =
        cleave::test::testBundle("reorganize_test");
    ASSERT_TRUE(Eng->addProgram(Bytes.data(), Bytes.size(), {}).ok());
    K = Eng->findKernel(Kernel);
    Paths = std::string(Kernel) == "paths";
    ASSERT_NE(K, nullptr);
    ASSERT_FALSE(K->Info->Inspector.empty()) << "no variants in the bundle";
    for (void **P : {&RowPtr, &Vals, &Y})
      ASSERT_TRUE(Bufs->allocate(4 * (Rows + 1), *P).ok());
  }
  LaunchPlan launch(uint32_t Grid, uint32_t Block, uint32_t GridY = 1) {
    Launches.clear();
    int N = Rows;
    void *RowsumArgs[] = {&RowPtr, &Vals, &Y, &N};
    void *PathsArgs[] = {&RowPtr, &Y, &N};
    void **Args = Paths ? PathsArgs : RowsumArgs;
    KernelLaunchRequest Req;
    Req.Kernel = K;
    Req.Grid[0] = Grid;
    Req.Grid[1] = GridY;
    Req.Block[0] = Block;
    Req.Args = Args;
    LaunchPlan Plan;
    EXPECT_TRUE(Eng->launch(Req, Plan).ok());
    return Plan;
  }
  bool settled(uint32_t Grid, uint32_t Block, uint32_t GridY = 1) {
    uint32_t G[3] = {Grid, GridY, 1}, B[3] = {Block, 1, 1};
    return Eng->reorganizeSettled(*K, 0, G, B);
  }
  static std::string lines(const LaunchPlan &P) {
    std::string S;
    for (const std::string &L : P.Reorganize)
      S += L + "\n";
    return S;
  }
  /// The step's launches for \p Grid blocks of \p Block threads: the
  /// inspector, the sort's kernels (the largest count, grid-stride over
  /// blocks of 256; per digit pass a histogram and a scatter of a block of
  /// 256 per tile of 4096 threads around a scan on one block of 1024; the
  /// statistics), then the reorganized variant; with the host's sort, the
  /// inspector and the reorganized variant only.
  /// With \p Sampled blocks, the exploring step: the inspector and the
  /// sort over the grid's first \p Sampled blocks, then the original.
  static std::vector<Shape> stepShapes(uint32_t Grid, uint32_t Block,
                                       bool OnGpu, unsigned Passes,
                                       uint32_t Sampled = 0) {
    uint32_t Inspected = Sampled ? Sampled : Grid;
    if (!OnGpu)
      return {{Inspected, Block}, {Grid, Block}};
    uint32_t N = Inspected * Block, Strided = std::min((N + 255) / 256, 4096u);
    uint32_t Tiles = (N + 4095) / 4096, Warps = Inspected * ((Block + 31) / 32);
    std::vector<Shape> S = {{Inspected, Block}, {Strided, 256}};
    for (unsigned P = 0; P < Passes; ++P)
      S.insert(S.end(), {{Tiles, 256}, {1, 1024}, {Tiles, 256}});
    S.insert(S.end(), {{(Warps + 255) / 256, 256}, {Grid, Block}});
    return S;
  }
  static bool sortedOnGpu(const LaunchPlan &P) {
    return lines(P).find("sorted on gpu0") != std::string::npos;
  }

  static constexpr int Rows = 10000;
  /// Launches of this grid take SlowMs (the original, as the model times
  /// it on the host's clock).
  uint32_t SlowGrid = 0;
  int SlowMs = 0;
  bool Paths = false;
  CpuExecutor Exec{1};
  std::unique_ptr<NullGpu> Gpu;
  std::unique_ptr<BufferManager> Bufs;
  std::unique_ptr<Engine> Eng;
  const KernelHandle *K = nullptr;
  void *RowPtr = nullptr, *Vals = nullptr, *Y = nullptr;
  std::vector<Shape> Launches;
};

TEST_F(ReorganizeEngineTest, ForcedTheStepQueuesInspectorSortAndVariant) {
  start(ReorganizeMode::Force);
  LaunchPlan P = launch(79, 128);
  ASSERT_EQ(P.Runs.size(), 1u);
  EXPECT_EQ(P.Runs[0].Variant, "reorganized");
#ifdef CLEAVE_TEST_RT_HAS_SORT_PTX
  EXPECT_TRUE(sortedOnGpu(P)) << lines(P);
#else
  EXPECT_NE(lines(P).find("sorted on the host (the runtime was built without "
                          "its sort kernels)"),
            std::string::npos)
      << lines(P);
#endif
  // The first step plans for 16 key bits: two digit passes.
  EXPECT_EQ(Launches, stepShapes(79, 128, sortedOnGpu(P), 2)) << lines(P);
  EXPECT_NE(lines(P).find("on gpu0: 10112 threads, counts mean"),
            std::string::npos)
      << lines(P);
  EXPECT_NE(lines(P).find("measured: inspector"), std::string::npos);
  // Again: the sort's memory is kept; a null GPU's counts are all 0, so
  // the next plan needs one digit pass.
  LaunchPlan Q = launch(79, 128);
  EXPECT_EQ(Q.Runs[0].Variant, "reorganized");
  EXPECT_EQ(Launches, stepShapes(79, 128, sortedOnGpu(Q), 1));
}

TEST_F(ReorganizeEngineTest, NeverWhenOffOnOneWarpOrOnATwoDimensionalGrid) {
  start(ReorganizeMode::Off);
  LaunchPlan P = launch(79, 128);
  EXPECT_EQ(Launches, (std::vector<Shape>{{79, 128}}));
  EXPECT_EQ(P.Runs[0].Variant, "original");
  EXPECT_TRUE(P.Reorganize.empty());

  start(ReorganizeMode::Force);
  P = launch(1, 32);
  EXPECT_EQ(Launches, (std::vector<Shape>{{1, 32}}));
  EXPECT_EQ(lines(P), "not on gpu0: a single warp\n");
  P = launch(40, 128, 2);
  EXPECT_EQ(Launches, (std::vector<Shape>{{40, 128}}));
  EXPECT_TRUE(P.Reorganize.empty());
}

TEST_F(ReorganizeEngineTest, TheModelRefusesAKernelThatReadsPerItemStreams) {
  // rowsum walks its row's values: sorted rows lose their coalescing. The
  // model refuses it before anything runs: direct launches from the first.
  start(ReorganizeMode::On);
  EXPECT_TRUE(settled(79, 128));
  EXPECT_TRUE(settled(4096, 128));
  LaunchPlan P = launch(79, 128);
  EXPECT_EQ(Launches, (std::vector<Shape>{{79, 128}}));
  EXPECT_NE(lines(P).find("not on gpu0: its loop reads vals as per-item "
                          "streams"),
            std::string::npos)
      << lines(P);
  // Forced, it still runs (a measurement control).
  start(ReorganizeMode::Force);
  EXPECT_FALSE(settled(79, 128));
}

TEST_F(ReorganizeEngineTest, TheModelExploresOnlyWhatItsBudgetPaysFor) {
  start(ReorganizeMode::On, "paths");
  SlowGrid = 4096;
  SlowMs = 100;
  // 1: a kernel's first launch runs the original (the API layer launches
  // it directly: LaunchesWithNothingToDecideAreSettled).
  LaunchPlan P = launch(4096, 128);
  EXPECT_NE(lines(P).find("the kernel's first launch"), std::string::npos)
      << lines(P);
  // 2: 100 ms into the program, timing the original (0.3 ms) fits the
  // model's budget (0.5 % of the program's time so far).
  EXPECT_FALSE(settled(4096, 128));
  P = launch(4096, 128);
  EXPECT_EQ(Launches, (std::vector<Shape>{{4096, 128}}));
  EXPECT_NE(lines(P).find("the original timed"), std::string::npos) << lines(P);
  // 3: exploring would pay (the original takes 100 ms), but not yet within
  // the budget: the original alone, directly.
  EXPECT_TRUE(settled(4096, 128));
  P = launch(4096, 128);
  EXPECT_EQ(Launches, (std::vector<Shape>{{4096, 128}}));
  EXPECT_NE(lines(P).find("does not fit the model's budget yet"),
            std::string::npos)
      << lines(P);
  // Once the program has run long enough: the inspector on a 32nd of the
  // blocks, its sort, then the original. A null GPU's counts are all 0, so
  // nothing is gained.
  int Tries = 0;
  while (settled(4096, 128) && ++Tries < 30)
    launch(4096, 128);
  ASSERT_LT(Tries, 30);
  P = launch(4096, 128);
  EXPECT_EQ(Launches, stepShapes(4096, 128, sortedOnGpu(P), 2, 128))
      << lines(P);
  EXPECT_EQ(P.Runs[0].Variant, "original");
  EXPECT_NE(lines(P).find("(the inspector on the first 16384)"),
            std::string::npos)
      << lines(P);
  EXPECT_NE(lines(P).find("does not pay; the next launches run the original"),
            std::string::npos)
      << lines(P);
  // The model said no: direct launches; another launch size has its own
  // verdict still to come.
  EXPECT_TRUE(settled(4096, 128));
  P = launch(4096, 128);
  EXPECT_EQ(Launches, (std::vector<Shape>{{4096, 128}}));
  EXPECT_NE(lines(P).find("not on gpu0: the model predicts no gain"),
            std::string::npos)
      << lines(P);
  EXPECT_EQ(lines(P).find("(-"), std::string::npos) << lines(P);
}

TEST_F(ReorganizeEngineTest, LaunchesWithNothingToDecideAreSettled) {
  start(ReorganizeMode::Off);
  EXPECT_TRUE(settled(79, 128));
  start(ReorganizeMode::Force);
  EXPECT_FALSE(settled(79, 128));
  EXPECT_TRUE(settled(1, 32));      // a single warp
  EXPECT_TRUE(settled(40, 128, 2)); // a 2-D grid
  start(ReorganizeMode::On);
  EXPECT_TRUE(settled(1, 32));
  EXPECT_TRUE(settled(40, 128, 2));
  // A kernel's first launch: nothing predicts a gain yet.
  start(ReorganizeMode::On, "paths");
  EXPECT_TRUE(settled(79, 128));
}

} // namespace
