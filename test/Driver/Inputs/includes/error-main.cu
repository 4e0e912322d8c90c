#include "error.cuh"

int main() {
  int *x;
  cudaMalloc(&x, 64);
  fill<<<1, 16>>>(x, 1);
  return 0;
}
