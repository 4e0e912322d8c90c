//===- FaultTest.cpp - CLEAVE_FAULT and the failure paths it opens -------===//
//
// Part of Cleave. The fault-injection rules, and that an injected allocation
// or copy failure reaches the caller as an error code with the buffers' data
// and validity intact, so the operation can be retried (or re-run on
// another device, once launches exist).
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Buffers.h"
#include "cleave/rt/Fault.h"

#include "FakeDevice.h"

#include "gtest/gtest.h"

#include <cstring>
#include <numeric>

using namespace cleave::rt;
using cleave::rt::test::FakeDevice;

namespace {

/// Leaves the process-wide injector empty for the next test.
class FaultTest : public ::testing::Test {
protected:
  void TearDown() override { FaultInjector::global().clear(); }
  FaultInjector &inj() { return FaultInjector::global(); }
};

TEST_F(FaultTest, ParsesRules) {
  EXPECT_TRUE(inj().configure("gpu0:alloc:2").ok());
  EXPECT_TRUE(inj().active());
  EXPECT_EQ(inj().spec(), "gpu0:alloc:2");
  EXPECT_TRUE(inj().configure(" cpu1 : copy : 1+ ; *:*:3, gpu:launch:1").ok());
  EXPECT_TRUE(inj().configure("").ok());
  EXPECT_FALSE(inj().active());
  for (const char *Bad : {"gpu0:alloc", "gpu0:fly:1", "gpu0:alloc:0",
                          "gpu0:alloc:x", ":alloc:1", "gpu0:alloc:1:2",
                          "gpu0:alloc:+", "gpu0:alloc:1,oops"}) {
    Result R = inj().configure(Bad);
    EXPECT_EQ(R.code(), ErrorCode::InvalidValue) << Bad;
    EXPECT_FALSE(inj().active()) << Bad; // a bad spec leaves no rule
  }
  Result R = inj().configure("gpu0:fly:1");
  EXPECT_NE(R.message().find("unknown operation 'fly'"), std::string::npos)
      << R.message();
}

TEST_F(FaultTest, RulesThatCountSeveralDevicesTogether) {
  // The engine issues GPU ranges serially under these (docs/runtime.md,
  // "Issue workers"): which launch is the Nth would depend on the threads.
  EXPECT_FALSE(inj().countsAcrossDevices());
  ASSERT_TRUE(inj().configure("gpu2:launch:3; cpu0:alloc:1+").ok());
  EXPECT_FALSE(inj().countsAcrossDevices());
  ASSERT_TRUE(inj().configure("gpu1:copy:1, gpu:launch:2").ok());
  EXPECT_TRUE(inj().countsAcrossDevices());
  ASSERT_TRUE(inj().configure("*:launch:1").ok());
  EXPECT_TRUE(inj().countsAcrossDevices());
  inj().clear();
  EXPECT_FALSE(inj().countsAcrossDevices());
}

TEST_F(FaultTest, NthMatchingOperationFails) {
  ASSERT_TRUE(inj().configure("gpu0:alloc:2").ok());
  EXPECT_FALSE(inj().shouldFail("gpu0", FaultOp::Copy)); // not counted
  EXPECT_FALSE(inj().shouldFail("gpu1", FaultOp::Alloc)); // not counted
  EXPECT_FALSE(inj().shouldFail("gpu0", FaultOp::Alloc));
  EXPECT_TRUE(inj().shouldFail("gpu0", FaultOp::Alloc));
  EXPECT_FALSE(inj().shouldFail("gpu0", FaultOp::Alloc));
  // Reconfiguring restarts the counts.
  ASSERT_TRUE(inj().configure("gpu0:alloc:1").ok());
  EXPECT_TRUE(inj().shouldFail("gpu0", FaultOp::Alloc));
}

TEST_F(FaultTest, AndLaterAndSelectors) {
  ASSERT_TRUE(inj().configure("cpu:copy:2+").ok());
  EXPECT_FALSE(inj().shouldFail("cpu3", FaultOp::Copy));
  EXPECT_TRUE(inj().shouldFail("cpu0", FaultOp::Copy));
  EXPECT_TRUE(inj().shouldFail("cpu12", FaultOp::Copy));
  EXPECT_FALSE(inj().shouldFail("gpu0", FaultOp::Copy));
  EXPECT_TRUE(FaultInjector::matchesDevice("*", "gpu3"));
  EXPECT_TRUE(FaultInjector::matchesDevice("gpu", "gpu3"));
  EXPECT_FALSE(FaultInjector::matchesDevice("gpu", "gpux"));
  EXPECT_TRUE(FaultInjector::matchesDevice("gpu1", "gpu1"));
  EXPECT_FALSE(FaultInjector::matchesDevice("gpu1", "gpu10"));
  ASSERT_TRUE(inj().configure("*:*:1").ok());
  EXPECT_TRUE(inj().shouldFail("anything", FaultOp::Memset));
  EXPECT_FALSE(inj().shouldFail("anything", FaultOp::Launch));
}

TEST_F(FaultTest, AllocationFailureIsAnErrorAndRetryable) {
  std::unique_ptr<DeviceRegistry> Reg;
  RegistryOptions O;
  O.CudaLibrary = "none";
  ASSERT_TRUE(DeviceRegistry::create("cpu,cpu", Reg, O).ok());
  BufferManager M(Reg->devices());
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(4096, P).ok());
  std::vector<uint8_t> In(4096), Out(4096);
  std::iota(In.begin(), In.end(), 0);
  ASSERT_TRUE(M.memcpy(P, In.data(), 4096).ok());
  BufferManager::Resolved R;
  ASSERT_TRUE(M.resolve(P, R).ok());

  ASSERT_TRUE(inj().configure("cpu1:alloc:1").ok());
  Result E = M.makeValid(*R.Buf, 1, {0, 4096});
  EXPECT_EQ(E.code(), ErrorCode::MemoryAllocation);
  EXPECT_NE(E.message().find("injected fault: alloc on cpu1"),
            std::string::npos)
      << E.message();
  EXPECT_FALSE(R.Buf->hasReplica(1));
  // The second allocation succeeds; the data arrives whole.
  ASSERT_TRUE(M.makeValid(*R.Buf, 1, {0, 4096}).ok());
  DeviceAddr A;
  ASSERT_TRUE(M.addressOn(*R.Buf, 1, 0, A).ok());
  EXPECT_EQ(0, std::memcmp(reinterpret_cast<void *>(A), In.data(), 4096));
  ASSERT_TRUE(M.memcpy(Out.data(), P, 4096).ok());
  EXPECT_EQ(In, Out);
  ASSERT_TRUE(M.free(P).ok());
}

TEST_F(FaultTest, CopyFailureKeepsValidityExact) {
  FakeDevice G0("gpu0"), G1("gpu1");
  BufferManager M({&G0, &G1});
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(2048, P).ok());
  BufferManager::Resolved R;
  ASSERT_TRUE(M.resolve(P, R).ok());
  Buffer &B = *R.Buf;
  // gpu0 produces the first half; the host writes the second.
  DeviceAddr A0;
  ASSERT_TRUE(M.addressOn(B, 0, 0, A0).ok());
  std::memset(G0.hostView(A0), 0x11, 1024);
  ASSERT_TRUE(M.markWritten(B, 0, {0, 1024}).ok());
  std::vector<uint8_t> Half(1024, 0x22);
  ASSERT_TRUE(M.memcpy(static_cast<char *>(P) + 1024, Half.data(), 1024).ok());

  // gpu1 reads everything: host -> gpu1 first (works), then gpu0 -> host,
  // the staging copy, fails (gpu0's first copy).
  ASSERT_TRUE(inj().configure("gpu0:copy:1").ok());
  Result E = M.makeValid(B, 1, {0, 2048});
  EXPECT_EQ(E.code(), ErrorCode::Unknown);
  EXPECT_NE(E.message().find("injected fault: copy on gpu0"),
            std::string::npos)
      << E.message();
  EXPECT_NE(E.message().find("from gpu0 to host"), std::string::npos)
      << E.message();
  // What arrived is valid, what did not is still missing, gpu0 still owns
  // its half.
  EXPECT_EQ(B.validRanges(1), RangeSet(1024, 2048));
  EXPECT_EQ(B.validRanges(0), RangeSet(0, 1024));
  EXPECT_EQ(M.missingRanges(B, 1, {0, 2048}), RangeSet(0, 1024));
  // Retrying finishes the job with the right data.
  ASSERT_TRUE(M.makeValid(B, 1, {0, 2048}).ok());
  DeviceAddr A1;
  ASSERT_TRUE(M.addressOn(B, 1, 0, A1).ok());
  EXPECT_EQ(G1.hostView(A1)[0], 0x11);
  EXPECT_EQ(G1.hostView(A1)[2047], 0x22);

  // A failing host read is an error too, and a later one succeeds.
  ASSERT_TRUE(M.markWritten(B, 1, {0, 2048}).ok());
  ASSERT_TRUE(inj().configure("gpu1:copy:1").ok());
  std::vector<uint8_t> Out(2048);
  EXPECT_FALSE(M.memcpy(Out.data(), P, 2048).ok());
  ASSERT_TRUE(M.memcpy(Out.data(), P, 2048).ok());
  EXPECT_EQ(Out[0], 0x11);
  EXPECT_EQ(Out[1500], 0x22);
  ASSERT_TRUE(M.free(P).ok());
}

TEST_F(FaultTest, MemsetFailureIsAnError) {
  FakeDevice G0("gpu0");
  BufferManager M({&G0});
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(256, P).ok());
  BufferManager::Resolved R;
  ASSERT_TRUE(M.resolve(P, R).ok());
  DeviceAddr A;
  ASSERT_TRUE(M.addressOn(*R.Buf, 0, 0, A).ok());
  ASSERT_TRUE(M.markWritten(*R.Buf, 0, {0, 256}).ok());
  ASSERT_TRUE(inj().configure("gpu0:memset:1").ok());
  EXPECT_EQ(M.memset(P, 0, 256).code(), ErrorCode::Unknown);
  EXPECT_EQ(R.Buf->validRanges(0), RangeSet(0, 256));
  EXPECT_TRUE(M.memset(P, 0, 256).ok());
  ASSERT_TRUE(M.free(P).ok());
}

} // namespace
