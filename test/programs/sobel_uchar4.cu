// Image filters on a generated RGBA image (uchar4 pixels) with a 2-D grid of
// 16x16 blocks on a size that is not a multiple of the block: RGBA to
// grayscale (unsigned char), a 3x3 box blur and a Sobel gradient magnitude
// with clamp-to-edge indexing, and a threshold back into a uchar4 image.
// Integer arithmetic throughout: exact check against a CPU version.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
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

__host__ __device__ inline int clampi(int v, int lo, int hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

__host__ __device__ inline unsigned char luma(uchar4 p) {
  // BT.601 weights in fixed point (sum 256).
  return (unsigned char)((77 * p.x + 150 * p.y + 29 * p.z) >> 8);
}

__global__ void toGray(const uchar4 *rgba, unsigned char *gray, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    gray[y * w + x] = luma(rgba[y * w + x]);
}

__global__ void boxBlur3(const unsigned char *in, unsigned char *out, int w,
                         int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  int sum = 0;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      sum += in[clampi(y + dy, 0, h - 1) * w + clampi(x + dx, 0, w - 1)];
  out[y * w + x] = (unsigned char)(sum / 9);
}

__global__ void sobel(const unsigned char *in, uchar4 *out, int w, int h,
                      int threshold) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  int xm = clampi(x - 1, 0, w - 1), xp = clampi(x + 1, 0, w - 1);
  int ym = clampi(y - 1, 0, h - 1), yp = clampi(y + 1, 0, h - 1);
  int p00 = in[ym * w + xm], p01 = in[ym * w + x], p02 = in[ym * w + xp];
  int p10 = in[y * w + xm], p12 = in[y * w + xp];
  int p20 = in[yp * w + xm], p21 = in[yp * w + x], p22 = in[yp * w + xp];
  int gx = (p02 + 2 * p12 + p22) - (p00 + 2 * p10 + p20);
  int gy = (p20 + 2 * p21 + p22) - (p00 + 2 * p01 + p02);
  int mag = abs(gx) + abs(gy);
  unsigned char m = (unsigned char)min(mag, 255);
  unsigned char edge = mag > threshold ? 255 : 0;
  out[y * w + x] = make_uchar4(m, m, m, edge);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int w = 637 * scale, h = 479 + 2;
  const int threshold = 96;
  std::vector<uchar4> img(w * h), edges(w * h);
  srand(4242);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      // Shapes plus noise: a gradient, a disc, stripes.
      int dx = x - w / 2, dy = y - h / 2;
      bool disc = dx * dx + dy * dy < (h / 3) * (h / 3);
      int base = (x * 255) / w;
      unsigned char r = (unsigned char)clampi(base + rand() % 16, 0, 255);
      unsigned char g = disc ? 220 : (unsigned char)(y % 40 < 20 ? 40 : 120);
      unsigned char b = (unsigned char)(rand() % 256);
      img[y * w + x] = make_uchar4(r, g, b, 255);
    }
  uchar4 *dImg, *dOut;
  unsigned char *dGray, *dBlur;
  CUDA_CHECK(cudaMalloc(&dImg, w * h * sizeof(uchar4)));
  CUDA_CHECK(cudaMalloc(&dOut, w * h * sizeof(uchar4)));
  CUDA_CHECK(cudaMalloc(&dGray, w * h));
  CUDA_CHECK(cudaMalloc(&dBlur, w * h));
  CUDA_CHECK(cudaMemcpy(dImg, img.data(), w * h * sizeof(uchar4),
                        cudaMemcpyHostToDevice));
  dim3 block(16, 16);
  dim3 grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  toGray<<<grid, block>>>(dImg, dGray, w, h);
  boxBlur3<<<grid, block>>>(dGray, dBlur, w, h);
  sobel<<<grid, block>>>(dBlur, dOut, w, h, threshold);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(stop);
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  cudaEventElapsedTime(&ms, start, stop);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(edges.data(), dOut, w * h * sizeof(uchar4),
                        cudaMemcpyDeviceToHost));

  std::vector<unsigned char> gray(w * h), blur(w * h);
  for (int i = 0; i < w * h; ++i)
    gray[i] = luma(img[i]);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      int sum = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          sum += gray[clampi(y + dy, 0, h - 1) * w + clampi(x + dx, 0, w - 1)];
      blur[y * w + x] = (unsigned char)(sum / 9);
    }
  long edgeCount = 0;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      auto at = [&](int yy, int xx) {
        return (int)blur[clampi(yy, 0, h - 1) * w + clampi(xx, 0, w - 1)];
      };
      int gx = (at(y - 1, x + 1) + 2 * at(y, x + 1) + at(y + 1, x + 1)) -
               (at(y - 1, x - 1) + 2 * at(y, x - 1) + at(y + 1, x - 1));
      int gy = (at(y + 1, x - 1) + 2 * at(y + 1, x) + at(y + 1, x + 1)) -
               (at(y - 1, x - 1) + 2 * at(y - 1, x) + at(y - 1, x + 1));
      int mag = abs(gx) + abs(gy);
      unsigned char m = (unsigned char)(mag < 255 ? mag : 255);
      unsigned char e = mag > threshold ? 255 : 0;
      uchar4 got = edges[y * w + x];
      edgeCount += e != 0;
      if (got.x != m || got.y != m || got.z != m || got.w != e) {
        printf("FAIL: pixel (%d, %d) = (%d, %d, %d, %d), expected (%d, %d)\n",
               x, y, got.x, got.y, got.z, got.w, m, e);
        return 1;
      }
    }
  if (edgeCount == 0) {
    printf("FAIL: no edges found\n");
    return 1;
  }
  cudaFree(dImg);
  cudaFree(dOut);
  cudaFree(dGray);
  cudaFree(dBlur);
  printf("PASS\n");
  return 0;
}
