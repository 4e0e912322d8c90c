//===- LaunchTest.cpp - Launches split over several CPU devices -----------===//
//
// Hand-written CPU variants (the CpuKernelABI.h calling convention) with
// hand-written footprints in the v1 text format, run by launchOnCpuDevices
// over 1, 2 and 3 real CPU devices (cpu0 on the host copies, cpu1 and cpu2
// with replicas of their own).
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Launch.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

using namespace cleave::rt;

namespace {

// vecadd(const float *a, const float *b, float *c, int n):
//   i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]
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
        C[I] = A[I] + B[I];
    }
}

const cleave_cpu_kernel_desc VecaddDesc = {"_Z6vecaddPKfS0_Pfi", vecaddCpu,
                                           0, 0, 4, 0};

const char *VecaddAccess = R"(
access 0 read 4 exact
  check (affine 0 (tid.x 1) (ctaid.x block.x)) -2147483648 2147483647
  le (affine (- 1 arg3) (tid.x 1) (ctaid.x block.x))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
access 1 read 4 exact
  check (affine 0 (tid.x 1) (ctaid.x block.x)) -2147483648 2147483647
  le (affine (- 1 arg3) (tid.x 1) (ctaid.x block.x))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
)";

const char *VecaddHeader = R"(cleave-footprint 1
kernel _Z6vecaddPKfS0_Pfi
arg 0 ptr a
arg 1 ptr b
arg 2 ptr c
arg 3 int 32 n
)";

std::string vecaddText(bool UnknownWrite) {
  std::string S = std::string(VecaddHeader) + VecaddAccess;
  if (UnknownWrite)
    S += "unknown 2 write\n";
  else
    S += R"(access 2 write 4 exact
  check (affine 0 (tid.x 1) (ctaid.x block.x)) -2147483648 2147483647
  le (affine (- 1 arg3) (tid.x 1) (ctaid.x block.x))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)))
end
)";
  return S + "end\n";
}

// scale2d(const float *in, float *out, int w, int h): x, y from a 2-D grid;
// if (x < w && y < h) out[y*w + x] = 2 * in[y*w + x] + 1.
void scale2dCpu(void **Args, const cleave_cpu_launch *L,
                           uint64_t First, uint64_t Count, void *) {
  const float *In = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int W = *static_cast<int *>(Args[2]);
  int H = *static_cast<int *>(Args[3]);
  for (uint64_t Blk = First; Blk < First + Count; ++Blk) {
    uint64_t BX = Blk % L->grid[0], BY = Blk / L->grid[0] % L->grid[1];
    for (uint32_t TY = 0; TY < L->block[1]; ++TY)
      for (uint32_t TX = 0; TX < L->block[0]; ++TX) {
        int64_t X = int64_t(BX) * L->block[0] + TX;
        int64_t Y = int64_t(BY) * L->block[1] + TY;
        if (X < W && Y < H)
          Out[Y * W + X] = 2 * In[Y * W + X] + 1;
      }
  }
}

const cleave_cpu_kernel_desc Scale2dDesc = {"scale2d", scale2dCpu, 0, 0, 4, 0};

const char *Scale2dText = R"(cleave-footprint 1
kernel scale2d
arg 0 ptr in
arg 1 ptr out
arg 2 int 32 w
arg 3 int 32 h
access 0 read 4 exact
  le (affine (- 1 arg2) (tid.x 1) (ctaid.x block.x))
  le (affine (- 1 arg3) (tid.y 1) (ctaid.y block.y))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)) (tid.y (* 4 arg2)) (ctaid.y (* 4 block.y arg2)))
end
access 1 write 4 exact
  le (affine (- 1 arg2) (tid.x 1) (ctaid.x block.x))
  le (affine (- 1 arg3) (tid.y 1) (ctaid.y block.y))
  at (affine 0 (tid.x 4) (ctaid.x (* 4 block.x)) (tid.y (* 4 arg2)) (ctaid.y (* 4 block.y arg2)))
end
end
)";

// flag(int *out, int v): every thread of every block writes out[0] = v,
// an Exact footprint that overlaps between any two ranges.
void flagCpu(void **Args, const cleave_cpu_launch *, uint64_t,
                        uint64_t, void *) {
  int *Out = *static_cast<int **>(Args[0]);
  Out[0] = *static_cast<int *>(Args[1]);
}

const cleave_cpu_kernel_desc FlagDesc = {"flag", flagCpu, 0, 0, 2, 0};

const char *FlagText = R"(cleave-footprint 1
kernel flag
arg 0 ptr out
arg 1 int 32 v
access 0 write 4 exact
  at (affine 0)
end
end
)";

FootprintProgram parse(const std::string &Text) {
  FootprintProgram P;
  Status S = FootprintProgram::parse(Text, P);
  EXPECT_TRUE(S.Ok) << S.Message;
  return P;
}

class LaunchTest : public ::testing::Test {
protected:
  void SetUp() override {
    RegistryOptions O;
    O.CudaLibrary = "none";
    ASSERT_TRUE(DeviceRegistry::create("cpu,cpu,cpu", Reg, O).ok());
    ASSERT_EQ(Reg->size(), 3u);
  }
  std::unique_ptr<BufferManager> manager(size_t NumDevices) {
    std::vector<Device *> D = Reg->devices();
    D.resize(NumDevices);
    return std::make_unique<BufferManager>(D);
  }
  void *upload(BufferManager &M, const std::vector<float> &Host) {
    void *P = nullptr;
    EXPECT_TRUE(M.allocate(Host.size() * 4, P).ok());
    EXPECT_TRUE(M.memcpy(P, Host.data(), Host.size() * 4,
                         MemcpyKind::HostToDevice)
                    .ok());
    return P;
  }
  std::vector<float> download(BufferManager &M, void *P, size_t N) {
    std::vector<float> Out(N);
    EXPECT_TRUE(
        M.memcpy(Out.data(), P, N * 4, MemcpyKind::DeviceToHost).ok());
    return Out;
  }
  /// A random partition of [0, Total) over devices [0, NumDevices).
  std::vector<PartitionRange> randomPartition(uint64_t Total,
                                              size_t NumDevices) {
    std::uniform_int_distribution<uint64_t> Pieces(1, std::min<uint64_t>(
                                                          Total, 5));
    size_t K = Pieces(Rng);
    std::vector<uint64_t> Cuts = {0, Total};
    while (Cuts.size() < K + 1) {
      uint64_t C = std::uniform_int_distribution<uint64_t>(1, Total - 1)(Rng);
      if (std::find(Cuts.begin(), Cuts.end(), C) == Cuts.end())
        Cuts.push_back(C);
    }
    std::sort(Cuts.begin(), Cuts.end());
    std::vector<PartitionRange> P;
    for (size_t I = 0; I + 1 < Cuts.size(); ++I)
      P.push_back(
          {Location(std::uniform_int_distribution<size_t>(0, NumDevices - 1)(
               Rng)),
           Cuts[I], Cuts[I + 1] - Cuts[I]});
    std::shuffle(P.begin(), P.end(), Rng);
    return P;
  }

  std::unique_ptr<DeviceRegistry> Reg;
  CpuExecutor Exec{2};
  std::mt19937_64 Rng{1234};
};

struct VecaddArgs {
  void *A, *B, *C;
  int N;
  void *Ptrs[4];
  VecaddArgs(void *A, void *B, void *C, int N) : A(A), B(B), C(C), N(N) {
    Ptrs[0] = &this->A;
    Ptrs[1] = &this->B;
    Ptrs[2] = &this->C;
    Ptrs[3] = &this->N;
  }
};

CpuLaunchRequest vecaddRequest(const FootprintProgram &FP, VecaddArgs &Args,
                               uint32_t Grid, uint32_t Block,
                               std::vector<PartitionRange> Partition) {
  CpuLaunchRequest R;
  R.Kernel = &VecaddDesc;
  R.Footprints = &FP;
  R.Grid[0] = Grid;
  R.Block[0] = Block;
  R.Args = Args.Ptrs;
  R.ArgSizes = {8, 8, 8, 4};
  R.Partition = std::move(Partition);
  return R;
}

TEST_F(LaunchTest, VecaddRandomPartitionsMoveOnlyTheNeededBytes) {
  FootprintProgram FP = parse(vecaddText(false));
  for (size_t NumDevices = 1; NumDevices <= 3; ++NumDevices)
    for (int Trial = 0; Trial < 20; ++Trial) {
      auto M = manager(NumDevices);
      int N = std::uniform_int_distribution<int>(1, 5000)(Rng);
      uint32_t Block = std::uniform_int_distribution<uint32_t>(1, 128)(Rng);
      uint32_t Grid = (N + Block - 1) / Block +
                      std::uniform_int_distribution<uint32_t>(0, 2)(Rng);
      std::vector<float> A(N), B(N), Expected(N);
      for (int I = 0; I < N; ++I) {
        A[I] = float(I % 97);
        B[I] = float(I % 13) * 0.5f;
        Expected[I] = A[I] + B[I];
      }
      void *DA = upload(*M, A), *DB = upload(*M, B), *DC = nullptr;
      ASSERT_TRUE(M->allocate(N * 4, DC).ok());
      VecaddArgs Args(DA, DB, DC, N);
      auto Part = randomPartition(Grid, NumDevices);
      CpuLaunchRequest Req = vecaddRequest(FP, Args, Grid, Block, Part);
      LaunchPlan Plan;
      Result R = launchOnCpuDevices(*M, Exec, Req, Plan);
      ASSERT_TRUE(R.ok()) << R.toString();
      EXPECT_TRUE(Plan.Split) << Plan.describe();
      // a and b live on the host: a range on cpu1/cpu2 pulls exactly its
      // slice of each; cpu0 shares the host copy and pulls nothing.
      uint64_t Want = 0;
      for (const PartitionRange &P : Part)
        if (P.Device != 0) {
          uint64_t Lo = std::min<uint64_t>(N, P.First * Block);
          uint64_t Hi = std::min<uint64_t>(N, (P.First + P.Count) * Block);
          Want += 2 * 4 * (Hi - Lo);
        }
      EXPECT_EQ(Plan.BytesMoved, Want) << Plan.describe();
      // Residency: the same launch again moves nothing.
      R = launchOnCpuDevices(*M, Exec, Req, Plan);
      ASSERT_TRUE(R.ok()) << R.toString();
      EXPECT_EQ(Plan.BytesMoved, 0u) << Plan.describe();
      EXPECT_EQ(download(*M, DC, N), Expected);
      for (void *P : {DA, DB, DC})
        ASSERT_TRUE(M->free(P).ok());
    }
}

TEST_F(LaunchTest, ResidencyAcrossLaunchesAndPlanText) {
  FootprintProgram FP = parse(vecaddText(false));
  auto M = manager(2);
  const int N = 1024;
  std::vector<float> A(N, 1.0f), B(N, 2.0f);
  void *DA = upload(*M, A), *DB = upload(*M, B), *DC = nullptr;
  ASSERT_TRUE(M->allocate(N * 4, DC).ok());
  VecaddArgs Args(DA, DB, DC, N);
  CpuLaunchRequest Req =
      vecaddRequest(FP, Args, 16, 64, {{0, 0, 8}, {1, 8, 8}});
  LaunchPlan Plan;
  ASSERT_TRUE(launchOnCpuDevices(*M, Exec, Req, Plan).ok());
  EXPECT_EQ(Plan.BytesMoved, 2u * 512 * 4);
  ASSERT_EQ(Plan.Runs.size(), 2u);
  EXPECT_EQ(Plan.Runs[0].BytesIn, 0u);
  EXPECT_EQ(Plan.Runs[1].DeviceName, "cpu1");
  EXPECT_NE(Plan.describe().find("cpu1 blocks [8, 16): 4096 bytes in"),
            std::string::npos)
      << Plan.describe();
  // c's second half now lives only on cpu1.
  Buffer &C = *[&] {
    BufferManager::Resolved Res;
    EXPECT_TRUE(M->resolve(DC, Res).ok());
    return Res.Buf;
  }();
  EXPECT_EQ(M->missingRanges(C, 0, {0, N * 4}).totalBytes(), 2048u);
  // c = a + c, everything on cpu1: only a's first half and c's first half
  // move (a's second half is already there).
  VecaddArgs Args2(DA, DC, DC, N);
  CpuLaunchRequest Req2 = vecaddRequest(FP, Args2, 16, 64, {{1, 0, 16}});
  ASSERT_TRUE(launchOnCpuDevices(*M, Exec, Req2, Plan).ok());
  EXPECT_EQ(Plan.BytesMoved, 2u * 512 * 4) << Plan.describe();
  EXPECT_EQ(download(*M, DC, N), std::vector<float>(N, 4.0f));
}

TEST_F(LaunchTest, TwoDimensionalRandomPartitions) {
  FootprintProgram FP = parse(Scale2dText);
  for (size_t NumDevices = 1; NumDevices <= 3; ++NumDevices)
    for (int Trial = 0; Trial < 15; ++Trial) {
      auto M = manager(NumDevices);
      int W = std::uniform_int_distribution<int>(1, 150)(Rng);
      int H = std::uniform_int_distribution<int>(1, 120)(Rng);
      uint32_t BX = std::uniform_int_distribution<uint32_t>(1, 16)(Rng);
      uint32_t BY = std::uniform_int_distribution<uint32_t>(1, 8)(Rng);
      uint32_t GX = (W + BX - 1) / BX, GY = (H + BY - 1) / BY;
      std::vector<float> In(size_t(W) * H), Expected(In.size());
      for (size_t I = 0; I < In.size(); ++I) {
        In[I] = float(I % 101);
        Expected[I] = 2 * In[I] + 1;
      }
      void *DIn = upload(*M, In), *DOut = nullptr;
      ASSERT_TRUE(M->allocate(In.size() * 4, DOut).ok());
      void *PIn = DIn, *POut = DOut;
      void *Ptrs[4] = {&PIn, &POut, &W, &H};
      CpuLaunchRequest Req;
      Req.Kernel = &Scale2dDesc;
      Req.Footprints = &FP;
      Req.Grid[0] = GX;
      Req.Grid[1] = GY;
      Req.Block[0] = BX;
      Req.Block[1] = BY;
      Req.Args = Ptrs;
      Req.ArgSizes = {8, 8, 4, 4};
      Req.Partition = randomPartition(uint64_t(GX) * GY, NumDevices);
      LaunchPlan Plan;
      Result R = launchOnCpuDevices(*M, Exec, Req, Plan);
      ASSERT_TRUE(R.ok()) << R.toString();
      EXPECT_TRUE(Plan.Split) << Plan.describe();
      // Never more than one copy of the input per device.
      EXPECT_LE(Plan.BytesMoved, In.size() * 4 * NumDevices);
      EXPECT_EQ(download(*M, DOut, In.size()), Expected)
          << W << "x" << H << " " << Plan.describe();
      R = launchOnCpuDevices(*M, Exec, Req, Plan);
      ASSERT_TRUE(R.ok());
      EXPECT_EQ(Plan.BytesMoved, 0u) << Plan.describe();
    }
}

TEST_F(LaunchTest, UnknownWritesRunOnOneDevice) {
  FootprintProgram FP = parse(vecaddText(true));
  for (int Trial = 0; Trial < 10; ++Trial) {
    auto M = manager(3);
    const int N = 3000;
    std::vector<float> A(N), B(N), Expected(N);
    for (int I = 0; I < N; ++I) {
      A[I] = float(I);
      B[I] = 1.0f;
      Expected[I] = A[I] + 1.0f;
    }
    void *DA = upload(*M, A), *DB = upload(*M, B);
    // c holds old data on the host: an Unknown write makes the fallback
    // device bring all of c first, so nothing is lost.
    void *DC = upload(*M, std::vector<float>(N, -1.0f));
    VecaddArgs Args(DA, DB, DC, N);
    auto Part = randomPartition(24, 3);
    CpuLaunchRequest Req = vecaddRequest(FP, Args, 24, 128, Part);
    LaunchPlan Plan;
    ASSERT_TRUE(launchOnCpuDevices(*M, Exec, Req, Plan).ok());
    EXPECT_FALSE(Plan.Split);
    EXPECT_NE(Plan.Reason.find("unknown"), std::string::npos) << Plan.Reason;
    ASSERT_EQ(Plan.Runs.size(), 1u);
    EXPECT_EQ(Plan.Runs[0].Device, Part[0].Device);
    EXPECT_EQ(Plan.Runs[0].Count, 24u);
    EXPECT_NE(Plan.describe().find("not split"), std::string::npos);
    EXPECT_EQ(download(*M, DC, N), Expected);
  }
}

TEST_F(LaunchTest, OverlappingExactWritesRunOnOneDevice) {
  FootprintProgram FP = parse(FlagText);
  auto M = manager(3);
  void *D = nullptr;
  ASSERT_TRUE(M->allocate(16, D).ok());
  int Zero[4] = {0, 7, 7, 7};
  ASSERT_TRUE(M->memcpy(D, Zero, 16, MemcpyKind::HostToDevice).ok());
  int V = 42;
  void *P = D;
  void *Ptrs[2] = {&P, &V};
  CpuLaunchRequest Req;
  Req.Kernel = &FlagDesc;
  Req.Footprints = &FP;
  Req.Grid[0] = 10;
  Req.Args = Ptrs;
  Req.ArgSizes = {8, 4};
  Req.Partition = {{2, 0, 5}, {1, 5, 5}};
  LaunchPlan Plan;
  ASSERT_TRUE(launchOnCpuDevices(*M, Exec, Req, Plan).ok());
  EXPECT_FALSE(Plan.Split);
  EXPECT_NE(Plan.Reason.find("same bytes"), std::string::npos) << Plan.Reason;
  EXPECT_EQ(Plan.Runs[0].DeviceName, "cpu2");
  int Out[4];
  ASSERT_TRUE(M->memcpy(Out, D, 16, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(Out[0], 42);
  EXPECT_EQ(Out[1], 7);
  // Both ranges on one device may overlap: still split, no refusal.
  Req.Partition = {{1, 0, 5}, {1, 5, 5}};
  V = 5;
  ASSERT_TRUE(launchOnCpuDevices(*M, Exec, Req, Plan).ok());
  EXPECT_TRUE(Plan.Split) << Plan.describe();
  ASSERT_TRUE(M->memcpy(Out, D, 16, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(Out[0], 5);
}

TEST_F(LaunchTest, BadRequestsAreErrors) {
  FootprintProgram FP = parse(vecaddText(false));
  auto M = manager(3);
  void *DA = upload(*M, std::vector<float>(64, 1.0f));
  void *DB = upload(*M, std::vector<float>(64, 2.0f));
  void *DC = nullptr;
  ASSERT_TRUE(M->allocate(64 * 4, DC).ok());
  VecaddArgs Args(DA, DB, DC, 64);
  LaunchPlan Plan;
  auto Try = [&](std::vector<PartitionRange> Part) {
    CpuLaunchRequest Req = vecaddRequest(FP, Args, 4, 16, std::move(Part));
    return launchOnCpuDevices(*M, Exec, Req, Plan);
  };
  EXPECT_EQ(Try({}).code(), ErrorCode::InvalidValue);
  EXPECT_EQ(Try({{0, 0, 3}}).code(), ErrorCode::InvalidValue);  // gap
  EXPECT_EQ(Try({{0, 0, 3}, {1, 2, 2}}).code(),
            ErrorCode::InvalidValue);                           // overlap
  EXPECT_EQ(Try({{0, 0, 5}}).code(), ErrorCode::InvalidValue);  // too many
  EXPECT_EQ(Try({{0, 1, 3}}).code(), ErrorCode::InvalidValue);  // no 0
  EXPECT_EQ(Try({{0, 0, 4}, {1, 4, 0}}).code(), ErrorCode::InvalidValue);
  EXPECT_EQ(Try({{0, 0, 2}, {0, 0, 2}, {0, 2, 2}}).code(),
            ErrorCode::InvalidValue); // covered twice
  EXPECT_EQ(Try({{3, 0, 4}}).code(), ErrorCode::InvalidDevice);
  EXPECT_EQ(Try({{-1, 0, 4}}).code(), ErrorCode::InvalidDevice);
  EXPECT_EQ(Try({{0, 0, UINT64_MAX}}).code(), ErrorCode::InvalidValue);
  ASSERT_TRUE(Try({{2, 0, 1}, {0, 1, 3}}).ok());

  // A pointer that is in no allocation, and a freed one.
  float Foreign[64];
  Args.C = Foreign;
  Result R = Try({{0, 0, 4}});
  EXPECT_EQ(R.code(), ErrorCode::InvalidValue);
  EXPECT_NE(R.message().find("argument 2"), std::string::npos) << R.message();
  void *Gone = nullptr;
  ASSERT_TRUE(M->allocate(256, Gone).ok());
  ASSERT_TRUE(M->free(Gone).ok());
  Args.C = Gone;
  EXPECT_EQ(Try({{1, 0, 4}}).code(), ErrorCode::InvalidValue);
  Args.C = DC;

  // Malformed requests.
  CpuLaunchRequest Req = vecaddRequest(FP, Args, 4, 16, {{0, 0, 4}});
  Req.Kernel = nullptr;
  EXPECT_EQ(launchOnCpuDevices(*M, Exec, Req, Plan).code(),
            ErrorCode::InvalidValue);
  Req = vecaddRequest(FP, Args, 4, 16, {{0, 0, 4}});
  Req.Footprints = nullptr;
  EXPECT_EQ(launchOnCpuDevices(*M, Exec, Req, Plan).code(),
            ErrorCode::InvalidValue);
  Req = vecaddRequest(FP, Args, 4, 16, {{0, 0, 4}});
  Req.ArgSizes.pop_back();
  EXPECT_EQ(launchOnCpuDevices(*M, Exec, Req, Plan).code(),
            ErrorCode::InvalidValue);
  Req = vecaddRequest(FP, Args, 4, 16, {{0, 0, 4}});
  Req.Block[1] = 0;
  EXPECT_EQ(launchOnCpuDevices(*M, Exec, Req, Plan).code(),
            ErrorCode::InvalidValue);
  Req = vecaddRequest(FP, Args, 4, 16, {{0, 0, 4}});
  Req.Kernel = &FlagDesc; // 2 parameters, footprints of 4
  EXPECT_EQ(launchOnCpuDevices(*M, Exec, Req, Plan).code(),
            ErrorCode::InvalidValue);
  Req = vecaddRequest(FP, Args, 4, 16, {{0, 0, 4}});
  Req.Args = nullptr;
  EXPECT_EQ(launchOnCpuDevices(*M, Exec, Req, Plan).code(),
            ErrorCode::InvalidValue);
}

} // namespace

namespace {

TEST_F(LaunchTest, InjectedLaunchFaultIsAnError) {
  FootprintProgram FP = parse(vecaddText(false));
  auto M = manager(2);
  int N = 256;
  std::vector<float> A(N, 1.0f);
  void *DA = upload(*M, A), *DC = nullptr;
  ASSERT_TRUE(M->allocate(N * 4, DC).ok());
  VecaddArgs Args(DA, DA, DC, N);
  CpuLaunchRequest Req =
      vecaddRequest(FP, Args, 4, 64, {{0, 0, 2}, {1, 2, 2}});
  ASSERT_TRUE(FaultInjector::global().configure("cpu1:launch:1").ok());
  LaunchPlan Plan;
  Result R = launchOnCpuDevices(*M, Exec, Req, Plan);
  FaultInjector::global().clear();
  EXPECT_EQ(R.code(), ErrorCode::LaunchFailure);
  EXPECT_NE(R.message().find("injected fault: launch on cpu1"),
            std::string::npos)
      << R.message();
  // The next launch (the fault was the first one only) succeeds.
  ASSERT_TRUE(launchOnCpuDevices(*M, Exec, Req, Plan).ok());
}

} // namespace
