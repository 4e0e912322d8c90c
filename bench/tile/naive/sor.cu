// Naive CUDA port of ../sor.cpp's nest (naive.cuh). The cells of one
// anti-diagonal read new values from the previous one and old values from
// the next one, so they are independent.
#include "naive.cuh"

__global__ void sorDiag(double *A, int m, int d, int iLo, int len) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= len)
    return;
  int i = iLo + t, j = d - i;
  A[i * m + j] = (A[(i - 1) * m + j] + A[i * m + j - 1] + A[i * m + j] +
                  A[(i + 1) * m + j] + A[i * m + j + 1]) /
                 5;
}

void sweep(double *A, int n, int m) {
  if (n < 3 || m < 3)
    return;
  size_t Cells = (size_t)n * m;
  double *dA = toDevice(A, Cells);
  forEachDiagonal(1, n - 2, 1, m - 2, [&](int d, int iLo, int len,
                                          int blocks) {
    sorDiag<<<blocks, NaiveBlock>>>(dA, m, d, iLo, len);
  });
  toHost(A, dA, Cells);
}

#include "../sor.cpp"
