// Kernels whose per-item loop cannot be predicted (or reorganized), one per
// reason; test/Reorganize/refusals.cu checks each reason and its line.
#include <stdint.h>

// The exit depends on a value another thread wrote to shared memory.
__global__ void neighbour(const int *lens, int *out, int n) {
  __shared__ int s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = lens[i];
  __syncthreads();
  int k = 0;
  for (int j = 0; j < s[(threadIdx.x + 1) % 256]; ++j)
    k = k * 31 + j;
  out[i] = k;
}

// The exit depends on a shuffle: the neighbouring lane's length.
__global__ void shuffled(const int *lens, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int mine = lens[i];
  int theirs = __shfl_down_sync(0xffffffffu, mine, 1);
  int k = 0;
  for (int j = 0; j < theirs; ++j)
    k = k * 31 + j;
  out[i] = k;
}

// The exit depends on a counter every thread bumps.
__global__ void ticket(int *counter, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int t = atomicAdd(counter, 1);
  int k = 0;
  for (int j = 0; j < t % 64; ++j)
    k = k * 31 + j;
  out[i] = k;
}

// The exit depends on memory the loop itself writes.
__global__ void written(int *work, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = 0;
  while (work[i] > 0) {
    work[i] = work[i] / 2;
    ++k;
  }
  work[i + n] = k;
}

// The exit depends on a call that touches memory.
__device__ int trace[64];
__device__ __noinline__ int opaque(int k) {
  trace[k & 63] = k;
  return k * 7 + 1;
}
__global__ void called(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = 0;
  while (opaque(k) != i)
    ++k;
  out[i] = k;
}

// Predictable, but items combine: a block reduction of the per-item counts.
__global__ void blocksum(const int *lens, int *out, int n) {
  __shared__ int s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = 0;
  for (int j = 0; j < lens[i]; ++j)
    k = k * 31 + j;
  s[threadIdx.x] = k;
  __syncthreads();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int j = 0; j < 256; ++j)
      t += s[j];
    out[blockIdx.x] = t;
  }
}

// Predictable, but an output reads the input at the thread's position, not
// through the item index.
__global__ void positional(const int *lens, const float *in, float *out,
                           int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int k = 0;
  for (int j = 0; j < lens[i]; ++j)
    k = k * 31 + j;
  out[i] = k + in[blockIdx.x * 256 + threadIdx.x];
}

// The trip count follows the thread's position, not the item.
__global__ void lanes(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = 1;
  for (unsigned j = 0; j < threadIdx.x; ++j)
    x = x * 1.5f + 1;
  out[i] = x;
}

// The grid's size bounds the loop: a part of the sorted grid routed to one
// device would see its own.
__global__ void gridsized(float *out, const int *lens, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  int m = gridDim.x;
  float x = 0;
  for (int j = 0; j < lens[i] % m; ++j)
    x = x * 0.5f + j;
  out[i] = x;
}

// The block index feeds a value other than through the item index.
__global__ void blocktagged(float *out, const int *lens, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float x = 0;
  for (int j = 0; j < lens[i]; ++j)
    x = x * 0.5f + j;
  __shared__ int tag;
  if (threadIdx.x == 0)
    tag = blockIdx.x;
  __syncthreads();
  out[i] = x + tag;
}
