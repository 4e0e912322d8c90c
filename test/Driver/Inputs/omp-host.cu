// Host code with OpenMP: <omp.h>, pragmas and the OpenMP runtime, as nvcc
// builds it with -Xcompiler -fopenmp (and fails to link without it).
#include <cstdio>
#include <omp.h>
__global__ void inc(int *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }
int main() {
  const int n = 1000; int h[n];
  int threads = 0;
#pragma omp parallel for reduction(+ : threads)
  for (int i = 0; i < n; ++i) { h[i] = i; threads += omp_get_num_threads() > 0; }
  int *d; cudaMalloc(&d, sizeof h); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  inc<<<(n + 255) / 256, 256>>>(d, n);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  long sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += h[i];
#ifdef _OPENMP
  const char *mode = "openmp";
#else
  const char *mode = "serial";
#endif
  bool ok = sum == (long)n * (n + 1) / 2 && threads == n;
  printf("%s: sum %ld, %s\n", ok ? "PASS" : "FAIL", sum, mode);
  return ok ? 0 : 1;
}
