// The unrolled reduction of the CUDA tutorials, as users copy it into their
// code: the block size a template parameter, each thread first summing two
// elements per grid-stride step, the tree in shared memory unrolled with
// `if (blockSize >= N)`, and the last warp's steps warp-synchronous through a
// `volatile` pointer with no __syncwarp. The host picks the instantiation with
// a switch on the block size chosen at run time, and reduces the per-block
// partial sums with a second launch of the same kernel. Integers: exact check.
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
    cudaError_t err = call;                                                    \
    if (err != cudaSuccess) {                                                  \
      fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err),     \
              __FILE__, __LINE__);                                             \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

template <unsigned int blockSize>
__device__ void warpReduce(volatile long long *sdata, unsigned int tid) {
  if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
  if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
  if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
  if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
  if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
  if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void reduce(const long long *g_idata, long long *g_odata,
                       unsigned int n) {
  __shared__ long long sdata[blockSize];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockSize * 2) + tid;
  unsigned int gridSize = blockSize * 2 * gridDim.x;
  long long sum = 0;
  while (i < n) {
    sum += g_idata[i];
    if (i + blockSize < n)
      sum += g_idata[i + blockSize];
    i += gridSize;
  }
  sdata[tid] = sum;
  __syncthreads();

  if (blockSize >= 512) {
    if (tid < 256) sdata[tid] += sdata[tid + 256];
    __syncthreads();
  }
  if (blockSize >= 256) {
    if (tid < 128) sdata[tid] += sdata[tid + 128];
    __syncthreads();
  }
  if (blockSize >= 128) {
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads();
  }
  if (tid < 32)
    warpReduce<blockSize>(sdata, tid);
  if (tid == 0)
    g_odata[blockIdx.x] = sdata[0];
}

void launchReduce(int threads, int blocks, const long long *in,
                  long long *out, unsigned int n) {
  switch (threads) {
  case 512:
    reduce<512><<<blocks, threads>>>(in, out, n);
    break;
  case 256:
    reduce<256><<<blocks, threads>>>(in, out, n);
    break;
  case 128:
    reduce<128><<<blocks, threads>>>(in, out, n);
    break;
  case 64:
    reduce<64><<<blocks, threads>>>(in, out, n);
    break;
  case 32:
    reduce<32><<<blocks, threads>>>(in, out, n);
    break;
  default:
    fprintf(stderr, "unsupported block size %d\n", threads);
    exit(EXIT_FAILURE);
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  unsigned int n = 1000003u * scale; // odd, not a multiple of any block
  std::vector<long long> h(n);
  srand(2024);
  long long expected = 0;
  for (unsigned int i = 0; i < n; ++i) {
    h[i] = (long long)(rand() % 2000001) - 1000000;
    expected += h[i];
  }
  long long *dIn, *dPartial, *dOut;
  const int maxBlocks = 256;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&dPartial, maxBlocks * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&dOut, sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(long long),
                        cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  float totalMs = 0.0f;
  const int blockSizes[] = {512, 256, 128, 64, 32};
  for (int threads : blockSizes) {
    unsigned int perBlock = threads * 2;
    int blocks = (int)((n + perBlock - 1) / perBlock);
    if (blocks > maxBlocks)
      blocks = maxBlocks;
    CUDA_CHECK(cudaEventRecord(start));
    launchReduce(threads, blocks, dIn, dPartial, n);
    CUDA_CHECK(cudaGetLastError());
    // The partial sums of the first pass fit in one block of the second.
    int finalThreads = 128;
    launchReduce(finalThreads, 1, dPartial, dOut, blocks);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    totalMs += ms;

    long long got = 0;
    CUDA_CHECK(cudaMemcpy(&got, dOut, sizeof(long long),
                          cudaMemcpyDeviceToHost));
    if (got != expected) {
      printf("FAIL: block size %d: sum %lld, expected %lld\n", threads, got,
             expected);
      return 1;
    }
  }
  printf("time_ms: %.3f\n", totalMs);
  CUDA_CHECK(cudaFree(dIn));
  CUDA_CHECK(cudaFree(dPartial));
  CUDA_CHECK(cudaFree(dOut));
  printf("PASS\n");
  return 0;
}
