// Warp-level primitives beyond shuffles-down: an all-reduce by
// __shfl_xor_sync butterfly (every lane gets the warp's maximum), a
// broadcast within 16-lane segments (__shfl_sync with a width), votes with
// __any_sync/__all_sync, a warp-aggregated atomic under a data-dependent
// branch (__activemask, the lowest active lane adds their count),
// grouping of equal keys with __match_any_sync (each group's leader adds
// the group's size with one atomicAdd), and __reduce_add_sync /
// __reduce_max_sync (sm_80). Blocks of 96 threads; integers: exact check.
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

#define FULL_MASK 0xffffffffu
#define NKEYS 16
// Per element: xor max, segment broadcast, any, all, reduce_add, reduce_max.
#define NOUT 6

__global__ void warpOps(const int *in, int *out, unsigned int *keyCounts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x % warpSize;
  int v = in[i];
  int *o = out + NOUT * i;

  int m = v;
  for (int mask = 16; mask > 0; mask >>= 1)
    m = max(m, __shfl_xor_sync(FULL_MASK, m, mask));
  o[0] = m;
  // Lane 3 of each 16-lane segment broadcasts its value.
  o[1] = __shfl_sync(FULL_MASK, v, 3, 16);
  o[2] = __any_sync(FULL_MASK, v > 900);
  o[3] = __all_sync(FULL_MASK, v >= 0);
  if (v % 3 == 0) {
    unsigned active = __activemask();
    if (lane == __ffs(active) - 1)
      atomicAdd(&keyCounts[NKEYS], __popc(active));
  }
  __syncwarp();
  o[4] = __reduce_add_sync(FULL_MASK, (unsigned)v);
  o[5] = __reduce_max_sync(FULL_MASK, (unsigned)v);

  int key = v % NKEYS;
  unsigned group = __match_any_sync(FULL_MASK, key);
  int leader = __ffs(group) - 1;
  if (lane == leader)
    atomicAdd(&keyCounts[key], __popc(group));
}

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  const int threads = 96, blocks = 2000 * scale, n = threads * blocks;
  std::vector<int> h(n), out(NOUT * n);
  std::vector<unsigned> counts(NKEYS + 1); // the last: multiples of 3
  srand(3030);
  for (int i = 0; i < n; ++i)
    h[i] = rand() % 1000;
  int *dIn, *dOut;
  unsigned *dCounts;
  CUDA_CHECK(cudaMalloc(&dIn, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dOut, NOUT * n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dCounts, (NKEYS + 1) * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(dIn, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dCounts, 0, (NKEYS + 1) * sizeof(unsigned)));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  warpOps<<<blocks, threads>>>(dIn, dOut, dCounts);
  CUDA_CHECK(cudaGetLastError());
  cudaEventRecord(stop);
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms;
  cudaEventElapsedTime(&ms, start, stop);
  printf("time_ms: %.3f\n", ms);
  CUDA_CHECK(cudaMemcpy(out.data(), dOut, NOUT * n * sizeof(int),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(counts.data(), dCounts, (NKEYS + 1) * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));

  std::vector<unsigned> wantCounts(NKEYS + 1, 0);
  for (int w = 0; w < n / 32; ++w) {
    const int *v = &h[w * 32];
    int mx = 0, sum = 0, any = 0, all = 1;
    for (int l = 0; l < 32; ++l) {
      mx = v[l] > mx ? v[l] : mx;
      sum += v[l];
      any |= v[l] > 900;
      all &= v[l] >= 0;
      wantCounts[NKEYS] += v[l] % 3 == 0;
      ++wantCounts[v[l] % NKEYS];
    }
    for (int l = 0; l < 32; ++l) {
      int want[NOUT] = {mx, v[(l / 16) * 16 + 3], any, all, sum, mx};
      for (int k = 0; k < NOUT; ++k)
        if (out[NOUT * (w * 32 + l) + k] != want[k]) {
          printf("FAIL: warp %d lane %d output %d = %d, expected %d\n", w, l,
                 k, out[NOUT * (w * 32 + l) + k], want[k]);
          return 1;
        }
    }
  }
  for (int k = 0; k <= NKEYS; ++k)
    if (counts[k] != wantCounts[k]) {
      printf("FAIL: key %d counted %u, expected %u\n", k, counts[k],
             wantCounts[k]);
      return 1;
    }
  cudaFree(dIn);
  cudaFree(dOut);
  cudaFree(dCounts);
  printf("PASS\n");
  return 0;
}
