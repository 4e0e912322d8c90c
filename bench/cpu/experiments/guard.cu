// vecadd with (vg) and without (vng) the `if (i < n)` guard: the guard
// becomes AVX2 masked loads/stores (docs/cpu-performance.md, finding 1).
extern "C" __global__ void vg(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void vng(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  c[i] = a[i] + b[i];
}
