// Launches whose shared memory no GPU would give them: more static shared
// memory than CUDA allows (a kernel ptxas refuses, built here with
// --no-ptxas), and more dynamic shared memory than the kernel's limit.
#include <cstdio>

__global__ void bigStatic(float *out) {
  __shared__ float s[13000]; // 52000 bytes: over CUDA's 48 KiB
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

__global__ void dynamic(float *out) {
  extern __shared__ float s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

int main() {
  float *d;
  cudaMalloc(&d, 1024);
  bigStatic<<<1, 128>>>(d);
  printf("static 52000: %s\n", cudaGetErrorName(cudaGetLastError()));
  dynamic<<<1, 128, 64 * 1024>>>(d);
  printf("dynamic 65536: %s\n", cudaGetErrorName(cudaGetLastError()));
  printf("opt in to 65536: %s\n",
         cudaGetErrorName(cudaFuncSetAttribute(
             dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024)));
  dynamic<<<1, 128, 64 * 1024>>>(d);
  printf("dynamic 65536: %s\n", cudaGetErrorName(cudaGetLastError()));
  printf("opt in to 300000: %s\n",
         cudaGetErrorName(cudaFuncSetAttribute(
             dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 300000)));
  printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  return 0;
}
