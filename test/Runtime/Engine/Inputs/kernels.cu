// Kernels of the engine's lit tests (test/Runtime/Engine) and of the GPU
// script (test/gpu/run-engine.sh). extern "C" keeps the symbols short.

// Exact, disjoint writes: a split only updates validity.
extern "C" __global__ void vecadd(const float *a, const float *b, float *c,
                                  int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// Writes only where the input is positive: the write footprint is a bound,
// not exact, so a split needs merges. The condition reads only `in`, which
// the kernel does not write, so the merge kernel can recompute it.
extern "C" __global__ void keep_positive(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > 0.0f)
    out[i] = 2.0f * in[i];
}

// A 2-D grid: the partition-ready variant decodes (x, y) from a linear
// block range.
extern "C" __global__ void scale2d(const float *in, float *out, int w,
                                   int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[y * w + x] = 2.0f * in[y * w + x] + 1.0f;
}

// Global atomics: cannot be split, runs whole on one device.
extern "C" __global__ void histogram(const unsigned *data, unsigned *bins,
                                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&bins[data[i] % 64u], 1u);
}

// A __constant__ variable, set with cudaMemcpyToSymbol (Engine::copyToSymbol).
__constant__ float coeffs[2];
extern "C" __global__ void affine(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = coeffs[0] * in[i] + coeffs[1];
}

// A 5-point stencil that writes only the interior: each range's write
// footprint is many rows with gaps between them (the engine keeps such a
// set as its hull while its device holds the gaps), and its reads reach
// into the neighbouring ranges' rows (halos).
extern "C" __global__ void jacobi2d(const float *in, float *out, int w,
                                    int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
    return;
  int i = y * w + x;
  out[i] = 0.5f * in[i] +
           0.125f * (in[i - 1] + in[i + 1] + in[i - w] + in[i + w]);
}

// A transpose: a range of block rows writes a band of columns of every
// output row, so the write hulls of two ranges overlap and the engine
// must compare the exact sets.
extern "C" __global__ void transpose2d(const float *in, float *out, int w,
                                       int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[x * h + y] = in[y * w + x];
}
