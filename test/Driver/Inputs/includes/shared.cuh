// Included by two .cu files of one program: an inline kernel template, a
// static kernel (one per file, as in nvcc), and an inline host function
// that launches the template.
#pragma once
#include <cuda_runtime.h>

template <typename T>
__global__ void addTo(T *x, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += v;
}

static __global__ void scaleBy(int *x, int k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= k;
}

inline void addOne(int *x, int n) { addTo<<<(n + 63) / 64, 64>>>(x, 1, n); }

void stepA(int *x, int n);

#ifdef WITH_VARIABLE
// One variable per .cu file for nvcc: refused.
__device__ int perFile;
#endif
