//===- DevicesTest.cpp - Device registry, CPU device, error codes --------===//
//
// Part of Cleave. The registry on a machine without libcuda (CI, and this
// test forces it with CudaLibrary = "none" or a library that does not
// exist), CLEAVE_DEVICES parsing and its messages, and the CPU device's
// memory, stream and event operations.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Device.h"
#include "cleave/rt/Fault.h"
#include "cleave/rt/NullGpu.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace cleave::rt;

namespace {

RegistryOptions noGpu() {
  RegistryOptions O;
  O.CudaLibrary = "none";
  return O;
}

TEST(DevicesTest, DefaultIsTheCpuWithoutADriver) {
  std::unique_ptr<DeviceRegistry> Reg;
  RegistryOptions O;
  O.CudaLibrary = "/nonexistent/libcuda.so.1";
  ASSERT_TRUE(DeviceRegistry::create("", Reg, O).ok());
  ASSERT_EQ(Reg->size(), 1u);
  EXPECT_EQ(Reg->device(0).name(), "cpu0");
  EXPECT_EQ(Reg->device(0).kind(), DeviceKind::Cpu);
  EXPECT_TRUE(Reg->device(0).properties().SharesHostMemory);
  EXPECT_GT(Reg->device(0).properties().ComputeUnits, 0u);
  EXPECT_EQ(Reg->numGpusFound(), 0u);
  EXPECT_NE(Reg->gpuStatus().find("nonexistent"), std::string::npos)
      << Reg->gpuStatus();
  EXPECT_NE(Reg->describe().find("cpu0"), std::string::npos);
  EXPECT_EQ(Reg->find("cpu0"), &Reg->device(0));
  EXPECT_EQ(Reg->find("gpu0"), nullptr);
}

TEST(DevicesTest, DefaultHasEveryGpuTheDriverReports) {
  // On CI there is no libcuda: just the CPU. On a GPU machine: CPU + GPUs.
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("all", Reg).ok());
  EXPECT_EQ(Reg->size(), 1u + Reg->numGpusFound()) << Reg->describe();
  EXPECT_EQ(Reg->device(0).kind(), DeviceKind::Cpu);
  for (size_t I = 1; I < Reg->size(); ++I) {
    EXPECT_EQ(Reg->device(I).kind(), DeviceKind::Cuda);
    EXPECT_GE(Reg->device(I).numInternalStreams(), 3u);
  }
}

TEST(DevicesTest, SeveralCpuDevices) {
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create(" cpu, ,cpu ,cpu", Reg, noGpu()).ok());
  ASSERT_EQ(Reg->size(), 3u);
  for (unsigned I = 0; I < 3; ++I) {
    EXPECT_EQ(Reg->device(I).name(), "cpu" + std::to_string(I));
    EXPECT_EQ(Reg->device(I).properties().SharesHostMemory, I == 0);
    EXPECT_TRUE(Reg->device(I).properties().HostAddressable);
  }
  EXPECT_TRUE(Reg->device(1).canCopyDirectly(Reg->device(2)));
  EXPECT_FALSE(Reg->device(1).hasPeerLink(Reg->device(2)));
}

TEST(DevicesTest, SelectionErrorsAreClear) {
  std::unique_ptr<DeviceRegistry> Reg;
  Result R = DeviceRegistry::create("cpu,tpu0", Reg, noGpu());
  EXPECT_EQ(R.code(), ErrorCode::InvalidDevice);
  EXPECT_NE(R.message().find("unknown device 'tpu0'"), std::string::npos)
      << R.message();
  EXPECT_NE(R.message().find("cpu, gpu, gpuN or all"), std::string::npos);
  EXPECT_FALSE(Reg);

  R = DeviceRegistry::create("cpu,gpu0", Reg, noGpu());
  EXPECT_EQ(R.code(), ErrorCode::NoDevice);
  EXPECT_NE(R.message().find("gpu0 is selected but no GPU was found"),
            std::string::npos)
      << R.message();

  RegistryOptions Missing;
  Missing.CudaLibrary = "/nonexistent/libcuda.so.1";
  R = DeviceRegistry::create("gpu", Reg, Missing);
  EXPECT_EQ(R.code(), ErrorCode::NoDevice);
  EXPECT_NE(R.message().find("/nonexistent/libcuda.so.1"), std::string::npos)
      << R.message();

  for (const char *Bad : {"gpux", "gpu-1", "cpu0", "CPU", "all,gpu1x"}) {
    R = DeviceRegistry::create(Bad, Reg, noGpu());
    EXPECT_EQ(R.code(), ErrorCode::InvalidDevice) << Bad;
  }
}

TEST(DevicesTest, CpuDeviceMemory) {
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu,cpu,cpu", Reg, noGpu()).ok());
  Device &A = Reg->device(1), &B = Reg->device(2);
  DeviceAddr PA = 0, PB = 0;
  ASSERT_TRUE(A.allocate(1000, PA).ok());
  ASSERT_TRUE(B.allocate(1000, PB).ok());
  EXPECT_EQ(PA % 256, 0u);
  std::vector<char> In(1000), Out(1000);
  for (int I = 0; I < 1000; ++I)
    In[I] = static_cast<char>(I * 7);
  ASSERT_TRUE(A.copyHostToDevice(PA, In.data(), 1000).ok());
  ASSERT_TRUE(A.copyDeviceToDevice(B, PB, PA, 1000).ok());
  ASSERT_TRUE(B.memset(PB + 10, 0x55, 5).ok());
  ASSERT_TRUE(B.copyDeviceToHost(Out.data(), PB, 1000).ok());
  for (int I = 0; I < 1000; ++I)
    ASSERT_EQ(Out[I], I >= 10 && I < 15 ? 0x55 : In[I]) << I;
  ASSERT_TRUE(A.copyDeviceToDevice(A, PA + 1, PA, 100).ok()); // overlapping
  DeviceAddr Zero;
  EXPECT_EQ(A.allocate(0, Zero).code(), ErrorCode::InvalidValue);
  EXPECT_EQ(A.copyHostToDevice(0, In.data(), 10).code(),
            ErrorCode::InvalidValue);
  EXPECT_TRUE(A.copyHostToDevice(0, nullptr, 0).ok()); // nothing to do
  EXPECT_TRUE(A.free(PA).ok());
  EXPECT_TRUE(B.free(PB).ok());
  void *Pinned = nullptr;
  ASSERT_TRUE(A.allocateHost(64, Pinned).ok());
  EXPECT_NE(Pinned, nullptr);
  EXPECT_TRUE(A.freeHost(Pinned).ok());
}

TEST(DevicesTest, PullsFromPeersAreCheckedThenQueuedTogether) {
  // Two copies from two peers into gpu0, on one of gpu0's streams: both
  // land. A copy from a device of another kind, or with a null address, is
  // refused before anything is queued; so is a batch with an injected
  // copy fault on one of its devices.
  NullGpu G0(0), G1(1), G2(2);
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu", Reg, noGpu()).ok());
  Device &Cpu = Reg->device(0);
  DeviceAddr D = 0, S1 = 0, S2 = 0, C = 0;
  ASSERT_TRUE(G0.allocate(64, D).ok());
  ASSERT_TRUE(G1.allocate(32, S1).ok());
  ASSERT_TRUE(G2.allocate(32, S2).ok());
  ASSERT_TRUE(Cpu.allocate(32, C).ok());
  std::memset(reinterpret_cast<void *>(S1), 1, 32);
  std::memset(reinterpret_cast<void *>(S2), 2, 32);
  StreamHandle St = G0.internalStream(0);
  ASSERT_TRUE(G0.pullFromPeers({{&G1, D, S1, 32}, {&G2, D + 32, S2, 32}}, St)
                  .ok());
  ASSERT_EQ(G0.pulls().size(), 2u);
  EXPECT_EQ(G0.pulls()[0].first, St);
  const char *Got = reinterpret_cast<const char *>(D);
  for (int I = 0; I < 64; ++I)
    ASSERT_EQ(Got[I], I < 32 ? 1 : 2) << I;
  EXPECT_EQ(G0.pullFromPeers({{&G1, D, S1, 32}, {&Cpu, D, C, 32}}, St).code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(G0.pullFromPeers({{&G1, 0, S1, 32}}, St).code(),
            ErrorCode::InvalidValue);
  ASSERT_TRUE(FaultInjector::global().configure("gpu2:copy:1").ok());
  EXPECT_FALSE(
      G0.pullFromPeers({{&G1, D, S1, 32}, {&G2, D + 32, S2, 32}}, St).ok());
  FaultInjector::global().clear();
  EXPECT_EQ(G0.pulls().size(), 2u) << "a refused batch queues nothing";
  EXPECT_TRUE(G0.free(D).ok());
  EXPECT_TRUE(G1.free(S1).ok());
  EXPECT_TRUE(G2.free(S2).ok());
  EXPECT_TRUE(Cpu.free(C).ok());
}

TEST(DevicesTest, CpuDeviceStreamsAndEvents) {
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu", Reg, noGpu()).ok());
  Device &D = Reg->device(0);
  EXPECT_GE(D.numInternalStreams(), 3u);
  EXPECT_NE(D.internalStream(0), D.internalStream(1));
  StreamHandle S = nullptr;
  ASSERT_TRUE(D.createStream(S).ok());
  EventHandle E0 = nullptr, E1 = nullptr;
  ASSERT_TRUE(D.createEvent(E0).ok());
  ASSERT_TRUE(D.createEvent(E1).ok());
  float Ms = -1;
  EXPECT_EQ(D.elapsedTime(E0, E1, Ms).code(),
            ErrorCode::InvalidResourceHandle); // never recorded
  ASSERT_TRUE(D.recordEvent(E0, S).ok());
  ASSERT_TRUE(D.recordEvent(E1, D.internalStream(2)).ok());
  ASSERT_TRUE(D.synchronizeEvent(E1).ok());
  ASSERT_TRUE(D.elapsedTime(E0, E1, Ms).ok());
  EXPECT_GE(Ms, 0.0f);
  ASSERT_TRUE(D.synchronizeStream(S).ok());
  ASSERT_TRUE(D.synchronizeStream(nullptr).ok());
  ASSERT_TRUE(D.synchronize().ok());
  ASSERT_TRUE(D.destroyEvent(E0).ok());
  EXPECT_EQ(D.destroyEvent(E0).code(), ErrorCode::InvalidResourceHandle);
  ASSERT_TRUE(D.destroyStream(S).ok());
  EXPECT_EQ(D.destroyStream(S).code(), ErrorCode::InvalidResourceHandle);
  int NotAStream;
  EXPECT_EQ(D.recordEvent(E1, &NotAStream).code(),
            ErrorCode::InvalidResourceHandle);
  ASSERT_TRUE(D.destroyEvent(E1).ok());
}

TEST(DevicesTest, CpuDeviceKernelsAndLaunchFaults) {
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu,cpu", Reg, noGpu()).ok());
  Device &D = Reg->device(1);
  // The CPU runs CPU variants: module operations are refused, clearly.
  Bundle B;
  ModuleHandle M = nullptr;
  Result R = D.loadModule(B, M);
  EXPECT_EQ(R.code(), ErrorCode::NotSupported);
  EXPECT_NE(R.message().find("cpu1"), std::string::npos) << R.message();
  FunctionHandle F = nullptr;
  EXPECT_EQ(D.getFunction(nullptr, "k", F).code(), ErrorCode::NotSupported);
  DeviceAddr A = 0;
  uint64_t N = 0;
  EXPECT_EQ(D.getGlobal(nullptr, "v", A, N).code(), ErrorCode::NotSupported);
  uint32_t G[3] = {1, 1, 1}, Blk[3] = {1, 1, 1};
  EXPECT_EQ(D.launchKernel(&G, G, Blk, 0, nullptr, nullptr).code(),
            ErrorCode::NotSupported);
  EXPECT_EQ(D.launchKernel(nullptr, G, Blk, 0, nullptr, nullptr).code(),
            ErrorCode::InvalidValue);

  // Launch faults are counted per device, CPU devices included.
  ASSERT_TRUE(FaultInjector::global().configure("cpu1:launch:2").ok());
  EXPECT_TRUE(Reg->device(0).checkLaunchFault().ok());
  EXPECT_TRUE(D.checkLaunchFault().ok());
  R = D.checkLaunchFault();
  EXPECT_EQ(R.code(), ErrorCode::LaunchFailure);
  EXPECT_NE(R.message().find("injected fault: launch on cpu1"),
            std::string::npos)
      << R.message();
  EXPECT_TRUE(D.checkLaunchFault().ok());
  FaultInjector::global().clear();
}

TEST(DevicesTest, ErrorCodesMirrorCuda) {
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidValue), 1);
  EXPECT_EQ(static_cast<int>(ErrorCode::MemoryAllocation), 2);
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidDevicePointer), 17);
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidMemcpyDirection), 21);
  EXPECT_EQ(static_cast<int>(ErrorCode::NoDevice), 100);
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidDevice), 101);
  EXPECT_EQ(static_cast<int>(ErrorCode::InvalidResourceHandle), 400);
  EXPECT_EQ(static_cast<int>(ErrorCode::LaunchFailure), 719);
  EXPECT_STREQ(getErrorName(ErrorCode::MemoryAllocation),
               "cudaErrorMemoryAllocation");
  EXPECT_STREQ(getErrorDescription(ErrorCode::MemoryAllocation),
               "out of memory");
  EXPECT_EQ(Result::success().toString(), "success");
  EXPECT_EQ(Result::error(ErrorCode::InvalidValue, "x").toString(),
            "cudaErrorInvalidValue: x");
}

} // namespace
