//===- CudaKernelApi.cpp - Kernel calls of the CUDA-runtime subset --------===//
//
// Part of Cleave's runtime (no LLVM). cudaLaunchKernel and what programs
// ask of or set on a kernel: its attributes, its cache preference and the
// occupancy calculator (docs/runtime-api.md).
//
// A kernel is named by its host stub (cleave_register_kernel). What only
// the GPU code knows (registers, local memory, the PTX and binary
// versions, resident blocks) comes from the driver for the kernel's
// original variant on every GPU of the virtual device. Without a GPU, the
// bundle answers: static shared memory, and the registers and stack frame
// ptxas gave the kernel, read from its cubin (CubinInfo.h; unknown, 0,
// without a cubin); limits and occupancy are the virtual device's.
//
//===----------------------------------------------------------------------===//
#include "CudaApi.h"

#include "cleave/rt/CubinInfo.h"
#include "cleave/rt/HopperModel.h"

// The driver's CUfunction_attribute numbers, which Device::functionAttribute
// takes (types only; nothing of libcuda is linked).
#include <cuda.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

using namespace cleave::rt;
using namespace cleave::rt::api;

namespace {

/// The kernel that the host stub \p Func stands for, in the started
/// runtime.
Result stubKernel(const char *What, const void *Func, Runtime *&RT,
                  std::string &Name, const KernelHandle *&K) {
  if (!Func || !kernelName(Func, Name))
    return error(ErrInvalidDeviceFunction,
                 std::string(What) + ": no kernel is registered for this "
                                     "host function (was its file compiled "
                                     "by cleave?)");
  if (Result R = Runtime::get(RT); !R.ok())
    return R;
  return prefixed(What, findKernel(*RT, Name, K));
}

/// Calls \p Fn(Device &, FunctionHandle) with \p K's original variant on
/// each GPU of the virtual device that loads it; whether there was one.
template <class FnT>
bool forEachGpuFunction(Runtime &RT, const KernelHandle &K, FnT Fn) {
  std::lock_guard<std::mutex> Lock(RT.engineMutex());
  bool Any = false;
  for (size_t I = 0; I < RT.registry().size(); ++I) {
    Device &D = RT.registry().device(I);
    FunctionHandle F = nullptr;
    if (D.kind() != DeviceKind::Cuda ||
        !RT.engine().originalFunction(K, I, F).ok())
      continue;
    Fn(D, F);
    Any = true;
  }
  return Any;
}

/// The virtual device's limits as the occupancy model's GPU.
model::GpuParams virtualGpu(Runtime &RT) {
  cudaDeviceProp P;
  fillProperties(RT, P);
  model::GpuParams G;
  G.Sms = unsigned(P.multiProcessorCount);
  G.MaxThreadsPerSm = unsigned(P.maxThreadsPerMultiProcessor);
  G.MaxWarpsPerSm = G.MaxThreadsPerSm / unsigned(P.warpSize);
  G.MaxBlocksPerSm = unsigned(P.maxBlocksPerMultiProcessor);
  G.MaxThreadsPerBlock = unsigned(P.maxThreadsPerBlock);
  G.RegistersPerSm = unsigned(P.regsPerMultiprocessor);
  G.SharedPerSm = P.sharedMemPerMultiprocessor;
  G.SharedPerBlockMax = P.sharedMemPerBlockOptin;
  G.SharedReservedPerBlock = P.reservedSharedMemPerBlock;
  return G;
}

/// What ptxas decided for \p K's original variant, from the bundle's cubin
/// for the virtual device's architecture (else any cubin it has); false
/// without one (built with --no-ptxas, or no ptxas at hand).
bool cubinResources(Runtime &RT, const KernelHandle &K, int Arch,
                    CubinKernelResources &Out, int &CubinArch) {
  const Bundle *B = RT.engine().bundleOf(K);
  if (!B)
    return false;
  const std::string &Entry = K.Info->variant(VariantKind::Original).Entry;
  // The image for Arch first, then any other cubin.
  std::vector<const BundleImage *> Order;
  if (const BundleImage *I =
          B->findImage(ImageKind::Cubin, "sm_" + std::to_string(Arch)))
    Order.push_back(I);
  for (const BundleImage &I : B->Images)
    if (I.Kind == ImageKind::Cubin)
      Order.push_back(&I);
  for (const BundleImage *I : Order)
    if (readCubinKernelResources(I->Data, Entry, Out)) {
      CubinArch =
          I->Arch.rfind("sm_", 0) == 0 ? std::atoi(I->Arch.c_str() + 3) : Arch;
      return true;
    }
  return false;
}

/// cudaFuncGetAttributes: the GPUs' answers (the largest resource use, the
/// smallest limit and version), else the bundle's and the virtual
/// device's.
void functionAttributes(Runtime &RT, const std::string &Name,
                        const KernelHandle &K, cudaFuncAttributes &A) {
  A = cudaFuncAttributes();
  cudaDeviceProp P;
  fillProperties(RT, P);
  A.sharedSizeBytes = K.Info->StaticSharedBytes;
  A.maxThreadsPerBlock = P.maxThreadsPerBlock;
  A.ptxVersion = A.binaryVersion = P.major * 10 + P.minor;
  A.maxDynamicSharedSizeBytes =
      int(RT.maxDynamicShared(Name, K.Info->StaticSharedBytes));
  A.preferredShmemCarveout = -1; // the driver's default split
  CubinKernelResources Res;
  int CubinArch = 0;
  if (cubinResources(RT, K, A.binaryVersion, Res, CubinArch)) {
    A.numRegs = int(Res.Registers);
    A.localSizeBytes = Res.FrameBytes;
    A.binaryVersion = CubinArch;
  }
  bool First = true;
  forEachGpuFunction(RT, K, [&](Device &D, FunctionHandle F) {
    auto Get = [&](CUfunction_attribute Attr, auto &Field, bool Max) {
      int V = 0;
      if (!D.functionAttribute(F, int(Attr), V).ok())
        return;
      using T = std::remove_reference_t<decltype(Field)>;
      if (First || (Max ? T(V) > Field : T(V) < Field))
        Field = T(V);
    };
    Get(CU_FUNC_ATTRIBUTE_NUM_REGS, A.numRegs, true);
    Get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, A.sharedSizeBytes, true);
    Get(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, A.constSizeBytes, true);
    Get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, A.localSizeBytes, true);
    Get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, A.maxThreadsPerBlock, false);
    Get(CU_FUNC_ATTRIBUTE_PTX_VERSION, A.ptxVersion, false);
    Get(CU_FUNC_ATTRIBUTE_BINARY_VERSION, A.binaryVersion, false);
    Get(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, A.cacheModeCA, true);
    First = false;
  });
}

} // namespace

namespace cleave {
namespace rt {
namespace api {

Result setKernelAttribute(Runtime &RT, const std::string &Name,
                          const KernelHandle &K, int Attr, int Value) {
  switch (Attr) {
  case cudaFuncAttributeMaxDynamicSharedMemorySize: {
    uint64_t Static = K.Info->StaticSharedBytes;
    uint64_t Limit = RT.sharedOptinLimit();
    if (Value < 0 || uint64_t(Value) + Static > Limit)
      return invalid("cudaFuncSetAttribute: " + std::to_string(Value) +
                     " bytes of dynamic shared memory for " + Name +
                     " (with " + std::to_string(Static) +
                     " static) exceed the limit of " + std::to_string(Limit) +
                     " bytes per block");
    RT.setMaxDynamicShared(Name, uint64_t(Value));
    return Result::success();
  }
  case cudaFuncAttributePreferredSharedMemoryCarveout:
    // A hint in CUDA too; the devices choose their own carveout.
    if (Value < -1 || Value > 100)
      return invalid("cudaFuncSetAttribute: carveout " +
                     std::to_string(Value) + " is not in [-1, 100]");
    return Result::success();
  default:
    return error(ErrorCode::NotSupported,
                 "cudaFuncSetAttribute: attribute " + std::to_string(Attr) +
                     " is not supported by Cleave's runtime");
  }
}

void kernelAttributes(Runtime &RT, const std::string &Name,
                      const KernelHandle &K, cudaFuncAttributes &A) {
  functionAttributes(RT, Name, K, A);
}

int kernelOccupancy(Runtime &RT, const KernelHandle &K, int BlockSize,
                    size_t DynamicShared) {
  // On GPUs: the driver's count for each, the smallest (a launch's blocks
  // may run on any of them). Without: the virtual device's limits with the
  // kernel's shared memory; registers unknown.
  unsigned Blocks = UINT_MAX;
  bool Gpu = forEachGpuFunction(RT, K, [&](Device &D, FunctionHandle F) {
    unsigned N = 0;
    (void)D.maxActiveBlocksPerSM(F, unsigned(BlockSize), DynamicShared, N);
    Blocks = std::min(Blocks, N);
  });
  if (!Gpu) {
    model::KernelResources Res;
    cudaDeviceProp P;
    fillProperties(RT, P);
    CubinKernelResources Cubin;
    int CubinArch = 0;
    if (cubinResources(RT, K, P.major * 10 + P.minor, Cubin, CubinArch))
      Res.Registers = Cubin.Registers;
    Res.StaticShared = K.Info->StaticSharedBytes;
    Res.DynamicShared = DynamicShared;
    Blocks =
        model::occupancy(virtualGpu(RT), Res, unsigned(BlockSize)).BlocksPerSm;
  }
  return int(std::min<unsigned>(Blocks, INT_MAX));
}

} // namespace api
} // namespace rt
} // namespace cleave

extern "C" {

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
  if (serve::Client *SC = serve::Client::get()) {
    if (!func || !kernelName(func, Name))
      return ret(error(ErrInvalidDeviceFunction,
                       "cudaFuncSetAttribute: no kernel is registered for "
                       "this host function"));
    return ret(SC->kernelQuery(serve::Op::FuncSetAttribute, Name, attr, value,
                               nullptr, 0));
  }
  Runtime *RT;
  const KernelHandle *K;
  if (Result R = stubKernel("cudaFuncSetAttribute", func, RT, Name, K); !R.ok())
    return ret(R);
  return ret(setKernelAttribute(*RT, Name, *K, attr, value));
}

cudaError_t cudaFuncSetCacheConfig(const void *func,
                                   enum cudaFuncCache cacheConfig) {
  Runtime *RT;
  std::string Name;
  const KernelHandle *K;
  // A client checks the stub alone: the preference changes nothing.
  if (serve::Client::get()) {
    if (!func || !kernelName(func, Name))
      return ret(error(ErrInvalidDeviceFunction,
                       "cudaFuncSetCacheConfig: no kernel is registered for "
                       "this host function"));
  } else if (Result R =
                 stubKernel("cudaFuncSetCacheConfig", func, RT, Name, K);
             !R.ok()) {
    return ret(R);
  }
  if (cacheConfig < cudaFuncCachePreferNone ||
      cacheConfig > cudaFuncCachePreferEqual)
    return ret(
        invalid("cudaFuncSetCacheConfig: " + std::to_string(int(cacheConfig)) +
                " is not a cudaFuncCache value"));
  // A preference in CUDA too; each device keeps its own split.
  return ret(Result::success());
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr,
                                  const void *func) {
  if (!attr)
    return ret(invalid("cudaFuncGetAttributes: null pointer"));
  Runtime *RT;
  std::string Name;
  const KernelHandle *K;
  if (serve::Client *SC = serve::Client::get()) {
    if (!func || !kernelName(func, Name))
      return ret(error(ErrInvalidDeviceFunction,
                       "cudaFuncGetAttributes: no kernel is registered for "
                       "this host function"));
    return ret(SC->kernelQuery(serve::Op::FuncAttributes, Name, 0, 0, attr,
                               sizeof(*attr)));
  }
  if (Result R = stubKernel("cudaFuncGetAttributes", func, RT, Name, K);
      !R.ok())
    return ret(R);
  kernelAttributes(*RT, Name, *K, *attr);
  return ret(Result::success());
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
    unsigned int flags) {
  const char *What = "cudaOccupancyMaxActiveBlocksPerMultiprocessor";
  if (!numBlocks)
    return ret(invalid(std::string(What) + ": null pointer"));
  *numBlocks = 0;
  if (flags & ~unsigned(cudaOccupancyDisableCachingOverride))
    return ret(invalid(std::string(What) + ": unknown flags " +
                       std::to_string(flags)));
  if (blockSize <= 0)
    return ret(invalid(std::string(What) + ": block size " +
                       std::to_string(blockSize) + " is not positive"));
  Runtime *RT;
  std::string Name;
  const KernelHandle *K;
  if (serve::Client *SC = serve::Client::get()) {
    if (!func || !kernelName(func, Name))
      return ret(error(ErrInvalidDeviceFunction,
                       std::string(What) + ": no kernel is registered for "
                                           "this host function"));
    return ret(SC->kernelQuery(serve::Op::Occupancy, Name, blockSize,
                               int64_t(dynamicSMemSize), numBlocks,
                               sizeof(*numBlocks)));
  }
  if (Result R = stubKernel(What, func, RT, Name, K); !R.ok())
    return ret(R);
  *numBlocks = kernelOccupancy(*RT, *K, blockSize, dynamicSMemSize);
  return ret(Result::success());
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
      numBlocks, func, blockSize, dynamicSMemSize, cudaOccupancyDefault);
}

} // extern "C"
