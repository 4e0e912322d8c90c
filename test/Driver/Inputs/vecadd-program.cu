// A small CUDA program for the end-to-end driver test: c = a + b, checked
// against the host's own sum; a __constant__ scale set with
// cudaMemcpyToSymbol; a kernel template launched from a function template.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      std::printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e));             \
      return 1;                                                                \
    }                                                                          \
  } while (0)

__constant__ float scale;

__device__ float scaled(float x) { return x * scale; }

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = scaled(a[i] + b[i]);
}

template <typename T, int Offset> __global__ void shift(T *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += T(Offset);
}

template <typename T> void shiftAll(T *x, int n, cudaStream_t s) {
  shift<T, 3><<<(n + 127) / 128, 128, 0, s>>>(x, n);
}

int main() {
  const int n = 100003;
  std::vector<float> a(n), b(n), c(n);
  std::vector<int> k(n);
  for (int i = 0; i < n; ++i) {
    a[i] = float(i % 1000) * 0.5f;
    b[i] = float(i % 7) - 3.0f;
    k[i] = i;
  }
  float *da, *db, *dc;
  int *dk;
  CHECK(cudaMalloc(&da, n * sizeof(float)));
  CHECK(cudaMalloc(&db, n * sizeof(float)));
  CHECK(cudaMalloc(&dc, n * sizeof(float)));
  CHECK(cudaMalloc(&dk, n * sizeof(int)));
  CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dk, k.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  const float two = 2.0f;
  CHECK(cudaMemcpyToSymbol(scale, &two, sizeof two));

  vecadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  CHECK(cudaGetLastError());
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  shiftAll(dk, n, s);
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(k.data(), dk, n * sizeof(int), cudaMemcpyDeviceToHost));

  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += c[i] != (a[i] + b[i]) * 2.0f || k[i] != i + 3;
  std::printf("%s: %d of %d elements wrong\n", bad ? "FAIL" : "PASS", bad, n);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dk));
  CHECK(cudaStreamDestroy(s));
  return bad ? 1 : 0;
}
