// Kernels with early returns: a lower-triangular matrix-vector product where
// threads past the last row return at once, and a tile kernel in which whole
// blocks return when their tile is marked empty (a sparse block mask read
// from device memory), leaving those outputs untouched.
//
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
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void lowerMatVec(const int *L, const int *x, long long *y, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n)
    return;
  long long acc = 0;
  for (int j = 0; j <= row; ++j)
    acc += (long long)L[(size_t)row * n + j] * x[j];
  y[row] = acc;
}

#define TILE 256
__global__ void maskedIncrement(int *data, const unsigned char *tileMask,
                                int n) {
  if (!tileMask[blockIdx.x])
    return; // the whole block leaves
  int i = blockIdx.x * TILE + threadIdx.x;
  if (i >= n)
    return;
  data[i] += blockIdx.x + 1;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 700 + 300 * (scale - 1) + 3; // n^2 matrix: grow n slowly
  std::vector<int> L((size_t)n * n), x(n);
  std::vector<long long> y(n);
  srand(14);
  for (size_t i = 0; i < L.size(); ++i)
    L[i] = rand() % 19 - 9;
  for (int i = 0; i < n; ++i)
    x[i] = rand() % 100;
  int m = 100000 * scale + 77, tiles = (m + TILE - 1) / TILE;
  std::vector<int> data(m), out(m);
  std::vector<unsigned char> mask(tiles);
  for (int i = 0; i < m; ++i)
    data[i] = rand() % 1000;
  for (int t = 0; t < tiles; ++t)
    mask[t] = rand() % 3 == 0;

  int *dL, *dx, *dData;
  long long *dy;
  unsigned char *dMask;
  CUDA_CHECK(cudaMalloc(&dL, L.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dy, n * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&dData, m * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dMask, tiles));
  CUDA_CHECK(cudaMemcpy(dL, L.data(), L.size() * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dData, data.data(), m * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dMask, mask.data(), tiles, cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  lowerMatVec<<<(n + 63) / 64, 64>>>(dL, dx, dy, n);
  maskedIncrement<<<tiles, TILE>>>(dData, dMask, m);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.data(), dData, m * sizeof(int), cudaMemcpyDeviceToHost));
  for (int r = 0; r < n; ++r) {
    long long acc = 0;
    for (int j = 0; j <= r; ++j)
      acc += (long long)L[(size_t)r * n + j] * x[j];
    if (acc != y[r]) {
      printf("FAIL: row %d: %lld, expected %lld\n", r, y[r], acc);
      return 1;
    }
  }
  for (int i = 0; i < m; ++i) {
    int want = data[i] + (mask[i / TILE] ? i / TILE + 1 : 0);
    if (out[i] != want) {
      printf("FAIL: data[%d] = %d, expected %d\n", i, out[i], want);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
