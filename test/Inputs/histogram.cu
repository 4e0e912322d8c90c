// 256-bin histogram with global atomics: blocks race on the same bins.
__global__ void histogram(const unsigned char *data, unsigned *bins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;
  for (; i < n; i += stride)
    atomicAdd(&bins[data[i]], 1u);
}
