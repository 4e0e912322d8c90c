// A header that defines a kernel.
__global__ void defined_in_header(int *p) { p[threadIdx.x] = 0; }
