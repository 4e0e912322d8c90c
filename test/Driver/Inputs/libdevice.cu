__global__ void softplus(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = logf(1.0f + expf(x[i]));
}
