//===- CudaRuntime.cpp - The CUDA-runtime subset over Cleave's runtime ----===//
//
// Part of Cleave's runtime (no LLVM). Defines the functions of CUDA 13's
// cuda_runtime_api.h that Cleave supports (docs/runtime-api.md), with
// CUDA's exact prototypes: this file includes that header, so a prototype
// that differs does not compile. Functions outside the subset are not
// defined at all, so a program that uses one fails to link (the driver
// turns that into a diagnostic) instead of calling something that pretends.
//
// The one CUDA device programs see is the virtual device: every device of
// CLEAVE_DEVICES at once.
//
//===----------------------------------------------------------------------===//
#include "CudaApi.h"

#include <cctype>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace cleave::rt;
using namespace cleave::rt::api;

// The runtime's codes are CUDA's.
static_assert(int(ErrorCode::InvalidValue) == cudaErrorInvalidValue, "");
static_assert(int(ErrorCode::MemoryAllocation) == cudaErrorMemoryAllocation,
              "");
static_assert(int(ErrorCode::InitializationError) ==
                  cudaErrorInitializationError,
              "");
static_assert(int(ErrorCode::InvalidDevicePointer) ==
                  cudaErrorInvalidDevicePointer,
              "");
static_assert(int(ErrorCode::InvalidMemcpyDirection) ==
                  cudaErrorInvalidMemcpyDirection,
              "");
static_assert(int(ErrorCode::NoDevice) == cudaErrorNoDevice, "");
static_assert(int(ErrorCode::InvalidDevice) == cudaErrorInvalidDevice, "");
static_assert(int(ErrorCode::InvalidKernelImage) == cudaErrorInvalidKernelImage,
              "");
static_assert(int(ErrorCode::InvalidResourceHandle) ==
                  cudaErrorInvalidResourceHandle,
              "");
static_assert(int(ErrorCode::NotReady) == cudaErrorNotReady, "");
static_assert(int(ErrorCode::IllegalAddress) == cudaErrorIllegalAddress, "");
static_assert(int(ErrorCode::Assert) == cudaErrorAssert, "");
static_assert(int(ErrorCode::LaunchFailure) == cudaErrorLaunchFailure, "");
static_assert(int(ErrorCode::HostMemoryAlreadyRegistered) ==
                  cudaErrorHostMemoryAlreadyRegistered,
              "");
static_assert(int(ErrorCode::HostMemoryNotRegistered) ==
                  cudaErrorHostMemoryNotRegistered,
              "");
static_assert(int(ErrorCode::NotSupported) == cudaErrorNotSupported, "");
static_assert(int(ErrorCode::Unknown) == cudaErrorUnknown, "");
static_assert(int(ErrInvalidConfiguration) == cudaErrorInvalidConfiguration,
              "");
static_assert(int(ErrInvalidPitchValue) == cudaErrorInvalidPitchValue, "");
static_assert(int(ErrInvalidSymbol) == cudaErrorInvalidSymbol, "");
static_assert(EventDisableTiming == cudaEventDisableTiming, "");
static_assert(int(ErrInvalidDeviceFunction) == cudaErrorInvalidDeviceFunction,
              "");
static_assert(int(MemcpyKind::Default) == cudaMemcpyDefault &&
                  int(MemcpyKind::DeviceToDevice) == cudaMemcpyDeviceToDevice,
              "");

namespace {

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

/// One (possibly 2-D) copy: Height rows of Width bytes.
struct CopyShape {
  uint64_t Width = 0, Height = 1, DPitch = 0, SPitch = 0;
  uint64_t dstExtent() const { return DPitch * (Height - 1) + Width; }
  uint64_t srcExtent() const { return SPitch * (Height - 1) + Width; }
};

Result runCopy(BufferManager &B, void *Dst, const void *Src, CopyShape C,
               MemcpyKind Kind) {
  if (C.DPitch == C.Width && C.SPitch == C.Width)
    return B.memcpy(Dst, Src, C.Width * C.Height, Kind);
  return B.memcpy2D(Dst, C.DPitch, Src, C.SPitch, C.Width, C.Height, Kind);
}

/// An asynchronous 1-D copy between pinned host memory or device memory
/// and device memory, queued on the direct device's stream of \p S
/// (Runtime::directStream) from the calling thread, as CUDA queues it
/// (docs/runtime-api.md, "Direct launches"): the device side must be on
/// the GPU already (a source range valid there; a destination allocated
/// there, which becomes its only valid copy), and a copy from the host
/// must be one the buffer manager sends to the GPU rather than to the
/// host copy (BufferManager::directHostCopies). False, with nothing done,
/// otherwise: the copy takes the stream's ordinary path. True with \p Out
/// the error of queueing it.
bool tryDirectCopy(Runtime &RT, void *Dst, const void *Src, uint64_t Bytes,
                   bool DstDev, bool SrcDev, const std::shared_ptr<Stream> &S,
                   Result &Out) {
  Location Dev = RT.directDevice();
  BufferManager &Bufs = RT.buffers();
  if (Dev < 0 || RT.coScheduler() || (!DstDev && !SrcDev) ||
      (DstDev && !SrcDev && !Bufs.directHostCopies()))
    return false;
  BufferManager::Resolved From, To;
  DeviceAddr FromAddr = 0, ToAddr = 0;
  if (SrcDev &&
      (!Bufs.resolve(Src, From).ok() ||
       !From.Buf->holds(Dev, ByteRange{From.Offset, From.Offset + Bytes}) ||
       !Bufs.addressOn(*From.Buf, Dev, From.Offset, FromAddr).ok()))
    return false;
  if (DstDev && (!Bufs.resolve(Dst, To).ok() ||
                 !Bufs.addressOn(*To.Buf, Dev, To.Offset, ToAddr).ok()))
    return false;
  if (!RT.idleFor(S))
    return false;
  StreamHandle On = nullptr;
  if (!RT.directStream(S, On).ok())
    return false;
  Device &D = Bufs.device(Dev);
  if (DstDev && SrcDev)
    Out = D.copyDeviceToDevice(D, ToAddr, FromAddr, Bytes, On);
  else if (DstDev)
    Out = D.copyHostToDevice(ToAddr, Src, Bytes, On);
  else
    Out = D.copyDeviceToHost(Dst, FromAddr, Bytes, On);
  if (Out.ok() && DstDev)
    Out = Bufs.markWritten(*To.Buf, Dev,
                           ByteRange{To.Offset, To.Offset + Bytes});
  if (Out.ok())
    Out = Bufs.defer(Dev, {}, {}, On, true);
  return true;
}

/// Every cudaMemcpy*: checks what can be checked at the call, then runs the
/// copy in stream order. It is asynchronous to the host when no pageable
/// host memory takes part: device to device always (as CUDA does even for
/// cudaMemcpy), and for the *Async calls also from or to pinned memory.
/// Otherwise the call returns when the copy is done.
/// A client of cleave-serve's copy or memset of shape \p C: one 1-D
/// request per row (\p Row), the last row first so that a rectangle past
/// its allocation is refused, in most cases, before anything moved.
template <class RowFn> Result servedRows(const CopyShape &C, RowFn Row) {
  if (C.Width == 0 || C.Height == 0)
    return Result::success();
  if (Result R = Row(C.Height - 1); !R.ok())
    return R;
  for (uint64_t I = 0; I + 1 < C.Height; ++I)
    if (Result R = Row(I); !R.ok())
      return R;
  return Result::success();
}

cudaError_t copy(const char *What, void *Dst, const void *Src, CopyShape C,
                 int KindValue, bool AsyncCall, void *StreamHandle) {
  if (KindValue < cudaMemcpyHostToHost || KindValue > cudaMemcpyDefault)
    return ret(error(ErrorCode::InvalidMemcpyDirection,
                     std::string(What) + ": copy kind " +
                         std::to_string(KindValue) +
                         " is not a cudaMemcpyKind"));
  MemcpyKind Kind = static_cast<MemcpyKind>(KindValue);
  if (C.Height > 1 && (C.DPitch < C.Width || C.SPitch < C.Width))
    return ret(error(ErrInvalidPitchValue, std::string(What) + ": a pitch (" +
                                               std::to_string(C.DPitch) + ", " +
                                               std::to_string(C.SPitch) +
                                               ") is smaller than the width " +
                                               std::to_string(C.Width)));
  if (C.Height > 1 &&
      (C.DPitch > UINT64_MAX / C.Height || C.SPitch > UINT64_MAX / C.Height))
    return ret(invalid(std::string(What) + ": pitch x height overflows"));
  if (serve::Client *SC = serve::Client::get())
    return ret(servedRows(C, [&](uint64_t Row) {
      return SC->copy(static_cast<char *>(Dst) + Row * C.DPitch,
                      static_cast<const char *>(Src) + Row * C.SPitch, C.Width,
                      KindValue, StreamHandle, AsyncCall, What);
    }));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(StreamHandle, S); !R.ok())
    return ret(Result::error(R.code(), std::string(What) + ": " + R.message()));
  if (C.Width == 0 || C.Height == 0)
    return ret(Result::success());
  if (!Dst || !Src)
    return ret(invalid(std::string(What) + ": null pointer"));
  if (Result M = RT->managedForDevices(); !M.ok())
    return ret(prefixed(What, M));

  BufferManager &B = RT->buffers();
  bool DstDev = B.isDevicePointer(Dst), SrcDev = B.isDevicePointer(Src);
  bool DstMustBeDev =
      Kind == MemcpyKind::HostToDevice || Kind == MemcpyKind::DeviceToDevice;
  bool SrcMustBeDev =
      Kind == MemcpyKind::DeviceToHost || Kind == MemcpyKind::DeviceToDevice;
  bool Async = (DstDev || !DstMustBeDev) && (SrcDev || !SrcMustBeDev) &&
               ((DstDev && SrcDev) ||
                (AsyncCall && (DstDev || RT->isPinned(Dst, C.dstExtent())) &&
                 (SrcDev || RT->isPinned(Src, C.srcExtent()))));
  // Whole extents inside their allocations, checked before any row moves
  // (the buffer manager checks each row's pointers again).
  BufferManager::Resolved Res;
  if (DstDev)
    if (Result R = B.resolveRange(Dst, C.dstExtent(), Res); !R.ok())
      return ret(Result::error(R.code(), std::string(What) +
                                             " destination: " + R.message()));
  if (SrcDev)
    if (Result R = B.resolveRange(Src, C.srcExtent(), Res); !R.ok())
      return ret(Result::error(R.code(),
                               std::string(What) + " source: " + R.message()));
  // A synchronous call ends with the host's access to managed memory.
  auto Done = [&](const Result &R) {
    return ret(AsyncCall ? R : withHostAccess(*RT, R));
  };
  if (Async && C.Height == 1)
    if (Result Out; tryDirectCopy(*RT, Dst, Src, C.Width, DstDev, SrcDev, S,
                                  Out))
      return Done(prefixed(What, Out));
  auto Run = [&B, Dst, Src, C, Kind] { return runCopy(B, Dst, Src, C, Kind); };
  // An asynchronous copy with nothing queued before it is done here and
  // now (runSync runs it on this thread): queued, the launch behind it
  // would find its stream busy and go through the engine.
  if (!Async || RT->idleFor(S))
    return Done(RT->runSync(S, Run, What));
  Op O;
  O.What = What;
  O.Run = Run;
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

/// A memset of \p Bytes at \p Dst queued on the direct device's stream of
/// \p S (Runtime::directStream), as tryDirectCopy() queues a copy: the
/// buffer's allocation on the GPU becomes the only valid copy of those
/// bytes. False, with nothing done, when there is no direct device or
/// \p S must wait for queued work.
bool tryDirectMemset(Runtime &RT, void *Dst, int Value, uint64_t Bytes,
                     const std::shared_ptr<Stream> &S, Result &Out) {
  Location Dev = RT.directDevice();
  BufferManager &Bufs = RT.buffers();
  BufferManager::Resolved To;
  DeviceAddr Addr = 0;
  if (Dev < 0 || RT.coScheduler() || !Bufs.resolve(Dst, To).ok() ||
      !Bufs.addressOn(*To.Buf, Dev, To.Offset, Addr).ok() || !RT.idleFor(S))
    return false;
  StreamHandle On = nullptr;
  if (!RT.directStream(S, On).ok())
    return false;
  Out = Bufs.device(Dev).memset(Addr, uint8_t(Value), Bytes, On);
  if (Out.ok())
    Out = Bufs.markWritten(*To.Buf, Dev,
                           ByteRange{To.Offset, To.Offset + Bytes});
  if (Out.ok())
    Out = Bufs.defer(Dev, {}, {}, On, true);
  return true;
}

/// cudaMemset{,2D}{,Async}: Height rows of Width bytes, Pitch apart.
/// Always in stream order, asynchronous to the host (device memory only);
/// the whole extent is checked before anything is queued. A call that is
/// not \p AsyncCall ends with the host's access to managed memory when it
/// ran at once (withHostAccess).
cudaError_t memsetOn(const char *What, void *Dst, int Value, CopyShape C,
                     void *StreamHandle, bool AsyncCall) {
  if (C.Height > 1 && C.DPitch < C.Width)
    return ret(error(ErrInvalidPitchValue, std::string(What) + ": the pitch " +
                                               std::to_string(C.DPitch) +
                                               " is smaller than the width " +
                                               std::to_string(C.Width)));
  if (C.Height > 1 && C.DPitch > UINT64_MAX / C.Height)
    return ret(invalid(std::string(What) + ": pitch x height overflows"));
  if (serve::Client *SC = serve::Client::get())
    return ret(servedRows(C, [&](uint64_t Row) {
      return SC->memset(static_cast<char *>(Dst) + Row * C.DPitch, Value,
                        C.Width, StreamHandle);
    }));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(StreamHandle, S); !R.ok())
    return ret(prefixed(What, R));
  if (C.Width == 0 || C.Height == 0)
    return ret(Result::success());
  BufferManager &B = RT->buffers();
  BufferManager::Resolved Res;
  if (Result R = B.resolveRange(Dst, C.dstExtent(), Res); !R.ok())
    return ret(prefixed(What, R));
  if (Result M = RT->managedForDevices(); !M.ok())
    return ret(prefixed(What, M));
  // A synchronous call ends with the host's access to managed memory.
  auto Done = [&](const Result &R) {
    return ret(AsyncCall ? R : withHostAccess(*RT, R));
  };
  if (C.Height == 1 || C.DPitch == C.Width)
    if (Result Out;
        tryDirectMemset(*RT, Dst, Value, C.Width * C.Height, S, Out))
      return Done(prefixed(What, Out));
  Op O;
  O.What = What;
  O.Run = [&B, Dst, Value, C]() {
    if (C.DPitch == C.Width)
      return B.memset(Dst, Value, C.Width * C.Height);
    for (uint64_t Row = 0; Row < C.Height; ++Row)
      if (Result R = B.memset(static_cast<char *>(Dst) + Row * C.DPitch, Value,
                              C.Width);
          !R.ok())
        return R;
    return Result::success();
  };
  // Nothing queued before it: done now, as copy() does.
  if (RT->idleFor(S))
    return Done(RT->runSync(S, O.Run, What));
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

/// A 1-D region as the 2-D shape of one row.
CopyShape row(uint64_t Bytes) {
  CopyShape C;
  C.Width = C.DPitch = C.SPitch = Bytes;
  return C;
}

/// cudaMemcpy{To,From}Symbol{,Async}. The variable is the engine's (its
/// host value, replicated to every device that runs a kernel of its
/// program); the other side is host memory or a runtime pointer.
cudaError_t symbolCopy(const char *What, bool ToSymbol, const void *Symbol,
                       void *Other, size_t Count, size_t Offset, int KindValue,
                       bool AsyncCall, void *StreamHandle) {
  bool KindOk =
      KindValue == cudaMemcpyDefault || KindValue == cudaMemcpyDeviceToDevice ||
      KindValue == (ToSymbol ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
  if (!KindOk)
    return ret(error(ErrorCode::InvalidMemcpyDirection,
                     std::string(What) + ": copy kind " +
                         std::to_string(KindValue) + " is not allowed here"));
  std::string Name;
  uint64_t RegisteredSize;
  if (!Symbol || !variableName(Symbol, Name, RegisteredSize))
    return ret(error(ErrInvalidSymbol,
                     std::string(What) +
                         ": the symbol is not a registered __device__ or "
                         "__constant__ variable"));
  if (serve::Client::get() && KindValue == cudaMemcpyDeviceToDevice)
    return ret(error(ErrorCode::NotSupported,
                     std::string(What) + ": a symbol copy from or to device "
                                         "memory is not served by "
                                         "cleave-serve"));
  CLEAVE_SERVED(symbolCopy(ToSymbol, Name, Other, Offset, Count,
                           StreamHandle));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(StreamHandle, S); !R.ok())
    return ret(Result::error(R.code(), std::string(What) + ": " + R.message()));
  uint64_t Size;
  if (!RT->cachedSymbolSize(Name, Size)) {
    std::lock_guard<std::mutex> Lock(RT->engineMutex());
    if (Result R = RT->engine().symbolSize(Name, Size); !R.ok())
      return ret(
          Result::error(ErrInvalidSymbol,
                        std::string(What) + ": " + Name + ": " + R.message()));
    RT->cacheSymbolSize(Name, Size);
  }
  if (Offset > Size || Count > Size - Offset)
    return ret(invalid(std::string(What) + ": bytes [" +
                       std::to_string(Offset) + ", " +
                       std::to_string(Offset + Count) + ") of " + Name +
                       ", which has " + std::to_string(Size)));
  if (Count == 0)
    return ret(Result::success());
  if (!Other)
    return ret(invalid(std::string(What) + ": null pointer"));
  BufferManager &B = RT->buffers();
  bool OtherDev = B.isDevicePointer(Other);
  if (KindValue == cudaMemcpyDeviceToDevice && !OtherDev)
    return ret(invalid(std::string(What) +
                       ": cudaMemcpyDeviceToDevice with a pointer that is "
                       "not from cudaMalloc"));
  if (OtherDev) {
    BufferManager::Resolved Res;
    if (Result R = B.resolveRange(Other, Count, Res); !R.ok())
      return ret(
          Result::error(R.code(), std::string(What) + ": " + R.message()));
  }
  if (Result M = RT->managedForDevices(); !M.ok())
    return ret(prefixed(What, M));
  Op O;
  O.What = What;
  O.Run = [RT, &B, ToSymbol, Name, Other, Count, Offset, OtherDev]() {
    Engine &E = RT->engine();
    if (ToSymbol) {
      // A runtime pointer is the address of its host copy: bring that
      // up to date, then read it.
      if (OtherDev)
        if (Result R = B.syncToHost(Other, Count); !R.ok())
          return R;
      std::lock_guard<std::mutex> Lock(RT->engineMutex());
      return E.copyToSymbol(Name, Offset, Other, Count);
    }
    if (!OtherDev) {
      std::lock_guard<std::mutex> Lock(RT->engineMutex());
      return E.copyFromSymbol(Name, Offset, Other, Count);
    }
    std::vector<char> Tmp(Count);
    {
      std::lock_guard<std::mutex> Lock(RT->engineMutex());
      if (Result R = E.copyFromSymbol(Name, Offset, Tmp.data(), Count); !R.ok())
        return R;
    }
    return B.memcpy(Other, Tmp.data(), Count, MemcpyKind::HostToDevice);
  };
  bool Async = AsyncCall && (OtherDev || RT->isPinned(Other, Count));
  if (!Async) {
    Result R = RT->runSync(S, O.Run, What);
    return ret(AsyncCall ? R : withHostAccess(*RT, R));
  }
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

/// Whether \p Rec, the latest record of \p E, was recorded on the direct
/// device (on its recording stream's GPU stream, Runtime::directStream):
/// its completion and time are the GPU event's.
bool gpuRecord(Event &E, EventRecord &Rec) {
  std::lock_guard<std::mutex> Lock(Rec.Mutex);
  return Rec.Done && Rec.OnGpu && E.OnGpu;
}

/// "cudaErrorInvalidValue" from the enumerators of CUDA's headers.
const char *cudaName(int Code) {
  switch (Code) {
#define CLEAVE_CUDA_ERROR(N)                                                   \
  case N:                                                                      \
    return #N;
#include "CudaErrors.def"
  }
  return nullptr;
}

} // namespace

namespace cleave {
namespace rt {
namespace api {

const char *errorName(ErrorCode C) {
  const char *N = cudaName(static_cast<int>(C));
  return N ? N : "unrecognized error code";
}

} // namespace api
} // namespace rt
} // namespace cleave

/// A served query's result: cudaErrorNotReady is an answer, not an error
/// (it is not recorded as the thread's last error).
cudaError_t servedQuery(const Result &R) {
  if (R.code() == ErrorCode::NotReady)
    return static_cast<cudaError_t>(ErrorCode::NotReady);
  return ret(R);
}

extern "C" {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

cudaError_t cudaGetLastError(void) {
  return static_cast<cudaError_t>(lastError(/*Reset=*/true));
}

cudaError_t cudaPeekAtLastError(void) {
  return static_cast<cudaError_t>(lastError(/*Reset=*/false));
}

const char *cudaGetErrorName(cudaError_t error) {
  const char *N = cudaName(error);
  return N ? N : "unrecognized error code";
}

const char *cudaGetErrorString(cudaError_t error) {
  // CUDA's own wording for the codes programs meet most; other codes get
  // their name spelled out ("cudaErrorMisalignedAddress" -> "misaligned
  // address").
  switch (error) {
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidPitchValue:
    return "invalid pitch argument";
  case cudaErrorInvalidSymbol:
    return "invalid device symbol";
  case cudaErrorInvalidDeviceFunction:
    return "invalid device function";
  case cudaErrorLaunchOutOfResources:
    return "too many resources requested for launch";
  case cudaErrorCudartUnloading:
    return "driver shutting down";
  default:
    break;
  }
  const char *N = cudaName(error);
  if (!N)
    return "unrecognized error code";
  ErrorCode C = static_cast<ErrorCode>(error);
  if (std::strcmp(getErrorName(C), N) == 0) // a code Error.h describes
    return getErrorDescription(C);
  // Spelled out once per code, then kept (a few dozen short strings).
  static std::mutex M;
  static std::map<int, std::string> *Spelled = new std::map<int, std::string>;
  std::lock_guard<std::mutex> Lock(M);
  std::string &S = (*Spelled)[error];
  if (S.empty()) {
    // A word starts at an upper-case letter after a lower-case one, or at
    // the last capital of an acronym ("ECCUncorrectable": "ecc
    // uncorrectable").
    auto Up = [](char C) {
      return std::isupper(static_cast<unsigned char>(C));
    };
    const char *P = N + std::strlen("cudaError");
    for (const char *Q = P; *Q; ++Q) {
      if (Q != P && Up(*Q) && (!Up(Q[-1]) || (Q[1] && !Up(Q[1]))))
        S += ' ';
      S += static_cast<char>(std::tolower(static_cast<unsigned char>(*Q)));
    }
  }
  return S.c_str();
}

//===----------------------------------------------------------------------===//
// Device management
//===----------------------------------------------------------------------===//

cudaError_t cudaGetDeviceCount(int *count) {
  if (!count)
    return ret(invalid("cudaGetDeviceCount: null pointer"));
  *count = 0;
  if (serve::Client *SC = serve::Client::get()) {
    int Ignored;
    if (Result R = SC->attribute(cudaDevAttrMultiProcessorCount, Ignored);
        !R.ok())
      return ret(R);
    *count = 1;
    return ret(Result::success());
  }
  CLEAVE_RUNTIME(RT);
  (void)RT;
  *count = 1;
  return ret(Result::success());
}

cudaError_t cudaSetDevice(int device) {
  if (device != 0)
    return ret(error(ErrorCode::InvalidDevice,
                     "cudaSetDevice(" + std::to_string(device) +
                         "): Cleave's runtime has one virtual device, 0"));
  if (serve::Client::get())
    return ret(Result::success()); // the server's one virtual device
  CLEAVE_RUNTIME(RT);
  (void)RT;
  return ret(Result::success());
}

cudaError_t cudaGetDevice(int *device) {
  if (!device)
    return ret(invalid("cudaGetDevice: null pointer"));
  *device = 0;
  return ret(Result::success());
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
  if (!prop)
    return ret(invalid("cudaGetDeviceProperties: null pointer"));
  if (device != 0)
    return ret(error(ErrorCode::InvalidDevice,
                     "cudaGetDeviceProperties: no device " +
                         std::to_string(device) + " (there is one, 0)"));
  CLEAVE_SERVED(properties(prop, sizeof(*prop)));
  CLEAVE_RUNTIME(RT);
  fillProperties(*RT, *prop);
  return ret(Result::success());
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr,
                                   int device) {
  if (!value)
    return ret(invalid("cudaDeviceGetAttribute: null pointer"));
  if (device != 0)
    return ret(error(ErrorCode::InvalidDevice,
                     "cudaDeviceGetAttribute: no device " +
                         std::to_string(device) + " (there is one, 0)"));
  CLEAVE_SERVED(attribute(attr, *value));
  CLEAVE_RUNTIME(RT);
  return ret(
      prefixed("cudaDeviceGetAttribute", deviceAttribute(*RT, attr, *value)));
}

cudaError_t cudaDeviceSynchronize(void) {
  CLEAVE_SERVED(simple(serve::Op::DeviceSync));
  CLEAVE_RUNTIME(RT);
  return ret(withHostAccess(*RT, RT->synchronizeAll()));
}

cudaError_t cudaDeviceReset(void) {
  // The client's state lives in the server until it disconnects; a reset
  // waits for its work, as CUDA's does.
  CLEAVE_SERVED(simple(serve::Op::DeviceSync));
  Runtime::reset();
  return ret(Result::success());
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion) {
  if (!runtimeVersion)
    return ret(invalid("cudaRuntimeGetVersion: null pointer"));
  *runtimeVersion = CUDART_VERSION;
  return ret(Result::success());
}

cudaError_t cudaDriverGetVersion(int *driverVersion) {
  if (!driverVersion)
    return ret(invalid("cudaDriverGetVersion: null pointer"));
  // The runtime is its own driver: it implements the API of the CUDA
  // version it was built against.
  *driverVersion = CUDART_VERSION;
  return ret(Result::success());
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

cudaError_t cudaMalloc(void **devPtr, size_t size) {
  if (!devPtr)
    return ret(invalid("cudaMalloc: null pointer"));
  *devPtr = nullptr;
  CLEAVE_SERVED(malloc(size, *devPtr));
  CLEAVE_RUNTIME(RT);
  return ret(RT->buffers().allocate(size, *devPtr));
}

cudaError_t cudaMallocPitch(void **devPtr, size_t *pitch, size_t width,
                            size_t height) {
  if (!devPtr || !pitch)
    return ret(invalid("cudaMallocPitch: null pointer"));
  *devPtr = nullptr;
  *pitch = 0;
  // Rows start at multiples of the texture alignment, as CUDA's do (what
  // the pitch is may differ from CUDA's; programs must use the one
  // returned).
  constexpr uint64_t Align = PitchAlignment;
  if (width > UINT64_MAX - (Align - 1))
    return ret(error(ErrorCode::MemoryAllocation, "cudaMallocPitch: a row of " +
                                                      std::to_string(width) +
                                                      " bytes is too wide"));
  uint64_t Pitch = (uint64_t(width) + Align - 1) / Align * Align;
  if (height && Pitch > UINT64_MAX / height)
    return ret(error(ErrorCode::MemoryAllocation,
                     "cudaMallocPitch: " + std::to_string(height) +
                         " rows of " + std::to_string(Pitch) +
                         " bytes overflow"));
  if (serve::Client *SC = serve::Client::get()) {
    Result R = SC->malloc(Pitch * height, *devPtr);
    *pitch = R.ok() ? Pitch : 0;
    return ret(prefixed("cudaMallocPitch", R));
  }
  CLEAVE_RUNTIME(RT);
  if (Result R = RT->buffers().allocate(Pitch * height, *devPtr); !R.ok())
    return ret(prefixed("cudaMallocPitch", R));
  *pitch = Pitch;
  return ret(Result::success());
}

cudaError_t cudaFree(void *devPtr) {
  CLEAVE_SERVED(free(devPtr));
  CLEAVE_RUNTIME(RT);
  if (!devPtr)
    return ret(Result::success());
  // As in CUDA, cudaFree waits for the device: nothing queued still uses
  // the buffer.
  RT->drain();
  if (Result R = RT->buffers().free(devPtr); !R.ok())
    return ret(Result::error(R.code(), "cudaFree: " + R.message()));
  return ret(withHostAccess(*RT, RT->takeAsyncError()));
}

cudaError_t cudaMallocHost(void **ptr, size_t size) {
  if (!ptr)
    return ret(invalid("cudaMallocHost: null pointer"));
  *ptr = nullptr;
  CLEAVE_SERVED(hostAlloc(size, *ptr));
  CLEAVE_RUNTIME(RT);
  return ret(RT->allocatePinned(size, *ptr));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) {
  if (!pHost)
    return ret(invalid("cudaHostAlloc: null pointer"));
  *pHost = nullptr;
  if (flags & ~unsigned(cudaHostAllocPortable | cudaHostAllocMapped |
                        cudaHostAllocWriteCombined))
    return ret(
        invalid("cudaHostAlloc: unknown flags " + std::to_string(flags)));
  if (flags & cudaHostAllocMapped)
    return ret(error(ErrorCode::NotSupported,
                     "cudaHostAlloc: cudaHostAllocMapped (device access to "
                     "host memory) is not supported: kernels use memory from "
                     "cudaMalloc"));
  // Portable: every allocation is; write-combined is a hint.
  CLEAVE_SERVED(hostAlloc(size, *pHost));
  CLEAVE_RUNTIME(RT);
  return ret(RT->allocatePinned(size, *pHost));
}

cudaError_t cudaFreeHost(void *ptr) {
  if (!ptr)
    return ret(Result::success());
  CLEAVE_SERVED(freeHost(ptr));
  CLEAVE_RUNTIME(RT);
  return ret(RT->freePinned(ptr));
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind) {
  return copy("cudaMemcpy", dst, src, row(count), kind, false, nullptr);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream) {
  return copy("cudaMemcpyAsync", dst, src, row(count), kind, true, stream);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) {
  CopyShape C{width, height, dpitch, spitch};
  return copy("cudaMemcpy2D", dst, src, C, kind, false, nullptr);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream) {
  CopyShape C{width, height, dpitch, spitch};
  return copy("cudaMemcpy2DAsync", dst, src, C, kind, true, stream);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count) {
  return memsetOn("cudaMemset", devPtr, value, row(count), nullptr, false);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                            cudaStream_t stream) {
  return memsetOn("cudaMemsetAsync", devPtr, value, row(count), stream, true);
}

cudaError_t cudaMemset2D(void *devPtr, size_t pitch, int value, size_t width,
                         size_t height) {
  CopyShape C{width, height, pitch, pitch};
  return memsetOn("cudaMemset2D", devPtr, value, C, nullptr, false);
}

cudaError_t cudaMemset2DAsync(void *devPtr, size_t pitch, int value,
                              size_t width, size_t height,
                              cudaStream_t stream) {
  CopyShape C{width, height, pitch, pitch};
  return memsetOn("cudaMemset2DAsync", devPtr, value, C, stream, true);
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src,
                               size_t count, size_t offset,
                               enum cudaMemcpyKind kind) {
  return symbolCopy("cudaMemcpyToSymbol", true, symbol, const_cast<void *>(src),
                    count, offset, kind, false, nullptr);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                 size_t offset, enum cudaMemcpyKind kind) {
  return symbolCopy("cudaMemcpyFromSymbol", false, symbol, dst, count, offset,
                    kind, false, nullptr);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
                                    size_t count, size_t offset,
                                    enum cudaMemcpyKind kind,
                                    cudaStream_t stream) {
  return symbolCopy("cudaMemcpyToSymbolAsync", true, symbol,
                    const_cast<void *>(src), count, offset, kind, true, stream);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol,
                                      size_t count, size_t offset,
                                      enum cudaMemcpyKind kind,
                                      cudaStream_t stream) {
  return symbolCopy("cudaMemcpyFromSymbolAsync", false, symbol, dst, count,
                    offset, kind, true, stream);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream,
                                      unsigned int flags) {
  if (!pStream)
    return ret(invalid("cudaStreamCreate: null pointer"));
  if (flags & ~unsigned(cudaStreamNonBlocking))
    return ret(invalid("cudaStreamCreateWithFlags: unknown flags " +
                       std::to_string(flags)));
  if (serve::Client *SC = serve::Client::get()) {
    void *H = nullptr;
    Result R = SC->createStream(flags, 0, H);
    *pStream = static_cast<cudaStream_t>(H);
    return ret(R);
  }
  CLEAVE_RUNTIME(RT);
  void *H = nullptr;
  Result R = RT->createStream(flags, H);
  *pStream = static_cast<cudaStream_t>(H);
  return ret(R);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *pStream,
                                         unsigned int flags, int priority) {
  if (!pStream)
    return ret(invalid("cudaStreamCreateWithPriority: null pointer"));
  if (flags & ~unsigned(cudaStreamNonBlocking))
    return ret(invalid("cudaStreamCreateWithPriority: unknown flags " +
                       std::to_string(flags)));
  if (serve::Client *SC = serve::Client::get()) {
    void *H = nullptr;
    Result R = SC->createStream(flags, priority, H);
    *pStream = static_cast<cudaStream_t>(H);
    return ret(R);
  }
  CLEAVE_RUNTIME(RT);
  void *H = nullptr;
  Result R = RT->createStream(flags, H, priority);
  *pStream = static_cast<cudaStream_t>(H);
  return ret(R);
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority) {
  if (!priority)
    return ret(invalid("cudaStreamGetPriority: null pointer"));
  CLEAVE_SERVED(priority(hStream, *priority));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(hStream, S); !R.ok())
    return ret(
        Result::error(R.code(), "cudaStreamGetPriority: " + R.message()));
  *priority = S->priority();
  return ret(Result::success());
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *leastPriority,
                                             int *greatestPriority) {
  // Either pointer may be null (CUDA's documentation).
  if (leastPriority)
    *leastPriority = LeastStreamPriority;
  if (greatestPriority)
    *greatestPriority = GreatestStreamPriority;
  return ret(Result::success());
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream) {
  return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  CLEAVE_SERVED(simple(serve::Op::StreamDestroy, uintptr_t(stream)));
  CLEAVE_RUNTIME(RT);
  return ret(RT->destroyStream(stream));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CLEAVE_SERVED(simple(serve::Op::StreamSync, uintptr_t(stream)));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(
        Result::error(R.code(), "cudaStreamSynchronize: " + R.message()));
  return ret(withHostAccess(*RT, RT->synchronize(S)));
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  if (serve::Client *SC = serve::Client::get())
    return servedQuery(SC->simple(serve::Op::StreamQuery, uintptr_t(stream)));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(Result::error(R.code(), "cudaStreamQuery: " + R.message()));
  if (!S->done(S->lastTicket()))
    return static_cast<cudaError_t>(ErrorCode::NotReady); // not an error
  // Direct launches' work, on the GPU (any stream's: it is one queue).
  bool Done = true;
  if (Result R = RT->buffers().queryDeferred(Done); !R.ok()) {
    RT->settleDeferred(); // the failure, as an asynchronous error
    return ret(RT->takeAsyncError());
  }
  if (!Done)
    return static_cast<cudaError_t>(ErrorCode::NotReady);
  return ret(withHostAccess(*RT, Result::success()));
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags) {
  // cudaEventWaitExternal matters only to stream capture, which the
  // runtime does not provide: outside of it the wait is the default one.
  if (flags & ~unsigned(cudaEventWaitExternal))
    return ret(
        invalid("cudaStreamWaitEvent: unknown flags " + std::to_string(flags)));
  CLEAVE_SERVED(simple(serve::Op::StreamWaitEvent, uintptr_t(stream),
                       uintptr_t(event), flags));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(Result::error(R.code(), "cudaStreamWaitEvent: " + R.message()));
  std::shared_ptr<Event> E;
  if (Result R = RT->event(event, E); !R.ok())
    return ret(Result::error(R.code(), "cudaStreamWaitEvent: " + R.message()));
  std::shared_ptr<EventRecord> Rec;
  {
    std::lock_guard<std::mutex> Lock(E->Mutex);
    Rec = E->Last;
  }
  if (!Rec || Rec->S == S) // never recorded, or already in order
    return ret(Result::success());
  // A record on the direct device is a GPU event on the recording stream's
  // GPU stream (Runtime::directStream): S's GPU stream waits for it there,
  // as under CUDA, once the record itself is done (now, or when S's worker
  // gets here after the recording stream's queue).
  auto GpuWait = [RT, S, E, Rec]() -> Result {
    if (!gpuRecord(*E, *Rec))
      return Result::success();
    StreamHandle On = nullptr;
    if (Result R = RT->directStream(S, On); !R.ok())
      return R;
    return E->Gpu->waitForEvent(On, *E->Gpu, E->OnGpu);
  };
  if (Rec->S->done(Rec->Ticket) && RT->idleFor(S))
    return ret(prefixed("cudaStreamWaitEvent", GpuWait()));
  Op O;
  O.What = "cudaStreamWaitEvent";
  O.Waits.emplace_back(Rec->S, Rec->Ticket);
  O.Run = GpuWait;
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  if (!event)
    return ret(invalid("cudaEventCreate: null pointer"));
  if (flags & ~unsigned(cudaEventBlockingSync | cudaEventDisableTiming |
                        cudaEventInterprocess))
    return ret(invalid("cudaEventCreateWithFlags: unknown flags " +
                       std::to_string(flags)));
  if (flags & cudaEventInterprocess)
    return ret(error(ErrorCode::NotSupported,
                     "cudaEventCreateWithFlags: interprocess events are not "
                     "supported"));
  if (serve::Client *SC = serve::Client::get()) {
    void *H = nullptr;
    Result R = SC->createEvent(flags, H);
    *event = static_cast<cudaEvent_t>(H);
    return ret(R);
  }
  CLEAVE_RUNTIME(RT);
  void *H = nullptr;
  Result R = RT->createEvent(flags, H);
  *event = static_cast<cudaEvent_t>(H);
  return ret(R);
}

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  CLEAVE_SERVED(simple(serve::Op::EventDestroy, uintptr_t(event)));
  CLEAVE_RUNTIME(RT);
  return ret(RT->destroyEvent(event));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  CLEAVE_SERVED(
      simple(serve::Op::EventRecord, uintptr_t(event), uintptr_t(stream)));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Event> E;
  if (Result R = RT->event(event, E); !R.ok())
    return ret(Result::error(R.code(), "cudaEventRecord: " + R.message()));
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(Result::error(R.code(), "cudaEventRecord: " + R.message()));
  auto Rec = std::make_shared<EventRecord>();
  Rec->S = S;
  std::lock_guard<std::mutex> Lock(E->Mutex);
  // With a direct device, the GPU event is recorded on its compute stream,
  // behind the direct launches queued there: the time between two records
  // is the GPU's, as under CUDA.
  EventHandle Gpu = nullptr;
  Location Dev = RT->directDevice();
  if (Dev >= 0)
    if (Result R = RT->gpuEvent(*E, Gpu); !R.ok())
      return ret(Result::error(R.code(), "cudaEventRecord: " + R.message()));
  // E holds the GPU event until the worker has recorded it.
  auto Stamp = [RT, Rec, Gpu, Dev, E] {
    Result R = Result::success();
    if (Gpu) {
      Device &D = RT->buffers().device(Dev);
      StreamHandle On = nullptr;
      R = RT->directStream(Rec->S, On);
      if (R.ok())
        R = D.recordEvent(Gpu, On);
    }
    std::lock_guard<std::mutex> Lock(Rec->Mutex);
    Rec->When = std::chrono::steady_clock::now();
    Rec->OnGpu = Gpu && R.ok();
    Rec->Done = true;
    return R;
  };
  if (Gpu && RT->idleFor(S)) {
    Rec->Ticket = S->lastTicket();
    if (Result R = Stamp(); !R.ok())
      return ret(Result::error(R.code(), "cudaEventRecord: " + R.message()));
    E->Last = Rec;
    return ret(Result::success());
  }
  Op O;
  O.What = "cudaEventRecord";
  // The worker reaches this when everything queued before it is done: the
  // time it sees is the completion time of that work.
  O.Run = Stamp;
  Rec->Ticket = RT->enqueue(S, std::move(O));
  E->Last = Rec;
  return ret(Result::success());
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  if (serve::Client *SC = serve::Client::get())
    return servedQuery(SC->simple(serve::Op::EventQuery, uintptr_t(event)));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Event> E;
  if (Result R = RT->event(event, E); !R.ok())
    return ret(Result::error(R.code(), "cudaEventQuery: " + R.message()));
  std::shared_ptr<EventRecord> Rec;
  {
    std::lock_guard<std::mutex> Lock(E->Mutex);
    Rec = E->Last;
  }
  if (Rec && !Rec->S->done(Rec->Ticket))
    return static_cast<cudaError_t>(ErrorCode::NotReady); // not an error
  if (Rec && gpuRecord(*E, *Rec)) {
    bool Done = false;
    if (Result R = E->Gpu->queryEvent(E->OnGpu, Done); !R.ok()) {
      RT->settleDeferred(); // the failure, as an asynchronous error
      return ret(RT->takeAsyncError());
    }
    if (!Done)
      return static_cast<cudaError_t>(ErrorCode::NotReady);
  }
  return ret(withHostAccess(*RT, Result::success()));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  CLEAVE_SERVED(simple(serve::Op::EventSync, uintptr_t(event)));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Event> E;
  if (Result R = RT->event(event, E); !R.ok())
    return ret(Result::error(R.code(), "cudaEventSynchronize: " + R.message()));
  std::shared_ptr<EventRecord> Rec;
  {
    std::lock_guard<std::mutex> Lock(E->Mutex);
    Rec = E->Last;
  }
  if (Rec)
    Rec->S->wait(Rec->Ticket);
  if (Rec && gpuRecord(*E, *Rec) && !E->Gpu->synchronizeEvent(E->OnGpu).ok())
    RT->settleDeferred(); // the failure, as an asynchronous error
  return ret(withHostAccess(*RT, RT->takeAsyncError()));
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end) {
  if (!ms)
    return ret(invalid("cudaEventElapsedTime: null pointer"));
  if (serve::Client *SC = serve::Client::get())
    return servedQuery(SC->elapsed(start, end, *ms));
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Event> E[2];
  std::shared_ptr<EventRecord> Rec[2];
  cudaEvent_t H[2] = {start, end};
  for (int I = 0; I < 2; ++I) {
    if (Result R = RT->event(H[I], E[I]); !R.ok())
      return ret(
          Result::error(R.code(), "cudaEventElapsedTime: " + R.message()));
    std::lock_guard<std::mutex> Lock(E[I]->Mutex);
    if (E[I]->Flags & cudaEventDisableTiming)
      return ret(error(ErrorCode::InvalidResourceHandle,
                       "cudaEventElapsedTime: an event was created with "
                       "cudaEventDisableTiming"));
    Rec[I] = E[I]->Last;
    if (!Rec[I])
      return ret(error(ErrorCode::InvalidResourceHandle,
                       "cudaEventElapsedTime: an event was never recorded"));
  }
  std::chrono::steady_clock::time_point T[2];
  bool OnGpu[2];
  for (int I = 0; I < 2; ++I) {
    std::lock_guard<std::mutex> Lock(Rec[I]->Mutex);
    if (!Rec[I]->Done)
      return static_cast<cudaError_t>(ErrorCode::NotReady);
    T[I] = Rec[I]->When;
    OnGpu[I] = Rec[I]->OnGpu;
  }
  if (OnGpu[0] && OnGpu[1]) {
    // Both on the direct device's compute stream: the GPU's own time.
    Result R = E[0]->Gpu->elapsedTime(E[0]->OnGpu, E[1]->OnGpu, *ms);
    if (R.code() == ErrorCode::NotReady)
      return static_cast<cudaError_t>(ErrorCode::NotReady);
    return ret(R.ok() ? R
                      : Result::error(R.code(),
                                      "cudaEventElapsedTime: " + R.message()));
  }
  *ms = std::chrono::duration<float, std::milli>(T[1] - T[0]).count();
  return ret(Result::success());
}

} // extern "C"
