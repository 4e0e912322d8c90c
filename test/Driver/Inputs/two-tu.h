// Shared by two-tu-kernels.cu and two-tu-main.cu. Kernels and launches stay
// in the .cu files (Cleave rewrites only those); declarations and
// __host__ __device__ functions may live here.
#include <cuda_runtime.h>

__host__ __device__ inline int bump(int v) { return v + 1; }

__global__ void add_one(int *x, int n);
void launchTwice(int *x, int n);
