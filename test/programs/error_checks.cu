// Error checking the way careful programs do it: a CUDA_CHECK macro on every
// call, cudaGetLastError and cudaDeviceSynchronize after every launch
// (KERNEL_CHECK), and a deliberately bad launch (more threads per block than
// any device allows) whose error must be reported by cudaGetLastError, and
// then be cleared, before the real work (a clipped ReLU and its gradient).
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: bad launch: cudaErrorInvalidConfiguration
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    const cudaError_t error = call;                                            \
    if (error != cudaSuccess) {                                                \
      fprintf(stderr, "Error: %s:%d, ", __FILE__, __LINE__);                   \
      fprintf(stderr, "code: %d, reason: %s\n", error,                         \
              cudaGetErrorString(error));                                      \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define KERNEL_CHECK()                                                         \
  do {                                                                         \
    CUDA_CHECK(cudaGetLastError());                                            \
    CUDA_CHECK(cudaDeviceSynchronize());                                       \
  } while (0)

__global__ void relu6(const float *x, float *y, float *grad, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = v < 0.f ? 0.f : (v > 6.f ? 6.f : v);
    grad[i] = (v > 0.f && v < 6.f) ? 1.f : 0.f;
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 250000 * scale + 7;
  std::vector<float> x(n), y(n), g(n);
  srand(8);
  for (int i = 0; i < n; ++i)
    x[i] = 16.0f * rand() / (float)RAND_MAX - 5.0f;
  float *dx, *dy, *dg;
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dg, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  relu6<<<1, 4096>>>(dx, dy, dg, n);
  cudaError_t bad = cudaGetLastError();
  printf("bad launch: %s\n", cudaGetErrorName(bad));
  if (bad == cudaSuccess) {
    printf("FAIL: a launch of 4096 threads per block reported no error\n");
    return 1;
  }
  CUDA_CHECK(cudaGetLastError()); // cleared by the previous call

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  relu6<<<(n + 255) / 256, 256>>>(dx, dy, dg, n);
  KERNEL_CHECK();
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(g.data(), dg, n * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    float wy = v < 0.f ? 0.f : (v > 6.f ? 6.f : v);
    float wg = (v > 0.f && v < 6.f) ? 1.f : 0.f;
    if (y[i] != wy || g[i] != wg) {
      printf("FAIL at %d\n", i);
      return 1;
    }
  }
  CUDA_CHECK(cudaFree(dx));
  CUDA_CHECK(cudaFree(dy));
  CUDA_CHECK(cudaFree(dg));
  printf("PASS\n");
  return 0;
}
