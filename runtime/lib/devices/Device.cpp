//===- Device.cpp - The generic device interface of the runtime -----------===//
//
// Part of Cleave's runtime (no LLVM). The checks and fault-injection points
// every kind of device shares; the kinds implement the *Impl hooks.
//
//===----------------------------------------------------------------------===//
#include "cleave/rt/Device.h"

#include <cstdlib>

namespace cleave {
namespace rt {

const char *getDeviceKindName(DeviceKind K) {
  switch (K) {
  case DeviceKind::Cpu:
    return "cpu";
  case DeviceKind::Cuda:
    return "cuda";
  case DeviceKind::Test:
    return "test";
  }
  return "?";
}

Device::Device(DeviceProperties P) : Props(std::move(P)) {}
Device::~Device() = default;

bool Device::faultHere(FaultOp Op) const {
  return FaultInjector::global().shouldFail(name(), Op);
}

Result Device::injectedFault(FaultOp Op) const {
  return Result::error(Op == FaultOp::Alloc ? ErrorCode::MemoryAllocation
                       : Op == FaultOp::Launch ? ErrorCode::LaunchFailure
                                               : ErrorCode::Unknown,
                       std::string("injected fault: ") + getFaultOpName(Op) +
                           " on " + name() + " (CLEAVE_FAULT=" +
                           FaultInjector::global().spec() + ")");
}

Result Device::allocate(uint64_t Bytes, DeviceAddr &Out) {
  Out = 0;
  if (Bytes == 0)
    return Result::error(ErrorCode::InvalidValue,
                         "zero-byte allocation on " + name());
  if (faultHere(FaultOp::Alloc))
    return injectedFault(FaultOp::Alloc);
  return allocateImpl(Bytes, Out);
}

Result Device::free(DeviceAddr Addr) {
  if (Addr == 0)
    return Result::success();
  return freeImpl(Addr);
}

Result Device::copyHostToDevice(DeviceAddr Dst, const void *Src,
                                uint64_t Bytes, StreamHandle S) {
  if (Bytes == 0)
    return Result::success();
  if (!Dst || !Src)
    return Result::error(ErrorCode::InvalidValue,
                         "null pointer in a copy to " + name());
  if (faultHere(FaultOp::Copy))
    return injectedFault(FaultOp::Copy);
  return copyHostToDeviceImpl(Dst, Src, Bytes, S);
}

Result Device::copyDeviceToHost(void *Dst, DeviceAddr Src, uint64_t Bytes,
                                StreamHandle S) {
  if (Bytes == 0)
    return Result::success();
  if (!Dst || !Src)
    return Result::error(ErrorCode::InvalidValue,
                         "null pointer in a copy from " + name());
  if (faultHere(FaultOp::Copy))
    return injectedFault(FaultOp::Copy);
  return copyDeviceToHostImpl(Dst, Src, Bytes, S);
}

bool Device::hasPeerLink(const Device &) const { return false; }

bool Device::canCopyDirectly(const Device &Other) const {
  return &Other == this || Props.HostAddressable ||
         Other.Props.HostAddressable || hasPeerLink(Other);
}

Result Device::copyDeviceToDevice(Device &DstDev, DeviceAddr Dst,
                                  DeviceAddr Src, uint64_t Bytes,
                                  StreamHandle S) {
  if (Bytes == 0)
    return Result::success();
  if (!Dst || !Src)
    return Result::error(ErrorCode::InvalidValue,
                         "null pointer in a copy from " + name() + " to " +
                             DstDev.name());
  // A copy involves both devices, so it counts for both (no short circuit).
  bool SrcFault = faultHere(FaultOp::Copy);
  bool DstFault = &DstDev != this && DstDev.faultHere(FaultOp::Copy);
  if (SrcFault)
    return injectedFault(FaultOp::Copy);
  if (DstFault)
    return DstDev.injectedFault(FaultOp::Copy);
  if (&DstDev == this)
    return copyWithinImpl(Dst, Src, Bytes, S);
  // Host-addressable memory on one side: the other device copies from or to
  // it as from or to the host.
  if (DstDev.Props.HostAddressable)
    return copyDeviceToHostImpl(reinterpret_cast<void *>(Dst), Src, Bytes, S);
  if (Props.HostAddressable)
    return DstDev.copyHostToDeviceImpl(
        Dst, reinterpret_cast<const void *>(Src), Bytes, nullptr);
  if (DstDev.kind() == kind())
    return copyPeerImpl(DstDev, Dst, Src, Bytes, S);
  return copyStaged(DstDev, Dst, Src, Bytes, S);
}

Result Device::copyPeerImpl(Device &DstDev, DeviceAddr Dst, DeviceAddr Src,
                            uint64_t Bytes, StreamHandle S) {
  return copyStaged(DstDev, Dst, Src, Bytes, S);
}

Result Device::waitForEvent(StreamHandle, Device &Src, EventHandle E) {
  return Src.synchronizeEvent(E);
}

Result Device::queryEvent(EventHandle E, bool &Done) {
  Result R = synchronizeEvent(E);
  Done = R.ok();
  return R;
}

Result Device::pullFromPeer(Device &SrcDev, DeviceAddr Dst, DeviceAddr Src,
                            uint64_t Bytes, StreamHandle S) {
  return pullFromPeers({{&SrcDev, Dst, Src, Bytes}}, S);
}

Result Device::pullFromPeers(const std::vector<PeerCopy> &Copies,
                             StreamHandle S) {
  std::vector<PeerCopy> Checked;
  Checked.reserve(Copies.size());
  for (const PeerCopy &C : Copies) {
    if (C.Bytes == 0)
      continue;
    Device &SrcDev = *C.From;
    if (!C.Dst || !C.Src)
      return Result::error(ErrorCode::InvalidValue,
                           "null pointer in a copy from " + SrcDev.name() +
                               " to " + name());
    if (&SrcDev == this || SrcDev.kind() != kind() || !hasPeerLink(SrcDev))
      return Result::error(ErrorCode::InvalidValue,
                           name() + " has no peer link to " + SrcDev.name() +
                               " to copy from");
    // As copyDeviceToDevice: the copy counts for both devices.
    bool SrcFault = SrcDev.faultHere(FaultOp::Copy);
    bool DstFault = faultHere(FaultOp::Copy);
    if (SrcFault)
      return SrcDev.injectedFault(FaultOp::Copy);
    if (DstFault)
      return injectedFault(FaultOp::Copy);
    Checked.push_back(C);
  }
  return Checked.empty() ? Result::success() : pullFromPeersImpl(Checked, S);
}

Result Device::pullFromPeerImpl(Device &SrcDev, DeviceAddr Dst,
                                DeviceAddr Src, uint64_t Bytes, StreamHandle) {
  return SrcDev.copyPeerImpl(*this, Dst, Src, Bytes, nullptr);
}

Result Device::pullFromPeersImpl(const std::vector<PeerCopy> &Copies,
                                 StreamHandle S) {
  for (const PeerCopy &C : Copies)
    if (Result R = pullFromPeerImpl(*C.From, C.Dst, C.Src, C.Bytes, S);
        !R.ok())
      return R;
  return Result::success();
}

Result Device::copyStaged(Device &DstDev, DeviceAddr Dst, DeviceAddr Src,
                          uint64_t Bytes, StreamHandle) {
  void *Tmp = std::malloc(Bytes);
  if (!Tmp)
    return Result::error(ErrorCode::MemoryAllocation,
                         "no host memory to stage a copy from " + name() +
                             " to " + DstDev.name());
  Result R = copyDeviceToHostImpl(Tmp, Src, Bytes, nullptr);
  if (R.ok())
    R = DstDev.copyHostToDeviceImpl(Dst, Tmp, Bytes, nullptr);
  std::free(Tmp);
  return R;
}

Result Device::memset(DeviceAddr Dst, uint8_t Value, uint64_t Bytes,
                      StreamHandle S) {
  if (Bytes == 0)
    return Result::success();
  if (!Dst)
    return Result::error(ErrorCode::InvalidValue,
                         "null pointer in a memset on " + name());
  if (faultHere(FaultOp::Memset))
    return injectedFault(FaultOp::Memset);
  return memsetImpl(Dst, Value, Bytes, S);
}

Result Device::copy2D(bool ToDevice, DeviceAddr Dev, uint64_t DevPitch,
                      void *Host, uint64_t HostPitch, uint64_t Width,
                      uint64_t Height) {
  if (Width == 0 || Height == 0)
    return Result::success();
  if (!Dev || !Host)
    return Result::error(ErrorCode::InvalidValue,
                         "null pointer in a 2-D copy with " + name());
  if (DevPitch < Width || HostPitch < Width)
    return Result::error(ErrorCode::InvalidPitchValue,
                         "a 2-D copy's pitch is below its width");
  if (faultHere(FaultOp::Copy))
    return injectedFault(FaultOp::Copy);
  return copy2DImpl(ToDevice, Dev, DevPitch, Host, HostPitch, Width, Height);
}

Result Device::copy2DImpl(bool ToDevice, DeviceAddr Dev, uint64_t DevPitch,
                          void *Host, uint64_t HostPitch, uint64_t Width,
                          uint64_t Height) {
  char *H = static_cast<char *>(Host);
  for (uint64_t Row = 0; Row < Height; ++Row) {
    Result R = ToDevice ? copyHostToDeviceImpl(Dev + Row * DevPitch,
                                               H + Row * HostPitch, Width,
                                               nullptr)
                        : copyDeviceToHostImpl(H + Row * HostPitch,
                                               Dev + Row * DevPitch, Width,
                                               nullptr);
    if (!R.ok())
      return R;
  }
  return Result::success();
}

Result Device::loadModule(const Bundle &, ModuleHandle &Out) {
  Out = nullptr;
  return Result::error(ErrorCode::NotSupported,
                       name() + " does not load GPU modules (" +
                           getDeviceKindName(kind()) +
                           " devices run CPU variants)");
}

Result Device::unloadModule(ModuleHandle) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " does not load GPU modules");
}

Result Device::getFunction(ModuleHandle, const std::string &Name,
                           FunctionHandle &Out) {
  Out = nullptr;
  return Result::error(ErrorCode::NotSupported,
                       name() + " has no GPU function " + Name);
}

Result Device::getGlobal(ModuleHandle, const std::string &Name,
                         DeviceAddr &Addr, uint64_t &Bytes) {
  Addr = 0;
  Bytes = 0;
  return Result::error(ErrorCode::NotSupported,
                       name() + " has no GPU variable " + Name);
}

Result Device::checkLaunchFault() {
  if (faultHere(FaultOp::Launch))
    return injectedFault(FaultOp::Launch);
  return Result::success();
}

Result Device::launchKernel(FunctionHandle F, const uint32_t Grid[3],
                            const uint32_t Block[3],
                            uint64_t DynamicSharedBytes, StreamHandle S,
                            void **Params) {
  if (!F)
    return Result::error(ErrorCode::InvalidValue,
                         "launch of a null function on " + name());
  for (int D = 0; D < 3; ++D)
    if (Grid[D] == 0 || Block[D] == 0)
      return Result::error(ErrorCode::InvalidValue,
                           "launch on " + name() +
                               " with a zero grid or block dimension");
  Result R = checkLaunchFault();
  if (!R.ok())
    return R;
  return launchKernelImpl(F, Grid, Block, DynamicSharedBytes, S, Params);
}

Result Device::launchKernelImpl(FunctionHandle, const uint32_t *,
                                const uint32_t *, uint64_t, StreamHandle,
                                void **) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " does not launch GPU functions");
}

Result Device::maxActiveBlocksPerSM(FunctionHandle, unsigned, uint64_t,
                                    unsigned &Out) {
  Out = 0;
  return Result::error(ErrorCode::NotSupported,
                       name() + " has no occupancy query");
}

Result Device::allocateHost(uint64_t Bytes, void *&Out) {
  Out = Bytes ? std::malloc(Bytes) : nullptr;
  if (Bytes && !Out)
    return Result::error(ErrorCode::MemoryAllocation,
                         "out of host memory (" + std::to_string(Bytes) +
                             " bytes)");
  return Result::success();
}

Result Device::freeHost(void *Ptr) {
  std::free(Ptr);
  return Result::success();
}

Result Device::registerHostMemory(void *, uint64_t) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " does not page-lock host memory");
}

Result Device::unregisterHostMemory(void *) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " does not page-lock host memory");
}

Result Device::attribute(int Attr, int &) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " has no CUDA device attribute " +
                           std::to_string(Attr));
}

Result Device::functionAttribute(FunctionHandle, int Attr, int &) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " has no CUDA function attribute " +
                           std::to_string(Attr));
}

Result Device::memoryInfo(uint64_t &, uint64_t &) {
  return Result::error(ErrorCode::NotSupported,
                       name() + " has no memory of its own to report");
}

} // namespace rt
} // namespace cleave
