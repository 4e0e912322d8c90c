// Standardizes a sample (z-scores): the kernels are in stats_kernels.cu,
// which this file #includes; the block sums come back to the host for the
// mean and standard deviation, then a second kernel applies them.
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

#include "stats_kernels.cu"

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 300000 * scale + 45;
  int blocks = (n + 255) / 256;
  std::vector<float> x(n), z(n);
  std::vector<double> sums(2 * blocks);
  srand(71);
  for (int i = 0; i < n; ++i)
    x[i] = 50.0f + 10.0f * (rand() / (float)RAND_MAX - 0.5f);
  float *dx, *dz;
  double *dSums;
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dz, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dSums, 2 * blocks * sizeof(double)));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  momentsPerBlock<<<blocks, 256>>>(dx, n, dSums);
  CUDA_CHECK(cudaMemcpy(sums.data(), dSums, 2 * blocks * sizeof(double),
                        cudaMemcpyDeviceToHost));
  double s1 = 0, s2 = 0;
  for (int b = 0; b < blocks; ++b) {
    s1 += sums[2 * b];
    s2 += sums[2 * b + 1];
  }
  double mean = s1 / n, var = s2 / n - mean * mean;
  float invStd = (float)(1.0 / sqrt(var));
  standardize<<<blocks, 256>>>(dx, dz, n, (float)mean, invStd);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(z.data(), dz, n * sizeof(float), cudaMemcpyDeviceToHost));
  double r1 = 0, r2 = 0;
  for (int i = 0; i < n; ++i) {
    r1 += x[i];
    r2 += (double)x[i] * x[i];
  }
  double rmean = r1 / n, rvar = r2 / n - rmean * rmean;
  if (fabs(mean - rmean) > 1e-9 * rmean || fabs(var - rvar) > 1e-6 * rvar) {
    printf("FAIL: mean %g var %g, expected %g %g\n", mean, var, rmean, rvar);
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    float want = (x[i] - (float)mean) * invStd;
    if (fabsf(z[i] - want) > 1e-5f) {
      printf("FAIL: z[%d] = %g, expected %g\n", i, z[i], want);
      return 1;
    }
  }
  printf("PASS (mean %.4f, sd %.4f)\n", mean, sqrt(var));
  return 0;
}
