// What the rewriter refuses, each with its location; no output is written.
// RUN: rm -f %t.cpp
// RUN: not %cleave compile --emit=host-source -DUNSUPPORTED %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=API
// RUN: not %cleave compile --emit=host-source -DSHARED %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=SHARED
// RUN: not %cleave compile --emit=host-source -DMANAGED %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=MANAGED
// RUN: not %cleave compile --emit=host-source -DSYNTAX %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not %cleave compile --emit=host-source -DDRIVER_API %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=DRIVER
// RUN: not %cleave compile --emit=host-source -DDEVICE_LAMBDA %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=LAMBDA
// RUN: not %cleave compile --emit=host-source -DMACRO_KERNEL %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=MKERNEL
// RUN: not test -e %t.cpp
#include <cuda_runtime.h>
#ifdef DRIVER_API
#include <cuda.h>
#endif

__global__ void k(int *p) { p[threadIdx.x] = 1; }

#ifdef MACRO_KERNEL
#define DEFINE_KERNEL(name) __global__ void name(int *p) { p[0] = 1; }
DEFINE_KERNEL(fromMacro)
// MKERNEL: bad-input.cu:[[@LINE-1]]:15: error: kernel 'fromMacro' is defined by the expansion of macro 'DEFINE_KERNEL', which Cleave cannot rewrite: define it without the macro
#endif
#ifdef SHARED
__shared__ float tile[32];
// SHARED: bad-input.cu:[[@LINE-1]]:18: error: __shared__ variable 'tile' at namespace scope: __shared__ memory belongs to a block; declare it inside the kernel
#endif
#ifdef MANAGED
__managed__ int total;
// MANAGED: bad-input.cu:[[@LINE-1]]:1: error: __managed__ variables are not supported: allocate the memory with cudaMallocManaged, or use a __device__ variable with cudaMemcpyToSymbol
#endif

int main() {
  int *p;
#ifdef UNSUPPORTED
  cudaStreamAttachMemAsync(0, p);
  // API: bad-input.cu:[[@LINE-1]]:3: error: cudaStreamAttachMemAsync is not supported by Cleave's runtime (it implements a subset of the CUDA runtime API: see docs/runtime-api.md)
  cudaDeviceSetLimit(cudaLimitStackSize, 4096);
  // API: bad-input.cu:[[@LINE-1]]:3: error: cudaDeviceSetLimit is not supported by Cleave's runtime
  auto *fn = &cudaGraphLaunch;
  // API: bad-input.cu:[[@LINE-1]]:15: error: cudaGraphLaunch is not supported by Cleave's runtime
#endif
#ifdef SYNTAX
  k<<<1, 1>>>(p
  // SYNTAX: bad-input.cu:[[@LINE+1]]:1: error: expected ')'
}
#endif
#ifdef DEVICE_LAMBDA
  auto twice = [] __device__(int i) { return 2 * i; };
  // LAMBDA: bad-input.cu:[[@LINE-1]]:16: error: __device__ lambdas are not supported by Cleave's host rewriter
#endif
#ifdef DRIVER_API
  cuInit(0);
  // DRIVER: bad-input.cu:[[@LINE-1]]:3: error: cuInit is part of the CUDA driver API, which Cleave's runtime does not provide; use the CUDA runtime API
#endif
  cudaMalloc(&p, 64);
  k<<<1, 1>>>(p);
  return 0;
}
