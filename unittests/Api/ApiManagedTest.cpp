//===- ApiManagedTest.cpp - cudaMallocManaged through the CUDA API --------===//
//
// Part of Cleave. Managed memory the way programs use it: arrays from
// cudaMallocManaged filled on the host, kernels launched on them, the host
// reading the results after cudaDeviceSynchronize and updating them between
// launches, the same arrays in cudaMemcpy and cudaMemset. On 1 and 3 CPU
// devices (split launches, so replicas go stale for real), and on a null GPU
// whose vecadd runs in its own memory: only the pages the host wrote go to
// the GPU, and the GPU's result is in the host's array after a
// synchronization.
//
//===----------------------------------------------------------------------===//
#if __has_include(<cuda_runtime_api.h>)
#include "../TestInputs.h"
#include "ApiLaunchUtil.h"
#include "ApiTestUtil.h"

#include "../../runtime/lib/devices/DeviceFactories.h"
#include "cleave/rt/NullGpu.h"

#include <cstring>
#include <vector>

#include <unistd.h>

using namespace cleave_api_test;

namespace {

extern "C" void managedVecaddCpu(void **Args, const cleave_cpu_launch *L,
                                 uint64_t First, uint64_t Count, void *) {
  vecaddCpu(Args, L, First, Count);
}

extern "C" void managedFillCpu(void **Args, const cleave_cpu_launch *L,
                               uint64_t First, uint64_t Count, void *) {
  int *Out = *static_cast<int **>(Args[0]);
  int V = *static_cast<int *>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  forEachThread(L, First, Count, [&](int64_t I) {
    if (I < N)
      Out[I] = V;
  });
}

const cleave_cpu_kernel_desc VecaddDesc = {
    "managed_vecadd", managedVecaddCpu, 0, 0, 4, 0};
const cleave_cpu_kernel_desc FillDesc = {
    "managed_fill", managedFillCpu, 0, 0, 3, 0};

void managed_vecadd(const float *a, const float *b, float *c, int n) {
  void *Args[] = {&a, &b, &c, &n};
  launchFromStub(reinterpret_cast<const void *>(&managed_vecadd), Args);
}
void managed_fill(int *out, int v, int n) {
  void *Args[] = {&out, &v, &n};
  launchFromStub(reinterpret_cast<const void *>(&managed_fill), Args);
}

bool registerManagedModule() {
  static bool Ok = [] {
    std::string Bytes = cleave::test::testBundle("api_managed_test");
    if (Bytes.empty())
      return false;
    bool R = registerModule(
        Bytes, {{"managed_vecadd", &VecaddDesc}, {"managed_fill", &FillDesc}},
        {}, 0);
    R &= cleave_register_kernel(reinterpret_cast<const void *>(&managed_vecadd),
                                "managed_vecadd") == 0;
    R &= cleave_register_kernel(reinterpret_cast<const void *>(&managed_fill),
                                "managed_fill") == 0;
    return R;
  }();
  return Ok;
}

int blocks(int N) { return (N + 255) / 256; }

class ApiManaged : public ApiTest {
protected:
  void SetUp() override {
    ASSERT_TRUE(registerManagedModule());
    ApiTest::SetUp();
  }
};

TEST_P(ApiManaged, TheFirstProgramUsersWrite) {
  int V = -1;
  ASSERT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrManagedMemory, 0),
            cudaSuccess);
  EXPECT_EQ(V, 1);
  ASSERT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrConcurrentManagedAccess, 0),
            cudaSuccess);
  EXPECT_EQ(V, 0);

  const int N = 100003;
  float *X = nullptr, *Y = nullptr;
  ASSERT_EQ(cudaMallocManaged(&X, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&Y, N * sizeof(float), cudaMemAttachHost),
            cudaSuccess);
  for (int I = 0; I < N; ++I) {
    X[I] = 1.0f;
    Y[I] = 2.0f;
  }
  LAUNCH(managed_vecadd, dim3(blocks(N)), dim3(256), 0, 0, X, Y, Y, N);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << lastMessage();
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Y[I], 3.0f) << I;

  // An iterative loop: the host reads the result and updates a few
  // elements of the input between launches.
  std::vector<float> RefX(N, 1.0f), RefY(N, 3.0f);
  for (int It = 0; It < 6; ++It) {
    int K = (It * 7919) % N;
    X[K] += float(It + 1);
    RefX[K] += float(It + 1);
    X[N - 1] = float(It);
    RefX[N - 1] = float(It);
    LAUNCH(managed_vecadd, dim3(blocks(N)), dim3(256), 0, 0, X, Y, Y, N);
    ASSERT_EQ(cudaStreamSynchronize(0), cudaSuccess) << lastMessage();
    for (int I = 0; I < N; ++I)
      RefY[I] += RefX[I];
    ASSERT_EQ(Y[K], RefY[K]) << It;
    ASSERT_EQ(Y[N - 1], RefY[N - 1]) << It;
  }
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Y[I], RefY[I]) << I;

  // cudaMemcpy and cudaMemset on managed arrays: the host sees them at
  // once (synchronous calls), and the next launch uses them.
  std::vector<float> Host(N);
  for (int I = 0; I < N; ++I)
    Host[I] = float(I % 97);
  ASSERT_EQ(cudaMemcpy(X, Host.data(), N * sizeof(float), cudaMemcpyDefault),
            cudaSuccess);
  EXPECT_EQ(X[96], 96.0f);
  ASSERT_EQ(cudaMemset(Y, 0, N * sizeof(float)), cudaSuccess);
  EXPECT_EQ(Y[5], 0.0f);
  Y[5] = 10.0f;
  LAUNCH(managed_vecadd, dim3(blocks(N)), dim3(256), 0, 0, X, Y, Y, N);
  std::vector<float> Out(N);
  ASSERT_EQ(
      cudaMemcpy(Out.data(), Y, N * sizeof(float), cudaMemcpyDeviceToHost),
      cudaSuccess);
  for (int I = 0; I < N; ++I) {
    float Want = float(I % 97) + (I == 5 ? 10.0f : 0.0f);
    ASSERT_EQ(Out[I], Want) << I;
    ASSERT_EQ(Y[I], Want) << I; // the synchronous copy synchronized
  }
  ASSERT_EQ(cudaFree(X), cudaSuccess);
  ASSERT_EQ(cudaFree(Y), cudaSuccess);
}

TEST_P(ApiManaged, EventsQueriesAndHints) {
  const int N = 5000;
  int *A = nullptr;
  ASSERT_EQ(cudaMallocManaged(&A, N * sizeof(int)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  cudaEvent_t E;
  ASSERT_EQ(cudaEventCreate(&E), cudaSuccess);
  cudaMemLocation Dev{cudaMemLocationTypeDevice, 0};
  cudaMemLocation Host{cudaMemLocationTypeHost, 0};
  for (int It = 1; It <= 3; ++It) {
    A[It] = -It; // overwritten by the fill
    ASSERT_EQ(
        cudaMemAdvise(A, N * sizeof(int), cudaMemAdviseSetReadMostly, Dev),
        cudaSuccess);
    ASSERT_EQ(cudaMemPrefetchAsync(A, N * sizeof(int), Dev, 0, S), cudaSuccess);
    LAUNCH(managed_fill, dim3(blocks(N)), dim3(256), 0, S, A, It, N);
    ASSERT_EQ(cudaMemPrefetchAsync(A, N * sizeof(int), Host, 0, S),
              cudaSuccess);
    ASSERT_EQ(cudaEventRecord(E, S), cudaSuccess);
    if (It == 1) {
      ASSERT_EQ(cudaEventSynchronize(E), cudaSuccess);
    } else {
      cudaError_t Q;
      while ((Q = It == 2 ? cudaEventQuery(E) : cudaStreamQuery(S)) ==
             cudaErrorNotReady) {
      }
      ASSERT_EQ(Q, cudaSuccess);
    }
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(A[I], It) << It << " " << I;
  }
  // Hints on memory that is not managed, and bad arguments.
  float *D = nullptr;
  ASSERT_EQ(cudaMalloc(&D, 64), cudaSuccess);
  EXPECT_EQ(cudaMemPrefetchAsync(D, 64, Dev, 0, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemAdvise(D, 64, cudaMemAdviseSetReadMostly, Dev),
            cudaErrorInvalidValue);
  cudaMemLocation Other{cudaMemLocationTypeDevice, 1};
  EXPECT_EQ(cudaMemPrefetchAsync(A, 64, Other, 0, 0), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaMemAdvise(A, 64, cudaMemAdviseSetPreferredLocation, Other),
            cudaErrorInvalidDevice);
  EXPECT_EQ(cudaMemAdvise(A, 64, cudaMemAdviseSetReadMostly, Other),
            cudaSuccess)
      << "read-mostly advice takes no location";
  void *P = nullptr;
  EXPECT_EQ(cudaMallocManaged(&P, 0), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMallocManaged(&P, 64, 4), cudaErrorInvalidValue);
  ASSERT_EQ(cudaFree(D), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(E), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(S), cudaSuccess);
  ASSERT_EQ(cudaFree(A), cudaSuccess);
  while (cudaGetLastError() != cudaSuccess) {
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ApiManaged,
                         ::testing::Values("cpu", "cpu,cpu,cpu"));

/// A null GPU whose launches do managed_vecadd's work in its own memory,
/// alone or beside a CPU device.
class ApiManagedGpu : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    ASSERT_TRUE(registerManagedModule());
    cleave::rt::api::Runtime::setDeviceSourceForTesting([this] {
      cleave::rt::NullGpu::Options O;
      O.Trace = true;
      O.OnLaunch = [](const uint32_t G[3], const uint32_t B[3], void **P) {
        const float *A = *static_cast<const float **>(P[0]);
        const float *Bv = *static_cast<const float **>(P[1]);
        float *C = *static_cast<float **>(P[2]);
        int N = *static_cast<int *>(P[3]);
        for (int I = 0; I < N && uint64_t(I) < uint64_t(G[0]) * B[0]; ++I)
          C[I] = A[I] + Bv[I];
      };
      auto G = std::make_unique<cleave::rt::NullGpu>(std::move(O));
      Gpu = G.get();
      std::vector<std::unique_ptr<cleave::rt::Device>> V;
      if (GetParam())
        V.push_back(cleave::rt::createCpuDevice(0, true, 2));
      V.push_back(std::move(G));
      return V;
    });
    // Beside the CPU, every launch whole on the GPU (the null GPU's vecadd
    // runs whole grids only).
    restart("cpu", GetParam() ? "single" : nullptr);
  }
  void TearDown() override {
    cleave::rt::api::Runtime::setDeviceSourceForTesting(nullptr);
    cleave_reset();
    while (cudaGetLastError() != cudaSuccess) {
    }
  }
  /// Bytes the GPU copied in (\p In) or out since the trace was cleared.
  uint64_t copied(bool In) {
    uint64_t N = 0;
    for (const cleave::rt::NullGpu::Op &O : Gpu->ops())
      if (O.What == (In ? cleave::rt::NullGpu::Op::CopyIn
                        : cleave::rt::NullGpu::Op::CopyOut))
        N += O.Bytes;
    return N;
  }
  cleave::rt::NullGpu *Gpu = nullptr;
};

TEST_P(ApiManagedGpu, OnlyDirtyPagesMoveAndResultsAreSeenAfterSync) {
  const uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  const int PerPage = int(Page / sizeof(float));
  const int N = 64 * PerPage;
  float *A = nullptr, *B = nullptr, *C = nullptr;
  ASSERT_EQ(cudaMallocManaged(&A, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&B, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&C, N * sizeof(float)), cudaSuccess);
  for (int I = 0; I < N; ++I) {
    A[I] = float(I);
    B[I] = 1.0f;
  }
  for (int It = 0; It < 4; ++It) {
    // After the first launch, the host writes three pages of A; the
    // launch before the write left A and B on the GPU.
    if (It > 0)
      for (int Pg : {2, 17, 40})
        A[Pg * PerPage + It] += 100.0f;
    Gpu->clearTrace();
    LAUNCH(managed_vecadd, dim3(N / 256), dim3(256), 0, 0, A, B, C, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << lastMessage();
    char Plan[4096];
    ASSERT_EQ(cleave_last_plan(Plan, sizeof(Plan)), 0);
    ASSERT_EQ(std::string(Plan).find("cpu0"), std::string::npos) << Plan;
    // Synchronized, or found done by a query (the GPU's work left
    // running by a direct launch is done, not yet waited for).
    if (It % 2 == 0) {
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << lastMessage();
    } else {
      cudaError_t Q;
      while ((Q = cudaStreamQuery(0)) == cudaErrorNotReady) {
      }
      ASSERT_EQ(Q, cudaSuccess) << lastMessage();
    }
    uint64_t In = copied(true);
    // The GPU's result, in the host's array.
    for (int I = 0; I < N; ++I) {
      float Want = float(I) + 1.0f;
      for (int Pg : {2, 17, 40})
        for (int J = 1; J <= It; ++J)
          if (I == Pg * PerPage + J)
            Want += 100.0f;
      ASSERT_EQ(C[I], Want) << It << " " << I;
    }
    if (It == 0)
      EXPECT_EQ(In, 2 * N * sizeof(float));
    else
      EXPECT_EQ(In, 3 * Page) << It; // the pages the host wrote, only
    EXPECT_EQ(copied(false), N * sizeof(float)) << It; // C, at the sync
  }
  // No host write since the synchronization: the launch may go straight
  // to the GPU, whose work a query then finds done.
  LAUNCH(managed_vecadd, dim3(N / 256), dim3(256), 0, 0, B, B, C, N);
  cudaError_t Q;
  while ((Q = cudaStreamQuery(0)) == cudaErrorNotReady) {
  }
  ASSERT_EQ(Q, cudaSuccess) << lastMessage();
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], 2.0f) << I;
  for (float *P : {A, B, C})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

INSTANTIATE_TEST_SUITE_P(Devices, ApiManagedGpu, ::testing::Bool());

} // namespace

#endif
