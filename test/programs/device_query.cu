// Device selection as many programs do it: count the devices, read each
// one's properties and attributes (clock rate, multiprocessors, compute
// capability), pick the one with the most SMs x clock, set it, and size the
// launch from its limits. The work: a dot product with per-block partials.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: selected device
// CHECK: time_ms:
// CHECK: PASS
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__, #call,    \
              cudaGetErrorName(err_));                                         \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

__global__ void dotPartials(const float *a, const float *b, int n,
                            float *partial) {
  extern __shared__ float cache[];
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    s += a[i] * b[i];
  cache[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w)
      cache[threadIdx.x] += cache[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    partial[blockIdx.x] = cache[0];
}

static int pickDevice() {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count == 0) {
    fprintf(stderr, "no CUDA device\n");
    exit(EXIT_FAILURE);
  }
  int best = 0;
  long long bestScore = -1;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
    int clockKHz = 0, sms = 0, major = 0, minor = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d));
    printf("device %d: %s, sm_%d%d, %d SMs, %d kHz\n", d, prop.name, major,
           minor, sms, clockKHz);
    long long score = (long long)sms * clockKHz;
    if (major >= 3 && score > bestScore) {
      bestScore = score;
      best = d;
    }
  }
  return best;
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int dev = pickDevice();
  CUDA_CHECK(cudaSetDevice(dev));
  printf("selected device %d\n", dev);
  int maxThreads = 0, sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerBlock, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  int threads = maxThreads >= 256 ? 256 : maxThreads;
  int blocks = 2 * sms;

  int n = 500000 * scale + 1;
  std::vector<float> a(n), b(n);
  srand(37);
  for (int i = 0; i < n; ++i) {
    a[i] = rand() / (float)RAND_MAX - 0.5f;
    b[i] = rand() / (float)RAND_MAX - 0.5f;
  }
  float *da, *db, *dp;
  CUDA_CHECK(cudaMalloc(&da, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&db, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dp, blocks * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  CUDA_CHECK(cudaEventCreate(&s));
  CUDA_CHECK(cudaEventCreate(&e));
  CUDA_CHECK(cudaEventRecord(s));
  dotPartials<<<blocks, threads, threads * sizeof(float)>>>(da, db, n, dp);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(e));
  CUDA_CHECK(cudaEventSynchronize(e));
  float ms;
  CUDA_CHECK(cudaEventElapsedTime(&ms, s, e));
  printf("time_ms: %.3f\n", ms);
  std::vector<float> partial(blocks);
  CUDA_CHECK(cudaMemcpy(partial.data(), dp, blocks * sizeof(float), cudaMemcpyDeviceToHost));
  double dot = 0, ref = 0, mag = 0;
  for (float p : partial)
    dot += p;
  for (int i = 0; i < n; ++i) {
    ref += (double)a[i] * b[i];
    mag += fabs((double)a[i] * b[i]);
  }
  if (fabs(dot - ref) > 1e-5 * mag) {
    printf("FAIL: dot %g, expected %g\n", dot, ref);
    return EXIT_FAILURE;
  }
  printf("PASS (dot %.6f)\n", dot);
  return 0;
}
