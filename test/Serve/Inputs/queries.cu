// Kernel queries of a client: attributes, occupancy, a raised dynamic
// shared memory limit, device flags and cache preferences. Its output
// through cleave-serve must equal its output in its own runtime.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void tiled(float *P) {
  __shared__ float Tile[256];
  extern __shared__ float Dyn[];
  Tile[threadIdx.x] = P[threadIdx.x];
  Dyn[threadIdx.x] = Tile[threadIdx.x] * 2;
  P[threadIdx.x] = Dyn[threadIdx.x];
}

int main() {
  cudaFuncAttributes A;
  cudaError_t E = cudaFuncGetAttributes(&A, tiled);
  printf("attributes: %s shared %zu threads %d dynamic %d\n",
         cudaGetErrorName(E), A.sharedSizeBytes, A.maxThreadsPerBlock,
         A.maxDynamicSharedSizeBytes);
  int Blocks = 0;
  E = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&Blocks, tiled, 256,
                                                    32768);
  printf("occupancy: %s %d\n", cudaGetErrorName(E), Blocks);
  float *P;
  cudaMalloc(&P, 256 * sizeof(float));
  cudaMemset(P, 0, 256 * sizeof(float));
  tiled<<<1, 256, 65536>>>(P);
  printf("64 KiB unraised: %s\n", cudaGetErrorName(cudaGetLastError()));
  E = cudaFuncSetAttribute(tiled, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           65536);
  printf("raise: %s\n", cudaGetErrorName(E));
  tiled<<<1, 256, 65536>>>(P);
  printf("64 KiB raised: %s %s\n", cudaGetErrorName(cudaGetLastError()),
         cudaGetErrorName(cudaDeviceSynchronize()));
  printf("cache config: %s\n",
         cudaGetErrorName(cudaFuncSetCacheConfig(tiled, cudaFuncCachePreferL1)));
  unsigned Flags = 0;
  cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
  cudaGetDeviceFlags(&Flags);
  printf("flags: %u\n", Flags);
  return 0;
}
