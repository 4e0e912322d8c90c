// STREAM triad: a = b + s * c. Same kernel as triad.cl.
extern "C" __global__ void triad(float *a, const float *b, const float *c,
                                 float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = b[i] + s * c[i];
}
