// Two kernels with global atomics. countEven's atomicAdd result is unused
// and nothing else touches the counter: its counter is a combined output
// and the kernel splits. tickets keeps what atomicAdd returns, so its blocks
// must share one counter: the analyses refuse to split it, `cleave compile`
// says why, and it runs whole on one device.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void countEven(const int *x, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && x[i] % 2 == 0)
    atomicAdd(count, 1);
}

__global__ void tickets(unsigned *next, unsigned *ticket, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    ticket[i] = atomicAdd(next, 1u);
}

int main() {
  const int n = 5000;
  static int h[n];
  static unsigned t[n];
  for (int i = 0; i < n; ++i)
    h[i] = i * 3;
  int *dx, *dc, count = 0;
  unsigned *dn, *dt;
  cudaMalloc(&dx, sizeof h);
  cudaMalloc(&dc, sizeof(int));
  cudaMalloc(&dn, sizeof(unsigned));
  cudaMalloc(&dt, sizeof t);
  cudaMemcpy(dx, h, sizeof h, cudaMemcpyHostToDevice);
  // The counter starts at 7: the partial counts add to it.
  count = 7;
  cudaMemcpy(dc, &count, sizeof(int), cudaMemcpyHostToDevice);
  countEven<<<(n + 255) / 256, 256>>>(dx, dc, n);
  cudaMemcpy(&count, dc, sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemset(dn, 0, sizeof(unsigned));
  tickets<<<(n + 255) / 256, 256>>>(dn, dt, n);
  cudaMemcpy(t, dt, sizeof t, cudaMemcpyDeviceToHost);
  // Every ticket from 0 to n - 1 handed out once.
  static bool seen[n];
  int distinct = 0;
  for (int i = 0; i < n; ++i)
    if (t[i] < unsigned(n) && !seen[t[i]]) {
      seen[t[i]] = true;
      ++distinct;
    }
  bool ok = count == 2507 && distinct == n;
  std::printf("%s: %d even (after 7), %d distinct tickets\n",
              ok ? "PASS" : "FAIL", count - 7, distinct);
  return ok ? 0 : 1;
}
