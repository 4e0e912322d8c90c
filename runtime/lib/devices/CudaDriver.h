//===- CudaDriver.h - libcuda entry points loaded with dlopen ---*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Private to runtime/lib/devices. The
// runtime never links libcuda: it dlopens the driver and fills a table of
// function pointers, as LLVM's offload CUDA plugin does, so one binary runs
// with or without GPUs. Prototypes come from cuda.h (types and function
// declarations only; nothing of it is linked). cuda.h #defines many entry
// points to versioned symbols (cuMemAlloc -> cuMemAlloc_v2, cuMemcpyHtoDAsync
// -> cuMemcpyHtoDAsync_v2, cuEventElapsedTime -> cuEventElapsedTime_v2, ...);
// the table is declared through those macros, so each slot has the
// prototype and the symbol name of the version the header selects.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_LIB_DEVICES_CUDADRIVER_H
#define CLEAVE_RT_LIB_DEVICES_CUDADRIVER_H

#include "cleave/rt/Error.h"

#include <cuda.h>

#include <string>

namespace cleave {
namespace rt {

// Every entry point the runtime uses. X(F) is expanded with F already
// macro-expanded by cuda.h to its versioned name.
#define CLEAVE_CUDA_DRIVER_FUNCTIONS(X)                                        \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorString)                                                          \
  X(cuGetErrorName)                                                            \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDeviceCanAccessPeer)                                                     \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuCtxEnablePeerAccess)                                                     \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemGetInfo)                                                              \
  X(cuMemHostAlloc)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemcpyPeerAsync)                                                         \
  X(cuMemcpy2DAsync)                                                           \
  X(cuMemsetD8Async)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamCreateWithPriority)                                                \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventElapsedTime)                                                        \
  X(cuEventDestroy)                                                            \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleGetGlobal)                                                         \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncGetAttribute)                                                        \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                               \
  X(cuLaunchKernel)

// Entry points of newer drivers, null when the driver lacks them: SM
// partitions through green contexts (12.4+).
#define CLEAVE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(X)                               \
  X(cuDeviceGetDevResource)                                                    \
  X(cuDevSmResourceSplitByCount)                                               \
  X(cuDevResourceGenerateDesc)                                                 \
  X(cuGreenCtxCreate)                                                          \
  X(cuGreenCtxDestroy)                                                         \
  X(cuGreenCtxStreamCreate)

struct CudaDriver {
#define CLEAVE_CUDA_SLOT(F) decltype(&::F) F = nullptr;
  CLEAVE_CUDA_DRIVER_FUNCTIONS(CLEAVE_CUDA_SLOT)
  CLEAVE_CUDA_DRIVER_OPTIONAL_FUNCTIONS(CLEAVE_CUDA_SLOT)
#undef CLEAVE_CUDA_SLOT
  std::string Library;
  int Version = 0;

  /// "CUDA_ERROR_OUT_OF_MEMORY: out of memory".
  std::string errorString(CUresult R) const;
};

/// Loads \p Library and every entry point, once per process (later calls
/// return the first outcome). Null, with \p Why, when the library or a
/// required symbol is missing; an optional one missing stays null.
const CudaDriver *loadCudaDriver(const std::string &Library, std::string &Why);

/// The closest runtime error code for a driver result.
ErrorCode toErrorCode(CUresult R);

} // namespace rt
} // namespace cleave

#endif
