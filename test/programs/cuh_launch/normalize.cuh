// A small "library" header: kernels and the host functions that launch them.
// Row-wise softmax of a matrix: one block per row, the row's maximum and sum
// reduced in shared memory.
#pragma once
#include <cuda_runtime.h>

template <int THREADS>
__global__ void softmaxRows(const float *in, float *out, int cols) {
  __shared__ float red[THREADS];
  const float *row = in + (size_t)blockIdx.x * cols;
  float *dst = out + (size_t)blockIdx.x * cols;
  float m = -3.4e38f;
  for (int c = threadIdx.x; c < cols; c += THREADS)
    m = fmaxf(m, row[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int w = THREADS / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += THREADS)
    s += expf(row[c] - m);
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = THREADS / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  float inv = 1.0f / red[0];
  for (int c = threadIdx.x; c < cols; c += THREADS)
    dst[c] = expf(row[c] - m) * inv;
}

// Launches the kernel on the stream; the caller checks the error.
inline cudaError_t softmax(const float *in, float *out, int rows, int cols,
                           cudaStream_t stream = 0) {
  if (cols >= 512)
    softmaxRows<256><<<rows, 256, 0, stream>>>(in, out, cols);
  else
    softmaxRows<64><<<rows, 64, 0, stream>>>(in, out, cols);
  return cudaGetLastError();
}
