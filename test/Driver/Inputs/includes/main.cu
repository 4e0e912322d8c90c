// Kernels, a kernel template, device variables and a launch in files this
// program includes (a .cuh next to it, one saved with a byte-order mark, a
// .cu named by a macro, a header found through -I).
#include <cstdio>
#include "kernels.cuh"
#include "templates.cuh"
#include "launch.cuh"
#define MORE_KERNELS "more-kernels.cu"
#include MORE_KERNELS
#include <lib/ops.cuh>
#include "bom.cuh"

int main() {
  const int n = 1000;
  int h[n], *a, *b;
  cudaMalloc(&a, n * sizeof(int));
  cudaMalloc(&b, n * sizeof(int));
  int off = 7;
  cudaMemcpyToSymbol(offsetBy, &off, sizeof off);
  iota<int, 3><<<(n + 255) / 256, 256>>>(a, n); // a[i] = 3i
  runScaleAdd(b, a, n);                         // b[i] = 6i + 7
  negate<<<(n + 255) / 256, 256>>>(b, n);       // b[i] = -(6i + 7)
  square<<<(n + 255) / 256, 256>>>(b, n);       // b[i] = (6i + 7)^2
  cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost);
  int count = 0;
  cudaMemcpyFromSymbol(&count, launches, sizeof count);
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += h[i] != (6 * i + 7) * (6 * i + 7);
  bomKernel<<<1, 32>>>(a);
  cudaMemcpy(h, a, 32 * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < 32; ++i)
    wrong += h[i] != 42;
  printf("%s: %d of %d wrong, %d launch of scaleAdd\n",
         wrong == 0 && count == 1 ? "PASS" : "FAIL", wrong, n, count);
  return wrong != 0;
}
