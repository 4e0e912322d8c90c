// One header included twice, defining a different kernel each time.
#include <cstdio>
#define KERNEL_NAME addTen
#define KERNEL_VALUE 10
#include "twice.cuh"
#undef KERNEL_NAME
#undef KERNEL_VALUE
#define KERNEL_NAME addThree
#define KERNEL_VALUE 3
#include "twice.cuh"

int main() {
  int h[32] = {0}, *p;
  cudaMalloc(&p, sizeof h);
  cudaMemcpy(p, h, sizeof h, cudaMemcpyHostToDevice);
  addTen<<<1, 32>>>(p);
  addThree<<<1, 32>>>(p);
  addThree<<<1, 32>>>(p);
  cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int v : h)
    wrong += v != 16;
  printf("%s: %d wrong\n", wrong ? "FAIL" : "PASS", wrong);
  return wrong != 0;
}
