// Shared by two-tu-kernels.cu and two-tu-main.cu: a kernel declared here is
// defined in one of them; a __host__ __device__ function.
#include <cuda_runtime.h>

__host__ __device__ inline int bump(int v) { return v + 1; }

__global__ void add_one(int *x, int n);
void launchTwice(int *x, int n);
