// Heat diffusion on a 2-D plate stored in pitched device memory
// (cudaMallocPitch): rows are copied in and out with cudaMemcpy2D between a
// dense host array and the padded device rows, and the kernel steps through
// the rows by the pitch in bytes.
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

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void diffuse(const float *t, size_t pitch, float *next, int w, int h,
                        float alpha) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  const float *row = (const float *)((const char *)t + y * pitch);
  float *out = (float *)((char *)next + y * pitch);
  if (x == 0 || y == 0 || x == w - 1 || y == h - 1) {
    out[x] = row[x]; // fixed boundary
    return;
  }
  const float *up = (const float *)((const char *)row - pitch);
  const float *down = (const float *)((const char *)row + pitch);
  out[x] = row[x] + alpha * (row[x - 1] + row[x + 1] + up[x] + down[x] - 4.0f * row[x]);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  float side = sqrtf((float)scale); // cells grow with the scale
  int w = (int)(203 * side), h = (int)(131 * side), steps = 40;
  float alpha = 0.2f;
  std::vector<float> plate(w * h);
  srand(59);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      plate[y * w + x] = (x == 0 ? 100.0f : 0.0f) + rand() / (float)RAND_MAX;
  float *dA, *dB;
  size_t pitch, pitchB;
  CUDA_CHECK(cudaMallocPitch(&dA, &pitch, w * sizeof(float), h));
  CUDA_CHECK(cudaMallocPitch(&dB, &pitchB, w * sizeof(float), h));
  if (pitch != pitchB || pitch < w * sizeof(float)) {
    printf("FAIL: pitches %zu and %zu for rows of %zu bytes\n", pitch, pitchB,
           w * sizeof(float));
    return 1;
  }
  CUDA_CHECK(cudaMemcpy2D(dA, pitch, plate.data(), w * sizeof(float),
                          w * sizeof(float), h, cudaMemcpyHostToDevice));
  dim3 block(32, 4), grid((w + 31) / 32, (h + 3) / 4);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  for (int k = 0; k < steps; ++k) {
    diffuse<<<grid, block>>>(dA, pitch, dB, w, h, alpha);
    float *t = dA;
    dA = dB;
    dB = t;
  }
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  std::vector<float> got(w * h);
  CUDA_CHECK(cudaMemcpy2D(got.data(), w * sizeof(float), dA, pitch,
                          w * sizeof(float), h, cudaMemcpyDeviceToHost));
  std::vector<float> a(plate), b(plate);
  for (int k = 0; k < steps; ++k) {
    for (int y = 1; y < h - 1; ++y)
      for (int x = 1; x < w - 1; ++x) {
        int i = y * w + x;
        b[i] = a[i] + alpha * (a[i - 1] + a[i + 1] + a[i - w] + a[i + w] - 4.0f * a[i]);
      }
    a.swap(b);
  }
  for (int i = 0; i < w * h; ++i)
    if (fabsf(got[i] - a[i]) > 1e-3f) {
      printf("FAIL at (%d, %d): %g, expected %g\n", i % w, i / w, got[i], a[i]);
      return 1;
    }
  printf("PASS (pitch %zu bytes for %zu)\n", pitch, w * sizeof(float));
  return 0;
}
