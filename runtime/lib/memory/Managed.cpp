//===- Managed.cpp - Managed memory: host access between synchronizations -===//
//
// Part of Cleave's runtime (no LLVM). The buffer manager's side of
// cudaMallocManaged (docs/runtime.md, "Managed memory"): the host copy of a
// managed buffer is what the program reads and writes directly. While the
// host may touch it (after allocation, and after each synchronization with
// no work outstanding) its pages are write-protected and the host's writes
// recorded page by page (ManagedPages.h); before work starts, the written
// pages become written at the host, so the replicas of exactly those pages
// go stale and the engine moves exactly them.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Buffers.h"
#include "cleave/rt/GuardedMemory.h"
#include "cleave/rt/ManagedPages.h"

#include <algorithm>

namespace cleave {
namespace rt {

Result BufferManager::allocateManaged(uint64_t Bytes, void *&Ptr) {
  return allocateBuffer(Bytes, /*IsManaged=*/true, Ptr);
}

bool BufferManager::isManaged(const void *P) const {
  Resolved R;
  return resolve(P, R).ok() && R.Buf->Region;
}

std::vector<std::shared_ptr<Buffer>> BufferManager::managedBuffers() const {
  std::lock_guard<std::mutex> Lock(Mutex);
  std::vector<std::shared_ptr<Buffer>> All;
  All.reserve(Managed.size());
  for (const auto &[Start, B] : Managed)
    All.push_back(B);
  return All;
}

Result BufferManager::managedToDevices() {
  if (!hasManaged() ||
      !ManagedHostAccess.exchange(false, std::memory_order_acq_rel))
    return Result::success();
  Result Err = Result::success();
  std::vector<std::pair<uint64_t, uint64_t>> Dirty;
  for (const std::shared_ptr<Buffer> &B : managedBuffers()) {
    startManagedWork(B->Region, Dirty);
    if (Dirty.empty())
      continue;
    // Region offsets to buffer offsets: the region starts at the page that
    // holds the buffer's first byte.
    uint64_t Skew = uint64_t(B->Host - guardedPages(B->Host, B->Size).Start);
    RangeSet Written;
    for (auto [Lo, Hi] : Dirty) {
      Lo = Lo > Skew ? Lo - Skew : 0;
      Hi = std::min<uint64_t>(Hi > Skew ? Hi - Skew : 0, B->Size);
      if (Lo < Hi)
        Written.insert(Lo, Hi);
    }
    if (Written.empty())
      continue;
    if (Result R = markAllWritten(*B, HostLocation, Written);
        !R.ok() && Err.ok())
      Err = R;
  }
  return Err;
}

Result BufferManager::managedToHost() {
  if (!hasManaged())
    return Result::success();
  ManagedHostAccess.store(true, std::memory_order_release);
  Result Err = Result::success();
  for (const std::shared_ptr<Buffer> &B : managedBuffers()) {
    // Only stale ranges move; a buffer that fails to come back stays open
    // (protecting it would record later host writes over bytes the host
    // copy does not hold).
    Result R = makeValid(*B, HostLocation, ByteRange{0, B->Size});
    if (R.ok() && !protectManagedRegion(B->Region))
      R = Result::error(ErrorCode::Unknown,
                        "cannot write-protect managed buffer #" +
                            std::to_string(B->id()));
    if (!R.ok() && Err.ok())
      Err = R;
  }
  return Err;
}

} // namespace rt
} // namespace cleave
