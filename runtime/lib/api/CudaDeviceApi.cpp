//===- CudaDeviceApi.cpp - Device-wide calls of the CUDA-runtime subset ---===//
//
// Part of Cleave's runtime (no LLVM). The calls about the device as a
// whole that programs make around their kernels: memory info, the cache
// and scheduling preferences, host memory registration, the profiler
// markers, and the two calls CUDA 13 removed that older programs still
// make (cudaThreadSynchronize, cudaThreadExit; declared for them by
// cleave/cuda_removed_api.h). docs/runtime-api.md says how each differs
// from CUDA.
//
//===----------------------------------------------------------------------===//
#include "CudaApi.h"

#include "cleave/cuda_removed_api.h"

#include <cuda_profiler_api.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <string>
#include <unistd.h>

using namespace cleave::rt;
using namespace cleave::rt::api;

namespace {

/// Host memory available to new allocations: /proc/meminfo's MemAvailable,
/// else the free pages.
uint64_t hostAvailableBytes() {
  std::ifstream Info("/proc/meminfo");
  std::string Key;
  uint64_t KiB = 0;
  std::string Unit;
  while (Info >> Key >> KiB >> Unit)
    if (Key == "MemAvailable:")
      return KiB * 1024;
  long Pages = sysconf(_SC_AVPHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
  return Pages > 0 && PageSize > 0 ? uint64_t(Pages) * uint64_t(PageSize) : 0;
}

/// One line on stderr the first time \p Flag is seen unset.
void warnOnce(std::once_flag &Flag, const char *Line) {
  std::call_once(Flag, [Line] { logLine(Line); });
}

bool validCacheConfig(int C) {
  return C == cudaFuncCachePreferNone || C == cudaFuncCachePreferShared ||
         C == cudaFuncCachePreferL1 || C == cudaFuncCachePreferEqual;
}

} // namespace

extern "C" {

cudaError_t cudaMemGetInfo(size_t *free, size_t *total) {
  if (!free || !total)
    return ret(invalid("cudaMemGetInfo: null pointer"));
  if (serve::Client *SC = serve::Client::get()) {
    uint64_t F = 0, T = 0;
    Result R = SC->memInfo(F, T);
    *free = F;
    *total = T;
    return ret(R);
  }
  CLEAVE_RUNTIME(RT);
  // A buffer may be replicated on every GPU, so the smallest GPU is the
  // limit (as totalGlobalMem says); without a GPU, the host's memory.
  bool Any = false;
  uint64_t Free = 0, Total = 0;
  for (Device *D : RT->registry().devices()) {
    uint64_t F = 0, T = 0;
    if (D->kind() != DeviceKind::Cuda || !D->memoryInfo(F, T).ok())
      continue;
    Free = Any ? std::min(Free, F) : F;
    Total = Any ? std::min(Total, T) : T;
    Any = true;
  }
  if (!Any) {
    cudaDeviceProp P;
    fillProperties(*RT, P);
    Total = P.totalGlobalMem;
    Free = std::min<uint64_t>(hostAvailableBytes(), Total);
  }
  *free = Free;
  *total = Total;
  return ret(Result::success());
}

cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache cacheConfig) {
  if (!validCacheConfig(cacheConfig))
    return ret(invalid(
        "cudaDeviceSetCacheConfig: " + std::to_string(int(cacheConfig)) +
        " is not a cudaFuncCache value"));
  // A preference in CUDA too; each device keeps its own split. A client of
  // cleave-serve keeps it itself (the server's devices are shared).
  if (serve::Client *SC = serve::Client::get()) {
    SC->CacheConfig = cacheConfig;
    return ret(Result::success());
  }
  CLEAVE_RUNTIME(RT);
  RT->CacheConfig = cacheConfig;
  return ret(Result::success());
}

cudaError_t cudaDeviceGetCacheConfig(enum cudaFuncCache *pCacheConfig) {
  if (!pCacheConfig)
    return ret(invalid("cudaDeviceGetCacheConfig: null pointer"));
  if (serve::Client *SC = serve::Client::get()) {
    *pCacheConfig = static_cast<cudaFuncCache>(SC->CacheConfig.load());
    return ret(Result::success());
  }
  CLEAVE_RUNTIME(RT);
  *pCacheConfig = static_cast<cudaFuncCache>(RT->CacheConfig.load());
  return ret(Result::success());
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  unsigned Schedule = flags & cudaDeviceScheduleMask;
  if ((flags & ~unsigned(cudaDeviceMask)) ||
      (Schedule != cudaDeviceScheduleAuto &&
       Schedule != cudaDeviceScheduleSpin &&
       Schedule != cudaDeviceScheduleYield &&
       Schedule != cudaDeviceScheduleBlockingSync))
    return ret(
        invalid("cudaSetDeviceFlags: invalid flags " + std::to_string(flags)));
  // Kept and reported; how host threads wait is spin_us's (CLEAVE_TUNE).
  if (serve::Client *SC = serve::Client::get()) {
    SC->DeviceFlags = flags;
    return ret(Result::success());
  }
  CLEAVE_RUNTIME(RT);
  RT->DeviceFlags = flags;
  return ret(Result::success());
}

cudaError_t cudaGetDeviceFlags(unsigned int *flags) {
  if (!flags)
    return ret(invalid("cudaGetDeviceFlags: null pointer"));
  if (serve::Client *SC = serve::Client::get()) {
    *flags = SC->DeviceFlags.load();
    return ret(Result::success());
  }
  CLEAVE_RUNTIME(RT);
  *flags = RT->DeviceFlags.load();
  return ret(Result::success());
}

cudaError_t cudaHostRegister(void *ptr, size_t size, unsigned int flags) {
  if (flags & ~unsigned(cudaHostRegisterPortable | cudaHostRegisterMapped |
                        cudaHostRegisterIoMemory | cudaHostRegisterReadOnly))
    return ret(
        invalid("cudaHostRegister: unknown flags " + std::to_string(flags)));
  if (flags & (cudaHostRegisterMapped | cudaHostRegisterIoMemory))
    return ret(error(ErrorCode::NotSupported,
                     "cudaHostRegister: cudaHostRegisterMapped and "
                     "cudaHostRegisterIoMemory (device access to host "
                     "memory) are not supported: kernels use memory from "
                     "cudaMalloc"));
  CLEAVE_SERVED(hostRegister(ptr, size));
  CLEAVE_RUNTIME(RT);
  return ret(prefixed("cudaHostRegister", RT->registerHost(ptr, size)));
}

cudaError_t cudaHostUnregister(void *ptr) {
  CLEAVE_SERVED(hostUnregister(ptr));
  CLEAVE_RUNTIME(RT);
  return ret(RT->unregisterHost(ptr));
}

cudaError_t cudaProfilerStart(void) {
  // Marks what an attached profiler collects; with none attached (Cleave
  // has no profiler interface) it has no effect, as in CUDA.
  if (serve::Client::get())
    return ret(Result::success());
  CLEAVE_RUNTIME(RT);
  (void)RT;
  return ret(Result::success());
}

cudaError_t cudaProfilerStop(void) {
  if (serve::Client::get())
    return ret(Result::success());
  CLEAVE_RUNTIME(RT);
  (void)RT;
  return ret(Result::success());
}

cudaError_t cudaThreadSynchronize(void) {
  static std::once_flag Warned;
  warnOnce(Warned, "cleave: warning: cudaThreadSynchronize is deprecated "
                   "(removed in CUDA 13); it runs as cudaDeviceSynchronize");
  return cudaDeviceSynchronize();
}

cudaError_t cudaThreadExit(void) {
  static std::once_flag Warned;
  warnOnce(Warned, "cleave: warning: cudaThreadExit is deprecated (removed "
                   "in CUDA 13); it runs as cudaDeviceReset");
  return cudaDeviceReset();
}

} // extern "C"
