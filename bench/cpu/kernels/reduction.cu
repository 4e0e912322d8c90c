// One partial sum per 256-thread block: a shared-memory tree with a barrier
// per level (no warp shuffles, so that it is the same algorithm as the
// OpenCL version, which uses no subgroup operations). Same kernel as
// reduction.cl.
#define RB 256
extern "C" __global__ void reduction(const float *in, float *partial, int n) {
  __shared__ float sdata[RB];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * (RB * 2) + tid;
  float v = 0.0f;
  if (i < n)
    v = in[i];
  if (i + RB < n)
    v += in[i + RB];
  sdata[tid] = v;
  __syncthreads();
  for (unsigned s = RB / 2; s > 0; s >>= 1) {
    if (tid < s)
      sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    partial[blockIdx.x] = sdata[0];
}
