// A kernel that writes past the end of its buffer (an address it computes,
// which no launch check sees) into the guard region that follows it: 256 KiB
// past the end, well inside the 1 MiB guard, so the address is never another
// allocation's (one far away could be, in a server holding other clients'
// memory). On a CPU device the launch fails with cudaErrorIllegalAddress,
// sticky for this program.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void stray(int *P, int Far) { P[threadIdx.x + Far] = 1; }

int main(int Argc, char **Argv) {
  int *P;
  cudaMalloc(&P, 64 * sizeof(int));
  stray<<<1, 64>>>(P, 1 << 16);
  printf("fault sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  printf("fault again: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
