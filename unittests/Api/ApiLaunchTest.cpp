//===- ApiLaunchTest.cpp - Launches, symbols and stream order -------------===//
//
// Part of Cleave. A device module (unittests/Inputs/api_launch_test.ll)
// goes through the compiler's bundle writer at build time; its kernels get hand-written CPU variants (the
// CpuKernelABI.h convention) and host stubs written the way the host
// rewriter writes them (pop the call configuration, cudaLaunchKernel). The
// module, kernels and a __constant__ variable are registered through
// cleave_rt.h, and everything else goes through the CUDA-runtime subset:
// launches on 1 and 3 CPU devices checked against plain C++ results,
// launch-configuration errors, dynamic shared memory limits,
// cudaMemcpyToSymbol/FromSymbol, asynchronous launches and the legacy
// default stream's synchronization, events around launches, a failed launch
// reported by the next synchronizing call, and a --single-device module.
//
//===----------------------------------------------------------------------===//
#if __has_include(<cuda_runtime_api.h>)
#include "../TestInputs.h"
#include "ApiLaunchUtil.h"
#include "ApiTestUtil.h"

#include "cleave/rt/Bundle.h"
#include "cleave/rt/Fault.h"
#include "cleave/rt/NullGpu.h"
#include "../../runtime/lib/api/Runtime.h"
#include "../../runtime/lib/devices/DeviceFactories.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

using namespace cleave_api_test;

namespace {

// The CPU variants. ---------------------------------------------------------

extern "C" void apiVecaddCpu(void **Args, const cleave_cpu_launch *L,
                             uint64_t First, uint64_t Count, void *) {
  vecaddCpu(Args, L, First, Count);
}

/// The CPU copy of `factor` (what `__cleave_cpu_var_factor` is in a real
/// CPU object); the engine writes the symbol's value here.
float CpuFactor = 0;

extern "C" void apiScaleCpu(void **Args, const cleave_cpu_launch *L,
                            uint64_t First, uint64_t Count, void *) {
  const float *In = *static_cast<const float **>(Args[0]);
  float *Out = *static_cast<float **>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  forEachThread(L, First, Count, [&](int64_t I) {
    if (I < N)
      Out[I] = In[I] * CpuFactor;
  });
}

/// How long each run of fill's CPU variant sleeps first, so that launches
/// which ought to be ordered would race if they were not.
std::atomic<int> FillSleepMs{0};

/// A gate fill's CPU variant waits at while it is closed: a launch that is
/// certainly still running, without timing anything. A closed gate opens by
/// itself after 20 s (and says so), so a runtime that wrongly blocks the host
/// on a gated launch fails the test instead of hanging it.
struct FillGate {
  std::mutex M;
  std::condition_variable CV;
  bool Closed = false;
  bool TimedOut = false;
  /// Runs that reached the gate since it was last closed.
  int Arrived = 0;

  void close() {
    std::lock_guard<std::mutex> L(M);
    Closed = true;
    TimedOut = false;
    Arrived = 0;
  }
  /// Waits (at most 20 s) until \p N runs reached the gate.
  bool waitArrived(int N) {
    std::unique_lock<std::mutex> L(M);
    return CV.wait_for(L, std::chrono::seconds(20),
                       [&] { return Arrived >= N; });
  }
  void open() {
    {
      std::lock_guard<std::mutex> L(M);
      Closed = false;
    }
    CV.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> L(M);
    ++Arrived;
    CV.notify_all();
    if (!CV.wait_for(L, std::chrono::seconds(20), [&] { return !Closed; })) {
      TimedOut = true;
      Closed = false;
    }
  }
  bool timedOut() {
    std::lock_guard<std::mutex> L(M);
    return TimedOut;
  }
};
FillGate Gate;

extern "C" void apiFillCpu(void **Args, const cleave_cpu_launch *L,
                           uint64_t First, uint64_t Count, void *) {
  Gate.pass();
  if (int Ms = FillSleepMs.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(Ms));
  int *Out = *static_cast<int **>(Args[0]);
  int V = *static_cast<int *>(Args[1]);
  int N = *static_cast<int *>(Args[2]);
  forEachThread(L, First, Count, [&](int64_t I) {
    if (I < N)
      Out[I] = V;
  });
}

const cleave_cpu_kernel_desc VecaddDesc = {"vecadd", apiVecaddCpu, 0, 0, 4, 0};
const cleave_cpu_kernel_desc ScaleDesc = {"scale", apiScaleCpu, 0, 0, 3, 0};
const cleave_cpu_kernel_desc FillDesc = {"fill", apiFillCpu, 0, 0, 3, 0};
const cleave_cpu_kernel_desc FillSingleDesc = {
    "fill_single", apiFillCpu, 0, 0, 3, 0};

// The host side, as the host rewriter writes it. ---------------------------

/// The host shadow of `__constant__ float factor`.
float factor;

void vecadd(const float *a, const float *b, float *c, int n) {
  void *Args[] = {&a, &b, &c, &n};
  launchFromStub(reinterpret_cast<const void *>(&vecadd), Args);
}
void scale(const float *in, float *out, int n) {
  void *Args[] = {&in, &out, &n};
  launchFromStub(reinterpret_cast<const void *>(&scale), Args);
}
void fill(int *out, int v, int n) {
  void *Args[] = {&out, &v, &n};
  launchFromStub(reinterpret_cast<const void *>(&fill), Args);
}
void fill_single(int *out, int v, int n) {
  void *Args[] = {&out, &v, &n};
  launchFromStub(reinterpret_cast<const void *>(&fill_single), Args);
}
/// A stub whose kernel was never registered.
void unregistered(int *out) {
  void *Args[] = {&out};
  launchFromStub(reinterpret_cast<const void *>(&unregistered), Args);
}

/// Registers the test module once per process.
bool registerTestModules() {
  static bool Ok = [] {
    // The same kernels, renamed *_single (unittests/CMakeLists.txt).
    std::string Main = cleave::test::testBundle("api_launch_test");
    std::string Single = cleave::test::testBundle("api_single_test");
    if (Main.empty() || Single.empty())
      return false;
    bool R = registerModule(
        Main,
        {{"vecadd", &VecaddDesc}, {"scale", &ScaleDesc}, {"fill", &FillDesc}},
        {{"factor", &CpuFactor}}, 0);
    R &= registerModule(Single, {{"fill_single", &FillSingleDesc}}, {},
                        CLEAVE_MODULE_SINGLE_DEVICE);
    R &= cleave_register_kernel(reinterpret_cast<const void *>(&vecadd),
                                "vecadd") == 0;
    R &= cleave_register_kernel(reinterpret_cast<const void *>(&scale),
                                "scale") == 0;
    R &= cleave_register_kernel(reinterpret_cast<const void *>(&fill),
                                "fill") == 0;
    R &= cleave_register_kernel(reinterpret_cast<const void *>(&fill_single),
                                "fill_single") == 0;
    R &= cleave_register_variable(&factor, "factor", sizeof(factor)) == 0;
    return R;
  }();
  return Ok;
}

class ApiLaunch : public ApiTest {
protected:
  void SetUp() override {
    ASSERT_TRUE(registerTestModules());
    ApiTest::SetUp();
    FillSleepMs = 0;
  }
  void TearDown() override {
    FillSleepMs = 0;
    ApiTest::TearDown();
  }

  float *upload(const std::vector<float> &V) {
    float *D = nullptr;
    EXPECT_EQ(cudaMalloc(&D, V.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(D, V.data(), V.size() * sizeof(float),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    return D;
  }
  template <class T> std::vector<T> download(const T *D, size_t N) {
    std::vector<T> V(N);
    EXPECT_EQ(cudaMemcpy(V.data(), D, N * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return V;
  }
  std::string lastPlan() {
    char Buf[8192];
    EXPECT_EQ(cleave_last_plan(Buf, sizeof(Buf)), 0);
    return Buf;
  }
};

std::vector<float> randomFloats(size_t N, unsigned Seed) {
  std::vector<float> V(N);
  uint32_t X = Seed * 2654435761u + 1;
  for (float &F : V) {
    X = X * 1664525u + 1013904223u;
    F = float(X >> 8) / float(1 << 24) * 200.0f - 100.0f;
  }
  return V;
}

TEST_P(ApiLaunch, VecaddMatchesReference) {
  for (int N : {1, 1000, 100003}) {
    std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
    float *DA = upload(A), *DB = upload(B), *DC = nullptr;
    ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
    LAUNCH(vecadd, dim3((N + 127) / 128), dim3(128), 0, 0, DA, DB, DC, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess) << lastMessage();
    std::vector<float> C = download(DC, N);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(C[I], A[I] + B[I]) << "N=" << N << " i=" << I;
    std::string Plan = lastPlan();
    EXPECT_NE(Plan.find("vecadd"), std::string::npos) << Plan;
    // A second launch over resident data, then pointers inside the
    // allocations (the second half of the vectors).
    if (N / 2)
      LAUNCH(vecadd, dim3((N / 2 + 63) / 64), dim3(64), 0, 0, DA + (N - N / 2),
             DC + (N - N / 2), DC + (N - N / 2), N / 2);
    C = download(DC, N);
    for (int I = 0; I < N; ++I) {
      float Want = A[I] + B[I];
      if (I >= N - N / 2)
        Want = A[I] + Want;
      ASSERT_EQ(C[I], Want) << "N=" << N << " i=" << I;
    }
    EXPECT_EQ(cudaFree(DA), cudaSuccess);
    EXPECT_EQ(cudaFree(DB), cudaSuccess);
    EXPECT_EQ(cudaFree(DC), cudaSuccess);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_P(ApiLaunch, PoliciesAndCleaveLaunch) {
  for (const char *Policy : {"even", "proportional", "single"}) {
    restart(GetParam(), Policy);
    const int N = 5000;
    std::vector<float> A = randomFloats(N, 3), B = randomFloats(N, 4);
    float *DA = upload(A), *DB = upload(B), *DC;
    ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
    // By device name through the C API, on a created stream.
    cudaStream_t S;
    ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
    int Nv = N;
    void *Args[] = {&DA, &DB, &DC, &Nv};
    const uint32_t G[3] = {(N + 255) / 256, 1, 1}, Bk[3] = {256, 1, 1};
    ASSERT_EQ(cleave_launch(nullptr, "vecadd", G, Bk, Args, 0, S), 0)
        << lastMessage();
    ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
    std::vector<float> C(N);
    ASSERT_EQ(cudaMemcpyAsync(C.data(), DC, N * sizeof(float),
                              cudaMemcpyDeviceToHost, S),
              cudaSuccess);
    for (int I = 0; I < N; ++I)
      ASSERT_EQ(C[I], A[I] + B[I]) << Policy << " i=" << I;
    std::string Plan = lastPlan();
    if (std::string(GetParam()) == "cpu,cpu,cpu" &&
        std::string(Policy) == "even") {
      EXPECT_NE(Plan.find("cpu1"), std::string::npos) << Plan;
      EXPECT_NE(Plan.find("cpu2"), std::string::npos) << Plan;
    }
    if (std::string(Policy) == "single") {
      EXPECT_EQ(Plan.find("cpu1"), std::string::npos) << Plan;
    }
    // By host stub through the C API.
    ASSERT_EQ(cleave_launch(reinterpret_cast<const void *>(&vecadd), nullptr, G,
                            Bk, Args, 0, nullptr),
              0);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(cleave_launch(nullptr, "no_such_kernel", G, Bk, Args, 0, S),
              cudaErrorInvalidDeviceFunction);
    EXPECT_EQ(cleave_launch(nullptr, nullptr, G, Bk, Args, 0, S),
              cudaErrorInvalidValue);
    EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
    EXPECT_EQ(cudaFree(DA), cudaSuccess);
    EXPECT_EQ(cudaFree(DB), cudaSuccess);
    EXPECT_EQ(cudaFree(DC), cudaSuccess);
    (void)cudaGetLastError();
  }
}

TEST_P(ApiLaunch, ArgumentsAreCopiedAtTheLaunch) {
  // The stub's parameters die when it returns and the launch runs later on
  // the stream's worker: the values must have been copied.
  const int N = 4096;
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  // Queueing does not wait for the launches already running: all three are
  // queued while the first is held at the gate.
  Gate.close();
  for (int V = 1; V <= 3; ++V)
    LAUNCH(fill, dim3(N / 128), dim3(128), 0, S, D, V, N);
  EXPECT_EQ(cudaStreamQuery(S), cudaErrorNotReady);
  EXPECT_FALSE(Gate.timedOut()) << "a launch blocked the host";
  Gate.open();
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  EXPECT_EQ(download(D, N), std::vector<int>(N, 3));
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
}

TEST_P(ApiLaunch, ConfigurationErrors) {
  const int N = 256;
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  // Each error is returned by cudaLaunchKernel (the stub drops it, as CUDA's
  // do) and so by cudaGetLastError; none is sticky.
  LAUNCH(fill, dim3(0), dim3(128), 0, 0, D, 1, N);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  LAUNCH(fill, dim3(1), dim3(2048), 0, 0, D, 1, N);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  LAUNCH(fill, dim3(1), dim3(8, 2, 65), 0, 0, D, 1, N);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  LAUNCH(fill, dim3(1, 70000), dim3(32), 0, 0, D, 1, N);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  LAUNCH(unregistered, dim3(1), dim3(32), 0, 0, D);
  EXPECT_NE(lastMessage().find("registered"), std::string::npos);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDeviceFunction);
  LAUNCH(fill, dim3(1), dim3(32), 0,
         reinterpret_cast<cudaStream_t>(uintptr_t(0xdead0)), D, 1, N);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaLaunchKernel(reinterpret_cast<const void *>(&fill), dim3(1),
                             dim3(32), nullptr, 0, 0),
            cudaErrorInvalidValue);
  // A stub called without <<<>>>: nothing to pop.
  fill(D, 1, N);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);

  // Dynamic shared memory: 48 KiB by default, more after opting in.
  LAUNCH(fill, dim3(2), dim3(128), 64 * 1024, 0, D, 4, N);
  EXPECT_NE(lastMessage().find("cudaFuncAttributeMaxDynamicSharedMemorySize"),
            std::string::npos)
      << lastMessage();
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  ASSERT_EQ(cudaFuncSetAttribute(reinterpret_cast<const void *>(&fill),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 64 * 1024),
            cudaSuccess);
  LAUNCH(fill, dim3(2), dim3(128), 64 * 1024, 0, D, 5, N);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << lastMessage();
  EXPECT_EQ(download(D, N), std::vector<int>(N, 5));
  EXPECT_EQ(cudaFuncSetAttribute(reinterpret_cast<const void *>(&fill),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 300 * 1024),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaFuncSetAttribute(reinterpret_cast<const void *>(&fill),
                                 cudaFuncAttributePreferredSharedMemoryCarveout,
                                 50),
            cudaSuccess);
  EXPECT_EQ(cudaFuncSetAttribute(reinterpret_cast<const void *>(&fill),
                                 cudaFuncAttributeRequiredClusterWidth, 2),
            cudaErrorNotSupported);
  EXPECT_EQ(cudaFuncSetAttribute(reinterpret_cast<const void *>(&unregistered),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 1024),
            cudaErrorInvalidDeviceFunction);
  // Still usable.
  LAUNCH(fill, dim3(2), dim3(128), 0, 0, D, 6, N);
  EXPECT_EQ(download(D, N), std::vector<int>(N, 6));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiLaunch, Symbols) {
  const int N = 3000;
  std::vector<float> In = randomFloats(N, 7);
  float *DIn = upload(In), *DOut;
  ASSERT_EQ(cudaMalloc(&DOut, N * sizeof(float)), cudaSuccess);
  float Three = 3.0f;
  ASSERT_EQ(cudaMemcpyToSymbol(&factor, &Three, sizeof(float)), cudaSuccess)
      << lastMessage();
  LAUNCH(scale, dim3((N + 127) / 128), dim3(128), 0, 0, DIn, DOut, N);
  std::vector<float> Out = download(DOut, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], In[I] * 3.0f) << I;
  float Back = 0;
  ASSERT_EQ(cudaMemcpyFromSymbol(&Back, &factor, sizeof(float)), cudaSuccess);
  EXPECT_EQ(Back, 3.0f);

  // From device memory (device to device), asynchronously on a stream.
  float *DF;
  ASSERT_EQ(cudaMalloc(&DF, sizeof(float)), cudaSuccess);
  float Five = 5.0f;
  ASSERT_EQ(cudaMemcpy(DF, &Five, sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaMemcpyToSymbolAsync(&factor, DF, sizeof(float), 0,
                                    cudaMemcpyDeviceToDevice, S),
            cudaSuccess);
  LAUNCH(scale, dim3((N + 127) / 128), dim3(128), 0, S, DIn, DOut, N);
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  Out = download(DOut, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], In[I] * 5.0f) << I;
  // Back into device memory.
  float *DF2;
  ASSERT_EQ(cudaMalloc(&DF2, sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpyFromSymbolAsync(DF2, &factor, sizeof(float), 0,
                                      cudaMemcpyDeviceToDevice, S),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  EXPECT_EQ(download(DF2, 1), std::vector<float>{5.0f});

  // Errors.
  float Dummy = 0;
  EXPECT_EQ(cudaMemcpyToSymbol(&factor, &Three, sizeof(float), 4),
            cudaErrorInvalidValue); // past the end
  EXPECT_EQ(cudaMemcpyToSymbol(&factor, &Three, 8), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyToSymbol(&Dummy, &Three, sizeof(float)),
            cudaErrorInvalidSymbol);
  EXPECT_EQ(cudaMemcpyToSymbol(&factor, &Three, sizeof(float), 0,
                               cudaMemcpyDeviceToHost),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaMemcpyFromSymbol(&Dummy, &factor, sizeof(float), 0,
                                 cudaMemcpyHostToDevice),
            cudaErrorInvalidMemcpyDirection);
  EXPECT_EQ(cudaMemcpyToSymbol(&factor, &Three, sizeof(float), 0,
                               cudaMemcpyDeviceToDevice),
            cudaErrorInvalidValue); // a host pointer
  // The value is unchanged by the refused calls.
  ASSERT_EQ(cudaMemcpyFromSymbol(&Back, &factor, sizeof(float)), cudaSuccess);
  EXPECT_EQ(Back, 5.0f);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  for (float *P : {DIn, DOut, DF, DF2})
    EXPECT_EQ(cudaFree(P), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiLaunch, LaunchesAreAsynchronousAndStreamOrdered) {
  const int N = 1024;
  int *D, *E;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&E, N * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(D, 0, N * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMemset(E, 0, N * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // A blocking stream: the launch returns while the kernel is held, the
  // stream is busy, and a cudaMemcpy on the legacy default stream waits for
  // it (it reads what the launch wrote, although it was issued before the
  // gate opened).
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  Gate.close();
  LAUNCH(fill, dim3(N / 256), dim3(256), 0, S, D, 42, N);
  EXPECT_EQ(cudaStreamQuery(S), cudaErrorNotReady);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess); // NotReady is not an error
  std::atomic<bool> Issued{false};
  std::vector<int> Back;
  std::thread Reader([&] {
    Issued = true;
    Back = download(D, N);
  });
  while (!Issued)
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Gate.open();
  Reader.join();
  EXPECT_FALSE(Gate.timedOut());
  EXPECT_EQ(Back, std::vector<int>(N, 42));
  EXPECT_EQ(cudaStreamQuery(S), cudaSuccess);

  // A non-blocking stream: the legacy stream does not wait for it (the copy
  // below returns while the kernel on NB is still held at the gate).
  cudaStream_t NB;
  ASSERT_EQ(cudaStreamCreateWithFlags(&NB, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t Start, Stop;
  ASSERT_EQ(cudaEventCreate(&Start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&Stop), cudaSuccess);
  Gate.close();
  ASSERT_EQ(cudaEventRecord(Start, NB), cudaSuccess);
  LAUNCH(fill, dim3(N / 256), dim3(256), 0, NB, E, 7, N);
  ASSERT_EQ(cudaEventRecord(Stop, NB), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(Stop), cudaErrorNotReady);
  float Ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&Ms, Start, Stop), cudaErrorNotReady);
  Back = download(D, N); // legacy stream, other buffer
  EXPECT_FALSE(Gate.timedOut()) << "the legacy stream waited for NB";
  ASSERT_EQ(cudaEventSynchronize(Start), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  Gate.open();
  ASSERT_EQ(cudaEventSynchronize(Stop), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&Ms, Start, Stop), cudaSuccess);
  EXPECT_GE(Ms, 25.0f); // Stop came after the gate, 30 ms after Start
  EXPECT_EQ(download(E, N), std::vector<int>(N, 7));

  // The legacy stream's own work: a launch on stream 0 waits for a blocking
  // stream's earlier launch (fill 1, then fill 2 over it).
  FillSleepMs = 200;
  LAUNCH(fill, dim3(N / 256), dim3(256), 0, S, D, 1, N);
  LAUNCH(fill, dim3(N / 512), dim3(256), 0, 0, D, 2, N / 2);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Back = download(D, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Back[I], I < N / 2 ? 2 : 1) << I;

  EXPECT_EQ(cudaEventDestroy(Start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(Stop), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(NB), cudaSuccess);
  EXPECT_EQ(cudaFree(D), cudaSuccess);
  EXPECT_EQ(cudaFree(E), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_P(ApiLaunch, StreamDestroyedWithWorkPending) {
  const int N = 512;
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  FillSleepMs = 100;
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  LAUNCH(fill, dim3(N / 128), dim3(128), 0, S, D, 9, N);
  // Returns at once; the work still completes.
  ASSERT_EQ(cudaStreamDestroy(S), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(download(D, N), std::vector<int>(N, 9));
  EXPECT_EQ(cudaFree(D), cudaSuccess);
}

TEST_P(ApiLaunch, FailedLaunchIsReportedByTheNextSynchronizingCall) {
  const int N = 512;
  if (std::string(GetParam()) != "cpu") {
    // With other devices left, the engine re-runs the failed range there:
    // no error reaches the program, the result is whole.
    restart(GetParam(), "even");
    int *D;
    ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
    ASSERT_TRUE(
        cleave::rt::FaultInjector::global().configure("cpu1:launch:1").ok());
    ::testing::internal::CaptureStderr();
    LAUNCH(fill, dim3(N / 128), dim3(128), 0, 0, D, 3, N);
    cudaError_t Sync = cudaDeviceSynchronize();
    std::string Err = ::testing::internal::GetCapturedStderr();
    (void)cleave::rt::FaultInjector::global().configure("");
    EXPECT_EQ(Sync, cudaSuccess) << Err;
    EXPECT_NE(Err.find("cpu1"), std::string::npos) << Err;
    EXPECT_EQ(download(D, N), std::vector<int>(N, 3));
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaFree(D), cudaSuccess);
    return;
  }
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  // A launch held at the gate keeps the stream busy, so the failing launch
  // queued behind it has certainly not run when the error is peeked at (a
  // finished launch's error may be reported by any call, as in CUDA).
  Gate.close();
  LAUNCH(fill, dim3(N / 128), dim3(128), 0, 0, D, 2, N);
  ASSERT_TRUE(Gate.waitArrived(1));
  ASSERT_TRUE(
      cleave::rt::FaultInjector::global().configure("cpu0:launch:1").ok());
  ::testing::internal::CaptureStderr();
  LAUNCH(fill, dim3(N / 128), dim3(128), 0, 0, D, 3, N);
  // Queued fine: the failure comes later.
  cudaError_t AtLaunch = cudaPeekAtLastError();
  Gate.open();
  cudaError_t Sync = cudaDeviceSynchronize();
  std::string Err = ::testing::internal::GetCapturedStderr();
  (void)cleave::rt::FaultInjector::global().configure("");
  EXPECT_EQ(AtLaunch, cudaSuccess);
  EXPECT_EQ(Sync, cudaErrorLaunchFailure) << Err;
  EXPECT_NE(Err.find("kernel fill"), std::string::npos) << Err;
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess); // reported once
  // The runtime still works.
  LAUNCH(fill, dim3(N / 128), dim3(128), 0, 0, D, 4, N);
  EXPECT_EQ(download(D, N), std::vector<int>(N, 4));
  EXPECT_EQ(cudaFree(D), cudaSuccess);
}

TEST_P(ApiLaunch, TheModelPolicyIsTheDefault) {
  // Without CLEAVE_PARTITION the model policy decides (it says so with
  // CLEAVE_LOG=plan); over cpu,cpu,cpu it keeps the launch on cpu0, the
  // devices sharing one executor.
  cleave::rt::Options O = options(GetParam());
  O.Log.Plan = true;
  restart(O);
  const int N = 4096;
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  ::testing::internal::CaptureStderr();
  LAUNCH(fill, dim3(N / 128), dim3(128), 0, 0, D, 5, N);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::string Err = ::testing::internal::GetCapturedStderr();
  // One device: nothing to decide, and the model is not consulted.
  bool OneDevice = std::string(GetParam()).find(',') == std::string::npos;
  EXPECT_EQ(Err.find("cleave: model policy") == std::string::npos, OneDevice)
      << Err;
  EXPECT_EQ(download(D, N), std::vector<int>(N, 5));
  std::string Plan = lastPlan();
  EXPECT_NE(Plan.find("cpu0"), std::string::npos) << Plan;
  EXPECT_EQ(Plan.find("cpu1"), std::string::npos) << Plan;
  EXPECT_EQ(cudaFree(D), cudaSuccess);
}

TEST_P(ApiLaunch, SingleDeviceModuleRunsWhole) {
  restart(GetParam()); // no CLEAVE_PARTITION: the module's flag holds
  const int N = 4096;
  int *D;
  ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
  LAUNCH(fill_single, dim3(N / 64), dim3(64), 0, 0, D, 11, N);
  EXPECT_EQ(download(D, N), std::vector<int>(N, 11));
  std::string Plan = lastPlan();
  EXPECT_EQ(Plan.find("cpu1"), std::string::npos) << Plan;
  EXPECT_EQ(Plan.find("cpu2"), std::string::npos) << Plan;
  // CLEAVE_PARTITION wins over the module's flag.
  if (std::string(GetParam()) == "cpu,cpu,cpu") {
    restart(GetParam(), "even");
    ASSERT_EQ(cudaMalloc(&D, N * sizeof(int)), cudaSuccess);
    LAUNCH(fill_single, dim3(N / 64), dim3(64), 0, 0, D, 12, N);
    EXPECT_EQ(download(D, N), std::vector<int>(N, 12));
    Plan = lastPlan();
    EXPECT_NE(Plan.find("cpu2"), std::string::npos) << Plan;
  }
  EXPECT_EQ(cudaFree(D), cudaSuccess);
}

TEST_P(ApiLaunch, KernelAttributesAndOccupancy) {
  const void *Fill = reinterpret_cast<const void *>(&fill);
  // Without a GPU: the bundle's static shared memory, the virtual device's
  // limits, registers unknown.
  cudaFuncAttributes A;
  ASSERT_EQ(cudaFuncGetAttributes(&A, Fill), cudaSuccess) << lastMessage();
  EXPECT_EQ(A.sharedSizeBytes, 0u);
  EXPECT_EQ(A.maxThreadsPerBlock, 1024);
  EXPECT_EQ(A.numRegs, 0);
  EXPECT_EQ(A.ptxVersion, 90);
  EXPECT_EQ(A.binaryVersion, 90);
  EXPECT_EQ(A.maxDynamicSharedSizeBytes, 48 * 1024);
  ASSERT_EQ(cudaFuncSetAttribute(
                Fill, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024),
            cudaSuccess);
  ASSERT_EQ(cudaFuncGetAttributes(&A, Fill), cudaSuccess);
  EXPECT_EQ(A.maxDynamicSharedSizeBytes, 100 * 1024);
  EXPECT_EQ(cudaFuncGetAttributes(nullptr, Fill), cudaErrorInvalidValue);
  EXPECT_EQ(
      cudaFuncGetAttributes(&A, reinterpret_cast<const void *>(&unregistered)),
      cudaErrorInvalidDeviceFunction);

  // Resident blocks per SM from threads (2048 per SM), blocks (32 per SM)
  // and shared memory (228 KiB per SM, 1 KiB reserved per block).
  auto Occ = [&](int Block, size_t Dyn) {
    int N = -1;
    EXPECT_EQ(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&N, Fill, Block, Dyn),
        cudaSuccess)
        << lastMessage();
    return N;
  };
  EXPECT_EQ(Occ(256, 0), 8);
  EXPECT_EQ(Occ(1024, 0), 2);
  EXPECT_EQ(Occ(100, 0), 16);
  EXPECT_EQ(Occ(32, 0), 32);
  EXPECT_EQ(Occ(128, 100 * 1024), 2);
  EXPECT_EQ(Occ(128, 300 * 1024), 0); // more than a block may have
  EXPECT_EQ(Occ(2048, 0), 0);         // more threads than a block may have
  int N;
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&N, Fill, 0, 0),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&N, Fill,
                                                                   128, 0, 8),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &N, reinterpret_cast<const void *>(&unregistered), 128, 0),
            cudaErrorInvalidDeviceFunction);
  // The C++ template of cuda_runtime.h over these calls: the largest block
  // that fills an SM, and enough blocks to fill every SM.
  int MinGrid = 0, BlockSize = 0;
  ASSERT_EQ(cudaOccupancyMaxPotentialBlockSize(&MinGrid, &BlockSize, Fill),
            cudaSuccess);
  cudaDeviceProp P;
  ASSERT_EQ(cudaGetDeviceProperties(&P, 0), cudaSuccess);
  EXPECT_EQ(BlockSize, 1024);
  EXPECT_EQ(MinGrid, 2 * P.multiProcessorCount);

  // A cache preference is checked and accepted (a hint, as in CUDA).
  EXPECT_EQ(cudaFuncSetCacheConfig(Fill, cudaFuncCachePreferShared),
            cudaSuccess);
  EXPECT_EQ(cudaFuncSetCacheConfig(Fill, static_cast<cudaFuncCache>(9)),
            cudaErrorInvalidValue);
  EXPECT_EQ(
      cudaFuncSetCacheConfig(reinterpret_cast<const void *>(&unregistered),
                             cudaFuncCachePreferL1),
      cudaErrorInvalidDeviceFunction);
  (void)cudaGetLastError();
}

INSTANTIATE_TEST_SUITE_P(Devices, ApiLaunch,
                         ::testing::Values("cpu", "cpu,cpu,cpu"));

/// What the null GPU of ApiDirect saw of its launches.
struct GpuLaunches {
  std::mutex Mutex;
  std::vector<std::vector<void *>> Pointers;
};
GpuLaunches &gpuLaunches() {
  static GpuLaunches L;
  return L;
}
/// Whether ApiDirect's null GPU does vecadd's work at each launch (a test
/// that launches other kernels turns it off).
std::atomic<bool> &gpuRunsVecadd() {
  static std::atomic<bool> On{true};
  return On;
}

/// One GPU and nothing else: a null GPU that does vecadd's work in its own
/// memory at each launch (the only kernel these tests launch), one block
/// per millisecond in its event timings. Launches on an idle stream go to
/// it directly (docs/runtime.md, "Direct launches").
class ApiDirect : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(registerTestModules());
    {
      std::lock_guard<std::mutex> Lock(gpuLaunches().Mutex);
      gpuLaunches().Pointers.clear();
    }
    cleave::rt::api::Runtime::setDeviceSourceForTesting([this] {
      cleave::rt::NullGpu::Options O;
      O.Trace = true;
      O.OnLaunch = [](const uint32_t G[3], const uint32_t B[3], void **P) {
        if (!gpuRunsVecadd())
          return;
        const float *A = *static_cast<const float **>(P[0]);
        const float *Bv = *static_cast<const float **>(P[1]);
        float *C = *static_cast<float **>(P[2]);
        int N = *static_cast<int *>(P[3]);
        for (int I = 0; I < N && uint64_t(I) < uint64_t(G[0]) * B[0]; ++I)
          C[I] = A[I] + Bv[I];
        std::lock_guard<std::mutex> Lock(gpuLaunches().Mutex);
        gpuLaunches().Pointers.push_back(
            {const_cast<float *>(A), const_cast<float *>(Bv), C});
      };
      O.BlocksPerMs = GpuBlocksPerMs;
      O.QueriesBeforeDone = QueriesBeforeDone;
      auto G = std::make_unique<cleave::rt::NullGpu>(std::move(O));
      Gpu = G.get();
      std::vector<std::unique_ptr<cleave::rt::Device>> V;
      if (WithCpu)
        V.push_back(cleave::rt::createCpuDevice(0, true, 2));
      V.push_back(std::move(G));
      return V;
    });
    restart("cpu", Partition); // the devices: the device source wins
  }
  void TearDown() override {
    gpuRunsVecadd() = true;
    cleave::rt::api::Runtime::setDeviceSourceForTesting(nullptr);
    cleave_reset();
    while (cudaGetLastError() != cudaSuccess) {
    }
  }
  std::string lastPlan() {
    char Buf[8192];
    EXPECT_EQ(cleave_last_plan(Buf, sizeof(Buf)), 0);
    return Buf;
  }
  float *upload(const std::vector<float> &V) {
    float *D = nullptr;
    EXPECT_EQ(cudaMalloc(&D, V.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(D, V.data(), V.size() * sizeof(float),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    return D;
  }
  std::vector<float> download(const float *D, size_t N) {
    std::vector<float> V(N);
    EXPECT_EQ(cudaMemcpy(V.data(), D, N * sizeof(float),
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    return V;
  }
  cleave::rt::NullGpu *Gpu = nullptr;
  /// Set by a derived fixture's constructor: a CPU device before the GPU,
  /// the GPU's rate, CLEAVE_PARTITION.
  bool WithCpu = false;
  double GpuBlocksPerMs = 1;
  unsigned QueriesBeforeDone = 0;
  const char *Partition = nullptr;
};

TEST_F(ApiDirect, LaunchesGoToTheGpuWithItsAddresses) {
  const int N = 1000;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA = upload(A), *DB = upload(B), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  Gpu->clearTrace();
  LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
  {
    // The kernel got the GPU's addresses, not the program's pointers.
    std::lock_guard<std::mutex> Lock(gpuLaunches().Mutex);
    ASSERT_EQ(gpuLaunches().Pointers.size(), 1u);
    for (void *P : gpuLaunches().Pointers[0])
      EXPECT_TRUE(P != DA && P != DB && P != DC);
  }
  std::vector<float> C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << I;
  // The read-back waited for the GPU's work first.
  std::vector<std::string> T = Gpu->trace();
  auto Launch = std::find(T.begin(), T.end(), "launch");
  ASSERT_NE(Launch, T.end());
  EXPECT_NE(std::find(Launch, T.end(), "sync"), T.end());

  // The next launch writes c again on the GPU: the read-back gets the new
  // sums.
  std::vector<float> A2 = randomFloats(N, 3);
  ASSERT_EQ(cudaMemcpy(DA, A2.data(), N * sizeof(float),
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
  EXPECT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
  C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A2[I] + B[I]) << I;

  // A copy to a symbol from device memory brings the host copy of c up to
  // date; the launch after it writes c on the GPU alone, so the next such
  // copy must fetch c again.
  float F = 0;
  ASSERT_EQ(cudaMemcpyToSymbol(&factor, DC, sizeof(float), 0,
                               cudaMemcpyDeviceToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyFromSymbol(&F, &factor, sizeof(float)), cudaSuccess);
  EXPECT_EQ(F, A2[0] + B[0]);
  LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DA, DC, N);
  EXPECT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
  ASSERT_EQ(cudaMemcpyToSymbol(&factor, DC, sizeof(float), 0,
                               cudaMemcpyDeviceToDevice),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpyFromSymbol(&F, &factor, sizeof(float)), cudaSuccess);
  EXPECT_EQ(F, A2[0] + A2[0]);
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

/// The GPU beside a CPU device, fast enough that the model gives vecadd's
/// resident data to the GPU alone.
class ApiDirectBesideCpu : public ApiDirect {
protected:
  ApiDirectBesideCpu() {
    WithCpu = true;
    GpuBlocksPerMs = 1e6;
  }
};

/// Whether each launch of \p Launches went straight to the GPU.
TEST_F(ApiDirectBesideCpu, AKernelGoesDirectOnceTheModelLeftTheCpuOut) {
  // No launch is too short to split: the gate follows the engine's record.
  cleave::rt::api::Runtime *RT = nullptr;
  ASSERT_TRUE(cleave::rt::api::Runtime::get(RT).ok());
  RT->engine().setMinSplitMs(0);
  const int N = 1000;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA = upload(A), *DB = upload(B), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  // Which launches went straight to the GPU.
  std::vector<bool> Direct;
  for (int L = 0; L < 200; ++L) {
    LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::string P = lastPlan();
    Direct.push_back(P.find(", direct") != std::string::npos);
    // An engine launch of this kernel that runs on the CPU ends the
    // streak: the next one goes to the engine again.
    if (!Direct.back() && P.find("cpu0") != std::string::npos &&
        L + 1 < 200) {
      LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      ++L;
      Direct.push_back(lastPlan().find(", direct") != std::string::npos);
      EXPECT_FALSE(Direct.back()) << lastPlan();
    }
  }
  // The first launch goes straight to the GPU (a search would cost it
  // more than it could gain), the next ones to the engine, which decides.
  EXPECT_TRUE(Direct[0]);
  for (unsigned L = 1; L <= cleave::rt::api::Runtime::DirectStreak; ++L)
    EXPECT_FALSE(Direct[L]) << L;
  size_t Count = std::count(Direct.begin(), Direct.end(), true);
  EXPECT_GT(Count, 150u);
  // Never more than DirectRecheck direct launches in a row: the engine
  // sees the kernel again, and may find a CPU share that pays.
  size_t Run = 0;
  for (bool D : Direct) {
    Run = D ? Run + 1 : 0;
    EXPECT_LE(Run, cleave::rt::api::Runtime::DirectRecheck);
  }
  std::vector<float> C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << I;
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

TEST_F(ApiDirectBesideCpu, ALaunchTimedTooShortToSplitGoesDirect) {
  // The null GPU runs 4 blocks in 4 ns: below the 0.1 ms under which the
  // model runs a launch whole on its best device unsearched. Every launch
  // goes straight to the GPU, the engine never sees the kernel, and one
  // launch in DirectRecheck + 1 is timed (two event records).
  const int N = 1000, Launches = 200;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA = upload(A), *DB = upload(B), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  Gpu->clearTrace();
  for (int L = 0; L < Launches; ++L) {
    LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::string P = lastPlan();
    ASSERT_NE(P.find(", direct"), std::string::npos) << L << ": " << P;
    // The plan says why.
    EXPECT_NE(P.find(L == 0 ? "direct (the kernel's first launch)"
                            : "shorter than the model's shortest split"),
              std::string::npos)
        << L << ": " << P;
  }
  std::vector<std::string> T = Gpu->trace();
  EXPECT_EQ(std::count(T.begin(), T.end(), "launch"), Launches);
  int Timed = 1 + (Launches - 1) /
                      int(cleave::rt::api::Runtime::DirectRecheck + 1);
  EXPECT_EQ(std::count(T.begin(), T.end(), "record"), 2 * Timed);
  std::vector<float> C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << I;
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

/// The same, with events the GPU reaches only at the fourth query.
class ApiDirectBesideCpuBusy : public ApiDirectBesideCpu {
protected:
  ApiDirectBesideCpuBusy() { QueriesBeforeDone = 3; }
};

TEST_F(ApiDirectBesideCpuBusy, LaunchesGoDirectUntilTheFirstTimingIsRead) {
  // The first launch's timing is read at the fifth launch: the launches
  // before go direct as the first did, and so do those after (too short).
  const int N = 1000;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA = upload(A), *DB = upload(B), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  for (int L = 0; L < 10; ++L) {
    LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DB, DC, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::string P = lastPlan();
    EXPECT_NE(P.find(", direct"), std::string::npos) << L << ": " << P;
    if (L >= 1 && L <= 3)
      EXPECT_NE(P.find("GPU time not known yet"), std::string::npos) << P;
  }
  std::vector<float> C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << I;
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

/// The GPU beside a CPU device at 1000 blocks per millisecond.
class ApiDirectBesideCpuTimed : public ApiDirectBesideCpu {
protected:
  ApiDirectBesideCpuTimed() { GpuBlocksPerMs = 1e3; }
};

TEST_F(ApiDirectBesideCpuTimed, ALongerLaunchThanTheTimedOneGoesToTheEngine) {
  const int N = 1000;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA = upload(A), *DB = upload(B), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  // 4 blocks: 4 us on the GPU, timed; then 2 blocks (no longer than the
  // timed launch) go direct, and 400 (0.4 ms in proportion) to the engine,
  // which weighs the CPU.
  for (unsigned Blocks : {4u, 2u, 400u}) {
    LAUNCH(vecadd, dim3(Blocks), dim3(256), 0, 0, DA, DB, DC, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    bool Direct = lastPlan().find(", direct") != std::string::npos;
    EXPECT_EQ(Direct, Blocks != 400u) << Blocks << ": " << lastPlan();
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + B[I]) << I;
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

/// The same devices, each launch split evenly over them.
class ApiDirectBesideCpuEven : public ApiDirectBesideCpu {
protected:
  ApiDirectBesideCpuEven() { Partition = "even"; }
};

TEST_F(ApiDirectBesideCpuEven, LaunchesTheEngineSplitsNeverGoDirect) {
  const int N = 4096;
  std::vector<float> A = randomFloats(N, 1), B = randomFloats(N, 2);
  float *DA = upload(A), *DB = upload(B), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  for (int L = 0; L < 10; ++L) {
    LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, 0, DA, DB, DC, N);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    std::string P = lastPlan();
    if (L == 0) { // the kernel's first launch
      EXPECT_NE(P.find(", direct"), std::string::npos) << P;
      continue;
    }
    EXPECT_EQ(P.find(", direct"), std::string::npos) << P;
    EXPECT_NE(P.find("cpu0"), std::string::npos) << P;
  }
  // (The null GPU's vecadd runs whole grids only: the split's results are
  // not checked here; ApiLaunchTest's even splits on CPU devices are.)
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

TEST_F(ApiDirect, EventsTimeTheGpusWork) {
  const int N = 1000;
  std::vector<float> A = randomFloats(N, 1);
  float *DA = upload(A), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  cudaEvent_t Start, Stop;
  ASSERT_EQ(cudaEventCreate(&Start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&Stop), cudaSuccess);
  Gpu->clearTrace();
  ASSERT_EQ(cudaEventRecord(Start), cudaSuccess);
  LAUNCH(vecadd, dim3(4), dim3(256), 0, 0, DA, DA, DC, N);
  ASSERT_EQ(cudaEventRecord(Stop), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(Stop), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(Stop), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(0), cudaSuccess);
  float Ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&Ms, Start, Stop), cudaSuccess);
  // The GPU's time (4 blocks at one per millisecond), not the host's.
  EXPECT_FLOAT_EQ(Ms, 4.0f);
  std::vector<std::string> T = Gpu->trace();
  EXPECT_EQ(std::count(T.begin(), T.end(), "record"), 3)
      << "the two events' and the launch's deferral";
  ASSERT_EQ(cudaEventDestroy(Start), cudaSuccess);
  ASSERT_EQ(cudaEventDestroy(Stop), cudaSuccess);
  for (float *P : {DA, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

/// Whether \p S is one of \p G's internal streams (not a program stream's).
bool internalStream(cleave::rt::NullGpu &G, cleave::rt::StreamHandle S) {
  for (unsigned I = 0; I < G.numInternalStreams(); ++I)
    if (G.internalStream(I) == S)
      return true;
  return false;
}

TEST_F(ApiDirect, StreamsQueueTheirCopiesAndLaunchesOnGpuStreamsOfTheirOwn) {
  // A program's own pipeline: pinned host arrays, two streams, each copying
  // its half in, adding it and copying it back. As under CUDA, each stream's
  // work goes to a GPU stream of its own and the host never waits until
  // the program synchronizes.
  using Op = cleave::rt::NullGpu::Op;
  const int N = 2048, Half = N / 2;
  float *A = nullptr, *B = nullptr, *C = nullptr;
  for (float **P : {&A, &B, &C})
    ASSERT_EQ(cudaMallocHost(P, N * sizeof(float)), cudaSuccess);
  std::vector<float> RA = randomFloats(N, 1), RB = randomFloats(N, 2);
  std::copy(RA.begin(), RA.end(), A);
  std::copy(RB.begin(), RB.end(), B);
  float *DA = nullptr, *DB = nullptr, *DC = nullptr;
  for (float **P : {&DA, &DB, &DC})
    ASSERT_EQ(cudaMalloc(P, N * sizeof(float)), cudaSuccess);
  cudaStream_t S[2];
  for (cudaStream_t &X : S)
    ASSERT_EQ(cudaStreamCreate(&X), cudaSuccess);
  Gpu->clearTrace();
  for (int H = 0; H < 2; ++H) {
    size_t Off = size_t(H) * Half, Bytes = Half * sizeof(float);
    ASSERT_EQ(cudaMemcpyAsync(DA + Off, A + Off, Bytes, cudaMemcpyHostToDevice,
                              S[H]),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(DB + Off, B + Off, Bytes, cudaMemcpyHostToDevice,
                              S[H]),
              cudaSuccess);
    LAUNCH(vecadd, dim3(Half / 256), dim3(256), 0, S[H], DA + Off, DB + Off,
           DC + Off, Half);
    EXPECT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
    ASSERT_EQ(cudaMemcpyAsync(C + Off, DC + Off, Bytes, cudaMemcpyDeviceToHost,
                              S[H]),
              cudaSuccess);
  }
  std::vector<Op> Queued = Gpu->ops();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], RA[I] + RB[I]) << I;

  std::vector<cleave::rt::StreamHandle> On;
  int Copies = 0, Launches = 0;
  for (const Op &O : Queued) {
    EXPECT_NE(O.What, Op::Sync) << "the host waited before it synchronized";
    if (O.What != Op::CopyIn && O.What != Op::CopyOut && O.What != Op::Launch)
      continue;
    Copies += O.What != Op::Launch;
    Launches += O.What == Op::Launch;
    EXPECT_FALSE(internalStream(*Gpu, O.Stream));
    if (std::find(On.begin(), On.end(), O.Stream) == On.end())
      On.push_back(O.Stream);
  }
  EXPECT_EQ(Copies, 6);
  EXPECT_EQ(Launches, 2);
  EXPECT_EQ(On.size(), 2u) << "one GPU stream per program stream";
  for (cudaStream_t X : S)
    ASSERT_EQ(cudaStreamDestroy(X), cudaSuccess);
  for (float *P : {DA, DB, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
  for (float *P : {A, B, C})
    ASSERT_EQ(cudaFreeHost(P), cudaSuccess);
}

TEST_F(ApiDirect, StreamsKeepCudasImplicitAndEventOrderOnTheGpu) {
  using Op = cleave::rt::NullGpu::Op;
  const int N = 1024;
  std::vector<float> RA = randomFloats(N, 1);
  float *DA = upload(RA), *DC = nullptr, *DD = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&DD, N * sizeof(float)), cudaSuccess);
  cudaStream_t Blocking, NonBlocking;
  ASSERT_EQ(cudaStreamCreate(&Blocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&NonBlocking, cudaStreamNonBlocking),
            cudaSuccess);
  cudaEvent_t E;
  ASSERT_EQ(cudaEventCreate(&E), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  // The index in ops() of the first op of kind K on a stream that is not
  // internal (or is, with Internal), from From on.
  auto Find = [](const std::vector<Op> &Ops, Op::Kind K, bool Internal,
                 cleave::rt::NullGpu &G, size_t From = 0) {
    for (size_t I = From; I < Ops.size(); ++I)
      if (Ops[I].What == K && internalStream(G, Ops[I].Stream) == Internal)
        return I;
    return Ops.size();
  };

  // Legacy-stream work comes after what a blocking stream queued: the
  // compute stream waits, on the GPU, for the event recorded behind it.
  Gpu->clearTrace();
  LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, Blocking, DA, DA, DC, N);
  LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, 0, DA, DA, DD, N);
  std::vector<Op> Ops = Gpu->ops();
  size_t First = Find(Ops, Op::Launch, false, *Gpu);
  size_t Tail = Find(Ops, Op::Record, false, *Gpu, First);
  size_t Wait = Find(Ops, Op::Wait, true, *Gpu, Tail);
  size_t Legacy = Find(Ops, Op::Launch, true, *Gpu, Wait);
  ASSERT_LT(Legacy, Ops.size());
  EXPECT_EQ(Ops[Wait].Event, Ops[Tail].Event);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  // A non-blocking stream's work does not order the legacy stream's.
  Gpu->clearTrace();
  LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, NonBlocking, DA, DA, DC, N);
  LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, 0, DA, DA, DD, N);
  Ops = Gpu->ops();
  EXPECT_EQ(Find(Ops, Op::Wait, true, *Gpu), Ops.size());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  // cudaStreamWaitEvent: the waiting stream's GPU stream waits for the
  // event's GPU record, which follows the recording stream's launch.
  Gpu->clearTrace();
  LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, NonBlocking, DA, DA, DC, N);
  ASSERT_EQ(cudaEventRecord(E, NonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(Blocking, E, 0), cudaSuccess);
  LAUNCH(vecadd, dim3(N / 256), dim3(256), 0, Blocking, DC, DC, DD, N);
  Ops = Gpu->ops();
  ASSERT_GE(Ops.size(), 2u);
  First = Find(Ops, Op::Launch, false, *Gpu);
  // A wait for an event that the first launch's stream recorded after it.
  size_t Waited = Ops.size(), Second = Ops.size();
  for (size_t I = First + 1; I < Ops.size(); ++I) {
    if (Ops[I].What == Op::Launch)
      Second = I;
    if (Ops[I].What != Op::Wait)
      continue;
    for (size_t R = First + 1; R < I; ++R)
      if (Ops[R].What == Op::Record && Ops[R].Stream == Ops[First].Stream &&
          Ops[R].Event == Ops[I].Event)
        Waited = I;
  }
  ASSERT_LT(Waited, Ops.size()) << "no GPU-side wait for the event";
  ASSERT_LT(Second, Ops.size());
  EXPECT_LT(Waited, Second);
  EXPECT_EQ(Ops[Waited].Stream, Ops[Second].Stream);
  EXPECT_NE(Ops[Second].Stream, Ops[First].Stream);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

  ASSERT_EQ(cudaEventDestroy(E), cudaSuccess);
  for (cudaStream_t X : {Blocking, NonBlocking})
    ASSERT_EQ(cudaStreamDestroy(X), cudaSuccess);
  for (float *P : {DA, DC, DD})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

TEST_F(ApiDirect, KernelsAreLoadedBeforeTheirFirstLaunch) {
  // The runtime resolves every registered kernel on the GPU in the
  // background as it starts, so that a kernel's first launch does not pay
  // for loading its code.
  float *D = nullptr;
  ASSERT_EQ(cudaMalloc(&D, 64), cudaSuccess); // starts the runtime
  auto Asked = [&] {
    std::vector<std::string> F = Gpu->functionsAsked();
    return std::find_if(F.begin(), F.end(), [](const std::string &N) {
             return N.find("vecadd") != std::string::npos;
           }) != F.end() &&
           std::find_if(F.begin(), F.end(), [](const std::string &N) {
             return N.find("scale") != std::string::npos;
           }) != F.end();
  };
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!Asked() && std::chrono::steady_clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(Asked()) << "no launch yet, and vecadd and scale not loaded";
  ASSERT_EQ(cudaFree(D), cudaSuccess);
}

TEST_F(ApiDirect, AVariableIsRewrittenOnlyOnceLaunchesReadingItAreDone) {
  // scale reads __constant__ factor. Its first launch is left running on
  // its stream; a copy to factor queued on another stream changes only
  // the host value; the next launch must copy factor in, and not while the
  // first may still read it.
  using Op = cleave::rt::NullGpu::Op;
  gpuRunsVecadd() = false;
  const int N = 1024;
  float *DIn = upload(randomFloats(N, 1)), *DOut = nullptr;
  ASSERT_EQ(cudaMalloc(&DOut, N * sizeof(float)), cudaSuccess);
  float *Two = nullptr;
  ASSERT_EQ(cudaMallocHost(&Two, sizeof(float)), cudaSuccess);
  *Two = 2.0f;
  cudaStream_t A, B;
  ASSERT_EQ(cudaStreamCreate(&A), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&B), cudaSuccess);
  LAUNCH(scale, dim3(N / 256), dim3(256), 0, A, DIn, DOut, N);
  ASSERT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
  Gpu->clearTrace();
  ASSERT_EQ(cudaMemcpyToSymbolAsync(&factor, Two, sizeof(float), 0,
                                    cudaMemcpyHostToDevice, B),
            cudaSuccess);
  // Wait for B's worker without a synchronizing call (which would wait
  // for A's launch too).
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cudaStreamQuery(B) != cudaSuccess &&
         std::chrono::steady_clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  LAUNCH(scale, dim3(N / 256), dim3(256), 0, A, DIn, DOut, N);
  ASSERT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
  std::vector<Op> Ops = Gpu->ops();
  auto In = std::find_if(Ops.begin(), Ops.end(), [](const Op &O) {
    return O.What == Op::CopyIn && O.Bytes == sizeof(float);
  });
  ASSERT_NE(In, Ops.end()) << "factor was not copied in";
  EXPECT_NE(std::find_if(Ops.begin(), In,
                         [](const Op &O) { return O.What == Op::Sync; }),
            In)
      << "factor was overwritten while the first launch could read it";
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (cudaStream_t X : {A, B})
    ASSERT_EQ(cudaStreamDestroy(X), cudaSuccess);
  ASSERT_EQ(cudaFreeHost(Two), cudaSuccess);
  for (float *P : {DIn, DOut})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

TEST_F(ApiDirect, AChangedVariableIsQueuedBeforeTheLaunchThatReadsIt) {
  // After a copy to factor, the next launch of scale queues factor's copy
  // on the compute stream rather than waiting for it on the host; a launch
  // on a created stream waits, on the GPU, for that stream's work.
  using Op = cleave::rt::NullGpu::Op;
  gpuRunsVecadd() = false;
  const int N = 1024;
  float *DIn = upload(randomFloats(N, 1)), *DOut = nullptr;
  ASSERT_EQ(cudaMalloc(&DOut, N * sizeof(float)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  for (cudaStream_t On : {cudaStream_t(0), S}) {
    SCOPED_TRACE(On ? "created stream" : "legacy stream");
    float Two = 2.0f;
    ASSERT_EQ(cudaMemcpyToSymbol(&factor, &Two, sizeof(float)), cudaSuccess);
    Gpu->clearTrace();
    LAUNCH(scale, dim3(N / 256), dim3(256), 0, On, DIn, DOut, N);
    ASSERT_NE(lastPlan().find(", direct"), std::string::npos) << lastPlan();
    std::vector<Op> Ops = Gpu->ops();
    auto In = std::find_if(Ops.begin(), Ops.end(), [](const Op &O) {
      return O.What == Op::CopyIn && O.Bytes == sizeof(float);
    });
    ASSERT_NE(In, Ops.end()) << "factor was not copied in";
    EXPECT_EQ(In->Stream, Gpu->internalStream(0));
    auto Launch = std::find_if(In, Ops.end(), [](const Op &O) {
      return O.What == Op::Launch;
    });
    ASSERT_NE(Launch, Ops.end());
    EXPECT_EQ(std::find_if(In, Launch,
                           [](const Op &O) { return O.What == Op::Sync; }),
              Launch)
        << "the host waited for factor's copy";
    if (On) {
      // The launch's stream waits for the compute stream's event, recorded
      // after the copy.
      auto Record = std::find_if(In, Launch, [&](const Op &O) {
        return O.What == Op::Record && O.Stream == Gpu->internalStream(0);
      });
      ASSERT_NE(Record, Launch);
      EXPECT_NE(std::find_if(Record, Launch,
                             [&](const Op &O) {
                               return O.What == Op::Wait &&
                                      O.Event == Record->Event &&
                                      O.Stream == Launch->Stream;
                             }),
                Launch)
          << "the created stream's launch does not wait for factor's copy";
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  ASSERT_EQ(cudaStreamDestroy(S), cudaSuccess);
  for (float *P : {DIn, DOut})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

TEST_F(ApiDirect, PinnedMemoryIsFreedOnlyAfterTheCopiesLeftRunning) {
  // A direct copy from pinned memory returns queued; freeing or
  // unregistering that memory waits for the GPU's work first.
  using Op = cleave::rt::NullGpu::Op;
  const int N = 1024;
  float *DA = nullptr;
  ASSERT_EQ(cudaMalloc(&DA, N * sizeof(float)), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  std::vector<float> Registered(N);
  ASSERT_EQ(cudaHostRegister(Registered.data(), N * sizeof(float), 0),
            cudaSuccess);
  float *Allocated = nullptr;
  ASSERT_EQ(cudaMallocHost(&Allocated, N * sizeof(float)), cudaSuccess);
  for (int Free = 0; Free < 2; ++Free) {
    SCOPED_TRACE(Free ? "cudaFreeHost" : "cudaHostUnregister");
    float *Src = Free ? Allocated : Registered.data();
    Gpu->clearTrace();
    ASSERT_EQ(cudaMemcpyAsync(DA, Src, N * sizeof(float),
                              cudaMemcpyHostToDevice, S),
              cudaSuccess);
    std::vector<Op> Before = Gpu->ops();
    ASSERT_FALSE(Before.empty());
    EXPECT_EQ(Before.back().What, Op::Record) << "the copy was not left running";
    ASSERT_EQ(Free ? cudaFreeHost(Src) : cudaHostUnregister(Src),
              cudaSuccess);
    std::vector<Op> After = Gpu->ops();
    EXPECT_NE(std::find_if(After.begin() + Before.size(), After.end(),
                           [](const Op &O) { return O.What == Op::Sync; }),
              After.end())
        << "the memory went before the copy from it was waited for";
  }
  ASSERT_EQ(cudaStreamDestroy(S), cudaSuccess);
  ASSERT_EQ(cudaFree(DA), cudaSuccess);
}

TEST_F(ApiDirect, TimeLogsTakeTheEnginesPath) {
  // CLEAVE_LOG=time promises a `cleave time` line per launch, which only
  // the engine's launches write: with it, no launch goes direct.
  cleave::rt::Options O = options("cpu");
  O.Log.Time = true;
  restart(O); // the device source still wins: one null GPU
  const int N = 1000;
  std::vector<float> A = randomFloats(N, 1);
  float *DA = upload(A), *DC = nullptr;
  ASSERT_EQ(cudaMalloc(&DC, N * sizeof(float)), cudaSuccess);
  testing::internal::CaptureStderr();
  LAUNCH(vecadd, dim3((N + 255) / 256), dim3(256), 0, 0, DA, DA, DC, N);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(lastPlan().find(", direct"), std::string::npos) << lastPlan();
  EXPECT_NE(Err.find("cleave time "), std::string::npos) << Err;
  std::vector<float> C = download(DC, N);
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(C[I], A[I] + A[I]) << I;
  for (float *P : {DA, DC})
    ASSERT_EQ(cudaFree(P), cudaSuccess);
}

} // namespace
#endif
