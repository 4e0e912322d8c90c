// Calls a function defined in a C file (c-helper.c) of the same program.
#include <cstdio>
extern "C" int c_scale(int x);

__global__ void fill(int *out, int v) { out[threadIdx.x] = v; }

int main() {
  int *d, h[4];
  cudaMalloc(&d, sizeof h);
  fill<<<1, 4>>>(d, c_scale(5));
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  bool ok = h[0] == 15 && h[3] == 15;
  printf("%s: %d\n", ok ? "PASS" : "FAIL", h[0]);
  return ok ? 0 : 1;
}
