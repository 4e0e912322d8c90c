#include <cstdio>
#include "shared.cuh"

int main() {
  const int n = 300;
  int h[n], *x;
  for (int i = 0; i < n; ++i)
    h[i] = i;
  cudaMalloc(&x, sizeof h);
  cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice);
  stepA(x, n);                                 // 3(i + 1)
  addOne(x, n);                                // 3i + 4
  scaleBy<<<(n + 63) / 64, 64>>>(x, 2, n);     // 6i + 8
  addTo<<<(n + 63) / 64, 64>>>(x, -8, n);      // 6i
  cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += h[i] != 6 * i;
  printf("%s: %d of %d wrong\n", wrong ? "FAIL" : "PASS", wrong, n);
  return wrong != 0;
}
