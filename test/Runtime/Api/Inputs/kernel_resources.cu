// cudaFuncGetAttributes without a GPU: the registers and stack frame ptxas
// gave each kernel, read from the cubin in the program's bundle.
#include <cstdio>

__global__ void light(int *a) { a[threadIdx.x] = 1; }

// A local array too large for registers, indexed by data: a stack frame.
__global__ void framed(float *a, const int *idx) {
  float loc[256];
  for (int i = 0; i < 256; ++i)
    loc[i] = a[i * blockDim.x + threadIdx.x];
  a[threadIdx.x] = loc[idx[threadIdx.x] & 255];
}

static void show(const char *name, const void *k) {
  cudaFuncAttributes a;
  cudaError_t e = cudaFuncGetAttributes(&a, k);
  int blocks = -1;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, 1024, 0);
  std::printf("%s: %s, %d registers, %zu bytes local, %d blocks of 1024\n",
              name, cudaGetErrorName(e), a.numRegs, a.localSizeBytes, blocks);
}

int main() {
  show("light", (const void *)light);
  show("framed", (const void *)framed);
  return 0;
}
