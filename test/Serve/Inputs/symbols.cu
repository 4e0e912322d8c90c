// Symbol copies through cleave-serve: a copy of a __device__ array larger
// than the staging area is refused (the program's first call: the client
// must know the area's size before it stages anything), a smaller one
// works both ways, and a kernel reads and writes the variable.
#include <cstdio>
#include <cuda_runtime.h>

__device__ int Big[16384];
__device__ int Small[256];

__global__ void twice() { Small[threadIdx.x] *= 2; }

int main() {
  static int H[16384];
  printf("big: %s\n",
         cudaGetErrorName(cudaMemcpyToSymbol(Big, H, sizeof(H))));
  for (int I = 0; I < 256; ++I)
    H[I] = I;
  printf("small to: %s\n",
         cudaGetErrorName(cudaMemcpyToSymbol(Small, H, 256 * sizeof(int))));
  twice<<<1, 256>>>();
  int Back[256] = {0};
  cudaError_t E = cudaMemcpyFromSymbol(Back, Small, sizeof(Back));
  printf("small from: %s %d %d\n", cudaGetErrorName(E), Back[1], Back[255]);
  return 0;
}
