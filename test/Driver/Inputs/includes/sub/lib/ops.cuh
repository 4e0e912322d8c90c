// Found through -I; includes its neighbour relative to its own directory.
#pragma once
#include "detail.cuh"

__global__ void square(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = sq(x[i]);
}
