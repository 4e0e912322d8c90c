//===- Buffers.cpp - Virtual device pointers and replica validity ---------===//
//
// Part of Cleave's runtime (no LLVM). See Buffers.h for the design.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Buffers.h"
#include "cleave/rt/GuardedMemory.h"
#include "cleave/rt/HostCopy.h"
#include "cleave/rt/ManagedPages.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include <sys/mman.h>


namespace cleave {
namespace rt {

namespace {
/// Recently freed ranges remembered for messages; beyond this many the
/// oldest knowledge is dropped (messages only get less specific).
constexpr size_t MaxFreedRemembered = 4096;

/// A host copy that no CPU kernel runs on: no guards (an allocation and a
/// free cost 0.04 us from the heap against 15 us for a guarded mapping);
/// NoReserveBytes and larger mapped as the guarded ones are.
char *allocatePlainHostCopy(uint64_t Bytes) {
  if (Bytes >= NoReserveBytes) {
    void *P = mmap(nullptr, Bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return P == MAP_FAILED ? nullptr : static_cast<char *>(P);
  }
  // 256-byte alignment, as cudaMalloc guarantees (mmap gives pages).
  uint64_t Rounded = (Bytes + 255) & ~uint64_t(255);
  return static_cast<char *>(std::aligned_alloc(256, Rounded));
}

void freePlainHostCopy(char *P, uint64_t Bytes) {
  if (Bytes >= NoReserveBytes)
    munmap(P, Bytes);
  else
    std::free(P);
}

std::string describeRange(uint64_t Lo, uint64_t Hi) {
  return "[" + std::to_string(Lo) + "," + std::to_string(Hi) + ")";
}
} // namespace

Buffer::Buffer(BufferManager &M, char *Host, uint64_t Size, uint64_t Id,
               size_t NumDevices)
    : Mgr(M), Host(Host), Size(Size), Id(Id), Valid(NumDevices + 1),
      LastReads(NumDevices + 1), Replica(NumDevices + 1, 0) {}

RangeSet Buffer::validRanges(Location L) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Valid[static_cast<size_t>(Mgr.validityLocation(L) + 1)];
}

bool Buffer::holds(Location L, ByteRange R) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Valid[static_cast<size_t>(Mgr.validityLocation(L) + 1)].contains(
      R.Lo, R.Hi);
}

bool Buffer::heldOnlyBy(Location L) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  Location Own = Mgr.validityLocation(L);
  // Only the locations validity is kept for: the host copy and each device
  // with memory of its own (a host-sharing device's slot is the host's).
  for (Location X = HostLocation; X < Location(Mgr.numDevices()); ++X) {
    if (Mgr.validityLocation(X) != X)
      continue;
    const RangeSet &V = Valid[static_cast<size_t>(X + 1)];
    if (X == Own ? !V.contains(0, Size) : !V.empty())
      return false;
  }
  return true;
}

/// The bytes of \p R in \p S.
static uint64_t bytesWithin(const RangeSet &S, ByteRange R) {
  uint64_t N = 0;
  for (ByteRange X : S.intersection(R.Lo, R.Hi))
    N += X.size();
  return N;
}

uint64_t Buffer::stagedBytes(ByteRange R) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return bytesWithin(Staged, R);
}

uint64_t Buffer::readBackBytes(ByteRange R) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return bytesWithin(ReadBack, R);
}

uint64_t Buffer::pushedBytes(ByteRange R) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return bytesWithin(Pushed, R);
}

uint64_t Buffer::lastReadBytes(ByteRange R, Location L) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  size_t S = static_cast<size_t>(Mgr.validityLocation(L) + 1);
  return S < LastReads.size() ? bytesWithin(LastReads[S], R) : 0;
}

Buffer::State Buffer::state() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  State S;
  S.Valid = Valid;
  S.LastReads = LastReads;
  S.Staged = Staged;
  S.ReadBack = ReadBack;
  S.FetchedSinceWrite = FetchedSinceWrite;
  S.Pushed = Pushed;
  S.HostReads = HostReads;
  S.Replica = Replica;
  S.HostLinkBytes = HostLinkBytes;
  S.ProgramWrites = ProgramWrites;
  S.ProgramReads = ProgramReads;
  S.PinTried = PinTried;
  S.PinnedBy = PinnedBy;
  return S;
}

template <class X, class Y> bool Buffer::sameFields(const X &A, const Y &B) {
  return A.Valid == B.Valid && A.LastReads == B.LastReads &&
         A.Staged == B.Staged && A.ReadBack == B.ReadBack &&
         A.FetchedSinceWrite == B.FetchedSinceWrite && A.Pushed == B.Pushed &&
         A.HostReads == B.HostReads && A.Replica == B.Replica &&
         A.HostLinkBytes == B.HostLinkBytes &&
         A.ProgramWrites == B.ProgramWrites &&
         A.ProgramReads == B.ProgramReads && A.PinTried == B.PinTried &&
         A.PinnedBy == B.PinnedBy;
}

bool Buffer::State::operator==(const State &O) const {
  return sameFields(*this, O);
}

bool Buffer::inState(const State &S) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return sameFields(*this, S);
}

uint64_t Buffer::programWrites() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return ProgramWrites;
}

uint64_t Buffer::programReads() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return ProgramReads;
}

bool Buffer::hasReplica(Location L) const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Replica[static_cast<size_t>(Mgr.validityLocation(L) + 1)] != 0;
}

BufferManager::BufferManager(std::vector<Device *> Devs)
    : Devices(std::move(Devs)), Deferred(Devices.size()) {
  for (Device *D : Devices)
    HostCopyWorks |= D->kind() == DeviceKind::Cpu;
  GuardHostCopies = HostCopyWorks;
}

size_t BufferManager::pinnedBuffers() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  size_t N = 0;
  for (auto &[Start, B] : Live) {
    std::lock_guard<std::mutex> BLock(B->Mutex);
    N += B->PinnedBy >= 0;
  }
  return N;
}

void BufferManager::maybePinLocked(Buffer &B, Location Gpu, uint64_t Bytes) {
  if (Pinning == HostPinning::Off || B.PinTried || B.Size < PinMinBytes)
    return;
  B.HostLinkBytes += Bytes;
  if (Pinning == HostPinning::Reused && B.HostLinkBytes <= B.Size)
    return;
  B.PinTried = true; // once: a refusal (a locked-memory limit) stays
  // The data's whole pages (the data itself need not start on a page),
  // writable: a managed buffer's may be write-protected (ManagedPages.h).
  PageSpan Pages = guardedPages(B.Host, B.Size);
  if (B.Region && !openManagedRegion(B.Region))
    return;
  if (Devices[Gpu]->registerHostMemory(Pages.Start, Pages.Bytes).ok())
    B.PinnedBy = Gpu;
}

BufferManager::~BufferManager() {
  (void)settle();
  for (size_t I = 0; I < Deferred.size(); ++I) {
    if (Deferred[I].Done)
      (void)Devices[I]->destroyEvent(Deferred[I].Done);
    for (DeferredWork::Tail &T : Deferred[I].Tails)
      (void)Devices[I]->destroyEvent(T.Done);
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  for (auto &[Start, B] : Live) {
    std::lock_guard<std::mutex> BLock(B->Mutex);
    releaseLocked(*B);
  }
  Live.clear();
  Managed.clear();
  ManagedCount.store(0, std::memory_order_release);
}

Location BufferManager::validityLocation(Location L) const {
  if (L >= 0 && static_cast<size_t>(L) < Devices.size() &&
      Devices[L]->properties().SharesHostMemory)
    return HostLocation;
  return L;
}

//===-- Allocation and pointers -------------------------------------------===//

Result BufferManager::allocate(uint64_t Bytes, void *&Ptr) {
  return allocateBuffer(Bytes, /*Managed=*/false, Ptr);
}

Result BufferManager::allocateBuffer(uint64_t Bytes, bool IsManaged,
                                     void *&Ptr) {
  Ptr = nullptr;
  if (Bytes == 0)
    return Result::success();
  bool Guard = GuardHostCopies || IsManaged;
  char *Host = Guard ? allocateGuarded(Bytes, /*MayFallBack=*/!IsManaged)
                     : allocatePlainHostCopy(Bytes);
  if (!Host)
    return Result::error(ErrorCode::MemoryAllocation,
                         "cannot allocate " + std::to_string(Bytes) +
                             " bytes of host memory for a buffer");
  ManagedRegion *Region = nullptr;
  if (IsManaged) {
    PageSpan Pages = guardedPages(Host, Bytes);
    Region = addManagedRegion(Pages.Start, Pages.Bytes);
    // Host writes are tracked from the start: the host may fill it now.
    if (!Region || !protectManagedRegion(Region)) {
      removeManagedRegion(Region);
      freeGuarded(Host, Bytes);
      return Result::error(ErrorCode::MemoryAllocation,
                           "cannot track the pages of managed memory (" +
                               std::to_string(MaxManagedRegions) +
                               " managed allocations at most)");
    }
  }
  std::lock_guard<std::mutex> Lock(Mutex);
  std::shared_ptr<Buffer> B(
      new Buffer(*this, Host, Bytes, NextId++, Devices.size()));
  B->Guarded = Guard;
  B->Region = Region;
  // A fresh buffer's contents are undefined, hence the same everywhere:
  // valid in every location, so nothing moves before it is first written.
  for (RangeSet &V : B->Valid)
    V.insert(0, Bytes);
  B->Replica[0] = reinterpret_cast<DeviceAddr>(Host);
  for (size_t D = 0; D < Devices.size(); ++D)
    if (Devices[D]->properties().SharesHostMemory)
      B->Replica[D + 1] = B->Replica[0];
  // The home device's memory now, as cudaMalloc takes it, not at the first
  // copy or launch (which a program times); without room there, later.
  // There, the undefined contents are held by the home device alone, as
  // CUDA's are: a launch on it finds every byte in place and no other copy
  // to make stale (no footprints needed; Api "Direct launches").
  // Not for managed memory: the host may read it before any work runs.
  if (Home >= 0 && !IsManaged && ensureReplicaLocked(*B, Home).ok())
    for (Location L = HostLocation; L < Location(Devices.size()); ++L)
      if (validityLocation(L) == L && L != validityLocation(Home))
        B->Valid[slot(L)].clear();
  uintptr_t Start = reinterpret_cast<uintptr_t>(Host);
  // The addresses are live again: forget that they were once freed.
  auto It = Freed.upper_bound(Start);
  if (It != Freed.begin() && std::prev(It)->second > Start)
    --It;
  while (It != Freed.end() && It->first < Start + Bytes)
    It = Freed.erase(It);
  if (IsManaged) {
    Managed.emplace(Start, B);
    ManagedCount.store(Managed.size(), std::memory_order_release);
    ManagedHostAccess.store(true, std::memory_order_release);
  }
  Live.emplace(Start, std::move(B));
  Ptr = Host;
  noteChange();
  return Result::success();
}

Result BufferManager::free(void *Ptr) {
  if (!Ptr)
    return Result::success();
  if (Result S = settle(); !S.ok())
    return S;
  std::shared_ptr<Buffer> B;
  {
    std::lock_guard<std::mutex> Lock(Mutex);
    uintptr_t P = reinterpret_cast<uintptr_t>(Ptr);
    auto It = Live.find(P);
    if (It == Live.end()) {
      auto In = Live.upper_bound(P);
      if (In != Live.begin()) {
        --In;
        if (P < In->first + In->second->size())
          return Result::error(
              ErrorCode::InvalidValue,
              "free of a pointer inside buffer #" +
                  std::to_string(In->second->id()) + " (offset " +
                  std::to_string(P - In->first) +
                  "); only the pointer the allocation returned can be freed");
      }
      auto F = Freed.upper_bound(P);
      if (F != Freed.begin() && P < std::prev(F)->second)
        return Result::error(ErrorCode::InvalidValue,
                             std::prev(F)->first == P
                                 ? "double free of a buffer"
                                 : "free of a pointer into a freed buffer");
      return Result::error(ErrorCode::InvalidValue,
                           "free of a pointer the runtime never allocated");
    }
    B = It->second;
    Live.erase(It);
    if (Managed.erase(P))
      ManagedCount.store(Managed.size(), std::memory_order_release);
    if (Freed.size() >= MaxFreedRemembered)
      Freed.clear();
    Freed[P] = P + B->size();
  }
  ChangeCounter Count{*this};
  std::lock_guard<std::mutex> BLock(B->Mutex);
  releaseLocked(*B);
  return Result::success();
}

void BufferManager::releaseLocked(Buffer &B) {
  if (B.Freed)
    return;
  B.Freed = true;
  if (B.PinnedBy >= 0)
    (void)Devices[B.PinnedBy]->unregisterHostMemory(
        guardedPages(B.Host, B.Size).Start);
  B.PinnedBy = -1;
  for (size_t D = 0; D < Devices.size(); ++D)
    if (validityLocation(static_cast<Location>(D)) != HostLocation &&
        B.Replica[D + 1])
      // A device that cannot free is past saving; the buffer goes anyway.
      (void)Devices[D]->free(B.Replica[D + 1]);
  for (RangeSet &V : B.Valid)
    V.clear();
  std::fill(B.Replica.begin(), B.Replica.end(), 0);
  removeManagedRegion(B.Region);
  B.Region = nullptr;
  if (B.Guarded)
    freeGuarded(B.Host, B.Size);
  else
    freePlainHostCopy(B.Host, B.Size);
}

Result BufferManager::resolve(const void *Ptr, Resolved &Out) const {
  Out = Resolved();
  uintptr_t P = reinterpret_cast<uintptr_t>(Ptr);
  std::lock_guard<std::mutex> Lock(Mutex);
  auto It = Live.upper_bound(P);
  if (It != Live.begin()) {
    --It;
    if (P < It->first + It->second->size()) {
      Out.Buf = It->second;
      Out.Offset = P - It->first;
      return Result::success();
    }
  }
  auto F = Freed.upper_bound(P);
  if (F != Freed.begin() && P < std::prev(F)->second)
    return Result::error(ErrorCode::InvalidValue,
                         "use after free: the pointer is in a freed buffer");
  return Result::error(ErrorCode::InvalidValue,
                       "not a device pointer (no allocation contains it)");
}

Result BufferManager::resolveRange(const void *P, uint64_t Bytes,
                                   Resolved &Out) const {
  Result R = resolve(P, Out);
  if (!R.ok())
    return R;
  if (Bytes > Out.Buf->size() - Out.Offset) {
    Result E = Result::error(
        ErrorCode::InvalidValue,
        std::to_string(Bytes) + " bytes at offset " +
            std::to_string(Out.Offset) + " overrun buffer #" +
            std::to_string(Out.Buf->id()) + " of " +
            std::to_string(Out.Buf->size()) + " bytes");
    Out = Resolved();
    return E;
  }
  return Result::success();
}

bool BufferManager::isDevicePointer(const void *P) const {
  Resolved R;
  return resolve(P, R).ok();
}

size_t BufferManager::numBuffers() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  return Live.size();
}

//===-- Validity and transfers --------------------------------------------===//

Result BufferManager::checkRange(const Buffer &B, Location L,
                                 ByteRange R) const {
  if (B.Freed)
    return Result::error(ErrorCode::InvalidValue,
                         "use after free of buffer #" + std::to_string(B.Id));
  if (!isLocation(L))
    return Result::error(ErrorCode::InvalidDevice,
                         "no device " + std::to_string(L));
  if (R.Lo > R.Hi || R.Hi > B.Size)
    return Result::error(ErrorCode::InvalidValue,
                         "range " + describeRange(R.Lo, R.Hi) +
                             " is outside buffer #" + std::to_string(B.Id) +
                             " of " + std::to_string(B.Size) + " bytes");
  return Result::success();
}

RangeSet BufferManager::missingRanges(const Buffer &B, Location L,
                                      ByteRange R) const {
  RangeSet Out;
  std::lock_guard<std::mutex> Lock(B.Mutex);
  if (!checkRange(B, L, R).ok())
    return Out;
  for (ByteRange G : B.Valid[slot(L)].gaps(R.Lo, R.Hi))
    Out.insert(G);
  return Out;
}

void BufferManager::noteLaunchReads(
    Buffer &B, const std::vector<std::pair<Location, const RangeSet *>> &Reads,
    RangeSet HostReads) {
  std::vector<RangeSet> At(B.LastReads.size());
  bool Any = false;
  for (const auto &[L, R] : Reads)
    if (isLocation(L) && !R->empty()) {
      At[slot(L)].insert(*R);
      Any = true;
    }
  std::lock_guard<std::mutex> Lock(B.Mutex);
  bool Changed = B.HostReads != HostReads || (Any && B.LastReads != At);
  if (!B.Pushed.empty())
    for (const auto &[L, R] : Reads)
      if (!B.Pushed.intersection(*R).empty()) {
        B.Pushed.erase(*R);
        Changed = true;
      }
  B.HostReads = std::move(HostReads);
  if (Any)
    B.LastReads = std::move(At);
  if (Changed)
    noteChange();
}

namespace {
/// Whether some byte of \p Rs is in \p S.
bool meets(const RangeSet &S, const std::vector<ByteRange> &Rs) {
  if (S.empty())
    return false;
  for (ByteRange R : Rs)
    if (S.intersects(R.Lo, R.Hi))
      return true;
  return false;
}
} // namespace

void BufferManager::markWrittenLocked(Buffer &B, Location L,
                                      const RangeSet &Rs) {
  // Whether anything below changes (a launch that writes what it wrote
  // last time, where it wrote it, changes nothing).
  size_t S = slot(L);
  std::vector<ByteRange> List = Rs.ranges();
  bool Changed = meets(B.Pushed, List);
  for (size_t I = 0; I < B.Valid.size() && !Changed; ++I)
    if (I != S)
      Changed = meets(B.Valid[I], List);
  for (size_t J = 0; J < List.size() && !Changed; ++J)
    Changed = !B.Valid[S].contains(List[J].Lo, List[J].Hi);
  if (L != HostLocation && !Changed)
    Changed = meets(B.Staged, List) || meets(B.ReadBack, List) ||
              meets(B.FetchedSinceWrite, List);
  if (!Changed)
    return;
  if (!B.Pushed.empty())
    B.Pushed.erase(Rs);
  if (!B.Received.empty())
    B.Received.erase(Rs);
  if (L != HostLocation) { // a kernel (or a copy on a device) wrote it
    B.Staged.erase(Rs);
    // Read back after their last write, or not: what to expect of these
    // (nothing to do for a buffer the host never read from a device).
    if (!B.ReadBack.empty() || !B.FetchedSinceWrite.empty()) {
      RangeSet Kept = B.FetchedSinceWrite.intersection(Rs);
      B.ReadBack.erase(Rs);
      B.ReadBack.insert(Kept);
      B.FetchedSinceWrite.erase(Rs);
    }
  }
  for (size_t I = 0; I < B.Valid.size(); ++I) {
    if (I == S)
      B.Valid[I].insert(Rs);
    else
      B.Valid[I].erase(Rs);
  }
  noteChange();
}

Result BufferManager::markWritten(Buffer &B, Location L, ByteRange R) {
  std::lock_guard<std::mutex> Lock(B.Mutex);
  Result C = checkRange(B, L, R);
  if (!C.ok())
    return C;
  markWrittenLocked(B, L, RangeSet(R.Lo, R.Hi));
  return Result::success();
}

Result BufferManager::markAllWritten(Buffer &B, Location L,
                                     const RangeSet &Rs) {
  if (Rs.empty())
    return Result::success();
  std::lock_guard<std::mutex> Lock(B.Mutex);
  std::vector<ByteRange> All = Rs.ranges();
  Result C = checkRange(B, L, {All.front().Lo, All.back().Hi});
  if (!C.ok())
    return C;
  markWrittenLocked(B, L, Rs);
  return Result::success();
}

Result BufferManager::planTransfers(const Buffer &B, Location Dst,
                                    ByteRange R,
                                    std::vector<Transfer> &Plan) const {
  std::lock_guard<std::mutex> Lock(B.Mutex);
  return transfersLocked(B, Dst, R, Plan);
}

Result BufferManager::transfersLocked(const Buffer &B, Location Dst, ByteRange R,
                                 std::vector<Transfer> &Plan) const {
  Plan.clear();
  Result C = checkRange(B, Dst, R);
  if (!C.ok())
    return C;
  Location D = validityLocation(Dst);
  RangeSet Need;
  for (ByteRange G : B.Valid[slot(D)].gaps(R.Lo, R.Hi))
    Need.insert(G);
  if (Need.empty())
    return Result::success();

  // Takes from \p Src every needed byte it holds (as copies to D, or to
  // the host then on to D when Staged).
  auto Take = [&](Location Src, bool Staged) {
    RangeSet Got = B.Valid[slot(Src)].intersection(Need);
    for (ByteRange G : Got.ranges()) {
      if (Staged) {
        Plan.push_back({Src, HostLocation, G.Lo, G.size()});
        Plan.push_back({HostLocation, D, G.Lo, G.size()});
      } else {
        Plan.push_back({Src, D, G.Lo, G.size()});
      }
    }
    Need.erase(Got);
  };
  // Devices that hold their own copy: a device's validity counts as a
  // source only once it has replica memory (a fresh buffer is "valid"
  // everywhere but exists only in the host copy until a device allocates).
  std::vector<Location> Sources;
  for (size_t I = 0; I < Devices.size(); ++I) {
    Location L = static_cast<Location>(I);
    if (L != D && validityLocation(L) == L && B.Replica[I + 1])
      Sources.push_back(L);
  }

  if (D == HostLocation) {
    for (Location S : Sources)
      if (!Need.empty())
        Take(S, false);
  } else {
    const Device &To = *Devices[D];
    for (Location S : Sources) // a direct GPU link beats the host
      if (!Need.empty() && Devices[S]->hasPeerLink(To))
        Take(S, false);
    if (!Need.empty())
      Take(HostLocation, false);
    for (Location S : Sources) // host-addressable memory on either side
      if (!Need.empty() && Devices[S]->canCopyDirectly(To))
        Take(S, false);
    for (Location S : Sources) // the rest goes through the host copy
      if (!Need.empty())
        Take(S, true);
  }
  if (!Need.empty()) {
    Plan.clear();
    return Result::error(ErrorCode::Unknown,
                         "bytes " + Need.toString() + " of buffer #" +
                             std::to_string(B.Id) +
                             " are valid nowhere (runtime bug)");
  }
  return Result::success();
}

DeviceAddr BufferManager::addressLocked(const Buffer &B, Location L,
                                        uint64_t Off) const {
  DeviceAddr Base = B.Replica[slot(L)];
  return Base ? Base + Off : 0;
}

Location BufferManager::soleDeviceWithOwnMemory() const {
  Location Sole = -1;
  for (size_t I = 0; I < Devices.size(); ++I) {
    Location L = static_cast<Location>(I);
    if (validityLocation(L) != L)
      continue;
    if (Sole >= 0)
      return -1;
    Sole = L;
  }
  return Sole;
}

Location BufferManager::homeFor(Buffer &B) {
  return Home >= 0 && ensureReplicaLocked(B, Home).ok() ? Home : -1;
}

Result BufferManager::ensureReplicaLocked(Buffer &B, Location L) {
  size_t S = slot(L);
  if (B.Replica[S])
    return Result::success();
  DeviceAddr A = 0;
  Result R = Devices[L]->allocate(B.Size, A);
  if (!R.ok())
    return Result::error(R.code(), "replica of buffer #" +
                                       std::to_string(B.Id) + " (" +
                                       std::to_string(B.Size) + " bytes) on " +
                                       Devices[L]->name() + ": " +
                                       R.message());
  B.Replica[S] = A;
  noteChange();
  return Result::success();
}

Result BufferManager::executeTransfers(Buffer &B,
                                       const std::vector<Transfer> &Plan) {
  if (!Plan.empty())
    if (Result S = settle(); !S.ok())
      return S;
  ChangeCounter Count{*this};
  std::lock_guard<std::mutex> Lock(B.Mutex);
  return executeLocked(B, Plan);
}

Result BufferManager::readyLocked(Buffer &B, const Transfer &T,
                                  ReadyCopy &Out) {
  Out = ReadyCopy();
  Out.T = T;
  ByteRange R{T.Offset, T.Offset + T.Bytes};
  if (R.Hi < R.Lo)
    return Result::error(ErrorCode::InvalidValue, "transfer range wraps");
  Result C = checkRange(B, T.Src, R);
  if (C.ok())
    C = checkRange(B, T.Dst, R);
  if (!C.ok())
    return C;
  Out.S = validityLocation(T.Src);
  Out.D = validityLocation(T.Dst);
  if (Out.S == Out.D || T.Bytes == 0) {
    Out.Skip = true;
    return Result::success();
  }
  if (!B.Replica[slot(Out.S)])
    return Result::error(ErrorCode::InvalidValue,
                         "transfer from " + Devices[Out.S]->name() +
                             ", which has no replica of buffer #" +
                             std::to_string(B.Id));
  if (Out.D != HostLocation) {
    Result A = ensureReplicaLocked(B, Out.D);
    if (!A.ok())
      return A;
    Out.DstAddr = addressLocked(B, Out.D, T.Offset);
  }
  if (Out.S != HostLocation)
    Out.SrcAddr = addressLocked(B, Out.S, T.Offset);
  if (Out.S == HostLocation || Out.D == HostLocation)
    maybePinLocked(B, Out.S == HostLocation ? Out.D : Out.S, T.Bytes);
  return Result::success();
}

Result BufferManager::runCopy(Buffer &B, const ReadyCopy &C,
                              StreamHandle PullOn) {
  const Transfer &T = C.T;
  Result X;
  if (PullOn && C.S != HostLocation && C.D != HostLocation)
    X = Devices[C.D]->pullFromPeer(*Devices[C.S], C.DstAddr, C.SrcAddr,
                                   T.Bytes, PullOn);
  else if (C.S == HostLocation)
    X = Devices[C.D]->copyHostToDevice(C.DstAddr, B.Host + T.Offset, T.Bytes);
  else if (C.D == HostLocation)
    X = Devices[C.S]->copyDeviceToHost(B.Host + T.Offset, C.SrcAddr, T.Bytes);
  else
    X = Devices[C.S]->copyDeviceToDevice(*Devices[C.D], C.DstAddr, C.SrcAddr,
                                         T.Bytes);
  if (X.ok())
    return X;
  auto Name = [&](Location L) {
    return L == HostLocation ? std::string("host") : Devices[L]->name();
  };
  return Result::error(X.code(),
                       "moving bytes " +
                           describeRange(T.Offset, T.Offset + T.Bytes) +
                           " of buffer #" + std::to_string(B.Id) + " from " +
                           Name(C.S) + " to " + Name(C.D) + ": " +
                           X.message());
}

void BufferManager::landLocked(Buffer &B, const ReadyCopy &C) {
  ByteRange R{C.T.Offset, C.T.Offset + C.T.Bytes};
  B.Valid[slot(C.D)].insert(R);
  if (C.S == HostLocation) // delivered to a device
    B.Staged.erase(R);
}

Result BufferManager::executeLocked(Buffer &B,
                                    const std::vector<Transfer> &Plan) {
  for (const Transfer &T : Plan) {
    ReadyCopy C;
    Result X = readyLocked(B, T, C);
    if (X.ok() && !C.Skip)
      X = runCopy(B, C);
    if (!X.ok())
      return X;
    if (!C.Skip)
      landLocked(B, C);
  }
  return Result::success();
}

Result BufferManager::executeTransfersUnlocked(
    Buffer &B, const std::vector<Transfer> &Plan, StreamHandle PullOn) {
  // Queued pulls go behind the deferred work (orderAfterDeferred()).
  if (!PullOn && !Plan.empty())
    if (Result S = settle(); !S.ok())
      return S;
  ChangeCounter Count{*this};
  std::vector<ReadyCopy> Ready(Plan.size());
  {
    std::lock_guard<std::mutex> Lock(B.Mutex);
    for (size_t I = 0; I < Plan.size(); ++I) {
      Result X = readyLocked(B, Plan[I], Ready[I]);
      if (!X.ok())
        return X;
    }
  }
  Result Err = Result::success();
  size_t Done = 0;
  // Queued into one device from its peers: together (pullFromPeers), all
  // or none of them counted.
  Location Into = HostLocation;
  std::vector<Device::PeerCopy> Pulls;
  for (const ReadyCopy &C : Ready) {
    if (!PullOn || C.Skip)
      continue;
    if (C.S == HostLocation || C.D == HostLocation ||
        (Into != HostLocation && C.D != Into)) {
      Pulls.clear();
      break;
    }
    Into = C.D;
    Pulls.push_back({Devices[C.S], C.DstAddr, C.SrcAddr, C.T.Bytes});
  }
  if (!Pulls.empty()) {
    Err = Devices[Into]->pullFromPeers(Pulls, PullOn);
    Done = Err.ok() ? Ready.size() : 0;
    if (!Err.ok())
      Err = Result::error(Err.code(), "queueing " +
                                          std::to_string(Pulls.size()) +
                                          " copies of buffer #" +
                                          std::to_string(B.Id) + " into " +
                                          Devices[Into]->name() + ": " +
                                          Err.message());
  } else {
    for (; Done < Ready.size(); ++Done) {
      if (Ready[Done].Skip)
        continue;
      Err = runCopy(B, Ready[Done], PullOn);
      if (!Err.ok())
        break;
    }
  }
  std::lock_guard<std::mutex> Lock(B.Mutex);
  for (size_t I = 0; I < Done; ++I)
    if (!Ready[I].Skip)
      landLocked(B, Ready[I]);
  return Err;
}

Result BufferManager::makeValidLocked(Buffer &B, Location L, ByteRange R) {
  Result C = checkRange(B, L, R);
  if (!C.ok())
    return C;
  if (validityLocation(L) != HostLocation) {
    C = ensureReplicaLocked(B, L);
    if (!C.ok())
      return C;
  }
  std::vector<Transfer> Plan;
  C = transfersLocked(B, L, R, Plan);
  if (!C.ok())
    return C;
  if (validityLocation(L) == HostLocation) {
    // A host read: what it fetches from devices was read back.
    for (const Transfer &T : Plan)
      if (validityLocation(T.Src) != HostLocation) {
        B.ReadBack.insert(ByteRange{T.Offset, T.Offset + T.Bytes});
        B.FetchedSinceWrite.insert(ByteRange{T.Offset, T.Offset + T.Bytes});
      }
    return gatherLocked(B, Plan);
  }
  return executeLocked(B, Plan);
}

Result BufferManager::gatherLocked(Buffer &B,
                                   const std::vector<Transfer> &Plan) {
  // A host read of bytes that several devices produced: one thread per
  // source device copies its part (disjoint host ranges), which lets the
  // devices' pageable copies, each driven by the host through its own
  // staging buffers, run together. Small reads go one copy after another.
  std::map<Location, std::vector<size_t>> BySource;
  uint64_t Bytes = 0;
  for (size_t I = 0; I < Plan.size(); ++I) {
    BySource[validityLocation(Plan[I].Src)].push_back(I);
    Bytes += Plan[I].Bytes;
  }
  if (BySource.size() < 2 || Bytes < ConcurrentCopyBytes)
    return executeLocked(B, Plan);
  std::vector<ReadyCopy> Ready(Plan.size());
  for (size_t I = 0; I < Plan.size(); ++I) {
    Result X = readyLocked(B, Plan[I], Ready[I]);
    if (!X.ok())
      return X;
  }
  std::vector<Result> Done(Plan.size(), Result::success());
  std::vector<char> Ran(Plan.size(), 0);
  std::vector<std::thread> Threads;
  for (auto &[Src, List] : BySource)
    Threads.emplace_back([&, &List = List] {
      for (size_t I : List) {
        if (Ready[I].Skip)
          continue;
        Done[I] = runCopy(B, Ready[I]);
        Ran[I] = 1;
        if (!Done[I].ok())
          return;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  Result Err = Result::success();
  for (size_t I = 0; I < Plan.size(); ++I) {
    if (Ran[I] && Done[I].ok())
      landLocked(B, Ready[I]);
    else if (!Done[I].ok() && Err.ok())
      Err = Done[I];
  }
  return Err;
}

Result BufferManager::makeValid(Buffer &B, Location L, ByteRange R) {
  if (Result S = settle(); !S.ok())
    return S;
  ChangeCounter Count{*this};
  std::lock_guard<std::mutex> Lock(B.Mutex);
  return makeValidLocked(B, L, R);
}

Result BufferManager::addressOn(Buffer &B, Location L, uint64_t Offset,
                                DeviceAddr &Out) {
  Out = 0;
  std::lock_guard<std::mutex> Lock(B.Mutex);
  Result C = checkRange(B, L, {Offset, Offset});
  if (!C.ok())
    return C;
  if (validityLocation(L) != HostLocation) {
    C = ensureReplicaLocked(B, L);
    if (!C.ok())
      return C;
  }
  Out = addressLocked(B, L, Offset);
  return Result::success();
}

//===-- Host-side operations ----------------------------------------------===//

Result BufferManager::memcpy2D(void *Dst, uint64_t DPitch, const void *Src,
                               uint64_t SPitch, uint64_t Width,
                               uint64_t Height, MemcpyKind Kind) {
  auto ByRows = [&] {
    for (uint64_t Row = 0; Row < Height; ++Row)
      if (Result R = memcpy(static_cast<char *>(Dst) + Row * DPitch,
                            static_cast<const char *>(Src) + Row * SPitch,
                            Width, Kind);
          !R.ok())
        return R;
    return Result::success();
  };
  if (Height <= 1 || Width == 0 || Home < 0)
    return ByRows();
  bool ToDevice = isDevicePointer(Dst);
  if (ToDevice == isDevicePointer(Src) ||
      Kind == (ToDevice ? MemcpyKind::DeviceToHost : MemcpyKind::HostToDevice) ||
      Kind == MemcpyKind::DeviceToDevice || Kind == MemcpyKind::HostToHost)
    return ByRows();
  uint64_t DevPitch = ToDevice ? DPitch : SPitch;
  Resolved R;
  if (Result C = resolveRange(ToDevice ? Dst : Src,
                              DevPitch * (Height - 1) + Width, R);
      !C.ok())
    return Result::error(C.code(), std::string("memcpy2D ") +
                                       (ToDevice ? "destination" : "source") +
                                       ": " + C.message());
  if (Result S = settle(); !S.ok())
    return S;
  {
    ChangeCounter Count{*this};
    Buffer &B = *R.Buf;
    std::lock_guard<std::mutex> Lock(B.Mutex);
    ByteRange Hull{R.Offset, R.Offset + DevPitch * (Height - 1) + Width};
    if (Result C = checkRange(B, HostLocation, Hull); !C.ok())
      return C;
    Location H = homeFor(B);
    // From the device, every byte of the rows must be current there.
    if (H >= 0 && (ToDevice || B.Valid[slot(validityLocation(H))].contains(
                                   Hull.Lo, Hull.Hi))) {
      Result C = Devices[H]->copy2D(
          ToDevice, addressLocked(B, H, R.Offset), DevPitch,
          ToDevice ? const_cast<void *>(Src) : Dst, ToDevice ? SPitch : DPitch,
          Width, Height);
      if (!C.ok() || !ToDevice)
        return C;
      ++B.ProgramWrites;
      RangeSet Rows;
      for (uint64_t Row = 0; Row < Height; ++Row)
        Rows.insert(Hull.Lo + Row * DevPitch,
                    Hull.Lo + Row * DevPitch + Width);
      markWrittenLocked(B, H, Rows);
      for (ByteRange G : Rows.ranges())
        B.Staged.erase(G);
      return Result::success();
    }
  }
  return ByRows();
}

Result BufferManager::memcpy(void *Dst, const void *Src, uint64_t Bytes,
                             MemcpyKind Kind) {
  if (Result S = settle(); !S.ok())
    return S;
  ChangeCounter Count{*this};
  int K = static_cast<int>(Kind);
  if (K < 0 || K > 4)
    return Result::error(ErrorCode::InvalidMemcpyDirection,
                         "memcpy kind " + std::to_string(K));
  if (Bytes == 0)
    return Result::success();
  if (!Dst || !Src)
    return Result::error(ErrorCode::InvalidValue, "memcpy with a null pointer");
  bool DstMustBeDev =
      Kind == MemcpyKind::HostToDevice || Kind == MemcpyKind::DeviceToDevice;
  bool SrcMustBeDev =
      Kind == MemcpyKind::DeviceToHost || Kind == MemcpyKind::DeviceToDevice;

  Resolved RD, RS;
  Result DR = resolve(Dst, RD), SR = resolve(Src, RS);
  if (DstMustBeDev && !DR.ok())
    return Result::error(DR.code(), "memcpy destination: " + DR.message());
  if (SrcMustBeDev && !SR.ok())
    return Result::error(SR.code(), "memcpy source: " + SR.message());
  if (DR.ok()) {
    DR = resolveRange(Dst, Bytes, RD);
    if (!DR.ok())
      return Result::error(DR.code(), "memcpy destination: " + DR.message());
  }
  if (SR.ok()) {
    SR = resolveRange(Src, Bytes, RS);
    if (!SR.ok())
      return Result::error(SR.code(), "memcpy source: " + SR.message());
  }

  if (!RD.Buf && !RS.Buf) {
    std::memmove(Dst, Src, Bytes);
    return Result::success();
  }
  if (!RD.Buf) { // device to host: pull the stale ranges, then read
    Buffer &S = *RS.Buf;
    std::lock_guard<std::mutex> Lock(S.Mutex);
    ++S.ProgramReads;
    ByteRange SRange{RS.Offset, RS.Offset + Bytes};
    // Results a pipelined launch sent back before this read: read back
    // as much as if this read had fetched them.
    if (!S.Received.empty()) {
      for (ByteRange G : S.Received.intersection(SRange.Lo, SRange.Hi)) {
        S.ReadBack.insert(G);
        S.FetchedSinceWrite.insert(G);
      }
      S.Received.erase(SRange);
    }
    // One GPU and no CPU device: the host copy is only a stop on the way,
    // so every read goes straight to the program's memory, as under CUDA.
    // (With several GPUs it keeps what was read for the next transfer.)
    if (DirectCopies &&
        (Bytes >= DirectMinBytes || (Home >= 0 && !HostCopyWorks)))
      return readToHostLocked(S, SRange, static_cast<char *>(Dst));
    Result C = makeValidLocked(S, HostLocation, SRange);
    if (!C.ok())
      return C;
    auto Start = std::chrono::steady_clock::now();
    hostCopy(Dst, S.Host + RS.Offset, Bytes);
    noteProgramCopy(HostLocation, false, Bytes, Start);
    return Result::success();
  }
  ByteRange DRange{RD.Offset, RD.Offset + Bytes};
  if (!RS.Buf) { // host to device: write the host copy
    Buffer &D = *RD.Buf;
    std::lock_guard<std::mutex> Lock(D.Mutex);
    Result C = checkRange(D, HostLocation, DRange);
    if (!C.ok())
      return C;
    ++D.ProgramWrites;
    if (Location H = homeFor(D); H >= 0)
      return writeFromHostLocked(D, DRange, static_cast<const char *>(Src),
                                 H);
    if (DirectCopies && Bytes >= DirectMinBytes)
      return writeFromHostLocked(D, DRange, static_cast<const char *>(Src));
    auto Start = std::chrono::steady_clock::now();
    hostCopy(D.Host + RD.Offset, Src, Bytes);
    noteProgramCopy(HostLocation, true, Bytes, Start);
    markWrittenLocked(D, HostLocation, RangeSet(DRange.Lo, DRange.Hi));
    D.Staged.insert(DRange);
    return Result::success();
  }

  // Device to device.
  Buffer &D = *RD.Buf, &S = *RS.Buf;
  std::unique_lock<std::mutex> LD(D.Mutex, std::defer_lock);
  std::unique_lock<std::mutex> LS(S.Mutex, std::defer_lock);
  if (&D == &S)
    LD.lock();
  else
    std::lock(LD, LS);
  ByteRange SRange{RS.Offset, RS.Offset + Bytes};
  Result C = checkRange(S, HostLocation, SRange);
  if (C.ok())
    C = checkRange(D, HostLocation, DRange);
  if (!C.ok())
    return C;
  bool Overlap = &D == &S && DRange.Lo < SRange.Hi && SRange.Lo < DRange.Hi;
  // Data that lives only on a device is copied there, and stays there.
  if (!Overlap && !S.Valid[0].contains(SRange.Lo, SRange.Hi)) {
    for (size_t I = 0; I < Devices.size(); ++I) {
      Location L = static_cast<Location>(I);
      if (validityLocation(L) != L || !S.Replica[I + 1] ||
          !S.Valid[I + 1].contains(SRange.Lo, SRange.Hi))
        continue;
      if (!ensureReplicaLocked(D, L).ok())
        break; // no room there: go through the host copy instead
      C = Devices[I]->copyDeviceToDevice(*Devices[I],
                                         addressLocked(D, L, DRange.Lo),
                                         addressLocked(S, L, SRange.Lo), Bytes);
      if (!C.ok())
        return C;
      markWrittenLocked(D, L, RangeSet(DRange.Lo, DRange.Hi));
      return Result::success();
    }
  }
  C = makeValidLocked(S, HostLocation, SRange);
  if (!C.ok())
    return C;
  std::memmove(D.Host + DRange.Lo, S.Host + SRange.Lo, Bytes);
  markWrittenLocked(D, HostLocation, RangeSet(DRange.Lo, DRange.Hi));
  return Result::success();
}

Result BufferManager::writeFromHostLocked(Buffer &B, ByteRange R,
                                          const char *Src, Location Home) {
  // What each device's replica held of R goes there, unless a CPU range
  // read it in the last launch (it would have to come back); all of R to
  // the home device.
  struct Push {
    Location L;
    std::vector<ByteRange> Ranges;
    Result Done = Result::success();
  };
  std::vector<Push> Pushes;
  RangeSet ToHost(R.Lo, R.Hi);
  for (size_t I = 0; I < Devices.size(); ++I) {
    Location L = static_cast<Location>(I);
    if (validityLocation(L) != L || !B.Replica[I + 1])
      continue;
    if (L == Home) {
      ToHost.erase(R);
      Pushes.push_back({L, {R}});
      continue;
    }
    std::vector<ByteRange> Held = B.Valid[I + 1].intersection(R.Lo, R.Hi);
    if (!Held.empty() && !B.HostReads.empty()) {
      RangeSet Kept;
      Kept.insertSorted(Held);
      Kept.erase(B.HostReads);
      Held = Kept.ranges();
    }
    if (Held.empty())
      continue;
    for (ByteRange G : Held)
      ToHost.erase(G);
    Pushes.push_back({L, std::move(Held)});
  }
  auto Start = std::chrono::steady_clock::now();
  auto Run = [&](Push &P) {
    uint64_t Moved = 0;
    for (ByteRange G : P.Ranges) {
      P.Done = Devices[P.L]->copyHostToDevice(addressLocked(B, P.L, G.Lo),
                                              Src + (G.Lo - R.Lo), G.size());
      if (!P.Done.ok())
        return;
      Moved += G.size();
    }
    noteProgramCopy(P.L, true, Moved, Start);
  };
  // One device and nothing for the host copy (a home device's copy): on
  // this thread, as CUDA's own copy; a thread costs more than a small copy.
  if (Pushes.size() == 1 && ToHost.empty())
    Run(Pushes.front());
  std::vector<std::thread> Threads;
  for (Push &P : Pushes)
    if (!(Pushes.size() == 1 && ToHost.empty()))
      Threads.emplace_back([&Run, &P] { Run(P); });
  uint64_t Here = 0;
  for (ByteRange G : ToHost.ranges()) {
    hostCopy(B.Host + G.Lo, Src + (G.Lo - R.Lo), G.size());
    Here += G.size();
  }
  noteProgramCopy(HostLocation, true, Here, Start);
  for (std::thread &T : Threads)
    T.join();
  // A device that failed keeps nothing of R; its bytes go to the host copy
  // (the copy itself succeeds: its bytes are all in place somewhere).
  for (Push &P : Pushes)
    if (!P.Done.ok())
      for (ByteRange G : P.Ranges) {
        hostCopy(B.Host + G.Lo, Src + (G.Lo - R.Lo), G.size());
        ToHost.insert(G);
      }
  for (RangeSet &V : B.Valid)
    V.erase(R);
  B.Valid[0].insert(ToHost);
  for (Push &P : Pushes)
    if (P.Done.ok())
      for (ByteRange G : P.Ranges)
        B.Valid[slot(P.L)].insert(G);
  // Only what stayed in the host copy waits there for a device; what
  // went to a device is pushed.
  B.Staged.erase(R);
  B.Staged.insert(ToHost);
  B.Pushed.erase(R);
  for (Push &P : Pushes)
    if (P.Done.ok())
      for (ByteRange G : P.Ranges)
        B.Pushed.insert(G);
  return Result::success();
}

Result BufferManager::readToHostLocked(Buffer &B, ByteRange R, char *Dst) {
  std::vector<Transfer> Plan;
  Result C = transfersLocked(B, HostLocation, R, Plan);
  if (!C.ok())
    return C;
  RangeSet FromHost(R.Lo, R.Hi);
  std::map<Location, std::vector<Transfer>> BySource;
  for (const Transfer &T : Plan) {
    ByteRange G{T.Offset, T.Offset + T.Bytes};
    FromHost.erase(G);
    BySource[validityLocation(T.Src)].push_back(T);
    // What a host read fetches from devices was read back.
    B.ReadBack.insert(G);
    B.FetchedSinceWrite.insert(G);
  }
  std::vector<Result> Done(BySource.size(), Result::success());
  std::vector<std::thread> Threads;
  size_t K = 0;
  auto Start = std::chrono::steady_clock::now();
  // One device and nothing from the host copy: on this thread (a thread
  // costs more than a small copy).
  bool Here1 = BySource.size() == 1 && FromHost.empty();
  for (auto &[Src, List] : BySource) {
    auto Read = [&, Src = Src, &List = List, &Out = Done[K++]] {
      uint64_t Moved = 0;
      for (const Transfer &T : List)
        Moved += T.Bytes;
      for (const Transfer &T : List) {
        Out = Devices[Src]->copyDeviceToHost(Dst + (T.Offset - R.Lo),
                                             addressLocked(B, Src, T.Offset),
                                             T.Bytes);
        if (!Out.ok()) {
          Out = Result::error(
              Out.code(), "reading bytes " +
                              describeRange(T.Offset, T.Offset + T.Bytes) +
                              " of buffer #" + std::to_string(B.Id) +
                              " from " + Devices[Src]->name() + ": " +
                              Out.message());
          return;
        }
      }
      noteProgramCopy(Src, false, Moved, Start);
    };
    if (Here1)
      Read();
    else
      Threads.emplace_back(Read);
  }
  uint64_t Here = 0;
  for (ByteRange G : FromHost.ranges()) {
    hostCopy(Dst + (G.Lo - R.Lo), B.Host + G.Lo, G.size());
    Here += G.size();
  }
  noteProgramCopy(HostLocation, false, Here, Start);
  for (std::thread &T : Threads)
    T.join();
  for (const Result &X : Done)
    if (!X.ok())
      return X;
  return Result::success();
}

void BufferManager::noteProgramCopy(
    Location L, bool In, uint64_t Bytes,
    std::chrono::steady_clock::time_point Start) {
  if (Bytes < ProgramCopyRateBytes)
    return;
  double Seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - Start)
                       .count();
  if (!(Seconds > 0))
    return;
  double GBps = double(Bytes) / Seconds / 1e9;
  std::lock_guard<std::mutex> Lock(RateMutex);
  double &Avg = ProgramCopyGBps[{validityLocation(L), In}];
  // A faster copy sets the rate at once; a slower one moves it a quarter
  // of the way. The first copy into fresh memory pays its page faults, and
  // a copy may share the host with others, so a slow copy says less about
  // the next one than a fast one does; copies that stay slow (several
  // devices at once from now on) still bring the rate down within a few.
  Avg = std::max(GBps, 0.75 * Avg + 0.25 * GBps);
}

double BufferManager::programCopyGBps(Location L, bool In) const {
  std::lock_guard<std::mutex> Lock(RateMutex);
  auto It = ProgramCopyGBps.find({validityLocation(L), In});
  return It == ProgramCopyGBps.end() ? 0 : It->second;
}

Result BufferManager::memset(void *Dst, int Value, uint64_t Bytes) {
  if (Result S = settle(); !S.ok())
    return S;
  ChangeCounter Count{*this};
  if (Bytes == 0)
    return Result::success();
  Resolved RD;
  Result C = resolveRange(Dst, Bytes, RD);
  if (!C.ok())
    return Result::error(C.code(), "memset: " + C.message());
  Buffer &B = *RD.Buf;
  ByteRange R{RD.Offset, RD.Offset + Bytes};
  std::lock_guard<std::mutex> Lock(B.Mutex);
  C = checkRange(B, HostLocation, R);
  if (!C.ok())
    return C;
  ++B.ProgramWrites;
  if (Location H = homeFor(B); H >= 0) {
    C = Devices[H]->memset(addressLocked(B, H, R.Lo),
                           static_cast<uint8_t>(Value), Bytes);
    if (!C.ok())
      return C;
    markWrittenLocked(B, H, RangeSet(R.Lo, R.Hi));
    B.Staged.erase(R);
    return Result::success();
  }
  // When the range lives on a device only, set it there so it stays there.
  if (!B.Valid[0].contains(R.Lo, R.Hi)) {
    for (size_t I = 0; I < Devices.size(); ++I) {
      Location L = static_cast<Location>(I);
      if (validityLocation(L) != L || !B.Replica[I + 1] ||
          !B.Valid[I + 1].contains(R.Lo, R.Hi))
        continue;
      C = Devices[I]->memset(addressLocked(B, L, R.Lo),
                             static_cast<uint8_t>(Value), Bytes);
      if (!C.ok())
        return C;
      markWrittenLocked(B, L, RangeSet(R.Lo, R.Hi));
      return Result::success();
    }
  }
  hostFill(B.Host + R.Lo, Value, Bytes);
  markWrittenLocked(B, HostLocation, RangeSet(R.Lo, R.Hi));
  B.Staged.insert(R);
  return Result::success();
}

Result BufferManager::syncToHost(const void *P, uint64_t Bytes) {
  if (Result S = settle(); !S.ok())
    return S;
  ChangeCounter Count{*this};
  Resolved RS;
  Result C = resolveRange(P, Bytes, RS);
  if (!C.ok())
    return C;
  std::lock_guard<std::mutex> Lock(RS.Buf->Mutex);
  return makeValidLocked(*RS.Buf, HostLocation,
                         {RS.Offset, RS.Offset + Bytes});
}

std::vector<std::shared_ptr<Buffer>> BufferManager::liveBuffers() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::vector<std::shared_ptr<Buffer>> All;
  for (const auto &[Start, B] : Live)
    All.push_back(B);
  return All;
}

Result BufferManager::syncAllToHost() {
  if (Result S = settle(); !S.ok())
    return S;
  ChangeCounter Count{*this};
  for (const std::shared_ptr<Buffer> &B : liveBuffers()) {
    std::lock_guard<std::mutex> Lock(B->Mutex);
    if (B->Freed)
      continue;
    if (Result R = makeValidLocked(*B, HostLocation, {0, B->Size}); !R.ok())
      return R;
  }
  return Result::success();
}

void BufferManager::markAllWrittenOnHost() {
  ChangeCounter Count{*this};
  for (const std::shared_ptr<Buffer> &B : liveBuffers()) {
    std::lock_guard<std::mutex> Lock(B->Mutex);
    if (!B->Freed)
      markWrittenLocked(*B, HostLocation, RangeSet(0, B->Size));
  }
}

} // namespace rt
} // namespace cleave
