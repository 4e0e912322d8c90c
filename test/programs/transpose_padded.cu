// Matrix transpose through a shared tile padded to [32][33] (no bank
// conflicts on the column reads), blocks of 32x8 threads each moving a 32x32
// tile in four rows per thread, on a matrix whose sides are not multiples of
// 32; then a naive transpose back, and a check that both match exactly.
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

#define checkCuda(x)                                                           \
  do {                                                                         \
    cudaError_t r = (x);                                                       \
    if (r != cudaSuccess) {                                                    \
      fprintf(stderr, "CUDA Runtime Error at %s:%d: %s\n", __FILE__,          \
              __LINE__, cudaGetErrorString(r));                                \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

const int TILE_DIM = 32;
const int BLOCK_ROWS = 8;

// in is rows x cols, out is cols x rows.
__global__ void transposeCoalesced(float *out, const float *in, int rows,
                                   int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x; // transposed block offset
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    if (x < rows && y + j < cols)
      out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transposeNaive(float *out, const float *in, int rows,
                               int cols) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < cols && y < rows)
    out[x * rows + y] = in[y * cols + x];
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int rows = 1000 * scale + 17, cols = 700 + 13;
  const size_t bytes = (size_t)rows * cols * sizeof(float);
  std::vector<float> h(rows * (size_t)cols), t(h.size()), back(h.size());
  srand(77);
  for (auto &v : h)
    v = (float)(rand() % 100000) / 7.0f;

  float *dIn, *dT, *dBack;
  checkCuda(cudaMalloc(&dIn, bytes));
  checkCuda(cudaMalloc(&dT, bytes));
  checkCuda(cudaMalloc(&dBack, bytes));
  checkCuda(cudaMemcpy(dIn, h.data(), bytes, cudaMemcpyHostToDevice));

  dim3 dimBlock(TILE_DIM, BLOCK_ROWS, 1);
  dim3 dimGrid((cols + TILE_DIM - 1) / TILE_DIM,
               (rows + TILE_DIM - 1) / TILE_DIM, 1);
  cudaEvent_t startEvent, stopEvent;
  checkCuda(cudaEventCreate(&startEvent));
  checkCuda(cudaEventCreate(&stopEvent));
  checkCuda(cudaEventRecord(startEvent, 0));
  transposeCoalesced<<<dimGrid, dimBlock>>>(dT, dIn, rows, cols);
  checkCuda(cudaEventRecord(stopEvent, 0));
  checkCuda(cudaEventSynchronize(stopEvent));
  float ms;
  checkCuda(cudaEventElapsedTime(&ms, startEvent, stopEvent));
  printf("time_ms: %.3f\n", ms);

  dim3 naiveBlock(16, 16);
  dim3 naiveGrid((rows + 15) / 16, (cols + 15) / 16);
  transposeNaive<<<naiveGrid, naiveBlock>>>(dBack, dT, cols, rows);
  checkCuda(cudaGetLastError());
  checkCuda(cudaMemcpy(t.data(), dT, bytes, cudaMemcpyDeviceToHost));
  checkCuda(cudaMemcpy(back.data(), dBack, bytes, cudaMemcpyDeviceToHost));

  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      if (t[(size_t)c * rows + r] != h[(size_t)r * cols + c]) {
        printf("FAIL: out[%d][%d] = %f, expected %f\n", c, r,
               t[(size_t)c * rows + r], h[(size_t)r * cols + c]);
        return 1;
      }
      if (back[(size_t)r * cols + c] != h[(size_t)r * cols + c]) {
        printf("FAIL: back[%d][%d] = %f, expected %f\n", r, c,
               back[(size_t)r * cols + c], h[(size_t)r * cols + c]);
        return 1;
      }
    }
  checkCuda(cudaEventDestroy(startEvent));
  checkCuda(cudaEventDestroy(stopEvent));
  checkCuda(cudaFree(dIn));
  checkCuda(cudaFree(dT));
  checkCuda(cudaFree(dBack));
  printf("PASS\n");
  return 0;
}
