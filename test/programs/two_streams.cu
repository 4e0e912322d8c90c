// Two streams and events: stream 1 normalizes a signal, stream 2 waits for
// that (cudaStreamWaitEvent) and computes its moving differences, while
// stream 1 goes on with an independent kernel; events time each stream.
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

#define CUDA_CHECK(expr)                                                       \
  do {                                                                         \
    cudaError_t rc = (expr);                                                   \
    if (rc != cudaSuccess) {                                                   \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorName(rc));                                           \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void normalize(const float *in, float *out, int n, float mean,
                          float inv) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = (in[i] - mean) * inv;
}

__global__ void differences(const float *x, float *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    d[i] = i == 0 ? 0.0f : x[i] - x[i - 1];
}

__global__ void squares(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * in[i];
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 200000 * scale + 3;
  std::vector<float> h(n);
  srand(9);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = 10.0f * sinf(i * 0.001f) + rand() / (float)RAND_MAX;
    sum += h[i];
  }
  float mean = (float)(sum / n), inv = 0.1f;
  size_t bytes = n * sizeof(float);
  float *dIn, *dNorm, *dDiff, *dSq;
  CUDA_CHECK(cudaMalloc(&dIn, bytes));
  CUDA_CHECK(cudaMalloc(&dNorm, bytes));
  CUDA_CHECK(cudaMalloc(&dDiff, bytes));
  CUDA_CHECK(cudaMalloc(&dSq, bytes));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), bytes, cudaMemcpyHostToDevice));

  cudaStream_t s1, s2;
  CUDA_CHECK(cudaStreamCreate(&s1));
  CUDA_CHECK(cudaStreamCreate(&s2));
  cudaEvent_t begin, normalized, end1, end2;
  CUDA_CHECK(cudaEventCreate(&begin));
  CUDA_CHECK(cudaEventCreateWithFlags(&normalized, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreate(&end1));
  CUDA_CHECK(cudaEventCreate(&end2));
  int blocks = (n + 255) / 256;
  CUDA_CHECK(cudaEventRecord(begin, s1));
  normalize<<<blocks, 256, 0, s1>>>(dIn, dNorm, n, mean, inv);
  CUDA_CHECK(cudaEventRecord(normalized, s1));
  squares<<<blocks, 256, 0, s1>>>(dIn, dSq, n);
  CUDA_CHECK(cudaEventRecord(end1, s1));
  CUDA_CHECK(cudaStreamWaitEvent(s2, normalized, 0));
  differences<<<blocks, 256, 0, s2>>>(dNorm, dDiff, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(end2, s2));
  CUDA_CHECK(cudaStreamSynchronize(s2));
  CUDA_CHECK(cudaStreamSynchronize(s1));
  float ms1, ms2;
  CUDA_CHECK(cudaEventElapsedTime(&ms1, begin, end1));
  CUDA_CHECK(cudaEventElapsedTime(&ms2, begin, end2));
  printf("time_ms: %.3f\n", ms1 > ms2 ? ms1 : ms2);

  std::vector<float> diff(n), sq(n);
  CUDA_CHECK(cudaMemcpy(diff.data(), dDiff, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(sq.data(), dSq, bytes, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float norm = (h[i] - mean) * inv;
    float prev = i ? (h[i - 1] - mean) * inv : norm;
    float d = norm - prev;
    if (fabsf(diff[i] - d) > 1e-5f || fabsf(sq[i] - h[i] * h[i]) > 1e-4f * (1 + h[i] * h[i]))
      ++bad;
  }
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
  if (bad) {
    printf("FAIL: %d wrong\n", bad);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
