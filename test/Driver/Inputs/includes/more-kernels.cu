// A .cu file that the program includes rather than compiles on its own.
__global__ void negate(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = -x[i];
}
