// Kernels of the blur program, in a header as many projects keep them: a
// separable box blur (horizontal then vertical pass) templated on the radius,
// and a __device__ helper that clamps coordinates at the image's edges.
#pragma once

__device__ inline int clampi(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

template <int R>
__global__ void blurRows(const unsigned char *in, float *tmp, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float acc = 0.0f;
  for (int k = -R; k <= R; ++k)
    acc += in[y * w + clampi(x + k, 0, w - 1)];
  tmp[y * w + x] = acc / (2 * R + 1);
}

template <int R>
__global__ void blurCols(const float *tmp, unsigned char *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  float acc = 0.0f;
  for (int k = -R; k <= R; ++k)
    acc += tmp[clampi(y + k, 0, h - 1) * w + x];
  out[y * w + x] = (unsigned char)(acc / (2 * R + 1) + 0.5f);
}
