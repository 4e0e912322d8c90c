// 1-D convolution with a filter radius chosen at run time: each block loads
// its tile plus a halo of that radius into dynamic shared memory
// (extern __shared__, size given at the launch), then convolves from it.
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
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s (%s:%d)\n", cudaGetErrorString(e), __FILE__,         \
              __LINE__);                                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void convolve(const float *in, const float *filter, float *out,
                         int n, int radius) {
  extern __shared__ float tile[]; // blockDim.x + 2 * radius
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int width = blockDim.x + 2 * radius;
  for (int t = threadIdx.x; t < width; t += blockDim.x) {
    int g = blockIdx.x * blockDim.x + t - radius;
    tile[t] = g >= 0 && g < n ? in[g] : 0.0f;
  }
  __syncthreads();
  if (i >= n)
    return;
  float acc = 0.0f;
  for (int k = 0; k <= 2 * radius; ++k)
    acc += filter[k] * tile[threadIdx.x + k];
  out[i] = acc;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 400000 * scale + 31;
  int radii[] = {2, 7, 16};
  std::vector<float> x(n), y(n);
  srand(10);
  for (int i = 0; i < n; ++i)
    x[i] = rand() / (float)RAND_MAX;
  float *dx, *dy, *df;
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&df, 33 * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  float total = 0;
  for (int r : radii) {
    std::vector<float> f(2 * r + 1);
    float norm = 0;
    for (int k = 0; k <= 2 * r; ++k)
      norm += f[k] = expf(-(k - r) * (k - r) / (2.0f * r));
    for (float &w : f)
      w /= norm;
    CUDA_CHECK(cudaMemcpy(df, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
    int threads = 128;
    size_t smem = (threads + 2 * r) * sizeof(float);
    cudaEventRecord(s);
    convolve<<<(n + threads - 1) / threads, threads, smem>>>(dx, df, dy, n, r);
    CUDA_CHECK(cudaGetLastError());
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    total += ms;
    CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
      float acc = 0;
      for (int k = 0; k <= 2 * r; ++k) {
        int g = i + k - r;
        acc += f[k] * (g >= 0 && g < n ? x[g] : 0.0f);
      }
      if (fabsf(acc - y[i]) > 1e-5f) {
        printf("FAIL: radius %d, y[%d] = %g, expected %g\n", r, i, y[i], acc);
        return 1;
      }
    }
  }
  printf("time_ms: %.3f\n", total);
  printf("PASS\n");
  return 0;
}
