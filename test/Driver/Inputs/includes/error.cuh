// A kernel and, where only the host compiler looks, an error.
__global__ void fill(int *x,
                     int v) {
  x[threadIdx.x] = v;
}

#ifndef __CUDACC__
int broken = undeclaredName;
#endif
