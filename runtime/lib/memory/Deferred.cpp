//===- Deferred.cpp - Work left running on the GPUs ----------------------===//
//
// Part of Cleave's runtime (no LLVM). The buffer manager's deferred
// completion (docs/runtime.md, "Deferred completion"): work that launches,
// copies and memsets leave running on a GPU's compute stream or on a
// program stream's own (docs/runtime-api.md, "Direct launches"), the
// events behind it, and settle(), which waits for it all.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Buffers.h"

#include <algorithm>

namespace cleave {
namespace rt {

Result BufferManager::defer(Location Gpu, std::vector<DeferredClaim> Claims,
                            const std::set<Location> &PulledFrom,
                            StreamHandle On, bool RecordLater) {
  if (!isLocation(Gpu) || Gpu == HostLocation)
    return Result::error(ErrorCode::InvalidValue, "defer: not a device");
  Device &D = *Devices[Gpu];
  if (On == D.internalStream(0))
    On = nullptr;
  std::lock_guard<std::mutex> Lock(DeferMutex);
  DeferredWork &W = Deferred[Gpu];
  if (On) {
    auto It = std::find_if(
        W.Tails.begin(), W.Tails.end(),
        [On](const DeferredWork::Tail &T) { return T.S == On; });
    if (It == W.Tails.end()) {
      DeferredWork::Tail T;
      T.S = On;
      if (Result R = D.createOrderingEvent(T.Done); !R.ok())
        return R;
      W.Tails.push_back(T);
      It = W.Tails.end() - 1;
    }
    if (Result R = D.recordEvent(It->Done, On); !R.ok())
      return R;
    It->Pending = true;
  } else {
    W.ComputePending = true;
    W.DoneRecorded = false;
    if (!RecordLater) {
      EventHandle E;
      if (Result R = doneEvent(Gpu, E); !R.ok())
        return R;
    }
  }
  if (!W.Pending) {
    W.Pending = true;
    DeferredGpus.fetch_add(1, std::memory_order_acq_rel);
  }
  for (DeferredClaim &C : Claims)
    W.Claims.push_back(std::move(C));
  for (Location From : PulledFrom)
    if (isLocation(From) && From != HostLocation && From != Gpu)
      Deferred[From].Readers.insert(Gpu);
  return Result::success();
}

Result BufferManager::doneEvent(Location Gpu, EventHandle &Out) {
  DeferredWork &W = Deferred[Gpu];
  Device &D = *Devices[Gpu];
  if (!W.Done)
    if (Result R = D.createOrderingEvent(W.Done); !R.ok())
      return R;
  if (!W.DoneRecorded) {
    if (Result R = D.recordEvent(W.Done, D.internalStream(0)); !R.ok())
      return R;
    W.DoneRecorded = true;
  }
  Out = W.Done;
  return Result::success();
}

Result BufferManager::deferredTail(Location Gpu, StreamHandle On,
                                   EventHandle &Out) {
  Out = nullptr;
  if (!hasDeferred() || !isLocation(Gpu) || Gpu == HostLocation)
    return Result::success();
  Device &D = *Devices[Gpu];
  std::lock_guard<std::mutex> Lock(DeferMutex);
  DeferredWork &W = Deferred[Gpu];
  if (!On || On == D.internalStream(0))
    return W.ComputePending ? doneEvent(Gpu, Out) : Result::success();
  for (const DeferredWork::Tail &T : W.Tails)
    if (T.S == On && T.Pending)
      Out = T.Done;
  return Result::success();
}

Result BufferManager::queryDeferred(bool &Done) {
  Done = true;
  if (!hasDeferred())
    return Result::success();
  std::lock_guard<std::mutex> Lock(DeferMutex);
  for (size_t I = 0; I < Deferred.size() && Done; ++I) {
    DeferredWork &W = Deferred[I];
    EventHandle E = nullptr;
    if (W.ComputePending)
      if (Result R = doneEvent(Location(I), E); !R.ok())
        return R;
    if (E)
      if (Result R = Devices[I]->queryEvent(E, Done); !R.ok())
        return R;
    for (const DeferredWork::Tail &T : W.Tails)
      if (Done && T.Pending)
        if (Result R = Devices[I]->queryEvent(T.Done, Done); !R.ok())
          return R;
  }
  return Result::success();
}

bool BufferManager::deferredOnlyOn(Location Gpu) {
  if (!hasDeferred())
    return true;
  std::lock_guard<std::mutex> Lock(DeferMutex);
  for (size_t I = 0; I < Deferred.size(); ++I)
    if (Deferred[I].Pending && Location(I) != Gpu)
      return false;
  return true;
}

Result BufferManager::orderAfterDeferred(Location Gpu,
                                         const std::set<Location> &Sources) {
  if (!hasDeferred())
    return Result::success();
  Device &D = *Devices[Gpu];
  StreamHandle Compute = D.internalStream(0);
  std::lock_guard<std::mutex> Lock(DeferMutex);
  // The work program streams left on this GPU (direct copies and launches
  // on their own streams) comes before what the compute stream gets next.
  for (const DeferredWork::Tail &T : Deferred[Gpu].Tails)
    if (T.Pending)
      if (Result R = D.waitForEvent(Compute, D, T.Done); !R.ok())
        return R;
  std::set<Location> After = Sources;
  After.insert(Deferred[Gpu].Readers.begin(), Deferred[Gpu].Readers.end());
  for (Location L : After) {
    if (!isLocation(L) || L == HostLocation || L == Gpu || !Deferred[L].Pending)
      continue;
    EventHandle E = nullptr;
    if (Deferred[L].ComputePending)
      if (Result R = doneEvent(L, E); !R.ok())
        return R;
    if (E)
      if (Result R = D.waitForEvent(Compute, *Devices[L], E); !R.ok())
        return R;
    for (const DeferredWork::Tail &T : Deferred[L].Tails)
      if (T.Pending)
        if (Result R = D.waitForEvent(Compute, *Devices[L], T.Done); !R.ok())
          return R;
  }
  Deferred[Gpu].Readers.clear();
  return Result::success();
}

Result BufferManager::settle() {
  if (!hasDeferred())
    return Result::success();
  Result First = Result::success();
  std::vector<std::pair<Location, std::vector<DeferredClaim>>> Lost;
  {
    std::lock_guard<std::mutex> Lock(DeferMutex);
    for (size_t I = 0; I < Deferred.size(); ++I) {
      DeferredWork &W = Deferred[I];
      if (!W.Pending)
        continue;
      Device &D = *Devices[I];
      Result R = D.synchronizeStream(D.internalStream(0));
      for (DeferredWork::Tail &T : W.Tails) {
        if (!T.Pending)
          continue;
        Result TR = D.synchronizeEvent(T.Done);
        if (R.ok())
          R = TR;
        T.Pending = false;
      }
      W.Pending = false;
      W.ComputePending = false;
      W.Readers.clear();
      DeferredGpus.fetch_sub(1, std::memory_order_acq_rel);
      std::vector<DeferredClaim> Claims = std::move(W.Claims);
      W.Claims.clear();
      if (R.ok())
        continue;
      if (First.ok())
        First = Result::error(R.code(), D.name() +
                                            " failed after a launch had "
                                            "returned: " +
                                            R.message());
      Lost.emplace_back(Location(I), std::move(Claims));
    }
  }
  // As for a run that failed: where another location holds the claimed
  // bytes, it becomes their only holder.
  for (auto &[Gpu, Claims] : Lost) {
    Location VL = validityLocation(Gpu);
    for (DeferredClaim &C : Claims) {
      Buffer &B = *C.B;
      std::lock_guard<std::mutex> Lock(B.Mutex);
      if (B.Freed)
        continue;
      for (ByteRange Rg : C.Bytes.ranges())
        for (ByteRange Piece : B.Valid[slot(Gpu)].intersection(Rg.Lo, Rg.Hi))
          for (Location L = HostLocation; L < Location(Devices.size()); ++L) {
            if (validityLocation(L) == VL)
              continue;
            if (B.Valid[slot(L)].contains(Piece.Lo, Piece.Hi)) {
              markWrittenLocked(B, L, RangeSet(Piece.Lo, Piece.Hi));
              break;
            }
          }
    }
  }
  return First;
}

} // namespace rt
} // namespace cleave
