// Work split across every device cudaGetDeviceCount() reports, the way
// multi-GPU programs do it: per device, cudaSetDevice, its own stream and
// buffers, polynomial coefficients sent to a __constant__ table with
// cudaMemcpyToSymbolAsync on that stream, a slice of the input evaluated,
// and a __device__ counter read back with cudaMemcpyFromSymbolAsync; then
// every device synchronized, cudaPeekAtLastError, and cudaDeviceReset on
// each device at the end. A CHECK macro prints __FILE__/__LINE__ with
// cudaGetErrorString. Integers: exact check.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: devices: {{[1-9]}}
// CHECK: time_ms:
// CHECK: PASS
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    const cudaError_t error = call;                                            \
    if (error != cudaSuccess) {                                                \
      fprintf(stderr, "Error: %s:%d, code: %d, reason: %s\n", __FILE__,        \
              __LINE__, error, cudaGetErrorString(error));                     \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

#define DEGREE 6
__constant__ int coeffs[DEGREE + 1];
__device__ unsigned int evaluated;

// Horner's rule modulo a prime, so that the values stay exact.
__global__ void evalPoly(const int *x, int *y, int n) {
  const int P = 1000003;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  long long v = x[i] % P, acc = 0;
  for (int k = DEGREE; k >= 0; --k)
    acc = (acc * v + coeffs[k]) % P;
  y[i] = (int)acc;
  atomicAdd(&evaluated, 1u);
}

struct DeviceWork {
  int device;
  cudaStream_t stream;
  int offset, count;
  int *dX, *dY;
  unsigned int counted;
};

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int n = 500000 * scale + 77;
  int devCount = 0;
  CHECK(cudaGetDeviceCount(&devCount));
  printf("devices: %d\n", devCount);
  std::vector<int> x(n), y(n, -1);
  srand(99);
  for (int i = 0; i < n; ++i)
    x[i] = rand();
  int h_coeffs[DEGREE + 1] = {7, -3, 11, 0, 5, 2, 1};

  std::vector<DeviceWork> work(devCount);
  int perDevice = (n + devCount - 1) / devCount;
  for (int d = 0; d < devCount; ++d) {
    DeviceWork &w = work[d];
    w.device = d;
    w.offset = d * perDevice;
    w.count = d == devCount - 1 ? n - w.offset : perDevice;
    CHECK(cudaSetDevice(d));
    CHECK(cudaStreamCreate(&w.stream));
    CHECK(cudaMalloc(&w.dX, w.count * sizeof(int)));
    CHECK(cudaMalloc(&w.dY, w.count * sizeof(int)));
  }

  cudaEvent_t start, stop;
  CHECK(cudaSetDevice(0));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  const unsigned int zero = 0;
  for (DeviceWork &w : work) {
    CHECK(cudaSetDevice(w.device));
    CHECK(cudaMemcpyToSymbolAsync(coeffs, h_coeffs, sizeof(h_coeffs), 0,
                                  cudaMemcpyHostToDevice, w.stream));
    CHECK(cudaMemcpyToSymbolAsync(evaluated, &zero, sizeof(zero), 0,
                                  cudaMemcpyHostToDevice, w.stream));
    CHECK(cudaMemcpyAsync(w.dX, x.data() + w.offset, w.count * sizeof(int),
                          cudaMemcpyHostToDevice, w.stream));
    int threads = 256, blocks = (w.count + threads - 1) / threads;
    evalPoly<<<blocks, threads, 0, w.stream>>>(w.dX, w.dY, w.count);
    CHECK(cudaPeekAtLastError());
    CHECK(cudaMemcpyAsync(y.data() + w.offset, w.dY, w.count * sizeof(int),
                          cudaMemcpyDeviceToHost, w.stream));
    CHECK(cudaMemcpyFromSymbolAsync(&w.counted, evaluated, sizeof(unsigned),
                                    0, cudaMemcpyDeviceToHost, w.stream));
  }
  for (DeviceWork &w : work) {
    CHECK(cudaSetDevice(w.device));
    CHECK(cudaStreamSynchronize(w.stream));
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  printf("time_ms: %.3f\n", ms);
  CHECK(cudaGetLastError());

  const long long P = 1000003;
  for (int i = 0; i < n; ++i) {
    long long v = x[i] % P, acc = 0;
    for (int k = DEGREE; k >= 0; --k)
      acc = (acc * v + h_coeffs[k]) % P;
    if (y[i] != (int)acc) {
      printf("FAIL: y[%d] = %d, expected %lld\n", i, y[i], acc);
      return 1;
    }
  }
  for (DeviceWork &w : work)
    if (w.counted != (unsigned)w.count) {
      printf("FAIL: device %d evaluated %u, expected %d\n", w.device,
             w.counted, w.count);
      return 1;
    }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  for (DeviceWork &w : work) {
    CHECK(cudaSetDevice(w.device));
    CHECK(cudaFree(w.dX));
    CHECK(cudaFree(w.dY));
    CHECK(cudaStreamDestroy(w.stream));
    CHECK(cudaDeviceReset());
  }
  printf("PASS\n");
  return 0;
}
