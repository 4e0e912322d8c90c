// A Mandelbrot image over a 2-D grid in fixed-point arithmetic (Q4.27 in
// 64-bit integers), so the CPU reference gives the same escape count at
// every pixel: exact check. Divergent loops: neighbouring pixels run for
// very different numbers of iterations.
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
    cudaError_t e = call;                                                      \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(e));                                          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

typedef long long fixed;
#define FRAC 27
#define ONE ((fixed)1 << FRAC)

__host__ __device__ inline int escape(fixed cr, fixed ci, int maxIter) {
  fixed zr = 0, zi = 0;
  int k = 0;
  while (k < maxIter) {
    fixed zr2 = (zr * zr) >> FRAC, zi2 = (zi * zi) >> FRAC;
    if (zr2 + zi2 > 4 * ONE)
      break;
    fixed t = zr2 - zi2 + cr;
    zi = ((zr * zi) >> (FRAC - 1)) + ci;
    zr = t;
    ++k;
  }
  return k;
}

__global__ void mandelbrot(int *image, int width, int height, fixed x0,
                           fixed y0, fixed step, int maxIter) {
  int px = blockIdx.x * blockDim.x + threadIdx.x;
  int py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px < width && py < height)
    image[py * width + px] = escape(x0 + px * step, y0 + py * step, maxIter);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  float side = sqrtf((float)scale); // pixels grow with the scale
  int width = (int)(320 * side), height = (int)(200 * side), maxIter = 256;
  fixed x0 = -2 * ONE - ONE / 4, y0 = -ONE - ONE / 8;
  fixed step = (3 * ONE) / width;
  int *d;
  CUDA_CHECK(cudaMalloc(&d, width * height * sizeof(int)));
  dim3 block(16, 8);
  dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  mandelbrot<<<grid, block>>>(d, width, height, x0, y0, step, maxIter);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  std::vector<int> img(width * height);
  CUDA_CHECK(cudaMemcpy(img.data(), d, img.size() * sizeof(int), cudaMemcpyDeviceToHost));
  long long inside = 0;
  for (int py = 0; py < height; ++py)
    for (int px = 0; px < width; ++px) {
      int want = escape(x0 + px * step, y0 + py * step, maxIter);
      if (img[py * width + px] != want) {
        printf("FAIL at (%d, %d): %d, expected %d\n", px, py, img[py * width + px], want);
        return 1;
      }
      inside += want == maxIter;
    }
  printf("PASS (%lld of %d pixels inside)\n", inside, width * height);
  return 0;
}
