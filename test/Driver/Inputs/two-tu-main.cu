// See two-tu-kernels.cu.
#include <cstdio>
#include "two-tu.h"

template <int K> __global__ void times(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= K;
}

template <int K> void launchTimes(int *x, int n) {
  times<K><<<(n + 63) / 64, 64>>>(x, n);
}

int main() {
  const int n = 1000;
  int h[n];
  for (int i = 0; i < n; ++i)
    h[i] = i;
  int *d;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  add_one<<<(n + 127) / 128, 128>>>(d, n); // defined in the other file
  launchTwice(d, n);                       // times<2>, the other file's
  launchTimes<2>(d, n);                    // times<2>, this file's
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += h[i] != (i + 1) * 4;
  std::printf("%s: %d wrong, %s\n", bad ? "FAIL" : "PASS", bad,
              cudaGetErrorString(cudaGetLastError()));
  return bad != 0;
}
