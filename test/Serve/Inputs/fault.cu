// A kernel that writes far past the end of its buffer (an address it
// computes, which no launch check sees): on a CPU device the guard regions
// catch it and the launch fails with cudaErrorIllegalAddress, sticky for
// this program. With a second argument "wait" it first waits for a line on
// stdin.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void stray(int *P, int Far) { P[threadIdx.x + Far] = 1; }

int main(int Argc, char **Argv) {
  int *P;
  cudaMalloc(&P, 64 * sizeof(int));
  stray<<<1, 64>>>(P, 1 << 24);
  printf("fault sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  printf("fault again: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
