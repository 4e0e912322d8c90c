// A chain of 200 small SAXPY launches on vectors that stay on the device:
// y = a*x + y with a different a each step, copied back once at the end.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int n = 20000 * scale + 17;
  const int steps = 200;
  std::vector<float> x(n), y(n), ref(n);
  srand(7);
  for (int i = 0; i < n; ++i) {
    x[i] = rand() / (float)RAND_MAX - 0.5f;
    y[i] = rand() / (float)RAND_MAX;
  }
  ref = y;

  float *dx, *dy;
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  int threads = 128;
  int blocks = (n + threads - 1) / threads;
  for (int s = 0; s < steps; ++s) {
    float a = (s % 2 ? -0.01f : 0.011f) * (1 + s % 5);
    saxpy<<<blocks, threads>>>(n, a, dx, dy);
  }
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));

  for (int s = 0; s < steps; ++s) {
    float a = (s % 2 ? -0.01f : 0.011f) * (1 + s % 5);
    for (int i = 0; i < n; ++i)
      ref[i] = a * x[i] + ref[i];
  }
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(y[i] - ref[i]) > 1e-4f * (1 + std::fabs(ref[i])))
      ++bad;
  printf("time_ms: %.3f\n", ms);
  cudaFree(dx);
  cudaFree(dy);
  if (bad) {
    printf("FAIL: %d of %d elements wrong\n", bad, n);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
