// A grid-stride loop: reads gridDim, so a partition must see the original
// grid size for every block to keep its share of the work.
__global__ void saxpy(float a, const float *x, float *y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}
