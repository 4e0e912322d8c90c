//===- CudaDevice.cpp - A CUDA GPU reached through the driver API ---------===//
//
// Part of Cleave's runtime (no LLVM). Each GPU has its primary context (the
// one the CUDA runtime uses, so contexts interoperate), three internal
// non-blocking streams (compute, to-device, from-device), and two pinned
// staging buffers through which copies from and to pageable host memory are
// pipelined: while the DMA engine moves one chunk, the host fills or drains
// the other. Every entry point first makes the context current on the
// calling thread. Nothing here links libcuda (CudaDriver.h).
//
//===----------------------------------------------------------------------===//
#include "DeviceFactories.h"

#ifdef CLEAVE_RT_HAVE_CUDA_H

#include "CudaDriver.h"
#include "CudaGreen.h"
#include "cleave/rt/HostCopy.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace cleave {
namespace rt {
namespace {

const CudaDriver *TheDriver = nullptr;

/// Page-locked host ranges, start -> bytes: registered with
/// cuMemHostRegister, or allocated with cuMemHostAlloc (through any GPU's
/// allocateHost). Both are portable: every context's copies may use them
/// without staging.
std::mutex RegisteredMutex;
std::map<uintptr_t, uint64_t> Registered;

constexpr unsigned NumStreams = 3;
/// Staged copies (pageable host memory) go through NumStaging pinned
/// chunks of StagingBytes each, kept in flight together; copies up to one
/// chunk go directly. In the probe, four chunks of 8 MiB, each filled or
/// emptied by 8 threads while the others' DMA ran, moved 50 GB/s from
/// pageable memory to one H200 and 76 GB/s to two at once, against 40 and
/// 61 GB/s with two chunks (bench/results/probe-host-copies/
/// probe-host-copies-2026-11-22-h200x2-d7e6972.txt; the runtime's own
/// hostCopy: HostCopy.cpp).
constexpr unsigned NumStaging = 4;
constexpr uint64_t StagingBytes = 8u << 20;

/// Copies between GPUs up to this size, between 16-byte aligned addresses,
/// are made by a kernel over the peer link instead of the copy engines.
/// On 4 H200s, a 64 KB halo row took 10 us by cuMemcpyPeerAsync and a wait,
/// and a stencil step with two rows into each GPU took 265 us by the copy
/// engines, queued or waited for, against 247 us by a kernel that reads
/// the rows over NVLink and 240 us with no rows at all
/// (a probe on 4x H200, 2026-11-22).
/// CLEAVE_TUNE=peer_copy=dma keeps every copy on the copy engines.
constexpr uint64_t KernelCopyMaxBytes = 4u << 20;

/// The copy kernel: one copy per row of blocks (blockIdx.y 0 or 1, so two
/// copies take one launch), each nvec 16-byte words from src to dst (a
/// grid-stride loop), then the ntail (< 16) bytes after them, one per
/// thread. Either address may be another GPU's (unified addressing, peer
/// access). Hand-written PTX, JIT-compiled by the driver for the device.
constexpr const char CopyKernelPtx[] = R"(
.version 7.0
.target sm_60
.address_size 64

.visible .entry cleave_peer_copy(.param .u64 dst0, .param .u64 src0,
                                 .param .u64 nvec0, .param .u64 ntail0,
                                 .param .u64 dst1, .param .u64 src1,
                                 .param .u64 nvec1, .param .u64 ntail1)
{
  .reg .pred %p<4>;
  .reg .b16 %rs<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<20>;

  mov.u32 %r9, %ctaid.y;
  setp.eq.u32 %p3, %r9, 0;
  ld.param.u64 %rd1, [dst0];
  ld.param.u64 %rd15, [dst1];
  selp.b64 %rd1, %rd1, %rd15, %p3;
  ld.param.u64 %rd2, [src0];
  ld.param.u64 %rd16, [src1];
  selp.b64 %rd2, %rd2, %rd16, %p3;
  ld.param.u64 %rd3, [nvec0];
  ld.param.u64 %rd17, [nvec1];
  selp.b64 %rd3, %rd3, %rd17, %p3;
  ld.param.u64 %rd4, [ntail0];
  ld.param.u64 %rd18, [ntail1];
  selp.b64 %rd4, %rd4, %rd18, %p3;
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd5, %r1, %r2;
  cvt.u64.u32 %rd6, %r3;
  add.u64 %rd5, %rd5, %rd6;
  mul.wide.u32 %rd7, %r4, %r2;
  mov.u64 %rd8, %rd5;
$Lvec:
  setp.ge.u64 %p1, %rd8, %rd3;
  @%p1 bra $Ltail;
  shl.b64 %rd9, %rd8, 4;
  add.u64 %rd10, %rd2, %rd9;
  ld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd10];
  add.u64 %rd11, %rd1, %rd9;
  st.global.v4.u32 [%rd11], {%r5, %r6, %r7, %r8};
  add.u64 %rd8, %rd8, %rd7;
  bra.uni $Lvec;
$Ltail:
  setp.ge.u64 %p2, %rd5, %rd4;
  @%p2 bra $Ldone;
  shl.b64 %rd12, %rd3, 4;
  add.u64 %rd12, %rd12, %rd5;
  add.u64 %rd13, %rd2, %rd12;
  ld.global.u8 %rs1, [%rd13];
  add.u64 %rd14, %rd1, %rd12;
  st.global.u8 [%rd14], %rs1;
$Ldone:
  ret;
}
)";
constexpr unsigned CopyKernelBlock = 256;
constexpr unsigned CopyKernelMaxGrid = 1024;

class CudaDevice final : public Device {
public:
  CudaDevice(DeviceProperties P, const CudaDriver &D, CUdevice Dev,
             bool PeerCopyKernels)
      : Device(std::move(P)), Drv(D), Dev(Dev),
        PeerCopyKernels(PeerCopyKernels) {}

  Result init() {
    if (CUresult R = Drv.cuDevicePrimaryCtxRetain(&Ctx, Dev))
      return fail(R, "cuDevicePrimaryCtxRetain");
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    for (unsigned I = 0; I < NumStreams; ++I)
      if (CUresult R = Drv.cuStreamCreate(&Streams[I], CU_STREAM_NON_BLOCKING))
        return fail(R, "cuStreamCreate");
    for (unsigned I = 0; I < NumStaging; ++I) {
      if (CUresult R = Drv.cuMemHostAlloc(&Staging[I], StagingBytes,
                                          CU_MEMHOSTALLOC_PORTABLE))
        return fail(R, "cuMemHostAlloc (staging buffer)");
      if (CUresult R =
              Drv.cuEventCreate(&StagingDone[I], CU_EVENT_DISABLE_TIMING))
        return fail(R, "cuEventCreate");
    }
    return Result::success();
  }

  ~CudaDevice() override {
    if (!Ctx)
      return;
    (void)makeCurrent();
    Drv.cuCtxSynchronize();
    Green.reset();
    for (CUevent E : UserEvents)
      Drv.cuEventDestroy(E);
    for (CUstream S : UserStreams)
      Drv.cuStreamDestroy(S);
    for (unsigned I = 0; I < NumStaging; ++I) {
      if (StagingDone[I])
        Drv.cuEventDestroy(StagingDone[I]);
      if (Staging[I])
        Drv.cuMemFreeHost(Staging[I]);
    }
    for (CUstream S : Streams)
      if (S)
        Drv.cuStreamDestroy(S);
    if (CopyModule)
      Drv.cuModuleUnload(CopyModule);
    Drv.cuDevicePrimaryCtxRelease(Dev);
    generation().fetch_add(1, std::memory_order_acq_rel);
  }

  CUcontext context() const { return Ctx; }
  /// Makes Ctx current on the calling thread. Each thread remembers the
  /// context it last made current (with the generation of the devices, so
  /// that a context released since is set again): a launch costs one
  /// driver call less.
  Result makeCurrent() const {
    struct Current {
      CUcontext Ctx = nullptr;
      uint64_t Generation = 0;
    };
    thread_local Current Cur;
    uint64_t G = generation().load(std::memory_order_acquire);
    if (Cur.Ctx == Ctx && Cur.Generation == G)
      return Result::success();
    if (CUresult R = Drv.cuCtxSetCurrent(Ctx))
      return fail(R, "cuCtxSetCurrent");
    Cur.Ctx = Ctx;
    Cur.Generation = G;
    return Result::success();
  }
  /// Raised when a device is destroyed (makeCurrent()).
  static std::atomic<uint64_t> &generation() {
    static std::atomic<uint64_t> G{1};
    return G;
  }
  CUdevice cuDevice() const { return Dev; }
  void addPeer(const Device *Other) { Peers.insert(Other); }

  bool hasPeerLink(const Device &Other) const override {
    return Peers.count(&Other) != 0;
  }

  Result allocateHost(uint64_t Bytes, void *&Out) override {
    Out = nullptr;
    if (Bytes == 0)
      return Result::success();
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuMemHostAlloc(&Out, Bytes, CU_MEMHOSTALLOC_PORTABLE))
      return fail(R, "cuMemHostAlloc");
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      Pinned[reinterpret_cast<uintptr_t>(Out)] = Bytes;
    }
    std::lock_guard<std::mutex> Lock(RegisteredMutex);
    Registered[reinterpret_cast<uintptr_t>(Out)] = Bytes;
    return Result::success();
  }
  Result freeHost(void *Ptr) override {
    if (!Ptr)
      return Result::success();
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!Pinned.erase(reinterpret_cast<uintptr_t>(Ptr)))
        return Result::error(ErrorCode::InvalidValue,
                             "not pinned memory of " + name());
    }
    {
      std::lock_guard<std::mutex> Lock(RegisteredMutex);
      Registered.erase(reinterpret_cast<uintptr_t>(Ptr));
    }
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuMemFreeHost(Ptr))
      return fail(R, "cuMemFreeHost");
    return Result::success();
  }

  Result registerHostMemory(void *P, uint64_t Bytes) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R =
            Drv.cuMemHostRegister(P, Bytes, CU_MEMHOSTREGISTER_PORTABLE))
      return fail(R, "cuMemHostRegister");
    std::lock_guard<std::mutex> Lock(RegisteredMutex);
    Registered[reinterpret_cast<uintptr_t>(P)] = Bytes;
    return Result::success();
  }
  Result unregisterHostMemory(void *P) override {
    {
      std::lock_guard<std::mutex> Lock(RegisteredMutex);
      if (!Registered.erase(reinterpret_cast<uintptr_t>(P)))
        return Result::error(ErrorCode::InvalidValue,
                             "host memory not registered");
    }
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuMemHostUnregister(P))
      return fail(R, "cuMemHostUnregister");
    return Result::success();
  }

  unsigned numInternalStreams() const override { return NumStreams; }
  StreamHandle internalStream(unsigned I) override {
    return Streams[I % NumStreams];
  }
  Result createStream(StreamHandle &Out) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream S = nullptr;
    if (CUresult R = Drv.cuStreamCreate(&S, CU_STREAM_DEFAULT))
      return fail(R, "cuStreamCreate");
    std::lock_guard<std::mutex> Lock(Mutex);
    UserStreams.insert(S);
    Out = S;
    return Result::success();
  }
  Result createPriorityStream(StreamHandle &Out, int Priority) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream S = nullptr;
    if (CUresult R = Drv.cuStreamCreateWithPriority(
            &S, CU_STREAM_NON_BLOCKING, Priority))
      return fail(R, "cuStreamCreateWithPriority");
    std::lock_guard<std::mutex> Lock(Mutex);
    UserStreams.insert(S);
    Out = S;
    return Result::success();
  }
  unsigned smPartitionGranularity(std::string &Why) override {
    if (!makeCurrent().ok()) {
      Why = "the device's context cannot be made current";
      return 0;
    }
    return green().granularity(Why);
  }
  Result smPartitionStreams(unsigned Sms, StreamHandle &First,
                            StreamHandle &Rest) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream A = nullptr, B = nullptr;
    if (Result R = green().streams(Sms, A, B); !R.ok())
      return R;
    First = A;
    Rest = B;
    return Result::success();
  }
  Result destroyStream(StreamHandle S) override {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!UserStreams.erase(static_cast<CUstream>(S)))
        return badHandle("stream");
    }
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuStreamDestroy(static_cast<CUstream>(S)))
      return fail(R, "cuStreamDestroy");
    return Result::success();
  }
  Result synchronizeStream(StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuStreamSynchronize(stream(S)))
      return fail(R, "cuStreamSynchronize");
    return Result::success();
  }
  Result createEvent(EventHandle &Out) override {
    return createEventWith(CU_EVENT_DEFAULT, Out);
  }
  Result createOrderingEvent(EventHandle &Out) override {
    return createEventWith(CU_EVENT_DISABLE_TIMING, Out);
  }
  Result recordEvent(EventHandle E, StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuEventRecord(static_cast<CUevent>(E), stream(S)))
      return fail(R, "cuEventRecord");
    return Result::success();
  }
  Result waitForEvent(StreamHandle S, Device &Src, EventHandle E) override {
    if (Src.kind() != DeviceKind::Cuda)
      return Device::waitForEvent(S, Src, E);
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R =
            Drv.cuStreamWaitEvent(stream(S), static_cast<CUevent>(E), 0))
      return fail(R, "cuStreamWaitEvent");
    return Result::success();
  }
  Result synchronizeEvent(EventHandle E) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuEventSynchronize(static_cast<CUevent>(E)))
      return fail(R, "cuEventSynchronize");
    return Result::success();
  }
  Result queryEvent(EventHandle E, bool &Done) override {
    Done = false;
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUresult R = Drv.cuEventQuery(static_cast<CUevent>(E));
    if (R == CUDA_ERROR_NOT_READY)
      return Result::success();
    if (R)
      return fail(R, "cuEventQuery");
    Done = true;
    return Result::success();
  }
  Result elapsedTime(EventHandle Start, EventHandle End, float &Ms) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuEventElapsedTime(&Ms, static_cast<CUevent>(Start),
                                            static_cast<CUevent>(End)))
      return fail(R, "cuEventElapsedTime");
    return Result::success();
  }
  Result destroyEvent(EventHandle E) override {
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!UserEvents.erase(static_cast<CUevent>(E)))
        return badHandle("event");
    }
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuEventDestroy(static_cast<CUevent>(E)))
      return fail(R, "cuEventDestroy");
    return Result::success();
  }
  Result synchronize() override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuCtxSynchronize())
      return fail(R, "cuCtxSynchronize");
    return Result::success();
  }

  Result loadModule(const Bundle &B, ModuleHandle &Out) override {
    Out = nullptr;
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    std::string Arch =
        "sm_" + std::to_string(properties().ComputeCapabilityMajor * 10 +
                               properties().ComputeCapabilityMinor);
    std::string Why;
    // A cubin for exactly this SM first; the PTX (JIT) otherwise.
    if (const BundleImage *Cubin = B.findImage(ImageKind::Cubin, Arch)) {
      CUmodule M = nullptr;
      std::string Log;
      CUresult R = loadImage(Cubin->Data.c_str(), M, Log);
      if (R == CUDA_SUCCESS) {
        Out = M;
        return Result::success();
      }
      Why = "cubin for " + Arch + ": " + Drv.errorString(R) +
            (Log.empty() ? "" : " (" + Log + ")") + "; ";
    }
    const BundleImage *Ptx = nullptr;
    for (const BundleImage &I : B.Images)
      if (I.Kind == ImageKind::PTX)
        Ptx = &I;
    if (!Ptx)
      return Result::error(ErrorCode::InvalidKernelImage,
                           Why + "no PTX and no cubin for " + Arch + " in " +
                               B.Source + "'s bundle for " + name());
    CUmodule M = nullptr;
    std::string Log;
    if (CUresult R = loadImage(Ptx->Data.c_str(), M, Log))
      return Result::error(ErrorCode::InvalidKernelImage,
                           Why + "JIT of the " + Ptx->Arch + " PTX for " +
                               Arch + " on " + name() + " failed: " +
                               Drv.errorString(R) +
                               (Log.empty() ? "" : ": " + Log));
    Out = M;
    return Result::success();
  }
  Result unloadModule(ModuleHandle M) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuModuleUnload(static_cast<CUmodule>(M)))
      return fail(R, "cuModuleUnload");
    return Result::success();
  }
  Result getFunction(ModuleHandle M, const std::string &Name,
                     FunctionHandle &Out) override {
    Out = nullptr;
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUfunction F = nullptr;
    if (CUresult R =
            Drv.cuModuleGetFunction(&F, static_cast<CUmodule>(M), Name.c_str()))
      return Result::error(R == CUDA_ERROR_NOT_FOUND ? ErrorCode::InvalidValue
                                                     : toErrorCode(R),
                           "no kernel " + Name + " in the module on " +
                               name() + ": " + Drv.errorString(R));
    Out = F;
    return Result::success();
  }
  Result getGlobal(ModuleHandle M, const std::string &Name, DeviceAddr &Addr,
                   uint64_t &Bytes) override {
    Addr = 0;
    Bytes = 0;
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUdeviceptr P = 0;
    size_t N = 0;
    if (CUresult R = Drv.cuModuleGetGlobal(&P, &N, static_cast<CUmodule>(M),
                                           Name.c_str()))
      return Result::error(R == CUDA_ERROR_NOT_FOUND ? ErrorCode::InvalidValue
                                                     : toErrorCode(R),
                           "no variable " + Name + " in the module on " +
                               name() + ": " + Drv.errorString(R));
    Addr = P;
    Bytes = N;
    return Result::success();
  }

  Result maxActiveBlocksPerSM(FunctionHandle Fn, unsigned BlockThreads,
                              uint64_t DynamicShared,
                              unsigned &Out) override {
    Out = 0;
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    int N = 0;
    if (CUresult R = Drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &N, static_cast<CUfunction>(Fn), int(BlockThreads),
            size_t(DynamicShared)))
      return fail(R, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    Out = unsigned(std::max(N, 0));
    return Result::success();
  }

  Result attribute(int Attr, int &Out) override {
    if (CUresult R = Drv.cuDeviceGetAttribute(
            &Out, static_cast<CUdevice_attribute>(Attr), Dev))
      return fail(R, "cuDeviceGetAttribute(" + std::to_string(Attr) + ")");
    return Result::success();
  }

  Result functionAttribute(FunctionHandle Fn, int Attr, int &Out) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuFuncGetAttribute(
            &Out, static_cast<CUfunction_attribute>(Attr),
            static_cast<CUfunction>(Fn)))
      return fail(R, "cuFuncGetAttribute(" + std::to_string(Attr) + ")");
    return Result::success();
  }

  Result memoryInfo(uint64_t &Free, uint64_t &Total) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    size_t F = 0, T = 0;
    if (CUresult R = Drv.cuMemGetInfo(&F, &T))
      return fail(R, "cuMemGetInfo");
    Free = F;
    Total = T;
    return Result::success();
  }

protected:
  Result launchKernelImpl(FunctionHandle Fn, const uint32_t Grid[3],
                          const uint32_t Block[3], uint64_t DynamicShared,
                          StreamHandle S, void **Params) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    auto F = static_cast<CUfunction>(Fn);
    if (DynamicShared > 0xFFFFFFFFu)
      return Result::error(ErrorCode::InvalidValue,
                           std::to_string(DynamicShared) +
                               " bytes of dynamic shared memory on " + name());
    if (DynamicShared > 48 * 1024) {
      std::lock_guard<std::mutex> Lock(Mutex);
      uint64_t &Set = SharedOptIn[F];
      if (Set < DynamicShared) {
        if (CUresult R = Drv.cuFuncSetAttribute(
                F, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                int(DynamicShared)))
          return fail(R, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " +
                             std::to_string(DynamicShared) + ")");
        Set = DynamicShared;
      }
    }
    CUstream St = stream(S);
    if (CUresult R = Drv.cuLaunchKernel(F, Grid[0], Grid[1], Grid[2], Block[0],
                                        Block[1], Block[2],
                                        unsigned(DynamicShared), St, Params,
                                        nullptr))
      return fail(R, "cuLaunchKernel (grid " + std::to_string(Grid[0]) + "x" +
                         std::to_string(Grid[1]) + "x" +
                         std::to_string(Grid[2]) + ", block " +
                         std::to_string(Block[0]) + "x" +
                         std::to_string(Block[1]) + "x" +
                         std::to_string(Block[2]) + ")");
    if (!S)
      if (CUresult R = Drv.cuStreamSynchronize(St))
        return fail(R, "cuStreamSynchronize after a launch");
    return Result::success();
  }

  Result allocateImpl(uint64_t Bytes, DeviceAddr &Out) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUdeviceptr P = 0;
    if (CUresult R = Drv.cuMemAlloc(&P, Bytes))
      return fail(R, "cuMemAlloc of " + std::to_string(Bytes) + " bytes");
    Out = P;
    return Result::success();
  }
  Result freeImpl(DeviceAddr Addr) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    if (CUresult R = Drv.cuMemFree(Addr))
      return fail(R, "cuMemFree");
    return Result::success();
  }

  Result copyHostToDeviceImpl(DeviceAddr Dst, const void *Src, uint64_t Bytes,
                              StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream St = S ? stream(S) : Streams[1];
    if (Bytes <= StagingBytes || isPinned(Src, Bytes)) {
      if (CUresult R = Drv.cuMemcpyHtoDAsync(Dst, Src, Bytes, St))
        return fail(R, "cuMemcpyHtoDAsync");
    } else {
      // Pipelined through the staging buffers: fill one while the other's
      // DMA runs. A buffer is refilled only after its last DMA finished.
      std::lock_guard<std::mutex> Lock(StagingMutex);
      const char *From = static_cast<const char *>(Src);
      for (uint64_t Off = 0, I = 0; Off < Bytes; Off += StagingBytes, ++I) {
        unsigned B = I % NumStaging;
        uint64_t N = std::min(StagingBytes, Bytes - Off);
        if (CUresult R = Drv.cuEventSynchronize(StagingDone[B]))
          return fail(R, "cuEventSynchronize (staging)");
        hostCopy(Staging[B], From + Off, N);
        if (CUresult R = Drv.cuMemcpyHtoDAsync(Dst + Off, Staging[B], N, St))
          return fail(R, "cuMemcpyHtoDAsync");
        if (CUresult R = Drv.cuEventRecord(StagingDone[B], St))
          return fail(R, "cuEventRecord (staging)");
      }
    }
    if (!S)
      if (CUresult R = Drv.cuStreamSynchronize(St))
        return fail(R, "cuStreamSynchronize");
    return Result::success();
  }

  Result copy2DImpl(bool ToDevice, DeviceAddr Dev, uint64_t DevPitch,
                    void *Host, uint64_t HostPitch, uint64_t Width,
                    uint64_t Height) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUDA_MEMCPY2D C = {};
    C.WidthInBytes = Width;
    C.Height = Height;
    CUmemorytype HostType = CU_MEMORYTYPE_HOST;
    if (ToDevice) {
      C.srcMemoryType = HostType;
      C.srcHost = Host;
      C.srcPitch = HostPitch;
      C.dstMemoryType = CU_MEMORYTYPE_DEVICE;
      C.dstDevice = Dev;
      C.dstPitch = DevPitch;
    } else {
      C.srcMemoryType = CU_MEMORYTYPE_DEVICE;
      C.srcDevice = Dev;
      C.srcPitch = DevPitch;
      C.dstMemoryType = HostType;
      C.dstHost = Host;
      C.dstPitch = HostPitch;
    }
    // The streams of the 1-D copies, each way; pageable memory is staged
    // by the driver.
    CUstream St = ToDevice ? Streams[1] : Streams[2];
    if (CUresult R = Drv.cuMemcpy2DAsync(&C, St))
      return fail(R, "cuMemcpy2DAsync");
    if (CUresult R = Drv.cuStreamSynchronize(St))
      return fail(R, "cuStreamSynchronize");
    return Result::success();
  }

  Result copyDeviceToHostImpl(void *Dst, DeviceAddr Src, uint64_t Bytes,
                              StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream St = S ? stream(S) : Streams[2];
    if (isPinned(Dst, Bytes)) {
      if (CUresult R = Drv.cuMemcpyDtoHAsync(Dst, Src, Bytes, St))
        return fail(R, "cuMemcpyDtoHAsync");
      if (!S)
        if (CUresult R = Drv.cuStreamSynchronize(St))
          return fail(R, "cuStreamSynchronize");
      return Result::success();
    }
    // Pageable destination: the host must drain each chunk, so this copy is
    // complete on return whatever the stream. Up to NumStaging chunks' DMA
    // is in flight while the host empties the oldest.
    std::lock_guard<std::mutex> Lock(StagingMutex);
    char *To = static_cast<char *>(Dst);
    uint64_t Chunks = (Bytes + StagingBytes - 1) / StagingBytes;
    auto ChunkBytes = [&](uint64_t I) {
      return std::min(StagingBytes, Bytes - I * StagingBytes);
    };
    uint64_t Issued = 0;
    for (uint64_t I = 0; I < Chunks; ++I) {
      for (; Issued < Chunks && Issued < I + NumStaging; ++Issued) {
        unsigned B = Issued % NumStaging;
        // A chunk still read by an earlier copy's DMA (another stream) is
        // not overwritten.
        if (Issued < NumStaging)
          if (CUresult R = Drv.cuEventSynchronize(StagingDone[B]))
            return fail(R, "cuEventSynchronize (staging)");
        if (CUresult R = Drv.cuMemcpyDtoHAsync(
                Staging[B], Src + Issued * StagingBytes, ChunkBytes(Issued), St))
          return fail(R, "cuMemcpyDtoHAsync");
        if (CUresult R = Drv.cuEventRecord(StagingDone[B], St))
          return fail(R, "cuEventRecord (staging)");
      }
      unsigned B = I % NumStaging;
      if (CUresult R = Drv.cuEventSynchronize(StagingDone[B]))
        return fail(R, "cuEventSynchronize (staging)");
      hostCopy(To + I * StagingBytes, Staging[B], ChunkBytes(I));
    }
    return Result::success();
  }

  Result copyWithinImpl(DeviceAddr Dst, DeviceAddr Src, uint64_t Bytes,
                        StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream St = S ? stream(S) : Streams[0];
    if (CUresult R = Drv.cuMemcpyDtoDAsync(Dst, Src, Bytes, St))
      return fail(R, "cuMemcpyDtoDAsync");
    if (!S)
      if (CUresult R = Drv.cuStreamSynchronize(St))
        return fail(R, "cuStreamSynchronize");
    return Result::success();
  }

  Result copyPeerImpl(Device &DstDev, DeviceAddr Dst, DeviceAddr Src,
                      uint64_t Bytes, StreamHandle S) override {
    // Kinds, not RTTI: the tests' devices may be built without it.
    if (DstDev.kind() != DeviceKind::Cuda)
      return copyStaged(DstDev, Dst, Src, Bytes, S);
    auto *To = static_cast<CudaDevice *>(&DstDev);
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream St = S ? stream(S) : Streams[2];
    // A small copy is pushed by a kernel here, which writes over the link.
    bool Pushed = false;
    KernelCopy C{Dst, Src, Bytes, Ctx};
    if (hasPeerLink(DstDev) && kernelCopies(C)) {
      Result K = copyByKernel(&C, 1, St, Pushed);
      if (!K.ok())
        return K;
    }
    // Without peer access enabled the driver stages the copy itself.
    if (!Pushed)
      if (CUresult R =
              Drv.cuMemcpyPeerAsync(Dst, To->Ctx, Src, Ctx, Bytes, St))
        return fail(R, "cuMemcpyPeerAsync");
    if (!S)
      if (CUresult R = Drv.cuStreamSynchronize(St))
        return fail(R, "cuStreamSynchronize");
    return Result::success();
  }

  Result pullFromPeerImpl(Device &SrcDev, DeviceAddr Dst, DeviceAddr Src,
                          uint64_t Bytes, StreamHandle S) override {
    return pullFromPeersImpl({{&SrcDev, Dst, Src, Bytes}}, S);
  }

  /// Two small copies take one launch of the copy kernel; the others go
  /// by the copy engines.
  Result pullFromPeersImpl(const std::vector<PeerCopy> &Copies,
                           StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream St = stream(S);
    KernelCopy Batch[2];
    unsigned InBatch = 0;
    auto Flush = [&]() -> Result {
      bool Done = false;
      Result K = copyByKernel(Batch, InBatch, St, Done);
      if (!K.ok())
        return K;
      for (unsigned I = 0; I < InBatch && !Done; ++I)
        if (CUresult R = Drv.cuMemcpyPeerAsync(Batch[I].Dst, Ctx, Batch[I].Src,
                                               Batch[I].SrcCtx,
                                               Batch[I].Bytes, St))
          return fail(R, "cuMemcpyPeerAsync");
      InBatch = 0;
      return Result::success();
    };
    for (const PeerCopy &C : Copies) {
      auto *From = static_cast<CudaDevice *>(C.From); // checked: same kind
      KernelCopy K{C.Dst, C.Src, C.Bytes, From->Ctx};
      if (kernelCopies(K)) {
        Batch[InBatch++] = K;
        if (InBatch == 2)
          if (Result F = Flush(); !F.ok())
            return F;
        continue;
      }
      if (CUresult R =
              Drv.cuMemcpyPeerAsync(C.Dst, Ctx, C.Src, From->Ctx, C.Bytes, St))
        return fail(R, "cuMemcpyPeerAsync");
    }
    return InBatch ? Flush() : Result::success();
  }

  Result memsetImpl(DeviceAddr Dst, uint8_t Value, uint64_t Bytes,
                    StreamHandle S) override {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUstream St = S ? stream(S) : Streams[0];
    if (CUresult R = Drv.cuMemsetD8Async(Dst, Value, Bytes, St))
      return fail(R, "cuMemsetD8Async");
    if (!S)
      if (CUresult R = Drv.cuStreamSynchronize(St))
        return fail(R, "cuStreamSynchronize");
    return Result::success();
  }

private:
  Result createEventWith(unsigned Flags, EventHandle &Out) {
    Result Cur = makeCurrent();
    if (!Cur.ok())
      return Cur;
    CUevent E = nullptr;
    if (CUresult R = Drv.cuEventCreate(&E, Flags))
      return fail(R, "cuEventCreate");
    std::lock_guard<std::mutex> Lock(Mutex);
    UserEvents.insert(E);
    Out = E;
    return Result::success();
  }
  /// One copy for the copy kernel.
  struct KernelCopy {
    DeviceAddr Dst = 0, Src = 0;
    uint64_t Bytes = 0;
    CUcontext SrcCtx = nullptr; ///< for the copy engines, if it comes to it
  };
  static bool kernelCopies(const KernelCopy &C) {
    return C.Bytes <= KernelCopyMaxBytes && (C.Dst | C.Src) % 16 == 0;
  }
  /// Queues the copy kernel for \p N (1 or 2) copies on \p St (this
  /// context current), each small and aligned enough (kernelCopies), when
  /// the kernel loads; \p Done says whether it did. Loading it fails at
  /// most once: the copy engines take every copy after that.
  Result copyByKernel(const KernelCopy *Copies, unsigned N, CUstream St,
                      bool &Done) {
    Done = false;
    CUfunction F = nullptr;
    {
      std::lock_guard<std::mutex> Lock(Mutex);
      if (!CopyKernelTried) {
        CopyKernelTried = true;
        std::string Log;
        if (PeerCopyKernels &&
            loadImage(CopyKernelPtx, CopyModule, Log) == CUDA_SUCCESS &&
            Drv.cuModuleGetFunction(&CopyKernel, CopyModule,
                                    "cleave_peer_copy") != CUDA_SUCCESS)
          CopyKernel = nullptr;
      }
      F = CopyKernel;
    }
    if (!F)
      return Result::success();
    uint64_t P[2][4] = {};
    uint64_t Threads = 0, Bytes = 0;
    for (unsigned I = 0; I < N; ++I) {
      P[I][0] = Copies[I].Dst;
      P[I][1] = Copies[I].Src;
      P[I][2] = Copies[I].Bytes / 16;
      P[I][3] = Copies[I].Bytes % 16;
      Threads = std::max(Threads, std::max(P[I][2], P[I][3]));
      Bytes += Copies[I].Bytes;
    }
    unsigned Grid = unsigned(std::min<uint64_t>(
        (Threads + CopyKernelBlock - 1) / CopyKernelBlock, CopyKernelMaxGrid));
    void *Params[8];
    for (unsigned I = 0; I < 8; ++I)
      Params[I] = &P[I / 4][I % 4];
    if (CUresult R = Drv.cuLaunchKernel(F, Grid, N, 1, CopyKernelBlock, 1, 1,
                                        0, St, Params, nullptr))
      return fail(R, "cuLaunchKernel (peer copy of " + std::to_string(Bytes) +
                         " bytes)");
    Done = true;
    return Result::success();
  }

  /// cuModuleLoadDataEx with the JIT's error log captured.
  CUresult loadImage(const void *Image, CUmodule &M, std::string &Log) {
    char Buf[8192] = {};
    CUjit_option Opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *Vals[] = {Buf, reinterpret_cast<void *>(uintptr_t(sizeof(Buf) - 1))};
    CUresult R = Drv.cuModuleLoadDataEx(&M, Image, 2, Opts, Vals);
    Log = Buf;
    while (!Log.empty() && (Log.back() == '\n' || Log.back() == '\0'))
      Log.pop_back();
    for (char &C : Log)
      if (C == '\n')
        C = ' ';
    return R;
  }
  Result fail(CUresult R, const std::string &What) const {
    return Result::error(toErrorCode(R),
                         What + " on " + name() + ": " + Drv.errorString(R));
  }
  Result badHandle(const char *What) const {
    return Result::error(ErrorCode::InvalidResourceHandle,
                         std::string("not a ") + What + " of " + name());
  }
  /// A null stream means the device's first internal stream.
  CUstream stream(StreamHandle S) const {
    return S ? static_cast<CUstream>(S) : Streams[0];
  }
  /// Whether [P, P + Bytes) lies in page-locked memory of any context.
  static bool isPinned(const void *P, uint64_t Bytes) {
    auto A = reinterpret_cast<uintptr_t>(P);
    std::lock_guard<std::mutex> Lock(RegisteredMutex);
    auto It = Registered.upper_bound(A);
    if (It == Registered.begin())
      return false;
    --It;
    return A - It->first <= It->second && Bytes <= It->second - (A - It->first);
  }

  const CudaDriver &Drv;
  CUdevice Dev;
  CUcontext Ctx = nullptr;
  CUstream Streams[NumStreams] = {};
  void *Staging[NumStaging] = {};
  CUevent StagingDone[NumStaging] = {};
  std::mutex StagingMutex;
  std::mutex Mutex;
  /// This context's cuMemHostAlloc allocations (freeHost frees them here).
  std::map<uintptr_t, uint64_t> Pinned;
  std::set<CUstream> UserStreams;
  std::set<CUevent> UserEvents;
  std::set<const Device *> Peers;
  std::map<CUfunction, uint64_t> SharedOptIn;
  /// The copy kernel (copyByKernel), loaded on first use; null if it did
  /// not load or PeerCopyKernels is off (CLEAVE_TUNE=peer_copy=dma).
  const bool PeerCopyKernels;
  bool CopyKernelTried = false;
  CUmodule CopyModule = nullptr;
  CUfunction CopyKernel = nullptr;
  /// SM splits (green contexts), made at the first question.
  std::unique_ptr<GreenPartitions> Green;
  GreenPartitions &green() {
    std::lock_guard<std::mutex> Lock(Mutex);
    if (!Green)
      Green = std::make_unique<GreenPartitions>(Drv, Dev);
    return *Green;
  }
};

} // namespace

unsigned discoverCudaDevices(const std::string &Library, std::string &Why,
                             bool &LoadFailed) {
  const CudaDriver *D = loadCudaDriver(Library, Why);
  LoadFailed = !D;
  if (!D)
    return 0;
  if (CUresult R = D->cuInit(0)) {
    Why = "cuInit failed: " + D->errorString(R);
    return 0;
  }
  int Count = 0;
  if (CUresult R = D->cuDeviceGetCount(&Count)) {
    Why = "cuDeviceGetCount failed: " + D->errorString(R);
    return 0;
  }
  if (Count == 0)
    Why = "the CUDA driver reports no GPU";
  TheDriver = D;
  return static_cast<unsigned>(Count);
}

Result createCudaDevice(int Ordinal, bool PeerCopyKernels,
                        std::unique_ptr<Device> &Out) {
  const CudaDriver *D = TheDriver;
  if (!D)
    return Result::error(ErrorCode::NoDevice, "the CUDA driver is not loaded");
  CUdevice Dev = 0;
  if (CUresult R = D->cuDeviceGet(&Dev, Ordinal))
    return Result::error(toErrorCode(R), "cuDeviceGet(" +
                                             std::to_string(Ordinal) +
                                             "): " + D->errorString(R));
  DeviceProperties P;
  P.Name = "gpu" + std::to_string(Ordinal);
  P.Kind = DeviceKind::Cuda;
  P.Ordinal = Ordinal;
  char Name[256] = {};
  if (D->cuDeviceGetName(Name, sizeof(Name) - 1, Dev) == CUDA_SUCCESS)
    P.Description = Name;
  size_t Total = 0;
  if (D->cuDeviceTotalMem(&Total, Dev) == CUDA_SUCCESS)
    P.TotalMemory = Total;
  int V = 0;
  if (D->cuDeviceGetAttribute(&V, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                              Dev) == CUDA_SUCCESS)
    P.ComputeUnits = static_cast<unsigned>(V);
  D->cuDeviceGetAttribute(&P.ComputeCapabilityMajor,
                          CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Dev);
  D->cuDeviceGetAttribute(&P.ComputeCapabilityMinor,
                          CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Dev);
  if (D->cuDeviceGetAttribute(&V, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, Dev) ==
      CUDA_SUCCESS)
    P.ClockKHz = static_cast<unsigned>(V);
  if (D->cuDeviceGetAttribute(
          &V, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, Dev) ==
      CUDA_SUCCESS)
    P.MaxDynamicSharedBytes = static_cast<uint64_t>(V);
  auto G = std::make_unique<CudaDevice>(std::move(P), *D, Dev, PeerCopyKernels);
  Result R = G->init();
  if (!R.ok())
    return R;
  Out = std::move(G);
  return Result::success();
}

void enableCudaPeerAccess(const std::vector<Device *> &Gpus) {
  const CudaDriver *D = TheDriver;
  if (!D)
    return;
  for (Device *A : Gpus)
    for (Device *B : Gpus) {
      if (A == B || A->kind() != DeviceKind::Cuda ||
          B->kind() != DeviceKind::Cuda)
        continue;
      auto *From = static_cast<CudaDevice *>(A);
      auto *To = static_cast<CudaDevice *>(B);
      int Can = 0;
      if (D->cuDeviceCanAccessPeer(&Can, From->cuDevice(), To->cuDevice()) ||
          !Can)
        continue;
      // Access is enabled from the current context to the peer's.
      if (!From->makeCurrent().ok())
        continue;
      CUresult R = D->cuCtxEnablePeerAccess(To->context(), 0);
      if (R == CUDA_SUCCESS || R == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        From->addPeer(To);
    }
}

} // namespace rt
} // namespace cleave

#else // !CLEAVE_RT_HAVE_CUDA_H

namespace cleave {
namespace rt {

unsigned discoverCudaDevices(const std::string &, std::string &Why,
                             bool &LoadFailed) {
  LoadFailed = false;
  Why = "the runtime was built without cuda.h, so it has no GPU support";
  return 0;
}

Result createCudaDevice(int, bool, std::unique_ptr<Device> &) {
  return Result::error(ErrorCode::NoDevice,
                       "the runtime was built without GPU support");
}

void enableCudaPeerAccess(const std::vector<Device *> &) {}

} // namespace rt
} // namespace cleave

#endif
