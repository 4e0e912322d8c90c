//===- SupportedApi.cpp - The CUDA runtime functions Cleave's runtime has -===//
//
// Part of Cleave. The one table of the CUDA-runtime subset that libcleave_rt
// defines (issue 4 section 5, docs/runtime-api.md). The rewriter refuses a
// call to any other cuda* function at its location, before the host
// compiler and the linker would; the driver also turns an undefined cuda*
// symbol at link time into the same message, so a stale entry here shows up
// as a link diagnostic, never as a wrong program.
//
//===----------------------------------------------------------------------===//
#include "cleave/Rewrite/HostRewriter.h"

#include <algorithm>

using namespace llvm;

namespace cleave {

// Sorted, for the binary search (asserted in debug builds).
static const StringRef Supported[] = {
    "cudaDeviceGetAttribute",
    "cudaDeviceGetCacheConfig",
    "cudaDeviceGetStreamPriorityRange",
    "cudaDeviceReset",
    "cudaDeviceSetCacheConfig",
    "cudaDeviceSynchronize",
    "cudaDriverGetVersion",
    "cudaEventCreate",
    "cudaEventCreateWithFlags",
    "cudaEventDestroy",
    "cudaEventElapsedTime",
    "cudaEventQuery",
    "cudaEventRecord",
    "cudaEventSynchronize",
    "cudaFree",
    "cudaFreeHost",
    "cudaFuncGetAttributes",
    "cudaFuncSetAttribute",
    "cudaFuncSetCacheConfig",
    "cudaGetDevice",
    "cudaGetDeviceCount",
    "cudaGetDeviceFlags",
    "cudaGetDeviceProperties",
    "cudaGetErrorName",
    "cudaGetErrorString",
    "cudaGetLastError",
    "cudaHostAlloc",
    "cudaHostRegister",
    "cudaHostUnregister",
    "cudaLaunchKernel",
    "cudaMalloc",
    "cudaMallocHost",
    "cudaMallocManaged",
    "cudaMallocPitch",
    "cudaMemAdvise",
    "cudaMemGetInfo",
    "cudaMemPrefetchAsync",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cudaMemcpy2DAsync",
    "cudaMemcpyAsync",
    "cudaMemcpyFromSymbol",
    "cudaMemcpyFromSymbolAsync",
    "cudaMemcpyToSymbol",
    "cudaMemcpyToSymbolAsync",
    "cudaMemset",
    "cudaMemset2D",
    "cudaMemset2DAsync",
    "cudaMemsetAsync",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
    "cudaPeekAtLastError",
    "cudaProfilerStart",
    "cudaProfilerStop",
    "cudaRuntimeGetVersion",
    "cudaSetDevice",
    "cudaSetDeviceFlags",
    "cudaStreamCreate",
    "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority",
    "cudaStreamDestroy",
    "cudaStreamGetPriority",
    "cudaStreamQuery",
    "cudaStreamSynchronize",
    "cudaStreamWaitEvent",
    "cudaThreadExit",
    "cudaThreadSynchronize",
};

// Templates of CUDA's own cuda_runtime.h (outside __CUDACC__, so the host
// compiler sees them too) built only on functions of the table above:
// accepted where they are called, defined by no library. Sorted.
static const StringRef HeaderTemplates[] = {
    "cudaOccupancyMaxPotentialBlockSize",
    "cudaOccupancyMaxPotentialBlockSizeVariableSMem",
    "cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags",
    "cudaOccupancyMaxPotentialBlockSizeWithFlags",
};

ArrayRef<StringRef> supportedCudaRuntimeFunctions() { return Supported; }

bool isSupportedCudaRuntimeFunction(StringRef Name) {
  assert(
      std::is_sorted(std::begin(Supported), std::end(Supported)) &&
      std::is_sorted(std::begin(HeaderTemplates), std::end(HeaderTemplates)) &&
      "the tables of supported functions must stay sorted");
  return std::binary_search(std::begin(Supported), std::end(Supported), Name) ||
         std::binary_search(std::begin(HeaderTemplates),
                            std::end(HeaderTemplates), Name);
}

} // namespace cleave
