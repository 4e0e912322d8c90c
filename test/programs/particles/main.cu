// Particles bouncing in a box under gravity, in two .cu files and a header:
// integrate.cu holds the integrator and launches it, main.cu holds an energy
// kernel and the driver loop (100 steps, the state resident on the device,
// the energy read back every 20 steps).
//
// RUN: %build %s %S/integrate.cu -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s %S/integrate.cu -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "particles.h"

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void kineticEnergy(const float *vx, const float *vy, float *e,
                              int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    e[i] = 0.5f * (vx[i] * vx[i] + vy[i] * vy[i]);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 40000 * scale + 3;
  const int steps = 100;
  Params params = {0.01f, 9.81f, 0.9f, 10.0f, 5.0f};
  std::vector<float> x(n), y(n), vx(n), vy(n), e(n);
  srand(19);
  for (int i = 0; i < n; ++i) {
    x[i] = params.width * rand() / (float)RAND_MAX;
    y[i] = params.height * rand() / (float)RAND_MAX;
    vx[i] = 4.0f * rand() / (float)RAND_MAX - 2.0f;
    vy[i] = 4.0f * rand() / (float)RAND_MAX - 2.0f;
  }
  Particles p;
  p.n = n;
  size_t bytes = n * sizeof(float);
  CUDA_CHECK(cudaMalloc(&p.x, bytes));
  CUDA_CHECK(cudaMalloc(&p.y, bytes));
  CUDA_CHECK(cudaMalloc(&p.vx, bytes));
  CUDA_CHECK(cudaMalloc(&p.vy, bytes));
  float *dE;
  CUDA_CHECK(cudaMalloc(&dE, bytes));
  CUDA_CHECK(cudaMemcpy(p.x, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(p.y, y.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(p.vx, vx.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(p.vy, vy.data(), bytes, cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  std::vector<double> energies;
  for (int s = 1; s <= steps; ++s) {
    integrateStep(p, params, 0);
    CUDA_CHECK(cudaGetLastError());
    if (s % 20 == 0) {
      kineticEnergy<<<(n + 255) / 256, 256>>>(p.vx, p.vy, dE, n);
      CUDA_CHECK(cudaMemcpy(e.data(), dE, bytes, cudaMemcpyDeviceToHost));
      double total = 0;
      for (float v : e)
        total += v;
      energies.push_back(total);
    }
  }
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms;
  cudaEventElapsedTime(&ms, start, stop);
  printf("time_ms: %.3f\n", ms);
  std::vector<float> gx(n), gy(n);
  CUDA_CHECK(cudaMemcpy(gx.data(), p.x, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gy.data(), p.y, bytes, cudaMemcpyDeviceToHost));

  size_t k = 0;
  for (int s = 1; s <= steps; ++s) {
    integrateStepHost(x.data(), y.data(), vx.data(), vy.data(), n, params);
    if (s % 20 == 0) {
      double total = 0;
      for (int i = 0; i < n; ++i)
        total += 0.5f * (vx[i] * vx[i] + vy[i] * vy[i]);
      if (fabs(total - energies[k]) > 1e-4 * total) {
        printf("FAIL: energy at step %d: %g, expected %g\n", s, energies[k], total);
        return 1;
      }
      ++k;
    }
  }
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (fabsf(gx[i] - x[i]) > 1e-3f || fabsf(gy[i] - y[i]) > 1e-3f)
      ++bad;
  // A bounce can flip on a rounding difference; allow a handful.
  if (bad > n / 1000) {
    printf("FAIL: %d of %d particles off\n", bad, n);
    return 1;
  }
  printf("PASS (%d particles, %d off by rounding)\n", n, bad);
  return 0;
}
