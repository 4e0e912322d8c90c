//===- CudaApi.h - Shared helpers of the CUDA-runtime subset ----*- C++ -*-===//
//
// Part of Cleave's runtime (no LLVM). Internal to the API layer: what the
// files that define cudaXxx functions (CudaRuntime.cpp, CudaDeviceApi.cpp,
// CudaKernelApi.cpp) share. Includes CUDA's cuda_runtime_api.h, so only
// those files include it.
//
//===----------------------------------------------------------------------===//
#ifndef CLEAVE_RT_API_CUDAAPI_H
#define CLEAVE_RT_API_CUDAAPI_H

#include "Runtime.h"

#include "../serve/Client.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace cleave {
namespace rt {
namespace api {

/// Records \p R as the thread's last error when it is one (finish()) and
/// returns its code.
inline cudaError_t ret(const Result &R) {
  return static_cast<cudaError_t>(finish(R));
}

inline Result error(ErrorCode C, std::string Msg) {
  return Result::error(C, std::move(Msg));
}

inline Result invalid(std::string Msg) {
  return error(ErrorCode::InvalidValue, std::move(Msg));
}

/// \p R with "What: " in front of its message.
inline Result prefixed(const char *What, const Result &R) {
  return R.ok()
             ? R
             : Result::error(R.code(), std::string(What) + ": " + R.message());
}

/// \p R, the result of a call that synchronizes, after the host gained
/// access to managed memory when no work is outstanding
/// (Runtime::managedForHost): R's error first.
inline Result withHostAccess(Runtime &RT, const Result &R) {
  Result M = RT.managedForHost();
  return R.ok() ? M : R;
}

/// With CLEAVE_SERVER set, the call goes to cleave-serve (docs/serve.md):
/// \p Call on the process's serve::Client, named SC.
#define CLEAVE_SERVED(Call)                                                    \
  if (serve::Client *SC = serve::Client::get())                                \
  return ret(SC->Call)

/// The runtime, or why it could not start.
#define CLEAVE_RUNTIME(RT)                                                     \
  Runtime *RT;                                                                 \
  if (Result StartR = Runtime::get(RT); !StartR.ok())                          \
  return ret(StartR)

/// The alignment of the rows of cudaMallocPitch, which the virtual device
/// reports as its textureAlignment (CUDA's value on current GPUs).
constexpr uint64_t PitchAlignment = 512;

/// cudaGetDeviceProperties of the virtual device (DeviceAttributes.cpp).
void fillProperties(Runtime &RT, cudaDeviceProp &P);

/// A hardware attribute (clock rates, bus width, L2 size, PCI ids, ECC,
/// ...) of the virtual device made of \p Devices: the smallest value of
/// the GPUs that answer (the first GPU's for identities: PCI ids, NUMA
/// nodes), else the host's value or a documented constant.
int hardwareAttribute(const std::vector<Device *> &Devices, cudaDeviceAttr A);

/// The bodies of cudaFuncSetAttribute, cudaFuncGetAttributes and the
/// occupancy query for a kernel already found (CudaKernelApi.cpp;
/// cleave-serve answers its clients' with them).
Result setKernelAttribute(Runtime &RT, const std::string &Name,
                          const KernelHandle &K, int Attr, int Value);
void kernelAttributes(Runtime &RT, const std::string &Name,
                      const KernelHandle &K, cudaFuncAttributes &A);
int kernelOccupancy(Runtime &RT, const KernelHandle &K, int BlockSize,
                    size_t DynamicShared);

/// cudaDeviceGetAttribute of the virtual device: the value of every
/// attribute CUDA 13 defines (docs/runtime-api.md says where each comes
/// from); InvalidValue for a value that is no attribute, as in CUDA.
Result deviceAttribute(Runtime &RT, cudaDeviceAttr A, int &Out);

} // namespace api
} // namespace rt
} // namespace cleave

#endif
