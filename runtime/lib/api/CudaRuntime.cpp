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
#include "Runtime.h"

#include <cuda_runtime_api.h>

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
static_assert(int(ErrorCode::LaunchFailure) == cudaErrorLaunchFailure, "");
static_assert(int(ErrorCode::NotSupported) == cudaErrorNotSupported, "");
static_assert(int(ErrorCode::Unknown) == cudaErrorUnknown, "");
static_assert(int(ErrInvalidConfiguration) == cudaErrorInvalidConfiguration,
              "");
static_assert(int(ErrInvalidPitchValue) == cudaErrorInvalidPitchValue, "");
static_assert(int(ErrInvalidSymbol) == cudaErrorInvalidSymbol, "");
static_assert(int(ErrInvalidDeviceFunction) == cudaErrorInvalidDeviceFunction,
              "");
static_assert(int(MemcpyKind::Default) == cudaMemcpyDefault &&
                  int(MemcpyKind::DeviceToDevice) == cudaMemcpyDeviceToDevice,
              "");

namespace {

cudaError_t ret(const Result &R) { return static_cast<cudaError_t>(finish(R)); }

Result error(ErrorCode C, std::string Msg) {
  return Result::error(C, std::move(Msg));
}

Result invalid(std::string Msg) {
  return error(ErrorCode::InvalidValue, std::move(Msg));
}

/// The runtime, or why it could not start.
#define CLEAVE_RUNTIME(RT)                                                     \
  Runtime *RT;                                                                 \
  if (Result StartR = Runtime::get(RT); !StartR.ok())                          \
  return ret(StartR)

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
  for (uint64_t Row = 0; Row < C.Height; ++Row) {
    Result R = B.memcpy(static_cast<char *>(Dst) + Row * C.DPitch,
                        static_cast<const char *>(Src) + Row * C.SPitch,
                        C.Width, Kind);
    if (!R.ok())
      return R;
  }
  return Result::success();
}

/// Every cudaMemcpy*: checks what can be checked at the call, then runs the
/// copy in stream order. It is asynchronous to the host when no pageable
/// host memory takes part: device to device always (as CUDA does even for
/// cudaMemcpy), and for the *Async calls also from or to pinned memory.
/// Otherwise the call returns when the copy is done.
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
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(StreamHandle, S); !R.ok())
    return ret(Result::error(R.code(), std::string(What) + ": " + R.message()));
  if (C.Width == 0 || C.Height == 0)
    return ret(Result::success());
  if (!Dst || !Src)
    return ret(invalid(std::string(What) + ": null pointer"));

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
  auto Run = [&B, Dst, Src, C, Kind] { return runCopy(B, Dst, Src, C, Kind); };
  if (!Async)
    return ret(RT->runSync(S, Run, What));
  Op O;
  O.What = What;
  O.Run = Run;
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

/// cudaMemset / cudaMemsetAsync: always in stream order, asynchronous to
/// the host (device memory only).
cudaError_t memsetOn(const char *What, void *Dst, int Value, size_t Count,
                     void *StreamHandle) {
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(StreamHandle, S); !R.ok())
    return ret(Result::error(R.code(), std::string(What) + ": " + R.message()));
  if (Count == 0)
    return ret(Result::success());
  BufferManager &B = RT->buffers();
  BufferManager::Resolved Res;
  if (Result R = B.resolveRange(Dst, Count, Res); !R.ok())
    return ret(Result::error(R.code(), std::string(What) + ": " + R.message()));
  Op O;
  O.What = What;
  O.Run = [&B, Dst, Value, Count] { return B.memset(Dst, Value, Count); };
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
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
  if (!Async)
    return ret(RT->runSync(S, O.Run, What));
  RT->enqueue(S, std::move(O));
  return ret(Result::success());
}

//===----------------------------------------------------------------------===//
// The virtual device
//===----------------------------------------------------------------------===//

/// The properties of the one device programs see: the name lists the
/// devices; SMs are the GPUs' summed (the CPU's worker threads when there
/// is no GPU); memory is the smallest GPU's (a buffer may live on every
/// GPU), or the host's without GPUs; compute capability is the smallest
/// GPU's, 9.0 without GPUs; limits are CUDA's for that compute capability.
void fillProperties(Runtime &RT, cudaDeviceProp &P) {
  std::memset(&P, 0, sizeof(P));
  DeviceRegistry &Reg = RT.registry();
  std::string Name = "Cleave (";
  unsigned GpuSMs = 0, CpuUnits = 0, Gpus = 0;
  uint64_t GpuMem = 0, HostMem = 0;
  int Major = 0, Minor = 0;
  for (size_t I = 0; I < Reg.size(); ++I) {
    const DeviceProperties &D = Reg.device(I).properties();
    Name += (I ? " + " : "") + D.Name;
    if (D.Kind == DeviceKind::Cuda) {
      ++Gpus;
      GpuSMs += D.ComputeUnits;
      if (!GpuMem || D.TotalMemory < GpuMem)
        GpuMem = D.TotalMemory;
      if (!Major || D.ComputeCapabilityMajor < Major ||
          (D.ComputeCapabilityMajor == Major &&
           D.ComputeCapabilityMinor < Minor)) {
        Major = D.ComputeCapabilityMajor;
        Minor = D.ComputeCapabilityMinor;
      }
    } else {
      CpuUnits += D.ComputeUnits;
      if (D.TotalMemory > HostMem)
        HostMem = D.TotalMemory;
    }
  }
  Name += ")";
  std::strncpy(P.name, Name.c_str(), sizeof(P.name) - 1);
  if (!Gpus) {
    Major = 9;
    Minor = 0;
  }
  if (!HostMem) {
    long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
    if (Pages > 0 && PageSize > 0)
      HostMem = uint64_t(Pages) * uint64_t(PageSize);
  }
  P.totalGlobalMem = Gpus ? GpuMem : HostMem;
  P.sharedMemPerBlock = 48 * 1024;
  P.sharedMemPerBlockOptin = RT.sharedOptinLimit();
  P.sharedMemPerMultiprocessor = RT.sharedOptinLimit() + 1024;
  P.reservedSharedMemPerBlock = 1024;
  P.regsPerBlock = 65536;
  P.regsPerMultiprocessor = 65536;
  P.warpSize = 32;
  P.memPitch = INT_MAX;
  P.maxThreadsPerBlock = 1024;
  P.maxThreadsDim[0] = 1024;
  P.maxThreadsDim[1] = 1024;
  P.maxThreadsDim[2] = 64;
  P.maxGridSize[0] = INT_MAX;
  P.maxGridSize[1] = 65535;
  P.maxGridSize[2] = 65535;
  P.totalConstMem = 64 * 1024;
  P.major = Major;
  P.minor = Minor;
  P.textureAlignment = 512;
  P.texturePitchAlignment = 32;
  P.multiProcessorCount = static_cast<int>(Gpus ? GpuSMs : CpuUnits);
  // `cleave analyze` runs the program on the CPU for a GPU profile and tells
  // it that GPU's SM count (docs/analyze.md): grids sized from it are the
  // GPU's.
  if (const char *S = std::getenv("CLEAVE_ANALYZE_SM_COUNT")) {
    char *End = nullptr;
    long V = std::strtol(S, &End, 10);
    if (End != S && *End == '\0' && V > 0 && V <= INT_MAX)
      P.multiProcessorCount = static_cast<int>(V);
  }
  P.maxThreadsPerMultiProcessor = Major >= 9 || (Major == 8 && Minor == 0)
                                      ? 2048
                                      : (Major == 8 ? 1536 : 2048);
  P.maxBlocksPerMultiProcessor =
      Major >= 9 || (Major == 8 && Minor == 0) ? 32 : (Major == 8 ? 16 : 32);
  P.concurrentKernels = 1;
  P.asyncEngineCount = 2;
  P.unifiedAddressing = 1;
  P.globalL1CacheSupported = 1;
  P.localL1CacheSupported = 1;
  P.computePreemptionSupported = 1;
  // Not provided: mapped/managed memory, cooperative launches, IPC, memory
  // pools, clusters, stream priorities (all 0).
}

/// The cudaDeviceAttr values answered from the same properties.
bool attributeValue(const cudaDeviceProp &P, cudaDeviceAttr A, int &V) {
  switch (A) {
  case cudaDevAttrMaxThreadsPerBlock:
    V = P.maxThreadsPerBlock;
    return true;
  case cudaDevAttrMaxBlockDimX:
    V = P.maxThreadsDim[0];
    return true;
  case cudaDevAttrMaxBlockDimY:
    V = P.maxThreadsDim[1];
    return true;
  case cudaDevAttrMaxBlockDimZ:
    V = P.maxThreadsDim[2];
    return true;
  case cudaDevAttrMaxGridDimX:
    V = P.maxGridSize[0];
    return true;
  case cudaDevAttrMaxGridDimY:
    V = P.maxGridSize[1];
    return true;
  case cudaDevAttrMaxGridDimZ:
    V = P.maxGridSize[2];
    return true;
  case cudaDevAttrMaxSharedMemoryPerBlock:
    V = static_cast<int>(P.sharedMemPerBlock);
    return true;
  case cudaDevAttrMaxSharedMemoryPerBlockOptin:
    V = static_cast<int>(P.sharedMemPerBlockOptin);
    return true;
  case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
    V = static_cast<int>(P.sharedMemPerMultiprocessor);
    return true;
  case cudaDevAttrReservedSharedMemoryPerBlock:
    V = static_cast<int>(P.reservedSharedMemPerBlock);
    return true;
  case cudaDevAttrTotalConstantMemory:
    V = static_cast<int>(P.totalConstMem);
    return true;
  case cudaDevAttrWarpSize:
    V = P.warpSize;
    return true;
  case cudaDevAttrMaxPitch:
    V = static_cast<int>(P.memPitch);
    return true;
  case cudaDevAttrMaxRegistersPerBlock:
    V = P.regsPerBlock;
    return true;
  case cudaDevAttrMaxRegistersPerMultiprocessor:
    V = P.regsPerMultiprocessor;
    return true;
  case cudaDevAttrMultiProcessorCount:
    V = P.multiProcessorCount;
    return true;
  case cudaDevAttrComputeCapabilityMajor:
    V = P.major;
    return true;
  case cudaDevAttrComputeCapabilityMinor:
    V = P.minor;
    return true;
  case cudaDevAttrMaxThreadsPerMultiProcessor:
    V = P.maxThreadsPerMultiProcessor;
    return true;
  case cudaDevAttrMaxBlocksPerMultiprocessor:
    V = P.maxBlocksPerMultiProcessor;
    return true;
  case cudaDevAttrTextureAlignment:
    V = static_cast<int>(P.textureAlignment);
    return true;
  case cudaDevAttrTexturePitchAlignment:
    V = static_cast<int>(P.texturePitchAlignment);
    return true;
  case cudaDevAttrConcurrentKernels:
    V = P.concurrentKernels;
    return true;
  case cudaDevAttrAsyncEngineCount:
    V = P.asyncEngineCount;
    return true;
  case cudaDevAttrUnifiedAddressing:
    V = P.unifiedAddressing;
    return true;
  case cudaDevAttrGlobalL1CacheSupported:
    V = P.globalL1CacheSupported;
    return true;
  case cudaDevAttrLocalL1CacheSupported:
    V = P.localL1CacheSupported;
    return true;
  case cudaDevAttrComputePreemptionSupported:
    V = P.computePreemptionSupported;
    return true;
  case cudaDevAttrComputeMode:
    V = cudaComputeModeDefault;
    return true;
  case cudaDevAttrIntegrated:
  case cudaDevAttrCanMapHostMemory:
  case cudaDevAttrManagedMemory:
  case cudaDevAttrConcurrentManagedAccess:
  case cudaDevAttrPageableMemoryAccess:
  case cudaDevAttrCooperativeLaunch:
  case cudaDevAttrEccEnabled:
  case cudaDevAttrTccDriver:
  case cudaDevAttrKernelExecTimeout:
  case cudaDevAttrStreamPrioritiesSupported:
  case cudaDevAttrMemoryPoolsSupported:
  case cudaDevAttrHostNativeAtomicSupported:
  case cudaDevAttrIsMultiGpuBoard:
  case cudaDevAttrClusterLaunch:
    V = 0;
    return true;
  default:
    return false;
  }
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
  CLEAVE_RUNTIME(RT);
  cudaDeviceProp P;
  fillProperties(*RT, P);
  if (!attributeValue(P, attr, *value))
    return ret(error(ErrorCode::NotSupported,
                     "cudaDeviceGetAttribute: attribute " +
                         std::to_string(int(attr)) +
                         " is not provided by Cleave's runtime"));
  return ret(Result::success());
}

cudaError_t cudaDeviceSynchronize(void) {
  CLEAVE_RUNTIME(RT);
  return ret(RT->synchronizeAll());
}

cudaError_t cudaDeviceReset(void) {
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
  CLEAVE_RUNTIME(RT);
  return ret(RT->buffers().allocate(size, *devPtr));
}

cudaError_t cudaFree(void *devPtr) {
  CLEAVE_RUNTIME(RT);
  if (!devPtr)
    return ret(Result::success());
  // As in CUDA, cudaFree waits for the device: nothing queued still uses
  // the buffer.
  RT->drain();
  if (Result R = RT->buffers().free(devPtr); !R.ok())
    return ret(Result::error(R.code(), "cudaFree: " + R.message()));
  return ret(RT->takeAsyncError());
}

cudaError_t cudaMallocHost(void **ptr, size_t size) {
  if (!ptr)
    return ret(invalid("cudaMallocHost: null pointer"));
  *ptr = nullptr;
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
  CLEAVE_RUNTIME(RT);
  return ret(RT->allocatePinned(size, *pHost));
}

cudaError_t cudaFreeHost(void *ptr) {
  CLEAVE_RUNTIME(RT);
  return ret(RT->freePinned(ptr));
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
                       enum cudaMemcpyKind kind) {
  CopyShape C;
  C.Width = C.DPitch = C.SPitch = count;
  return copy("cudaMemcpy", dst, src, C, kind, false, nullptr);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
                            enum cudaMemcpyKind kind, cudaStream_t stream) {
  CopyShape C;
  C.Width = C.DPitch = C.SPitch = count;
  return copy("cudaMemcpyAsync", dst, src, C, kind, true, stream);
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
  return memsetOn("cudaMemset", devPtr, value, count, nullptr);
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
                            cudaStream_t stream) {
  return memsetOn("cudaMemsetAsync", devPtr, value, count, stream);
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
  CLEAVE_RUNTIME(RT);
  void *H = nullptr;
  Result R = RT->createStream(flags, H);
  *pStream = static_cast<cudaStream_t>(H);
  return ret(R);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream) {
  return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  CLEAVE_RUNTIME(RT);
  return ret(RT->destroyStream(stream));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(
        Result::error(R.code(), "cudaStreamSynchronize: " + R.message()));
  return ret(RT->synchronize(S));
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(Result::error(R.code(), "cudaStreamQuery: " + R.message()));
  if (!S->done(S->lastTicket()))
    return static_cast<cudaError_t>(ErrorCode::NotReady); // not an error
  return ret(Result::success());
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int flags) {
  if (flags != cudaEventWaitDefault)
    return ret(invalid("cudaStreamWaitEvent: unsupported flags " +
                       std::to_string(flags)));
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
  Op O;
  O.What = "cudaStreamWaitEvent";
  O.Waits.emplace_back(Rec->S, Rec->Ticket);
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
  CLEAVE_RUNTIME(RT);
  return ret(RT->destroyEvent(event));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  CLEAVE_RUNTIME(RT);
  std::shared_ptr<Event> E;
  if (Result R = RT->event(event, E); !R.ok())
    return ret(Result::error(R.code(), "cudaEventRecord: " + R.message()));
  std::shared_ptr<Stream> S;
  if (Result R = RT->stream(stream, S); !R.ok())
    return ret(Result::error(R.code(), "cudaEventRecord: " + R.message()));
  auto Rec = std::make_shared<EventRecord>();
  Rec->S = S;
  Op O;
  O.What = "cudaEventRecord";
  // The worker reaches this when everything queued before it is done: the
  // time it sees is the completion time of that work.
  O.Run = [Rec] {
    std::lock_guard<std::mutex> Lock(Rec->Mutex);
    Rec->When = std::chrono::steady_clock::now();
    Rec->Done = true;
    return Result::success();
  };
  std::lock_guard<std::mutex> Lock(E->Mutex);
  Rec->Ticket = RT->enqueue(S, std::move(O));
  E->Last = Rec;
  return ret(Result::success());
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
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
  return ret(Result::success());
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
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
  return ret(RT->takeAsyncError());
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end) {
  if (!ms)
    return ret(invalid("cudaEventElapsedTime: null pointer"));
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
  for (int I = 0; I < 2; ++I) {
    std::lock_guard<std::mutex> Lock(Rec[I]->Mutex);
    if (!Rec[I]->Done)
      return static_cast<cudaError_t>(ErrorCode::NotReady);
    T[I] = Rec[I]->When;
  }
  *ms = std::chrono::duration<float, std::milli>(T[1] - T[0]).count();
  return ret(Result::success());
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
                             void **args, size_t sharedMem,
                             cudaStream_t stream) {
  std::string Name;
  if (!func || !kernelName(func, Name))
    return ret(error(ErrInvalidDeviceFunction,
                     "cudaLaunchKernel: no kernel is registered for this "
                     "host function (was its file compiled by cleave?)"));
  uint32_t G[3] = {gridDim.x, gridDim.y, gridDim.z};
  uint32_t B[3] = {blockDim.x, blockDim.y, blockDim.z};
  return ret(launchKernel(Name, G, B, args, sharedMem, stream));
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr,
                                 int value) {
  std::string Name;
  if (!func || !kernelName(func, Name))
    return ret(error(ErrInvalidDeviceFunction,
                     "cudaFuncSetAttribute: no kernel is registered for this "
                     "host function"));
  CLEAVE_RUNTIME(RT);
  const KernelHandle *K;
  if (Result R = findKernel(*RT, Name, K); !R.ok())
    return ret(R);
  switch (attr) {
  case cudaFuncAttributeMaxDynamicSharedMemorySize: {
    uint64_t Static = K->Info->StaticSharedBytes;
    uint64_t Limit = RT->sharedOptinLimit();
    if (value < 0 || uint64_t(value) + Static > Limit)
      return ret(invalid("cudaFuncSetAttribute: " + std::to_string(value) +
                         " bytes of dynamic shared memory for " + Name +
                         " (with " + std::to_string(Static) +
                         " static) exceed the limit of " +
                         std::to_string(Limit) + " bytes per block"));
    RT->setMaxDynamicShared(Name, uint64_t(value));
    return ret(Result::success());
  }
  case cudaFuncAttributePreferredSharedMemoryCarveout:
    // A hint in CUDA too; the devices choose their own carveout.
    if (value < -1 || value > 100)
      return ret(invalid("cudaFuncSetAttribute: carveout " +
                         std::to_string(value) + " is not in [-1, 100]"));
    return ret(Result::success());
  default:
    return ret(error(ErrorCode::NotSupported,
                     "cudaFuncSetAttribute: attribute " +
                         std::to_string(int(attr)) +
                         " is not supported by Cleave's runtime"));
  }
}

} // extern "C"
