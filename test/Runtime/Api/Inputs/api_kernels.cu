// Kernels for the CUDA-runtime subset's end-to-end tests (api.test).

// Exact, disjoint writes: split over every device.
__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// A __constant__ array set with cudaMemcpyToSymbol.
__constant__ float coef[3];

__global__ void poly(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = coef[0] + x[i] * (coef[1] + x[i] * coef[2]);
}

// __syncthreads_count: its CPU variant calls a helper that libcleave_rt.so
// exports (__cleave_rt_block_red_b32).
__global__ void count_positive(const float *x, int *counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int c = __syncthreads_count(i < n && x[i] > 0.0f);
  if (threadIdx.x == 0)
    counts[blockIdx.x] = c;
}
