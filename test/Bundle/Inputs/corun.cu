// Global accesses of each kind the co-run estimate tells apart
// (docs/bundle.md, the co-run table).
__global__ void transposeNaive(float *out, const float *in, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  // The read is coalesced; neighbouring lanes write h floats apart.
  out[x * h + y] = in[y * w + x];
}

__global__ void gather(const int *idx, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // idx and y coalesced, x through loaded indices: a sector per lane.
  y[i] = x[idx[i]];
}

__global__ void strided(const double *in, double *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // Lanes 64 bytes apart: 32 sectors; a broadcast: one.
  out[i] = in[8 * i] + in[0];
}

__global__ void rounds(unsigned *v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = v[i];
  // A constant trip count: the loop body counts 1000 times (BFI alone
  // would guess a few dozen).
  for (int r = 0; r < 1000; ++r)
    s = (s << 4) ^ (s >> 5) ^ r;
  v[i] = s;
}
