// Monte Carlo with cuRAND's device API (curand_kernel.h): a setup kernel
// gives each thread its own XORWOW state with curand_init(seed, id, 0, ...),
// kept in global memory between launches; one kernel estimates pi from
// curand_uniform points, another draws curand_normal values and reduces
// their sum and sum of squares in shared memory. Statistical checks: pi, the
// mean and the variance within several standard errors; and the states
// carry over (a second launch draws new numbers, not the same ones).
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
#include <curand_kernel.h>
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

#define THREADS 128

__global__ void setupStates(curandState *states, unsigned long long seed) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  curand_init(seed, id, 0, &states[id]);
}

__global__ void countInside(curandState *states, unsigned int *inside,
                            int samplesPerThread) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  curandState local = states[id];
  unsigned int count = 0;
  for (int s = 0; s < samplesPerThread; ++s) {
    float x = curand_uniform(&local);
    float y = curand_uniform(&local);
    if (x * x + y * y <= 1.0f)
      ++count;
  }
  states[id] = local;
  inside[id] = count;
}

__global__ void normalMoments(curandState *states, double *sums,
                              int samplesPerThread) {
  __shared__ double s1[THREADS], s2[THREADS];
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  curandState local = states[id];
  double a = 0, b = 0;
  for (int s = 0; s < samplesPerThread; ++s) {
    float z = curand_normal(&local);
    a += z;
    b += (double)z * z;
  }
  states[id] = local;
  s1[threadIdx.x] = a;
  s2[threadIdx.x] = b;
  __syncthreads();
  for (int stride = THREADS / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      s1[threadIdx.x] += s1[threadIdx.x + stride];
      s2[threadIdx.x] += s2[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    sums[2 * blockIdx.x] = s1[0];
    sums[2 * blockIdx.x + 1] = s2[0];
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int blocks = 32, threads = blocks * THREADS;
  const int samples = 64 * scale;
  curandState *dStates;
  unsigned int *dInside;
  double *dSums;
  CUDA_CHECK(cudaMalloc(&dStates, threads * sizeof(curandState)));
  CUDA_CHECK(cudaMalloc(&dInside, threads * sizeof(unsigned int)));
  CUDA_CHECK(cudaMalloc(&dSums, 2 * blocks * sizeof(double)));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  setupStates<<<blocks, THREADS>>>(dStates, 20240601ULL);
  CUDA_CHECK(cudaGetLastError());

  std::vector<unsigned int> inside1(threads), inside2(threads);
  countInside<<<blocks, THREADS>>>(dStates, dInside, samples);
  CUDA_CHECK(cudaMemcpy(inside1.data(), dInside, threads * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  countInside<<<blocks, THREADS>>>(dStates, dInside, samples);
  CUDA_CHECK(cudaMemcpy(inside2.data(), dInside, threads * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  normalMoments<<<blocks, THREADS>>>(dStates, dSums, samples);
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> sums(2 * blocks);
  CUDA_CHECK(cudaMemcpy(sums.data(), dSums, sums.size() * sizeof(double),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("time_ms: %.3f\n", ms);

  // pi: each point is inside with p = pi/4; 4 * (standard error) bound.
  double total = 0;
  int same = 0;
  for (int i = 0; i < threads; ++i) {
    total += inside1[i] + inside2[i];
    same += inside1[i] == inside2[i];
  }
  double points = 2.0 * threads * samples;
  double p = total / points;
  double piErr = 4.0 * 4.0 * sqrt(M_PI / 4 * (1 - M_PI / 4) / points);
  if (fabs(4.0 * p - M_PI) > piErr) {
    printf("FAIL: pi estimate %f (tolerance %f)\n", 4.0 * p, piErr);
    return 1;
  }
  // Identical counts in most threads would mean the states did not advance.
  if (same > threads / 4) {
    printf("FAIL: %d of %d threads drew the same count twice\n", same, threads);
    return 1;
  }
  double s1 = 0, s2 = 0, count = (double)threads * samples;
  for (int b = 0; b < blocks; ++b) {
    s1 += sums[2 * b];
    s2 += sums[2 * b + 1];
  }
  double mean = s1 / count, var = s2 / count - mean * mean;
  // Standard errors: 1/sqrt(N) for the mean, sqrt(2/N) for the variance.
  if (fabs(mean) > 5.0 / sqrt(count) || fabs(var - 1.0) > 5.0 * sqrt(2.0 / count)) {
    printf("FAIL: normal mean %f, variance %f\n", mean, var);
    return 1;
  }
  CUDA_CHECK(cudaFree(dStates));
  CUDA_CHECK(cudaFree(dInside));
  CUDA_CHECK(cudaFree(dSums));
  printf("PASS\n");
  return 0;
}
