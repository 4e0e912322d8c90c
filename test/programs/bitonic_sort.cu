// Bitonic sort of unsigned keys with one launch per merge step: for 2^14
// keys, 105 launches over data that stays on the device. Exact check
// against std::sort.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void bitonicStep(unsigned *keys, int j, int k) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned partner = i ^ j;
  if (partner > i) {
    bool ascending = (i & k) == 0;
    unsigned a = keys[i], b = keys[partner];
    if ((a > b) == ascending) {
      keys[i] = b;
      keys[partner] = a;
    }
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 1 << 14;
  while (n < (1 << 14) * scale)
    n <<= 1;
  std::vector<unsigned> keys(n), sorted(n);
  srand(17);
  for (int i = 0; i < n; ++i)
    keys[i] = ((unsigned)rand() << 8) ^ (unsigned)rand();
  unsigned *d;
  CUDA_CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(d, keys.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
  int threads = 256, blocks = n / threads, launches = 0;
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  for (int k = 2; k <= n; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      bitonicStep<<<blocks, threads>>>(d, j, k);
      ++launches;
    }
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(sorted.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  std::sort(keys.begin(), keys.end());
  for (int i = 0; i < n; ++i)
    if (sorted[i] != keys[i]) {
      printf("FAIL at %d: %u, expected %u\n", i, sorted[i], keys[i]);
      return 1;
    }
  printf("PASS (%d keys, %d launches)\n", n, launches);
  return 0;
}
