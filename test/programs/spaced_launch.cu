// The launch syntax written with spaces inside the chevrons,
// `k << < grid, block >> > (args)`, which nvcc accepts (code formatters
// produce it). The work: a running maximum over windows of 8 values.
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

__global__ void windowMax(const int *in, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 8 <= n) {
    int m = in[i];
    for (int k = 1; k < 8; ++k)
      m = in[i + k] > m ? in[i + k] : m;
    out[i] = m;
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 300000 * scale + 8;
  int m = n - 7;
  std::vector<int> h(n), got(m);
  srand(61);
  for (int i = 0; i < n; ++i)
    h[i] = rand();
  int *dIn, *dOut;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dOut, m * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  dim3 block(256), grid((m + 255) / 256);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  windowMax << < grid, block >> > (dIn, dOut, n);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(got.data(), dOut, m * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < m; ++i) {
    int want = h[i];
    for (int k = 1; k < 8; ++k)
      want = h[i + k] > want ? h[i + k] : want;
    if (got[i] != want) {
      printf("FAIL at %d: %d, expected %d\n", i, got[i], want);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
