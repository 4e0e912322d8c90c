//===- ManagedTest.cpp - Managed buffers: host writes, page by page ------===//
//
// Part of Cleave. Managed buffers (BufferManager::allocateManaged) over fake
// GPU-like devices (FakeDevice.h): the host's writes to a write-protected
// host copy are recorded page by page and become written at the host before
// work starts (only those pages move), a device's result reaches the host
// copy at a synchronization, a CPU kernel's write under protection is
// recorded rather than broken, guard regions still fault as kernel faults,
// and a protected buffer frees.
//
//===----------------------------------------------------------------------===//
#include "FakeDevice.h"

#include "cleave/rt/Buffers.h"
#include "cleave/rt/KernelFault.h"
#include "cleave/rt/ManagedPages.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstring>

#include <unistd.h>

using namespace cleave::rt;
using cleave::rt::test::FakeDevice;

namespace {

uint64_t page() { return uint64_t(sysconf(_SC_PAGESIZE)); }

std::shared_ptr<Buffer> bufferOf(BufferManager &M, void *P) {
  BufferManager::Resolved R;
  EXPECT_TRUE(M.resolve(P, R).ok());
  return R.Buf;
}

/// The host (or the runtime) writes \p V at byte \p Off of \p P.
void hostWrite(void *P, uint64_t Off, char V) {
  static_cast<volatile char *>(P)[Off] = V;
}

TEST(ManagedTest, OnlyThePagesTheHostWroteMove) {
  FakeDevice G0{"gpu0"};
  BufferManager M{{&G0}};
  const uint64_t Bytes = 64 * page();
  void *P = nullptr;
  ASSERT_TRUE(M.allocateManaged(Bytes, P).ok());
  EXPECT_TRUE(M.isManaged(static_cast<char *>(P) + 100));
  std::shared_ptr<Buffer> B = bufferOf(M, P);
  // The host fills it whole; a launch on gpu0 reads it.
  std::memset(P, 1, Bytes);
  ASSERT_TRUE(M.managedToDevices().ok());
  EXPECT_EQ(B->validRanges(0), RangeSet());
  ASSERT_TRUE(M.makeValid(*B, 0, {0, Bytes}).ok());
  EXPECT_EQ(G0.bytes("h2d"), Bytes);
  // A synchronization: nothing changed on gpu0, nothing comes back.
  G0.clearLog();
  ASSERT_TRUE(M.managedToHost().ok());
  EXPECT_EQ(G0.bytes("d2h"), 0u);
  // Three pages written, two of them in one run with a page between.
  uint64_t Before = managedWriteFaults();
  hostWrite(P, 3 * page() + 7, 2);
  hostWrite(P, 10 * page(), 3);
  hostWrite(P, 40 * page() + page() - 1, 4);
  hostWrite(P, 40 * page(), 5); // the same page again: no fault
  EXPECT_EQ(managedWriteFaults() - Before, 3u);
  ASSERT_TRUE(M.managedToDevices().ok());
  RangeSet Stale(0, Bytes);
  Stale.erase(B->validRanges(0));
  RangeSet Expected;
  for (uint64_t Pg : {3, 10, 40})
    Expected.insert(Pg * page(), (Pg + 1) * page());
  EXPECT_EQ(Stale, Expected);
  G0.clearLog();
  ASSERT_TRUE(M.makeValid(*B, 0, {0, Bytes}).ok());
  EXPECT_EQ(G0.bytes("h2d"), 3 * page());
  // Work is outstanding: a write now is the runtime's own (a copy into
  // the host copy), which the buffer manager records itself; the page only
  // opens. The next synchronization closes just the pages opened.
  Before = managedWriteFaults();
  hostWrite(P, 20 * page(), 6);
  EXPECT_EQ(managedWriteFaults() - Before, 1u);
  ASSERT_TRUE(M.managedToHost().ok());
  ASSERT_TRUE(M.managedToDevices().ok());
  EXPECT_TRUE(B->holds(0, {0, Bytes}));
  Before = managedWriteFaults();
  hostWrite(P, 20 * page(), 7);
  hostWrite(P, 3 * page(), 7);
  EXPECT_EQ(managedWriteFaults() - Before, 2u);
  ASSERT_TRUE(M.free(P).ok());
}

TEST(ManagedTest, ADevicesResultIsInTheHostCopyAfterSynchronization) {
  FakeDevice G0{"gpu0"};
  BufferManager M{{&G0}};
  const uint64_t Bytes = 8 * page() + 512; // not whole pages
  void *P = nullptr;
  ASSERT_TRUE(M.allocateManaged(Bytes, P).ok());
  std::shared_ptr<Buffer> B = bufferOf(M, P);
  std::memset(P, 0, Bytes);
  ASSERT_TRUE(M.managedToDevices().ok());
  // A kernel on gpu0 writes [1000, 5000).
  DeviceAddr A = 0;
  ASSERT_TRUE(M.addressOn(*B, 0, 0, A).ok());
  ASSERT_TRUE(M.makeValid(*B, 0, {0, Bytes}).ok());
  std::memset(static_cast<char *>(G0.hostView(A)) + 1000, 9, 4000);
  ASSERT_TRUE(M.markWritten(*B, 0, {1000, 5000}).ok());
  G0.clearLog();
  ASSERT_TRUE(M.managedToHost().ok());
  EXPECT_EQ(G0.bytes("d2h"), 4000u);
  const char *C = static_cast<const char *>(P);
  for (uint64_t I = 0; I < Bytes; ++I)
    ASSERT_EQ(C[I], I >= 1000 && I < 5000 ? 9 : 0) << I;
  // Protected again: a host write after the synchronization is recorded,
  // and the next launch on gpu0 gets its page.
  hostWrite(P, Bytes - 1, 7);
  ASSERT_TRUE(M.managedToDevices().ok());
  EXPECT_FALSE(B->holds(0, {Bytes - 1, Bytes}));
  EXPECT_TRUE(B->holds(0, {0, 4000}));
  ASSERT_TRUE(M.makeValid(*B, 0, {0, Bytes}).ok());
  EXPECT_EQ(static_cast<char *>(G0.hostView(A))[Bytes - 1], 7);
}

void writeFirstByte(void *P) { hostWrite(P, 0, 42); }
void writePastTheEnd(void *P) { hostWrite(P, 0, 1); }

TEST(ManagedTest, AKernelsWriteUnderProtectionIsRecordedAndGuardsStillFault) {
  FakeDevice G0{"gpu0"};
  BufferManager M{{&G0}};
  const uint64_t Bytes = 4 * page();
  void *P = nullptr;
  ASSERT_TRUE(M.allocateManaged(Bytes, P).ok());
  std::shared_ptr<Buffer> B = bufferOf(M, P);
  ASSERT_TRUE(M.makeValid(*B, 0, {0, Bytes}).ok());
  // A CPU kernel's range writing the protected host copy: the write runs
  // (the runtime is never broken by the protection) and counts as the
  // host's.
  KernelFault F;
  ASSERT_TRUE(runGuarded(writeFirstByte, P, F));
  EXPECT_EQ(static_cast<char *>(P)[0], 42);
  ASSERT_TRUE(M.managedToDevices().ok());
  EXPECT_FALSE(B->holds(0, {0, 1}));
  EXPECT_TRUE(B->holds(0, {page(), Bytes}));
  // While work is outstanding the write is the engine's to record (a CPU
  // kernel on the host copy marks its own writes): not the host's.
  ASSERT_TRUE(M.makeValid(*B, 0, {0, Bytes}).ok());
  ASSERT_TRUE(runGuarded(writeFirstByte, static_cast<char *>(P) + page(), F));
  ASSERT_TRUE(M.managedToDevices().ok());
  EXPECT_TRUE(B->holds(0, {0, Bytes}));
  // A write past the end lands in the guard region, protected or not: the
  // kernel's fault, as before.
  char *End = static_cast<char *>(P) + Bytes;
  for (bool Protect : {false, true}) {
    if (Protect)
      ASSERT_TRUE(M.managedToHost().ok());
    ASSERT_FALSE(runGuarded(writePastTheEnd, End + 64, F)) << Protect;
    EXPECT_EQ(F.Signal, SIGSEGV);
    EXPECT_EQ(F.Address, reinterpret_cast<uintptr_t>(End + 64));
  }
  ASSERT_TRUE(M.free(P).ok());
}

TEST(ManagedTest, FillingALargeArrayFaultsFewTimes) {
  BufferManager M({});
  const uint64_t Pages = 4096;
  void *P = nullptr;
  ASSERT_TRUE(M.allocateManaged(Pages * page(), P).ok());
  uint64_t Before = managedWriteFaults();
  std::memset(P, 3, Pages * page());
  // Runs open ahead by as many pages as they hold, 512 at most.
  EXPECT_LE(managedWriteFaults() - Before, 24u);
  ASSERT_TRUE(M.managedToDevices().ok());
  EXPECT_EQ(bufferOf(M, P)->validRanges(HostLocation),
            RangeSet(0, Pages * page()));
  ASSERT_TRUE(M.free(P).ok());
}

TEST(ManagedTest, ProtectedBuffersFree) {
  FakeDevice G0{"gpu0"};
  BufferManager M{{&G0}};
  for (int I = 0; I < 3; ++I) {
    void *P = nullptr, *Q = nullptr;
    ASSERT_TRUE(M.allocateManaged(3 * page(), P).ok());
    ASSERT_TRUE(M.allocateManaged(100, Q).ok());
    hostWrite(P, 5, 1); // one page open, the others protected
    ASSERT_TRUE(M.free(P).ok());
    ASSERT_TRUE(M.free(Q).ok());
    EXPECT_FALSE(M.hasManaged());
  }
  // Ordinary buffers are not managed.
  void *P = nullptr;
  ASSERT_TRUE(M.allocate(100, P).ok());
  EXPECT_FALSE(M.isManaged(P));
  EXPECT_FALSE(M.hasManaged());
  EXPECT_EQ(M.allocateManaged(0, P).code(), ErrorCode::Success);
}

} // namespace
