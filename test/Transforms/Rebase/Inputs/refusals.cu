// Kernels cleave-rebase must refuse, one reason each (see rebase.test).
__global__ void stores_index(int *out) {
  out[blockIdx.x * blockDim.x + threadIdx.x] = blockIdx.x;
}
__global__ void divides(float *out, int w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i / w] = 1.0f;
}
__global__ void grid_stride(float *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    out[i] = 2.0f;
}
__global__ void data_bound(float *out, const int *limit) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < limit[0])
    out[i] = 3.0f;
}
