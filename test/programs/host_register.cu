// Start-up and memory calls that programs carry from older CUDA habits:
// cudaSetDeviceFlags before the first use of the device,
// cudaDeviceSetCacheConfig, a malloc'ed host array page-locked in place with
// cudaHostRegister (then async copies from it) and cudaHostUnregister, and
// the profiler range markers cudaProfilerStart/Stop around the timed part.
// The work: an exponential moving average per channel over time steps.
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
#include <cuda_profiler_api.h>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// samples: steps x channels, row-major by time step.
__global__ void movingAverage(const float *samples, float *avg, int channels,
                              int steps, float alpha) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= channels)
    return;
  float a = samples[c];
  for (int t = 1; t < steps; ++t)
    a = alpha * samples[(size_t)t * channels + c] + (1.0f - alpha) * a;
  avg[c] = a;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int channels = 4096 * scale, steps = 64;
  size_t n = (size_t)channels * steps;
  CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
  CUDA_CHECK(cudaDeviceSetCacheConfig(cudaFuncCachePreferL1));
  float *samples = (float *)malloc(n * sizeof(float));
  float *avg = (float *)malloc(channels * sizeof(float));
  srand(83);
  for (size_t i = 0; i < n; ++i)
    samples[i] = rand() / (float)RAND_MAX;
  CUDA_CHECK(cudaHostRegister(samples, n * sizeof(float), cudaHostRegisterDefault));
  CUDA_CHECK(cudaHostRegister(avg, channels * sizeof(float), cudaHostRegisterDefault));
  float *dSamples, *dAvg;
  CUDA_CHECK(cudaMalloc(&dSamples, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dAvg, channels * sizeof(float)));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cudaEvent_t s, e;
  CUDA_CHECK(cudaEventCreate(&s));
  CUDA_CHECK(cudaEventCreate(&e));
  CUDA_CHECK(cudaProfilerStart());
  CUDA_CHECK(cudaEventRecord(s, stream));
  CUDA_CHECK(cudaMemcpyAsync(dSamples, samples, n * sizeof(float),
                             cudaMemcpyHostToDevice, stream));
  movingAverage<<<(channels + 127) / 128, 128, 0, stream>>>(dSamples, dAvg,
                                                           channels, steps, 0.1f);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpyAsync(avg, dAvg, channels * sizeof(float),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaEventRecord(e, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaProfilerStop());
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, s, e));
  printf("time_ms: %.3f\n", ms);
  for (int c = 0; c < channels; ++c) {
    float a = samples[c];
    for (int t = 1; t < steps; ++t)
      a = 0.1f * samples[(size_t)t * channels + c] + (1.0f - 0.1f) * a;
    if (fabsf(avg[c] - a) > 1e-5f) {
      printf("FAIL: channel %d: %g, expected %g\n", c, avg[c], a);
      return 1;
    }
  }
  CUDA_CHECK(cudaHostUnregister(samples));
  CUDA_CHECK(cudaHostUnregister(avg));
  free(samples);
  free(avg);
  printf("PASS\n");
  return 0;
}
