// Warp-level primitives: a block sum from __shfl_down_sync per warp plus a
// shared array of warp totals, an inclusive scan within each warp with
// __shfl_up_sync, and a count of negative values per warp with
// __ballot_sync and __popc. Integers: exact check.
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
      printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e));        \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

const unsigned FULL = 0xffffffffu;

__device__ int warpSum(int v) {
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(FULL, v, off);
  return v;
}

__global__ void blockSums(const int *in, int *sums, int n) {
  __shared__ int warpTotals[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int v = i < n ? in[i] : 0;
  v = warpSum(v);
  if (lane == 0)
    warpTotals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int t = lane < blockDim.x / 32 ? warpTotals[lane] : 0;
    t = warpSum(t);
    if (lane == 0)
      sums[blockIdx.x] = t;
  }
}

__global__ void warpScanAndVote(const int *in, int *scan, int *negatives,
                                int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = i < n ? in[i] : 0;
  for (int off = 1; off < 32; off *= 2) {
    int up = __shfl_up_sync(FULL, v, off);
    if (lane >= off)
      v += up;
  }
  if (i < n)
    scan[i] = v;
  unsigned mask = __ballot_sync(FULL, i < n && in[i] < 0);
  if (lane == 0)
    negatives[i / 32] = __popc(mask);
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 262144 * scale + 100; // not a multiple of the block
  int threads = 256, blocks = (n + threads - 1) / threads;
  int warps = blocks * threads / 32;
  std::vector<int> h(n), sums(blocks), scan(n), neg(warps);
  srand(4);
  for (int i = 0; i < n; ++i)
    h[i] = rand() % 201 - 100;
  int *dIn, *dSums, *dScan, *dNeg;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dSums, blocks * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dScan, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dNeg, warps * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  cudaEventRecord(t0);
  blockSums<<<blocks, threads>>>(dIn, dSums, n);
  warpScanAndVote<<<blocks, threads>>>(dIn, dScan, dNeg, n);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(t1);
  cudaEventSynchronize(t1);
  float ms;
  cudaEventElapsedTime(&ms, t0, t1);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(sums.data(), dSums, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(scan.data(), dScan, n * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(neg.data(), dNeg, warps * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    int s = 0;
    for (int i = b * threads; i < (b + 1) * threads && i < n; ++i)
      s += h[i];
    if (s != sums[b]) {
      printf("FAIL: block %d sum %d, expected %d\n", b, sums[b], s);
      return 1;
    }
  }
  for (int w = 0; w < warps; ++w) {
    int run = 0, count = 0;
    for (int i = w * 32; i < (w + 1) * 32 && i < n; ++i) {
      run += h[i];
      count += h[i] < 0;
      if (scan[i] != run) {
        printf("FAIL: scan[%d] = %d, expected %d\n", i, scan[i], run);
        return 1;
      }
    }
    if (neg[w] != count) {
      printf("FAIL: warp %d counts %d negatives, expected %d\n", w, neg[w], count);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
