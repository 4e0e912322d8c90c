// Kernel templates over float, double and int: a clamped linear combination
// and a windowed sum whose radius is a template parameter; one host function
// template runs and checks each instantiation.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: float: PASS
// CHECK: double: PASS
// CHECK: int: PASS
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
      fprintf(stderr, "CUDA error at %s:%d: %s\n", __FILE__, __LINE__,         \
              cudaGetErrorString(err));                                        \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

template <typename T>
__global__ void combine(const T *a, const T *b, T *out, T alpha, T lo, T hi,
                        int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    T v = alpha * a[i] + b[i];
    out[i] = v < lo ? lo : (v > hi ? hi : v);
  }
}

template <typename T, int R>
__global__ void windowSum(const T *in, T *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  T acc = 0;
  for (int k = -R; k <= R; ++k) {
    int j = i + k;
    if (j >= 0 && j < n)
      acc += in[j];
  }
  out[i] = acc;
}

template <typename T> T randomValue() { return (T)(rand() % 2000 - 1000) / (T)8; }
template <> int randomValue<int>() { return rand() % 2000 - 1000; }

template <typename T> bool close(T got, T want) {
  double tol = sizeof(T) == 4 ? 1e-4 : 1e-10;
  return fabs((double)got - (double)want) <= tol * (1 + fabs((double)want));
}
template <> bool close<int>(int got, int want) { return got == want; }

template <typename T> bool run(const char *name, int n, float &ms) {
  std::vector<T> a(n), b(n), c(n), w(n);
  for (int i = 0; i < n; ++i) {
    a[i] = randomValue<T>();
    b[i] = randomValue<T>();
  }
  T *da, *db, *dc, *dw;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&db, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&dc, n * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&dw, n * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  T alpha = (T)3, lo = (T)-2000, hi = (T)2500;
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  combine<T><<<(n + 255) / 256, 256>>>(da, db, dc, alpha, lo, hi, n);
  windowSum<T, 3><<<(n + 255) / 256, 256>>>(dc, dw, n);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float t;
  cudaEventElapsedTime(&t, s, e);
  ms += t;
  CUDA_CHECK(cudaMemcpy(c.data(), dc, n * sizeof(T), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(w.data(), dw, n * sizeof(T), cudaMemcpyDeviceToHost));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dw);
  std::vector<T> rc(n);
  for (int i = 0; i < n; ++i) {
    T v = alpha * a[i] + b[i];
    rc[i] = v < lo ? lo : (v > hi ? hi : v);
    if (!close(c[i], rc[i])) {
      printf("%s: FAIL combine at %d\n", name, i);
      return false;
    }
  }
  for (int i = 0; i < n; ++i) {
    T acc = 0;
    for (int k = -3; k <= 3; ++k)
      if (i + k >= 0 && i + k < n)
        acc += rc[i + k];
    if (!close(w[i], acc)) {
      printf("%s: FAIL window at %d\n", name, i);
      return false;
    }
  }
  printf("%s: PASS\n", name);
  return true;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 100000 * scale + 5;
  srand(123);
  float ms = 0;
  bool ok = run<float>("float", n, ms);
  ok = run<double>("double", n, ms) && ok;
  ok = run<int>("int", n, ms) && ok;
  printf("time_ms: %.3f\n", ms);
  printf(ok ? "PASS\n" : "FAIL\n");
  return ok ? 0 : 1;
}
