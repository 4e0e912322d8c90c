// vecadd: c = a + b on n floats, checked against a CPU reference.
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

int main(int argc, char **argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : (1 << 24) + 3;
  size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> a(n), b(n), c(n);
  srand(42);
  for (int i = 0; i < n; ++i) {
    a[i] = float(rand()) / float(RAND_MAX);
    b[i] = float(rand()) / float(RAND_MAX);
  }
  float *da, *db, *dc;
  cudaMalloc(&da, bytes);
  cudaMalloc(&db, bytes);
  cudaMalloc(&dc, bytes);
  cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
  auto t0 = std::chrono::steady_clock::now();
  int threads = 256;
  vecadd<<<(n + threads - 1) / threads, threads>>>(da, db, dc, n);
  cudaDeviceSynchronize();
  auto t1 = std::chrono::steady_clock::now();
  cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += c[i] != a[i] + b[i];
  double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  std::printf("vecadd n=%d: %s (%d mismatches), kernel %.3f ms\n", n,
              bad ? "FAIL" : "PASS", bad, ms);
  return bad ? 1 : 0;
}
