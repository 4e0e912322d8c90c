// Kernels templated on a functor: a generic transform and a generic
// zip-with, instantiated with stateless and stateful function objects whose
// __host__ __device__ operator() also computes the CPU reference.
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
    cudaError_t err = call;                                                    \
    if (err != cudaSuccess) {                                                  \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__,                        \
              cudaGetErrorString(err));                                        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

struct Square {
  __host__ __device__ float operator()(float x) const { return x * x; }
};

struct Affine {
  float a, b;
  __host__ __device__ float operator()(float x) const { return a * x + b; }
};

struct SmoothStep {
  float edge0, edge1;
  __host__ __device__ float operator()(float x) const {
    float t = (x - edge0) / (edge1 - edge0);
    t = t < 0.f ? 0.f : (t > 1.f ? 1.f : t);
    return t * t * (3.f - 2.f * t);
  }
};

struct Hypot {
  __host__ __device__ float operator()(float x, float y) const {
    return sqrtf(x * x + y * y);
  }
};

template <typename F>
__global__ void transform(const float *in, float *out, int n, F f) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    out[i] = f(in[i]);
}

template <typename F>
__global__ void zipWith(const float *x, const float *y, float *out, int n, F f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = f(x[i], y[i]);
}

static int failures = 0;

template <typename F>
void checkUnary(const char *name, const std::vector<float> &in,
                const std::vector<float> &out, F f) {
  for (size_t i = 0; i < in.size(); ++i) {
    float want = f(in[i]);
    if (fabsf(out[i] - want) > 1e-5f * (1 + fabsf(want))) {
      printf("FAIL %s at %zu: %g != %g\n", name, i, out[i], want);
      ++failures;
      return;
    }
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 150000 * scale + 1;
  size_t bytes = n * sizeof(float);
  std::vector<float> x(n), y(n), o1(n), o2(n), o3(n), o4(n);
  srand(31);
  for (int i = 0; i < n; ++i) {
    x[i] = 4.0f * rand() / (float)RAND_MAX - 2.0f;
    y[i] = 4.0f * rand() / (float)RAND_MAX - 2.0f;
  }
  float *dx, *dy, *d1, *d2, *d3, *d4;
  CUDA_CHECK(cudaMalloc(&dx, bytes));
  CUDA_CHECK(cudaMalloc(&dy, bytes));
  CUDA_CHECK(cudaMalloc(&d1, bytes));
  CUDA_CHECK(cudaMalloc(&d2, bytes));
  CUDA_CHECK(cudaMalloc(&d3, bytes));
  CUDA_CHECK(cudaMalloc(&d4, bytes));
  CUDA_CHECK(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dy, y.data(), bytes, cudaMemcpyHostToDevice));
  Affine aff = {1.5f, -0.25f};
  SmoothStep step = {-1.0f, 1.0f};
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  transform<<<64, 256>>>(dx, d1, n, Square());
  transform<<<64, 256>>>(dx, d2, n, aff);
  transform<<<(n + 255) / 256, 256>>>(dy, d3, n, step);
  zipWith<<<(n + 255) / 256, 256>>>(dx, dy, d4, n, Hypot());
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(o1.data(), d1, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(o2.data(), d2, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(o3.data(), d3, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(o4.data(), d4, bytes, cudaMemcpyDeviceToHost));
  checkUnary("square", x, o1, Square());
  checkUnary("affine", x, o2, aff);
  checkUnary("smoothstep", y, o3, step);
  Hypot h;
  for (int i = 0; i < n && !failures; ++i) {
    float want = h(x[i], y[i]);
    if (fabsf(o4[i] - want) > 1e-5f * (1 + want)) {
      printf("FAIL hypot at %d\n", i);
      ++failures;
    }
  }
  if (failures)
    return 1;
  printf("PASS\n");
  return 0;
}
