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
    "cudaDeviceReset",
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
    "cudaFuncSetAttribute",
    "cudaGetDevice",
    "cudaGetDeviceCount",
    "cudaGetDeviceProperties",
    "cudaGetErrorName",
    "cudaGetErrorString",
    "cudaGetLastError",
    "cudaHostAlloc",
    "cudaLaunchKernel",
    "cudaMalloc",
    "cudaMallocHost",
    "cudaMemcpy",
    "cudaMemcpy2D",
    "cudaMemcpy2DAsync",
    "cudaMemcpyAsync",
    "cudaMemcpyFromSymbol",
    "cudaMemcpyFromSymbolAsync",
    "cudaMemcpyToSymbol",
    "cudaMemcpyToSymbolAsync",
    "cudaMemset",
    "cudaMemsetAsync",
    "cudaPeekAtLastError",
    "cudaRuntimeGetVersion",
    "cudaSetDevice",
    "cudaStreamCreate",
    "cudaStreamCreateWithFlags",
    "cudaStreamDestroy",
    "cudaStreamQuery",
    "cudaStreamSynchronize",
    "cudaStreamWaitEvent",
};

ArrayRef<StringRef> supportedCudaRuntimeFunctions() { return Supported; }

bool isSupportedCudaRuntimeFunction(StringRef Name) {
  assert(std::is_sorted(std::begin(Supported), std::end(Supported)) &&
         "the table of supported functions must stay sorted");
  return std::binary_search(std::begin(Supported), std::end(Supported), Name);
}

} // namespace cleave
