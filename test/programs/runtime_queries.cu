// Sizing work from the runtime's answers: cudaMemGetInfo bounds the batch
// size, cudaFuncGetAttributes and cudaOccupancyMaxActiveBlocksPerMultiprocessor
// size a grid-stride launch to fill the device, cudaFuncSetCacheConfig asks
// for more L1. The work: counting primes in [2, N) by trial division, in
// batches.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__host__ __device__ inline bool isPrime(unsigned v) {
  if (v < 2)
    return false;
  for (unsigned d = 2; d * d <= v; ++d)
    if (v % d == 0)
      return false;
  return true;
}

__global__ void markPrimes(unsigned first, int count, unsigned char *flags) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += gridDim.x * blockDim.x)
    flags[i] = isPrime(first + i);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  unsigned limit = 200000u + 100000u * (scale - 1);
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (freeBytes == 0 || freeBytes > totalBytes) {
    printf("FAIL: cudaMemGetInfo says %zu free of %zu\n", freeBytes, totalBytes);
    return 1;
  }
  int batch = 65536;
  if ((size_t)batch > freeBytes / 4)
    batch = (int)(freeBytes / 4);

  CUDA_CHECK(cudaFuncSetCacheConfig(markPrimes, cudaFuncCachePreferL1));
  cudaFuncAttributes attr;
  CUDA_CHECK(cudaFuncGetAttributes(&attr, markPrimes));
  int threads = attr.maxThreadsPerBlock < 256 ? attr.maxThreadsPerBlock : 256;
  int perSm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, markPrimes,
                                                           threads, 0));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int blocks = perSm * prop.multiProcessorCount;
  if (blocks < 1) {
    printf("FAIL: occupancy %d blocks per SM\n", perSm);
    return 1;
  }
  printf("%d threads x %d blocks (%d per SM), batches of %d\n", threads, blocks,
         perSm, batch);

  unsigned char *dFlags;
  CUDA_CHECK(cudaMalloc(&dFlags, batch));
  std::vector<unsigned char> flags(batch);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  float total = 0;
  long long count = 0;
  for (unsigned first = 0; first < limit; first += batch) {
    int n = (int)(limit - first < (unsigned)batch ? limit - first : batch);
    cudaEventRecord(s);
    markPrimes<<<blocks, threads>>>(first, n, dFlags);
    CUDA_CHECK(cudaGetLastError());
    cudaEventRecord(e);
    CUDA_CHECK(cudaMemcpy(flags.data(), dFlags, n, cudaMemcpyDeviceToHost));
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    total += ms;
    for (int i = 0; i < n; ++i) {
      if (flags[i] != isPrime(first + i)) {
        printf("FAIL: %u marked %d\n", first + i, flags[i]);
        return 1;
      }
      count += flags[i];
    }
  }
  printf("time_ms: %.3f\n", total);
  printf("PASS (%lld primes below %u)\n", count, limit);
  return 0;
}
