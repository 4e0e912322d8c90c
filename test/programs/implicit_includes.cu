// Host code that leans on what nvcc includes implicitly: only <cstdio> is
// included (nvcc does not bring printf), yet the host side calls malloc,
// free, memset, memcpy, fabs, sqrt, ceil, exp, time and uses EXIT_FAILURE
// (nvcc's cuda_runtime.h brings them in). The work: a root-mean-square error between a signal and
// its smoothed copy.
//
// XFAIL: *
// issue 25: host code relying on nvcc's implicit includes (<cmath>, <cstdlib>, <cstring>, <ctime>)
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>

#define CHECK(call)                                                            \
  if ((call) != cudaSuccess) {                                                 \
    printf("CUDA call failed at line %d\n", __LINE__);                         \
    exit(EXIT_FAILURE);                                                        \
  }

__global__ void smooth(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1)
    out[i] = (in[i - 1] + 2.0f * in[i] + in[i + 1]) * 0.25f;
  else if (i < n)
    out[i] = in[i];
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 200000 * scale + 13;
  size_t bytes = n * sizeof(float);
  float *in = (float *)malloc(bytes);
  float *out = (float *)malloc(bytes);
  float *copy = (float *)malloc(bytes);
  memset(out, 0, bytes);
  time_t started = time(NULL);
  unsigned seed = 12345;
  for (int i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    in[i] = (float)exp(-0.5 * (i % 1000) / 1000.0) + (seed >> 16) / 65536.0f;
  }
  memcpy(copy, in, bytes);
  float *dIn, *dOut;
  CHECK(cudaMalloc(&dIn, bytes));
  CHECK(cudaMalloc(&dOut, bytes));
  CHECK(cudaMemcpy(dIn, in, bytes, cudaMemcpyHostToDevice));
  int threads = 256;
  int blocks = (int)ceil((double)n / threads);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  smooth<<<blocks, threads>>>(dIn, dOut, n);
  CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CHECK(cudaMemcpy(out, dOut, bytes, cudaMemcpyDeviceToHost));
  double sq = 0;
  for (int i = 0; i < n; ++i) {
    float want = (i > 0 && i < n - 1)
                     ? (copy[i - 1] + 2.0f * copy[i] + copy[i + 1]) * 0.25f
                     : copy[i];
    if (fabs(out[i] - want) > 1e-6) {
      printf("FAIL at %d: %g, expected %g\n", i, out[i], want);
      exit(EXIT_FAILURE);
    }
    sq += (out[i] - copy[i]) * (out[i] - copy[i]);
  }
  printf("rms change %.5f, %ld s\n", sqrt(sq / n), (long)(time(NULL) - started));
  free(in);
  free(out);
  free(copy);
  cudaFree(dIn);
  cudaFree(dOut);
  printf("PASS\n");
  return 0;
}
