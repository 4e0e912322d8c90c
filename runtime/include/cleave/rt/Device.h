//===- Device.h - The generic device interface of the runtime ---*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Modeled on LLVM's offload runtime
// (offload/plugins-nextgen): one generic interface, one implementation per
// kind of device (the CPU, CUDA GPUs through a dlopen'ed libcuda, and the
// fake devices of the unit tests). The public operations are non-virtual: they
// count the operation for fault injection (Fault.h), check the arguments and
// then call the kind's *Impl hook, so every kind fails the same way.
//
// Memory. A device's replica memory is named by a DeviceAddr: a CUdeviceptr
// on a GPU, the address of host memory on the CPU. Replicas are reached only
// through this interface, so the buffer layer (Buffers.h) moves data without
// knowing the kind of device.
//
// Streams. A null StreamHandle makes an operation blocking: it is complete
// when the call returns. A stream created by createStream (or one of the
// device's internal streams) makes it asynchronous, ordered after earlier
// work on that stream; synchronizeStream waits for it. The CPU device does
// everything at the call, which is a valid implementation of both.
//
// Kernels. A GPU loads a bundle's module image (loadModule: the cubin for
// its compute capability, else the PTX, JIT-compiled by the driver), looks
// up functions and `__device__`/`__constant__` variables in it, and launches
// a function on a stream (launchKernel). A CPU device runs CPU variants with
// the CpuExecutor instead, and answers NotSupported to module operations;
// it still counts each launch for fault injection (checkLaunchFault), so
// CLEAVE_FAULT=cpu1:launch:1 behaves as it does on a GPU.
//
// Which devices exist is decided by DeviceRegistry (CLEAVE_DEVICES).
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_DEVICE_H
#define CLEAVE_RT_DEVICE_H

#include "cleave/rt/Bundle.h"
#include "cleave/rt/Error.h"
#include "cleave/rt/Fault.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cleave {
namespace rt {

enum class DeviceKind { Cpu, Cuda, Test };

/// "cpu", "cuda", "test".
const char *getDeviceKindName(DeviceKind K);

/// An address in a device's replica memory.
using DeviceAddr = uint64_t;
/// Opaque per-device handles: a CUstream / CUevent on a GPU.
using StreamHandle = void *;
using EventHandle = void *;
/// A loaded module (CUmodule) and a kernel in it (CUfunction).
using ModuleHandle = void *;
using FunctionHandle = void *;

struct DeviceProperties {
  /// The runtime's name: cpu0, cpu1, ..., gpu0, gpu1, ... (CLEAVE_DEVICES,
  /// CLEAVE_FAULT and CLEAVE_LOG use it).
  std::string Name;
  /// What it is: "NVIDIA H100 80GB HBM3", "host CPU (16 threads)".
  std::string Description;
  DeviceKind Kind = DeviceKind::Cpu;
  /// The CUDA ordinal of a GPU; the index among CPU devices of a CPU.
  int Ordinal = 0;
  uint64_t TotalMemory = 0;
  /// Streaming multiprocessors of a GPU, worker threads of a CPU.
  unsigned ComputeUnits = 0;
  int ComputeCapabilityMajor = 0;
  int ComputeCapabilityMinor = 0;
  /// Peak clock of a GPU's SMs in kHz (0 when unknown or a CPU).
  unsigned ClockKHz = 0;
  /// The dynamic shared memory a block may opt in to (bytes), 0 if unknown.
  uint64_t MaxDynamicSharedBytes = 0;
  /// The replica of a buffer on this device is the buffer's host copy itself
  /// (the first CPU device): no allocation, no copies, and its validity is
  /// the host copy's.
  bool SharesHostMemory = false;
  /// Replica memory is ordinary host memory (any CPU device), so any other
  /// device copies to and from it as from the host.
  bool HostAddressable = false;
};

class Device {
public:
  explicit Device(DeviceProperties Props);
  virtual ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const DeviceProperties &properties() const { return Props; }
  const std::string &name() const { return Props.Name; }
  DeviceKind kind() const { return Props.Kind; }

  // Replica memory. -------------------------------------------------------
  /// \p Bytes of device memory (Bytes > 0). Fails with MemoryAllocation.
  Result allocate(uint64_t Bytes, DeviceAddr &Out);
  Result free(DeviceAddr Addr);
  Result copyHostToDevice(DeviceAddr Dst, const void *Src, uint64_t Bytes,
                          StreamHandle S = nullptr);
  Result copyDeviceToHost(void *Dst, DeviceAddr Src, uint64_t Bytes,
                          StreamHandle S = nullptr);
  /// Copies from this device's memory to \p DstDev's (which may be this
  /// device): peer to peer where there is a link, else the way
  /// canCopyDirectly describes, else staged through host memory. \p S is a
  /// stream of this device; a copy the destination device performs blocks.
  Result copyDeviceToDevice(Device &DstDev, DeviceAddr Dst, DeviceAddr Src,
                            uint64_t Bytes, StreamHandle S = nullptr);
  /// Copies from \p SrcDev's memory into this device's, queued on \p S, a
  /// stream of this device: the copy comes before what is queued behind it
  /// on \p S and is complete once \p S is synchronized. Needs a peer link
  /// from this device to \p SrcDev (hasPeerLink); the engine queues a
  /// launch's halo rows this way, ahead of the kernel that reads them.
  Result pullFromPeer(Device &SrcDev, DeviceAddr Dst, DeviceAddr Src,
                      uint64_t Bytes, StreamHandle S);
  /// One copy of pullFromPeers().
  struct PeerCopy {
    Device *From = nullptr;
    DeviceAddr Dst = 0, Src = 0;
    uint64_t Bytes = 0;
  };
  /// pullFromPeer() of several copies, which the device may queue together
  /// (a CUDA GPU copies two small ones in one kernel launch). Checked as
  /// pullFromPeer() first: an error queues none.
  Result pullFromPeers(const std::vector<PeerCopy> &Copies, StreamHandle S);
  /// Sets \p Bytes bytes at \p Dst to \p Value.
  Result memset(DeviceAddr Dst, uint8_t Value, uint64_t Bytes,
                StreamHandle S = nullptr);
  /// \p Height rows of \p Width bytes between host memory and this
  /// device's (to the device when \p ToDevice), the rows \p DevPitch bytes
  /// apart on the device and \p HostPitch on the host: cudaMemcpy2D's
  /// copy, in one transfer where the device has one (cuMemcpy2D).
  /// Complete on return.
  Result copy2D(bool ToDevice, DeviceAddr Dev, uint64_t DevPitch, void *Host,
                uint64_t HostPitch, uint64_t Width, uint64_t Height);

  /// Whether this device reaches \p Other's memory over a direct link
  /// (NVLink / PCIe P2P with peer access enabled).
  virtual bool hasPeerLink(const Device &Other) const;
  /// Whether a copy from this device to \p Other needs no staging in the
  /// host: the same device, a peer link, or host-addressable memory on
  /// either side.
  bool canCopyDirectly(const Device &Other) const;

  // Pinned host memory (cudaMallocHost). ----------------------------------
  virtual Result allocateHost(uint64_t Bytes, void *&Out);
  virtual Result freeHost(void *Ptr);
  /// Page-locks existing host memory [P, P + Bytes) so that copies between
  /// it and this device (on CUDA: every GPU, the registration is portable)
  /// go by DMA without staging, as cudaHostRegister. NotSupported where
  /// copies would not gain (the default).
  virtual Result registerHostMemory(void *P, uint64_t Bytes);
  virtual Result unregisterHostMemory(void *P);

  // Streams and events. ---------------------------------------------------
  /// The device's own streams: at least 3 on a GPU (compute, to-device,
  /// from-device), so transfers overlap kernels. Never null.
  virtual unsigned numInternalStreams() const = 0;
  virtual StreamHandle internalStream(unsigned I) = 0;
  virtual Result createStream(StreamHandle &Out) = 0;
  /// A stream whose work the device's block scheduler favours by
  /// \p Priority (CUDA's convention: lower is more urgent) over work of
  /// less urgent streams, and that does not synchronize with the legacy
  /// stream. The default is createStream: no priority.
  virtual Result createPriorityStream(StreamHandle &Out, int Priority) {
    (void)Priority;
    return createStream(Out);
  }
  /// SM partitions (CUDA green contexts, 12.4+ drivers): the multiple of
  /// SMs a partition is made of (8 on Hopper); 0, with why in \p Why,
  /// when the device cannot split its SMs. The default has none.
  virtual unsigned smPartitionGranularity(std::string &Why) {
    Why = "the device has no SM partitions";
    return 0;
  }
  /// A stream on each side of a split of the device's SMs: \p Sms SMs (a
  /// multiple of the granularity) for \p First, the others for \p Rest.
  /// Kernels queued on either run only on its SMs. Made once per size and
  /// kept with the device (never destroyed by the caller). NotSupported
  /// without partitions, InvalidValue for a size that leaves no group.
  virtual Result smPartitionStreams(unsigned Sms, StreamHandle &First,
                                    StreamHandle &Rest) {
    (void)Sms;
    (void)First;
    (void)Rest;
    return Result::error(ErrorCode::NotSupported,
                         "the device has no SM partitions");
  }
  virtual Result destroyStream(StreamHandle S) = 0;
  virtual Result synchronizeStream(StreamHandle S) = 0;
  virtual Result createEvent(EventHandle &Out) = 0;
  /// An event only for ordering: recordEvent, waitForEvent and
  /// synchronizeEvent, never elapsedTime. The default is createEvent; a
  /// CUDA device creates it without timing, which a wait on another GPU
  /// resolves sooner (a 4-GPU stencil's step: 6 us less,
  /// a probe on 4x H200, 2026-11-22).
  virtual Result createOrderingEvent(EventHandle &Out) {
    return createEvent(Out);
  }
  virtual Result recordEvent(EventHandle E, StreamHandle S) = 0;
  virtual Result synchronizeEvent(EventHandle E) = 0;
  /// Whether the work before the last record of \p E is done, without
  /// waiting for it (cuEventQuery). The default waits (synchronizeEvent):
  /// devices whose events complete as they are recorded.
  virtual Result queryEvent(EventHandle E, bool &Done);
  /// Orders stream \p S of this device after event \p E of \p Src (recorded
  /// on one of Src's streams): work queued on \p S later starts once what
  /// preceded the record is done. The default waits for the event on the
  /// host; a CUDA device queues the wait (cuStreamWaitEvent), host free.
  virtual Result waitForEvent(StreamHandle S, Device &Src, EventHandle E);
  /// Milliseconds between two recorded events.
  virtual Result elapsedTime(EventHandle Start, EventHandle End,
                             float &Ms) = 0;
  virtual Result destroyEvent(EventHandle E) = 0;
  /// Waits for all work on the device.
  virtual Result synchronize() = 0;

  // Kernels. ---------------------------------------------------------------
  /// Loads the GPU module of \p B: the cubin whose arch is this device's
  /// compute capability (sm_XY) when the bundle has one, else the PTX (the
  /// driver JIT-compiles it; its error log is in the message).
  /// InvalidKernelImage when no image fits or the driver refuses it;
  /// NotSupported on devices that do not load modules (the CPU).
  virtual Result loadModule(const Bundle &B, ModuleHandle &Out);
  virtual Result unloadModule(ModuleHandle M);
  /// The kernel called \p Name (its PTX entry) in \p M. InvalidValue (with
  /// the name) when there is none.
  virtual Result getFunction(ModuleHandle M, const std::string &Name,
                             FunctionHandle &Out);
  /// The address and size of the module variable \p Name.
  virtual Result getGlobal(ModuleHandle M, const std::string &Name,
                           DeviceAddr &Addr, uint64_t &Bytes);
  /// Launches \p F with the grid, block and dynamic shared memory given on
  /// stream \p S (asynchronous; a null stream is the device's first internal
  /// stream, and the call then returns when the kernel is complete).
  /// \p Params is cuLaunchKernel's kernelParams. Dynamic shared memory above
  /// 48 KiB is opted in to (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
  /// Counts a launch for fault injection first (FaultOp::Launch).
  Result launchKernel(FunctionHandle F, const uint32_t Grid[3],
                      const uint32_t Block[3], uint64_t DynamicSharedBytes,
                      StreamHandle S, void **Params);
  /// How many blocks of \p F with \p BlockThreads threads and
  /// \p DynamicSharedBytes of dynamic shared memory are resident on one SM
  /// at once (cuOccupancyMaxActiveBlocksPerMultiprocessor): what makes a
  /// wave, for the partitioner's tables. NotSupported on devices without
  /// the query (the CPU, the tests' devices).
  virtual Result maxActiveBlocksPerSM(FunctionHandle F, unsigned BlockThreads,
                                      uint64_t DynamicSharedBytes,
                                      unsigned &Out);
  /// The CUDA device attribute \p Attr (a CUdevice_attribute value, which
  /// is also the cudaDeviceAttr value) of a GPU, from the driver
  /// (cuDeviceGetAttribute). NotSupported on devices that are no CUDA GPU.
  virtual Result attribute(int Attr, int &Out);
  /// The function attribute \p Attr (a CUfunction_attribute value) of \p F
  /// (cuFuncGetAttribute): registers, static shared and local memory, ...
  /// NotSupported on devices without the query.
  virtual Result functionAttribute(FunctionHandle F, int Attr, int &Out);
  /// Free and total device memory (cuMemGetInfo). NotSupported on devices
  /// whose memory is the host's.
  virtual Result memoryInfo(uint64_t &Free, uint64_t &Total);
  /// Counts one launch on this device for fault injection: the injected
  /// fault's error (LaunchFailure) when CLEAVE_FAULT says this launch
  /// fails, else success. launchKernel calls it; whoever runs a CPU variant
  /// on a CPU device calls it before.
  Result checkLaunchFault();

protected:
  virtual Result launchKernelImpl(FunctionHandle F, const uint32_t Grid[3],
                                  const uint32_t Block[3],
                                  uint64_t DynamicSharedBytes, StreamHandle S,
                                  void **Params);

  virtual Result allocateImpl(uint64_t Bytes, DeviceAddr &Out) = 0;
  virtual Result freeImpl(DeviceAddr Addr) = 0;
  virtual Result copyHostToDeviceImpl(DeviceAddr Dst, const void *Src,
                                      uint64_t Bytes, StreamHandle S) = 0;
  virtual Result copyDeviceToHostImpl(void *Dst, DeviceAddr Src,
                                      uint64_t Bytes, StreamHandle S) = 0;
  /// Within this device.
  virtual Result copyWithinImpl(DeviceAddr Dst, DeviceAddr Src,
                                uint64_t Bytes, StreamHandle S) = 0;
  /// To another device of the same kind (peer link or not). The default
  /// stages through host memory.
  virtual Result copyPeerImpl(Device &DstDev, DeviceAddr Dst, DeviceAddr Src,
                              uint64_t Bytes, StreamHandle S);
  /// pullFromPeer() once checked. The default copies at once, from the
  /// source's side (complete on return, so ordered before anything on S).
  virtual Result pullFromPeerImpl(Device &SrcDev, DeviceAddr Dst,
                                  DeviceAddr Src, uint64_t Bytes,
                                  StreamHandle S);
  /// pullFromPeers() once checked; the default makes one pullFromPeerImpl
  /// after the other.
  virtual Result pullFromPeersImpl(const std::vector<PeerCopy> &Copies,
                                   StreamHandle S);
  virtual Result memsetImpl(DeviceAddr Dst, uint8_t Value, uint64_t Bytes,
                            StreamHandle S) = 0;
  /// copy2D() once checked; the default copies row by row.
  virtual Result copy2DImpl(bool ToDevice, DeviceAddr Dev, uint64_t DevPitch,
                            void *Host, uint64_t HostPitch, uint64_t Width,
                            uint64_t Height);

  /// The error an injected fault returns.
  Result injectedFault(FaultOp Op) const;
  /// Whether CLEAVE_FAULT fails this \p Op on this device (counts it).
  bool faultHere(FaultOp Op) const;
  /// Copies through a temporary host buffer.
  Result copyStaged(Device &DstDev, DeviceAddr Dst, DeviceAddr Src,
                    uint64_t Bytes, StreamHandle S);

private:
  DeviceProperties Props;
};

/// Which devices the runtime uses.
struct RegistryOptions {
  /// The CUDA driver library to dlopen; "none": do not look for GPUs.
  std::string CudaLibrary = "libcuda.so.1";
  /// Whether a CudaLibrary that does not load fails the registry
  /// (InitializationError) rather than leaving it CPU-only: a library the
  /// user named (CLEAVE_CUDA_LIBRARY) must load, as running CPU-only
  /// instead would hide the typo behind a slower program.
  bool LibraryMustLoad = false;
  /// The CPU devices' worker threads (CLEAVE_CPU_THREADS; 0: the cores).
  unsigned CpuThreads = 0;
  /// Copies of up to 4 MiB between GPUs with a peer link go by a copy
  /// kernel (CLEAVE_TUNE=peer_copy=kernel) rather than the copy engines.
  bool PeerCopyKernels = true;
};

/// The devices of the process: the CPU always, and every CUDA GPU that a
/// dlopen'ed libcuda reports, filtered and ordered by a selection in
/// CLEAVE_DEVICES syntax, a comma-separated list of
///
///   all     the CPU, then every GPU (also the meaning of an empty list)
///   cpu     one more CPU device; "cpu,cpu,cpu" makes three: cpu0 uses the
///           buffers' host copies, cpu1 and cpu2 have replica memory of
///           their own, so CI exercises the multi-device path for real
///   gpu     every GPU not yet named
///   gpuN    the GPU of CUDA ordinal N
///
/// Peer access is enabled between every pair of GPUs that support it.
class DeviceRegistry {
public:
  /// Builds the devices \p Selection names. Fails (InvalidDevice or
  /// NoDevice, with a message naming the problem and what exists) on an
  /// unknown name, a GPU that is not there, or a GPU named twice.
  static Result create(std::string_view Selection,
                       std::unique_ptr<DeviceRegistry> &Out,
                       const RegistryOptions &Opts = {});
  /// A registry of \p Devices, in that order (tests: devices such as
  /// NullGpu that no selection names).
  static std::unique_ptr<DeviceRegistry>
  fromDevices(std::vector<std::unique_ptr<Device>> Devices);
  ~DeviceRegistry();

  size_t size() const { return Devices.size(); }
  Device &device(size_t I) const { return *Devices[I]; }
  /// Every device, in selection order.
  std::vector<Device *> devices() const;
  /// The device called \p Name, or null.
  Device *find(std::string_view Name) const;
  /// How many GPUs the driver reported (selected or not).
  unsigned numGpusFound() const { return GpusFound; }
  /// Why no GPU was found ("libcuda.so.1: cannot open shared object ..."),
  /// empty when the driver loaded.
  const std::string &gpuStatus() const { return GpuStatus; }
  /// One line per device, for CLEAVE_LOG and error messages.
  std::string describe() const;

private:
  DeviceRegistry() = default;
  std::vector<std::unique_ptr<Device>> Devices;
  unsigned GpusFound = 0;
  std::string GpuStatus;
};

} // namespace rt
} // namespace cleave

#endif
