// A CUDA file: its kernels and launches stay as they are, the marked host
// nest becomes a call, and the result builds and runs on the CPU.
// REQUIRES: cleave-rt-api
// RUN: %strip_comments %s %t/cuda-input.cu
// RUN: %cleave tile %t/cuda-input.cu -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t/out.cu
// RUN: %cleave compile %t/out.cu -o %t/prog
// RUN: env CLEAVE_DEVICES=cpu %t/prog | FileCheck %s --check-prefix=OUT

#include <cstdio>

__global__ void fill(int *D, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n)
    D[k] = k % 7;
}

int main() {
  const int n = 45, m = 70;
  int *D;
  cudaMallocHost(&D, n * m * sizeof(int));
  int *dD;
  cudaMalloc(&dD, n * m * sizeof(int));
  fill<<<(n * m + 127) / 128, 128>>>(dD, n * m);
  cudaMemcpy(D, dD, n * m * sizeof(int), cudaMemcpyDeviceToHost);
  int R[n * m];
  for (int k = 0; k < n * m; ++k)
    R[k] = D[k];
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      R[i * m + j] = (R[(i - 1) * m + j] + R[i * m + j - 1] + R[i * m + j]) % 1000;
#pragma cleave tile tile(8, 16)
  for (int i = 1; i < n; ++i)
    for (int j = 1; j < m; ++j)
      D[i * m + j] = (D[(i - 1) * m + j] + D[i * m + j - 1] + D[i * m + j]) % 1000;
  int wrong = 0;
  for (int k = 0; k < n * m; ++k)
    wrong += D[k] != R[k];
  printf("%d of %d cells wrong, last %d\n", wrong, n * m, D[n * m - 1]);
  cudaFree(dD);
  cudaFreeHost(D);
}
// REMARK: cuda-input.cu:[[@LINE-11]]:1: remark: cleave tile: nest tiled
// CHECK: __global__ void fill(int *D, int n) {
// CHECK: __global__ void __cleave_tile0_kernel(long long __cleave_diag, int n, int m, int *D) {
// CHECK: fill<<<(n * m + 127) / 128, 128>>>(dD, n * m);
// CHECK: __cleave_tile0(n, m, D);
// OUT: 0 of 3150 cells wrong, last {{[1-9][0-9]*}}
