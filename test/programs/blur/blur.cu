// A separable box blur of a grayscale image whose kernels live in a header
// (blur_kernels.cuh); this file launches them over a 2-D grid for two radii.
// The CPU reference follows the same arithmetic; a pixel may differ by one
// where float rounding lands on .5.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "blur_kernels.cuh"

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static int clampHost(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

static void blurHost(const std::vector<unsigned char> &in,
                     std::vector<unsigned char> &out, int w, int h, int r) {
  std::vector<float> tmp(w * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float acc = 0.0f;
      for (int k = -r; k <= r; ++k)
        acc += in[y * w + clampHost(x + k, 0, w - 1)];
      tmp[y * w + x] = acc / (2 * r + 1);
    }
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      float acc = 0.0f;
      for (int k = -r; k <= r; ++k)
        acc += tmp[clampHost(y + k, 0, h - 1) * w + x];
      out[y * w + x] = (unsigned char)(acc / (2 * r + 1) + 0.5f);
    }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  float side = sqrtf((float)scale); // pixels grow with the scale
  int w = (int)(401 * side), h = (int)(257 * side);
  std::vector<unsigned char> img(w * h), out3(w * h), out8(w * h), ref(w * h);
  srand(23);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img[y * w + x] = (unsigned char)(((x / 16 + y / 16) % 2) * 180 + rand() % 60);
  unsigned char *dIn, *dOut;
  float *dTmp;
  CUDA_CHECK(cudaMalloc(&dIn, w * h));
  CUDA_CHECK(cudaMalloc(&dOut, w * h));
  CUDA_CHECK(cudaMalloc(&dTmp, w * h * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dIn, img.data(), w * h, cudaMemcpyHostToDevice));
  dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  blurRows<3><<<grid, block>>>(dIn, dTmp, w, h);
  blurCols<3><<<grid, block>>>(dTmp, dOut, w, h);
  CUDA_CHECK(cudaMemcpy(out3.data(), dOut, w * h, cudaMemcpyDeviceToHost));
  blurRows<8><<<grid, block>>>(dIn, dTmp, w, h);
  blurCols<8><<<grid, block>>>(dTmp, dOut, w, h);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(out8.data(), dOut, w * h, cudaMemcpyDeviceToHost));
  const std::vector<unsigned char> *outs[2] = {&out3, &out8};
  int radii[2] = {3, 8};
  for (int t = 0; t < 2; ++t) {
    blurHost(img, ref, w, h, radii[t]);
    for (int i = 0; i < w * h; ++i)
      if (abs((int)(*outs[t])[i] - (int)ref[i]) > 1) {
        printf("FAIL: radius %d, pixel %d: %d, expected %d\n", radii[t], i,
               (*outs[t])[i], ref[i]);
        return 1;
      }
  }
  printf("PASS\n");
  return 0;
}
