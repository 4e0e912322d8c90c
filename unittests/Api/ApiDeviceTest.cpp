//===- ApiDeviceTest.cpp - The virtual device, errors, streams, events ----===//
//
// Part of Cleave. What the CUDA-runtime subset says about the one virtual
// device, the error functions (per-thread last error, names and strings),
// the options (CLEAVE_DEVICES failures, what the runtime hands its parts,
// CLEAVE_LOG=devices), the call-configuration stack of rewritten launches,
// and the handle checks of streams and events. Launch-related ordering is
// in ApiLaunchTest.cpp.
//
//===----------------------------------------------------------------------===//
#if __has_include(<cuda_runtime_api.h>)
#include "ApiTestUtil.h"

#include <climits>
#include <cstring>
#include <thread>

using namespace cleave_api_test;

namespace {

class ApiDevice : public ::testing::Test {
protected:
  void SetUp() override { restart("cpu,cpu,cpu"); }
  void TearDown() override { restart("cpu"); }
};

TEST_F(ApiDevice, OneVirtualDevice) {
  int Count = -1;
  ASSERT_EQ(cudaGetDeviceCount(&Count), cudaSuccess);
  EXPECT_EQ(Count, 1);
  EXPECT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaSetDevice(1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  int Dev = -1;
  EXPECT_EQ(cudaGetDevice(&Dev), cudaSuccess);
  EXPECT_EQ(Dev, 0);

  cudaDeviceProp P;
  ASSERT_EQ(cudaGetDeviceProperties(&P, 0), cudaSuccess);
  EXPECT_STREQ(P.name, "Cleave (cpu0 + cpu1 + cpu2)");
  EXPECT_EQ(P.major, 9); // no GPU: the compute capability CUDA code targets
  EXPECT_EQ(P.minor, 0);
  EXPECT_EQ(P.warpSize, 32);
  EXPECT_EQ(P.maxThreadsPerBlock, 1024);
  EXPECT_EQ(P.maxThreadsDim[2], 64);
  EXPECT_EQ(P.maxGridSize[0], INT_MAX);
  EXPECT_EQ(P.maxGridSize[1], 65535);
  EXPECT_EQ(P.sharedMemPerBlock, 48u * 1024);
  EXPECT_EQ(P.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_EQ(P.totalConstMem, 64u * 1024);
  EXPECT_GT(P.multiProcessorCount, 0);
  EXPECT_GT(P.totalGlobalMem, 0u);
  EXPECT_EQ(P.unifiedAddressing, 1);
  EXPECT_EQ(P.managedMemory, 1);
  EXPECT_EQ(P.concurrentManagedAccess, 0);
  EXPECT_EQ(cudaGetDeviceProperties(&P, 1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetDeviceProperties(nullptr, 0), cudaErrorInvalidValue);

  // Attributes agree with the properties.
  int V = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrWarpSize, 0), cudaSuccess);
  EXPECT_EQ(V, 32);
  ASSERT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrMultiProcessorCount, 0),
            cudaSuccess);
  EXPECT_EQ(V, P.multiProcessorCount);
  ASSERT_EQ(
      cudaDeviceGetAttribute(&V, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
      cudaSuccess);
  EXPECT_EQ(V, 227 * 1024);
  ASSERT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrComputeCapabilityMajor, 0),
            cudaSuccess);
  EXPECT_EQ(V, 9);
  ASSERT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrManagedMemory, 0),
            cudaSuccess);
  EXPECT_EQ(V, 1);
  EXPECT_EQ(cudaDeviceGetAttribute(&V, cudaDevAttrWarpSize, 2),
            cudaErrorInvalidDevice);

  // The devices behind it.
  int N = 0;
  ASSERT_EQ(cleave_device_count(&N), 0);
  EXPECT_EQ(N, 3);
  char Buf[256];
  ASSERT_EQ(cleave_device_describe(1, Buf, sizeof(Buf)), 0);
  EXPECT_EQ(std::string(Buf).rfind("cpu1: ", 0), 0u) << Buf;
  // Truncated, NUL-terminated.
  ASSERT_EQ(cleave_device_describe(0, Buf, 4), 0);
  EXPECT_STREQ(Buf, "cpu");
  EXPECT_EQ(cleave_device_describe(3, Buf, sizeof(Buf)),
            cudaErrorInvalidDevice);

  int Version = 0;
  EXPECT_EQ(cudaRuntimeGetVersion(&Version), cudaSuccess);
  EXPECT_EQ(Version, CUDART_VERSION);
  (void)cudaGetLastError();
}

TEST_F(ApiDevice, StartFailureIsReportedByEveryCall) {
  ::testing::internal::CaptureStderr();
  restart("cpu,gpu7");
  int Count = -1;
  cudaError_t E = cudaGetDeviceCount(&Count);
  std::string Err = ::testing::internal::GetCapturedStderr();
  // No such GPU: cudaErrorNoDevice without libcuda, else InvalidDevice.
  EXPECT_TRUE(E == cudaErrorNoDevice || E == cudaErrorInvalidDevice)
      << cudaGetErrorName(E);
  EXPECT_EQ(Count, 0);
  EXPECT_NE(Err.find("gpu7"), std::string::npos) << Err;
  EXPECT_NE(lastMessage().find("gpu7"), std::string::npos) << lastMessage();
  void *P = nullptr;
  EXPECT_EQ(cudaMalloc(&P, 16), E);
  // Fixing the environment and resetting brings the runtime up.
  restart("cpu");
  EXPECT_EQ(cudaGetDeviceCount(&Count), cudaSuccess);
  EXPECT_EQ(Count, 1);
}

// Values the parser cannot use are OptionsTest's; here, what the runtime
// does with the options it starts with.
TEST_F(ApiDevice, TheRuntimeHandsItsOptionsDown) {
  cleave::rt::Options O = options("cpu,cpu", "even");
  O.CpuThreads = 3;
  O.AnalyzeSmCount = 132;
  O.Tune.PinHost = cleave::rt::HostPinning::Off;
  O.Tune.DirectHostCopies = false;
  O.Tune.Swap = false;
  O.Log.Devices = true; // prints the registry when the runtime starts
  ::testing::internal::CaptureStderr();
  restart(O);
  int Count = 0;
  EXPECT_EQ(cudaGetDeviceCount(&Count), cudaSuccess);
  std::string Err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("cpu1: host CPU (3 threads"), std::string::npos) << Err;

  cleave::rt::api::Runtime *RT = nullptr;
  ASSERT_TRUE(cleave::rt::api::Runtime::get(RT).ok());
  EXPECT_EQ(RT->registry().device(1).properties().ComputeUnits, 3u);
  EXPECT_EQ(RT->buffers().hostPinning(), cleave::rt::HostPinning::Off);
  EXPECT_FALSE(RT->buffers().directHostCopies());
  EXPECT_EQ(RT->engine().policy(), cleave::rt::PartitionPolicy::Even);
  EXPECT_TRUE(RT->partitionFromEnvironment());
  EXPECT_FALSE(RT->engine().options().Tune.Swap);
  cudaDeviceProp P;
  ASSERT_EQ(cudaGetDeviceProperties(&P, 0), cudaSuccess);
  EXPECT_EQ(P.multiProcessorCount, 132);
}

TEST_F(ApiDevice, ErrorNamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidValue),
               "cudaErrorInvalidValue");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidDeviceFunction),
               "cudaErrorInvalidDeviceFunction");
  EXPECT_STREQ(cudaGetErrorString(cudaSuccess), "no error");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidConfiguration),
               "invalid configuration argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMisalignedAddress),
               "misaligned address");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorECCUncorrectable),
               "ecc uncorrectable");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidPtx), "invalid ptx");
  EXPECT_STREQ(cudaGetErrorString(static_cast<cudaError_t>(12345)),
               "unrecognized error code");
  EXPECT_STREQ(cudaGetErrorName(static_cast<cudaError_t>(12345)),
               "unrecognized error code");
}

TEST_F(ApiDevice, LastErrorIsPerThread) {
  void *P;
  EXPECT_EQ(cudaMalloc(nullptr, 1), cudaErrorInvalidValue);
  cudaError_t Other = cudaErrorUnknown, OtherAfter = cudaErrorUnknown;
  std::thread T([&] {
    Other = cudaPeekAtLastError(); // this thread made no error
    EXPECT_EQ(cudaFree(reinterpret_cast<void *>(0x10)), cudaErrorInvalidValue);
    OtherAfter = cudaGetLastError();
  });
  T.join();
  EXPECT_EQ(Other, cudaSuccess);
  EXPECT_EQ(OtherAfter, cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  // Successful calls do not clear it.
  EXPECT_EQ(cudaMalloc(nullptr, 1), cudaErrorInvalidValue);
  ASSERT_EQ(cudaMalloc(&P, 16), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(P), cudaSuccess);
}

TEST_F(ApiDevice, CallConfigurationStack) {
  const uint32_t G1[3] = {4, 2, 1}, B1[3] = {128, 1, 1};
  const uint32_t G2[3] = {9, 1, 1}, B2[3] = {32, 4, 2};
  cudaStream_t S = reinterpret_cast<cudaStream_t>(0x1234);
  EXPECT_EQ(cleave_push_call_configuration(G1, B1, 100, nullptr), 0u);
  // A launch inside the arguments of another pushes on top.
  EXPECT_EQ(cleave_push_call_configuration(G2, B2, 7, S), 0u);
  uint32_t G[3], B[3];
  size_t Shared;
  void *St;
  ASSERT_EQ(cleave_pop_call_configuration(G, B, &Shared, &St), 0);
  EXPECT_EQ(std::memcmp(G, G2, sizeof(G)), 0);
  EXPECT_EQ(std::memcmp(B, B2, sizeof(B)), 0);
  EXPECT_EQ(Shared, 7u);
  EXPECT_EQ(St, S);
  ASSERT_EQ(cleave_pop_call_configuration(G, B, &Shared, &St), 0);
  EXPECT_EQ(std::memcmp(G, G1, sizeof(G)), 0);
  EXPECT_EQ(Shared, 100u);
  EXPECT_EQ(St, nullptr);
  // Nothing left: an error, everything zeroed.
  EXPECT_EQ(cleave_pop_call_configuration(G, B, &Shared, &St),
            cudaErrorInvalidValue);
  EXPECT_EQ(G[0], 0u);
  EXPECT_EQ(Shared, 0u);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  // Per thread: a push here is not visible to another thread.
  EXPECT_EQ(cleave_push_call_configuration(G1, B1, 0, nullptr), 0u);
  int OtherPop = 0;
  std::thread T(
      [&] { OtherPop = cleave_pop_call_configuration(G, B, &Shared, &St); });
  T.join();
  EXPECT_EQ(OtherPop, cudaErrorInvalidValue);
  EXPECT_EQ(cleave_pop_call_configuration(G, B, &Shared, &St), 0);
}

TEST_F(ApiDevice, StreamHandles) {
  cudaStream_t S, NB;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&NB, cudaStreamNonBlocking), cudaSuccess);
  EXPECT_NE(S, NB);
  EXPECT_EQ(cudaStreamQuery(S), cudaSuccess); // idle
  EXPECT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(0), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(cudaStreamPerThread), cudaSuccess);
  EXPECT_EQ(cudaStreamCreateWithFlags(&S, 0x10), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamCreate(nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaStreamDestroy(NB), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(NB), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamSynchronize(NB), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamQuery(reinterpret_cast<cudaStream_t>(0x77)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamDestroy(0), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  (void)cudaGetLastError();
  // After a reset, old handles are gone.
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(S), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}

TEST_F(ApiDevice, EventHandlesAndTiming) {
  cudaEvent_t A, B, NoTiming;
  ASSERT_EQ(cudaEventCreate(&A), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&B, cudaEventBlockingSync), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&NoTiming, cudaEventDisableTiming),
            cudaSuccess);
  float Ms = -1;
  // Never recorded.
  EXPECT_EQ(cudaEventQuery(A), cudaSuccess);
  EXPECT_EQ(cudaEventSynchronize(A), cudaSuccess);
  EXPECT_EQ(cudaEventElapsedTime(&Ms, A, B), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(cudaEventRecord(A, 0), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(A), cudaSuccess); // A's time is taken
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(cudaEventRecord(B, 0), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(NoTiming, 0), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(B), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(B), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&Ms, A, B), cudaSuccess);
  EXPECT_GE(Ms, 15.0f); // the host slept 20 ms between the records
  EXPECT_EQ(cudaEventElapsedTime(&Ms, A, NoTiming),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventElapsedTime(nullptr, A, B), cudaErrorInvalidValue);
  EXPECT_EQ(cudaEventCreateWithFlags(&A, cudaEventInterprocess |
                                             cudaEventDisableTiming),
            cudaErrorNotSupported);
  EXPECT_EQ(cudaEventCreateWithFlags(&A, 0x40), cudaErrorInvalidValue);
  EXPECT_EQ(cudaEventDestroy(B), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(B), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(B, 0), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventRecord(A, reinterpret_cast<cudaStream_t>(0x99)),
            cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventDestroy(A), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(NoTiming), cudaSuccess);
  (void)cudaGetLastError();
}

TEST_F(ApiDevice, StreamOrderOfCopies) {
  // A chain of device-to-device copies on one stream, each reading what the
  // previous one wrote, then a read on the legacy stream: stream order and
  // the legacy stream's wait for blocking streams make it see the end.
  const size_t N = 1 << 20;
  std::vector<int> Host(N);
  for (size_t I = 0; I < N; ++I)
    Host[I] = int(I ^ 0x5a5a);
  int *Buf[6];
  for (int *&B : Buf)
    ASSERT_EQ(cudaMalloc(&B, N * sizeof(int)), cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy(Buf[0], Host.data(), N * sizeof(int), cudaMemcpyHostToDevice),
      cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  for (int I = 0; I < 5; ++I)
    ASSERT_EQ(cudaMemcpyAsync(Buf[I + 1], Buf[I], N * sizeof(int),
                              cudaMemcpyDeviceToDevice, S),
              cudaSuccess);
  std::vector<int> Back(N);
  ASSERT_EQ(
      cudaMemcpy(Back.data(), Buf[5], N * sizeof(int), cudaMemcpyDeviceToHost),
      cudaSuccess);
  EXPECT_EQ(Back, Host);
  EXPECT_EQ(cudaStreamQuery(S), cudaSuccess);
  // Event between two streams.
  cudaStream_t T;
  ASSERT_EQ(cudaStreamCreateWithFlags(&T, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t E;
  ASSERT_EQ(cudaEventCreateWithFlags(&E, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(Buf[0], 0, N * sizeof(int), S), cudaSuccess);
  for (int I = 0; I < 4; ++I)
    ASSERT_EQ(cudaMemcpyAsync(Buf[I + 1], Buf[I], N * sizeof(int),
                              cudaMemcpyDeviceToDevice, S),
              cudaSuccess);
  ASSERT_EQ(cudaEventRecord(E, S), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(T, E, 0), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(Buf[5], Buf[4], N * sizeof(int),
                            cudaMemcpyDeviceToDevice, T),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(T), cudaSuccess);
  ASSERT_EQ(
      cudaMemcpy(Back.data(), Buf[5], N * sizeof(int), cudaMemcpyDeviceToHost),
      cudaSuccess);
  EXPECT_EQ(Back, std::vector<int>(N, 0));
  EXPECT_EQ(cudaStreamWaitEvent(T, E, 5), cudaErrorInvalidValue);
  EXPECT_EQ(cudaEventDestroy(E), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(S), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(T), cudaSuccess);
  for (int *B : Buf)
    EXPECT_EQ(cudaFree(B), cudaSuccess);
  (void)cudaGetLastError();
}

} // namespace
#endif
