// Kernels of the statistics program, kept in a .cu file that main.cu
// includes (a single translation unit, as some projects are organized).

// Per-block sums of x and x*x, in double, from a shared-memory tree.
__global__ void momentsPerBlock(const float *x, int n, double *sums) {
  __shared__ double s1[256];
  __shared__ double s2[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  double v = i < n ? x[i] : 0.0;
  s1[t] = v;
  s2[t] = v * v;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w >>= 1) {
    if (t < w) {
      s1[t] += s1[t + w];
      s2[t] += s2[t + w];
    }
    __syncthreads();
  }
  if (t == 0) {
    sums[2 * blockIdx.x] = s1[0];
    sums[2 * blockIdx.x + 1] = s2[0];
  }
}

__global__ void standardize(const float *x, float *z, int n, float mean,
                            float invStd) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    z[i] = (x[i] - mean) * invStd;
}
