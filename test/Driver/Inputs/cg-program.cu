// Cooperative groups as users write them: a block-wide sum with
// tiled_partition<32> and shfl_down, one partial per block.
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
namespace cg = cooperative_groups;

__global__ void blockSums(const int *in, int *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  __shared__ int warpSums[32];
  unsigned i = block.group_index().x * block.size() + block.thread_rank();
  int v = i < unsigned(n) ? in[i] : 0;
  for (int o = tile.size() / 2; o > 0; o /= 2)
    v += tile.shfl_down(v, o);
  if (tile.thread_rank() == 0)
    warpSums[tile.meta_group_rank()] = v;
  block.sync();
  if (block.thread_rank() == 0) {
    int s = 0;
    for (unsigned w = 0; w < tile.meta_group_size(); ++w)
      s += warpSums[w];
    out[block.group_index().x] = s;
  }
}

int main() {
  const int n = 100000, threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<int> h(n), sums(blocks);
  for (int i = 0; i < n; ++i)
    h[i] = (i * 7919) % 1000 - 500;
  int *din = nullptr, *dout = nullptr;
  cudaMalloc(&din, n * sizeof(int));
  cudaMalloc(&dout, blocks * sizeof(int));
  cudaMemcpy(din, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
  blockSums<<<blocks, threads>>>(din, dout, n);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("error: %s\n", cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(sums.data(), dout, blocks * sizeof(int), cudaMemcpyDeviceToHost);
  int wrong = 0;
  for (int b = 0; b < blocks; ++b) {
    int want = 0;
    for (int i = b * threads; i < n && i < (b + 1) * threads; ++i)
      want += h[i];
    wrong += sums[b] != want;
  }
  std::printf("%s: %d of %d block sums wrong\n", wrong ? "FAIL" : "PASS", wrong,
              blocks);
  return wrong != 0;
}
