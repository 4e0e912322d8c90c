// Single-pass reduction with the "last block done" pattern: each block
// writes its partial sum, calls __threadfence(), and takes a ticket from a
// __device__ unsigned int counter with atomicInc; the block that draws the
// last ticket sums all partials and resets the counter for the next launch.
// Beside it, atomicCAS loops: a float atomicMax through __float_as_int and a
// double atomicAdd built from atomicCAS on unsigned long long (the way code
// written before sm_60 does it). Integer sums exact; the double sum of
// values with few significant bits is exact too; the max is exact.
//
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
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

#define THREADS 256

__device__ unsigned int retirementCount = 0;

__device__ float atomicMaxFloat(float *address, float val) {
  int *addressAsInt = (int *)address;
  int old = *addressAsInt, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val)
      break;
    old = atomicCAS(addressAsInt, assumed, __float_as_int(val));
  } while (assumed != old);
  return __int_as_float(old);
}

__device__ double atomicAddDouble(double *address, double val) {
  unsigned long long int *addressAsUll = (unsigned long long int *)address;
  unsigned long long int old = *addressAsUll, assumed;
  do {
    assumed = old;
    old = atomicCAS(addressAsUll, assumed,
                    __double_as_longlong(val + __longlong_as_double(assumed)));
  } while (assumed != old);
  return __longlong_as_double(old);
}

__device__ long long blockSum(long long v) {
  __shared__ long long s[THREADS];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride)
      s[threadIdx.x] += s[threadIdx.x + stride];
    __syncthreads();
  }
  return s[0];
}

__global__ void sumSinglePass(const int *in, long long *partial,
                              long long *total, int n) {
  long long v = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x)
    v += in[i];
  long long s = blockSum(v);
  __shared__ bool amLast;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s;
    // Make the partial visible to the other blocks before taking a ticket.
    __threadfence();
    unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
    amLast = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (amLast) {
    long long t = 0;
    for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x)
      t += partial[b];
    t = blockSum(t);
    if (threadIdx.x == 0) {
      *total = t;
      retirementCount = 0;
    }
  }
}

__global__ void maxAndDoubleSum(const float *x, const double *d, float *maxOut,
                                double *sumOut, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicMaxFloat(maxOut, x[i]);
    atomicAddDouble(sumOut, d[i]);
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int n = 400000 * scale + 3;
  const int m = 20000 * scale + 1;
  const int blocks = 64;
  std::vector<int> h(n);
  std::vector<float> x(m);
  std::vector<double> d(m);
  srand(1701);
  long long want = 0;
  for (int i = 0; i < n; ++i) {
    h[i] = rand() % 100001 - 50000;
    want += h[i];
  }
  float wantMax = -1e30f;
  double wantSum = 0;
  for (int i = 0; i < m; ++i) {
    x[i] = (rand() % 2000001 - 1000000) / 1024.0f;
    wantMax = x[i] > wantMax ? x[i] : wantMax;
    d[i] = (rand() % 4097 - 2048) / 64.0; // sums of these are exact
    wantSum += d[i];
  }
  int *dIn;
  long long *dPartial, *dTotal;
  float *dX, *dMax;
  double *dD, *dSum;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dPartial, blocks * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&dTotal, sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&dX, m * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dD, m * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&dMax, sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dSum, sizeof(double)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dX, x.data(), m * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dD, d.data(), m * sizeof(double), cudaMemcpyHostToDevice));
  float lowest = -1e30f;
  double zero = 0.0;
  CUDA_CHECK(cudaMemcpy(dMax, &lowest, sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dSum, &zero, sizeof(double), cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  // Three launches: the counter must be back at 0 after each.
  for (int rep = 0; rep < 3; ++rep) {
    CUDA_CHECK(cudaMemset(dTotal, 0xff, sizeof(long long)));
    sumSinglePass<<<blocks, THREADS>>>(dIn, dPartial, dTotal, n);
    CUDA_CHECK(cudaGetLastError());
    long long got = 0;
    CUDA_CHECK(cudaMemcpy(&got, dTotal, sizeof(long long),
                          cudaMemcpyDeviceToHost));
    if (got != want) {
      printf("FAIL: launch %d: sum %lld, expected %lld\n", rep, got, want);
      return 1;
    }
  }
  maxAndDoubleSum<<<(m + 127) / 128, 128>>>(dX, dD, dMax, dSum, m);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(stop);
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  cudaEventElapsedTime(&ms, start, stop);
  printf("time_ms: %.3f\n", ms);
  float gotMax;
  double gotSum;
  unsigned int counter = 1;
  CUDA_CHECK(cudaMemcpy(&gotMax, dMax, sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&gotSum, dSum, sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&counter, retirementCount, sizeof(counter)));
  if (gotMax != wantMax || gotSum != wantSum || counter != 0) {
    printf("FAIL: max %f (expected %f), double sum %.17g (expected %.17g), "
           "counter %u\n",
           gotMax, wantMax, gotSum, wantSum, counter);
    return 1;
  }
  CUDA_CHECK(cudaFree(dIn));
  CUDA_CHECK(cudaFree(dPartial));
  CUDA_CHECK(cudaFree(dTotal));
  CUDA_CHECK(cudaFree(dX));
  CUDA_CHECK(cudaFree(dD));
  CUDA_CHECK(cudaFree(dMax));
  CUDA_CHECK(cudaFree(dSum));
  printf("PASS\n");
  return 0;
}
