// Sparse matrix-vector products in CSR form (a row per thread; the column
// indices are data, so the kernel's reads of x are indirect), applied ten
// times with the vectors swapping on the device: x <- A x / 8.
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
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void spmv(int rows, const int *rowStart, const int *cols,
                     const float *vals, const float *x, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float acc = 0.0f;
    for (int k = rowStart[r]; k < rowStart[r + 1]; ++k)
      acc += vals[k] * x[cols[k]];
    y[r] = acc * 0.125f;
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int rows = 30000 * scale;
  std::vector<int> start(rows + 1), cols;
  std::vector<float> vals;
  srand(66);
  for (int r = 0; r < rows; ++r) {
    start[r] = (int)cols.size();
    int nnz = 1 + rand() % 12;
    cols.push_back(r); // a diagonal keeps the iterates from vanishing
    vals.push_back(4.0f);
    for (int k = 1; k < nnz; ++k) {
      cols.push_back(rand() % rows);
      vals.push_back(rand() / (float)RAND_MAX - 0.5f);
    }
  }
  start[rows] = (int)cols.size();
  int nnz = start[rows];
  std::vector<float> x(rows), y(rows);
  for (int i = 0; i < rows; ++i)
    x[i] = rand() / (float)RAND_MAX;

  int *dStart, *dCols;
  float *dVals, *dx, *dy;
  CUDA_CHECK(cudaMalloc(&dStart, (rows + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dCols, nnz * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dVals, nnz * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dx, rows * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dy, rows * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dStart, start.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dCols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dVals, vals.data(), nnz * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), rows * sizeof(float), cudaMemcpyHostToDevice));
  const int iters = 10;
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  for (int it = 0; it < iters; ++it) {
    spmv<<<(rows + 127) / 128, 128>>>(rows, dStart, dCols, dVals, dx, dy);
    float *t = dx;
    dx = dy;
    dy = t;
  }
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  std::vector<float> got(rows);
  CUDA_CHECK(cudaMemcpy(got.data(), dx, rows * sizeof(float), cudaMemcpyDeviceToHost));
  for (int it = 0; it < iters; ++it) {
    for (int r = 0; r < rows; ++r) {
      float acc = 0.0f;
      for (int k = start[r]; k < start[r + 1]; ++k)
        acc += vals[k] * x[cols[k]];
      y[r] = acc * 0.125f;
    }
    x.swap(y);
  }
  for (int r = 0; r < rows; ++r)
    if (fabsf(got[r] - x[r]) > 1e-4f * (1 + fabsf(x[r]))) {
      printf("FAIL: row %d: %g, expected %g\n", r, got[r], x[r]);
      return 1;
    }
  printf("PASS (%d rows, %d nonzeros)\n", rows, nnz);
  return 0;
}
