// Kernels with a per-item loop whose trip count the item determines, written
// the way users write them (docs/reorganize.md). Shared by the lit tests of
// test/Reorganize.
#include <stdint.h>

// A small per-item PRNG (xorshift32), its state kept in an array between
// launches.
__device__ inline uint32_t xorshift(uint32_t &s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}

__device__ inline float uniform01(uint32_t &s) {
  return (xorshift(s) >> 8) * (1.0f / 16777216.0f);
}

// Stationary bootstrap: each resampling draws blocks of geometric length
// (probability p of ending a block) until it has n values, summing them.
// The block starts come from the PRNG; the number of blocks is the trip
// count.
__global__ void bootstrap(const float *data, int n, float p,
                          uint32_t *states, float *means, int *blocks,
                          int resamples) {
  __shared__ float tile[256];
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  // The block loads the first values cooperatively (they are the same for
  // every resampling).
  tile[threadIdx.x] = data[threadIdx.x % n];
  __syncthreads();
  if (id >= resamples)
    return;
  uint32_t s = states[id];
  float sum = 0;
  int taken = 0, count = 0;
  while (taken < n) {
    int start = xorshift(s) % n;
    int len = 1;
    while (uniform01(s) >= p && len < n - taken)
      ++len;
    for (int k = 0; k < len; ++k) {
      int j = (start + k) % n;
      sum += j < 256 ? tile[j] : data[j];
    }
    taken += len;
    ++count;
  }
  states[id] = s;
  means[id] = sum / n;
  blocks[id] = count;
}

// Rejection sampling of a standard normal by the polar method: the number
// of tries is random.
__global__ void polar(const uint32_t *seeds, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  uint32_t s = seeds[i];
  float u, v, r;
  do {
    u = 2.0f * uniform01(s) - 1.0f;
    v = 2.0f * uniform01(s) - 1.0f;
    r = u * u + v * v;
  } while (r >= 1.0f || r == 0.0f);
  out[i] = u * sqrtf(-2.0f * logf(r) / r);
}

// CSR sparse matrix times vector: row i's loop runs over its entries.
__global__ void spmv(const int *rowptr, const int *cols, const float *vals,
                     const float *x, float *y, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float acc = 0;
    for (int k = rowptr[row]; k < rowptr[row + 1]; ++k)
      acc += vals[k] * x[cols[k]];
    y[row] = acc;
  }
}

// Monte Carlo with random path lengths: a particle walks until absorbed.
__global__ void paths(const uint32_t *seeds, float absorb, float *dist,
                      int *steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  uint32_t s = seeds[i] | 1u;
  float x = 0;
  int k = 0;
  while (true) {
    ++k;
    x += uniform01(s) - 0.5f;
    if (uniform01(s) < absorb || k > 100000)
      break;
  }
  dist[i] = x;
  steps[i] = k;
}
