// Softmax over the rows of two matrices of different widths, through a
// header (normalize.cuh) that holds both the kernel template and the host
// function that launches it.
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

#include "normalize.cuh"

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static bool check(const std::vector<float> &in, const std::vector<float> &out,
                  int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float *row = &in[(size_t)r * cols];
    float m = row[0];
    for (int c = 1; c < cols; ++c)
      m = fmaxf(m, row[c]);
    double s = 0;
    for (int c = 0; c < cols; ++c)
      s += exp((double)row[c] - m);
    for (int c = 0; c < cols; ++c) {
      double want = exp((double)row[c] - m) / s;
      if (fabs(out[(size_t)r * cols + c] - want) > 1e-5 * (1e-3 + want)) {
        printf("FAIL: %dx%d at (%d, %d): %g, expected %g\n", rows, cols, r, c,
               out[(size_t)r * cols + c], want);
        return false;
      }
    }
  }
  return true;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int shapes[2][2] = {{300 * scale, 100}, {120 * scale, 1000}};
  float total = 0;
  srand(29);
  for (auto &shape : shapes) {
    int rows = shape[0], cols = shape[1];
    size_t n = (size_t)rows * cols;
    std::vector<float> in(n), out(n);
    for (size_t i = 0; i < n; ++i)
      in[i] = 8.0f * rand() / (float)RAND_MAX - 4.0f;
    float *dIn, *dOut;
    CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dOut, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dIn, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    cudaEventRecord(s);
    CUDA_CHECK(softmax(dIn, dOut, rows, cols));
    cudaEventRecord(e);
    cudaEventSynchronize(e);
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    total += ms;
    CUDA_CHECK(cudaMemcpy(out.data(), dOut, n * sizeof(float), cudaMemcpyDeviceToHost));
    if (!check(in, out, rows, cols))
      return 1;
    cudaFree(dIn);
    cudaFree(dOut);
  }
  printf("time_ms: %.3f\n", total);
  printf("PASS\n");
  return 0;
}
