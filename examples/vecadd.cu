// vecadd: c = a + b on n floats, checked against a CPU reference.
//
// Usage: vecadd [n]
//   default n = 2^20 + 3 (CI: well under a second with the kernel on one CPU
//   core); GPU benchmark: vecadd 268435456.
// Check: exact. A float addition is correctly rounded on the GPU and the CPU
// alike, so every element must equal the reference bit for bit.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

// argv[i] as a positive int, or def when it is absent.
static int argOr(int argc, char **argv, int i, int def) {
  if (i >= argc)
    return def;
  char *end;
  long v = std::strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v <= 0 || v > INT_MAX) {
    std::fprintf(stderr, "usage: %s [n]\n%s: bad argument '%s'\n", argv[0],
                 argv[0], argv[i]);
    std::exit(1);
  }
  return int(v);
}

// Uniform floats in [lo, hi) from a fixed seed (std::mt19937's sequence is
// fixed by the standard; the distributions of <random> are not).
static void fillUniform(std::vector<float> &v, float lo, float hi,
                        unsigned seed) {
  std::mt19937 gen(seed);
  for (float &x : v)
    x = lo + (hi - lo) * (float(gen() >> 8) * (1.0f / 16777216.0f));
}

int main(int argc, char **argv) {
  int n = argOr(argc, argv, 1, (1 << 20) + 3);
  size_t bytes = size_t(n) * sizeof(float);
  std::vector<float> a(n), b(n), c(n);
  fillUniform(a, -1.0f, 1.0f, 1);
  fillUniform(b, -1.0f, 1.0f, 2);

  float *da, *db, *dc;
  CUDA_CHECK(cudaMalloc(&da, bytes));
  CUDA_CHECK(cudaMalloc(&db, bytes));
  CUDA_CHECK(cudaMalloc(&dc, bytes));
  CUDA_CHECK(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  int threads = 256;
  int blocks = (n + threads - 1) / threads;
  CUDA_CHECK(cudaEventRecord(start));
  vecadd<<<blocks, threads>>>(da, db, dc, n);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaFree(da));
  CUDA_CHECK(cudaFree(db));
  CUDA_CHECK(cudaFree(dc));

  for (int i = 0; i < n; ++i) {
    float want = a[i] + b[i];
    if (c[i] != want) {
      std::printf("vecadd: FAIL at c[%d]: got %.9g, expected %.9g (n=%d)\n", i,
                  c[i], want, n);
      return 1;
    }
  }
  std::printf("vecadd: PASS (%.3f ms, n=%d)\n", ms, n);
  return 0;
}
