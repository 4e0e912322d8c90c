//===- CpuDevice.cpp - The host CPU as a device ---------------------------===//
//
// Part of Cleave's runtime (no LLVM). Replica memory is host memory and every
// operation completes at the call (a valid implementation of an
// asynchronous stream). The first CPU device uses the buffers' host copies as
// its replicas; further ones ("CLEAVE_DEVICES=cpu,cpu,cpu") allocate their
// own, which makes CI run the transfers and validity tracking between
// devices for real.
//
//===----------------------------------------------------------------------===//
#include "DeviceFactories.h"

#include "cleave/rt/CpuExecutor.h"
#include "cleave/rt/GuardedMemory.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace cleave {
namespace rt {
namespace {

void *ptr(DeviceAddr A) { return reinterpret_cast<void *>(A); }

class CpuDevice final : public Device {
public:
  CpuDevice(DeviceProperties P) : Device(std::move(P)) {}
  ~CpuDevice() override {
    for (void *S : Streams)
      delete static_cast<char *>(S);
    for (void *E : Events)
      delete static_cast<CpuEvent *>(E);
    for (auto &[P, Bytes] : Sizes)
      freeGuarded(P, Bytes);
  }

  unsigned numInternalStreams() const override { return 3; }
  StreamHandle internalStream(unsigned I) override {
    return &InternalStreams[I % 3];
  }

  Result createStream(StreamHandle &Out) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    Out = new char(0);
    Streams.insert(Out);
    return Result::success();
  }
  Result destroyStream(StreamHandle S) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Streams.erase(S))
      return badHandle("stream");
    delete static_cast<char *>(S);
    return Result::success();
  }
  Result synchronizeStream(StreamHandle S) override {
    return validStream(S) ? Result::success() : badHandle("stream");
  }

  Result createEvent(EventHandle &Out) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    Out = new CpuEvent();
    Events.insert(Out);
    return Result::success();
  }
  Result recordEvent(EventHandle E, StreamHandle S) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Events.count(E))
      return badHandle("event");
    if (S && !validStreamLocked(S))
      return badHandle("stream");
    auto *Ev = static_cast<CpuEvent *>(E);
    Ev->When = std::chrono::steady_clock::now();
    Ev->Recorded = true;
    return Result::success();
  }
  Result synchronizeEvent(EventHandle E) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    return Events.count(E) ? Result::success() : badHandle("event");
  }
  Result elapsedTime(EventHandle Start, EventHandle End, float &Ms) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Events.count(Start) || !Events.count(End))
      return badHandle("event");
    auto *A = static_cast<CpuEvent *>(Start), *B = static_cast<CpuEvent *>(End);
    if (!A->Recorded || !B->Recorded)
      return Result::error(ErrorCode::InvalidResourceHandle,
                           "elapsed time of an event never recorded on " +
                               name());
    Ms = std::chrono::duration<float, std::milli>(B->When - A->When).count();
    return Result::success();
  }
  Result destroyEvent(EventHandle E) override {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Events.erase(E))
      return badHandle("event");
    delete static_cast<CpuEvent *>(E);
    return Result::success();
  }
  Result synchronize() override { return Result::success(); }

protected:
  Result allocateImpl(uint64_t Bytes, DeviceAddr &Out) override {
    // Guarded like the host copies, so that a kernel's overrun faults here
    // too (GuardedMemory.h); 256-byte aligned, as cudaMalloc guarantees.
    char *P = allocateGuarded(Bytes);
    if (!P)
      return Result::error(ErrorCode::MemoryAllocation,
                           "out of memory on " + name() + " (" +
                               std::to_string(Bytes) + " bytes)");
    std::lock_guard<std::mutex> Lock(Mutex);
    Sizes[P] = Bytes;
    Out = reinterpret_cast<DeviceAddr>(P);
    return Result::success();
  }
  Result freeImpl(DeviceAddr Addr) override {
    uint64_t Bytes;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      auto It = Sizes.find(static_cast<char *>(ptr(Addr)));
      if (It == Sizes.end())
        return Result::error(ErrorCode::InvalidDevicePointer,
                             "free of memory that " + name() +
                                 " did not allocate");
      Bytes = It->second;
      Sizes.erase(It);
    }
    freeGuarded(static_cast<char *>(ptr(Addr)), Bytes);
    return Result::success();
  }
  Result copyHostToDeviceImpl(DeviceAddr Dst, const void *Src, uint64_t Bytes,
                              StreamHandle) override {
    std::memmove(ptr(Dst), Src, Bytes);
    return Result::success();
  }
  Result copyDeviceToHostImpl(void *Dst, DeviceAddr Src, uint64_t Bytes,
                              StreamHandle) override {
    std::memmove(Dst, ptr(Src), Bytes);
    return Result::success();
  }
  Result copyWithinImpl(DeviceAddr Dst, DeviceAddr Src, uint64_t Bytes,
                        StreamHandle) override {
    std::memmove(ptr(Dst), ptr(Src), Bytes);
    return Result::success();
  }
  Result memsetImpl(DeviceAddr Dst, uint8_t Value, uint64_t Bytes,
                    StreamHandle) override {
    std::memset(ptr(Dst), Value, Bytes);
    return Result::success();
  }

private:
  struct CpuEvent {
    std::chrono::steady_clock::time_point When;
    bool Recorded = false;
  };

  Result badHandle(const char *What) const {
    return Result::error(ErrorCode::InvalidResourceHandle,
                         std::string("not a ") + What + " of " + name());
  }
  bool validStreamLocked(StreamHandle S) const {
    if (S >= static_cast<const void *>(&InternalStreams[0]) &&
        S < static_cast<const void *>(&InternalStreams[3]))
      return true;
    return Streams.count(S) != 0;
  }
  bool validStream(StreamHandle S) {
    std::lock_guard<std::mutex> Lock(Mutex);
    return !S || validStreamLocked(S);
  }

  std::mutex Mutex;
  char InternalStreams[3] = {};
  std::set<void *> Streams;
  std::set<void *> Events;
  std::map<char *, uint64_t> Sizes; ///< live allocations
};

} // namespace

std::unique_ptr<Device> createCpuDevice(unsigned Index, bool SharesHostMemory,
                                        unsigned Threads) {
  DeviceProperties P;
  P.Name = "cpu" + std::to_string(Index);
  P.Kind = DeviceKind::Cpu;
  P.Ordinal = static_cast<int>(Index);
  P.ComputeUnits = Threads ? Threads : defaultCpuThreads();
  P.Description = "host CPU (" + std::to_string(P.ComputeUnits) +
                  " threads" +
                  (SharesHostMemory ? ", uses the host copies)"
                                    : ", private replica memory)");
  P.SharesHostMemory = SharesHostMemory;
  P.HostAddressable = true;
  return std::make_unique<CpuDevice>(std::move(P));
}

} // namespace rt
} // namespace cleave
