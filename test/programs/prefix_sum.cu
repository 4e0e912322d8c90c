// Exclusive prefix sum of a large int array: a work-efficient scan per block
// in dynamic shared memory, the block totals scanned recursively by the same
// kernels, then added back. Exact check against a sequential scan.
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
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e),       \
              __FILE__, __LINE__);                                             \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

// Each block scans 2 * blockDim.x elements (Blelloch up-sweep/down-sweep).
__global__ void scanBlocks(const int *in, int *out, int *blockSums, int n) {
  extern __shared__ int tile[];
  int tid = threadIdx.x;
  int m = 2 * blockDim.x;
  int base = blockIdx.x * m;
  tile[2 * tid] = base + 2 * tid < n ? in[base + 2 * tid] : 0;
  tile[2 * tid + 1] = base + 2 * tid + 1 < n ? in[base + 2 * tid + 1] : 0;
  int offset = 1;
  for (int d = m >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1;
      int b = offset * (2 * tid + 2) - 1;
      tile[b] += tile[a];
    }
    offset *= 2;
  }
  if (tid == 0) {
    blockSums[blockIdx.x] = tile[m - 1];
    tile[m - 1] = 0;
  }
  for (int d = 1; d < m; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1;
      int b = offset * (2 * tid + 2) - 1;
      int t = tile[a];
      tile[a] = tile[b];
      tile[b] += t;
    }
  }
  __syncthreads();
  if (base + 2 * tid < n)
    out[base + 2 * tid] = tile[2 * tid];
  if (base + 2 * tid + 1 < n)
    out[base + 2 * tid + 1] = tile[2 * tid + 1];
}

__global__ void addOffsets(int *out, const int *offsets, int n) {
  int i = blockIdx.x * 2 * blockDim.x + threadIdx.x;
  int add = offsets[blockIdx.x];
  if (i < n)
    out[i] += add;
  if (i + blockDim.x < n)
    out[i + blockDim.x] += add;
}

static void scan(const int *in, int *out, int n, int threads) {
  int per = 2 * threads;
  int blocks = (n + per - 1) / per;
  int *sums;
  CUDA_CHECK(cudaMalloc(&sums, blocks * sizeof(int)));
  scanBlocks<<<blocks, threads, per * sizeof(int)>>>(in, out, sums, n);
  CUDA_CHECK(cudaGetLastError());
  if (blocks > 1) {
    int *scanned;
    CUDA_CHECK(cudaMalloc(&scanned, blocks * sizeof(int)));
    scan(sums, scanned, blocks, threads);
    addOffsets<<<blocks, threads>>>(out, scanned, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaFree(scanned));
  }
  CUDA_CHECK(cudaFree(sums));
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 300000 * scale + 123;
  std::vector<int> h(n), got(n);
  srand(42);
  for (int i = 0; i < n; ++i)
    h[i] = rand() % 10;

  int *din, *dout;
  CUDA_CHECK(cudaMalloc(&din, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dout, n * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(din, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  cudaEventRecord(t0);
  scan(din, dout, n, 256);
  cudaEventRecord(t1);
  CUDA_CHECK(cudaEventSynchronize(t1));
  float ms;
  cudaEventElapsedTime(&ms, t0, t1);
  CUDA_CHECK(cudaMemcpy(got.data(), dout, n * sizeof(int), cudaMemcpyDeviceToHost));
  printf("time_ms: %.3f\n", ms);

  long long run = 0;
  for (int i = 0; i < n; ++i) {
    if (got[i] != run) {
      printf("FAIL at %d: got %d, expected %lld\n", i, got[i], run);
      return 1;
    }
    run += h[i];
  }
  cudaFree(din);
  cudaFree(dout);
  printf("PASS (%d elements)\n", n);
  return 0;
}
