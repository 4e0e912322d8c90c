// Histogram of 10-bit sensor readings (1024 bins): each block counts into a
// shared-memory histogram with shared atomics over a grid-stride loop, then
// adds its counts to the global bins with atomicAdd. The grid is sized from
// the number of multiprocessors, as users do. Exact check.
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
#include <cstring>

#define BINS 1024

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t status = call;                                                 \
    if (status != cudaSuccess) {                                               \
      fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(status));   \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

__global__ void histogram(const unsigned short *samples, size_t n,
                          unsigned int *bins) {
  __shared__ unsigned int local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    local[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    atomicAdd(&local[samples[i] & (BINS - 1)], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (local[b])
      atomicAdd(&bins[b], local[b]);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  size_t n = (size_t)1000003 * scale;
  unsigned short *h = (unsigned short *)malloc(n * sizeof(unsigned short));
  unsigned int ref[BINS], got[BINS];
  memset(ref, 0, sizeof ref);
  srand(11);
  for (size_t i = 0; i < n; ++i) {
    // A bell-ish shape: the sum of two uniform 9-bit values.
    h[i] = (unsigned short)((rand() & 511) + (rand() & 511));
    ref[h[i] & (BINS - 1)]++;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  int blocks = 4 * prop.multiProcessorCount;

  unsigned short *dSamples;
  unsigned int *dBins;
  CUDA_CHECK(cudaMalloc(&dSamples, n * sizeof(unsigned short)));
  CUDA_CHECK(cudaMalloc(&dBins, BINS * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemcpy(dSamples, h, n * sizeof(unsigned short),
                        cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  CUDA_CHECK(cudaMemset(dBins, 0, BINS * sizeof(unsigned int)));
  histogram<<<blocks, 256>>>(dSamples, n, dBins);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(got, dBins, sizeof got, cudaMemcpyDeviceToHost));
  printf("time_ms: %.3f\n", ms);
  for (int b = 0; b < BINS; ++b)
    if (got[b] != ref[b]) {
      printf("FAIL: bin %d has %u, expected %u\n", b, got[b], ref[b]);
      return EXIT_FAILURE;
    }
  free(h);
  cudaFree(dSamples);
  cudaFree(dBins);
  printf("PASS (%zu samples, %d blocks)\n", n, blocks);
  return 0;
}
