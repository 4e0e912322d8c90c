#pragma once
#include "plain.h"

__device__ float half(float v) { return v / 2; }

template <typename T>
__global__ void halve(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = half(x[i]);
}

inline void halveAll(float *x, int n) {
  halve<<<(n + kBlock - 1) / kBlock, kBlock>>>(x, n);
}
