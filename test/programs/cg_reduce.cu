// Cooperative groups: the block as cg::this_thread_block(), 32-thread tiles
// from cg::tiled_partition, cg::reduce over each tile, block.sync(), and the
// tile totals combined by the first tile. The result: the sum and the
// maximum of each block's values (integers, exact).
//
// XFAIL: *
// issue 25: cooperative groups on sm_90 (inline PTX of CUDA 13's headers; cuda/std from include/cccl)
// RUN: %build %s -o %t
// RUN: env CLEAVE_DEVICES=cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu %t | FileCheck %s
// RUN: env CLEAVE_DEVICES=cpu,cpu,cpu CLEAVE_PARTITION=even %t | FileCheck %s
// RUN: %if nvcc %{ %nvcc %s -o %t.nvcc %}
// CHECK: time_ms:
// CHECK: PASS
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = call;                                                   \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__global__ void blockStats(const int *in, int n, int *sums, int *maxima) {
  __shared__ int tileSums[32];
  __shared__ int tileMax[32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int m = i < n ? in[i] : -2147483647;
  int s = cg::reduce(tile, v, cg::plus<int>());
  int mx = cg::reduce(tile, m, cg::greater<int>());
  if (tile.thread_rank() == 0) {
    tileSums[tile.meta_group_rank()] = s;
    tileMax[tile.meta_group_rank()] = mx;
  }
  block.sync();
  if (tile.meta_group_rank() == 0) {
    int r = tile.thread_rank();
    bool have = r < (int)tile.meta_group_size();
    int bs = cg::reduce(tile, have ? tileSums[r] : 0, cg::plus<int>());
    int bm = cg::reduce(tile, have ? tileMax[r] : -2147483647, cg::greater<int>());
    if (r == 0) {
      sums[blockIdx.x] = bs;
      maxima[blockIdx.x] = bm;
    }
  }
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  int n = 250000 * scale + 29;
  int threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<int> h(n), sums(blocks), maxima(blocks);
  srand(53);
  for (int i = 0; i < n; ++i)
    h[i] = rand() % 100000 - 50000;
  int *dIn, *dSums, *dMax;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dSums, blocks * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dMax, blocks * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  cudaEventRecord(s);
  blockStats<<<blocks, threads>>>(dIn, n, dSums, dMax);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(e);
  cudaEventSynchronize(e);
  float ms;
  cudaEventElapsedTime(&ms, s, e);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(sums.data(), dSums, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(maxima.data(), dMax, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    int s = 0, m = -2147483647;
    for (int i = b * threads; i < (b + 1) * threads && i < n; ++i) {
      s += h[i];
      m = h[i] > m ? h[i] : m;
    }
    if (sums[b] != s || maxima[b] != m) {
      printf("FAIL: block %d: sum %d max %d, expected %d %d\n", b, sums[b],
             maxima[b], s, m);
      return 1;
    }
  }
  printf("PASS\n");
  return 0;
}
