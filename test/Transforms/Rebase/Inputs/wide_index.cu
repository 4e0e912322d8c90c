// 64-bit indices, as the headline suite's vecadd writes them: the block
// index times blockDim.x, both extended to 64 bits, rebases; times a
// zero-extended argument (which may be negative as an int) it does not.
__global__ void wide_axpy(float *y, const float *x, float a, long n) {
  long i = long(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += a * x[i];
}

__global__ void wide_by_arg(float *y, unsigned stride, long n) {
  long i = long(blockIdx.x) * stride + threadIdx.x;
  if (i < n)
    y[i] = 1.0f;
}
