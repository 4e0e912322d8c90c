//===- CudaDriver.cpp - libcuda entry points loaded with dlopen -----------===//
//
// Part of Cleave's runtime (no LLVM).
//
//===----------------------------------------------------------------------===//
#include "CudaDriver.h"

#include <dlfcn.h>

#include <mutex>

namespace cleave {
namespace rt {

#define CLEAVE_STR2(X) #X
#define CLEAVE_STR(X) CLEAVE_STR2(X)

std::string CudaDriver::errorString(CUresult R) const {
  const char *Name = nullptr, *Text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(R, &Name);
  if (cuGetErrorString)
    cuGetErrorString(R, &Text);
  std::string S = Name ? Name : "CUDA error " + std::to_string(int(R));
  if (Text)
    S += std::string(": ") + Text;
  return S;
}

static bool loadAll(CudaDriver &D, void *Handle, std::string &Why) {
#define CLEAVE_CUDA_LOAD(F)                                                    \
  {                                                                            \
    void *Sym = dlsym(Handle, CLEAVE_STR(F));                                  \
    if (!Sym && std::string(CLEAVE_STR(F)) == "cuEventElapsedTime_v2")         \
      /* Drivers before 12.8 have only the first version, same prototype. */  \
      Sym = dlsym(Handle, "cuEventElapsedTime");                               \
    if (!Sym) {                                                                \
      Why = D.Library + " has no " CLEAVE_STR(F) " (driver too old?)";         \
      return false;                                                            \
    }                                                                          \
    D.F = reinterpret_cast<decltype(D.F)>(Sym);                                \
  }
  CLEAVE_CUDA_DRIVER_FUNCTIONS(CLEAVE_CUDA_LOAD)
#undef CLEAVE_CUDA_LOAD
#define CLEAVE_CUDA_LOAD_OPTIONAL(F)                                           \
  D.F = reinterpret_cast<decltype(D.F)>(dlsym(Handle, CLEAVE_STR(F)));
  CLEAVE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(CLEAVE_CUDA_LOAD_OPTIONAL)
#undef CLEAVE_CUDA_LOAD_OPTIONAL
  return true;
}

const CudaDriver *loadCudaDriver(const std::string &Library,
                                 std::string &Why) {
  static std::mutex Mutex;
  static CudaDriver *Loaded = nullptr;
  static std::string TriedLibrary, LoadError;
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Loaded) {
    Why.clear();
    if (Loaded->Library == Library)
      return Loaded;
    Why = "the CUDA driver was already loaded from " + Loaded->Library;
    return nullptr;
  }
  // A failed load is remembered per library name; another name is tried.
  if (Library != TriedLibrary) {
    TriedLibrary = Library;
    LoadError.clear();
    // The handle is never closed: the driver stays loaded for the process.
    void *Handle = dlopen(Library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!Handle) {
      const char *E = dlerror();
      LoadError = E ? E : Library + ": cannot be loaded";
    } else {
      auto *D = new CudaDriver();
      D->Library = Library;
      if (loadAll(*D, Handle, LoadError)) {
        D->cuDriverGetVersion(&D->Version);
        Loaded = D;
        Why.clear();
        return Loaded;
      }
      delete D;
      dlclose(Handle);
    }
  }
  Why = LoadError;
  return nullptr;
}

ErrorCode toErrorCode(CUresult R) {
  switch (R) {
  case CUDA_SUCCESS:
    return ErrorCode::Success;
  case CUDA_ERROR_INVALID_VALUE:
    return ErrorCode::InvalidValue;
  case CUDA_ERROR_OUT_OF_MEMORY:
    return ErrorCode::MemoryAllocation;
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
    return ErrorCode::InitializationError;
  case CUDA_ERROR_NO_DEVICE:
    return ErrorCode::NoDevice;
  case CUDA_ERROR_INVALID_DEVICE:
    return ErrorCode::InvalidDevice;
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
    return ErrorCode::InvalidKernelImage;
  case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    return ErrorCode::PeerAccessUnsupported;
  case CUDA_ERROR_INVALID_HANDLE:
  case CUDA_ERROR_INVALID_CONTEXT:
    return ErrorCode::InvalidResourceHandle;
  case CUDA_ERROR_NOT_READY:
    return ErrorCode::NotReady;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    return ErrorCode::IllegalAddress;
  case CUDA_ERROR_ASSERT:
    return ErrorCode::Assert;
  case CUDA_ERROR_LAUNCH_FAILED:
    return ErrorCode::LaunchFailure;
  case CUDA_ERROR_NOT_SUPPORTED:
    return ErrorCode::NotSupported;
  default:
    return ErrorCode::Unknown;
  }
}

} // namespace rt
} // namespace cleave
