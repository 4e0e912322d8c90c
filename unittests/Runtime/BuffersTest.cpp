//===- BuffersTest.cpp - Virtual pointers, replicas, transfer planning ---===//
//
// Part of Cleave. Buffers over fake GPU-like devices (FakeDevice.h: private
// memory, chosen peer links, an operation log) and over several real CPU
// devices (CLEAVE_DEVICES=cpu,cpu,cpu), checking which copies the planner
// picks, that only stale bytes move, that bad pointers give error codes, and,
// with random operation sequences against a plain byte array, that the data
// every location reads is always right.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Buffers.h"
#include "cleave/rt/Device.h"
#include "cleave/rt/NullGpu.h"

#include "FakeDevice.h"

#include "gtest/gtest.h"

#include <cstring>
#include <numeric>
#include <random>

#include <unistd.h>

using namespace cleave::rt;
using cleave::rt::test::FakeDevice;

namespace {

/// gpu0 <-> gpu1 linked (NVLink-like), gpu2 linked to nobody.
struct FakeMachine {
  FakeDevice G0{"gpu0"}, G1{"gpu1"}, G2{"gpu2"};
  BufferManager M{{&G0, &G1, &G2}};
  FakeMachine() {
    G0.linkPeer(G1);
    G1.linkPeer(G0);
  }
  void clearLogs() {
    G0.clearLog();
    G1.clearLog();
    G2.clearLog();
  }
};

std::shared_ptr<Buffer> bufferOf(BufferManager &M, void *P) {
  BufferManager::Resolved R;
  EXPECT_TRUE(M.resolve(P, R).ok());
  return R.Buf;
}

/// Plays a kernel on device \p L writing \p Value over \p R of \p B.
void deviceWrites(BufferManager &M, FakeDevice &D, Location L, Buffer &B,
                  ByteRange R, uint8_t Value) {
  DeviceAddr A = 0;
  ASSERT_TRUE(M.addressOn(B, L, R.Lo, A).ok());
  std::memset(D.hostView(A), Value, R.size());
  ASSERT_TRUE(M.markWritten(B, L, R).ok());
}

/// Every byte is valid somewhere.
void expectCovered(const BufferManager &M, const Buffer &B) {
  RangeSet All = B.validRanges(HostLocation);
  for (size_t D = 0; D < M.numDevices(); ++D)
    All.insert(B.validRanges(static_cast<Location>(D)));
  EXPECT_EQ(All, RangeSet(0, B.size()));
}

TEST(BuffersTest, PointersInsideAllocationsResolve) {
  BufferManager M({});
  void *P = nullptr, *Q = nullptr;
  ASSERT_TRUE(M.allocate(1000, P).ok());
  ASSERT_TRUE(M.allocate(24, Q).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(P) % 256, 0u);
  EXPECT_EQ(M.numBuffers(), 2u);
  BufferManager::Resolved R;
  ASSERT_TRUE(M.resolve(static_cast<char *>(P) + 999, R).ok());
  EXPECT_EQ(R.Offset, 999u);
  EXPECT_EQ(R.Buf->base(), P);
  EXPECT_EQ(R.Buf->size(), 1000u);
  ASSERT_TRUE(M.resolve(Q, R).ok());
  EXPECT_EQ(R.Offset, 0u);
  EXPECT_FALSE(M.resolve(static_cast<char *>(P) + 1000, R).ok());
  int Local = 0;
  Result E = M.resolve(&Local, R);
  EXPECT_EQ(E.code(), ErrorCode::InvalidValue);
  EXPECT_FALSE(R.Buf);
  EXPECT_TRUE(M.isDevicePointer(static_cast<char *>(P) + 10));
  EXPECT_FALSE(M.isDevicePointer(&Local));
  ASSERT_TRUE(M.resolveRange(static_cast<char *>(P) + 900, 100, R).ok());
  E = M.resolveRange(static_cast<char *>(P) + 900, 101, R);
  EXPECT_EQ(E.code(), ErrorCode::InvalidValue);
  EXPECT_NE(E.message().find("overrun"), std::string::npos) << E.message();
  EXPECT_TRUE(M.free(P).ok());
  EXPECT_TRUE(M.free(Q).ok());
  EXPECT_EQ(M.numBuffers(), 0u);
}

TEST(BuffersTest, ZeroBytesAndNull) {
  BufferManager M({});
  void *P = reinterpret_cast<void *>(1);
  ASSERT_TRUE(M.allocate(0, P).ok());
  EXPECT_EQ(P, nullptr);
  EXPECT_TRUE(M.free(nullptr).ok());
  EXPECT_TRUE(M.memcpy(nullptr, nullptr, 0).ok());
}

TEST(BuffersTest, BadFreesAreErrorsNotCrashes) {
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(4096, P).ok());
  auto B = bufferOf(F.M, P);
  deviceWrites(F.M, F.G0, 0, *B, {0, 4096}, 7); // a replica to free too
  Result E = F.M.free(static_cast<char *>(P) + 8);
  EXPECT_EQ(E.code(), ErrorCode::InvalidValue);
  EXPECT_NE(E.message().find("inside buffer"), std::string::npos);
  int Local;
  EXPECT_EQ(F.M.free(&Local).code(), ErrorCode::InvalidValue);
  ASSERT_TRUE(F.M.free(P).ok());
  EXPECT_EQ(F.G0.numAllocations(), 0u); // the replica went with it
  E = F.M.free(P);
  EXPECT_EQ(E.code(), ErrorCode::InvalidValue);
  EXPECT_NE(E.message().find("double free"), std::string::npos) << E.message();
  E = F.M.free(static_cast<char *>(P) + 8);
  EXPECT_EQ(E.code(), ErrorCode::InvalidValue);
}

TEST(BuffersTest, UseAfterFreeIsAnError) {
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(512, P).ok());
  auto B = bufferOf(F.M, P); // a reference that outlives the free
  ASSERT_TRUE(F.M.free(P).ok());
  char Host[16] = {};
  Result E = F.M.memcpy(Host, P, 16, MemcpyKind::DeviceToHost);
  EXPECT_EQ(E.code(), ErrorCode::InvalidValue);
  EXPECT_NE(E.message().find("free"), std::string::npos) << E.message();
  EXPECT_EQ(F.M.memcpy(P, Host, 16, MemcpyKind::HostToDevice).code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(F.M.memset(P, 0, 16).code(), ErrorCode::InvalidValue);
  // Through the stale reference: refused, not a crash.
  EXPECT_EQ(F.M.makeValid(*B, 0, {0, 16}).code(), ErrorCode::InvalidValue);
  EXPECT_EQ(F.M.markWritten(*B, 0, {0, 16}).code(), ErrorCode::InvalidValue);
  DeviceAddr A;
  EXPECT_EQ(F.M.addressOn(*B, 1, 0, A).code(), ErrorCode::InvalidValue);
}

TEST(BuffersTest, OutOfRangeAndMalformedCopies) {
  BufferManager M({});
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(100, P).ok());
  std::vector<char> Host(200);
  EXPECT_EQ(M.memcpy(P, Host.data(), 101, MemcpyKind::HostToDevice).code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(M.memcpy(Host.data(), static_cast<char *>(P) + 50, 51,
                     MemcpyKind::DeviceToHost)
                .code(),
            ErrorCode::InvalidValue);
  // The wrong direction: a host pointer where a device pointer must be.
  EXPECT_EQ(M.memcpy(Host.data(), Host.data() + 100, 10,
                     MemcpyKind::DeviceToHost)
                .code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(M.memcpy(P, Host.data(), 10, static_cast<MemcpyKind>(7)).code(),
            ErrorCode::InvalidMemcpyDirection);
  EXPECT_EQ(M.memcpy(nullptr, Host.data(), 10).code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(M.memset(static_cast<char *>(P) + 1, 0, 100).code(),
            ErrorCode::InvalidValue);
  auto B = bufferOf(M, P);
  EXPECT_EQ(M.markWritten(*B, HostLocation, {0, 101}).code(),
            ErrorCode::InvalidValue);
  EXPECT_EQ(M.makeValid(*B, 3, {0, 10}).code(), ErrorCode::InvalidDevice);
  std::vector<Transfer> Plan;
  EXPECT_FALSE(M.planTransfers(*B, HostLocation, {50, 200}, Plan).ok());
  ASSERT_TRUE(M.free(P).ok());
}

TEST(BuffersTest, MemcpyEveryKind) {
  FakeMachine F;
  void *A = nullptr, *B = nullptr;
  ASSERT_TRUE(F.M.allocate(256, A).ok());
  ASSERT_TRUE(F.M.allocate(256, B).ok());
  std::vector<uint8_t> In(256), Out(256, 0);
  std::iota(In.begin(), In.end(), 0);
  ASSERT_TRUE(F.M.memcpy(A, In.data(), 256, MemcpyKind::HostToDevice).ok());
  ASSERT_TRUE(F.M.memcpy(B, A, 256, MemcpyKind::DeviceToDevice).ok());
  ASSERT_TRUE(F.M.memcpy(Out.data(), B, 256, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(In, Out);
  // Default infers the direction; pointers inside allocations work.
  ASSERT_TRUE(F.M.memcpy(static_cast<char *>(A) + 10, In.data() + 100, 20).ok());
  ASSERT_TRUE(F.M.memcpy(Out.data(), static_cast<char *>(A) + 10, 20).ok());
  EXPECT_EQ(0, std::memcmp(Out.data(), In.data() + 100, 20));
  // Overlapping within one buffer behaves as memmove.
  ASSERT_TRUE(F.M.memcpy(A, In.data(), 256).ok());
  ASSERT_TRUE(F.M.memcpy(static_cast<char *>(A) + 1, A, 100).ok());
  ASSERT_TRUE(F.M.memcpy(Out.data(), A, 101).ok());
  EXPECT_EQ(Out[0], 0);
  EXPECT_EQ(0, std::memcmp(Out.data() + 1, In.data(), 100));
  // Host to host.
  std::vector<uint8_t> Other(256);
  ASSERT_TRUE(
      F.M.memcpy(Other.data(), In.data(), 256, MemcpyKind::HostToHost).ok());
  EXPECT_EQ(Other, In);
  // Nothing touched a device.
  EXPECT_TRUE(F.G0.Log.empty() && F.G1.Log.empty() && F.G2.Log.empty());
}

TEST(BuffersTest, FreshBufferMovesNothing) {
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(1 << 16, P).ok());
  auto B = bufferOf(F.M, P);
  ASSERT_TRUE(F.M.makeValid(*B, 0, {0, 1 << 16}).ok());
  ASSERT_EQ(F.G0.Log.size(), 1u); // the replica allocation, no copy
  EXPECT_EQ(F.G0.Log[0].What, "alloc");
  EXPECT_TRUE(F.M.missingRanges(*B, 2, {0, 1 << 16}).empty());
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, WritesInvalidateOtherCopies) {
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(4096, P).ok());
  auto B = bufferOf(F.M, P);
  deviceWrites(F.M, F.G0, 0, *B, {1000, 3000}, 1);
  EXPECT_EQ(B->validRanges(0), RangeSet(0, 4096));
  RangeSet Stale;
  Stale.insert(0, 1000);
  Stale.insert(3000, 4096);
  EXPECT_EQ(B->validRanges(HostLocation), Stale);
  EXPECT_EQ(B->validRanges(1), Stale);
  EXPECT_EQ(F.M.missingRanges(*B, 1, {0, 4096}), RangeSet(1000, 3000));
  EXPECT_EQ(F.M.missingRanges(*B, 2, {2000, 2500}), RangeSet(2000, 2500));
  EXPECT_TRUE(F.M.missingRanges(*B, 0, {0, 4096}).empty());
  expectCovered(F.M, *B);
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, StateChangesCountOnlyWhatChanges) {
  // The engine repeats a launch when the count has not moved since the
  // same launch changed nothing: marking writes a device already holds
  // alone, and noting the same reads, must not count; anything that
  // changes validity or the pending-copy sets must.
  FakeMachine F;
  void *P = nullptr;
  uint64_t C0 = F.M.stateChanges();
  ASSERT_TRUE(F.M.allocate(4096, P).ok());
  EXPECT_GT(F.M.stateChanges(), C0);
  auto B = bufferOf(F.M, P);
  uint64_t C = F.M.stateChanges();
  deviceWrites(F.M, F.G0, 0, *B, {1000, 3000}, 1); // replica, then a write
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  // The same bytes, written again where they are valid alone.
  ASSERT_TRUE(F.M.markWritten(*B, 0, {1000, 3000}).ok());
  ASSERT_TRUE(F.M.markWritten(*B, 0, {1500, 2000}).ok());
  RangeSet Two;
  Two.insert(1000, 1100);
  Two.insert(2900, 3000);
  ASSERT_TRUE(F.M.markAllWritten(*B, 0, Two).ok());
  EXPECT_EQ(F.M.stateChanges(), C);
  // Bytes gpu0 does not hold alone: the host copy and gpu1 hold [0, 1000).
  ASSERT_TRUE(F.M.markWritten(*B, 0, {999, 1001}).ok());
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  // Written elsewhere: gpu1 now holds [1000, 1200) alone.
  deviceWrites(F.M, F.G1, 1, *B, {1000, 1200}, 2);
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  // A launch's reads: the host reads of the last launch are replaced, and
  // are the same the second time.
  RangeSet Reads(0, 512);
  F.M.noteLaunchReads(*B, {{0, &Reads}}, RangeSet(0, 512));
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  F.M.noteLaunchReads(*B, {{0, &Reads}}, RangeSet(0, 512));
  EXPECT_EQ(F.M.stateChanges(), C);
  // Where they were read (gpu0), kept by a launch that read nothing of
  // the buffer, replaced by the next that did (gpu1, its reads counted
  // for the host: a host-sharing device's).
  EXPECT_EQ(B->lastReadBytes({0, 4096}, 0), 512u);
  EXPECT_EQ(B->lastReadBytes({256, 4096}, 0), 256u);
  EXPECT_EQ(B->lastReadBytes({0, 4096}, 1), 0u);
  RangeSet None;
  F.M.noteLaunchReads(*B, {{1, &None}}, RangeSet(0, 512));
  EXPECT_EQ(F.M.stateChanges(), C);
  EXPECT_EQ(B->lastReadBytes({0, 4096}, 0), 512u);
  RangeSet Other(1024, 2048);
  F.M.noteLaunchReads(*B, {{1, &Other}, {HostLocation, &Reads}},
                      RangeSet(0, 512));
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  EXPECT_EQ(B->lastReadBytes({0, 4096}, 0), 0u);
  EXPECT_EQ(B->lastReadBytes({0, 4096}, 1), 1024u);
  EXPECT_EQ(B->lastReadBytes({0, 4096}, HostLocation), 512u);
  // Host-side operations and transfers always count.
  std::vector<char> Host(4096, 7);
  ASSERT_TRUE(F.M.memcpy(P, Host.data(), 64, MemcpyKind::HostToDevice).ok());
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  ASSERT_TRUE(F.M.memset(P, 0, 64).ok());
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  ASSERT_TRUE(F.M.makeValid(*B, 2, {0, 4096}).ok());
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  ASSERT_TRUE(F.M.syncToHost(P, 4096).ok());
  EXPECT_GT(F.M.stateChanges(), C);
  C = F.M.stateChanges();
  ASSERT_TRUE(F.M.free(P).ok());
  EXPECT_GT(F.M.stateChanges(), C);
}

TEST(BuffersTest, StagedBytesUntilADeviceFetchesOrWritesThem) {
  // A host-to-device cudaMemcpy and a cudaMemset write the host copy; in
  // CUDA those bytes would be on the device already (the model policy does
  // not charge their first fetch). A device that fetches them, or a kernel
  // that overwrites them, ends that.
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(4096, P).ok());
  auto B = bufferOf(F.M, P);
  EXPECT_EQ(B->stagedBytes({0, 4096}), 0u); // fresh: nothing written
  std::vector<char> Src(2048, 7);
  ASSERT_TRUE(F.M.memcpy(P, Src.data(), 2048, MemcpyKind::HostToDevice).ok());
  EXPECT_EQ(B->stagedBytes({0, 4096}), 2048u);
  ASSERT_TRUE(F.M.memset(static_cast<char *>(P) + 3072, 0, 1024).ok());
  EXPECT_EQ(B->stagedBytes({0, 4096}), 3072u);
  EXPECT_EQ(B->stagedBytes({1024, 3584}), 1024u + 512u);
  // gpu0 fetches [0, 1024): no longer staged.
  ASSERT_TRUE(F.M.makeValid(*B, 0, {0, 1024}).ok());
  EXPECT_EQ(B->stagedBytes({0, 4096}), 2048u);
  // A kernel on gpu1 overwrites [1024, 1536).
  deviceWrites(F.M, F.G1, 1, *B, {1024, 1536}, 3);
  EXPECT_EQ(B->stagedBytes({0, 4096}), 1536u);
  // Reading back to the host changes nothing staged.
  std::vector<char> Dst(4096);
  ASSERT_TRUE(F.M.memcpy(Dst.data(), P, 4096, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(B->stagedBytes({0, 4096}), 1536u);
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, ReadBackBytesFollowTheHostsReadsOfKernelResults) {
  // Results a kernel wrote on a device and the host then read: the model
  // policy expects the next results there to be read back too, until a
  // kernel writes them again without the host reading them in between.
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(4096, P).ok());
  auto B = bufferOf(F.M, P);
  std::vector<char> Dst(4096);
  deviceWrites(F.M, F.G0, 0, *B, {0, 2048}, 1);
  EXPECT_EQ(B->readBackBytes({0, 4096}), 0u);
  // The host reads [1024, 3072): only gpu0's part came from a device.
  ASSERT_TRUE(F.M.memcpy(Dst.data(), static_cast<char *>(P) + 1024, 2048,
                         MemcpyKind::DeviceToHost)
                  .ok());
  EXPECT_EQ(B->readBackBytes({0, 4096}), 1024u);
  // Written again: still expected back (it was read after the last write).
  deviceWrites(F.M, F.G1, 1, *B, {0, 2048}, 2);
  EXPECT_EQ(B->readBackBytes({0, 4096}), 1024u);
  // Written once more without a read in between: no longer.
  deviceWrites(F.M, F.G0, 0, *B, {0, 1536}, 3);
  EXPECT_EQ(B->readBackBytes({0, 4096}), 512u);
  // A second read of bytes the host already holds fetches nothing.
  ASSERT_TRUE(F.M.memcpy(Dst.data(), static_cast<char *>(P) + 2048, 2048,
                         MemcpyKind::DeviceToHost)
                  .ok());
  EXPECT_EQ(B->readBackBytes({2048, 4096}), 0u);
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, PlannerPrefersPeerThenHostThenStaging) {
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(4096, P).ok());
  auto B = bufferOf(F.M, P);
  deviceWrites(F.M, F.G0, 0, *B, {0, 1024}, 5);
  std::vector<Transfer> Plan;
  // gpu1 has a link to gpu0: its bytes come over the link; the rest is
  // fresh everywhere, so nothing else moves.
  ASSERT_TRUE(F.M.planTransfers(*B, 1, {0, 4096}, Plan).ok());
  EXPECT_EQ(Plan, (std::vector<Transfer>{{0, 1, 0, 1024}}));
  // The host wrote the rest: gpu1 gets the two parts from their owners.
  std::vector<uint8_t> H(3072, 9);
  ASSERT_TRUE(F.M.memcpy(static_cast<char *>(P) + 1024, H.data(), 3072).ok());
  ASSERT_TRUE(F.M.planTransfers(*B, 1, {0, 4096}, Plan).ok());
  EXPECT_EQ(Plan, (std::vector<Transfer>{{0, 1, 0, 1024},
                                         {HostLocation, 1, 1024, 3072}}));
  // gpu2 has no link to gpu0: through the host copy.
  ASSERT_TRUE(F.M.planTransfers(*B, 2, {512, 2048}, Plan).ok());
  EXPECT_EQ(Plan, (std::vector<Transfer>{{HostLocation, 2, 1024, 1024},
                                         {0, HostLocation, 512, 512},
                                         {HostLocation, 2, 512, 512}}));
  // Run it: the data arrives, the host became valid on the way.
  F.clearLogs();
  ASSERT_TRUE(F.M.executeTransfers(*B, Plan).ok());
  EXPECT_EQ(F.G0.bytes("d2h"), 512u);
  EXPECT_EQ(F.G2.bytes("h2d"), 1536u);
  EXPECT_TRUE(F.M.missingRanges(*B, 2, {512, 2048}).empty());
  EXPECT_TRUE(B->validRanges(HostLocation).contains(512, 4096));
  DeviceAddr A2;
  ASSERT_TRUE(F.M.addressOn(*B, 2, 0, A2).ok());
  EXPECT_EQ(F.G2.hostView(A2)[600], 5);
  EXPECT_EQ(F.G2.hostView(A2)[1500], 9);
  // Executing gpu1's plan uses the peer link.
  F.clearLogs();
  ASSERT_TRUE(F.M.makeValid(*B, 1, {0, 4096}).ok());
  EXPECT_EQ(F.G0.count("peer"), 1u);
  EXPECT_EQ(F.G0.Log.back().Peer, "gpu1");
  EXPECT_EQ(F.G1.bytes("h2d"), 3072u);
  expectCovered(F.M, *B);
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, HostReadPullsOnlyStaleRanges) {
  FakeMachine F;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(8192, P).ok());
  auto B = bufferOf(F.M, P);
  std::vector<uint8_t> Init(8192, 1), Out(8192);
  ASSERT_TRUE(F.M.memcpy(P, Init.data(), 8192).ok());
  deviceWrites(F.M, F.G1, 1, *B, {1024, 2048}, 2);
  deviceWrites(F.M, F.G2, 2, *B, {4096, 4100}, 3);
  F.clearLogs();
  ASSERT_TRUE(F.M.memcpy(Out.data(), P, 8192).ok());
  EXPECT_EQ(F.G1.bytes("d2h"), 1024u);
  EXPECT_EQ(F.G2.bytes("d2h"), 4u);
  for (size_t I = 0; I < 8192; ++I)
    ASSERT_EQ(Out[I], I >= 1024 && I < 2048   ? 2
                      : I >= 4096 && I < 4100 ? 3
                                              : 1)
        << I;
  // A second read moves nothing; the device copies stay valid.
  F.clearLogs();
  ASSERT_TRUE(F.M.syncToHost(P, 8192).ok());
  EXPECT_TRUE(F.G1.Log.empty() && F.G2.Log.empty());
  EXPECT_TRUE(B->validRanges(1).contains(1024, 2048));
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, HostCopiesThatCrossAgainArePinned) {
  NullGpu G0(0), G1(1);
  BufferManager M({&G0, &G1});
  ASSERT_EQ(M.hostPinning(), HostPinning::Reused); // the default
  const uint64_t Big = 8u << 20, Small = 1u << 20;
  // The host writes the buffer, then gpu0 fetches all of it.
  auto Cross = [&](void *X, uint64_t Bytes) {
    ASSERT_TRUE(M.memset(X, 1, Bytes).ok());
    ASSERT_TRUE(
        M.executeTransfers(*bufferOf(M, X), {{HostLocation, 0, 0, Bytes}})
            .ok());
  };
  void *P = nullptr, *Q = nullptr;
  ASSERT_TRUE(M.allocate(Big, P).ok());
  ASSERT_TRUE(M.allocate(Small, Q).ok());
  Cross(P, Big);
  Cross(Q, Small);
  EXPECT_TRUE(G0.registered().empty()); // each crossed once
  Cross(P, Big);
  Cross(Q, Small); // below PinMinBytes: staging copies it as fast
  ASSERT_EQ(G0.registered().size(), 1u);
  EXPECT_EQ(G0.registered().begin()->first, P);
  uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  EXPECT_GE(G0.registered().begin()->second, Big);
  EXPECT_EQ(G0.registered().begin()->second % Page, 0u);
  EXPECT_EQ(M.pinnedBuffers(), 1u);
  Cross(P, Big); // pinned once
  EXPECT_EQ(G0.registered().size(), 1u);
  EXPECT_TRUE(G1.registered().empty());
  // Freeing unpins before the memory goes.
  ASSERT_TRUE(M.free(P).ok());
  EXPECT_TRUE(G0.registered().empty());
  EXPECT_EQ(M.pinnedBuffers(), 0u);

  // Always: at the first crossing, whichever way (gpu1 writes, the host
  // reads). Off: never.
  M.setHostPinning(HostPinning::Always);
  void *R = nullptr;
  ASSERT_TRUE(M.allocate(Big, R).ok());
  auto BR = bufferOf(M, R);
  DeviceAddr A = 0;
  ASSERT_TRUE(M.addressOn(*BR, 1, 0, A).ok());
  ASSERT_TRUE(M.markWritten(*BR, 1, {0, Big}).ok());
  ASSERT_TRUE(M.syncToHost(R, Big).ok());
  ASSERT_EQ(G1.registered().size(), 1u);
  EXPECT_EQ(G1.registered().begin()->first, R);
  M.setHostPinning(HostPinning::Off);
  void *S = nullptr;
  ASSERT_TRUE(M.allocate(Big, S).ok());
  for (int I = 0; I < 3; ++I)
    Cross(S, Big);
  EXPECT_TRUE(G0.registered().empty());
  EXPECT_EQ(M.pinnedBuffers(), 1u);
  for (void *X : {Q, R, S})
    ASSERT_TRUE(M.free(X).ok());
  EXPECT_TRUE(G1.registered().empty());
}

// CLEAVE_TUNE's pin_host and host_copies are parsed by OptionsTest and
// handed to the manager by the runtime (ApiDevice.TheRuntimeHandsItsOptions
// Down); a manager of its own pins reused copies and copies large ones
// directly.
TEST(BuffersTest, PinningAndDirectCopiesByDefault) {
  NullGpu G0(0);
  BufferManager M({&G0});
  EXPECT_EQ(M.hostPinning(), HostPinning::Reused);
  EXPECT_TRUE(M.directHostCopies());
  M.setHostPinning(HostPinning::Off);
  EXPECT_EQ(M.hostPinning(), HostPinning::Off);
  M.setDirectHostCopies(false);
  EXPECT_FALSE(M.directHostCopies());
}

TEST(BuffersTest, DeviceResidentDataStaysOnDevice) {
  FakeMachine F;
  void *Src = nullptr, *Dst = nullptr;
  ASSERT_TRUE(F.M.allocate(1024, Src).ok());
  ASSERT_TRUE(F.M.allocate(1024, Dst).ok());
  auto S = bufferOf(F.M, Src), D = bufferOf(F.M, Dst);
  deviceWrites(F.M, F.G1, 1, *S, {0, 1024}, 4);
  F.clearLogs();
  // cudaMemcpy device to device and cudaMemset of data living on gpu1
  // happen on gpu1; the host copy is not involved.
  ASSERT_TRUE(F.M.memcpy(Dst, Src, 1024, MemcpyKind::DeviceToDevice).ok());
  EXPECT_EQ(F.G1.count("d2d"), 1u);
  EXPECT_EQ(D->validRanges(1), RangeSet(0, 1024));
  EXPECT_TRUE(D->validRanges(HostLocation).empty());
  ASSERT_TRUE(F.M.memset(static_cast<char *>(Dst) + 100, 0xEE, 10).ok());
  EXPECT_EQ(F.G1.count("memset"), 1u);
  EXPECT_TRUE(F.G1.count("d2h") == 0 && F.G1.count("h2d") == 0);
  std::vector<uint8_t> Out(1024);
  ASSERT_TRUE(F.M.memcpy(Out.data(), Dst, 1024).ok());
  for (size_t I = 0; I < 1024; ++I)
    ASSERT_EQ(Out[I], I >= 100 && I < 110 ? 0xEE : 4) << I;
  ASSERT_TRUE(F.M.free(Src).ok());
  ASSERT_TRUE(F.M.free(Dst).ok());
}

TEST(BuffersTest, ReplicaOutOfMemoryLosesNothing) {
  FakeDevice Small("gpu0", 1000);
  BufferManager M({&Small});
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(4096, P).ok());
  std::vector<uint8_t> In(4096, 3), Out(4096);
  ASSERT_TRUE(M.memcpy(P, In.data(), 4096).ok());
  auto B = bufferOf(M, P);
  Result E = M.makeValid(*B, 0, {0, 4096});
  EXPECT_EQ(E.code(), ErrorCode::MemoryAllocation);
  EXPECT_NE(E.message().find("gpu0"), std::string::npos) << E.message();
  EXPECT_FALSE(B->hasReplica(0));
  ASSERT_TRUE(M.memcpy(Out.data(), P, 4096).ok());
  EXPECT_EQ(In, Out);
  ASSERT_TRUE(M.free(P).ok());
}

TEST(BuffersTest, TheHomeDeviceTakesTheProgramsCopies) {
  // One GPU beside a CPU device: the program's copies and memsets land on
  // it, of any size, as under CUDA; the host copy holds none of them, and
  // reads come back right. Without room for a replica there, they stay in
  // the host copy.
  FakeDevice Gpu("gpu0");
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
  BufferManager M({Reg->devices()[0], &Gpu});
  EXPECT_EQ(M.soleDeviceWithOwnMemory(), 1);
  EXPECT_EQ(M.homeDevice(), -1);
  M.setHomeDevice(M.soleDeviceWithOwnMemory());
  const uint64_t Big = BufferManager::DirectCopyMinBytes + 4096;
  for (uint64_t Size : {uint64_t(4096), Big}) {
    void *P = nullptr;
    ASSERT_TRUE(M.allocate(Size, P).ok());
    auto B = bufferOf(M, P);
    EXPECT_TRUE(B->hasReplica(1)) << "allocated with the buffer";
    // Fresh: its undefined contents are the home device's alone, so that a
    // launch there finds nothing to move or make stale.
    EXPECT_TRUE(B->heldOnlyBy(1));
    EXPECT_TRUE(B->validRanges(HostLocation).empty());
    std::vector<uint8_t> In(Size);
    std::iota(In.begin(), In.end(), uint8_t(1));
    Gpu.clearLog();
    ASSERT_TRUE(M.memcpy(P, In.data(), Size, MemcpyKind::HostToDevice).ok());
    EXPECT_TRUE(B->holds(1, {0, Size})) << Size;
    EXPECT_TRUE(B->validRanges(HostLocation).empty()) << Size;
    EXPECT_EQ(B->stagedBytes({0, Size}), 0u) << Size;
    EXPECT_TRUE(B->heldOnlyBy(1)) << Size;
    EXPECT_FALSE(B->heldOnlyBy(0)) << Size; // cpu0: the host copy
    ASSERT_TRUE(M.memset(static_cast<char *>(P) + 100, 9, 50).ok());
    EXPECT_TRUE(B->holds(1, {0, Size})) << Size;
    EXPECT_TRUE(B->validRanges(HostLocation).empty()) << Size;
    std::fill(In.begin() + 100, In.begin() + 150, uint8_t(9));
    std::vector<uint8_t> Out(Size);
    ASSERT_TRUE(M.memcpy(Out.data(), P, Size, MemcpyKind::DeviceToHost).ok());
    EXPECT_EQ(In, Out) << Size;
    ASSERT_TRUE(M.free(P).ok());
  }
  FakeDevice Small("gpu0", 1000);
  BufferManager N({Reg->devices()[0], &Small});
  N.setHomeDevice(N.soleDeviceWithOwnMemory());
  void *P = nullptr;
  ASSERT_TRUE(N.allocate(4096, P).ok());
  EXPECT_TRUE(bufferOf(N, P)->holds(HostLocation, {0, 4096}))
      << "no room on the home device: held everywhere";
  std::vector<uint8_t> In(4096, 5), Out(4096);
  ASSERT_TRUE(N.memcpy(P, In.data(), 4096, MemcpyKind::HostToDevice).ok());
  EXPECT_TRUE(bufferOf(N, P)->holds(HostLocation, {0, 4096}));
  ASSERT_TRUE(N.memcpy(Out.data(), P, 4096, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(In, Out);
  ASSERT_TRUE(N.free(P).ok());
  // Two GPUs: no home device.
  FakeDevice G0("gpu0"), G1("gpu1");
  BufferManager Two({&G0, &G1});
  EXPECT_EQ(Two.soleDeviceWithOwnMemory(), -1);
}

TEST(BuffersTest, ReadsFromTheOnlyGpuSkipTheHostCopy) {
  // One GPU, no CPU device: a read goes from the GPU straight into the
  // program's memory, whatever its size, and the host copy stays stale
  // (nothing computes on it); the next read fetches again, as CUDA does.
  FakeDevice Gpu("gpu0");
  BufferManager M({&Gpu});
  M.setHomeDevice(M.soleDeviceWithOwnMemory());
  ASSERT_EQ(M.homeDevice(), 0);
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(4096, P).ok());
  std::vector<uint8_t> In(4096, 7), Out(4096);
  ASSERT_TRUE(M.memcpy(P, In.data(), 4096, MemcpyKind::HostToDevice).ok());
  for (int Read = 0; Read < 2; ++Read) {
    Gpu.clearLog();
    ASSERT_TRUE(M.memcpy(Out.data(), P, 4096, MemcpyKind::DeviceToHost).ok());
    EXPECT_EQ(Gpu.bytes("d2h"), 4096u) << Read;
    EXPECT_EQ(In, Out);
    EXPECT_TRUE(bufferOf(M, P)->validRanges(HostLocation).empty()) << Read;
  }
  ASSERT_TRUE(M.free(P).ok());
}

TEST(BuffersTest, TwoDimensionalCopiesMoveOnceWithTheHomeDevice) {
  // cudaMemcpy2D into and out of a pitched buffer on the home device: one
  // 2-D transfer each way, not one per row; the bytes between the rows
  // (the pitch's padding) are not touched.
  FakeDevice Gpu("gpu0");
  std::unique_ptr<DeviceRegistry> Reg;
  ASSERT_TRUE(DeviceRegistry::create("cpu", Reg, RegistryOptions{"none"}).ok());
  BufferManager M({Reg->devices()[0], &Gpu});
  M.setHomeDevice(M.soleDeviceWithOwnMemory());
  const uint64_t Pitch = 64, Width = 40, Height = 10;
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(Pitch * Height, P).ok());
  ASSERT_TRUE(M.memset(P, 0xab, Pitch * Height).ok());
  std::vector<uint8_t> In(Width * Height);
  std::iota(In.begin(), In.end(), uint8_t(1));
  Gpu.clearLog();
  ASSERT_TRUE(M.memcpy2D(P, Pitch, In.data(), Width, Width, Height,
                         MemcpyKind::HostToDevice)
                  .ok());
  EXPECT_EQ(Gpu.count("h2d-2d"), 1u);
  EXPECT_EQ(Gpu.count("h2d"), 0u);
  auto B = bufferOf(M, P);
  EXPECT_TRUE(B->heldOnlyBy(1));
  // Read back whole: the rows, and the padding as it was.
  std::vector<uint8_t> All(Pitch * Height);
  ASSERT_TRUE(M.memcpy(All.data(), P, All.size(), MemcpyKind::DeviceToHost)
                  .ok());
  for (uint64_t Row = 0; Row < Height; ++Row)
    for (uint64_t X = 0; X < Pitch; ++X)
      ASSERT_EQ(All[Row * Pitch + X],
                X < Width ? In[Row * Width + X] : uint8_t(0xab))
          << Row << ", " << X;
  // Out again into a wider host pitch: one transfer.
  std::vector<uint8_t> Out(48 * Height, 0);
  Gpu.clearLog();
  ASSERT_TRUE(M.memcpy2D(Out.data(), 48, P, Pitch, Width, Height,
                         MemcpyKind::DeviceToHost)
                  .ok());
  EXPECT_EQ(Gpu.count("d2h-2d"), 1u);
  for (uint64_t Row = 0; Row < Height; ++Row)
    for (uint64_t X = 0; X < Width; ++X)
      ASSERT_EQ(Out[Row * 48 + X], In[Row * Width + X]) << Row << ", " << X;
  // A row past the buffer's end is refused before anything moves.
  EXPECT_FALSE(M.memcpy2D(P, Pitch, In.data(), Width, Width, Height + 1,
                          MemcpyKind::HostToDevice)
                   .ok());
  ASSERT_TRUE(M.free(P).ok());
}

/// Several real CPU devices: cpu0 works on the host copies, cpu1 and cpu2
/// on replicas of their own; the planner copies between them directly.
TEST(BuffersTest, SeveralCpuDevices) {
  std::unique_ptr<DeviceRegistry> Reg;
  RegistryOptions Opts;
  Opts.CudaLibrary = "none";
  ASSERT_TRUE(DeviceRegistry::create("cpu,cpu,cpu", Reg, Opts).ok());
  BufferManager M(Reg->devices());
  EXPECT_EQ(M.validityLocation(0), HostLocation);
  EXPECT_EQ(M.validityLocation(1), 1);
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(1 << 20, P).ok());
  auto B = bufferOf(M, P);
  std::vector<uint32_t> In(1 << 18);
  std::iota(In.begin(), In.end(), 0u);
  ASSERT_TRUE(M.memcpy(P, In.data(), 1 << 20).ok());
  // cpu1 reads everything, then "computes" the second half in place.
  ASSERT_TRUE(M.makeValid(*B, 1, {0, 1 << 20}).ok());
  DeviceAddr A1;
  ASSERT_TRUE(M.addressOn(*B, 1, 0, A1).ok());
  EXPECT_NE(reinterpret_cast<void *>(A1), P); // its own memory
  auto *W = reinterpret_cast<uint32_t *>(A1);
  for (size_t I = In.size() / 2; I < In.size(); ++I)
    W[I] *= 3;
  ASSERT_TRUE(M.markWritten(*B, 1, {1 << 19, 1 << 20}).ok());
  // cpu2 reads the second half: straight from cpu1.
  std::vector<Transfer> Plan;
  ASSERT_TRUE(M.planTransfers(*B, 2, {1 << 19, 1 << 20}, Plan).ok());
  EXPECT_EQ(Plan, (std::vector<Transfer>{{1, 2, 1 << 19, 1 << 19}}));
  ASSERT_TRUE(M.makeValid(*B, 2, {0, 1 << 20}).ok());
  DeviceAddr A2;
  ASSERT_TRUE(M.addressOn(*B, 2, 0, A2).ok());
  auto *R2 = reinterpret_cast<const uint32_t *>(A2);
  EXPECT_EQ(R2[5], 5u);
  EXPECT_EQ(R2[In.size() - 1], 3u * (In.size() - 1));
  // cpu0 (= the host copy) reading pulls the written half.
  ASSERT_TRUE(M.makeValid(*B, 0, {0, 1 << 20}).ok());
  EXPECT_EQ(static_cast<uint32_t *>(P)[In.size() - 1], 3u * (In.size() - 1));
  ASSERT_TRUE(M.free(P).ok());
}

/// Random operations by the host and three devices against a plain array:
/// whatever any location reads after makeValid must be the latest data.
TEST(BuffersTest, LargeHostCopiesGoStraightToAndFromTheDevicesHoldingThem) {
  // Direct host copies (from 1 KiB here): the bytes a device's replica held
  // go from the program's memory to that device, the rest to the host copy;
  // reads take stale bytes straight from the devices. A device whose copy
  // fails keeps nothing, and its bytes land in the host copy.
  FakeMachine F;
  F.M.setDirectHostCopies(true, 1024);
  constexpr uint64_t Size = 8192;
  void *P = nullptr;
  ASSERT_TRUE(F.M.allocate(Size, P).ok());
  auto B = bufferOf(F.M, P);
  auto Write = [&](uint8_t V, uint64_t Lo, uint64_t Hi) {
    std::vector<uint8_t> H(Hi - Lo, V);
    ASSERT_TRUE(F.M.memcpy(static_cast<char *>(P) + Lo, H.data(), H.size(),
                           MemcpyKind::HostToDevice)
                    .ok());
  };
  auto DeviceHas = [&](FakeDevice &D, Location L, uint64_t Lo, uint64_t Hi,
                       uint8_t V) {
    DeviceAddr A = 0;
    EXPECT_TRUE(F.M.addressOn(*B, L, 0, A).ok());
    for (uint64_t I = Lo; I < Hi; ++I)
      if (uint8_t(D.hostView(A)[I]) != V)
        return false;
    return true;
  };
  // No device has a replica yet: all of it goes to the host copy.
  Write(1, 0, Size);
  EXPECT_EQ(B->validRanges(HostLocation), RangeSet(0, Size));
  EXPECT_EQ(B->stagedBytes({0, Size}), Size);
  // gpu0 and gpu2 read parts; the next write sends them their parts.
  ASSERT_TRUE(F.M.makeValid(*B, 0, {0, 4096}).ok());
  ASSERT_TRUE(F.M.makeValid(*B, 2, {4096, 6144}).ok());
  F.clearLogs();
  Write(2, 0, Size);
  EXPECT_EQ(F.G0.bytes("h2d"), 4096u);
  EXPECT_EQ(F.G2.bytes("h2d"), 2048u);
  EXPECT_EQ(F.G1.Log.size(), 0u);
  EXPECT_EQ(B->validRanges(0), RangeSet(0, 4096));
  EXPECT_EQ(B->validRanges(2), RangeSet(4096, 6144));
  EXPECT_EQ(B->validRanges(HostLocation), RangeSet(6144, Size));
  EXPECT_EQ(B->stagedBytes({0, Size}), 2048u);
  EXPECT_TRUE(DeviceHas(F.G0, 0, 0, 4096, 2));
  EXPECT_TRUE(DeviceHas(F.G2, 2, 4096, 6144, 2));
  // Below the minimum: the host copy only, as before.
  F.clearLogs();
  Write(3, 0, 1000);
  EXPECT_EQ(F.G0.Log.size(), 0u);
  EXPECT_EQ(B->validRanges(0), RangeSet(1000, 4096));
  // A read takes the stale bytes from the devices, leaving the host copy
  // as it was.
  std::vector<uint8_t> Want(Size, 2), Got(Size);
  std::fill(Want.begin(), Want.begin() + 1000, 3);
  ASSERT_TRUE(F.M.memcpy(Got.data(), P, Size, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(Got, Want);
  EXPECT_EQ(F.G0.bytes("d2h"), 3096u);
  EXPECT_EQ(F.G2.bytes("d2h"), 2048u);
  RangeSet HostHas(0, 1000);
  HostHas.insert(6144, Size);
  EXPECT_EQ(B->validRanges(HostLocation), HostHas);
  EXPECT_EQ(B->readBackBytes({0, Size}), 3096u + 2048u);
  // gpu0 refuses: its part stays in the host copy; gpu2 still gets its own.
  F.G0.FailHostToDevice = true;
  Write(4, 0, Size);
  F.G0.FailHostToDevice = false;
  EXPECT_TRUE(B->validRanges(0).empty());
  EXPECT_EQ(B->validRanges(2), RangeSet(4096, 6144));
  RangeSet HostNow(0, 4096);
  HostNow.insert(6144, Size);
  EXPECT_EQ(B->validRanges(HostLocation), HostNow);
  expectCovered(F.M, *B);
  ASSERT_TRUE(F.M.memcpy(Got.data(), P, Size, MemcpyKind::DeviceToHost).ok());
  EXPECT_EQ(Got, std::vector<uint8_t>(Size, 4));
  // Without direct copies every write lands in the host copy.
  F.M.setDirectHostCopies(false);
  F.clearLogs();
  Write(5, 0, Size);
  EXPECT_EQ(F.G2.Log.size(), 0u);
  EXPECT_EQ(B->validRanges(HostLocation), RangeSet(0, Size));
  ASSERT_TRUE(F.M.free(P).ok());
}

TEST(BuffersTest, RandomOperationsMatchModel) {
  // Host copies of 64 bytes and more go direct in every other run. Reads
  // recorded as a launch's (BufferManager::noteLaunchReads) change where
  // direct host writes send their bytes, never what any copy holds.
  for (unsigned Seed = 1; Seed <= 16; ++Seed) {
    FakeMachine F;
    F.M.setDirectHostCopies(Seed % 2 == 0, 64);
    std::mt19937_64 Rng(Seed);
    constexpr uint64_t Size = 2048;
    void *P = nullptr, *Q = nullptr;
    ASSERT_TRUE(F.M.allocate(Size, P).ok());
    ASSERT_TRUE(F.M.allocate(Size, Q).ok());
    auto BP = bufferOf(F.M, P), BQ = bufferOf(F.M, Q);
    std::vector<uint8_t> ModelP(Size), ModelQ(Size);
    for (uint64_t I = 0; I < Size; ++I)
      ModelP[I] = static_cast<uint8_t>(Rng()), ModelQ[I] = 0;
    ASSERT_TRUE(F.M.memcpy(P, ModelP.data(), Size).ok());
    ASSERT_TRUE(F.M.memset(Q, 0, Size).ok());
    FakeDevice *Devs[] = {&F.G0, &F.G1, &F.G2};
    for (int Step = 0; Step < 400; ++Step) {
      uint64_t Lo = Rng() % Size;
      uint64_t Hi = std::min(Size, Lo + 1 + Rng() % 300);
      ByteRange R{Lo, Hi};
      Location L = static_cast<Location>(Rng() % 3);
      uint8_t V = static_cast<uint8_t>(Rng());
      switch (Rng() % 7) {
      case 6: { // a device writes rows (one call for the whole set)
        uint64_t Rows = 2 + Rng() % 24, Width = 1 + Rng() % 16;
        uint64_t Pitch = Width + 1 + Rng() % 32;
        RangeSet Set;
        DeviceAddr A = 0;
        ASSERT_TRUE(F.M.addressOn(*BP, L, 0, A).ok());
        for (uint64_t Row = 0; Row < Rows; ++Row) {
          uint64_t RLo = Lo + Row * Pitch, RHi = std::min(Size, RLo + Width);
          if (RLo >= Size)
            break;
          Set.insert(RLo, RHi);
          std::memset(Devs[L]->hostView(A) + RLo, V, RHi - RLo);
          std::fill(ModelP.begin() + RLo, ModelP.begin() + RHi, V);
        }
        ASSERT_TRUE(F.M.markAllWritten(*BP, L, Set).ok());
        break;
      }
      case 0: // a device writes
        deviceWrites(F.M, *Devs[L], L, *BP, R, V);
        std::fill(ModelP.begin() + Lo, ModelP.begin() + Hi, V);
        break;
      case 1: { // a device reads
        ASSERT_TRUE(F.M.makeValid(*BP, L, R).ok());
        DeviceAddr A;
        ASSERT_TRUE(F.M.addressOn(*BP, L, 0, A).ok());
        ASSERT_EQ(0, std::memcmp(Devs[L]->hostView(A) + Lo,
                                 ModelP.data() + Lo, R.size()))
            << "seed " << Seed << " step " << Step;
        // As a launch records it: the read, and sometimes as a CPU
        // range's, which the next direct host write keeps in the host copy.
        if (Rng() % 2) {
          RangeSet Read(Lo, Hi);
          F.M.noteLaunchReads(*BP, {{L, &Read}},
                              Rng() % 2 ? RangeSet(Lo, Hi) : RangeSet());
          EXPECT_EQ(BP->pushedBytes(R), 0u);
        }
        break;
      }
      case 2: { // the host writes
        std::vector<uint8_t> H(R.size(), V);
        ASSERT_TRUE(F.M.memcpy(static_cast<char *>(P) + Lo, H.data(),
                               R.size())
                        .ok());
        std::fill(ModelP.begin() + Lo, ModelP.begin() + Hi, V);
        break;
      }
      case 3: { // the host reads
        std::vector<uint8_t> H(R.size());
        ASSERT_TRUE(F.M.memcpy(H.data(), static_cast<char *>(P) + Lo,
                               R.size())
                        .ok());
        ASSERT_EQ(0, std::memcmp(H.data(), ModelP.data() + Lo, R.size()))
            << "seed " << Seed << " step " << Step;
        break;
      }
      case 4: // memset
        ASSERT_TRUE(F.M.memset(static_cast<char *>(P) + Lo, V, R.size()).ok());
        std::fill(ModelP.begin() + Lo, ModelP.begin() + Hi, V);
        break;
      case 5: { // device-to-device copy P -> Q at another offset
        uint64_t To = Rng() % (Size - R.size() + 1);
        ASSERT_TRUE(F.M.memcpy(static_cast<char *>(Q) + To,
                               static_cast<char *>(P) + Lo, R.size(),
                               MemcpyKind::DeviceToDevice)
                        .ok());
        std::copy(ModelP.begin() + Lo, ModelP.begin() + Hi,
                  ModelQ.begin() + To);
        break;
      }
      }
      expectCovered(F.M, *BP);
      expectCovered(F.M, *BQ);
      if (HasFailure())
        return;
    }
    std::vector<uint8_t> Out(Size);
    ASSERT_TRUE(F.M.memcpy(Out.data(), Q, Size).ok());
    EXPECT_EQ(Out, ModelQ) << "seed " << Seed;
    ASSERT_TRUE(F.M.free(P).ok());
    ASSERT_TRUE(F.M.free(Q).ok());
  }
}

} // namespace
