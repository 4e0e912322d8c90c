// Naive CUDA port of ../smith_waterman.cpp's nest (naive.cuh).
#include "naive.cuh"

__global__ void smithWatermanDiag(const char *a, const char *b, int *H, int m,
                                  int gap, int *best, int d, int iLo,
                                  int len) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= len)
    return;
  int i = iLo + t, j = d - i;
  int diag = H[(i - 1) * (m + 1) + j - 1] + (a[i - 1] == b[j - 1] ? 3 : -3);
  int up = H[(i - 1) * (m + 1) + j] - gap;
  int left = H[i * (m + 1) + j - 1] - gap;
  int h = max(max(0, diag), max(up, left));
  H[i * (m + 1) + j] = h;
  atomicMax(best, h);
}

void smithWaterman(const char *a, const char *b, int *H, int n, int m,
                   int gap, int &best) {
  size_t Cells = (size_t)(n + 1) * (m + 1);
  char *dA = toDevice(a, n), *dB = toDevice(b, m);
  int *dH = toDevice(H, Cells), *dBest = toDevice(&best, 1);
  forEachDiagonal(1, n, 1, m, [&](int d, int iLo, int len, int blocks) {
    smithWatermanDiag<<<blocks, NaiveBlock>>>(dA, dB, dH, m, gap, dBest, d,
                                              iLo, len);
  });
  toHost(H, dH, Cells);
  toHost(&best, dBest, 1);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
}

#include "../smith_waterman.cpp"
