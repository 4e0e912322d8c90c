// __device__ globals: a scale factor and a threshold set from the host
// (cudaMemcpyToSymbol), a match counter incremented with atomicAdd and read
// back with cudaMemcpyFromSymbol, and a __device__ array of per-bucket
// maxima updated with atomicMax.
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

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    if ((x) != cudaSuccess) {                                                  \
      printf("CUDA failure at line %d: %s\n", __LINE__,                        \
             cudaGetErrorString(cudaGetLastError()));                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__device__ int gScale;
__device__ int gThreshold;
__device__ unsigned int gMatches;
__device__ int gBucketMax[16];

__global__ void scanValues(const int *v, int *scaled, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int s = v[i] * gScale;
  scaled[i] = s;
  if (s > gThreshold)
    atomicAdd(&gMatches, 1u);
  atomicMax(&gBucketMax[v[i] & 15], s);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 120000 * scale;
  std::vector<int> v(n), scaled(n);
  srand(1);
  for (int i = 0; i < n; ++i)
    v[i] = rand() % 2001 - 1000;
  int factor = 3, threshold = 1500;
  unsigned int zero = 0;
  int lows[16];
  for (int b = 0; b < 16; ++b)
    lows[b] = -(1 << 30);
  CHECK_CUDA(cudaMemcpyToSymbol(gScale, &factor, sizeof(int)));
  CHECK_CUDA(cudaMemcpyToSymbol(gThreshold, &threshold, sizeof(int)));
  CHECK_CUDA(cudaMemcpyToSymbol(gMatches, &zero, sizeof zero));
  CHECK_CUDA(cudaMemcpyToSymbol(gBucketMax, lows, sizeof lows));
  int *dv, *ds;
  CHECK_CUDA(cudaMalloc((void **)&dv, n * sizeof(int)));
  CHECK_CUDA(cudaMalloc((void **)&ds, n * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(dv, v.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  scanValues<<<(n + 511) / 512, 512>>>(dv, ds, n);
  CHECK_CUDA(cudaGetLastError());
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  printf("time_ms: %.3f\n", ms);
  unsigned int matches;
  int maxima[16];
  CHECK_CUDA(cudaMemcpyFromSymbol(&matches, gMatches, sizeof matches));
  CHECK_CUDA(cudaMemcpyFromSymbol(maxima, gBucketMax, sizeof maxima));
  CHECK_CUDA(cudaMemcpy(scaled.data(), ds, n * sizeof(int), cudaMemcpyDeviceToHost));

  unsigned int refMatches = 0;
  int refMax[16];
  for (int b = 0; b < 16; ++b)
    refMax[b] = -(1 << 30);
  for (int i = 0; i < n; ++i) {
    int s = v[i] * factor;
    if (scaled[i] != s) {
      printf("FAIL: scaled[%d] = %d, expected %d\n", i, scaled[i], s);
      return 1;
    }
    refMatches += s > threshold;
    if (s > refMax[v[i] & 15])
      refMax[v[i] & 15] = s;
  }
  if (matches != refMatches) {
    printf("FAIL: %u matches, expected %u\n", matches, refMatches);
    return 1;
  }
  for (int b = 0; b < 16; ++b)
    if (maxima[b] != refMax[b]) {
      printf("FAIL: bucket %d max %d, expected %d\n", b, maxima[b], refMax[b]);
      return 1;
    }
  printf("PASS (%u matches)\n", matches);
  return 0;
}
