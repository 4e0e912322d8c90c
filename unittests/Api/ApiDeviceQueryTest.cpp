//===- ApiDeviceQueryTest.cpp - What programs ask of the virtual device ---===//
//
// Part of Cleave. The attributes of the virtual device without a GPU (every
// cudaDeviceAttr answered, the hardware ones with the host's or documented
// values, consistent with cudaGetDeviceProperties), cudaMemGetInfo, the
// device flags and cache preferences, the profiler markers, the calls CUDA
// 13 removed (cudaThreadSynchronize, cudaThreadExit), and handles that stay
// invalid once destroyed even when their memory is reused. How the GPUs'
// hardware attributes make the virtual device's is tested on null GPUs
// that answer attributes (no GPU here).
//
//===----------------------------------------------------------------------===//
#if __has_include(<cuda_runtime_api.h>)
#include "../../runtime/lib/api/CudaApi.h"
#include "ApiTestUtil.h"

#include "cleave/cuda_removed_api.h"
#include "cleave/rt/NullGpu.h"

#include <cuda_profiler_api.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

using namespace cleave_api_test;

namespace {

class ApiDeviceQuery : public ::testing::Test {
protected:
  void SetUp() override { restart("cpu,cpu"); }
  void TearDown() override { restart("cpu"); }
  int attr(cudaDeviceAttr A) {
    int V = INT_MIN;
    EXPECT_EQ(cudaDeviceGetAttribute(&V, A, 0), cudaSuccess)
        << "attribute " << int(A) << ": " << lastMessage();
    return V;
  }
};

TEST_F(ApiDeviceQuery, EveryAttributeIsAnsweredOrInvalid) {
  // Every value up to past the last one CUDA 13 defines: an attribute
  // CUDA defines is answered; a number that is none is cudaErrorInvalidValue,
  // as in CUDA. Never cudaErrorNotSupported.
  unsigned Answered = 0;
  for (int A = 0; A < 200; ++A) {
    int V = INT_MIN;
    cudaError_t E =
        cudaDeviceGetAttribute(&V, static_cast<cudaDeviceAttr>(A), 0);
    EXPECT_TRUE(E == cudaSuccess || E == cudaErrorInvalidValue)
        << "attribute " << A << ": " << cudaGetErrorName(E);
    if (E == cudaSuccess) {
      EXPECT_NE(V, INT_MIN) << "attribute " << A;
      ++Answered;
    }
  }
  (void)cudaGetLastError();
  // CUDA 13 names 124 attributes besides its reserved values.
  EXPECT_GE(Answered, 124u);
  int V;
  EXPECT_EQ(cudaDeviceGetAttribute(&V, static_cast<cudaDeviceAttr>(0), 0),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaDeviceGetAttribute(&V, static_cast<cudaDeviceAttr>(9999), 0),
            cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST_F(ApiDeviceQuery, CommonAttributesWithoutAGpu) {
  cudaDeviceProp P;
  ASSERT_EQ(cudaGetDeviceProperties(&P, 0), cudaSuccess);
  // What device selection code asks (the samples' SMs x clock).
  EXPECT_GT(attr(cudaDevAttrClockRate), 0); // the host's clock, in kHz
  EXPECT_EQ(attr(cudaDevAttrMultiProcessorCount), P.multiProcessorCount);
  EXPECT_EQ(attr(cudaDevAttrComputeCapabilityMajor), 9);
  EXPECT_EQ(attr(cudaDevAttrComputeCapabilityMinor), 0);
  EXPECT_EQ(attr(cudaDevAttrComputeMode), int(cudaComputeModeDefault));
  // Limits the runtime enforces.
  EXPECT_EQ(attr(cudaDevAttrMaxThreadsPerBlock), 1024);
  EXPECT_EQ(attr(cudaDevAttrMaxThreadsPerMultiProcessor), 2048);
  EXPECT_EQ(attr(cudaDevAttrWarpSize), 32);
  EXPECT_EQ(attr(cudaDevAttrMaxSharedMemoryPerBlock), 48 * 1024);
  EXPECT_EQ(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin), 227 * 1024);
  EXPECT_EQ(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor),
            int(P.sharedMemPerMultiprocessor));
  EXPECT_EQ(attr(cudaDevAttrMaxRegistersPerBlock), 65536);
  EXPECT_EQ(attr(cudaDevAttrMaxGridDimX), INT_MAX);
  EXPECT_EQ(attr(cudaDevAttrMaxBlockDimZ), 64);
  // Features: what the runtime provides.
  EXPECT_EQ(attr(cudaDevAttrConcurrentKernels), 1);
  EXPECT_EQ(attr(cudaDevAttrUnifiedAddressing), 1);
  EXPECT_EQ(attr(cudaDevAttrAsyncEngineCount), 2);
  EXPECT_EQ(attr(cudaDevAttrGpuOverlap), 1);
  EXPECT_EQ(attr(cudaDevAttrHostRegisterSupported), 1);
  EXPECT_EQ(attr(cudaDevAttrCooperativeLaunch), 0);
  EXPECT_EQ(attr(cudaDevAttrManagedMemory), 1);
  EXPECT_EQ(attr(cudaDevAttrConcurrentManagedAccess), 0);
  EXPECT_EQ(attr(cudaDevAttrCanMapHostMemory), 0);
  EXPECT_EQ(attr(cudaDevAttrMaxTexture2DWidth), 0);
  // Hardware facts with no GPU: the host's, or documented constants.
  EXPECT_EQ(attr(cudaDevAttrIntegrated), 0);
  EXPECT_EQ(attr(cudaDevAttrEccEnabled), 0);
  EXPECT_EQ(attr(cudaDevAttrMemoryClockRate), 0);
  EXPECT_EQ(attr(cudaDevAttrGlobalMemoryBusWidth), 0);
  EXPECT_EQ(attr(cudaDevAttrPciBusId), 0);
  EXPECT_EQ(attr(cudaDevAttrSingleToDoublePrecisionPerfRatio), 2);
  EXPECT_EQ(attr(cudaDevAttrNumaId), -1);
  EXPECT_GE(attr(cudaDevAttrL2CacheSize), 0);
  // The same facts through the properties.
  EXPECT_EQ(P.l2CacheSize, attr(cudaDevAttrL2CacheSize));
  EXPECT_EQ(P.memoryBusWidth, attr(cudaDevAttrGlobalMemoryBusWidth));
  EXPECT_EQ(P.pciBusID, attr(cudaDevAttrPciBusId));
  EXPECT_EQ(P.ECCEnabled, attr(cudaDevAttrEccEnabled));
  EXPECT_EQ(P.integrated, attr(cudaDevAttrIntegrated));
  EXPECT_EQ(P.hostRegisterSupported, 1);
  EXPECT_EQ(P.deviceNumaId, -1);
}

TEST(ApiDeviceAttributes, HardwareAttributesOfSeveralGpus) {
  using cleave::rt::Device;
  using cleave::rt::NullGpu;
  using cleave::rt::api::hardwareAttribute;
  auto Gpu = [](int Ordinal, int Clock, int Bus, int Pci) {
    NullGpu::Options O;
    O.Ordinal = Ordinal;
    O.Attributes = {{cudaDevAttrClockRate, Clock},
                    {cudaDevAttrGlobalMemoryBusWidth, Bus},
                    {cudaDevAttrPciBusId, Pci}};
    return std::make_unique<NullGpu>(std::move(O));
  };
  auto G0 = Gpu(0, 1980000, 5120, 0x18), G1 = Gpu(1, 1755000, 6144, 0x2a);
  // The smallest clock and bus of all GPUs; the first GPU's identity.
  std::vector<Device *> Both = {G0.get(), G1.get()};
  EXPECT_EQ(hardwareAttribute(Both, cudaDevAttrClockRate), 1755000);
  EXPECT_EQ(hardwareAttribute(Both, cudaDevAttrGlobalMemoryBusWidth), 5120);
  EXPECT_EQ(hardwareAttribute(Both, cudaDevAttrPciBusId), 0x18);
  std::vector<Device *> Swapped = {G1.get(), G0.get()};
  EXPECT_EQ(hardwareAttribute(Swapped, cudaDevAttrPciBusId), 0x2a);
  // A GPU that does not answer is left out; with none that answers, the
  // host's value (no NUMA node: -1).
  NullGpu Mute(2);
  std::vector<Device *> WithMute = {&Mute, G1.get()};
  EXPECT_EQ(hardwareAttribute(WithMute, cudaDevAttrClockRate), 1755000);
  EXPECT_EQ(hardwareAttribute(WithMute, cudaDevAttrNumaId), -1);
  EXPECT_EQ(hardwareAttribute({}, cudaDevAttrMemoryClockRate), 0);
  EXPECT_GT(hardwareAttribute({}, cudaDevAttrClockRate), 0);
}

TEST_F(ApiDeviceQuery, MemGetInfo) {
  size_t Free = 0, Total = 0;
  ASSERT_EQ(cudaMemGetInfo(&Free, &Total), cudaSuccess);
  cudaDeviceProp P;
  ASSERT_EQ(cudaGetDeviceProperties(&P, 0), cudaSuccess);
  EXPECT_EQ(Total, P.totalGlobalMem);
  EXPECT_GT(Free, 0u);
  EXPECT_LE(Free, Total);
  EXPECT_EQ(cudaMemGetInfo(nullptr, &Total), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST_F(ApiDeviceQuery, FlagsAndCachePreferencesAreKept) {
  unsigned Flags = 99;
  ASSERT_EQ(cudaGetDeviceFlags(&Flags), cudaSuccess);
  EXPECT_EQ(Flags, 0u);
  ASSERT_EQ(
      cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost),
      cudaSuccess);
  ASSERT_EQ(cudaGetDeviceFlags(&Flags), cudaSuccess);
  EXPECT_EQ(Flags,
            unsigned(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost));
  // Two scheduling policies at once, or bits CUDA does not define.
  EXPECT_EQ(
      cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceScheduleYield),
      cudaErrorInvalidValue);
  EXPECT_EQ(cudaSetDeviceFlags(0x100), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetDeviceFlags(nullptr), cudaErrorInvalidValue);

  cudaFuncCache C = cudaFuncCachePreferL1;
  ASSERT_EQ(cudaDeviceGetCacheConfig(&C), cudaSuccess);
  EXPECT_EQ(C, cudaFuncCachePreferNone);
  ASSERT_EQ(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetCacheConfig(&C), cudaSuccess);
  EXPECT_EQ(C, cudaFuncCachePreferShared);
  EXPECT_EQ(cudaDeviceSetCacheConfig(static_cast<cudaFuncCache>(7)),
            cudaErrorInvalidValue);
  // A reset forgets them, as CUDA's does.
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetCacheConfig(&C), cudaSuccess);
  EXPECT_EQ(C, cudaFuncCachePreferNone);
  ASSERT_EQ(cudaGetDeviceFlags(&Flags), cudaSuccess);
  EXPECT_EQ(Flags, 0u);
  (void)cudaGetLastError();
}

TEST_F(ApiDeviceQuery, ProfilerMarkers) {
  EXPECT_EQ(cudaProfilerStart(), cudaSuccess);
  EXPECT_EQ(cudaProfilerStop(), cudaSuccess);
}

TEST_F(ApiDeviceQuery, CallsRemovedByCuda13) {
  int *D = nullptr;
  ASSERT_EQ(cudaMalloc(&D, 1 << 20), cudaSuccess);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(D, 1, 1 << 20, S), cudaSuccess);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cudaThreadSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaThreadSynchronize(), cudaSuccess);
  std::string Err = ::testing::internal::GetCapturedStderr();
  // As cudaDeviceSynchronize: the stream's work is done.
  EXPECT_EQ(cudaStreamQuery(S), cudaSuccess);
  // One warning, however often it is called (and whatever an earlier test
  // in this process printed).
  size_t First = Err.find("cudaThreadSynchronize");
  if (First != std::string::npos)
    EXPECT_EQ(Err.find("cudaThreadSynchronize", First + 1), std::string::npos)
        << Err;
  // cudaThreadExit is cudaDeviceReset: the stream and the memory are gone.
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(cudaThreadExit(), cudaSuccess);
  (void)::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cudaStreamQuery(S), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaFree(D), cudaErrorInvalidValue);
  (void)cudaGetLastError();
}

TEST_F(ApiDeviceQuery, DestroyedHandlesStayInvalid) {
  // A handle is never given out twice, even when the memory behind a
  // destroyed one is reused at once.
  for (int I = 0; I < 4; ++I) {
    cudaEvent_t E, E2;
    cudaStream_t S, S2;
    ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&E), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(E, S), cudaSuccess);
    ASSERT_EQ(cudaEventDestroy(E), cudaSuccess);
    ASSERT_EQ(cudaEventCreate(&E2), cudaSuccess);
    EXPECT_NE(E, E2);
    EXPECT_EQ(cudaStreamWaitEvent(S, E, 0), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaStreamWaitEvent(S, E2, cudaEventWaitExternal), cudaSuccess);
    EXPECT_EQ(cudaStreamWaitEvent(0, E, 0), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaEventQuery(E), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaEventDestroy(E2), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(S), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&S2), cudaSuccess);
    EXPECT_NE(S, S2);
    EXPECT_EQ(cudaStreamSynchronize(S), cudaErrorInvalidResourceHandle);
    EXPECT_EQ(cudaStreamDestroy(S2), cudaSuccess);
  }
  // Handles from before a reset are invalid after it.
  cudaEvent_t Old;
  ASSERT_EQ(cudaEventCreate(&Old), cudaSuccess);
  restart("cpu");
  cudaEvent_t New;
  ASSERT_EQ(cudaEventCreate(&New), cudaSuccess);
  EXPECT_NE(Old, New);
  EXPECT_EQ(cudaEventSynchronize(Old), cudaErrorInvalidResourceHandle);
  (void)cudaGetLastError();
}

} // namespace
#endif
