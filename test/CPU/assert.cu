// Device assert in CPU variants: an assertion that holds prints nothing; one
// that fails in one thread prints CUDA's message (file, line, function,
// block and thread) on stderr, the launch fails with cudaErrorAssert, which
// stays pending for every later call as on a GPU, and the process goes on.
// REQUIRES: cleave-rt-api
// RUN: rm -rf %t && mkdir -p %t
// RUN: %cleave compile %s -o %t/assert
// RUN: env CLEAVE_DEVICES=cpu %t/assert > %t/out.txt 2> %t/err.txt
// RUN: FileCheck %s < %t/out.txt
// RUN: FileCheck %s --check-prefix=ERR < %t/err.txt
// RUN: grep -c 'Assertion `' %t/err.txt | FileCheck %s --check-prefix=ONCE
// Split over three CPU devices: the same, and no other device runs the
// failed blocks again.
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t/assert \
// RUN:   > %t/split.txt 2> %t/split.err
// RUN: FileCheck %s < %t/split.txt
// RUN: FileCheck %s --check-prefix=ERR < %t/split.err
// RUN: grep -c 'Assertion `' %t/split.err | FileCheck %s --check-prefix=ONCE

#include <cassert>
#include <cstdio>

__global__ void holds(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < n);
  p[i] = i;
}

__global__ void fails(int *p) {
  int b = blockIdx.y * gridDim.x + blockIdx.x;
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  p[b * blockDim.x * blockDim.y + t] = 1;
  assert(!(blockIdx.x == 2 && blockIdx.y == 1 && threadIdx.x == 5 && threadIdx.y == 1));
}
// ERR-NOT: Assertion `i < n` failed
// ERR: {{.*}}assert.cu:[[@LINE-3]]: void fails(int *): block: [2,1,0], thread: [5,1,0] Assertion `!(blockIdx.x == 2 && blockIdx.y == 1 && threadIdx.x == 5 && threadIdx.y == 1)` failed.
// ONCE: {{^}}1{{$}}

static const char *name(cudaError_t E) { return cudaGetErrorName(E); }

int main() {
  int *P;
  cudaMalloc(&P, 256 * sizeof(int));
  holds<<<4, 64>>>(P, 256);
  printf("holds: %s\n", name(cudaDeviceSynchronize()));
  fails<<<dim3(4, 3), dim3(8, 2)>>>(P);
  printf("fails: %s\n", name(cudaDeviceSynchronize()));
  printf("again: %s\n", name(cudaDeviceSynchronize()));
  int H[4];
  printf("copy: %s\n", name(cudaMemcpy(H, P, sizeof H, cudaMemcpyDeviceToHost)));
  holds<<<4, 64>>>(P, 256);
  printf("launch: %s\n", name(cudaGetLastError()));
  printf("%s\n", cudaGetErrorString(cudaErrorAssert));
  printf("survived\n");
  return 0;
}
// CHECK: holds: cudaSuccess
// CHECK-NEXT: fails: cudaErrorAssert
// CHECK-NEXT: again: cudaErrorAssert
// CHECK-NEXT: copy: cudaErrorAssert
// CHECK-NEXT: launch: cudaErrorAssert
// CHECK-NEXT: device-side assert triggered
// CHECK-NEXT: survived
