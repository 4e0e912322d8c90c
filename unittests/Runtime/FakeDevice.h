//===- FakeDevice.h - A device with private memory, for tests ---*- C++ -*-===//
//
// Part of Cleave's unit tests. A device whose replica memory is host memory
// the rest of the runtime must treat as foreign (not host-addressable), with
// peer links the test chooses, a memory capacity (to run out of), and a log
// of every operation it performs, so buffer and transfer tests run
// multi-device scenarios, GPU-like, on any machine.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_UNITTESTS_RUNTIME_FAKEDEVICE_H
#define CLEAVE_UNITTESTS_RUNTIME_FAKEDEVICE_H

#include "cleave/rt/Device.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace test {

class FakeDevice final : public Device {
public:
  /// One logged operation: "alloc", "free", "h2d", "d2h", "d2d", "peer",
  /// "memset"; Peer names the other device of a peer copy.
  struct Op {
    std::string What;
    uint64_t Bytes = 0;
    std::string Peer;
  };

  explicit FakeDevice(std::string Name, uint64_t Capacity = ~uint64_t(0))
      : Device(props(std::move(Name))), Capacity(Capacity) {}
  ~FakeDevice() override {
    for (auto &[A, N] : Allocs)
      std::free(reinterpret_cast<void *>(A));
  }

  void linkPeer(const Device &Other) { Peers.insert(&Other); }
  bool hasPeerLink(const Device &Other) const override {
    return Peers.count(&Other) != 0;
  }

  std::vector<Op> Log;
  void clearLog() { Log.clear(); }
  /// While set, copies from the host to this device fail.
  bool FailHostToDevice = false;
  /// Logged operations named \p What.
  size_t count(const std::string &What) const {
    size_t N = 0;
    for (const Op &O : Log)
      N += O.What == What;
    return N;
  }
  uint64_t bytes(const std::string &What) const {
    uint64_t N = 0;
    for (const Op &O : Log)
      if (O.What == What)
        N += O.Bytes;
    return N;
  }
  uint64_t bytesAllocated() const { return Used; }
  size_t numAllocations() const { return Allocs.size(); }
  /// The device's own memory, for a test to play a kernel writing it.
  char *hostView(DeviceAddr A) { return reinterpret_cast<char *>(A); }

  Result copy2DImpl(bool ToDevice, DeviceAddr Dev, uint64_t DevPitch,
                    void *Host, uint64_t HostPitch, uint64_t Width,
                    uint64_t Height) override {
    Log.push_back({ToDevice ? "h2d-2d" : "d2h-2d", Width * Height, ""});
    char *H = static_cast<char *>(Host);
    for (uint64_t Row = 0; Row < Height; ++Row) {
      char *D = hostView(Dev + Row * DevPitch);
      if (ToDevice)
        std::memcpy(D, H + Row * HostPitch, Width);
      else
        std::memcpy(H + Row * HostPitch, D, Width);
    }
    return Result::success();
  }

  unsigned numInternalStreams() const override { return 3; }
  StreamHandle internalStream(unsigned I) override { return &Streams[I % 3]; }
  Result createStream(StreamHandle &Out) override {
    Out = &Streams[0];
    return Result::success();
  }
  Result destroyStream(StreamHandle) override { return Result::success(); }
  Result synchronizeStream(StreamHandle) override { return Result::success(); }
  Result createEvent(EventHandle &Out) override {
    Out = &Streams[1];
    return Result::success();
  }
  Result recordEvent(EventHandle, StreamHandle) override {
    return Result::success();
  }
  Result synchronizeEvent(EventHandle) override { return Result::success(); }
  Result elapsedTime(EventHandle, EventHandle, float &Ms) override {
    Ms = 0;
    return Result::success();
  }
  Result destroyEvent(EventHandle) override { return Result::success(); }
  Result synchronize() override { return Result::success(); }

protected:
  Result allocateImpl(uint64_t Bytes, DeviceAddr &Out) override {
    if (Bytes > Capacity - Used)
      return Result::error(ErrorCode::MemoryAllocation,
                           name() + " is full");
    void *P = std::malloc(Bytes);
    if (!P)
      return Result::error(ErrorCode::MemoryAllocation, "malloc failed");
    Out = reinterpret_cast<DeviceAddr>(P);
    Allocs[Out] = Bytes;
    Used += Bytes;
    Log.push_back({"alloc", Bytes, ""});
    return Result::success();
  }
  Result freeImpl(DeviceAddr A) override {
    auto It = Allocs.find(A);
    if (It == Allocs.end())
      return Result::error(ErrorCode::InvalidDevicePointer, "bad free");
    Used -= It->second;
    Log.push_back({"free", It->second, ""});
    Allocs.erase(It);
    std::free(reinterpret_cast<void *>(A));
    return Result::success();
  }
  Result copyHostToDeviceImpl(DeviceAddr Dst, const void *Src, uint64_t Bytes,
                              StreamHandle) override {
    if (FailHostToDevice)
      return Result::error(ErrorCode::Unknown, name() + ": copy refused");
    std::memmove(hostView(Dst), Src, Bytes);
    Log.push_back({"h2d", Bytes, ""});
    return Result::success();
  }
  Result copyDeviceToHostImpl(void *Dst, DeviceAddr Src, uint64_t Bytes,
                              StreamHandle) override {
    std::memmove(Dst, hostView(Src), Bytes);
    Log.push_back({"d2h", Bytes, ""});
    return Result::success();
  }
  Result copyWithinImpl(DeviceAddr Dst, DeviceAddr Src, uint64_t Bytes,
                        StreamHandle) override {
    std::memmove(hostView(Dst), hostView(Src), Bytes);
    Log.push_back({"d2d", Bytes, ""});
    return Result::success();
  }
  Result copyPeerImpl(Device &To, DeviceAddr Dst, DeviceAddr Src,
                      uint64_t Bytes, StreamHandle S) override {
    if (!hasPeerLink(To))
      return copyStaged(To, Dst, Src, Bytes, S);
    std::memmove(reinterpret_cast<void *>(Dst), hostView(Src), Bytes);
    Log.push_back({"peer", Bytes, To.name()});
    return Result::success();
  }
  Result memsetImpl(DeviceAddr Dst, uint8_t V, uint64_t Bytes,
                    StreamHandle) override {
    std::memset(hostView(Dst), V, Bytes);
    Log.push_back({"memset", Bytes, ""});
    return Result::success();
  }

private:
  static DeviceProperties props(std::string Name) {
    DeviceProperties P;
    P.Name = std::move(Name);
    P.Description = "fake device";
    P.Kind = DeviceKind::Test;
    return P;
  }
  uint64_t Capacity;
  uint64_t Used = 0;
  std::map<DeviceAddr, uint64_t> Allocs;
  std::set<const Device *> Peers;
  char Streams[3] = {};
};

} // namespace test
} // namespace rt
} // namespace cleave

#endif
