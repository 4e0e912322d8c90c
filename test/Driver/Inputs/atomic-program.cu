// A kernel the analyses refuse to split (global atomics): it runs whole on
// one device, and `cleave compile` says why.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void countEven(const int *x, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] % 2 == 0)
    atomicAdd(count, 1);
}

int main() {
  const int n = 5000;
  static int h[n];
  for (int i = 0; i < n; ++i)
    h[i] = i * 3;
  int *dx, *dc, count = 0;
  cudaMalloc(&dx, sizeof h);
  cudaMalloc(&dc, sizeof(int));
  cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemset(dc, 0, sizeof(int));
  countEven<<<(n + 255) / 256, 256>>>(dx, dc, n);
  cudaMemcpy(&count, dc, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("%s: %d even\n", count == 2500 ? "PASS" : "FAIL", count);
  return count != 2500;
}
