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
#include "cleave/rt/Engine.h"
#include "../TestInputs.h"
#include "cleave/rt/NullGpu.h"
#include "cleave/rt/Options.h"

#include "gtest/gtest.h"

#include <array>

using namespace cleave::rt;

namespace {

/// A launch's grid x and block x.
using Shape = std::array<uint32_t, 2>;

class ReorganizeEngineTest : public ::testing::Test {
protected:
  void start(ReorganizeMode Mode) {
    Eng.reset();
    Bufs.reset();
    NullGpu::Options G;
    G.OnLaunch = [this](const uint32_t Grid[3], const uint32_t Block[3],
                        void **) { Launches.push_back({Grid[0], Block[0]}); };
    Gpu = std::make_unique<NullGpu>(std::move(G));
    Bufs = std::make_unique<BufferManager>(std::vector<Device *>{Gpu.get()});
    Options O;
    O.Tune.Reorganize = Mode;
    Eng = std::make_unique<Engine>(*Bufs, Exec, PartitionPolicy::Model, O);
    static const std::string Bytes =
        cleave::test::testBundle("reorganize_test");
    ASSERT_TRUE(Eng->addProgram(Bytes.data(), Bytes.size(), {}).ok());
    K = Eng->findKernel("rowsum");
    ASSERT_NE(K, nullptr);
    ASSERT_FALSE(K->Info->Inspector.empty()) << "no variants in the bundle";
    for (void **P : {&RowPtr, &Vals, &Y})
      ASSERT_TRUE(Bufs->allocate(4 * (Rows + 1), *P).ok());
  }
  LaunchPlan launch(uint32_t Grid, uint32_t Block, uint32_t GridY = 1) {
    Launches.clear();
    int N = Rows;
    void *Args[] = {&RowPtr, &Vals, &Y, &N};
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
  static std::vector<Shape> stepShapes(uint32_t Grid, uint32_t Block,
                                       bool OnGpu, unsigned Passes) {
    if (!OnGpu)
      return {{Grid, Block}, {Grid, Block}};
    uint32_t N = Grid * Block, Strided = std::min((N + 255) / 256, 4096u);
    uint32_t Tiles = (N + 4095) / 4096, Warps = Grid * ((Block + 31) / 32);
    std::vector<Shape> S = {{Grid, Block}, {Strided, 256}};
    for (unsigned P = 0; P < Passes; ++P)
      S.insert(S.end(), {{Tiles, 256}, {1, 1024}, {Tiles, 256}});
    S.insert(S.end(), {{(Warps + 255) / 256, 256}, {Grid, Block}});
    return S;
  }
  static bool sortedOnGpu(const LaunchPlan &P) {
    return lines(P).find("sorted on gpu0") != std::string::npos;
  }

  static constexpr int Rows = 10000;
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

TEST_F(ReorganizeEngineTest, TheModelTimesTheOriginalExploresOnceThenDecides) {
  start(ReorganizeMode::On);
  // Until the model's verdict, the engine decides: no direct launch.
  EXPECT_FALSE(settled(79, 128));
  // 1: the original, timed for the model.
  LaunchPlan P = launch(79, 128);
  EXPECT_FALSE(settled(79, 128));
  EXPECT_EQ(Launches, (std::vector<Shape>{{79, 128}}));
  EXPECT_NE(lines(P).find("the original timed first"), std::string::npos);
  EXPECT_EQ(P.Runs[0].Variant, "original, timed for the reorganization model");
  // 2: the inspector and the sort; a null GPU's counts are all 0 (nothing
  // runs), so nothing is gained: the original runs after them.
  P = launch(79, 128);
  std::vector<Shape> Explore = stepShapes(79, 128, sortedOnGpu(P), 2);
  EXPECT_EQ(Launches, Explore) << lines(P);
  EXPECT_EQ(P.Runs[0].Variant, "original");
  EXPECT_NE(lines(P).find("does not pay; the next launches run the original"),
            std::string::npos)
      << lines(P);
  // 3: the model said no: the original alone, and the API layer may
  // launch it directly (Launches.cpp), as with reorganize=off; another
  // launch size has its own verdict still to come.
  EXPECT_TRUE(settled(79, 128));
  EXPECT_FALSE(settled(80, 128));
  P = launch(79, 128);
  EXPECT_EQ(Launches, (std::vector<Shape>{{79, 128}}));
  EXPECT_NE(lines(P).find("not on gpu0: the model predicts no gain"),
            std::string::npos)
      << lines(P);
  // The cost it weighed is the exploring step's, measured.
  EXPECT_EQ(lines(P).find("(-"), std::string::npos) << lines(P);
}

TEST_F(ReorganizeEngineTest, LaunchesWithNothingToDecideAreSettled) {
  start(ReorganizeMode::Off);
  EXPECT_TRUE(settled(79, 128));
  start(ReorganizeMode::Force);
  EXPECT_FALSE(settled(79, 128));
  EXPECT_TRUE(settled(1, 32)); // a single warp
  EXPECT_TRUE(settled(40, 128, 2)); // a 2-D grid
  start(ReorganizeMode::On);
  EXPECT_TRUE(settled(1, 32));
  EXPECT_TRUE(settled(40, 128, 2));
}

} // namespace
