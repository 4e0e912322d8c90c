// Every operation a combined output can have (docs/runtime.md, "Combined
// outputs"), each on a value that starts away from the operation's
// identity: split over several devices, the partial results must combine
// to what one device computes.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void reduceAll(const unsigned *x, unsigned *sum, unsigned *diff,
                          unsigned *andv, unsigned *orv, unsigned *xorv,
                          unsigned *minv, unsigned *maxv,
                          unsigned long long *sum64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  unsigned v = x[i];
  atomicAdd(sum, v);
  atomicSub(diff, v);
  atomicAnd(andv, v | 0xffff00ffu);
  atomicOr(orv, v & 0x0f0f0f0fu);
  atomicXor(xorv, v);
  atomicMin(minv, v);
  atomicMax(maxv, v);
  atomicAdd(sum64, (unsigned long long)v << 20);
}

int main() {
  const int n = 20000;
  static unsigned x[n];
  unsigned state = 12345;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = state;
  }
  // Starting values, and the reference one device computes.
  unsigned init[7] = {7u, 1000u, 0xfff7ffffu, 0x10000000u, 0x5a5a5a5au,
                      0x80000000u, 3u};
  unsigned long long init64 = 1ull << 40;
  unsigned want[7];
  for (int k = 0; k < 7; ++k)
    want[k] = init[k];
  unsigned long long want64 = init64;
  for (int i = 0; i < n; ++i) {
    want[0] += x[i];
    want[1] -= x[i];
    want[2] &= x[i] | 0xffff00ffu;
    want[3] |= x[i] & 0x0f0f0f0fu;
    want[4] ^= x[i];
    want[5] = x[i] < want[5] ? x[i] : want[5];
    want[6] = x[i] > want[6] ? x[i] : want[6];
    want64 += (unsigned long long)x[i] << 20;
  }
  unsigned *dx, *dv[7];
  unsigned long long *d64;
  cudaMalloc(&dx, sizeof x);
  cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  for (int k = 0; k < 7; ++k) {
    cudaMalloc(&dv[k], sizeof(unsigned));
    cudaMemcpy(dv[k], &init[k], sizeof(unsigned), cudaMemcpyHostToDevice);
  }
  cudaMalloc(&d64, sizeof init64);
  cudaMemcpy(d64, &init64, sizeof init64, cudaMemcpyHostToDevice);
  reduceAll<<<(n + 255) / 256, 256>>>(dx, dv[0], dv[1], dv[2], dv[3], dv[4],
                                      dv[5], dv[6], d64, n);
  int bad = 0;
  for (int k = 0; k < 7; ++k) {
    unsigned got = 0;
    cudaMemcpy(&got, dv[k], sizeof got, cudaMemcpyDeviceToHost);
    if (got != want[k]) {
      std::printf("FAIL: value %d is %u, expected %u\n", k, got, want[k]);
      ++bad;
    }
  }
  unsigned long long got64 = 0;
  cudaMemcpy(&got64, d64, sizeof got64, cudaMemcpyDeviceToHost);
  if (got64 != want64) {
    std::printf("FAIL: 64-bit sum is %llu, expected %llu\n", got64, want64);
    ++bad;
  }
  if (!bad)
    std::printf("PASS: 8 combined values\n");
  return bad != 0;
}
