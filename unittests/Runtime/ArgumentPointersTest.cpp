//===- ArgumentPointersTest.cpp - Buffer addresses in by-value arguments -===//
//
// Part of Cleave. A kernel that dereferences the pointer fields of a struct
// it takes by value (the argument-pointer issue) runs whole on a GPU with
// those fields made the GPU's addresses, every buffer they point into whole
// there before and written there after (engine/ArgumentPointers.cpp,
// docs/runtime.md, "Pointers the engine cannot see"). On a null GPU, whose
// launches the test emulates on the replicas, with the host's arithmetic.
//
//===----------------------------------------------------------------------===//
#include "../TestInputs.h"
#include "cleave/rt/Engine.h"
#include "cleave/rt/NullGpu.h"

#include "gtest/gtest.h"

#include <cstring>
#include <random>

using namespace cleave::rt;

namespace {

struct View {
  float *P;
  int N;
};

const std::string &bundleBytes() {
  static const std::string Bytes = cleave::test::testBundle("engine_test");
  return Bytes;
}

float *replica(BufferManager &Bufs, void *P, Location Dev) {
  BufferManager::Resolved R;
  EXPECT_TRUE(Bufs.resolve(P, R).ok());
  DeviceAddr A = 0;
  EXPECT_TRUE(Bufs.addressOn(*R.Buf, Dev, 0, A).ok());
  return reinterpret_cast<float *>(A);
}

} // namespace

TEST(ArgumentPointersTest, AStructsPointerIsTheGpusAndItsWritesComeBack) {
  const int N = 1000;
  // What the GPU's launch saw in its View, and the replica it should be.
  float *Seen = nullptr, *Replica = nullptr;
  int SeenN = 0;
  NullGpu::Options O;
  O.OnLaunch = [&](const uint32_t *Grid, const uint32_t *Block,
                   void **Params) {
    View V;
    std::memcpy(&V, Params[0], sizeof(V));
    Seen = V.P;
    SeenN = V.N;
    // bumpview, on whatever the kernel was given.
    for (uint64_t I = 0; I < uint64_t(Grid[0]) * Block[0]; ++I)
      if (int64_t(I) < V.N && V.P == Replica)
        V.P[I] += 1.0f;
  };
  NullGpu Gpu(std::move(O));
  BufferManager Bufs({&Gpu});
  Bufs.setDirectHostCopies(false);
  CpuExecutor Exec(1);
  Engine Eng(Bufs, Exec, PartitionPolicy::SingleDevice);
  ASSERT_TRUE(Eng.addProgram(bundleBytes().data(), bundleBytes().size(), {})
                  .ok());
  const KernelHandle *K = Eng.findKernel("bumpview");
  ASSERT_NE(K, nullptr);
  ASSERT_TRUE(usesArgumentPointers(*K->Info));
  void *A = nullptr;
  ASSERT_TRUE(Bufs.allocate(N * sizeof(float), A).ok());
  Replica = replica(Bufs, A, 0);
  std::mt19937 Rng(3);
  std::vector<float> Host(N), Got(N);
  for (int Step = 0; Step < 3; ++Step) {
    // The program rewrites the input between launches: each launch must
    // find it on the GPU.
    for (float &X : Host)
      X = float(Rng() % 1000);
    ASSERT_TRUE(
        Bufs.memcpy(A, Host.data(), N * sizeof(float), MemcpyKind::HostToDevice)
            .ok());
    View V{static_cast<float *>(A), N};
    void *Args[] = {&V};
    KernelLaunchRequest Req;
    Req.Kernel = K;
    Req.Grid[0] = (N + 127) / 128;
    Req.Block[0] = 128;
    Req.Args = Args;
    LaunchPlan Plan;
    Result R = Eng.launch(Req, Plan);
    ASSERT_TRUE(R.ok()) << R.toString();
    EXPECT_EQ(Seen, Replica) << Plan.describe();
    EXPECT_EQ(SeenN, N);
    // The program's own View is untouched.
    EXPECT_EQ(V.P, A);
    EXPECT_NE(Plan.describe().find("1 buffer address(es) of its by-value "
                                   "arguments made gpu0's"),
              std::string::npos)
        << Plan.describe();
    ASSERT_TRUE(
        Bufs.memcpy(Got.data(), A, N * sizeof(float), MemcpyKind::DeviceToHost)
            .ok());
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(Got[I], Host[I] + 1.0f) << "step " << Step << ", element " << I;
  }
}

TEST(ArgumentPointersTest, ABeginAndOnePastTheEndStayARange) {
  NullGpu Gpu(0);
  BufferManager Bufs({&Gpu});
  void *A = nullptr, *B = nullptr;
  ASSERT_TRUE(Bufs.allocate(4096, A).ok());
  ASSERT_TRUE(Bufs.allocate(64, B).ok());
  // { begin, end (one past A's end), a count, an unrelated pointer into B,
  //   a null pointer }.
  struct Range {
    char *Begin, *End;
    long Count;
    char *Other;
    char *Null;
  } R{static_cast<char *>(A), static_cast<char *>(A) + 4096, 7,
      static_cast<char *>(B) + 8, nullptr};
  BundleKernel Info;
  BundleParam P;
  P.Kind = ParamKind::ByValue;
  P.Size = sizeof(Range);
  P.Align = 8;
  Info.Params.push_back(P);
  void *Args[] = {&R};
  std::vector<ArgumentPointer> Found = findArgumentPointers(Bufs, Info, Args);
  ASSERT_EQ(Found.size(), 3u);
  EXPECT_EQ(Found[0].Offset, 0u);
  EXPECT_EQ(Found[1].Offset, 8u);
  EXPECT_EQ(Found[1].At, 4096u);
  EXPECT_EQ(Found[2].Offset, 24u);
  EXPECT_EQ(Found[2].At, 8u);
  Range Copy = R;
  for (const ArgumentPointer &F : Found)
    ASSERT_TRUE(
        translateArgumentPointer(Bufs, F, 0, reinterpret_cast<char *>(&Copy))
            .ok());
  char *Rep = reinterpret_cast<char *>(replica(Bufs, A, 0));
  EXPECT_EQ(Copy.Begin, Rep);
  EXPECT_EQ(Copy.End, Rep + 4096);
  EXPECT_EQ(Copy.Count, 7);
  EXPECT_EQ(Copy.Other, reinterpret_cast<char *>(replica(Bufs, B, 0)) + 8);
  EXPECT_EQ(Copy.Null, nullptr);
}
