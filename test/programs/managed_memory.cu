// Managed memory the way most people first write CUDA: arrays from
// cudaMallocManaged filled on the host, kernels launched on them,
// cudaDeviceSynchronize, and the host reading the results directly. Then an
// iterative smoother whose host loop writes a boundary value and clears a
// managed "changed" flag before each step, and reads the flag (set by the
// kernel) after each synchronization to decide whether to stop; a kernel
// counts the steps in a managed counter. Last, managed arrays in cudaMemcpy
// both ways and in cudaMemset. The CPU reference runs the same steps.
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

// NVIDIA's "even easier introduction", as written there.
__global__ void add(int n, float *x, float *y) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;
  for (int i = index; i < n; i += stride)
    y[i] = x[i] + y[i];
}

__global__ void smooth(const float *u, float *v, int n, float tol,
                       int *changed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float w = (i == 0 || i == n - 1)
                ? u[i]
                : 0.5f * u[i] + 0.25f * (u[i - 1] + u[i + 1]);
  v[i] = w;
  if (fabsf(w - u[i]) > tol)
    *changed = 1;
}

__global__ void count_step(int *steps) { *steps += 1; }

__global__ void scale(float *a, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] *= s;
}

float boundary(int step) { return 1.0f + 0.5f * sinf(0.1f * step); }

int main(int argc, char **argv) {
  int scale_arg = argc > 1 ? atoi(argv[1]) : 1;
  int fails = 0;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));

  // 1. x + y on managed arrays.
  int N = (1 << 18) * scale_arg;
  float *x, *y;
  CUDA_CHECK(cudaMallocManaged(&x, N * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&y, N * sizeof(float)));
  for (int i = 0; i < N; i++) {
    x[i] = 1.0f;
    y[i] = 2.0f;
  }
  int blockSize = 256;
  int numBlocks = (N + blockSize - 1) / blockSize;
  add<<<numBlocks, blockSize>>>(N, x, y);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  float maxError = 0.0f;
  for (int i = 0; i < N; i++)
    maxError = fmaxf(maxError, fabsf(y[i] - 3.0f));
  if (maxError != 0.0f) {
    printf("FAIL add: max error %g\n", maxError);
    ++fails;
  }

  // 2. An iterative smoother driven by a managed flag.
  int n = 4096 * scale_arg, maxSteps = 400;
  float tol = 1e-4f;
  float *u, *v;
  int *changed, *steps;
  CUDA_CHECK(cudaMallocManaged(&u, n * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&v, n * sizeof(float)));
  CUDA_CHECK(cudaMallocManaged(&changed, sizeof(int)));
  CUDA_CHECK(cudaMallocManaged(&steps, sizeof(int)));
  srand(12345);
  std::vector<float> ru(n), rv(n);
  for (int i = 0; i < n; i++)
    ru[i] = u[i] = float(rand() % 1000) / 1000.0f;
  *steps = 0;
  int taken = 0;
  for (int s = 0; s < maxSteps; ++s) {
    u[0] = boundary(s); // the host writes between launches
    *changed = 0;
    smooth<<<(n + 127) / 128, 128>>>(u, v, n, tol, changed);
    count_step<<<1, 1>>>(steps);
    CUDA_CHECK(cudaDeviceSynchronize());
    taken = s + 1;
    float *t = u;
    u = v;
    v = t;
    if (!*changed)
      break;
  }
  for (int s = 0; s < taken; ++s) {
    ru[0] = boundary(s);
    for (int i = 0; i < n; i++)
      rv[i] = (i == 0 || i == n - 1)
                  ? ru[i]
                  : 0.5f * ru[i] + 0.25f * (ru[i - 1] + ru[i + 1]);
    ru.swap(rv);
  }
  if (*steps != taken) {
    printf("FAIL steps: the kernel counted %d, the host %d\n", *steps, taken);
    ++fails;
  }
  for (int i = 0; i < n; i++)
    if (fabsf(u[i] - ru[i]) > 1e-4f) {
      printf("FAIL smooth: u[%d] = %g, expected %g (%d steps)\n", i, u[i],
             ru[i], taken);
      ++fails;
      break;
    }

  // 3. Managed arrays in cudaMemcpy and cudaMemset.
  std::vector<float> out(n), in(n);
  CUDA_CHECK(cudaMemcpy(out.data(), u, n * sizeof(float),
                        cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if (out[i] != u[i]) {
      printf("FAIL memcpy out: %d\n", i);
      ++fails;
      break;
    }
  for (int i = 0; i < n; i++)
    in[i] = float(i % 17);
  CUDA_CHECK(cudaMemcpy(v, in.data(), n * sizeof(float),
                        cudaMemcpyHostToDevice));
  v[3] = 100.0f; // after the synchronous copy, a host write
  scale<<<(n + 255) / 256, 256>>>(v, 2.0f, n);
  CUDA_CHECK(cudaMemset(u, 0, n * sizeof(float)));
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; i++) {
    float want = 2.0f * (i == 3 ? 100.0f : float(i % 17));
    if (v[i] != want || u[i] != 0.0f) {
      printf("FAIL memcpy in: v[%d] = %g (want %g), u = %g\n", i, v[i], want,
             u[i]);
      ++fails;
      break;
    }
  }

  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("time_ms: %.3f\n", ms);
  for (void *p : {(void *)x, (void *)y, (void *)u, (void *)v, (void *)changed,
                  (void *)steps})
    CUDA_CHECK(cudaFree(p));
  if (fails)
    return 1;
  printf("PASS\n");
  return 0;
}
