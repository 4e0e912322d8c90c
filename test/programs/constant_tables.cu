// Tables in __constant__ memory set with cudaMemcpyToSymbol: polynomial
// coefficients (Horner's rule; a second set is copied in between two
// launches) and a 256-entry byte lookup table (a gamma curve on pixels).
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

#define DEGREE 7
#define CUDA_CHECK(x)                                                          \
  do {                                                                         \
    cudaError_t e_ = (x);                                                      \
    if (e_ != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                 \
      return 1;                                                                \
    }                                                                          \
  } while (0)

__constant__ float coeff[DEGREE + 1];
__constant__ unsigned char gammaLut[256];

__global__ void polyval(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i], acc = coeff[DEGREE];
    for (int k = DEGREE - 1; k >= 0; --k)
      acc = acc * v + coeff[k];
    y[i] = acc;
  }
}

__global__ void applyLut(const unsigned char *in, unsigned char *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = gammaLut[in[i]];
}

static float hostPoly(const float *c, float v) {
  float acc = c[DEGREE];
  for (int k = DEGREE - 1; k >= 0; --k)
    acc = acc * v + c[k];
  return acc;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 100000 * scale + 9;
  std::vector<float> x(n), y1(n), y2(n);
  std::vector<unsigned char> pix(n), mapped(n);
  srand(77);
  for (int i = 0; i < n; ++i) {
    x[i] = 2.0f * rand() / (float)RAND_MAX - 1.0f;
    pix[i] = (unsigned char)(rand() & 255);
  }
  float c1[DEGREE + 1], c2[DEGREE + 1];
  for (int k = 0; k <= DEGREE; ++k) {
    c1[k] = 1.0f / (k + 1);
    c2[k] = (k % 2 ? -1.0f : 1.0f) * 0.5f * k;
  }
  unsigned char lut[256];
  for (int v = 0; v < 256; ++v)
    lut[v] = (unsigned char)(255.0 * pow(v / 255.0, 1.0 / 2.2) + 0.5);

  float *dx, *dy;
  unsigned char *dPix, *dOut;
  CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dPix, n));
  CUDA_CHECK(cudaMalloc(&dOut, n));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dPix, pix.data(), n, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpyToSymbol(gammaLut, lut, sizeof lut));

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  int blocks = (n + 127) / 128;
  CUDA_CHECK(cudaMemcpyToSymbol(coeff, c1, sizeof c1));
  polyval<<<blocks, 128>>>(dx, dy, n);
  CUDA_CHECK(cudaMemcpy(y1.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyToSymbol(coeff, c2, sizeof c2));
  polyval<<<blocks, 128>>>(dx, dy, n);
  applyLut<<<blocks, 128>>>(dPix, dOut, n);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms;
  cudaEventElapsedTime(&ms, start, stop);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(y2.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(mapped.data(), dOut, n, cudaMemcpyDeviceToHost));

  // Read the table back: the device copy must hold what was sent.
  unsigned char back[256];
  CUDA_CHECK(cudaMemcpyFromSymbol(back, gammaLut, sizeof back));
  for (int v = 0; v < 256; ++v)
    if (back[v] != lut[v]) {
      printf("FAIL: table entry %d reads back %d\n", v, back[v]);
      return 1;
    }
  for (int i = 0; i < n; ++i) {
    float r1 = hostPoly(c1, x[i]), r2 = hostPoly(c2, x[i]);
    if (fabsf(y1[i] - r1) > 1e-4f * (1 + fabsf(r1)) ||
        fabsf(y2[i] - r2) > 1e-4f * (1 + fabsf(r2)) || mapped[i] != lut[pix[i]]) {
      printf("FAIL at %d: %g %g (want %g %g), %d (want %d)\n", i, y1[i], y2[i],
             r1, r2, mapped[i], lut[pix[i]]);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
