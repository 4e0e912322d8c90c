// No include guard: included twice, with a different kernel name and value
// each time, it is rewritten into two copies.
__global__ void KERNEL_NAME(int *p) { p[threadIdx.x] += KERNEL_VALUE; }
