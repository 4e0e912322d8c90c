// Host code calling min and max unqualified, on ints and on floats, as nvcc
// allows (CUDA's headers declare host-device overloads): the launch size is
// clamped with min, the CPU reference of a clamp kernel uses min/max too.
//
// XFAIL: *
// issue 25: host calls of min/max (CUDA's host-device overloads)
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

__global__ void clampAll(float *v, int n, float lo, float hi, int *ints,
                         int ilo, int ihi) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x) {
    v[i] = min(max(v[i], lo), hi);
    ints[i] = min(max(ints[i], ilo), ihi);
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 180000 * scale + 19;
  std::vector<float> v(n), got(n);
  std::vector<int> iv(n), igot(n);
  srand(41);
  for (int i = 0; i < n; ++i) {
    v[i] = 10.0f * rand() / (float)RAND_MAX - 5.0f;
    iv[i] = rand() % 2001 - 1000;
  }
  float *dv;
  int *di;
  CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&di, n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dv, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(di, iv.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  int threads = 256;
  int blocks = min((n + threads - 1) / threads, 1024); // host min on ints
  float lo = max(-2.5f, -3.0f), hi = min(2.5f, 3.0f);  // host max/min on floats
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  clampAll<<<blocks, threads>>>(dv, n, lo, hi, di, -300, 300);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(got.data(), dv, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(igot.data(), di, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    if (got[i] != min(max(v[i], lo), hi) || igot[i] != min(max(iv[i], -300), 300)) {
      printf("FAIL at %d\n", i);
      return 1;
    }
  printf("PASS\n");
  return 0;
}
