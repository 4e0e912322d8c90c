// Host code that uses CCCL (cuda/std/...) and includes
// <cooperative_groups/reduce.h>, which nvcc builds: CCCL must be on the host
// compiler's path, and the cooperative-groups headers empty there.
#include <cstdio>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/std/limits>
#include <cuda/std/array>
namespace cg = cooperative_groups;

__global__ void blockSum(const int *in, int *out) {

  __shared__ int s[64];
  s[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int i = 0; i < 64; ++i) t += s[i];
    out[blockIdx.x] = t;
  }
}

int main() {
  cuda::std::array<int, 2> sums{};
  int lim = cuda::std::numeric_limits<int>::max();
  int h[128], *din, *dout;
  for (int i = 0; i < 128; ++i) h[i] = i;
  cudaMalloc(&din, sizeof h);
  cudaMalloc(&dout, sizeof(int) * 2);
  cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
  blockSum<<<2, 64>>>(din, dout);
  cudaMemcpy(sums.data(), dout, sizeof(int) * 2, cudaMemcpyDeviceToHost);
  bool ok = sums[0] == 2016 && sums[1] == 6112 && lim == 2147483647;
  printf("%s: %d %d\n", ok ? "PASS" : "FAIL", sums[0], sums[1]);
  return ok ? 0 : 1;
}
