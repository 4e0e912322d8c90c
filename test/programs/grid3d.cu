// A 3-D grid of 3-D blocks: a 7-point Laplacian of a volume (dim3 grid and
// block, blockIdx.z), then a 2-D grid that sums each column over z into a
// height map.
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

__global__ void laplacian(const float *u, float *lap, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x >= nx || y >= ny || z >= nz)
    return;
  size_t i = ((size_t)z * ny + y) * nx + x;
  if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
    lap[i] = 0.0f;
    return;
  }
  size_t sy = nx, sz = (size_t)nx * ny;
  lap[i] = u[i - 1] + u[i + 1] + u[i - sy] + u[i + sy] + u[i - sz] + u[i + sz] -
           6.0f * u[i];
}

__global__ void columnSum(const float *v, float *map, int nx, int ny, int nz) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < nx && y < ny) {
    float s = 0;
    for (int z = 0; z < nz; ++z)
      s += v[((size_t)z * ny + y) * nx + x];
    map[y * nx + x] = s;
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int nx = 67 * scale, ny = 45, nz = 30;
  size_t n = (size_t)nx * ny * nz;
  std::vector<float> u(n), lap(n), map(nx * ny);
  srand(21);
  for (size_t i = 0; i < n; ++i)
    u[i] = rand() / (float)RAND_MAX;
  float *du, *dl, *dm;
  CUDA_CHECK(cudaMalloc(&du, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dl, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dm, nx * ny * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(du, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(8, 8, 4);
  dim3 grid((nx + 7) / 8, (ny + 7) / 8, (nz + 3) / 4);
  dim3 block2(16, 16);
  dim3 grid2((nx + 15) / 16, (ny + 15) / 16);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  laplacian<<<grid, block>>>(du, dl, nx, ny, nz);
  columnSum<<<grid2, block2>>>(dl, dm, nx, ny, nz);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(lap.data(), dl, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(map.data(), dm, nx * ny * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> ref(n, 0.0f);
  size_t sy = nx, sz = (size_t)nx * ny;
  for (int z = 1; z < nz - 1; ++z)
    for (int y = 1; y < ny - 1; ++y)
      for (int x = 1; x < nx - 1; ++x) {
        size_t i = (z * sz) + y * sy + x;
        ref[i] = u[i - 1] + u[i + 1] + u[i - sy] + u[i + sy] + u[i - sz] +
                 u[i + sz] - 6.0f * u[i];
      }
  for (size_t i = 0; i < n; ++i)
    if (fabsf(lap[i] - ref[i]) > 1e-5f) {
      printf("FAIL: laplacian at %zu: %g, expected %g\n", i, lap[i], ref[i]);
      return 1;
    }
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x) {
      float s = 0;
      for (int z = 0; z < nz; ++z)
        s += ref[z * sz + y * sy + x];
      if (fabsf(map[y * nx + x] - s) > 1e-4f) {
        printf("FAIL: column (%d, %d): %g, expected %g\n", x, y, map[y * nx + x], s);
        return 1;
      }
    }
  printf("PASS\n");
  return 0;
}
