// A launch inside a lambda, and launches whose tokens are macro arguments,
// are rewritten in place; a launch written inside a macro's definition
// cannot be, and is an error at its use.
// RUN: %strip_comments %s %t/lambda-and-macros.cu
// RUN: %cleave compile --emit=host-source %t/lambda-and-macros.cu -o - | FileCheck %s
// RUN: rm -f %t.cpp
// RUN: not %cleave compile --emit=host-source -DBAD_MACRO %s -o %t.cpp 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.cpp
#include <cuda_runtime.h>
#define CHECK_CUDA(...) do { __VA_ARGS__; (void)cudaGetLastError(); } while (0)
#define BLOCK 128

__global__ void k(int *p) { p[threadIdx.x] = 1; }

void run(int *p, int n) {
  auto go = [=](cudaStream_t s) { k<<<n / BLOCK, BLOCK, 0, s>>>(p); };
  // CHECK: auto go = [=](cudaStream_t s) { (cleavePushCallConfiguration(n / BLOCK, BLOCK, 0, s) ? (void)0 : k(p)); };
  go(0);
  CHECK_CUDA(k<<<1, BLOCK>>>(p));
  // CHECK: CHECK_CUDA((cleavePushCallConfiguration(1, BLOCK) ? (void)0 : k(p)));
#ifdef BAD_MACRO
#define LAUNCH(ptr) k<<<1, 1>>>(ptr)
  LAUNCH(p);
#endif
}
// BAD: lambda-and-macros.cu:[[@LINE-3]]:3: error: kernel launch produced by the expansion of macro 'LAUNCH' cannot be rewritten by Cleave: write the <<<...>>> launch in the source, outside the macro
