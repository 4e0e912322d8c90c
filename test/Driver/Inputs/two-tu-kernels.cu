// Two translation units (with two-tu-main.cu): this file defines the
// kernels; the other launches them through declarations. Both instantiate
// the same kernel template, so both device objects hold its CPU variant.
#include "two-tu.h"

// The same template as in two-tu-main.cu (one definition in C++ terms).
template <int K> __global__ void times(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= K;
}

template <int K> void launchTimes(int *x, int n) {
  times<K><<<(n + 63) / 64, 64>>>(x, n);
}

__global__ void add_one(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = bump(x[i]);
}

void launchTwice(int *x, int n) { launchTimes<2>(x, n); }
