// Naive CUDA port of ../blocks.cpp's nest (naive.cuh): one kernel launch
// per anti-diagonal plane i + j + k = d of the table, one thread per cell
// of the plane; every cell a cell reads lies on an earlier plane.
#include "naive.cuh"

__global__ void binsPlane(int *OPT, int n0, int n1, int n2, int w0, int w1,
                          int w2, int cap, int d) {
  long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (t >= (long long)(n0 + 1) * (n1 + 1))
    return;
  int i = t / (n1 + 1), j = t % (n1 + 1), k = d - i - j;
  if (k < 0 || k > n2)
    return;
  int best = i + j + k == 0 ? 0 : 1 << 29;
  for (int a = 0; a <= i; ++a)
    for (int b = 0; b <= j; ++b)
      for (int c = 0; c <= k; ++c)
        if ((a | b | c) != 0 && a * w0 + b * w1 + c * w2 <= cap)
          best = min(best,
                     OPT[((i - a) * (n1 + 1) + j - b) * (n2 + 1) + k - c] + 1);
  OPT[(i * (n1 + 1) + j) * (n2 + 1) + k] = best;
}

void bins(int *OPT, int n0, int n1, int n2, int w0, int w1, int w2, int cap) {
  size_t Cells = (size_t)(n0 + 1) * (n1 + 1) * (n2 + 1);
  int *dOPT = toDevice(OPT, Cells);
  long long Plane = (long long)(n0 + 1) * (n1 + 1);
  int Blocks = (int)((Plane + NaiveBlock - 1) / NaiveBlock);
  for (int d = 0; d <= n0 + n1 + n2; ++d)
    binsPlane<<<Blocks, NaiveBlock>>>(dOPT, n0, n1, n2, w0, w1, w2, cap, d);
  CUDA_CHECK(cudaGetLastError());
  toHost(OPT, dOPT, Cells);
}

#include "../blocks.cpp"
