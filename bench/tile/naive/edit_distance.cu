// Naive CUDA port of ../edit_distance.cpp's nest (naive.cuh).
#include "naive.cuh"

__global__ void editDistanceDiag(const char *a, const char *b, int *D, int m,
                                 int d, int iLo, int len) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= len)
    return;
  int i = iLo + t, j = d - i;
  int sub = D[(i - 1) * (m + 1) + j - 1] + (a[i - 1] != b[j - 1]);
  int del = D[(i - 1) * (m + 1) + j] + 1;
  int ins = D[i * (m + 1) + j - 1] + 1;
  D[i * (m + 1) + j] = min(sub, min(del, ins));
}

void editDistance(const char *a, const char *b, int *D, int n, int m) {
  size_t Cells = (size_t)(n + 1) * (m + 1);
  char *dA = toDevice(a, n), *dB = toDevice(b, m);
  int *dD = toDevice(D, Cells);
  forEachDiagonal(1, n, 1, m, [&](int d, int iLo, int len, int blocks) {
    editDistanceDiag<<<blocks, NaiveBlock>>>(dA, dB, dD, m, d, iLo, len);
  });
  toHost(D, dD, Cells);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
}

#include "../edit_distance.cpp"
