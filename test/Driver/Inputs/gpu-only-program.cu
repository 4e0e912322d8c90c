// The only kernel synchronizes the whole grid: it gets no CPU variant.
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;

__global__ void twoPhase(int *data, int n) {
  cg::grid_group g = cg::this_grid();
  unsigned i = g.thread_rank();
  if (i < n)
    data[i] = int(i);
  g.sync();
  if (i < n)
    data[i] += data[(i + 1) % n];
}

int main() {
  const int n = 256;
  int *d = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess)
    return 2;
  twoPhase<<<2, 128>>>(d, n);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess)
    e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("launch error: %s: %s\n", cudaGetErrorName(e),
                cudaGetErrorString(e));
    return 1;
  }
  std::printf("ran\n");
  return 0;
}
