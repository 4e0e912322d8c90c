// LU factorization without pivoting of a diagonally dominant matrix, one
// launch per elimination step: step k updates the rows below the pivot, one
// block per row, so the grid shrinks by one block per step (n - 1 launches,
// the last with one block). The factors are copied back once and compared
// with the same elimination done on the CPU.
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

#define CHECK(x)                                                               \
  if ((x) != cudaSuccess) {                                                    \
    printf("error: %s (%s line %d)\n", cudaGetErrorString(x), __FILE__,        \
           __LINE__);                                                          \
    return 1;                                                                  \
  }

__global__ void eliminate(float *a, int n, int k) {
  int row = k + 1 + blockIdx.x;
  float factor = a[row * n + k] / a[k * n + k];
  __syncthreads(); // every thread has read a[row][k] before it is replaced
  for (int j = k + 1 + threadIdx.x; j < n; j += blockDim.x)
    a[row * n + j] -= factor * a[k * n + j];
  if (threadIdx.x == 0)
    a[row * n + k] = factor; // L below the diagonal
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 96 + 32 * (scale - 1); // O(n^3) reference: grow n slowly
  std::vector<float> a(n * n), lu(n * n);
  srand(3);
  for (int i = 0; i < n; ++i) {
    float rowSum = 0;
    for (int j = 0; j < n; ++j) {
      a[i * n + j] = rand() / (float)RAND_MAX - 0.5f;
      rowSum += fabsf(a[i * n + j]);
    }
    a[i * n + i] = rowSum + 1.0f;
  }
  float *d;
  CHECK(cudaMalloc(&d, n * n * sizeof(float)));
  CHECK(cudaMemcpy(d, a.data(), n * n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, 0);
  for (int k = 0; k < n - 1; ++k)
    eliminate<<<n - k - 1, 64>>>(d, n, k);
  CHECK(cudaGetLastError());
  cudaEventRecord(stop, 0);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  CHECK(cudaMemcpy(lu.data(), d, n * n * sizeof(float), cudaMemcpyDeviceToHost));
  printf("time_ms: %.3f\n", ms);

  std::vector<float> ref(a);
  for (int k = 0; k < n - 1; ++k)
    for (int r = k + 1; r < n; ++r) {
      float f = ref[r * n + k] / ref[k * n + k];
      for (int j = k + 1; j < n; ++j)
        ref[r * n + j] -= f * ref[k * n + j];
      ref[r * n + k] = f;
    }
  double maxErr = 0;
  for (int i = 0; i < n * n; ++i) {
    double e = fabs(lu[i] - ref[i]) / (1.0 + fabs(ref[i]));
    if (e > maxErr || e != e)
      maxErr = e;
  }
  cudaFree(d);
  if (!(maxErr < 1e-3)) {
    printf("FAIL: max relative error %g\n", maxErr);
    return 1;
  }
  printf("PASS (n=%d, %d launches, max error %.2g)\n", n, n - 1, maxErr);
  return 0;
}
