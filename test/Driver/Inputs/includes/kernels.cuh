// Kernels, a __device__ function and device variables in a header.
#pragma once
#include <cuda_runtime.h>

__constant__ int offsetBy;
__device__ int launches;

__device__ int twice(int v) { return 2 * v; }

__global__ void scaleAdd(int *out, const int *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = twice(in[i]) + offsetBy;
  if (i == 0)
    atomicAdd(&launches, 1);
}
