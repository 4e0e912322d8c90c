// Launch cost: the same short launch many times on resident data (an
// iterative solver's inner step with fixed arguments).
//   resident [LAUNCHES] [N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void relax(float *x, const float *b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 0.5f * x[i] + 0.25f * b[i];
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 200;
  int n = argc > 2 ? atoi(argv[2]) : 8192;
  std::vector<float> x(n), b(n);
  srand(3);
  for (int i = 0; i < n; ++i)
    x[i] = float(rand() % 100), b[i] = float(rand() % 100);
  float *dx, *db;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&db, n * sizeof(float));
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaDeviceSynchronize();
  auto t0 = std::chrono::steady_clock::now();
  cudaEventRecord(e0);
  for (int l = 0; l < launches; ++l)
    relax<<<(n + 255) / 256, 256>>>(dx, db, n);
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  double wallUs = std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  std::vector<float> got(n);
  cudaMemcpy(got.data(), dx, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int l = 0; l < launches; ++l)
    for (int i = 0; i < n; ++i)
      x[i] = 0.5f * x[i] + 0.25f * b[i];
  bool ok = true;
  for (int i = 0; i < n; ++i)
    ok &= std::abs(got[i] - x[i]) <= 1e-4f * (1 + std::abs(x[i]));
  printf("launches: %d\ntime_ms: %.3f\nwall_us_per_launch: %.2f\n%s\n",
         launches, ms, wallUs / launches, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
