// Jacobi iterations for a 2-D Poisson problem until the residual is small:
// every 25 sweeps a reduction kernel writes per-block partial residuals,
// which the host copies back and sums to decide whether to stop (a data-
// dependent number of launches). The CPU reference runs the same number of
// sweeps and the grids are compared.
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

#define BX 16
#define BY 16

__global__ void sweep(const float *u, const float *f, float *v, int nx, int ny,
                      float h2) {
  int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= nx - 1 || y >= ny - 1)
    return;
  int i = y * nx + x;
  v[i] = 0.25f * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx] - h2 * f[i]);
}

__global__ void residual(const float *u, const float *f, float *partial,
                         int nx, int ny, float h2) {
  __shared__ float s[BX * BY];
  int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
  int t = threadIdx.y * BX + threadIdx.x;
  float r = 0.0f;
  if (x > 0 && y > 0 && x < nx - 1 && y < ny - 1) {
    int i = y * nx + x;
    float d = u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx] - 4.0f * u[i] - h2 * f[i];
    r = d * d;
  }
  s[t] = r;
  __syncthreads();
  for (int w = BX * BY / 2; w > 0; w /= 2) {
    if (t < w)
      s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0)
    partial[blockIdx.y * gridDim.x + blockIdx.x] = s[0];
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int nx = 97 + 32 * (scale - 1) + 2, ny = 65 + 32 * (scale - 1) + 2;
  int n = nx * ny;
  float h = 1.0f / (nx - 1), h2 = h * h;
  std::vector<float> u(n, 0.0f), f(n);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      f[y * nx + x] = sinf(3.0f * x * h) * cosf(2.0f * y * h);
  for (int x = 0; x < nx; ++x)
    u[x] = 1.0f; // a hot top edge
  dim3 block(BX, BY), grid((nx + BX - 1) / BX, (ny + BY - 1) / BY);
  int nb = grid.x * grid.y;
  float *du, *dv, *df, *dp;
  CUDA_CHECK(cudaMalloc(&du, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dv, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&df, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dp, nb * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(du, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dv, u.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(df, f.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::vector<float> partial(nb);
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  int sweeps = 0;
  double first = -1, res = 0;
  while (sweeps < 2000) {
    for (int k = 0; k < 25; ++k) {
      sweep<<<grid, block>>>(du, df, dv, nx, ny, h2);
      float *t = du;
      du = dv;
      dv = t;
    }
    sweeps += 25;
    residual<<<grid, block>>>(du, df, dp, nx, ny, h2);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(partial.data(), dp, nb * sizeof(float), cudaMemcpyDeviceToHost));
    res = 0;
    for (float p : partial)
      res += p;
    res = sqrt(res);
    if (first < 0)
      first = res;
    if (res < 0.05 * first)
      break;
  }
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  std::vector<float> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), du, n * sizeof(float), cudaMemcpyDeviceToHost));

  std::vector<float> a(u), b(u);
  for (int k = 0; k < sweeps; ++k) {
    for (int y = 1; y < ny - 1; ++y)
      for (int x = 1; x < nx - 1; ++x) {
        int i = y * nx + x;
        b[i] = 0.25f * (a[i - 1] + a[i + 1] + a[i - nx] + a[i + nx] - h2 * f[i]);
      }
    a.swap(b);
  }
  for (int i = 0; i < n; ++i)
    if (fabsf(got[i] - a[i]) > 1e-4f) {
      printf("FAIL at %d: %g, expected %g (after %d sweeps)\n", i, got[i], a[i], sweeps);
      return 1;
    }
  if (!(res < first)) {
    printf("FAIL: the residual did not fall (%g -> %g)\n", first, res);
    return 1;
  }
  printf("PASS (%d sweeps, residual %.3g -> %.3g)\n", sweeps, first, res);
  return 0;
}
